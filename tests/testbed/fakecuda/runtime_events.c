/* Events of the fake runtime: not ready after a record until a sync covers it. */
#include "runtime_internal.h"

#include <stdlib.h>
#include <time.h>

struct CUevent_st {
	unsigned long long id;
	unsigned int flags;
	int device;
	struct CUstream_st *stream;	/* where it was last recorded, NULL if never */
	unsigned long long sequence;	/* the clock at that record */
	int synchronized;		/* cudaEventSynchronize since that record */
	double recorded_ms;		/* the host's monotonic clock at that record */
};

static unsigned long long next_event_id = 1;

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *out, unsigned int flags)
{
	const unsigned int known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
	if (!out || (flags & ~known))
		return fc_return(cudaErrorInvalidValue);
	/* IPC events would need a second process to share state with: not faked. */
	if (flags & cudaEventInterprocess)
		return fc_return(cudaErrorNotSupported);
	struct CUevent_st *event = calloc(1, sizeof *event);
	if (!event)
		return fc_return(cudaErrorMemoryAllocation);
	event->flags = flags;
	event->device = fc_current_device();
	fc_sync_lock();
	event->id = next_event_id++;
	fc_sync_unlock();
	*out = event;
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *out)
{
	return cudaEventCreateWithFlags(out, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	if (!event)
		return fc_return(cudaErrorInvalidResourceHandle);
	free(event);
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t handle)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!event || !stream || stream->device != event->device)
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	event->stream = stream;
	event->sequence = fc_next_sequence();
	event->synchronized = 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	event->recorded_ms = (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
	stream->last_record = event->sequence;
	fc_sync_unlock();
	return cudaSuccess;
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t handle, unsigned int flags)
{
	/* cudaEventRecordExternal only matters inside a graph capture, which is not faked. */
	if (flags & ~(unsigned int)cudaEventRecordExternal)
		return fc_return(cudaErrorInvalidValue);
	return cudaEventRecord(event, handle);
}

/* Caller holds the sync lock. */
static int event_done(const struct CUevent_st *event)
{
	if (!event->stream || event->synchronized || event->stream->immediate)
		return 1;
	return event->sequence <= event->stream->synced
	       || event->sequence <= fc_device_synced(event->device);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	if (!event)
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	int done = event_done(event);
	fc_sync_unlock();
	return done ? cudaSuccess : fc_return(cudaErrorNotReady);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	if (!event)
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	event->synchronized = 1;
	/* Waiting for an event also completes everything recorded before it on its stream. */
	if (event->stream && event->stream->synced < event->sequence)
		event->stream->synced = event->sequence;
	fc_sync_unlock();
	return cudaSuccess;
}

/* No work runs: the time between the two records, as the host's clock saw them (DDP's logger times its
   iterations with such events). CUDA's checks: both recorded and complete, neither without timing. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	if (!ms)
		return fc_return(cudaErrorInvalidValue);
	if (!start || !end || (start->flags & cudaEventDisableTiming) || (end->flags & cudaEventDisableTiming))
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	int recorded = start->stream && end->stream, done = event_done(start) && event_done(end);
	double elapsed = end->recorded_ms - start->recorded_ms;
	fc_sync_unlock();
	if (!recorded)
		return fc_return(cudaErrorInvalidResourceHandle);
	if (!done)
		return fc_return(cudaErrorNotReady);
	*ms = (float)elapsed;
	return cudaSuccess;
}

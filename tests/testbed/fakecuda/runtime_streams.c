/* Streams of the fake runtime, stream capture queries and the synchronisation that completes work. */
#include "runtime_internal.h"

#include <pthread.h>
#include <stdlib.h>

/* No kernels ever run, so "work" is just recorded events: a sequence clock orders them, and a sync
   moves a stream's (or a device's) completed mark up to the clock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long sequence;
static unsigned long long device_synced[FAKECUDA_MAX_DEVICES];
static unsigned long long next_stream_id = 1;

/* The default (legacy) stream of each device; id 0 like the NULL handle that names it. */
static struct CUstream_st default_streams[FAKECUDA_MAX_DEVICES];

static _Thread_local enum cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

void fc_sync_lock(void)
{
	pthread_mutex_lock(&lock);
}

void fc_sync_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

unsigned long long fc_next_sequence(void)
{
	return ++sequence;
}

unsigned long long fc_device_synced(int device)
{
	return device_synced[device];
}

struct CUstream_st *fc_stream(cudaStream_t stream)
{
	if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
		int device = fc_current_device();
		default_streams[device].device = device;
		return &default_streams[device];
	}
	return stream->destroyed ? NULL : stream;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *out, unsigned int flags, int priority)
{
	if (!out || (flags & ~(unsigned int)cudaStreamNonBlocking))
		return fc_return(cudaErrorInvalidValue);
	struct CUstream_st *stream = calloc(1, sizeof *stream);
	if (!stream)
		return fc_return(cudaErrorMemoryAllocation);
	stream->device = fc_current_device();
	stream->priority = fc_clamp_priority(priority);
	stream->flags = flags;
	fc_sync_lock();
	stream->id = next_stream_id++;
	fc_sync_unlock();
	*out = stream;
	return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned int flags)
{
	return cudaStreamCreateWithPriority(out, flags, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t *out)
{
	return cudaStreamCreateWithPriority(out, cudaStreamDefault, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t handle)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream || stream == &default_streams[stream->device])
		return fc_return(cudaErrorInvalidResourceHandle);
	/* Retired, not freed: events recorded on it still point here and must keep working. */
	fc_sync_lock();
	stream->synced = sequence;
	stream->destroyed = 1;
	fc_sync_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t handle, int *priority)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream || !priority)
		return fc_return(stream ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
	*priority = stream->priority;
	return cudaSuccess;
}

cudaError_t cudaStreamGetFlags(cudaStream_t handle, unsigned int *flags)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream || !flags)
		return fc_return(stream ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
	*flags = stream->flags;
	return cudaSuccess;
}

cudaError_t cudaStreamGetId(cudaStream_t handle, unsigned long long *id)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream || !id)
		return fc_return(stream ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
	*id = stream->id;
	return cudaSuccess;
}

static int stream_done(const struct CUstream_st *stream)
{
	return stream->immediate || stream->last_record <= stream->synced
	       || stream->last_record <= device_synced[stream->device];
}

/* Not CUDA's: the test bed's NCCL stub (../nvstubs/nccl.c) runs each collective to its end inside the call, so
   the work of the stream it is issued on is complete as soon as it is issued: events recorded there are ready at
   once, as they soon are on a GPU (PyTorch's NCCL watchdog waits for them before a process group shuts down).
   Exported beside the cuda* names; callers look it up with dlsym. */
cudaError_t fakecudaStreamSetImmediate(cudaStream_t handle, int immediate);
cudaError_t fakecudaStreamSetImmediate(cudaStream_t handle, int immediate)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream)
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	stream->immediate = immediate != 0;
	fc_sync_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t handle)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream)
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	int done = stream_done(stream);
	fc_sync_unlock();
	return done ? cudaSuccess : fc_return(cudaErrorNotReady);
}

cudaError_t cudaStreamSynchronize(cudaStream_t handle)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream)
		return fc_return(cudaErrorInvalidResourceHandle);
	fc_sync_lock();
	stream->synced = sequence;
	fc_sync_unlock();
	return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	fc_sync_lock();
	device_synced[fc_current_device()] = sequence;
	fc_sync_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t handle, cudaEvent_t event, unsigned int flags)
{
	/* Nothing executes, so ordering needs no action; the handles are still checked. */
	if (!fc_stream(handle) || !event)
		return fc_return(cudaErrorInvalidResourceHandle);
	if (flags & ~(unsigned int)cudaEventWaitExternal)
		return fc_return(cudaErrorInvalidValue);
	return cudaSuccess;
}

/* Stream capture, as far as PyTorch 2.0's allocator needs it: 2.0 routes a stream's allocations to a private pool
   only while that stream captures, the pool named by the capture's id (cudaStreamGetCaptureInfo). Nothing is
   recorded (no kernel ever runs here), so ending a capture hands back an empty graph. */
struct CUgraph_st {
	unsigned long long capture_id;
};
static unsigned long long next_capture_id = 1;

cudaError_t cudaStreamIsCapturing(cudaStream_t handle, enum cudaStreamCaptureStatus *status)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream)
		return fc_return(cudaErrorInvalidResourceHandle);
	if (!status)
		return fc_return(cudaErrorInvalidValue);
	fc_sync_lock();
	*status = stream->capture_id ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	fc_sync_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t handle, enum cudaStreamCaptureStatus *status,
				     unsigned long long *id, cudaGraph_t *graph,
				     const cudaGraphNode_t **dependencies,
				     const cudaGraphEdgeData **edge_data, size_t *count)
{
	/* CUDA 11's signature (PyTorch 2.0) ends after ID: the later pointers are never looked at. With status None
	   the other outputs are undefined for the real runtime too. */
	(void)graph, (void)dependencies, (void)edge_data, (void)count;
	cudaError_t err = cudaStreamIsCapturing(handle, status);
	if (err == cudaSuccess && id && *status == cudaStreamCaptureStatusActive)
		*id = fc_stream(handle)->capture_id;
	return err;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t handle, enum cudaStreamCaptureMode mode)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream)
		return fc_return(cudaErrorInvalidResourceHandle);
	/* The legacy default stream cannot capture; neither can a stream capture twice. */
	if (handle == NULL || handle == cudaStreamLegacy || mode > cudaStreamCaptureModeRelaxed)
		return fc_return(cudaErrorStreamCaptureUnsupported);
	fc_sync_lock();
	cudaError_t err = cudaSuccess;
	if (stream->capture_id)
		err = cudaErrorIllegalState;
	else
		stream->capture_id = next_capture_id++;
	fc_sync_unlock();
	return err == cudaSuccess ? cudaSuccess : fc_return(err);
}

cudaError_t cudaStreamEndCapture(cudaStream_t handle, cudaGraph_t *graph)
{
	struct CUstream_st *stream = fc_stream(handle);
	if (!stream)
		return fc_return(cudaErrorInvalidResourceHandle);
	if (!graph)
		return fc_return(cudaErrorInvalidValue);
	struct CUgraph_st *g = calloc(1, sizeof *g);
	if (!g)
		return fc_return(cudaErrorMemoryAllocation);
	fc_sync_lock();
	g->capture_id = stream->capture_id;
	stream->capture_id = 0;
	fc_sync_unlock();
	if (!g->capture_id) {
		free(g);
		return fc_return(cudaErrorIllegalState);
	}
	*graph = g;
	return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	if (!mode)
		return fc_return(cudaErrorInvalidValue);
	enum cudaStreamCaptureMode previous = capture_mode;
	capture_mode = *mode;
	*mode = previous;
	return cudaSuccess;
}

#if FAKECUDA_ABI_MAJOR < 13
/* CUDA 12 headers name the query above cudaStreamGetCaptureInfo_v2; its leading arguments match. */
cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t handle, enum cudaStreamCaptureStatus *status,
					unsigned long long *id, cudaGraph_t *graph,
					const cudaGraphNode_t **dependencies, size_t *count);
cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t handle, enum cudaStreamCaptureStatus *status,
					unsigned long long *id, cudaGraph_t *graph,
					const cudaGraphNode_t **dependencies, size_t *count)
{
	return cudaStreamGetCaptureInfo(handle, status, id, graph, dependencies, NULL, count);
}
#endif

/* Declarations shared by the fake CUDA runtime's source files. */
#ifndef FAKECUDA_RUNTIME_INTERNAL_H
#define FAKECUDA_RUNTIME_INTERNAL_H

#include <cuda_runtime_api.h>

/* CUDA 12 headers (Debian's nvidia-cuda-dev 12.4 on a machine without /usr/local/cuda) rename some entry points
   with macros, e.g. cudaGetDeviceProperties -> cudaGetDeviceProperties_v2. The fake defines each exported name
   literally (both the old and the _v2 name where a runtime has both), so undo the renaming; CUDA 13 headers
   have no such macros. */
#undef cudaGetDeviceProperties
#undef cudaStreamGetCaptureInfo
#undef cudaSignalExternalSemaphoresAsync
#undef cudaWaitExternalSemaphoresAsync

#include "fakecuda_internal.h"

/* A stream: pending work is modelled as recorded events, complete once a sync covers them. */
struct CUstream_st {
	unsigned long long id;
	int device;
	int priority;
	unsigned int flags;
	unsigned long long last_record;	/* sequence number of the newest event recorded here */
	unsigned long long synced;	/* everything up to this sequence number has completed */
	int destroyed;
	unsigned long long capture_id;	/* while a capture is under way: its id (cudaStreamGetCaptureInfo), else 0 */
	int immediate;			/* its work completes as it is issued (fakecudaStreamSetImmediate) */
};

/* runtime_errors.c: every entry point returns through these, which keep cudaGetLastError's state. */
cudaError_t fc_return(cudaError_t error);
cudaError_t fc_from_status(int status);

/* runtime_props12.c (only with CUDA12_HOME: FAKECUDA_HAVE_PROPS12): the CUDA 12 struct cudaDeviceProp. */
void fc_device_props12(void *prop, int device);
/* runtime_abi11.c (only with CUDA11_HOME: FAKECUDA_HAVE_ABI11): the CUDA 11 structs cudaDeviceProp and
   cudaFuncAttributes. */
void fc_device_props11(void *prop, int device);
void fc_func_attributes11(void *attributes);

/* runtime_device.c */
int fc_current_device(void);
/* Clamps a stream priority into the device's range. */
int fc_clamp_priority(int priority);

/* runtime_streams.c: stream handles (0, legacy, per-thread, created) to objects; NULL if invalid. */
struct CUstream_st *fc_stream(cudaStream_t stream);
/* The one lock and clock of stream/event state. */
void fc_sync_lock(void);
void fc_sync_unlock(void);
unsigned long long fc_next_sequence(void);
unsigned long long fc_device_synced(int device);

#endif

/* Runtime calls c10 imports but the fake does not implement: each fails with cudaErrorNotSupported. */
#include "runtime_internal.h"

/* The caching allocator never needs these (they serve cudaMallocAsync, managed memory and IPC);
   failing loudly keeps a test from passing on behaviour nobody faked. */
#define UNSUPPORTED(name, params)				\
	cudaError_t name params				\
	{							\
		return fc_return(cudaErrorNotSupported);	\
	}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
UNSUPPORTED(cudaMallocAsync, (void **ptr, size_t size, cudaStream_t stream))
UNSUPPORTED(cudaFreeAsync, (void *ptr, cudaStream_t stream))
UNSUPPORTED(cudaDeviceGetDefaultMemPool, (cudaMemPool_t *pool, int device))
UNSUPPORTED(cudaMemPoolGetAttribute, (cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value))
UNSUPPORTED(cudaMemPoolSetAttribute, (cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value))
UNSUPPORTED(cudaMemPoolSetAccess, (cudaMemPool_t pool, const struct cudaMemAccessDesc *desc,
				   size_t count))
UNSUPPORTED(cudaMemPoolTrimTo, (cudaMemPool_t pool, size_t keep))
UNSUPPORTED(cudaMallocManaged, (void **ptr, size_t size, unsigned int flags))
#if CUDART_VERSION >= 13000
UNSUPPORTED(cudaMemAdvise, (const void *ptr, size_t count, enum cudaMemoryAdvise advice,
			    struct cudaMemLocation location))
#else
/* CUDA 12 headers (built on a machine with only Debian's 12.4 headers) declare the device-taking form. */
UNSUPPORTED(cudaMemAdvise, (const void *ptr, size_t count, enum cudaMemoryAdvise advice, int device))
#endif
UNSUPPORTED(cudaIpcGetMemHandle, (cudaIpcMemHandle_t *handle, void *ptr))
UNSUPPORTED(cudaIpcOpenMemHandle, (void **ptr, cudaIpcMemHandle_t handle, unsigned int flags))
UNSUPPORTED(cudaIpcCloseMemHandle, (void *ptr))
UNSUPPORTED(cudaIpcGetEventHandle, (cudaIpcEventHandle_t *handle, cudaEvent_t event))
UNSUPPORTED(cudaIpcOpenEventHandle, (cudaEvent_t *event, cudaIpcEventHandle_t handle))
/* CUDA graphs: no capture ever begins (runtime_streams.c), so nothing below is reached by a working job;
   private pools are tested through torch.cuda.MemPool instead. Their prototypes differ between CUDA 12 and
   13 headers, and none of the arguments is looked at, so each is defined under its symbol name only. */
#define UNSUPPORTED_ANY(name)							\
	cudaError_t fc_unsupported_##name(void) __asm__(#name);			\
	cudaError_t fc_unsupported_##name(void)					\
	{									\
		return fc_return(cudaErrorNotSupported);			\
	}
UNSUPPORTED_ANY(cudaStreamBeginCaptureToGraph)
UNSUPPORTED_ANY(cudaStreamUpdateCaptureDependencies)
UNSUPPORTED_ANY(cudaGraphAddEmptyNode)
UNSUPPORTED_ANY(cudaGraphAddNode)
UNSUPPORTED_ANY(cudaGraphConditionalHandleCreate)
UNSUPPORTED_ANY(cudaGraphDebugDotPrint)
UNSUPPORTED_ANY(cudaGraphDestroy)
UNSUPPORTED_ANY(cudaGraphExecDestroy)
UNSUPPORTED_ANY(cudaGraphGetNodes)
UNSUPPORTED_ANY(cudaGraphInstantiate)
UNSUPPORTED_ANY(cudaGraphInstantiateWithFlags)
UNSUPPORTED_ANY(cudaGraphLaunch)
UNSUPPORTED_ANY(cudaGraphNodeGetDependencies)
UNSUPPORTED_ANY(cudaGraphNodeGetType)
UNSUPPORTED_ANY(cudaGraphRetainUserObject)
UNSUPPORTED_ANY(cudaUserObjectCreate)
UNSUPPORTED_ANY(cudaUserObjectRelease)

#if FAKECUDA_ABI_MAJOR < 13
/* CUDA 12's name for the location-taking cudaMemAdvise. */
cudaError_t cudaMemAdvise_v2(const void *ptr, size_t count, enum cudaMemoryAdvise advice,
			     struct cudaMemLocation location);
UNSUPPORTED(cudaMemAdvise_v2, (const void *ptr, size_t count, enum cudaMemoryAdvise advice,
			       struct cudaMemLocation location))
#endif
#pragma GCC diagnostic pop

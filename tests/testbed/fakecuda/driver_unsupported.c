/* Driver entry points that PyTorch looks up but a job on the fake device never needs (green contexts,
   multicast objects for symmetric memory, driver log callbacks, TMA descriptors, handle retention): each
   fails with CUDA_ERROR_NOT_SUPPORTED, so a test cannot pass on behaviour nobody faked. Their prototypes
   change between CUDA releases and no argument is read, so each is defined under its symbol name only. */
#include <cuda.h>

#define UNSUPPORTED(name)						\
	CUresult fc_unsupported_##name(void) __asm__(#name);		\
	CUresult fc_unsupported_##name(void)				\
	{								\
		return CUDA_ERROR_NOT_SUPPORTED;			\
	}

UNSUPPORTED(cuCtxFromGreenCtx)
UNSUPPORTED(cuDevResourceGenerateDesc)
UNSUPPORTED(cuDevSmResourceSplitByCount)
UNSUPPORTED(cuDeviceGetDevResource)
UNSUPPORTED(cuGreenCtxCreate)
UNSUPPORTED(cuGreenCtxDestroy)
UNSUPPORTED(cuGreenCtxStreamCreate)
UNSUPPORTED(cuLogsRegisterCallback)
UNSUPPORTED(cuLogsUnregisterCallback)
UNSUPPORTED(cuMemGetAllocationPropertiesFromHandle)
UNSUPPORTED(cuMemRetainAllocationHandle)
UNSUPPORTED(cuMulticastAddDevice)
UNSUPPORTED(cuMulticastBindMem)
UNSUPPORTED(cuMulticastCreate)
UNSUPPORTED(cuMulticastUnbind)
UNSUPPORTED(cuMulticastGetGranularity)
UNSUPPORTED(cuTensorMapEncodeTiled)

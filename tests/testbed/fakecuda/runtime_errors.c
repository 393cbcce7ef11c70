/* The runtime's error state and messages, and its version queries. */
#include "runtime_internal.h"

#include <cuda.h>
#include <stddef.h>

#ifndef FAKECUDA_RUNTIME_VERSION
#if CUDART_VERSION / 1000 == FAKECUDA_ABI_MAJOR
#define FAKECUDA_RUNTIME_VERSION CUDART_VERSION
#else
/* Headers of another major (CUDA 12 headers building the .13 runtime): report the ABI's own x.0. */
#define FAKECUDA_RUNTIME_VERSION (FAKECUDA_ABI_MAJOR * 1000)
#endif
#endif

/* Like the real runtime: per thread, remembered until cudaGetLastError reads it. */
static _Thread_local cudaError_t last_error = cudaSuccess;

cudaError_t fc_return(cudaError_t error)
{
	if (error != cudaSuccess)
		last_error = error;
	return error;
}

cudaError_t fc_from_status(int status)
{
	switch (status) {
	case FAKECUDA_OK: return cudaSuccess;
	case FAKECUDA_ENODEV: return cudaErrorInvalidDevice;
	case FAKECUDA_ENOMEM: return cudaErrorMemoryAllocation;
	case FAKECUDA_EINVAL: return cudaErrorInvalidValue;
	default: return cudaErrorUnknown;
	}
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t error = last_error;
	last_error = cudaSuccess;
	return error;
}

cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

struct message {
	cudaError_t code;
	const char *name;
	const char *text;
};

/* The codes this fake returns; names are the enumerators of driver_types.h. */
static const struct message messages[] = {
	{ cudaSuccess, "cudaSuccess", "no error" },
	{ cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
	{ cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
	{ cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument" },
	{ cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument" },
	{ cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol" },
	{ cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function" },
	{ cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
	{ cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
	{ cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported (fakecuda)" },
	{ cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled",
	  "peer access is already enabled" },
	{ cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
};

static const struct message *find(cudaError_t code)
{
	for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++)
		if (messages[i].code == code)
			return &messages[i];
	return NULL;
}

const char *cudaGetErrorString(cudaError_t error)
{
	const struct message *m = find(error);
	return m ? m->text : "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t error)
{
	const struct message *m = find(error);
	return m ? m->name : "cudaErrorUnknown";
}

cudaError_t cudaDriverGetVersion(int *version)
{
	/* Asked of the driver library, as the real runtime does. */
	return fc_return(cuDriverGetVersion(version) == CUDA_SUCCESS ? cudaSuccess
								     : cudaErrorInvalidValue);
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
	if (!version)
		return fc_return(cudaErrorInvalidValue);
	*version = FAKECUDA_RUNTIME_VERSION;
	return cudaSuccess;
}

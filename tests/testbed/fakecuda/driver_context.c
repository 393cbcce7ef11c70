/* Contexts of the fake driver: one primary context per device, always active, and the calling thread's
   current one. The runtime's current device is this same per-thread state (fakecuda_current_device), so
   a driver-level cuCtxSetCurrent and a runtime cudaSetDevice agree, as they do on a real machine. */
#include "fakecuda_internal.h"

#include <cuda.h>
#include <string.h>

/* The context handle is the address of its device's entry here. */
struct CUctx_st {
	int device;
};

static struct CUctx_st primary[FAKECUDA_MAX_DEVICES];

/* -1 until the thread sets a device or context: then device 0, as the runtime's default. */
static _Thread_local int current = -1;

static int valid(int device)
{
	return device >= 0 && device < fakecuda_config()->devices;
}

int fakecuda_current_device(void)
{
	return current < 0 ? 0 : current;
}

void fakecuda_set_current_device(int device)
{
	current = device;
}

static CUcontext context_of(int device)
{
	primary[device].device = device;
	return &primary[device];
}

CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int *flags, int *active)
{
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	*flags = 0;
	*active = 1;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
	if (!context)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	*context = context_of(device);
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice device)
{
	return valid(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuCtxGetCurrent(CUcontext *context)
{
	if (!context)
		return CUDA_ERROR_INVALID_VALUE;
	/* The runtime makes the primary context current on its first call; the fake's is there from the start. */
	*context = context_of(fakecuda_current_device());
	return CUDA_SUCCESS;
}

static int device_of(CUcontext context)
{
	for (int d = 0; d < fakecuda_config()->devices; d++)
		if (context == &primary[d])
			return d;
	return -1;
}

CUresult cuCtxSetCurrent(CUcontext context)
{
	if (!context)
		return CUDA_SUCCESS;	/* "no context": the thread keeps using its device's primary one here */
	int device = device_of(context);
	if (device < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	current = device;
	return CUDA_SUCCESS;
}

/* A stack of one is all PyTorch uses (push, work, pop). */
static _Thread_local int pushed = -1;

CUresult cuCtxPushCurrent(CUcontext context)
{
	int device = device_of(context);
	if (device < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	pushed = fakecuda_current_device();
	current = device;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *context)
{
	if (context)
		*context = context_of(fakecuda_current_device());
	if (pushed >= 0)
		current = pushed;
	pushed = -1;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = fakecuda_current_device();
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice device)
{
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	fakecuda_uuid(device, uuid->bytes);
	return CUDA_SUCCESS;
}


CUresult cuDeviceGetName(char *name, int length, CUdevice device)
{
	if (!name || length <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	fakecuda_device_name(device, name, (size_t)length);
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice device)
{
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = fakecuda_config()->capacity;
	return CUDA_SUCCESS;
}

FAKECUDA_PLAIN_ALIAS(cuDeviceGetUuid, cuDeviceGetUuid_v2)
FAKECUDA_PLAIN_ALIAS(cuDeviceTotalMem, cuDeviceTotalMem_v2)
FAKECUDA_PLAIN_ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)
FAKECUDA_PLAIN_ALIAS(cuCtxPushCurrent, cuCtxPushCurrent_v2)
FAKECUDA_PLAIN_ALIAS(cuCtxPopCurrent, cuCtxPopCurrent_v2)

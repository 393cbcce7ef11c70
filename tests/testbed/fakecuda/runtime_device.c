/* Device selection, properties and attributes of the fake runtime. */
#include "runtime_internal.h"

#include <cuda.h>
#include <stdio.h>
#include <string.h>

/* Runtime attributes are answered from the driver's table: the two enums share their numbers. */
_Static_assert((int)cudaDevAttrComputeCapabilityMajor == (int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
	       "cudaDeviceAttr and CUdevice_attribute diverged");
_Static_assert((int)cudaDevAttrMultiProcessorCount == (int)CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
	       "cudaDeviceAttr and CUdevice_attribute diverged");

/* Stream priorities of an H100: 0 (least) to -5 (greatest). */
enum { LEAST_PRIORITY = 0, GREATEST_PRIORITY = -5 };

/* Per thread, like the real runtime's current context. */
static _Thread_local int current_device;

int fc_current_device(void)
{
	return current_device;
}

static int valid_device(int device)
{
	return device >= 0 && device < fakecuda_config()->devices;
}

cudaError_t cudaGetDeviceCount(int *count)
{
	if (!count)
		return fc_return(cudaErrorInvalidValue);
	*count = fakecuda_config()->devices;
	return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return fc_return(cudaErrorInvalidValue);
	*device = current_device;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	if (!valid_device(device))
		return fc_return(cudaErrorInvalidDevice);
	current_device = device;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	if (!value)
		return fc_return(cudaErrorInvalidValue);
	return fc_return(fc_from_status(fakecuda_attribute(device, (int)attr, value)));
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
	if (least)
		*least = LEAST_PRIORITY;
	if (greatest)
		*greatest = GREATEST_PRIORITY;
	return cudaSuccess;
}

int fc_clamp_priority(int priority)
{
	if (priority > LEAST_PRIORITY)
		return LEAST_PRIORITY;
	return priority < GREATEST_PRIORITY ? GREATEST_PRIORITY : priority;
}

/* The fields at the head of cudaDeviceProp (name .. maxGridSize) sit at the same offsets in the
   CUDA 11, 12 and 13 layouts; the rest moved in 13. */
static void fill_head(struct cudaDeviceProp *prop, int device)
{
	const struct fakecuda_config *config = fakecuda_config();
	snprintf(prop->name, sizeof prop->name, "fakecuda device %d", device);
	memset(&prop->uuid, 0, sizeof prop->uuid);
	memcpy(prop->uuid.bytes, "fakecuda", 8);
	prop->uuid.bytes[15] = (char)device;
	memset(prop->luid, 0, sizeof prop->luid);
	prop->luidDeviceNodeMask = 0;
	prop->totalGlobalMem = config->capacity;
	prop->sharedMemPerBlock = 48 << 10;
	prop->regsPerBlock = 65536;
	prop->warpSize = 32;
	prop->memPitch = (size_t)2147483647;
	prop->maxThreadsPerBlock = 1024;
	for (int i = 0; i < 3; i++)
		prop->maxThreadsDim[i] = i < 2 ? 1024 : 64;
	prop->maxGridSize[0] = 2147483647;
	prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
}

/* The CUDA 12 ABI's symbols (cudaGetDeviceProperties_v2, and the unversioned one of libcudart.so.12)
   take a struct laid out differently from these headers' after maxGridSize, and possibly larger or
   smaller: only the shared head is written, the caller's tail is left alone. */
static cudaError_t head_only(struct cudaDeviceProp *prop, int device)
{
	if (!prop)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(device))
		return fc_return(cudaErrorInvalidDevice);
	fill_head(prop, device);
	return cudaSuccess;
}

#if FAKECUDA_ABI_MAJOR >= 13
static int attribute(int device, int attr)
{
	int value = 0;
	fakecuda_attribute(device, attr, &value);
	return value;
}

/* The full layout of the headers we build with (CUDA 13). */
static cudaError_t full(struct cudaDeviceProp *prop, int device)
{
	if (!prop)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(device))
		return fc_return(cudaErrorInvalidDevice);
	memset(prop, 0, sizeof *prop);
	fill_head(prop, device);
	prop->totalConstMem = 64 << 10;
	prop->major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	prop->minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	prop->multiProcessorCount = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	prop->pciDomainID = attribute(device, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
	prop->pciBusID = attribute(device, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
	prop->pciDeviceID = attribute(device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
	prop->unifiedAddressing = attribute(device, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
	prop->l2CacheSize = 50 << 20;
	prop->maxThreadsPerMultiProcessor = 2048;
	prop->sharedMemPerMultiprocessor = 228 << 10;
	prop->regsPerMultiprocessor = 65536;
	prop->memoryBusWidth = 5120;
	return cudaSuccess;
}
#endif

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
#if FAKECUDA_ABI_MAJOR >= 13
	return full(prop, device);
#else
	return head_only(prop, device);
#endif
}

cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device);
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
	return head_only(prop, device);
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
	if (!can)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(device) || !valid_device(peer))
		return fc_return(cudaErrorInvalidDevice);
	/* All fake devices are host memory, so any two can reach each other. */
	*can = device != peer;
	return cudaSuccess;
}

static unsigned char peer_enabled[FAKECUDA_MAX_DEVICES][FAKECUDA_MAX_DEVICES];

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
	int device = current_device;
	if (flags)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(peer) || peer == device)
		return fc_return(cudaErrorInvalidDevice);
	if (__atomic_exchange_n(&peer_enabled[device][peer], 1, __ATOMIC_RELAXED))
		return fc_return(cudaErrorPeerAccessAlreadyEnabled);
	return cudaSuccess;
}

/* Device selection, properties and attributes of the fake runtime. */
#include "runtime_internal.h"
#include "device_props.h"

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

/* Per thread, like the real runtime's current context (kept by the driver: driver_context.c). */
int fc_current_device(void)
{
	return fakecuda_current_device();
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
	*device = fakecuda_current_device();
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	if (!valid_device(device))
		return fc_return(cudaErrorInvalidDevice);
	fakecuda_set_current_device(device);
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

static cudaError_t check_props_args(const void *prop, int device)
{
	if (!prop)
		return fc_return(cudaErrorInvalidValue);
	return valid_device(device) ? cudaSuccess : fc_return(cudaErrorInvalidDevice);
}

#if FAKECUDA_ABI_MAJOR >= 13 || (FAKECUDA_ABI_MAJOR == 12 && FAKECUDA_HAVE_PROPS12) || \
	(FAKECUDA_ABI_MAJOR == 11 && FAKECUDA_HAVE_ABI11)
static cudaError_t abi_props(struct cudaDeviceProp *prop, int device)
{
	cudaError_t error = check_props_args(prop, device);
	if (error)
		return error;
#if FAKECUDA_ABI_MAJOR >= 13
	fc_fill_props(prop, device);
#elif FAKECUDA_ABI_MAJOR == 12
	fc_device_props12(prop, device);
#else
	fc_device_props11(prop, device);
#endif
	return cudaSuccess;
}
#elif FAKECUDA_ABI_MAJOR == 12
/* libcudart.so.12 built without CUDA 12 headers: its callers' struct is laid out differently from these
   headers' after maxGridSize, and possibly larger or smaller, so only the shared head is written and the
   caller's tail is left alone (enough for c10's allocator; a whole PyTorch needs CUDA12_HOME, see Makefile). */
static cudaError_t abi_props(struct cudaDeviceProp *prop, int device)
{
	cudaError_t error = check_props_args(prop, device);
	if (error)
		return error;
	fc_fill_props_head(prop, device);
	return cudaSuccess;
}
#else
/* libcudart.so.11.0 built without CUDA 11 headers: refused, with nothing written. CUDA 11's struct is the
   smallest (728 bytes with 11.8's headers against 1008/1032 for 13/12), so these headers' layout must never be
   written into it, and a head-only answer would leave major, minor, multiProcessorCount ... to the caller's
   garbage, silently. c10's allocator never asks (2.0.1's libc10_cuda.so does not import it); a whole
   PyTorch for CUDA 11 needs CUDA11_HOME (Makefile). */
static cudaError_t abi_props(struct cudaDeviceProp *prop, int device)
{
	cudaError_t error = check_props_args(prop, device);
	return error ? error : fc_return(cudaErrorNotSupported);
}
#endif

/* CUDA 11's only name for the query (with CUDA 11's struct); CUDA 13's (with its own); CUDA 12's headers
   rename callers' calls to cudaGetDeviceProperties_v2 (below), this is CUDA 12's old name. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	return abi_props(prop, device);
}

#if FAKECUDA_ABI_MAJOR >= 12
/* CUDA 12 introduced _v2 with its new struct; NVIDIA's libcudart.so.11.0 has no such symbol, nor has ours. */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device);
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
#if FAKECUDA_ABI_MAJOR >= 13
	/* CUDA 12 callers' name for the query, with their struct: only the head is shared with ours. */
	cudaError_t error = check_props_args(prop, device);
	if (!error)
		fc_fill_props_head(prop, device);
	return error;
#else
	return abi_props(prop, device);
#endif
}
#endif

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
	int device = fakecuda_current_device();
	if (flags)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(peer) || peer == device)
		return fc_return(cudaErrorInvalidDevice);
	if (__atomic_exchange_n(&peer_enabled[device][peer], 1, __ATOMIC_RELAXED))
		return fc_return(cudaErrorPeerAccessAlreadyEnabled);
	return cudaSuccess;
}

/* "0000:10:00.0" for device 0, the location the PCI attributes give. */
cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int length, int device)
{
	int domain, bus, slot;
	if (!bus_id || length <= 0)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(device))
		return fc_return(cudaErrorInvalidDevice);
	fakecuda_attribute(device, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &domain);
	fakecuda_attribute(device, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &bus);
	fakecuda_attribute(device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &slot);
	snprintf(bus_id, (size_t)length, "%04x:%02x:%02x.0", domain, bus, slot);
	return cudaSuccess;
}

/* Graph memory is never allocated (capture is not faked): every figure is 0. */
cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attribute, void *value)
{
	(void)attribute;
	if (!value)
		return fc_return(cudaErrorInvalidValue);
	if (!valid_device(device))
		return fc_return(cudaErrorInvalidDevice);
	*(unsigned long long *)value = 0;
	return cudaSuccess;
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attribute, void *value)
{
	(void)attribute;
	if (!value)
		return fc_return(cudaErrorInvalidValue);
	return valid_device(device) ? cudaSuccess : fc_return(cudaErrorInvalidDevice);
}

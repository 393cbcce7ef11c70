/* The fake CUDA driver API (libcuda.so.1): virtual memory management for expandable segments. */
#define _GNU_SOURCE
#include "fakecuda_internal.h"
#include "vaspace.h"

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* cuda.h renames these to their _v2 forms, but c10 dlsym()s the plain names: export both. */
#undef cuStreamWriteValue32

/* A cuMemCreate allocation. Its pages live where it is mapped (one mapping at a time is enough
   for c10), so two mappings of one handle would not share contents: not needed, not faked. */
struct physical {
	int device;
	size_t size;
};

/* Reservations of all devices share one arena: cuMemAddressReserve names no device. */
static struct va_arena reserved;
static int reserved_ready;
static pthread_once_t reserved_once = PTHREAD_ONCE_INIT;

static void reserve_arena(void)
{
	const struct fakecuda_config *config = fakecuda_config();
	/* c10 reserves 9/8 of a device per expandable segment (one per stream, pool and pool kind), and
	   keeps an emptied one's reservation: leave room for hundreds (at least 1 TiB; PROT_NONE and
	   MAP_NORESERVE cost nothing), bounded well inside the 128 TiB user address space. A smaller arena
	   made cuMemAddressReserve fail where a GPU's would not (many MemPools on a small device). */
	size_t size = 32 * config->capacity * (size_t)config->devices;
	if (size < ((size_t)1 << 40))
		size = (size_t)1 << 40;
	if (size > ((size_t)64 << 40))
		size = (size_t)64 << 40;
	reserved_ready = va_arena_init(&reserved, size) == 0;
}

static int ready(void)
{
	pthread_once(&reserved_once, reserve_arena);
	return reserved_ready;
}

static CUresult from_status(int status)
{
	switch (status) {
	case FAKECUDA_OK: return CUDA_SUCCESS;
	case FAKECUDA_ENODEV: return CUDA_ERROR_INVALID_DEVICE;
	case FAKECUDA_ENOMEM: return CUDA_ERROR_OUT_OF_MEMORY;
	case FAKECUDA_EINVAL: return CUDA_ERROR_INVALID_VALUE;
	default: return CUDA_ERROR_UNKNOWN;
	}
}

static int aligned(size_t value)
{
	return value % fakecuda_config()->granularity == 0;
}

/* Whether [ptr, ptr+size) lies inside the reservation arena. */
static int in_reserved(CUdeviceptr ptr, size_t size)
{
	return ready() && size && va_arena_contains(&reserved, ptr)
	       && va_arena_contains(&reserved, ptr + size - 1);
}

enum fakecuda_origin fakecuda_lookup(const void *ptr, int *device)
{
	if (fakecuda_malloc_origin(ptr, device) != FAKECUDA_ORIGIN_NONE)
		return FAKECUDA_ORIGIN_MALLOC;
	if (in_reserved((CUdeviceptr)ptr, 1)) {
		*device = -1;
		return FAKECUDA_ORIGIN_RESERVE;
	}
	return FAKECUDA_ORIGIN_NONE;
}

int fakecuda_reserved_range(const void *ptr, uintptr_t *start, size_t *size)
{
	if (!in_reserved((CUdeviceptr)ptr, 1))
		return FAKECUDA_EINVAL;
	return va_range_of(&reserved, (uintptr_t)ptr, start, size) ? FAKECUDA_EINVAL : FAKECUDA_OK;
}

CUresult cuInit(unsigned int flags)
{
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	/* One driver serves both fake runtimes, so it is at least as new as the newer one (13.0), also when
	   built with CUDA 12 headers. */
	*version = CUDA_VERSION > 13000 ? CUDA_VERSION : 13000;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = fakecuda_config()->devices;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= fakecuda_config()->devices)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	return from_status(fakecuda_attribute(device, attribute, value));
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	(void)option;	/* minimum and recommended are the same here */
	if (!granularity || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (prop->location.id < 0 || prop->location.id >= fakecuda_config()->devices)
		return CUDA_ERROR_INVALID_DEVICE;
	*granularity = fakecuda_config()->granularity;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags)
{
	(void)addr;	/* only a hint for the real driver too */
	if (!ptr || !size || flags || !aligned(size) || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!ready())
		return CUDA_ERROR_UNKNOWN;
	size_t granularity = fakecuda_config()->granularity;
	uintptr_t start = va_alloc(&reserved, size, alignment > granularity ? alignment : granularity);
	if (!start)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ptr = start;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	if (!in_reserved(ptr, size) || va_size_of(&reserved, ptr) != size)
		return CUDA_ERROR_INVALID_VALUE;
	/* Whatever is still mapped goes with the reservation. */
	if (va_unback(ptr, size) || va_release(&reserved, ptr))
		return CUDA_ERROR_UNKNOWN;
	return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!handle || !prop || flags || !size || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED
	    || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	struct physical *physical = malloc(sizeof *physical);
	if (!physical)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fakecuda_delay();
	int status = fakecuda_charge(prop->location.id, size);
	if (status) {
		free(physical);
		return from_status(status);
	}
	*physical = (struct physical){ prop->location.id, size };
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)physical;
	return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct physical *physical = (struct physical *)(uintptr_t)handle;
	if (!physical)
		return CUDA_ERROR_INVALID_VALUE;
	fakecuda_uncharge(physical->device, physical->size);
	free(physical);
	return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		  unsigned long long flags)
{
	const struct physical *physical = (const struct physical *)(uintptr_t)handle;
	if (!physical || flags || offset || size != physical->size || !aligned(ptr)
	    || !in_reserved(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	/* Mapped but inaccessible until cuMemSetAccess, as on the real driver. */
	return va_back(ptr, size, PROT_NONE) ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	if (!desc || !count || !aligned(ptr) || !aligned(size) || !in_reserved(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	/* Every fake device shares the host's pages, so the widest access requested applies. */
	int prot = PROT_NONE;
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_NOT_SUPPORTED;
		if (desc[i].location.id < 0 || desc[i].location.id >= fakecuda_config()->devices)
			return CUDA_ERROR_INVALID_DEVICE;
		if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			prot = PROT_READ | PROT_WRITE;
		else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ && prot == PROT_NONE)
			prot = PROT_READ;
	}
	return mprotect((void *)ptr, size, prot) ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	if (!aligned(ptr) || !aligned(size) || !in_reserved(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	return va_unback(ptr, size) ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
}

/* Looked up by c10 but only used for IPC and by SymmetricMemory: not faked, so they fail loudly. */
CUresult cuMemExportToShareableHandle(void *shareable, CUmemGenericAllocationHandle handle,
				      CUmemAllocationHandleType type, unsigned long long flags)
{
	(void)shareable, (void)handle, (void)type, (void)flags;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *shareable,
					CUmemAllocationHandleType type)
{
	(void)handle, (void)shareable, (void)type;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemsetD32Async(CUdeviceptr ptr, unsigned int value, size_t count, CUstream stream)
{
	(void)ptr, (void)value, (void)count, (void)stream;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	(void)stream, (void)addr, (void)value, (void)flags;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	return cuStreamWriteValue32_v2(stream, addr, value, flags);
}

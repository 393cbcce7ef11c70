/* Pinned ("page-locked") host memory of the fake runtime: ordinary host pages, since a copy is a memmove. */
#include "runtime_internal.h"

#include <stdlib.h>

cudaError_t cudaHostAlloc(void **out, size_t size, unsigned int flags)
{
	(void)flags;	/* portable, mapped, write-combined: all the same host memory here */
	if (!out)
		return fc_return(cudaErrorInvalidValue);
	if (!size) {
		*out = NULL;
		return cudaSuccess;
	}
	/* Page-aligned like the real runtime's, which PyTorch's host allocator does not rely on but users may. */
	if (posix_memalign(out, 4096, size)) {
		*out = NULL;
		return fc_return(cudaErrorMemoryAllocation);
	}
	return cudaSuccess;
}

cudaError_t cudaMallocHost(void **out, size_t size)
{
	return cudaHostAlloc(out, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *ptr)
{
	free(ptr);
	return cudaSuccess;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	(void)flags;
	return ptr && size ? cudaSuccess : fc_return(cudaErrorInvalidValue);
}

cudaError_t cudaHostUnregister(void *ptr)
{
	return ptr ? cudaSuccess : fc_return(cudaErrorInvalidValue);
}

cudaError_t cudaHostGetDevicePointer(void **device_ptr, void *host_ptr, unsigned int flags)
{
	if (!device_ptr || !host_ptr || flags)
		return fc_return(cudaErrorInvalidValue);
	/* Unified addressing: the device sees host memory at the same address. */
	*device_ptr = host_ptr;
	return cudaSuccess;
}

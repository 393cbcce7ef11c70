/* Device memory calls of the fake runtime: malloc/free, info, copies and pointer queries. */
#include "runtime_internal.h"

#include <stddef.h>
#include <string.h>

cudaError_t cudaMalloc(void **out, size_t size)
{
	if (!out)
		return fc_return(cudaErrorInvalidValue);
	if (!size) {
		*out = NULL;
		return cudaSuccess;
	}
	return fc_return(fc_from_status(fakecuda_malloc(fc_current_device(), size, out)));
}

cudaError_t cudaFree(void *ptr)
{
	/* cudaFree(NULL) is the classic "initialise the context" call: it must succeed. */
	if (!ptr)
		return cudaSuccess;
	return fc_return(fc_from_status(fakecuda_free(ptr)));
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
	int device = fc_current_device();
	size_t capacity = fakecuda_config()->capacity;
	if (!free_bytes || !total_bytes)
		return fc_return(cudaErrorInvalidValue);
	*total_bytes = capacity;
	*free_bytes = capacity - fakecuda_used(device);
	return cudaSuccess;
}

/* Both sides of a copy are host memory here, whatever the kind says; only bad kinds fail. */
static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
		return fc_return(cudaErrorInvalidMemcpyDirection);
	if (count && (!dst || !src))
		return fc_return(cudaErrorInvalidValue);
	memmove(dst, src, count);
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	return copy(dst, src, count, kind);
}

/* A pitched copy: HEIGHT rows of WIDTH bytes, rows SPITCH / DPITCH bytes apart. */
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			 enum cudaMemcpyKind kind)
{
	if (width > dpitch || width > spitch)
		return fc_return(cudaErrorInvalidPitchValue);
	for (size_t row = 0; row < height; row++) {
		cudaError_t error = copy((char *)dst + row * dpitch, (const char *)src + row * spitch, width, kind);
		if (error)
			return error;
	}
	return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			      size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
				size_t count, cudaStream_t stream)
{
	int devices = fakecuda_config()->devices;
	if (dst_device < 0 || dst_device >= devices || src_device < 0 || src_device >= devices)
		return fc_return(cudaErrorInvalidDevice);
	return cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
}

cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
	int device;
	if (count && fakecuda_lookup(ptr, &device) == FAKECUDA_ORIGIN_NONE)
		return fc_return(cudaErrorInvalidValue);
	memset(ptr, value, count);
	return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	return cudaMemset(ptr, value, count);
}

/* How much of the caller's struct is written. CUDA 13 appended reserved[8] (88 bytes with 13.0's headers);
   CUDA 11's and 12's struct ends at hostPointer (24 bytes; runtime_abi11.c and runtime_props12.c assert it
   against their headers), and those four fields sit alike in all three. */
#if FAKECUDA_ABI_MAJOR >= 13
#define POINTER_ATTRIBUTES_SIZE sizeof(struct cudaPointerAttributes)
#else
#define POINTER_ATTRIBUTES_SIZE (offsetof(struct cudaPointerAttributes, hostPointer) + sizeof(void *))
#endif

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
	if (!attributes)
		return fc_return(cudaErrorInvalidValue);
	int device = -1;
	enum fakecuda_origin origin = fakecuda_lookup(ptr, &device);
	struct cudaPointerAttributes result;
	memset(&result, 0, sizeof result);
	if (origin == FAKECUDA_ORIGIN_NONE) {
		/* Since CUDA 11 plain host memory is a success with type "unregistered". */
		result.type = cudaMemoryTypeUnregistered;
		result.device = -2;
		result.hostPointer = (void *)ptr;
	} else {
		result.type = cudaMemoryTypeDevice;
		/* A driver reservation names no device; report the caller's, as a context would. */
		result.device = device >= 0 ? device : fc_current_device();
		result.devicePointer = (void *)ptr;
	}
	memcpy(attributes, &result, POINTER_ATTRIBUTES_SIZE);
	return cudaSuccess;
}

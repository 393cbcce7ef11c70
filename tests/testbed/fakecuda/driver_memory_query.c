/* Queries about device pointers and allocation handles through the driver. */
#include "fakecuda_internal.h"

#include <cuda.h>
#include <string.h>

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	int device = -1;
	enum fakecuda_origin origin = fakecuda_lookup((const void *)ptr, &device);
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (device < 0)
		device = fakecuda_current_device();
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		if (origin == FAKECUDA_ORIGIN_NONE)
			return CUDA_ERROR_INVALID_VALUE;
		*(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		if (origin == FAKECUDA_ORIGIN_NONE)
			return CUDA_ERROR_INVALID_VALUE;
		*(int *)data = device;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* The cudaMalloc range or driver reservation that holds ptr. */
CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr ptr)
{
	uintptr_t start;
	size_t length;
	if (fakecuda_range((const void *)ptr, &start, &length))
		return CUDA_ERROR_NOT_FOUND;
	if (base)
		*base = start;
	if (size)
		*size = length;
	return CUDA_SUCCESS;
}

FAKECUDA_PLAIN_ALIAS(cuMemGetAddressRange, cuMemGetAddressRange_v2)

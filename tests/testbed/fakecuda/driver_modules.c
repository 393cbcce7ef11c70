/* Modules, kernels and launches of the fake driver: PyTorch's NVRTC path (jiterator, custom kernels) loads
   the code it compiled and launches it through the driver. Nothing runs; handles only have to be distinct
   and valid. */
#include "fakecuda_internal.h"

#include <cuda.h>
#include <stdlib.h>

struct CUmod_st {
	int unused;
};

/* A function's handle points into its module (its address plus one), so it is non-null and distinct
   per module; names are not kept. */
CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	*module = calloc(1, sizeof **module);
	return *module ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int count, CUjit_option *options,
			    void **values)
{
	(void)count, (void)options, (void)values;
	return cuModuleLoadData(module, image);
}

CUresult cuModuleLoad(CUmodule *module, const char *path)
{
	return cuModuleLoadData(module, path);
}

CUresult cuModuleUnload(CUmodule module)
{
	if (!module)
		return CUDA_ERROR_INVALID_VALUE;
	free(module);
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
	if (!function || !module || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*function = (CUfunction)((char *)module + 1);
	return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
			unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared,
			CUstream stream, void **params, void **extra)
{
	(void)shared, (void)stream, (void)params, (void)extra;
	if (!function)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z
	    || (unsigned long long)block_x * block_y * block_z > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuLaunchCooperativeKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y,
				   unsigned int grid_z, unsigned int block_x, unsigned int block_y,
				   unsigned int block_z, unsigned int shared, CUstream stream, void **params)
{
	return cuLaunchKernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared, stream,
			      params, NULL);
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function)
{
	if (!value || !function)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = 90; break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = 48 << 10; break;
	default: *value = 0;
	}
	return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value)
{
	(void)attribute, (void)value;
	return function ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuFuncSetCacheConfig(CUfunction function, CUfunc_cache config)
{
	(void)config;
	return function ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The figures of runtime_launch.c: 2048 threads and at most 32 blocks per multiprocessor. */
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction function, int block_size,
						     size_t shared)
{
	(void)shared;
	if (!blocks || !function || block_size <= 0 || block_size > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	int n = 2048 / block_size;
	*blocks = n > 32 ? 32 : n;
	return CUDA_SUCCESS;
}

/* Linking PTX/cubins (NVRTC's path for some kernels): the "image" is a byte of our own. */
struct CUlinkState_st {
	char image;
};

CUresult cuLinkCreate(unsigned int count, CUjit_option *options, void **values, CUlinkState *state)
{
	(void)count, (void)options, (void)values;
	if (!state)
		return CUDA_ERROR_INVALID_VALUE;
	*state = calloc(1, sizeof **state);
	return *state ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
			  unsigned int count, CUjit_option *options, void **values)
{
	(void)type, (void)size, (void)name, (void)count, (void)options, (void)values;
	return state && data ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLinkComplete(CUlinkState state, void **image, size_t *size)
{
	if (!state || !image || !size)
		return CUDA_ERROR_INVALID_VALUE;
	*image = &state->image;
	*size = 1;
	return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state)
{
	free(state);
	return CUDA_SUCCESS;
}

FAKECUDA_PLAIN_ALIAS(cuLinkCreate, cuLinkCreate_v2)
FAKECUDA_PLAIN_ALIAS(cuLinkAddData, cuLinkAddData_v2)

/* Kernel launches and their queries. Nothing runs on the fake device: a launch checks its stream and
   succeeds, so whatever a program computes is garbage while its memory behaviour is real. Host callbacks
   do run (inline), since host code waits for them. */
#include "runtime_internal.h"
#include "device_props.h"

#include <string.h>

/* What <<<grid, block, shared, stream>>> pushed, popped by the compiler's launch stub (per thread, nested
   pushes are not a thing: each push is popped by the stub it precedes). */
static _Thread_local struct {
	dim3 grid, block;
	size_t shared;
	cudaStream_t stream;
} pushed;

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st *stream);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st *stream)
{
	pushed.grid = grid;
	pushed.block = block;
	pushed.shared = shared;
	pushed.stream = stream;
	return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
	*grid = pushed.grid;
	*block = pushed.block;
	*shared = pushed.shared;
	*(cudaStream_t *)stream = pushed.stream;
	return cudaSuccess;
}

static cudaError_t launch(const void *function, dim3 grid, dim3 block, cudaStream_t stream)
{
	if (!function)
		return fc_return(cudaErrorInvalidDeviceFunction);
	if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z
	    || (unsigned long long)block.x * block.y * block.z > 1024)
		return fc_return(cudaErrorInvalidConfiguration);
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *function, dim3 grid, dim3 block, void **args, size_t shared,
			     cudaStream_t stream)
{
	(void)args, (void)shared;
	return launch(function, grid, block, stream);
}

cudaError_t cudaLaunchCooperativeKernel(const void *function, dim3 grid, dim3 block, void **args, size_t shared,
				       cudaStream_t stream)
{
	(void)args, (void)shared;
	return launch(function, grid, block, stream);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *function, void **args)
{
	(void)args;
	if (!config)
		return fc_return(cudaErrorInvalidValue);
	return launch(function, config->gridDim, config->blockDim, config->stream);
}

/* CUDA 13's launch stub goes through a kernel handle (__cudaGetKernel). */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
			       cudaStream_t stream);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
			       cudaStream_t stream)
{
	(void)args, (void)shared;
	return launch(kernel, grid, block, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
				   cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
				   cudaStream_t stream)
{
	return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t function, void *data)
{
	if (!function)
		return fc_return(cudaErrorInvalidValue);
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	function(data);
	return cudaSuccess;
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *data,
				  unsigned int flags)
{
	if (!callback || flags)
		return fc_return(cudaErrorInvalidValue);
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	callback(stream, cudaSuccess, data);
	return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attributes, const void *function)
{
	if (!attributes)
		return fc_return(cudaErrorInvalidValue);
	if (!function)
		return fc_return(cudaErrorInvalidDeviceFunction);
#if FAKECUDA_ABI_MAJOR != 11
	/* CUDA 12's struct is CUDA 13's (144 bytes with 12.4's and 13.0's headers). */
	fc_fill_func_attributes(attributes);
#elif FAKECUDA_HAVE_ABI11
	fc_func_attributes11(attributes);
#else
	/* CUDA 11's struct ends at preferredShmemCarveout (56 bytes with 11.8's headers, 144 with these): without
	   CUDA 11 headers it is refused rather than overrun (Makefile, CUDA11_HOME). */
	return fc_return(cudaErrorNotSupported);
#endif
	return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *function, enum cudaFuncAttribute attribute, int value)
{
	(void)attribute, (void)value;
	return function ? cudaSuccess : fc_return(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaFuncSetCacheConfig(const void *function, enum cudaFuncCache config)
{
	(void)config;
	return function ? cudaSuccess : fc_return(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attribute, int value,
					    int device)
{
	(void)attribute, (void)value;
	if (!kernel)
		return fc_return(cudaErrorInvalidDeviceFunction);
	return device >= 0 && device < fakecuda_config()->devices ? cudaSuccess
								   : fc_return(cudaErrorInvalidDevice);
}

/* 2048 resident threads per multiprocessor, at most 32 blocks, as on sm_90. */
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, const void *function,
								  int block_size, size_t shared,
								  unsigned int flags)
{
	(void)shared, (void)flags;
	if (!blocks || block_size <= 0 || block_size > 1024)
		return fc_return(cudaErrorInvalidValue);
	if (!function)
		return fc_return(cudaErrorInvalidDeviceFunction);
	int n = 2048 / block_size;
	*blocks = n > 32 ? 32 : n;
	return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *function, int block_size,
							  size_t shared)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, function, block_size, shared, 0);
}

cudaError_t cudaProfilerStart(void)
{
	return cudaSuccess;
}

cudaError_t cudaProfilerStop(void)
{
	return cudaSuccess;
}

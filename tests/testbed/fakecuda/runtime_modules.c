/* Fat binaries, kernels and device variables: what a CUDA library registers when it is loaded.
   Nothing is ever compiled or run, so a kernel is only a handle; a device variable gets host memory of its
   registered size on first use, so that cudaGetSymbolAddress and cudaMemcpyToSymbol behave. */
#include "runtime_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One fat binary's handle: the registration protocol passes its address (void **) back to us. */
struct fatbin {
	void *cookie;		/* what *handle points at, as for the real runtime: never dereferenced */
	unsigned long functions, variables;
};

/* Device variables by the address of their host shadow (the key CUDA's symbol calls take). */
struct variable {
	const void *host;
	size_t size;
	void *memory;		/* calloc'd on first use */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct variable *variables;	/* open addressing, power-of-two capacity */
static size_t variables_cap, variables_len;

static size_t slot_of(const void *host, size_t cap)
{
	uintptr_t h = (uintptr_t)host;
	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15u;
	return (size_t)(h >> 7) & (cap - 1);
}

/* Must hold lock. Returns the slot of host, or the empty slot where it would go. */
static struct variable *probe(const void *host)
{
	size_t i = slot_of(host, variables_cap);
	while (variables[i].host && variables[i].host != host)
		i = (i + 1) & (variables_cap - 1);
	return &variables[i];
}

/* Must hold lock. */
static int grow(void)
{
	size_t cap = variables_cap ? variables_cap * 2 : 1024;
	struct variable *old = variables;
	size_t old_cap = variables_cap;
	variables = calloc(cap, sizeof *variables);
	if (!variables) {
		variables = old;
		return -1;
	}
	variables_cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].host)
			*probe(old[i].host) = old[i];
	free(old);
	return 0;
}

void **__cudaRegisterFatBinary(void *fat_cubin)
{
	struct fatbin *binary = calloc(1, sizeof *binary);
	if (!binary)
		return NULL;
	binary->cookie = fat_cubin;
	return &binary->cookie;
}

void __cudaRegisterFatBinaryEnd(void **handle)
{
	(void)handle;
}

void __cudaUnregisterFatBinary(void **handle)
{
	/* Registered variables keep their memory: host code may still hold cudaGetSymbolAddress results at exit. */
	free(handle);
}

char __cudaInitModule(void **handle)
{
	(void)handle;
	return 1;
}

void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *block_dim, dim3 *grid_dim, int *warp_size)
{
	(void)host_fun, (void)device_fun, (void)device_name, (void)thread_limit;
	(void)tid, (void)bid, (void)block_dim, (void)grid_dim, (void)warp_size;
	if (handle)
		((struct fatbin *)handle)->functions++;
}

void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
		       size_t size, int constant, int global)
{
	(void)device_address, (void)device_name, (void)ext, (void)constant, (void)global;
	if (handle)
		((struct fatbin *)handle)->variables++;
	pthread_mutex_lock(&lock);
	if ((variables_len + 1) * 2 <= variables_cap || grow() == 0) {
		struct variable *v = probe(host_var);
		if (!v->host) {
			v->host = host_var;
			v->size = size;
			variables_len++;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* The "device" memory of a registered variable, and its size; NULL if the symbol was never registered. */
static void *variable_memory(const void *symbol, size_t *size)
{
	void *memory = NULL;
	pthread_mutex_lock(&lock);
	if (variables_cap) {
		struct variable *v = probe(symbol);
		if (v->host) {
			if (!v->memory)
				v->memory = calloc(1, v->size ? v->size : 1);
			memory = v->memory;
			*size = v->size;
		}
	}
	pthread_mutex_unlock(&lock);
	return memory;
}

cudaError_t cudaGetSymbolAddress(void **device_ptr, const void *symbol)
{
	size_t size;
	if (!device_ptr)
		return fc_return(cudaErrorInvalidValue);
	*device_ptr = variable_memory(symbol, &size);
	return *device_ptr ? cudaSuccess : fc_return(cudaErrorInvalidSymbol);
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
	if (!size)
		return fc_return(cudaErrorInvalidValue);
	return variable_memory(symbol, size) ? cudaSuccess : fc_return(cudaErrorInvalidSymbol);
}

static cudaError_t symbol_copy(const void *symbol, size_t count, size_t offset, void *to, const void *from)
{
	size_t size;
	char *memory = variable_memory(symbol, &size);
	if (!memory)
		return fc_return(cudaErrorInvalidSymbol);
	if (offset > size || count > size - offset)
		return fc_return(cudaErrorInvalidValue);
	memmove(to ? to : memory + offset, from ? from : memory + offset, count);
	return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
			       enum cudaMemcpyKind kind)
{
	(void)kind;
	return symbol_copy(symbol, count, offset, NULL, src);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
				    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	if (!fc_stream(stream))
		return fc_return(cudaErrorInvalidResourceHandle);
	return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
				 enum cudaMemcpyKind kind)
{
	(void)kind;
	return symbol_copy(symbol, count, offset, dst, NULL);
}

/* Kernels: the handle is the host stub's address itself (any non-null value would do). */
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *function)
{
	if (!kernel || !function)
		return fc_return(cudaErrorInvalidDeviceFunction);
	*kernel = (cudaKernel_t)function;
	return cudaSuccess;
}

/* Runtime-loaded libraries (cubins that PyTorch embeds and loads itself, e.g. for jiterator or NVRTC output). */
struct library {
	int unused;
};

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jit_options,
				void **jit_values, unsigned int jit_count, enum cudaLibraryOption *library_options,
				void **library_values, unsigned int library_count)
{
	(void)code, (void)jit_options, (void)jit_values, (void)jit_count;
	(void)library_options, (void)library_values, (void)library_count;
	if (!library)
		return fc_return(cudaErrorInvalidValue);
	*library = (cudaLibrary_t)calloc(1, sizeof(struct library));
	return *library ? cudaSuccess : fc_return(cudaErrorMemoryAllocation);
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
	free(library);
	return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *kernel, cudaLibrary_t library, const char *name)
{
	if (!kernel || !library || !name)
		return fc_return(cudaErrorInvalidValue);
	*kernel = (cudaKernel_t)library;
	return cudaSuccess;
}

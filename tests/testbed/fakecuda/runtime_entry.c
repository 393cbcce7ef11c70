/* Driver entry points through the runtime: PyTorch asks the runtime for driver functions by name
   (c10's DriverAPI, NVML-free paths), and the real runtime looks them up in libcuda.so.1. So does the fake:
   in our libcuda.so.1, which is loaded with us (DT_NEEDED). */
#define _GNU_SOURCE
#include "runtime_internal.h"

#include <dlfcn.h>
#include <stdio.h>

static void *lookup(const char *symbol)
{
	void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!driver)
		return NULL;
	void *function = dlsym(driver, symbol);
	if (!function) {
		/* cuda.h's macro names (cuMemcpy -> cuMemcpy_v2): a caller may ask for either. */
		char versioned[128];
		if (snprintf(versioned, sizeof versioned, "%s_v2", symbol) < (int)sizeof versioned)
			function = dlsym(driver, versioned);
	}
	dlclose(driver);
	return function;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **function, unsigned int version,
					     unsigned long long flags, enum cudaDriverEntryPointQueryResult *status)
{
	(void)version, (void)flags;
	if (!symbol || !function)
		return fc_return(cudaErrorInvalidValue);
	*function = lookup(symbol);
	if (status)
		*status = *function ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
	return cudaSuccess;
}

#if FAKECUDA_ABI_MAJOR == 11
/* CUDA 11.3 to 11.8: no query result argument (CUDA 12 added it), so none is written. Defined under its
   exported name with __asm__, since the headers fakecuda is built with declare the 4-argument form. */
cudaError_t fc_get_driver_entry_point11(const char *symbol, void **function, unsigned long long flags)
	__asm__("cudaGetDriverEntryPoint");
cudaError_t fc_get_driver_entry_point11(const char *symbol, void **function, unsigned long long flags)
{
	return cudaGetDriverEntryPointByVersion(symbol, function, 11080, flags, NULL);
}
#elif FAKECUDA_ABI_MAJOR == 12
/* CUDA 12 also has the unversioned query (removed in 13). */
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **function, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *status);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **function, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *status)
{
	return cudaGetDriverEntryPointByVersion(symbol, function, 12000, flags, status);
}
#endif

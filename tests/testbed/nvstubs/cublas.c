/* What PyTorch needs from cuBLAS beyond "succeed and do nothing" (gen.py writes those). The real cuBLAS does
   not initialise on the fake runtime (CUBLAS_STATUS_NOT_INITIALIZED from cublasCreate), so it is replaced. */
#include "handle.h"

NVSTUB_CREATOR(cublasCreate_v2)

/* cublasGetMathMode / cublasGetPointerMode_v2 (handle, int *out): the defaults, 0 (CUBLAS_DEFAULT_MATH,
   CUBLAS_POINTER_MODE_HOST). */
long cublasGetMathMode(void *handle, int *mode);
long cublasGetMathMode(void *handle, int *mode)
{
	(void)handle;
	if (mode)
		*mode = 0;
	return 0;
}

long cublasGetPointerMode_v2(void *handle, int *mode);
long cublasGetPointerMode_v2(void *handle, int *mode)
{
	return cublasGetMathMode(handle, mode);
}

long cublasGetVersion_v2(void *handle, int *version);
long cublasGetVersion_v2(void *handle, int *version)
{
	(void)handle;
	if (version)
		*version = NVSTUB_CUBLAS_VERSION;
	return 0;
}

const char *cublasGetStatusString(int status);
const char *cublasGetStatusString(int status)
{
	return status ? "cuBLAS stub error" : "CUBLAS_STATUS_SUCCESS";
}

const char *cublasGetStatusName(int status);
const char *cublasGetStatusName(int status)
{
	return status ? "CUBLAS_STATUS_UNKNOWN" : "CUBLAS_STATUS_SUCCESS";
}

/* What PyTorch needs from cuBLASLt beyond "succeed and do nothing": descriptors and layouts are handles, and
   the heuristic query returns one algorithm (PyTorch fails a matmul when it gets none). */
#include "handle.h"

#include <stdint.h>
#include <string.h>

NVSTUB_CREATOR(cublasLtCreate)
NVSTUB_CREATOR(cublasLtMatmulDescCreate)
NVSTUB_CREATOR(cublasLtMatrixLayoutCreate)
NVSTUB_CREATOR(cublasLtMatmulPreferenceCreate)

/* cublasLtMatmulHeuristicResult_t as cublasLt.h lays it out (the same in CUDA 11 to 13). */
struct heuristic_result {
	uint64_t algo[8];	/* cublasLtMatmulAlgo_t */
	size_t workspace_size;
	int state;		/* cublasStatus_t */
	float waves_count;
	int reserved[4];
};

long cublasLtMatmulAlgoGetHeuristic(void *handle, void *op, void *a, void *b, void *c, void *d, void *preference,
				    int requested, struct heuristic_result *results, int *returned);
long cublasLtMatmulAlgoGetHeuristic(void *handle, void *op, void *a, void *b, void *c, void *d, void *preference,
				    int requested, struct heuristic_result *results, int *returned)
{
	(void)handle, (void)op, (void)a, (void)b, (void)c, (void)d, (void)preference;
	if (requested < 1 || !results || !returned)
		return 7;	/* CUBLAS_STATUS_INVALID_VALUE */
	memset(results, 0, sizeof *results);
	results->waves_count = 1.0f;
	*returned = 1;
	return 0;
}

size_t cublasLtGetVersion(void);
size_t cublasLtGetVersion(void)
{
	return NVSTUB_CUBLAS_VERSION;
}

const char *cublasLtGetStatusString(int status);
const char *cublasLtGetStatusString(int status)
{
	return status ? "cuBLASLt stub error" : "CUBLAS_STATUS_SUCCESS";
}

const char *cublasLtGetStatusName(int status);
const char *cublasLtGetStatusName(int status)
{
	return status ? "CUBLAS_STATUS_UNKNOWN" : "CUBLAS_STATUS_SUCCESS";
}

/* cuGetErrorString/cuGetErrorName for the driver results the fake can return. */
#include <cuda.h>
#include <stddef.h>

struct message {
	CUresult code;
	const char *name;
	const char *text;
};

/* Only results this fake produces; anything else is "unrecognized", as the real driver says. */
static const struct message messages[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported (fakecuda)" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static const struct message *find(CUresult code)
{
	for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++)
		if (messages[i].code == code)
			return &messages[i];
	return NULL;
}

CUresult cuGetErrorString(CUresult error, const char **text)
{
	const struct message *m = find(error);
	if (!text)
		return CUDA_ERROR_INVALID_VALUE;
	*text = m ? m->text : NULL;
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **name)
{
	const struct message *m = find(error);
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	*name = m ? m->name : NULL;
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

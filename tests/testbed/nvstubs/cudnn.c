/* What PyTorch asks of cuDNN beyond "succeed and do nothing". Only the version and the handles are real here:
   PyTorch's cuDNN frontend builds execution plans through backend descriptors that no stub can serve, so
   convolutions need `torch.backends.cudnn.enabled = False` on the fake device (the job runner sets it). */
#include "handle.h"

#include <stdio.h>
#include <string.h>

NVSTUB_CREATOR(cudnnCreate)
NVSTUB_CREATOR(cudnnCreateTensorDescriptor)
NVSTUB_CREATOR(cudnnCreateFilterDescriptor)
NVSTUB_CREATOR(cudnnCreateConvolutionDescriptor)
NVSTUB_CREATOR(cudnnCreateActivationDescriptor)
NVSTUB_CREATOR(cudnnCreatePoolingDescriptor)
NVSTUB_CREATOR(cudnnCreateDropoutDescriptor)
NVSTUB_CREATOR(cudnnCreateRNNDescriptor)
NVSTUB_CREATOR(cudnnCreateRNNDataDescriptor)
NVSTUB_CREATOR(cudnnCreateCTCLossDescriptor)
NVSTUB_CREATOR(cudnnCreateSpatialTransformerDescriptor)

/* cudnnBackendCreateDescriptor(type, descriptor *out): the handle comes second. */
long cudnnBackendCreateDescriptor(int type, void **out);
long cudnnBackendCreateDescriptor(int type, void **out)
{
	(void)type;
	return NVSTUB_CREATOR_BODY(out);
}

/* MAJOR.99.0 of the major PyTorch was built against: PyTorch accepts a runtime of the same major and a minor
   at least its own, which any 9.x build meets. */
size_t cudnnGetVersion(void);
size_t cudnnGetVersion(void)
{
	return (size_t)NVSTUB_CUDNN_MAJOR * 10000 + 9900;
}

/* cudnnGetProperty(libraryPropertyType: 0 major, 1 minor, 2 patch, int *value) */
long cudnnGetProperty(int type, int *value);
long cudnnGetProperty(int type, int *value)
{
	if (!value || type < 0 || type > 2)
		return 3;	/* CUDNN_STATUS_BAD_PARAM */
	*value = type == 0 ? NVSTUB_CUDNN_MAJOR : type == 1 ? 99 : 0;
	return 0;
}

size_t cudnnGetCudartVersion(void);
size_t cudnnGetCudartVersion(void)
{
	return NVSTUB_CUDART_VERSION;
}

const char *cudnnGetErrorString(int status);
const char *cudnnGetErrorString(int status)
{
	return status ? "cuDNN stub error" : "CUDNN_STATUS_SUCCESS";
}

void cudnnGetLastErrorString(char *message, size_t size);
void cudnnGetLastErrorString(char *message, size_t size)
{
	if (message && size)
		snprintf(message, size, "%s", "");
}

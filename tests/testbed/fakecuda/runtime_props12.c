/* cudaDeviceProp in the CUDA 12 layout, for libcudart.so.12: this file alone is compiled against CUDA 12
   headers (CUDA12_HOME in the Makefile), whatever the headers of the rest of fakecuda. */
#include "runtime_internal.h"
#include "device_props.h"

_Static_assert(CUDART_VERSION >= 12000 && CUDART_VERSION < 13000, "runtime_props12.c needs CUDA 12 headers");

void fc_device_props12(void *prop, int device)
{
	fc_fill_props(prop, device);
}

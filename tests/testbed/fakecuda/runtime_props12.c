/* cudaDeviceProp in the CUDA 12 layout, for libcudart.so.12: this file alone is compiled against CUDA 12
   headers (CUDA12_HOME in the Makefile), whatever the headers of the rest of fakecuda. */
#include "runtime_internal.h"
#include "device_props.h"

#include <stddef.h>

_Static_assert(CUDART_VERSION >= 12000 && CUDART_VERSION < 13000, "runtime_props12.c needs CUDA 12 headers");
/* runtime_memory.c writes cudaPointerAttributes up to hostPointer for CUDA 11 and 12 callers (CUDA 13
   appended reserved[8]): that must be the whole CUDA 12 struct. */
_Static_assert(sizeof(struct cudaPointerAttributes) ==
	       offsetof(struct cudaPointerAttributes, hostPointer) + sizeof(void *),
	       "CUDA 12's cudaPointerAttributes does not end at hostPointer");

void fc_device_props12(void *prop, int device)
{
	fc_fill_props(prop, device);
}

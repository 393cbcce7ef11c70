/* The structs of the CUDA 11 runtime ABI, for libcudart.so.11.0: this file alone is compiled against CUDA 11
   headers (CUDA11_HOME in the Makefile), whatever the headers of the rest of fakecuda, so the layouts written
   are the compiler's reading of CUDA 11's driver_types.h, not offsets typed in here. */
#include "runtime_internal.h"
#include "device_props.h"

#include <stddef.h>

_Static_assert(CUDART_VERSION >= 11000 && CUDART_VERSION < 12000, "runtime_abi11.c needs CUDA 11 headers");
/* runtime_memory.c writes cudaPointerAttributes up to hostPointer for CUDA 11 and 12 callers (CUDA 13
   appended reserved[8]): that must be the whole CUDA 11 struct. */
_Static_assert(sizeof(struct cudaPointerAttributes) ==
	       offsetof(struct cudaPointerAttributes, hostPointer) + sizeof(void *),
	       "CUDA 11's cudaPointerAttributes does not end at hostPointer");

void fc_device_props11(void *prop, int device)
{
	fc_fill_props(prop, device);
}

void fc_func_attributes11(void *attributes)
{
	fc_fill_func_attributes(attributes);
}

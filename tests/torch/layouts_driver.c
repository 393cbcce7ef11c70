/* layouts_driver.c NAME - memprof's tensor layout NAME (src/torch/torch_layouts.c) as "field offset" lines, the
   form tests/torch/layout_probe.cpp prints a release's own, and "cdata_maybe_owned 0|1". Exit 2 for no such
   layout. */
#include <stdio.h>
#include <string.h>

#include "mp_torch.h"

int main(int argc, char **argv)
{
	for (size_t i = 0; argc == 2 && i < mp_torch_nlayouts; i++) {
		const mp_torch_layout *l = &mp_torch_layouts[i];

		if (strcmp(l->name, argv[1]) != 0)
			continue;
		printf("impl_storage %u\nimpl_autograd_meta %u\nimpl_pyobj %u\nimpl_sizes %u\n", l->impl_storage,
		       l->impl_autograd_meta, l->impl_pyobj, l->impl_sizes);
		printf("impl_storage_offset %u\nimpl_numel %u\nimpl_dtype %u\nimpl_device %u\n", l->impl_storage_offset,
		       l->impl_numel, l->impl_dtype, l->impl_device);
		printf("storage_data %u\nstorage_device %u\nstorage_nbytes %u\nstorage_pyobj %u\n", l->storage_data,
		       l->storage_device, l->storage_nbytes, l->storage_pyobj);
		printf("inline_dims %d\nmeta_grad %u\nmeta_grad_fn %u\ncdata_maybe_owned %d\n", MP_TORCH_INLINE_DIMS,
		       l->meta_grad, l->meta_grad_fn, l->cdata_maybe_owned);
		printf("meta_grad_accumulator %u\nnode_sequence_nr %u\nnode_next_edges %u\nnode_size %u\n",
		       l->meta_grad_accumulator, l->node_sequence_nr, l->node_next_edges, l->node_size);
		printf("edge_size %u\nsaved_size %u\nsaved_data %u\n", l->edge_size, l->saved_size, l->saved_data);
		return 0;
	}
	fprintf(stderr, "usage: layouts_driver NAME (a layout of src/torch/torch_layouts.c)\n");
	return 2;
}

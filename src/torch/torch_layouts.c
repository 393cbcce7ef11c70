/* torch_layouts.c - the offsets of PyTorch's tensor objects, per family of releases (x86_64, the default
   build). Each row was printed by tests/torch/layout_probe.cpp compiled against that release's own headers
   (g++ -fno-access-control: offsetof on private members); tests/torch/layouts.sh checks the rows against the
   probe again wherever those headers are on this machine, and the owner checks on real jobs prove them in
   memory. Releases between two rows are not known to share either: mp_torch_choose decides on the target. */
#include "mp_torch.h"

const mp_torch_layout mp_torch_layouts[] = {
	/* 2.10 on: THPVariable::cdata a plain at::Tensor. 2.14's PyObjectSlot lost its PyInterpreter*: the
	   TensorImpl's members after it moved 8 bytes down. */
	{ .name = "2.14", .releases = "PyTorch 2.14",
	  .var_cdata = 16, .cdata_maybe_owned = false,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 48, .impl_sizes = 56,
	  .impl_storage_offset = 144, .impl_numel = 152, .impl_dtype = 160, .impl_device = 162,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 40, .meta_grad_fn = 48 },
	{ .name = "2.11", .releases = "PyTorch 2.10 to 2.13 (2.11 measured)",
	  .var_cdata = 16, .cdata_maybe_owned = false,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 56, .impl_sizes = 64,
	  .impl_storage_offset = 152, .impl_numel = 160, .impl_dtype = 168, .impl_device = 170,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 40, .meta_grad_fn = 48 },
	/* before 2.10: cdata a c10::MaybeOwned<at::Tensor>, its bool first */
	{ .name = "2.6", .releases = "PyTorch 2.x before 2.10 (2.6 measured)",
	  .var_cdata = 16, .cdata_maybe_owned = true,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 56, .impl_sizes = 64,
	  .impl_storage_offset = 152, .impl_numel = 160, .impl_dtype = 168, .impl_device = 170,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 40, .meta_grad_fn = 48 },
};
const size_t mp_torch_nlayouts = sizeof mp_torch_layouts / sizeof mp_torch_layouts[0];

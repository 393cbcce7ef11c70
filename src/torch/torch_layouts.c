/* torch_layouts.c - the offsets of PyTorch's tensor objects, per family of releases (x86_64, the default
   build). Each row was printed by tests/torch/layout_probe.cpp compiled against that release's own headers
   (g++ -fno-access-control: offsetof on private members); tests/torch/layouts.sh checks the rows against the
   probe again wherever those headers are on this machine, and the owner checks on real jobs prove them in
   memory. tests/torch/layouts.sh probes the headers of every PyPI release the test bed has cut (2.1 to 2.14;
   2.0's StorageImpl has no PyObjectSlot and no row). mp_torch_choose decides on the target, among the rows
   of its C++ ABI. The autograd graph's fields are known where the release's headers were probed for them and
   the reading proven on real jobs (2.14); the other rows leave them 0, and there the graph is not read (2.4.1
   and 2.5.1, both of the 2.6-oldabi row, differ already in sizeof(SavedVariable): 112 and 104). */
#include "mp_torch.h"

const mp_torch_layout mp_torch_layouts[] = {
	/* 2.13 on: THPVariable::cdata a plain at::Tensor; PyObjectSlot lost its PyInterpreter*: the TensorImpl's
	   members after it moved 8 bytes down. */
	{ .name = "2.14", .releases = "PyTorch 2.13 and 2.14 (2.14 measured)", .cxx11_abi = -1,
	  .var_cdata = 16, .cdata_maybe_owned = false,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 48, .impl_sizes = 56,
	  .impl_storage_offset = 144, .impl_numel = 152, .impl_dtype = 160, .impl_device = 162,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 40, .meta_grad_fn = 48,
	  /* Node an intrusive_ptr_target (2.13 on): Edge is an intrusive_ptr<Node> and an input number */
	  .meta_grad_accumulator = 56, .node_sequence_nr = 16, .node_next_edges = 88, .node_size = 464,
	  .edge_size = 16, .saved_size = 80, .saved_data = 0 },
	{ .name = "2.11", .releases = "PyTorch 2.10 to 2.12 (2.11 measured)", .cxx11_abi = -1,
	  .var_cdata = 16, .cdata_maybe_owned = false,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 56, .impl_sizes = 64,
	  .impl_storage_offset = 152, .impl_numel = 160, .impl_dtype = 168, .impl_device = 170,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 40, .meta_grad_fn = 48 },
	/* before 2.10: cdata a c10::MaybeOwned<at::Tensor>, its bool first. The autograd meta starts with a
	   std::string (its name): its gradient is 24 bytes nearer with the old C++ ABI's 8-byte string, which
	   PyPI's wheels up to 2.6 use. */
	{ .name = "2.6", .releases = "PyTorch 2.7 to 2.9 and other new-ABI builds of 2.3 on (2.6 measured)",
	  .cxx11_abi = 1,
	  .var_cdata = 16, .cdata_maybe_owned = true,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 56, .impl_sizes = 64,
	  .impl_storage_offset = 152, .impl_numel = 160, .impl_dtype = 168, .impl_device = 170,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 40, .meta_grad_fn = 48 },
	{ .name = "2.6-oldabi", .releases = "PyPI's PyTorch 2.3 to 2.6 (old C++ ABI)", .cxx11_abi = 0,
	  .var_cdata = 16, .cdata_maybe_owned = true,
	  .impl_storage = 16, .impl_autograd_meta = 24, .impl_pyobj = 56, .impl_sizes = 64,
	  .impl_storage_offset = 152, .impl_numel = 160, .impl_dtype = 168, .impl_device = 170,
	  .storage_data = 16, .storage_device = 40, .storage_nbytes = 48, .storage_pyobj = 80,
	  .meta_grad = 16, .meta_grad_fn = 24 },
	/* 2.1 and 2.2: one more pointer before the TensorImpl's and StorageImpl's members. */
	{ .name = "2.1-oldabi", .releases = "PyPI's PyTorch 2.1 and 2.2 (old C++ ABI)", .cxx11_abi = 0,
	  .var_cdata = 16, .cdata_maybe_owned = true,
	  .impl_storage = 24, .impl_autograd_meta = 32, .impl_pyobj = 64, .impl_sizes = 72,
	  .impl_storage_offset = 160, .impl_numel = 168, .impl_dtype = 176, .impl_device = 178,
	  .storage_data = 24, .storage_device = 48, .storage_nbytes = 56, .storage_pyobj = 88,
	  .meta_grad = 16, .meta_grad_fn = 24 },
};
const size_t mp_torch_nlayouts = sizeof mp_torch_layouts / sizeof mp_torch_layouts[0];

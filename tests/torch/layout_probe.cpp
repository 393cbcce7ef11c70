// layout_probe.cpp - the offsets of PyTorch's tensor objects in one release, from that release's own headers:
// compiled (never linked or run: g++ -S -fno-access-control, so that offsetof reaches private members) into
// the array probe_values, whose values tests/torch/layouts.sh reads from the assembly in the order of
// probe_fields and compares with src/torch/torch_layouts.c.
// -DPROBE_C10_ONLY: TensorImpl and StorageImpl only (a c10 source tree has no ATen or autograd headers).
#include <cstddef>

#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#ifndef PROBE_C10_ONLY
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/variable.h>
#endif

using c10::StorageImpl;
using c10::TensorImpl;

// PyObjectSlot holds the Python object, after a PyInterpreter* where the release has one.
static constexpr size_t slot = offsetof(c10::impl::PyObjectSlot, pyobj_);

// probe_fields: impl_storage impl_autograd_meta impl_pyobj impl_sizes impl_storage_offset impl_numel impl_dtype
// impl_device storage_data storage_device storage_nbytes storage_pyobj inline_dims [meta_grad meta_grad_fn
// meta_grad_accumulator node_sequence_nr node_next_edges node_size edge_size saved_size saved_data]
extern "C" const unsigned long probe_values[] = {
	offsetof(TensorImpl, storage_),
	offsetof(TensorImpl, autograd_meta_),
	offsetof(TensorImpl, pyobj_slot_) + slot,
	offsetof(TensorImpl, sizes_and_strides_),
	offsetof(TensorImpl, storage_offset_),
	offsetof(TensorImpl, numel_),
	offsetof(TensorImpl, data_type_),
	offsetof(TensorImpl, device_opt_),
	offsetof(StorageImpl, data_ptr_) + offsetof(c10::DataPtr, ptr_) + offsetof(c10::detail::UniqueVoidPtr, data_),
	offsetof(StorageImpl, data_ptr_) + offsetof(c10::DataPtr, device_),
	offsetof(StorageImpl, size_bytes_),
	offsetof(StorageImpl, pyobj_slot_) + slot,
	C10_SIZES_AND_STRIDES_MAX_INLINE_SIZE,
#ifndef PROBE_C10_ONLY
	offsetof(torch::autograd::AutogradMeta, grad_),
	offsetof(torch::autograd::AutogradMeta, grad_fn_),
	offsetof(torch::autograd::AutogradMeta, grad_accumulator_),
	offsetof(torch::autograd::Node, sequence_nr_),
	offsetof(torch::autograd::Node, next_edges_),
	sizeof(torch::autograd::Node),
	sizeof(torch::autograd::Edge),
	sizeof(torch::autograd::SavedVariable),
	offsetof(torch::autograd::SavedVariable, data_),
#endif
};

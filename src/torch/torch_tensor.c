/* torch_tensor.c - one tensor read from a target: THPVariable -> TensorImpl -> StorageImpl, each step checked
   so that a layout of another release, or a pointer to something else, fails here rather than naming memory
   that is not the tensor's. */
#include <stdlib.h>
#include <string.h>

#include "mp_torch.h"

/* A StorageImpl holds more than this: damage (2^48 is all the address space a process has). */
#define MAX_NBYTES (1ull << 48)

static mp_err read_i64(mp_target *t, uint64_t addr, int64_t *out, mp_diag *diag)
{
	uint64_t v;
	mp_err err = mp_target_read_u64(t, addr, &v, diag);

	*out = (int64_t)v;
	return err;
}

/* The TensorImpl* a THPVariable's cdata holds. */
static mp_err impl_of(mp_target *t, const mp_torch_layout *l, uint64_t pyobj, uint64_t *impl, mp_diag *diag)
{
	uint8_t borrowed = 0;
	uint64_t p;
	mp_err err;

	if (l->cdata_maybe_owned && (err = mp_target_read_u8(t, pyobj + l->var_cdata, &borrowed, diag)) != MP_OK)
		return err;
	if (borrowed > 1)
		return mp_fail(diag, MP_E_CORRUPT, "tensor 0x%llx: its MaybeOwned flag is %u",
			       (unsigned long long)pyobj, borrowed);
	if ((err = mp_target_read_u64(t, pyobj + l->var_cdata + (l->cdata_maybe_owned ? 8 : 0), &p, diag)) != MP_OK)
		return err;
	/* borrowed: a pointer to the at::Tensor that holds the TensorImpl* */
	if (borrowed && (err = mp_target_read_u64(t, p, &p, diag)) != MP_OK)
		return err;
	if (p == 0 || (p & 7) != 0)
		return mp_fail(diag, MP_E_CORRUPT, "tensor 0x%llx: no TensorImpl (0x%llx)", (unsigned long long)pyobj,
			       (unsigned long long)p);
	*impl = p;
	return MP_OK;
}

/* The shape: rank, then the sizes and strides, inline (5 of each) or behind a pointer (rank of each). *EXTENT
   gets the elements from the first to one past the last the tensor reaches (0 when it is empty). */
static mp_err read_shape(mp_target *t, const mp_torch_layout *l, mp_tensor *out, int64_t *extent, mp_diag *diag)
{
	uint64_t rank, at = out->impl + l->impl_sizes + 8, strides;
	int64_t product = 1, last = 0, stride, *shape;
	bool far = false;
	mp_err err;

	if ((err = mp_target_read_u64(t, out->impl + l->impl_sizes, &rank, diag)) != MP_OK)
		return err;
	if (rank > MP_TORCH_MAX_DIMS)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx: %llu dimensions", (unsigned long long)out->impl,
			       (unsigned long long)rank);
	if (rank > MP_TORCH_INLINE_DIMS && (err = mp_target_read_u64(t, at, &at, diag)) != MP_OK)
		return err;
	strides = at + 8 * (rank > MP_TORCH_INLINE_DIMS ? rank : MP_TORCH_INLINE_DIMS);
	out->ndim = (int)rank;
	shape = out->dims.in;
	if (rank > MP_TORCH_SHAPE_INLINE && (shape = out->dims.out = malloc(rank * sizeof *shape)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	for (int i = 0; i < out->ndim; i++) {
		if ((err = read_i64(t, at + 8 * (uint64_t)i, &shape[i], diag)) != MP_OK ||
		    (err = read_i64(t, strides + 8 * (uint64_t)i, &stride, diag)) != MP_OK)
			return err;
		if (shape[i] < 0 || (shape[i] > 0 && product > INT64_MAX / shape[i]) || stride < 0 ||
		    stride > (int64_t)MAX_NBYTES)
			return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx: size %lld, stride %lld in dimension %d",
				       (unsigned long long)out->impl, (long long)shape[i], (long long)stride, i);
		product *= shape[i];
		/* LAST stays below MAX_NBYTES: what reaches further fits in no storage (unless the tensor is empty) */
		if (shape[i] > 0 && stride > 0) {
			if ((uint64_t)(shape[i] - 1) > (MAX_NBYTES - (uint64_t)last) / (uint64_t)stride)
				far = true;
			else
				last += (shape[i] - 1) * stride;
		}
	}
	if (product != 0 && far)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx: its sizes and strides reach past any storage",
			       (unsigned long long)out->impl);
	if (product != out->numel)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx: its sizes make %lld elements, not numel %lld",
			       (unsigned long long)out->impl, (long long)product, (long long)out->numel);
	*extent = product == 0 ? 0 : last + 1;
	return MP_OK;
}

static mp_err read_storage(mp_target *t, const mp_torch_layout *l, mp_tensor *out, mp_diag *diag)
{
	uint8_t device[2];
	mp_err err;

	if ((err = mp_target_read_u64(t, out->storage + l->storage_data, &out->storage_data, diag)) != MP_OK ||
	    (err = mp_target_read_u64(t, out->storage + l->storage_nbytes, &out->storage_nbytes, diag)) != MP_OK ||
	    (err = mp_target_read(t, out->storage + l->storage_device, device, sizeof device, diag)) != MP_OK)
		return err;
	out->device_type = (int8_t)device[0];
	out->device_index = (int8_t)device[1];
	if (mp_torch_device_name(out->device_type) == NULL || out->device_index < -1)
		return mp_fail(diag, MP_E_CORRUPT, "storage 0x%llx: device %d:%d is none torch has",
			       (unsigned long long)out->storage, out->device_type, out->device_index);
	if (out->storage_nbytes > MAX_NBYTES)
		return mp_fail(diag, MP_E_CORRUPT, "storage 0x%llx: %llu bytes", (unsigned long long)out->storage,
			       (unsigned long long)out->storage_nbytes);
	return MP_OK;
}

/* The autograd meta's gradient and grad_fn, when it has one. */
static mp_err read_autograd(mp_target *t, const mp_torch_layout *l, mp_tensor *out, mp_diag *diag)
{
	uint64_t meta, fn;
	mp_err err;

	if ((err = mp_target_read_u64(t, out->impl + l->impl_autograd_meta, &meta, diag)) != MP_OK || meta == 0)
		return err;
	if ((err = mp_target_read_u64(t, meta + l->meta_grad, &out->grad_impl, diag)) != MP_OK ||
	    (err = mp_target_read_u64(t, meta + l->meta_grad_fn, &fn, diag)) != MP_OK)
		return err;
	out->has_grad_fn = fn != 0;
	out->grad_fn = fn;
	if (l->meta_grad_accumulator != 0 &&
	    (err = mp_target_read_u64(t, meta + l->meta_grad_accumulator, &out->grad_accumulator, diag)) != MP_OK)
		return err;
	if (out->grad_impl == out->impl)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx is its own gradient", (unsigned long long)out->impl);
	return MP_OK;
}

void mp_tensor_release(mp_tensor *x)
{
	if (x->ndim > MP_TORCH_SHAPE_INLINE)
		free(x->dims.out);
	x->ndim = 0;
}

mp_err mp_tensor_copy(mp_tensor *dst, const mp_tensor *src)
{
	*dst = *src;
	if (src->ndim <= MP_TORCH_SHAPE_INLINE || src->dims.out == NULL)
		return MP_OK;
	if ((dst->dims.out = malloc((size_t)src->ndim * sizeof *dst->dims.out)) == NULL) {
		dst->ndim = 0;
		return MP_E_NOMEM;
	}
	memcpy(dst->dims.out, src->dims.out, (size_t)src->ndim * sizeof *dst->dims.out);
	return MP_OK;
}

static mp_err read_impl(mp_target *t, const mp_torch_layout *l, uint64_t impl, uint64_t pyobj, mp_tensor *out,
			mp_diag *diag)
{
	uint64_t back;
	int64_t extent = 0;
	uint16_t dtype;
	unsigned size;
	mp_err err;

	memset(out, 0, sizeof *out);
	out->impl = impl;
	out->pyobj = pyobj;
	if ((err = mp_target_read_u64(t, impl + l->impl_pyobj, &back, diag)) != MP_OK)
		return err;
	/* the slot's low bits may carry a tag */
	if (pyobj != 0 && (back & ~(uint64_t)7) != pyobj)
		return mp_fail(diag, MP_E_TYPE, "tensor 0x%llx: its TensorImpl 0x%llx points back at 0x%llx",
			       (unsigned long long)pyobj, (unsigned long long)impl, (unsigned long long)back);
	if ((err = mp_target_read_u64(t, impl + l->impl_storage, &out->storage, diag)) != MP_OK ||
	    (err = read_i64(t, impl + l->impl_numel, &out->numel, diag)) != MP_OK ||
	    (err = read_i64(t, impl + l->impl_storage_offset, &out->storage_offset, diag)) != MP_OK ||
	    (err = mp_target_read(t, impl + l->impl_dtype, &dtype, sizeof dtype, diag)) != MP_OK)
		return err;
	/* An undefined tensor (a parameter's grad_ before backward is UndefinedTensorImpl's singleton, not
	   NULL) or one with no storage of its own (meta, sparse, nested): no memory to own. */
	if (out->storage == 0 && out->numel == 0)
		return mp_fail(diag, MP_E_UNSUPPORTED, "TensorImpl 0x%llx has no storage (undefined?)",
			       (unsigned long long)impl);
	out->dtype = dtype;
	if ((size = mp_torch_dtype_size(dtype)) == 0)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx: dtype %u is none memprof knows",
			       (unsigned long long)impl, dtype);
	if (out->numel < 0 || out->storage_offset < 0 || (uint64_t)out->numel > MAX_NBYTES ||
	    (uint64_t)out->storage_offset > MAX_NBYTES)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx: numel %lld, storage offset %lld",
			       (unsigned long long)impl, (long long)out->numel, (long long)out->storage_offset);
	if ((err = read_shape(t, l, out, &extent, diag)) != MP_OK)
		return err;
	if (out->storage == 0)
		return mp_fail(diag, MP_E_UNSUPPORTED, "TensorImpl 0x%llx has no storage", (unsigned long long)impl);
	if ((err = read_storage(t, l, out, diag)) != MP_OK)
		return err;
	out->nbytes = (uint64_t)out->numel * size;
	out->data_ptr = out->storage_data + (uint64_t)out->storage_offset * size;
	/* what the strides reach must lie in the storage */
	if (extent > 0 && (uint64_t)(out->storage_offset + extent) * size > out->storage_nbytes)
		return mp_fail(diag, MP_E_CORRUPT, "TensorImpl 0x%llx reaches %llu bytes into a %llu-byte storage",
			       (unsigned long long)impl, (unsigned long long)(out->storage_offset + extent) * size,
			       (unsigned long long)out->storage_nbytes);
	return read_autograd(t, l, out, diag);
}

mp_err mp_torch_read_impl(mp_target *t, const mp_torch_layout *l, uint64_t impl, uint64_t pyobj, mp_tensor *out,
			  mp_diag *diag)
{
	mp_err err = read_impl(t, l, impl, pyobj, out, diag);

	if (err != MP_OK)
		mp_tensor_release(out);
	return err;
}

/* The TensorImpl members read_impl reads, as one span. */
static void prefetch_impl(mp_target *t, const mp_torch_layout *l, uint64_t impl)
{
	const uint32_t first[] = { l->impl_pyobj, l->impl_storage, l->impl_numel, l->impl_storage_offset, l->impl_dtype,
				   l->impl_sizes, l->impl_autograd_meta };
	const uint32_t last[] = { l->impl_pyobj + 8, l->impl_storage + 8, l->impl_numel + 8, l->impl_storage_offset + 8,
				  l->impl_dtype + 2, l->impl_sizes + 8 + 16 * MP_TORCH_INLINE_DIMS,
				  l->impl_autograd_meta + 8 };
	uint32_t lo = UINT32_MAX, hi = 0;

	for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
		lo = first[i] < lo ? first[i] : lo;
		hi = last[i] > hi ? last[i] : hi;
	}
	mp_target_prefetch(t, impl + lo, hi - lo);
}

void mp_torch_prefetch_tensor(mp_target *t, const mp_torch_layout *l, uint64_t pyobj, enum mp_torch_stage stage)
{
	uint64_t impl, storage, meta;

	if (!mp_target_prefetches(t))
		return;
	if (stage == MP_TORCH_PREFETCH_OBJECT) {
		mp_target_prefetch(t, pyobj + l->var_cdata, 16);
		return;
	}
	/* what the stage before asked for is read now: damage here is left to the read that follows */
	if (impl_of(t, l, pyobj, &impl, NULL) != MP_OK)
		return;
	if (stage == MP_TORCH_PREFETCH_IMPL) {
		prefetch_impl(t, l, impl);
		return;
	}
	if (mp_target_read_u64(t, impl + l->impl_storage, &storage, NULL) == MP_OK && storage != 0) {
		mp_target_prefetch(t, storage + l->storage_data, 8);
		mp_target_prefetch(t, storage + l->storage_nbytes, 8);
		mp_target_prefetch(t, storage + l->storage_device, 2);
	}
	if (mp_target_read_u64(t, impl + l->impl_autograd_meta, &meta, NULL) == MP_OK && meta != 0) {
		mp_target_prefetch(t, meta + l->meta_grad, 8);
		mp_target_prefetch(t, meta + l->meta_grad_fn, 8);
		if (l->meta_grad_accumulator != 0)
			mp_target_prefetch(t, meta + l->meta_grad_accumulator, 8);
	}
}

mp_err mp_torch_read_tensor(mp_target *t, const mp_torch_layout *l, uint64_t pyobj, mp_tensor *out, mp_diag *diag)
{
	uint64_t impl = 0;
	mp_err err;

	memset(out, 0, sizeof *out);
	if ((err = impl_of(t, l, pyobj, &impl, diag)) != MP_OK)
		return err;
	return mp_torch_read_impl(t, l, impl, pyobj, out, diag);
}

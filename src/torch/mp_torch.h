/* mp_torch.h - PyTorch's tensor objects read from a target's memory: a Python tensor (THPVariable) to its
   TensorImpl, the StorageImpl under it and the device memory that storage holds; shape, dtype and the
   gradient a parameter's autograd meta names. Stripped wheels carry no DWARF: the offsets are tables, one per
   family of releases, each learned from that release's own headers (tests/torch/layout_probe.cpp) and chosen
   for a target by checking what it reads (mp_torch_choose). */
#ifndef MEMPROF_TORCH_H
#define MEMPROF_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_target.h"

/* Where the fields are in one family of releases (x86_64). */
typedef struct mp_torch_layout {
	const char *name;            /* "2.14": the releases it was learned from */
	const char *releases;        /* which releases it is known to describe, for messages */
	int cxx11_abi;               /* the C++ string ABI it needs (1 new, 0 old), -1 either */
	/* THPVariable: PyObject_HEAD, then cdata: an at::Tensor (a TensorImpl*), or before 2.10 a
	   c10::MaybeOwned<at::Tensor> (a bool, then a TensorImpl* or, borrowed, a pointer to an at::Tensor). */
	uint32_t var_cdata;
	bool cdata_maybe_owned;
	/* TensorImpl */
	uint32_t impl_storage;       /* intrusive_ptr<StorageImpl> */
	uint32_t impl_autograd_meta; /* unique_ptr<AutogradMetaInterface> */
	uint32_t impl_pyobj;         /* PyObjectSlot's PyObject*, the Python object back */
	uint32_t impl_sizes;         /* SizesAndStrides: size_t rank, then 5 sizes and 5 strides inline */
	uint32_t impl_storage_offset, impl_numel;
	uint32_t impl_dtype;         /* caffe2::TypeMeta: a uint16 index, the ScalarType for scalar types */
	uint32_t impl_device;        /* std::optional<Device>: type (int8), index (int8), engaged (bool) */
	/* StorageImpl */
	uint32_t storage_data;       /* DataPtr's data pointer */
	uint32_t storage_device;     /* DataPtr's Device */
	uint32_t storage_nbytes;     /* SymInt size_bytes_ (a plain int64 unless symbolic) */
	uint32_t storage_pyobj;
	/* AutogradMeta */
	uint32_t meta_grad;          /* at::Tensor grad_ */
	uint32_t meta_grad_fn;       /* grad_fn_ (intrusive_ptr<Node>, before 2.13 shared_ptr<Node>): a non-leaf's
					function; its first word is the Node* */
	/* The autograd graph (0: not measured for the family, the graph is not read). Node, the base of every
	   backward function: its sequence number (the order the forward made them in), its edges (a vector of
	   Edge: the Node* first), and where a subclass's own members (SavedVariables for most) begin. */
	uint32_t meta_grad_accumulator; /* a leaf's AccumulateGrad node (a weak pointer: the Node* first) */
	uint32_t node_sequence_nr, node_next_edges, node_size;
	uint32_t edge_size;
	uint32_t saved_size, saved_data; /* SavedVariable, and its at::Tensor data_ (a TensorImpl*) */
} mp_torch_layout;

/* Every layout memprof knows, and how many. */
extern const mp_torch_layout mp_torch_layouts[];
extern const size_t mp_torch_nlayouts;

#define MP_TORCH_MAX_DIMS 64
/* A TensorImpl's SizesAndStrides keeps this many sizes and strides inline (C10_SIZES_AND_STRIDES_MAX_INLINE_SIZE),
   more behind a pointer. */
#define MP_TORCH_INLINE_DIMS 5
/* The sizes an mp_tensor keeps in itself; a tensor of more dimensions keeps them in memory of its own
   (mp_tensor_release). Not MP_TORCH_MAX_DIMS inline: the owners keep a tensor per Python tensor, and a million
   of 616-byte records (1.2 GB with their copies) cost more than reading the tensors did. */
#define MP_TORCH_SHAPE_INLINE 8
#define MP_TORCH_DEVICE_CPU 0
#define MP_TORCH_DEVICE_CUDA 1

typedef struct mp_tensor {
	uint64_t pyobj;           /* the Python object, 0 for a tensor read from its TensorImpl alone */
	uint64_t impl, storage;   /* TensorImpl, StorageImpl */
	uint64_t storage_data, storage_nbytes;
	uint64_t data_ptr;        /* storage_data + storage_offset * itemsize */
	uint64_t nbytes;          /* numel * itemsize */
	int64_t numel, storage_offset;
	int device_type, device_index; /* of the storage's memory: MP_TORCH_DEVICE_* */
	int dtype;                /* ScalarType */
	int ndim;
	union {
		int64_t in[MP_TORCH_SHAPE_INLINE]; /* ndim <= MP_TORCH_SHAPE_INLINE */
		int64_t *out;                      /* else: owned, ndim of them (NULL only if they were not read) */
	} dims;                                    /* read them with mp_tensor_shape */
	uint64_t grad_impl;       /* the autograd meta's gradient (a TensorImpl), 0 when none */
	bool has_grad_fn;         /* the autograd meta names a grad_fn: the result of a differentiable op */
	uint64_t grad_fn;         /* that Node, 0 when none */
	uint64_t grad_accumulator; /* a leaf's AccumulateGrad Node (0: none, or the layout does not say) */
} mp_tensor;

/* The NDIM sizes of X. */
static inline const int64_t *mp_tensor_shape(const mp_tensor *x)
{
	return x->ndim > MP_TORCH_SHAPE_INLINE ? x->dims.out : x->dims.in;
}

/* Free what X owns (the sizes of a tensor of many dimensions); X is left empty of them. */
void mp_tensor_release(mp_tensor *x);

/* *DST = a copy of SRC that owns its own sizes (MP_E_NOMEM: *DST holds none). */
mp_err mp_tensor_copy(mp_tensor *dst, const mp_tensor *src) MP_WUR;

/* The tensor whose Python object (a torch.Tensor or a subclass such as nn.Parameter) is at PYOBJ, read with
   layout L and checked: the TensorImpl points back at PYOBJ, the storage's memory is on a device type memprof
   knows, the dtype is one, the shape's product is numel and numel * itemsize fits in the storage. A tensor
   without storage (a meta or sparse tensor) gives MP_E_UNSUPPORTED; a TensorImpl that does not point back at
   PYOBJ, MP_E_TYPE (no live tensor of its own behind the object: a wrapper that borrowed one, an object
   being destroyed; or another release's layout); memory that cannot be read, MP_E_NOTFOUND; anything else
   wrong, MP_E_CORRUPT. *OUT owns nothing when it fails; when it succeeds the caller releases it
   (mp_tensor_release). */
mp_err mp_torch_read_tensor(mp_target *t, const mp_torch_layout *l, uint64_t pyobj, mp_tensor *out,
			    mp_diag *diag) MP_WUR;

/* A hint that mp_torch_read_tensor(T, L, PYOBJ) comes soon, in stages that each read only what the stage
   before asked for (call them on tensors further and further ahead): the Python object's cdata, then the
   TensorImpl's members, then the StorageImpl's and the autograd meta's. A million tensors are a million
   chains of dependent reads; prefetched so, a walk waits for several chains at once. Only where
   mp_target_prefetches(T). This function can't fail. */
enum mp_torch_stage { MP_TORCH_PREFETCH_OBJECT, MP_TORCH_PREFETCH_IMPL, MP_TORCH_PREFETCH_STORAGE };
void mp_torch_prefetch_tensor(mp_target *t, const mp_torch_layout *l, uint64_t pyobj, enum mp_torch_stage stage);

/* The same from a TensorImpl (a gradient, a tensor no Python object holds); PYOBJ 0 is not checked. */
mp_err mp_torch_read_impl(mp_target *t, const mp_torch_layout *l, uint64_t impl, uint64_t pyobj, mp_tensor *out,
			  mp_diag *diag) MP_WUR;

/* The layout under which most of the N Python tensors at PYOBJS (a sample) read and check, or NULL (DIAG
   says what each layout met) when none reads at least half of them. CXX11_ABI (the process's libraries', -1
   unknown) rules out the rows of the other ABI: they read the same tensors but not the same autograd meta. */
const mp_torch_layout *mp_torch_choose(mp_target *t, const uint64_t *pyobjs, size_t n, int cxx11_abi,
				       mp_diag *diag);

/* Whether L knows the autograd graph's layout (mp_torch_read_node, mp_torch_node_members). */
static inline bool mp_torch_graph_known(const mp_torch_layout *l)
{
	return l->node_size != 0;
}

/* More edges than this on one autograd Node are damage. */
#define MP_TORCH_MAX_EDGES 4096

/* The autograd Node at NODE (a tensor's grad_fn, or where an edge leads): its SEQUENCE_NR (the order the
   forward made the nodes in: per thread, increasing; an AccumulateGrad's is UINT64_MAX), and in NEXT (at most
   MAX of them) the Nodes its edges lead to, undefined edges left out; *NNEXT how many. MP_E_UNSUPPORTED when L
   does not know the graph, MP_E_CORRUPT for a misaligned node or an edge list that is none (more than
   MP_TORCH_MAX_EDGES), an error of the target when memory cannot be read. */
mp_err mp_torch_read_node(mp_target *t, const mp_torch_layout *l, uint64_t node, uint64_t *sequence_nr,
			  uint64_t *next, size_t max, size_t *nnext, mp_diag *diag) MP_WUR;

/* Every word of the members a Node subclass at NODE adds to Node's that could be a pointer (nonzero,
   8-aligned), and the data_ of each element of what looks like a std::vector<SavedVariable> among them, to
   CB(CTX, WORD) (false: stop): the candidates for the TensorImpls it saved for backward (SavedVariable's data_
   is an at::Tensor). The caller tells which candidates are tensors (mp_torch_read_impl checks what it reads).
   The members end where the node's memory does: its malloc chunk (glibc's size word before it; the
   generated nodes are allocated with new, one each). MP_E_CORRUPT when no plausible chunk surrounds NODE,
   MP_E_UNSUPPORTED when L does not know the graph, MP_E_NOMEM. */
mp_err mp_torch_node_members(mp_target *t, const mp_torch_layout *l, uint64_t node,
			     bool (*cb)(void *ctx, uint64_t word), void *ctx, mp_diag *diag) MP_WUR;

/* A ScalarType's name as torch prints it without "torch." ("float32", "int64"), or NULL when unknown. */
const char *mp_torch_dtype_name(int dtype);
/* Its element size in bytes, or 0 when unknown. */
unsigned mp_torch_dtype_size(int dtype);
/* A device type's name ("cpu", "cuda"), or NULL. */
const char *mp_torch_device_name(int type);

#endif

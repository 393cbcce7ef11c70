/* owners_walk.c - one walk over the GC-tracked objects: every Python tensor (torch.Tensor and its subclasses:
   nn.Parameter, user subclasses), nn.Module and torch.optim.Optimizer, told by a class in the type's MRO and
   cached per type, so that a million objects cost a million type-address lookups and few type reads. */
#include <stdlib.h>

#include "mp_array.h"
#include "mp_c10.h"
#include "owners_int.h"

/* How many tensors the layout is chosen on. */
enum { SAMPLE = 64 };
/* How many tensors ahead of the one read each stage of mp_torch_prefetch_tensor goes. */
enum { AHEAD_STORAGE = 6, AHEAD_IMPL = 12, AHEAD_OBJECT = 18 };

static int classify(owners_build *b, uint64_t type)
{
	const mp_py_type *ty = mp_py_heap_type(b->heap, type, NULL);

	if (ty == NULL)
		return -1;
	/* the C type under every Python tensor: torch._C.TensorBase (torch._C._TensorBase before 2.3) */
	if (mp_py_type_is(b->heap, ty, "torch._C", "TensorBase") || mp_py_type_is(b->heap, ty, "torch._C", "_TensorBase"))
		return OBJ_TENSOR;
	if (mp_py_type_is(b->heap, ty, "torch.nn.modules.module", "Module"))
		return OBJ_MODULE;
	if (mp_py_type_is(b->heap, ty, "torch.optim.optimizer", "Optimizer"))
		return OBJ_OPTIMIZER;
	return -1;
}

/* The kind of objects of TYPE, from the cache or read once. */
static int kind_of(owners_build *b, uint64_t type, bool *failed)
{
	mp_table_probe p;
	uint32_t id;

	for (id = mp_table_find(&b->type_kinds, mp_table_hash_u64(type), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->type_kinds, &p))
		if (b->type_kind[id].type == type)
			return b->type_kind[id].kind;
	if (mp_array_grow((void **)&b->type_kind, &b->cap_type_kinds, b->ntype_kinds + 1, sizeof *b->type_kind) != MP_OK ||
	    mp_table_add(&b->type_kinds, &p, (uint32_t)b->ntype_kinds) != MP_OK) {
		*failed = true;
		return -1;
	}
	b->type_kind[b->ntype_kinds].type = type;
	b->type_kind[b->ntype_kinds].kind = classify(b, type);
	return b->type_kind[b->ntype_kinds++].kind;
}

int owners_object_kind(owners_build *b, uint64_t obj)
{
	uint64_t type;
	bool failed = false;

	if (mp_py_object_type(b->heap, obj, &type, NULL) != MP_OK)
		return -1;
	return kind_of(b, type, &failed);
}

static mp_err push(uint64_t **list, size_t *n, size_t *cap, uint64_t obj)
{
	mp_err err = mp_array_grow((void **)list, cap, *n + 1, sizeof **list);

	if (err == MP_OK)
		(*list)[(*n)++] = obj;
	return err;
}

static mp_err add_tensor(owners_build *b, uint64_t pyobj)
{
	mp_table_probe p;
	mp_err err;

	/* the walk visits each object once; a damaged list the reader let through may repeat one */
	for (uint32_t id = mp_table_find(&b->by_pyobj, mp_table_hash_u64(pyobj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_pyobj, &p))
		if (b->pytensors[id].pyobj == pyobj)
			return MP_OK;
	if ((err = mp_array_grow((void **)&b->pytensors, &b->cap_pytensors, b->npytensors + 1, sizeof *b->pytensors)) !=
		    MP_OK ||
	    (err = mp_table_add(&b->by_pyobj, &p, (uint32_t)b->npytensors)) != MP_OK)
		return err;
	b->pytensors[b->npytensors++] = (py_tensor){ .pyobj = pyobj };
	return MP_OK;
}

struct visit {
	owners_build *b;
	mp_err err;
};

static bool visit(void *ctx, uint64_t obj, uint64_t type)
{
	struct visit *v = ctx;
	owners_build *b = v->b;
	bool failed = false;

	switch (kind_of(b, type, &failed)) {
	case OBJ_TENSOR:
		v->err = add_tensor(b, obj);
		break;
	case OBJ_MODULE:
		v->err = push(&b->modules, &b->nmodules, &b->cap_modules, obj);
		break;
	case OBJ_OPTIMIZER:
		v->err = push(&b->optimizers, &b->noptimizers, &b->cap_optimizers, obj);
		break;
	default:
		if (failed)
			v->err = MP_E_NOMEM;
		break;
	}
	return v->err == MP_OK;
}

py_tensor *owners_adopt_tensor(owners_build *b, uint64_t obj)
{
	mp_diag d = { .msg = "" };
	uint64_t type;
	bool failed = false;
	py_tensor *x;

	if (b->out->layout == NULL || mp_py_object_type(b->heap, obj, &type, NULL) != MP_OK ||
	    kind_of(b, type, &failed) != OBJ_TENSOR || add_tensor(b, obj) != MP_OK)
		return NULL;
	x = &b->pytensors[owners_pytensor(b, obj)];
	if (!x->read && mp_torch_read_tensor(b->t, b->out->layout, obj, &x->tensor, &d) == MP_OK)
		x->read = true;
	return x->read ? x : NULL;
}

size_t owners_pytensor(const owners_build *b, uint64_t pyobj)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(&b->by_pyobj, mp_table_hash_u64(pyobj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_pyobj, &p))
		if (b->pytensors[id].pyobj == pyobj)
			return id;
	return SIZE_MAX;
}

/* The C++ string ABI of the process's PyTorch (its libc10_cuda.so's symbols), -1 when it cannot be told: the
   tensor layouts of the two ABIs differ in the autograd meta only, which a sample of tensors rarely shows. */
static int process_cxx11_abi(mp_target *t)
{
	mp_c10 *c10 = calloc(1, sizeof *c10);
	mp_diag quiet = { .msg = "" };
	int abi = -1;

	if (c10 != NULL && mp_c10_find(t, c10, &quiet) == MP_OK)
		abi = c10->cxx11_abi;
	free(c10);
	return abi;
}

/* Choose the layout on tensors spread over the walk, then read them all. A tensor that does not read is
   warned about (the first few) and left out. */
static mp_err read_tensors(owners_build *b)
{
	uint64_t sample[SAMPLE];
	size_t n = b->npytensors < SAMPLE ? b->npytensors : SAMPLE, bad = 0, hollow = 0;

	for (size_t i = 0; i < n; i++)
		sample[i] = b->pytensors[i * b->npytensors / n].pyobj;
	if ((b->out->layout = mp_torch_choose(b->t, sample, n, process_cxx11_abi(b->t), b->diag)) == NULL)
		return MP_E_UNSUPPORTED;
	for (size_t i = 0; i < b->npytensors; i++) {
		py_tensor *x = &b->pytensors[i];
		mp_diag d = { .msg = "" };
		mp_err err;

		if (i + AHEAD_OBJECT < b->npytensors)
			mp_torch_prefetch_tensor(b->t, b->out->layout, b->pytensors[i + AHEAD_OBJECT].pyobj,
						 MP_TORCH_PREFETCH_OBJECT);
		if (i + AHEAD_IMPL < b->npytensors)
			mp_torch_prefetch_tensor(b->t, b->out->layout, b->pytensors[i + AHEAD_IMPL].pyobj,
						 MP_TORCH_PREFETCH_IMPL);
		if (i + AHEAD_STORAGE < b->npytensors)
			mp_torch_prefetch_tensor(b->t, b->out->layout, b->pytensors[i + AHEAD_STORAGE].pyobj,
						 MP_TORCH_PREFETCH_STORAGE);
		err = mp_torch_read_tensor(b->t, b->out->layout, x->pyobj, &x->tensor, &d);

		if (err == MP_OK) {
			x->read = true;
		} else if (err == MP_E_TYPE) {
			hollow++;
		} else if (err != MP_E_UNSUPPORTED && bad++ < 3) {
			mp_warn_damage(b->diag, "tensor at 0x%llx not read: %s", (unsigned long long)x->pyobj, d.msg);
			b->out->partial = true;
		}
	}
	if (bad > 3)
		mp_warn_damage(b->diag, "%zu tensors in all not read", bad);
	/* With the layout chosen on most tensors, such objects are no damage: PyTorch keeps them (2.6 has
	   wrappers that borrow another's tensor, and dying objects whose tensor is gone). */
	if (hollow > 0)
		mp_warn(b->diag, "%zu Python tensor objects hold no live tensor of their own (borrowing or being "
			"destroyed): left out", hollow);
	return MP_OK;
}

mp_err owners_walk_heap(owners_build *b)
{
	struct visit v = { .b = b, .err = MP_OK };
	unsigned warned = b->diag != NULL ? b->diag->nwarn : 0;
	mp_err err = mp_py_heap_each(b->heap, visit, &v, b->diag);

	b->out->objects = mp_py_heap_count(b->heap);
	if (b->diag != NULL && b->diag->nwarn > warned)
		b->out->partial = true;
	if (v.err != MP_OK)
		return mp_fail(b->diag, v.err, "out of memory while walking the Python heap");
	if (err != MP_OK)
		return err;
	b->out->modules = b->nmodules;
	b->out->optimizers = b->noptimizers;
	b->out->python_tensors = b->npytensors;
	if (b->npytensors == 0)
		return mp_fail(b->diag, MP_E_NOTFOUND, "no torch tensor among the %llu objects of the Python heap",
			       (unsigned long long)b->out->objects);
	return read_tensors(b);
}

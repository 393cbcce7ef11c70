/* owners_int.h - what the owners analysis keeps while it reads (src/owners only). */
#ifndef MEMPROF_OWNERS_INT_H
#define MEMPROF_OWNERS_INT_H

#include "mp_owners.h"
#include "mp_py.h"
#include "mp_py_heap.h"
#include "mp_py_runtime.h"
#include "mp_py_threads.h"
#include "mp_table.h"

/* A path that names an object: from a global of __main__ (THREAD -1) or a local of frame DEPTH (0: the
   innermost) of thread THREAD, through attributes and items ("trainer.optimizer"). STABLE: the variable is a
   global or a local of a frame outside installed code and forwards (the job's own outer frames). */
typedef struct owners_variable {
	char *name, *where;
	uint64_t value;
	int thread, depth;
	bool stable;
} owners_variable;

/* What an object the heap walk found is. */
enum obj_kind { OBJ_TENSOR, OBJ_MODULE, OBJ_OPTIMIZER };

/* A Python tensor the walk found, read or not. */
typedef struct py_tensor {
	uint64_t pyobj;
	bool read;       /* TENSOR holds it */
	bool named;      /* an owned entry names it */
	bool saved;      /* an autograd node saves it for backward (owners_saved.c) */
	const char *module; /* the module whose forward made it (its grad_fn's), borrowed from the graph's nodes */
	mp_tensor tensor;
} py_tensor;

/* A node of the autograd graph reached from the Python tensors' grad_fn (owners_graph.c). */
typedef struct owners_node {
	uint64_t addr, seq;
	size_t param;        /* anchor: an edge leads to the AccumulateGrad of this PARAMETER entry (directly or
				through casts and views of it); SIZE_MAX */
	size_t first_edge, nedges; /* the nodes its edges lead to: owners_build's EDGES */
	bool accumulate;     /* an AccumulateGrad (a leaf's): it saves nothing and leads nowhere */
	char *module;        /* the module whose forward made it, as far as the graph tells; NULL */
} owners_node;

typedef struct owners_build {
	mp_target *t;
	mp_py_interp py;
	mp_py_runtime rt;
	mp_py_heap *heap;
	mp_py_threads threads;
	bool have_threads;
	mp_diag *diag;
	mp_owners *out;
	size_t cap_tensors;
	/* what the walk found */
	py_tensor *pytensors;
	size_t npytensors, cap_pytensors;
	mp_table by_pyobj;      /* pyobj -> index into pytensors */
	uint64_t *modules, *optimizers;
	size_t nmodules, cap_modules, noptimizers, cap_optimizers;
	mp_table type_kinds;    /* type address -> index into type_kind */
	struct type_kind { uint64_t type; int kind; } *type_kind; /* kind: enum obj_kind or -1 */
	size_t ntype_kinds, cap_type_kinds;
	/* names of roots (modules and optimizers no module holds): object -> its name */
	struct root_name { uint64_t obj; char *name; } *roots;
	size_t nroots, cap_roots;
	mp_table by_root;
	/* parameter pyobj -> its qualified name (the first), for the optimizers' state */
	struct param_name { uint64_t pyobj; size_t entry; } *params;
	size_t nparams, cap_params;
	mp_table by_param;
	owners_variable *vars;
	size_t nvars, cap_vars;
	/* per Python tensor: the variable that holds it and where (borrowed from VARS) */
	const char **ref_name, **ref_where;
	/* the autograd graph: its nodes, and AccumulateGrad node -> PARAMETER entry */
	owners_node *nodes;
	size_t nnodes, cap_nodes;
	uint64_t *edges;
	size_t nedges, cap_edges;
	mp_table by_node;
	struct accumulator { uint64_t node; size_t entry; } *accs;
	size_t naccs, cap_accs;
	mp_table by_acc;
} owners_build;

/* owners_walk.c: the heap walk: tensors, modules and optimizers. */
mp_err owners_walk_heap(owners_build *b) MP_WUR;
/* The tensor at OBJ that a module or optimizer names but the walk did not reach (a damaged GC list): read
   when its type is a tensor's, and kept. NULL when it is none. */
py_tensor *owners_adopt_tensor(owners_build *b, uint64_t obj);
/* The index of the Python tensor at PYOBJ in B->pytensors, or SIZE_MAX. */
size_t owners_pytensor(const owners_build *b, uint64_t pyobj);

/* The kind of the object at OBJ (enum obj_kind), -1 when it is none of them or cannot be read. */
int owners_object_kind(owners_build *b, uint64_t obj);

/* owners_variables.c: the paths from the globals of __main__ and every frame's locals to the tensors, modules
   and optimizers they reach, the first path of each object, most stable first, into VARS. */
mp_err owners_variables(owners_build *b) MP_WUR;

/* owners_roots.c: names for the modules and optimizers no module holds (globals of __main__, then the locals of
   every thread's frames, outermost first, then TYPE@ADDRESS). */
mp_err owners_name_roots(owners_build *b) MP_WUR;
const char *owners_root_name(const owners_build *b, uint64_t obj);
/* The name of root OBJ, else TYPE@ADDRESS in BUF (KIND when its type cannot be read). */
const char *owners_root_label(owners_build *b, uint64_t obj, const char *kind, char *buf, size_t size);

/* owners_entries.c: the owned entries. */
mp_err owners_add(owners_build *b, const char *name, const char *root, const char *module, const char *referrer,
		  enum mp_owner_kind kind, const mp_tensor *tensor) MP_WUR;
/* NAME.grad, when tensor X has a gradient (an undefined one is none). */
mp_err owners_add_grad(owners_build *b, const char *name, const char *root, const char *module,
		       const mp_tensor *x) MP_WUR;
/* The Python tensor at PYOBJ, when the walk found and read it (else NULL). */
py_tensor *owners_tensor_at(owners_build *b, uint64_t pyobj);
/* Remember ENTRY as the name of the parameter at PYOBJ (the first stands); the entry that names it or
   SIZE_MAX. */
mp_err owners_remember_param(owners_build *b, uint64_t pyobj, size_t entry) MP_WUR;
size_t owners_param_entry(const owners_build *b, uint64_t pyobj);
mp_err owners_modules(owners_build *b) MP_WUR;    /* parameters, gradients, buffers */

/* owners_optim.c: optimizers' parameters no module holds, and their state. */
mp_err owners_optimizers(owners_build *b) MP_WUR;
/* The optimizer the optimizer OPT wraps, when it is a wrapper whose state and param_groups are the wrapped one's
   (accelerate's AcceleratedOptimizer, DeepSpeed-style: `optimizer`; Lightning's LightningOptimizer:
   `_optimizer`), else 0. */
uint64_t owners_wrapped_optimizer(owners_build *b, uint64_t opt);
mp_err owners_others(owners_build *b) MP_WUR;     /* the Python tensors nothing above named */

/* owners_referrers.c: the variable that holds each Python tensor (ref_name, ref_where). */
mp_err owners_referrers(owners_build *b) MP_WUR;

/* owners_graph.c: the autograd graph from every Python tensor's grad_fn, each node's module (NODES); MP_OK
   with none where the layout does not know the graph. */
mp_err owners_graph(owners_build *b) MP_WUR;
/* The node at ADDR, or NULL. */
owners_node *owners_node_at(owners_build *b, uint64_t addr);

/* owners_saved.c: what the graph's nodes save for backward: their Python tensors marked (saved, module),
   the others added as ACTIVATION entries. */
mp_err owners_saved(owners_build *b) MP_WUR;

/* owners_blocks.c: which block each storage lies in, which entry counts for it, who owns each block. */
mp_err owners_blocks(owners_build *b, const mp_snapshot *snap) MP_WUR;

#endif

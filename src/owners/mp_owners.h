/* mp_owners.h - whose memory each block is, read from the Python heap of a target (a core or a live process)
   with nothing installed in it beforehand: the tensors the job's modules name (parameters, buffers), their
   gradients, the optimizers' state, the other Python tensors, and what no Python tensor reaches. Categories
   are MemTracker's (torch.distributed._tools.mem_tracker), named as in its table. */
#ifndef MEMPROF_OWNERS_H
#define MEMPROF_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_snapshot.h"
#include "mp_target.h"
#include "mp_torch.h"

/* In priority order: a storage several tensors share counts once, for the first of these that names it. */
enum mp_owner_kind {
	MP_OWNER_PARAMETER,       /* a module's _parameters */
	MP_OWNER_BUFFER,          /* a module's _buffers */
	MP_OWNER_GRADIENT,        /* a parameter's .grad (its autograd meta) */
	MP_OWNER_OPTIMIZER_STATE, /* an optimizer's state[param] values */
	MP_OWNER_ACTIVATION,      /* another Python tensor, the result of a differentiable op (it has a grad_fn) */
	MP_OWNER_OTHER_PYTHON,    /* another Python tensor */
	MP_OWNER_NOT_PYTHON,      /* allocated, but no Python-visible tensor reaches it */
	MP_OWNER__COUNT
};

/* "parameter", "buffer", ...: the names the commands print and read. */
const char *mp_owner_kind_name(enum mp_owner_kind kind);

/* One tensor and the name memprof gives it: "model.encoder.layers.0.linear1.weight", its ".grad",
   "optimizer.state[model.head.bias].exp_avg", or for other tensors the variable that holds it. */
typedef struct mp_owned {
	char *name;
	char *root;        /* the module tree's root or the optimizer NAME starts with ("model", "trainer.optimizer"),
			      or NULL (other tensors: NAME is the path of the variable that holds them) */
	char *module;      /* the module path it belongs to ("model.encoder.layers.0.linear1"); for an activation
			      the module whose forward made or saved it, as the autograd graph tells; or NULL */
	char *referrer;    /* other tensors: what holds it ("local variable of main() at x.py:69"), or NULL */
	enum mp_owner_kind kind;
	mp_tensor tensor;
	bool saved;        /* a node of a live autograd graph saves it for backward */
	bool counted;      /* the entry its storage's bytes count for (the first, by kind, of those sharing it) */
	size_t block;      /* the snapshot's block that holds the storage, SIZE_MAX when none (a CPU tensor) */
} mp_owned;

/* One active block of the snapshot and who owns it. */
typedef struct mp_owner_block {
	size_t block;            /* index into the snapshot's blocks */
	int64_t device;
	enum mp_owner_kind kind; /* of its owner: MP_OWNER_NOT_PYTHON when no counted storage lies in it */
	size_t owner;            /* index into the tensors, SIZE_MAX for NOT_PYTHON */
	uint64_t covered;        /* bytes of it that Python-visible storages cover */
} mp_owner_block;

typedef struct mp_owners {
	mp_owned *tensors;
	size_t ntensors;
	mp_owner_block *blocks;  /* the active blocks, in the snapshot's order */
	size_t nblocks;
	char python[64];         /* "CPython 3.11.7" */
	const mp_torch_layout *layout;
	uint64_t objects;        /* GC-tracked objects walked */
	size_t modules, optimizers, python_tensors;
	bool partial;            /* something could not be read: warnings said what */
} mp_owners;

typedef struct mp_owners_opts {
	uint64_t max_objects;    /* 0: the heap reader's default */
} mp_owners_opts;

/* The owners of T's memory, the blocks of SNAP (memprof's snapshot of the same target; NULL: tensors only).
   MP_E_NOTFOUND when T runs no CPython or no torch tensors were found, MP_E_UNSUPPORTED when the
   interpreter or the tensors' layout is not one memprof reads. Damage is warned about through DIAG and gives a
   partial result. The caller frees *OUT with mp_owners_free. */
mp_err mp_owners_read(mp_target *t, const mp_snapshot *snap, const mp_owners_opts *opts, mp_owners **out,
		      mp_diag *diag) MP_WUR;
void mp_owners_free(mp_owners *o);

#endif

/* mp_sim_history.h - what a job asked of the allocator, read from its trace (the ring buffer of
   _record_memory_history), as a list of requests the model can replay under other settings; and the replay.

   The ring holds the allocator's events (alloc, free_requested, free_completed, segment_*, oom); the
   requests are the job's part of them: each alloc, each free (pending when other streams' events kept the
   block, completed when the allocator saw them done), the user's empty_cache() calls (a release of cached
   segments that no request of the allocator's own explains), and the failed request at the end (the oom
   entry). The decisions (segment_alloc, segment_free, map, unmap) are the recorded allocator's and are only
   used to check that the model, under the recorded settings, makes the same ones.

   What was live before the ring began (a wrapped ring, history turned on late) is planted first, in address
   order: the replay then starts from a reconstructed state rather than from where the job started, and says
   so (WHOLE is false). */
#ifndef MEMPROF_SIM_HISTORY_H
#define MEMPROF_SIM_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_sim.h"
#include "mp_snapshot.h"

enum mp_sim_op_kind {
	MP_SIM_OP_ALLOC,       /* a request served (alloc) */
	MP_SIM_OP_FREE,        /* free_requested */
	MP_SIM_OP_COMPLETE,    /* free_completed of a pending free: its events were over */
	MP_SIM_OP_EMPTY_CACHE, /* torch.cuda.empty_cache() */
	MP_SIM_OP_REQUEST,     /* the request that ran out of memory (the last oom entry) */
};

typedef struct mp_sim_op {
	enum mp_sim_op_kind kind;
	int64_t size;    /* ALLOC: the size asked; REQUEST: as the oom entry holds it (rounded) */
	uint64_t stream;
	int64_t alloc;   /* the allocation it makes (ALLOC, REQUEST) or ends (FREE, COMPLETE): 0, 1, ... */
	bool pending;    /* FREE: the block waited for other streams' events */
	int64_t entry;   /* its trace entry, as an index into the device's list; −1 for a planted block */
	int64_t addr;    /* ALLOC: where the job's allocator put it */
} mp_sim_op;

typedef struct mp_sim_history {
	int64_t device;
	mp_sim_op *ops;
	size_t nops;
	int64_t nallocs;
	size_t nplanted;         /* ops [0, nplanted) plant what was live before the ring began */
	bool whole;              /* nothing was live or cached when the ring began */
	int64_t reserved_before; /* bytes reserved when the ring began (reconstructed) */
	int64_t request;         /* the REQUEST op's index, −1 when the trace has no oom entry */
	int64_t device_free;     /* the oom entry's free device memory, −1 unknown */
	int64_t reserved;        /* the device's reserved bytes in the snapshot (at the OOM) */
	int64_t earlier_ooms;    /* oom entries before the last one (requests that failed and were caught) */
	int64_t unexplained;     /* frees of addresses that nothing in the ring or the state allocated */
	bool private_pools;      /* requests went to private pools, which the replay does not route yet */
	int64_t step_match;      /* the ALLOC op one training step before the request (sim_step.c), −1 */
	/* what the recorded allocator did, for the check of the model */
	int64_t recorded_segment_allocs, recorded_segment_frees;
} mp_sim_history;

/* Read DEVICE's requests from SNAP's trace (under the rounding of SETTINGS, the recorded ones, to match the
   request's size one step earlier). MP_E_NOTFOUND when the device has no trace; MP_E_NOMEM. */
mp_err mp_sim_history_read(const mp_snapshot *snap, int64_t device, const mp_sim_conf *settings, mp_sim_release r,
			   mp_sim_history *out, mp_diag *diag) MP_WUR;
void mp_sim_history_fini(mp_sim_history *h);

/* The settings SNAP's job ran with under release R (its allocator_settings; defaults where it says nothing);
   TEXT (N bytes) gets the settings string as the job last set it ("" when none). False when the snapshot has
   none. */
bool mp_sim_conf_from_snapshot(const mp_snapshot *snap, mp_sim_release r, mp_sim_conf *c, char *text, size_t n);

/* The release a snapshot's keys tell, when nothing else does: 2.14 added the host allocator's keys, 2.5 the
   annotations; older ones are taken for 2.4. */
mp_sim_release mp_sim_release_of_snapshot(const mp_snapshot *snap);

/* How the device is seen by a replay: its memory, and what of it others use. */
typedef struct mp_sim_device {
	int64_t total, outside;
} mp_sim_device;

/* What a replay found. */
typedef struct mp_sim_outcome {
	bool refused;            /* the model could not go on (host memory, address space): nothing below holds */
	int64_t oom_op;          /* the first op that ran out of memory, −1: none did */
	bool request_served;     /* the REQUEST op was served */
	int64_t peak_reserved;   /* over the ops replayed (the step's included) */
	int64_t reserved_at_request; /* reserved bytes when the request was made (before it) */
	int64_t reserved_at_oom; /* reserved bytes after the op that ran out of memory (its retry done) */
	int64_t reserved_at_end; /* reserved bytes after the last op replayed */
	int64_t segment_allocs, segment_frees; /* up to the request: cudaMalloc'ed and released fixed segments */
	/* one step more after the request, when the history has a previous step (STEP) */
	bool step_replayed;      /* the step's structure held: every free matched an allocation of this step */
	int64_t step_ops;        /* how many ops of the previous step were replayed */
	int64_t step_oom_op;     /* the op of the previous step whose copy ran out, −1: the step completed */
} mp_sim_outcome;

/* Called with the model as it stands right after the request (or the op that ran out before it; with
   TO_END, after the last op). */
typedef void (*mp_sim_look_fn)(void *ctx, const mp_sim *s);

/* How to replay: under which settings and rules, on which device, and with what changed in the job. */
typedef struct mp_sim_replay_opts {
	const mp_sim_conf *conf;
	mp_sim_release release;
	mp_sim_device dev;
	int64_t allowed;           /* a memory fraction's cap in bytes (an OOM message's "allowed"), −1 none */
	bool step;                 /* replay the step after the request when the history has one */
	bool to_end;               /* go on past a request that ran out, to the last op (the state a snapshot read
				      after the OOM shows), instead of the step */
	const uint8_t *empty_cache_after; /* per op of the history, nonzero: an empty_cache() right after it (in the
					     step replayed after the request too); NULL: none */
	const int64_t *freed;      /* allocations given up right before the request (a holder deleted) */
	size_t nfreed;
	mp_sim_look_fn look;       /* sees the model after the request; may be NULL */
	void *look_ctx;
} mp_sim_replay_opts;

/* Replay H as O says: the ops up to and including the request (all of them when there is none), then, with
   O->step and a previous step in H, that step's ops after its match again, as the step after the request.
   MP_E_NOMEM. */
mp_err mp_sim_replay(const mp_sim_history *h, const mp_sim_replay_opts *o, mp_sim_outcome *out) MP_WUR;

#endif

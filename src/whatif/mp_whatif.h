/* mp_whatif.h - what a job would have done under other allocator settings: its recorded requests (the trace)
   replayed through the allocator model (src/allocsim) under the settings asked about, after a check that the
   model, under the job's own settings, does what the job did (runs out at the same request, with the same
   memory reserved). A replay that passes the check is evidence; one that does not is not, and says why.

   The device is what the OOM says of it: the memory this allocator could have had is what it reserved plus
   what was free at the OOM (the trace's oom entry), the rest of the device (capacity, from the message, when
   known) was others'. */
#ifndef MEMPROF_WHATIF_H
#define MEMPROF_WHATIF_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_sim.h"
#include "mp_sim_history.h"
#include "mp_snapshot.h"

typedef struct mp_whatif_opts {
	int64_t device;         /* −1: the device of the last OOM, else 0 */
	mp_sim_release release; /* {0, 0}: guessed from the snapshot's shape */
	int64_t capacity;       /* the device's memory when known (an OOM message's total capacity), −1 */
	int64_t device_free;    /* free memory at the OOM when the trace has no oom entry (a message), −1 */
	int64_t allowed;        /* a memory fraction's cap (an OOM message's "allowed"), −1 none or unknown */
} mp_whatif_opts;

typedef struct mp_whatif {
	const mp_snapshot *snap;
	mp_sim_history h;
	mp_sim_release release;
	bool release_guessed;      /* from the snapshot's keys, not known */
	mp_sim_device dev;
	bool dev_known;            /* the free memory at the OOM is known */
	int64_t allowed;           /* a memory fraction's cap, −1 */
	mp_sim_conf recorded;
	char recorded_text[256];   /* the job's own PYTORCH_CUDA_ALLOC_CONF, "" */
	mp_sim_outcome baseline;   /* the replay under the recorded settings */
	bool faithful;             /* it did what the job did */
	char unfaithful[300];      /* why not, when not */
} mp_whatif;

/* Read SNAP's history and check the model against it. MP_E_NOTFOUND when the device has no trace;
   MP_E_NOMEM. */
mp_err mp_whatif_open(const mp_snapshot *snap, const mp_whatif_opts *opts, mp_whatif **out, mp_diag *diag) MP_WUR;
void mp_whatif_close(mp_whatif *w);

/* Replay W's requests under CONF (with the step after the request when the history has one). */
mp_err mp_whatif_try(const mp_whatif *w, const mp_sim_conf *conf, mp_sim_outcome *out) MP_WUR;

/* The same with the job changed: an empty_cache() right after each op EMPTY_CACHE_AFTER marks (one byte per op
   of the history, NULL none), and the allocations FREED[0..NFREED) given up right before the request. */
mp_err mp_whatif_try_changed(const mp_whatif *w, const mp_sim_conf *conf, const uint8_t *empty_cache_after,
			     const int64_t *freed, size_t nfreed, mp_sim_outcome *out) MP_WUR;

/* The allocations live at the request whose blocks began at ADDRS[0..N) in the job (its addresses), into OUT
   (room for N); returns how many were found. */
size_t mp_whatif_allocs_at(const mp_whatif *w, const int64_t *addrs, size_t n, int64_t *out);

/* The requests (allocations, the OOM's included) among ops FROM .. TO-1 of W's history: how far apart two ops
   are in the words a user counts in (frees are ops too). */
int64_t mp_whatif_requests_between(const mp_whatif *w, int64_t from, int64_t to);

/* Whether outcome O means the job gets past its OOM: the request served (and, when STEP, the step after it
   completes too). */
bool mp_whatif_passes(const mp_sim_outcome *o, bool step);

/* Where op I of W's history was asked: "train.py:88 (forward)" from its entry's frames (the innermost of the
   user's code), or "" when it has none. In BUF of N bytes. */
const char *mp_whatif_site(const mp_whatif *w, int64_t op, char *buf, size_t n);

/* The frame of op I's entry a person would look at (mp_frames_place). False when it has none. */
bool mp_whatif_place(const mp_whatif *w, int64_t op, mp_frame *out);

enum mp_whatif_format { MP_WHATIF_PLAIN, MP_WHATIF_JSON };
/* The history, the check, and the outcome O under CONF (as text, CONF_TEXT). */
void mp_whatif_report(const mp_whatif *w, const char *conf_text, const mp_sim_outcome *o,
		      enum mp_whatif_format format, enum mp_units units, mp_out *out);

#endif

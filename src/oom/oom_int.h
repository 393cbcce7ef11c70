/* oom_int.h - what the parts of the OOM explanation share (private to src/oom): the device's segments as
   the allocator groups them (pool, stream), and the allocator's size rules. */
#ifndef MEMPROF_OOM_INT_H
#define MEMPROF_OOM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

#include "mp_oom.h"

#define OOM_MIB ((int64_t)1 << 20)
#define OOM_SMALL_SIZE OOM_MIB              /* the largest request of the small pool */
#define OOM_SMALL_BUFFER (2 * OOM_MIB)      /* a small pool segment */
#define OOM_LARGE_BUFFER (20 * OOM_MIB)     /* a large pool segment for requests of 1 to 10 MiB */
#define OOM_MIN_LARGE_ALLOC (10 * OOM_MIB)  /* from here cudaMalloc gets the request rounded to 2 MiB */
#define OOM_ROUND_LARGE (2 * OOM_MIB)
#define OOM_MIN_MAX_SPLIT (21 * OOM_MIB)    /* max_split_size_mb must be above 20 */
/* No real allocator state comes near these; a snapshot beyond them is damaged, and sums stay far from
   int64's end (2^24 segments of at most 2^50 bytes each would still be 2^74: the device total is checked). */
#define OOM_MAX_SIZE ((int64_t)1 << 50)     /* a segment, block, request or trace entry */
#define OOM_MAX_TOTAL ((int64_t)1 << 56)    /* a device's reserved bytes */

/* What cudaMalloc-able memory a segment set would cost for live blocks moved to fresh segments (of their own
   pools' sizes, packed): the sum of LIVE sizes bucketed per pool. */
typedef struct oom_relocation {
	int64_t small, medium, large; /* ≤ 1 MiB, 1–10 MiB, ≥ 10 MiB (each rounded to 2 MiB) */
} oom_relocation;
void oom_relocation_add(oom_relocation *r, int64_t size);
int64_t oom_relocation_cost(const oom_relocation *r);
/* R + A, bucket by bucket. */
void oom_relocation_sum(oom_relocation *r, const oom_relocation *a, int sign);

/* One segment of the device, as the allocator files it. */
typedef struct oom_seg {
	const mp_segment *s;
	int64_t stream;
	bool small;          /* segment_type 'small' */
	bool private_pool;   /* segment_pool_id other than (0, 0) */
	int64_t pool_id[2];
	bool expandable;
	int64_t live;        /* active_allocated bytes */
	int64_t live_needed; /* what those blocks' tensors asked for, in 512-byte steps */
	int64_t pending;     /* active_pending_free bytes */
	int64_t largest_live;
	oom_relocation moved; /* its live blocks, as segments of their own would hold them */
} oom_seg;

typedef struct oom_view {
	const mp_snapshot *snap;
	const mp_keys *k;
	oom_seg *segs;
	size_t nsegs;
	struct mp_whatif *whatif; /* the replay of the job's requests that passed its check, NULL (closed with V) */
} oom_view;

/* The segments of SNAP on DEVICE. MP_E_NOMEM; MP_E_CORRUPT (DIAG says where) for sizes no allocator has:
   negative, over OOM_MAX_SIZE, blocks beyond their segment, a device over OOM_MAX_TOTAL. */
mp_err oom_view_open(const mp_snapshot *snap, int64_t device, oom_view *v, mp_diag *diag);
void oom_view_close(oom_view *v);

static inline bool oom_block_live(const oom_view *v, const mp_block *b)
{
	return mp_val_is(b->state, v->k->active_allocated);
}
static inline bool oom_block_pending(const oom_view *v, const mp_block *b)
{
	return mp_val_is(b->state, v->k->active_pending_free);
}
/* Free: inactive (not allocated, not waiting for an event). */
static inline bool oom_block_free(const oom_view *v, const mp_block *b)
{
	return !oom_block_live(v, b) && !oom_block_pending(v, b);
}

/* The allocator's rules for O's settings. */
int64_t oom_round_size(const mp_oom *o, int64_t size);
int64_t oom_allocation_size(const mp_oom *o, int64_t rounded);
/* Read SNAP's allocator_settings into O (defaults where absent). */
void oom_read_settings(const mp_snapshot *snap, mp_oom *o);


/* An expandable segment's page: 2 MiB (kSmallBuffer) in the small pool, 20 MiB (kLargeBuffer) in the large. */
static inline int64_t oom_page_of(bool small)
{
	return small ? OOM_SMALL_BUFFER : OOM_LARGE_BUFFER;
}

/* Whether a free block of SIZE may serve O's request under max_split_size; whether the request searches
   segment G (a default pool of its kind, its stream). */
bool oom_split_rules_allow(const mp_oom *o, int64_t size);
bool oom_searched(const oom_seg *g, const mp_oom *o);

/* The place FRAMES name, as "file.py:LINE (function)": the innermost frame of the job's own code (Python, not
   torch's, not an installed package's or the interpreter's library), else the innermost user, Python or C++
   frame in that order (never the stack capture's own frames); NULL when FRAMES has none (or out of memory).
   The caller frees it. */
char *oom_site_of(const mp_snapshot *snap, mp_val frames);

/* Live blocks grouped by who holds them (oom_holders.c), for the holders and the remedies about them. */
typedef struct oom_member {
	const char *key;  /* the group's name */
	const mp_block *b;
	enum mp_oom_holder_what what;
	const char *module; /* activations: the module whose forward made or saved it (full path), or NULL */
	bool f32, f16;    /* activations: a float32 tensor; a float16 or bfloat16 one */
} oom_member;
typedef struct oom_groups {
	oom_member *m;    /* sorted by key */
	size_t n;
	char **keys;      /* the names made for the members (freed with the groups) */
	size_t nkeys;
	struct oom_group {
		size_t first, n; /* members [first, first + n) */
		int64_t bytes;
	} top[MP_OOM_MAX_HOLDERS];
	int ntop;
} oom_groups;
/* The name all the activation holders begin with ("activations saved for backward in M", "activations no
   variable holds in M", "activations made in forward at SITE"). */
#define OOM_ACTIVATIONS "activations"
mp_err oom_groups_make(const oom_view *v, mp_oom *o, oom_groups *gr);
void oom_groups_free(oom_groups *gr);
/* Whether the request would have been served had the blocks M[0..N) been freed: from a cached block they
   leave on its stream and pool, or by cudaMalloc once the retry has released the segments they empty. */
mp_err oom_serves_without(const oom_view *v, const mp_oom *o, const oom_member *m, size_t n, bool *works,
			  int64_t *released);

/* The remedies about the activation holders of GR (oom_activations.c): a smaller batch, activation
   checkpointing of the repeated blocks they lie in, lower precision; each claimed only when its estimate leaves
   room for the request, else listed as not helping with the reason. */
void oom_activation_remedies(mp_oom *o, const oom_groups *gr);

/* The parts of mp_oom_explain. */
mp_err oom_replay(const oom_view *v, mp_oom *o) MP_WUR;
void oom_causes(const oom_view *v, mp_oom *o);
void oom_fragmentation(const oom_view *v, mp_oom *o);
mp_err oom_remedies(const oom_view *v, mp_oom *o, const oom_groups *gr);
/* empty_cache() without a replay (oom_history.c): at the OOM it does not help; before the request when 2.6 skipped
   its retry. */
void oom_empty_cache_remedy(const oom_view *v, mp_oom *o);
/* Max_split_size_mb: the smallest M (whole MiB, ≥ 21) under which the large segments split by live blocks
   all smaller than M would have stayed whole and been released, and what that frees (sizes minus what the
   live blocks cost in segments of their own). M = 0 when no segment qualifies at any M. STREAM_ONLY:
   only segments of the request's stream. */
typedef struct oom_oversize {
	int64_t m;
	int64_t freed;       /* net bytes the release would give cudaMalloc */
	int64_t free_inside; /* free bytes inside the qualifying segments */
	int64_t nsegs;
	bool works;          /* device free + freed ≥ the allocation size */
} oom_oversize;
oom_oversize oom_oversize_best(const oom_view *v, const mp_oom *o, bool stream_only);
/* Whether SEG qualifies at M. */
bool oom_oversize_qualifies(const oom_view *v, const oom_seg *seg, const mp_oom *o, int64_t m);

/* Add a remedy (NULL when the list is full: the claim is dropped); the caller sets its evidence, conf, place. */
mp_oom_remedy *oom_remedy_add(mp_oom *o, enum mp_oom_remedy_id id, bool works, const char *action, const char *fmt,
			      ...) MP_PRINTF(5, 6);
mp_oom_remedy *oom_remedy_vadd(mp_oom *o, enum mp_oom_remedy_id id, bool works, const char *action, const char *fmt,
			       va_list ap);
/* The remedies that replaying the job's requests proves or refutes (oom_replayed.c): false when there is no
   replay to rest them on (O->no_replay says why); when there is, V keeps it for oom_holders_replayed. */
bool oom_remedies_replayed(oom_view *v, mp_oom *o);
/* The remedies that delete a variable (GR's holders), replayed with its allocations given up before the
   request, where V has a replay: each then rests on it, claimed or refuted. */
void oom_holders_replayed(const oom_view *v, mp_oom *o, const oom_groups *gr);

/* O as the JSON object of mp_oom_report (oom_json.c). */
void oom_report_json(const mp_oom *o, mp_out *out);

/* N as PyTorch prints sizes in its messages ("922.00 MiB"), in BUF of N bytes; returns BUF. A negative N (a
   difference) is printed the same way with its sign ("-32.00 MiB"), never as a raw count of bytes. */
const char *oom_size_text(char *buf, size_t n, int64_t v);

#endif

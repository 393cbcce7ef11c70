/* category_int.h - the block classifier's insides, shared by the categories report, its --explain,
   --sites and --segsum (private to src/categories; mp_category_classify.h is its interface). */
#ifndef MEMPROF_CATEGORY_INT_H
#define MEMPROF_CATEGORY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mp_category.h"
#include "mp_category_classify.h"
#include "mp_table.h"

/* A rule whose frame conditions a traceback meets, and the frame the last one met. */
typedef struct category_hit {
	uint32_t rule; /* user rules first, then the defaults */
	int32_t frame; /* -1: the rule has no frame condition */
} category_hit;

/* The hits of one traceback, cached per frames handle: a million blocks share a few
   thousand tracebacks, and globbing their frames is the expensive part. */
typedef struct category_memo {
	mp_val frames;
	uint32_t off, len; /* in hits */
} category_memo;

/* The live alloc trace entry at a (device, address) (from category_trace.c). */
typedef struct category_alloc {
	int64_t device, addr;
	size_t seq;   /* position in the device's trace, for the latest-wins sort */
	size_t trace; /* index in snap->trace; SIZE_MAX: freed since, or no category */
} category_alloc;

/* An allocation with a phase still live at the end of its ring, for the block there (category_phases.c). */
typedef struct category_live {
	int64_t device, addr;
	unsigned phases; /* enum mp_category_phase bits */
} category_live;

typedef struct category_frame_index category_frame_index;

struct mp_category_classifier {
	const mp_snapshot *snap;
	const mp_category_rule *user, *defaults;
	size_t nuser, ndefaults;
	category_alloc *allocs; /* sorted by (device, addr), one each; NULL when the trace has no category */
	size_t nallocs;
	category_frame_index *frames; /* what each distinct frame meets (category_match.c) */
	mp_table memo_index; /* memo by frames handle */
	category_memo *memo;
	size_t nmemo, memo_cap;
	category_hit *hits;
	size_t nhits, hits_cap;
	size_t unreadable; /* 'category' values that name no category */
	uint8_t *phase;          /* per snap->trace entry: enum mp_category_phase bits; NULL: no backward pass seen */
	category_live *live;     /* sorted by (device, addr) */
	size_t nlive;
	const mp_owners *owners;
	uint32_t *owner_of; /* per snapshot block: 1 + the index of its owner block in OWNERS, 0: none */
	mp_diag *diag;
};

/* mp_category_classifier_new and _free in place, for a classifier in another struct (the report's). */
mp_err category_classifier_init(mp_category_classifier *c, const mp_snapshot *snap, const mp_category_ruleset *rules,
				mp_diag *diag) MP_WUR;
void category_classifier_free(mp_category_classifier *c);

/* Take the owners O of C's snapshot as the first source (category_owners.c). MP_E_NOMEM only. */
mp_err category_classifier_owners(mp_category_classifier *c, const mp_owners *o) MP_WUR;
/* The category the owners give R, when they give one. */
bool category_from_owner(const mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why);

/* Rule I of C (user rules first). */
const mp_category_rule *category_rule(const mp_category_classifier *c, size_t i);

/* The allocs of SNAP's trace that carry a 'category' key and are still live, into C
   (category_trace.c). */
mp_err category_trace_index(mp_category_classifier *c) MP_WUR;

/* The trace entry (index in snap->trace) of the live alloc at ADDR on DEVICE that carries a
   'category', or SIZE_MAX. */
size_t category_trace_find(const mp_category_classifier *c, int64_t device, int64_t addr);

/* What the ring's order says of C's allocations: each entry's phases, and the backward allocations live at the
   ring's end (category_phases.c). MP_E_NOMEM only. */
mp_err category_phases_index(mp_category_classifier *c) MP_WUR;

/* The phases of trace entry I (an index in snap->trace), and of the block at ADDR on DEVICE (0: none known). */
unsigned category_entry_phases(const mp_category_classifier *c, size_t i);
unsigned category_block_phases(const mp_category_classifier *c, int64_t device, int64_t addr);

/* --explain: the block of the chosen device that holds O->EXPLAIN_ADDR, its category and
   where that came from (category_explain.c). MP_E_NOTFOUND when no block holds it. */
mp_err category_explain(mp_category_classifier *c, const mp_category_opts *o, mp_out *out) MP_WUR;

/* The frame conditions of C's rules, met per distinct frame (category_match.c). */
mp_err category_frame_index_new(const mp_category_classifier *c, category_frame_index **out) MP_WUR;
void category_frame_index_free(category_frame_index *fi);

/* Take FRAMES as the traceback the next category_frames_meet calls ask about. MP_E_NOMEM only. */
mp_err category_frames_summarise(category_frame_index *fi, mp_val frames) MP_WUR;

/* Whether the summarised traceback meets every frame condition of rule RULE (of category_rule's
   numbering); *FRAME gets the frame the last one met (-1: the rule has none). */
bool category_frames_meet(category_frame_index *fi, size_t rule, int32_t *frame);

#endif

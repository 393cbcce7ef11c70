/* category_phases.c - what the trace ring's order says about each allocation (CATEGORY-RULES.md, "Phases"):
   whether a backward pass made it, whether it outlived that pass, whether it has a parameter's size.

   A backward pass shows in a ring as the main thread entering backward (an entry whose Python frames pass
   through torch.autograd's backward: loss.backward() allocates the gradient it starts from), then entries with no
   Python frame (autograd's device threads run no Python, and the main thread waits), until the next entry with
   Python frames outside backward that the main thread made (its outermost Python frame the one the pass was
   entered from): the main thread has returned. Python that runs on autograd's thread (a hook, an operator
   written in Python such as scaled_dot_product_attention's router) has another outermost frame and leaves the
   window open. What the pass made and did not free by then is what it hands back, the gradients AccumulateGrad
   keeps (or a library's workspace: hence the parameter size). What the job computes outside a module after a
   forward and before its pass is the loss.
   A forward shows as entries with a module's __call__ among their frames; what the job's own code made outside
   one and still holds when the next begins is what its loop feeds the model. With C++ frames, the outermost
   operator call (at::_ops::X::call, or a backward function's apply) of consecutive entries is one call while it
   stays the same: what an operator called inside it made and freed before it changed lived within one
   operator. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "category_int.h"
#include "mp_array.h"
#include "mp_frame_filter.h"
#include "mp_hash.h"

static const struct {
	unsigned bit;
	const char *name;
} phase_names[] = {
	{ MP_PHASE_BACKWARD, "backward" },
	{ MP_PHASE_OUTLIVES_BACKWARD, "outlives_backward" },
	{ MP_PHASE_PARAMETER_SIZE, "parameter_size" },
	{ MP_PHASE_BEFORE_FORWARD, "before_forward" },
	{ MP_PHASE_WITHIN_OPERATOR, "within_operator" },
	{ MP_PHASE_BEFORE_BACKWARD, "before_backward" },
};

const char *mp_category_phase_name(unsigned bit)
{
	for (size_t i = 0; i < sizeof phase_names / sizeof phase_names[0]; i++)
		if (phase_names[i].bit == bit)
			return phase_names[i].name;
	return NULL;
}

bool mp_category_phase_parse(const char *name, size_t len, unsigned *bit)
{
	for (size_t i = 0; i < sizeof phase_names / sizeof phase_names[0]; i++)
		if (strlen(phase_names[i].name) == len && memcmp(phase_names[i].name, name, len) == 0) {
			*bit = phase_names[i].bit;
			return true;
		}
	return false;
}

enum frames_kind { FK_NO_PYTHON, FK_BACKWARD, FK_OTHER_PYTHON };

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static bool same(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* Whether F is torch.autograd's way into the engine, from Tensor.backward down, or code that runs inside it. */
static bool in_backward(const mp_frame *f)
{
	static const struct {
		const char *file, *function;
	} entries[] = {
		{ "/torch/autograd/__init__.py", "backward" },
		{ "/torch/autograd/__init__.py", "grad" },
		{ "/torch/_tensor.py", "backward" },
		{ "/torch/autograd/graph.py", "_engine_run_backward" },
		/* activation checkpointing recomputes the forward inside backward, on autograd's thread, with
		   Python frames: the pass goes on around it */
		{ "/torch/utils/checkpoint.py", "unpack_hook" },
		{ "/torch/utils/checkpoint.py", "recompute_fn" },
		{ "/torch/utils/checkpoint.py", "backward" },
	};

	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
		if (ends_with(f->filename, f->filename_len, entries[i].file) &&
		    same(f->name, f->name_len, entries[i].function))
			return true;
	return false;
}

/* Whether F is a module's __call__: a forward is running. */
static bool in_forward(const mp_frame *f)
{
	return ends_with(f->filename, f->filename_len, "/torch/nn/modules/module.py") &&
	       (same(f->name, f->name_len, "_call_impl") || same(f->name, f->name_len, "_wrapped_call_impl"));
}

static bool is_python(const mp_frame *f)
{
	return ends_with(f->filename, f->filename_len, ".py") || (f->filename_len > 0 && f->filename[0] == '<');
}

/* What a traceback says, packed in a byte: its kind (enum frames_kind), whether a forward runs, whether the job's
   own code made it outside any forward (its innermost Python frame the job's own), whether an operator called
   inside another made it. */
enum { FACT_KIND = 3, FACT_FORWARD = 4, FACT_OWN = 8, FACT_NESTED_OP = 16 };

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(s, prefix, k) == 0;
}

/* The length of F's name up to its argument list when F is an operator's call (at::_ops::X::call) or a
   backward function's (torch::autograd::generated::XBackward::apply), else 0. */
static size_t operator_call(const mp_frame *f)
{
	const char *paren = memchr(f->name, '(', f->name_len);
	size_t n = paren != NULL ? (size_t)(paren - f->name) : f->name_len;

	if (starts_with(f->name, n, "at::_ops::") && ends_with(f->name, n, "::call"))
		return n;
	if (starts_with(f->name, n, "torch::autograd::generated::") && ends_with(f->name, n, "::apply"))
		return n;
	return 0;
}

/* The facts of a frames handle, worked out once: the ring's entries share a few thousand tracebacks. ROOT
   names its outermost Python frame (file and function; 0: none), which tells the threads apart: the main
   thread's tracebacks end in the job's entry point, a hook's on autograd's thread in the hook. OP names its
   outermost operator call (0: none). */
struct facts_memo {
	mp_val frames;
	uint8_t facts;
	uint64_t root, op;
};

static struct facts_memo facts_of(const mp_snapshot *snap, mp_val frames)
{
	struct facts_memo m = { frames, 0, 0, 0 };
	size_t n = mp_frames_len(snap, frames), len;
	bool python = false, forward = false, own = false, backward = false;
	const char *inner = NULL, *outer = NULL; /* operator calls: the innermost, the outermost */
	size_t inner_len = 0, outer_len = 0;
	mp_frame f, outermost = { 0 };

	for (size_t i = 0; i < n; i++) {
		if (!mp_frames_get(snap, frames, i, &f))
			continue;
		if ((len = operator_call(&f)) > 0) { /* innermost first: the last one is the outermost */
			outer = f.name, outer_len = len;
			if (inner == NULL)
				inner = f.name, inner_len = len;
		}
		backward |= in_backward(&f);
		forward |= in_forward(&f);
		if (!python && is_python(&f))
			own = mp_frame_is_own(&f);
		if (is_python(&f)) { /* innermost first: the last one is the outermost */
			outermost = f;
			python = true;
		}
	}
	if (python)
		m.root = mp_hash_bytes(outermost.name, outermost.name_len,
				       mp_hash_bytes(outermost.filename, outermost.filename_len, 0)) | 1;
	if (backward)
		m.facts = FK_BACKWARD;
	else
		m.facts = (uint8_t)((python ? FK_OTHER_PYTHON : FK_NO_PYTHON) | (forward ? FACT_FORWARD : 0) |
				    (own && !forward ? FACT_OWN : 0));
	if (outer != NULL)
		m.op = mp_hash_bytes(outer, outer_len, 0) | 1;
	if (inner != NULL && (inner_len != outer_len || memcmp(inner, outer, inner_len) != 0))
		m.facts |= FACT_NESTED_OP;
	return m;
}

/* An alloc or a free of one window, for pairing them by address. */
struct event {
	int64_t addr;
	size_t i; /* index in snap->trace */
	bool alloc;
	bool own; /* an alloc the job's own code made outside a forward */
};

static int cmp_event(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* Marks what outlived a window: EV (N events of one window or one ring, sorted) pairs each alloc with the
   next event at its address; an alloc with no free after it gets BIT in PHASE. */
static void mark_unfreed(const struct event *ev, size_t n, uint8_t *phase, unsigned bit)
{
	for (size_t j = 0; j < n; j++)
		if (ev[j].alloc && (j + 1 == n || ev[j + 1].addr != ev[j].addr))
			phase[ev[j].i] |= (uint8_t)bit;
}

struct phases {
	mp_category_classifier *c;
	const mp_keys *k;
	struct event *ev;
	size_t nev, cap;
	uint32_t *memo_of; /* per entry of snap->trace: its facts in MEMO (0: no frames) */
	bool any_op;    /* some entry has an operator frame (C++ frames recorded) */
	size_t *tail;   /* the allocs made since the last forward, outside one: the loss, if a pass follows */
	size_t ntail, tail_cap;
	struct facts_memo *memo;
	size_t nmemo, memo_cap;
	mp_table memo_index;
};

/* What trace entry I's traceback says. */
static const struct facts_memo *facts(const struct phases *p, size_t i)
{
	return &p->memo[p->memo_of[i]];
}

/* The facts of every entry of the snapshot's trace: P->MEMO_OF. */
static mp_err trace_facts(struct phases *p)
{
	const mp_snapshot *snap = p->c->snap;

	/* memo[0]: an entry without frames, never in the index */
	if ((p->memo_of = calloc(snap->ntrace, sizeof *p->memo_of)) == NULL ||
	    mp_array_grow((void **)&p->memo, &p->memo_cap, 1, sizeof *p->memo) != MP_OK)
		return MP_E_NOMEM;
	p->memo[0] = (struct facts_memo){ 0, FK_NO_PYTHON, 0, 0 };
	p->nmemo = 1;
	for (size_t i = 0; i < snap->ntrace; i++) {
		const mp_trace_entry *e = &snap->trace[i];
		mp_table_probe probe;
		uint32_t id;

		if (!(e->present & MP_F_TR_FRAMES))
			continue;
		id = mp_table_find_u64(&p->memo_index, e->frames, p->memo, sizeof *p->memo,
				       offsetof(struct facts_memo, frames), &probe);
		if (id == MP_TABLE_NONE) {
			if (mp_array_grow((void **)&p->memo, &p->memo_cap, p->nmemo + 1, sizeof *p->memo) != MP_OK ||
			    mp_table_add(&p->memo_index, &probe, (uint32_t)p->nmemo) != MP_OK)
				return MP_E_NOMEM;
			p->memo[p->nmemo] = facts_of(snap, e->frames);
			p->any_op |= p->memo[p->nmemo].op != 0;
			id = (uint32_t)p->nmemo++;
		}
		p->memo_of[i] = id;
	}
	return MP_OK;
}

static mp_err add_event(struct phases *p, const mp_trace_entry *e, size_t i, bool alloc)
{
	if (mp_array_grow((void **)&p->ev, &p->cap, p->nev + 1, sizeof *p->ev) != MP_OK)
		return MP_E_NOMEM;
	p->ev[p->nev++] = (struct event){ e->addr, i, alloc, false };
	return MP_OK;
}

static bool is_free(const mp_keys *k, const mp_trace_entry *e)
{
	return mp_val_is(e->action, k->free_requested) || mp_val_is(e->action, k->free_completed);
}

/* The backward windows of device ring L: each alloc made in one gets MP_PHASE_BACKWARD,
   and MP_PHASE_OUTLIVES_BACKWARD when no free of its address follows in the window; *FOUND counts them. What
   Python made outside a forward, after the last one and before a window opened, gets MP_PHASE_BEFORE_BACKWARD. */
static mp_err windows(struct phases *p, const mp_trace_list *l, size_t *found)
{
	const mp_snapshot *snap = p->c->snap;
	bool open = false, forward = false; /* a window is open; a forward ran since the last one */
	uint64_t root = 0; /* the outermost Python frame of the entry that opened the window */

	p->ntail = 0;
	p->nev = 0;
	for (size_t j = 0; j <= l->n; j++) {
		const mp_trace_entry *e = j < l->n ? &snap->trace[l->first + j] : NULL;
		enum frames_kind kind = e != NULL ? (enum frames_kind)(facts(p, l->first + j)->facts & FACT_KIND) : FK_OTHER_PYTHON;
		bool alloc = e != NULL && mp_val_is(e->action, p->k->alloc);

		/* the pass's own entries: no Python, or Python on another thread than the one that entered it */
		bool in_pass = e != NULL && open && (kind == FK_NO_PYTHON ||
						  (kind == FK_OTHER_PYTHON && root != 0 && facts(p, l->first + j)->root != root));

		if (in_pass && e->present & MP_F_TR_ADDR && (alloc || is_free(p->k, e))) {
			if (add_event(p, e, l->first + j, alloc) != MP_OK)
				return MP_E_NOMEM;
			if (alloc) {
				p->c->phase[l->first + j] |= MP_PHASE_BACKWARD;
				++*found;
			}
		}
		/* what the job computes from a forward's output before its backward pass (the loss) */
		if (!open && e != NULL && (facts(p, l->first + j)->facts & FACT_FORWARD)) {
			forward = true;
			p->ntail = 0; /* a later forward: what came between fed no pass */
		} else if (!open && forward && alloc && kind == FK_OTHER_PYTHON && (e->present & MP_F_TR_ADDR)) {
			if (mp_array_grow((void **)&p->tail, &p->tail_cap, p->ntail + 1, sizeof *p->tail) != MP_OK)
				return MP_E_NOMEM;
			p->tail[p->ntail++] = l->first + j;
		}
		if (kind == FK_BACKWARD && !open) {
			open = true;
			root = facts(p, l->first + j)->root;
			for (size_t t = 0; t < p->ntail; t++)
				p->c->phase[p->tail[t]] |= MP_PHASE_BEFORE_BACKWARD;
			p->ntail = 0;
			forward = false;
		} else if (kind == FK_OTHER_PYTHON && open &&
			   (e == NULL || root == 0 || facts(p, l->first + j)->root == root)) {
			/* the main thread is back: the window closes */
			mp_sort(p->ev, p->nev, sizeof *p->ev, cmp_event);
			mark_unfreed(p->ev, p->nev, p->c->phase, MP_PHASE_OUTLIVES_BACKWARD);
			p->nev = 0;
			open = false;
		}
	}
	return MP_OK;
}

/* Every alloc and free of device ring L with an address, into P->EV sorted by (address, ring order), the allocs
   the job's own code made outside a forward marked: the three passes below share it. */
static mp_err device_events(struct phases *p, const mp_trace_list *l)
{
	const mp_snapshot *snap = p->c->snap;

	p->nev = 0;
	for (size_t j = 0; j < l->n; j++) {
		const mp_trace_entry *e = &snap->trace[l->first + j];
		bool alloc = mp_val_is(e->action, p->k->alloc);

		if (!(alloc || is_free(p->k, e)) || !(e->present & MP_F_TR_ADDR))
			continue;
		if (add_event(p, e, l->first + j, alloc) != MP_OK)
			return MP_E_NOMEM;
		p->ev[p->nev - 1].own = alloc && (facts(p, l->first + j)->facts & FACT_OWN);
	}
	mp_sort(p->ev, p->nev, sizeof *p->ev, cmp_event);
	return MP_OK;
}

/* What the job's own code made outside any forward and still held when the next forward began, in device ring
   L (its events in P->EV): MP_PHASE_BEFORE_FORWARD. */
static mp_err inputs(struct phases *p, const mp_trace_list *l)
{
	size_t *forwards = NULL, nfw = 0, cap = 0;

	for (size_t j = 0; j < l->n; j++)
		if ((facts(p, l->first + j)->facts & FACT_FORWARD)) {
			if (mp_array_grow((void **)&forwards, &cap, nfw + 1, sizeof *forwards) != MP_OK) {
				free(forwards);
				return MP_E_NOMEM;
			}
			forwards[nfw++] = l->first + j;
		}
	for (size_t k = 0; k < p->nev && nfw > 0; k++) {
		const struct event *v = &p->ev[k];
		size_t until = k + 1 < p->nev && p->ev[k + 1].addr == v->addr ? p->ev[k + 1].i : SIZE_MAX;
		size_t lo = 0, hi = nfw;

		if (!v->own)
			continue;
		while (lo < hi) { /* the first forward after the alloc */
			size_t mid = lo + (hi - lo) / 2;

			if (forwards[mid] <= v->i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nfw && forwards[lo] < until)
			p->c->phase[v->i] |= MP_PHASE_BEFORE_FORWARD;
	}
	free(forwards);
	return MP_OK;
}

/* What an operator called inside another made and freed before the outer call ended, in device ring L:
   MP_PHASE_WITHIN_OPERATOR. One outer call is a run of consecutive entries with the same outermost operator
   frame; an alloc and the next event at its address (its free) in one run lived within it. */
static mp_err within_operators(struct phases *p, const mp_trace_list *l)
{
	size_t *run = l->n > 0 ? malloc(l->n * sizeof *run) : NULL;

	if (l->n > 0 && run == NULL)
		return MP_E_NOMEM;
	for (size_t j = 0; j < l->n; j++) {
		size_t i = l->first + j;

		run[j] = j == 0 ? 0 : run[j - 1] + (facts(p, i)->op == 0 || facts(p, i)->op != facts(p, i - 1)->op);
	}
	for (size_t k = 0; k + 1 < p->nev; k++) {
		const struct event *a = &p->ev[k], *f = &p->ev[k + 1];

		if (a->alloc && !f->alloc && f->addr == a->addr && (facts(p, a->i)->facts & FACT_NESTED_OP) &&
		    run[a->i - l->first] == run[f->i - l->first])
			p->c->phase[a->i] |= MP_PHASE_WITHIN_OPERATOR;
	}
	free(run);
	return MP_OK;
}

static int cmp_size(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

static bool active(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	(void)snap;
	(void)ctx;
	return r->state & (MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE);
}

/* The sizes of what the rules (before any phase) call PARAMETER: the ring's allocations (their
   requested sizes) and the snapshot's blocks (theirs: parameters made before the ring); then each backward
   allocation of one of those sizes gets MP_PHASE_PARAMETER_SIZE. */
static mp_err parameter_sizes(struct phases *p)
{
	mp_category_classifier *c = p->c;
	const mp_snapshot *snap = c->snap;
	int64_t *sizes = NULL;
	size_t n = 0, cap = 0, nrefs = 0;
	mp_block_ref *refs = NULL;
	mp_category_why why;
	mp_err err = mp_block_refs_collect(snap, active, NULL, &refs, &nrefs, "categories", c->diag);

	for (size_t i = 0; i < nrefs && err == MP_OK; i++)
		if ((err = mp_category_classify(c, &refs[i], &why)) == MP_OK && why.category == MP_CAT_PARAMETER &&
		    (err = mp_array_grow((void **)&sizes, &cap, n + 1, sizeof *sizes)) == MP_OK)
			sizes[n++] = snap->blocks[refs[i].block].requested_size;
	for (size_t i = 0; i < snap->ntrace && err == MP_OK; i++) {
		const mp_trace_entry *e = &snap->trace[i];

		if (!mp_val_is(e->action, p->k->alloc) || (c->phase[i] & MP_PHASE_BACKWARD))
			continue;
		if ((err = mp_category_classify_entry(c, e, true, &why)) == MP_OK && why.category == MP_CAT_PARAMETER &&
		    (err = mp_array_grow((void **)&sizes, &cap, n + 1, sizeof *sizes)) == MP_OK)
			sizes[n++] = e->size;
	}
	if (err == MP_OK && n > 0) { /* no parameter anywhere: no size to meet (and bsearch takes no NULL) */
		mp_sort(sizes, n, sizeof *sizes, cmp_size);
		for (size_t i = 0; i < snap->ntrace; i++)
			if ((c->phase[i] & MP_PHASE_BACKWARD) &&
			    bsearch(&snap->trace[i].size, sizes, n, sizeof *sizes, cmp_size) != NULL)
				c->phase[i] |= MP_PHASE_PARAMETER_SIZE;
	}
	free(refs);
	free(sizes);
	return err;
}

static int cmp_live(const void *pa, const void *pb)
{
	const category_live *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

/* The allocations of device D (its events in P->EV) with a phase, still live at the end of its ring: a block's
   phases, appended to C->LIVE (sorted by the caller). */
static mp_err live_at_end(struct phases *p, size_t d, size_t *cap)
{
	mp_category_classifier *c = p->c;

	for (size_t j = 0; j < p->nev; j++) {
		const struct event *v = &p->ev[j];

		if (!v->alloc || c->phase[v->i] == 0 || (j + 1 < p->nev && p->ev[j + 1].addr == v->addr))
			continue;
		if (mp_array_grow((void **)&c->live, cap, c->nlive + 1, sizeof *c->live) != MP_OK)
			return MP_E_NOMEM;
		c->live[c->nlive++] = (category_live){ (int64_t)d, v->addr, c->phase[v->i] };
	}
	return MP_OK;
}

/* Whether device ring L can have a phase besides its windows': a forward, or C++ operator frames. */
static bool more_phases(const struct phases *p, const mp_trace_list *l)
{
	if (p->any_op)
		return true;
	for (size_t j = 0; j < l->n; j++)
		if (facts(p, l->first + j)->facts & (FACT_FORWARD | FACT_OWN))
			return true;
	return false;
}

mp_err category_phases_index(mp_category_classifier *c)
{
	struct phases p = { .c = c, .k = mp_heap_keys(c->snap->heap) };
	size_t found = 0, any = 0, live_cap = 0;
	mp_err err = MP_OK;

	if (c->snap->ntrace == 0)
		return MP_OK;
	if ((c->phase = calloc(c->snap->ntrace, 1)) == NULL)
		return mp_fail(c->diag, MP_E_NOMEM, "categories: out of memory");
	/* the windows first on every ring: the parameter sizes leave their allocations out */
	err = trace_facts(&p);
	for (size_t d = 0; d < c->snap->ndevice_traces && err == MP_OK; d++)
		err = windows(&p, &c->snap->device_traces[d], &found);
	if (err == MP_OK && found > 0)
		err = parameter_sizes(&p);
	/* per device, one sorted list of its allocs and frees for the inputs, the operators and what is left live */
	for (size_t d = 0; d < c->snap->ndevice_traces && err == MP_OK; d++) {
		const mp_trace_list *l = &c->snap->device_traces[d];

		if (found == 0 && !more_phases(&p, l))
			continue;
		if ((err = device_events(&p, l)) == MP_OK && (err = inputs(&p, l)) == MP_OK && p.any_op)
			err = within_operators(&p, l); /* not with Python frames only */
		if (err == MP_OK)
			err = live_at_end(&p, d, &live_cap);
	}
	for (size_t i = 0; i < c->snap->ntrace && err == MP_OK && any == 0; i++)
		any += c->phase[i] != 0;
	if (err == MP_OK)
		mp_sort(c->live, c->nlive, sizeof *c->live, cmp_live);
	free(p.ev);
	free(p.tail);
	free(p.memo_of);
	free(p.memo);
	mp_table_free(&p.memo_index);
	if (any == 0) { /* no phase anywhere in the ring: nothing to say, nothing to keep */
		free(c->phase);
		c->phase = NULL;
	}
	return err == MP_OK ? MP_OK : mp_fail(c->diag, err, "categories: out of memory");
}

unsigned category_entry_phases(const mp_category_classifier *c, size_t i)
{
	return c->phase != NULL && i < c->snap->ntrace ? c->phase[i] : 0;
}

unsigned category_block_phases(const mp_category_classifier *c, int64_t device, int64_t addr)
{
	category_live key = { device, addr, 0 };
	const category_live *hit = c->nlive ? bsearch(&key, c->live, c->nlive, sizeof *c->live, cmp_live) : NULL;

	return hit != NULL ? hit->phases : 0;
}

/* test_walk_image.c - the whole walk (mp_walk_run) on hand-built allocator images
   (allocator_image.h) served by the callback target: a normal walk on every built-in layout
   table equals the model, and each kind of damage the walker claims to handle gives its error
   or its warning and a partial result, never a crash, a hang or an unbounded allocation (the
   second pass of tests/run-all.sh runs this under ASan+UBSan; the plain pass under an address
   space limit, see main). Damage the layout self-check would refuse is also put to the stage
   behind it (wk_segments, wk_trace) directly, as a live process caught mid-update reaches it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "allocator_image.h"
#include "mp_target.h"
#include "unit_main.h"
#include "walk_int.h"

#define MIB (1024ull * 1024)
#define IMAGE_SIZE (2u << 20)

/* ---- running a walk */

enum { MAX_WARNINGS = 64 };

struct run {
	mp_walk *w;
	mp_err err;
	mp_diag diag;
	char warnings[MAX_WARNINGS][512];
	size_t nwarnings;
};

static void keep_warning(void *ctx, const char *line)
{
	struct run *r = ctx;

	if (r->nwarnings < MAX_WARNINGS)
		snprintf(r->warnings[r->nwarnings++], sizeof r->warnings[0], "%s", line);
}

/* Walk IMG with OPTS (NULL: none) and its layout only. */
static void run_walk(struct ai_image *img, const mp_walk_opts *opts, struct run *r)
{
	mp_walk_opts o = opts != NULL ? *opts : (mp_walk_opts){ 0 };
	mp_target *t = ai_target(img);

	memset(r, 0, sizeof *r);
	r->diag.warn = keep_warning;
	r->diag.warn_ctx = r;
	o.layout = img->L;
	r->err = mp_walk_run(t, &img->c10, &o, &r->w, &r->diag);
	mp_target_close(t);
}

static void run_free(struct run *r)
{
	mp_walk_free(r->w);
	r->w = NULL;
}

static void show_warnings(const struct run *r)
{
	for (size_t i = 0; i < r->nwarnings; i++)
		fprintf(stderr, "    warning: %s\n", r->warnings[i]);
}

/* Whether a warning contains TEXT (all of them shown when not). */
/* Whether a warning has TEXT, without a word when none has (for what must not be warned). */
static bool has_warning(const struct run *r, const char *text)
{
	for (size_t i = 0; i < r->nwarnings; i++)
		if (strstr(r->warnings[i], text) != NULL)
			return true;
	return false;
}

static bool warned(const struct run *r, const char *text)
{
	for (size_t i = 0; i < r->nwarnings; i++)
		if (strstr(r->warnings[i], text) != NULL)
			return true;
	fprintf(stderr, "\n  no warning has '%s':\n", text);
	show_warnings(r);
	return false;
}

/* The walk failed with ERR and a message containing TEXT. */
static void expect_error(const struct run *r, mp_err err, const char *text)
{
	CU_ASSERT_EQUAL(r->err, err);
	CU_ASSERT_PTR_NULL(r->w);
	CU_ASSERT_PTR_NOT_NULL(strstr(r->diag.msg, text));
	if (r->err != err || strstr(r->diag.msg, text) == NULL)
		fprintf(stderr, "\n  wanted %s '%s', got %s '%s'\n", mp_strerror(err), text, mp_strerror(r->err),
			r->diag.msg);
}

/* The walk succeeded, partial, with a warning containing TEXT. */
static void expect_partial(const struct run *r, const char *text)
{
	if (r->err != MP_OK)
		fprintf(stderr, "\n  wanted a partial walk ('%s'), got %s '%s'\n", text, mp_strerror(r->err), r->diag.msg);
	CU_ASSERT_EQUAL_FATAL(r->err, MP_OK);
	CU_ASSERT(r->w->partial);
	CU_ASSERT(warned(r, text));
}

/* ---- the walk against the model */

static enum mp_walk_state state_of(enum ai_state s)
{
	switch (s) {
	case AI_ALLOC:
		return MP_WS_ACTIVE_ALLOCATED;
	case AI_PENDING_EVENT:
	case AI_PENDING_USE:
		return MP_WS_ACTIVE_PENDING_FREE;
	default:
		return MP_WS_INACTIVE;
	}
}

/* Model segment S's mapped run of blocks [I, J) against G (NULL: the walk lacks it). */
static void check_run(const mp_walk *w, const mp_walk_segment *g, int device, const struct ai_device *md,
		      const struct ai_segment *s, size_t i, size_t j)
{
	uint64_t total = 0, allocated = 0, active = 0, requested = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(g->device, device);
	CU_ASSERT_EQUAL(g->address, s->blocks[i].ptr);
	CU_ASSERT_EQUAL(g->stream, s->stream);
	CU_ASSERT_EQUAL(g->is_large, !s->small);
	CU_ASSERT_EQUAL(g->is_expandable, s->expandable);
	CU_ASSERT_EQUAL(g->context, i == 0 ? s->context : 0);
	CU_ASSERT_EQUAL(g->pool_id[0], s->private_pool == AI_OWN_POOLS ? 0 : md->pools[s->private_pool].id[0]);
	CU_ASSERT_EQUAL(g->pool_id[1], s->private_pool == AI_OWN_POOLS ? 0 : md->pools[s->private_pool].id[1]);
	CU_ASSERT_EQUAL_FATAL(g->nblocks, j - i);
	for (size_t k = i; k < j; k++) {
		const struct ai_block *b = &s->blocks[k];
		const mp_walk_block *wb = &w->blocks[g->first_block + (k - i)];
		enum mp_walk_state st = state_of(b->state);

		CU_ASSERT_EQUAL(wb->ptr, b->ptr);
		CU_ASSERT_EQUAL(wb->size, b->size);
		CU_ASSERT_EQUAL(wb->requested_size, b->requested);
		CU_ASSERT_EQUAL(wb->context, b->context);
		CU_ASSERT_EQUAL(wb->state, st);
		total += b->size;
		allocated += st == MP_WS_ACTIVE_ALLOCATED ? b->size : 0;
		active += st != MP_WS_INACTIVE ? b->size : 0;
		requested += st != MP_WS_INACTIVE ? b->requested : 0;
	}
	CU_ASSERT_EQUAL(g->total_size, total);
	CU_ASSERT_EQUAL(g->allocated_size, allocated);
	CU_ASSERT_EQUAL(g->active_size, active);
	CU_ASSERT_EQUAL(g->requested_size, requested);
}

/* Every segment and block of model M (each mapped run a segment, in address order), and only them. */
static void check_segments(const struct ai_model *m, const mp_walk *w)
{
	size_t k = 0;

	for (size_t d = 0; d < m->ndevices; d++)
		for (size_t si = 0; si < m->devices[d].nsegments; si++) {
			const struct ai_segment *s = &m->devices[d].segments[si];

			for (size_t i = 0, j; i < s->nblocks; i = j) {
				for (j = i; j < s->nblocks && s->blocks[j].state != AI_UNMAPPED; j++)
					;
				if (j == i) {
					j++;
					continue;
				}
				check_run(w, k < w->nsegments ? &w->segments[k] : NULL, (int)d, &m->devices[d], s, i, j);
				k++;
			}
		}
	CU_ASSERT_EQUAL(k, w->nsegments);
}

static void check_trace(const struct ai_model *m, const mp_walk *w, const mp_layout *l)
{
	for (size_t d = 0; d < m->ndevices; d++) {
		const struct ai_device *md = &m->devices[d];
		const mp_walk_device *dev = &w->devices[d];

		CU_ASSERT_EQUAL(dev->record_history, md->record_history);
		CU_ASSERT_EQUAL(dev->ring_max_entries, md->ring_max ? md->ring_max : 64);
		CU_ASSERT_EQUAL_FATAL(dev->ntrace, md->ntrace);
		for (size_t i = 0; i < md->ntrace; i++) {
			const struct ai_trace *t = &md->trace[i];
			const mp_walk_trace *tr = &w->trace[dev->first_trace + i];
			bool strings = l->off[MP_L_TE_COMPILE_CONTEXT] != MP_LAYOUT_ABSENT;

			CU_ASSERT_EQUAL(tr->action, t->action);
			CU_ASSERT_EQUAL(tr->device, (int)d);
			CU_ASSERT_EQUAL(tr->addr, t->addr);
			CU_ASSERT_EQUAL(tr->size, t->size);
			CU_ASSERT_EQUAL(tr->stream, t->stream);
			CU_ASSERT_EQUAL(tr->tsc, l->off[MP_L_TE_TIME] != MP_LAYOUT_ABSENT ? t->time : 0);
			CU_ASSERT_EQUAL(tr->context, t->context);
			if (l->off[MP_L_TE_MEMPOOL] != MP_LAYOUT_ABSENT) {
				CU_ASSERT_EQUAL(tr->mempool[0], t->mempool[0]);
				CU_ASSERT_EQUAL(tr->mempool[1], t->mempool[1]);
			}
			/* compile_context from 2.8 on, user_metadata from 2.10 on */
			if (strings) {
				CU_ASSERT_PTR_NOT_NULL_FATAL(tr->compile_context);
				CU_ASSERT_STRING_EQUAL(tr->compile_context, t->compile_context ? t->compile_context : "");
			} else {
				CU_ASSERT_PTR_NULL(tr->compile_context);
			}
			if (l->off[MP_L_TE_USER_METADATA] != MP_LAYOUT_ABSENT) {
				CU_ASSERT_PTR_NOT_NULL_FATAL(tr->user_metadata);
				CU_ASSERT_STRING_EQUAL(tr->user_metadata, t->user_metadata ? t->user_metadata : "");
			} else {
				CU_ASSERT_PTR_NULL(tr->user_metadata);
			}
			/* Estimated times (the made-up clock is not this machine's): in order, after the
			   process's first clock pair (1.7e18 ns). */
			if (l->off[MP_L_TE_TIME] == MP_LAYOUT_ABSENT) { /* 2.1: no time to convert */
				CU_ASSERT_EQUAL(tr->time_us, 0);
				continue;
			}
			CU_ASSERT(tr->time_us >= 1700000000000000);
			if (i > 0)
				CU_ASSERT(tr->time_us >= w->trace[dev->first_trace + i - 1].time_us);
		}
	}
}

static int64_t stat_of(const mp_walk_device *dev, const char *key)
{
	for (size_t i = 0; i < dev->stats.n; i++)
		if (strcmp(dev->stats.v[i].key, key) == 0)
			return dev->stats.v[i].value;
	return INT64_MIN;
}

/* The statistics memory_stats() would give, from the model's blocks. */
static void check_stats(const struct ai_model *m, const mp_walk *w)
{
	for (size_t d = 0; d < m->ndevices; d++) {
		const struct ai_device *md = &m->devices[d];
		const mp_walk_device *dev = &w->devices[d];
		int64_t allocs = 0, allocated = 0, active = 0, reserved = 0, requested = 0, segments = 0,
			small_reserved = 0;

		for (size_t si = 0; si < md->nsegments; si++) {
			const struct ai_segment *s = &md->segments[si];

			segments += !s->expandable;
			for (size_t i = 0; i < s->nblocks; i++) {
				const struct ai_block *b = &s->blocks[i];
				enum mp_walk_state st = state_of(b->state);

				allocs += b->state == AI_ALLOC;
				allocated += b->state == AI_ALLOC ? (int64_t)b->size : 0;
				active += st != MP_WS_INACTIVE ? (int64_t)b->size : 0;
				requested += st != MP_WS_INACTIVE ? (int64_t)b->requested : 0;
				reserved += b->state != AI_UNMAPPED ? (int64_t)b->size : 0;
				small_reserved += b->state != AI_UNMAPPED && s->small ? (int64_t)b->size : 0;
			}
		}
		CU_ASSERT_EQUAL(dev->index, (int)d);
		CU_ASSERT_EQUAL(dev->address, md->dca);
		CU_ASSERT_EQUAL(dev->stats.device, (int)d);
		CU_ASSERT_EQUAL(stat_of(dev, "allocation.all.current"), allocs);
		CU_ASSERT_EQUAL(stat_of(dev, "allocated_bytes.all.current"), allocated);
		CU_ASSERT_EQUAL(stat_of(dev, "allocated_bytes.all.peak"), allocated);
		CU_ASSERT_EQUAL(stat_of(dev, "active_bytes.all.current"), active);
		CU_ASSERT_EQUAL(stat_of(dev, "requested_bytes.all.current"), requested);
		CU_ASSERT_EQUAL(stat_of(dev, "reserved_bytes.all.current"), reserved);
		CU_ASSERT_EQUAL(stat_of(dev, "reserved_bytes.small_pool.current"), small_reserved);
		CU_ASSERT_EQUAL(stat_of(dev, "reserved_bytes.large_pool.current"), reserved - small_reserved);
		CU_ASSERT_EQUAL(stat_of(dev, "segment.all.current"), segments);
		CU_ASSERT_EQUAL(stat_of(dev, "num_ooms"), md->num_ooms);
		CU_ASSERT_EQUAL(stat_of(dev, "num_alloc_retries"), md->num_alloc_retries);
		/* 2.1 and 2.2 count no device allocations: no such key */
		CU_ASSERT_EQUAL(stat_of(dev, "num_device_alloc"),
				w->layout.off[MP_L_DS_NUM_DEVICE_ALLOC] != MP_LAYOUT_ABSENT ? 11 : INT64_MIN);
		CU_ASSERT_EQUAL(stat_of(dev, "max_split_size"), -1);
	}
}

static void check_settings(const struct ai_model *m, const mp_walk *w)
{
	const mp_walk_settings *s = &w->settings;

	if (w->layout.off[MP_L_CFG_LAST_ALLOCATOR_SETTINGS] == MP_LAYOUT_ABSENT &&
	    w->layout.off[MP_L_AAC_LAST_ALLOCATOR_SETTINGS] == MP_LAYOUT_ABSENT) {
		CU_ASSERT_FALSE(s->present); /* 2.1, 2.2: their snapshot() has no allocator_settings either */
		return;
	}
	CU_ASSERT_FATAL(s->present);
	CU_ASSERT_STRING_EQUAL(s->last_settings, m->settings);
	CU_ASSERT_EQUAL(s->max_split_size, (int64_t)(64 * MIB));
	CU_ASSERT_DOUBLE_EQUAL(s->garbage_collection_threshold, 0.8, 0.0);
	CU_ASSERT(s->expandable_segments);
	CU_ASSERT_EQUAL(s->pinned_num_register_threads, 8);
	CU_ASSERT(s->release_lock_on_cudamalloc);
	CU_ASSERT_EQUAL(s->roundup_power2_divisions[3], 4);
	CU_ASSERT_EQUAL(s->roundup_power2_divisions[4], 0);
}

/* The walk is the model, whole, with no damage reported. */
static void check_exact(const struct ai_model *m, const struct run *r, const mp_layout *l)
{
	CU_ASSERT_EQUAL_FATAL(r->err, MP_OK);
	CU_ASSERT_FALSE(r->w->partial);
	CU_ASSERT_EQUAL_FATAL(r->w->ndevices, m->ndevices);
	check_segments(m, r->w);
	check_stats(m, r->w);
	check_trace(m, r->w, l);
	check_settings(m, r->w);
}

/* ---- fixtures of the tests */

static const mp_layout *builtin(const char *name)
{
	const mp_layout *l = mp_layout_builtin_named(name);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	return l;
}

/* The standard model on an image with layout NAME. */
static void standard(struct ai_image *img, struct ai_model *m, const char *name)
{
	ai_model_standard(m);
	ai_image_init(img, builtin(name), IMAGE_SIZE);
	ai_build(img, m);
}

/* The same with every object on pages of its own (for holes). */
static void standard_isolated(struct ai_image *img, struct ai_model *m, const char *name)
{
	ai_model_standard(m);
	ai_image_init(img, builtin(name), 4 * IMAGE_SIZE);
	img->isolate = true;
	ai_build(img, m);
}

static void done(struct ai_image *img, struct ai_model *m, struct run *r)
{
	run_free(r);
	ai_image_free(img);
	ai_model_free(m);
}

/* ---- the normal walk */

/* A build no table fits: 2.6's layout with an 8-byte member more before Block.size and before the
   DeviceCachingAllocator's pools (as newer releases added). The walk infers it from the nearest table and is
   exact, and says so in one warning besides the clock's. */
static void test_inferred_layout(void)
{
	static const enum mp_layout_field block_after[] = {
		MP_L_BLOCK_SIZE, MP_L_BLOCK_REQUESTED_SIZE, MP_L_BLOCK_POOL, MP_L_BLOCK_PTR, MP_L_BLOCK_ALLOCATED,
		MP_L_BLOCK_MAPPED, MP_L_BLOCK_PREV, MP_L_BLOCK_NEXT, MP_L_BLOCK_EVENT_COUNT,
		MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED, MP_L_BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED,
		MP_L_BLOCK_EXPANDABLE_SEGMENT, MP_L_BLOCK_SIZEOF };
	mp_layout mutant = *builtin("torch-2.6");
	mp_walk_opts opts = { 0 };
	struct ai_model m;
	struct ai_image img;
	struct run r;
	mp_target *t;

	for (size_t i = 0; i < sizeof block_after / sizeof block_after[0]; i++)
		mutant.off[block_after[i]] += 8;
	for (int f = MP_L_DCA_LARGE_BLOCKS; f <= MP_L_DCA_GRAPH_POOLS_FREEABLE; f++)
		mutant.off[f] += 8;
	mutant.off[MP_L_DCA_SIZEOF] += 8;
	snprintf(mutant.name, sizeof mutant.name, "mutant");
	ai_model_standard(&m);
	ai_image_init(&img, &mutant, IMAGE_SIZE);
	ai_build(&img, &m);
	memset(&r, 0, sizeof r);
	r.diag.warn = keep_warning;
	r.diag.warn_ctx = &r;
	t = ai_target(&img);
	r.err = mp_walk_run(t, &img.c10, &opts, &r.w, &r.diag); /* no --layout: the tables, then inference */
	mp_target_close(t);
	check_exact(&m, &r, &mutant);
	CU_ASSERT_STRING_EQUAL(r.w->layout.name, "inferred");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.w->layout.source, "inferred from torch-2.6"));
	for (int f = 0; f < MP_L__COUNT; f++)
		if (f < MP_L_CFG_SIZEOF && mutant.off[f] != r.w->layout.off[f] && f != MP_L_DCA_SIZEOF &&
		    f != MP_L_PP_SIZEOF && f != MP_L_NCA_CLOCK_CONVERTER)
			CU_FAIL("an inferred member differs from the image's");
	CU_ASSERT(warned(&r, "walked with a layout inferred from torch-2.6"));
	CU_ASSERT(warned(&r, "trace times are estimates"));
	if (r.nwarnings != 2)
		show_warnings(&r);
	CU_ASSERT_EQUAL(r.nwarnings, 2);
	done(&img, &m, &r);

	/* Statistics that break their own invariant (all != small + large): nothing places them, the walk is
	   refused in one message, not guessed. */
	ai_model_standard(&m);
	ai_image_init(&img, &mutant, IMAGE_SIZE);
	ai_build(&img, &m);
	ai_put64(&img, m.devices[0].dca + (uint64_t)mutant.off[MP_L_DCA_STATS] + (uint64_t)mutant.off[MP_L_DS_ALLOCATION],
		 12345);
	memset(&r, 0, sizeof r);
	r.diag.warn = keep_warning;
	r.diag.warn_ctx = &r;
	t = ai_target(&img);
	r.err = mp_walk_run(t, &img.c10, &opts, &r.w, &r.diag);
	mp_target_close(t);
	CU_ASSERT_NOT_EQUAL(r.err, MP_OK);
	CU_ASSERT_PTR_NULL(r.w);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag.msg, "no known layout fits"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag.msg, "inferred from torch-2.6, no layout fit either"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag.msg, "statistics"));
	done(&img, &m, &r);
}

static void test_normal_every_table(void)
{
	for (size_t i = 0; i < mp_layout_builtin_count(); i++) {
		const mp_layout *l = mp_layout_builtin(i);
		struct ai_model m;
		struct ai_image img;
		struct run r;

		ai_model_standard(&m);
		ai_image_init(&img, l, IMAGE_SIZE);
		ai_build(&img, &m);
		run_walk(&img, NULL, &r);
		check_exact(&m, &r, l);
		/* 4 segments of device 0 (the expandable one gives 2), 1 of device 1; 8 + 0 entries. 2.0 has no
		   expandable segments: its fourth segment is an ordinary one (its unmapped blocks left out, as the
		   walk leaves them out of the others). */
		bool expandable = l->off[MP_L_BLOCK_EXPANDABLE_SEGMENT] != MP_LAYOUT_ABSENT;

		CU_ASSERT_EQUAL(r.w->nsegments, expandable ? 6 : 5);
		CU_ASSERT_EQUAL(r.w->nblocks, 14);
		CU_ASSERT_EQUAL(r.w->ntrace, 8);
		CU_ASSERT_EQUAL(r.w->segments[2].pool_id[1], 7);
		/* The one warning: the made-up clock is another machine's. Releases before 2.3 have no settings
		   to report (a warning says so) and 2.1 no times (none to estimate). */
		bool times = l->off[MP_L_TE_TIME] != MP_LAYOUT_ABSENT;
		bool settings = l->off[MP_L_CFG_LAST_ALLOCATOR_SETTINGS] != MP_LAYOUT_ABSENT ||
				l->off[MP_L_AAC_LAST_ALLOCATOR_SETTINGS] != MP_LAYOUT_ABSENT;
		size_t want = (size_t)times + (size_t)!settings;

		CU_ASSERT_EQUAL(r.nwarnings, want);
		CU_ASSERT_EQUAL(has_warning(&r, "trace times are estimates"), times);
		CU_ASSERT_EQUAL(has_warning(&r, "allocator_settings is left out"), !settings);
		CU_ASSERT_FALSE(r.w->time_exact);
		CU_ASSERT_EQUAL(r.w->allocator, img.allocator);
		CU_ASSERT_STRING_EQUAL(r.w->layout.name, l->name);
		if (r.err != MP_OK || r.w->partial || r.nwarnings != want) {
			fprintf(stderr, "\n  layout %s: %s %s\n", l->name, mp_strerror(r.err), r.diag.msg);
			show_warnings(&r);
		}
		done(&img, &m, &r);
	}
}

/* ---- finding the allocator (walk_find.c) */

static void test_find_refused(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	uint64_t typeinfo, other;

	standard(&img, &m, "torch-2.6");
	img.c10.allocator_ptr_addr = 0;
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_NOTFOUND, "/fake/libc10_cuda.so exports no CUDACachingAllocator::allocator");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_hole(&img, img.c10.allocator_ptr_addr, 8);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_NOTFOUND, "cannot read the allocator pointer at 0x");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put64(&img, img.c10.allocator_ptr_addr, 0);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_NOTFOUND, "caching allocator is not initialised in this process (allocator pointer is NULL)");
	done(&img, &m, &r);

	/* The RTTI: no vptr, a name in a hole, a name with no NUL in 256 bytes, another backend. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, img.allocator, 0);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "has no readable RTTI name");
	done(&img, &m, &r);

	standard_isolated(&img, &m, "torch-2.6");
	ai_hole(&img, img.rtti_name + 10, 1);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "has no readable RTTI name");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	typeinfo = ai_get64(&img, ai_get64(&img, img.allocator) - 8);
	other = ai_alloc(&img, 400);
	memset(img.mem + (other - img.base), 'N', 400);
	ai_put64(&img, typeinfo + 8, other);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "has no readable RTTI name");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put(&img, img.rtti_name, "N5torch4cuda3ABCE", 18);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_NOTFOUND, "the CUDA allocator backend is N5torch4cuda3ABCE, not the native caching allocator");
	done(&img, &m, &r);
}

/* The device_allocator vector: damaged, empty, with a bad element. */
static void test_device_vector_refused(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	uint64_t vec;

	standard(&img, &m, "torch-2.6");
	vec = ai_at(&img, img.allocator, MP_L_NCA_DEVICE_ALLOCATOR);
	ai_put64(&img, vec, img.das + 16); /* begin > end */
	ai_put64(&img, vec + 8, img.das);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "device_allocator vector of the allocator at 0x");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag.msg, "is not sane"));
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_vector(&img, ai_at(&img, img.allocator, MP_L_NCA_DEVICE_ALLOCATOR), img.das, 121, 8); /* > 120 GPUs */
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_LIMIT, "is not sane");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, img.allocator, MP_L_NCA_DEVICE_ALLOCATOR) + 8, img.das + 12); /* 1.5 elements */
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "is not sane");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_vector(&img, ai_at(&img, img.allocator, MP_L_NCA_DEVICE_ALLOCATOR), 0, 0, 8);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_NOTFOUND, "the caching allocator has no devices (not initialised)");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put64(&img, img.das + 8, 0);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "device allocator 1 is a bad pointer");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put64(&img, img.das, m.devices[0].dca + 4);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "device allocator 0 is a bad pointer");
	done(&img, &m, &r);

	standard_isolated(&img, &m, "torch-2.6");
	ai_hole(&img, img.das + 8, 8);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_NOTFOUND, "cannot read the device_allocator elements at 0x");
	done(&img, &m, &r);
}

/* ---- damage the layout self-check refuses (walk_check.c): one error naming the check */

#define REFUSED_26 "no known layout fits the allocator in /fake/libc10_cuda.so (version 2.6): layout torch-2.6 does not fit: "

/* Damage DAMAGE does to the standard 2.6 image: the walk is refused with WHY. */
static void refused(void (*damage)(struct ai_image *, struct ai_model *), const char *why)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;

	standard(&img, &m, "torch-2.6");
	damage(&img, &m);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, REFUSED_26);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag.msg, why));
	if (strstr(r.diag.msg, why) == NULL)
		fprintf(stderr, "\n  wanted '%s' in '%s'\n", why, r.diag.msg);
	done(&img, &m, &r);
}

#define BLK(m, d, s, b) ((m)->devices[d].segments[s].blocks[b])

static uint64_t stats_at(struct ai_image *img, struct ai_model *m, int d, enum mp_layout_field f)
{
	return ai_at(img, ai_at(img, m->devices[d].dca, MP_L_DCA_STATS), f);
}

static void swap_is_small(struct ai_image *img, struct ai_model *m)
{
	ai_put8(img, ai_at(img, m->devices[0].large, MP_L_BP_IS_SMALL), 1);
}

static void small_tree_header(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, m->devices[0].small, MP_L_BP_BLOCKS) + AI_RB_COUNT, 0); /* 0 nodes, a root */
}

static void tree_count_over_limit(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, m->devices[1].small, MP_L_BP_BLOCKS) + AI_RB_COUNT, (64u << 20) + 1);
}

static void active_slots_not_power_of_two(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, m->devices[0].dca, MP_L_DCA_ACTIVE_BLOCKS) + AI_FLAT_SLOTS_MINUS_ONE, 6);
}

static void active_slots_over_limit(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, m->devices[0].dca, MP_L_DCA_ACTIVE_BLOCKS) + AI_FLAT_SLOTS_MINUS_ONE, (1ull << 33) - 1);
}

static void graph_pools_load(struct ai_image *img, struct ai_model *m)
{
	float load = 0.0f;

	ai_put(img, ai_at(img, m->devices[0].dca, MP_L_DCA_GRAPH_POOLS) + AI_FLAT_LOAD, &load, sizeof load);
}

static void active_count(struct ai_image *img, struct ai_model *m)
{
	/* Device 1 has no active block; its table says 1 (the self-check reads every one of them). */
	ai_put64(img, ai_at(img, m->devices[1].dca, MP_L_DCA_ACTIVE_BLOCKS) + AI_FLAT_COUNT, 1);
}

static uint64_t ring_at(struct ai_image *img, struct ai_model *m, int d, enum mp_layout_field f)
{
	return ai_at(img, m->devices[d].dca, MP_L_DCA_ALLOC_BUFFER) + (uint64_t)img->L->off[f];
}

static void ring_next_beyond(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ring_at(img, m, 0, MP_L_RB_NEXT), 8);
}

static void ring_null_vector_with_next(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ring_at(img, m, 1, MP_L_RB_NEXT), 1);
}

static void ring_over_max(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ring_at(img, m, 0, MP_L_RB_MAX_ENTRIES), 4);
}

static void ring_max_zero(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ring_at(img, m, 1, MP_L_RB_MAX_ENTRIES), 0);
}

static void ring_vector_reversed(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, m->devices[0].ring_vector + 8, m->devices[0].ring_begin - 56);
}

static void reserved_not_total(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, m->devices[0].dca, MP_L_DCA_TOTAL_ALLOCATED_MEMORY), 512);
}

static void peak_below_current(struct ai_image *img, struct ai_model *m)
{
	uint64_t at = stats_at(img, m, 0, MP_L_DS_ALLOCATED_BYTES);

	ai_put64(img, at + 8, ai_get64(img, at) - 512);
}

static void block_device(struct ai_image *img, struct ai_model *m)
{
	ai_put8(img, ai_at(img, BLK(m, 0, 0, 0).addr, MP_L_BLOCK_DEVICE), 1);
}

static void block_size(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, BLK(m, 0, 1, 0).addr, MP_L_BLOCK_SIZE), 1000);
}

static void block_bool(struct ai_image *img, struct ai_model *m)
{
	ai_put8(img, ai_at(img, BLK(m, 0, 1, 0).addr, MP_L_BLOCK_ALLOCATED), 2);
}

static void block_requested(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, BLK(m, 0, 1, 0).addr, MP_L_BLOCK_REQUESTED_SIZE), 1024);
}

static void block_not_linked_back(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, BLK(m, 0, 0, 0).addr, MP_L_BLOCK_NEXT), BLK(m, 0, 0, 3).addr);
}

static void block_gap(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, BLK(m, 0, 0, 1).addr, MP_L_BLOCK_PTR), BLK(m, 0, 0, 1).ptr + 512);
}

static void block_foreign_pool(struct ai_image *img, struct ai_model *m)
{
	ai_put64(img, ai_at(img, BLK(m, 0, 0, 0).addr, MP_L_BLOCK_POOL), m->devices[1].dca);
}

static void test_refused_by_self_check(void)
{
	refused(swap_is_small, "device 0: the large/small BlockPools are not where the layout puts them");
	refused(small_tree_header, "device 0: the large/small BlockPools are not where the layout puts them");
	refused(tree_count_over_limit, "device 1: the large/small BlockPools are not where the layout puts them");
	refused(active_slots_not_power_of_two, "device 0: active_blocks or graph_pools is not a hash table there");
	refused(active_slots_over_limit, "device 0: active_blocks or graph_pools is not a hash table there");
	refused(graph_pools_load, "device 0: active_blocks or graph_pools is not a hash table there");
	refused(active_count, "device 1: its blocks cannot be walked");
	refused(ring_next_beyond, "device 0: alloc_buffer is not a trace ring there");
	refused(ring_null_vector_with_next, "device 1: alloc_buffer is not a trace ring there");
	refused(ring_over_max, "device 0: alloc_buffer is not a trace ring there");
	refused(ring_max_zero, "device 1: alloc_buffer is not a trace ring there");
	refused(ring_vector_reversed, "device 0: alloc_buffer is not a trace ring there");
	refused(reserved_not_total, "device 0: the statistics do not add up");
	refused(peak_below_current, "device 0: the statistics do not add up");
	refused(block_device, "device 0: a block's device is not its allocator's");
	refused(block_size, "device 0: a block fails Block's invariants");
	refused(block_bool, "device 0: a block fails Block's invariants");
	refused(block_requested, "device 0: a block fails Block's invariants");
	refused(block_not_linked_back, "device 0: a block's next does not point back to it");
	refused(block_gap, "device 0: a block and its next are not contiguous");
	refused(block_foreign_pool, "device 0: a block's pool is none of its allocator's pools");
}

/* 2.14 has DeviceCachingAllocator.device_id; a layout whose own members overflow is refused
   before memory is looked at. */
static void test_refused_layout(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	mp_layout bad;

	standard(&img, &m, "torch-2.14-cuda13");
	ai_put8(&img, ai_at(&img, m.devices[1].dca, MP_L_DCA_DEVICE_ID), 0);
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "no known layout fits the allocator in /fake/libc10_cuda.so (version 2.14): "
		     "layout torch-2.14-cuda13 does not fit: device allocator 1 has another device_id");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	bad = *img.L;
	bad.off[MP_L_BLOCK_SIZEOF] = 5000;
	img.L = &bad;
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "does not fit: Block.sizeof 5000 is out of range");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	bad = *img.L;
	bad.off[MP_L_TE_TIME] = 52;
	img.L = &bad;
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "does not fit: TraceEntry.time_ at 52 is outside its 56 bytes");
	done(&img, &m, &r);

	/* The walker reads a RingBuffer's first 64 bytes and takes its members from them (a layout
	   file may put them anywhere below 1 MiB); a ska set is 32 bytes (stream_uses' count is at
	   +24 of it). */
	standard(&img, &m, "torch-2.6");
	bad = *img.L;
	bad.off[MP_L_RB_VECTOR] = 4096;
	img.L = &bad;
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "does not fit: RingBuffer.alloc_trace at 4096 is outside the 64 bytes read of it");
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	bad = *img.L;
	bad.off[MP_L_BLOCK_STREAM_USES] = 144;
	img.L = &bad;
	run_walk(&img, NULL, &r);
	expect_error(&r, MP_E_CORRUPT, "does not fit: Block.stream_uses at 144 is outside its 160 bytes");
	done(&img, &m, &r);
}

/* ---- damage past the self-check: a partial result with a warning */

/* The walk of a stage on its own, as mp_walk_run would run it after the self-check. */
struct stage {
	mp_target *t;
	mp_walk_opts opts;
	struct walk wk;
	mp_walk_device dev;
	struct run r;
};

static void stage_open(struct stage *st, struct ai_image *img, struct ai_model *m, int device)
{
	memset(st, 0, sizeof *st);
	st->r.diag.warn = keep_warning;
	st->r.diag.warn_ctx = &st->r;
	st->t = ai_target(img);
	st->wk = (struct walk){ .t = st->t, .L = img->L, .diag = &st->r.diag, .cxx11_abi = img->L->key.cxx11_abi != 0,
				.max_blocks = 1000, .opts = &st->opts };
	st->wk.w = st->r.w = calloc(1, sizeof *st->wk.w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st->wk.w);
	st->dev.index = device;
	st->dev.address = m->devices[device].dca;
}

static void stage_close(struct stage *st)
{
	mp_walk_free(st->wk.w);
	mp_target_close(st->t);
}


/* A segment of W at ADDRESS on DEVICE, or NULL. */
static const mp_walk_segment *segment_at(const mp_walk *w, int device, uint64_t address)
{
	for (size_t i = 0; i < w->nsegments; i++)
		if (w->segments[i].device == device && w->segments[i].address == address)
			return &w->segments[i];
	return NULL;
}

/* Every mapped run of model M but those of segment SKIP_S of device SKIP_D is in W, exact. */
static void check_others(const struct ai_model *m, const mp_walk *w, size_t skip_d, size_t skip_s)
{
	for (size_t d = 0; d < m->ndevices; d++)
		for (size_t si = 0; si < m->devices[d].nsegments; si++) {
			const struct ai_segment *s = &m->devices[d].segments[si];

			if (d == skip_d && si == skip_s)
				continue;
			for (size_t i = 0, j; i < s->nblocks; i = j) {
				for (j = i; j < s->nblocks && s->blocks[j].state != AI_UNMAPPED; j++)
					;
				if (j == i) {
					j++;
					continue;
				}
				check_run(w, segment_at(w, (int)d, s->blocks[i].ptr), (int)d, &m->devices[d], s, i, j);
			}
		}
}

/* Segment SI of device D in model M reached only its first N blocks. */
static void check_cut(const struct ai_model *m, const mp_walk *w, size_t d, size_t si, size_t n)
{
	const struct ai_segment *s = &m->devices[d].segments[si];

	check_run(w, segment_at(w, (int)d, s->blocks[0].ptr), (int)d, &m->devices[d], s, 0, n);
	check_others(m, w, d, si);
}

static const mp_walk_opts no_trace = { .no_trace = true };

/* A Block chain: next into unmapped memory, next back to the head, to itself, a two-block
   loop, a block that overflows into its next: each cuts its segment short. */
static void test_chain_damage(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	char text[200];

	/* The small segment [alloc, pending, free, alloc]: its free block is sampled by nothing. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 2).addr, MP_L_BLOCK_NEXT), 0x7f9900000000ull);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "segment 0x%llx: block after 0x%llx is unreadable or damaged; segment cut short",
		 (unsigned long long)BLK(&m, 0, 1, 0).ptr, (unsigned long long)BLK(&m, 0, 1, 2).addr);
	expect_partial(&r, text);
	CU_ASSERT_EQUAL(r.nwarnings, 1);
	check_cut(&m, r.w, 0, 1, 3);
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 2).addr, MP_L_BLOCK_NEXT), BLK(&m, 0, 1, 0).addr);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "segment 0x%llx: block 0x%llx does not follow 0x%llx (prev, address or pool differ); "
		 "segment cut short", (unsigned long long)BLK(&m, 0, 1, 0).ptr, (unsigned long long)BLK(&m, 0, 1, 0).addr,
		 (unsigned long long)BLK(&m, 0, 1, 2).addr);
	expect_partial(&r, text);
	check_cut(&m, r.w, 0, 1, 3);
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 2).addr, MP_L_BLOCK_NEXT), BLK(&m, 0, 1, 2).addr);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "does not follow");
	check_cut(&m, r.w, 0, 1, 3);
	done(&img, &m, &r);

	/* head -> 1 -> 2 -> 1 -> ..., 1.prev = 2: the head's next no longer points back. The
	   self-check samples the head (an active block) and refuses it; wk_segments, as a live
	   process caught mid-update meets it, cuts the segment after the head. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 2).addr, MP_L_BLOCK_NEXT), BLK(&m, 0, 1, 1).addr);
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 1).addr, MP_L_BLOCK_PREV), BLK(&m, 0, 1, 2).addr);
	run_walk(&img, &no_trace, &r);
	expect_error(&r, MP_E_CORRUPT, "device 0: a block's next does not point back to it");
	run_free(&r);
	{
		struct stage st;
		struct ai_model one = m;

		one.ndevices = 1;
		stage_open(&st, &img, &m, 0);
		st.r.err = wk_segments(&st.wk, &st.dev);
		expect_partial(&st.r, "does not follow");
		check_cut(&one, st.wk.w, 0, 1, 1);
		stage_close(&st);
	}
	done(&img, &m, &r);

	/* The free block 512 bytes larger: it runs into the next one. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 2).addr, MP_L_BLOCK_SIZE), BLK(&m, 0, 1, 2).size + 512);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "does not follow");
	CU_ASSERT_EQUAL(segment_at(r.w, 0, BLK(&m, 0, 1, 0).ptr)->total_size, 2 * MIB - 512 * 1024 + 512);
	CU_ASSERT_EQUAL(segment_at(r.w, 0, BLK(&m, 0, 1, 0).ptr)->nblocks, 3);
	check_others(&m, r.w, 0, 1);
	done(&img, &m, &r);

	/* A block of another pool after it. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 1, 3).addr, MP_L_BLOCK_POOL), m.devices[0].large);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "does not follow");
	check_cut(&m, r.w, 0, 1, 3);
	done(&img, &m, &r);
}

/* 2.0 keeps a block's context at the head of its history list: a head that cannot be read costs that block its
   context (no frames), not the block; a head in the walk gives the allocation's context. */
static void test_history_head(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	uint64_t head;

	standard_isolated(&img, &m, "torch-2.0-cuda11-oldabi");
	head = ai_get64(&img, ai_at(&img, BLK(&m, 0, 0, 0).addr, MP_L_BLOCK_HISTORY));
	CU_ASSERT_NOT_EQUAL_FATAL(head, 0);
	ai_hole(&img, head, 8);
	run_walk(&img, NULL, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	CU_ASSERT_EQUAL(r.w->nblocks, 14);
	for (size_t i = 0; i < r.w->nblocks; i++) {
		if (r.w->blocks[i].ptr == BLK(&m, 0, 0, 0).ptr)
			CU_ASSERT_EQUAL(r.w->blocks[i].context, 0);
		if (r.w->blocks[i].ptr == BLK(&m, 0, 0, 3).ptr)
			CU_ASSERT_EQUAL(r.w->blocks[i].context, BLK(&m, 0, 0, 3).context);
	}
	CU_ASSERT_NOT_EQUAL(BLK(&m, 0, 0, 3).context, 0);
	done(&img, &m, &r);
}

/* Candidates that cannot be read: a free head in a hole, one that fails Block's invariants. */
static void test_block_unreadable(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	char text[200];

	standard_isolated(&img, &m, "torch-2.6");
	ai_hole(&img, BLK(&m, 1, 0, 0).addr + 64, 8);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "block 0x%llx of device allocator 0x%llx is unreadable or damaged; skipped",
		 (unsigned long long)BLK(&m, 1, 0, 0).addr, (unsigned long long)m.devices[1].dca);
	expect_partial(&r, text);
	CU_ASSERT_PTR_NULL(segment_at(r.w, 1, BLK(&m, 1, 0, 0).ptr));
	check_others(&m, r.w, 1, 0);
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.6");
	ai_put32(&img, ai_at(&img, BLK(&m, 1, 0, 0).addr, MP_L_BLOCK_EVENT_COUNT), (uint32_t)-1);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "block 0x%llx of device allocator 0x%llx is unreadable or damaged; skipped",
		 (unsigned long long)BLK(&m, 1, 0, 0).addr, (unsigned long long)m.devices[1].dca);
	expect_partial(&r, text);
	check_others(&m, r.w, 1, 0);
	done(&img, &m, &r);

	/* A head that says another device (device 1's free block, which the self-check does not
	   sample): its segment is not that device's, and not this one's. */
	standard(&img, &m, "torch-2.6");
	ai_put8(&img, ai_at(&img, BLK(&m, 1, 0, 0).addr, MP_L_BLOCK_DEVICE), 0);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "block 0x%llx of device allocator 0x%llx says device 0; skipped",
		 (unsigned long long)BLK(&m, 1, 0, 0).addr, (unsigned long long)m.devices[1].dca);
	expect_partial(&r, text);
	CU_ASSERT_PTR_NULL(segment_at(r.w, 0, BLK(&m, 1, 0, 0).ptr));
	CU_ASSERT_PTR_NULL(segment_at(r.w, 1, BLK(&m, 1, 0, 0).ptr));
	check_others(&m, r.w, 1, 0);
	done(&img, &m, &r);

	/* A mapped block of an expandable segment whose prev is unreadable: it heads nothing. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, ai_at(&img, BLK(&m, 0, 3, 3).addr, MP_L_BLOCK_PREV), 0x7f9900000000ull);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "block 0x%llx has an unreadable prev 0x7f9900000000",
		 (unsigned long long)BLK(&m, 0, 3, 3).addr);
	expect_partial(&r, text);
	CU_ASSERT_PTR_NULL(segment_at(r.w, 0, BLK(&m, 0, 3, 3).ptr));
	CU_ASSERT_PTR_NOT_NULL(segment_at(r.w, 0, BLK(&m, 0, 3, 0).ptr));
	done(&img, &m, &r);
}

static uint64_t tree_of(struct ai_image *img, uint64_t pool)
{
	return ai_at(img, pool, MP_L_BP_BLOCKS);
}

/* A free-block tree: cycles, too deep, a wrong count, a node in a hole. Only that pool's set is
   lost: the blocks are still reached along their segments. Colours are not read. */
static void test_tree_damage(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	uint64_t node, pool;
	char text[200];

	/* The small pool's one free block: its node's right is itself. */
	standard(&img, &m, "torch-2.6");
	node = BLK(&m, 0, 1, 2).node;
	ai_put64(&img, node + AI_RBN_RIGHT, node);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "the free-block tree of the small pool (pool 0x%llx) is damaged (cyclic structure); "
		 "its blocks may be missing", (unsigned long long)m.devices[0].small);
	expect_partial(&r, text);
	CU_ASSERT_EQUAL(r.nwarnings, 1);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* Left to itself: deeper than any red-black tree. */
	standard(&img, &m, "torch-2.6");
	node = BLK(&m, 0, 1, 2).node;
	ai_put64(&img, node + AI_RBN_LEFT, node);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, text);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* The same with the count forged to the default block limit: the cycle is found when a node
	   comes round again, not after 64 M visits (seconds, and a gigabyte of candidates). */
	standard(&img, &m, "torch-2.6");
	node = BLK(&m, 0, 1, 2).node;
	ai_put64(&img, node + AI_RBN_RIGHT, node);
	ai_put64(&img, tree_of(&img, m.devices[0].small) + AI_RB_COUNT, (64u << 20) - 1);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, text);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* A longer loop: device 0's large pool set (2 nodes: the root and its left child) relinked as
	   root -right-> first -right-> root, put to wk_segments (the self-check samples the large
	   pool and refuses it). */
	standard(&img, &m, "torch-2.6");
	{
		uint64_t tree = tree_of(&img, m.devices[0].large), root = ai_get64(&img, tree + AI_RB_ROOT);
		uint64_t first = ai_get64(&img, tree + AI_RB_LEFTMOST);
		struct stage st;

		CU_ASSERT_EQUAL_FATAL(ai_get64(&img, root + AI_RBN_LEFT), first);
		ai_put64(&img, root + AI_RBN_LEFT, 0);
		ai_put64(&img, root + AI_RBN_RIGHT, first);
		ai_put64(&img, first + AI_RBN_RIGHT, root);
		ai_put64(&img, tree + AI_RB_COUNT, (64u << 20) - 1);
		stage_open(&st, &img, &m, 0);
		st.wk.max_blocks = 64u << 20;
		st.r.err = wk_segments(&st.wk, &st.dev);
		snprintf(text, sizeof text, "the free-block tree of the large pool (pool 0x%llx) is damaged (cyclic structure)",
			 (unsigned long long)m.devices[0].large);
		expect_partial(&st.r, text);
		stage_close(&st);
	}
	done(&img, &m, &r);

	/* More nodes counted than the tree holds. */
	standard(&img, &m, "torch-2.6");
	ai_put64(&img, tree_of(&img, m.devices[0].small) + AI_RB_COUNT, 3);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "the free-block tree of the small pool");
	CU_ASSERT(warned(&r, "is damaged (input is malformed)"));
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* Device 1's one node in a hole: its only block is then lost. */
	standard_isolated(&img, &m, "torch-2.6");
	ai_hole(&img, BLK(&m, 1, 0, 0).node, 40);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "is damaged (not found)");
	CU_ASSERT_PTR_NULL(segment_at(r.w, 1, BLK(&m, 1, 0, 0).ptr));
	check_others(&m, r.w, 1, 0);
	done(&img, &m, &r);

	/* A private pool's large blocks. */
	standard(&img, &m, "torch-2.6");
	node = BLK(&m, 0, 2, 1).node;
	ai_put64(&img, node + AI_RBN_LEFT, node);
	run_walk(&img, &no_trace, &r);
	pool = m.devices[0].pools[0].addr + (uint64_t)img.L->off[MP_L_PP_LARGE_BLOCKS];
	snprintf(text, sizeof text, "the free-block tree of a private pool's large blocks (pool 0x%llx) is damaged",
		 (unsigned long long)pool);
	expect_partial(&r, text);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* The large pool is sampled by the self-check: a cycle there is refused. */
	standard(&img, &m, "torch-2.6");
	node = BLK(&m, 0, 0, 1).node;
	ai_put64(&img, node + AI_RBN_LEFT, node);
	run_walk(&img, &no_trace, &r);
	expect_error(&r, MP_E_CORRUPT, "device 0: its blocks cannot be walked");
	done(&img, &m, &r);

	/* Colours: not read (the walk needs only the links); any value is the same walk. */
	standard(&img, &m, "torch-2.6");
	ai_put32(&img, BLK(&m, 0, 0, 1).node + AI_RBN_COLOR, 7);
	ai_put32(&img, BLK(&m, 0, 1, 2).node + AI_RBN_COLOR, 0xffffffff);
	ai_put32(&img, tree_of(&img, m.devices[0].small) + 8, 3);
	run_walk(&img, &no_trace, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	CU_ASSERT_EQUAL(r.nwarnings, 0);
	check_segments(&m, r.w);
	done(&img, &m, &r);
}

/* Blocks that pass every check but whose sizes add up past 2^63 (two of 2^62): the segment's
   sums are unsigned, and the statistics cross-check must not overflow a signed sum (UBSan). */
static void test_huge_blocks(void)
{
	struct ai_model m;
	struct ai_image img;
	struct ai_segment *s;
	struct run r;
	uint64_t ds;
	const mp_walk_segment *g;

	ai_model_init(&m);
	s = ai_segment_add(ai_device_add(&m), AI_OWN_POOLS, false, 0);
	ai_block_add(s, 1ull << 62, 1, AI_ALLOC);
	ai_block_add(s, 1ull << 62, 1, AI_ALLOC);
	ai_image_init(&img, builtin("torch-2.6"), IMAGE_SIZE);
	ai_build(&img, &m);
	/* Statistics the self-check accepts (its sums of 2^63 read negative): all 0. */
	ds = ai_at(&img, m.devices[0].dca, MP_L_DCA_STATS);
	memset(img.mem + (ds - img.base), 0, (size_t)img.L->off[MP_L_DS_SIZEOF]);
	ai_put64(&img, ai_at(&img, m.devices[0].dca, MP_L_DCA_TOTAL_ALLOCATED_MEMORY), 0);
	run_walk(&img, &no_trace, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	CU_ASSERT_EQUAL_FATAL(r.w->nsegments, 1);
	g = &r.w->segments[0];
	CU_ASSERT_EQUAL(g->nblocks, 2);
	CU_ASSERT_EQUAL(g->total_size, 1ull << 63);
	CU_ASSERT_EQUAL(g->allocated_size, 1ull << 63);
	CU_ASSERT(warned(&r, "device 0: the statistics disagree with the blocks (allocated_bytes.all.current 0, "
			     "blocks 9223372036854775808; allocation.all.current 0, blocks 2)"));
	done(&img, &m, &r);
}

/* A pool: a private pool's is_small neither 0 nor 1, a private pool in no table (2.6 keeps its
   id only there; 2.14 in the pool), graph_pools entries damaged. */
static void test_pool_damage(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	struct ai_segment *s;
	uint64_t pool;
	char text[300];
	int pp;

	/* A second private pool holding one free segment (the self-check samples no block of it). */
	ai_model_standard(&m);
	pp = ai_pool_add(&m.devices[0], 2, 9, false);
	s = ai_segment_add(&m.devices[0], pp, false, 0x5100);
	ai_block_add(s, 2 * MIB, 0, AI_FREE);
	ai_image_init(&img, builtin("torch-2.6"), IMAGE_SIZE);
	ai_build(&img, &m);
	pool = m.devices[0].pools[1].addr + (uint64_t)img.L->off[MP_L_PP_LARGE_BLOCKS];
	ai_put8(&img, ai_at(&img, pool, MP_L_BP_IS_SMALL), 2);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "block 0x%llx points to an unreadable pool 0x%llx; its segment is left out",
		 (unsigned long long)BLK(&m, 0, 4, 0).addr, (unsigned long long)pool);
	expect_partial(&r, text);
	CU_ASSERT_PTR_NULL(segment_at(r.w, 0, BLK(&m, 0, 4, 0).ptr));
	check_others(&m, r.w, 0, 4);
	done(&img, &m, &r);

	/* Both tables empty: 2.6 finds the pool through its active block, but not its id. */
	standard(&img, &m, "torch-2.6");
	ai_flat(&img, ai_at(&img, m.devices[0].dca, MP_L_DCA_GRAPH_POOLS), NULL, 0, 32);
	ai_flat(&img, ai_at(&img, m.devices[0].dca, MP_L_DCA_GRAPH_POOLS_FREEABLE), NULL, 0, 32);
	run_walk(&img, &no_trace, &r);
	snprintf(text, sizeof text, "private pool 0x%llx is in neither graph_pools nor graph_pools_freeable; its id reads (0, 0)",
		 (unsigned long long)m.devices[0].pools[0].addr);
	expect_partial(&r, text);
	CU_ASSERT_EQUAL(segment_at(r.w, 0, BLK(&m, 0, 2, 0).ptr)->pool_id[1], 0);
	CU_ASSERT_EQUAL(segment_at(r.w, 0, BLK(&m, 0, 2, 0).ptr)->nblocks, 2);
	check_others(&m, r.w, 0, 2);
	done(&img, &m, &r);

	/* 2.14 reads the id from the pool itself. */
	standard(&img, &m, "torch-2.14-cuda13");
	ai_flat(&img, ai_at(&img, m.devices[0].dca, MP_L_DCA_GRAPH_POOLS), NULL, 0, 32);
	ai_flat(&img, ai_at(&img, m.devices[0].dca, MP_L_DCA_GRAPH_POOLS_FREEABLE), NULL, 0, 32);
	run_walk(&img, &no_trace, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* A graph_pools entry whose distance is past max_lookups: the pool's candidates are lost
	   (its blocks are still reached from its active block), and its id is in
	   graph_pools_freeable too. */
	standard(&img, &m, "torch-2.6");
	ai_put8(&img, m.devices[0].graph_pools_entries, 100);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "device 0: the private pool tables are damaged; pool ids may be missing");
	CU_ASSERT(warned(&r, "device 0: graph_pools is damaged (input is malformed)"));
	CU_ASSERT_EQUAL(r.nwarnings, 2);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* Both damaged: the id is lost, and said to be. */
	standard(&img, &m, "torch-2.6");
	ai_put8(&img, m.devices[0].graph_pools_entries, 100);
	ai_put8(&img, ai_get64(&img, ai_at(&img, m.devices[0].dca, MP_L_DCA_GRAPH_POOLS_FREEABLE) + AI_FLAT_ENTRIES), 100);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "device 0: the private pool tables are damaged; pool ids may be missing");
	CU_ASSERT(warned(&r, "its id reads (0, 0)"));
	CU_ASSERT_EQUAL(segment_at(r.w, 0, BLK(&m, 0, 2, 0).ptr)->pool_id[1], 0);
	CU_ASSERT_EQUAL(segment_at(r.w, 0, BLK(&m, 0, 2, 0).ptr)->nblocks, 2);
	check_others(&m, r.w, 0, 2);
	done(&img, &m, &r);
}

/* ---- ska tables: active_blocks */

/* wk_segments of device D after DAMAGE: a warning with TEXT, and every block still there (the
   table's entries are read up to the damage, and the rest are found along their segments) when
   COMPLETE. */
static void segments_stage(struct ai_image *img, struct ai_model *m, const char *text, bool complete)
{
	struct stage st;

	stage_open(&st, img, m, 0);
	st.r.err = wk_segments(&st.wk, &st.dev);
	expect_partial(&st.r, text);
	if (complete) {
		struct ai_model one = *m;

		one.ndevices = 1;
		check_segments(&one, st.wk.w);
	}
	stage_close(&st);
}

static void test_active_table_damage(void)
{
	struct ai_model m;
	struct ai_image img;
	uint64_t table;
	const char *text = "device 0: the active block table is damaged";

	/* One element more than the table holds; one fewer; a slot count not a power of two; the
	   entries in a hole; a live entry's distance past max_lookups. */
	standard(&img, &m, "torch-2.6");
	table = ai_at(&img, m.devices[0].dca, MP_L_DCA_ACTIVE_BLOCKS);
	ai_put64(&img, table + AI_FLAT_COUNT, ai_get64(&img, table + AI_FLAT_COUNT) + 1);
	segments_stage(&img, &m, "device 0: the active block table is damaged (input is malformed); active blocks may be missing",
		       true);
	ai_put64(&img, table + AI_FLAT_COUNT, ai_get64(&img, table + AI_FLAT_COUNT) - 2);
	segments_stage(&img, &m, text, false);
	ai_put64(&img, table + AI_FLAT_COUNT, ai_get64(&img, table + AI_FLAT_COUNT) + 1);
	ai_put64(&img, table + AI_FLAT_SLOTS_MINUS_ONE, 6);
	segments_stage(&img, &m, text, false);
	ai_put64(&img, table + AI_FLAT_SLOTS_MINUS_ONE, (1ull << 31) - 1); /* reads until memory ends */
	segments_stage(&img, &m, "device 0: the active block table is damaged (not found)", false);
	ai_put64(&img, table + AI_FLAT_SLOTS_MINUS_ONE, 31);
	ai_put8(&img, m.devices[0].active_entries + 2 * 16, 99);
	segments_stage(&img, &m, text, false);
	/* An empty table whose entries (on pages of their own) are in a hole. */
	img.isolate = true;
	ai_flat(&img, table, NULL, 0, 16);
	img.isolate = false;
	ai_hole(&img, ai_get64(&img, table + AI_FLAT_ENTRIES), 1);
	segments_stage(&img, &m, "device 0: the active block table is damaged (not found)", false);
	ai_image_free(&img);
	ai_model_free(&m);
}

/* Through the whole walk: the self-check samples 16 active blocks, so a table of 20 with one
   more counted passes it, and the walk says what it found. */
static void test_active_table_count_walk(void)
{
	struct ai_model m;
	struct ai_image img;
	struct ai_segment *s;
	struct run r;
	uint64_t table;

	ai_model_init(&m);
	s = ai_segment_add(ai_device_add(&m), AI_OWN_POOLS, true, 0);
	for (int i = 0; i < 20; i++)
		ai_block_add(s, 512, 512, AI_ALLOC);
	ai_block_add(s, 2 * MIB - 20 * 512, 0, AI_FREE);
	ai_image_init(&img, builtin("torch-2.6"), IMAGE_SIZE);
	ai_build(&img, &m);
	table = ai_at(&img, m.devices[0].dca, MP_L_DCA_ACTIVE_BLOCKS);
	ai_put64(&img, table + AI_FLAT_COUNT, 21);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "device 0: the active block table is damaged (input is malformed); active blocks may be missing");
	check_segments(&m, r.w);
	done(&img, &m, &r);
}

/* A head block in two sets (device 1's free block also in its active_blocks): one segment, and a
   warning. */
static void test_block_in_two_sets(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	unsigned char e[16] = { 0 };

	standard(&img, &m, "torch-2.6");
	memcpy(e + 8, &BLK(&m, 1, 0, 0).addr, 8);
	ai_flat(&img, ai_at(&img, m.devices[1].dca, MP_L_DCA_ACTIVE_BLOCKS), e, 1, 16);
	run_walk(&img, &no_trace, &r);
	expect_partial(&r, "device 1: 1 blocks are in more than one pool set");
	CU_ASSERT_EQUAL(r.nwarnings, 1);
	check_segments(&m, r.w);
	done(&img, &m, &r);
}

/* ---- the trace ring */

/* Logical entry I of device D's ring. */
static uint64_t entry_at(struct ai_image *img, struct ai_model *m, int d, size_t i)
{
	const struct ai_device *dev = &m->devices[d];

	return dev->ring_begin + (uint64_t)((dev->ring_next + i) % dev->ntrace) * (uint64_t)img->L->off[MP_L_TE_SIZEOF];
}

/* Move device 0's ring entries (2.6: no strings in them) so that slot SLOT starts a page, and
   return that page. */
static uint64_t move_ring(struct ai_image *img, struct ai_model *m, size_t slot)
{
	struct ai_device *d = &m->devices[0];
	size_t esize = (size_t)img->L->off[MP_L_TE_SIZEOF];
	uint64_t area = ai_alloc(img, 3 * AI_PAGE);
	uint64_t page = ((area + AI_PAGE - 1) & ~(uint64_t)(AI_PAGE - 1)) + AI_PAGE, begin = page - slot * esize;

	memmove(img->mem + (begin - img->base), img->mem + (d->ring_begin - img->base), d->ntrace * esize);
	ai_vector(img, d->ring_vector, begin, d->ntrace, esize);
	d->ring_begin = begin;
	return page;
}

/* A trace entry: a bad action, strings too long, unreadable or bad (old ABI); entries in a
   hole. The entry is skipped; the others kept. */
static void test_trace_entry_damage(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;

	standard(&img, &m, "torch-2.6");
	ai_put32(&img, ai_at(&img, entry_at(&img, &m, 0, 2), MP_L_TE_ACTION), 42);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entry 2 is damaged; skipped");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 7);
	CU_ASSERT_EQUAL(r.w->trace[2].action, m.devices[0].trace[3].action);
	CU_ASSERT_EQUAL(r.w->trace[2].size, m.devices[0].trace[3].size);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.14-cuda13");
	ai_put64(&img, ai_at(&img, entry_at(&img, &m, 0, 6), MP_L_TE_COMPILE_CONTEXT) + 8, 2 * MIB);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entry 6 is damaged; skipped");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 7);
	CU_ASSERT_EQUAL(r.w->trace[6].action, 7);
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.14-cuda13");
	ai_put64(&img, ai_at(&img, entry_at(&img, &m, 0, 6), MP_L_TE_USER_METADATA), 0x7f9900000000ull);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entry 6 is damaged; skipped");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 7);
	done(&img, &m, &r);

	standard(&img, &m, "torch-2.14-cuda12-oldabi");
	ai_put64(&img, ai_at(&img, entry_at(&img, &m, 0, 0), MP_L_TE_COMPILE_CONTEXT), 16); /* no _Rep before it */
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entry 0 is damaged; skipped");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 7);
	done(&img, &m, &r);

	/* Slots 5..7 unreadable: the ring's oldest run (slots 3..7) cannot be read. */
	standard(&img, &m, "torch-2.6");
	ai_hole(&img, move_ring(&img, &m, 5), 1);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entries from 0 are unreadable; the trace is cut short");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 0);
	check_segments(&m, r.w);
	done(&img, &m, &r);

	/* Slots 0..2 unreadable: the oldest five are kept. */
	standard(&img, &m, "torch-2.6");
	ai_hole(&img, move_ring(&img, &m, 3) - 1, 1);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entries from 5 are unreadable; the trace is cut short");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 5);
	CU_ASSERT_EQUAL(r.w->trace[4].action, m.devices[0].trace[4].action);
	CU_ASSERT_EQUAL(r.w->trace[4].tsc, m.devices[0].trace[4].time);
	done(&img, &m, &r);
}

/* The ring's vector damaged to claim 15 M entries (under the 16 M cap, and the maximum is
   SIZE_MAX, as PyTorch allows) of which 8 are readable: the self-check passes it, and the walk
   must cost memory for what it reads, not for what the vector claims (about 1.4 GB of
   mp_walk_trace; the plain run's address space limit makes that a failure). */
static void test_trace_vector_huge(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	uint64_t end;

	standard(&img, &m, "torch-2.6");
	ai_hole(&img, move_ring(&img, &m, 8), 1);
	end = m.devices[0].ring_begin + (15ull << 20) * 56;
	ai_put64(&img, m.devices[0].ring_vector + 8, end);
	ai_put64(&img, m.devices[0].ring_vector + 16, end);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_MAX_ENTRIES), UINT64_MAX);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "device 0: trace entries from 0 are unreadable; the trace is cut short");
	CU_ASSERT_EQUAL(r.w->devices[0].ntrace, 0);
	CU_ASSERT_EQUAL(r.w->devices[0].ring_max_entries, UINT64_MAX);
	check_segments(&m, r.w);
	done(&img, &m, &r);
}

/* The clock pairs unreadable: times stay 0, with a warning (not damage to the walk). */
static void test_clock_unreadable(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;

	standard(&img, &m, "torch-2.6");
	ai_hole(&img, ai_at(&img, img.allocator, MP_L_NCA_CLOCK_CONVERTER), 8); /* a page of clock pairs only */
	run_walk(&img, NULL, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	CU_ASSERT(warned(&r, "the allocator's clock pairs are unavailable: trace times are left at 0"));
	CU_ASSERT_EQUAL(r.w->ntrace, 8);
	for (size_t i = 0; i < r.w->ntrace; i++)
		CU_ASSERT_EQUAL(r.w->trace[i].time_us, 0);
	done(&img, &m, &r);
}

/* Clock pairs damaged, or far out: no time is converted through signed overflow (UBSan). */
static void test_clock_damaged(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	uint64_t clock;

	/* One pair's wall time INT64_MIN. */
	standard(&img, &m, "torch-2.6");
	clock = ai_at(&img, img.allocator, MP_L_NCA_CLOCK_CONVERTER);
	ai_put64(&img, clock + 16 * 500, (uint64_t)INT64_MIN);
	run_walk(&img, NULL, &r);
	expect_partial(&r, "the allocator's clock pairs are damaged (pair 500 is before 1970): trace times are left at 0");
	CU_ASSERT_EQUAL(r.w->ntrace, 8);
	for (size_t i = 0; i < r.w->ntrace; i++)
		CU_ASSERT_EQUAL(r.w->trace[i].time_us, 0);
	done(&img, &m, &r);

	/* Sound pairs a second before INT64_MAX ns, and an entry 10^15 ticks after them: past what
	   an int64 of nanoseconds holds. That entry's time is left at 0, the others converted. */
	standard(&img, &m, "torch-2.6");
	clock = ai_at(&img, img.allocator, MP_L_NCA_CLOCK_CONVERTER);
	for (uint64_t i = 0; i < 1001; i++)
		ai_put64(&img, clock + 16 * i, (uint64_t)INT64_MAX - 1000000000 + i);
	ai_put64(&img, ai_at(&img, entry_at(&img, &m, 0, 7), MP_L_TE_TIME), 1000000000ull + 1000000000000000ull);
	run_walk(&img, NULL, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL_FATAL(r.w->ntrace, 8);
	CU_ASSERT(r.w->trace[0].time_us >= (INT64_MAX - 1000000000) / 1000);
	CU_ASSERT_EQUAL(r.w->trace[7].time_us, 0);
	done(&img, &m, &r);
}

/* wk_trace of device D: a warning with TEXT (NULL: none) and no trace. */
static void trace_stage(struct ai_image *img, struct ai_model *m, int d, const char *text)
{
	struct stage st;

	stage_open(&st, img, m, d);
	st.r.err = wk_trace(&st.wk, &st.dev);
	if (text != NULL) {
		expect_partial(&st.r, text);
	} else {
		CU_ASSERT_EQUAL(st.r.err, MP_OK);
		CU_ASSERT_EQUAL(st.r.nwarnings, 0);
	}
	CU_ASSERT_EQUAL(st.dev.ntrace, 0);
	CU_ASSERT_EQUAL(st.wk.w->ntrace, 0);
	stage_close(&st);
}

/* What the self-check refuses of the ring, met by wk_trace (a live process caught while the
   ring changes): the ring's header in a hole, next past the entries, more entries than the
   maximum, a reversed or huge vector. */
static void test_trace_ring_damage(void)
{
	struct ai_model m;
	struct ai_image img;
	char text[200];
	uint64_t vec;

	standard(&img, &m, "torch-2.6");
	vec = m.devices[0].ring_vector;
	snprintf(text, sizeof text, "device 0: the trace ring (vector 0x%llx) is damaged; no trace for it", (unsigned long long)vec);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_NEXT), 8);
	trace_stage(&img, &m, 0, text);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_NEXT), UINT64_MAX);
	trace_stage(&img, &m, 0, text);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_NEXT), 3);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_MAX_ENTRIES), 7);
	trace_stage(&img, &m, 0, text);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_MAX_ENTRIES), 8);
	ai_put64(&img, vec + 8, m.devices[0].ring_begin - 56);
	trace_stage(&img, &m, 0, text);
	ai_put64(&img, vec + 8, m.devices[0].ring_begin + ((16ull << 20) + 1) * 56);
	ai_put64(&img, vec + 16, m.devices[0].ring_begin + ((16ull << 20) + 1) * 56);
	ai_put64(&img, ring_at(&img, &m, 0, MP_L_RB_MAX_ENTRIES), UINT64_MAX);
	trace_stage(&img, &m, 0, text);
	ai_put64(&img, vec, 8); /* storage in the first page */
	trace_stage(&img, &m, 0, text);
	ai_hole(&img, ring_at(&img, &m, 0, MP_L_RB_MAX_ENTRIES), 8);
	trace_stage(&img, &m, 0, "device 0: its trace ring is unreadable");
	/* No vector: history was never recorded; no warning. */
	trace_stage(&img, &m, 1, NULL);
	ai_image_free(&img);
	ai_model_free(&m);
}

/* wk_stats with its statistics unreadable (the self-check refuses it first in a whole walk). */
static void test_stats_unreadable(void)
{
	struct ai_model m;
	struct ai_image img;
	struct stage st;

	standard_isolated(&img, &m, "torch-2.6");
	ai_hole(&img, ai_at(&img, ai_at(&img, m.devices[1].dca, MP_L_DCA_STATS), MP_L_DS_SEGMENT), 8);
	stage_open(&st, &img, &m, 1);
	st.r.err = wk_stats(&st.wk, &st.dev);
	expect_partial(&st.r, "device 1: its statistics are unreadable");
	CU_ASSERT_EQUAL(st.dev.stats.n, 0);
	stage_close(&st);
	ai_image_free(&img);
	ai_model_free(&m);
}

/* ---- limits */

/* The block limit: the walk stops with a warning, and never holds more blocks. */
static void test_block_limit(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	mp_walk_opts opts = { .no_trace = true, .max_blocks = 5 };

	standard(&img, &m, "torch-2.6");
	run_walk(&img, &opts, &r);
	expect_partial(&r, "more than 5 blocks: the walk stops here");
	CU_ASSERT_EQUAL(r.nwarnings, 1); /* said once, though both devices and a segment meet it */
	CU_ASSERT(r.w->nblocks <= 5);
	done(&img, &m, &r);
}

/* The limit reached at the end of a segment while others remain: they are left out, and the walk
   says so (the limit is on the whole walk; the candidates of each device are under it). */
static void test_block_limit_between_segments(void)
{
	struct ai_model m;
	struct ai_image img;
	struct run r;
	mp_walk_opts opts = { .no_trace = true, .max_blocks = 3 };

	ai_model_init(&m);
	for (int d = 0; d < 2; d++) {
		struct ai_device *dev = ai_device_add(&m);

		for (int i = 0; i < 2; i++)
			ai_block_add(ai_segment_add(dev, AI_OWN_POOLS, true, 0), 2 * MIB, 0, AI_FREE);
	}
	ai_image_init(&img, builtin("torch-2.6"), IMAGE_SIZE);
	ai_build(&img, &m);
	run_walk(&img, &opts, &r);
	expect_partial(&r, "more than 3 blocks: the walk stops here");
	CU_ASSERT_EQUAL(r.nwarnings, 1);
	CU_ASSERT_EQUAL(r.w->nblocks, 3);
	CU_ASSERT_EQUAL(r.w->nsegments, 3);
	run_free(&r);
	/* One more: all of them, and no warning. */
	opts.max_blocks = 4;
	run_walk(&img, &opts, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	CU_ASSERT_EQUAL(r.nwarnings, 0);
	check_segments(&m, r.w);
	done(&img, &m, &r);
}

static bool interrupt_now(void *ctx)
{
	int *calls = ctx;

	return ++*calls > 0;
}

/* 4096 blocks: opts->interrupted is asked, and stops the walk. */
static void test_interrupted(void)
{
	struct ai_model m;
	struct ai_image img;
	struct ai_segment *s;
	struct run r;
	int calls = 0;
	mp_walk_opts opts = { .no_trace = true, .interrupted = interrupt_now, .progress_ctx = &calls };

	ai_model_init(&m);
	s = ai_segment_add(ai_device_add(&m), AI_OWN_POOLS, true, 0);
	for (int i = 0; i < 4096; i++)
		ai_block_add(s, 512, 256, i % 2 ? AI_FREE : AI_ALLOC);
	ai_image_init(&img, builtin("torch-2.6"), 4 * IMAGE_SIZE);
	ai_build(&img, &m);
	run_walk(&img, &opts, &r);
	CU_ASSERT_EQUAL(r.err, MP_E_INTERRUPTED);
	CU_ASSERT_PTR_NULL(r.w);
	CU_ASSERT_EQUAL(calls, 1);
	run_free(&r);
	/* Not interrupted: all of them, exact. */
	run_walk(&img, &no_trace, &r);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FALSE(r.w->partial);
	check_segments(&m, r.w);
	done(&img, &m, &r);
}

/* ---- random damage */

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* What any walk that returns gives: indices inside the arrays, segments in device order then
   address order, blocks within the limit. */
static void check_shape(const mp_walk *w, size_t max_blocks)
{
	CU_ASSERT(w->nblocks <= max_blocks);
	for (size_t i = 0; i < w->nsegments; i++) {
		const mp_walk_segment *g = &w->segments[i];

		CU_ASSERT(g->nblocks >= 1);
		CU_ASSERT(g->first_block <= w->nblocks && g->nblocks <= w->nblocks - g->first_block);
		CU_ASSERT(g->device >= 0 && (size_t)g->device < w->ndevices);
		if (i > 0)
			CU_ASSERT(w->segments[i - 1].device < g->device ||
				  (w->segments[i - 1].device == g->device && w->segments[i - 1].address <= g->address));
	}
	for (size_t d = 0; d < w->ndevices; d++)
		CU_ASSERT(w->devices[d].first_trace <= w->ntrace &&
			  w->devices[d].ntrace <= w->ntrace - w->devices[d].first_trace);
	for (size_t i = 0; i < w->ntrace; i++)
		CU_ASSERT_PTR_NOT_NULL(mp_walk_action_name(w->trace[i].action));
}

/* The standard image of each kind of table, 300 times over with 1 to 8 random bytes changed
   anywhere in it: every walk ends, with an error or a result of a sound shape. (The clock pairs'
   first page is a hole: time conversion stops there, instead of measuring this machine's clock
   for 20 ms a walk.) */
static void test_random_damage(void)
{
	static const char *const tables[] = { "torch-2.6", "torch-2.14-cuda13", "torch-2.14-cuda12-oldabi" };
	size_t ok = 0, partial = 0, failed = 0;
	mp_walk_opts opts = { .max_blocks = 1000 };

	for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
		for (uint64_t seed = 1; seed <= 300; seed++) {
			struct ai_model m;
			struct ai_image img;
			struct run r;
			uint64_t x = seed * 0x9e3779b97f4a7c15ull + k, flips;

			standard(&img, &m, tables[k]);
			ai_hole(&img, ai_at(&img, img.allocator, MP_L_NCA_CLOCK_CONVERTER), 1);
			flips = 1 + xorshift(&x) % 8;
			for (uint64_t f = 0; f < flips; f++) {
				size_t at = 4096 + (size_t)(xorshift(&x) % (img.used - 4096));

				img.mem[at] ^= (unsigned char)(1 + xorshift(&x) % 255);
			}
			run_walk(&img, &opts, &r);
			if (r.err == MP_OK) {
				check_shape(r.w, opts.max_blocks);
				ok += !r.w->partial;
				partial += r.w->partial;
			} else {
				CU_ASSERT_PTR_NULL(r.w);
				CU_ASSERT(r.diag.msg[0] != '\0');
				failed++;
			}
			done(&img, &m, &r);
		}
	/* Most flips land where nothing is read; some must be refused or reported. */
	CU_ASSERT(ok > 0 && partial + failed > 0);
}

/* Under ASan the address space is the sanitizer's; elsewhere the walks get 256 MiB more than the
   program holds at its start, so that an allocation out of proportion to the image (a damaged
   count taken at its word) fails the walk with MP_E_NOMEM rather than passing unseen. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static void limit_address_space(void)
{
#ifndef UNDER_ASAN
	unsigned long pages = 0;
	struct rlimit rl;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL || fscanf(f, "%lu", &pages) != 1 || getrlimit(RLIMIT_AS, &rl) != 0) {
		if (f != NULL)
			fclose(f);
		return;
	}
	fclose(f);
	rl.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		perror("setrlimit");
#endif
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "normal walk on every built-in table", test_normal_every_table },
		{ "a layout no table has: inferred", test_inferred_layout },
		{ "2.0: a history head unreadable", test_history_head },
		{ "allocator not found: pointer, RTTI, backend", test_find_refused },
		{ "device_allocator vector refused", test_device_vector_refused },
		{ "damage the self-check refuses", test_refused_by_self_check },
		{ "device_id and a layout refused", test_refused_layout },
		{ "Block chains cut short", test_chain_damage },
		{ "unreadable or damaged blocks skipped", test_block_unreadable },
		{ "free-block trees: cycles, depth, count, holes, colours", test_tree_damage },
		{ "pools: is_small, ids, graph_pools", test_pool_damage },
		{ "blocks whose sizes overflow", test_huge_blocks },
		{ "active_blocks table damage (wk_segments)", test_active_table_damage },
		{ "active_blocks miscounted past the self-check", test_active_table_count_walk },
		{ "a block in two sets", test_block_in_two_sets },
		{ "trace entries damaged or unreadable", test_trace_entry_damage },
		{ "a trace vector claiming 15 M entries", test_trace_vector_huge },
		{ "clock pairs unreadable", test_clock_unreadable },
		{ "clock pairs damaged or far out", test_clock_damaged },
		{ "trace ring damage (wk_trace)", test_trace_ring_damage },
		{ "statistics unreadable (wk_stats)", test_stats_unreadable },
		{ "block limit", test_block_limit },
		{ "block limit between segments", test_block_limit_between_segments },
		{ "interrupted", test_interrupted },
		{ "random byte damage", test_random_damage },
	};

	limit_address_space();
	return UNIT_RUN("walk_image", tests, NULL, NULL);
}

/* test_block_query.c - size units, the block queries (filter table, block at an address, block
   diff) and the trace's last entries, on small built snapshots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_block_query.h"
#include "mp_format.h"
#include "mp_trace_text.h"
#include "snapshot_builder.h"
#include "unit_main.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)

/* ---- units */

static void check_size(mp_i128 n, enum mp_units u, const char *expect)
{
	mp_out out;

	mp_out_init(&out);
	mp_format_size(&out, n, u);
	unit_check_text(mp_out_take(&out, NULL), expect);
}

static void test_units(void)
{
	static const struct {
		const char *text;
		enum mp_units u;
	} good[] = {
		{ "auto", MP_UNITS_AUTO }, { "AUTO", MP_UNITS_AUTO }, { "B", MP_UNITS_B },     { "b", MP_UNITS_B },
		{ "KiB", MP_UNITS_KIB },   { "kib", MP_UNITS_KIB },   { "MIB", MP_UNITS_MIB }, { "GiB", MP_UNITS_GIB },
	};
	static const char *const bad[] = { "", "KB", "MiB ", "kilo", "TiB" };
	enum mp_units u = MP_UNITS_GIB;

	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		CU_ASSERT_TRUE(mp_units_parse(good[i].text, &u));
		CU_ASSERT_EQUAL(u, good[i].u);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CU_ASSERT_FALSE(mp_units_parse(bad[i], &u));
		CU_ASSERT_EQUAL(u, MP_UNITS_GIB); /* untouched */
	}
	CU_ASSERT_STRING_EQUAL(mp_units_name(MP_UNITS_AUTO), "auto");
	CU_ASSERT_STRING_EQUAL(mp_units_name(MP_UNITS_B), "B");
	CU_ASSERT_STRING_EQUAL(mp_units_name(MP_UNITS_KIB), "KiB");
	CU_ASSERT_STRING_EQUAL(mp_units_name(MP_UNITS_MIB), "MiB");
	CU_ASSERT_STRING_EQUAL(mp_units_name(MP_UNITS_GIB), "GiB");
}

static void test_format_size(void)
{
	check_size(1536, MP_UNITS_AUTO, "1.5KiB");
	check_size(1536, MP_UNITS_B, "1536B");
	check_size(1536, MP_UNITS_KIB, "1.5KiB");
	check_size(1536, MP_UNITS_MIB, "0.0MiB");
	check_size(3 * MiB / 2, MP_UNITS_MIB, "1.5MiB");
	check_size(3 * MiB / 2, MP_UNITS_KIB, "1536.0KiB");
	check_size((mp_i128)5 << 30, MP_UNITS_GIB, "5.0GiB");
	check_size((mp_i128)5 << 30, MP_UNITS_MIB, "5120.0MiB");
	check_size(0, MP_UNITS_B, "0B");
	check_size(0, MP_UNITS_AUTO, "0.0B");
	check_size(-1536, MP_UNITS_B, "-1536B");
	check_size(-1536, MP_UNITS_KIB, "-1.5KiB");
	check_size(1000, MP_UNITS_AUTO, "1000.0B");
	/* Past int64 and 2**53: the exact quotient, rounded once. */
	check_size(((mp_i128)1 << 70) + 1, MP_UNITS_GIB, "1099511627776.0GiB");
	check_size((mp_i128)INT64_MAX + 1, MP_UNITS_B, "9223372036854775808B");
}

/* ---- states */

static void check_states(const char *text, unsigned expect)
{
	unsigned got = 0;
	mp_diag diag = { 0 };

	CU_ASSERT_EQUAL(mp_block_states_parse(text, &got, &diag), MP_OK);
	CU_ASSERT_EQUAL(got, expect);
}

static void check_states_bad(const char *text, const char *named)
{
	unsigned got = 77;
	mp_diag diag = { 0 };

	CU_ASSERT_EQUAL(mp_block_states_parse(text, &got, &diag), MP_E_USAGE);
	CU_ASSERT_EQUAL(got, 77);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, named));
	CU_ASSERT_PTR_NULL(strchr(diag.msg, '\n'));
}

static void test_states(void)
{
	check_states("allocated", MP_BS_ACTIVE_ALLOCATED);
	check_states("active_allocated", MP_BS_ACTIVE_ALLOCATED);
	check_states("pending", MP_BS_ACTIVE_PENDING_FREE);
	check_states("active_pending_free", MP_BS_ACTIVE_PENDING_FREE);
	check_states("inactive", MP_BS_INACTIVE);
	check_states("other", MP_BS_OTHER);
	check_states("active", MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE);
	check_states("active,inactive", MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE | MP_BS_INACTIVE);
	check_states(" Pending , OTHER\t", MP_BS_ACTIVE_PENDING_FREE | MP_BS_OTHER);
	check_states("allocated,allocated", MP_BS_ACTIVE_ALLOCATED);
	check_states_bad("allocated,freed", "'freed'");
	check_states_bad("activ", "'activ'");
	check_states_bad("", "empty");
	check_states_bad("inactive,,other", "empty");
	check_states_bad("inactive,", "empty");
}

/* ---- snapshots */

static mp_block *add_block(mp_snapshot *s, int64_t address, int64_t size, int64_t requested, const char *state,
			   mp_val frames)
{
	mp_block *b = sb_block(s, size, requested, state, frames);

	b->address = address;
	return b;
}

static const struct sb_frame two_frames[] = { { "forward", "model.py", 12 }, { "main", "train.py", 3 } };

/* Device 0: segment 0x1000 (12 KiB, stream 0, pool (0, 0), large, not expandable) with
   an allocated block with frames, an inactive one, a pending one without frames and one
   in a state PyTorch never writes; segment 0x800 (1 KiB) listed after it; segment 0x20000
   (4 KiB) whose only block leaves a gap. Device 1: segment 0x10000 (stream 7), one
   allocated block whose frames are not frame dicts. */
static mp_snapshot *pool_snapshot(void)
{
	mp_snapshot *s = sb_new();
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_val zero = mp_val_from_small_int(0), pool[2] = { zero, zero }, odd = mp_val_from_small_int(5);
	mp_segment *seg = sb_segment(s, 0, 0x1000, 12 * KiB, 0);

	sb_check(mp_heap_make(s->heap, MP_T_TUPLE, pool, 2, &seg->segment_pool_id) == MP_OK);
	seg->segment_type = k->large;
	seg->is_expandable = MP_FALSE;
	seg->present |= MP_F_SEG_SEGMENT_POOL_ID | MP_F_SEG_SEGMENT_TYPE | MP_F_SEG_IS_EXPANDABLE;
	add_block(s, 0x1000, 4 * KiB, 4000, "active_allocated", sb_frames(s, 2, two_frames));
	add_block(s, 0x2000, 2 * KiB, 2 * KiB, "inactive", sb_frames(s, 0, NULL));
	add_block(s, 0x2800, 2 * KiB, 1000, "active_pending_free", MP_ABSENT);
	add_block(s, 0x3000, 4 * KiB, 4 * KiB, "weird state", MP_ABSENT);
	sb_segment(s, 1, 0x10000, 8 * KiB, 7);
	sb_check(mp_heap_make(s->heap, MP_T_LIST, &odd, 1, &odd) == MP_OK);
	add_block(s, 0x10000, 8 * KiB, 8000, "active_allocated", odd);
	sb_segment(s, 0, 0x800, KiB, 0);
	add_block(s, 0x800, KiB, KiB, "active_allocated", MP_ABSENT);
	sb_segment(s, 0, 0x20000, 4 * KiB, 0);
	add_block(s, 0x20000, KiB, KiB, "inactive", MP_ABSENT);
	return s;
}

#define HEAD                                                                                                \
	"address         size       requested  state                device  stream  segment         pool    " \
	"frame\n"
#define ROW_800                                                                                             \
	"0x800           1.0KiB     1.0KiB     active_allocated     0       0       0x800           -       " \
	"-\n"
#define ROW_1000                                                                                            \
	"0x1000          4.0KiB     3.9KiB     active_allocated     0       0       0x1000          (0, 0)  " \
	"forward model.py:12\n"
#define ROW_2000                                                                                            \
	"0x2000          2.0KiB     2.0KiB     inactive             0       0       0x1000          (0, 0)  " \
	"-\n"
#define ROW_2800                                                                                            \
	"0x2800          2.0KiB     1000.0B    active_pending_free  0       0       0x1000          (0, 0)  " \
	"-\n"
#define ROW_3000                                                                                            \
	"0x3000          4.0KiB     4.0KiB     'weird state'        0       0       0x1000          (0, 0)  " \
	"-\n"
#define ROW_20000                                                                                           \
	"0x20000         1.0KiB     1.0KiB     inactive             0       0       0x20000         -       " \
	"-\n"
#define ROW_10000                                                                                           \
	"0x10000         8.0KiB     7.8KiB     active_allocated     1       7       0x10000         -       " \
	"?\n"

/* One analysis run: its output, diagnostic and count. */
struct run {
	mp_out out;
	mp_diag diag;
	size_t n;
};

static void run_start(struct run *r)
{
	mp_out_init(&r->out);
	memset(&r->diag, 0, sizeof r->diag);
	r->n = 12345;
}

/* Check the run that returned ERR: it succeeded, counted EXPECT_N and wrote EXPECT. */
static void run_check(struct run *r, mp_err err, size_t expect_n, const char *expect)
{
	CU_ASSERT_EQUAL_FATAL(err, MP_OK);
	CU_ASSERT_EQUAL(r->n, expect_n);
	unit_check_text(mp_out_take(&r->out, NULL), expect);
}

/* Run mp_analysis_blocks on a fresh pool snapshot with F in units U and compare. */
static void check_blocks(const mp_block_filter *f, enum mp_units u, const char *expect, size_t expect_matched)
{
	mp_snapshot *s = pool_snapshot();
	struct run r;

	run_start(&r);
	run_check(&r, mp_analysis_blocks(s, f, u, &r.out, &r.n, &r.diag), expect_matched, expect);
	mp_snapshot_free(s);
}

static void test_blocks_all(void)
{
	mp_block_filter f;

	mp_block_filter_init(&f);
	check_blocks(&f, MP_UNITS_AUTO,
		     HEAD ROW_800 ROW_1000 ROW_2000 ROW_2800 ROW_3000 ROW_20000 ROW_10000 "7 blocks, 22.0KiB\n", 7);
}

static void test_blocks_filters(void)
{
	mp_block_filter f;

	mp_block_filter_init(&f);
	f.device = 1;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_10000 "1 block, 8.0KiB\n", 1);

	mp_block_filter_init(&f);
	f.states = MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE;
	f.min_size = 2 * KiB;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_1000 ROW_2800 ROW_10000 "3 blocks, 14.0KiB\n", 3);

	mp_block_filter_init(&f);
	f.states = MP_BS_OTHER;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_3000 "1 block, 4.0KiB\n", 1);

	mp_block_filter_init(&f);
	f.any_stream = false;
	f.stream = 0;
	f.device = 0;
	f.states = MP_BS_INACTIVE;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_2000 ROW_20000 "2 blocks, 3.0KiB\n", 2);

	mp_block_filter_init(&f);
	f.any_stream = false;
	f.stream = 7;
	f.device = 0; /* stream 7 is on device 1 only */
	check_blocks(&f, MP_UNITS_AUTO, "0 blocks, 0.0B\n", 0);

	mp_block_filter_init(&f);
	f.min_size = 8 * KiB + 1;
	check_blocks(&f, MP_UNITS_B, "0 blocks, 0B\n", 0);
}

static void test_blocks_units(void)
{
	mp_block_filter f;

	mp_block_filter_init(&f);
	f.device = 1;
	check_blocks(&f, MP_UNITS_B,
		     "address         size       requested  state                device  stream  segment         pool    "
		     "frame\n"
		     "0x10000         8192B      8000B      active_allocated     1       7       0x10000         -       "
		     "?\n"
		     "1 block, 8192B\n",
		     1);
	check_blocks(&f, MP_UNITS_MIB,
		     "address         size       requested  state                device  stream  segment         pool    "
		     "frame\n"
		     "0x10000         0.0MiB     0.0MiB     active_allocated     1       7       0x10000         -       "
		     "?\n"
		     "1 block, 0.0MiB\n",
		     1);
}

static void test_blocks_top(void)
{
	mp_block_filter f;

	mp_block_filter_init(&f);
	f.top = 1;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_10000 "showing 1 of 7 blocks, 8.0KiB of 22.0KiB\n", 7);
	/* Ties in size: the lower address first, whatever the list order. */
	f.top = 3;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_10000 ROW_1000 ROW_3000 "showing 3 of 7 blocks, 16.0KiB of 22.0KiB\n",
		     7);
	f.top = 7;
	check_blocks(&f, MP_UNITS_AUTO,
		     HEAD ROW_10000 ROW_1000 ROW_3000 ROW_2000 ROW_2800 ROW_800 ROW_20000 "7 blocks, 22.0KiB\n", 7);
	f.top = 100;
	f.states = MP_BS_INACTIVE;
	check_blocks(&f, MP_UNITS_AUTO, HEAD ROW_2000 ROW_20000 "2 blocks, 3.0KiB\n", 2);
}

/* Odd input: a block without 'state', a segment without 'device' or 'stream', legacy blocks
   without 'address' (placed after the blocks before them), frames that are not a list. */
/* The frame column names who allocated: the user's own frame, past PyTorch's and the C++ ones (with
   stacks="all" the innermost frame is always the unwinder); else the first _memory_viz.py shows. */
static void test_blocks_site_frame(void)
{
	static const struct sb_frame all[] = { { "torch::unwind::unwind()", "??", 0 },
					       { "_call_impl", "/x/torch/nn/modules/module.py", 1790 },
					       { "forward", "net.py", 7 },
					       { "main", "train.py", 3 } };
	static const struct sb_frame lib[] = { { "_PyEval_EvalFrameDefault", "ceval.c", 1 },
					       { "_call_impl", "/x/torch/nn/modules/module.py", 1790 } };
	mp_snapshot *s = sb_new();
	mp_block_filter f;
	struct run r;

	sb_segment(s, 0, 0x1000, 8 * KiB, 0);
	add_block(s, 0x1000, 4 * KiB, 4 * KiB, "active_allocated", sb_frames(s, 4, all));
	add_block(s, 0x2000, 4 * KiB, 4 * KiB, "active_allocated", sb_frames(s, 2, lib));
	mp_block_filter_init(&f);
	run_start(&r);
	run_check(&r, mp_analysis_blocks(s, &f, MP_UNITS_AUTO, &r.out, &r.n, &r.diag), 2,
		  HEAD "0x1000          4.0KiB     4.0KiB     active_allocated     0       0       0x1000          -       "
		       "forward net.py:7\n"
		       "0x2000          4.0KiB     4.0KiB     active_allocated     0       0       0x1000          -       "
		       "_call_impl /x/torch/nn/modules/module.py:1790\n"
		       "2 blocks, 8.0KiB\n");
	mp_snapshot_free(s);
}

static void test_blocks_odd_input(void)
{
	mp_snapshot *s = sb_new();
	mp_segment *seg = sb_segment(s, 0, 0x4000, 3 * KiB, 0);
	mp_block *b;
	mp_block_filter f;
	mp_out out;
	mp_diag diag = { 0 };
	size_t n = 0;

	seg->present &= ~(uint32_t)(MP_F_SEG_DEVICE | MP_F_SEG_STREAM);
	b = add_block(s, 0, KiB, KiB, "active_allocated", MP_ABSENT);
	b->present &= ~(uint32_t)MP_F_BLK_ADDRESS;
	b = add_block(s, 0, 2 * KiB, KiB, "inactive", sb_int(s, 3));
	b->present &= ~(uint32_t)(MP_F_BLK_ADDRESS | MP_F_BLK_STATE | MP_F_BLK_REQUESTED_SIZE);
	mp_block_filter_init(&f);
	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(mp_analysis_blocks(s, &f, MP_UNITS_AUTO, &out, &n, &diag), MP_OK);
	CU_ASSERT_EQUAL(n, 2);
	unit_check_text(mp_out_take(&out, NULL),
			"address         size       requested  state                device  stream  segment         "
			"pool    frame\n"
			"0x4000          1.0KiB     1.0KiB     active_allocated     -       -       0x4000          "
			"-       -\n"
			"0x4400          2.0KiB     -          -                    -       -       0x4000          "
			"-       -\n"
			"2 blocks, 3.0KiB\n");
	/* A segment without 'device' matches no particular device; a missing state is 'other'. */
	f.device = 0;
	CU_ASSERT_EQUAL_FATAL(mp_analysis_blocks(s, &f, MP_UNITS_AUTO, &out, &n, &diag), MP_OK);
	CU_ASSERT_EQUAL(n, 0);
	mp_block_filter_init(&f);
	f.states = MP_BS_OTHER;
	CU_ASSERT_EQUAL_FATAL(mp_analysis_blocks(s, &f, MP_UNITS_AUTO, &out, &n, &diag), MP_OK);
	CU_ASSERT_EQUAL(n, 1);
	mp_out_free(&out);
	mp_snapshot_free(s);
}

/* ---- block at an address */

static void check_at(uint64_t addr, const char *expect)
{
	mp_snapshot *s = pool_snapshot();
	mp_out out;
	mp_diag diag = { 0 };
	bool found = expect == NULL;

	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(mp_analysis_block_at(s, addr, MP_UNITS_AUTO, &out, &found, &diag), MP_OK);
	CU_ASSERT_EQUAL(found, expect != NULL);
	unit_check_text(mp_out_take(&out, NULL), expect != NULL ? expect : "");
	mp_snapshot_free(s);
}

#define SEG_1000 "segment 0x1000-0x4000, size 12.0KiB, device 0, stream 0, type large, pool (0, 0), expandable no\n"
#define FRAMES_1000 "frames, innermost first:\n  forward at model.py:12\n  main at train.py:3\n"

static void test_block_at(void)
{
	check_at(0x1000, SEG_1000 "block 0x1000, offset 0, size 4.0KiB, requested 3.9KiB, state active_allocated\n" FRAMES_1000);
	check_at(0x1800,
		 SEG_1000 "block 0x1000, offset 2048, size 4.0KiB, requested 3.9KiB, state active_allocated\n" FRAMES_1000);
	check_at(0x1fff,
		 SEG_1000 "block 0x1000, offset 4095, size 4.0KiB, requested 3.9KiB, state active_allocated\n" FRAMES_1000);
	check_at(0x2000, SEG_1000 "block 0x2000, offset 0, size 2.0KiB, requested 2.0KiB, state inactive\n"
				  "no frames recorded\n");
	check_at(0x3fff, SEG_1000 "block 0x3000, offset 4095, size 4.0KiB, requested 4.0KiB, state 'weird state'\n"
				  "no frames recorded\n");
	check_at(0x10010, "segment 0x10000-0x12000, size 8.0KiB, device 1, stream 7, type -, pool -, expandable -\n"
			  "block 0x10000, offset 16, size 8.0KiB, requested 7.8KiB, state active_allocated\n"
			  "frames, innermost first:\n"
			  "  ?\n");
	/* Inside a segment, past its only block. */
	check_at(0x20400, "segment 0x20000-0x21000, size 4.0KiB, device 0, stream 0, type -, pool -, expandable -\n"
			  "no block of the segment holds 0x20400\n");
	check_at(0x4000, NULL);   /* just past a segment */
	check_at(0xc00, NULL);    /* between two segments */
	check_at(0x7ff, NULL);    /* before all */
	check_at(UINT64_MAX, NULL);
}

/* ---- diff */

struct diff_block {
	int64_t address, size;
	const char *state;
};

static mp_snapshot *diff_snapshot(const struct diff_block *blocks, size_t n, mp_val (*frames_of)(mp_snapshot *, size_t))
{
	mp_snapshot *s = sb_new();

	sb_segment(s, 0, 0x1000, 12 * KiB, 0);
	for (size_t i = 0; i < n; i++)
		add_block(s, blocks[i].address, blocks[i].size, blocks[i].size, blocks[i].state, frames_of(s, i));
	sb_segment(s, 1, 0x1000, 4 * KiB, 3); /* the same address on another device */
	add_block(s, 0x1000, 4 * KiB, 4 * KiB, "active_allocated", MP_ABSENT);
	return s;
}

static mp_val no_frames(mp_snapshot *s, size_t i)
{
	(void)s;
	(void)i;
	return MP_ABSENT;
}

static mp_val first_has_frames(mp_snapshot *s, size_t i)
{
	return i == 0 ? sb_frames(s, 2, two_frames) : MP_ABSENT;
}

static void check_diff(const mp_snapshot *before, const mp_snapshot *after, enum mp_units u, const char *expect,
		       size_t expect_changes)
{
	struct run r;

	run_start(&r);
	run_check(&r, mp_analysis_block_diff(before, after, u, &r.out, &r.n, &r.diag), expect_changes, expect);
}

#define DIFF_HEAD "  address         size       state                device  stream  frame\n"

static void test_block_diff(void)
{
	static const struct diff_block before_blocks[] = {
		{ 0x1000, 4 * KiB, "active_allocated" },   /* unchanged */
		{ 0x2000, 2 * KiB, "active_allocated" },   /* becomes pending */
		{ 0x2800, 2 * KiB, "active_pending_free" }, /* freed */
		{ 0x3000, 4 * KiB, "inactive" },           /* allocated */
	};
	static const struct diff_block after_blocks[] = {
		{ 0x1000, 4 * KiB, "active_allocated" },
		{ 0x2000, 2 * KiB, "active_pending_free" },
		{ 0x2800, 2 * KiB, "inactive" },
		{ 0x3000, 3 * KiB, "active_allocated" },
		{ 0x3c00, 1 * KiB, "weird" }, /* 'other' is never active */
	};
	mp_snapshot *before = diff_snapshot(before_blocks, 4, first_has_frames);
	mp_snapshot *after = diff_snapshot(after_blocks, 5, no_frames);

	check_diff(before, after, MP_UNITS_AUTO,
		   DIFF_HEAD
		   "- 0x2000          2.0KiB     active_allocated     0       0       -\n"
		   "+ 0x2000          2.0KiB     active_pending_free  0       0       -\n"
		   "- 0x2800          2.0KiB     active_pending_free  0       0       -\n"
		   "+ 0x3000          3.0KiB     active_allocated     0       0       -\n"
		   "2 allocated (5.0KiB), 2 freed (4.0KiB), net +1.0KiB\n",
		   4);
	check_diff(after, before, MP_UNITS_B,
		   DIFF_HEAD
		   "- 0x2000          2048B      active_pending_free  0       0       -\n"
		   "+ 0x2000          2048B      active_allocated     0       0       -\n"
		   "+ 0x2800          2048B      active_pending_free  0       0       -\n"
		   "- 0x3000          3072B      active_allocated     0       0       -\n"
		   "2 allocated (4096B), 2 freed (5120B), net -1024B\n",
		   4);
	mp_snapshot_free(after);
	mp_snapshot_free(before);
}

/* Frames do not make a block another one; everything allocated, then everything
   freed, with the frames of the block's own snapshot. */
static void test_block_diff_same_all(void)
{
	static const struct diff_block blocks[] = {
		{ 0x1000, 4 * KiB, "active_allocated" },
		{ 0x2000, 8 * KiB, "inactive" },
	};
	mp_snapshot *a = diff_snapshot(blocks, 2, first_has_frames);
	mp_snapshot *b = diff_snapshot(blocks, 2, no_frames);
	mp_snapshot *empty = sb_new();

	check_diff(a, b, MP_UNITS_AUTO, "0 allocated (0.0B), 0 freed (0.0B), net 0.0B\n", 0);
	check_diff(empty, a, MP_UNITS_AUTO,
		   DIFF_HEAD
		   "+ 0x1000          4.0KiB     active_allocated     0       0       forward model.py:12\n"
		   "+ 0x1000          4.0KiB     active_allocated     1       3       -\n"
		   "2 allocated (8.0KiB), 0 freed (0.0B), net +8.0KiB\n",
		   2);
	check_diff(a, empty, MP_UNITS_KIB,
		   DIFF_HEAD
		   "- 0x1000          4.0KiB     active_allocated     0       0       forward model.py:12\n"
		   "- 0x1000          4.0KiB     active_allocated     1       3       -\n"
		   "0 allocated (0.0KiB), 2 freed (8.0KiB), net -8.0KiB\n",
		   2);
	mp_snapshot_free(a);
	mp_snapshot_free(b);
	mp_snapshot_free(empty);
}

/* ---- the trace's last entries */

/* Device 0: a segment, two allocations, one freed; device 1: one allocation. */
static mp_snapshot *trace_snapshot(void)
{
	static const struct {
		size_t device;
		const char *action;
		int64_t addr, size;
	} entries[] = {
		{ 0, "segment_alloc", 5000000, 2 * MiB }, { 0, "alloc", 5000512, 512 },
		{ 0, "alloc", 5001024, 100 },             { 0, "free_requested", 5000512, 512 },
		{ 0, "free_completed", 5000512, 512 },    { 1, "alloc", 9000000, 64 },
	};
	mp_snapshot *s = sb_new();

	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		while (s->ndevice_traces <= entries[i].device)
			sb_device(s);
		sb_entry(s, entries[i].action, entries[i].addr, entries[i].size);
	}
	return s;
}

/* trace_snapshot's listing in pieces: device 0's count line, its last entries, device 1. */
#define TRACE_D0(count) "Device 0 ----------------\n" count "\n"
#define TRACE_D0_END "del b # 512.0B\n# free completed for b 512.0B\nTOTAL MEM: 100.0B\n"
#define TRACE_D1 "Device 1 ----------------\n1 entries\na = MEM[9000000:64.0B]\nTOTAL MEM: 64.0B\n"

static const char full_trace[] = TRACE_D0("5 entries")
	"a = cudaMalloc(5000000, 2.0MiB)\n"
	"b = a[512:512.0B]\n"
	"c = a[1024:100.0B]\n" TRACE_D0_END TRACE_D1;

typedef mp_err (*trace_fn)(mp_snapshot *s, size_t n, mp_out *out, mp_diag *diag);

/* mp_analysis_trace in the shape of mp_analysis_trace_last, to check both alike. */
static mp_err trace_full(mp_snapshot *s, size_t n, mp_out *out, mp_diag *diag)
{
	(void)n;
	return mp_analysis_trace(s, out, diag);
}

static void check_trace(trace_fn fn, mp_snapshot *s, size_t n, const char *expect)
{
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(fn(s, n, &out, &diag), MP_OK);
	unit_check_text(mp_out_take(&out, NULL), expect);
}

static void test_trace_last(void)
{
	mp_snapshot *s = trace_snapshot();

	check_trace(trace_full, s, 0, full_trace);
	check_trace(mp_analysis_trace_last, s, 0, full_trace);
	check_trace(mp_analysis_trace_last, s, 5, full_trace);
	check_trace(mp_analysis_trace_last, s, 6, full_trace);
	/* Names given by hidden entries stay; TOTAL MEM is the whole ring's. */
	check_trace(mp_analysis_trace_last, s, 2, TRACE_D0("5 entries, the last 2 shown") TRACE_D0_END TRACE_D1);
	check_trace(mp_analysis_trace_last, s, 3,
		    TRACE_D0("5 entries, the last 3 shown") "c = a[1024:100.0B]\n" TRACE_D0_END TRACE_D1);
	mp_snapshot_free(s);
}

static void test_trace_last_errors(void)
{
	mp_snapshot *s = trace_snapshot();
	mp_out out;
	mp_diag diag = { 0 };

	/* A hidden entry that trace() would fail on fails here too. */
	s->trace[1].present &= ~(uint32_t)MP_F_TR_SIZE;
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_trace_last(s, 1, &out, &diag), MP_E_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "device_traces[0][1]"));
	s->present &= ~(uint32_t)MP_F_TOP_DEVICE_TRACES;
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_analysis_trace_last(s, 1, &out, &diag), MP_E_NOTFOUND);
	mp_out_free(&out);
	mp_snapshot_free(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "units: parse and name", test_units },
		{ "units: format sizes", test_format_size },
		{ "block states: parse", test_states },
		{ "blocks: everything, (device, address) order", test_blocks_all },
		{ "blocks: filters", test_blocks_filters },
		{ "blocks: units", test_blocks_units },
		{ "blocks: top N", test_blocks_top },
		{ "blocks: the frame that allocated", test_blocks_site_frame },
		{ "blocks: odd input", test_blocks_odd_input },
		{ "block at an address", test_block_at },
		{ "diff: allocated, freed, state changes", test_block_diff },
		{ "diff: the same blocks, all new, all gone", test_block_diff_same_all },
		{ "trace: last N entries", test_trace_last },
		{ "trace: last N entries, errors", test_trace_last_errors },
	};

	return UNIT_RUN("block_query", tests, NULL, NULL);
}

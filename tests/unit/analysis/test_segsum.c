/* test_segsum.c - the `stats` analysis (segsum) against PyTorch's output, errors and a 1M-block run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_segsum.h"
#include "snapshot_builder.h"
#include "unit_main.h"

#define MiB ((int64_t)1 << 20)

/* Expected texts: segsum() of the equivalent Python dicts (given before each
   test), run with PyTorch 2.6.0's _memory_viz.py under python3 3.11. */
#define LEGEND                                                                                     \
	"\n"                                                                                       \
	"Legend:\n"                                                                                \
	"    [a     ] - a segment in the allocator\n"                                              \
	"     ^-- a page 20.0MiB of memory in the segment\n"                                       \
	"    a-z: pages filled with a single block's content\n"                                    \
	"    ' ': page is completely free\n"                                                       \
	"    *: page if completely full with multiple blocks\n"                                    \
	"    0-9: page is partially full with tensors of multiple blocks (9 == 90% full)\n"         \
	"    (X% internal) - of the free memory, X% is free because we rounded the size of"        \
	" the allocation.\n"

#define HEADER "Summary of segments >= 20.0MiB in size\n"

/* Run segsum on SNAP (freed here) and compare with EXPECT. */
static void check_segsum(mp_snapshot *snap, const char *expect)
{
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(mp_analysis_segsum(snap, &out, &diag), MP_OK);
	unit_check_text(mp_out_take(&out, NULL), expect);
	mp_snapshot_free(snap);
}

/* Run segsum on SNAP (freed here): it must fail with ERR and a message containing WHAT. */
static void check_fails(mp_snapshot *snap, mp_err err, const char *what)
{
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_segsum(snap, &out, &diag), err);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, what));
	if (strstr(diag.msg, what) == NULL)
		fprintf(stderr, "\n  diag: %s\n", diag.msg);
	mp_out_free(&out);
	mp_snapshot_free(snap);
}

/* A legacy (PyTorch 2.0) block {'size', 'state', 'history': [{'addr': 0, 'real_size': R}]}. */
static void legacy_history_block(mp_snapshot *s, int64_t size, int64_t real_size)
{
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_block *b = sb_block(s, size, 0, "active_allocated", MP_ABSENT);
	mp_val kv[4] = { k->addr, sb_int(s, 0), k->real_size, sb_int(s, real_size) }, rec;

	sb_check(mp_heap_make(s->heap, MP_T_DICT, kv, 2, &rec) == MP_OK);
	sb_check(mp_heap_make(s->heap, MP_T_LIST, &rec, 1, &b->history) == MP_OK);
	b->present = MP_F_BLK_SIZE | MP_F_BLK_STATE | MP_F_BLK_HISTORY;
}

/* F1 = [{'name': 'alloc', 'filename': '/x/a.py', 'line': 3}]
   blk(size, req, state, frames=[]) = {'address': 0, 'size': size, 'requested_size': req,
                                       'state': state, 'frames': frames}
   seg(addr, total, stream, blocks) = {'device': 0, 'address': addr, 'total_size': total,
                                       'stream': stream, 'blocks': blocks}
   segments = [
     seg(1<<30, 60MiB, 0, [blk(10MiB, 10MiB-512, 'active_allocated', F1), blk(15MiB, 0, 'inactive'),
                           blk(25MiB, 20000000, 'active_allocated', F1), blk(10MiB, 10MiB, 'active_pending_free')]),
     seg(2<<30, 2MiB, 94083836766208, [blk(1MiB, 1000000, 'active_allocated'), blk(1MiB, 0, 'inactive')]),
     seg(3<<30, 40MiB, 7, [blk(1MiB, 1MiB - i*1000, 'active_allocated') if i % 2 == 0
                           else blk(1MiB, 0, 'inactive') for i in range(40)]),
     seg(4<<30, 60MiB, 0, [blk(60MiB, 0, 'inactive')]),
     seg(5<<30, 60MiB, 0, [blk(60MiB, 0, 'inactive')]),
     seg(6<<30, 20MiB, 0, [{'size': 10MiB, 'state': 'active_allocated', 'history': [{'addr': 0, 'real_size': 9MiB}]},
                           {'size': 10MiB, 'state': 'active_allocated', 'requested_size': 5MiB}]),
     seg(7<<30, 20MiB, 0, [blk(10MiB, 10MiB, 'active_allocated'), blk(10MiB, 10MiB, 'active_allocated')])]
   It covers the sort (ties keep list order), digits and '*' pages, streams,
   unprinted small segments and both legacy block forms. */
static void test_mixed(void)
{
	mp_snapshot *s = sb_new();
	struct sb_frame f1 = { "alloc", "/x/a.py", 3 };
	mp_val fr = sb_frames(s, 1, &f1), none = sb_frames(s, 0, NULL);
	mp_block *b;

	sb_segment(s, 0, (int64_t)1 << 30, 60 * MiB, 0);
	sb_block(s, 10 * MiB, 10 * MiB - 512, "active_allocated", fr);
	sb_block(s, 15 * MiB, 0, "inactive", none);
	sb_block(s, 25 * MiB, 20000000, "active_allocated", fr);
	sb_block(s, 10 * MiB, 10 * MiB, "active_pending_free", none);
	sb_segment(s, 0, (int64_t)2 << 30, 2 * MiB, 94083836766208);
	sb_block(s, MiB, 1000000, "active_allocated", none);
	sb_block(s, MiB, 0, "inactive", none);
	sb_segment(s, 0, (int64_t)3 << 30, 40 * MiB, 7);
	for (int i = 0; i < 40; i++)
		if (i % 2 == 0)
			sb_block(s, MiB, MiB - i * 1000, "active_allocated", none);
		else
			sb_block(s, MiB, 0, "inactive", none);
	sb_segment(s, 0, (int64_t)4 << 30, 60 * MiB, 0);
	sb_block(s, 60 * MiB, 0, "inactive", none);
	sb_segment(s, 0, (int64_t)5 << 30, 60 * MiB, 0);
	sb_block(s, 60 * MiB, 0, "inactive", none);
	sb_segment(s, 0, (int64_t)6 << 30, 20 * MiB, 0);
	legacy_history_block(s, 10 * MiB, 9 * MiB);
	b = sb_block(s, 10 * MiB, 5 * MiB, "active_allocated", MP_ABSENT);
	b->present = MP_F_BLK_SIZE | MP_F_BLK_STATE | MP_F_BLK_REQUESTED_SIZE;
	sb_segment(s, 0, (int64_t)7 << 30, 20 * MiB, 0);
	sb_block(s, 10 * MiB, 10 * MiB, "active_allocated", none);
	sb_block(s, 10 * MiB, 10 * MiB, "active_allocated", none);
	check_segsum(s, HEADER "[7] 20.0MiB allocated, 6.0MiB (100.0% internal) free\n"
			       "[*] 20.0MiB allocated, 0.0B free\n"
			       "[44] 40.0MiB allocated, 20.4MiB (1.8% internal) free stream_7\n"
			       "[   ] 60.0MiB allocated, 60.0MiB (0.0% internal) free\n"
			       "[   ] 60.0MiB allocated, 60.0MiB (0.0% internal) free\n"
			       "[abb] 60.0MiB allocated, 30.9MiB (19.2% internal) free\n"
			       "segments: 7\n"
			       "total_reserved: 262.0MiB\n"
			       "total_allocated: 83.7MiB\n"
			       "total_free: 178.3MiB (6.9% internal)\n" LEGEND);
}

/* {'segments': []} */
static void test_empty(void)
{
	check_segsum(sb_new(), HEADER "segments: 0\n"
				      "total_reserved: 0.0B\n"
				      "total_allocated: 0.0B\n"
				      "total_free: 0.0B\n" LEGEND);
}

/* seg(0, 40MiB, 0, [blk(-20MiB, 0, 'inactive'), blk(60MiB, 1MiB, 'active_allocated')]):
   hostile sizes that Python still prints, through a negative list index. */
static void test_negative_index(void)
{
	mp_snapshot *s = sb_new();
	mp_val none = sb_frames(s, 0, NULL);

	sb_segment(s, 0, 0, 40 * MiB, 0);
	sb_block(s, -20 * MiB, 0, "inactive", none);
	sb_block(s, 60 * MiB, MiB, "active_allocated", none);
	check_segsum(s, HEADER "[ a] 40.0MiB allocated, 39.0MiB (151.3% internal) free\n"
			       "segments: 1\n"
			       "total_reserved: 40.0MiB\n"
			       "total_allocated: 1.0MiB\n"
			       "total_free: 39.0MiB (151.3% internal)\n" LEGEND);
}

/* Python: AssertionError for seg(0, 1000, 0, [blk(999, 0, 'inactive')]),
   IndexError for seg(0, 20MiB, 0, [blk(20MiB, 40MiB + 1, 'active_allocated')]),
   KeyError 'requested_size' for a block with 'frames' but no 'requested_size'. */
static void test_python_errors(void)
{
	mp_snapshot *s = sb_new();
	mp_block *b;

	sb_segment(s, 0, 0, 1000, 0);
	sb_block(s, 999, 0, "inactive", MP_ABSENT);
	check_fails(s, MP_E_CORRUPT, "segments[0]: its block sizes add up");

	s = sb_new();
	sb_segment(s, 0, 0, 20 * MiB, 0);
	sb_block(s, 20 * MiB, 40 * MiB + 1, "active_allocated", sb_frames(s, 0, NULL));
	check_fails(s, MP_E_CORRUPT, "outside the segment's pages");

	s = sb_new();
	sb_segment(s, 0, 0, 512, 0);
	b = sb_block(s, 512, 0, "active_allocated", sb_frames(s, 0, NULL));
	b->present &= ~(uint32_t)MP_F_BLK_REQUESTED_SIZE;
	check_fails(s, MP_E_CORRUPT, "needs 'requested_size'");
}

/* Segments of too many pages are refused before any work. */
static void test_page_limit(void)
{
	mp_snapshot *s = sb_new();
	int64_t total = MP_SEGSUM_MAX_PAGES * 20 * MiB + 1;

	sb_segment(s, 0, 0, total, 0);
	sb_block(s, total, 0, "inactive", MP_ABSENT);
	check_fails(s, MP_E_LIMIT, "pages of 20 MiB");

	/* each within the limit, all together past MP_SEGSUM_MAX_TOTAL_PAGES */
	s = sb_new();
	total = MP_SEGSUM_MAX_PAGES * 20 * MiB;
	for (uint64_t i = 0; i <= MP_SEGSUM_MAX_TOTAL_PAGES / MP_SEGSUM_MAX_PAGES; i++) {
		sb_segment(s, 0, (int64_t)i * total, total, 0);
		sb_block(s, total, 0, "inactive", MP_ABSENT);
	}
	check_fails(s, MP_E_LIMIT, "the segments add up to more than");
}

static double seconds(void)
{
	struct timespec ts;

	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1000 segments of 1000 one-MiB blocks, alternately blk(1MiB, 1MiB-512,
   'active_allocated', F1) and blk(1MiB, 0, 'inactive'): 1,000,000 blocks. Every
   segment line is the same; Python (0.57 s) gives: */
#define BENCH_LINE \
	"[44444444444444444444444444444444444444444444444444] 1000.0MiB allocated, 500.2MiB (0.0% internal) free\n"
#define BENCH_TAIL                          \
	"segments: 1000\n"                  \
	"total_reserved: 976.6GiB\n"        \
	"total_allocated: 488.0GiB\n"       \
	"total_free: 488.5GiB (0.0% internal)\n" LEGEND

static void test_million_blocks(void)
{
	mp_snapshot *s = sb_new();
	struct sb_frame f1 = { "alloc", "/x/a.py", 3 };
	mp_val fr = sb_frames(s, 1, &f1), none = sb_frames(s, 0, NULL);
	size_t line_len = strlen(BENCH_LINE);
	char *expect = malloc(strlen(HEADER) + 1000 * line_len + strlen(BENCH_TAIL) + 1), *p;
	double t0;
	mp_out out;
	mp_diag diag = { 0 };
	char *got;

	CU_ASSERT_PTR_NOT_NULL_FATAL(expect);
	for (int seg = 0; seg < 1000; seg++) {
		sb_segment(s, 0, (int64_t)(seg + 1) << 32, 1000 * MiB, 0);
		for (int i = 0; i < 1000; i++)
			if (i % 2 == 0)
				sb_block(s, MiB, MiB - 512, "active_allocated", fr);
			else
				sb_block(s, MiB, 0, "inactive", none);
	}
	p = expect + strlen(strcpy(expect, HEADER));
	for (int i = 0; i < 1000; i++)
		p += strlen(strcpy(p, BENCH_LINE));
	strcpy(p, BENCH_TAIL);
	mp_out_init(&out);
	t0 = seconds();
	CU_ASSERT_EQUAL_FATAL(mp_analysis_segsum(s, &out, &diag), MP_OK);
	fprintf(stderr, "[segsum: 1,000,000 blocks in %.3f s] ", seconds() - t0);
	got = mp_out_take(&out, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, expect);
	free(got);
	free(expect);
	mp_snapshot_free(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "mixed segments, legacy blocks, sort ties", test_mixed },
		{ "no segments", test_empty },
		{ "negative page index as Python wraps it", test_negative_index },
		{ "where Python raises", test_python_errors },
		{ "page limit", test_page_limit },
		{ "1,000,000 blocks", test_million_blocks },
	};

	return UNIT_RUN("segsum", tests, NULL, NULL);
}

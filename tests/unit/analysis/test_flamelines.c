/* test_flamelines.c - folded lines of segments(), memory() and compare() against PyTorch, and 1M blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_flamelines.h"
#include "snapshot_builder.h"
#include "unit_main.h"

/* Expected texts: the string segments()/memory()/compare() hand to
   format_flamegraph (given an identity function), for the equivalent Python
   dicts below, from PyTorch 2.6.0's _memory_viz.py under python3 3.11.

   F_deep = [{'name': 'PyEval_EvalFrameDefault', 'filename': '/usr/src/python/ceval.c', 'line': 10},
             {'name': 'forward', 'filename': '/home/u/model/net.py', 'line': 42},
             {'name': '_start', 'filename': 'x', 'line': 0},
             {'name': "it's 'q'", 'filename': 'dir/sub/', 'line': -3},
             {'name': 'main€', 'filename': 'train.py', 'line': 7},
             {'name': 'unwind::unwind', 'filename': 'a', 'line': 1}]
   F_filtered = [{'name': '__libc_start_main', 'filename': '/lib/libc.so', 'line': 0},
                 {'name': 'f', 'filename': 'torch/csrc/Objects/call.c', 'line': 5}]
   F_one = [{'name': 'g', 'filename': '/a/b/c.py', 'line': 1}]
   blk(size, req, state, frames) = {'address': 0, 'size': size, 'requested_size': req,
                                    'state': state, 'frames': frames} */
static const struct sb_frame f_deep[] = {
	{ "PyEval_EvalFrameDefault", "/usr/src/python/ceval.c", 10 },
	{ "forward", "/home/u/model/net.py", 42 },
	{ "_start", "x", 0 },
	{ "it's 'q'", "dir/sub/", -3 },
	{ "main\xe2\x82\xac", "train.py", 7 },
	{ "unwind::unwind", "a", 1 },
};
static const struct sb_frame f_filtered[] = {
	{ "__libc_start_main", "/lib/libc.so", 0 },
	{ "f", "torch/csrc/Objects/call.c", 5 },
};
static const struct sb_frame f_one[] = { { "g", "/a/b/c.py", 1 } };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A legacy block {'size', 'state', 'history': [...]} whose records have
   REAL_SIZES[i] and, where FRAMES[i] is not MP_ABSENT, 'frames'. */
static void legacy_block(mp_snapshot *s, int64_t size, const char *state, size_t n, const int64_t *real_sizes,
			 const mp_val *frames)
{
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_block *b = sb_block(s, size, 0, state, MP_ABSENT);
	mp_val recs[4];

	for (size_t i = 0; i < n; i++) {
		mp_val kv[6] = { k->addr, sb_int(s, 0), k->real_size, sb_int(s, real_sizes[i]), k->frames, frames[i] };

		sb_check(mp_heap_make(s->heap, MP_T_DICT, kv, frames[i] != MP_ABSENT ? 3 : 2, &recs[i]) == MP_OK);
	}
	sb_check(mp_heap_make(s->heap, MP_T_LIST, recs, n, &b->history) == MP_OK);
	b->present = MP_F_BLK_SIZE | MP_F_BLK_STATE | MP_F_BLK_HISTORY;
}

/* A legacy block without 'frames' or 'history' (REQUESTED < 0: no 'requested_size' either). */
static void bare_block(mp_snapshot *s, int64_t size, const char *state, int64_t requested)
{
	mp_block *b = sb_block(s, size, requested, state, MP_ABSENT);

	b->present = MP_F_BLK_SIZE | MP_F_BLK_STATE | (requested >= 0 ? MP_F_BLK_REQUESTED_SIZE : 0);
}

/* segments = [
     {'device': 0, 'address': 4096, 'total_size': 8192, 'stream': 0, 'blocks': [
        blk(1024, 1000, 'active_allocated', F_deep), blk(512, 512, 'active_allocated', F_filtered),
        blk(2048, 100, 'inactive', []), blk(512, 512, 'active_pending_free', F_one)]},
     {'device': 1, 'address': 65536, 'total_size': 4096, 'stream': 140234, 'blocks': [
        {'size': 1024, 'state': 'active_allocated', 'history': [
            {'addr': 65536, 'real_size': 300, 'frames': F_one}, {'addr': 65836, 'real_size': 200}]},
        {'size': 1024, 'state': 'active_allocated', 'requested_size': 1000},
        {'size': 1024, 'state': 'inactive'},
        {'size': 1024, 'state': 'active_allocated', 'history': [{'addr': 0, 'real_size': 2048, 'frames': []}]}]}]
   (the 'addr' values of history records do not show in the output) */
static mp_snapshot *mixed_snapshot(void)
{
	mp_snapshot *s = sb_new();
	mp_val deep = sb_frames(s, N(f_deep), f_deep), filtered = sb_frames(s, N(f_filtered), f_filtered);
	mp_val one = sb_frames(s, N(f_one), f_one), none = sb_frames(s, 0, NULL);
	const int64_t sizes1[] = { 300, 200 }, sizes2[] = { 2048 };
	const mp_val frames1[] = { one, MP_ABSENT }, frames2[] = { none };

	sb_segment(s, 0, 4096, 8192, 0);
	sb_block(s, 1024, 1000, "active_allocated", deep);
	sb_block(s, 512, 512, "active_allocated", filtered);
	sb_block(s, 2048, 100, "inactive", none);
	sb_block(s, 512, 512, "active_pending_free", one);
	sb_segment(s, 1, 65536, 4096, 140234);
	legacy_block(s, 1024, "active_allocated", 2, sizes1, frames1);
	bare_block(s, 1024, "active_allocated", 1000);
	bare_block(s, 1024, "inactive", -1);
	legacy_block(s, 1024, "active_allocated", 1, sizes2, frames2);
	return s;
}

typedef mp_err (*analysis_fn)(const mp_snapshot *, mp_out *, mp_diag *);

static void check_lines(analysis_fn fn, mp_snapshot *snap, const char *expect)
{
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(fn(snap, &out, &diag), MP_OK);
	unit_check_text(mp_out_take(&out, NULL), expect);
}

static void test_segments(void)
{
	mp_snapshot *s = mixed_snapshot();

	check_lines(mp_analysis_segments, s,
		    "stream_0;seg_4096;active_allocated;train.py:7:main\xe2\x82\xac;:-3:it's 'q';net.py:42:forward 1000\n"
		    "stream_0;seg_4096;active_allocated;<gaps> 24\n"
		    "stream_0;seg_4096;active_allocated; 512\n"
		    "stream_0;seg_4096;inactive;<non-python> 100\n"
		    "stream_0;seg_4096;inactive;<gaps> 1948\n"
		    "stream_0;seg_4096;active_pending_free;c.py:1:g 512\n"
		    "stream_140234;seg_65536;active_allocated;c.py:1:g 300\n"
		    "stream_140234;seg_65536;active_allocated;<no-context> 200\n"
		    "stream_140234;seg_65536;active_allocated;<gaps> 524\n"
		    "stream_140234;seg_65536;active_allocated;<non-python> 1000\n"
		    "stream_140234;seg_65536;active_allocated;<gaps> 24\n"
		    "stream_140234;seg_65536;inactive;<non-python> 1024\n"
		    "stream_140234;seg_65536;active_allocated;<non-python> 2048\n"
		    "stream_140234;seg_65536;active_allocated;<gaps> -1024\n");
	mp_snapshot_free(s);
}

static void test_memory(void)
{
	mp_snapshot *s = mixed_snapshot();

	check_lines(mp_analysis_memory, s,
		    "stream_0;active_allocated;train.py:7:main\xe2\x82\xac;:-3:it's 'q';net.py:42:forward 1000\n"
		    "stream_0;active_allocated;<gaps> 24\n"
		    "stream_0;active_allocated; 512\n"
		    "stream_0;inactive;<non-python> 100\n"
		    "stream_0;inactive;<gaps> 1948\n"
		    "stream_0;active_pending_free;c.py:1:g 512\n"
		    "stream_140234;active_allocated;c.py:1:g 300\n"
		    "stream_140234;active_allocated;<no-context> 200\n"
		    "stream_140234;active_allocated;<gaps> 524\n"
		    "stream_140234;active_allocated;<non-python> 1000\n"
		    "stream_140234;active_allocated;<gaps> 24\n"
		    "stream_140234;inactive;<non-python> 1024\n"
		    "stream_140234;active_allocated;<non-python> 2048\n"
		    "stream_140234;active_allocated;<gaps> -1024\n");
	mp_snapshot_free(s);
}

/* S(addr, total, stream, blocks) = {'device': 0, 'address': addr, 'total_size': total,
                                      'stream': stream, 'blocks': blocks}
   A = S(4096, 1024, 0, [blk(1024, 1000, 'active_allocated', F_one)])
   B = S(8192, 2048, 0, [blk(2048, 2048, 'inactive', [])])
   C = S(12288, 512, 3, [blk(512, 256, 'active_allocated', F_deep)])
   D = S(12288, 1024, 0, [blk(1024, 1024, 'active_allocated', F_one)])
   E = S(0, 512, 0, [blk(512, 512, 'inactive', [])])
   compare([A, B, C, C], [B, D, E, E]); Python printed (set order)
   only_before = [4096, 12288] and only_after = [12288, 0]. */
static void add_seg(mp_snapshot *s, char which)
{
	mp_val one = sb_frames(s, N(f_one), f_one), deep = sb_frames(s, N(f_deep), f_deep);
	mp_val none = sb_frames(s, 0, NULL);

	switch (which) {
	case 'A':
		sb_segment(s, 0, 4096, 1024, 0);
		sb_block(s, 1024, 1000, "active_allocated", one);
		break;
	case 'B':
		sb_segment(s, 0, 8192, 2048, 0);
		sb_block(s, 2048, 2048, "inactive", none);
		break;
	case 'C':
		sb_segment(s, 0, 12288, 512, 3);
		sb_block(s, 512, 256, "active_allocated", deep);
		break;
	case 'D':
		sb_segment(s, 0, 12288, 1024, 0);
		sb_block(s, 1024, 1024, "active_allocated", one);
		break;
	default:
		sb_segment(s, 0, 0, 512, 0);
		sb_block(s, 512, 512, "inactive", none);
	}
}

static mp_snapshot *segs_of(const char *which)
{
	mp_snapshot *s = sb_new();

	for (; *which != '\0'; which++)
		add_seg(s, *which);
	return s;
}

static void test_compare(void)
{
	mp_snapshot *before = segs_of("ABCC"), *after = segs_of("BDEE");
	mp_out summary, folded;
	mp_diag diag = { 0 };
	char *got;

	mp_out_init(&summary);
	mp_out_init(&folded);
	CU_ASSERT_EQUAL_FATAL(mp_analysis_compare(before, after, &summary, &folded, &diag), MP_OK);
	got = mp_out_take(&summary, NULL);
	CU_ASSERT_STRING_EQUAL(got, "only_before = [4096, 12288]\nonly_after = [0, 12288]\n");
	free(got);
	got = mp_out_take(&folded, NULL);
	CU_ASSERT_STRING_EQUAL(
		got, "only_before;stream_0;seg_4096;active_allocated;c.py:1:g 1000\n"
		     "only_before;stream_0;seg_4096;active_allocated;<gaps> 24\n"
		     "only_before;stream_3;seg_12288;active_allocated;train.py:7:main\xe2\x82\xac;:-3:it's 'q';net.py:42:forward 256\n"
		     "only_before;stream_3;seg_12288;active_allocated;<gaps> 256\n"
		     "only_before;stream_3;seg_12288;active_allocated;train.py:7:main\xe2\x82\xac;:-3:it's 'q';net.py:42:forward 256\n"
		     "only_before;stream_3;seg_12288;active_allocated;<gaps> 256\n"
		     "only_after;stream_0;seg_12288;active_allocated;c.py:1:g 1024\n"
		     "only_after;stream_0;seg_0;inactive;<non-python> 512\n"
		     "only_after;stream_0;seg_0;inactive;<non-python> 512\n");
	free(got);
	mp_snapshot_free(before);
	mp_snapshot_free(after);
}

/* Where Python raises: a history record without 'real_size', a block with
   'frames' but no 'requested_size'. */
static void test_errors(void)
{
	mp_snapshot *s = sb_new();
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_out out;
	mp_diag diag = { 0 };
	mp_block *b;
	mp_val rec;

	sb_segment(s, 0, 0, 512, 0);
	b = sb_block(s, 512, 0, "active_allocated", MP_ABSENT);
	sb_check(mp_heap_make(s->heap, MP_T_DICT, (mp_val[]){ k->addr, sb_int(s, 0) }, 1, &rec) == MP_OK);
	sb_check(mp_heap_make(s->heap, MP_T_LIST, &rec, 1, &b->history) == MP_OK);
	b->present = MP_F_BLK_SIZE | MP_F_BLK_STATE | MP_F_BLK_HISTORY;
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_segments(s, &out, &diag), MP_E_TYPE);
	CU_ASSERT_STRING_EQUAL(diag.msg, "segments: segments[0].blocks[0].history[0]: no int 'real_size'");
	mp_out_free(&out);
	b->present = MP_F_BLK_SIZE | MP_F_BLK_STATE | MP_F_BLK_FRAMES;
	b->frames = sb_frames(s, 0, NULL);
	mp_diag_reset(&diag);
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_memory(s, &out, &diag), MP_E_CORRUPT);
	CU_ASSERT_STRING_EQUAL(diag.msg,
			       "memory: segments[0].blocks[0]: a block with 'frames' needs 'requested_size'");
	mp_out_free(&out);
	mp_snapshot_free(s);
}

/* ---- 1,000,000 blocks with 6 frames each, sharing 1000 tracebacks:
   pool[j] = [{'name': 'PyEval_EvalFrameDefault' if k == 2 else f'fn_{j}_{k}',
               'filename': f'/src/mod{j % 7}/file{k}.py', 'line': j * 10 + k} for k in range(6)]
   segment s (0..999) = S((s + 1) << 32, 1000 << 20, s % 3, blocks) with block i (0..999)
     blk(1 << 20, (1 << 20) - (i % 3) * 512, 'active_allocated', pool[(s * 7 + i) % 1000]) for even i,
     blk(1 << 20, 0, 'inactive', []) for odd i.
   Python (PyTorch 2.6.0): segments() 151958419 bytes, 1833000 lines, zlib.crc32 0x1990cbf0,
   in 6.9 s; memory() 119435500 bytes, crc32 0xe4be2e10, in 5.6 s. */

static mp_snapshot *million_blocks(void)
{
	mp_snapshot *s = sb_new();
	mp_val *pool = malloc(1000 * sizeof *pool), none = sb_frames(s, 0, NULL);
	char names[6][32], files[6][32];

	sb_check(pool != NULL);
	for (int j = 0; j < 1000; j++) {
		struct sb_frame fr[6];

		for (int k = 0; k < 6; k++) {
			snprintf(names[k], sizeof names[k], "fn_%d_%d", j, k);
			snprintf(files[k], sizeof files[k], "/src/mod%d/file%d.py", j % 7, k);
			fr[k] = (struct sb_frame){ k == 2 ? "PyEval_EvalFrameDefault" : names[k], files[k], j * 10 + k };
		}
		pool[j] = sb_frames(s, 6, fr);
	}
	for (int seg = 0; seg < 1000; seg++) {
		sb_segment(s, 0, (int64_t)(seg + 1) << 32, (int64_t)1000 << 20, seg % 3);
		for (int i = 0; i < 1000; i++)
			if (i % 2 == 0)
				sb_block(s, 1 << 20, (1 << 20) - (i % 3) * 512, "active_allocated",
					 pool[(seg * 7 + i) % 1000]);
			else
				sb_block(s, 1 << 20, 0, "inactive", none);
	}
	free(pool);
	return s;
}

/* zlib's CRC-32, to compare a large output with Python's zlib.crc32. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n-- > 0) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static double seconds(void)
{
	struct timespec ts;

	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check_big(analysis_fn fn, const char *name, mp_snapshot *s, size_t expect_len, uint32_t expect_crc)
{
	FILE *tmp = tmpfile();
	static unsigned char chunk[1 << 16];
	size_t n, total = 0;
	uint32_t crc = 0;
	mp_diag diag = { 0 };
	mp_out out;
	double t0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	mp_out_init_file(&out, tmp);
	t0 = seconds();
	CU_ASSERT_EQUAL_FATAL(fn(s, &out, &diag), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_out_flush(&out), MP_OK);
	fprintf(stderr, "[%s: 1,000,000 blocks in %.3f s] ", name, seconds() - t0);
	mp_out_free(&out);
	rewind(tmp);
	while ((n = fread(chunk, 1, sizeof chunk, tmp)) > 0) {
		crc = crc32_update(crc, chunk, n);
		total += n;
	}
	fclose(tmp);
	CU_ASSERT_EQUAL(total, expect_len);
	CU_ASSERT_EQUAL(crc, expect_crc);
}

static void test_million_blocks(void)
{
	mp_snapshot *s = million_blocks();

	check_big(mp_analysis_segments, "segments", s, 151958419, 0x1990cbf0u);
	check_big(mp_analysis_memory, "memory", s, 119435500, 0xe4be2e10u);
	mp_snapshot_free(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "segments: frames, filters, gaps, legacy blocks", test_segments },
		{ "memory", test_memory },
		{ "compare", test_compare },
		{ "where Python raises", test_errors },
		{ "1,000,000 blocks", test_million_blocks },
	};

	return UNIT_RUN("flamelines", tests, NULL, NULL);
}

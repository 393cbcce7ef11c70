/* test_trace_text.c - the `trace` analysis against PyTorch's trace() with memprof's four fixes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_trace_text.h"
#include "snapshot_builder.h"
#include "unit_main.h"

#define MiB ((int64_t)1 << 20)

/* The snapshot of test_trace, in Python:
   F_one = [{'name': 'g', 'filename': '/a/b/c.py', 'line': 1}]
   E(action, addr, size, **kw) = {'action': action, 'addr': addr, 'size': size, 'stream': 0,
                                  'time_us': 0, **kw}
   segments = [
     {'device': 0, 'address': 1000000, 'total_size': 4096, 'allocated_size': 1024, 'stream': 0, 'blocks': []},
     {'device': 1, 'address': 2000000, 'total_size': 8192, 'allocated_size': 8192, 'stream': 0, 'blocks': []},
     {'device': 0, 'address': 1001024, 'total_size': 100, 'allocated_size': 100, 'stream': 0, 'blocks': []},
     {'address': 3000000, 'total_size': 4096, 'allocated_size': 4096, 'stream': 0, 'blocks': []}]
   device_traces = [d0, d1, [], d3] with
   d0 = [E('segment_alloc', 5000000, 2MiB), E('alloc', 5000512, 512), E('alloc', 1002048, 1000),
         E('alloc', 1001050, 24), E('alloc', 2000100, 4096), E('alloc', 3000010, 1),
         E('free_requested', 5000512, 512), E('free_completed', 5000512, 512),
         E('free_requested', 777, 4), E('segment_free', 5000000, 2MiB), E('segment_alloc', 5000000, 1MiB),
         E('alloc', 5000010, 2048), E('segment_free', 999, 0),
         {'action': 'oom', 'device_free': 512MiB, 'size': 1 << 30, 'stream': 0, 'time_us': 0},
         E('annotate', 1002048, 0, user_metadata='phase: fwd'),
         E('annotate', 12345, 0, user_metadata={'k': 1}),
         E('snapshot', 0, 0),
         E('segment_map', 6000000, 2MiB, compile_context="it's", user_metadata='', frames=F_one),
         E('user_defined', 0, 0),
         {'zz_extra': [1.5, None, (2,)], 'action': 'odd"one\'', 'addr': 5, 'size': 6, 'stream': 7, 'time_us': 8}]
        + [E('alloc', 7000000 + i, 1) for i in range(20)]
   d1 = [E('alloc', 2000100, 100), E('free_completed', 2000100, 100)]
   d3 = [E('free_completed', 42, 512)]
   EXPECT is trace(data) of PyTorch 2.14.1's _memory_viz.py after
   tests/oracle/patch_memviz.py (python3 3.11). Unpatched, PyTorch prints
   "c = MEM[1002048:...]" (allocated_size), "d = seg_2[26:...]", "e = seg_1[100:...]" and
   "f = seg_3[10:...]" (all devices), and "TOTAL MEM: 40.0B" with no newline (the loop
   index); 2.6 prints the annotate entries as dict reprs. */
static const char expect_trace[] =
	"Device 0 ----------------\n"
	"40 entries\n"
	"a = cudaMalloc(5000000, 2.0MiB)\n"
	"b = a[512:512.0B]\n"
	"c = seg_0[2048:1000.0B]\n"
	"d = seg_0[1050:24.0B]\n"
	"e = MEM[2000100:4.0KiB]\n"
	"f = MEM[3000010:1.0B]\n"
	"del b # 512.0B\n"
	"# free completed for b 512.0B\n"
	"del 777 # 4.0B\n"
	"cudaFree(a) # 2.0MiB\n"
	"g = cudaMalloc(5000000, 1.0MiB)\n"
	"h = a[10:2.0KiB]\n"
	"cudaFree(999) # 0.0B\n"
	"raise OutOfMemoryError # 1.0GiB requested, 512.0MiB free in CUDA\n"
	"# annotate c: phase: fwd\n"
	"# annotate 12345: {'k': 1}\n"
	"{'action': 'snapshot', 'addr': 0, 'size': 0, 'stream': 0, 'time_us': 0}\n"
	"{'action': 'segment_map', 'addr': 6000000, 'size': 2097152, 'stream': 0, 'time_us': 0, "
	"'compile_context': \"it's\", 'user_metadata': '', 'frames': [{'name': 'g', 'filename': '/a/b/c.py', "
	"'line': 1}]}\n"
	"{'action': 'user_defined', 'addr': 0, 'size': 0, 'stream': 0, 'time_us': 0}\n"
	"{'zz_extra': [1.5, None, (2,)], 'action': 'odd\"one\\'', 'addr': 5, 'size': 6, 'stream': 7, "
	"'time_us': 8}\n"
	"i = a[2000000:1.0B]\n"
	"j = a[2000001:1.0B]\n"
	"k = a[2000002:1.0B]\n"
	"l = a[2000003:1.0B]\n"
	"m = a[2000004:1.0B]\n"
	"n = a[2000005:1.0B]\n"
	"o = a[2000006:1.0B]\n"
	"p = a[2000007:1.0B]\n"
	"q = a[2000008:1.0B]\n"
	"r = a[2000009:1.0B]\n"
	"s = a[2000010:1.0B]\n"
	"t = a[2000011:1.0B]\n"
	"u = a[2000012:1.0B]\n"
	"v = a[2000013:1.0B]\n"
	"w = a[2000014:1.0B]\n"
	"x = a[2000015:1.0B]\n"
	"y = a[2000016:1.0B]\n"
	"z = a[2000017:1.0B]\n"
	"a1 = a[2000018:1.0B]\n"
	"b1 = a[2000019:1.0B]\n"
	"TOTAL MEM: 7.0KiB\n"
	"Device 1 ----------------\n"
	"2 entries\n"
	"a = seg_1[100:100.0B]\n"
	"# free completed for a 100.0B\n"
	"TOTAL MEM: 0.0B\n"
	"Device 3 ----------------\n"
	"1 entries\n"
	"# free completed for 42 512.0B\n"
	"TOTAL MEM: -512.0B\n";

static void add_segments(mp_snapshot *s)
{
	mp_segment *seg;

	sb_segment(s, 0, 1000000, 4096, 0)->allocated_size = 1024;
	sb_segment(s, 1, 2000000, 8192, 0)->allocated_size = 8192;
	sb_segment(s, 0, 1001024, 100, 0)->allocated_size = 100;
	seg = sb_segment(s, 0, 3000000, 4096, 0);
	seg->allocated_size = 4096;
	seg->present &= ~(uint32_t)MP_F_SEG_DEVICE;
	for (size_t i = 0; i < s->nsegments; i++)
		s->segments[i].present |= MP_F_SEG_ALLOCATED_SIZE;
}

static mp_val make(mp_snapshot *s, enum mp_vtype t, const mp_val *items, size_t n)
{
	mp_val v;

	sb_check(mp_heap_make(s->heap, t, items, n, &v) == MP_OK);
	return v;
}

/* {'zz_extra': [1.5, None, (2,)], 'action': 'odd"one\'', 'addr': 5, 'size': 6, 'stream': 7, 'time_us': 8}:
   an unknown key first, kept through the entry's shape and extras. */
static void add_odd_entry(mp_snapshot *s)
{
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_trace_entry *e = sb_entry(s, "odd\"one'", 5, 6);
	mp_val two = mp_val_from_small_int(2), f15, list[3], shape[6];

	sb_check(mp_heap_float(s->heap, 1.5, &f15) == MP_OK);
	list[0] = f15;
	list[1] = MP_NONE;
	list[2] = make(s, MP_T_TUPLE, &two, 1);
	list[0] = make(s, MP_T_LIST, list, 3);
	e->extras = make(s, MP_T_TUPLE, list, 1);
	shape[0] = sb_str(s, "zz_extra");
	shape[1] = k->action;
	shape[2] = k->addr;
	shape[3] = k->size;
	shape[4] = k->stream;
	shape[5] = k->time_us;
	e->shape = make(s, MP_T_TUPLE, shape, 6);
	e->stream = 7;
	e->time_us = 8;
}

static void add_device0(mp_snapshot *s)
{
	struct sb_frame f_one = { "g", "/a/b/c.py", 1 };
	mp_trace_entry *e;
	mp_val kv[2] = { sb_str(s, "k"), mp_val_from_small_int(1) };

	sb_device(s);
	sb_entry(s, "segment_alloc", 5000000, 2 * MiB);
	sb_entry(s, "alloc", 5000512, 512);
	sb_entry(s, "alloc", 1002048, 1000);
	sb_entry(s, "alloc", 1001050, 24);
	sb_entry(s, "alloc", 2000100, 4096);
	sb_entry(s, "alloc", 3000010, 1);
	sb_entry(s, "free_requested", 5000512, 512);
	sb_entry(s, "free_completed", 5000512, 512);
	sb_entry(s, "free_requested", 777, 4);
	sb_entry(s, "segment_free", 5000000, 2 * MiB);
	sb_entry(s, "segment_alloc", 5000000, MiB);
	sb_entry(s, "alloc", 5000010, 2048);
	sb_entry(s, "segment_free", 999, 0);
	e = sb_entry(s, "oom", 512 * MiB, (int64_t)1 << 30);
	e->present = (e->present & ~(uint32_t)MP_F_TR_ADDR) | MP_F_TR_DEVICE_FREE;
	e = sb_entry(s, "annotate", 1002048, 0);
	e->user_metadata = sb_str(s, "phase: fwd");
	e->present |= MP_F_TR_USER_METADATA;
	e = sb_entry(s, "annotate", 12345, 0);
	e->user_metadata = make(s, MP_T_DICT, kv, 1);
	e->present |= MP_F_TR_USER_METADATA;
	sb_entry(s, "snapshot", 0, 0);
	e = sb_entry(s, "segment_map", 6000000, 2 * MiB);
	e->compile_context = sb_str(s, "it's");
	e->user_metadata = sb_str(s, "");
	e->frames = sb_frames(s, 1, &f_one);
	e->present |= MP_F_TR_COMPILE_CONTEXT | MP_F_TR_USER_METADATA | MP_F_TR_FRAMES;
	sb_entry(s, "user_defined", 0, 0);
	add_odd_entry(s);
	for (int i = 0; i < 20; i++)
		sb_entry(s, "alloc", 7000000 + i, 1);
}

static mp_snapshot *trace_snapshot(void)
{
	mp_snapshot *s = sb_new();

	add_segments(s);
	add_device0(s);
	sb_device(s);
	sb_entry(s, "alloc", 2000100, 100);
	sb_entry(s, "free_completed", 2000100, 100);
	sb_device(s);
	sb_device(s);
	sb_entry(s, "free_completed", 42, 512);
	return s;
}

static void test_trace(void)
{
	mp_snapshot *s = trace_snapshot();
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(mp_analysis_trace(s, &out, &diag), MP_OK);
	unit_check_text(mp_out_take(&out, NULL), expect_trace);
	mp_snapshot_free(s);
}

/* Rings that are all empty print nothing (the CLI's print adds the one newline). */
static void test_empty_rings(void)
{
	mp_snapshot *s = sb_new();
	mp_out out;
	mp_diag diag = { 0 };

	sb_device(s);
	sb_device(s);
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_trace(s, &out, &diag), MP_OK);
	CU_ASSERT_EQUAL(out.len, 0);
	mp_out_free(&out);
	mp_snapshot_free(s);
}

/* Python raises KeyError: no 'device_traces' (a bare segment list), an alloc without 'addr'. */
static void test_errors(void)
{
	mp_snapshot *s = sb_new();
	mp_trace_entry *e;
	mp_out out;
	mp_diag diag = { 0 };

	s->present = MP_F_TOP_SEGMENTS;
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_trace(s, &out, &diag), MP_E_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(diag.msg, "trace: the snapshot has no 'device_traces'");
	mp_snapshot_free(s);

	s = sb_new();
	sb_device(s);
	sb_entry(s, "alloc", 1, 1);
	e = sb_entry(s, "alloc", 2, 2);
	e->present &= ~(uint32_t)MP_F_TR_ADDR;
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_analysis_trace(s, &out, &diag), MP_E_CORRUPT);
	CU_ASSERT_STRING_EQUAL(diag.msg, "trace: device_traces[0][1]: a 'alloc' entry needs 'addr'");
	mp_out_free(&out);
	mp_snapshot_free(s);
}

/* Many cudaMallocs at the same and at overlapping addresses: the earliest
   interval that holds an address names it, as PyTorch's in-order scan does. */
static void test_first_interval_wins(void)
{
	mp_snapshot *s = sb_new();
	mp_out out;
	mp_diag diag = { 0 };
	char *got;

	sb_device(s);
	sb_entry(s, "segment_alloc", 1000, 100); /* a: [1000, 1100) */
	sb_entry(s, "segment_alloc", 900, 400);  /* b: [900, 1300), a keeps its part */
	sb_entry(s, "segment_alloc", 1050, 0);   /* c: empty, holds nothing */
	sb_entry(s, "alloc", 950, 1);            /* d in b */
	sb_entry(s, "alloc", 1000, 1);           /* e in a */
	sb_entry(s, "alloc", 1099, 1);           /* f in a */
	sb_entry(s, "alloc", 1100, 1);           /* g in b */
	sb_entry(s, "alloc", 1300, 1);           /* h nowhere */
	mp_out_init(&out);
	CU_ASSERT_EQUAL_FATAL(mp_analysis_trace(s, &out, &diag), MP_OK);
	got = mp_out_take(&out, NULL);
	/* python3 with the patched 2.14.1 trace() on the same entries */
	CU_ASSERT_STRING_EQUAL(got, "Device 0 ----------------\n"
				    "8 entries\n"
				    "a = cudaMalloc(1000, 100.0B)\n"
				    "b = cudaMalloc(900, 400.0B)\n"
				    "c = cudaMalloc(1050, 0.0B)\n"
				    "d = b[50:1.0B]\n"
				    "e = a[0:1.0B]\n"
				    "f = a[99:1.0B]\n"
				    "g = b[200:1.0B]\n"
				    "h = MEM[1300:1.0B]\n"
				    "TOTAL MEM: 5.0B\n");
	free(got);
	mp_snapshot_free(s);
}

static double seconds(void)
{
	struct timespec ts;

	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1,000,000 entries against 10,000 snapshot segments and 10,000 cudaMallocs
   (PyTorch scans both lists for every alloc; memprof searches sorted pieces).
   For i < 10000 and P = (i * 7919) % 10000: segment_alloc(D + 4MiB * P, 2MiB),
   49 allocs of 4 KiB inside it, 50 allocs of 4 KiB inside snapshot segment P. */
static void test_million_entries(void)
{
	const int64_t snap_base = (int64_t)1 << 40, ring_base = (int64_t)2 << 40;
	mp_snapshot *s = sb_new();
	mp_out out;
	mp_diag diag = { 0 };
	size_t len, lines = 0;
	char *got;
	double t0;

	for (int j = 0; j < 10000; j++)
		sb_segment(s, 0, snap_base + j * 4 * MiB, 2 * MiB, 0);
	sb_device(s);
	for (int i = 0; i < 10000; i++) {
		int64_t p = (int64_t)i * 7919 % 10000;

		sb_entry(s, "segment_alloc", ring_base + p * 4 * MiB, 2 * MiB);
		for (int k = 0; k < 49; k++)
			sb_entry(s, "alloc", ring_base + p * 4 * MiB + k * 4096, 4096);
		for (int k = 0; k < 50; k++)
			sb_entry(s, "alloc", snap_base + p * 4 * MiB + k * 4096, 4096);
	}
	mp_out_init(&out);
	t0 = seconds();
	CU_ASSERT_EQUAL_FATAL(mp_analysis_trace(s, &out, &diag), MP_OK);
	fprintf(stderr, "[trace: 1,000,000 entries in %.3f s] ", seconds() - t0);
	got = mp_out_take(&out, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	for (size_t i = 0; i < len; i++)
		lines += got[i] == '\n';
	CU_ASSERT_EQUAL(lines, 1000003);
	/* entry 1 is name 1 ('b') in cudaMalloc 'a'; entry 50 is name 50 ('y1') in seg_0;
	   entry 100 (i = 1, P = 7919) is the cudaMalloc 'w3', entry 151 ('v5') in seg_7919; 990,000 allocs of 4 KiB in all */
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\nb = a[0:4.0KiB]\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\ny1 = seg_0[0:4.0KiB]\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\nw3 = cudaMalloc(2232237948928, 2.0MiB)\nx3 = w3[0:4.0KiB]\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\nv5 = seg_7919[4096:4.0KiB]\n"));
	CU_ASSERT(len > 20 && strcmp(got + len - 19, "\nTOTAL MEM: 3.8GiB\n") == 0);
	free(got);
	mp_snapshot_free(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "every action, names past z, the four fixes", test_trace },
		{ "empty rings", test_empty_rings },
		{ "where Python raises", test_errors },
		{ "first segment_alloc interval wins", test_first_interval_wins },
		{ "1,000,000 entries", test_million_entries },
	};

	return UNIT_RUN("trace_text", tests, NULL, NULL);
}

/* test_py_threads.c - the thread reader on hand-built CPython 3.12 memory (the callback target): two thread
   states, three interpreter frames, a handled exception, the GIL; then damage: a thread list and a frame chain
   that loop, a code pointer into nothing, a thread state of another interpreter (each: bounded, a warning, what
   could be read). And the 3.13 and 3.14 layouts from hand-made _Py_DebugOffsets, checked. Live interpreters: threads.sh. */
#include <stdlib.h>
#include <string.h>

#include "mp_py_threads.h"
#include "py_threads_int.h"

#define BASE 0x10000u
#define MEM_IMAGE_BASE BASE
#define MEM_IMAGE_SIZE 0x8000
#include "mem_image.h"

/* Where things are (3.12: PyThreadState next 8, interp 16, cframe 56, current_exception 96, exc_info 104,
   thread_id 136, native_thread_id 144; _PyInterpreterFrame f_code 0, previous 8, prev_instr 56, owner 70). */
enum {
	RT = BASE + 0x0000, INTERP = BASE + 0x0400, TS1 = BASE + 0x1000, TS2 = BASE + 0x1200, CFRAME = BASE + 0x1400,
	F1 = BASE + 0x2000, F2 = F1 + 0x80, F3 = F2 + 0x80, CODE = BASE + 0x3000, GIL = BASE + 0x3400,
	EXC_ITEM = BASE + 0x3600, EXC = BASE + 0x3700, EXC_TYPE = BASE + 0x3800, TUPLE = BASE + 0x3a00,
	TUPLE_TYPE = BASE + 0x3b00, STR_TYPE = BASE + 0x3c00, STRS = BASE + 0x4000,
};

static unsigned warnings;

static void count_warning(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
	warnings++;
}

/* A compact ASCII str of the 3.12 layout at ADDR, of type STR_TYPE. */
static void make_str(uint64_t addr, const char *text)
{
	put64(addr + 8, STR_TYPE);
	put64(addr + 16, strlen(text));
	mem[addr - BASE + 32] = (unsigned char)(1 << 2 | 1 << 5 | 1 << 6);
	memcpy(mem + (addr - BASE) + 40, text, strlen(text));
}

/* A frame at ADDR at byte offset LASTI of CODE, PREVIOUS before it. */
static void make_frame(uint64_t addr, uint64_t previous, int lasti)
{
	put64(addr + 0, CODE);
	put64(addr + 8, previous);
	put64(addr + 56, CODE + 192 + (uint64_t)lasti);
}

static void build(void)
{
	static const unsigned char table[] = { 0xf8, 0x80, 0x00, 0xd8, 0x08, 0x0c };

	memset(mem, 0, sizeof mem);
	put64(RT + 64, 0x1111); /* _PyRuntime.main_thread */
	put64(INTERP + 72, TS1);
	put64(INTERP + 384, GIL);
	put64(TS1 + 8, TS2);
	put64(TS1 + 16, INTERP);
	put64(TS1 + 56, CFRAME);
	put64(TS1 + 104, EXC_ITEM);
	put64(TS1 + 136, 0x1111);
	put64(TS1 + 144, 11);
	put64(TS2 + 16, INTERP);
	put64(TS2 + 136, 0x2222);
	put64(TS2 + 144, 22);
	put64(CFRAME + 0, F1);
	make_frame(F1, F2, 0);
	make_frame(F2, F3, 2);
	make_frame(F3, 0, 4);
	/* the code object: f.py, fn, C.fn, first line 7 */
	put32(CODE + 68, 7);
	make_str(STRS + 0x000, "f.py");
	make_str(STRS + 0x100, "fn");
	make_str(STRS + 0x200, "C.fn");
	put64(CODE + 112, STRS + 0x000);
	put64(CODE + 120, STRS + 0x100);
	put64(CODE + 128, STRS + 0x200);
	put64(CODE + 136, STRS + 0x300);
	put64(STRS + 0x300 + 16, sizeof table);
	memcpy(mem + (STRS + 0x300 - BASE) + 32, table, sizeof table);
	/* TS1 handles ValueError("boom"): its exception stack's entry holds it */
	put64(EXC_ITEM + 0, EXC);
	put64(EXC + 8, EXC_TYPE);
	put64(EXC + 24, TUPLE);
	put64(EXC_TYPE + 24, STRS + 0x400);
	memcpy(mem + (STRS + 0x400 - BASE), "ValueError", 11);
	put64(EXC_TYPE + 168, 1ul << 30);
	put64(TUPLE + 8, TUPLE_TYPE);
	put64(TUPLE + 16, 1);
	put64(TUPLE + 24, STRS + 0x500);
	put64(TUPLE_TYPE + 168, 1ul << 26);
	put64(STR_TYPE + 168, 1ul << 28);
	make_str(STRS + 0x500, "boom");
	/* TS2 holds the GIL */
	put64(GIL + 8, TS2);
	put32(GIL + 16, 1);
}

static mp_py_interp interp_312(void)
{
	mp_py_interp py = { .major = 3, .minor = 12, .micro = 1, .path = "test", .runtime = RT };

	py.layout = mp_py_layout_for(3, 12);
	return py;
}

static mp_py_runtime *runtime(void)
{
	mp_py_runtime *rt = calloc(1, sizeof *rt);

	rt->addr = RT;
	rt->interps[0] = INTERP;
	rt->ninterps = 1;
	rt->main_interp = INTERP;
	return rt;
}

/* Read the threads of MEM into OUT; the warnings it gave in WARNINGS. */
static mp_err read_threads(mp_target *t, mp_py_threads *out)
{
	mp_py_interp py = interp_312();
	mp_py_runtime *rt = runtime();
	mp_diag diag = { .warn = count_warning };
	mp_err err;

	warnings = 0;
	mp_target_flush(t);
	err = mp_py_threads_read(t, &py, rt, out, &diag);
	free(rt);
	return err;
}

static void test_threads(void)
{
	mp_target *t = open_mem();
	mp_py_threads ts;

	build();
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(warnings, 0);
	CU_ASSERT_FALSE(ts.partial);
	CU_ASSERT_EQUAL_FATAL(ts.nthreads, 2);
	CU_ASSERT_EQUAL(ts.threads[0].thread_id, 0x1111);
	CU_ASSERT_EQUAL(ts.threads[0].native_thread_id, 11);
	CU_ASSERT_TRUE(ts.threads[0].is_main);
	CU_ASSERT_FALSE(ts.threads[1].is_main);
	CU_ASSERT_TRUE(ts.gil_known);
	CU_ASSERT_FALSE(ts.threads[0].holds_gil);
	CU_ASSERT_TRUE(ts.threads[1].holds_gil);
	CU_ASSERT_EQUAL_FATAL(ts.threads[0].nframes, 3);
	CU_ASSERT_STRING_EQUAL(ts.threads[0].frames[0].filename, "f.py");
	CU_ASSERT_STRING_EQUAL(ts.threads[0].frames[0].name, "fn");
	CU_ASSERT_STRING_EQUAL(ts.threads[0].frames[0].qualname, "C.fn");
	CU_ASSERT_EQUAL(ts.threads[0].frames[0].frame, F1);
	CU_ASSERT_EQUAL(ts.threads[0].frames[2].frame, F3);
	CU_ASSERT_EQUAL(ts.threads[0].frames[1].lasti, 2);
	/* the line table: no line for the first code unit, then 7, 8 */
	CU_ASSERT_EQUAL(ts.threads[0].frames[0].line, -1);
	CU_ASSERT_EQUAL(ts.threads[0].frames[1].line, 7);
	CU_ASSERT_EQUAL(ts.threads[0].frames[2].line, 8);
	CU_ASSERT_EQUAL(ts.threads[1].nframes, 0);
	CU_ASSERT_FALSE(ts.threads[1].frames_cut);
	CU_ASSERT_EQUAL(ts.threads[0].exc, EXC);
	CU_ASSERT_FALSE(ts.threads[0].exc_raising);
	CU_ASSERT_STRING_EQUAL(ts.threads[0].exc_type, "ValueError");
	CU_ASSERT_STRING_EQUAL(ts.threads[0].exc_msg, "boom");
	CU_ASSERT_PTR_NULL(ts.threads[1].exc_type);
	mp_py_threads_free(&ts);
	/* being raised (current_exception) wins over being handled */
	put64(TS1 + 96, EXC);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_TRUE(ts.threads[0].exc_raising);
	mp_py_threads_free(&ts);
	mp_target_close(t);
}

static void test_damage(void)
{
	mp_target *t = open_mem();
	mp_py_threads ts;

	/* the thread list loops back to its head: two threads, a warning */
	build();
	put64(TS2 + 8, TS1);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(ts.nthreads, 2);
	CU_ASSERT_EQUAL(warnings, 1);
	CU_ASSERT_TRUE(ts.partial);
	mp_py_threads_free(&ts);
	/* a thread state that loops onto itself */
	put64(TS2 + 8, TS2);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(ts.nthreads, 2);
	CU_ASSERT_EQUAL(warnings, 1);
	mp_py_threads_free(&ts);
	/* the frame chain loops (F3 back to F2): three frames, cut, a warning */
	build();
	put64(F3 + 8, F2);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(ts.threads[0].nframes, 3);
	CU_ASSERT_TRUE(ts.threads[0].frames_cut);
	CU_ASSERT_EQUAL(warnings, 1);
	CU_ASSERT_TRUE(ts.partial);
	mp_py_threads_free(&ts);
	/* a frame whose code pointer leads nowhere: named "??", the others read */
	build();
	put64(F2 + 0, 0x20);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL_FATAL(ts.threads[0].nframes, 3);
	CU_ASSERT_STRING_EQUAL(ts.threads[0].frames[1].name, "??");
	CU_ASSERT_EQUAL(ts.threads[0].frames[1].line, -1);
	CU_ASSERT_STRING_EQUAL(ts.threads[0].frames[2].name, "fn");
	CU_ASSERT_EQUAL(warnings, 1);
	CU_ASSERT_TRUE(ts.partial);
	mp_py_threads_free(&ts);
	/* a frame pointer into nothing: the frames before it */
	build();
	put64(F2 + 8, 0x30);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(ts.threads[0].nframes, 2);
	CU_ASSERT_TRUE(ts.threads[0].frames_cut);
	mp_py_threads_free(&ts);
	/* the second thread state names another interpreter: the list ends before it */
	build();
	put64(TS2 + 16, 0x999);
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(ts.nthreads, 1);
	CU_ASSERT_EQUAL(warnings, 1);
	mp_py_threads_free(&ts);
	/* not even the first: an error */
	put64(TS1 + 16, 0x999);
	CU_ASSERT_EQUAL(read_threads(t, &ts), MP_E_CORRUPT);
	CU_ASSERT_EQUAL(ts.nthreads, 0);
	/* a C-stack shim (owner 3) is not shown */
	build();
	mem[F2 - BASE + 70] = 3;
	CU_ASSERT_EQUAL_FATAL(read_threads(t, &ts), MP_OK);
	CU_ASSERT_EQUAL(ts.threads[0].nframes, 2);
	CU_ASSERT_EQUAL(warnings, 0);
	mp_py_threads_free(&ts);
	mp_target_close(t);
}

/* Put the 64-bit V at byte AT of RT's debug offsets. */
static void debug_put(mp_py_runtime *rt, size_t at, uint64_t v)
{
	memcpy(rt->debug + at, &v, 8);
}

/* 3.13.0's _Py_DebugOffsets as its DWARF and initialiser give them (the sections this reader uses). */
static void debug_313(mp_py_runtime *rt)
{
	static const uint64_t interp[] = { 48, 7392, 0, 8, 7344, 0, 0, 0, 0, 16, 7752, 0, 7768, 7760 };
	static const uint64_t tstate[] = { 152, 304, 0, 8, 16, 72, 152, 160, 176, 192 };
	static const uint64_t frame[] = { 224, 72, 8, 0, 56, 72, 70 };

	memcpy(rt->debug, "xdebugpy", 8);
	rt->has_debug_offsets = true;
	rt->debug_len = 584;
	for (size_t i = 1; i < sizeof interp / sizeof interp[0]; i++)
		debug_put(rt, interp[0] + 8 * (i - 1), interp[i]);
	for (size_t i = 1; i < sizeof tstate / sizeof tstate[0]; i++)
		debug_put(rt, tstate[0] + 8 * (i - 1), tstate[i]);
	for (size_t i = 1; i < sizeof frame / sizeof frame[0]; i++)
		debug_put(rt, frame[0] + 8 * (i - 1), frame[i]);
	debug_put(rt, 272, 208);      /* code_object.size */
	debug_put(rt, 272 + 72, 200); /* co_code_adaptive */
}

/* A 3.14 _Py_DebugOffsets of one of the two shapes its sources give (LONG: the interpreter's two generations,
   the frame's tlbc_index, the code's co_tlbc), with made-up but plausible offsets. */
static void debug_314(mp_py_runtime *rt, bool long_shape)
{
	const uint64_t interp[] = { 7400, 0, 8, 7000, 7008, 0, 0, 0, 0, 16, 8000, 0, 8016, 8008, 0, 0 };
	const uint64_t tstate[] = { 320, 0, 8, 16, 80, 160, 168, 176, 184 };
	const uint64_t frame[] = { 80, 8, 0, 56, 80, 70, 64, 72 };
	size_t at = 48, ninterp = long_shape ? 16 : 14, nframe = long_shape ? 8 : 7;

	memset(rt->debug, 0, sizeof rt->debug);
	memcpy(rt->debug, "xdebugpy", 8);
	rt->has_debug_offsets = true;
	rt->debug_len = 1024;
	for (size_t i = 0; i < ninterp; i++, at += 8)
		debug_put(rt, at, interp[i]);
	for (size_t i = 0; i < 9; i++, at += 8)
		debug_put(rt, at, tstate[i]);
	for (size_t i = 0; i < nframe; i++, at += 8)
		debug_put(rt, at, frame[i]);
	debug_put(rt, at, 216);      /* code_object.size */
	debug_put(rt, at + 72, 200); /* co_code_adaptive */
}

static void test_layouts_314(void)
{
	mp_py_interp py = interp_312();
	mp_py_runtime *rt = runtime();
	py_thread_layout l;
	mp_diag diag = { .warn = count_warning };

	py.minor = 14;
	py.layout = mp_py_layout_for(3, 14);
	for (int shape = 0; shape < 2; shape++) {
		debug_314(rt, shape == 1);
		warnings = 0;
		CU_ASSERT_EQUAL_FATAL(py_thread_layout_get(&py, rt, &l, &diag), MP_OK);
		CU_ASSERT_STRING_EQUAL(l.source, "_Py_DebugOffsets");
		CU_ASSERT_EQUAL(warnings, 0);
		CU_ASSERT_EQUAL(l.interp_threads_head, 7000);
		CU_ASSERT_EQUAL(l.interp_threads_main, 7008);
		CU_ASSERT_EQUAL(l.gil_locked, 16);
		CU_ASSERT_EQUAL(l.gil_holder, 8);
		CU_ASSERT_EQUAL(l.ts_frame, 80);
		CU_ASSERT_EQUAL(l.ts_thread_id, 160);
		CU_ASSERT_EQUAL(l.ts_exc_info, 128);
		CU_ASSERT_EQUAL(l.f_owner, 70);
		CU_ASSERT_EQUAL(l.code_adaptive, 200);
		CU_ASSERT_TRUE(l.code_tagged);
	}
	free(rt);
}

static void test_layouts(void)
{
	mp_py_interp py = interp_312();
	mp_py_runtime *rt = runtime();
	py_thread_layout l, table;
	mp_diag diag = { .warn = count_warning };

	py.minor = 13;
	py.layout = mp_py_layout_for(3, 13);
	CU_ASSERT_EQUAL_FATAL(py_thread_layout_get(&py, rt, &table, &diag), MP_OK);
	CU_ASSERT_STRING_EQUAL(table.source, "table");
	debug_313(rt);
	warnings = 0;
	CU_ASSERT_EQUAL_FATAL(py_thread_layout_get(&py, rt, &l, &diag), MP_OK);
	CU_ASSERT_STRING_EQUAL(l.source, "_Py_DebugOffsets");
	CU_ASSERT_EQUAL(warnings, 0);
	/* what the runtime publishes and what it leaves to the table agree with 3.13.0's DWARF */
	CU_ASSERT_EQUAL(l.interp_threads_head, table.interp_threads_head);
	CU_ASSERT_EQUAL(l.interp_threads_main, table.interp_threads_main);
	CU_ASSERT_EQUAL(l.interp_gil_ptr, table.interp_gil_ptr);
	CU_ASSERT_EQUAL(l.gil_holder, table.gil_holder);
	CU_ASSERT_EQUAL(l.gil_locked, table.gil_locked);
	CU_ASSERT_EQUAL(l.ts_frame, table.ts_frame);
	CU_ASSERT_EQUAL(l.ts_thread_id, table.ts_thread_id);
	CU_ASSERT_EQUAL(l.ts_native_thread_id, table.ts_native_thread_id);
	CU_ASSERT_EQUAL(l.ts_exc_info, table.ts_exc_info);
	CU_ASSERT_EQUAL(l.ts_current_exception, table.ts_current_exception);
	CU_ASSERT_EQUAL(l.f_back, table.f_back);
	CU_ASSERT_EQUAL(l.f_code, table.f_code);
	CU_ASSERT_EQUAL(l.f_lasti, table.f_lasti);
	CU_ASSERT_EQUAL(l.f_owner, table.f_owner);
	CU_ASSERT_EQUAL(l.code_adaptive, table.code_adaptive);
	CU_ASSERT_EQUAL(l.code_firsttraceable, table.code_firsttraceable);
	/* offsets that are not what a thread state has: a warning, the table */
	debug_put(rt, 152 + 8, 24); /* thread_state.prev */
	warnings = 0;
	CU_ASSERT_EQUAL(py_thread_layout_get(&py, rt, &l, &diag), MP_OK);
	CU_ASSERT_STRING_EQUAL(l.source, "table");
	CU_ASSERT_EQUAL(warnings, 1);
	/* 3.14 has no table: such offsets leave it unread */
	py.minor = 14;
	CU_ASSERT_EQUAL(py_thread_layout_get(&py, rt, &l, &diag), MP_E_UNSUPPORTED);
	py.minor = 9;
	CU_ASSERT_EQUAL(py_thread_layout_get(&py, rt, &l, &diag), MP_E_UNSUPPORTED);
	free(rt);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "threads, frames, exception, GIL", test_threads },
		{ "loops, bad pointers, other interpreters", test_damage },
		{ "3.13 from _Py_DebugOffsets", test_layouts },
		{ "3.14 from either shape of _Py_DebugOffsets", test_layouts_314 },
	};

	return UNIT_RUN("py_threads", tests, NULL, NULL);
}

/* test_context.c - the context reader on hand-built memory (the callback target): CapturedTracebacks
   with Python frames decoded and interned (equal tracebacks at two addresses give one sequence), C++
   addresses outside any file, and damage: another vtable, vectors out of order, Python frames without
   their unwinder, a code object in no memory, no interpreter. Real jobs: tests/walker/jobs.sh. */
#include <string.h>

#include "context_int.h"

#define BASE 0x10000u
#define VPTR 0x7000010u /* the vtable's address point the reader is told */
#define MEM_IMAGE_BASE BASE
#define MEM_IMAGE_SIZE 16384
#include "mem_image.h"

static mp_target *target; /* the test's: its page cache is flushed after each change to MEM */

/* A compact ASCII str of the 3.13 layout at ADDR. */
static void make_str(uint64_t addr, const char *s)
{
	put64(addr + 16, strlen(s));
	mem[addr - BASE + 32] = (unsigned char)(1 << 2 | 1 << 5 | 1 << 6);
	memcpy(mem + (addr - BASE) + 40, s, strlen(s));
}

/* Where things are. */
enum {
	CODE = BASE,           /* a code object of f.py, fn, first line 7 */
	STRS = BASE + 1024,    /* its strings and line table */
	PYFRAMES = BASE + 4096, /* two PyFrames {CODE, 0}, {CODE, 4} */
	BADFRAME = BASE + 4160, /* one PyFrame whose code is in no memory */
	IPS = BASE + 4224,      /* two C++ return addresses in no file */
	CTS = BASE + 8192,      /* the CapturedTracebacks, 128 bytes apart */
};

static const mp_py_layout *py313(void)
{
	return mp_py_layout_for(3, 13);
}

static void make_code(void)
{
	const mp_py_layout *l = py313();
	const unsigned char table[] = { 0xf8, 0x80, 0x00, 0xd8, 0x08, 0x0c };

	make_str(STRS, "f.py");
	make_str(STRS + 256, "fn");
	make_str(STRS + 512, "C.fn");
	put64(STRS + 768 + 16, sizeof table);
	memcpy(mem + (STRS + 768 + 32 - BASE), table, sizeof table);
	put32(CODE + l->code_firstlineno, 7);
	put64(CODE + l->code_filename, STRS);
	put64(CODE + l->code_name, STRS + 256);
	put64(CODE + l->code_qualname, STRS + 512);
	put64(CODE + l->code_linetable, STRS + 768);
}

/* A std::vector's three pointers at ADDR: N elements of ELEM bytes from BEGIN. */
static void make_vector(uint64_t addr, uint64_t begin, uint64_t n, uint64_t elem)
{
	put64(addr, begin);
	put64(addr + 8, begin + n * elem);
	put64(addr + 16, begin + n * elem);
}

/* CapturedTraceback I: NPY PyFrames at PY, NCPP addresses at CPP, the unwinder pointer PYTHON. */
static uint64_t make_ct(int i, uint64_t vptr, uint64_t py, uint64_t npy, uint64_t cpp, uint64_t ncpp, uint64_t python)
{
	uint64_t ct = CTS + 128u * (unsigned)i;

	memset(mem + (ct - BASE), 0, 128);
	put64(ct, vptr);
	make_vector(ct + 8, py, npy, 16);
	make_vector(ct + 32, cpp, ncpp, 8);
	put64(ct + 80, python);
	return ct;
}

static mp_target *open_target(void)
{
	return target = open_mem();
}

static mp_ctx_reader *open_reader(mp_target *t, bool python)
{
	mp_py_interp interp = { .major = 3, .minor = 13, .micro = 0, .layout = py313() };
	mp_ctx_reader *r = NULL;

	CU_ASSERT_EQUAL_FATAL(ctx_reader_new(t, VPTR, "", python ? &interp : NULL, "no interpreter in this test", &r),
			      MP_OK);
	return r;
}

static void setup(void)
{
	memset(mem, 0, sizeof mem);
	make_code();
	put64(PYFRAMES, CODE);
	put32(PYFRAMES + 8, 0);
	put64(PYFRAMES + 16, CODE);
	put32(PYFRAMES + 24, 4);
	put64(BADFRAME, 0x30);
	put32(BADFRAME + 8, 0);
	put64(IPS, 0x1234);
	put64(IPS + 8, 0x5678);
}

/* The frames of CTX as read by R. */
static size_t frames_of(mp_ctx_reader *r, uint64_t ctx, uint32_t *seq, const mp_ctx_frame **f, size_t max)
{
	const uint32_t *ids;
	size_t n;

	mp_target_flush(target);
	CU_ASSERT_EQUAL_FATAL(mp_ctx_get(r, ctx, seq), MP_OK);
	ids = mp_ctx_seq(r, *seq, &n);
	for (size_t i = 0; i < n && i < max; i++)
		f[i] = mp_ctx_frame_at(r, ids[i]);
	return n;
}

static void test_python_frames(void)
{
	mp_target *t = open_target();
	mp_ctx_reader *r;
	const mp_ctx_frame *f[4];
	mp_py_code code;
	mp_diag diag = { 0 };
	mp_ctx_stats st;
	uint32_t a, b, again;
	uint64_t ct1, ct2;

	setup();
	r = open_reader(t, true);
	ct1 = make_ct(0, VPTR, PYFRAMES, 2, 0, 0, 0x99);
	ct2 = make_ct(1, VPTR, PYFRAMES, 2, 0, 0, 0x99);
	CU_ASSERT_EQUAL_FATAL(frames_of(r, ct1, &a, f, 4), 2);
	CU_ASSERT_STRING_EQUAL(f[0]->filename, "f.py");
	CU_ASSERT_STRING_EQUAL(f[0]->name, "fn"); /* co_name, as _snapshot() names a frame */
	CU_ASSERT_EQUAL_FATAL(mp_py_read_code(t, py313(), NULL, CODE, &code, &diag), MP_OK);
	CU_ASSERT_EQUAL(f[0]->line, (uint64_t)mp_py_code_line(py313(), &code, 0));
	CU_ASSERT_EQUAL(f[1]->line, (uint64_t)mp_py_code_line(py313(), &code, 4));
	CU_ASSERT_NOT_EQUAL(f[0]->line, f[1]->line);
	mp_py_code_free(&code);
	/* the same frames at another address: one sequence; the same address again: decoded once */
	CU_ASSERT_EQUAL(frames_of(r, ct2, &b, f, 4), 2);
	CU_ASSERT_EQUAL(a, b);
	CU_ASSERT_EQUAL(frames_of(r, ct1, &again, f, 4), 2);
	CU_ASSERT_EQUAL(again, a);
	mp_ctx_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.contexts, 2);
	CU_ASSERT_EQUAL(st.python_frames, 4);
	CU_ASSERT_EQUAL(st.damaged, 0);
	CU_ASSERT_EQUAL(mp_ctx_nframes(r), 2);
	/* no context at all: the empty sequence */
	CU_ASSERT_EQUAL(mp_ctx_get(r, 0, &a), MP_OK);
	CU_ASSERT_EQUAL(a, 0);
	mp_ctx_close(r);
	mp_target_close(t);
}

static void test_cpp_then_python(void)
{
	mp_target *t = open_target();
	mp_ctx_reader *r;
	const mp_ctx_frame *f[4];
	uint32_t seq;

	setup();
	r = open_reader(t, true);
	/* no evaluation-loop frame among the C++ ones: the Python frames come after them all */
	CU_ASSERT_EQUAL_FATAL(frames_of(r, make_ct(0, VPTR, PYFRAMES, 1, IPS, 2, 0x99), &seq, f, 4), 3);
	CU_ASSERT_STRING_EQUAL(f[0]->name, "<unwind unsupported>"); /* an address in no file, as PyTorch says */
	CU_ASSERT_STRING_EQUAL(f[0]->filename, "??");
	CU_ASSERT_STRING_EQUAL(f[1]->name, "<unwind unsupported>");
	CU_ASSERT_STRING_EQUAL(f[2]->filename, "f.py");
	/* the unwinder set but no Python frame gathered (a thread running no Python): empty, not damage */
	CU_ASSERT_EQUAL(frames_of(r, make_ct(1, VPTR, PYFRAMES, 0, 0, 0, 0x99), &seq, f, 4), 0);
	mp_ctx_close(r);
	mp_target_close(t);
}

static void warned(void *ctx, const char *line)
{
	(void)line;
	++*(int *)ctx;
}

static void test_damage(void)
{
	mp_target *t = open_target();
	mp_ctx_reader *r;
	const mp_ctx_frame *f[4];
	mp_ctx_stats st;
	uint32_t seq;
	uint64_t ct;
	int warnings = 0;
	mp_diag diag = { .warn = warned, .warn_ctx = &warnings };

	setup();
	r = open_reader(t, true);
	CU_ASSERT_EQUAL(frames_of(r, make_ct(0, VPTR + 8, PYFRAMES, 1, 0, 0, 0x99), &seq, f, 4), 0); /* another vtable */
	CU_ASSERT_EQUAL(seq, 0);
	ct = make_ct(1, VPTR, PYFRAMES, 1, 0, 0, 0x99);
	put64(ct + 16, PYFRAMES - 16); /* end before begin */
	CU_ASSERT_EQUAL(frames_of(r, ct, &seq, f, 4), 0);
	ct = make_ct(2, VPTR, PYFRAMES, 1, 0, 0, 0x99);
	put64(ct + 16, PYFRAMES + ((uint64_t)1 << 40)); /* a frame count no stack has: refused before reading */
	put64(ct + 24, PYFRAMES + ((uint64_t)1 << 40));
	CU_ASSERT_EQUAL(frames_of(r, ct, &seq, f, 4), 0);
	CU_ASSERT_EQUAL(frames_of(r, make_ct(3, VPTR, PYFRAMES, 1, 0, 0, 0), &seq, f, 4), 0); /* no unwinder */
	CU_ASSERT_EQUAL(frames_of(r, make_ct(4, VPTR, 0x40, 2, 0, 0, 0x99), &seq, f, 4), 0);   /* frames in no memory */
	CU_ASSERT_EQUAL(frames_of(r, 0x50, &seq, f, 4), 0);                                    /* the context itself */
	/* a code object in no memory: a frame that says so, the rest of the traceback kept */
	CU_ASSERT_EQUAL_FATAL(frames_of(r, make_ct(5, VPTR, BADFRAME, 1, 0, 0, 0x99), &seq, f, 4), 1);
	CU_ASSERT_STRING_EQUAL(f[0]->name, "<unreadable code object>");
	mp_ctx_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.damaged, 6);
	CU_ASSERT_EQUAL(st.unreadable_code, 1);
	mp_ctx_report(r, &diag);
	CU_ASSERT_EQUAL(warnings, 2); /* one line per kind of trouble */
	mp_ctx_close(r);
	mp_target_close(t);
}

static void test_no_interpreter(void)
{
	mp_target *t = open_target();
	mp_ctx_reader *r;
	const mp_ctx_frame *f[4];
	mp_ctx_stats st;
	uint32_t seq;

	setup();
	r = open_reader(t, false);
	CU_ASSERT_EQUAL_FATAL(frames_of(r, make_ct(0, VPTR, PYFRAMES, 2, 0, 0, 0x99), &seq, f, 4), 2);
	CU_ASSERT_STRING_EQUAL(f[0]->name, "<unreadable code object>");
	mp_ctx_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.unreadable_code, 2);
	mp_ctx_close(r);
	/* a callback target maps no file: mp_ctx_open finds no libtorch_cpu, and every context is damage */
	CU_ASSERT_EQUAL_FATAL(mp_ctx_open(t, &r, NULL), MP_OK);
	CU_ASSERT_EQUAL(frames_of(r, make_ct(1, VPTR, PYFRAMES, 2, 0, 0, 0x99), &seq, f, 4), 0);
	mp_ctx_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.damaged, 1);
	mp_ctx_close(r);
	mp_target_close(t);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "Python frames, interned", test_python_frames },
		{ "C++ frames, then Python", test_cpp_then_python },
		{ "damaged contexts", test_damage },
		{ "no interpreter, no libtorch", test_no_interpreter },
	};

	return UNIT_RUN("context", tests, NULL, NULL);
}

/* context_int.h - the context reader's parts: interning (context_intern.c), Python frames
   (context_python.c), C++ frames (context_cpp.c), and the reader that splices them (context_reader.c). */
#ifndef MEMPROF_CONTEXT_INT_H
#define MEMPROF_CONTEXT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_context.h"
#include "mp_py.h"
#include "mp_symbolize.h"
#include "mp_table.h"

/* Longest frame vectors read: deeper is damage (Python's recursion limit is 1000 by default). */
#define CTX_MAX_FRAMES (1u << 16)

/* Interned strings, frames and frame sequences. */
struct ctx_intern {
	char **strs;
	size_t nstrs, strs_cap;
	mp_table str_index;
	mp_ctx_frame *frames;
	size_t nframes, frames_cap;
	mp_table frame_index;
	uint32_t *pool; /* every sequence's frame ids, back to back */
	size_t pool_len, pool_cap;
	struct ctx_seq {
		size_t off;
		uint32_t n;
	} *seqs;
	size_t nseqs, seqs_cap;
	mp_table seq_index;
};

mp_err ctx_intern_init(struct ctx_intern *in) MP_WUR; /* sequence 0: the empty one */
void ctx_intern_free(struct ctx_intern *in);
/* The interned copy of S. */
mp_err ctx_intern_str(struct ctx_intern *in, const char *s, const char **out) MP_WUR;
/* The id of frame {FILENAME, NAME, LINE}, strings interned here. */
mp_err ctx_intern_frame(struct ctx_intern *in, const char *filename, const char *name, uint64_t line,
			uint32_t *id) MP_WUR;
/* The id of the sequence IDS[0..N). */
mp_err ctx_intern_seq(struct ctx_intern *in, const uint32_t *ids, size_t n, uint32_t *seq) MP_WUR;

/* Why something was not decoded: counted, and the first case's words kept for the warning. */
struct ctx_trouble {
	size_t count;
	char first[200];
};
void ctx_trouble_add(struct ctx_trouble *tr, const char *fmt, ...) MP_PRINTF(2, 3);

/* Python frames: code objects read once by address, frames once by (code, lasti). */
struct ctx_python {
	mp_target *t;
	mp_py_interp interp;
	bool found;          /* an interpreter memprof can read */
	char why_not[sizeof(((mp_diag *)0)->msg)]; /* else why not */
	struct ctx_code {
		uint64_t addr;
		int32_t lasti;
		uint32_t frame;
	} *known;
	size_t nknown, known_cap;
	mp_table known_index;
	struct ctx_code_obj {
		uint64_t addr;
		mp_py_code code;
		bool ok;
	} *codes;
	size_t ncodes, codes_cap;
	mp_table code_index;
	struct ctx_trouble unreadable;
};

/* Python frames of T's interpreter INTERP (NULL: none memprof can read, for the reason WHY_NOT). */
void ctx_python_init(struct ctx_python *py, mp_target *t, const mp_py_interp *interp, const char *why_not);
void ctx_python_free(struct ctx_python *py);
/* The frame of the Python frame {CODE, LASTI}: {co_filename, co_name, PyCode_Addr2Line}; a code
   object that cannot be read gives a frame named "<unreadable code object>". */
mp_err ctx_python_frame(struct ctx_python *py, struct ctx_intern *in, uint64_t code, int32_t lasti,
			uint32_t *frame) MP_WUR;

/* What a C++ frame means to the splice. */
enum ctx_cpp_kind {
	CTX_CPP_PLAIN,
	CTX_CPP_EVAL_FRAME, /* a CPython evaluation loop (its name holds "PyEval_EvalFrame") */
	CTX_CPP_JIT_RUN,    /* TorchScript's interpreter (torch::jit::InterpreterStateImpl::run...) */
};

/* C++ frames: each return address symbolized once. */
struct ctx_cpp {
	mp_target *t;
	mp_symbolizer *sym; /* opened on the first address */
	struct ctx_ip {
		uint64_t ip;
		uint32_t frame;
		uint8_t kind;
	} *ips;
	size_t nips, ips_cap;
	mp_table ip_index;
	size_t unnamed, nearest;
};

void ctx_cpp_init(struct ctx_cpp *cpp, mp_target *t);
void ctx_cpp_free(struct ctx_cpp *cpp);
mp_err ctx_cpp_frame(struct ctx_cpp *cpp, struct ctx_intern *in, uint64_t ip, uint32_t *frame,
		     enum ctx_cpp_kind *kind) MP_WUR;

/* A reader of T's contexts whose CapturedTraceback vptr is VPTR (0: unknown, for the reason WHY_NO_VPTR)
   and whose interpreter is INTERP (NULL: none, for the reason WHY_NO_PYTHON). mp_ctx_open finds both in
   the target's files; the unit tests give them for hand-made memory. */
mp_err ctx_reader_new(mp_target *t, uint64_t vptr, const char *why_no_vptr, const mp_py_interp *interp,
		      const char *why_no_python, mp_ctx_reader **out) MP_WUR;

#endif

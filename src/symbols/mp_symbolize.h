/* mp_symbolize.h - names for code addresses of a target (C++ return addresses): the function's
   symbol, demangled, and its source file and line where the file has DWARF line tables, through
   libdwfl over the files the target maps. */
#ifndef MEMPROF_SYMBOLIZE_H
#define MEMPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_target.h"

typedef struct mp_symbolizer mp_symbolizer;

/* What one address is. Strings stay valid until the next mp_symbolize on the same symbolizer. */
typedef struct mp_symbol_at {
	const char *name;     /* the demangled function name; "??" when no symbol covers it */
	const char *filename; /* the source file, or (no line table) the mapped file's path */
	uint64_t line;        /* the source line, or (no line table) the offset of ADDR - 1 in the file */
	bool has_symbol;      /* a symbol named it */
	bool nearest;         /* ... the nearest one before ADDR, which does not cover it (stripped code: the
				 name addr2line, and so PyTorch, gives) */
	bool in_file;         /* ADDR lies in a file the target maps (else name "<unwind unsupported>",
				 filename "??", as PyTorch says of such addresses) */
} mp_symbol_at;

/* A symbolizer over T's mapped files (opened as they are first needed). T outlives it. */
mp_err mp_symbolizer_new(mp_target *t, mp_symbolizer **out, mp_diag *diag) MP_WUR;
void mp_symbolizer_free(mp_symbolizer *s);

/* Describe the return address ADDR: names are looked up at ADDR - 1, the call itself. This function
   can't fail: what cannot be found is said in OUT ("??"). */
void mp_symbolize(mp_symbolizer *s, uint64_t addr, mp_symbol_at *out);

#endif

/* mp_symbolize.h - names for code addresses of a target (C++ return addresses), as PyTorch's symbolizer
   (addr2line) gives them in a snapshot's frames: DWARF's innermost (inlined) function where the file has
   DWARF, else the symbol addr2line picks, demangled; the source file and line from DWARF's line table,
   through libdwfl over the files the target maps. */
#ifndef MEMPROF_SYMBOLIZE_H
#define MEMPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_target.h"

typedef struct mp_symbolizer mp_symbolizer;

/* What one address is. Strings stay valid until the next mp_symbolize on the same symbolizer. */
typedef struct mp_symbol_at {
	const char *name;     /* the demangled function name (symtab_int.h says which); "??" when none */
	const char *filename; /* the source file; with no line table, as addr2line says it (and so PyTorch's
				 frames): a local symbol's file from its STT_FILE symbol, else "??" (the mapped
				 file's path when the file cannot be read here) */
	uint64_t line;        /* the source line, or 0 */
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

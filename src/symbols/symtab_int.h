/* symtab_int.h - a module's function symbols sorted by address, for the symbolizer's lookups in
   O(log n): libdwfl's own address search walks the whole symbol table each time, which is minutes
   for the tens of thousands of return addresses of a long job in libtorch's 300,000 symbols. */
#ifndef MEMPROF_SYMTAB_INT_H
#define MEMPROF_SYMTAB_INT_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mp_symtab mp_symtab;

/* The function symbols of MOD (its .symtab, else .dynsym, as libdwfl chooses), at their load
   addresses, each local one with the file its STT_FILE symbol names. NULL when out of memory. Names
   stay MOD's: MOD outlives the table. */
mp_symtab *mp_symtab_build(Dwfl_Module *mod);
void mp_symtab_free(mp_symtab *st);

/* What names a code address, chosen as addr2line (binutils), which PyTorch's symbolizer runs, chooses it:
   the function symbol starting nearest before ADDR, whether or not it reaches ADDR (in stripped code, a
   static function with no symbol of its own takes the name of the one before it; PyTorch places Python
   frames by such names). Of symbols starting at one address, one that reaches ADDR before one that does
   not, then the shorter, then the first in the symbol table (a local `.localalias` before its global
   name, glibc's `__clone` before `clone`, identical functions folded by the linker in source order). */
typedef struct mp_symtab_hit {
	const char *name; /* NULL: no function symbol before ADDR */
	const char *file; /* a local symbol's source file (the STT_FILE symbol before it), else NULL */
	bool covers;      /* the symbol's size reaches ADDR (a size of 0 reaches up to the next symbol) */
} mp_symtab_hit;

mp_symtab_hit mp_symtab_lookup(const mp_symtab *st, uint64_t addr);

#endif

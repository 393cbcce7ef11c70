/* mp_symtab.h - a module's function symbols sorted by address, for the symbolizer's lookups in
   O(log n): libdwfl's own address search walks the whole symbol table each time, which is minutes
   for the tens of thousands of return addresses of a long job in libtorch's 300,000 symbols. */
#ifndef MEMPROF_SYMTAB_H
#define MEMPROF_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mp_symtab mp_symtab;

/* The function symbols of MOD (its .symtab, else .dynsym, as libdwfl chooses), at their load
   addresses. NULL when out of memory. Names stay MOD's: MOD outlives the table. */
mp_symtab *mp_symtab_build(Dwfl_Module *mod);
void mp_symtab_free(mp_symtab *st);

/* The name of the function symbol that covers ADDR (a global one before a weak or local alias at the
   same address; a symbol of size 0 covers up to the next one), *COVERS true. Else the nearest one before
   ADDR, *COVERS false: in stripped code (a static function with no symbol of its own) that is what
   addr2line, and so PyTorch's symbolizer, names it, and PyTorch places Python frames by such names.
   NULL when no function symbol comes before ADDR. */
const char *mp_symtab_lookup(const mp_symtab *st, uint64_t addr, bool *covers);

#endif

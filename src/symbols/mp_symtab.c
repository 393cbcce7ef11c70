/* mp_symtab.c - function symbols sorted by start address, searched by bisection. */
#include <gelf.h>
#include <stdlib.h>

#include "symtab_int.h"
#include "mp_array.h"

struct sym {
	uint64_t start, size;
	size_t index; /* in the symbol table: of aliases alike, the first is named */
	const char *name;
	const char *file; /* local symbols: the STT_FILE before them in the table */
};

struct mp_symtab {
	struct sym *syms;
	size_t n;
};

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

mp_symtab *mp_symtab_build(Dwfl_Module *mod)
{
	mp_symtab *st = calloc(1, sizeof *st);
	int count = dwfl_module_getsymtab(mod);
	const char *file = NULL;

	if (st == NULL)
		return NULL;
	if (count <= 0)
		return st;
	if ((st->syms = calloc((size_t)count, sizeof *st->syms)) == NULL) {
		free(st);
		return NULL;
	}
	for (int i = 0; i < count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (name == NULL)
			continue;
		/* the linker keeps each object's local symbols after its STT_FILE symbol, the globals after all */
		if (type == STT_FILE) {
			file = name;
			continue;
		}
		if (*name == '\0' || (type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		st->syms[st->n++] = (struct sym){ addr, sym.st_size, (size_t)i, name,
						  GELF_ST_BIND(sym.st_info) == STB_LOCAL ? file : NULL };
	}
	mp_sort(st->syms, st->n, sizeof *st->syms, by_start);
	return st;
}

void mp_symtab_free(mp_symtab *st)
{
	if (st == NULL)
		return;
	free(st->syms);
	free(st);
}

/* Whether A names ADDR better than B (both start at the same address). */
static bool better(const struct sym *a, const struct sym *b, uint64_t addr)
{
	bool ra = a->start + a->size > addr, rb = b->start + b->size > addr;

	if (ra != rb)
		return ra;
	if (a->size != b->size)
		return a->size < b->size;
	return a->index < b->index;
}

mp_symtab_hit mp_symtab_lookup(const mp_symtab *st, uint64_t addr)
{
	mp_symtab_hit hit = { 0 };
	size_t lo = 0, hi = st->n, best;

	/* the first symbol starting after ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return hit;
	best = lo - 1;
	for (size_t i = best; i > 0 && st->syms[i - 1].start == st->syms[best].start; i--)
		if (better(&st->syms[i - 1], &st->syms[best], addr))
			best = i - 1;
	hit.name = st->syms[best].name;
	hit.file = st->syms[best].file;
	hit.covers = st->syms[best].start + st->syms[best].size > addr ||
		     (st->syms[best].size == 0 && (lo == st->n || addr < st->syms[lo].start));
	return hit;
}

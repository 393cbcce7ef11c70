/* mp_symtab.c - function symbols sorted by start address, searched by bisection. */
#include <gelf.h>
#include <stdlib.h>

#include "mp_symtab.h"

struct sym {
	uint64_t start, end; /* end == start: size unknown (covers up to the next symbol) */
	const char *name;
	int rank; /* 0 global, 1 weak, 2 local: the first of equal starts is preferred */
};

struct mp_symtab {
	struct sym *syms;
	size_t n;
};

static int rank_of(unsigned bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->rank - y->rank;
}

mp_symtab *mp_symtab_build(Dwfl_Module *mod)
{
	mp_symtab *st = calloc(1, sizeof *st);
	int count = dwfl_module_getsymtab(mod);

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

		if (name == NULL || *name == '\0' || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		st->syms[st->n++] = (struct sym){ addr, addr + sym.st_size, name, rank_of(GELF_ST_BIND(sym.st_info)) };
	}
	qsort(st->syms, st->n, sizeof *st->syms, by_start);
	return st;
}

void mp_symtab_free(mp_symtab *st)
{
	if (st == NULL)
		return;
	free(st->syms);
	free(st);
}

/* The preferred symbol of those that start where symbol I starts. */
static size_t preferred(const mp_symtab *st, size_t i)
{
	while (i > 0 && st->syms[i - 1].start == st->syms[i].start)
		i--;
	return i;
}

/* Nested or overlapping symbols are rare: a few symbols back is far enough to look for a cover. */
enum { LOOK_BACK = 16 };

const char *mp_symtab_lookup(const mp_symtab *st, uint64_t addr, bool *covers)
{
	size_t lo = 0, hi = st->n, next;

	*covers = false;
	/* the first symbol starting after ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	next = lo;
	for (size_t k = 0, i = lo; k < LOOK_BACK && i > 0; k++) {
		const struct sym *s = &st->syms[i = preferred(st, i - 1)];

		if (addr < s->end || (s->end == s->start && i == preferred(st, next - 1))) {
			*covers = true;
			return s->name;
		}
	}
	return st->syms[preferred(st, next - 1)].name;
}

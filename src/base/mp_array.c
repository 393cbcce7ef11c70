/* mp_array.c - growing arrays by doubling. */
#include "mp_array.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Arrays this big ask for transparent huge pages: a million blocks fill 72 MB, which in 4 KiB
   pages is 18,000 page faults, a tenth of the time it takes to load a big snapshot. */
#define HUGE_ARRAY ((size_t)4 << 20)

static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	uintptr_t page = 4096, from = ((uintptr_t)p + page - 1) & ~(page - 1), to = ((uintptr_t)p + n) & ~(page - 1);

	if (to > from)
		madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

mp_err mp_array_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return MP_OK;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return MP_E_NOMEM;
		ncap *= 2;
	}
	np = realloc(*p, ncap * elem);
	if (np == NULL)
		return MP_E_NOMEM;
	if (ncap * elem >= HUGE_ARRAY)
		advise_huge(np, ncap * elem);
	*p = np;
	*cap = ncap;
	return MP_OK;
}

void mp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

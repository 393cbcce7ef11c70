/* mp_array.c - growing arrays by doubling. */
#include "mp_array.h"

#include <stdint.h>
#include <stdlib.h>

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
	*p = np;
	*cap = ncap;
	return MP_OK;
}

void mp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

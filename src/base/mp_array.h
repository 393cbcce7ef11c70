/* mp_array.h - growing arrays by doubling, with overflow checks; sorting them. */
#ifndef MEMPROF_ARRAY_H
#define MEMPROF_ARRAY_H

#include <stddef.h>

#include "mp_err.h"

/* Make the array *P (room for *CAP elements of ELEM bytes) hold at least NEED
   elements, doubling its capacity (from at least 16). On success *P and *CAP
   are updated; on MP_E_NOMEM they are untouched and still valid. */
mp_err mp_array_grow(void **p, size_t *cap, size_t need, size_t elem) MP_WUR;

/* qsort of N elements of SIZE bytes at BASE, which may be NULL when N is 0 or 1: qsort itself must not
   be given a NULL array even for no element (glibc declares it nonnull; UBSan reports it). */
void mp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif

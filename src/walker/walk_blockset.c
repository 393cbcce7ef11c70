/* walk_blockset.c - one device's candidate Blocks read once, in address order, and kept decoded
   for the walk along each segment's `next` chain. */
#include <stdlib.h>

#include "mp_array.h"
#include "walk_int.h"

/* Reads between two looks at opts->interrupted. */
enum { POLL_EVERY = 4096 };
/* How many distinct blocks ahead of the one read the next are prefetched (mp_target_prefetch): Blocks lie
   apart in the heap (between them the allocator's other objects, a traceback each), so each read of a core
   missed the caches in turn. */
enum { PREFETCH_AHEAD = 8 };

mp_err wk_blockset_add(struct walk *wk, struct wk_blockset *bs, uint64_t addr)
{
	mp_err err;

	if (bs->n >= wk->max_blocks) {
		bs->full = true;
		return MP_E_LIMIT;
	}
	if ((err = mp_array_grow((void **)&bs->addr, &bs->cap, bs->n + 1, sizeof *bs->addr)) != MP_OK)
		return err;
	bs->addr[bs->n++] = addr;
	return MP_OK;
}

/* Sort the N addresses at A with TMP (room for N) as scratch and return the one of the two that
   holds them sorted: an LSD radix sort, a byte at a time over the bytes in which the addresses
   differ (a heap spans a few hundred MiB: 3 or 4 passes), where qsort costs a tenth of a second
   for a million blocks. */
static uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = a[i] < lo ? a[i] : lo;
		hi = a[i] > hi ? a[i] : hi;
	}
	for (unsigned shift = 0; n > 1 && shift < 64 && (hi - lo) >> shift != 0; shift += 8) {
		size_t start[256] = { 0 };
		uint64_t *swap;

		for (size_t i = 0; i < n; i++)
			start[(a[i] - lo) >> shift & 0xff]++;
		for (size_t d = 0, sum = 0; d < 256; d++) {
			size_t c = start[d];

			start[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[start[(a[i] - lo) >> shift & 0xff]++] = a[i];
		swap = a;
		a = tmp;
		tmp = swap;
	}
	return a;
}

mp_err wk_blockset_read(struct walk *wk, struct wk_blockset *bs, wk_block_fn fn, void *ctx)
{
	uint64_t *tmp, *sorted;
	size_t n = 0;
	mp_err err = MP_OK;

	if (bs->n == 0)
		return MP_OK;
	if ((tmp = malloc(bs->n * sizeof *tmp)) == NULL)
		return MP_E_NOMEM;
	sorted = radix_sort(bs->addr, tmp, bs->n);
	free(sorted == tmp ? bs->addr : tmp);
	bs->addr = sorted;
	bs->cap = bs->n;
	/* Room for the distinct ones only: a damaged tree may give one block many times. */
	for (size_t i = 0; i < bs->n; i++)
		n += i == 0 || bs->addr[i] != bs->addr[i - 1];
	if ((bs->links = malloc(n * sizeof *bs->links)) == NULL)
		return MP_E_NOMEM;
	n = 0;
	for (size_t i = 0; i < bs->n && i < PREFETCH_AHEAD; i++)
		mp_target_prefetch(wk->t, bs->addr[i], (size_t)OFF(wk, BLOCK_SIZEOF));
	for (size_t i = 0; i < bs->n && err == MP_OK; n++) {
		uint64_t addr = bs->addr[i];
		size_t times = 0;
		struct wk_block b;
		bool ok;

		while (i < bs->n && bs->addr[i] == addr)
			i++, times++;
		if (i + PREFETCH_AHEAD - 1 < bs->n)
			mp_target_prefetch(wk->t, bs->addr[i + PREFETCH_AHEAD - 1], (size_t)OFF(wk, BLOCK_SIZEOF));
		ok = wk_read_block(wk, addr, &b) == MP_OK;
		bs->addr[n] = addr;
		if (ok)
			wk_link_of(&b, &bs->links[n]);
		else
			bs->links[n] = (struct wk_link){ .damaged = true };
		err = fn(wk, addr, ok ? &b : NULL, times, ctx);
		if (err == MP_OK && wk->opts->interrupted != NULL && n % POLL_EVERY == POLL_EVERY - 1 &&
		    wk->opts->interrupted(wk->opts->progress_ctx))
			err = MP_E_INTERRUPTED;
	}
	bs->n = n;
	return err;
}

/* The index of ADDR in the set, or -1. */
static ptrdiff_t find(struct wk_blockset *bs, uint64_t addr)
{
	size_t lo = 0, hi = bs->n;

	if (bs->links == NULL)
		return -1;
	if (bs->finger + 1 < bs->n && bs->addr[bs->finger + 1] == addr)
		return (ptrdiff_t)++bs->finger;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bs->addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == bs->n || bs->addr[lo] != addr)
		return -1;
	bs->finger = lo;
	return (ptrdiff_t)lo;
}

mp_err wk_blockset_link(struct walk *wk, struct wk_blockset *bs, uint64_t addr, struct wk_link *l)
{
	ptrdiff_t i = find(bs, addr);
	struct wk_block b;
	mp_err err;

	if (i >= 0) {
		*l = bs->links[i];
		return l->damaged ? MP_E_CORRUPT : MP_OK;
	}
	/* In no pool set nor the active blocks (unmapped, or moved meanwhile in a live process). */
	if ((err = wk_read_block(wk, addr, &b)) != MP_OK)
		return err;
	wk_link_of(&b, l);
	return MP_OK;
}

void wk_blockset_free(struct wk_blockset *bs)
{
	free(bs->addr);
	free(bs->links);
	*bs = (struct wk_blockset){ 0 };
}

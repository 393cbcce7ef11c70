/* walk_containers.c - checked reads of libstdc++ vectors, strings, red-black trees and ska
   flat_hash tables in the target (layouts: allocator-facts §2). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "walk_int.h"

mp_err wk_read(struct walk *wk, uint64_t addr, void *buf, size_t len)
{
	return mp_target_read(wk->t, addr, buf, len, NULL);
}

mp_err wk_read_u64(struct walk *wk, uint64_t addr, uint64_t *out)
{
	return mp_target_read_u64(wk->t, addr, out, NULL);
}

void wk_damaged(struct walk *wk, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	wk->w->partial = true;
	mp_warn_damage(wk->diag, "%s", line);
}

mp_err wk_vector(struct walk *wk, uint64_t addr, size_t elem, size_t max, uint64_t *begin, size_t *n)
{
	uint64_t v[3];
	mp_err err = wk_read(wk, addr, v, sizeof v);

	if (err != MP_OK)
		return err;
	if (v[0] == 0 && v[1] == 0 && v[2] == 0) {
		*begin = 0;
		*n = 0;
		return MP_OK;
	}
	/* Storage from operator new is aligned and never in the first page. */
	if (v[0] < 4096 || v[0] % 8 != 0 || v[0] > v[1] || v[1] > v[2] || (v[1] - v[0]) % elem != 0)
		return MP_E_CORRUPT;
	if ((v[1] - v[0]) / elem > max)
		return MP_E_LIMIT;
	*begin = v[0];
	*n = (size_t)((v[1] - v[0]) / elem);
	return MP_OK;
}

/* The old (pre-C++11) libstdc++ string is one pointer to its characters, with the length
   24 bytes before them; the new one is {pointer, length, SSO buffer or capacity}. */
mp_err wk_string(struct walk *wk, uint64_t addr, char **out)
{
	uint64_t p, len;
	mp_err err;
	char *s;

	if ((err = wk_read_u64(wk, addr, &p)) != MP_OK)
		return err;
	if (wk->cxx11_abi != 0)
		err = wk_read_u64(wk, addr + 8, &len);
	else
		err = p < 24 ? MP_E_CORRUPT : wk_read_u64(wk, p - 24, &len);
	if (err != MP_OK)
		return err;
	if (len > WK_MAX_STRING)
		return MP_E_LIMIT;
	s = malloc(len + 1);
	if (s == NULL)
		return MP_E_NOMEM;
	if ((err = wk_read(wk, p, s, len)) != MP_OK) {
		free(s);
		return err;
	}
	s[len] = '\0';
	*out = s;
	return MP_OK;
}

/* libstdc++'s _Hashtable (unordered_map): buckets at +0, bucket count at +8, the node list's head
   (_M_before_begin._M_nxt) at +16, element count at +24; a node is {next, key, value[, cached hash]}. */
enum { UMAP_HEAD = 16, UMAP_COUNT = 24, UMAP_NODE_KEY = 8 };

mp_err wk_string_map_each(struct walk *wk, uint64_t addr, size_t max, wk_pair_fn fn, void *ctx)
{
	uint64_t head[2], node, seen = 0;
	size_t string_size = wk->cxx11_abi != 0 ? 32 : 8;
	mp_err err;

	if ((err = wk_read(wk, addr + UMAP_HEAD, head, sizeof head)) != MP_OK)
		return err;
	if (head[1] > max)
		return MP_E_LIMIT;
	/* The list holds exactly COUNT nodes: a longer one (or a loop) is damage. */
	for (node = head[0]; node != 0; seen++) {
		char *key = NULL, *value = NULL;

		if (seen == head[1] || node % 8 != 0)
			return MP_E_CORRUPT;
		if ((err = wk_string(wk, node + UMAP_NODE_KEY, &key)) != MP_OK ||
		    (err = wk_string(wk, node + UMAP_NODE_KEY + string_size, &value)) != MP_OK ||
		    (err = wk_read_u64(wk, node, &node)) != MP_OK) {
			free(key);
			free(value);
			return err;
		}
		if ((err = fn(wk, key, value, ctx)) != MP_OK)
			return err;
	}
	return seen == head[1] ? MP_OK : MP_E_CORRUPT;
}

/* _Rb_tree: comparator at +0, header node at +8 (color, parent = root, left = leftmost,
   right = rightmost), node_count at +40; nodes: color, parent, left, right, value at +32. */
enum { RB_HEADER = 8, RB_ROOT = 16, RB_LEFTMOST = 24, RB_RIGHTMOST = 32, RB_COUNT = 40 };
enum { RBN_LEFT = 16, RBN_RIGHT = 24, RBN_VALUE = 32 };

mp_err wk_rbtree_count(struct walk *wk, uint64_t addr, uint64_t *count)
{
	uint64_t h[6];
	uint64_t header = addr + RB_HEADER;
	mp_err err = wk_read(wk, addr, h, sizeof h);

	if (err != MP_OK)
		return err;
	*count = h[RB_COUNT / 8];
	if (*count == 0)
		return h[RB_ROOT / 8] == 0 && h[RB_LEFTMOST / 8] == header && h[RB_RIGHTMOST / 8] == header
			       ? MP_OK
			       : MP_E_CORRUPT;
	if (h[RB_ROOT / 8] == 0 || h[RB_LEFTMOST / 8] == header || *count > wk->max_blocks)
		return MP_E_CORRUPT;
	return MP_OK;
}

/* In-order walk with an explicit stack: depth and node count are both bounded, so a cyclic or
   damaged tree ends in an error, never a hang. A sound tree visits no node twice: the node
   visited at step 1, 2, 4, 8, ... is kept and each later visit compared with it (Brent's cycle
   detection), so a loop that keeps the stack shallow is found in about twice its length plus
   the steps before it, not after COUNT visits (a damaged count may say 64 M). */
mp_err wk_rbtree_each(struct walk *wk, uint64_t addr, wk_value_fn fn, void *ctx)
{
	uint64_t stack[WK_MAX_TREE_DEPTH], node[5], count, seen = 0, root, mark = 0, lap = 1;
	size_t depth = 0;
	mp_err err;

	if ((err = wk_rbtree_count(wk, addr, &count)) != MP_OK)
		return err;
	if (count == 0)
		return MP_OK;
	if ((err = wk_read_u64(wk, addr + RB_ROOT, &root)) != MP_OK)
		return err;
	for (uint64_t cur = root;;) {
		while (cur != 0) {
			if (depth == WK_MAX_TREE_DEPTH)
				return MP_E_CYCLE;
			stack[depth++] = cur;
			if ((err = wk_read_u64(wk, cur + RBN_LEFT, &cur)) != MP_OK)
				return err;
		}
		if (depth == 0)
			break;
		cur = stack[--depth];
		if ((err = wk_read(wk, cur, node, sizeof node)) != MP_OK)
			return err;
		if (++seen > count || cur == mark)
			return MP_E_CYCLE;
		if (seen == lap) {
			mark = cur;
			lap *= 2;
		}
		if ((err = fn(wk, node[RBN_VALUE / 8], ctx)) != MP_OK)
			return err;
		cur = node[RBN_RIGHT / 8];
	}
	return seen == count ? MP_OK : MP_E_CORRUPT;
}

/* sherwood_v3_table: entries at +0, num_slots_minus_one at +8, max_lookups (int8) at +17,
   max load factor (float) at +20, num_elements at +24. An entry starts with its int8
   distance_from_desired (negative: empty). */
struct flat_header {
	uint64_t entries, slots_minus_one;
	int8_t max_lookups;
	uint64_t elements;
};

static mp_err flat_header(struct walk *wk, uint64_t addr, struct flat_header *fh)
{
	unsigned char h[32];
	float load;
	mp_err err = wk_read(wk, addr, h, sizeof h);

	if (err != MP_OK)
		return err;
	fh->entries = wk_u64(h, 0);
	fh->slots_minus_one = wk_u64(h, 8);
	fh->max_lookups = (int8_t)h[17];
	memcpy(&load, h + 20, sizeof load);
	fh->elements = wk_u64(h, 24);
	if (fh->entries == 0 || fh->max_lookups < 0 || fh->max_lookups > 64 ||
	    fh->slots_minus_one >= WK_MAX_FLAT_SLOTS || ((fh->slots_minus_one + 1) & fh->slots_minus_one) != 0 ||
	    !(load > 0.0f && load <= 1.0f) || fh->elements > fh->slots_minus_one + 1)
		return MP_E_CORRUPT;
	return MP_OK;
}

mp_err wk_flat_count(struct walk *wk, uint64_t addr, uint64_t *count)
{
	struct flat_header fh;
	mp_err err = flat_header(wk, addr, &fh);

	if (err == MP_OK)
		*count = fh.elements;
	return err;
}

mp_err wk_flat_slots(struct walk *wk, uint64_t addr, uint64_t *slots)
{
	struct flat_header fh;
	mp_err err = flat_header(wk, addr, &fh);

	if (err == MP_OK)
		*slots = fh.slots_minus_one + (uint64_t)fh.max_lookups;
	return err;
}

mp_err wk_flat_each(struct walk *wk, uint64_t addr, size_t entry, wk_entry_fn fn, void *ctx)
{
	unsigned char buf[32 * 1024];
	size_t chunk = entry != 0 ? sizeof buf / entry : 0; /* slots read at once */
	struct flat_header fh;
	uint64_t nslots, live = 0;
	mp_err err = flat_header(wk, addr, &fh);

	if (err != MP_OK)
		return err;
	if (entry == 0 || entry > WK_MAX_FLAT_ENTRY)
		return MP_E_UNSUPPORTED;
	/* An entry may overflow past the power of two into the max_lookups - 1 slots after it; the
	   slot after those is the end marker. */
	nslots = fh.slots_minus_one + (uint64_t)fh.max_lookups;
	for (uint64_t i = 0; i < nslots; i += chunk) {
		size_t n = nslots - i < chunk ? (size_t)(nslots - i) : chunk;

		if ((err = wk_read(wk, fh.entries + i * entry, buf, n * entry)) != MP_OK)
			return err;
		for (size_t j = 0; j < n; j++) {
			const unsigned char *e = buf + j * entry;

			if ((int8_t)e[0] < 0)
				continue;
			if ((int8_t)e[0] > fh.max_lookups || ++live > fh.elements)
				return MP_E_CORRUPT;
			if ((err = fn(wk, e, ctx)) != MP_OK)
				return err;
		}
	}
	return live == fh.elements ? MP_OK : MP_E_CORRUPT;
}

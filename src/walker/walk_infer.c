/* walk_infer.c - a layout for a build no table fits (a nightly, a vendor's or conda's build), inferred from
   the allocator's own invariants in memory, starting from the nearest known release (the prior).

   Members are placed in declaration order, each at the one offset near where the prior has it (shifted by
   what the members before it moved) whose value passes its invariant in every object of its kind: the
   vector of device allocators, the 1001 clock pairs, the statistics (all = small + large, current =
   allocated - freed, current <= peak), the two BlockPools (trees with the same comparator, is_small 0
   then 1, no owner), each free or active Block (its pool is one of the two, its neighbours are address-
   contiguous Blocks of the same pools), the table of active blocks, the reserved bytes, the ring, the
   private pools' tables, the expandable segments. Structs whose members no invariant can name (TraceEntry,
   DeviceStats, the settings) are taken whole from the prior or, where the prior's does not read sanely,
   from another known release's (or, for the settings, the shape 2.3 to 2.9 share); settings none reads are
   left out. What cannot be placed fails the inference; what is placed is then walked under the same
   self-check as any table, so a wrong inference is refused, never walked (allocator-facts §10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

enum {
	NCA_SPAN = 32768,  /* bytes of the NativeCachingAllocator searched */
	DCA_SPAN = 8192,   /* of a DeviceCachingAllocator */
	SEARCH = 1024,     /* how far past the previous member a member is looked for */
	SAMPLE = 256,      /* Blocks the Block members are checked on */
	CLOCK_PAIRS = 1001,
	SET_SIZE = 48,     /* std::set<Block*, Comparison>: comparator, header, count */
};

struct infer {
	struct walk *wk;
	const mp_layout *P;
	mp_layout *L;
	unsigned placed, unique;
	unsigned char nca[NCA_SPAN], dca[DCA_SPAN];
	size_t nca_len, dca_len;
	uint64_t dca_addr;
	uint64_t blocks[SAMPLE]; /* a sample of Blocks: free ones (from the trees), then active ones */
	size_t nfree, nblocks;
	const char *failed; /* the member that could not be placed */
	const mp_c10 *c10;
};

/* Whether ADDR lies in the target's mapping of libc10_cuda.so (a comparator is one of its functions). */
static bool in_library(const struct infer *in, uint64_t addr)
{
	const mp_mapping *maps;
	size_t n = mp_target_mappings(in->wk->t, &maps);

	for (size_t i = 0; i < n; i++)
		if (addr >= maps[i].start && addr < maps[i].end && maps[i].path != NULL &&
		    strcmp(maps[i].path, in->c10->path) == 0)
			return true;
	return false;
}

#define P_(in, F) ((in)->P->off[MP_L_##F])
#define L_(in, F) ((in)->L->off[MP_L_##F])
#define HASP(in, F) ((in)->P->off[MP_L_##F] != MP_LAYOUT_ABSENT)

/* Read up to LEN bytes at ADDR, fewer when the object lies near the end of its mapping: the bytes read. */
static size_t read_span(struct walk *wk, uint64_t addr, unsigned char *buf, size_t len)
{
	for (; len >= 4096; len -= 4096)
		if (wk_read(wk, addr, buf, len) == MP_OK)
			return len;
	return 0;
}

static uint64_t get64(const unsigned char *buf, size_t len, size_t off)
{
	return off + 8 <= len ? wk_u64(buf, (int32_t)off) : 0;
}

/* Place FIELD at the candidate nearest WANT (N candidates in CANDS); false (and FAILED) when there is none. */
static bool place(struct infer *in, enum mp_layout_field field, const int32_t *cands, size_t n, int32_t want,
		  const char *name)
{
	int32_t best = -1;

	for (size_t i = 0; i < n; i++)
		if (best < 0 || labs((long)cands[i] - want) < labs((long)best - want))
			best = cands[i];
	if (best < 0) {
		in->failed = name;
		return false;
	}
	in->L->off[field] = best;
	in->placed++;
	in->unique += n == 1;
	return true;
}

/* The prior's offset of F shifted as FROM moved (the inferred FROM minus the prior's). */
static int32_t shifted(const struct infer *in, enum mp_layout_field f, enum mp_layout_field from)
{
	if (in->P->off[f] == MP_LAYOUT_ABSENT)
		return MP_LAYOUT_ABSENT;
	return in->P->off[f] + (in->L->off[from] - in->P->off[from]);
}

/* ---- NativeCachingAllocator */

static bool device_vector_at(struct infer *in, size_t off)
{
	uint64_t b = get64(in->nca, in->nca_len, off), e = get64(in->nca, in->nca_len, off + 8),
		 c = get64(in->nca, in->nca_len, off + 16), elem[8];
	size_t n = (size_t)((e - b) / 8);

	if (b == 0 || e <= b || (e - b) % 8 != 0 || c < e || n > WK_MAX_DEVICES)
		return false;
	if (wk_read(in->wk, b, elem, (n < 8 ? n : 8) * 8) != MP_OK)
		return false;
	for (size_t i = 0; i < n && i < 8; i++)
		if (elem[i] == 0 || elem[i] % 8 != 0)
			return false;
	return true;
}

/* The 1001 (wall clock ns, TSC) pairs c10 takes at start-up: the one run of that many plausible pairs. */
static int32_t clock_pairs(const struct infer *in, size_t end)
{
	int32_t found = MP_LAYOUT_ABSENT;

	for (size_t par = 0; par < 16; par += 8) {
		size_t run = 0;

		for (size_t off = par; off + 16 <= end; off += 16) {
			uint64_t t = get64(in->nca, in->nca_len, off), tsc = get64(in->nca, in->nca_len, off + 8);
			bool ok = t > 1500000000000000000ull && t < 2500000000000000000ull && tsc > 0 && tsc < (1ull << 62);

			run = ok ? run + 1 : 0;
			if (run == CLOCK_PAIRS && (off + 16 >= end || get64(in->nca, in->nca_len, off + 16) < 1500000000000000000ull))
				found = (int32_t)(off + 16 - 16 * CLOCK_PAIRS);
		}
	}
	return found;
}

static bool infer_nca(struct infer *in, uint64_t obj)
{
	int32_t cands[64];
	size_t n = 0;

	in->nca_len = read_span(in->wk, obj, in->nca, sizeof in->nca);
	for (size_t off = 0; off + 24 <= in->nca_len && n < 64; off += 8)
		if (device_vector_at(in, off))
			cands[n++] = (int32_t)off;
	if (!place(in, MP_L_NCA_DEVICE_ALLOCATOR, cands, n, P_(in, NCA_DEVICE_ALLOCATOR), "the device allocators"))
		return false;
	return true;
}

/* ---- DeviceCachingAllocator: statistics and pools */

/* A StatArray (all, small_pool, large_pool; each current, peak, allocated, freed) at OFF of the image. */
static bool stat_array_ok(const struct infer *in, size_t off)
{
	int64_t v[12];

	if (off + sizeof v > in->dca_len)
		return false;
	memcpy(v, in->dca + off, sizeof v);
	for (int p = 0; p < 3; p++) {
		const int64_t *s = v + 4 * p;

		if (s[0] < 0 || s[0] > s[1] || s[1] > (1ll << 56) || s[2] < 0 || s[3] < 0 || s[0] != s[2] - s[3])
			return false;
	}
	for (int f = 0; f < 4; f++)
		if (f != 1 && v[f] != v[4 + f] + v[8 + f])
			return false;
	return true;
}

/* A Stat (current, peak, allocated, freed) at OFF. */
static bool stat_ok(const struct infer *in, size_t off)
{
	int64_t v[4];

	if (off + sizeof v > in->dca_len)
		return false;
	memcpy(v, in->dca + off, sizeof v);
	return v[0] >= 0 && v[0] <= v[1] && v[1] < (1ll << 56) && v[2] >= 0 && v[3] >= 0 && v[0] == v[2] - v[3];
}

/* DeviceStats with the layout DS at OFF: its StatArrays and Stats hold their invariants, its counters are
   counts, and max_split_size is what the allocator can have (SIZE_MAX, or a whole number of MiB from 20 on). */
static bool stats_at(const struct infer *in, const mp_layout *ds, size_t off)
{
	static const enum mp_layout_field arrays[] = { MP_L_DS_ALLOCATION, MP_L_DS_SEGMENT, MP_L_DS_ACTIVE,
						       MP_L_DS_INACTIVE_SPLIT, MP_L_DS_ALLOCATED_BYTES,
						       MP_L_DS_RESERVED_BYTES, MP_L_DS_ACTIVE_BYTES,
						       MP_L_DS_INACTIVE_SPLIT_BYTES };
	static const enum mp_layout_field counters[] = { MP_L_DS_NUM_ALLOC_RETRIES, MP_L_DS_NUM_OOMS,
							 MP_L_DS_NUM_SYNC_ALL_STREAMS, MP_L_DS_NUM_DEVICE_ALLOC,
							 MP_L_DS_NUM_DEVICE_FREE, MP_L_DS_NUM_OOM_REJECTIONS };
	uint64_t split;

	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		if (!stat_array_ok(in, off + (size_t)ds->off[arrays[i]]))
			return false;
	if (!stat_ok(in, off + (size_t)ds->off[MP_L_DS_OVERSIZE_ALLOCATIONS]) ||
	    !stat_ok(in, off + (size_t)ds->off[MP_L_DS_OVERSIZE_SEGMENTS]))
		return false;
	for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
		if (ds->off[counters[i]] != MP_LAYOUT_ABSENT &&
		    get64(in->dca, in->dca_len, off + (size_t)ds->off[counters[i]]) >= (1ull << 48))
			return false;
	split = get64(in->dca, in->dca_len, off + (size_t)ds->off[MP_L_DS_MAX_SPLIT_SIZE]);
	return split == UINT64_MAX || (split % (1u << 20) == 0 && split >= (20u << 20) && split < (1ull << 50));
}

/* The statistics: where they are and which release's DeviceStats they are (the prior's first). */
static bool infer_stats(struct infer *in)
{
	for (size_t t = 0; t <= mp_layout_builtin_count(); t++) {
		const mp_layout *ds = t == 0 ? in->P : mp_layout_builtin(t - 1);
		int32_t cands[16];
		size_t n = 0;

		for (size_t off = 0; off < 1024 && n < 16; off += 8)
			if (stats_at(in, ds, off))
				cands[n++] = (int32_t)off;
		if (n == 0)
			continue;
		for (int f = MP_L_DS_SIZEOF; f <= MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS; f++)
			in->L->off[f] = ds->off[f];
		return place(in, MP_L_DCA_STATS, cands, n, P_(in, DCA_STATS), "the statistics");
	}
	in->failed = "the statistics";
	return false;
}

/* Whether a std::set<Block*, Comparison> lies at OFF: a comparator, then an empty header pointing at itself or
   a non-empty one with its node count. */
static bool set_at(const struct infer *in, size_t off)
{
	uint64_t base = in->dca_addr + off, cmp = get64(in->dca, in->dca_len, off),
		 parent = get64(in->dca, in->dca_len, off + 16), left = get64(in->dca, in->dca_len, off + 24),
		 right = get64(in->dca, in->dca_len, off + 32), count = get64(in->dca, in->dca_len, off + 40);
	uint32_t color;

	if (off + SET_SIZE > in->dca_len || !in_library(in, cmp))
		return false;
	memcpy(&color, in->dca + off + 8, sizeof color);
	if (color > 1)
		return false;
	if (count == 0)
		return parent == 0 && left == base + 8 && right == base + 8;
	return count < (1ull << 32) && parent != 0 && left != 0 && right != 0 && parent % 8 == 0;
}

static size_t sets_from(const struct infer *in, size_t off)
{
	size_t n = 0;

	while (set_at(in, off + n * SET_SIZE))
		n++;
	return n;
}

/* The two BlockPools: a run of sets, is_small (0) and a NULL owner; then, one pool size further, the same with
   is_small 1. The pool size and the number of sets are what the release has. */
static bool infer_pools(struct infer *in, size_t from)
{
	int32_t want = P_(in, DCA_LARGE_BLOCKS), best_l = -1, best_bp = -1;
	size_t ncands = 0;

	for (size_t l = from; l < from + SEARCH && l + SET_SIZE <= in->dca_len; l += 8) {
		size_t nsets = sets_from(in, l), flag, owner;

		if (nsets == 0 || (l >= SET_SIZE && set_at(in, l - SET_SIZE)))
			continue;
		flag = nsets * SET_SIZE;
		owner = (flag + 8) & ~(size_t)7;
		for (size_t bp = owner + 8; bp <= owner + 64; bp += 8) {
			size_t s = l + bp;

			if (s + owner + 8 > in->dca_len || sets_from(in, s) != nsets || in->dca[l + flag] != 0 ||
			    in->dca[s + flag] != 1 || get64(in->dca, in->dca_len, l + owner) != 0 ||
			    get64(in->dca, in->dca_len, s + owner) != 0 ||
			    get64(in->dca, in->dca_len, l) != get64(in->dca, in->dca_len, s))
				continue;
			ncands++;
			if (best_l < 0 || labs((long)l - want) < labs((long)best_l - want)) {
				best_l = (int32_t)l;
				best_bp = (int32_t)bp;
			}
		}
	}
	if (best_l < 0) {
		in->failed = "the BlockPools";
		return false;
	}
	size_t nsets = sets_from(in, (size_t)best_l);

	L_(in, DCA_LARGE_BLOCKS) = best_l;
	L_(in, DCA_SMALL_BLOCKS) = best_l + best_bp;
	L_(in, BP_SIZEOF) = best_bp;
	L_(in, BP_BLOCKS) = 0;
	L_(in, BP_UNMAPPED) = nsets > 1 ? (int32_t)((nsets - 1) * SET_SIZE) : MP_LAYOUT_ABSENT;
	L_(in, BP_IS_SMALL) = (int32_t)(nsets * SET_SIZE);
	L_(in, BP_OWNER_PRIVATEPOOL) = (L_(in, BP_IS_SMALL) + 8) & ~7;
	in->placed += 2;
	in->unique += ncands == 1 ? 2 : 0;
	return true;
}

/* ---- Blocks */

static mp_err take_block(struct walk *wk, uint64_t value, void *ctx)
{
	struct infer *in = ctx;

	(void)wk;
	if (in->nblocks == SAMPLE / 2)
		return MP_E_LIMIT;
	in->blocks[in->nblocks++] = value;
	return MP_OK;
}

static mp_err take_active(struct walk *wk, const unsigned char *entry, void *ctx)
{
	struct infer *in = ctx;

	(void)wk;
	if (in->nblocks == SAMPLE)
		return MP_E_LIMIT;
	in->blocks[in->nblocks++] = wk_u64(entry, L_(in, ABE_BLOCK));
	return MP_OK;
}

/* The sampled Blocks' 8-byte words at OFF (a Block is at most 256 bytes: all fit in the image). */
static uint64_t bword(const unsigned char (*img)[256], size_t i, size_t off)
{
	return wk_u64(img[i], (int32_t)off);
}

struct bsample {
	unsigned char img[SAMPLE][256];
	uint64_t large, small;
	size_t n, nfree;
};

static bool pool_ok(const struct bsample *s, size_t i, uint64_t v)
{
	return i < s->nfree ? v == s->large || v == s->small : v != 0 && v % 8 == 0;
}

/* The neighbour V of sampled Block I is address-contiguous with it (BELOW: V ends where I starts). */
static bool neighbour_ok(struct infer *in, const struct bsample *s, size_t i, uint64_t v, bool below, int32_t ptr,
			 int32_t size)
{
	unsigned char nb[256];

	if (v == 0)
		return true;
	if (wk_read(in->wk, v, nb, sizeof nb) != MP_OK)
		return false;
	if (below)
		return wk_u64(nb, ptr) + wk_u64(nb, size) == bword(s->img, i, (size_t)ptr);
	return wk_u64(nb, ptr) == bword(s->img, i, (size_t)ptr) + bword(s->img, i, (size_t)size);
}

static bool infer_block_links(struct infer *in, const struct bsample *s)
{
	int32_t ptrs[32], sizes[32], best[3] = { -1, -1, -1 };
	size_t np = 0, ns = 0, combos = 0;

	for (size_t o = 0; o + 8 <= 256; o += 8) {
		bool is_ptr = true, is_size = true;

		for (size_t i = 0; i < s->n; i++) {
			uint64_t v = bword(s->img, i, o);

			is_ptr = is_ptr && v % 512 == 0 && v >= (1ull << 20);
			is_size = is_size && v % 512 == 0 && v > 0 && v < (1ull << 44);
		}
		if (is_ptr && np < 32)
			ptrs[np++] = (int32_t)o;
		if (is_size && ns < 32)
			sizes[ns++] = (int32_t)o;
	}
	/* prev and next are adjacent (prev first) in every release: a pair where each link is NULL or the Block
	   just below / above, and some link is not NULL. */
	for (size_t a = 0; a < np; a++)
		for (size_t b = 0; b < ns; b++)
			for (size_t o = 0; o + 16 <= 256; o += 8) {
				bool ok = ptrs[a] != sizes[b], some = false;

				for (int32_t m = (int32_t)o; m <= (int32_t)o + 8; m += 8)
					ok = ok && m != ptrs[a] && m != sizes[b];
				for (size_t i = 0; i < s->n && ok; i++) {
					uint64_t pv = bword(s->img, i, o), nx = bword(s->img, i, o + 8);

					ok = neighbour_ok(in, s, i, pv, true, ptrs[a], sizes[b]) &&
					     neighbour_ok(in, s, i, nx, false, ptrs[a], sizes[b]);
					some = some || pv != 0 || nx != 0;
				}
				if (!ok || !some)
					continue;
				combos++;
				if (best[0] < 0 || labs((long)o - P_(in, BLOCK_PREV)) < labs((long)best[2] - P_(in, BLOCK_PREV)))
					best[0] = ptrs[a], best[1] = sizes[b], best[2] = (int32_t)o;
			}
	if (best[0] < 0) {
		in->failed = "Block.ptr, size, prev and next";
		return false;
	}
	L_(in, BLOCK_PTR) = best[0];
	L_(in, BLOCK_SIZE) = best[1];
	L_(in, BLOCK_PREV) = best[2];
	L_(in, BLOCK_NEXT) = best[2] + 8;
	in->placed += 4;
	in->unique += combos == 1 ? 4 : 0;
	return true;
}

/* A shared_ptr at OFF of sampled Block I: empty, or an object and its control block. */
static bool shared_ptr_ok(const struct bsample *s, size_t i, size_t off)
{
	uint64_t obj = bword(s->img, i, off), ctl = bword(s->img, i, off + 8);

	return (obj == 0 && ctl == 0) || (obj != 0 && ctl != 0 && obj % 8 == 0 && ctl % 8 == 0);
}

/* Whether the word at OFF of the ExpandableSegment at ES can be the start of its reservation holding PTR:
   2 MiB aligned, at or below PTR, less than 2^40 below. */
static bool es_base_ok(struct walk *wk, uint64_t es, size_t off, uint64_t ptr)
{
	uint64_t base;

	return wk_read_u64(wk, es + off, &base) == MP_OK && base != 0 && base % (2u << 20) == 0 && base <= ptr &&
	       ptr - base < (1ull << 40);
}

/* Sampled Block I's expandable segment at OFF: none, or an object with such a start among its first words. */
static bool segment_ok(struct infer *in, const struct bsample *s, size_t i, size_t off)
{
	uint64_t es = bword(s->img, i, off);

	if (es == 0)
		return true;
	for (size_t o = 0; es % 8 == 0 && o < 64; o += 8)
		if (es_base_ok(in->wk, es, o, bword(s->img, i, (size_t)L_(in, BLOCK_PTR))))
			return true;
	return false;
}

/* ExpandableSegment: where the sampled Blocks in expandable segments say its reservation starts (ptr_), then
   its page size (2 or 20 MiB) and its handle count (a count that covers the block) after it; without such a
   Block, the prior's. */
static bool infer_es(struct infer *in, const struct bsample *s)
{
	size_t at = (size_t)L_(in, BLOCK_EXPANDABLE_SEGMENT), n = 0, first = 0;
	int32_t cands[8];

	for (size_t i = 0; i < s->n; i++)
		n += bword(s->img, i, at) != 0;
	if (n == 0)
		return true;
	for (size_t i = 0; i < s->n && first == 0; i++)
		if (bword(s->img, i, at) != 0)
			first = i + 1;
	for (size_t o = 0, k = 0; o < 64 && k < 8; o += 8) {
		bool ok = true;

		for (size_t i = 0; i < s->n && ok; i++)
			ok = bword(s->img, i, at) == 0 ||
			     es_base_ok(in->wk, bword(s->img, i, at), o, bword(s->img, i, (size_t)L_(in, BLOCK_PTR)));
		if (ok)
			cands[k++] = (int32_t)o, n = k;
	}
	if (!place(in, MP_L_ES_PTR, cands, n, P_(in, ES_PTR), "ExpandableSegment.ptr_"))
		return false;
	uint64_t es = bword(s->img, first - 1, at), v;
	int32_t size_at = -1, handles_at = -1;

	for (int32_t o = L_(in, ES_PTR) + 8; o < 128 && size_at < 0; o += 8)
		if (wk_read_u64(in->wk, es + (uint64_t)o, &v) == MP_OK && (v == (2u << 20) || v == (20u << 20)))
			size_at = o;
	for (int32_t o = size_at + 8; size_at >= 0 && o < 128 && handles_at < 0; o += 8)
		if (wk_read_u64(in->wk, es + (uint64_t)o, &v) == MP_OK && v > 0 && v < (1u << 24))
			handles_at = o;
	if (handles_at < 0) {
		in->failed = "ExpandableSegment's page size and handle count";
		return false;
	}
	L_(in, ES_SEGMENT_SIZE) = size_at;
	L_(in, ES_MAX_HANDLES) = handles_at;
	return true;
}

/* The two contexts (shared_ptrs, adjacent) and the expandable segment after them, past the event count: the
   offset where every sampled Block holds a sane pair, a sane pair and a sane segment. */
static bool infer_block_tail(struct infer *in, const struct bsample *s)
{
	int32_t cands[16];
	size_t n = 0, from = ((size_t)L_(in, BLOCK_EVENT_COUNT) + 4 + 7) & ~(size_t)7;

	for (size_t o = from; o + 40 <= 256 && o < from + 64 && n < 16; o += 8) {
		bool ok = true;

		for (size_t i = 0; i < s->n && ok; i++)
			ok = shared_ptr_ok(s, i, o) && shared_ptr_ok(s, i, o + 16) && segment_ok(in, s, i, o + 32);
		if (ok)
			cands[n++] = (int32_t)o;
	}
	if (!place(in, MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED, cands, n,
		   shifted(in, MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED, MP_L_BLOCK_NEXT), "the Block's contexts"))
		return false;
	L_(in, BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED) = L_(in, BLOCK_CONTEXT_WHEN_ALLOCATED) + 16;
	L_(in, BLOCK_EXPANDABLE_SEGMENT) = L_(in, BLOCK_CONTEXT_WHEN_ALLOCATED) + 32;
	L_(in, BLOCK_SIZEOF) = L_(in, BLOCK_EXPANDABLE_SEGMENT) + 8;
	return infer_es(in, s);
}

static bool infer_blocks(struct infer *in, struct bsample *s)
{
	int32_t cands[32];
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		if (wk_read(in->wk, in->blocks[i], s->img[i], 256) != MP_OK) {
			in->failed = "a Block (unreadable)";
			return false;
		}
	for (size_t o = 0; o + 8 <= 256 && n < 32; o += 8) {
		bool ok = true;

		for (size_t i = 0; i < s->n && ok; i++)
			ok = pool_ok(s, i, bword(s->img, i, o));
		if (ok)
			cands[n++] = (int32_t)o;
	}
	if (!place(in, MP_L_BLOCK_POOL, cands, n, P_(in, BLOCK_POOL), "Block.pool") || !infer_block_links(in, s))
		return false;
	/* The rest keep their distance to the member before them, as the prior has them: device, stream and
	   stream_uses before size; requested_size, allocated and mapped with ptr; the event count, the contexts
	   and the expandable segment after next. */
	L_(in, BLOCK_DEVICE) = P_(in, BLOCK_DEVICE);
	L_(in, BLOCK_STREAM) = P_(in, BLOCK_STREAM);
	L_(in, BLOCK_STREAM_USES) = P_(in, BLOCK_STREAM_USES);
	L_(in, BLOCK_REQUESTED_SIZE) = shifted(in, MP_L_BLOCK_REQUESTED_SIZE, MP_L_BLOCK_SIZE);
	L_(in, BLOCK_ALLOCATED) = shifted(in, MP_L_BLOCK_ALLOCATED, MP_L_BLOCK_PTR);
	L_(in, BLOCK_MAPPED) = shifted(in, MP_L_BLOCK_MAPPED, MP_L_BLOCK_PTR);
	L_(in, BLOCK_EVENT_COUNT) = shifted(in, MP_L_BLOCK_EVENT_COUNT, MP_L_BLOCK_NEXT);
	if (!infer_block_tail(in, s))
		return false;
	/* What those say must hold: free blocks are not allocated, every block is mapped or not. */
	for (size_t i = 0; i < s->n; i++) {
		uint8_t a = s->img[i][L_(in, BLOCK_ALLOCATED)], m = s->img[i][L_(in, BLOCK_MAPPED)];

		if ((i < s->nfree && a != 0) || a > 1 || m > 1) {
			in->failed = "Block.allocated and mapped";
			return false;
		}
	}
	return true;
}

/* ---- the members after the pools */

static bool flat_at(struct infer *in, size_t off, uint64_t *count)
{
	return off + 32 <= in->dca_len && wk_flat_count(in->wk, in->dca_addr + off, count) == MP_OK;
}

static bool infer_active(struct infer *in, struct bsample *s, size_t from)
{
	int32_t cands[16];
	size_t n = 0;
	uint64_t count;

	/* The table of active blocks: a flat set of Blocks whose pool is one of the two (or a private pool's). */
	for (size_t o = from; o < from + SEARCH && n < 16; o += 8) {
		unsigned char img[256];
		size_t before = in->nblocks;
		bool ok = true;

		if (!flat_at(in, o, &count))
			continue;
		if (wk_flat_each(in->wk, in->dca_addr + o, (size_t)L_(in, ABE_SIZEOF), take_active, in) != MP_OK &&
		    in->nblocks < SAMPLE)
			ok = false;
		for (size_t i = before; i < in->nblocks && ok; i++) {
			uint64_t pool;

			ok = wk_read(in->wk, in->blocks[i], img, sizeof img) == MP_OK;
			pool = ok ? wk_u64(img, L_(in, BLOCK_POOL)) : 0;
			ok = ok && pool != 0 && pool % 8 == 0 && img[L_(in, BLOCK_ALLOCATED)] <= 1 &&
			     wk_u64(img, L_(in, BLOCK_PTR)) % 512 == 0 && wk_u64(img, L_(in, BLOCK_SIZE)) % 512 == 0;
		}
		in->nblocks = before;
		if (ok && (count > 0 || HASP(in, DCA_ACTIVE_BLOCKS)))
			cands[n++] = (int32_t)o;
	}
	(void)s;
	return place(in, MP_L_DCA_ACTIVE_BLOCKS, cands, n, shifted(in, MP_L_DCA_ACTIVE_BLOCKS, MP_L_DCA_SMALL_BLOCKS),
		     "the table of active blocks");
}

/* A place the ring reads sanely: its offset, which member order, which release's TraceEntry. */
struct ring_cand {
	int32_t at;
	int order;
	const mp_layout *te;
};

static bool infer_ring(struct infer *in);

static bool infer_tail(struct infer *in)
{
	int32_t cands[16];
	size_t n = 0;
	uint64_t reserved = get64(in->dca, in->dca_len, (size_t)(L_(in, DCA_STATS) + L_(in, DS_RESERVED_BYTES)));
	size_t from = (size_t)L_(in, DCA_ACTIVE_BLOCKS) + 32;

	for (size_t o = from; o < from + SEARCH && n < 16; o += 8)
		if (get64(in->dca, in->dca_len, o) == reserved)
			cands[n++] = (int32_t)o;
	if (!place(in, MP_L_DCA_TOTAL_ALLOCATED_MEMORY, cands, n,
		   shifted(in, MP_L_DCA_TOTAL_ALLOCATED_MEMORY, MP_L_DCA_ACTIVE_BLOCKS), "total_allocated_memory"))
		return false;

	return infer_ring(in);
}

/* The members after the ring, with the ring placed: the private pools' two tables, record_history (a bool
   before the ring, where the prior has it from the ring) and the expandable segments' vector (where the prior has
   it from record_history), each checked. */
static bool after_ring(struct infer *in, int32_t ring_end)
{
	int32_t cands[16], rh, es;
	size_t n = 0, nes;
	uint64_t count, begin;

	/* graph_pools lies as far past the ring's end as the prior has it (rings differ in size: measure from the end) */
	int32_t p_end = P_(in, DCA_ALLOC_BUFFER) + 8 +
			(P_(in, RB_MAX_ENTRIES) > P_(in, RB_VECTOR) ? P_(in, RB_MAX_ENTRIES) : P_(in, RB_VECTOR));

	for (size_t o = (size_t)ring_end; o < (size_t)ring_end + SEARCH && n < 16; o += 8)
		if (flat_at(in, o, &count))
			cands[n++] = (int32_t)o;
	if (!place(in, MP_L_DCA_GRAPH_POOLS, cands, n, ring_end + (P_(in, DCA_GRAPH_POOLS) - p_end), "graph_pools"))
		return false;
	n = 0;
	for (size_t o = (size_t)L_(in, DCA_GRAPH_POOLS) + 32; o < (size_t)L_(in, DCA_GRAPH_POOLS) + 256 && n < 16; o += 8)
		if (flat_at(in, o, &count))
			cands[n++] = (int32_t)o;
	if (!place(in, MP_L_DCA_GRAPH_POOLS_FREEABLE, cands, n,
		   shifted(in, MP_L_DCA_GRAPH_POOLS_FREEABLE, MP_L_DCA_GRAPH_POOLS), "graph_pools_freeable"))
		return false;
	/* The expandable segments' vector between the reserved bytes and the ring, record_history as far after it as
	   the prior has it (a 0 or 1 before the ring); a vector that holds segments is the one. */
	int32_t full[16], any[16], gap = P_(in, DCA_RECORD_HISTORY) - P_(in, DCA_EXPANDABLE_SEGMENTS);
	size_t nfull = 0, nany = 0;

	for (es = L_(in, DCA_TOTAL_ALLOCATED_MEMORY) + 8; es + 24 <= L_(in, DCA_ALLOC_BUFFER); es += 8) {
		rh = es + gap;
		if (rh >= L_(in, DCA_ALLOC_BUFFER) || in->dca[rh] > 1 ||
		    wk_vector(in->wk, in->dca_addr + (uint64_t)es, 8, 1u << 16, &begin, &nes) != MP_OK)
			continue;
		if (nes > 0 && nfull < 16)
			full[nfull++] = es;
		if (nany < 16)
			any[nany++] = es;
	}
	es = shifted(in, MP_L_DCA_EXPANDABLE_SEGMENTS, MP_L_DCA_TOTAL_ALLOCATED_MEMORY);
	if (!(nfull > 0 ? place(in, MP_L_DCA_EXPANDABLE_SEGMENTS, full, nfull, es, "expandable_segments_")
			: place(in, MP_L_DCA_EXPANDABLE_SEGMENTS, any, nany, es, "expandable_segments_")))
		return false;
	L_(in, DCA_RECORD_HISTORY) = L_(in, DCA_EXPANDABLE_SEGMENTS) + gap;
	L_(in, DCA_SIZEOF) = shifted(in, MP_L_DCA_SIZEOF, MP_L_DCA_GRAPH_POOLS_FREEABLE);
	return true;
}

/* The ring: its capacity, next slot and vector, in the prior's order or the other one releases had (2.1 to 2.4
   kept the next slot first), its entries the prior's size or another known release's (a recorded ring tells them
   apart). Every place where these read sanely is a candidate; nearest the prior's first, the first after which
   the members that follow place too. */
static bool infer_ring(struct infer *in)
{
	static const int32_t orders[2][3] = { { 0, 48, 56 }, { 16, 0, 24 } };
	struct ring_cand c[64];
	size_t nc = 0, from = (size_t)L_(in, DCA_TOTAL_ALLOCATED_MEMORY) + 8;
	int32_t want = shifted(in, MP_L_DCA_ALLOC_BUFFER, MP_L_DCA_TOTAL_ALLOCATED_MEMORY);

	for (size_t t = 0; t <= mp_layout_builtin_count() && nc == 0; t++) {
		const mp_layout *te = t == 0 ? in->P : mp_layout_builtin(t - 1);

		if (t > 0 && te->off[MP_L_TE_SIZEOF] == P_(in, TE_SIZEOF))
			continue;
		for (size_t o = from; o < from + 2 * SEARCH && nc < 64; o += 8)
			for (int k = 0; k < 2 && nc < 64; k++) {
				uint64_t max = get64(in->dca, in->dca_len, o + (size_t)orders[k][0]),
					 next = get64(in->dca, in->dca_len, o + (size_t)orders[k][1]),
					 vec = get64(in->dca, in->dca_len, o + (size_t)orders[k][2]), begin;
				size_t ne;

				if (max == 0 || max > WK_MAX_TRACE || vec == 0 || vec % 8 != 0 ||
				    wk_vector(in->wk, vec, (size_t)te->off[MP_L_TE_SIZEOF], WK_MAX_TRACE, &begin, &ne) != MP_OK ||
				    ne > max || (ne > 0 && next >= ne) || (ne == 0 && next != 0) || (ne == 0 && te != in->P))
					continue;
				c[nc].at = (int32_t)o;
				c[nc].order = k;
				c[nc++].te = te;
			}
	}
	/* nearest the prior's place first (a stable selection: the list is short) */
	for (size_t i = 0; i < nc; i++) {
		size_t m = i;

		for (size_t j = i + 1; j < nc; j++)
			if (labs((long)c[j].at - want) < labs((long)c[m].at - want))
				m = j;
		if (m != i) {
			struct ring_cand tmp = c[i];

			c[i] = c[m];
			c[m] = tmp;
		}
		const int32_t *ord = orders[c[i].order];
		unsigned placed = in->placed, unique = in->unique;

		L_(in, DCA_ALLOC_BUFFER) = c[i].at;
		L_(in, RB_MAX_ENTRIES) = ord[0];
		L_(in, RB_NEXT) = ord[1];
		L_(in, RB_VECTOR) = ord[2];
		for (int f = MP_L_TE_SIZEOF; f <= MP_L_TE_USER_METADATA; f++)
			in->L->off[f] = c[i].te->off[f];
		if (after_ring(in, c[i].at + (ord[0] > ord[2] ? ord[0] : ord[2]) + 8)) {
			in->placed++;
			in->unique += nc == 1;
			return true;
		}
		in->placed = placed;
		in->unique = unique;
	}
	if (nc == 0)
		in->failed = "the trace ring";
	return false;
}

/* ---- PrivatePool */

struct pools_seen {
	const struct infer *in;
	uint64_t pool[4], key[4][2];
	size_t n;
};

static mp_err take_pool(struct walk *wk, const unsigned char *entry, void *ctx)
{
	struct pools_seen *ps = ctx;

	(void)wk;
	if (ps->n == 4)
		return MP_E_LIMIT;
	ps->key[ps->n][0] = wk_u64(entry, L_(ps->in, GPE_ID));
	ps->key[ps->n][1] = wk_u64(entry, L_(ps->in, GPE_ID) + 8);
	ps->pool[ps->n++] = wk_u64(entry, L_(ps->in, GPE_POOL));
	return MP_OK;
}

/* PrivatePool, when graph_pools holds some (else the prior's, never read): its large_blocks is the BlockPool whose
   owner is the pool itself, small_blocks the one after it; its id, where it has one, a copy of its key before
   them; its use count, a small positive count before them. */
static bool infer_private_pools(struct infer *in)
{
	struct pools_seen ps = { .in = in, .n = 0 };
	int32_t large = -1, id = MP_LAYOUT_ABSENT, use = -1;
	unsigned char img[512];

	if (wk_flat_each(in->wk, in->dca_addr + (uint64_t)L_(in, DCA_GRAPH_POOLS), (size_t)L_(in, GPE_SIZEOF), take_pool,
			 &ps) != MP_OK &&
	    ps.n == 0)
		return true;
	for (size_t i = 0; i < ps.n; i++) {
		int32_t l = -1, d = MP_LAYOUT_ABSENT, u = -1;

		if (wk_read(in->wk, ps.pool[i], img, sizeof img) != MP_OK) {
			in->failed = "a private pool (unreadable)";
			return false;
		}
		for (int32_t o = 0; o + L_(in, BP_SIZEOF) * 2 <= (int32_t)sizeof img && l < 0; o += 8)
			if (wk_u64(img, o + L_(in, BP_OWNER_PRIVATEPOOL)) == ps.pool[i] &&
			    wk_u64(img, o + L_(in, BP_SIZEOF) + L_(in, BP_OWNER_PRIVATEPOOL)) == ps.pool[i])
				l = o;
		for (int32_t o = 0; l > 0 && o + 16 <= l && d < 0; o += 8)
			if (wk_u64(img, o) == ps.key[i][0] && wk_u64(img, o + 8) == ps.key[i][1])
				d = o;
		for (int32_t o = 0; l > 0 && o + 4 <= l && u < 0; o += 4) {
			int32_t v;

			memcpy(&v, img + o, sizeof v);
			if (v >= 1 && v < (1 << 20) && (d < 0 || o < d || o >= d + 16))
				u = o;
		}
		if (l < 0 || u < 0 || (i > 0 && (l != large || d != id || u != use))) {
			in->failed = "PrivatePool";
			return false;
		}
		large = l, id = d, use = u;
	}
	if (ps.n == 0)
		return true;
	L_(in, PP_LARGE_BLOCKS) = large;
	L_(in, PP_SMALL_BLOCKS) = large + L_(in, BP_SIZEOF);
	L_(in, PP_ID) = id;
	L_(in, PP_USE_COUNT) = use;
	L_(in, PP_SIZEOF) = shifted(in, MP_L_PP_SIZEOF, MP_L_PP_SMALL_BLOCKS);
	in->placed++;
	in->unique++;
	return true;
}

/* ---- the allocator settings */

static bool byte_ok(struct walk *wk, uint64_t at)
{
	uint8_t v;

	return mp_target_read_u8(wk->t, at, &v, NULL) == MP_OK && v <= 1;
}

/* Whether the settings read sanely with table V's CUDAAllocatorConfig and AcceleratorAllocatorConfig: a whole
   number of MiB (or SIZE_MAX) to split at, 16 roundup divisions, a collection threshold in [0, 1], flags 0 or 1,
   a settings string. */
static bool settings_ok(struct infer *in, const mp_c10 *c10, const mp_layout *v)
{
	struct walk *wk = in->wk;
	uint64_t cfg, aac = c10->accel_config_addr, split, begin, at;
	bool cfg_split = v->off[MP_L_CFG_MAX_SPLIT_SIZE] != MP_LAYOUT_ABSENT;
	size_t n;
	double gc;
	char *text = NULL;
	bool ok;

	if (v->off[MP_L_CFG_LAST_ALLOCATOR_SETTINGS] == MP_LAYOUT_ABSENT &&
	    v->off[MP_L_AAC_LAST_ALLOCATOR_SETTINGS] == MP_LAYOUT_ABSENT)
		return false;
	if (c10->config_instance_addr == 0 || wk_read_u64(wk, c10->config_instance_addr, &cfg) != MP_OK || cfg == 0)
		return false;
	if (!cfg_split && (aac == 0 || (v->off[MP_L_AAC_SIZEOF] != MP_LAYOUT_ABSENT &&
					c10->accel_config_size != (uint64_t)v->off[MP_L_AAC_SIZEOF])))
		return false;
#define SET_AT(CFG, AAC) (v->off[MP_L_##CFG] != MP_LAYOUT_ABSENT ? cfg + (uint64_t)v->off[MP_L_##CFG] \
								   : aac + (uint64_t)v->off[MP_L_##AAC])
	ok = wk_read_u64(wk, SET_AT(CFG_MAX_SPLIT_SIZE, AAC_MAX_SPLIT_SIZE), &split) == MP_OK &&
	     (split == UINT64_MAX || (split % (1u << 20) == 0 && split >= (20u << 20) && split < (1ull << 50))) &&
	     wk_vector(wk, SET_AT(CFG_ROUNDUP_POWER2_DIVISIONS, AAC_ROUNDUP_POWER2_DIVISIONS), 8, 16, &begin, &n) ==
		     MP_OK && n == 16 &&
	     wk_read(wk, SET_AT(CFG_GARBAGE_COLLECTION_THRESHOLD, AAC_GARBAGE_COLLECTION_THRESHOLD), &gc, sizeof gc) ==
		     MP_OK && gc >= 0.0 && gc <= 1.0 &&
	     byte_ok(wk, SET_AT(CFG_EXPANDABLE_SEGMENTS, AAC_USE_EXPANDABLE_SEGMENTS)) &&
	     wk_string(wk, SET_AT(CFG_LAST_ALLOCATOR_SETTINGS, AAC_LAST_ALLOCATOR_SETTINGS), &text) == MP_OK;
#undef SET_AT
	free(text);
	for (int f = MP_L_CFG_RELEASE_LOCK_ON_CUDAMALLOC; ok && f <= MP_L_CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE; f++)
		ok = v->off[f] == MP_LAYOUT_ABSENT || byte_ok(wk, cfg + (uint64_t)v->off[f]);
	at = cfg + (uint64_t)v->off[MP_L_CFG_PINNED_NUM_REGISTER_THREADS];
	return ok && v->off[MP_L_CFG_PINNED_NUM_REGISTER_THREADS] != MP_LAYOUT_ABSENT &&
	       wk_read_u64(wk, at, &split) == MP_OK && split >= 1 && split <= 1024;
}

/* A CUDAAllocatorConfig laid out as every release that keeps all settings there has it (2.3 to 2.9): the split
   size first, the divisions vector at DIV, then the threshold, the register threads, the three flags and, at
   STR, the settings string. */
static void cfg_shape(mp_layout *v, int32_t div, int32_t str)
{
	for (int f = MP_L_CFG_SIZEOF; f <= MP_L_AAC_LAST_ALLOCATOR_SETTINGS; f++)
		v->off[f] = MP_LAYOUT_ABSENT;
	v->off[MP_L_CFG_MAX_SPLIT_SIZE] = 0;
	v->off[MP_L_CFG_ROUNDUP_POWER2_DIVISIONS] = div;
	v->off[MP_L_CFG_GARBAGE_COLLECTION_THRESHOLD] = div + 24;
	v->off[MP_L_CFG_PINNED_NUM_REGISTER_THREADS] = div + 32;
	v->off[MP_L_CFG_EXPANDABLE_SEGMENTS] = div + 40;
	v->off[MP_L_CFG_RELEASE_LOCK_ON_CUDAMALLOC] = div + 41;
	v->off[MP_L_CFG_PINNED_USE_CUDA_HOST_REGISTER] = div + 42;
	v->off[MP_L_CFG_LAST_ALLOCATOR_SETTINGS] = str;
}

/* The settings' layout: the prior's, else the first known release's that reads sanely, else that shape with its
   vector and string where they read; none: the settings are left out (and the walk says so). */
static const char *infer_settings(struct infer *in, const mp_c10 *c10)
{
	mp_layout *shape = malloc(sizeof *shape);

	long want = wk_version_minor(c10->version);

	for (size_t t = 0; t <= mp_layout_builtin_count() + 8 * 4; t++) {
		const mp_layout *v;

		if (t <= mp_layout_builtin_count()) {
			v = t == 0 ? in->P : mp_layout_builtin(t - 1);
			/* A later release's settings may have members this build lacks (graph_capture_record_stream_reuse,
			   the pinned limits): only the prior and releases up to this build's are taken. */
			if (want >= 0 && wk_version_minor(v->key.torch_version) > want)
				continue;
		} else if (shape != NULL) {
			size_t k = t - mp_layout_builtin_count() - 1; /* divisions at 8, 16; the string 8 to 32 after */

			*shape = *in->P;
			cfg_shape(shape, (int32_t)(8 + 8 * (k / 16)), (int32_t)(8 + 8 * (k / 16) + 48 + 8 * (k % 4)));
			if (k % 16 >= 4)
				continue;
			v = shape;
		} else {
			break;
		}
		if (!settings_ok(in, c10, v))
			continue;
		for (int f = MP_L_CFG_SIZEOF; f <= MP_L_AAC_LAST_ALLOCATOR_SETTINGS; f++)
			in->L->off[f] = v->off[f];
		free(shape);
		return v == shape ? "2.3-2.9's shape" : v->name;
	}
	free(shape);
	for (int f = MP_L_CFG_SIZEOF; f <= MP_L_AAC_LAST_ALLOCATOR_SETTINGS; f++)
		in->L->off[f] = MP_LAYOUT_ABSENT;
	return NULL;
}

/* ---- the whole */

long wk_version_minor(const char *v)
{
	const char *dot = strchr(v, '.');

	return dot != NULL && dot[1] >= '0' && dot[1] <= '9' ? strtol(dot + 1, NULL, 10) : -1;
}


mp_err wk_infer_layout(struct walk *wk, uint64_t obj, const mp_layout *prior, const mp_c10 *c10, mp_layout *out,
		       mp_diag *reason)
{
	struct infer *in = calloc(1, sizeof *in);
	struct bsample *s = calloc(1, sizeof *s);
	uint64_t das[WK_MAX_DEVICES];
	size_t ndev = 0;
	mp_err err = MP_E_NOTFOUND;
	mp_diag quiet = { 0 }, *saved_diag;
	const char *settings;

	if (in == NULL || s == NULL) {
		free(in);
		free(s);
		return MP_E_NOMEM;
	}
	*out = *prior;
	in->c10 = c10;
	saved_diag = wk->diag;
	wk->diag = &quiet; /* what the probes meet is no warning of the walk */
	in->wk = wk;
	in->P = prior;
	in->L = out;
	if (!infer_nca(in, obj))
		goto done;
	{
		uint64_t begin;
		const mp_layout *saved = wk->L;

		wk->L = out;
		err = wk_vector(wk, obj + (uint64_t)L_(in, NCA_DEVICE_ALLOCATOR), 8, WK_MAX_DEVICES, &begin, &ndev);
		if (err == MP_OK)
			err = wk_read(wk, begin, das, ndev * 8);
		wk->L = saved;
		if (err != MP_OK || ndev == 0) {
			in->failed = "the device allocators";
			err = MP_E_NOTFOUND;
			goto done;
		}
	}
	in->dca_addr = das[0];
	in->dca_len = read_span(wk, das[0], in->dca, sizeof in->dca);
	err = MP_E_NOTFOUND;
	if (!infer_stats(in) || !infer_pools(in, (size_t)(L_(in, DCA_STATS) + L_(in, DS_SIZEOF))))
		goto done;
	s->large = in->dca_addr + (uint64_t)L_(in, DCA_LARGE_BLOCKS);
	s->small = in->dca_addr + (uint64_t)L_(in, DCA_SMALL_BLOCKS);
	if ((wk_rbtree_each(wk, s->large, take_block, in) != MP_OK && in->nblocks < SAMPLE / 2) ||
	    (wk_rbtree_each(wk, s->small, take_block, in) != MP_OK && in->nblocks < SAMPLE / 2)) {
		in->failed = "the free-block trees";
		goto done;
	}
	s->nfree = s->n = in->nblocks;
	if (s->n == 0) {
		in->failed = "Block (no free block to learn it from)";
		goto done;
	}
	if (!infer_blocks(in, s) ||
	    !infer_active(in, s, (size_t)(L_(in, DCA_SMALL_BLOCKS) + L_(in, BP_SIZEOF))) || !infer_tail(in))
		goto done;
	/* device_id (where the prior has one): each device allocator's own index. */
	if (HASP(in, DCA_DEVICE_ID)) {
		int32_t at = shifted(in, MP_L_DCA_DEVICE_ID, MP_L_DCA_LARGE_BLOCKS);

		for (size_t i = 0; i < ndev && at != MP_LAYOUT_ABSENT; i++) {
			uint8_t id;

			if (mp_target_read_u8(wk->t, das[i] + (uint64_t)at, &id, NULL) != MP_OK || id != i)
				at = MP_LAYOUT_ABSENT;
		}
		L_(in, DCA_DEVICE_ID) = at;
	}
	/* Trace entries carry a TSC time (the TraceEntry the ring chose): find the pairs that convert it. */
	L_(in, NCA_CLOCK_CONVERTER) = L_(in, TE_TIME) != MP_LAYOUT_ABSENT
					      ? clock_pairs(in, (size_t)L_(in, NCA_DEVICE_ALLOCATOR))
					      : MP_LAYOUT_ABSENT;
	/* The annotation ring (2.5 on) sits right before the device vector, where the prior has one. */
	L_(in, NCA_ANNOTATION_BUFFER) = P_(in, NCA_ANNOTATION_BUFFER) != MP_LAYOUT_ABSENT
						? L_(in, NCA_DEVICE_ALLOCATOR) - WK_RING_HEADER
						: MP_LAYOUT_ABSENT;
	if (!infer_private_pools(in)) {
		err = MP_E_NOTFOUND;
		goto done;
	}
	settings = infer_settings(in, c10);
	snprintf(out->name, sizeof out->name, "inferred");
	snprintf(out->source, sizeof out->source,
		 "inferred from %s (%u of %u members sure; settings %s%s)", prior->name, in->unique, in->placed,
		 settings != NULL ? "as in " : "left out", settings != NULL ? settings : "");
	snprintf(out->key.torch_version, sizeof out->key.torch_version, "%.15s", c10->version);
	out->key.cxx11_abi = c10->cxx11_abi;
	out->key.cuda_major = c10->cuda_major;
	err = mp_layout_check(out, reason);
done:
	wk->diag = saved_diag;
	if (err != MP_OK && in->failed != NULL)
		err = mp_fail(reason, MP_E_NOTFOUND, "inference from %s placed no %s", prior->name, in->failed);
	free(in);
	free(s);
	return err;
}

/* allocator_image.c - lay out an allocator model in a byte buffer as a layout table places it
   (see allocator_image.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_image.h"

#define MIB (1024ull * 1024)

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "allocator_image: %s\n", what);
		abort();
	}
}

/* ---- the model */

void ai_model_init(struct ai_model *m)
{
	memset(m, 0, sizeof *m);
	m->settings = "expandable_segments:True,max_split_size_mb:64";
}

void ai_model_free(struct ai_model *m)
{
	for (size_t d = 0; d < m->ndevices; d++)
		for (size_t s = 0; s < m->devices[d].nsegments; s++)
			free(m->devices[d].segments[s].blocks);
	memset(m, 0, sizeof *m);
}

struct ai_device *ai_device_add(struct ai_model *m)
{
	struct ai_device *d;

	check(m->ndevices < AI_MAX_DEVICES, "too many devices");
	d = &m->devices[m->ndevices++];
	memset(d, 0, sizeof *d);
	return d;
}

int ai_pool_add(struct ai_device *d, uint64_t id0, uint64_t id1, bool freeable)
{
	check(d->npools < AI_MAX_POOLS, "too many private pools");
	d->pools[d->npools] = (struct ai_private_pool){ .id = { id0, id1 }, .freeable = freeable };
	return (int)d->npools++;
}

struct ai_segment *ai_segment_add(struct ai_device *d, int private_pool, bool small, uint64_t stream)
{
	struct ai_segment *s;

	check(d->nsegments < AI_MAX_SEGMENTS, "too many segments");
	check(private_pool == AI_OWN_POOLS || (private_pool >= 0 && (size_t)private_pool < d->npools), "no such pool");
	s = &d->segments[d->nsegments++];
	*s = (struct ai_segment){ .private_pool = private_pool, .small = small, .stream = stream,
				  .context = 0xc0de0000u + d->nsegments };
	return s;
}

struct ai_block *ai_block_add(struct ai_segment *s, uint64_t size, uint64_t requested, enum ai_state state)
{
	if (s->nblocks == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->blocks = realloc(s->blocks, s->cap * sizeof *s->blocks);
		check(s->blocks != NULL, "out of memory");
	}
	if (state == AI_UNMAPPED)
		s->expandable = true;
	s->blocks[s->nblocks] = (struct ai_block){ .size = size, .requested = requested, .state = state,
						   .context = state == AI_ALLOC ? 0xa110c000u + s->nblocks : 0 };
	return &s->blocks[s->nblocks++];
}

struct ai_trace *ai_trace_add(struct ai_device *d, int action, uint64_t addr, uint64_t size, uint64_t stream)
{
	struct ai_trace *t;

	check(d->ntrace < AI_MAX_TRACE, "too many trace entries");
	d->record_history = true;
	t = &d->trace[d->ntrace];
	*t = (struct ai_trace){ .action = action, .addr = addr, .size = size, .stream = stream,
				.time = 1000000000ull + 3000ull * (d->ntrace + 1), .context = 0xf00d0000u + d->ntrace };
	d->ntrace++;
	return t;
}

void ai_model_standard(struct ai_model *m)
{
	struct ai_device *d;
	struct ai_segment *s;
	struct ai_trace *t;
	int pp;

	ai_model_init(m);
	d = ai_device_add(m);
	d->num_ooms = 1;
	d->num_alloc_retries = 2;
	s = ai_segment_add(d, AI_OWN_POOLS, false, 0x5100);
	ai_block_add(s, 2 * MIB, 2000000, AI_ALLOC);
	ai_block_add(s, 8 * MIB, 0, AI_FREE);
	ai_block_add(s, 4 * MIB, 4000000, AI_PENDING_EVENT);
	ai_block_add(s, 6 * MIB, 6 * MIB, AI_ALLOC);
	s = ai_segment_add(d, AI_OWN_POOLS, true, 0);
	ai_block_add(s, 512, 100, AI_ALLOC);
	ai_block_add(s, 1024, 1000, AI_PENDING_USE);
	ai_block_add(s, 2 * MIB - 1536 - 512 * 1024, 0, AI_FREE);
	ai_block_add(s, 512 * 1024, 500000, AI_ALLOC);
	pp = ai_pool_add(d, 1, 7, true);
	s = ai_segment_add(d, pp, false, 0x5100);
	ai_block_add(s, 1 * MIB, 1 * MIB, AI_ALLOC);
	ai_block_add(s, 1 * MIB, 0, AI_FREE);
	s = ai_segment_add(d, AI_OWN_POOLS, false, 0x5200);
	ai_block_add(s, 2 * MIB, 2097000, AI_ALLOC);
	ai_block_add(s, 2 * MIB, 0, AI_FREE);
	ai_block_add(s, 4 * MIB, 0, AI_UNMAPPED);
	ai_block_add(s, 2 * MIB, 2000000, AI_ALLOC);
	ai_block_add(s, 10 * MIB, 0, AI_UNMAPPED);
	d->ring_max = 8;
	d->ring_next = 3;
	ai_trace_add(d, 3, 0, 20 * MIB, 0x5100);  /* segment_alloc */
	ai_trace_add(d, 0, 0, 2 * MIB, 0x5100);   /* alloc */
	ai_trace_add(d, 0, 0, 512, 0);            /* alloc */
	ai_trace_add(d, 1, 0, 1024, 0);           /* free_requested */
	ai_trace_add(d, 2, 0, 1024, 0);           /* free_completed */
	t = ai_trace_add(d, 5, 0, 2 * MIB, 0x5200); /* segment_map */
	t->mempool[0] = 1;
	t->mempool[1] = 7;
	t = ai_trace_add(d, 8, 123456789, 64 * MIB, 0x5100); /* oom: addr is the free memory */
	t->compile_context = "a compile context longer than sixteen bytes";
	t->user_metadata = "meta";
	ai_trace_add(d, 7, 0, 0, 0);              /* snapshot */
	d = ai_device_add(m);
	s = ai_segment_add(d, AI_OWN_POOLS, true, 0);
	ai_block_add(s, 2 * MIB, 0, AI_FREE);
}

/* ---- the image's memory */

void ai_image_init(struct ai_image *img, const mp_layout *l, size_t cap)
{
	memset(img, 0, sizeof *img);
	img->L = l;
	img->base = 0x7f1200000000ull;
	img->cap = cap;
	img->mem = calloc(1, cap);
	check(img->mem != NULL, "out of memory");
	img->used = 4096; /* nothing at the base: a bad pointer into it is refused by alignment only */
}

void ai_image_free(struct ai_image *img)
{
	free(img->mem);
	img->mem = NULL;
}

uint64_t ai_alloc(struct ai_image *img, size_t size)
{
	uint64_t at;

	if (img->isolate)
		img->used = (img->used + AI_PAGE - 1) & ~(size_t)(AI_PAGE - 1);
	at = img->base + img->used;
	check(size <= img->cap - img->used, "image full");
	img->used += (size + 15) & ~(size_t)15;
	return at;
}

void ai_hole(struct ai_image *img, uint64_t addr, uint64_t len)
{
	check(img->nholes < sizeof img->holes / sizeof img->holes[0], "too many holes");
	img->holes[img->nholes++] = (struct ai_hole){ addr & ~(uint64_t)(AI_PAGE - 1),
						      (addr + len + AI_PAGE - 1) & ~(uint64_t)(AI_PAGE - 1) };
}

size_t ai_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct ai_image *img = ctx;
	uint64_t end;

	if (addr < img->base || addr - img->base >= img->used)
		return 0;
	end = img->base + img->used;
	if (len < end - addr)
		end = addr + len;
	for (size_t i = 0; i < img->nholes; i++) {
		if (img->holes[i].lo <= addr && addr < img->holes[i].hi)
			return 0;
		if (addr < img->holes[i].lo && img->holes[i].lo < end)
			end = img->holes[i].lo;
	}
	memcpy(buf, img->mem + (addr - img->base), (size_t)(end - addr));
	return (size_t)(end - addr);
}

mp_target *ai_target(struct ai_image *img)
{
	/* The image's libc10_cuda.so: the code its comparators point into (nothing of it is read). */
	const mp_mapping lib = { .start = 0x10000, .end = 0x80000, .path = "/fake/libc10_cuda.so" };
	mp_target *t = NULL;

	check(mp_target_open_callback("allocator image", ai_read, img, &lib, 1, &t, NULL) == MP_OK, "target");
	return t;
}

void ai_put(struct ai_image *img, uint64_t addr, const void *v, size_t len)
{
	check(addr >= img->base && addr - img->base <= img->used && len <= img->used - (addr - img->base),
	      "write outside the image");
	memcpy(img->mem + (addr - img->base), v, len);
}

void ai_put64(struct ai_image *img, uint64_t addr, uint64_t v)
{
	ai_put(img, addr, &v, sizeof v);
}

void ai_put32(struct ai_image *img, uint64_t addr, uint32_t v)
{
	ai_put(img, addr, &v, sizeof v);
}

void ai_put8(struct ai_image *img, uint64_t addr, uint8_t v)
{
	ai_put(img, addr, &v, sizeof v);
}

uint64_t ai_get64(const struct ai_image *img, uint64_t addr)
{
	uint64_t v;

	check(addr >= img->base && addr - img->base + 8 <= img->used, "read outside the image");
	memcpy(&v, img->mem + (addr - img->base), sizeof v);
	return v;
}

uint64_t ai_at(const struct ai_image *img, uint64_t obj, enum mp_layout_field f)
{
	check(img->L->off[f] != MP_LAYOUT_ABSENT, mp_layout_member_name(f));
	return obj + (uint64_t)img->L->off[f];
}

/* Whether the layout has F. */
static bool has(const struct ai_image *img, enum mp_layout_field f)
{
	return img->L->off[f] != MP_LAYOUT_ABSENT;
}

/* ---- containers */

void ai_vector(struct ai_image *img, uint64_t vec, uint64_t begin, size_t n, size_t elem)
{
	ai_put64(img, vec, begin);
	ai_put64(img, vec + 8, begin + n * elem);
	ai_put64(img, vec + 16, begin + n * elem);
}

void ai_string(struct ai_image *img, uint64_t at, const char *s)
{
	size_t len = strlen(s);

	if (img->L->key.cxx11_abi == 0) {
		/* COW: the object points to the characters; _Rep (length, capacity, refcount) before them. */
		uint64_t rep = ai_alloc(img, 24 + len + 1);

		ai_put64(img, rep, len);
		ai_put64(img, rep + 8, len);
		ai_put(img, rep + 24, s, len + 1);
		ai_put64(img, at, rep + 24);
		return;
	}
	if (len < 16) { /* SSO: the characters in the object */
		ai_put(img, at + 16, s, len + 1);
		ai_put64(img, at, at + 16);
	} else {
		uint64_t p = ai_alloc(img, len + 1);

		ai_put(img, p, s, len + 1);
		ai_put64(img, at, p);
		ai_put64(img, at + 16, len);
	}
	ai_put64(img, at + 8, len);
}

/* Nodes [lo, hi) of NODES as a balanced subtree under PARENT: its root. */
static uint64_t subtree(struct ai_image *img, const uint64_t *nodes, size_t lo, size_t hi, uint64_t parent)
{
	size_t mid = lo + (hi - lo) / 2;
	uint64_t n;

	if (lo >= hi)
		return 0;
	n = nodes[mid];
	ai_put32(img, n + AI_RBN_COLOR, 1); /* black: the walker needs only the links */
	ai_put64(img, n + AI_RBN_PARENT, parent);
	ai_put64(img, n + AI_RBN_LEFT, subtree(img, nodes, lo, mid, n));
	ai_put64(img, n + AI_RBN_RIGHT, subtree(img, nodes, mid + 1, hi, n));
	return n;
}

void ai_rbtree(struct ai_image *img, uint64_t tree, const uint64_t *values, size_t n, uint64_t *nodes)
{
	uint64_t header = tree + 8, *mine = calloc(n + 1, sizeof *mine);

	check(mine != NULL, "out of memory");
	ai_put64(img, tree, 0x29150); /* the comparator (a function pointer) */
	ai_put32(img, header, 0);     /* red */
	for (size_t i = 0; i < n; i++) {
		mine[i] = ai_alloc(img, 40);
		ai_put64(img, mine[i] + AI_RBN_VALUE, values[i]);
		if (nodes != NULL)
			nodes[i] = mine[i];
	}
	ai_put64(img, tree + AI_RB_ROOT, subtree(img, mine, 0, n, header));
	ai_put64(img, tree + AI_RB_LEFTMOST, n ? mine[0] : header);
	ai_put64(img, tree + AI_RB_RIGHTMOST, n ? mine[n - 1] : header);
	ai_put64(img, tree + AI_RB_COUNT, n);
	free(mine);
}

uint64_t ai_flat(struct ai_image *img, uint64_t table, const void *entries, size_t n, size_t entry)
{
	uint64_t slots = 1, lookups, arr;
	float load = 0.5f;

	/* Empty: the default table, 1 slot and 3 lookups; else at most half full. */
	if (n != 0)
		for (slots = 4; slots < 2 * n; slots *= 2)
			;
	for (lookups = n != 0 ? 4 : 3; n != 0 && (1ull << lookups) < slots; lookups++)
		;
	arr = ai_alloc(img, (size_t)(slots + lookups) * entry);
	for (uint64_t i = 0; i < slots + lookups - 1; i++)
		ai_put8(img, arr + i * entry, 0xff);
	ai_put8(img, arr + (slots + lookups - 1) * entry, 0); /* the end marker */
	for (size_t i = 0; i < n; i++) {
		uint64_t e = arr + (uint64_t)(2 * i) * entry;

		ai_put(img, e, (const unsigned char *)entries + i * entry, entry);
		ai_put8(img, e, 0);
	}
	ai_put64(img, table + AI_FLAT_ENTRIES, arr);
	ai_put64(img, table + AI_FLAT_SLOTS_MINUS_ONE, slots - 1);
	ai_put8(img, table + 16, (uint8_t)(64 - lookups)); /* fibonacci shift: not read */
	ai_put8(img, table + AI_FLAT_MAX_LOOKUPS, (uint8_t)lookups);
	ai_put(img, table + AI_FLAT_LOAD, &load, sizeof load);
	ai_put64(img, table + AI_FLAT_COUNT, n);
	return arr;
}

/* ---- the allocator */

/* A set of Block* (or any u64) being collected. */
struct list {
	uint64_t *v;
	struct ai_block **b;
	size_t n, cap;
};

static void list_add(struct list *l, uint64_t v, struct ai_block *b)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		l->b = realloc(l->b, l->cap * sizeof *l->b);
		check(l->v != NULL && l->b != NULL, "out of memory");
	}
	l->v[l->n] = v;
	l->b[l->n++] = b;
}

static void list_free(struct list *l)
{
	free(l->v);
	free(l->b);
}

/* One BlockPool being filled: its free and unmapped blocks. */
struct pool_fill {
	uint64_t addr;
	uint64_t owner;
	bool small;
	struct list free, unmapped;
};

struct keyed {
	uint64_t k[3];
	uint64_t block;
	uint64_t *node;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	for (int i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	return 0;
}

/* The std::set at TREE of list L, ordered as BlockComparatorSize (BY_SIZE) or
   BlockComparatorAddress orders it; each block's node recorded. */
static void block_set(struct ai_image *img, uint64_t tree, struct list *l, const uint64_t *streams, bool by_size)
{
	struct keyed *k = calloc(l->n + 1, sizeof *k);
	uint64_t *values = calloc(l->n + 1, sizeof *values), *nodes = calloc(l->n + 1, sizeof *nodes);

	check(k != NULL && values != NULL && nodes != NULL, "out of memory");
	for (size_t i = 0; i < l->n; i++) {
		k[i] = (struct keyed){ { streams[i], by_size ? l->b[i]->size : l->b[i]->ptr, l->b[i]->ptr },
				       l->v[i], &l->b[i]->node };
	}
	qsort(k, l->n, sizeof *k, cmp_keyed);
	for (size_t i = 0; i < l->n; i++)
		values[i] = k[i].block;
	ai_rbtree(img, tree, values, l->n, nodes);
	for (size_t i = 0; i < l->n; i++)
		*k[i].node = nodes[i];
	free(k);
	free(values);
	free(nodes);
}

/* Per device: its BlockPools, its active blocks. */
struct dev_fill {
	struct pool_fill pools[2 + 2 * AI_MAX_POOLS];
	uint64_t *free_streams[2 + 2 * AI_MAX_POOLS], *unmapped_streams[2 + 2 * AI_MAX_POOLS];
	size_t npools;
	struct list active;
	uint64_t shared_empty; /* the empty ska entry array every default table points to */
};

static struct pool_fill *pool_of(struct dev_fill *f, uint64_t addr)
{
	for (size_t i = 0; i < f->npools; i++)
		if (f->pools[i].addr == addr)
			return &f->pools[i];
	check(0, "no such pool");
	return NULL;
}

static void stream_add(uint64_t **v, size_t n, uint64_t stream)
{
	*v = realloc(*v, (n + 1) * sizeof **v);
	check(*v != NULL, "out of memory");
	(*v)[n] = stream;
}

/* An empty ska table at TABLE sharing the empty entry array. */
static void empty_flat(struct ai_image *img, struct dev_fill *f, uint64_t table)
{
	float load = 0.5f;

	ai_put64(img, table + AI_FLAT_ENTRIES, f->shared_empty);
	ai_put64(img, table + AI_FLAT_SLOTS_MINUS_ONE, 0);
	ai_put8(img, table + 16, 63);
	ai_put8(img, table + AI_FLAT_MAX_LOOKUPS, 3);
	ai_put(img, table + AI_FLAT_LOAD, &load, sizeof load);
	ai_put64(img, table + AI_FLAT_COUNT, 0);
}

/* StatArray member F of the DeviceStats at DS: pool P (0 all, 1 small, 2 large) gets VALUE
   added to current, peak and allocated. */
static void stat_add(struct ai_image *img, uint64_t ds, enum mp_layout_field f, int p, int64_t value)
{
	uint64_t at = ai_at(img, ds, f) + (uint64_t)p * 32;

	for (int i = 0; i < 3; i++)
		ai_put64(img, at + 8 * (uint64_t)i, ai_get64(img, at + 8 * (uint64_t)i) + (uint64_t)value);
}

static void stat_both(struct ai_image *img, uint64_t ds, enum mp_layout_field f, bool small, int64_t value)
{
	stat_add(img, ds, f, 0, value);
	stat_add(img, ds, f, small ? 1 : 2, value);
}

static void put_block(struct ai_image *img, struct dev_fill *f, int index, const struct ai_segment *s, size_t i,
		      uint64_t pool)
{
	const struct ai_block *b = &s->blocks[i];
	uint64_t a = b->addr;

	ai_put8(img, ai_at(img, a, MP_L_BLOCK_DEVICE), (uint8_t)index);
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_STREAM), s->stream);
	if (b->state == AI_PENDING_USE) {
		unsigned char use[24] = { 0 };

		use[9] = (uint8_t)index; /* c10::Stream: device type 0 at 0, index at 1, id at 8 */
		memcpy(use + 16, &(uint64_t){ 0x5300 }, 8);
		ai_flat(img, ai_at(img, a, MP_L_BLOCK_STREAM_USES), use, 1, 24);
	} else {
		empty_flat(img, f, ai_at(img, a, MP_L_BLOCK_STREAM_USES));
	}
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_SIZE), b->size);
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_REQUESTED_SIZE), b->requested);
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_POOL), pool);
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_PTR), b->ptr);
	ai_put8(img, ai_at(img, a, MP_L_BLOCK_ALLOCATED), b->state == AI_ALLOC);
	if (has(img, MP_L_BLOCK_MAPPED))
		ai_put8(img, ai_at(img, a, MP_L_BLOCK_MAPPED), b->state != AI_UNMAPPED);
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_PREV), i > 0 ? s->blocks[i - 1].addr : 0);
	ai_put64(img, ai_at(img, a, MP_L_BLOCK_NEXT), i + 1 < s->nblocks ? s->blocks[i + 1].addr : 0);
	ai_put32(img, ai_at(img, a, MP_L_BLOCK_EVENT_COUNT), b->state == AI_PENDING_EVENT);
	if (has(img, MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED)) {
		ai_put64(img, ai_at(img, a, MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED), b->context);
		ai_put64(img, ai_at(img, a, MP_L_BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED), i == 0 ? s->context : 0);
	} else if (b->context != 0) {
		/* 2.0: a one-record history list, {ptr, requested size, context} then next = NULL; history_last
		   (after history) points at the same record. */
		uint64_t h = ai_alloc(img, 40);

		ai_put64(img, h, b->ptr);
		ai_put64(img, h + 8, b->requested);
		ai_put64(img, ai_at(img, h, MP_L_HISTORY_CONTEXT), b->context);
		ai_put64(img, ai_at(img, a, MP_L_BLOCK_HISTORY), h);
		ai_put64(img, ai_at(img, a, MP_L_BLOCK_HISTORY) + 8, h);
	}
	if (has(img, MP_L_BLOCK_EXPANDABLE_SEGMENT))
		ai_put64(img, ai_at(img, a, MP_L_BLOCK_EXPANDABLE_SEGMENT), s->es);
}

static void put_pool(struct ai_image *img, struct dev_fill *f, uint64_t addr, bool small, uint64_t owner)
{
	check(f->npools < sizeof f->pools / sizeof f->pools[0], "too many pools");
	f->pools[f->npools++] = (struct pool_fill){ .addr = addr, .small = small, .owner = owner };
	ai_put8(img, ai_at(img, addr, MP_L_BP_IS_SMALL), small);
	ai_put64(img, ai_at(img, addr, MP_L_BP_OWNER_PRIVATEPOOL), owner);
}

/* The ring and its std::vector<TraceEntry>. */
static void put_ring(struct ai_image *img, struct ai_device *d, int index)
{
	uint64_t ring = ai_at(img, d->dca, MP_L_DCA_ALLOC_BUFFER);
	size_t esize = (size_t)img->L->off[MP_L_TE_SIZEOF], n = d->ntrace;

	ai_put64(img, ring + (uint64_t)img->L->off[MP_L_RB_MAX_ENTRIES], d->ring_max ? d->ring_max : 64);
	ai_put64(img, ring + (uint64_t)img->L->off[MP_L_RB_NEXT], n ? d->ring_next : 0);
	if (has(img, MP_L_DCA_RECORD_HISTORY))
		ai_put8(img, ai_at(img, d->dca, MP_L_DCA_RECORD_HISTORY), d->record_history);
	if (n == 0 && !d->record_history)
		return;
	check(n == 0 || d->ring_next < n, "ring_next past the entries");
	d->ring_vector = ai_alloc(img, 24);
	d->ring_begin = n ? ai_alloc(img, n * esize) : 0;
	ai_vector(img, d->ring_vector, d->ring_begin, n, esize);
	ai_put64(img, ring + (uint64_t)img->L->off[MP_L_RB_VECTOR], d->ring_vector);
	for (size_t i = 0; i < n; i++) {
		const struct ai_trace *t = &d->trace[i];
		uint64_t e = d->ring_begin + (uint64_t)((d->ring_next + i) % n) * esize;

		/* 2.0 numbers snapshot and oom 5 and 6 (segment_map and segment_unmap came in 2.1) */
		ai_put32(img, ai_at(img, e, MP_L_TE_ACTION),
			 (uint32_t)(t->action >= 7 && !has(img, MP_L_BLOCK_EXPANDABLE_SEGMENT) ? t->action - 2 : t->action));
		if (has(img, MP_L_TE_DEVICE)) /* 2.1's entries have neither device nor time */
			ai_put8(img, ai_at(img, e, MP_L_TE_DEVICE), (uint8_t)index);
		ai_put64(img, ai_at(img, e, MP_L_TE_ADDR), t->addr);
		ai_put64(img, ai_at(img, e, MP_L_TE_CONTEXT), t->context);
		ai_put64(img, ai_at(img, e, MP_L_TE_STREAM), t->stream);
		ai_put64(img, ai_at(img, e, MP_L_TE_SIZE), t->size);
		if (has(img, MP_L_TE_TIME))
			ai_put64(img, ai_at(img, e, MP_L_TE_TIME), t->time);
		if (has(img, MP_L_TE_MEMPOOL)) {
			ai_put64(img, ai_at(img, e, MP_L_TE_MEMPOOL), t->mempool[0]);
			ai_put64(img, ai_at(img, e, MP_L_TE_MEMPOOL) + 8, t->mempool[1]);
		}
		if (has(img, MP_L_TE_COMPILE_CONTEXT))
			ai_string(img, ai_at(img, e, MP_L_TE_COMPILE_CONTEXT), t->compile_context ? t->compile_context : "");
		if (has(img, MP_L_TE_USER_METADATA))
			ai_string(img, ai_at(img, e, MP_L_TE_USER_METADATA), t->user_metadata ? t->user_metadata : "");
	}
}

static void build_device(struct ai_image *img, struct ai_device *d, int index, uint64_t va)
{
	const mp_layout *L = img->L;
	struct dev_fill f = { 0 };
	uint64_t ds, reserved = 0;
	size_t nfree[2 + 2 * AI_MAX_POOLS] = { 0 }, nunmapped[2 + 2 * AI_MAX_POOLS] = { 0 };

	f.shared_empty = ai_alloc(img, 4 * 32);
	for (int i = 0; i < 3; i++)
		ai_put8(img, f.shared_empty + (uint64_t)i * 32, 0xff);
	d->dca = ai_alloc(img, (size_t)L->off[MP_L_DCA_SIZEOF]);
	d->large = ai_at(img, d->dca, MP_L_DCA_LARGE_BLOCKS);
	d->small = ai_at(img, d->dca, MP_L_DCA_SMALL_BLOCKS);
	if (has(img, MP_L_DCA_DEVICE_ID))
		ai_put8(img, ai_at(img, d->dca, MP_L_DCA_DEVICE_ID), (uint8_t)index);
	put_pool(img, &f, d->large, false, 0);
	put_pool(img, &f, d->small, true, 0);
	for (size_t p = 0; p < d->npools; p++) {
		uint64_t pp = d->pools[p].addr = ai_alloc(img, (size_t)L->off[MP_L_PP_SIZEOF]);

		if (has(img, MP_L_PP_ID)) {
			ai_put64(img, ai_at(img, pp, MP_L_PP_ID), d->pools[p].id[0]);
			ai_put64(img, ai_at(img, pp, MP_L_PP_ID) + 8, d->pools[p].id[1]);
		}
		ai_put32(img, ai_at(img, pp, MP_L_PP_USE_COUNT), 1);
		put_pool(img, &f, ai_at(img, pp, MP_L_PP_LARGE_BLOCKS), false, pp);
		put_pool(img, &f, ai_at(img, pp, MP_L_PP_SMALL_BLOCKS), true, pp);
	}
	/* Device addresses in model order; Blocks allocated from the last segment back, so that
	   their addresses are in no useful order. */
	for (size_t si = 0; si < d->nsegments; si++) {
		struct ai_segment *s = &d->segments[si];
		uint64_t total = 0, unit = s->small ? 2 * MIB : 20 * MIB;

		s->ptr = va;
		for (size_t i = 0; i < s->nblocks; i++) {
			s->blocks[i].ptr = va + total;
			total += s->blocks[i].size;
		}
		va += (total + 4 * MIB) & ~(2 * MIB - 1);
		if (s->expandable) {
			s->es = ai_alloc(img, 96);
			ai_put8(img, s->es, (uint8_t)index);
			ai_put64(img, ai_at(img, s->es, MP_L_ES_PTR), s->ptr);
			ai_put64(img, ai_at(img, s->es, MP_L_ES_SEGMENT_SIZE), unit);
			ai_put64(img, ai_at(img, s->es, MP_L_ES_MAX_HANDLES), (total + unit - 1) / unit);
		}
	}
	for (size_t si = d->nsegments; si-- > 0;)
		for (size_t i = d->segments[si].nblocks; i-- > 0;)
			d->segments[si].blocks[i].addr = ai_alloc(img, (size_t)L->off[MP_L_BLOCK_SIZEOF]);
	ds = ai_at(img, d->dca, MP_L_DCA_STATS);
	for (size_t si = 0; si < d->nsegments; si++) {
		struct ai_segment *s = &d->segments[si];
		uint64_t pool = s->private_pool == AI_OWN_POOLS ? (s->small ? d->small : d->large)
				: d->pools[s->private_pool].addr + (uint64_t)L->off[s->small ? MP_L_PP_SMALL_BLOCKS
												 : MP_L_PP_LARGE_BLOCKS];
		struct pool_fill *pf = pool_of(&f, pool);
		size_t pi = (size_t)(pf - f.pools);

		if (!s->expandable)
			stat_both(img, ds, MP_L_DS_SEGMENT, s->small, 1);
		for (size_t i = 0; i < s->nblocks; i++) {
			struct ai_block *b = &s->blocks[i];
			bool active = b->state == AI_ALLOC || b->state == AI_PENDING_EVENT || b->state == AI_PENDING_USE;

			check(b->size != 0 && b->size % 512 == 0, "a block size not a multiple of 512");
			b->node = 0;
			put_block(img, &f, index, s, i, pool);
			if (b->state == AI_FREE) {
				list_add(&pf->free, b->addr, b);
				stream_add(&f.free_streams[pi], nfree[pi]++, s->stream);
			} else if (b->state == AI_UNMAPPED) {
				list_add(&pf->unmapped, b->addr, b);
				stream_add(&f.unmapped_streams[pi], nunmapped[pi]++, s->stream);
			} else {
				list_add(&f.active, b->addr, b);
			}
			if (b->state != AI_UNMAPPED) {
				reserved += b->size;
				stat_both(img, ds, MP_L_DS_RESERVED_BYTES, s->small, (int64_t)b->size);
			}
			if (b->state == AI_ALLOC) {
				stat_both(img, ds, MP_L_DS_ALLOCATION, s->small, 1);
				stat_both(img, ds, MP_L_DS_ALLOCATED_BYTES, s->small, (int64_t)b->size);
			}
			if (active) {
				stat_both(img, ds, MP_L_DS_ACTIVE, s->small, 1);
				stat_both(img, ds, MP_L_DS_ACTIVE_BYTES, s->small, (int64_t)b->size);
				stat_both(img, ds, MP_L_DS_REQUESTED_BYTES, s->small, (int64_t)b->requested);
			}
			if (b->state == AI_FREE && s->nblocks > 1) {
				stat_both(img, ds, MP_L_DS_INACTIVE_SPLIT, s->small, 1);
				stat_both(img, ds, MP_L_DS_INACTIVE_SPLIT_BYTES, s->small, (int64_t)b->size);
			}
		}
	}
	ai_put64(img, ai_at(img, ds, MP_L_DS_NUM_ALLOC_RETRIES), (uint64_t)d->num_alloc_retries);
	ai_put64(img, ai_at(img, ds, MP_L_DS_NUM_OOMS), (uint64_t)d->num_ooms);
	if (has(img, MP_L_DS_NUM_SYNC_ALL_STREAMS)) { /* 2.3 on */
		ai_put64(img, ai_at(img, ds, MP_L_DS_NUM_SYNC_ALL_STREAMS), 3);
		ai_put64(img, ai_at(img, ds, MP_L_DS_NUM_DEVICE_ALLOC), 11);
		ai_put64(img, ai_at(img, ds, MP_L_DS_NUM_DEVICE_FREE), 5);
	}
	ai_put64(img, ai_at(img, ds, MP_L_DS_MAX_SPLIT_SIZE), UINT64_MAX);
	if (has(img, MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS))
		empty_flat(img, &f, ai_at(img, ds, MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS));
	ai_put64(img, ai_at(img, d->dca, MP_L_DCA_TOTAL_ALLOCATED_MEMORY), reserved);
	for (size_t p = 0; p < f.npools; p++) {
		block_set(img, f.pools[p].addr + (uint64_t)L->off[MP_L_BP_BLOCKS], &f.pools[p].free, f.free_streams[p], true);
		if (has(img, MP_L_BP_UNMAPPED))
			block_set(img, f.pools[p].addr + (uint64_t)L->off[MP_L_BP_UNMAPPED], &f.pools[p].unmapped,
				  f.unmapped_streams[p], false);
		list_free(&f.pools[p].free);
		list_free(&f.pools[p].unmapped);
		free(f.free_streams[p]);
		free(f.unmapped_streams[p]);
	}
	/* active_blocks: {distance, Block*} entries. */
	{
		unsigned char *e = calloc(f.active.n + 1, 16);

		check(e != NULL, "out of memory");
		for (size_t i = 0; i < f.active.n; i++)
			memcpy(e + 16 * i + 8, &f.active.v[i], 8);
		d->active_entries = ai_flat(img, ai_at(img, d->dca, MP_L_DCA_ACTIVE_BLOCKS), e, f.active.n, 16);
		free(e);
		list_free(&f.active);
	}
	/* graph_pools and graph_pools_freeable: {distance, id.first, id.second, PrivatePool*}. */
	{
		unsigned char all[AI_MAX_POOLS * 32] = { 0 }, freeable[AI_MAX_POOLS * 32] = { 0 };
		size_t nfreeable = 0;

		for (size_t p = 0; p < d->npools; p++) {
			uint64_t v[3] = { d->pools[p].id[0], d->pools[p].id[1], d->pools[p].addr };

			memcpy(all + 32 * p + 8, v, sizeof v);
			if (d->pools[p].freeable)
				memcpy(freeable + 32 * nfreeable++ + 8, v, sizeof v);
		}
		if (d->npools != 0)
			d->graph_pools_entries = ai_flat(img, ai_at(img, d->dca, MP_L_DCA_GRAPH_POOLS), all, d->npools, 32);
		else
			empty_flat(img, &f, ai_at(img, d->dca, MP_L_DCA_GRAPH_POOLS));
		if (nfreeable != 0)
			ai_flat(img, ai_at(img, d->dca, MP_L_DCA_GRAPH_POOLS_FREEABLE), freeable, nfreeable, 32);
		else
			empty_flat(img, &f, ai_at(img, d->dca, MP_L_DCA_GRAPH_POOLS_FREEABLE));
	}
	put_ring(img, d, index);
}

/* allocator_settings: CUDAAllocatorConfig behind its instance pointer, and for 2.14 the
   settings it moved to libc10's AcceleratorAllocatorConfig. */
static void build_settings(struct ai_image *img, const struct ai_model *m)
{
	const mp_layout *L = img->L;
	uint64_t slot, divisions, obj;
	double gc = 0.8;

	/* 2.1 keeps its settings in a struct private to the allocator, 2.2 without the settings string:
	   neither release's snapshot() reports them, and memprof reads none. */
	if (!has(img, MP_L_CFG_LAST_ALLOCATOR_SETTINGS) && !has(img, MP_L_AAC_LAST_ALLOCATOR_SETTINGS))
		return;
	slot = ai_alloc(img, 8);
	divisions = ai_alloc(img, 16 * 8);
	img->cfg = ai_alloc(img, (size_t)L->off[MP_L_CFG_SIZEOF]);
	ai_put64(img, slot, img->cfg);
	img->c10.config_instance_addr = slot;
	ai_put64(img, ai_at(img, img->cfg, MP_L_CFG_PINNED_NUM_REGISTER_THREADS), 8);
	ai_put8(img, ai_at(img, img->cfg, MP_L_CFG_RELEASE_LOCK_ON_CUDAMALLOC), 1);
	ai_put8(img, ai_at(img, img->cfg, MP_L_CFG_PINNED_USE_CUDA_HOST_REGISTER), 0);
	if (has(img, MP_L_CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE))
		ai_put8(img, ai_at(img, img->cfg, MP_L_CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE), 1);
	for (uint64_t i = 0; i < 16; i++)
		ai_put64(img, divisions + 8 * i, i < 4 ? 4 : 0);
	if (has(img, MP_L_CFG_MAX_SPLIT_SIZE)) {
		obj = img->cfg;
		ai_put64(img, ai_at(img, obj, MP_L_CFG_MAX_SPLIT_SIZE), 64 * MIB);
		ai_vector(img, ai_at(img, obj, MP_L_CFG_ROUNDUP_POWER2_DIVISIONS), divisions, 16, 8);
		ai_put(img, ai_at(img, obj, MP_L_CFG_GARBAGE_COLLECTION_THRESHOLD), &gc, sizeof gc);
		ai_put8(img, ai_at(img, obj, MP_L_CFG_EXPANDABLE_SEGMENTS), 1);
		ai_string(img, ai_at(img, obj, MP_L_CFG_LAST_ALLOCATOR_SETTINGS), m->settings);
		return;
	}
	img->aac = obj = ai_alloc(img, (size_t)L->off[MP_L_AAC_SIZEOF]);
	ai_put64(img, ai_at(img, obj, MP_L_AAC_MAX_SPLIT_SIZE), 64 * MIB);
	ai_vector(img, ai_at(img, obj, MP_L_AAC_ROUNDUP_POWER2_DIVISIONS), divisions, 16, 8);
	ai_put(img, ai_at(img, obj, MP_L_AAC_GARBAGE_COLLECTION_THRESHOLD), &gc, sizeof gc);
	ai_put8(img, ai_at(img, obj, MP_L_AAC_USE_EXPANDABLE_SEGMENTS), 1);
	if (has(img, MP_L_AAC_PINNED_MAX_ROUND_THRESHOLD)) { /* 2.14 (2.11 has no pinned limits) */
		ai_put64(img, ai_at(img, obj, MP_L_AAC_PINNED_MAX_ROUND_THRESHOLD), 2 * MIB);
		ai_put64(img, ai_at(img, obj, MP_L_AAC_PINNED_MAX_CACHED_SIZE), UINT64_MAX);
	}
	ai_string(img, ai_at(img, obj, MP_L_AAC_LAST_ALLOCATOR_SETTINGS), m->settings);
	img->c10.accel_config_addr = obj;
	img->c10.accel_config_size = (uint64_t)L->off[MP_L_AAC_SIZEOF];
	img->c10.accel_config_guard_addr = ai_alloc(img, 8);
	ai_put8(img, img->c10.accel_config_guard_addr, 1);
	snprintf(img->c10.libc10_path, sizeof img->c10.libc10_path, "/fake/libc10.so");
}

/* What the release of layout L cannot hold leaves model M: before 2.1 (no expandable segments) unmapped blocks,
   segment_map and segment_unmap entries (they become segment_alloc and segment_free), and segments' contexts
   (2.0 keeps a block's only). */
static void fit_model(const mp_layout *L, struct ai_model *m)
{
	bool expandable = L->off[MP_L_BLOCK_EXPANDABLE_SEGMENT] != MP_LAYOUT_ABSENT;
	bool segment_contexts = L->off[MP_L_BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED] != MP_LAYOUT_ABSENT;

	for (size_t d = 0; d < m->ndevices; d++) {
		struct ai_device *dev = &m->devices[d];

		for (size_t si = 0; si < dev->nsegments; si++) {
			struct ai_segment *s = &dev->segments[si];
			size_t n = 0;

			if (!segment_contexts)
				s->context = 0;
			if (expandable)
				continue;
			for (size_t i = 0; i < s->nblocks; i++)
				if (s->blocks[i].state != AI_UNMAPPED)
					s->blocks[n++] = s->blocks[i];
			s->nblocks = n;
			s->expandable = false;
		}
		for (size_t i = 0; i < dev->ntrace && !expandable; i++)
			if (dev->trace[i].action == 5 || dev->trace[i].action == 6)
				dev->trace[i].action -= 2;
	}
}

void ai_build(struct ai_image *img, struct ai_model *m)
{
	const mp_layout *L = img->L;
	static const char rtti[] = MP_NATIVE_ALLOCATOR_RTTI;
	uint64_t slot, vtable, typeinfo, clock, vec, va = 0x7f4000000000ull;
	size_t nca_size = (size_t)L->off[MP_L_NCA_DEVICE_ALLOCATOR] + 24 + 64;
	mp_c10 *c = &img->c10;

	fit_model(L, m);
	memset(c, 0, sizeof *c);
	snprintf(c->path, sizeof c->path, "/fake/libc10_cuda.so");
	snprintf(c->local_path, sizeof c->local_path, "/fake/libc10_cuda.so");
	snprintf(c->version, sizeof c->version, "%s", L->key.torch_version);
	c->cxx11_abi = L->key.cxx11_abi;
	c->cuda_major = L->key.cuda_major;
	snprintf(c->allocator_how, sizeof c->allocator_how, "the image's own slot");
	snprintf(c->accel_config_why, sizeof c->accel_config_why, "no libc10.so in the image");
	/* The exported pointer, the object and its RTTI: vptr -> [.., typeinfo*, vfuncs], typeinfo
	   = {its own vptr, the name}. */
	slot = ai_alloc(img, 8);
	img->rtti_name = ai_alloc(img, sizeof rtti);
	ai_put(img, img->rtti_name, rtti, sizeof rtti);
	typeinfo = ai_alloc(img, 16);
	ai_put64(img, typeinfo, 0x7f1300001000ull);
	ai_put64(img, typeinfo + 8, img->rtti_name);
	vtable = ai_alloc(img, 64);
	ai_put64(img, vtable + 8, typeinfo);
	img->allocator = ai_alloc(img, nca_size);
	ai_put64(img, img->allocator, vtable + 16);
	ai_put8(img, img->allocator + 8, 1); /* enable_ */
	ai_put64(img, slot, img->allocator);
	c->allocator_ptr_addr = slot;
	c->native_rtti_name_addr = img->rtti_name;
	/* The process's clock pairs: a 3 GHz TSC from 1e9 ticks at 1.7e18 ns. */
	for (uint64_t i = 0; has(img, MP_L_NCA_CLOCK_CONVERTER) && i < 1001; i++) { /* none in 2.1 */
		clock = ai_at(img, img->allocator, MP_L_NCA_CLOCK_CONVERTER);
		ai_put64(img, clock + 16 * i, 1700000000000000000ull + 1000 * i);
		ai_put64(img, clock + 16 * i + 8, 1000000000ull + 3000 * i);
	}
	img->das = m->ndevices ? ai_alloc(img, m->ndevices * 8) : 0;
	vec = ai_at(img, img->allocator, MP_L_NCA_DEVICE_ALLOCATOR);
	ai_vector(img, vec, img->das, m->ndevices, 8);
	for (size_t i = 0; i < m->ndevices; i++) {
		build_device(img, &m->devices[i], (int)i, va + (uint64_t)i * (1ull << 36));
		ai_put64(img, img->das + 8 * i, m->devices[i].dca);
	}
	build_settings(img, m);
}

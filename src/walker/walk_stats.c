/* walk_stats.c - a device's DeviceStats as the flattened, sorted keys of
   torch.cuda.memory_stats() (allocator-facts §8), with 2.14's per-private-pool reserved bytes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"
#include "mp_array.h"

/* The members memory_stats() reports, and how: a StatArray (3 pools x 4 fields), one Stat
   (4 fields) or one int64. */
enum stat_kind { STAT_ARRAY, STAT_ONE, STAT_SCALAR };

static const struct {
	const char *name;
	enum mp_layout_field field;
	enum stat_kind kind;
} stat_members[] = {
	{ "allocation", MP_L_DS_ALLOCATION, STAT_ARRAY },
	{ "segment", MP_L_DS_SEGMENT, STAT_ARRAY },
	{ "active", MP_L_DS_ACTIVE, STAT_ARRAY },
	{ "inactive_split", MP_L_DS_INACTIVE_SPLIT, STAT_ARRAY },
	{ "allocated_bytes", MP_L_DS_ALLOCATED_BYTES, STAT_ARRAY },
	{ "reserved_bytes", MP_L_DS_RESERVED_BYTES, STAT_ARRAY },
	{ "active_bytes", MP_L_DS_ACTIVE_BYTES, STAT_ARRAY },
	{ "inactive_split_bytes", MP_L_DS_INACTIVE_SPLIT_BYTES, STAT_ARRAY },
	{ "requested_bytes", MP_L_DS_REQUESTED_BYTES, STAT_ARRAY },
	{ "num_alloc_retries", MP_L_DS_NUM_ALLOC_RETRIES, STAT_SCALAR },
	{ "num_ooms", MP_L_DS_NUM_OOMS, STAT_SCALAR },
	{ "oversize_allocations", MP_L_DS_OVERSIZE_ALLOCATIONS, STAT_ONE },
	{ "oversize_segments", MP_L_DS_OVERSIZE_SEGMENTS, STAT_ONE },
	{ "num_sync_all_streams", MP_L_DS_NUM_SYNC_ALL_STREAMS, STAT_SCALAR },
	{ "num_device_alloc", MP_L_DS_NUM_DEVICE_ALLOC, STAT_SCALAR },
	{ "num_device_free", MP_L_DS_NUM_DEVICE_FREE, STAT_SCALAR },
	{ "num_oom_rejections", MP_L_DS_NUM_OOM_REJECTIONS, STAT_SCALAR },
	{ "max_split_size", MP_L_DS_MAX_SPLIT_SIZE, STAT_SCALAR },
};

#define NMEMBERS (sizeof stat_members / sizeof stat_members[0])
#define MAX_KEYS (NMEMBERS * 12)

/* StatArray index order in memory (StatType): AGGREGATE, SMALL_POOL, LARGE_POOL. */
static const char *const pool_names[3] = { "all", "small_pool", "large_pool" };
static const char *const stat_fields[4] = { "current", "peak", "allocated", "freed" };

/* One flattened key and where its value sits inside DeviceStats. */
struct key_slot {
	char key[64];
	enum mp_layout_field field;
	int32_t rel; /* offset inside the member */
};

static int cmp_slot(const void *a, const void *b)
{
	return strcmp(((const struct key_slot *)a)->key, ((const struct key_slot *)b)->key);
}

/* The flattened keys in memory_stats()' order (plain byte order of the key strings). */
static size_t key_slots(struct key_slot *slots)
{
	size_t n = 0;

	for (size_t m = 0; m < NMEMBERS; m++) {
		const char *name = stat_members[m].name;

		switch (stat_members[m].kind) {
		case STAT_ARRAY:
			for (int p = 0; p < 3; p++)
				for (int f = 0; f < 4; f++) {
					snprintf(slots[n].key, sizeof slots[n].key, "%s.%s.%s", name, pool_names[p],
						 stat_fields[f]);
					slots[n].field = stat_members[m].field;
					slots[n++].rel = p * 32 + f * 8;
				}
			break;
		case STAT_ONE:
			for (int f = 0; f < 4; f++) {
				snprintf(slots[n].key, sizeof slots[n].key, "%s.%s", name, stat_fields[f]);
				slots[n].field = stat_members[m].field;
				slots[n++].rel = f * 8;
			}
			break;
		case STAT_SCALAR:
			snprintf(slots[n].key, sizeof slots[n].key, "%s", name);
			slots[n].field = stat_members[m].field;
			slots[n++].rel = 0;
			break;
		}
	}
	mp_sort(slots, n, sizeof *slots, cmp_slot);
	return n;
}

/* Keys are the same for every device and walk: made once, and results point into them. */
static struct key_slot slots[MAX_KEYS];
static size_t nslots;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;

static void make_slots(void)
{
	nslots = key_slots(slots);
}

static int cmp_memstat(const void *a, const void *b)
{
	return strcmp(((const mp_memstat *)a)->key, ((const mp_memstat *)b)->key);
}

#define POOL_KEY_PREFIX "reserved_bytes_by_private_pools."

void wk_pool_stat_keys(uint64_t id0, uint64_t id1, const unsigned char *stats, char (*keys)[WK_POOL_KEY_MAX],
		       mp_memstat *out)
{
	size_t k = 0;

	for (int p = 0; p < 3; p++)
		for (int f = 0; f < 4; f++, k++) {
			snprintf(keys[k], WK_POOL_KEY_MAX, POOL_KEY_PREFIX "%llu_%llu.%s.%s",
				 (unsigned long long)id0, (unsigned long long)id1, pool_names[p], stat_fields[f]);
			out[k].key = keys[k];
			out[k].value = wk_i64(stats, p * 32 + f * 8);
		}
}

/* reserved_bytes_by_private_pools, a ska::flat_hash_map<MempoolId_t, StatArray>: each entry is
   the distance byte (padded to 8), the pool id's two u64 and the 96-byte StatArray. */
enum { POOL_ENTRY = 120, POOL_ID = 8, POOL_STATS = 24 };

struct pools {
	char (*keys)[WK_POOL_KEY_MAX];
	mp_memstat *v; /* where the first pool's keys go */
	size_t n, cap; /* pools taken, room for */
};

static mp_err take_pool(struct walk *wk, const unsigned char *entry, void *ctx)
{
	struct pools *ps = ctx;
	const unsigned char *st = entry + POOL_STATS;

	(void)wk;
	if (ps->n == ps->cap)
		return MP_E_CORRUPT;
	/* Each Stat as check_stats has it: current never negative, never above the peak. */
	for (int p = 0; p < 3; p++)
		if (wk_i64(st, p * 32) < 0 || wk_i64(st, p * 32 + 8) < wk_i64(st, p * 32))
			return MP_E_CORRUPT;
	wk_pool_stat_keys(wk_u64(entry, POOL_ID), wk_u64(entry, POOL_ID + 8), st, ps->keys + ps->n * WK_POOL_NKEYS,
			  ps->v + ps->n * WK_POOL_NKEYS);
	ps->n++;
	return MP_OK;
}

/* Append DEV's private-pool keys to STATS (N keys, room made here) from the map at MAP: *N grows
   and DEV->stat_keys holds their text. MP_E_CORRUPT/MP_E_LIMIT for a damaged map (nothing added),
   MP_E_NOMEM. */
static mp_err pool_stats(struct walk *wk, mp_walk_device *dev, uint64_t map, mp_memstat **stats, size_t *n)
{
	struct pools ps = { 0 };
	uint64_t count, width;
	mp_memstat *grown;
	mp_err err;

	if ((err = wk_flat_count(wk, map, &count)) != MP_OK || (err = wk_flat_slots(wk, map, &width)) != MP_OK)
		return err;
	/* Pools are never erased from the map, and ska keeps no more than half its slots full (a
	   quarter just after it grows): many more slots than that many pools need is damage too, and
	   would cost reads. */
	if (count > WK_MAX_PRIVATE_POOLS || width > 8 * (uint64_t)WK_MAX_PRIVATE_POOLS)
		return MP_E_LIMIT;
	if (count == 0)
		return MP_OK;
	ps.cap = (size_t)count;
	ps.keys = calloc(ps.cap * WK_POOL_NKEYS, sizeof *ps.keys);
	grown = realloc(*stats, (*n + ps.cap * WK_POOL_NKEYS) * sizeof **stats);
	if (grown != NULL)
		*stats = grown;
	if (ps.keys == NULL || grown == NULL) {
		free(ps.keys);
		return MP_E_NOMEM;
	}
	ps.v = *stats + *n;
	err = wk_flat_each(wk, map, POOL_ENTRY, take_pool, &ps);
	if (err != MP_OK) {
		free(ps.keys);
		return err;
	}
	dev->stat_keys = (char *)ps.keys;
	*n += ps.n * WK_POOL_NKEYS;
	return MP_OK;
}

/* Whether sorted STATS (N) has a key twice (a damaged map can repeat a pool id). */
static bool repeated_key(const mp_memstat *stats, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (strcmp(stats[i - 1].key, stats[i].key) == 0)
			return true;
	return false;
}

/* Drop the private-pool keys from sorted STATS (N keys): the others keep their order. */
static size_t drop_pool_keys(mp_memstat *stats, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (strncmp(stats[i].key, POOL_KEY_PREFIX, sizeof POOL_KEY_PREFIX - 1) != 0)
			stats[kept++] = stats[i];
	return kept;
}

/* DEV's private-pool keys, merged into its sorted STATS (N keys) in memory_stats()' order. A
   damaged map is a warning and adds nothing. */
static mp_err add_pool_stats(struct walk *wk, mp_walk_device *dev, mp_memstat **stats, size_t *n)
{
	uint64_t map = dev->address + (uint64_t)OFF(wk, DCA_STATS) + (uint64_t)OFF(wk, DS_RESERVED_BYTES_BY_PRIVATE_POOLS);
	mp_err err = pool_stats(wk, dev, map, stats, n);

	if (err == MP_E_NOMEM)
		return err;
	if (err == MP_OK) {
		mp_sort(*stats, *n, sizeof **stats, cmp_memstat);
		if (!repeated_key(*stats, *n))
			return MP_OK;
		*n = drop_pool_keys(*stats, *n);
		free(dev->stat_keys);
		dev->stat_keys = NULL;
	}
	wk_damaged(wk, "device %d: reserved_bytes_by_private_pools at 0x%llx is damaged or too large; its keys are left out",
		   dev->index, (unsigned long long)map);
	return MP_OK;
}

mp_err wk_stats(struct walk *wk, mp_walk_device *dev)
{
	unsigned char img[WK_MAX_STRUCT];
	int32_t size = OFF(wk, DS_SIZEOF);
	mp_memstat *v;
	mp_err err;

	pthread_once(&slots_once, make_slots);
	if ((err = wk_read(wk, dev->address + (uint64_t)OFF(wk, DCA_STATS), img, (size_t)size)) != MP_OK) {
		wk_damaged(wk, "device %d: its statistics are unreadable", dev->index);
		return MP_OK;
	}
	v = calloc(nslots, sizeof *v);
	if (v == NULL)
		return MP_E_NOMEM;
	/* A member the version lacks (2.6 has no num_oom_rejections) is not a key of its memory_stats(). */
	size_t n = 0;
	for (size_t i = 0; i < nslots; i++) {
		int32_t off = wk->L->off[slots[i].field];
		if (off == MP_LAYOUT_ABSENT)
			continue;
		v[n].key = slots[i].key;
		v[n++].value = wk_i64(img, off + slots[i].rel);
	}
	if (HAS(wk, DS_RESERVED_BYTES_BY_PRIVATE_POOLS) && (err = add_pool_stats(wk, dev, &v, &n)) != MP_OK) {
		free(v);
		return err;
	}
	dev->stats = (mp_memstats){ .device = dev->index, .v = v, .n = n };
	return MP_OK;
}

static int64_t stat_value(const mp_memstats *st, const char *key)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i].key, key) == 0)
			return st->v[i].value;
	return -1;
}

/* The statistics are reported as read; when they disagree with the blocks just walked, say so
   (damage, or a running process caught between two updates: its front end reads it again). The blocks' sums are unsigned, as
   their sizes are: damaged sizes may add up past INT64_MAX. */
void wk_stats_cross_check(struct walk *wk, const mp_walk_device *dev, size_t first_segment)
{
	const mp_walk *w = wk->w;
	uint64_t allocated = 0, active = 0, count = 0;

	if (dev->stats.n == 0 || w->partial)
		return;
	for (size_t i = first_segment; i < w->nsegments; i++)
		for (size_t j = 0; j < w->segments[i].nblocks; j++) {
			const mp_walk_block *b = &w->blocks[w->segments[i].first_block + j];

			if (b->state == MP_WS_ACTIVE_ALLOCATED) {
				allocated += b->size;
				count++;
			}
			if (b->state != MP_WS_INACTIVE)
				active += b->size;
		}
	if (allocated != (uint64_t)stat_value(&dev->stats, "allocated_bytes.all.current") ||
	    active != (uint64_t)stat_value(&dev->stats, "active_bytes.all.current") ||
	    count != (uint64_t)stat_value(&dev->stats, "allocation.all.current"))
		mp_warn_damage(wk->diag,
			"device %d: the statistics disagree with the blocks (allocated_bytes.all.current %lld, "
			"blocks %llu; allocation.all.current %lld, blocks %llu): statistics are shown as read",
			dev->index, (long long)stat_value(&dev->stats, "allocated_bytes.all.current"),
			(unsigned long long)allocated, (long long)stat_value(&dev->stats, "allocation.all.current"),
			(unsigned long long)count);
}

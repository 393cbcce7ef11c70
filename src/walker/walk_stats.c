/* walk_stats.c - a device's DeviceStats as the flattened, sorted keys of
   torch.cuda.memory_stats() (allocator-facts §8). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

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
	qsort(slots, n, sizeof *slots, cmp_slot);
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
   (damage, or a live process caught between two updates). */
void wk_stats_cross_check(struct walk *wk, const mp_walk_device *dev, size_t first_segment)
{
	const mp_walk *w = wk->w;
	int64_t allocated = 0, active = 0, count = 0;

	if (dev->stats.n == 0 || w->partial)
		return;
	for (size_t i = first_segment; i < w->nsegments; i++)
		for (size_t j = 0; j < w->segments[i].nblocks; j++) {
			const mp_walk_block *b = &w->blocks[w->segments[i].first_block + j];

			if (b->state == MP_WS_ACTIVE_ALLOCATED) {
				allocated += (int64_t)b->size;
				count++;
			}
			if (b->state != MP_WS_INACTIVE)
				active += (int64_t)b->size;
		}
	if (allocated != stat_value(&dev->stats, "allocated_bytes.all.current") ||
	    active != stat_value(&dev->stats, "active_bytes.all.current") ||
	    count != stat_value(&dev->stats, "allocation.all.current"))
		mp_warn(wk->diag,
			"device %d: the statistics disagree with the blocks (allocated_bytes.all.current %lld, "
			"blocks %lld; allocation.all.current %lld, blocks %lld): statistics are shown as read",
			dev->index, (long long)stat_value(&dev->stats, "allocated_bytes.all.current"), (long long)allocated,
			(long long)stat_value(&dev->stats, "allocation.all.current"), (long long)count);
}

/* test_walk.c - walker pieces on hand-built allocator images (an in-memory target): 2.14's
   per-private-pool memory_stats() keys from DeviceStats.reserved_bytes_by_private_pools (a ska
   flat_hash_map), and allocator_settings from CUDAAllocatorConfig (2.6) or from libc10's
   AcceleratorAllocatorConfig plus CUDAAllocatorConfig (2.14); damage gives a warning, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_target.h"
#include "unit_main.h"
#include "walk_int.h"

/* The target's memory: SIZE bytes at BASE, nothing elsewhere. */
#define BASE 0x100000ull
#define SIZE 0x8000u
static unsigned char mem[SIZE];

static size_t read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	size_t n;

	(void)ctx;
	if (addr < BASE || addr - BASE >= SIZE)
		return 0;
	n = SIZE - (size_t)(addr - BASE);
	n = n < len ? n : len;
	memcpy(buf, mem + (addr - BASE), n);
	return n;
}

static void put(uint64_t addr, const void *v, size_t len)
{
	CU_ASSERT_FATAL(addr >= BASE && addr - BASE + len <= SIZE);
	memcpy(mem + (addr - BASE), v, len);
}

static void put64(uint64_t addr, uint64_t v)
{
	put(addr, &v, sizeof v);
}

static void put8(uint64_t addr, uint8_t v)
{
	put(addr, &v, 1);
}

/* A walk in progress over the image with built-in layout NAME; the last warning is kept. */
struct fixture {
	mp_target *t;
	struct walk wk;
	mp_walk_opts opts;
	mp_diag diag;
	char warning[512];
};

static void keep_warning(void *ctx, const char *line)
{
	struct fixture *f = ctx;

	snprintf(f->warning, sizeof f->warning, "%s", line);
}

static const mp_layout *builtin(const char *name)
{
	const mp_layout *l = mp_layout_builtin_named(name);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	return l;
}

static void walk_open(struct fixture *f, const char *layout)
{
	memset(f, 0, sizeof *f);
	f->diag.warn = keep_warning;
	f->diag.warn_ctx = f;
	CU_ASSERT_FATAL(mp_target_open_callback("image", read_mem, NULL, NULL, 0, &f->t, &f->diag) == MP_OK);
	f->wk = (struct walk){ .t = f->t, .L = builtin(layout), .diag = &f->diag, .cxx11_abi = 1,
			       .max_blocks = 1000, .opts = &f->opts };
	f->wk.w = calloc(1, sizeof *f->wk.w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->wk.w);
}

static void walk_close(struct fixture *f)
{
	mp_walk_free(f->wk.w);
	mp_target_close(f->t);
}

/* ---- reserved_bytes_by_private_pools */

static void test_pool_keys(void)
{
	unsigned char stats[96];
	char keys[WK_POOL_NKEYS][WK_POOL_KEY_MAX];
	mp_memstat out[WK_POOL_NKEYS];

	for (int i = 0; i < 12; i++) {
		int64_t v = 100 + i;

		memcpy(stats + 8 * i, &v, sizeof v);
	}
	wk_pool_stat_keys(0, 1, stats, keys, out);
	CU_ASSERT_STRING_EQUAL(out[0].key, "reserved_bytes_by_private_pools.0_1.all.current");
	CU_ASSERT_EQUAL(out[0].value, 100);
	CU_ASSERT_STRING_EQUAL(out[3].key, "reserved_bytes_by_private_pools.0_1.all.freed");
	CU_ASSERT_STRING_EQUAL(out[5].key, "reserved_bytes_by_private_pools.0_1.small_pool.peak");
	CU_ASSERT_EQUAL(out[5].value, 105);
	CU_ASSERT_STRING_EQUAL(out[10].key, "reserved_bytes_by_private_pools.0_1.large_pool.allocated");
	CU_ASSERT_EQUAL(out[11].value, 111);
	CU_ASSERT_PTR_EQUAL(out[11].key, keys[11]);
	/* The longest key: both ids at their largest, unsigned. */
	wk_pool_stat_keys(UINT64_MAX, UINT64_MAX, stats, keys, out);
	CU_ASSERT_STRING_EQUAL(out[10].key, "reserved_bytes_by_private_pools.18446744073709551615_"
					    "18446744073709551615.large_pool.allocated");
}

/* A 2.14 DeviceCachingAllocator at DCA whose DeviceStats' reserved_bytes.all.current is 1000
   and whose reserved_bytes_by_private_pools holds pool (0, 2) in slot 1 and (0, 1) in slot 5 of
   8 (+ 2 overflow slots), its StatArrays at ENTRIES. */
#define DCA (BASE + 0x1000)
#define ENTRIES (BASE + 0x3000)
enum { ENTRY = 120 };

static uint64_t pool_map(void)
{
	const mp_layout *l = builtin("torch-2.14-cuda13");

	return DCA + (uint64_t)l->off[MP_L_DCA_STATS] + (uint64_t)l->off[MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS];
}

static void put_pool(int slot, uint64_t id1, int64_t current, int64_t peak)
{
	uint64_t e = ENTRIES + (uint64_t)slot * ENTRY;
	int64_t stat[4] = { current, peak, peak, peak - current };

	put8(e, 0);
	put64(e + 8, 0);
	put64(e + 16, id1);
	put(e + 24, stat, sizeof stat);          /* all */
	put(e + 24 + 2 * 32, stat, sizeof stat); /* large_pool */
}

static void build_pools(void)
{
	const mp_layout *l = builtin("torch-2.14-cuda13");
	uint64_t map = pool_map();
	float load = 0.5f;

	memset(mem, 0, sizeof mem);
	put64(DCA + (uint64_t)l->off[MP_L_DCA_STATS] + (uint64_t)l->off[MP_L_DS_RESERVED_BYTES], 1000);
	for (int i = 0; i < 10; i++)
		put8(ENTRIES + (uint64_t)i * ENTRY, 0xff); /* empty */
	put_pool(1, 2, 300, 300);
	put_pool(5, 1, 0, 50); /* a pool that is gone: current 0 */
	put64(map, ENTRIES);
	put64(map + 8, 7); /* slots - 1 */
	put8(map + 17, 2); /* max_lookups */
	put(map + 20, &load, sizeof load);
	put64(map + 24, 2); /* elements */
}

static int64_t stat_of(const mp_walk_device *dev, const char *key)
{
	for (size_t i = 0; i < dev->stats.n; i++)
		if (strcmp(dev->stats.v[i].key, key) == 0)
			return dev->stats.v[i].value;
	return -1;
}

static bool has_pool_keys(const mp_walk_device *dev)
{
	for (size_t i = 0; i < dev->stats.n; i++)
		if (strstr(dev->stats.v[i].key, "by_private_pools") != NULL)
			return true;
	return false;
}

/* wk_stats of the image with LAYOUT: DEV filled, the fixture's warning and partial flag kept. */
static void stats_of(struct fixture *f, const char *layout, mp_walk_device *dev)
{
	walk_open(f, layout);
	memset(dev, 0, sizeof *dev);
	dev->address = DCA;
	CU_ASSERT_EQUAL(wk_stats(&f->wk, dev), MP_OK);
}

static void stats_free(struct fixture *f, mp_walk_device *dev)
{
	free(dev->stats.v);
	free(dev->stat_keys);
	walk_close(f);
}

static void test_pool_stats(void)
{
	struct fixture f;
	mp_walk_device dev;

	build_pools();
	stats_of(&f, "torch-2.14-cuda13", &dev);
	/* 123 fixed keys of 2.14 and 12 per pool, in plain byte order, as memory_stats() has them. */
	CU_ASSERT_EQUAL(dev.stats.n, 123 + 24);
	for (size_t i = 1; i < dev.stats.n; i++)
		CU_ASSERT(strcmp(dev.stats.v[i - 1].key, dev.stats.v[i].key) < 0);
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes.all.current"), 1000);
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes_by_private_pools.0_2.all.current"), 300);
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes_by_private_pools.0_2.large_pool.peak"), 300);
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes_by_private_pools.0_2.small_pool.peak"), 0);
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes_by_private_pools.0_1.all.current"), 0);
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes_by_private_pools.0_1.all.freed"), 50);
	CU_ASSERT_FALSE(f.wk.w->partial);
	CU_ASSERT_EQUAL(f.diag.nwarn, 0);
	stats_free(&f, &dev);

	/* 2.6 has no such map: its 122 keys only. */
	stats_of(&f, "torch-2.6", &dev);
	CU_ASSERT_EQUAL(dev.stats.n, 122);
	CU_ASSERT_FALSE(has_pool_keys(&dev));
	stats_free(&f, &dev);
}

/* Each damage: a warning naming the map, the walk partial, the fixed keys kept, no pool key. */
static void damaged_pools(const char *what)
{
	struct fixture f;
	mp_walk_device dev;

	stats_of(&f, "torch-2.14-cuda13", &dev);
	CU_ASSERT_EQUAL(dev.stats.n, 123);
	CU_ASSERT_FALSE(has_pool_keys(&dev));
	CU_ASSERT_EQUAL(stat_of(&dev, "reserved_bytes.all.current"), 1000);
	CU_ASSERT(f.wk.w->partial);
	CU_ASSERT_EQUAL(f.diag.nwarn, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.warning, "reserved_bytes_by_private_pools at 0x"));
	if (f.diag.nwarn != 1 || f.wk.w->partial != true)
		fprintf(stderr, "\n%s: warning '%s'\n", what, f.warning);
	stats_free(&f, &dev);
}

static void test_pool_stats_damaged(void)
{
	uint64_t map = pool_map();

	build_pools();
	put64(map + 24, 3); /* more elements than live entries */
	damaged_pools("count");
	build_pools();
	put64(ENTRIES + 5 * ENTRY + 16, 2); /* the same id twice */
	damaged_pools("repeated id");
	build_pools();
	put64(ENTRIES + 1 * ENTRY + 24, (uint64_t)-5); /* a negative current */
	damaged_pools("negative");
	build_pools();
	put64(map + 24, 1u << 20); /* far more pools than allowed: refused before any allocation */
	put64(map + 8, (1u << 21) - 1);
	damaged_pools("limit");
	build_pools();
	put64(map, BASE + SIZE + 4096); /* entries outside the target */
	damaged_pools("unmapped");
	build_pools();
	put64(map + 8, 6); /* slots not a power of two */
	damaged_pools("slots");
}

/* ---- allocator_settings */

#define CFG_PTR (BASE + 0x5000) /* CUDAAllocatorConfig::instance()::s_instance */
#define CFG (BASE + 0x5100)
#define AAC (BASE + 0x5200)
#define DIVISIONS (BASE + 0x5400)
#define TEXT (BASE + 0x5500)
#define GUARD (BASE + 0x5600)

static const char conf[] = "max_split_size_mb:64";

/* A std::vector of the 16 divisions 1..16 at ADDR and the settings string at STR. */
static void put_divisions_and_text(uint64_t vec, uint64_t str)
{
	for (uint64_t i = 0; i < 16; i++)
		put64(DIVISIONS + 8 * i, i + 1);
	put64(vec, DIVISIONS);
	put64(vec + 8, DIVISIONS + 128);
	put64(vec + 16, DIVISIONS + 128);
	put(TEXT, conf, sizeof conf - 1);
	put64(str, TEXT);
	put64(str + 8, sizeof conf - 1);
}

/* 2.14: AcceleratorAllocatorConfig (152 bytes) in libc10, the rest in a 40-byte CUDAAllocatorConfig. */
static void build_settings_214(mp_c10 *c10)
{
	double gc = 0.6;

	memset(mem, 0, sizeof mem);
	put64(CFG_PTR, CFG);
	put64(CFG + 0, 4);  /* m_pinned_num_register_threads */
	put8(CFG + 20, 1);  /* m_release_lock_on_cudamalloc */
	put8(CFG + 21, 0);  /* m_pinned_use_cuda_host_register */
	put8(CFG + 22, 1);  /* m_graph_capture_record_stream_reuse */
	put64(AAC + 8, UINT64_MAX); /* max_split_size_: no limit */
	put(AAC + 48, &gc, sizeof gc);
	put8(AAC + 56, 1);  /* use_expandable_segments_ */
	put64(AAC + 64, 16u << 20);
	put64(AAC + 72, UINT64_MAX);
	put_divisions_and_text(AAC + 24, AAC + 120);
	put8(GUARD, 1);
	memset(c10, 0, sizeof *c10);
	c10->config_instance_addr = CFG_PTR;
	c10->accel_config_addr = AAC;
	c10->accel_config_size = 152;
	c10->accel_config_guard_addr = GUARD;
	snprintf(c10->libc10_path, sizeof c10->libc10_path, "/x/libc10.so");
}

/* wk_settings with LAYOUT and C10: the fixture holds the result. */
static void settings_of(struct fixture *f, const char *layout, const mp_c10 *c10)
{
	walk_open(f, layout);
	CU_ASSERT_EQUAL(wk_settings(&f->wk, c10), MP_OK);
}

static void test_settings_214(void)
{
	struct fixture f;
	mp_c10 c10;
	const mp_walk_settings *s;

	build_settings_214(&c10);
	settings_of(&f, "torch-2.14-cuda13", &c10);
	s = &f.wk.w->settings;
	CU_ASSERT_FATAL(s->present);
	CU_ASSERT_STRING_EQUAL(s->last_settings, conf);
	CU_ASSERT_EQUAL(s->max_split_size, -1);
	CU_ASSERT_DOUBLE_EQUAL(s->garbage_collection_threshold, 0.6, 0.0);
	CU_ASSERT(s->expandable_segments);
	CU_ASSERT_EQUAL(s->pinned_num_register_threads, 4);
	CU_ASSERT(s->release_lock_on_cudamalloc);
	CU_ASSERT_FALSE(s->pinned_use_cuda_host_register);
	CU_ASSERT(s->has_graph_capture_record_stream_reuse && s->graph_capture_record_stream_reuse);
	CU_ASSERT(s->has_pinned_limits);
	CU_ASSERT_EQUAL(s->max_round_threshold, 16 << 20);
	CU_ASSERT_EQUAL(s->max_cached_size, -1);
	CU_ASSERT_EQUAL(s->roundup_power2_divisions[0], 1);
	CU_ASSERT_EQUAL(s->roundup_power2_divisions[15], 16);
	CU_ASSERT_EQUAL(f.diag.nwarn, 0);
	walk_close(&f);
}

/* What stops 2.14's settings is one warning line, and no allocator_settings (PARTIAL: as damage). */
static void settings_refused(const mp_c10 *c10, const char *layout, const char *warning, bool partial)
{
	struct fixture f;

	settings_of(&f, layout, c10);
	CU_ASSERT_FALSE(f.wk.w->settings.present);
	CU_ASSERT_PTR_NULL(f.wk.w->settings.last_settings);
	CU_ASSERT_EQUAL(f.diag.nwarn, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.warning, warning));
	CU_ASSERT_EQUAL(f.wk.w->partial, partial);
	if (strstr(f.warning, warning) == NULL)
		fprintf(stderr, "\nwanted '%s', got '%s'\n", warning, f.warning);
	walk_close(&f);
}

static void test_settings_214_refused(void)
{
	mp_c10 c10;

	build_settings_214(&c10);
	c10.accel_config_addr = 0;
	snprintf(c10.accel_config_why, sizeof c10.accel_config_why, "'/x/libc10.so' has no .symtab (stripped)");
	settings_refused(&c10, "torch-2.14-cuda13",
			 "AcceleratorAllocatorConfig not found: '/x/libc10.so' has no .symtab (stripped); "
			 "allocator_settings is left out", false);
	build_settings_214(&c10);
	c10.accel_config_size = 160;
	settings_refused(&c10, "torch-2.14-cuda13", "is 160 bytes, layout torch-2.14-cuda13 says 152", false);
	build_settings_214(&c10);
	put8(GUARD, 0);
	settings_refused(&c10, "torch-2.14-cuda13", "AcceleratorAllocatorConfig was never created", false);
	build_settings_214(&c10);
	put64(CFG_PTR, 0);
	settings_refused(&c10, "torch-2.14-cuda13", "CUDAAllocatorConfig was never created", false);
	/* Damage: 15 divisions, a string past the target. */
	build_settings_214(&c10);
	put64(AAC + 24 + 8, DIVISIONS + 120);
	settings_refused(&c10, "torch-2.14-cuda13", "unreadable or damaged", true);
	build_settings_214(&c10);
	put64(AAC + 120, BASE + SIZE);
	settings_refused(&c10, "torch-2.14-cuda13", "unreadable or damaged", true);
}

/* 2.6: every setting in a 136-byte CUDAAllocatorConfig; libc10 is not looked at. */
static void test_settings_26(void)
{
	struct fixture f;
	mp_c10 c10 = { .config_instance_addr = CFG_PTR };
	const mp_walk_settings *s;
	double gc = 0.25;

	memset(mem, 0, sizeof mem);
	put64(CFG_PTR, CFG);
	put64(CFG + 0, 64u << 20);
	put(CFG + 40, &gc, sizeof gc);
	put64(CFG + 48, 1);
	put8(CFG + 57, 1);
	put_divisions_and_text(CFG + 16, CFG + 64);
	snprintf(c10.accel_config_why, sizeof c10.accel_config_why, "'/x/libc10.so.2.6' has no .symtab (stripped)");
	settings_of(&f, "torch-2.6", &c10);
	s = &f.wk.w->settings;
	CU_ASSERT_FATAL(s->present);
	CU_ASSERT_STRING_EQUAL(s->last_settings, conf);
	CU_ASSERT_EQUAL(s->max_split_size, 64 << 20);
	CU_ASSERT_DOUBLE_EQUAL(s->garbage_collection_threshold, 0.25, 0.0);
	CU_ASSERT_FALSE(s->expandable_segments);
	CU_ASSERT(s->release_lock_on_cudamalloc);
	CU_ASSERT_FALSE(s->has_graph_capture_record_stream_reuse);
	CU_ASSERT_FALSE(s->has_pinned_limits);
	CU_ASSERT_EQUAL(s->roundup_power2_divisions[9], 10);
	CU_ASSERT_EQUAL(f.diag.nwarn, 0);
	walk_close(&f);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "private-pool keys", test_pool_keys },
		{ "private-pool stats merged in order", test_pool_stats },
		{ "damaged private-pool map: warning, no keys", test_pool_stats_damaged },
		{ "2.14 settings from both configs", test_settings_214 },
		{ "2.14 settings refused in one line", test_settings_214_refused },
		{ "2.6 settings from CUDAAllocatorConfig", test_settings_26 },
	};

	return UNIT_RUN("walk", tests, NULL, NULL);
}

/* test_target.c - the target interface over a read callback: page cache, read-ahead, negative
   entries, partial pages, strings, limits, mappings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_target.h"
#include "target_int.h" /* TARGET_CACHE_PAGES: the test fills the cache past it */
#include "unit_main.h"

/* A fake memory: [BASE, BASE+SIZE) readable, holding (addr & 0xff); a NUL at NUL_AT. */
#define BASE 0x10000ull
#define SIZE 0x5800ull /* ends mid-page: the last page is partly readable */
#define NUL_AT (BASE + 0x3100)

static unsigned calls;

static size_t fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	unsigned char *b = buf;
	size_t n = 0;

	(void)ctx;
	calls++;
	while (n < len && addr + n >= BASE && addr + n < BASE + SIZE) {
		b[n] = addr + n == NUL_AT ? 0 : (unsigned char)((addr + n) | 1);
		n++;
	}
	return n;
}

static mp_target *open_fake(void)
{
	mp_mapping maps[2] = {
		{ .start = 0x20000, .end = 0x21000, .file_offset = 0x3000, .path = "/lib/b.so" },
		{ .start = 0x10000, .end = 0x12000, .file_offset = 0, .path = "/lib/a.so", .local_path = "/x/a.so" },
	};
	mp_diag d = { 0 };
	mp_target *t;

	CU_ASSERT_FATAL(mp_target_open_callback("fake", fake_read, NULL, maps, 2, &t, &d) == MP_OK);
	return t;
}

static void test_reads_and_cache(void)
{
	mp_target *t = open_fake();
	mp_diag d = { 0 };
	unsigned char buf[6000];
	uint64_t u64;
	uint32_t u32;
	uint8_t u8;

	calls = 0;
	CU_ASSERT(mp_target_read(t, BASE + 0xff0, buf, sizeof buf, &d) == MP_OK); /* 3 pages */
	for (size_t i = 0; i < sizeof buf; i++)
		CU_ASSERT_EQUAL_FATAL(buf[i], (unsigned char)((BASE + 0xff0 + i) | 1));
	CU_ASSERT_EQUAL(calls, 2); /* the first page, then the next two at once (read-ahead) */
	CU_ASSERT(mp_target_read(t, BASE + 0x1000, buf, 100, &d) == MP_OK);
	CU_ASSERT_EQUAL(calls, 2); /* cached */
	CU_ASSERT(mp_target_read_u64(t, BASE + 8, &u64, &d) == MP_OK);
	CU_ASSERT_EQUAL(u64, 0x0f0f0d0d0b0b0909ull);
	CU_ASSERT(mp_target_read_u32(t, BASE + 8, &u32, &d) == MP_OK);
	CU_ASSERT_EQUAL(u32, 0x0b0b0909u);
	CU_ASSERT(mp_target_read_u8(t, BASE + 8, &u8, &d) == MP_OK);
	CU_ASSERT_EQUAL(u8, 0x09);
	mp_target_flush(t);
	CU_ASSERT(mp_target_read_u8(t, BASE + 8, &u8, &d) == MP_OK);
	CU_ASSERT_EQUAL(calls, 3); /* read again after the flush */
	CU_ASSERT(mp_target_read(t, 0, buf, 0, &d) == MP_OK);
	mp_target_close(t);
}

static void test_unreadable(void)
{
	mp_target *t = open_fake();
	mp_diag d = { 0 };
	unsigned char buf[64];
	unsigned before;

	calls = 0;
	CU_ASSERT(mp_target_read(t, 0x1000, buf, 8, &d) == MP_E_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(d.msg, "fake: address 0x1000 is unreadable");
	before = calls;
	mp_diag_reset(&d);
	CU_ASSERT(mp_target_read(t, 0x1008, buf, 8, &d) == MP_E_NOTFOUND);
	CU_ASSERT_EQUAL(calls, before); /* negative entry */
	CU_ASSERT_FALSE(mp_target_readable(t, 0x1000, 1));
	/* The last page is readable up to BASE + SIZE only; the error names the first bad byte. */
	CU_ASSERT(mp_target_readable(t, BASE + SIZE - 16, 16));
	CU_ASSERT_FALSE(mp_target_readable(t, BASE + SIZE - 16, 17));
	mp_diag_reset(&d);
	CU_ASSERT(mp_target_read(t, BASE + SIZE - 8, buf, 16, &d) == MP_E_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(d.msg, "fake: address 0x15800 is unreadable");
	/* Before BASE, and ending past the top of the address space. */
	mp_diag_reset(&d);
	CU_ASSERT(mp_target_read(t, BASE - 4, buf, 8, &d) == MP_E_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(d.msg, "fake: address 0xfffc is unreadable");
	CU_ASSERT(mp_target_read(t, UINT64_MAX - 3, buf, 8, &d) == MP_E_NOTFOUND);
	CU_ASSERT_FALSE(mp_target_readable(t, UINT64_MAX - 3, 8));
	CU_ASSERT_FALSE(mp_target_readable(t, UINT64_MAX - 3, 2));
	mp_target_close(t);
}

static void test_big_read(void)
{
	mp_target *t = open_fake();
	mp_diag d = { 0 };
	unsigned char *buf = malloc(SIZE);

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT(mp_target_read(t, BASE, buf, SIZE, &d) == MP_OK);
	CU_ASSERT_EQUAL(buf[SIZE - 1], (unsigned char)((BASE + SIZE - 1) | 1));
	CU_ASSERT(mp_target_read(t, BASE + 1, buf, SIZE, &d) == MP_E_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(d.msg, "fake: address 0x15800 is unreadable");
	free(buf);
	mp_target_close(t);
}

static void test_cstr(void)
{
	mp_target *t = open_fake();
	mp_diag d = { 0 };
	char *s;
	size_t n;

	/* A string across two pages up to NUL_AT. */
	CU_ASSERT(mp_target_read_cstr(t, NUL_AT - 0x1200, 1 << 16, &s, &n, &d) == MP_OK);
	CU_ASSERT_EQUAL(n, 0x1200);
	CU_ASSERT_EQUAL(strlen(s), 0x1200);
	free(s);
	CU_ASSERT(mp_target_read_cstr(t, NUL_AT, 0, &s, &n, &d) == MP_OK);
	CU_ASSERT_EQUAL(n, 0);
	free(s);
	CU_ASSERT(mp_target_read_cstr(t, NUL_AT - 10, 10, &s, &n, &d) == MP_OK);
	free(s);
	CU_ASSERT(mp_target_read_cstr(t, NUL_AT - 10, 9, &s, &n, &d) == MP_E_LIMIT);
	CU_ASSERT_PTR_NULL(s);
	/* No NUL before the end of what is readable. */
	mp_diag_reset(&d);
	CU_ASSERT(mp_target_read_cstr(t, NUL_AT + 1, 1 << 20, &s, &n, &d) == MP_E_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(d.msg, "fake: address 0x15800 is unreadable");
	CU_ASSERT(mp_target_read_cstr(t, 0x1000, 100, &s, &n, &d) == MP_E_NOTFOUND);
	mp_target_close(t);
}

static void test_mappings(void)
{
	mp_target *t = open_fake();
	const mp_mapping *m;
	const mp_target_info *info = mp_target_get_info(t);
	size_t n = mp_target_mappings(t, &m);

	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(m[0].start, 0x10000); /* sorted */
	CU_ASSERT_STRING_EQUAL(m[0].path, "/lib/a.so");
	CU_ASSERT_STRING_EQUAL(m[0].local_path, "/x/a.so");
	CU_ASSERT_EQUAL(m[1].file_offset, 0x3000);
	CU_ASSERT_PTR_NULL(m[1].local_path);
	CU_ASSERT_FALSE(mp_target_mapping_mismatch(t, &m[0]));
	CU_ASSERT_EQUAL(info->kind, MP_TARGET_CALLBACK);
	CU_ASSERT_STRING_EQUAL(info->origin, "fake");
	CU_ASSERT_EQUAL(info->pid, 0);
	CU_ASSERT_PTR_NULL(info->exe);
	mp_target_close(t);
	mp_target_close(NULL);
}

static void test_no_read_fn(void)
{
	mp_target *t;
	mp_diag d = { 0 };

	CU_ASSERT(mp_target_open_callback("none", NULL, NULL, NULL, 0, &t, &d) == MP_E_USAGE);
	CU_ASSERT_PTR_NULL(t);
}

static size_t big_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const unsigned char *mem = ctx;
	size_t size = (TARGET_CACHE_PAGES + 64) * 4096;

	calls++;
	if (addr >= size)
		return 0;
	if (len > size - addr)
		len = (size_t)(size - addr);
	memcpy(buf, mem + addr, len);
	return len;
}

/* More pages than the cache holds: evicted pages are read again, and stay right. */
static void test_eviction_reads(void)
{
	static unsigned char mem[(TARGET_CACHE_PAGES + 64) * 4096];
	mp_target *t;
	mp_diag d = { 0 };
	uint8_t b;

	for (size_t i = 0; i < sizeof mem; i++)
		mem[i] = (unsigned char)(i / 4096 * 13);
	CU_ASSERT_FATAL(mp_target_open_callback("big", big_read, mem, NULL, 0, &t, &d) == MP_OK);
	for (int round = 0; round < 2; round++)
		for (size_t p = 0; p < sizeof mem / 4096; p++) {
			CU_ASSERT_FATAL(mp_target_read_u8(t, p * 4096 + 5, &b, &d) == MP_OK);
			CU_ASSERT_EQUAL_FATAL(b, (uint8_t)(p * 13));
		}
	calls = 0;
	CU_ASSERT(mp_target_read_u8(t, (sizeof mem / 4096 - 1) * 4096, &b, &d) == MP_OK);
	CU_ASSERT_EQUAL(calls, 0); /* the most recent page is still there */
	CU_ASSERT(mp_target_read_u8(t, 0, &b, &d) == MP_OK);
	CU_ASSERT_EQUAL(calls, 1); /* the first one was evicted */
	mp_target_close(t);
}

/* A run of page-after-page misses reads ever more pages at once; scattered misses one page each. */
static void test_readahead(void)
{
	static unsigned char mem[(TARGET_CACHE_PAGES + 64) * 4096];
	const size_t pages = sizeof mem / 4096;
	mp_target *t;
	mp_diag d = { 0 };
	uint8_t b;

	for (size_t i = 0; i < sizeof mem; i++)
		mem[i] = (unsigned char)(i / 4096 * 7);
	CU_ASSERT_FATAL(mp_target_open_callback("big", big_read, mem, NULL, 0, &t, &d) == MP_OK);
	calls = 0;
	for (size_t p = 0; p < 256; p++) { /* 1, 2, 4, ... 64 pages a read, then 64 at a time */
		CU_ASSERT_FATAL(mp_target_read_u8(t, p * 4096 + 9, &b, &d) == MP_OK);
		CU_ASSERT_EQUAL_FATAL(b, (uint8_t)(p * 7));
	}
	CU_ASSERT_EQUAL(calls, 7 + (256 - 127 + 63) / 64);
	/* Every other page still counts as a run. */
	calls = 0;
	for (size_t p = 400; p < 528; p += 2)
		CU_ASSERT_FATAL(mp_target_read_u8(t, p * 4096, &b, &d) == MP_OK && b == (uint8_t)(p * 7));
	CU_ASSERT(calls <= 8);
	/* Backwards, far apart: no run, one page a miss. */
	calls = 0;
	for (size_t p = pages - 1; p >= 600 && p < pages; p -= 37)
		CU_ASSERT_FATAL(mp_target_read_u8(t, p * 4096, &b, &d) == MP_OK && b == (uint8_t)(p * 7));
	CU_ASSERT_EQUAL(calls, (pages - 1 - 600) / 37 + 1);
	mp_target_close(t);
}

/* A source that refuses a whole range when any of it is unreadable (as a debugger may): pages
   [0, 8) are readable. */
static size_t all_or_nothing(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	calls++;
	if (addr + len > 8 * 4096)
		return 0;
	memset(buf, 0x5a, len);
	return len;
}

/* Read-ahead that runs into unreadable memory costs nothing that a page-by-page read can see:
   the readable pages read, the next one does not. */
static void test_readahead_edge(void)
{
	mp_target *t;
	mp_diag d = { 0 };
	uint8_t b;

	CU_ASSERT_FATAL(mp_target_open_callback("edge", all_or_nothing, NULL, NULL, 0, &t, &d) == MP_OK);
	for (uint64_t p = 0; p < 8; p++) {
		CU_ASSERT(mp_target_read_u8(t, p * 4096 + 4095, &b, &d) == MP_OK);
		CU_ASSERT_EQUAL(b, 0x5a);
	}
	CU_ASSERT(mp_target_read_u8(t, 8 * 4096, &b, &d) == MP_E_NOTFOUND);
	CU_ASSERT(mp_target_readable(t, 7 * 4096, 4096));
	mp_target_close(t);
	/* The fake memory ends mid-page: after a run up to it, that page is as readable as ever. */
	t = open_fake();
	for (uint64_t a = BASE; a < BASE + SIZE; a += 4096)
		CU_ASSERT(mp_target_read_u8(t, a, &b, &d) == MP_OK);
	CU_ASSERT(mp_target_readable(t, BASE + SIZE - 16, 16));
	CU_ASSERT_FALSE(mp_target_readable(t, BASE + SIZE - 16, 17));
	mp_target_close(t);
}

static const struct unit_test tests[] = {
	{ "reads and cache", test_reads_and_cache },
	{ "unreadable", test_unreadable },
	{ "big read", test_big_read },
	{ "cstr", test_cstr },
	{ "mappings", test_mappings },
	{ "no read function", test_no_read_fn },
	{ "eviction", test_eviction_reads },
	{ "read-ahead", test_readahead },
	{ "read-ahead at the edge", test_readahead_edge },
};

int main(void)
{
	return UNIT_RUN("target", tests, NULL, NULL);
}

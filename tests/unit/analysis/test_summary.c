/* test_summary.c - memory_summary against PyTorch's own text: units, rounding, negatives, header keys, missing keys. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_summary.h"
#include "unit_main.h"

#define MAX_OVERRIDES 6

struct line_case {
	mp_memstat set[MAX_OVERRIDES];
	size_t nset;
	bool abbreviated;
	int device;
	int line; /* 0-based line of the summary that the case checks */
	const char *expect;
};

/* Expected texts: memory_summary() of PyTorch 2.6.0 and 2.14.1 (Debian's
   python3-torch torch/cuda/memory.py, run by tests/oracle/summary_oracle.py
   under python3 3.11, both versions printing the same) with memory_stats()
   returning every key of 2.6's memory_stats() as 0, then the overrides. */
static const struct line_case line_cases[] = {
	/* B below 768 KiB, KiB at it; past 2**53 ints round as PyTorch's int / int does */
	{ { { "allocated_bytes.all.current", INT64_C(786431) },
	    { "allocated_bytes.all.peak", INT64_C(786432) },
	    { "allocated_bytes.all.allocated", INT64_C(864691128455135231) },
	    { "allocated_bytes.all.freed", INT64_MAX } },
	  4, true, 0, 7,
	  "| Allocated memory      | 786431 B   |    768 KiB |    767 PiB |   8191 PiB |" },
	/* just below the GiB/TiB/PiB steps */
	{ { { "reserved_bytes.all.current", INT64_C(844424930131967) },
	    { "reserved_bytes.all.peak", INT64_C(844424929083392) },
	    { "reserved_bytes.all.allocated", INT64_C(864691128455134720) },
	    { "reserved_bytes.all.freed", INT64_C(864691128455134207) } },
	  4, true, 0, 13,
	  "| GPU reserved memory   | 786431 GiB | 786431 GiB | 786431 TiB | 786431 TiB |" },
	/* negative sizes never scale */
	{ { { "active_bytes.all.current", INT64_C(-1) },
	    { "active_bytes.all.peak", INT64_MIN },
	    { "active_bytes.all.allocated", INT64_C(-5242880) },
	    { "active_bytes.all.freed", INT64_C(786432) } },
	  4, true, 0, 9,
	  "| Active memory         |     -1 B   | -9223372036854775808 B   | -5242880 B   |    768 KiB |" },
	/* sub-rows take the all row's unit; floor division of negatives */
	{ { { "allocated_bytes.all.current", INT64_C(1073741824) },
	    { "allocated_bytes.large_pool.current", INT64_C(-1025) },
	    { "allocated_bytes.small_pool.current", INT64_C(1099511627776) },
	    { "allocated_bytes.all.peak", INT64_C(100) },
	    { "allocated_bytes.large_pool.peak", INT64_C(1099511627776) } },
	  5, false, 0, 8,
	  "|       from large pool |     -1 MiB | 1099511627776 B   |      0 B   |      0 B   |" },
	/* the same, small pool */
	{ { { "allocated_bytes.all.current", INT64_C(1073741824) },
	    { "allocated_bytes.large_pool.current", INT64_C(-1025) },
	    { "allocated_bytes.small_pool.current", INT64_C(1099511627776) },
	    { "allocated_bytes.all.peak", INT64_C(100) },
	    { "allocated_bytes.large_pool.peak", INT64_C(1099511627776) } },
	  5, false, 0, 9,
	  "|       from small pool | 1048576 MiB |      0 B   |      0 B   |      0 B   |" },
	/* count units */
	{ { { "allocation.all.current", INT64_C(749999) },
	    { "allocation.all.peak", INT64_C(750000) },
	    { "allocation.all.allocated", INT64_C(750000000) },
	    { "allocation.all.freed", INT64_MAX } },
	  4, true, 0, 17,
	  "| Allocations           |  749999    |     750 K  |     750 M  | 9223372036854 M  |" },
	/* negative counts */
	{ { { "segment.all.current", INT64_C(-1) },
	    { "segment.all.peak", INT64_C(-1001) },
	    { "segment.all.allocated", INT64_C(749999999) },
	    { "segment.all.freed", INT64_MIN } },
	  4, true, 0, 21,
	  "| GPU reserved segments |      -1    |   -1001    |  749999 K  | -9223372036854775808    |" },
	/* oversize rows scale by their own values */
	{ { { "oversize_allocations.current", INT64_C(1) },
	    { "oversize_allocations.peak", INT64_C(750000) },
	    { "oversize_allocations.allocated", INT64_C(4611686018427387904) },
	    { "oversize_allocations.freed", INT64_C(-750000) } },
	  4, true, 0, 25,
	  "| Oversize allocations  |       1    |     750 K  | 4611686018427 M  | -750000    |" },
	/* device ID line */
	{ { { "num_ooms", INT64_C(123456789012345) },
	    { "num_alloc_retries", INT64_C(-7) } },
	  2, true, 2147483647, 1,
	  "|                  PyTorch CUDA memory summary, device ID 2147483647        |" },
	/* OOM line */
	{ { { "num_ooms", INT64_C(123456789012345) },
	    { "num_alloc_retries", INT64_C(-7) } },
	  2, true, 2147483647, 3,
	  "|            CUDA OOMs: 123456789012345 |        cudaMalloc retries: -7        |" },
	/* keys '_' and 'device' replace the padding and the device ID */
	{ { { "_", INT64_C(42) },
	    { "device", INT64_C(-3) },
	    { "num_ooms", INT64_C(1) } },
	  3, true, 5, 1,
	  "|               42 PyTorch CUDA memory summary, device ID -3                |" },
	/* the same, OOM line */
	{ { { "_", INT64_C(42) },
	    { "device", INT64_C(-3) },
	    { "num_ooms", INT64_C(1) } },
	  3, true, 5, 3,
	  "|         42 CUDA OOMs: 1            |     42 cudaMalloc retries: 0         |" },
	/* a negative device */
	{ { { NULL, 0 } },
	  0, true, -1, 1,
	  "|                  PyTorch CUDA memory summary, device ID -1                |" },
};

static const char zero_full[] =
	"|===========================================================================|\n"
	"|                  PyTorch CUDA memory summary, device ID 0                 |\n"
	"|---------------------------------------------------------------------------|\n"
	"|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n"
	"|===========================================================================|\n"
	"|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocated memory      |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active memory         |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Requested memory      |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| GPU reserved memory   |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable memory |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocations           |       0    |       0    |       0    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active allocs         |       0    |       0    |       0    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| GPU reserved segments |       0    |       0    |       0    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable allocs |       0    |       0    |       0    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize allocations  |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize GPU segments |       0    |       0    |       0    |       0    |\n"
	"|===========================================================================|\n";

static const char *const pooled[] = { "active",          "active_bytes",   "allocated_bytes",
				      "allocation",      "inactive_split", "inactive_split_bytes",
				      "requested_bytes", "reserved_bytes", "segment" };
static const char *const pools[] = { "all", "large_pool", "small_pool" };
static const char *const fields[] = { "allocated", "current", "freed", "peak" };
static const char *const scalars[] = { "max_split_size", "num_alloc_retries", "num_device_alloc",
				       "num_device_free", "num_ooms", "num_sync_all_streams" };
static const char *const single[] = { "oversize_allocations", "oversize_segments" };

/* Every key of 2.6's memory_stats() (sortedness is not needed), values 0. */
struct all_stats {
	char keys[160][48];
	mp_memstat v[160];
	mp_memstats stats;
};

static void all_stats_init(struct all_stats *a, int device)
{
	size_t n = 0;

	for (size_t m = 0; m < sizeof pooled / sizeof pooled[0]; m++)
		for (size_t p = 0; p < 3; p++)
			for (size_t f = 0; f < 4; f++)
				snprintf(a->keys[n++], sizeof a->keys[0], "%s.%s.%s", pooled[m], pools[p],
					 fields[f]);
	for (size_t s = 0; s < sizeof scalars / sizeof scalars[0]; s++)
		snprintf(a->keys[n++], sizeof a->keys[0], "%s", scalars[s]);
	for (size_t m = 0; m < 2; m++)
		for (size_t f = 0; f < 4; f++)
			snprintf(a->keys[n++], sizeof a->keys[0], "%s.%s", single[m], fields[f]);
	for (size_t i = 0; i < n; i++)
		a->v[i] = (mp_memstat){ a->keys[i], 0 };
	a->stats = (mp_memstats){ device, a->v, n };
}

/* Set KEY to VALUE, adding the key when absent. */
static void all_stats_set(struct all_stats *a, const char *key, int64_t value)
{
	for (size_t i = 0; i < a->stats.n; i++)
		if (strcmp(a->v[i].key, key) == 0) {
			a->v[i].value = value;
			return;
		}
	CU_ASSERT_FATAL(a->stats.n < sizeof a->v / sizeof a->v[0]);
	snprintf(a->keys[a->stats.n], sizeof a->keys[0], "%s", key);
	a->v[a->stats.n] = (mp_memstat){ a->keys[a->stats.n], value };
	a->stats.n++;
}

/* Remove KEY. */
static void all_stats_drop(struct all_stats *a, const char *key)
{
	for (size_t i = 0; i < a->stats.n; i++)
		if (strcmp(a->v[i].key, key) == 0) {
			a->stats.n--;
			memcpy(a->keys[i], a->keys[a->stats.n], sizeof a->keys[i]);
			a->v[i] = (mp_memstat){ a->keys[i], a->v[a->stats.n].value };
			return;
		}
	CU_FAIL_FATAL("no such key to drop");
}

static char *summary(const mp_memstats *stats, bool abbreviated)
{
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_memory_summary(stats, abbreviated, &out, &diag), MP_OK);
	CU_ASSERT_STRING_EQUAL(diag.msg, "");
	return mp_out_take(&out, NULL);
}

static void test_zero_full(void)
{
	struct all_stats a;

	all_stats_init(&a, 0);
	unit_check_text(summary(&a.stats, false), zero_full);
}

/* The abbreviated table is the full one without the pool rows. */
static void test_abbreviated_is_full_without_pools(void)
{
	struct all_stats a;
	char *full, *abbr, *keep = NULL, *line, *save = NULL;
	size_t k = 0;

	all_stats_init(&a, 1);
	for (size_t i = 0; i < a.stats.n; i++)
		a.v[i].value = (int64_t)(i * 7919u * 104729u);
	full = summary(&a.stats, false);
	abbr = summary(&a.stats, true);
	CU_ASSERT_FATAL(full != NULL && abbr != NULL);
	keep = calloc(strlen(full) + 1, 1);
	CU_ASSERT_FATAL(keep != NULL);
	for (line = strtok_r(full, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "from large pool") == NULL && strstr(line, "from small pool") == NULL) {
			k += (size_t)sprintf(keep + k, "%s\n", line);
		}
	unit_check_text(abbr, keep);
	free(keep);
	free(full);
}

static void test_lines(void)
{
	for (size_t c = 0; c < sizeof line_cases / sizeof line_cases[0]; c++) {
		const struct line_case *lc = &line_cases[c];
		struct all_stats a;
		char *text, *line, *end;

		all_stats_init(&a, lc->device);
		for (size_t i = 0; i < lc->nset; i++)
			all_stats_set(&a, lc->set[i].key, lc->set[i].value);
		text = summary(&a.stats, lc->abbreviated);
		CU_ASSERT_FATAL(text != NULL);
		line = text;
		for (int i = 0; i < lc->line && line != NULL; i++) {
			line = strchr(line, '\n');
			line = line != NULL ? line + 1 : NULL;
		}
		CU_ASSERT_FATAL(line != NULL);
		end = strchr(line, '\n');
		CU_ASSERT_FATAL(end != NULL);
		*end = '\0';
		CU_ASSERT_STRING_EQUAL(line, lc->expect);
		if (strcmp(line, lc->expect) != 0)
			fprintf(stderr, "\ncase %zu:\n  expected %s\n  got      %s\n", c, lc->expect, line);
		free(text);
	}
}

/* Where PyTorch raises KeyError: the first key it misses, nothing written. */
static void check_missing(struct all_stats *a, bool abbreviated, const char *key)
{
	mp_out out;
	mp_diag diag = { 0 };
	char want[128];

	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_memory_summary(&a->stats, abbreviated, &out, &diag), MP_E_NOTFOUND);
	CU_ASSERT_EQUAL(out.len, 0);
	snprintf(want, sizeof want, "'%s'", key);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, want));
	CU_ASSERT_PTR_NULL(strchr(diag.msg, '\n'));
	if (strstr(diag.msg, want) == NULL)
		fprintf(stderr, "\nwanted %s in: %s\n", want, diag.msg);
	mp_out_free(&out);
}

static void test_missing_keys(void)
{
	struct all_stats a;
	mp_memstats empty = { 0, NULL, 0 };
	mp_out out;
	mp_diag diag = { 0 };

	/* memory_stats() before CUDA is initialised: {} */
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_memory_summary(&empty, false, &out, &diag), MP_E_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "'allocated_bytes.all.current'"));
	CU_ASSERT_EQUAL(out.len, 0);
	mp_out_free(&out);

	/* The table's keys are read before the header's (str.format runs last). */
	all_stats_init(&a, 0);
	all_stats_drop(&a, "num_ooms");
	all_stats_drop(&a, "oversize_segments.peak");
	check_missing(&a, false, "oversize_segments.peak");
	all_stats_set(&a, "oversize_segments.peak", 0);
	check_missing(&a, false, "num_ooms");
	all_stats_set(&a, "num_ooms", 0);
	all_stats_drop(&a, "num_alloc_retries");
	check_missing(&a, true, "num_alloc_retries");

	/* Pool keys matter only to the full table. */
	all_stats_init(&a, 0);
	all_stats_drop(&a, "allocated_bytes.large_pool.freed");
	all_stats_drop(&a, "segment.small_pool.current");
	check_missing(&a, false, "allocated_bytes.large_pool.freed");
	free(summary(&a.stats, true));
}

/* Keys are found by name, in any order; the first of repeated keys wins. */
static void test_order_and_repeats(void)
{
	struct all_stats a, b;
	char *x, *y;

	all_stats_init(&a, 2);
	all_stats_init(&b, 2);
	for (size_t i = 0; i < a.stats.n; i++) {
		a.v[i].value = (int64_t)i << 20;
		b.v[a.stats.n - 1 - i] = a.v[i];
	}
	x = summary(&a.stats, false);
	y = summary(&b.stats, false);
	CU_ASSERT_FATAL(x != NULL);
	unit_check_text(y, x);
	a.v[a.stats.n] = (mp_memstat){ "num_ooms", 99 };
	a.stats.n++;
	unit_check_text(summary(&a.stats, false), x);
	free(x);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "zero_full", test_zero_full },
		{ "abbreviated_is_full_without_pools", test_abbreviated_is_full_without_pools },
		{ "lines", test_lines },
		{ "missing_keys", test_missing_keys },
		{ "order_and_repeats", test_order_and_repeats },
	};

	return UNIT_RUN("summary", tests, NULL, NULL);
}

/* mp_summary.c - torch.cuda.memory_summary(): the table PyTorch builds from memory_stats().
   Layout and number formatting follow allocator-facts §8; where the Python
   code's arithmetic is subtle (int versus float comparisons, floor division of
   negative values) the comments say what is reproduced. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mp_format.h"
#include "mp_summary.h"

#define RULE_EQ "==========================================================================="
#define RULE_DASH "---------------------------------------------------------------------------"

enum fmt_kind { FMT_SIZE, FMT_COUNT };

struct metric {
	const char *key, *title;
	enum fmt_kind kind;
};

/* The nine pooled metrics, in PyTorch's order. */
static const struct metric metrics[] = {
	{ "allocated_bytes", "Allocated memory", FMT_SIZE },
	{ "active_bytes", "Active memory", FMT_SIZE },
	{ "requested_bytes", "Requested memory", FMT_SIZE },
	{ "reserved_bytes", "GPU reserved memory", FMT_SIZE },
	{ "inactive_split_bytes", "Non-releasable memory", FMT_SIZE },
	{ "allocation", "Allocations", FMT_COUNT },
	{ "active", "Active allocs", FMT_COUNT },
	{ "segment", "GPU reserved segments", FMT_COUNT },
	{ "inactive_split", "Non-releasable allocs", FMT_COUNT },
};

/* The two single-Stat metrics, formatted with their own values as reference. */
static const struct metric oversize[] = {
	{ "oversize_allocations", "Oversize allocations", FMT_COUNT },
	{ "oversize_segments", "Oversize GPU segments", FMT_COUNT },
};

static const char *const pools[] = { "all", "large_pool", "small_pool" };
static const char *const pool_titles[] = { NULL, "      from large pool", "      from small pool" };
static const char *const fields[] = { "current", "peak", "allocated", "freed" };

#define NPOOLS 3
#define NFIELDS 4
#define NMETRICS (sizeof metrics / sizeof metrics[0])
#define NOVERSIZE (sizeof oversize / sizeof oversize[0])

/* The value of KEY in STATS (the first, when repeated), or NULL. */
static const int64_t *stat_get(const mp_memstats *stats, const char *key)
{
	for (size_t i = 0; i < stats->n; i++)
		if (stats->v[i].key != NULL && strcmp(stats->v[i].key, key) == 0)
			return &stats->v[i].value;
	return NULL;
}

/* Python's A // B for B > 0 (rounds towards minus infinity). */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return a % b != 0 && a < 0 ? q - 1 : q;
}

/* _format_size(sz, pref_sz): the first comparison is int < int (exact), the
   first division int / int (correctly rounded, mp_format_int_div), later ones
   float / int and float < int (exact in C's doubles, as in Python). */
static void put_size(mp_out *out, int64_t sz, int64_t pref)
{
	static const char *const units[] = { "B  ", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;
	double p = 0.0;

	while (u + 1 < sizeof units / sizeof units[0]) {
		if (u == 0 ? pref < 768 * 1024 : p < 768.0 * 1024.0)
			break;
		p = u == 0 ? mp_format_int_div(pref, 1024) : p / 1024.0;
		sz = floor_div(sz, 1024);
		u++;
	}
	mp_out_printf(out, "%6" PRId64 " %s", sz, units[u]);
}

/* _format_count(cnt, pref_cnt): the same with 1000, 750000 and " KM". */
static void put_count(mp_out *out, int64_t cnt, int64_t pref)
{
	static const char *const units[] = { " ", "K", "M" };
	size_t u = 0;
	double p = 0.0;

	while (u + 1 < sizeof units / sizeof units[0]) {
		if (u == 0 ? pref < 750 * 1000 : p < 750.0 * 1000.0)
			break;
		p = u == 0 ? mp_format_int_div(pref, 1000) : p / 1000.0;
		cnt = floor_div(cnt, 1000);
		u++;
	}
	mp_out_printf(out, "%7" PRId64 " %s ", cnt, units[u]);
}

static void put_value(mp_out *out, enum fmt_kind kind, int64_t v, int64_t pref)
{
	if (kind == FMT_SIZE)
		put_size(out, v, pref);
	else
		put_count(out, v, pref);
}

/* One table row: f" {name:<21} | {f(v0, p0)} | ... | {f(v3, p3)} ". */
static void put_row(mp_out *out, const char *name, enum fmt_kind kind, const int64_t v[NFIELDS],
		    const int64_t pref[NFIELDS])
{
	mp_out_printf(out, "| %-21s ", name);
	for (size_t f = 0; f < NFIELDS; f++) {
		mp_out_puts(out, "| ");
		put_value(out, kind, v[f], pref[f]);
		mp_out_putc(out, ' ');
	}
	mp_out_puts(out, "|\n");
}

/* Format field "{_:W}": W spaces, or a stats key "_" (an int) right-aligned in W. */
static void put_pad(mp_out *out, const int64_t *underscore, int width)
{
	if (underscore != NULL)
		mp_out_printf(out, "%*" PRId64, width, *underscore);
	else
		mp_out_printf(out, "%*s", width, "");
}

/* Look up the NFIELDS values under PREFIX ("metric.pool." or "metric."), in
   PyTorch's order. Fails naming the first key missing. */
static mp_err get_fields(const mp_memstats *stats, const char *prefix, int64_t v[NFIELDS],
			 mp_diag *diag)
{
	char key[96];

	for (size_t f = 0; f < NFIELDS; f++) {
		const int64_t *p;

		snprintf(key, sizeof key, "%s%s", prefix, fields[f]);
		p = stat_get(stats, key);
		if (p == NULL)
			return mp_fail(diag, MP_E_NOTFOUND,
				       "memory_summary: device %d has no statistic '%s' "
				       "(PyTorch raises KeyError)",
				       stats->device, key);
		v[f] = *p;
	}
	return MP_OK;
}

/* All values the table needs, looked up before anything is written. */
struct table {
	int64_t pooled[NMETRICS][NPOOLS][NFIELDS];
	int64_t single[NOVERSIZE][NFIELDS];
	int64_t num_ooms, num_alloc_retries, device;
	const int64_t *underscore;
};

static mp_err collect(const mp_memstats *stats, bool abbreviated, struct table *t, mp_diag *diag)
{
	static const char *const scalars[] = { "num_ooms", "num_alloc_retries" };
	int64_t *scalar_dest[] = { &t->num_ooms, &t->num_alloc_retries };
	char prefix[64];
	const int64_t *p;
	mp_err err;

	for (size_t m = 0; m < NMETRICS; m++)
		for (size_t k = 0; k < (abbreviated ? 1 : NPOOLS); k++) {
			snprintf(prefix, sizeof prefix, "%s.%s.", metrics[m].key, pools[k]);
			err = get_fields(stats, prefix, t->pooled[m][k], diag);
			if (err != MP_OK)
				return err;
		}
	for (size_t m = 0; m < NOVERSIZE; m++) {
		snprintf(prefix, sizeof prefix, "%s.", oversize[m].key);
		err = get_fields(stats, prefix, t->single[m], diag);
		if (err != MP_OK)
			return err;
	}
	/* str.format() then looks the header fields up in {"_": "", "device":
	   device} updated with the stats (dots replaced by dashes, which changes
	   none of these names). */
	t->underscore = stat_get(stats, "_");
	p = stat_get(stats, "device");
	t->device = p != NULL ? *p : stats->device;
	for (size_t i = 0; i < 2; i++) {
		p = stat_get(stats, scalars[i]);
		if (p == NULL)
			return mp_fail(diag, MP_E_NOTFOUND,
				       "memory_summary: device %d has no statistic '%s' "
				       "(PyTorch raises KeyError)",
				       stats->device, scalars[i]);
		*scalar_dest[i] = *p;
	}
	return MP_OK;
}

mp_err mp_analysis_memory_summary(const mp_memstats *stats, bool abbreviated, mp_out *out,
				  mp_diag *diag)
{
	struct table t;
	mp_err err = collect(stats, abbreviated, &t, diag);

	if (err != MP_OK)
		return err;
	mp_out_puts(out, "|" RULE_EQ "|\n| ");
	put_pad(out, t.underscore, 16);
	mp_out_printf(out, " PyTorch CUDA memory summary, device ID %-17" PRId64 " |\n", t.device);
	mp_out_puts(out, "|" RULE_DASH "|\n|  ");
	put_pad(out, t.underscore, 9);
	mp_out_printf(out, " CUDA OOMs: %-12" PRId64 " | ", t.num_ooms);
	put_pad(out, t.underscore, 6);
	mp_out_printf(out, " cudaMalloc retries: %-8" PRId64 "  |\n", t.num_alloc_retries);
	mp_out_puts(out, "|" RULE_EQ "|\n"
			 "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n");
	for (size_t m = 0; m < NMETRICS; m++) {
		mp_out_puts(out, "|" RULE_DASH "|\n");
		for (size_t k = 0; k < (abbreviated ? 1 : NPOOLS); k++)
			put_row(out, k == 0 ? metrics[m].title : pool_titles[k], metrics[m].kind,
				t.pooled[m][k], t.pooled[m][0]);
	}
	for (size_t m = 0; m < NOVERSIZE; m++) {
		mp_out_puts(out, "|" RULE_DASH "|\n");
		put_row(out, oversize[m].title, oversize[m].kind, t.single[m], t.single[m]);
	}
	mp_out_puts(out, "|" RULE_EQ "|\n");
	if (out->err != MP_OK)
		return mp_fail(diag, out->err, "memory_summary: cannot write the output: %s",
			       mp_strerror(out->err));
	return MP_OK;
}

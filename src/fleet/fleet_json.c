/* fleet_json.c - the fleet's report as one JSON object, every size in bytes (the schema: FLEET.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"
#include "mp_array.h"
#include "mp_json.h"

static void put_str(mp_out *out, const char *s)
{
	if (s == NULL)
		mp_out_puts(out, "null");
	else
		mp_json_put_string(out, s, strlen(s));
}

/* A number: whole ones without a fraction (a median of two may end in .5). */
static void put_num(mp_out *out, double v)
{
	if (!isfinite(v))
		mp_out_puts(out, "null");
	else if (v == floor(v) && fabs(v) < 9e15)
		mp_out_printf(out, "%.0f", v);
	else
		mp_out_printf(out, "%.6g", v);
}

/* "module": ..., "category": ... of a module key; "KIND": ... of another. */
static void put_key(mp_out *out, const mp_fleet *f, enum fleet_dim d, uint32_t key)
{
	const char *s = f->keys[d].text[key], *sep = strchr(s, FLEET_SEP);

	if (d == FLEET_MODULE && sep != NULL) {
		mp_out_puts(out, "\"module\": ");
		mp_json_put_string(out, s, (size_t)(sep - s));
		mp_out_puts(out, ", \"category\": ");
		put_str(out, sep + 1);
	} else {
		mp_out_puts(out, d == FLEET_SITE ? "\"site\": " : "\"category\": ");
		put_str(out, s);
	}
}

static int cmp_bytes(const void *pa, const void *pb)
{
	const fleet_cell *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

/* Rank R's table D as a list of {key, "bytes"}, the most bytes first, at most TOP rows. */
static void put_cells(mp_out *out, const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, size_t top)
{
	fleet_cell *v = malloc((r->ncells[d] > 0 ? r->ncells[d] : 1) * sizeof *v);
	size_t n = r->ncells[d] < top ? r->ncells[d] : top;

	if (v == NULL) {
		out->err = MP_E_NOMEM;
		return;
	}
	if (r->ncells[d] > 0)
		memcpy(v, r->cells[d], r->ncells[d] * sizeof *v);
	mp_sort(v, r->ncells[d], sizeof *v, cmp_bytes);
	mp_out_putc(out, '[');
	for (size_t i = 0; i < n; i++) {
		mp_out_puts(out, i > 0 ? ", {" : "{");
		put_key(out, f, d, v[i].key);
		mp_out_printf(out, ", \"bytes\": %lld}", (long long)v[i].bytes);
	}
	mp_out_putc(out, ']');
	free(v);
}

static void put_categories(mp_out *out, const mp_fleet *f, const fleet_rank *r, const uint32_t *cols, size_t ncols)
{
	mp_out_putc(out, '{');
	for (size_t c = 0; c < ncols; c++) {
		put_str(out, f->keys[FLEET_CATEGORY].text[cols[c]]);
		mp_out_puts(out, ": ");
		if (r != NULL)
			mp_out_printf(out, "%lld", (long long)fleet_cell_bytes(r, FLEET_CATEGORY, cols[c]));
		else
			put_num(out, f->key_median[FLEET_CATEGORY][cols[c]]);
		mp_out_puts(out, c + 1 < ncols ? ", " : "");
	}
	mp_out_putc(out, '}');
}

static void put_oom(mp_out *out, const fleet_rank *r)
{
	if (r->oom_path == NULL) {
		mp_out_puts(out, "null");
		return;
	}
	mp_out_puts(out, "{\"path\": ");
	put_str(out, r->oom_path);
	mp_out_printf(out, ", \"count\": %u, \"summary\": [", r->nooms);
	for (const char *p = r->oom != NULL ? r->oom : ""; *p != '\0';) {
		size_t n = strcspn(p, "\n");

		mp_json_put_string(out, p, n);
		p += n + (p[n] == '\n');
		mp_out_puts(out, *p != '\0' ? ", " : "");
	}
	mp_out_puts(out, "]}");
}

static void put_rank(mp_out *out, const mp_fleet *f, const fleet_rank *r, const mp_fleet_report_opts *o,
		     const uint32_t *cols, size_t ncols)
{
	mp_out_printf(out, "    {\"rank\": %ld, \"path\": ", r->rank);
	put_str(out, r->path);
	mp_out_printf(out, ", \"read\": %s, \"error\": ", r->read ? "true" : "false");
	put_str(out, r->error);
	mp_out_printf(out, ", \"annotated\": %s", r->annotated ? "true" : "false");
	for (int m = 0; m < FLEET_METRICS; m++)
		mp_out_printf(out, ", \"%s\": %lld", fleet_metric_names[m], (long long)r->metric[m]);
	mp_out_printf(out, ", \"largest_free\": %lld, \"fragmentation\": ", (long long)r->largest_free);
	put_num(out, r->metric[FLEET_FREE] > 0 ? 1.0 - (double)r->largest_free / (double)r->metric[FLEET_FREE] : 0.0);
	mp_out_printf(out, ", \"segments\": %zu,\n     \"categories\": ", r->segments);
	put_categories(out, f, r, cols, ncols);
	mp_out_puts(out, ",\n     \"modules\": ");
	put_cells(out, f, r, FLEET_MODULE, SIZE_MAX);
	mp_out_puts(out, ",\n     \"sites\": ");
	put_cells(out, f, r, FLEET_SITE, o->top);
	mp_out_puts(out, ",\n     \"oom\": ");
	put_oom(out, r);
	mp_out_putc(out, '}');
}

/* An outlier's differences in table D: {key, "bytes", "median", "difference"}. */
static void put_diffs(mp_out *out, const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, size_t top)
{
	fleet_diff *v;
	size_t n;

	if (fleet_diffs(f, r, d, top, &v, &n) != MP_OK) {
		out->err = MP_E_NOMEM;
		return;
	}
	mp_out_putc(out, '[');
	for (size_t i = 0; i < n; i++) {
		mp_out_puts(out, i > 0 ? ", {" : "{");
		put_key(out, f, d, v[i].key);
		mp_out_printf(out, ", \"bytes\": %lld, \"median\": ", (long long)v[i].bytes);
		put_num(out, v[i].median);
		mp_out_puts(out, ", \"difference\": ");
		put_num(out, (double)v[i].bytes - v[i].median);
		mp_out_putc(out, '}');
	}
	mp_out_putc(out, ']');
	free(v);
}

static void put_outlier(mp_out *out, const mp_fleet *f, const fleet_rank *r, const mp_fleet_report_opts *o)
{
	bool first = true;

	mp_out_printf(out, "    {\"rank\": %ld, \"figures\": [", r->rank);
	for (int m = 0; m < FLEET_METRICS; m++) {
		double dev = fleet_deviation(f, r, (enum fleet_metric)m), med = f->median[m];

		if (dev <= 1)
			continue;
		mp_out_printf(out, "%s{\"figure\": \"%s\", \"value\": %lld, \"median\": ", first ? "" : ", ",
			      fleet_metric_names[m], (long long)r->metric[m]);
		put_num(out, med);
		mp_out_puts(out, ", \"mad\": ");
		put_num(out, f->mad[m]);
		mp_out_puts(out, ", \"relative\": ");
		put_num(out, med > 0 ? ((double)r->metric[m] - med) / med : NAN);
		mp_out_puts(out, ", \"deviation\": ");
		put_num(out, dev);
		mp_out_putc(out, '}');
		first = false;
	}
	mp_out_puts(out, "],\n     \"why\": ");
	{
		mp_out why;
		size_t len;
		char *s;

		mp_out_init(&why);
		fleet_why(f, r, MP_UNITS_AUTO, &why);
		s = mp_out_take(&why, &len);
		put_str(out, s != NULL ? s : "");
		free(s);
		mp_out_free(&why);
	}
	for (int d = 0; d < FLEET_DIMS; d++) {
		mp_out_printf(out, ",\n     \"%s\": ", d == FLEET_CATEGORY ? "categories" : d == FLEET_MODULE ? "modules" : "sites");
		put_diffs(out, f, r, (enum fleet_dim)d, o->top);
	}
	mp_out_putc(out, '}');
}

static void put_figures(mp_out *out, const double *v)
{
	mp_out_putc(out, '{');
	for (int m = 0; m < FLEET_METRICS; m++) {
		mp_out_printf(out, "%s\"%s\": ", m > 0 ? ", " : "", fleet_metric_names[m]);
		put_num(out, v[m]);
	}
	mp_out_putc(out, '}');
}

void fleet_report_json(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out)
{
	const fleet_rank **v = NULL;
	uint32_t *cols = NULL;
	size_t n, ncols;

	if (fleet_outliers(f, &v, &n) != MP_OK || fleet_category_order(f, &cols, &ncols) != MP_OK) {
		free(v);
		out->err = MP_E_NOMEM;
		return;
	}
	mp_out_puts(out, "{\n  \"fleet\": 1,\n  \"device\": ");
	if (f->opts.device < 0)
		mp_out_puts(out, "\"all\"");
	else
		mp_out_printf(out, "%lld", (long long)f->opts.device);
	mp_out_printf(out, ",\n  \"depth\": %d,\n  \"frames\": %s,\n  \"ranks_found\": %zu,\n  \"ranks_read\": %zu,\n",
		      f->opts.depth, f->opts.frames ? "true" : "false", f->n, f->nread);
	mp_out_puts(out, "  \"ranks\": [\n");
	for (size_t i = 0; i < f->n; i++) {
		put_rank(out, f, &f->ranks[i], o, cols, ncols);
		mp_out_puts(out, i + 1 < f->n ? ",\n" : "\n");
	}
	mp_out_puts(out, "  ],\n  \"median\": ");
	put_figures(out, f->median);
	mp_out_puts(out, ",\n  \"mad\": ");
	put_figures(out, f->mad);
	mp_out_puts(out, ",\n  \"median_categories\": ");
	put_categories(out, f, NULL, cols, ncols);
	mp_out_puts(out, ",\n  \"outliers\": [\n");
	for (size_t i = 0; i < n; i++) {
		put_outlier(out, f, v[i], o);
		mp_out_puts(out, i + 1 < n ? ",\n" : "\n");
	}
	mp_out_puts(out, "  ]\n}\n");
	free(v);
	free(cols);
}

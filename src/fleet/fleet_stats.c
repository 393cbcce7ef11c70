/* fleet_stats.c - the robust statistics over the ranks read: each figure's median and median absolute deviation
   (MAD), the outliers (a rank lies further from the median than max(3.5 x 1.4826 x MAD, a floor, 5 % of the
   median; of the median reserved for the byte figures): Iglewicz and Hoaglin's modified z-score above 3.5,
   with floors so that ranks alike to a few bytes are not told apart), each key's median over the ranks and an outlier's differences from it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"
#include "mp_array.h"

const char *const fleet_metric_names[FLEET_METRICS] = { "reserved", "allocated", "active", "free", "blocks" };
const char *const fleet_metric_verbs[FLEET_METRICS] = {
	"reserves %s", "allocates %s", "holds %s active", "leaves %s free in its segments", "has %s blocks",
};

/* The least difference from the median that can make an outlier: 1 MiB of bytes, 16 blocks. */
static const double metric_floor[FLEET_METRICS] = { 1048576.0, 1048576.0, 1048576.0, 1048576.0, 16.0 };

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

double mp_fleet_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	mp_sort(v, n, sizeof *v, cmp_double);
	return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mp_fleet_mad(double *v, size_t n, double median)
{
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - median);
	return mp_fleet_median(v, n);
}

double mp_fleet_threshold(double median, double mad, double floor)
{
	double t = 3.5 * 1.4826 * mad;

	if (t < floor)
		t = floor;
	if (t < 0.05 * fabs(median))
		t = 0.05 * fabs(median);
	return t;
}

double fleet_deviation(const mp_fleet *f, const fleet_rank *r, enum fleet_metric m)
{
	/* the 5 % of a byte figure is of what the median rank reserves: a few MiB more free in segments of a
	   hundred is no outlier, however alike the others are */
	double scale = m != FLEET_BLOCKS && f->median[FLEET_RESERVED] > fabs(f->median[m]) ? f->median[FLEET_RESERVED]
											  : f->median[m];
	double t = mp_fleet_threshold(scale, f->mad[m], metric_floor[m]);

	return fabs((double)r->metric[m] - f->median[m]) / t;
}

int64_t fleet_cell_bytes(const fleet_rank *r, enum fleet_dim d, uint32_t key)
{
	size_t lo = 0, hi = r->ncells[d];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->cells[d][mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ncells[d] && r->cells[d][lo].key == key ? r->cells[d][lo].bytes : 0;
}

/* Each key's median over the ranks read in table D (a rank without the key counts 0): the ranks' cells
   gathered by key, each key's values sorted, the zeros of the ranks without it below them (bytes are never
   negative). */
static mp_err key_medians(mp_fleet *f, enum fleet_dim d)
{
	size_t nk = f->keys[d].n, total = 0, *start = calloc(nk + 1, sizeof *start), *fill = NULL;
	double *vals = NULL, *med = calloc(nk > 0 ? nk : 1, sizeof *med);

	for (size_t i = 0; i < f->n && start != NULL; i++)
		for (size_t c = 0; f->ranks[i].read && c < f->ranks[i].ncells[d]; c++, total++)
			start[f->ranks[i].cells[d][c].key + 1]++;
	if (start == NULL || med == NULL || (vals = malloc((total > 0 ? total : 1) * sizeof *vals)) == NULL ||
	    (fill = malloc((nk > 0 ? nk : 1) * sizeof *fill)) == NULL) {
		free(start), free(vals), free(med), free(fill);
		return MP_E_NOMEM;
	}
	for (size_t k = 0; k < nk; k++)
		start[k + 1] += start[k]; /* key k's values: [start[k], start[k + 1]) */
	for (size_t k = 0; k < nk; k++)
		fill[k] = start[k];
	for (size_t i = 0; i < f->n; i++)
		for (size_t c = 0; f->ranks[i].read && c < f->ranks[i].ncells[d]; c++)
			vals[fill[f->ranks[i].cells[d][c].key]++] = (double)f->ranks[i].cells[d][c].bytes;
	for (size_t k = 0; k < nk; k++) {
		size_t nz = start[k + 1] - start[k], zeros = f->nread - nz, mid = f->nread / 2;
		double *v = vals + start[k];

#define AT(i) ((i) < zeros ? 0.0 : v[(i) - zeros])
		mp_sort(v, nz, sizeof *v, cmp_double);
		med[k] = f->nread % 2 == 1 ? AT(mid) : (AT(mid - 1) + AT(mid)) / 2;
#undef AT
	}
	free(start), free(vals), free(fill);
	f->key_median[d] = med;
	return MP_OK;
}

mp_err fleet_stats(mp_fleet *f)
{
	double *v = malloc(f->n * sizeof *v);
	mp_err err = MP_OK;

	if (v == NULL)
		return MP_E_NOMEM;
	for (int m = 0; m < FLEET_METRICS; m++) {
		size_t n = 0;

		for (size_t i = 0; i < f->n; i++)
			if (f->ranks[i].read)
				v[n++] = (double)f->ranks[i].metric[m];
		f->median[m] = mp_fleet_median(v, n);
		f->mad[m] = mp_fleet_mad(v, n, f->median[m]);
	}
	free(v);
	for (int d = 0; d < FLEET_DIMS && err == MP_OK; d++)
		err = key_medians(f, (enum fleet_dim)d);
	return err;
}

/* ---- the outliers and their differences */

/* The largest deviation of R over the figures. */
static double max_deviation(const mp_fleet *f, const fleet_rank *r)
{
	double worst = 0;

	for (int m = 0; m < FLEET_METRICS; m++)
		if (fleet_deviation(f, r, (enum fleet_metric)m) > worst)
			worst = fleet_deviation(f, r, (enum fleet_metric)m);
	return worst;
}

/* An outlier and its largest deviation, for sorting. */
struct outlier {
	const fleet_rank *r;
	double deviation;
};

static int cmp_outlier(const void *pa, const void *pb)
{
	const struct outlier *a = pa, *b = pb;

	if (a->deviation != b->deviation)
		return a->deviation > b->deviation ? -1 : 1;
	return (a->r->rank > b->r->rank) - (a->r->rank < b->r->rank);
}

mp_err fleet_outliers(const mp_fleet *f, const fleet_rank ***out, size_t *n)
{
	struct outlier *o = malloc((f->n > 0 ? f->n : 1) * sizeof *o);
	const fleet_rank **v = malloc((f->n > 0 ? f->n : 1) * sizeof *v);

	*n = 0;
	*out = v;
	if (o == NULL || v == NULL) {
		free(o);
		return MP_E_NOMEM;
	}
	/* fewer than 3 ranks have no majority to stand out from */
	for (size_t i = 0; i < f->n && f->nread >= 3; i++)
		if (f->ranks[i].read && max_deviation(f, &f->ranks[i]) > 1)
			o[(*n)++] = (struct outlier){ &f->ranks[i], max_deviation(f, &f->ranks[i]) };
	mp_sort(o, *n, sizeof *o, cmp_outlier);
	for (size_t i = 0; i < *n; i++)
		v[i] = o[i].r;
	free(o);
	return MP_OK;
}

static int cmp_diff(const void *pa, const void *pb)
{
	const fleet_diff *a = pa, *b = pb;
	double da = fabs((double)a->bytes - a->median), db = fabs((double)b->bytes - b->median);

	if (da != db)
		return da > db ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

mp_err fleet_diffs(const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, size_t top, fleet_diff **out, size_t *n)
{
	size_t nk = f->keys[d].n;
	fleet_diff *v = malloc((nk > 0 ? nk : 1) * sizeof *v);

	*n = 0;
	if ((*out = v) == NULL)
		return MP_E_NOMEM;
	for (uint32_t k = 0; k < nk; k++) {
		int64_t bytes = fleet_cell_bytes(r, d, k);

		if (fabs((double)bytes - f->key_median[d][k]) >= 1)
			v[(*n)++] = (fleet_diff){ k, bytes, f->key_median[d][k] };
	}
	mp_sort(v, *n, sizeof *v, cmp_diff);
	if (*n > top)
		*n = top;
	return MP_OK;
}

bool fleet_dim_informative(const mp_fleet *f, enum fleet_dim d)
{
	for (size_t k = 0; k < f->keys[d].n; k++)
		if (f->keys[d].text[k][0] != '(')
			return true;
	return false;
}

/* ---- words */

void fleet_put_delta(mp_out *out, double bytes, enum mp_units u)
{
	mp_out_putc(out, bytes < 0 ? '-' : '+');
	mp_format_size(out, (mp_i128)llround(fabs(bytes)), u);
}

void fleet_put_key(mp_out *out, const mp_fleet *f, enum fleet_dim d, uint32_t key)
{
	const char *s = f->keys[d].text[key], *sep = strchr(s, FLEET_SEP);

	if (d != FLEET_MODULE || sep == NULL) {
		mp_out_puts(out, s);
		return;
	}
	mp_out_write(out, s, (size_t)(sep - s));
	mp_out_printf(out, " (%s)", sep + 1);
}

/* R's largest difference in table D, said after WORD ("in", "at", "of"); false when there is none. */
static bool why_part(const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, const char *word, bool first,
		     enum mp_units u, mp_out *out)
{
	fleet_diff *v;
	size_t n;

	if (fleet_diffs(f, r, d, 1, &v, &n) != MP_OK || n == 0) {
		free(v);
		return false;
	}
	mp_out_puts(out, first ? " " : ", ");
	fleet_put_delta(out, (double)v[0].bytes - v[0].median, u);
	mp_out_printf(out, " %s ", word);
	fleet_put_key(out, f, d, v[0].key);
	free(v);
	return true;
}

void fleet_why(const mp_fleet *f, const fleet_rank *r, enum mp_units u, mp_out *out)
{
	bool said;

	mp_out_printf(out, "rank %ld:", r->rank);
	said = fleet_dim_informative(f, FLEET_MODULE) ? why_part(f, r, FLEET_MODULE, "in", true, u, out)
						      : why_part(f, r, FLEET_CATEGORY, "of", true, u, out);
	said |= why_part(f, r, FLEET_SITE, "at", !said, u, out);
	if (!said)
		mp_out_puts(out, " no module, category or call site differs from the median");
}

mp_err fleet_category_order(const mp_fleet *f, uint32_t **out, size_t *n)
{
	static const char *const known[] = {
		"parameter", "buffer", "gradient", "optimizer_state", "activation", "input", "temporary",
		"autograd_detail", "other_python", "not_python", "unknown",
	};
	const fleet_keys *k = &f->keys[FLEET_CATEGORY];
	uint32_t *v = malloc((k->n > 0 ? k->n : 1) * sizeof *v);

	*n = 0;
	if ((*out = v) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		for (uint32_t id = 0; id < k->n; id++)
			if (strcmp(k->text[id], known[i]) == 0)
				v[(*n)++] = id;
	for (uint32_t id = 0; id < k->n; id++) {
		size_t i = 0;

		while (i < sizeof known / sizeof known[0] && strcmp(k->text[id], known[i]) != 0)
			i++;
		if (i == sizeof known / sizeof known[0])
			v[(*n)++] = id;
	}
	return MP_OK;
}

/* test_fleet_stats.c - the fleet's robust statistics (median, MAD, the threshold of an outlier) and, on ranks
   built by hand, the outliers, their differences from the median rank and the line that says why. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"
#include "unit_main.h"

#define MIB 1048576.0

static void test_median_mad(void)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, v[] = { 1, 2, 3, 4, 100 };

	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_median(odd, 3), 3, 0);
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_median(even, 4), 2.5, 0);
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_median(NULL, 0), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_median(v, 5), 3, 0);
	/* deviations 2 1 0 1 97: the one far value moves neither */
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_mad(v, 5, 3), 1, 0);
}

static void test_threshold(void)
{
	/* MAD: 3.5 x 1.4826 x 10 MiB */
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_threshold(100 * MIB, 10 * MIB, MIB), 3.5 * 1.4826 * 10 * MIB, 1);
	/* ranks alike to the byte (MAD 0): 5 % of the median, else the floor */
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_threshold(800 * MIB, 0, MIB), 40 * MIB, 1);
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_threshold(4 * MIB, 0, MIB), MIB, 0);
	CU_ASSERT_DOUBLE_EQUAL(mp_fleet_threshold(0, 0, 16), 16, 0);
}

static mp_fleet *fleet_new(size_t n)
{
	mp_fleet *f = calloc(1, sizeof *f);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int d = 0; d < FLEET_DIMS; d++)
		pthread_mutex_init(&f->keys[d].lock, NULL);
	mp_fleet_opts_init(&f->opts);
	f->ranks = calloc(n, sizeof *f->ranks);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->ranks);
	f->n = f->cap = n;
	return f;
}

/* Give rank R the one cell KEY of table D with BYTES. */
static void cell(mp_fleet *f, fleet_rank *r, enum fleet_dim d, const char *key, int64_t bytes)
{
	uint32_t id;

	CU_ASSERT_EQUAL_FATAL(fleet_key_intern(&f->keys[d], key, strlen(key), &id), MP_OK);
	r->cells[d] = realloc(r->cells[d], (r->ncells[d] + 1) * sizeof *r->cells[d]);
	r->cells[d][r->ncells[d]++] = (fleet_cell){ id, bytes };
}

static char *text_of(mp_out *o)
{
	size_t len;

	return mp_out_take(o, &len);
}

/* Eight ranks alike but for rank 2: +450 MiB of parameters in model.embedding, +20 MiB at one call site. */
static void test_outlier(void)
{
	mp_fleet *f = fleet_new(8);
	const fleet_rank **v;
	fleet_diff *diffs;
	size_t n;
	mp_out out;

	for (size_t i = 0; i < 8; i++) {
		fleet_rank *r = &f->ranks[i];
		int64_t extra = i == 2 ? (int64_t)(470 * MIB) : 0;

		r->rank = (long)i;
		r->read = true;
		r->metric[FLEET_RESERVED] = (int64_t)(800 * MIB) + extra + (int64_t)i * 4096;
		r->metric[FLEET_ALLOCATED] = r->metric[FLEET_ACTIVE] = (int64_t)(600 * MIB) + extra;
		r->metric[FLEET_FREE] = (int64_t)(200 * MIB);
		r->metric[FLEET_BLOCKS] = 1000 + (i == 2);
		cell(f, r, FLEET_MODULE, "model.embedding\x1fparameter", (int64_t)(10 * MIB) + (i == 2 ? (int64_t)(450 * MIB) : 0));
		cell(f, r, FLEET_MODULE, "model.head\x1fparameter", (int64_t)(590 * MIB));
		cell(f, r, FLEET_SITE, "train.py:88 (forward)", i == 2 ? (int64_t)(20 * MIB) : 0);
		cell(f, r, FLEET_SITE, "train.py:40 (<module>)", (int64_t)(600 * MIB) + (i == 2 ? (int64_t)(450 * MIB) : 0));
	}
	f->nread = 8;
	CU_ASSERT_EQUAL_FATAL(fleet_stats(f), MP_OK);
	CU_ASSERT_DOUBLE_EQUAL(f->median[FLEET_ALLOCATED], 600 * MIB, 0);
	CU_ASSERT_EQUAL_FATAL(fleet_outliers(f, &v, &n), MP_OK);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(v[0]->rank, 2);
	CU_ASSERT(fleet_deviation(f, v[0], FLEET_RESERVED) > 1);
	CU_ASSERT(fleet_deviation(f, v[0], FLEET_FREE) <= 1);
	CU_ASSERT(fleet_deviation(f, v[0], FLEET_BLOCKS) <= 1); /* one block more: under the floor */
	CU_ASSERT_EQUAL_FATAL(fleet_diffs(f, v[0], FLEET_MODULE, 10, &diffs, &n), MP_OK);
	CU_ASSERT_EQUAL_FATAL(n, 1); /* model.head does not differ */
	CU_ASSERT_EQUAL(diffs[0].bytes, (int64_t)(460 * MIB));
	CU_ASSERT_DOUBLE_EQUAL(diffs[0].median, 10 * MIB, 0);
	free(diffs);
	mp_out_init(&out);
	fleet_why(f, v[0], MP_UNITS_AUTO, &out);
	unit_check_text(text_of(&out), "rank 2: +450.0MiB in model.embedding (parameter), +450.0MiB at train.py:40 (<module>)");
	mp_out_free(&out);
	free(v);
	mp_fleet_free(f);
}

/* Two ranks have no majority; ranks alike have no outlier. */
static void test_no_outlier(void)
{
	mp_fleet *f = fleet_new(4);
	const fleet_rank **v;
	size_t n;

	for (size_t i = 0; i < 4; i++) {
		f->ranks[i] = (fleet_rank){ .rank = (long)i, .read = i != 3 };
		f->ranks[i].metric[FLEET_RESERVED] = i == 1 ? (int64_t)(4 * MIB) : (int64_t)(100 * MIB);
	}
	f->nread = 3;
	CU_ASSERT_EQUAL_FATAL(fleet_stats(f), MP_OK);
	CU_ASSERT_EQUAL_FATAL(fleet_outliers(f, &v, &n), MP_OK);
	CU_ASSERT_EQUAL(n, 1); /* rank 1: 4 MiB of a median of 100 */
	free(v);
	f->ranks[1].read = false;
	f->nread = 2;
	CU_ASSERT_EQUAL_FATAL(fleet_outliers(f, &v, &n), MP_OK);
	CU_ASSERT_EQUAL(n, 0);
	free(v);
	mp_fleet_free(f);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "median and MAD", test_median_mad },
		{ "the threshold of an outlier", test_threshold },
		{ "an outlier rank and why", test_outlier },
		{ "too few ranks, no outlier", test_no_outlier },
	};

	return UNIT_RUN("fleet_stats", tests, NULL, NULL);
}

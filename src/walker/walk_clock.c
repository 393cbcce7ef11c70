/* walk_clock.c - trace time stamps to the microseconds snapshot() reports. The ring holds raw
   TSC values; PyTorch converts them with pairs (wall ns, TSC) taken when libc10 loaded and 1001
   fresh pairs taken at snapshot time (c10/util/ApproximateClock). memprof takes the fresh pairs
   itself: exact when the target ran on this boot of this machine (the TSC is one timeline), an
   estimate otherwise, and it says which. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "walk_int.h"
#include "mp_array.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

enum { NPAIRS = 1001 };

struct pair {
	int64_t t;      /* wall clock, ns since the epoch */
	uint64_t approx; /* TSC */
};

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t tsc(void)
{
#if HAVE_TSC
	return __rdtsc();
#else
	return (uint64_t)wall_ns();
#endif
}

/* A pair measured as PyTorch measures it: the TSC on both sides of the wall clock, averaged. */
static struct pair measure(void)
{
	uint64_t a = tsc();
	int64_t t = wall_ns();
	uint64_t b = tsc();

	return (struct pair){ t, a + (b - a) / 2 };
}

static int cmp_ld(const void *a, const void *b)
{
	long double x = *(const long double *)a, y = *(const long double *)b;

	return (x > y) - (x < y);
}

struct converter {
	long double scale; /* ns per tick */
	int64_t t0;
	uint64_t t0_approx;
};

/* X truncated to an int64 as a cast does, when it is in range (not NaN). */
static bool to_i64(double x, int64_t *out)
{
	if (!(x >= -0x1p63 && x < 0x1p63))
		return false;
	*out = (int64_t)x;
	return true;
}

/* PyTorch's makeConverter, from START (the process's pairs, each time >= 0) and END (ours), in
   its integer arithmetic; false when a step leaves int64 (pairs far out: no conversion). */
static bool make_converter(const struct pair *start, const struct pair *end, struct converter *c,
			   long double *scales, double *corrections)
{
	int64_t correction;

	for (int i = 0; i < NPAIRS; i++)
		scales[i] = (double)(end[i].t - start[i].t) / (double)(end[i].approx - start[i].approx);
	mp_sort(scales, NPAIRS, sizeof *scales, cmp_ld);
	c->scale = scales[NPAIRS / 2 + 1];
	c->t0 = start[0].t;
	c->t0_approx = start[0].approx;
	for (int i = 0; i < NPAIRS; i++) {
		int64_t dt = start[i].t - c->t0, whole, d;

		if (!to_i64((double)(start[i].approx - c->t0_approx) * c->scale, &whole) ||
		    __builtin_sub_overflow(dt, whole, &d))
			return false;
		corrections[i] = (double)d;
	}
	return to_i64(corrections[NPAIRS / 2 + 1], &correction) && !__builtin_add_overflow(c->t0, correction, &c->t0);
}

/* APPROX in microseconds; 0 before the first pair, and where the nanoseconds leave int64 (a
   damaged time). */
static int64_t to_us(const struct converter *c, uint64_t approx)
{
	int64_t ns;

	if (approx <= c->t0_approx || !to_i64((double)(approx - c->t0_approx) * c->scale, &ns) ||
	    __builtin_add_overflow(ns, c->t0, &ns))
		return 0;
	return ns / 1000;
}

/* The first pair whose wall time is before 1970 (damage: the arithmetic above assumes none), or -1. */
static int negative_pair(const struct pair *p)
{
	for (int i = 0; i < NPAIRS; i++)
		if (p[i].t < 0)
			return i;
	return -1;
}

/* A pair whose two TSC reads are the closest of a few tries: one that a preemption split (on a
   loaded machine the two reads can be milliseconds apart) is not taken. */
static struct pair measure_tight(void)
{
	struct pair best = { 0, 0 };
	uint64_t best_gap = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = tsc();
		int64_t t = wall_ns();
		uint64_t b = tsc();

		if (b - a < best_gap) {
			best_gap = b - a;
			best = (struct pair){ t, a + (b - a) / 2 };
		}
	}
	return best;
}

/* This machine's ns per tick, over about 20 ms, from two tight pairs: good to about 1e-6, well
   inside the 1e-3 by which the process's rate may differ from it on the same timeline. */
static long double tick_rate(void)
{
	struct timespec pause = { 0, 20000000 };
	struct pair a = measure_tight(), b;

	nanosleep(&pause, NULL);
	b = measure_tight();
	return (long double)(b.t - a.t) / (long double)(b.approx - a.approx);
}

void wk_convert_times(struct walk *wk, uint64_t allocator)
{
	struct pair *start = NULL, *end = NULL;
	long double *scales = NULL, rate;
	double *corrections = NULL;
	struct converter c;
	mp_walk *w = wk->w;
	bool converted;
	int bad;

	if ((w->ntrace == 0 && w->nannotations == 0) || !HAS(wk, TE_TIME)) /* 2.1's entries carry no time */
		return;
	start = calloc(NPAIRS, sizeof *start);
	end = calloc(NPAIRS, sizeof *end);
	scales = calloc(NPAIRS, sizeof *scales);
	corrections = calloc(NPAIRS, sizeof *corrections);
	if (start == NULL || end == NULL || scales == NULL || corrections == NULL || !HAS(wk, NCA_CLOCK_CONVERTER) ||
	    wk_read(wk, allocator + (uint64_t)OFF(wk, NCA_CLOCK_CONVERTER), start, NPAIRS * sizeof *start) != MP_OK) {
		mp_warn(wk->diag, "the allocator's clock pairs are unavailable: trace times are left at 0");
		goto out;
	}
	if ((bad = negative_pair(start)) >= 0) {
		wk_damaged(wk, "the allocator's clock pairs are damaged (pair %d is before 1970): trace times are left at 0",
			   bad);
		goto out;
	}
	for (int i = 0; i < NPAIRS; i++)
		end[i] = measure();
	converted = make_converter(start, end, &c, scales, corrections);
	/* One timeline: the process's pairs and ours agree on this machine's tick rate. */
	rate = tick_rate();
	w->time_exact = converted && HAVE_TSC && end[0].approx > start[0].approx && c.scale > rate * 0.999L &&
			c.scale < rate * 1.001L;
	if (!w->time_exact) {
		c = (struct converter){ .scale = rate, .t0 = start[0].t, .t0_approx = start[0].approx };
		mp_warn(wk->diag, "the target ran on another boot or machine: trace times are estimates "
				  "(this machine's TSC rate from the process's start)");
	}
	for (size_t i = 0; i < w->ntrace; i++)
		w->trace[i].time_us = to_us(&c, w->trace[i].tsc);
	for (size_t i = 0; i < w->nannotations; i++)
		w->annotations[i].time_us = to_us(&c, w->annotations[i].tsc);
out:
	free(start);
	free(end);
	free(scales);
	free(corrections);
}

/* mp_format.c - _format_size, _report_free and the Python int arithmetic behind them. */
#include "mp_format.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

__extension__ typedef unsigned __int128 mp_u128;

/* Doubles hold every int up to 2**53 exactly; Python divides those in floating point. */
#define EXACT_IN_DOUBLE ((mp_i128)1 << 53)

static mp_u128 magnitude(mp_i128 v)
{
	return v < 0 ? (mp_u128)0 - (mp_u128)v : (mp_u128)v;
}

size_t mp_format_i128_to(char *dst, mp_i128 v)
{
	char tmp[MP_I128_CHARS];
	char *p = tmp + sizeof tmp;
	mp_u128 m = magnitude(v);
	uint64_t small;

	/* 128-bit division is a library call per digit: nearly every number fits 64 bits. */
	for (; m > UINT64_MAX; m /= 10)
		*--p = (char)('0' + (int)(m % 10));
	small = (uint64_t)m;
	do {
		*--p = (char)('0' + (int)(small % 10));
		small /= 10;
	} while (small != 0);
	if (v < 0)
		*--p = '-';
	memcpy(dst, p, (size_t)(tmp + sizeof tmp - p));
	return (size_t)(tmp + sizeof tmp - p);
}

void mp_format_i128(mp_out *out, mp_i128 v)
{
	char tmp[MP_I128_CHARS];

	mp_out_write(out, tmp, mp_format_i128_to(tmp, v));
}

static int bit_length(mp_u128 v)
{
	uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;

	if (hi != 0)
		return 128 - __builtin_clzll(hi);
	return lo != 0 ? 64 - __builtin_clzll(lo) : 0;
}

/* A / B (A > 0, B > 0) rounded half-even to 53 bits: take 54 quotient bits
   (53 plus the rounding bit) and a sticky bit for everything below. */
static double udiv_rounded(mp_u128 a, mp_u128 b)
{
	mp_u128 q = a / b, r = a % b;
	int len = bit_length(q), exp = 0;
	bool sticky, half;

	if (len > 54) {
		int shift = len - 54;

		sticky = (q & (((mp_u128)1 << shift) - 1)) != 0 || r != 0;
		q >>= shift;
		exp = shift;
	} else {
		/* Long division, one bit at a time; R < B <= 2**127 so 2R fits. */
		while (bit_length(q) < 54) {
			r <<= 1;
			q <<= 1;
			exp--;
			if (r >= b) {
				r -= b;
				q |= 1;
			}
		}
		sticky = r != 0;
	}
	half = (q & 1) != 0;
	q >>= 1;
	exp++;
	if (half && (sticky || (q & 1) != 0))
		q++;
	return ldexp((double)(uint64_t)q, exp);
}

double mp_format_int_div(mp_i128 a, mp_i128 b)
{
	bool negative = (a < 0) != (b < 0);
	double d;

	if (a > -EXACT_IN_DOUBLE && a < EXACT_IN_DOUBLE && b > -EXACT_IN_DOUBLE && b < EXACT_IN_DOUBLE)
		return (double)a / (double)b;
	d = a == 0 ? 0.0 : udiv_rounded(magnitude(a), magnitude(b));
	return negative ? -d : d;
}

/* Write NUM as f"{num:3.1f}" (glibc rounds %.1f exactly, as Python does) and UNIT. */
static void put_scaled(mp_out *out, double num, const char *unit)
{
	char text[64]; /* |num| < 2**127 / 1024**8 here, so at most 17 characters */
	int n = snprintf(text, sizeof text, "%3.1f%s", num, unit);

	mp_out_write(out, text, (size_t)n);
}

void mp_format_bytes(mp_out *out, mp_i128 n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB" };
	double num;

	/* The first test compares the int itself; Python turns it into a float
	   (correctly rounded) only at the first division. */
	if (n > -1024 && n < 1024) {
		put_scaled(out, (double)n, "B");
		return;
	}
	num = (double)n / 1024.0;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (fabs(num) < 1024.0) {
			put_scaled(out, num, units[i]);
			return;
		}
		num /= 1024.0;
	}
	put_scaled(out, num, "YiB");
}

static const char *const unit_names[] = { "auto", "B", "KiB", "MiB", "GiB" };

bool mp_units_parse(const char *text, enum mp_units *out)
{
	for (size_t i = 0; i < sizeof unit_names / sizeof unit_names[0]; i++)
		if (strcasecmp(text, unit_names[i]) == 0) {
			*out = (enum mp_units)i;
			return true;
		}
	return false;
}

const char *mp_units_name(enum mp_units u)
{
	return (size_t)u < sizeof unit_names / sizeof unit_names[0] ? unit_names[u] : "?";
}

void mp_format_size(mp_out *out, mp_i128 n, enum mp_units u)
{
	switch (u) {
	case MP_UNITS_B:
		mp_format_i128(out, n);
		mp_out_putc(out, 'B');
		return;
	case MP_UNITS_KIB:
	case MP_UNITS_MIB:
	case MP_UNITS_GIB:
		/* The exact quotient, rounded once: sizes past 2**53 stay right. */
		put_scaled(out, mp_format_int_div(n, (mp_i128)1 << (10 * (int)(u - MP_UNITS_B))), unit_names[u]);
		return;
	case MP_UNITS_AUTO:
	default:
		mp_format_bytes(out, n);
		return;
	}
}

void mp_format_report_free(mp_out *out, mp_i128 external, mp_i128 internal)
{
	mp_i128 total = external + internal;

	mp_format_bytes(out, total);
	if (total != 0)
		mp_out_printf(out, " (%.1f%% internal)", mp_format_int_div(internal, total) * 100);
}

const char *mp_format_torch_size(char *buf, size_t n, int64_t v)
{
	const char *sign = v < 0 ? "-" : "";
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	if (m <= 1024)
		snprintf(buf, n, "%s%llu bytes", sign, (unsigned long long)m);
	else if (m <= ((uint64_t)1 << 20))
		snprintf(buf, n, "%s%.2f KiB", sign, (double)m / 1024.0);
	else if (m <= ((uint64_t)1 << 30))
		snprintf(buf, n, "%s%.2f MiB", sign, (double)m / 1048576.0);
	else
		snprintf(buf, n, "%s%.2f GiB", sign, (double)m / 1073741824.0);
	return buf;
}

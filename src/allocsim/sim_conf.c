/* sim_conf.c - PYTORCH_CUDA_ALLOC_CONF: read as CUDAAllocatorConfig reads it (the same tokens, checks and
   defaults; roundup_power2_divisions' list form with its fill rules), and written back. */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

void mp_sim_conf_default(mp_sim_conf *c)
{
	*c = (mp_sim_conf){ .max_split_size = MP_SIM_NONE, .max_non_split_rounding = SIM_LARGE_BUFFER,
			    .large_segment_size = SIM_LARGE_BUFFER, .fraction = -1 };
}

/* The lexer: ',' ':' '[' ']' are tokens of their own, spaces vanish, the rest make words. */
#define MAX_TOKENS 256
typedef struct tokens {
	char text[MAX_TOKENS][64];
	size_t n;
} tokens;

static mp_err lex(const char *s, tokens *t, mp_diag *diag)
{
	size_t len = 0;

	t->n = 0;
	for (;; s++) {
		bool sep = *s == ',' || *s == ':' || *s == '[' || *s == ']' || *s == '\0';

		if (sep && len > 0) {
			t->text[t->n - 1][len] = '\0';
			len = 0;
		}
		if (*s == '\0')
			return MP_OK;
		if (*s == ' ')
			continue;
		if (sep || len == 0) {
			if (t->n == MAX_TOKENS)
				return mp_fail(diag, MP_E_LIMIT, "allocator settings: more than %d words", MAX_TOKENS);
			t->n++;
		}
		if (sep) {
			t->text[t->n - 1][0] = *s;
			t->text[t->n - 1][1] = '\0';
			continue;
		}
		if (len + 1 >= sizeof t->text[0])
			return mp_fail(diag, MP_E_LIMIT, "allocator settings: a word longer than %zu characters",
				       sizeof t->text[0] - 1);
		t->text[t->n - 1][len++] = *s;
	}
}

static bool is(const tokens *t, size_t i, const char *word)
{
	return i < t->n && strcmp(t->text[i], word) == 0;
}

/* A whole decimal number (what stoi/stoul accept, leading digits only, as they do). */
static bool number(const tokens *t, size_t i, long long *out)
{
	char *end;

	if (i >= t->n || !(isdigit((unsigned char)t->text[i][0]) || t->text[i][0] == '-' || t->text[i][0] == '+'))
		return false;
	errno = 0;
	*out = strtoll(t->text[i], &end, 10);
	return errno == 0 && end != t->text[i];
}

static bool power_of_two(long long v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

static int floor_log2(unsigned long long v)
{
	return 63 - __builtin_clzll(v);
}

/* What one release's parser takes: its keys and its checks. */
typedef struct parser {
	mp_sim_release r;
	int64_t min_split;   /* the least max_split_size_mb / max_non_split_rounding_mb it takes */
	bool min_inclusive;  /* that least value itself allowed (2.10 on) */
	bool zero_divisions; /* a division of 0 in the list (2.4 on) */
	bool fill_after;     /* '>' fills from after the last interval named (2.10 on), not from it */
} parser;

static bool at_least(mp_sim_release r, int major, int minor)
{
	return r.major > major || (r.major == major && r.minor >= minor);
}

/* A size in MiB of at least the parser's minimum (max_split_size_mb, max_non_split_rounding_mb). */
static mp_err mib_setting(const parser *ps, const tokens *t, size_t *i, const char *key, int64_t *out, mp_diag *diag)
{
	long long v, least = ps->min_split / MP_SIM_MIB;

	if (!is(t, ++*i, ":"))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expected ':' after %s", key);
	if (!number(t, ++*i, &v))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expecting %s value", key);
	if (ps->min_inclusive ? v < least : v <= least)
		return mp_fail(diag, MP_E_USAGE, "allocator settings: %s too small, must be %s %lld", key,
			       ps->min_inclusive ? ">=" : ">", least);
	if (v > (INT64_MAX / MP_SIM_MIB))
		v = INT64_MAX / MP_SIM_MIB;
	*out = (int64_t)v * MP_SIM_MIB;
	return MP_OK;
}

static mp_err divisions(const parser *ps, mp_sim_conf *c, const tokens *t, size_t *i, mp_diag *diag)
{
	long long v, key;
	size_t last = 0;
	bool first = true;

	if (!is(t, ++*i, ":"))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expected ':' after roundup_power2_divisions");
	if (!is(t, ++*i, "[")) {
		if (!number(t, *i, &v) || !power_of_two(v))
			return mp_fail(diag, MP_E_USAGE, "allocator settings: roundup_power2_divisions must be a power "
				       "of 2");
		for (size_t k = 0; k < MP_SIM_INTERVALS; k++)
			c->divisions[k] = v;
		return MP_OK;
	}
	while (++*i < t->n && !is(t, *i, "]")) {
		size_t at = *i;

		if (!is(t, ++*i, ":") || !number(t, ++*i, &v))
			return mp_fail(diag, MP_E_USAGE, "allocator settings: error parsing roundup_power2_divisions");
		if (!power_of_two(v) && !(v == 0 && ps->zero_divisions))
			return mp_fail(diag, MP_E_USAGE, "allocator settings: roundup divisions must be a power of 2%s",
				       ps->zero_divisions ? " or 0" : "");
		if (is(t, at, ">")) {
			/* from the last interval named (itself included, up to 2.9) to the end */
			for (size_t k = last + ps->fill_after; k < MP_SIM_INTERVALS; k++)
				c->divisions[k] = v;
		} else {
			if (!number(t, at, &key) || !power_of_two(key))
				return mp_fail(diag, MP_E_USAGE, "allocator settings: roundup intervals must be powers "
					       "of 2");
			size_t k = (size_t)floor_log2((unsigned long long)key);

			if (k > MP_SIM_INTERVALS - 1)
				k = MP_SIM_INTERVALS - 1;
			if (first) {
				/* the first interval named also sets every interval below it */
				for (size_t j = 0; j < k; j++)
					c->divisions[j] = v;
				first = false;
			}
			c->divisions[k] = v;
			last = k;
		}
		if (*i + 1 < t->n && !is(t, *i + 1, "]") && !is(t, ++*i, ","))
			return mp_fail(diag, MP_E_USAGE, "allocator settings: expected ',' in roundup_power2_divisions");
	}
	if (*i >= t->n)
		return mp_fail(diag, MP_E_USAGE, "allocator settings: roundup_power2_divisions list not closed");
	return MP_OK;
}

static mp_err boolean(const tokens *t, size_t *i, const char *key, bool *out, mp_diag *diag)
{
	if (!is(t, ++*i, ":"))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expected ':' after %s", key);
	++*i;
	if (!is(t, *i, "True") && !is(t, *i, "False"))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expected a single True/False argument for %s",
			       key);
	*out = is(t, *i, "True");
	return MP_OK;
}

/* A number in (LO, HI) (garbage_collection_threshold) or [LO, HI] (per_process_memory_fraction). */
static mp_err fraction(const tokens *t, size_t *i, const char *key, double lo, double hi, bool closed, double *out,
		       mp_diag *diag)
{
	char *end;

	if (!is(t, ++*i, ":") || ++*i >= t->n)
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expecting %s value", key);
	*out = strtod(t->text[*i], &end);
	if (end == t->text[*i] || (closed ? !(*out >= lo && *out <= hi) : !(*out > lo && *out < hi)))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: %s must be between %g and %g", key, lo, hi);
	return MP_OK;
}

/* The keys each release's parser knows, from the release that added them. HOST: host (pinned) memory or
   bookkeeping only, read and ignored. */
enum key_kind { K_SPLIT, K_NON_SPLIT, K_LARGE_SEGMENT, K_GC, K_DIVISIONS, K_BACKEND, K_EXPANDABLE, K_FRACTION,
		K_THROW, K_BOOL_IGNORED, K_NUMBER_IGNORED, K_TEXT_IGNORED };
static const struct {
	const char *name;
	enum key_kind kind;
	int minor; /* 2.MINOR added it */
} keys[] = {
	{ "max_split_size_mb", K_SPLIT, 0 },
	{ "garbage_collection_threshold", K_GC, 0 },
	{ "roundup_power2_divisions", K_DIVISIONS, 0 },
	{ "backend", K_BACKEND, 0 },
	{ "expandable_segments", K_EXPANDABLE, 1 },
	{ "release_lock_on_cudamalloc", K_BOOL_IGNORED, 2 },
	{ "release_lock_on_hipmalloc", K_BOOL_IGNORED, 2 },
	{ "pinned_use_cuda_host_register", K_BOOL_IGNORED, 2 },
	{ "pinned_use_hip_host_register", K_BOOL_IGNORED, 2 },
	{ "pinned_num_register_threads", K_NUMBER_IGNORED, 2 },
	{ "max_non_split_rounding_mb", K_NON_SPLIT, 6 },
	{ "pinned_use_background_threads", K_BOOL_IGNORED, 6 },
	{ "graph_capture_record_stream_reuse", K_BOOL_IGNORED, 9 },
	{ "per_process_memory_fraction", K_FRACTION, 10 },
	{ "pinned_reserve_segment_size_mb", K_NUMBER_IGNORED, 10 },
	{ "large_segment_size_mb", K_LARGE_SEGMENT, 11 },
	{ "throw_on_cudamalloc_oom", K_THROW, 12 },
	{ "pinned_free_catch_all", K_BOOL_IGNORED, 12 },
	{ "pinned_max_round_threshold_mb", K_NUMBER_IGNORED, 13 },
	{ "pinned_max_cached_size_mb", K_NUMBER_IGNORED, 13 },
	{ "expandable_segments_handle_type", K_TEXT_IGNORED, 13 },
};

static int key_of(const parser *ps, const char *name)
{
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (strcmp(keys[k].name, name) == 0 && at_least(ps->r, 2, keys[k].minor))
			return (int)k;
	return -1;
}

/* 2.11's large_segment_size_mb is read before the rest (the other sizes are checked against it). */
static mp_err large_segment(const tokens *t, mp_sim_conf *c, mp_diag *diag)
{
	long long v;

	for (size_t i = 0; i + 2 < t->n; i++)
		if (is(t, i, "large_segment_size_mb") && is(t, i + 1, ":")) {
			if (!number(t, i + 2, &v) || v <= 10 || v > INT64_MAX / MP_SIM_MIB)
				return mp_fail(diag, MP_E_USAGE, "allocator settings: large_segment_size_mb must be above 10");
			c->large_segment_size = (int64_t)v * MP_SIM_MIB;
		}
	return MP_OK;
}

static mp_err one_key(const parser *ps, mp_sim_conf *c, const tokens *t, size_t *i, mp_diag *diag)
{
	const char *name = t->text[*i];
	int k = key_of(ps, name);
	bool ignored_bool;
	double ignored_number;
	long long v;

	if (k < 0)
		return mp_fail(diag, MP_E_USAGE, "allocator settings: unrecognized option '%s' (PyTorch %d.%d)", name,
			       ps->r.major, ps->r.minor);
	switch (keys[k].kind) {
	case K_SPLIT:
		return mib_setting(ps, t, i, name, &c->max_split_size, diag);
	case K_NON_SPLIT:
		return mib_setting(ps, t, i, name, &c->max_non_split_rounding, diag);
	case K_LARGE_SEGMENT:
		*i += 2; /* read first (large_segment) */
		return MP_OK;
	case K_GC:
		return fraction(t, i, name, 0.0, 1.0, false, &c->gc_threshold, diag);
	case K_FRACTION:
		return fraction(t, i, name, 0.0, 1.0, true, &c->fraction, diag);
	case K_DIVISIONS:
		return divisions(ps, c, t, i, diag);
	case K_EXPANDABLE:
		return boolean(t, i, name, &c->expandable, diag);
	case K_THROW:
		return boolean(t, i, name, &c->throw_on_cudamalloc_oom, diag);
	case K_BACKEND:
		if (!is(t, ++*i, ":") || ++*i >= t->n)
			return mp_fail(diag, MP_E_USAGE, "allocator settings: error parsing backend value");
		if (is(t, *i, "cudaMallocAsync"))
			return mp_fail(diag, MP_E_UNSUPPORTED, "allocator settings: backend:cudaMallocAsync is CUDA's own "
				       "allocator, not the caching allocator memprof models");
		if (!is(t, *i, "native"))
			return mp_fail(diag, MP_E_USAGE, "allocator settings: unknown backend '%s' (native or "
				       "cudaMallocAsync)", t->text[*i]);
		return MP_OK;
	case K_BOOL_IGNORED:
		if (strncmp(name, "release_lock_on_", 16) == 0)
			return boolean(t, i, name, &c->release_lock_on_cudamalloc, diag);
		return boolean(t, i, name, &ignored_bool, diag);
	case K_NUMBER_IGNORED:
		if (!is(t, ++*i, ":") || !number(t, ++*i, &v) || v < 0)
			return mp_fail(diag, MP_E_USAGE, "allocator settings: %s needs a number", name);
		(void)ignored_number;
		return MP_OK;
	case K_TEXT_IGNORED:
		if (!is(t, ++*i, ":") || ++*i >= t->n)
			return mp_fail(diag, MP_E_USAGE, "allocator settings: %s needs a value", name);
		return MP_OK;
	}
	return MP_OK;
}

mp_err mp_sim_conf_parse(mp_sim_conf *c, const char *text, mp_sim_release r, mp_diag *diag)
{
	tokens *t = malloc(sizeof *t);
	parser ps = { .r = r, .zero_divisions = at_least(r, 2, 4), .fill_after = at_least(r, 2, 10),
		      .min_inclusive = at_least(r, 2, 10) };
	mp_err err;

	if (t == NULL)
		return MP_E_NOMEM;
	if ((err = lex(text, t, diag)) != MP_OK)
		goto out;
	/* every parse starts over from these, whatever was set before */
	c->max_split_size = MP_SIM_NONE;
	memset(c->divisions, 0, sizeof c->divisions);
	c->gc_threshold = 0;
	if (at_least(r, 2, 11) && (err = large_segment(t, c, diag)) != MP_OK)
		goto out;
	if (at_least(r, 2, 11))
		c->max_non_split_rounding = c->large_segment_size; /* reset on every parse from 2.11 */
	ps.min_split = at_least(r, 2, 11) ? c->large_segment_size : SIM_LARGE_BUFFER;
	for (size_t i = 0; i < t->n && err == MP_OK; i++) {
		err = one_key(&ps, c, t, &i, diag);
		if (err == MP_OK && i + 1 < t->n && !is(t, ++i, ","))
			err = mp_fail(diag, MP_E_USAGE, "allocator settings: expected ',' after '%s'", t->text[i - 1]);
	}
out:
	free(t);
	return err;
}

/* Append "KEY:VALUE" (VALUE printf'd) to BUF at *AT. */
static void put(char *buf, size_t n, size_t *at, const char *fmt, ...) MP_PRINTF(4, 5);
static void put(char *buf, size_t n, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*at >= n)
		return;
	if (*at > 0 && *at + 1 < n)
		buf[(*at)++] = ',';
	va_start(ap, fmt);
	w = vsnprintf(buf + *at, n - *at, fmt, ap);
	va_end(ap);
	*at = w < 0 ? n : *at + (size_t)w;
}

const char *mp_sim_conf_format(const mp_sim_conf *c, char *buf, size_t n)
{
	size_t at = 0;
	bool any = false, same = true;

	if (n == 0)
		return buf;
	buf[0] = '\0';
	if (c->expandable)
		put(buf, n, &at, "expandable_segments:True");
	if (c->max_split_size != MP_SIM_NONE)
		put(buf, n, &at, "max_split_size_mb:%lld", (long long)(c->max_split_size / MP_SIM_MIB));
	if (c->large_segment_size != SIM_LARGE_BUFFER)
		put(buf, n, &at, "large_segment_size_mb:%lld", (long long)(c->large_segment_size / MP_SIM_MIB));
	if (c->max_non_split_rounding != c->large_segment_size)
		put(buf, n, &at, "max_non_split_rounding_mb:%lld", (long long)(c->max_non_split_rounding / MP_SIM_MIB));
	if (c->fraction >= 0)
		put(buf, n, &at, "per_process_memory_fraction:%g", c->fraction);
	if (c->throw_on_cudamalloc_oom)
		put(buf, n, &at, "throw_on_cudamalloc_oom:True");
	if (c->gc_threshold > 0)
		put(buf, n, &at, "garbage_collection_threshold:%g", c->gc_threshold);
	for (size_t k = 0; k < MP_SIM_INTERVALS; k++) {
		any |= c->divisions[k] != 0;
		same &= c->divisions[k] == c->divisions[0];
	}
	if (any && same) {
		put(buf, n, &at, "roundup_power2_divisions:%lld", (long long)c->divisions[0]);
	} else if (any) {
		/* each interval by its size in MiB; the list form restates every one */
		put(buf, n, &at, "roundup_power2_divisions:[");
		for (size_t k = 0; k < MP_SIM_INTERVALS && at < n; k++) {
			int w = snprintf(buf + at, n - at, "%s%llu:%lld", k ? "," : "", 1ULL << k, (long long)c->divisions[k]);

			at = w < 0 ? n : at + (size_t)w;
		}
		if (at + 1 < n) {
			buf[at++] = ']';
			buf[at] = '\0';
		}
	}
	if (c->release_lock_on_cudamalloc)
		put(buf, n, &at, "release_lock_on_cudamalloc:True");
	if (at >= n && n > 0)
		buf[n - 1] = '\0';
	return buf;
}

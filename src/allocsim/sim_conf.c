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
	*c = (mp_sim_conf){ .max_split_size = MP_SIM_NONE, .max_non_split_rounding = SIM_LARGE_BUFFER };
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

/* A size in MiB that must be above 20 (max_split_size_mb, max_non_split_rounding_mb). */
static mp_err mib_above_20(const tokens *t, size_t *i, const char *key, int64_t *out, mp_diag *diag)
{
	long long v;

	if (!is(t, ++*i, ":"))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expected ':' after %s", key);
	if (!number(t, ++*i, &v))
		return mp_fail(diag, MP_E_USAGE, "allocator settings: expecting %s value", key);
	if (v <= SIM_LARGE_BUFFER / MP_SIM_MIB)
		return mp_fail(diag, MP_E_USAGE, "allocator settings: %s too small, must be > %lld", key,
			       (long long)(SIM_LARGE_BUFFER / MP_SIM_MIB));
	if (v > (INT64_MAX / MP_SIM_MIB))
		v = INT64_MAX / MP_SIM_MIB;
	*out = (int64_t)v * MP_SIM_MIB;
	return MP_OK;
}

static mp_err divisions(mp_sim_conf *c, const tokens *t, size_t *i, mp_diag *diag)
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
		if (v != 0 && !power_of_two(v))
			return mp_fail(diag, MP_E_USAGE, "allocator settings: roundup divisions must be a power of 2 "
				       "or 0");
		if (is(t, at, ">")) {
			/* from the last interval named (itself included) to the end */
			for (size_t k = last; k < MP_SIM_INTERVALS; k++)
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

mp_err mp_sim_conf_parse(mp_sim_conf *c, const char *text, mp_diag *diag)
{
	tokens *t = malloc(sizeof *t);
	mp_err err = MP_OK;
	bool ignored;

	if (t == NULL)
		return MP_E_NOMEM;
	if ((err = lex(text, t, diag)) != MP_OK)
		goto out;
	/* parseArgs starts from these defaults, whatever was set before */
	c->max_split_size = MP_SIM_NONE;
	memset(c->divisions, 0, sizeof c->divisions);
	c->gc_threshold = 0;
	for (size_t i = 0; i < t->n && err == MP_OK; i++) {
		const char *key = t->text[i];

		if (strcmp(key, "max_split_size_mb") == 0) {
			err = mib_above_20(t, &i, key, &c->max_split_size, diag);
		} else if (strcmp(key, "max_non_split_rounding_mb") == 0) {
			err = mib_above_20(t, &i, key, &c->max_non_split_rounding, diag);
		} else if (strcmp(key, "garbage_collection_threshold") == 0) {
			char *end;

			if (!is(t, ++i, ":") || ++i >= t->n) {
				err = mp_fail(diag, MP_E_USAGE, "allocator settings: expecting garbage_collection_threshold "
					      "value");
				break;
			}
			c->gc_threshold = strtod(t->text[i], &end);
			if (end == t->text[i] || !(c->gc_threshold > 0) || !(c->gc_threshold < 1.0))
				err = mp_fail(diag, MP_E_USAGE, "allocator settings: garbage_collection_threshold must be "
					      "between 0.0 and 1.0");
		} else if (strcmp(key, "roundup_power2_divisions") == 0) {
			err = divisions(c, t, &i, diag);
		} else if (strcmp(key, "expandable_segments") == 0) {
			err = boolean(t, &i, key, &c->expandable, diag);
		} else if (strcmp(key, "release_lock_on_cudamalloc") == 0 || strcmp(key, "release_lock_on_hipmalloc") == 0) {
			err = boolean(t, &i, key, &c->release_lock_on_cudamalloc, diag);
		} else if (strcmp(key, "backend") == 0) {
			if (!is(t, ++i, ":") || ++i >= t->n)
				err = mp_fail(diag, MP_E_USAGE, "allocator settings: error parsing backend value");
			else if (is(t, i, "cudaMallocAsync"))
				err = mp_fail(diag, MP_E_UNSUPPORTED, "allocator settings: backend:cudaMallocAsync is CUDA's "
					      "own allocator, not the caching allocator memprof models");
			else if (!is(t, i, "native"))
				err = mp_fail(diag, MP_E_USAGE, "allocator settings: unknown backend '%s' (native or "
					      "cudaMallocAsync)", t->text[i]);
		} else if (strcmp(key, "pinned_use_cuda_host_register") == 0 ||
			   strcmp(key, "pinned_use_hip_host_register") == 0 ||
			   strcmp(key, "pinned_use_background_threads") == 0) {
			err = boolean(t, &i, key, &ignored, diag); /* host memory: no decision of the model */
		} else if (strcmp(key, "pinned_num_register_threads") == 0) {
			long long v;

			if (!is(t, ++i, ":") || !number(t, ++i, &v) || !power_of_two(v))
				err = mp_fail(diag, MP_E_USAGE, "allocator settings: pinned_num_register_threads must be a "
					      "power of 2");
		} else {
			err = mp_fail(diag, MP_E_USAGE, "allocator settings: unrecognized option '%s'", key);
		}
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
	if (c->max_non_split_rounding != SIM_LARGE_BUFFER)
		put(buf, n, &at, "max_non_split_rounding_mb:%lld", (long long)(c->max_non_split_rounding / MP_SIM_MIB));
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

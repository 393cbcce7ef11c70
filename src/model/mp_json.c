/* mp_json.c - generic values to and from memprof's tagged JSON, without recursion. */
#include "mp_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_path.h"
#include "mp_utf8.h"

/* Integers beyond 2^53 lose precision in a double, the type cJSON keeps. */
#define EXACT_INT_MAX ((int64_t)1 << 53)
/* Ints of more bytes than this have more than MP_JSON_MAX_INT_DIGITS digits. */
#define MAX_INT_BYTES 1800

/* The tags, as object keys. A real dict whose only key is one of them is
   written in the __dict__ form so that it cannot be mistaken for a tag. */
enum tag { TAG_TUPLE, TAG_BYTES, TAG_INT, TAG_FLOAT, TAG_DICT, TAG_STR, TAG_NONE };
static const char *const tag_names[] = { "__tuple__", "__bytes__", "__int__",
					 "__float__", "__dict__",  "__str__" };

static enum tag tag_of(const char *s, size_t n)
{
	for (int t = 0; t < TAG_NONE; t++)
		if (strlen(tag_names[t]) == n && memcmp(s, tag_names[t], n) == 0)
			return (enum tag)t;
	return TAG_NONE;
}

/* Whether a heap str can be a plain JSON string: cJSON truncates at NUL and
   cannot read lone surrogates, so strings holding either go in __str__. */
static bool plain_str(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0 || (c == 0xed && i + 1 < n && (unsigned char)s[i + 1] >= 0xa0))
			return false;
	}
	return true;
}

/* ---- base64 (RFC 4648, padded) */

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_base64(mp_out *out, const unsigned char *b, size_t n)
{
	char *p = mp_out_reserve(out, (n + 2) / 3 * 4);

	if (p == NULL)
		return;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)b[i] << 16;

		if (i + 1 < n)
			w |= (uint32_t)b[i + 1] << 8;
		if (i + 2 < n)
			w |= b[i + 2];
		*p++ = b64_chars[w >> 18];
		*p++ = b64_chars[(w >> 12) & 63];
		*p++ = i + 1 < n ? b64_chars[(w >> 6) & 63] : '=';
		*p++ = i + 2 < n ? b64_chars[w & 63] : '=';
	}
	out->len += (n + 2) / 3 * 4;
}

static int b64_value(unsigned char c)
{
	const char *p = c ? strchr(b64_chars, c) : NULL;

	return p ? (int)(p - b64_chars) : -1;
}

/* Decode the padded base64 S (N chars) into a malloc'd buffer. */
static bool base64_decode(const char *s, size_t n, unsigned char **out, size_t *outlen)
{
	size_t pad = n >= 1 && s[n - 1] == '=' ? (n >= 2 && s[n - 2] == '=' ? 2 : 1) : 0;
	unsigned char *b;
	size_t o = 0;

	if (n % 4 != 0 || (b = malloc(n / 4 * 3 + 1)) == NULL)
		return false;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t w = 0;

		for (size_t j = 0; j < 4; j++) {
			int v = (i + j >= n - pad) ? 0 : b64_value((unsigned char)s[i + j]);

			if (v < 0) {
				free(b);
				return false;
			}
			w = (w << 6) | (uint32_t)v;
		}
		b[o++] = (unsigned char)(w >> 16);
		b[o++] = (unsigned char)(w >> 8);
		b[o++] = (unsigned char)w;
	}
	*out = b;
	*outlen = o - pad;
	return true;
}

/* ---- big ints in decimal */

/* The int in LE (N bytes of two's complement) in decimal, as a malloc'd
   string; NULL when out of memory. */
static char *int_to_decimal(const unsigned char *le, size_t n)
{
	bool neg = n > 0 && (le[n - 1] & 0x80);
	size_t nlimbs = n * 8 / 29 + 2, used = 0, at = 0;
	uint32_t *limb = calloc(nlimbs, sizeof *limb); /* base 1e9, low limb first */
	unsigned char *mag = malloc(n + 1);
	char *s = malloc(nlimbs * 9 + 2);
	unsigned carry = 1;

	if (limb == NULL || mag == NULL || s == NULL) {
		free(limb);
		free(mag);
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) { /* the magnitude: ~x + 1 when negative */
		unsigned x = neg ? (~le[i] & 0xffu) + carry : le[i];

		mag[i] = (unsigned char)x;
		carry = neg ? x >> 8 : 0;
	}
	for (size_t i = n; i-- > 0;) {
		uint64_t c = mag[i];

		for (size_t j = 0; j < used || c; j++) {
			uint64_t x = (j < used ? (uint64_t)limb[j] << 8 : 0) + c;

			limb[j] = (uint32_t)(x % 1000000000u);
			c = x / 1000000000u;
			if (j >= used)
				used = j + 1;
		}
	}
	if (neg)
		s[at++] = '-';
	at += (size_t)sprintf(s + at, "%u", used ? limb[used - 1] : 0u);
	for (size_t j = used > 0 ? used - 1 : 0; j-- > 0;)
		at += (size_t)sprintf(s + at, "%09u", limb[j]);
	free(limb);
	free(mag);
	return s;
}

/* Parse the decimal int S (N chars, optional '-') into HEAP. */
static mp_err decimal_to_int(mp_heap *heap, const char *s, size_t n, mp_val *out)
{
	bool neg = n > 0 && s[0] == '-';
	size_t ndig = n - neg, len = ndig * 10 / 24 + 2;
	unsigned char *le;
	mp_err err;

	if (ndig == 0 || ndig > MP_JSON_MAX_INT_DIGITS)
		return ndig == 0 ? MP_E_CORRUPT : MP_E_LIMIT;
	for (size_t i = neg; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return MP_E_CORRUPT;
	le = calloc(len, 1);
	if (le == NULL)
		return MP_E_NOMEM;
	for (size_t i = neg; i < n; i++) {
		unsigned carry = (unsigned)(s[i] - '0');

		for (size_t j = 0; j < len; j++) {
			unsigned x = le[j] * 10u + carry;

			le[j] = (unsigned char)x;
			carry = x >> 8;
		}
	}
	if (neg) { /* two's complement; the top byte stays clear, so the sign is right */
		unsigned carry = 1;

		for (size_t j = 0; j < len; j++) {
			unsigned x = (~le[j] & 0xffu) + carry;

			le[j] = (unsigned char)x;
			carry = x >> 8;
		}
	}
	err = mp_heap_int_le(heap, le, len, out);
	free(le);
	return err;
}

/* ================= writing ================= */

enum wkind { W_LIST, W_TUPLE, W_OBJECT, W_PAIRS, W_PAIR };

/* A container being written. */
struct wframe {
	const mp_val *items;
	size_t n; /* handles (W_OBJECT and W_PAIRS: two per item) */
	size_t i; /* next handle */
	uint8_t kind;
	uint8_t levels; /* JSON nesting it adds: 2 for a tagged form */
	bool pretty;    /* an item per line */
};

struct jwriter {
	const mp_heap *heap;
	mp_out *out;
	mp_diag *diag;
	struct wframe *stack;
	size_t depth, cap;
	size_t jdepth; /* JSON nesting of the open frames */
};

static const char *const closers[] = { "]", "]}", "}", "]}", "]" };

static const char *writer_where(const struct jwriter *w, mp_path *p)
{
	for (size_t d = 0; d < w->depth; d++) {
		const struct wframe *f = &w->stack[d];

		if (f->kind == W_OBJECT)
			mp_path_key(p, w->heap, f->items[f->i - 2], f->i / 2 - 1);
		else if (f->kind == W_PAIRS)
			mp_path_add(p, "[%zu]", f->i / 2 - 1);
		else
			mp_path_add(p, "[%zu]", f->i - 1);
	}
	return mp_path_str(p);
}

/* Fail with "json: cannot write WHAT at PATH: WHY". */
static mp_err wfail(struct jwriter *w, mp_err err, const char *what, const char *why)
{
	mp_path p = { .at = 0 };

	return mp_fail(w->diag, err, "json: cannot write %s at %s: %s", what, writer_where(w, &p),
		       why);
}

static void put_string(mp_out *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	mp_out_putc(out, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		mp_out_write(out, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': mp_out_write(out, "\\\"", 2); break;
		case '\\': mp_out_write(out, "\\\\", 2); break;
		case '\n': mp_out_write(out, "\\n", 2); break;
		case '\r': mp_out_write(out, "\\r", 2); break;
		case '\t': mp_out_write(out, "\\t", 2); break;
		case '\b': mp_out_write(out, "\\b", 2); break;
		case '\f': mp_out_write(out, "\\f", 2); break;
		default: mp_out_write(out, esc, sizeof esc); break;
		}
	}
	mp_out_write(out, s + run, n - run);
	mp_out_putc(out, '"');
}

/* Open a tagged scalar {"__tag__": ; the caller writes the content and "}". */
static mp_err open_tag(struct jwriter *w, enum tag t)
{
	if (w->jdepth + 1 > MP_JSON_MAX_DEPTH)
		return wfail(w, MP_E_LIMIT, "the value", "nested deeper than 1000 levels (cJSON's limit)");
	mp_out_puts(w->out, "{\"");
	mp_out_puts(w->out, tag_names[t]);
	mp_out_puts(w->out, "\": ");
	return MP_OK;
}

/* An int beyond +-2^53, in decimal under __int__ (cJSON would round it). */
static mp_err put_int_tag(struct jwriter *w, const unsigned char *le, size_t n)
{
	char *dec;
	mp_err err;

	if (n > MAX_INT_BYTES)
		return wfail(w, MP_E_RANGE, "the int", "it has more than 4300 digits");
	dec = int_to_decimal(le, n);
	if (dec == NULL)
		return mp_fail(w->diag, MP_E_NOMEM, "json: out of memory");
	err = strlen(dec) - (dec[0] == '-') > MP_JSON_MAX_INT_DIGITS
		      ? wfail(w, MP_E_RANGE, "the int", "it has more than 4300 digits")
		      : open_tag(w, TAG_INT);
	if (err == MP_OK) {
		mp_out_putc(w->out, '"');
		mp_out_puts(w->out, dec);
		mp_out_puts(w->out, "\"}");
	}
	free(dec);
	return err;
}

static mp_err put_int(struct jwriter *w, mp_val v)
{
	int64_t i;
	unsigned char le[8];
	size_t n;
	const char *big;

	if (mp_heap_get_i64(w->heap, v, &i) && i >= -EXACT_INT_MAX && i <= EXACT_INT_MAX) {
		mp_out_i64(w->out, i);
		return MP_OK;
	}
	if (mp_val_type(v) == MP_T_INT) {
		for (int k = 0; k < 8; k++)
			le[k] = (unsigned char)((uint64_t)i >> (8 * k));
		return put_int_tag(w, le, 8);
	}
	big = mp_heap_atom(w->heap, v, &n);
	return put_int_tag(w, (const unsigned char *)big, n);
}

/* The shortest decimal that reads back as D, always looking like a float. */
static mp_err put_float(struct jwriter *w, double d)
{
	char buf[40];
	mp_err err;

	if (!isfinite(d)) {
		err = open_tag(w, TAG_FLOAT);
		if (err == MP_OK)
			mp_out_puts(w->out, isnan(d) ? "\"nan\"}" : d > 0 ? "\"inf\"}" : "\"-inf\"}");
		return err;
	}
	for (int prec = 1; prec <= 17; prec++) { /* Python's repr: the shortest that reads back */
		snprintf(buf, sizeof buf - 2, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (strpbrk(buf, ".e") == NULL)
		strcat(buf, ".0");
	mp_out_puts(w->out, buf);
	return MP_OK;
}

/* A str or bytes atom: plain, or base64 under __str__ / __bytes__. */
static mp_err put_text(struct jwriter *w, mp_val v)
{
	size_t n;
	const char *s = mp_heap_atom(w->heap, v, &n);
	bool is_str = mp_val_type(v) == MP_T_STR;
	mp_err err;

	if (is_str && plain_str(s, n)) {
		put_string(w->out, s, n);
		return MP_OK;
	}
	err = open_tag(w, is_str ? TAG_STR : TAG_BYTES);
	if (err != MP_OK)
		return err;
	mp_out_putc(w->out, '"');
	put_base64(w->out, (const unsigned char *)s, n);
	mp_out_puts(w->out, "\"}");
	return MP_OK;
}

/* Whether dict D can be a plain JSON object: plain str keys, and not a lone
   tag-named key. */
static bool plain_dict(const mp_heap *heap, const mp_val *items, size_t npairs)
{
	for (size_t i = 0; i < npairs; i++) {
		size_t n;
		const char *s = mp_heap_atom(heap, items[2 * i], &n);

		if (mp_val_type(items[2 * i]) != MP_T_STR || !plain_str(s, n))
			return false;
		if (npairs == 1 && tag_of(s, n) != TAG_NONE)
			return false;
	}
	return true;
}

static mp_err push_wframe(struct jwriter *w, const mp_val *items, size_t n, enum wkind kind,
			  bool pretty)
{
	static const char *const openers[] = { "[", "{\"__tuple__\": [", "{", "{\"__dict__\": [",
					       "[" };
	uint8_t levels = (kind == W_TUPLE || kind == W_PAIRS) ? 2 : 1;
	struct wframe *f;

	if (w->jdepth + levels > MP_JSON_MAX_DEPTH)
		return wfail(w, MP_E_LIMIT, "the value", "nested deeper than 1000 levels (cJSON's limit)");
	if (w->depth == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;

		f = realloc(w->stack, cap * sizeof *f);
		if (f == NULL)
			return mp_fail(w->diag, MP_E_NOMEM, "json: out of memory");
		w->stack = f;
		w->cap = cap;
	}
	f = &w->stack[w->depth++];
	*f = (struct wframe){ .items = items, .n = n, .kind = (uint8_t)kind, .levels = levels,
			      .pretty = pretty };
	w->jdepth += levels;
	mp_out_puts(w->out, openers[kind]);
	return MP_OK;
}

static mp_err put_container(struct jwriter *w, mp_val v)
{
	const mp_val *items = mp_heap_items(w->heap, v);
	size_t n = mp_heap_len(w->heap, v);
	/* Readable at the top: the root dict and the top lists of containers
	   (segments, device_traces and each device's trace) take a line per item. */
	bool pretty = w->depth <= 2 && n > 0 && mp_val_is_container(items[0]);

	switch (mp_val_type(v)) {
	case MP_T_LIST:
		return push_wframe(w, items, n, W_LIST, pretty);
	case MP_T_TUPLE:
		return push_wframe(w, items, n, W_TUPLE, false);
	default:
		if (plain_dict(w->heap, items, n))
			return push_wframe(w, items, 2 * n, W_OBJECT, w->depth == 0 && n > 0);
		return push_wframe(w, items, 2 * n, W_PAIRS, false);
	}
}

static mp_err put_value(struct jwriter *w, mp_val v)
{
	v = mp_heap_resolve(w->heap, v);
	switch (mp_val_type(v)) {
	case MP_T_NONE: mp_out_puts(w->out, "null"); return MP_OK;
	case MP_T_BOOL: mp_out_puts(w->out, v == MP_TRUE ? "true" : "false"); return MP_OK;
	case MP_T_INT:
	case MP_T_BIGINT: return put_int(w, v);
	case MP_T_FLOAT: return put_float(w, mp_heap_float_value(w->heap, v));
	case MP_T_STR:
	case MP_T_BYTES: return put_text(w, v);
	case MP_T_LIST:
	case MP_T_TUPLE:
	case MP_T_DICT: return put_container(w, v);
	default: return wfail(w, MP_E_TYPE, "a missing value", "MP_ABSENT is no Python object");
	}
}

static void newline(struct jwriter *w, size_t indent)
{
	char *p = mp_out_reserve(w->out, 1 + 2 * indent);

	if (p == NULL)
		return;
	p[0] = '\n';
	memset(p + 1, ' ', 2 * indent);
	w->out->len += 1 + 2 * indent;
}

/* Advance the innermost container by one item (or close it). */
static mp_err wstep(struct jwriter *w)
{
	struct wframe *f = &w->stack[w->depth - 1];
	size_t k;
	const char *key;

	if (f->i == f->n) {
		if (f->pretty)
			newline(w, w->depth - 1);
		mp_out_puts(w->out, closers[f->kind]);
		w->jdepth -= f->levels;
		w->depth--;
		return MP_OK;
	}
	if (f->i > 0)
		mp_out_putc(w->out, ',');
	if (f->pretty)
		newline(w, w->depth);
	else if (f->i > 0)
		mp_out_putc(w->out, ' ');
	switch (f->kind) {
	case W_OBJECT:
		key = mp_heap_atom(w->heap, f->items[f->i], &k);
		put_string(w->out, key, k);
		mp_out_puts(w->out, ": ");
		f->i += 2;
		return put_value(w, f->items[f->i - 1]);
	case W_PAIRS:
		f->i += 2;
		if (!mp_heap_hashable(w->heap, f->items[f->i - 2]))
			return wfail(w, MP_E_TYPE, "the dict key", "a list or dict cannot be a key in Python");
		return push_wframe(w, f->items + f->i - 2, 2, W_PAIR, false);
	default:
		return put_value(w, f->items[f->i++]); /* may move the stack: F is dead after */
	}
}

/* ---- the size of the expansion */

/* A container whose expanded size is being summed. */
struct sframe {
	const mp_val *items;
	size_t n, i; /* handles, next handle */
	size_t cont; /* index of the container's handle */
	uint64_t sum;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Make MEMO (*CAP entries) cover index I. */
static bool memo_cover(uint64_t **memo, size_t *cap, size_t i)
{
	size_t ncap = *cap ? *cap : 4096;
	uint64_t *nm;

	if (i < *cap)
		return true;
	while (ncap <= i)
		ncap *= 2;
	nm = realloc(*memo, ncap * sizeof *nm);
	if (nm == NULL)
		return false;
	memset(nm + *cap, 0, (ncap - *cap) * sizeof *nm);
	*memo = nm;
	*cap = ncap;
	return true;
}

/* Count into *TOTAL the values the JSON text of ROOT holds: JSON has no
   sharing, so a pickle that reuses containers through its memo can expand
   exponentially (a "billion laughs"). Each distinct container is summed once
   (MEMO, by handle index: size + 1, 0 = not yet). Depth past the JSON limit
   is not followed: the writer refuses it anyway. */
static mp_err expanded_size(const mp_heap *heap, mp_val root, uint64_t *total)
{
	struct sframe *st = calloc(MP_JSON_MAX_DEPTH + 2, sizeof *st), *f;
	uint64_t *memo = NULL, size;
	size_t depth = 0, cap = 0, ci;
	mp_val v = mp_heap_resolve(heap, root);
	mp_err err = st == NULL ? MP_E_NOMEM : MP_OK;

	for (*total = 0; err == MP_OK; v = mp_heap_resolve(heap, f->items[f->i++])) {
		ci = (size_t)(v >> 4);
		if (mp_val_is_container(v) && !memo_cover(&memo, &cap, ci)) {
			err = MP_E_NOMEM;
			break;
		}
		if (mp_val_is_container(v) && memo[ci] == 0 && depth <= MP_JSON_MAX_DEPTH) {
			st[depth++] = (struct sframe){
				.items = mp_heap_items(heap, v), .cont = ci, .sum = 1,
				.n = mp_heap_len(heap, v) * (mp_val_type(v) == MP_T_DICT ? 2 : 1) };
			size = 0;
		} else {
			size = mp_val_is_container(v) && memo[ci] ? memo[ci] - 1 : 1;
		}
		/* Close the containers that are complete, adding each to its parent. */
		while (depth > 0 && st[depth - 1].i == st[depth - 1].n) {
			f = &st[depth - 1];
			f->sum = sat_add(f->sum, size);
			memo[f->cont] = sat_add(f->sum, 1);
			size = f->sum;
			depth--;
		}
		if (depth == 0) {
			*total = size;
			break;
		}
		f = &st[depth - 1];
		f->sum = sat_add(f->sum, size);
	}
	free(st);
	free(memo);
	return err;
}

mp_err mp_json_write(const mp_heap *heap, mp_val root, mp_out *out, mp_diag *diag)
{
	struct jwriter w = { .heap = heap, .out = out, .diag = diag };
	uint64_t total;
	mp_err err = expanded_size(heap, root, &total);

	if (err != MP_OK)
		return mp_fail(diag, err, "json: out of memory");
	if (total == UINT64_MAX)
		return mp_fail(diag, MP_E_LIMIT,
			       "json: cannot write the value: its shared containers would expand to "
			       "more than 2^64 values (limit 2^30)");
	if (total > MP_JSON_MAX_VALUES)
		return mp_fail(diag, MP_E_LIMIT,
			       "json: cannot write the value: its shared containers would expand to "
			       "%llu values (limit 2^30)",
			       (unsigned long long)total);
	err = put_value(&w, root);
	while (err == MP_OK && w.depth > 0 && out->err == MP_OK)
		err = wstep(&w);
	free(w.stack);
	if (err != MP_OK)
		return err;
	mp_out_putc(out, '\n');
	if (out->err != MP_OK)
		return mp_fail(diag, out->err, "json: cannot write the output: %s",
			       mp_strerror(out->err));
	return MP_OK;
}

/* ================= reading ================= */

enum rkind { R_LIST, R_TUPLE, R_DICT, R_PAIRS, R_PAIR };

/* A JSON array or object being converted: its children are detached, turned
   into values and freed one by one, so the cJSON tree shrinks as the heap grows. */
struct rframe {
	cJSON *node;  /* the array or object whose children remain */
	cJSON *owner; /* what to free when done: NODE, or the tag object holding it */
	mp_val cont;  /* the open container (R_PAIR: none) */
	mp_val key;   /* R_DICT: key of the current child; R_PAIR: the pair's key */
	size_t count; /* children delivered */
	enum rkind kind;
};

struct jreader {
	mp_heap *heap;
	mp_diag *diag;
	struct rframe *stack;
	size_t depth, cap;
	cJSON *grave; /* converted nodes awaiting cJSON_Delete, chained by next */
	size_t ngrave;
};

/* Nodes are freed in bursts: freeing each one as it is converted, between
   the heap's own allocations, made reading a third slower (glibc consolidating
   its free lists over and over) for no smaller peak. */
#define GRAVE_BURST 65536

/* Free the converted nodes held so far. */
static void bury_flush(struct jreader *r)
{
	cJSON_Delete(r->grave); /* the whole chain of siblings */
	r->grave = NULL;
	r->ngrave = 0;
}

/* Hand over C (detached, converted, its children gone) for freeing. */
static void bury(struct jreader *r, cJSON *c)
{
	c->next = r->grave;
	r->grave = c;
	if (++r->ngrave >= GRAVE_BURST)
		bury_flush(r);
}

static const char *reader_where(const struct jreader *r, mp_path *p)
{
	for (size_t d = 0; d < r->depth; d++) {
		const struct rframe *f = &r->stack[d];

		if (f->kind == R_DICT && f->key != MP_ABSENT)
			mp_path_key(p, r->heap, f->key, f->count);
		else
			mp_path_add(p, "[%zu]", f->count);
	}
	return mp_path_str(p);
}

static mp_err rfail(struct jreader *r, mp_err err, const char *what)
{
	mp_path p = { .at = 0 };

	if (what == NULL)
		what = mp_strerror(err);
	return mp_fail(r->diag, err, "json: %s at %s", what, reader_where(r, &p));
}

static mp_err read_str(struct jreader *r, const char *s, bool surrogates, mp_val *out)
{
	size_t n = strlen(s);
	mp_err err;

	if (!mp_utf8_valid((const unsigned char *)s, n, surrogates))
		return rfail(r, MP_E_CORRUPT, "invalid UTF-8 in a string");
	err = mp_heap_str(r->heap, s, n, out);
	return err == MP_OK ? MP_OK : rfail(r, err, NULL);
}

static mp_err read_number(struct jreader *r, double d, mp_val *out)
{
	mp_err err;

	if (d == floor(d) && fabs(d) <= (double)EXACT_INT_MAX)
		err = mp_heap_int(r->heap, (int64_t)d, out);
	else
		err = mp_heap_float(r->heap, d, out);
	return err == MP_OK ? MP_OK : rfail(r, err, NULL);
}

/* The value of a tagged scalar: TAG's content S. */
static mp_err read_tagged(struct jreader *r, enum tag tag, const char *s, mp_val *out)
{
	size_t n = strlen(s), len;
	unsigned char *b;
	mp_err err;

	switch (tag) {
	case TAG_INT:
		err = decimal_to_int(r->heap, s, n, out);
		if (err == MP_E_CORRUPT)
			return rfail(r, err, "__int__ needs a decimal string");
		if (err == MP_E_LIMIT)
			return rfail(r, err, "__int__ of more than 4300 digits");
		return err == MP_OK ? MP_OK : rfail(r, err, NULL);
	case TAG_FLOAT:
		if (strcmp(s, "nan") && strcmp(s, "inf") && strcmp(s, "-inf"))
			return rfail(r, MP_E_CORRUPT, "__float__ needs \"nan\", \"inf\" or \"-inf\"");
		err = mp_heap_float(r->heap, strcmp(s, "nan") == 0 ? NAN : s[0] == '-' ? -INFINITY : INFINITY,
				    out);
		return err == MP_OK ? MP_OK : rfail(r, err, NULL);
	default: /* TAG_BYTES, TAG_STR */
		if (!base64_decode(s, n, &b, &len))
			return rfail(r, MP_E_CORRUPT, "bad base64 in a __bytes__ or __str__ tag");
		if (tag == TAG_STR && !mp_utf8_valid(b, len, true)) {
			free(b);
			return rfail(r, MP_E_CORRUPT, "invalid UTF-8 in a __str__ tag");
		}
		err = tag == TAG_STR ? mp_heap_str(r->heap, (const char *)b, len, out)
				     : mp_heap_bytes(r->heap, b, len, out);
		free(b);
		return err == MP_OK ? MP_OK : rfail(r, err, NULL);
	}
}

static mp_err push_rframe(struct jreader *r, cJSON *node, cJSON *owner, enum rkind kind)
{
	static const enum mp_vtype types[] = { MP_T_LIST, MP_T_TUPLE, MP_T_DICT, MP_T_DICT };
	struct rframe *f;
	mp_val cont = MP_ABSENT;
	mp_err err;

	if (r->depth == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;

		f = realloc(r->stack, cap * sizeof *f);
		if (f == NULL) {
			bury(r, owner);
			return rfail(r, MP_E_NOMEM, NULL);
		}
		r->stack = f;
		r->cap = cap;
	}
	if (kind != R_PAIR && (err = mp_heap_open(r->heap, types[kind], &cont)) != MP_OK) {
		bury(r, owner);
		return rfail(r, err, NULL);
	}
	r->stack[r->depth++] = (struct rframe){ .node = node, .owner = owner, .cont = cont,
						.key = MP_ABSENT, .kind = kind };
	return MP_OK;
}

/* Start converting C (detached from its parent, owned here): a scalar gives
   its value in *OUT and *DONE; a container pushes a frame. */
static mp_err begin_object(struct jreader *r, cJSON *c, mp_val *out, bool *done)
{
	cJSON *m = c->child;
	enum tag tag = TAG_NONE;
	mp_err err;

	if (m != NULL && m->next == NULL && m->string != NULL)
		tag = tag_of(m->string, strlen(m->string));
	if (tag == TAG_NONE)
		return push_rframe(r, c, c, R_DICT);
	if (tag == TAG_TUPLE || tag == TAG_DICT) {
		if (!cJSON_IsArray(m)) {
			bury(r, c);
			return rfail(r, MP_E_CORRUPT, tag == TAG_TUPLE ? "__tuple__ needs a list"
								     : "__dict__ needs a list of pairs");
		}
		return push_rframe(r, m, c, tag == TAG_TUPLE ? R_TUPLE : R_PAIRS);
	}
	if (!cJSON_IsString(m)) {
		bury(r, c);
		return rfail(r, MP_E_CORRUPT, "a tag of this kind needs a string");
	}
	err = read_tagged(r, tag, m->valuestring, out);
	bury(r, c);
	*done = err == MP_OK;
	return err;
}

static mp_err begin(struct jreader *r, cJSON *c, mp_val *out, bool *done)
{
	mp_err err = MP_OK;

	*done = false;
	if (r->depth > 0 && r->stack[r->depth - 1].kind == R_PAIRS) {
		if (!cJSON_IsArray(c) || c->child == NULL || c->child->next == NULL ||
		    c->child->next->next != NULL) {
			bury(r, c);
			return rfail(r, MP_E_CORRUPT, "__dict__ items must be [key, value] lists");
		}
		return push_rframe(r, c, c, R_PAIR);
	}
	switch (c->type & 0xff) {
	case cJSON_NULL: *out = MP_NONE; break;
	case cJSON_False: *out = MP_FALSE; break;
	case cJSON_True: *out = MP_TRUE; break;
	case cJSON_Number: err = read_number(r, c->valuedouble, out); break;
	case cJSON_String: err = read_str(r, c->valuestring, false, out); break;
	case cJSON_Array: return push_rframe(r, c, c, R_LIST);
	case cJSON_Object: return begin_object(r, c, out, done);
	default: err = rfail(r, MP_E_CORRUPT, "unexpected JSON item"); break;
	}
	bury(r, c);
	*done = err == MP_OK;
	return err;
}

/* Hand the finished value V to the innermost frame. */
static mp_err deliver(struct jreader *r, mp_val v)
{
	struct rframe *f = &r->stack[r->depth - 1];
	mp_err err = MP_OK;

	switch (f->kind) {
	case R_DICT:
		err = mp_heap_setitem(r->heap, f->cont, f->key, v);
		break;
	case R_PAIR:
		if (f->count == 0 && !mp_heap_hashable(r->heap, v))
			return rfail(r, MP_E_CORRUPT, "unhashable dict key (a list or dict)");
		if (f->count == 0)
			f->key = v;
		else
			err = mp_heap_setitem(r->heap, r->stack[r->depth - 2].cont, f->key, v);
		break;
	default:
		err = mp_heap_append(r->heap, f->cont, v);
		break;
	}
	if (err != MP_OK)
		return rfail(r, err, NULL);
	f->count++;
	return MP_OK;
}

/* Close the innermost frame; its value (none for a pair) in *OUT. */
static mp_err finish(struct jreader *r, mp_val *out, bool *has_value)
{
	struct rframe *f = &r->stack[r->depth - 1];
	mp_err err = MP_OK;

	*has_value = f->kind != R_PAIR;
	if (*has_value) {
		err = mp_heap_freeze(r->heap, f->cont, out);
		if (err == MP_OK && *out != f->cont)
			mp_heap_release(r->heap, f->cont);
	} else {
		r->stack[r->depth - 2].count++; /* a pair is one item of its __dict__ */
	}
	bury(r, f->owner);
	r->depth--;
	return err == MP_OK ? MP_OK : rfail(r, err, NULL);
}

/* Take the next child of the innermost frame's node off its list. */
static cJSON *detach_next(struct jreader *r, mp_err *err)
{
	struct rframe *f = &r->stack[r->depth - 1];
	cJSON *c = f->node->child;

	f->node->child = c->next;
	c->next = c->prev = NULL;
	*err = MP_OK;
	if (f->kind == R_DICT) {
		f->key = MP_ABSENT;
		*err = read_str(r, c->string, false, &f->key);
		if (*err != MP_OK)
			bury(r, c);
	}
	return c;
}

static mp_err convert(struct jreader *r, cJSON *root, mp_val *out)
{
	mp_val v;
	bool done, has_value;
	mp_err err = begin(r, root, &v, &done);

	while (err == MP_OK && !(done && r->depth == 0)) {
		if (done) {
			err = deliver(r, v);
			done = false;
		} else if (r->stack[r->depth - 1].node->child == NULL) {
			err = finish(r, &v, &has_value);
			done = has_value;
		} else {
			cJSON *c = detach_next(r, &err);

			if (err == MP_OK)
				err = begin(r, c, &v, &done);
		}
	}
	if (err == MP_OK)
		*out = v;
	while (r->depth > 0)
		bury(r, r->stack[--r->depth].owner);
	bury_flush(r);
	return err;
}

/* ---- parsing */

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* JSON nesting at byte AT of TEXT (strings skipped). */
static size_t depth_at(const char *text, size_t at)
{
	size_t depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < at; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			depth++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return depth;
}

static mp_err syntax_error(const char *text, size_t len, size_t at, mp_diag *diag)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < at && i < len; i++) {
		col = text[i] == '\n' ? 1 : col + 1;
		line += text[i] == '\n';
	}
	/* cJSON stops at the bracket that opens one level too many. */
	if (at < len && (text[at] == '[' || text[at] == '{') &&
	    depth_at(text, at) >= MP_JSON_MAX_DEPTH)
		return mp_fail(diag, MP_E_LIMIT, "json: nested deeper than %d levels at line %zu",
			       MP_JSON_MAX_DEPTH, line);
	if (at >= len)
		return mp_fail(diag, MP_E_TRUNCATED, "json: input ends inside a value (line %zu)", line);
	return mp_fail(diag, MP_E_CORRUPT, "json: syntax error at line %zu, column %zu (byte %zu)",
		       line, col, at);
}

/* cJSON keeps strings NUL-terminated, so a NUL inside one would silently cut
   it: refuse raw NUL bytes and \u0000 escapes (memprof writes such strings
   in __str__). */
static mp_err check_nul(const char *text, size_t len, mp_diag *diag)
{
	const char *p = memchr(text, '\0', len);

	if (p != NULL)
		return mp_fail(diag, MP_E_CORRUPT, "json: NUL byte at byte %zu", (size_t)(p - text));
	for (p = text; (p = memmem(p, len - (size_t)(p - text), "\\u0000", 6)) != NULL; p++) {
		const char *q = p;

		while (q > text && q[-1] == '\\')
			q--;
		if ((p - q) % 2 == 0) /* P's backslash is not itself escaped */
			return mp_fail(diag, MP_E_CORRUPT,
				       "json: \\u0000 in a string at byte %zu (cJSON cannot keep it)",
				       (size_t)(p - text));
	}
	return MP_OK;
}

mp_err mp_json_read(mp_heap *heap, const char *text, size_t len, mp_val *root, mp_diag *diag)
{
	struct jreader r = { .heap = heap, .diag = diag };
	const char *end = NULL;
	size_t skip = 0;
	cJSON *tree;
	mp_err err;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		skip = 3; /* a UTF-8 byte order mark */
	while (skip < len && json_space(text[skip]))
		skip++;
	if (skip == len)
		return mp_fail(diag, MP_E_TRUNCATED, "json: no value (empty input)");
	err = check_nul(text, len, diag);
	if (err != MP_OK)
		return err;
	tree = cJSON_ParseWithLengthOpts(text + skip, len - skip, &end, false);
	if (tree == NULL)
		return syntax_error(text, len, end ? (size_t)(end - text) : skip, diag);
	while (end < text + len && json_space(*end))
		end++;
	if (end < text + len) {
		cJSON_Delete(tree);
		return mp_fail(diag, MP_E_CORRUPT, "json: data after the value at byte %zu",
			       (size_t)(end - text));
	}
	err = convert(&r, tree, root);
	free(r.stack);
	return err;
}

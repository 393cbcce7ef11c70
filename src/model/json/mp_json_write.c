/* mp_json_write.c - generic values to memprof's tagged JSON, without recursion. */
#include "mp_json.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_base64.h"
#include "mp_json_int.h"
#include "mp_path.h"

/* Ints of more bytes than this have more than MP_JSON_MAX_INT_DIGITS digits. */
#define MAX_INT_BYTES 1800

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

void mp_json_put_string(mp_out *out, const char *s, size_t n)
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
	mp_out_puts(w->out, mp_json_tag_names[t]);
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
	dec = mp_json_int_to_decimal(le, n);
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

	if (is_str && mp_json_plain_str(s, n)) {
		mp_json_put_string(w->out, s, n);
		return MP_OK;
	}
	err = open_tag(w, is_str ? TAG_STR : TAG_BYTES);
	if (err != MP_OK)
		return err;
	mp_out_putc(w->out, '"');
	mp_base64_put(w->out, (const unsigned char *)s, n);
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

		if (mp_val_type(items[2 * i]) != MP_T_STR || !mp_json_plain_str(s, n))
			return false;
		if (npairs == 1 && mp_json_tag_of(s, n) != TAG_NONE)
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
		mp_json_put_string(w->out, key, k);
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

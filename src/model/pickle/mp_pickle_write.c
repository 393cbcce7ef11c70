/* mp_pickle_write.c - a protocol 4 pickle writer for generic values, without recursion. */
#include "mp_pickle_write.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_path.h"
#include "pickle_ops_int.h"

/* The opcodes written: the intersection of what CPython reads and what
   unpickle() in PyTorch's torch/utils/viz/MemoryViz.js (the memory_viz web page;
   read at pytorch commit 00067369c933) reads. That page knows no bytes opcodes
   (SHORT_BINBYTES, BINBYTES), no LONG4, no BINUNICODE8/BINBYTES8 and no protocol
   5 (its PROTO accepts 2-4); its LONG1 takes any length (a BigInt beyond 8
   bytes). So bytes values and ints of more than 255 bytes are refused. It also
   reads BINPUT, LONG_BINPUT, LIST and DICT, which this writer does not need. */

/* CPython's framing: a frame is closed at an object boundary once it holds
   64 KiB; payloads that large go unframed; frames under 4 bytes get no header. */
#define FRAME_TARGET ((size_t)64 << 10)
#define FRAME_MIN 4
/* CPython batches APPENDS/SETITEMS by this many items. */
#define BATCH 1000
#define LONG1_MAX 255
#define NO_MEMO UINT32_MAX

/* A container being written: its handles, the next one, and the open batch. */
struct frame {
	const mp_val *items;
	size_t n;         /* handles (a dict has two per item) */
	size_t i;         /* next handle to write */
	size_t batch_end; /* handle index that closes the open batch */
	mp_val v;
	uint8_t type;
	bool in_batch;
	bool batch_multi; /* the open batch has more than one item (MARK ... APPENDS) */
};

/* The memo of one handle space (atoms or containers): index + 1, 0 = none. */
struct memo_map {
	uint32_t *slot;
	size_t cap;
};

struct writer {
	const mp_heap *heap;
	mp_out *out;
	mp_diag *diag;
	unsigned char *buf; /* the open frame */
	size_t len, cap;
	struct memo_map atoms, conts;
	uint32_t nmemo;
	struct frame *stack;
	size_t depth, stack_cap;
	mp_err err; /* sticky allocation failure of buf */
};

/* ---- bytes out */

/* Room for N more bytes in the open frame, or NULL (and w->err) when out of memory. */
static unsigned char *room(struct writer *w, size_t n)
{
	size_t ncap;
	unsigned char *nb;

	if (n <= w->cap - w->len)
		return w->buf + w->len;
	if (w->err != MP_OK)
		return NULL;
	ncap = w->cap ? w->cap : 2 * FRAME_TARGET;
	while (ncap - w->len < n)
		ncap *= 2;
	nb = realloc(w->buf, ncap);
	if (nb == NULL) {
		w->err = MP_E_NOMEM;
		return NULL;
	}
	w->buf = nb;
	w->cap = ncap;
	return w->buf + w->len;
}

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* Write opcode OP followed by the N-byte little-endian operand ARG (N may be 0). */
static void put_op(struct writer *w, unsigned char op, uint64_t arg, size_t n)
{
	unsigned char *p = room(w, 1 + n);

	if (p == NULL)
		return;
	p[0] = op;
	put_le(p + 1, arg, n);
	w->len += 1 + n;
}

static void put_bytes(struct writer *w, const void *data, size_t n)
{
	unsigned char *p = room(w, n);

	if (p == NULL)
		return;
	memcpy(p, data, n);
	w->len += n;
}

/* Close the open frame: hand it to OUT behind a FRAME header. */
static void commit_frame(struct writer *w)
{
	unsigned char hdr[9];

	if (w->len == 0)
		return;
	if (w->len >= FRAME_MIN) {
		hdr[0] = MP_OP_FRAME;
		put_le(hdr + 1, w->len, 8);
		mp_out_write(w->out, hdr, sizeof hdr);
	}
	mp_out_write(w->out, w->buf, w->len);
	w->len = 0;
}

/* ---- where we are, for messages */

/* The path of the value being written. */
static const char *where(const struct writer *w, mp_path *p)
{
	for (size_t d = 0; d < w->depth; d++) {
		const struct frame *f = &w->stack[d];
		size_t h = f->i - 1; /* the handle being written in this frame */

		if (f->type != MP_T_DICT)
			mp_path_add(p, "[%zu]", h);
		else if (h % 2 == 0)
			mp_path_add(p, "(key %zu)", h / 2);
		else
			mp_path_key(p, w->heap, f->items[h - 1], h / 2);
	}
	return mp_path_str(p);
}

/* Fail with "pickle: cannot write WHAT at PATH: WHY". */
static mp_err refuse(struct writer *w, mp_err err, const char *what, const char *why)
{
	mp_path p = { .at = 0 };

	return mp_fail(w->diag, err, "pickle: cannot write %s at %s: %s", what, where(w, &p), why);
}

/* ---- the memo */

/* The memo slot of V (a str or a container), or NULL when out of memory. */
static uint32_t *memo_slot(struct writer *w, mp_val v)
{
	struct memo_map *m = mp_val_is_container(v) ? &w->conts : &w->atoms;
	size_t i = (size_t)(v >> 4), ncap;
	uint32_t *ns;

	if (i < m->cap)
		return &m->slot[i];
	ncap = m->cap ? m->cap : 4096;
	while (ncap <= i)
		ncap *= 2;
	ns = realloc(m->slot, ncap * sizeof *ns);
	if (ns == NULL) {
		w->err = MP_E_NOMEM;
		return NULL;
	}
	memset(ns + m->cap, 0, (ncap - m->cap) * sizeof *ns);
	m->slot = ns;
	m->cap = ncap;
	return &m->slot[i];
}

/* Write a get of V if it was memoized; whether it was. */
static bool put_memo_get(struct writer *w, mp_val v)
{
	uint32_t *s = memo_slot(w, v);

	if (s == NULL || *s == 0)
		return false;
	if (*s - 1 < 256)
		put_op(w, MP_OP_BINGET, *s - 1, 1);
	else
		put_op(w, MP_OP_LONG_BINGET, *s - 1, 4);
	return true;
}

/* Memoize the value just written (V) as CPython does, under the next index. */
static void put_memoize(struct writer *w, mp_val v)
{
	uint32_t *s = memo_slot(w, v);

	/* LONG_BINGET takes 32 bits; past that, repeats are simply written again. */
	if (s == NULL || w->nmemo >= NO_MEMO - 1)
		return;
	*s = ++w->nmemo;
	put_op(w, MP_OP_MEMOIZE, 0, 0);
}

/* ---- atoms */

static void put_int(struct writer *w, int64_t i)
{
	unsigned char le[8];
	size_t n = 8;

	if (i >= 0 && i <= 0xff) {
		put_op(w, MP_OP_BININT1, (uint64_t)i, 1);
	} else if (i >= 0 && i <= 0xffff) {
		put_op(w, MP_OP_BININT2, (uint64_t)i, 2);
	} else if (i >= INT32_MIN && i <= INT32_MAX) {
		put_op(w, MP_OP_BININT, (uint64_t)(uint32_t)(int32_t)i, 4);
	} else {
		/* LONG1 takes the shortest two's complement, as CPython's encode_long. */
		put_le(le, (uint64_t)i, 8);
		while (n > 1 && ((le[n - 1] == 0x00 && !(le[n - 2] & 0x80)) ||
				 (le[n - 1] == 0xff && (le[n - 2] & 0x80))))
			n--;
		put_op(w, MP_OP_LONG1, n, 1);
		put_bytes(w, le, n);
	}
}

static mp_err put_bigint(struct writer *w, mp_val v)
{
	size_t n;
	const char *le = mp_heap_atom(w->heap, v, &n);
	char why[128];

	if (n > LONG1_MAX) {
		snprintf(why, sizeof why,
			 "it needs %zu bytes and PyTorch's memory_viz reads ints of at most %d",
			 n, LONG1_MAX);
		return refuse(w, MP_E_RANGE, "the int", why);
	}
	put_op(w, MP_OP_LONG1, n, 1);
	put_bytes(w, le, n);
	return MP_OK;
}

static void put_float(struct writer *w, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	put_op(w, MP_OP_BINFLOAT, __builtin_bswap64(bits), 8); /* big-endian IEEE 754 */
}

static void put_str(struct writer *w, mp_val v)
{
	size_t n;
	const char *s = mp_heap_atom(w->heap, v, &n);
	unsigned char hdr[5];

	if (put_memo_get(w, v))
		return;
	if (n < 256) {
		put_op(w, MP_OP_SHORT_BINUNICODE, n, 1);
		put_bytes(w, s, n);
	} else if (n < FRAME_TARGET) {
		put_op(w, MP_OP_BINUNICODE, n, 4);
		put_bytes(w, s, n);
	} else {
		/* Large payloads bypass the frame (CPython's _write_large_bytes). The
		   heap keeps strings below 4 GiB, so BINUNICODE always suffices. */
		commit_frame(w);
		hdr[0] = MP_OP_BINUNICODE;
		put_le(hdr + 1, n, 4);
		mp_out_write(w->out, hdr, sizeof hdr);
		mp_out_write(w->out, s, n);
	}
	put_memoize(w, v);
}

/* ---- containers */

static mp_err push_frame(struct writer *w, mp_val v)
{
	struct frame *f;
	size_t cap;

	if (w->depth == w->stack_cap) {
		cap = w->stack_cap ? 2 * w->stack_cap : 64;
		f = realloc(w->stack, cap * sizeof *f);
		if (f == NULL)
			return mp_fail(w->diag, MP_E_NOMEM, "pickle: out of memory");
		w->stack = f;
		w->stack_cap = cap;
	}
	f = &w->stack[w->depth++];
	memset(f, 0, sizeof *f);
	f->v = v;
	f->type = (uint8_t)mp_val_type(v);
	f->items = mp_heap_items(w->heap, v);
	f->n = mp_heap_len(w->heap, v) * (f->type == MP_T_DICT ? 2 : 1);
	return MP_OK;
}

/* Start container V: its opening opcodes, then its items through the stack. */
static mp_err put_container(struct writer *w, mp_val v)
{
	enum mp_vtype t = mp_val_type(v);
	size_t n = mp_heap_len(w->heap, v);

	if (put_memo_get(w, v))
		return MP_OK;
	if (w->depth >= MP_PICKLE_WRITE_MAX_DEPTH)
		return refuse(w, MP_E_LIMIT, "the value", "nested deeper than 10000 levels");
	if (t == MP_T_TUPLE) {
		if (n == 0) {
			put_op(w, MP_OP_EMPTY_TUPLE, 0, 0); /* CPython does not memoize () */
			return MP_OK;
		}
		if (n > 3)
			put_op(w, MP_OP_MARK, 0, 0);
		return push_frame(w, v); /* memoized once built, in close_tuple */
	}
	put_op(w, t == MP_T_LIST ? MP_OP_EMPTY_LIST : MP_OP_EMPTY_DICT, 0, 0);
	put_memoize(w, v);
	return n == 0 ? MP_OK : push_frame(w, v);
}

static mp_err put_value(struct writer *w, mp_val v)
{
	v = mp_heap_resolve(w->heap, v);
	if (w->len >= FRAME_TARGET)
		commit_frame(w);
	switch (mp_val_type(v)) {
	case MP_T_NONE: put_op(w, MP_OP_NONE, 0, 0); return MP_OK;
	case MP_T_BOOL: put_op(w, v == MP_TRUE ? MP_OP_NEWTRUE : MP_OP_NEWFALSE, 0, 0); return MP_OK;
	case MP_T_INT: put_int(w, mp_val_small_int(v)); return MP_OK;
	case MP_T_BIGINT: return put_bigint(w, v);
	case MP_T_FLOAT: put_float(w, mp_heap_float_value(w->heap, v)); return MP_OK;
	case MP_T_STR: put_str(w, v); return MP_OK;
	case MP_T_BYTES:
		return refuse(w, MP_E_UNSUPPORTED, "the bytes value",
			      "PyTorch's memory_viz reads no bytes in pickles");
	case MP_T_LIST:
	case MP_T_TUPLE:
	case MP_T_DICT: return put_container(w, v);
	default: return refuse(w, MP_E_TYPE, "a missing value", "MP_ABSENT is no Python object");
	}
}

static void close_tuple(struct writer *w, const struct frame *f)
{
	if (f->n <= 3)
		put_op(w, (unsigned char)(MP_OP_TUPLE1 + f->n - 1) /* TUPLE2 and TUPLE3 follow it */, 0, 0);
	else
		put_op(w, MP_OP_TUPLE, 0, 0);
	put_memoize(w, f->v);
}

/* Open the next batch of a list or dict. As CPython's C pickler: a container
   of one item takes APPEND/SETITEM, any other one MARK ... APPENDS/SETITEMS
   per batch, even a last batch of one item. */
static void open_batch(struct writer *w, struct frame *f)
{
	size_t per = f->type == MP_T_DICT ? 2 : 1;
	size_t items = (f->n - f->i) / per;

	if (items > BATCH)
		items = BATCH;
	f->batch_end = f->i + items * per;
	f->batch_multi = f->n > per;
	f->in_batch = true;
	if (f->batch_multi)
		put_op(w, MP_OP_MARK, 0, 0);
}

static void close_batch(struct writer *w, struct frame *f)
{
	if (f->type == MP_T_DICT)
		put_op(w, f->batch_multi ? MP_OP_SETITEMS : MP_OP_SETITEM, 0, 0);
	else
		put_op(w, f->batch_multi ? MP_OP_APPENDS : MP_OP_APPEND, 0, 0);
	f->in_batch = false;
}

/* Advance the innermost container by one handle (or close it). */
static mp_err step(struct writer *w)
{
	struct frame *f = &w->stack[w->depth - 1];

	if (f->type == MP_T_TUPLE) {
		if (f->i < f->n)
			return put_value(w, f->items[f->i++]);
		close_tuple(w, f);
		w->depth--;
		return MP_OK;
	}
	if (f->in_batch && f->i == f->batch_end)
		close_batch(w, f);
	if (f->i == f->n) {
		w->depth--;
		return MP_OK;
	}
	if (!f->in_batch)
		open_batch(w, f);
	if (f->type == MP_T_DICT && f->i % 2 == 0 && !mp_heap_hashable(w->heap, f->items[f->i])) {
		f->i++; /* for the path */
		return refuse(w, MP_E_TYPE, "the dict key", "a list or dict cannot be a key in Python");
	}
	return put_value(w, f->items[f->i++]); /* may move the stack: F is dead after */
}

static mp_err write_all(struct writer *w, mp_val root)
{
	unsigned char proto[2] = { MP_OP_PROTO, 4 };
	mp_err err;

	mp_out_write(w->out, proto, sizeof proto); /* outside any frame, as CPython */
	err = put_value(w, root);
	while (err == MP_OK && w->depth > 0 && w->err == MP_OK)
		err = step(w);
	if (err != MP_OK)
		return err;
	put_op(w, MP_OP_STOP, 0, 0);
	commit_frame(w);
	if (w->err != MP_OK)
		return mp_fail(w->diag, w->err, "pickle: out of memory");
	if (w->out->err != MP_OK)
		return mp_fail(w->diag, w->out->err, "pickle: cannot write the output: %s",
			       mp_strerror(w->out->err));
	return MP_OK;
}

mp_err mp_pickle_write(const mp_heap *heap, mp_val root, mp_out *out, mp_diag *diag)
{
	struct writer w = { .heap = heap, .out = out, .diag = diag, .err = MP_OK };
	mp_err err = write_all(&w, root);

	free(w.buf);
	free(w.atoms.slot);
	free(w.conts.slot);
	free(w.stack);
	return err;
}

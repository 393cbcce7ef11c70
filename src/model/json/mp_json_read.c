/* mp_json_read.c - memprof's tagged JSON to generic values through cJSON, without recursion. */
#include "mp_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_base64.h"
#include "mp_json_int.h"
#include "mp_path.h"
#include "mp_utf8.h"

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
	mp_val skip_key; /* a list under this key of a dict is passed over (MP_ABSENT: none) */
	struct rframe *stack;
	size_t depth, cap;
	cJSON *grave; /* converted nodes awaiting cJSON_Delete, chained by next */
	size_t ngrave;
};

/* Nodes are freed in bursts: freeing each one as it is converted, between
   the heap's own allocations, made reading a third slower (glibc consolidating
   its free lists over and over) for no smaller peak. */
#define GRAVE_BURST 65536
/* What a list passed over counts for in a burst: more than its nodes (some
   dozens for a traceback). Fewer lists a burst keep glibc's consolidations
   short: segsum on the 100k-block JSON took 1.0 s counting each as one node,
   0.75 s (as before lists were passed over) counting each as 1024. */
#define PASSED_WEIGHT 1024

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
		err = mp_json_decimal_to_int(r->heap, s, n, out);
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
		if (!mp_base64_decode(s, n, &b, &len))
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
		tag = mp_json_tag_of(m->string, strlen(m->string));
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

/* Whether C, under KEY in a dict, is a list to pass over (MP_SKIPPED in its
   place, as the pickle reader's skip keys give): it was parsed, so its
   syntax holds, but what it holds is not checked. */
static bool passed_over(const struct jreader *r, mp_val key, const cJSON *c)
{
	return key == r->skip_key && key != MP_ABSENT && cJSON_IsArray(c);
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
			const struct rframe *f = &r->stack[r->depth - 1];

			if (err == MP_OK && f->kind == R_DICT && passed_over(r, f->key, c)) {
				/* a whole subtree, to free with the converted nodes */
				r->ngrave += PASSED_WEIGHT;
				bury(r, c);
				v = MP_SKIPPED;
				done = true;
			} else if (err == MP_OK) {
				err = begin(r, c, &v, &done);
			}
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

size_t mp_json_value_start(const char *text, size_t len)
{
	size_t at = 0;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		at = 3; /* a UTF-8 byte order mark */
	while (at < len && mp_json_space(text[at]))
		at++;
	return at;
}

/* cJSON keeps strings NUL-terminated, so a NUL inside one would silently cut
   it: refuse raw NUL bytes and \u0000 escapes (memprof writes such strings
   in __str__). */
mp_err mp_json_check_nul(const char *text, size_t len, mp_diag *diag)
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

mp_err mp_json_read(mp_heap *heap, const char *text, size_t len, mp_val skip_key, mp_val *root, mp_diag *diag)
{
	struct jreader r = { .heap = heap, .diag = diag, .skip_key = skip_key };
	const char *end = NULL;
	size_t skip = mp_json_value_start(text, len);
	cJSON *tree;
	mp_err err;

	if (skip == len)
		return mp_fail(diag, MP_E_TRUNCATED, "json: no value (empty input)");
	err = mp_json_check_nul(text, len, diag);
	if (err != MP_OK)
		return err;
	tree = cJSON_ParseWithLengthOpts(text + skip, len - skip, &end, false);
	if (tree == NULL)
		return syntax_error(text, len, end ? (size_t)(end - text) : skip, diag);
	while (end < text + len && mp_json_space(*end))
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

/* ---- one value at a time (mp_json_int.h) */

struct mp_json_conv {
	struct jreader r;
};

mp_json_conv *mp_json_conv_new(mp_heap *heap, mp_val skip_key, mp_diag *diag)
{
	mp_json_conv *c = calloc(1, sizeof *c);

	if (c != NULL)
		c->r = (struct jreader){ .heap = heap, .diag = diag, .skip_key = skip_key };
	return c;
}

void mp_json_conv_free(mp_json_conv *c)
{
	if (c != NULL)
		free(c->r.stack);
	free(c);
}

mp_err mp_json_conv_member(mp_json_conv *c, mp_val key, cJSON *node, mp_val *out)
{
	if (!passed_over(&c->r, key, node))
		return convert(&c->r, node, out);
	cJSON_Delete(node);
	*out = MP_SKIPPED;
	return MP_OK;
}

mp_err mp_json_conv_key(mp_json_conv *c, const char *s, mp_val *out)
{
	return read_str(&c->r, s, false, out);
}

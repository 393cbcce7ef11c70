/* owners_variables.c - the variables that can name what the heap holds, read once: the globals of __main__,
   then each thread's frames' locals, innermost frame first, and one level into the lists, tuples and dicts they
   hold (pooled[0], models['student']). Roots and referrers are named from this list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_py_locals.h"
#include "owners_int.h"

struct collect {
	owners_build *b;
	const char *where;
	int thread, depth;
	mp_err err;
};

/* Items of one container read for names: a longer one is data, not a handful of named things. */
enum { MAX_ITEMS = 4096 };

static void add_one(struct collect *c, const char *name, uint64_t value);

struct items {
	struct collect *c;
	const char *name;
	size_t n;
};

/* NAME['KEY'] (str keys) or NAME[KEY] (int keys) for a dict's items. */
static bool dict_item(void *ctx, uint64_t key, uint64_t value)
{
	struct items *it = ctx;
	char *k, *item = NULL;
	int64_t i;

	if (it->n++ >= MAX_ITEMS)
		return false;
	if (mp_py_str(it->c->b->heap, key, &k, NULL) == MP_OK) {
		if (asprintf(&item, "%s['%s']", it->name, k) < 0)
			item = NULL;
		free(k);
	} else if (mp_py_long(it->c->b->heap, key, &i, NULL) == MP_OK && asprintf(&item, "%s[%lld]", it->name, (long long)i) < 0) {
		item = NULL;
	}
	if (item != NULL) {
		add_one(it->c, item, value);
		free(item);
	}
	return it->c->err == MP_OK;
}

/* NAME, and when VALUE is a list, tuple or dict, NAME[...] for its items (one level). */
static void add(struct collect *c, const char *name, uint64_t value)
{
	struct items it = { .c = c, .name = name };
	uint64_t *items = NULL;
	size_t n = 0;
	char *item;

	add_one(c, name, value);
	if (c->err != MP_OK)
		return;
	if (mp_py_seq_items(c->b->heap, value, &items, &n, MAX_ITEMS, NULL) == MP_OK) {
		for (size_t i = 0; i < n && c->err == MP_OK; i++) {
			if (asprintf(&item, "%s[%zu]", name, i) < 0) {
				c->err = MP_E_NOMEM;
				break;
			}
			add_one(c, item, items[i]);
			free(item);
		}
		free(items);
		return;
	}
	if (mp_py_dict_each(c->b->heap, value, dict_item, &it, NULL) != MP_OK)
		return; /* not a dict (or a damaged one: its name is enough) */
}

static void add_one(struct collect *c, const char *name, uint64_t value)
{
	owners_build *b = c->b;
	owners_variable *v;

	if ((c->err = mp_array_grow((void **)&b->vars, &b->cap_vars, b->nvars + 1, sizeof *b->vars)) != MP_OK)
		return;
	v = &b->vars[b->nvars];
	*v = (owners_variable){ .name = strdup(name), .where = strdup(c->where), .value = value, .thread = c->thread,
				.depth = c->depth };
	if (v->name == NULL || v->where == NULL) {
		free(v->name);
		free(v->where);
		c->err = MP_E_NOMEM;
		return;
	}
	b->nvars++;
}

static bool global(void *ctx, uint64_t key, uint64_t value)
{
	struct collect *c = ctx;
	char *name;

	if (mp_py_str(c->b->heap, key, &name, NULL) == MP_OK) {
		add(c, name, value);
		free(name);
	}
	return c->err == MP_OK;
}

static bool local(void *ctx, const char *name, uint64_t value)
{
	struct collect *c = ctx;

	add(c, name, value);
	return c->err == MP_OK;
}

mp_err owners_variables(owners_build *b)
{
	struct collect c = { .b = b, .where = "global of __main__", .thread = -1, .err = MP_OK };
	mp_diag d = { .msg = "" };
	uint64_t dict;
	char where[512];

	if (mp_py_module_dict(b->heap, "__main__", &dict, &d) == MP_OK && mp_py_dict_each(b->heap, dict, global, &c, &d) != MP_OK &&
	    c.err == MP_OK)
		mp_warn_damage(b->diag, "the globals of __main__ could not be read: %s", d.msg);
	for (size_t i = 0; b->have_threads && i < b->threads.nthreads && c.err == MP_OK; i++) {
		const mp_py_thread *th = &b->threads.threads[i];

		for (size_t j = 0; j < th->nframes && c.err == MP_OK; j++) {
			const mp_py_frame *f = &th->frames[j];

			snprintf(where, sizeof where, "local variable of %s() at %s:%d", f->qualname, f->filename, f->line);
			c.where = where;
			c.thread = (int)i;
			c.depth = (int)j;
			d.msg[0] = '\0';
			if (mp_py_frame_locals(b->t, &b->py, &b->rt, f, local, &c, &d) != MP_OK && c.err == MP_OK &&
			    d.msg[0] != '\0')
				mp_warn_damage(b->diag, "the locals of %s() could not be read: %s", f->name, d.msg);
		}
	}
	return c.err;
}

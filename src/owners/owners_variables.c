/* owners_variables.c - the paths that can name what the heap holds, read once, most stable first: the globals of
   __main__, then each thread's frames from the outermost in. From each, breadth first, the attributes of the objects
   they hold and the items of their lists, tuples and dicts, a few levels deep (trainer.optimizer, scaler._scale,
   models['student'], pooled[0]); an optimizer that wraps another (accelerate's AcceleratedOptimizer, DeepSpeed-style
   wrappers: an Optimizer whose `optimizer` attribute is one; Lightning's LightningOptimizer: `_optimizer`) passes
   its path on to the one it wraps, whose state and param_groups it forwards; a framework's public properties are
   followed where a table says which attributes hold their values (Lightning's trainer.optimizers, trainer.scaler).
   The first path that reaches an object names it. A frame of installed code (torch, a site-packages package, the
   standard library) or of a module's forward, and every frame inside it, is no stable place: its locals change from
   call to call, so what they hold is named by them only as a last resort (unstable: roots), or not at all (tensors:
   owners_referrers.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_frame_filter.h"
#include "mp_py_locals.h"
#include "owners_int.h"

/* Items of one container read for names: a longer one is data, not a handful of named things. */
enum { MAX_ITEMS = 4096 };
/* Attributes and items followed below a variable (trainer.accelerator.state: 2), and objects visited in all. */
enum { MAX_LEVEL = 3, MAX_VISITS = 200000 };

/* One object to look into: the path that reached it first. */
struct step {
	char *path;
	uint64_t obj;
	int level;
};

struct collect {
	owners_build *b;
	const char *where;
	int thread, depth;
	bool stable;
	struct step *queue;         /* this source's breadth-first queue */
	size_t head, n, cap;
	mp_table seen;              /* objects already reached (by any source): the first path stands */
	uint64_t *seen_obj;
	size_t nseen, cap_seen;
	const char *parent;         /* the path of the object being looked into */
	int level;                  /* its level */
	mp_err err;
};

static bool seen(struct collect *c, uint64_t obj)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(&c->seen, mp_table_hash_u64(obj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&c->seen, &p))
		if (c->seen_obj[id] == obj)
			return true;
	if ((c->err = mp_array_grow((void **)&c->seen_obj, &c->cap_seen, c->nseen + 1, sizeof *c->seen_obj)) != MP_OK ||
	    (c->err = mp_table_add(&c->seen, &p, (uint32_t)c->nseen)) != MP_OK)
		return true;
	c->seen_obj[c->nseen++] = obj;
	return false;
}

static void record(struct collect *c, const char *name, uint64_t value)
{
	owners_build *b = c->b;
	owners_variable *v;

	if ((c->err = mp_array_grow((void **)&b->vars, &b->cap_vars, b->nvars + 1, sizeof *b->vars)) != MP_OK)
		return;
	v = &b->vars[b->nvars];
	*v = (owners_variable){ .name = strdup(name), .value = value, .thread = c->thread, .depth = c->depth,
				.stable = c->stable };
	/* an unstable path names nothing: where it was seen says it all */
	if (c->stable ? (v->where = strdup(c->where)) == NULL
		      : asprintf(&v->where, "%s, as %s (a frame inside installed code or a forward)", c->where, name) < 0)
		v->where = NULL;
	if (v->name == NULL || v->where == NULL) {
		free(v->name);
		free(v->where);
		c->err = MP_E_NOMEM;
		return;
	}
	b->nvars++;
}

/* PATH reaches OBJ at LEVEL: a name for it when it is the first, and a step to look into it later. */
static void reach(struct collect *c, const char *path, uint64_t obj, int level)
{
	char *copy;

	if (c->err != MP_OK || mp_py_is_none(c->b->heap, obj) || c->nseen >= MAX_VISITS || seen(c, obj))
		return;
	if (owners_object_kind(c->b, obj) >= 0)
		record(c, path, obj);
	if (c->err != MP_OK || level >= MAX_LEVEL)
		return;
	if ((copy = strdup(path)) == NULL ||
	    (c->err = mp_array_grow((void **)&c->queue, &c->cap, c->n + 1, sizeof *c->queue)) != MP_OK) {
		free(copy);
		c->err = MP_E_NOMEM;
		return;
	}
	c->queue[c->n++] = (struct step){ copy, obj, level };
}

/* The step below the object being looked into: PARENT.NAME or PARENT['NAME'] (FMT), or PARENT[I]. */
static void reach_name(struct collect *c, uint64_t obj, const char *fmt, const char *name)
{
	char *path;

	if (asprintf(&path, fmt, c->parent, name) < 0) {
		c->err = MP_E_NOMEM;
		return;
	}
	reach(c, path, obj, c->level + 1);
	free(path);
}

static void reach_index(struct collect *c, uint64_t obj, long long i)
{
	char *path;

	if (asprintf(&path, "%s[%lld]", c->parent, i) < 0) {
		c->err = MP_E_NOMEM;
		return;
	}
	reach(c, path, obj, c->level + 1);
	free(path);
}

/* PARENT['KEY'] (str keys) or PARENT[KEY] (int keys) for a dict's items. */
static bool dict_item(void *ctx, uint64_t key, uint64_t value)
{
	struct collect *c = ctx;
	char *k;
	int64_t i;

	if (mp_py_str(c->b->heap, key, &k, NULL) == MP_OK) {
		reach_name(c, value, "%s['%s']", k);
		free(k);
	} else if (mp_py_long(c->b->heap, key, &i, NULL) == MP_OK) {
		reach_index(c, value, (long long)i);
	}
	return c->err == MP_OK;
}

static bool attribute(void *ctx, const char *name, uint64_t value)
{
	struct collect *c = ctx;

	reach_name(c, value, "%s.%s", name);
	return c->err == MP_OK;
}

/* Whether OBJ is an instance of a class defined in Python (what holds a job's objects: a trainer, a scaler, a
   config), not a type, module, function or built-in value. */
static bool python_instance(owners_build *b, uint64_t obj)
{
	const mp_py_type *ty;
	uint64_t type;

	if (mp_py_object_type(b->heap, obj, &type, NULL) != MP_OK || (ty = mp_py_heap_type(b->heap, type, NULL)) == NULL)
		return false;
	return (ty->flags & MP_PY_TPFLAGS_HEAPTYPE) && !(ty->flags & MP_PY_TPFLAGS_TYPE_SUBCLASS);
}

/* The public properties of frameworks' objects users name things by, and the attributes under them that hold
   their values (Lightning's Trainer: trainer.optimizers is trainer._accelerator_connector.strategy._optimizers):
   looked up before the object's own attributes, so that the property's path is the one that names. */
#define LIGHTNING "lightning.pytorch.trainer.trainer"
#define PL_LIGHTNING "pytorch_lightning.trainer.trainer"
#define STRATEGY "_accelerator_connector.strategy"
static const struct property {
	const char *module, *type, *name, *path;
} properties_of[] = {
	{ LIGHTNING, "Trainer", "optimizers", STRATEGY "._optimizers" },
	{ LIGHTNING, "Trainer", "scaler", STRATEGY "._precision_plugin.scaler" },
	{ LIGHTNING, "Trainer", "strategy", STRATEGY },
	{ PL_LIGHTNING, "Trainer", "optimizers", STRATEGY "._optimizers" },
	{ PL_LIGHTNING, "Trainer", "scaler", STRATEGY "._precision_plugin.scaler" },
	{ PL_LIGHTNING, "Trainer", "strategy", STRATEGY },
};

/* The object at the attribute path PATH below OBJ ("a.b.c") in *OUT; false when an attribute is missing. */
static bool follow(owners_build *b, uint64_t obj, const char *path, uint64_t *out)
{
	char name[64];

	for (const char *p = path; *p != '\0'; p += *p == '.') {
		size_t n = strcspn(p, ".");

		if (n >= sizeof name)
			return false;
		memcpy(name, p, n);
		name[n] = '\0';
		if (mp_py_attr(b->heap, obj, name, &obj, NULL) != MP_OK)
			return false;
		p += n;
	}
	*out = obj;
	return true;
}

static void properties(struct collect *c, uint64_t obj)
{
	const mp_py_type *ty;
	uint64_t type, value;

	if (mp_py_object_type(c->b->heap, obj, &type, NULL) != MP_OK ||
	    (ty = mp_py_heap_type(c->b->heap, type, NULL)) == NULL)
		return;
	for (size_t i = 0; i < sizeof properties_of / sizeof properties_of[0] && c->err == MP_OK; i++)
		if (mp_py_type_is(c->b->heap, ty, properties_of[i].module, properties_of[i].type) &&
		    follow(c->b, obj, properties_of[i].path, &value))
			reach_name(c, value, "%s.%s", properties_of[i].name);
}

/* Look into the object of step S: its items, its attributes, or the optimizer it wraps. */
static void look_into(struct collect *c, const struct step *s)
{
	owners_build *b = c->b;
	uint64_t *items = NULL, inner;
	size_t n = 0;
	int kind = owners_object_kind(b, s->obj);

	c->parent = s->path;
	c->level = s->level;
	if (kind == OBJ_OPTIMIZER) {
		/* a wrapper forwards state and param_groups: the optimizer it wraps takes its path */
		if ((inner = owners_wrapped_optimizer(b, s->obj)) != 0 && !seen(c, inner))
			record(c, s->path, inner);
		return;
	}
	if (kind >= 0)
		return; /* tensors and modules are named by what is below them (owners_entries.c) */
	if (mp_py_seq_items(b->heap, s->obj, &items, &n, MAX_ITEMS, NULL) == MP_OK) {
		for (size_t i = 0; i < n && c->err == MP_OK; i++)
			reach_index(c, items[i], (long long)i);
		free(items);
		return;
	}
	if (mp_py_dict_each(b->heap, s->obj, dict_item, c, NULL) == MP_OK || c->err != MP_OK)
		return;
	if (!python_instance(b, s->obj))
		return;
	properties(c, s->obj);
	if (mp_py_attrs_each(b->heap, s->obj, attribute, c, NULL) != MP_OK)
		return; /* damage: the names found so far stand */
}

/* Breadth first through what the source's variables (reached already) hold. */
static void drain(struct collect *c)
{
	for (; c->head < c->n && c->err == MP_OK; c->head++)
		look_into(c, &c->queue[c->head]);
	for (size_t i = 0; i < c->n; i++)
		free(c->queue[i].path);
	c->head = c->n = 0;
}

static bool global(void *ctx, uint64_t key, uint64_t value)
{
	struct collect *c = ctx;
	char *name;

	if (mp_py_str(c->b->heap, key, &name, NULL) == MP_OK) {
		reach(c, name, value, 0);
		free(name);
	}
	return c->err == MP_OK;
}

static bool local(void *ctx, const char *name, uint64_t value)
{
	struct collect *c = ctx;

	reach(c, name, value, 0);
	return c->err == MP_OK;
}

/* Thread I's frames, the outermost first: the stable ones (STABLE), those from the first frame of installed
   code or of a forward on (!STABLE). */
static void frames(struct collect *c, size_t i, bool stable)
{
	owners_build *b = c->b;
	const mp_py_thread *th = &b->threads.threads[i];
	mp_diag d = { .msg = "" };
	char where[512];

	c->stable = true;
	for (size_t j = th->nframes; j-- > 0 && c->err == MP_OK;) {
		const mp_py_frame *f = &th->frames[j];

		if (mp_path_installed(f->filename, strlen(f->filename)) || strcmp(f->name, "forward") == 0)
			c->stable = false;
		if (c->stable != stable)
			continue;
		snprintf(where, sizeof where, "local variable of %s() at %s:%d", f->qualname, f->filename, f->line);
		c->where = where;
		c->thread = (int)i;
		c->depth = (int)j;
		d.msg[0] = '\0';
		if (mp_py_frame_locals(b->t, &b->py, &b->rt, f, local, c, &d) != MP_OK && c->err == MP_OK &&
		    d.msg[0] != '\0')
			mp_warn_damage(b->diag, "the locals of %s() could not be read: %s", f->name, d.msg);
		drain(c);
	}
}

mp_err owners_variables(owners_build *b)
{
	struct collect c = { .b = b, .where = "global of __main__", .thread = -1, .stable = true, .err = MP_OK };
	mp_diag d = { .msg = "" };
	uint64_t dict;

	if (mp_py_module_dict(b->heap, "__main__", &dict, &d) == MP_OK && mp_py_dict_each(b->heap, dict, global, &c, &d) != MP_OK &&
	    c.err == MP_OK)
		mp_warn_damage(b->diag, "the globals of __main__ could not be read: %s", d.msg);
	drain(&c);
	for (int stable = 1; stable >= 0; stable--)
		for (size_t i = 0; b->have_threads && i < b->threads.nthreads && c.err == MP_OK; i++)
			frames(&c, i, stable);
	free(c.queue);
	free(c.seen_obj);
	mp_table_free(&c.seen);
	return c.err;
}

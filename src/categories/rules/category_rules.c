/* category_rules.c - user rules from a JSON file (cJSON), checked key by key so that a bad
   file gets one line naming the rule and what is wrong with it. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_block_query.h"
#include "mp_category.h"

struct mp_category_ruleset {
	mp_category_rule *rules;
	size_t n;
	void **owned; /* everything the rules point to */
	size_t nowned;
};

/* The parse of one file: where errors point. */
struct parse {
	mp_category_ruleset *set;
	size_t index;     /* of the rule being read */
	const char *name; /* its name, once read */
	mp_diag *diag;
};

static mp_err bad(struct parse *p, const char *fmt, ...) MP_PRINTF(2, 3);

static mp_err bad(struct parse *p, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (p->name != NULL)
		return mp_fail(p->diag, MP_E_USAGE, "rules[%zu] ('%s'): %s", p->index, p->name, why);
	return mp_fail(p->diag, MP_E_USAGE, "rules[%zu]: %s", p->index, why);
}

/* Allocate N zeroed bytes owned by the set. */
static void *own(struct parse *p, size_t n)
{
	void *mem = calloc(1, n ? n : 1);
	void **grown = realloc(p->set->owned, (p->set->nowned + 1) * sizeof *grown);

	if (mem == NULL || grown == NULL) {
		free(mem);
		if (grown != NULL)
			p->set->owned = grown;
		return NULL;
	}
	p->set->owned = grown;
	grown[p->set->nowned++] = mem;
	return mem;
}

static mp_err no_memory(struct parse *p)
{
	return mp_fail(p->diag, MP_E_NOMEM, "rules: out of memory");
}

static mp_err copy_string(struct parse *p, const char *s, const char **out)
{
	char *copy = own(p, strlen(s) + 1);

	if (copy == NULL)
		return no_memory(p);
	memcpy(copy, s, strlen(s) + 1);
	*out = copy;
	return MP_OK;
}

/* A whole number of JSON (cJSON keeps numbers as doubles: exact up to 2^53). */
static mp_err get_int(struct parse *p, const cJSON *item, const char *key, int64_t *out)
{
	double d = item->valuedouble;

	if (!cJSON_IsNumber(item) || d != floor(d) || fabs(d) > 9007199254740992.0)
		return bad(p, "'%s' must be a whole number", key);
	*out = (int64_t)d;
	return MP_OK;
}

static mp_err get_size(struct parse *p, const cJSON *item, const char *key, int64_t *out)
{
	mp_err err = get_int(p, item, key, out);

	if (err == MP_OK && *out < 0)
		return bad(p, "'%s' must not be negative", key);
	return err;
}

static mp_err get_glob(struct parse *p, const cJSON *g, const char *key, const char **out)
{
	if (!cJSON_IsString(g) || g->valuestring[0] == '\0')
		return bad(p, "'%s' must hold non-empty strings (globs)", key);
	return copy_string(p, g->valuestring, out);
}

/* A glob or a list of globs, as a NULL-terminated list. */
static mp_err get_globs(struct parse *p, const cJSON *item, const char *key, const char *const **out)
{
	size_t n = cJSON_IsArray(item) ? (size_t)cJSON_GetArraySize(item) : 1, i = 0;
	const char **globs;
	const cJSON *g;
	mp_err err = MP_OK;

	if (!cJSON_IsString(item) && !(cJSON_IsArray(item) && n > 0))
		return bad(p, "'%s' must be a glob or a non-empty list of globs", key);
	if ((globs = own(p, (n + 1) * sizeof *globs)) == NULL)
		return no_memory(p);
	if (cJSON_IsString(item))
		err = get_glob(p, item, key, &globs[0]);
	else
		cJSON_ArrayForEach(g, item)
			if ((err = get_glob(p, g, key, &globs[i++])) != MP_OK)
				break;
	*out = globs;
	return err;
}

static mp_err get_frame(struct parse *p, const cJSON *obj, mp_frame_cond *fc)
{
	const cJSON *item;
	mp_err err = MP_OK;

	if (!cJSON_IsObject(obj))
		return bad(p, "'frames' must be an object or a list of objects");
	cJSON_ArrayForEach(item, obj) {
		const char *key = item->string;

		if (strcmp(key, "file") == 0) {
			err = get_globs(p, item, "frames.file", &fc->file);
		} else if (strcmp(key, "function") == 0) {
			err = get_globs(p, item, "frames.function", &fc->function);
		} else if (strcmp(key, "where") == 0) {
			if (!cJSON_IsString(item) ||
			    (strcmp(item->valuestring, "any") != 0 && strcmp(item->valuestring, "innermost_user") != 0))
				return bad(p, "'frames.where' must be \"any\" or \"innermost_user\"");
			fc->innermost_user = strcmp(item->valuestring, "innermost_user") == 0;
		} else {
			return bad(p, "unknown key 'frames.%s' (file, function, where)", key);
		}
		if (err != MP_OK)
			return err;
	}
	return MP_OK;
}

static mp_err get_frames(struct parse *p, const cJSON *item, mp_category_rule *r)
{
	size_t n = cJSON_IsArray(item) ? (size_t)cJSON_GetArraySize(item) : 1, i = 0;
	mp_frame_cond *conds = own(p, n * sizeof *conds);
	const cJSON *f;
	mp_err err = MP_OK;

	if (conds == NULL)
		return no_memory(p);
	if (!cJSON_IsArray(item))
		err = get_frame(p, item, &conds[0]);
	else
		cJSON_ArrayForEach(f, item)
			if ((err = get_frame(p, f, &conds[i++])) != MP_OK)
				break;
	r->frames = conds;
	r->nframes = n;
	return err;
}

static mp_err get_pool(struct parse *p, const cJSON *item, mp_category_rule *r)
{
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2)
		return bad(p, "'pool' must be a list of two whole numbers");
	r->has_pool = true;
	if (get_int(p, cJSON_GetArrayItem(item, 0), "pool", &r->pool[0]) != MP_OK)
		return MP_E_USAGE;
	return get_int(p, cJSON_GetArrayItem(item, 1), "pool", &r->pool[1]);
}

static mp_err get_state(struct parse *p, const cJSON *item, mp_category_rule *r)
{
	mp_diag why = { 0 };

	if (!cJSON_IsString(item))
		return bad(p, "'state' must be a string");
	if (mp_block_states_parse(item->valuestring, &r->states, &why) != MP_OK)
		return bad(p, "'state': %s", why.msg);
	return MP_OK;
}

/* "phase": one name or a list of names of enum mp_category_phase, all of which must hold. */
static mp_err get_phases(struct parse *p, const cJSON *item, mp_category_rule *r)
{
	const cJSON *one;
	unsigned bit;

	if (cJSON_IsString(item))
		return mp_category_phase_parse(item->valuestring, strlen(item->valuestring), &r->phases)
			       ? MP_OK
			       : bad(p, "'phase' must name phases (backward, outlives_backward, parameter_size, before_forward, within_operator, before_backward)");
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) == 0)
		return bad(p, "'phase' must be a name or a non-empty list of names");
	cJSON_ArrayForEach(one, item) {
		if (!cJSON_IsString(one) || !mp_category_phase_parse(one->valuestring, strlen(one->valuestring), &bit))
			return bad(p, "'phase' must name phases (backward, outlives_backward, parameter_size, before_forward, within_operator, before_backward)");
		r->phases |= bit;
	}
	return MP_OK;
}

static mp_err get_key(struct parse *p, const cJSON *item, mp_category_rule *r)
{
	const char *key = item->string;

	if (strcmp(key, "name") == 0)
		return MP_OK; /* read first, by get_rule */
	if (strcmp(key, "category") == 0) {
		if (!cJSON_IsString(item) ||
		    !mp_category_parse(item->valuestring, strlen(item->valuestring), &r->category))
			return bad(p, "'category' must name a category (PARAMETER, OPTIMIZER_STATE, INPUT, "
				      "TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, BUFFER, UNKNOWN)");
		return MP_OK;
	}
	if (strcmp(key, "frames") == 0)
		return get_frames(p, item, r);
	if (strcmp(key, "state") == 0)
		return get_state(p, item, r);
	if (strcmp(key, "min_size") == 0)
		return r->has_min_size = true, get_size(p, item, key, &r->min_size);
	if (strcmp(key, "max_size") == 0)
		return r->has_max_size = true, get_size(p, item, key, &r->max_size);
	if (strcmp(key, "stream") == 0)
		return r->has_stream = true, get_int(p, item, key, &r->stream);
	if (strcmp(key, "pool") == 0)
		return get_pool(p, item, r);
	if (strcmp(key, "phase") == 0)
		return get_phases(p, item, r);
	if (strcmp(key, "segment_type") == 0) {
		if (!cJSON_IsString(item) ||
		    (strcmp(item->valuestring, "large") != 0 && strcmp(item->valuestring, "small") != 0))
			return bad(p, "'segment_type' must be \"large\" or \"small\"");
		return copy_string(p, item->valuestring, &r->segment_type);
	}
	return bad(p, "unknown key '%s'", key);
}

static mp_err get_rule(struct parse *p, const cJSON *obj, mp_category_rule *r)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name"), *item;
	mp_err err;

	p->name = NULL;
	if (!cJSON_IsObject(obj))
		return bad(p, "a rule must be an object");
	if (!cJSON_IsString(name) || name->valuestring[0] == '\0')
		return bad(p, "no 'name' (a non-empty string)");
	if ((err = copy_string(p, name->valuestring, &r->name)) != MP_OK)
		return err;
	p->name = r->name;
	if (cJSON_GetObjectItemCaseSensitive(obj, "category") == NULL)
		return bad(p, "no 'category'");
	cJSON_ArrayForEach(item, obj)
		if ((err = get_key(p, item, r)) != MP_OK)
			return err;
	if (r->has_min_size && r->has_max_size && r->min_size > r->max_size)
		return bad(p, "'min_size' is above 'max_size'");
	return MP_OK;
}

static mp_err get_rules(struct parse *p, const cJSON *root)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "rules"), *item;
	mp_err err;

	if (!cJSON_IsObject(root))
		return mp_fail(p->diag, MP_E_USAGE, "rules: the file must hold an object {\"rules\": [...]}");
	cJSON_ArrayForEach(item, root)
		if (strcmp(item->string, "rules") != 0)
			return mp_fail(p->diag, MP_E_USAGE, "rules: unknown key '%s' (only \"rules\")", item->string);
	if (!cJSON_IsArray(list))
		return mp_fail(p->diag, MP_E_USAGE, "rules: no \"rules\" list");
	p->set->n = (size_t)cJSON_GetArraySize(list);
	if ((p->set->rules = own(p, p->set->n * sizeof *p->set->rules)) == NULL)
		return no_memory(p);
	p->index = 0;
	cJSON_ArrayForEach(item, list) {
		if ((err = get_rule(p, item, &p->set->rules[p->index])) != MP_OK)
			return err;
		p->index++;
	}
	return MP_OK;
}

mp_err mp_category_rules_parse(const char *text, size_t len, mp_category_ruleset **out, mp_diag *diag)
{
	struct parse p = { .diag = diag };
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	mp_err err;

	*out = NULL;
	if (root == NULL) {
		size_t at = end != NULL && end >= text ? (size_t)(end - text) : 0;

		return mp_fail(diag, MP_E_CORRUPT, "rules: not valid JSON (near byte %zu)", at);
	}
	if ((p.set = calloc(1, sizeof *p.set)) == NULL) {
		cJSON_Delete(root);
		return mp_fail(diag, MP_E_NOMEM, "rules: out of memory");
	}
	err = get_rules(&p, root);
	cJSON_Delete(root);
	if (err != MP_OK) {
		mp_category_ruleset_free(p.set);
		return err;
	}
	*out = p.set;
	return MP_OK;
}

/* Rules files are small: anything bigger is not one. */
#define MAX_RULES_FILE (16u << 20)

mp_err mp_category_rules_load(const char *path, mp_category_ruleset **out, mp_diag *diag)
{
	FILE *f = fopen(path, "rb");
	char *text = malloc(MAX_RULES_FILE);
	size_t len = 0;
	mp_err err;

	*out = NULL;
	if (f == NULL || text == NULL) {
		err = f == NULL ? mp_fail(diag, MP_E_ERRNO, "'%s': %s", path, strerror(errno))
				: mp_fail(diag, MP_E_NOMEM, "'%s': out of memory", path);
		goto done;
	}
	len = fread(text, 1, MAX_RULES_FILE, f);
	if (ferror(f) || len == MAX_RULES_FILE) {
		err = mp_fail(diag, ferror(f) ? MP_E_ERRNO : MP_E_LIMIT, "'%s': %s", path,
			      ferror(f) ? "cannot read it" : "too big for a rules file");
		goto done;
	}
	if ((err = mp_category_rules_parse(text, len, out, diag)) != MP_OK) {
		char why[sizeof diag->msg];

		snprintf(why, sizeof why, "%s", diag->msg);
		diag->msg[0] = '\0'; /* mp_fail keeps a message: this one replaces it */
		mp_fail(diag, err, "'%s': %s", path, why);
	}
done:
	if (f != NULL)
		fclose(f);
	free(text);
	return err;
}

const mp_category_rule *mp_category_ruleset_rules(const mp_category_ruleset *set, size_t *n)
{
	*n = set != NULL ? set->n : 0;
	return set != NULL ? set->rules : NULL;
}

void mp_category_ruleset_free(mp_category_ruleset *set)
{
	if (set == NULL)
		return;
	for (size_t i = 0; i < set->nowned; i++)
		free(set->owned[i]);
	free(set->owned);
	free(set);
}

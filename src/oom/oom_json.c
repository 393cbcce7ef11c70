/* oom_json.c - the explanation as one JSON object (`oom --format json`): every size in bytes, the causes in
   their order of weight, remedies that would have worked and those that would not (not_helping), and the changes of the job's
   requests listed without a claim (to_try). */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "oom_int.h"

static const char *const sources[] = { "trace", "exception", "arguments" };
static const char *const verdicts[] = { "oom", "cached", "cudamalloc", "after_release", "unknown_free" };

static void add_size(cJSON *o, const char *name, int64_t v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddNumberToObject(o, name, (double)v);
}

static cJSON *message(const mp_oom_message *m)
{
	cJSON *o = cJSON_CreateObject();

	add_size(o, "tried", m->tried);
	add_size(o, "capacity", m->capacity);
	add_size(o, "free", m->free);
	add_size(o, "in_use", m->in_use);
	add_size(o, "allowed", m->allowed);
	add_size(o, "allocated", m->allocated);
	add_size(o, "private_pools", m->private_pools);
	add_size(o, "reserved_unallocated", m->reserved_unallocated);
	return o;
}

static cJSON *request(const mp_oom *o)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "source", sources[o->req.source]);
	cJSON_AddStringToObject(r, "where", o->req.where);
	cJSON_AddNumberToObject(r, "device", (double)o->req.device);
	cJSON_AddNumberToObject(r, "stream", (double)o->req.stream);
	cJSON_AddNumberToObject(r, "size", (double)o->req.size);
	cJSON_AddNumberToObject(r, "rounded", (double)o->rounded);
	cJSON_AddBoolToObject(r, "size_exact", o->size_exact);
	if (!o->size_exact) {
		/* the rounded size lies in (min, max], or with also_large in (18 MiB, 20 MiB] too */
		cJSON_AddNumberToObject(r, "min", (double)o->size_above);
		cJSON_AddNumberToObject(r, "max", (double)o->size_max);
		cJSON_AddBoolToObject(r, "also_18_to_20_mib", o->size_also_large);
	}
	cJSON_AddStringToObject(r, "pool", o->small_pool ? "small" : "large");
	cJSON_AddNumberToObject(r, "allocation_size", (double)o->alloc_size);
	add_size(r, "device_free", o->req.device_free);
	add_size(r, "room", o->room);
	cJSON_AddNumberToObject(r, "events_after", (double)o->req.events_after);
	return r;
}

static cJSON *figures(const mp_oom *o)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddNumberToObject(f, "reserved", (double)o->reserved);
	cJSON_AddNumberToObject(f, "allocated", (double)o->allocated);
	cJSON_AddNumberToObject(f, "live", (double)o->live);
	cJSON_AddNumberToObject(f, "pending_free", (double)o->pending);
	cJSON_AddNumberToObject(f, "private_free", (double)o->private_free);
	add_size(f, "usable", o->usable);
	cJSON_AddNumberToObject(f, "largest_free", (double)o->largest_free);
	cJSON_AddNumberToObject(f, "released_by_retry", (double)o->released_by_retry);
	if (o->max_split_size == INT64_MAX)
		cJSON_AddNullToObject(f, "max_split_size");
	else
		cJSON_AddNumberToObject(f, "max_split_size", (double)o->max_split_size);
	cJSON_AddBoolToObject(f, "expandable_segments", o->expandable);
	cJSON_AddBoolToObject(f, "settings_read", o->settings_known);
	return f;
}

static cJSON *causes(const mp_oom *o)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < o->ncauses; i++) {
		cJSON *c = cJSON_CreateObject();

		cJSON_AddStringToObject(c, "id", mp_oom_cause_name(o->causes[i].id));
		cJSON_AddNumberToObject(c, "bytes", (double)o->causes[i].bytes);
		cJSON_AddNumberToObject(c, "largest_block", (double)o->causes[i].largest);
		cJSON_AddBoolToObject(c, "sufficient", o->causes[i].sufficient);
		cJSON_AddStringToObject(c, "evidence", o->causes[i].evidence);
		cJSON_AddItemToArray(a, c);
	}
	return a;
}

/* The remedies claimed to work (WORKS), claimed not to help, or (UNTESTED) listed without a claim. */
static cJSON *remedies(const mp_oom *o, bool works, bool untested)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < o->nremedies; i++) {
		if (o->remedies[i].untested != untested || (!untested && o->remedies[i].works != works))
			continue;
		cJSON *r = cJSON_CreateObject();

		const mp_oom_remedy *m = &o->remedies[i];

		cJSON_AddStringToObject(r, "id", mp_oom_remedy_name(m->id));
		cJSON_AddStringToObject(r, "action", m->action);
		cJSON_AddStringToObject(r, "why", m->why);
		if (!untested) {
			cJSON_AddStringToObject(r, "evidence", mp_oom_evidence_name(m->evidence));
			if (works)
				cJSON_AddStringToObject(r, "covers", m->covers_step ? "step" : "request");
			else
				cJSON_AddStringToObject(r, "fails", m->fails_later ? "step" : "request");
		}
		if (m->has_conf)
			cJSON_AddStringToObject(r, "conf", m->conf);
		if (m->place_file[0] != '\0') {
			cJSON *p = cJSON_AddObjectToObject(r, "empty_cache_after");

			cJSON_AddStringToObject(p, "file", m->place_file);
			cJSON_AddNumberToObject(p, "line", (double)m->place_line);
			cJSON_AddStringToObject(p, "function", m->place_function);
		}
		if (m->kind != MP_OOM_K_NONE) {
			cJSON_AddStringToObject(r, "holder", m->holder);
			cJSON_AddStringToObject(r, "kind", mp_oom_remedy_kind_name(m->kind));
		}
		cJSON_AddItemToArray(a, r);
	}
	return a;
}

static cJSON *others(const mp_oom *o)
{
	cJSON *h = cJSON_CreateArray(), *f = cJSON_CreateArray(), *both = cJSON_CreateObject();

	for (int i = 0; i < o->nholders; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "name", o->holders[i].name);
		cJSON_AddNumberToObject(x, "bytes", (double)o->holders[i].bytes);
		cJSON_AddNumberToObject(x, "blocks", (double)o->holders[i].nblocks);
		cJSON_AddStringToObject(x, "what", mp_oom_holder_what_name(o->holders[i].what));
		cJSON_AddItemToArray(h, x);
	}
	for (int i = 0; i < o->nfrags; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "pool", o->frags[i].pool);
		cJSON_AddNumberToObject(x, "stream", (double)o->frags[i].stream);
		cJSON_AddNumberToObject(x, "free", (double)o->frags[i].free_bytes);
		cJSON_AddNumberToObject(x, "free_blocks", (double)o->frags[i].nfree);
		cJSON_AddNumberToObject(x, "largest", (double)o->frags[i].largest);
		cJSON_AddNumberToObject(x, "fragmentation", o->frags[i].fragmentation);
		cJSON_AddNumberToObject(x, "sq_ratio", o->frags[i].sq_ratio);
		cJSON_AddItemToArray(f, x);
	}
	cJSON_AddStringToObject(both, "by", o->holders_by != NULL ? o->holders_by : "block");
	cJSON_AddItemToObject(both, "holders", h);
	cJSON_AddItemToObject(both, "fragmentation", f);
	return both;
}

void oom_report_json(const mp_oom *o, mp_out *out)
{
	cJSON *j = cJSON_CreateObject(), *d = cJSON_CreateArray(), *x;
	char *text;

	cJSON_AddBoolToObject(j, "oom", mp_oom_is_oom(o));
	cJSON_AddStringToObject(j, "verdict", verdicts[o->verdict]);
	cJSON_AddItemToObject(j, "request", request(o));
	if (o->req.has_message)
		cJSON_AddItemToObject(j, "message", message(&o->req.message));
	cJSON_AddItemToObject(j, "computed_message", message(&o->computed));
	cJSON_AddItemToObject(j, "figures", figures(o));
	for (int i = 0; i < o->ndecision; i++)
		cJSON_AddItemToArray(d, cJSON_CreateString(o->decision[i]));
	cJSON_AddItemToObject(j, "decision", d);
	cJSON_AddItemToObject(j, "causes", causes(o));
	x = cJSON_AddArrayToObject(j, "setting_causes");
	for (int i = 0; i < o->nsetting_causes; i++) {
		cJSON *c = cJSON_CreateObject();

		cJSON_AddStringToObject(c, "setting", o->setting_causes[i].setting);
		cJSON_AddStringToObject(c, "evidence", mp_oom_evidence_name(o->setting_causes[i].evidence));
		cJSON_AddStringToObject(c, "why", o->setting_causes[i].why);
		cJSON_AddItemToArray(x, c);
	}
	cJSON_AddBoolToObject(j, "replayed", o->replayed);
	cJSON_AddStringToObject(j, "no_replay", o->replayed ? "" : o->no_replay);
	cJSON_AddItemToObject(j, "remedies", remedies(o, true, false));
	cJSON_AddItemToObject(j, "not_helping", remedies(o, false, false));
	cJSON_AddItemToObject(j, "to_try", remedies(o, false, true));
	x = others(o);
	cJSON_AddItemToObject(j, "holders_by", cJSON_DetachItemFromObject(x, "by"));
	cJSON_AddItemToObject(j, "holders", cJSON_DetachItemFromObject(x, "holders"));
	cJSON_AddBoolToObject(j, "training", o->training);
	cJSON_AddStringToObject(j, "holders_note", o->holders_note);
	cJSON_AddItemToObject(j, "fragmentation", cJSON_DetachItemFromObject(x, "fragmentation"));
	cJSON_Delete(x);
	if ((text = cJSON_Print(j)) == NULL) {
		out->err = MP_E_NOMEM;
	} else {
		mp_out_puts(out, text);
		mp_out_putc(out, '\n');
		free(text);
	}
	cJSON_Delete(j);
}

/* whatif_report.c - a replay told: the history it came from, whether the model did what the job did under the
   job's own settings (without which the replay proves nothing), and what the job would have done under the
   settings asked about: where it runs out, or that the request is served, and the step after it. As text or
   as one JSON object (sizes in bytes). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "mp_format.h"
#include "mp_whatif.h"

static void size(mp_out *out, int64_t v, enum mp_units u)
{
	char buf[40];

	if (u == MP_UNITS_AUTO)
		mp_out_puts(out, mp_format_torch_size(buf, sizeof buf, v));
	else
		mp_format_size(out, v, u);
}

/* Where the history begins: from the job's first request, or from a state rebuilt at the ring's start. */
static void history(const mp_whatif *w, mp_out *out)
{
	int64_t requests = 0;

	for (size_t i = w->h.nplanted; i < w->h.nops; i++)
		requests += w->h.ops[i].kind == MP_SIM_OP_ALLOC;
	mp_out_printf(out, "history: device %lld, %lld allocations recorded", (long long)w->h.device, (long long)requests);
	if (w->h.whole)
		mp_out_puts(out, ", from the allocator's first request\n");
	else
		mp_out_printf(out, "; the ring began later: %zu blocks live before it are placed first, in address order\n",
			      w->h.nplanted);
	mp_out_printf(out, "settings: the job's %s; PyTorch %d.%d rules%s\n",
		      w->recorded_text[0] ? w->recorded_text : "(defaults)", w->release.major, w->release.minor,
		      w->release_guessed ? " (release guessed from the snapshot's keys)" : "");
}

static void outcome(const mp_whatif *w, const char *conf_text, const mp_sim_outcome *o, enum mp_units u, mp_out *out)
{
	char site[240];

	mp_out_printf(out, "under %s:\n", conf_text[0] ? conf_text : "the defaults");
	if (o->refused) {
		mp_out_puts(out, "  the model could not go on (device address space or host memory exhausted)\n");
		return;
	}
	if (o->oom_op >= 0 && o->oom_op != w->h.request) {
		mp_out_puts(out, "  runs out earlier, at a request of ");
		size(out, w->h.ops[o->oom_op].size, u);
		mp_out_printf(out, " from %s (%lld requests before the job's OOM)\n",
			      mp_whatif_site(w, o->oom_op, site, sizeof site),
			      (long long)mp_whatif_requests_between(w, o->oom_op, w->h.request));
	} else if (o->oom_op == w->h.request) {
		mp_out_printf(out, "  runs out at the same request (%s), with ", mp_whatif_site(w, o->oom_op, site, sizeof site));
		size(out, o->reserved_at_oom, u);
		mp_out_puts(out, " reserved\n");
	} else if (w->h.request >= 0) {
		mp_out_puts(out, "  the request is served; peak reserved ");
		size(out, o->peak_reserved, u);
		mp_out_puts(out, "\n");
	} else {
		mp_out_puts(out, "  every recorded request is served; peak reserved ");
		size(out, o->peak_reserved, u);
		mp_out_puts(out, "\n");
	}
	if (!o->request_served)
		return;
	if (w->h.step_match < 0)
		mp_out_puts(out, "  only this request is covered: the ring holds no earlier step (no earlier request from the "
				 "same frames)\n");
	else if (!o->step_replayed)
		mp_out_puts(out, "  only this request is covered: the requests one step earlier do not repeat regularly\n");
	else if (o->step_oom_op >= 0)
		mp_out_printf(out, "  but the step after it runs out again %lld requests later, at %s\n",
			      (long long)mp_whatif_requests_between(w, w->h.step_match, o->step_oom_op),
			      mp_whatif_site(w, o->step_oom_op, site, sizeof site));
	else
		mp_out_printf(out, "  and the rest of the step (%lld allocations and frees, as one step earlier) completes\n",
			      (long long)o->step_ops);
}

static void plain(const mp_whatif *w, const char *conf_text, const mp_sim_outcome *o, enum mp_units u, mp_out *out)
{
	history(w, out);
	if (w->faithful)
		mp_out_puts(out, "check: under the job's settings the model runs out at the job's request with the job's "
				 "segments: the replay below is evidence\n");
	else
		mp_out_printf(out, "check: failed, %s: the replay below is no evidence\n", w->unfaithful);
	outcome(w, conf_text, o, u, out);
}

static void add_i64(cJSON *o, const char *name, int64_t v)
{
	cJSON_AddNumberToObject(o, name, (double)v);
}

static cJSON *place(const mp_whatif *w, int64_t op)
{
	char site[240];
	cJSON *p;

	if (op < 0)
		return cJSON_CreateNull();
	p = cJSON_CreateObject();
	add_i64(p, "trace_entry", w->h.ops[op].entry);
	add_i64(p, "size", w->h.ops[op].size);
	cJSON_AddStringToObject(p, "site", mp_whatif_site(w, op, site, sizeof site));
	return p;
}

static void json(const mp_whatif *w, const char *conf_text, const mp_sim_outcome *o, mp_out *out)
{
	cJSON *root = cJSON_CreateObject(), *h = cJSON_AddObjectToObject(root, "history");
	cJSON *c = cJSON_AddObjectToObject(root, "check"), *t = cJSON_AddObjectToObject(root, "tried");
	char release[16];
	char *text;

	add_i64(h, "device", w->h.device);
	cJSON_AddBoolToObject(h, "whole", w->h.whole);
	add_i64(h, "planted", (int64_t)w->h.nplanted);
	add_i64(h, "requests", (int64_t)w->h.nops);
	cJSON_AddStringToObject(h, "settings", w->recorded_text);
	snprintf(release, sizeof release, "%d.%d", w->release.major, w->release.minor);
	cJSON_AddStringToObject(h, "release", release);
	cJSON_AddBoolToObject(h, "release_guessed", w->release_guessed);
	cJSON_AddBoolToObject(c, "faithful", w->faithful);
	cJSON_AddStringToObject(c, "why", w->faithful ? "" : w->unfaithful);
	cJSON_AddStringToObject(t, "conf", conf_text);
	cJSON_AddBoolToObject(t, "refused", o->refused);
	cJSON_AddItemToObject(t, "oom", place(w, o->oom_op));
	cJSON_AddBoolToObject(t, "request_served", o->request_served);
	add_i64(t, "peak_reserved", o->peak_reserved);
	if (o->request_served && w->h.step_match >= 0) {
		cJSON *s = cJSON_AddObjectToObject(t, "step");

		cJSON_AddBoolToObject(s, "replayed", o->step_replayed);
		add_i64(s, "requests", o->step_ops);
		cJSON_AddItemToObject(s, "oom", place(w, o->step_oom_op));
		cJSON_AddBoolToObject(s, "completes", o->step_replayed && o->step_oom_op < 0);
	} else {
		cJSON_AddNullToObject(t, "step");
	}
	cJSON_AddBoolToObject(t, "passes", mp_whatif_passes(o, w->h.step_match >= 0));
	if ((text = cJSON_Print(root)) == NULL) {
		out->err = MP_E_NOMEM;
	} else {
		mp_out_puts(out, text);
		mp_out_puts(out, "\n");
		free(text);
	}
	cJSON_Delete(root);
}

void mp_whatif_report(const mp_whatif *w, const char *conf_text, const mp_sim_outcome *o,
		      enum mp_whatif_format format, enum mp_units units, mp_out *out)
{
	if (format == MP_WHATIF_JSON)
		json(w, conf_text, o, out);
	else
		plain(w, conf_text, o, units, out);
}

/* oom_report.c - the explanation as one screen of text (plain) or reStructuredText: the request and where it
   was found, PyTorch's numbers, the replayed decision, the causes by weight, the fragmentation of each pool
   and stream, who holds the memory, what would have worked and what would not have helped. */
#include <stdio.h>

#include "oom_int.h"

static const char *verdict_text(const mp_oom *o)
{
	switch (o->verdict) {
	case MP_OOM_V_OOM:
		return "out of memory";
	case MP_OOM_V_CACHED:
		return "no OOM: a cached block serves it";
	case MP_OOM_V_CUDAMALLOC:
		return "no OOM: cudaMalloc serves it";
	case MP_OOM_V_AFTER_RELEASE:
		return "no OOM: cudaMalloc serves it once the retry has released cached segments";
	default:
		return "out of memory unless the device has the allocation free (its free memory is unknown here)";
	}
}

static void size(mp_out *out, int64_t n, enum mp_units u)
{
	if (u == MP_UNITS_AUTO)
		mp_oom_format_size(out, n);
	else
		mp_format_size(out, n, u);
}

/* TITLE on a line; in rst underlined with RULE ('=' the document's title, '-' a section). */
static void heading_rule(mp_out *out, bool rst, const char *title, char rule)
{
	mp_out_printf(out, "%s%s\n", rule == '=' ? "" : "\n", title);
	if (!rst)
		return;
	for (const char *p = title; *p; p++)
		if ((*p & 0xc0) != 0x80)
			mp_out_putc(out, rule);
	mp_out_puts(out, "\n\n");
}

static void heading(mp_out *out, bool rst, const char *title)
{
	heading_rule(out, rst, title, '-');
}

static void item(mp_out *out, bool rst)
{
	mp_out_puts(out, rst ? "- " : "  ");
}

static void numbers(const mp_oom *o, const mp_oom_message *m, const char *who, enum mp_units u, mp_out *out,
		    bool rst)
{
	item(out, rst);
	mp_out_printf(out, "%s: tried to allocate ", who);
	size(out, m->tried, u);
	if (m->capacity >= 0) {
		mp_out_puts(out, "; total capacity ");
		size(out, m->capacity, u);
	}
	if (m->free >= 0) {
		mp_out_puts(out, "; free ");
		size(out, m->free, u);
	}
	mp_out_puts(out, "; allocated ");
	size(out, m->allocated, u);
	if (m->private_pools > 0) {
		mp_out_puts(out, " (with ");
		size(out, m->private_pools, u);
		mp_out_puts(out, " in private pools)");
	}
	mp_out_puts(out, "; reserved but unallocated ");
	size(out, m->reserved_unallocated, u);
	mp_out_puts(out, "\n");
	(void)o;
}

static void request(const mp_oom *o, enum mp_units u, mp_out *out, bool rst)
{
	char title[96];

	snprintf(title, sizeof title, "%s on device %lld, stream %lld", mp_oom_is_oom(o) ? "OOM" : "Request",
		 (long long)o->req.device, (long long)o->req.stream);
	heading_rule(out, rst, title, '=');
	if (o->size_exact) {
		mp_out_puts(out, "a request of ");
		size(out, o->rounded, u);
	} else {
		/* the message gives what cudaMalloc was asked for: the request lies within bounds */
		mp_out_puts(out, "a request of more than ");
		size(out, o->size_above, u);
		mp_out_puts(out, " and at most ");
		size(out, o->size_max, u);
		if (o->size_also_large)
			mp_out_puts(out, " (or of more than 18.00 MiB and at most 20.00 MiB)");
		mp_out_puts(out, ", its exact size unknown");
	}
	mp_out_printf(out, " (%s pool); cudaMalloc would be asked for ", o->small_pool ? "small" : "large");
	size(out, o->alloc_size, u);
	mp_out_printf(out, ".\nFound in %s.\n", o->req.where);
	if (o->req.events_after > 0)
		mp_out_printf(out, "The state was read %lld allocations and frees after the OOM (an except block, a later "
			      "stop): its figures are that state's; the replay of the trace is the OOM's own.\n",
			      (long long)o->req.events_after);
	heading(out, rst, "PyTorch's numbers");
	if (o->req.has_message)
		numbers(o, &o->req.message, "its message", u, out, rst);
	numbers(o, &o->computed, "this state", u, out, rst);
}

static void decision(const mp_oom *o, mp_out *out, bool rst)
{
	heading(out, rst, "The allocator's decision, replayed");
	for (int i = 0; i < o->ndecision; i++)
		mp_out_printf(out, "%s%d. %s\n", rst ? "" : "  ", i + 1, o->decision[i]);
	mp_out_printf(out, "%s=> %s\n", rst ? "\n" : "  ", verdict_text(o));
}

static void causes(const mp_oom *o, enum mp_units u, mp_out *out, bool rst)
{
	if (o->nsetting_causes > 0) {
		heading(out, rst, "The job's own settings");
		for (int i = 0; i < o->nsetting_causes; i++) {
			item(out, rst);
			mp_out_printf(out, "%s%s%s: %s\n", rst ? "``" : "", o->setting_causes[i].setting, rst ? "``" : "",
				      o->setting_causes[i].why);
		}
	}
	heading(out, rst, "Why the memory did not serve it (by weight)");
	if (o->ncauses == 0) {
		mp_out_puts(out, rst ? "No cause: nothing is reserved but unallocated.\n" : "  none: nothing is reserved but unallocated\n");
		return;
	}
	for (int i = 0; i < o->ncauses; i++) {
		const mp_oom_cause *c = &o->causes[i];

		item(out, rst);
		mp_out_printf(out, "%s%s%s ", rst ? "**" : "", mp_oom_cause_name(c->id), rst ? "**" : "");
		size(out, c->bytes, u);
		mp_out_printf(out, "%s: %s\n", c->sufficient ? " (enough, with the free memory)" : "", c->evidence);
	}
}

static void fragmentation(const mp_oom *o, enum mp_units u, mp_out *out, bool rst)
{
	int shown = 0;

	heading(out, rst, "Fragmentation of free memory (1 - largest/free; sum free^2 / free^2)");
	for (int i = 0; i < o->nfrags; i++)
		shown += o->frags[i].nfree > 0;
	if (shown == 0)
		mp_out_puts(out, rst ? "No free block.\n" : "  no free block\n");
	for (int i = 0; i < o->nfrags; i++) {
		const mp_oom_frag *f = &o->frags[i];

		if (f->nfree == 0)
			continue;
		item(out, rst);
		mp_out_printf(out, "%s pool, stream %lld: ", f->pool, (long long)f->stream);
		size(out, f->free_bytes, u);
		mp_out_printf(out, " free in %lld block%s, largest ", (long long)f->nfree, f->nfree == 1 ? "" : "s");
		size(out, f->largest, u);
		mp_out_printf(out, ": %.2f; %.2f\n", f->fragmentation, f->sq_ratio);
	}
}

static void holders(const mp_oom *o, enum mp_units u, mp_out *out, bool rst)
{
	char title[64];

	snprintf(title, sizeof title, "Who holds the live memory (by %s)", o->holders_by != NULL ? o->holders_by : "block");
	heading(out, rst, title);
	if (o->nholders == 0)
		mp_out_puts(out, rst ? "No live block.\n" : "  no live block\n");
	for (int i = 0; i < o->nholders; i++) {
		item(out, rst);
		size(out, o->holders[i].bytes, u);
		mp_out_printf(out, " in %lld block%s: %s\n", (long long)o->holders[i].nblocks,
			      o->holders[i].nblocks == 1 ? "" : "s", o->holders[i].name);
	}
	if (o->holders_note[0] != '\0')
		mp_out_printf(out, "%s%s\n", rst ? "\n" : "  note: ", o->holders_note);
}

static void remedies(const mp_oom *o, mp_out *out, bool rst, bool works)
{
	heading(out, rst, works ? "What would have worked" : "What would not have helped");
	if (works && !o->replayed && o->no_replay[0] != '\0')
		mp_out_printf(out, "%s(no setting is claimed to work without a replay of the job's requests: %s)\n", rst ? "" : "  ",
			      o->no_replay);
	for (int i = 0; i < o->nremedies; i++) {
		const mp_oom_remedy *r = &o->remedies[i];

		if (r->works != works || r->untested)
			continue;
		item(out, rst);
		mp_out_printf(out, "%s%s%s: %s [%s%s]\n", rst ? "``" : "", r->action, rst ? "``" : "", r->why,
			      r->evidence == MP_OOM_EV_REPLAY ? "replayed" : "estimated from the state",
			      !works ? "" : r->covers_step ? "; covers the step" : "; covers this request");
	}
}

/* The changes of the job's own requests that memprof does not weigh: facts only, no heading when none. */
static void to_try(const mp_oom *o, mp_out *out, bool rst)
{
	bool any = false;

	for (int i = 0; i < o->nremedies; i++) {
		const mp_oom_remedy *r = &o->remedies[i];

		if (!r->untested)
			continue;
		if (!any)
			heading(out, rst, "Worth trying (they change the job's requests: not predicted)");
		any = true;
		item(out, rst);
		mp_out_printf(out, "%s%s%s: %s\n", rst ? "``" : "", r->action, rst ? "``" : "", r->why);
	}
}

void mp_oom_report(const mp_oom *o, enum mp_oom_format format, enum mp_units u, mp_out *out)
{
	bool rst = format == MP_OOM_RST;

	if (format == MP_OOM_JSON) {
		oom_report_json(o, out);
		return;
	}
	request(o, u, out, rst);
	decision(o, out, rst);
	if (o->verdict == MP_OOM_V_CACHED)
		return;
	causes(o, u, out, rst);
	fragmentation(o, u, out, rst);
	holders(o, u, out, rst);
	remedies(o, out, rst, true);
	remedies(o, out, rst, false);
	to_try(o, out, rst);
}

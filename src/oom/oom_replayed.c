/* oom_replayed.c - remedies proven or refuted by replaying the job's own requests through the allocator model
   (src/whatif): each setting that could matter (expandable segments on or off, max_split_size_mb at the values
   that could help, garbage_collection_threshold under a memory fraction, each of the user's own settings undone),
   and empty_cache() after a line that freed memory. A
   replay counts only when the model, under the job's own settings, ran out at the job's request with the
   job's segments (mp_whatif's check). A setting that serves the request but lets the job run out again later
   in the step is not claimed: the claim is the step's, where the ring holds the step before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_frame_filter.h"
#include "mp_whatif.h"
#include "oom_int.h"

typedef struct replayed {
	const mp_whatif *w;
	mp_oom *o;
} replayed;

/* Mark R (may be NULL: the list was full) as resting on the replay. */
static void replayed_claim(mp_oom_remedy *r)
{
	if (r != NULL)
		r->evidence = MP_OOM_EV_REPLAY;
}

/* The outcome of one change, in words: why it works or why not. Returns whether it works. */
static bool judge(const replayed *r, const mp_sim_outcome *x, char *why, size_t n)
{
	const mp_whatif *w = r->w;
	char a[32], b[32], site[240];
	bool has_step = w->h.step_match >= 0;

	if (x->oom_op == w->h.request) {
		snprintf(why, n, "the job still runs out at this request, with %s reserved",
			 mp_format_torch_size(a, sizeof a, x->reserved_at_oom));
		return false;
	}
	if (x->oom_op >= 0) {
		snprintf(why, n, "the job runs out earlier, %lld requests before, at %s (a request of %s)",
			 (long long)mp_whatif_requests_between(w, x->oom_op, w->h.request),
			 mp_whatif_site(w, x->oom_op, site, sizeof site),
			 mp_format_torch_size(a, sizeof a, w->h.ops[x->oom_op].size));
		return false;
	}
	if (has_step && x->step_replayed && x->step_oom_op >= 0) {
		snprintf(why, n, "the request is served, but the job runs out again %lld requests later in the "
			 "step, at %s (a request of %s)", (long long)mp_whatif_requests_between(w, w->h.step_match, x->step_oom_op),
			 mp_whatif_site(w, x->step_oom_op, site, sizeof site),
			 mp_format_torch_size(a, sizeof a, w->h.ops[x->step_oom_op].size));
		return false;
	}
	if (has_step && x->step_replayed)
		snprintf(why, n, "the job's requests are served, this one and the rest of its step (%lld allocations "
			 "and frees, as one step earlier), at a peak of %s reserved (the job had %s at the OOM)", (long long)x->step_ops,
			 mp_format_torch_size(a, sizeof a, x->peak_reserved), mp_format_torch_size(b, sizeof b, w->h.reserved));
	else
		snprintf(why, n, "the job's requests up to this one are served, at a peak of %s reserved; only "
			 "this request is covered (%s)", mp_format_torch_size(a, sizeof a, x->peak_reserved),
			 has_step ? "the step before does not repeat regularly" : "the ring holds no earlier step");
	return true;
}

static bool covers_step(const replayed *r, const mp_sim_outcome *x)
{
	return r->w->h.step_match >= 0 && x->step_replayed && x->step_oom_op < 0;
}

/* Whether outcome X got past the request, only to run out later in the step. */
static bool fails_later(const mp_sim_outcome *x)
{
	return x->request_served && x->step_replayed && x->step_oom_op >= 0;
}

/* How far outcome X got: 0 out before or at the request, then the request served and out at a later op of the
   step (the later the more), most when it passes. */
static int64_t reach(const mp_sim_outcome *x)
{
	return !x->request_served ? 0 : x->step_oom_op >= 0 ? 1 + x->step_oom_op : INT64_MAX;
}

/* The remedy ID for CONF with outcome X (WORKS and its WHY judged already). */
static bool add_conf(replayed *r, enum mp_oom_remedy_id id, const mp_sim_conf *conf, const mp_sim_outcome *x,
		     bool works, const char *why)
{
	char text[200], action[240];
	mp_oom_remedy *rem;

	mp_sim_conf_format(conf, text, sizeof text);
	if (text[0] != '\0')
		snprintf(action, sizeof action, "PYTORCH_CUDA_ALLOC_CONF=%s", text);
	else
		snprintf(action, sizeof action, "PYTORCH_CUDA_ALLOC_CONF unset (the defaults)");
	if ((rem = oom_remedy_add(r->o, id, works, action, "%s", why)) != NULL) {
		rem->evidence = MP_OOM_EV_REPLAY;
		rem->covers_step = works && covers_step(r, x);
		rem->fails_later = !works && fails_later(x);
		rem->has_conf = true;
		snprintf(rem->conf, sizeof rem->conf, "%s", text);
	}
	return works;
}

/* Try CONF; add the remedy ID with its verdict. Returns whether it works (false too when not replayed). */
static bool try_conf(replayed *r, enum mp_oom_remedy_id id, const mp_sim_conf *conf, bool add_refusal)
{
	mp_sim_outcome x;
	char why[400];
	bool works;

	if (mp_whatif_try(r->w, conf, &x) != MP_OK || x.refused)
		return false;
	works = judge(r, &x, why, sizeof why);
	if (!works && !add_refusal)
		return false;
	return add_conf(r, id, conf, &x, works, why);
}

/* Expandable segments turned on (off, when the job had them on: with max_split_size_mb they can let reserved
   memory grow, pytorch#123548). */
static void expandable(replayed *r)
{
	mp_sim_conf c = r->w->recorded;

	c.expandable = !c.expandable;
	try_conf(r, MP_OOM_R_EXPANDABLE, &c, true);
}

/* A setting tried at a ladder of values, in order: the first that gets past is claimed, else one line that none
   did, with the value that got furthest as the conf to run. */
typedef struct ladder {
	enum mp_oom_remedy_id id;
	const double *values;
	size_t n;
	const char *name, *unit; /* "M", " MiB" */
	void (*set)(mp_sim_conf *c, double v);
	double (*get)(const mp_sim_conf *c);
} ladder;

static void try_ladder(replayed *r, const ladder *l, const char *context)
{
	const mp_sim_conf *rec = &r->w->recorded;
	mp_sim_conf c = *rec, best = *rec;
	mp_sim_outcome x, best_x = { .oom_op = -1 };
	char why[400], all[480];
	bool tried = false;

	for (int i = 0; i < r->o->nremedies; i++)
		if (r->o->remedies[i].id == l->id && r->o->remedies[i].works)
			return; /* undoing the job's own value got past already */
	for (size_t i = 0; i < l->n; i++) {
		l->set(&c, l->values[i]);
		if (l->get(&c) == l->get(rec) || mp_whatif_try(r->w, &c, &x) != MP_OK || x.refused)
			continue;
		if (judge(r, &x, why, sizeof why)) {
			add_conf(r, l->id, &c, &x, true, why);
			return;
		}
		if (!tried || reach(&x) > reach(&best_x)) {
			best = c;
			best_x = x;
		}
		tried = true;
	}
	if (!tried)
		return;
	judge(r, &best_x, why, sizeof why);
	if (snprintf(all, sizeof all, "%swith %s from %g to %g%s none gets past; the furthest, %g: %s", context, l->name,
		     l->values[0], l->values[l->n - 1], l->unit, l->get(&best), why) < 0)
		all[0] = '\0';
	add_conf(r, l->id, &best, &best_x, false, all);
}

static void set_split_mib(mp_sim_conf *c, double v)
{
	c->max_split_size = (int64_t)v * MP_SIM_MIB;
}

static double split_mib(const mp_sim_conf *c)
{
	return c->max_split_size == MP_SIM_NONE ? -1 : (double)(c->max_split_size / MP_SIM_MIB);
}

static void set_gc(mp_sim_conf *c, double v)
{
	c->gc_threshold = v;
}

static double gc(const mp_sim_conf *c)
{
	return c->gc_threshold;
}

/* max_split_size_mb: just above each size that matters is found by trying a ladder, the smallest first. */
static void max_split(replayed *r)
{
	static const double mib[] = { 21, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024 };
	const ladder l = { MP_OOM_R_MAX_SPLIT, mib, sizeof mib / sizeof mib[0], "M", " MiB", set_split_mib, split_mib };

	try_ladder(r, &l, "");
}

/* garbage_collection_threshold, only under a memory fraction (without one the setting does nothing, a rule
   oom_remedies.c says), the mildest first: a higher T collects later. */
static void gc_threshold(replayed *r)
{
	static const double t[] = { 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3 };
	const ladder l = { MP_OOM_R_GC_THRESHOLD, t, sizeof t / sizeof t[0], "T", "", set_gc, gc };

	if (r->w->allowed >= 0)
		try_ladder(r, &l, "under the memory fraction, ");
}

/* Each of the user's own settings undone: where that gets past the OOM, the setting is a cause. */
static void own_settings(replayed *r)
{
	const mp_sim_conf *rec = &r->w->recorded;
	mp_sim_conf def, c;
	struct {
		const char *key;
		enum mp_oom_remedy_id id;
		bool set;
	} keys[] = {
		{ "max_split_size_mb", MP_OOM_R_MAX_SPLIT, rec->max_split_size != MP_SIM_NONE },
		{ "roundup_power2_divisions", MP_OOM_R_SETTING, false },
		{ "garbage_collection_threshold", MP_OOM_R_GC_THRESHOLD, rec->gc_threshold > 0 },
		{ "max_non_split_rounding_mb", MP_OOM_R_SETTING, false },
	};
	char mine[200];

	mp_sim_conf_default(&def);
	keys[1].set = memcmp(rec->divisions, def.divisions, sizeof def.divisions) != 0;
	keys[3].set = rec->max_non_split_rounding != def.max_non_split_rounding;
	mp_sim_conf_format(rec, mine, sizeof mine);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (!keys[i].set)
			continue;
		c = *rec;
		if (i == 0)
			c.max_split_size = def.max_split_size;
		else if (i == 1)
			memcpy(c.divisions, def.divisions, sizeof c.divisions);
		else if (i == 2)
			c.gc_threshold = 0;
		else
			c.max_non_split_rounding = def.max_non_split_rounding;
		if (!try_conf(r, keys[i].id, &c, true) || r->o->nsetting_causes >= 4)
			continue;
		mp_oom_setting_cause *sc = &r->o->setting_causes[r->o->nsetting_causes++];

		*sc = (mp_oom_setting_cause){ .evidence = MP_OOM_EV_REPLAY };
		snprintf(sc->setting, sizeof sc->setting, "%s", keys[i].key);
		if (snprintf(sc->why, sizeof sc->why, "the job set %s (PYTORCH_CUDA_ALLOC_CONF=%s); replayed without it, the job "
			 "gets past this OOM%s", keys[i].key, mine,
			 i == 0 && rec->expandable ? "; max_split_size_mb with expandable_segments:True lets reserved memory "
						     "grow while the live memory stays small (pytorch#123548)" : "") < 0)
			sc->why[0] = '\0';
	}
}

/* The line of the job's own code an op of the history was made at (mp_whatif_place), FILE NULL when its entry has
   none (no frames, or only torch's, a package's or the standard library's: no place a user can write a line). */
typedef struct op_place {
	const char *file;
	size_t len;
	int64_t line;
} op_place;

static bool same_place(const op_place *a, const op_place *b)
{
	return a->file != NULL && b->file != NULL && a->line == b->line && a->len == b->len &&
	       memcmp(a->file, b->file, a->len) == 0;
}

/* Marks in EMPTY (one byte per op) where a torch.cuda.empty_cache() written after the line at place P may run:
   EVERY false, after the last op of each run of ops at P (two runs of the line with no op of another line
   between them look like one: the fewest calls the program can make); EVERY true, after each op at P as well
   (each could end one run of the statement: the most). The program's own calls lie between the two. Returns
   the marks made. */
static int64_t mark_line(const op_place *places, size_t nops, const op_place *p, bool every, uint8_t *empty)
{
	int64_t n = 0;

	for (size_t j = 0; j < nops; j++) {
		empty[j] = same_place(&places[j], p) && (every || j + 1 == nops || !same_place(&places[j + 1], p));
		n += empty[j];
	}
	return n;
}

enum { EMPTY_CACHE_TRIES = 24 };

/* empty_cache() after the line at P both ways (mark_line): 1 both get past, 0 neither, -1 they disagree or
   the model refused (the replay cannot tell where the program's own calls would put it). WHY and *X: the
   fewest calls' outcome; *RUNS: how many times the line ran by the trace. */
static int line_verdict(const replayed *r, const op_place *places, const op_place *p, uint8_t *marks, char *why,
			size_t n, mp_sim_outcome *x, int64_t *runs)
{
	const mp_whatif *w = r->w;
	mp_sim_outcome most;
	char why_most[400];
	bool fewest_ok, most_ok;

	*runs = mark_line(places, w->h.nops, p, false, marks);
	if (mp_whatif_try_changed(w, &w->recorded, marks, NULL, 0, x) != MP_OK || x->refused)
		return -1;
	fewest_ok = judge(r, x, why, n);
	if (mark_line(places, w->h.nops, p, true, marks) == *runs)
		return fewest_ok; /* each run of the line is one op: one placement */
	if (mp_whatif_try_changed(w, &w->recorded, marks, NULL, 0, &most) != MP_OK || most.refused)
		return -1;
	most_ok = judge(r, &most, why_most, sizeof why_most);
	return fewest_ok == most_ok ? fewest_ok : -1;
}

/* torch.cuda.empty_cache() after one of the lines of the job's own code that freed memory last before the
   request, replayed where a user would put it: after that line, each time it runs. The latest line that gets the
   job past, however the trace's runs of it split into the statement's runs, is claimed; "would not help" only
   when every line tried runs out either way. */
static void empty_cache(replayed *r)
{
	const mp_whatif *w = r->w;
	size_t nops = w->h.nops;
	op_place *places = calloc(nops ? nops : 1, sizeof *places), seen[EMPTY_CACHE_TRIES];
	uint8_t *marks = calloc(nops ? nops : 1, 1);
	int tried = 0, unclear = 0;

	if (places == NULL || marks == NULL)
		goto out;
	for (size_t j = 0; j < nops; j++) {
		mp_frame f;

		if (mp_whatif_place(w, (int64_t)j, &f) && mp_frame_is_own(&f))
			places[j] = (op_place){ f.filename, f.filename_len, f.line };
	}
	for (int64_t i = w->h.request - 1; i >= (int64_t)w->h.nplanted && tried < EMPTY_CACHE_TRIES; i--) {
		const op_place *p = &places[i];
		char why[400], action[300], where[240];
		mp_oom_remedy *rem;
		mp_sim_outcome x;
		int64_t runs;
		bool again = false;
		int verdict;
		mp_frame f;

		if (w->h.ops[i].kind != MP_SIM_OP_FREE || p->file == NULL)
			continue;
		for (int k = 0; k < tried && !again; k++)
			again = same_place(&seen[k], p);
		if (again)
			continue;
		seen[tried++] = *p;
		verdict = line_verdict(r, places, p, marks, why, sizeof why, &x, &runs);
		unclear += verdict < 0;
		if (verdict != 1)
			continue;
		snprintf(action, sizeof action, "torch.cuda.empty_cache() right after %s, each time it runs",
			 mp_whatif_site(w, i, where, sizeof where));
		rem = oom_remedy_add(r->o, MP_OOM_R_EMPTY_CACHE, true, action, "replayed with it after the %lld time%s "
				     "the trace shows the line run: %s", (long long)runs, runs == 1 ? "" : "s", why);
		if (rem != NULL) {
			rem->evidence = MP_OOM_EV_REPLAY;
			rem->covers_step = covers_step(r, &x);
			if (mp_whatif_place(w, i, &f)) {
				snprintf(rem->place_file, sizeof rem->place_file, "%.*s", (int)f.filename_len, f.filename);
				rem->place_line = f.line;
				snprintf(rem->place_function, sizeof rem->place_function, "%.*s", (int)f.name_len, f.name);
			}
		}
		goto out;
	}
	if (tried > 0 && unclear == 0)
		replayed_claim(oom_remedy_add(r->o, MP_OOM_R_EMPTY_CACHE, false, "torch.cuda.empty_cache()",
					      "replayed after each of the last %d line%s of the job's own code that freed "
					      "memory before the request, each time the trace shows it run: the job runs out all the "
					      "same; at the OOM itself it releases what the OOM's retry released already",
					      tried, tried == 1 ? "" : "s"));
	else /* no line to name, or none the replay can decide: what the allocator's rules alone say */
		oom_remedy_add(r->o, MP_OOM_R_EMPTY_CACHE, false, "torch.cuda.empty_cache() at the OOM", "at the OOM it "
			       "releases what the OOM's retry released already; %s",
			       tried == 0 ? "no free before the request was made by a line of the job's own code"
					  : "after the lines of the job's own code that freed memory before it, the replay "
					    "cannot tell: the trace shows a line's runs but not where each run of the statement "
					    "ends, and the fewest and the most calls it could make disagree");
out:
	free(places);
	free(marks);
}

bool oom_remedies_replayed(oom_view *v, mp_oom *o)
{
	mp_whatif_opts opts = { .device = o->req.device, .release = o->release, .capacity = -1, .device_free = -1,
				.allowed = -1 };
	mp_whatif *w;
	mp_diag diag = { 0 };
	replayed r = { .o = o };

	if (o->req.source != MP_OOM_FROM_TRACE) {
		snprintf(o->no_replay, sizeof o->no_replay, "the request is not in a trace (no memory history recorded it)");
		return false;
	}
	if (o->req.has_message && o->req.message.capacity > 0)
		opts.capacity = o->req.message.capacity;
	if (o->req.has_message)
		opts.allowed = o->req.message.allowed; /* a memory fraction's cap: the model must keep to it too */
	if (mp_whatif_open(v->snap, &opts, &w, &diag) != MP_OK) {
		if (snprintf(o->no_replay, sizeof o->no_replay, "the job's requests could not be replayed: %s", diag.msg) < 0)
			o->no_replay[0] = '\0';
		return false;
	}
	if (!w->faithful) {
		if (snprintf(o->no_replay, sizeof o->no_replay, "the model, replaying the job's requests under its own "
			     "settings, did not do what the job did (%s)", w->unfaithful) < 0)
			o->no_replay[0] = '\0';
		mp_whatif_close(w);
		return false;
	}
	r.w = w;
	o->replayed = true;
	own_settings(&r);
	expandable(&r);
	if (!o->small_pool)
		max_split(&r);
	gc_threshold(&r);
	empty_cache(&r);
	v->whatif = w;
	return true;
}

/* The group of GR named NAME, NULL. */
static const struct oom_group *group_named(const oom_groups *gr, const char *name)
{
	for (int i = 0; i < gr->ntop; i++)
		if (strcmp(gr->m[gr->top[i].first].key, name) == 0)
			return &gr->top[i];
	return NULL;
}

void oom_holders_replayed(const oom_view *v, mp_oom *o, const oom_groups *gr)
{
	replayed r = { .w = v->whatif, .o = o };

	if (r.w == NULL)
		return;
	for (int i = 0; i < o->nremedies; i++) {
		mp_oom_remedy *rem = &o->remedies[i];
		const struct oom_group *g;
		int64_t *addrs, *allocs;
		mp_sim_outcome x;
		size_t n;

		if (rem->id != MP_OOM_R_FREE || rem->kind != MP_OOM_K_DEL || (g = group_named(gr, rem->holder)) == NULL)
			continue;
		addrs = malloc(g->n * sizeof *addrs);
		allocs = malloc(g->n * sizeof *allocs);
		if (addrs == NULL || allocs == NULL) {
			free(addrs);
			free(allocs);
			return;
		}
		for (size_t k = 0; k < g->n; k++)
			addrs[k] = gr->m[g->first + k].b->address;
		/* every block of the holder must be an allocation of the history, else the replay is no evidence */
		n = mp_whatif_allocs_at(r.w, addrs, g->n, allocs);
		if (n == g->n && mp_whatif_try_changed(r.w, &r.w->recorded, NULL, allocs, n, &x) == MP_OK && !x.refused) {
			char why[400];

			rem->works = judge(&r, &x, why, sizeof why);
			rem->evidence = MP_OOM_EV_REPLAY;
			rem->covers_step = rem->works && covers_step(&r, &x);
			rem->fails_later = !rem->works && fails_later(&x);
			if (snprintf(rem->why, sizeof rem->why, "it holds %lld block%s, given up before the request: %s",
				     (long long)g->n, g->n == 1 ? "" : "s", why) < 0)
				rem->why[0] = '\0';
		}
		free(addrs);
		free(allocs);
	}
}

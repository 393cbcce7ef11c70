/* test_timeline.c - the category timeline on a hand-built snapshot: which trace entries count,
   what was there before the ring, the profiler's rows and raw events, the warning when the ring
   and the blocks disagree, rules on trace entries, the plots, and the session's command. */
#include <unistd.h>

#include "mp_owners.h"
#include "mp_session.h"
#include "mp_timeline.h"
#include "snapshot_builder.h"
#include "unit_main.h"

static const struct sb_frame to[] = {
	{ "_apply", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 942 },
	{ "build", "/home/alice/train.py", 70 },
};
static const struct sb_frame forward[] = {
	{ "_call_impl", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1747 },
	{ "main", "/home/alice/train.py", 88 },
};

/* Give E a 'category' key with value NAME, after the keys every entry has. */
static void with_category(mp_snapshot *s, mp_trace_entry *e, const char *name)
{
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_val keys[] = { k->action, k->addr, k->size, k->stream, k->time_us, k->category }, value = sb_str(s, name);

	sb_check(mp_heap_make(s->heap, MP_T_TUPLE, keys, 6, &e->shape) == MP_OK);
	sb_check(mp_heap_make(s->heap, MP_T_TUPLE, &value, 1, &e->extras) == MP_OK);
}

static mp_trace_entry *entry(mp_snapshot *s, const char *action, int64_t addr, int64_t size, int64_t t, mp_val frames)
{
	mp_trace_entry *e = sb_entry(s, action, addr, size);

	e->time_us = t;
	if (frames != MP_ABSENT) {
		e->frames = frames;
		e->present |= MP_F_TR_FRAMES;
	}
	return e;
}

/* Device 0: a parameter allocated before the ring (still live), a gradient whose alloc carries
   its category, an activation allocated and freed in the ring, one whose free is only requested
   (still active), and a free whose alloc the ring lost (its category from the data). */
static mp_snapshot *job(bool lose_gradient)
{
	mp_snapshot *s = sb_new();
	mp_val fto = sb_frames(s, 2, to), ffw = sb_frames(s, 2, forward);

	sb_segment(s, 0, 0x10000, 0x10000, 0);
	sb_block(s, 0x1000, 4000, "active_allocated", fto)->address = 0x10000;
	sb_block(s, 0x1000, 3000, lose_gradient ? "inactive" : "active_allocated", MP_ABSENT)->address = 0x11000;
	sb_block(s, 0x1000, 2048, "active_pending_free", ffw)->address = 0x12000;
	sb_block(s, 0xD000, 0, "inactive", MP_ABSENT)->address = 0x13000;
	sb_device(s);
	entry(s, "segment_alloc", 0x10000, 0x10000, 100, MP_ABSENT);
	entry(s, "alloc", 0x14000, 1000, 100, ffw);
	with_category(s, entry(s, "alloc", 0x11000, 3000, 110, MP_ABSENT), "GRADIENT");
	with_category(s, entry(s, "free_completed", 0x15000, 500, 110, MP_ABSENT), "input");
	entry(s, "alloc", 0x12000, 2048, 120, ffw);
	entry(s, "free_requested", 0x14000, 1000, 125, ffw);
	entry(s, "free_completed", 0x14000, 1000, 130, ffw);
	entry(s, "free_requested", 0x12000, 2048, 130, ffw);
	entry(s, "oom", 0, 4096, 140, MP_ABSENT)->present &= ~MP_F_TR_ADDR;
	return s;
}

static mp_timeline *build(const mp_snapshot *s, const mp_category_ruleset *rules, mp_diag *diag)
{
	mp_timeline *tl = NULL;

	CU_ASSERT_EQUAL_FATAL(mp_timeline_build(s, rules, NULL, -1, &tl, diag), MP_OK);
	CU_ASSERT_EQUAL_FATAL(tl->ndevices, 1);
	return tl;
}

static void test_rows(void)
{
	mp_snapshot *s = job(false);
	mp_diag diag = { 0 };
	mp_timeline *tl = build(s, NULL, &diag);
	const mp_timeline_device *d = &tl->devices[0];
	mp_out out;

	CU_ASSERT_EQUAL(diag.nwarn, 0);
	CU_ASSERT_EQUAL(d->nevents, 7);
	CU_ASSERT_EQUAL(d->t_min, 100);
	CU_ASSERT_TRUE(d->end_bytes == 9048 && d->active_bytes == 9048);
	mp_out_init(&out);
	mp_timeline_json(d, &out);
	/* columns: 0, PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, UNKNOWN */
	unit_check_text(mp_out_take(&out, NULL),
			"[[100, 100, 110, 120, 130], [[0, 4000, 0, 500, 0, 0, 0, 0, 0], [0, 4000, 0, 500, 0, 1000, 0, 0, 0], "
			"[0, 4000, 0, 0, 0, 1000, 3000, 0, 0], [0, 4000, 0, 0, 0, 3048, 3000, 0, 0], "
			"[0, 4000, 0, 0, 0, 2048, 3000, 0, 0]]]");
	CU_ASSERT_EQUAL(mp_timeline_raw(d, &out, &diag), MP_OK);
	unit_check_text(mp_out_take(&out, NULL),
			"[[-1, 1, 500, 2], [-1, 1, 4000, 0], [100000, 2, 1000, 4], [110000, 2, 3000, 5], "
			"[110000, 4, -500, 2], [120000, 2, 2048, 4], [130000, 4, -1000, 4]]");
	mp_out_free(&out);
	mp_timeline_free(tl);
	mp_snapshot_free(s);
}

/* On a core the owners decide for the blocks they name: the allocation still live at 0x12000 is a
   gradient over its whole lifetime (made by the forward's frames, kept as a .grad), and the parameter
   older than the ring a buffer (the profiler's INPUT). */
static void test_owners(void)
{
	mp_snapshot *s = job(false);
	mp_owned tensor = { 0 };
	mp_owner_block blocks[] = {
		{ .block = 0, .device = 0, .kind = MP_OWNER_BUFFER, .owner = 0 },
		{ .block = 2, .device = 0, .kind = MP_OWNER_GRADIENT, .owner = 0 },
	};
	mp_owners o = { .tensors = &tensor, .ntensors = 1, .blocks = blocks, .nblocks = 2 };
	mp_timeline *tl = NULL;
	mp_diag diag = { 0 };
	mp_out out;

	CU_ASSERT_EQUAL_FATAL(mp_timeline_build(s, NULL, &o, -1, &tl, &diag), MP_OK);
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_timeline_raw(&tl->devices[0], &out, &diag), MP_OK);
	unit_check_text(mp_out_take(&out, NULL),
			"[[-1, 1, 500, 2], [-1, 1, 4000, 2], [100000, 2, 1000, 4], [110000, 2, 3000, 5], "
			"[110000, 4, -500, 2], [120000, 2, 2048, 5], [130000, 4, -1000, 4]]");
	mp_out_free(&out);
	mp_timeline_free(tl);
	mp_snapshot_free(s);
}

/* The ring leaves the gradient live, the snapshot has no block there: it ends 3000 bytes above. */
static void test_disagreement(void)
{
	mp_snapshot *s = job(true);
	mp_diag diag = { 0 };
	mp_timeline *tl = build(s, NULL, &diag);

	CU_ASSERT_EQUAL(diag.nwarn, 2);
	CU_ASSERT_TRUE(tl->devices[0].end_bytes == 9048 && tl->devices[0].active_bytes == 6048);
	mp_timeline_free(tl);
	mp_snapshot_free(s);
}

static void test_no_ring(void)
{
	mp_snapshot *s = job(false);
	mp_timeline *tl = NULL;
	mp_diag diag = { 0 };

	CU_ASSERT_EQUAL(mp_timeline_build(s, NULL, NULL, 1, &tl, &diag), MP_E_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "device 1 has no trace ring entries"));
	s->device_traces[0].n = 0;
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_timeline_build(s, NULL, NULL, -1, &tl, &diag), MP_E_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "_record_memory_history"));
	CU_ASSERT_PTR_NULL(tl);
	mp_snapshot_free(s);
}

/* Rules read a trace entry's size and stream, take its segment type from its size, and never
   meet a pool condition (the ring does not say). */
static void test_entry_rules(void)
{
	static const char rules[] =
		"{\"rules\": [{\"name\": \"pooled\", \"category\": \"INPUT\", \"pool\": [0, 0]},"
		" {\"name\": \"big-small\", \"category\": \"TEMPORARY\", \"min_size\": 2000, \"segment_type\": \"small\","
		" \"stream\": 0, \"state\": \"allocated\"}]}";
	mp_category_ruleset *set = NULL;
	mp_snapshot *s = job(false);
	mp_diag diag = { 0 };
	mp_timeline *tl;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(mp_category_rules_parse(rules, strlen(rules), &set, &diag), MP_OK);
	tl = build(s, set, &diag);
	for (size_t i = 0; i < tl->devices[0].nevents; i++) {
		const mp_timeline_event *e = &tl->devices[0].events[i];

		if (e->category == MP_CAT_INPUT) /* only the free whose data says so: no pool rule met */
			CU_ASSERT_EQUAL(e->bytes, 500);
		if (e->bytes == 2048) /* the alloc at 120: 2048 bytes, a small block */
			n += e->category == MP_CAT_TEMPORARY;
		if (e->bytes == 1000) /* too small for the rule: the defaults make it an activation */
			CU_ASSERT_EQUAL(e->category, MP_CAT_ACTIVATION);
	}
	CU_ASSERT_EQUAL(n, 1);
	mp_timeline_free(tl);
	mp_category_ruleset_free(set);
	mp_snapshot_free(s);
}

static void test_plots(void)
{
	mp_snapshot *s = job(false);
	mp_diag diag = { 0 };
	mp_timeline *tl = build(s, NULL, &diag);
	mp_timeline_view v = { MP_SCHEME_PROFILER, MP_UNITS_AUTO };
	char *text;
	mp_out out;

	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_timeline_html(tl, &v, &out, &diag), MP_OK);
	text = mp_out_take(&out, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "GPU memory by category, device 0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "fill=\"darkgreen\""));
	CU_ASSERT_PTR_NULL(strstr(text, "<script"));
	CU_ASSERT_PTR_NULL(strstr(text, "fill=\"darkorange\""));
	free(text);
	v.scheme = MP_SCHEME_TRACKER;
	CU_ASSERT_EQUAL(mp_timeline_svg(&tl->devices[0], &v, true, &out, &diag), MP_OK);
	text = mp_out_take(&out, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(strncmp(text, "<?xml", 5), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, ">Optstate</text>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "fill=\"darkorange\"")); /* Buffer's swatch */
	free(text);
	mp_timeline_summary(tl, &v, &out);
	text = mp_out_take(&out, NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "device 0: 7 events from 9 ring entries, 5 rows"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "(they agree)"));
	free(text);
	mp_out_free(&out);
	mp_timeline_free(tl);
	mp_snapshot_free(s);
}

static void test_session(void)
{
	const char *dir = getenv("srcdir");
	char example[4096], out[64], *argv[6];
	mp_session *s = mp_session_new();
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	snprintf(example, sizeof example, "%s/data/example.pickle", dir != NULL ? dir : "tests");
	snprintf(out, sizeof out, "/tmp/test_timeline.%d.raw.json", (int)getpid());
	mp_session_use_none(s, "no inferior");
	argv[0] = "timeline", argv[1] = example;
	CU_ASSERT_EQUAL(mp_session_run(s, 2, argv), MP_SESSION_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(mp_session_output(s), "device 0: "));
	argv[2] = "-o", argv[3] = out;
	CU_ASSERT_EQUAL(mp_session_run(s, 4, argv), MP_SESSION_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(mp_session_output(s), "wrote "));
	f = fopen(out, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fgetc(f), '[');
	fclose(f);
	remove(out);
	argv[2] = "--format", argv[3] = "png";
	CU_ASSERT_EQUAL(mp_session_run(s, 4, argv), MP_SESSION_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(mp_session_error(s), "--format 'png': choose json, raw, html or svg"));
	for (int i = 0; mp_session_command_name(i) != NULL; i++)
		if (strcmp(mp_session_command_name(i), "timeline") == 0)
			CU_ASSERT_STRING_EQUAL(mp_session_complete(s, i, "timeline --format ", ""),
					       "json\nraw\nhtml\nsvg\n");
	mp_session_free(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "rows and raw events as the profiler's", test_rows },
		{ "the ring and the blocks disagree", test_disagreement },
		{ "owners over an allocation's lifetime", test_owners },
		{ "no trace ring", test_no_ring },
		{ "rules on trace entries", test_entry_rules },
		{ "HTML, SVG and summary", test_plots },
		{ "the session's timeline command", test_session },
	};

	return unit_run("timeline", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

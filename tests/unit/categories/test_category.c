/* test_category.c - category names, the rules file parser and its errors, the frame matcher,
   and rule precedence in the report. */
#include "unit_main.h"

#include "mp_block_query.h"
#include "mp_category.h"
#include "mp_category_classify.h"
#include "mp_frame_filter.h"
#include "snapshot_builder.h"

static void test_names(void)
{
	enum mp_category c = MP_CAT__COUNT;

	CU_ASSERT_TRUE(mp_category_parse("optimizer_state", 15, &c) && c == MP_CAT_OPTIMIZER_STATE);
	CU_ASSERT_TRUE(mp_category_parse("Optstate", 8, &c) && c == MP_CAT_OPTIMIZER_STATE);
	CU_ASSERT_TRUE(mp_category_parse("TEMP", 4, &c) && c == MP_CAT_TEMPORARY);
	CU_ASSERT_TRUE(mp_category_parse("grad", 4, &c) && c == MP_CAT_GRADIENT);
	CU_ASSERT_FALSE(mp_category_parse("GRADIENTS", 9, &c));
	CU_ASSERT_FALSE(mp_category_parse("GRAD", 3, &c)); /* "GRA" */
	CU_ASSERT_STRING_EQUAL(mp_category_name(MP_CAT_AUTOGRAD_DETAIL, MP_SCHEME_PROFILER), "AUTOGRAD_DETAIL");
	CU_ASSERT_EQUAL(mp_category_in(MP_CAT_AUTOGRAD_DETAIL, MP_SCHEME_TRACKER), MP_CAT_TEMPORARY);
	CU_ASSERT_EQUAL(mp_category_in(MP_CAT_BUFFER, MP_SCHEME_PROFILER), MP_CAT_INPUT);
	CU_ASSERT_EQUAL(mp_category_in(MP_CAT_INPUT, MP_SCHEME_TRACKER), MP_CAT_UNKNOWN);
}

/* Parsing TEXT fails with a message containing WANT. */
static void parse_fails(const char *text, const char *want)
{
	mp_category_ruleset *set = NULL;
	mp_diag diag = { 0 };

	CU_ASSERT_NOT_EQUAL(mp_category_rules_parse(text, strlen(text), &set, &diag), MP_OK);
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, want));
	if (strstr(diag.msg, want) == NULL)
		fprintf(stderr, "\nwanted '%s' in '%s'\n", want, diag.msg);
}

static void test_parse_errors(void)
{
	parse_fails("[", "not valid JSON");
	parse_fails("[]", "must hold an object");
	parse_fails("{\"rules\": 1}", "no \"rules\" list");
	parse_fails("{\"rules\": [1]}", "rules[0]: a rule must be an object");
	parse_fails("{\"rules\": [{\"name\": \"a\"}]}", "rules[0] ('a'): no 'category'");
	parse_fails("{\"rules\": [{\"name\": \"a\", \"category\": \"INPUT\", \"stream\": 1.5}]}",
		    "rules[0] ('a'): 'stream' must be a whole number");
	parse_fails("{\"rules\": [{\"name\": \"a\", \"category\": \"INPUT\", \"frames\": {\"function\": [\"\"]}}]}",
		    "'frames.function' must hold non-empty strings");
	parse_fails("{\"rules\": [{\"name\": \"a\", \"category\": \"INPUT\", \"frames\": [{}, 2]}]}",
		    "'frames' must be an object or a list of objects");
	parse_fails("{\"rules\": [{\"name\": \"a\", \"category\": \"INPUT\", \"phase\": [\"forward\"]}]}",
		    "'phase' must name phases");
}

static void test_parse_rule(void)
{
	static const char text[] =
		"{\"rules\": [{\"name\": \"r\", \"category\": \"Buffer\", \"state\": \"pending\", \"min_size\": 10,"
		" \"max_size\": 20, \"stream\": 3, \"pool\": [1, 2], \"segment_type\": \"small\","
		" \"phase\": [\"backward\", \"parameter_size\"],"
		" \"frames\": [{\"file\": [\"*/a.py\", \"*/b.py\"], \"where\": \"innermost_user\"}, {\"function\": \"f\"}]}]}";
	mp_category_ruleset *set = NULL;
	mp_diag diag = { 0 };
	const mp_category_rule *r;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(mp_category_rules_parse(text, sizeof text - 1, &set, &diag), MP_OK);
	r = mp_category_ruleset_rules(set, &n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(r->name, "r");
	CU_ASSERT_EQUAL(r->category, MP_CAT_BUFFER);
	CU_ASSERT_EQUAL(r->states, MP_BS_ACTIVE_PENDING_FREE);
	CU_ASSERT_TRUE(r->has_min_size && r->min_size == 10 && r->has_max_size && r->max_size == 20);
	CU_ASSERT_TRUE(r->has_stream && r->stream == 3 && r->has_pool && r->pool[0] == 1 && r->pool[1] == 2);
	CU_ASSERT_STRING_EQUAL(r->segment_type, "small");
	CU_ASSERT_EQUAL(r->phases, MP_PHASE_BACKWARD | MP_PHASE_PARAMETER_SIZE);
	CU_ASSERT_EQUAL_FATAL(r->nframes, 2);
	CU_ASSERT_TRUE(r->frames[0].innermost_user);
	CU_ASSERT_STRING_EQUAL(r->frames[0].file[1], "*/b.py");
	CU_ASSERT_PTR_NULL(r->frames[0].file[2]);
	CU_ASSERT_PTR_NULL(r->frames[1].file);
	CU_ASSERT_STRING_EQUAL(r->frames[1].function[0], "f");
	mp_category_ruleset_free(set);
}

static void test_user_frames(void)
{
	mp_frame user = { "/home/a/train.py", 16, "main", 4, 1 };
	mp_frame torch = { "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 57, "_call_impl", 10, 1 };
	mp_frame cpp = { "/pytorch/aten/src/ATen/Empty.cpp", 32, "at::empty", 9, 1 };
	mp_frame stdin_frame = { "<stdin>", 7, "<module>", 8, 1 };
	mp_frame eval = { "Python/ceval.c", 14, "_PyEval_EvalFrameDefault", 24, 1 };

	CU_ASSERT_TRUE(mp_frame_is_user(&user));
	CU_ASSERT_TRUE(mp_frame_is_user(&stdin_frame));
	CU_ASSERT_FALSE(mp_frame_is_user(&torch));
	CU_ASSERT_FALSE(mp_frame_is_user(&cpp));
	CU_ASSERT_FALSE(mp_frame_kept(&eval));
}

/* What the categories analysis of SNAP with O writes, in JSON. */
static char *json_report(const mp_snapshot *snap, mp_category_opts *o)
{
	mp_diag diag = { 0 };
	mp_out out;

	o->format = MP_CFMT_JSON;
	mp_out_init(&out);
	CU_ASSERT_EQUAL(mp_analysis_categories(snap, o, &out, &diag), MP_OK);
	return mp_out_take(&out, NULL);
}

/* The report of SNAP in JSON with RULES (a rules file text, or NULL). */
static char *report(const mp_snapshot *snap, const char *rules)
{
	mp_category_ruleset *set = NULL;
	mp_category_opts o;
	mp_diag diag = { 0 };
	char *got;

	if (rules != NULL)
		CU_ASSERT_EQUAL_FATAL(mp_category_rules_parse(rules, strlen(rules), &set, &diag), MP_OK);
	mp_category_opts_init(&o);
	o.rules = set;
	o.blocks = true;
	got = json_report(snap, &o);
	mp_category_ruleset_free(set);
	return got;
}

static void test_precedence(void)
{
	/* innermost first: the user's frame calls Module.to, whose _apply allocates */
	static const struct sb_frame to[] = {
		{ "_apply", "/x/torch/nn/modules/module.py", 900 },
		{ "load", "/home/a/model.py", 5 },
	};
	mp_snapshot *s = sb_new();
	char *got;

	sb_segment(s, 0, 0x1000, 0x300, 0);
	sb_block(s, 0x100, 0x100, "active_allocated", sb_frames(s, 2, to))->address = 0x1000;
	sb_block(s, 0x200, 0x200, "inactive", sb_frames(s, 2, to))->address = 0x1100;
	got = report(s, NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"category\": \"PARAMETER\", \"source\": \"rule\", \"rule\": \"module-to\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"inactive\": {\"bytes\": 512, \"blocks\": 1}"));
	free(got);
	/* a user rule on the innermost user frame comes first */
	got = report(s, "{\"rules\": [{\"name\": \"mine\", \"category\": \"INPUT\","
			" \"frames\": {\"file\": \"*/model.py\", \"function\": \"load\", \"where\": \"innermost_user\"}}]}");
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"category\": \"INPUT\", \"source\": \"rule\", \"rule\": \"mine\", \"user_rule\": true"));
	free(got);
	/* a condition that fails lets the defaults decide */
	got = report(s, "{\"rules\": [{\"name\": \"mine\", \"category\": \"INPUT\", \"max_size\": 255}]}");
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"rule\": \"module-to\""));
	free(got);
	mp_snapshot_free(s);
}

/* MODULE is what --by module calls FILE. */
static void module_is(const char *file, const char *module)
{
	mp_out out;
	char *got;

	mp_out_init(&out);
	mp_category_module_name(file, strlen(file), &out);
	got = mp_out_take(&out, NULL);
	CU_ASSERT_STRING_EQUAL(got, module);
	if (strcmp(got, module) != 0)
		fprintf(stderr, "\n'%s': wanted '%s', got '%s'\n", file, module, got);
	free(got);
	mp_out_free(&out);
}

static void test_module_names(void)
{
	module_is("/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "torch.nn.modules.module");
	module_is("/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", "accelerate.utils.operations");
	module_is("/venv/lib/python3.11/site-packages/mylib/__init__.py", "mylib");
	/* the last of the two wins: a venv inside a system package directory */
	module_is("/usr/lib/python3/dist-packages/x/site-packages/y/z.py", "y.z");
	module_is("/home/alice/proj/train.py", "train");
	module_is("/home/alice/proj/pkg/__init__.py", "pkg");
	module_is("<stdin>", "<stdin>");
	module_is("model.py", "model");
	module_is("__init__.py", "__init__");
	module_is("/venv/site-packages/", "/venv/site-packages/");
}

/* The --sites report of SNAP in JSON: the top N by BY. */
static char *sites(const mp_snapshot *snap, size_t n, enum mp_site_key by)
{
	mp_category_opts o;

	mp_category_opts_init(&o);
	o.sites = n;
	o.by = by;
	return json_report(snap, &o);
}

/* Whether A occurs in TEXT, and before B. */
static bool in_order(const char *text, const char *a, const char *b)
{
	const char *pa = strstr(text, a), *pb = strstr(text, b);

	if (pa == NULL || pb == NULL || pa > pb)
		fprintf(stderr, "\nwanted '%s' before '%s' in %s\n", a, b, text);
	return pa != NULL && pb != NULL && pa < pb;
}

/* A training step as the ring shows it (category_phases.c): a parameter made by Module.to(), the seed gradient
   loss.backward() makes on the main thread (after the loop's batch and a forward), then what autograd's thread makes with no Python frame (a buffer of
   the parameter's size kept past the pass, one freed within it, a kept workspace of no parameter's size, one
   with the C++ frames of cuBLAS's workspace), then the main thread back in the optimizer. */
static void test_backward_phases(void)
{
	static const struct sb_frame to[] = {
		{ "_apply", "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 942 },
		{ "main", "/home/a/train.py", 10 },
	};
	static const struct sb_frame seed[] = {
		{ "_make_grads", "/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", 233 },
		{ "backward", "/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", 388 },
		{ "backward", "/venv/lib/python3.11/site-packages/torch/_tensor.py", 623 },
		{ "main", "/home/a/train.py", 20 },
	};
	static const struct sb_frame step[] = { { "main", "/home/a/train.py", 21 } };
	static const struct sb_frame forward[] = {
		{ "_call_impl", "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1794 },
		{ "main", "/home/a/train.py", 18 },
	};
	static const struct sb_frame workspace[] = {
		{ "at::cuda::getNewWorkspace()", "", 0 }, { "at::cuda::getCUDABlasLtWorkspace()", "", 0 },
	};
	/* an operator written in Python, run by autograd's thread inside the pass: the window stays open */
	static const struct sb_frame router[] = {
		{ "eager_router", "/venv/lib/python3.11/site-packages/torch/_library/registry.py", 958 },
	};
	/* the loss, computed by the job outside any module between the forward and its backward */
	static const struct sb_frame loss[] = {
		{ "cross_entropy", "/venv/lib/python3.11/site-packages/torch/nn/functional.py", 3458 },
		{ "main", "/home/a/train.py", 19 },
	};
	static const char *const want[] = {
		"PARAMETER", "INPUT", "UNKNOWN", "ACTIVATION", "ACTIVATION", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL",
		"AUTOGRAD_DETAIL", "AUTOGRAD_DETAIL", "UNKNOWN", "UNKNOWN", "UNKNOWN",
	};
	static const char *const rule[] = {
		"module-to", "loop-input", NULL, "module-forward", "forward-tail", "backward-seed", "backward-gradient",
		"backward-detail", "backward-detail", "backward-detail", "backward-kept", "library-workspace", NULL,
	};
	mp_snapshot *s = sb_new();
	mp_val none = sb_frames(s, 0, NULL), fto = sb_frames(s, 2, to), fseed = sb_frames(s, 4, seed);
	mp_val fstep = sb_frames(s, 1, step), fws = sb_frames(s, 2, workspace), ffw = sb_frames(s, 2, forward);
	mp_val frouter = sb_frames(s, 1, router), floss = sb_frames(s, 2, loss);
	mp_category_classifier *c = NULL;
	mp_category_why why;
	mp_diag d = { 0 };
	size_t ai = 0;

	sb_segment(s, 0, 0x100000, 0x400000, 0);
	sb_block(s, 0x1000, 4096, "active_allocated", fto)->address = 0x100000;
	sb_block(s, 0x1000, 4096, "active_allocated", none)->address = 0x101000;
	sb_block(s, 0x3FE000, 0, "inactive", MP_ABSENT)->address = 0x102000;
	sb_device(s);
	struct {
		const char *action;
		int64_t addr, size;
		mp_val frames;
	} ring[] = {
		{ "alloc", 0x100000, 4096, fto },
		/* the loop's batch, held into the forward; a scratch of the loop freed before it */
		{ "alloc", 0x700000, 512, fstep },   { "alloc", 0x701000, 512, fstep },
		{ "free_requested", 0x701000, 512, fstep }, { "alloc", 0x702000, 256, ffw },
		{ "alloc", 0x703000, 4, floss }, { "alloc", 0x200000, 4, fseed },
		{ "alloc", 0x101000, 4096, none },   { "alloc", 0x300000, 1000, none },
		{ "alloc", 0x302000, 2048, frouter }, { "free_requested", 0x302000, 2048, frouter },
		{ "alloc", 0x301000, 4096, none },   { "free_requested", 0x301000, 4096, none },
		{ "alloc", 0x500000, 32 << 20, none }, { "alloc", 0x2500000, 1 << 20, fws },
		{ "free_requested", 0x300000, 1000, none }, { "alloc", 0x600000, 64, fstep },
	};
	for (size_t i = 0; i < sizeof ring / sizeof ring[0]; i++) {
		mp_trace_entry *e = sb_entry(s, ring[i].action, ring[i].addr, ring[i].size);

		e->frames = ring[i].frames;
		e->present |= MP_F_TR_FRAMES;
	}
	CU_ASSERT_EQUAL_FATAL(mp_category_classifier_new(s, NULL, &d, &c), MP_OK);
	for (size_t i = 0; i < s->ntrace; i++) {
		if (strcmp(mp_heap_atom(s->heap, s->trace[i].action, NULL), "alloc") != 0)
			continue;
		CU_ASSERT_EQUAL_FATAL(mp_category_classify_entry(c, &s->trace[i], true, &why), MP_OK);
		CU_ASSERT_STRING_EQUAL(mp_category_name(why.category, MP_SCHEME_PROFILER), want[ai]);
		if (rule[ai] != NULL)
			CU_ASSERT_TRUE(why.rule != NULL && strcmp(why.rule->name, rule[ai]) == 0);
		ai++;
	}
	/* the kept buffer is still the block at its address at the end: the end state says GRADIENT too */
	mp_block_ref r = { .device = 0, .address = 0x101000, .size = 0x1000, .state = MP_BS_ACTIVE_ALLOCATED,
			   .seg = 0, .block = 1 };

	CU_ASSERT_EQUAL(mp_category_classify(c, &r, &why), MP_OK);
	CU_ASSERT_EQUAL(why.category, MP_CAT_GRADIENT);
	mp_category_classifier_free(c);
	mp_snapshot_free(s);
}

static void test_sites(void)
{
	/* innermost first: torch's frames above the user's, which calls from two lines */
	static const struct sb_frame line10[] = {
		{ "_call_impl", "/x/torch/nn/modules/module.py", 1747 }, { "step", "/home/a/train.py", 10 },
	};
	static const struct sb_frame line12[] = { { "step", "/home/a/train.py", 12 } };
	static const struct sb_frame line10_other_caller[] = {
		{ "step", "/home/a/train.py", 10 }, { "main", "/home/a/train.py", 99 },
	};
	static const struct sb_frame cpp[] = {
		{ "_PyEval_EvalFrameDefault", "Python/ceval.c", 1 }, { "at::empty", "/p/aten/Empty.cpp", 2 },
	};
	mp_snapshot *s = sb_new();
	char *got;

	sb_segment(s, 0, 0x10000, 0x1e00, 0);
	sb_block(s, 0x100, 0x100, "active_allocated", sb_frames(s, 2, line10))->address = 0x10000;
	sb_block(s, 0x200, 0x200, "active_pending_free", sb_frames(s, 2, line10_other_caller))->address = 0x10100;
	sb_block(s, 0x400, 0x400, "active_allocated", sb_frames(s, 1, line12))->address = 0x10300;
	sb_block(s, 0x800, 0x800, "inactive", sb_frames(s, 1, line12))->address = 0x10700;
	sb_block(s, 0x300, 0x300, "active_allocated", sb_frames(s, 2, cpp))->address = 0x10f00;
	sb_block(s, 0x200, 0x200, "active_allocated", sb_frames(s, 0, NULL))->address = 0x11200;
	sb_block(s, 0xa00, 0xa00, "inactive", MP_ABSENT)->address = 0x11400;
	/* by site: line 10 (two tracebacks, 0x300) ties with the C++-only block; the name decides */
	got = sites(s, 2, MP_SITES_BY_SITE);
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"active\": {\"bytes\": 3072, \"blocks\": 5}, \"groups\": 4"));
	CU_ASSERT_TRUE(in_order(got, "{\"name\": \"step (/home/a/train.py:12)\", \"kind\": \"frame\", \"function\": "
				     "\"step\", \"file\": \"/home/a/train.py\", \"line\": 12, \"bytes\": 1024, \"blocks\": 1",
				"{\"name\": \"(no user frame)\", \"kind\": \"no_user_frame\", \"bytes\": 768, \"blocks\": 1"));
	CU_ASSERT_PTR_NULL(strstr(got, "train.py:10"));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"other\": {\"groups\": 2, \"bytes\": 1280, \"blocks\": 3"));
	free(got);
	got = sites(s, 10, MP_SITES_BY_SITE);
	CU_ASSERT_TRUE(in_order(got, "\"name\": \"(no user frame)\"",
				"\"name\": \"step (/home/a/train.py:10)\", \"kind\": \"frame\", \"function\": \"step\", "
				"\"file\": \"/home/a/train.py\", \"line\": 10, \"bytes\": 768, \"blocks\": 2"));
	CU_ASSERT_TRUE(in_order(got, "\"name\": \"step (/home/a/train.py:10)\"",
				"{\"name\": \"(no frames)\", \"kind\": \"no_frames\", \"bytes\": 512, \"blocks\": 1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "\"other\": {\"groups\": 0, \"bytes\": 0, \"blocks\": 0, \"categories\": {}}"));
	free(got);
	/* by function: both lines are one group */
	got = sites(s, 1, MP_SITES_BY_FUNCTION);
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "{\"name\": \"step (/home/a/train.py)\", \"kind\": \"frame\", \"function\": "
					   "\"step\", \"file\": \"/home/a/train.py\", \"bytes\": 1792, \"blocks\": 3, "
					   "\"categories\": {\"ACTIVATION\": {\"bytes\": 256, \"blocks\": 1}, "
					   "\"UNKNOWN\": {\"bytes\": 1536, \"blocks\": 2}}}"));
	free(got);
	got = sites(s, 1, MP_SITES_BY_MODULE);
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "{\"name\": \"train\", \"kind\": \"frame\", \"module\": \"train\", "
					   "\"bytes\": 1792"));
	free(got);
	mp_snapshot_free(s);
}

/* Reading A fails with a message containing WANT. */
static void args_fail(const mp_category_args *a, const char *want)
{
	mp_category_opts o;
	mp_diag diag = { 0 };

	mp_category_opts_init(&o);
	CU_ASSERT_EQUAL(mp_category_args_read(a, &o, &diag), MP_E_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, want));
	if (strstr(diag.msg, want) == NULL)
		fprintf(stderr, "\nwanted '%s' in '%s'\n", want, diag.msg);
}

static void test_args(void)
{
	mp_category_opts o;
	mp_diag diag = { 0 };

	mp_category_opts_init(&o);
	CU_ASSERT_EQUAL(mp_category_args_read(&(mp_category_args){ .sites = true, .by = "module", .format = "rst",
								  .scheme = "tracker" }, &o, &diag), MP_OK);
	CU_ASSERT_TRUE(o.sites == MP_CATEGORY_SITES_DEFAULT && o.by == MP_SITES_BY_MODULE && o.format == MP_CFMT_RST &&
		       o.scheme == MP_SCHEME_TRACKER && !o.explain && !o.segsum);
	mp_category_opts_init(&o);
	CU_ASSERT_EQUAL(mp_category_args_read(&(mp_category_args){ .sites = true, .sites_count = "25" }, &o, &diag),
			MP_OK);
	CU_ASSERT_EQUAL(o.sites, 25);
	CU_ASSERT_EQUAL(mp_category_args_read(&(mp_category_args){ .segsum = true, .format = "plain" }, &o, &diag),
			MP_OK);
	CU_ASSERT_TRUE(o.segsum);
	CU_ASSERT_TRUE(mp_category_is_count("10"));
	CU_ASSERT_FALSE(mp_category_is_count("10x"));
	CU_ASSERT_FALSE(mp_category_is_count(""));
	args_fail(&(mp_category_args){ .sites = true, .segsum = true }, "exclude each other");
	args_fail(&(mp_category_args){ .explain = "0x10", .sites_count = "3" }, "exclude each other");
	args_fail(&(mp_category_args){ .by = "file" }, "needs --sites");
	args_fail(&(mp_category_args){ .sites = true, .by = "line" }, "--by 'line'");
	args_fail(&(mp_category_args){ .sites = true, .sites_count = "0" }, "--sites '0'");
	args_fail(&(mp_category_args){ .segsum = true, .format = "json" }, "text only");
	args_fail(&(mp_category_args){ .format = "yaml" }, "--format 'yaml'");
	args_fail(&(mp_category_args){ .explain = "-1" }, "--explain '-1'");
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "category names of both schemes", test_names },
		{ "bad rules files name the rule and the problem", test_parse_errors },
		{ "a rule with every condition", test_parse_rule },
		{ "user frames: Python, not torch, not C++", test_user_frames },
		{ "user rules before defaults, conditions, inactive blocks", test_precedence },
		{ "a backward pass in the ring: gradients, its detail, what it kept", test_backward_phases },
		{ "module names for --by module", test_module_names },
		{ "--sites: groups by innermost user frame, ties, rest", test_sites },
		{ "option values and modes, read once for both front ends", test_args },
	};

	return unit_run("category", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

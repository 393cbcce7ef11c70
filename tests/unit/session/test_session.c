/* test_session.c - the debugger-facing session on snapshot files: commands, named snapshots,
   settings, completion, and one-line errors. (Live processes and cores: tests/gdb/.) */
#include "mp_session.h"
#include "unit_main.h"

static mp_session *s;
static char example[4096], tmpdir[64];

static int run(const char *line)
{
	char buf[512], *argv[16], *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof buf, "%s", line);
	for (char *w = strtok_r(buf, " ", &save); w != NULL && argc < 16; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return mp_session_run(s, argc, argv);
}

static bool output_has(const char *text)
{
	return strstr(mp_session_output(s), text) != NULL;
}

static bool error_is(const char *text)
{
	const char *e = mp_session_error(s);

	return strncmp(e, "memprof: ", 9) == 0 && strstr(e, text) != NULL && strchr(e, '\n') == NULL;
}

static void test_no_target(void)
{
	CU_ASSERT_EQUAL(run("segsum"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("no process or core file"));
	mp_session_use_none(s, "no inferior");
	CU_ASSERT_EQUAL(run("info"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("no inferior"));
	CU_ASSERT_EQUAL(run("nosuch"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("no command 'nosuch'"));
	CU_ASSERT_EQUAL(mp_session_run(s, 0, NULL), MP_SESSION_ERROR);
}

static void test_load_list_drop(void)
{
	char line[4200];

	CU_ASSERT_EQUAL(run("snapshot list"), MP_SESSION_NOTHING);
	snprintf(line, sizeof line, "snapshot load %s a", example);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_OK);
	CU_ASSERT(output_has("snapshot 'a': file"));
	CU_ASSERT_EQUAL(run(line), MP_SESSION_OK);
	CU_ASSERT(output_has("replaced"));
	CU_ASSERT_EQUAL(run("snapshot list"), MP_SESSION_OK);
	CU_ASSERT(output_has("a "));
	snprintf(line, sizeof line, "snapshot load %s now", example);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_ERROR);
	CU_ASSERT(error_is("not a snapshot name"));
	CU_ASSERT_EQUAL(run("snapshot load /nonexistent/x.pickle b"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("/nonexistent/x.pickle"));
	CU_ASSERT_EQUAL(run("snapshot drop b"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("no snapshot 'b'"));
	CU_ASSERT_EQUAL(run("snapshot"), MP_SESSION_ERROR);
	CU_ASSERT_EQUAL(run("snapshot fly"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("no subcommand 'fly'"));
}

/* The session's segsum of a named snapshot is the same text as of the file itself. */
static void test_analyses_of_names(void)
{
	char line[4200], *by_file;

	snprintf(line, sizeof line, "segsum %s", example);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_OK);
	by_file = strdup(mp_session_output(s));
	CU_ASSERT_EQUAL(run("segsum a"), MP_SESSION_OK);
	CU_ASSERT_STRING_EQUAL(mp_session_output(s), by_file);
	CU_ASSERT(output_has("Summary of segments"));
	free(by_file);
	CU_ASSERT_EQUAL(run("blocks a --top 2"), MP_SESSION_OK);
	CU_ASSERT(output_has("showing 2 of"));
	CU_ASSERT_EQUAL(run("blocks a --top 0"), MP_SESSION_ERROR);
	CU_ASSERT_EQUAL(run("blocks a --min-size 1.5Q"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("--min-size '1.5Q'"));
	CU_ASSERT_EQUAL(run("blocks a --state sleeping"), MP_SESSION_ERROR);
	CU_ASSERT_EQUAL(run("blocks a --bogus"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("unknown option '--bogus'"));
	CU_ASSERT_EQUAL(run("blocks a --device"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("needs a value"));
	CU_ASSERT_EQUAL(run("block 0x10 a"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("0x10 is in no segment"));
	CU_ASSERT_EQUAL(run("block nonsense a"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("not an address"));
	CU_ASSERT_EQUAL(run("stats a"), MP_SESSION_ERROR); /* PyTorch's pickles carry no statistics */
	CU_ASSERT_EQUAL(run("segsum a b"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("too many arguments"));
	CU_ASSERT_EQUAL(run("segsum nosuchname"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("'nosuchname' is no snapshot name"));
}

static void test_save_and_compare(void)
{
	char line[4200], path[128];

	snprintf(path, sizeof path, "%s/a.json", tmpdir);
	snprintf(line, sizeof line, "snapshot save a %s", path);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_OK);
	CU_ASSERT(output_has("(JSON,"));
	snprintf(line, sizeof line, "snapshot load %s b", path);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_OK);
	/* the same state: nothing only before or after, no block changed */
	CU_ASSERT_EQUAL(run("compare a b"), MP_SESSION_NOTHING);
	CU_ASSERT(output_has("only_before = []"));
	CU_ASSERT(output_has("0 allocated"));
	snprintf(line, sizeof line, "snapshot save a %s/x --format yaml", tmpdir);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_ERROR);
	CU_ASSERT(error_is("--format 'yaml'"));
	CU_ASSERT_EQUAL(run("snapshot save a /nonexistent/dir/a.pickle"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("cannot write"));
	snprintf(line, sizeof line, "segments a -o %s/a.svg", tmpdir);
	CU_ASSERT_EQUAL(run(line), MP_SESSION_OK);
	CU_ASSERT(output_has("wrote "));
	CU_ASSERT_EQUAL(run("snapshot drop b"), MP_SESSION_OK);
}

static void test_categories(void)
{
	CU_ASSERT_EQUAL(run("categories a"), MP_SESSION_OK);
	CU_ASSERT(output_has("UNKNOWN"));
	CU_ASSERT_EQUAL(run("categories a --scheme tracker --format json"), MP_SESSION_OK);
	CU_ASSERT(output_has("\"Optstate\""));
	CU_ASSERT_EQUAL(run("categories a --scheme nope"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("--scheme 'nope'"));
	CU_ASSERT_EQUAL(run("categories a --format xml"), MP_SESSION_ERROR);
	CU_ASSERT_EQUAL(run("categories a --explain 0x10"), MP_SESSION_ERROR);
	CU_ASSERT_EQUAL(run("categories a --rules /nonexistent/rules.json"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("/nonexistent/rules.json"));
	/* --sites takes the next word as its count only when it is one */
	CU_ASSERT_EQUAL(run("categories --sites 2 a --by file"), MP_SESSION_OK);
	CU_ASSERT(output_has("top "));
	CU_ASSERT_EQUAL(run("categories a --sites"), MP_SESSION_OK);
	CU_ASSERT(output_has("(total)"));
	CU_ASSERT_EQUAL(run("categories a --segsum"), MP_SESSION_OK);
	CU_ASSERT(output_has("Legend:"));
	CU_ASSERT_EQUAL(run("categories a --sites --segsum"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("exclude each other"));
	CU_ASSERT_EQUAL(run("categories a --by module"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("needs --sites"));
}

static void test_settings(void)
{
	CU_ASSERT_STRING_EQUAL(mp_session_show(s, "units"), "auto");
	CU_ASSERT_EQUAL(mp_session_set(s, "units", "MiB"), 0);
	CU_ASSERT_STRING_EQUAL(mp_session_show(s, "units"), "MiB");
	CU_ASSERT_EQUAL(mp_session_set(s, "units", "parsecs"), -1);
	CU_ASSERT(error_is("parsecs"));
	CU_ASSERT_EQUAL(mp_session_set(s, "device", "1"), 0);
	CU_ASSERT_STRING_EQUAL(mp_session_show(s, "device"), "1");
	CU_ASSERT_EQUAL(mp_session_set(s, "device", "-3"), -1);
	CU_ASSERT_EQUAL(mp_session_set(s, "device", "all"), 0);
	CU_ASSERT_STRING_EQUAL(mp_session_show(s, "device"), "all");
	CU_ASSERT_EQUAL(mp_session_set(s, "max-blocks", "1000"), 0);
	CU_ASSERT_STRING_EQUAL(mp_session_show(s, "max-blocks"), "1000");
	CU_ASSERT_EQUAL(mp_session_set(s, "layout", "/nonexistent.layout"), -1);
	CU_ASSERT(error_is("/nonexistent.layout"));
	CU_ASSERT_STRING_EQUAL(mp_session_show(s, "layout"), "auto");
	CU_ASSERT_EQUAL(mp_session_set(s, "colour", "red"), -1);
	CU_ASSERT_PTR_NULL(mp_session_show(s, "colour"));
	CU_ASSERT_EQUAL(mp_session_set(s, "units", "auto"), 0);
}

/* Every setting of the table: named, helped, of a known kind, its default what a new session shows and takes
   again; a choice takes each of its words; a bad value is refused and the old one stays. */
static void test_settings_table(void)
{
	static const char *const kinds[] = { "choice", "device", "number", "file" };
	mp_session *fresh = mp_session_new();
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
	for (int i = 0; mp_session_setting_name(i) != NULL; i++, n++) {
		const char *name = mp_session_setting_name(i), *spec = mp_session_setting_spec(i);
		char words[128], *save = NULL, *kind, *w;
		bool known = false;

		CU_ASSERT(strlen(mp_session_setting_help(i)) > 20);
		snprintf(words, sizeof words, "%s", spec);
		kind = strtok_r(words, " ", &save);
		for (size_t k = 0; kind != NULL && k < sizeof kinds / sizeof kinds[0]; k++)
			known = known || strcmp(kind, kinds[k]) == 0;
		CU_ASSERT(known);
		CU_ASSERT_STRING_EQUAL(mp_session_show(fresh, name), mp_session_setting_default(i));
		CU_ASSERT_EQUAL(mp_session_set(fresh, name, mp_session_setting_default(i)), 0);
		while (kind != NULL && strcmp(kind, "choice") == 0 && (w = strtok_r(NULL, " ", &save)) != NULL) {
			CU_ASSERT_EQUAL(mp_session_set(fresh, name, w), 0);
			CU_ASSERT_STRING_EQUAL(mp_session_show(fresh, name), w);
		}
		if (strcmp(name, "layout") != 0) { /* any text names a layout file: refused only when unreadable */
			CU_ASSERT_EQUAL(mp_session_set(fresh, name, "-7x"), -1);
			CU_ASSERT(strstr(mp_session_error(fresh), name) != NULL);
		}
		CU_ASSERT_EQUAL(mp_session_set(fresh, name, mp_session_setting_default(i)), 0);
	}
	CU_ASSERT(n >= 6);
	CU_ASSERT_PTR_NULL(mp_session_setting_name(n));
	CU_ASSERT_PTR_NULL(mp_session_setting_name(-1));
	for (int i = 0; i < n; i++) /* the debugger holds its process itself: stop is the host's, the rest the user's */
		CU_ASSERT_EQUAL((mp_session_setting_flags(i) & MP_SESSION_SETTING_HOST) != 0,
				strcmp(mp_session_setting_name(i), "stop") == 0);
	mp_session_free(fresh);
}

/* Memory of a callback target: two std::type_info (a vtable word, then the name's address) and their names. */
static size_t read_types(void *ctx, uint64_t addr, void *buf, size_t len)
{
	static unsigned char image[0x200];
	static const char oom[] = "N3c1016OutOfMemoryErrorE", other[] = "*St13runtime_error";
	uint64_t oom_name = 0x1100, other_name = 0x1180;

	(void)ctx;
	memset(image, 0, sizeof image);
	memcpy(image + 0x08, &oom_name, 8);
	memcpy(image + 0x28, &other_name, 8);
	memcpy(image + 0x100, oom, sizeof oom);
	memcpy(image + 0x180, other, sizeof other);
	if (addr < 0x1000 || addr - 0x1000 >= sizeof image)
		return 0;
	if (len > sizeof image - (addr - 0x1000)) /* the readable part (the target reads whole pages) */
		len = sizeof image - (addr - 0x1000);
	memcpy(buf, image + (addr - 0x1000), len);
	return len;
}

static void test_catch_oom(void)
{
	mp_session *k = mp_session_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(k);
	mp_session *saved = s;
	s = k;
	CU_ASSERT_PTR_NULL(mp_session_catch_location(k));
	CU_ASSERT_EQUAL(mp_session_catch_throw(k, 0x1234, 0x1000), MP_SESSION_CATCH_PASS); /* not catching */
	CU_ASSERT_EQUAL(run("catch"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("oom"));
	CU_ASSERT_EQUAL(run("catch oom sometimes"), MP_SESSION_ERROR);
	CU_ASSERT(error_is("say off"));
	CU_ASSERT_EQUAL(run("catch oom --format yaml"), MP_SESSION_ERROR);
	CU_ASSERT_PTR_NULL(mp_session_catch_location(k));
	CU_ASSERT_EQUAL(run("catch oom --continue"), MP_SESSION_OK);
	CU_ASSERT(output_has("catching CUDA OOMs"));
	CU_ASSERT_STRING_EQUAL(mp_session_catch_location(k), "__cxa_throw");
#if defined(__x86_64__)
	CU_ASSERT_STRING_EQUAL(mp_session_catch_registers(), "rdi rsi");
#endif
	/* no target: the stop says why */
	CU_ASSERT_EQUAL(mp_session_catch_throw(k, 0x1234, 0x1000), MP_SESSION_CATCH_FAILED);
	CU_ASSERT(error_is("catch oom: no process or core file"));
	mp_session_use_callback(k, "types", 0, read_types, NULL, "");
	CU_ASSERT_EQUAL(mp_session_catch_throw(k, 0x1234, 0x1020), MP_SESSION_CATCH_PASS); /* another throw */
	CU_ASSERT_STRING_EQUAL(mp_session_output(k), "");
	CU_ASSERT_EQUAL(mp_session_catch_throw(k, 0x1234, 0x5000), MP_SESSION_CATCH_PASS); /* unreadable */
	/* the OOM's type: reported (here the report fails, no allocator in this memory, and says so) */
	CU_ASSERT_EQUAL(mp_session_catch_throw(k, 0x1234, 0x1000), MP_SESSION_CATCH_FAILED);
	CU_ASSERT(output_has("c10::OutOfMemoryError thrown (#1)"));
	CU_ASSERT(strlen(mp_session_error(k)) > 9);
	CU_ASSERT_EQUAL(run("catch oom off"), MP_SESSION_OK);
	CU_ASSERT_PTR_NULL(mp_session_catch_location(k));
	CU_ASSERT_EQUAL(mp_session_catch_throw(k, 0x1234, 0x1000), MP_SESSION_CATCH_PASS);
	s = saved;
	mp_session_free(k);
}

static int command_index(const char *name)
{
	for (int i = 0; mp_session_command_name(i) != NULL; i++)
		if (strcmp(mp_session_command_name(i), name) == 0)
			return i;
	return -1;
}

static void test_table_and_completion(void)
{
	int save = command_index("snapshot save"), blocks = command_index("blocks"), cmp = command_index("compare");

	CU_ASSERT(save >= 0 && blocks >= 0 && cmp >= 0);
	CU_ASSERT(mp_session_command_flags(command_index("snapshot")) & MP_SESSION_PREFIX);
	CU_ASSERT(mp_session_command_flags(command_index("block")) & MP_SESSION_EXPRESSION);
	for (int i = 0; mp_session_command_name(i) != NULL; i++)
		CU_ASSERT(strncmp(mp_session_command_help(i), "Usage", 5) != 0 && strstr(mp_session_command_help(i), "\n"));
	CU_ASSERT_PTR_NULL(mp_session_command_name(-1));
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, save, "a --format j", "j"), "json\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, save, "a ", ""), "<file>\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, save, "", ""), "now\na\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, blocks, "--st", "--st"), "--stream\n--state\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, blocks, "--state p", "p"), "pending\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, blocks, "--top 3 ", ""), "now\na\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, cmp, "a n", "n"), "now\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, command_index("categories"), "--sites --by m", "m"), "module\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, command_index("categories"), "--segsum ", ""), "now\na\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, cmp, "a b -o ", ""), "<file>\n");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, cmp, "a b c", "c"), "");
	CU_ASSERT_STRING_EQUAL(mp_session_complete(s, 999, "", ""), "");
}

static int init(void)
{
	const char *dir = getenv("srcdir");

	snprintf(example, sizeof example, "%s/data/example.pickle", dir != NULL ? dir : "tests");
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_session.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	s = mp_session_new();
	return s == NULL;
}

static int clean(void)
{
	char cmd[128];

	mp_session_free(s);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) != 0;
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "no target", test_no_target },
		{ "load, list, drop", test_load_list_drop },
		{ "analyses of names", test_analyses_of_names },
		{ "save and compare", test_save_and_compare },
		{ "categories", test_categories },
		{ "settings", test_settings },
		{ "the table of settings", test_settings_table },
		{ "catch oom", test_catch_oom },
		{ "command table and completion", test_table_and_completion },
	};

	return unit_run("session", tests, sizeof tests / sizeof tests[0], init, clean);
}

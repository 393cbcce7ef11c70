/* test_command.c - the command table's parser: options by kind and rule, the forms of a word, positional
   words, and the messages every front end shows. */
#include <string.h>

#include "mp_command.h"
#include "unit_main.h"

static int noop(mp_command_ctx *c, const mp_command_args *a)
{
	(void)c;
	(void)a;
	return MP_CMD_OK;
}

static const mp_option options[] = {
	{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "FILE", "out" },
	{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "device" },
	{ MP_O_TOP, MP_OPT_COUNT, NULL, "N", "top" },
	{ MP_O_STREAM, MP_OPT_INTEGER, NULL, "S", "stream" },
	{ MP_O_MIN_SIZE, MP_OPT_SIZE, NULL, "SIZE", "size" },
	{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "format" },
	{ MP_O_SITES, MP_OPT_FLAG_COUNT, NULL, "[N]", "sites" },
	{ MP_O_BLOCKS, MP_OPT_FLAG, NULL, NULL, "blocks" },
	{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
};

static const mp_command cmd = {
	"demo", MP_FRONT_ALL, "a command to parse", "[SNAPSHOT] [options]", "", "address [snapshot]", options, "",
	noop, 0, NULL,
};

static const mp_option extra[] = {
	{ MP_O_PID, MP_OPT_COUNT, NULL, "PID", "pid" },
	{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
};

static mp_command_ctx ctx;
static mp_command_args args;

/* Parse the blank-separated WORDS; the status. */
static int parse(const char *words)
{
	static char buf[256];
	char *argv[16];
	int argc = 0;

	snprintf(buf, sizeof buf, "%s", words);
	for (char *w = strtok(buf, " "); w != NULL && argc < 16; w = strtok(NULL, " "))
		argv[argc++] = w;
	memset(&ctx, 0, sizeof ctx);
	return mp_command_parse(&ctx, &cmd, extra, argc, argv, &args);
}

static void test_values(void)
{
	CU_ASSERT_EQUAL(parse("0x10 --device 3 --top 2 --stream -1 --min-size 1.5MiB --format RST --blocks"), MP_CMD_OK);
	CU_ASSERT_EQUAL(mp_arg_device(&args, MP_O_DEVICE, -1), 3);
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_TOP), "2");
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_STREAM), "-1");
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_FORMAT), "RST"); /* choices in any case, as the library reads them */
	CU_ASSERT(mp_arg_given(&args, MP_O_BLOCKS));
	CU_ASSERT_PTR_NULL(mp_arg(&args, MP_O_BLOCKS));
	CU_ASSERT(!mp_arg_given(&args, MP_O_OUTPUT));
	CU_ASSERT_EQUAL(args.npos, 1);
	CU_ASSERT_EQUAL(parse("0x10 --device all"), MP_CMD_OK);
	CU_ASSERT_EQUAL(mp_arg_device(&args, MP_O_DEVICE, 5), -1);
	CU_ASSERT_EQUAL(parse("0x10"), MP_CMD_OK);
	CU_ASSERT_EQUAL(mp_arg_device(&args, MP_O_DEVICE, 5), 5);
}

static void test_forms(void)
{
	CU_ASSERT_EQUAL(parse("--device=2 -oout.svg 0x10 snap"), MP_CMD_OK);
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_DEVICE), "2");
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_OUTPUT), "out.svg");
	CU_ASSERT_EQUAL(args.npos, 2);
	CU_ASSERT_STRING_EQUAL(args.pos[1], "snap");
	/* after --, a word that looks like an option is positional; '-' alone always is */
	CU_ASSERT_EQUAL(parse("-- --device -"), MP_CMD_OK);
	CU_ASSERT_EQUAL(args.npos, 2);
	CU_ASSERT_STRING_EQUAL(args.pos[0], "--device");
	CU_ASSERT_STRING_EQUAL(args.pos[1], "-");
	/* --sites takes the next word only when it is a count */
	CU_ASSERT_EQUAL(parse("--sites 7 0x10"), MP_CMD_OK);
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_SITES), "7");
	CU_ASSERT_EQUAL(parse("--sites 0x10"), MP_CMD_OK);
	CU_ASSERT(mp_arg_given(&args, MP_O_SITES));
	CU_ASSERT_PTR_NULL(mp_arg(&args, MP_O_SITES));
	CU_ASSERT_STRING_EQUAL(args.pos[0], "0x10");
	/* the front end's own options */
	CU_ASSERT_EQUAL(parse("0x10 --pid 42"), MP_CMD_OK);
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_PID), "42");
	CU_ASSERT_EQUAL(parse("-h"), MP_CMD_OK);
	CU_ASSERT(args.help);
}

/* Whether the last parse failed with exactly MESSAGE, as a usage error (about the words) or not. */
static bool refused(const char *message, bool usage)
{
	return strcmp(ctx.error, message) == 0 && ctx.usage == usage;
}

static void test_refusals(void)
{
	CU_ASSERT_EQUAL(parse("0x10 --bogus"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: unknown option '--bogus'", true));
	CU_ASSERT_EQUAL(parse("0x10 --bogus=1"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: unknown option '--bogus'", true));
	CU_ASSERT_EQUAL(parse("0x10 --device"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: option '--device' needs a value", true));
	CU_ASSERT_EQUAL(parse("0x10 --blocks=yes"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: option '--blocks' takes no value", true));
	CU_ASSERT_EQUAL(parse("a b c"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: too many arguments (from 'c')", true));
	CU_ASSERT_EQUAL(parse("0x10 --device 1024"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: --device '1024': not a device number (0 to 1023) or all", false));
	CU_ASSERT_EQUAL(parse("0x10 --device -1"), MP_CMD_BAD);
	CU_ASSERT_EQUAL(parse("0x10 --top 0"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: --top '0': not a positive count", false));
	CU_ASSERT_EQUAL(parse("0x10 --stream x"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: --stream 'x': not a whole number", false));
	CU_ASSERT_EQUAL(parse("0x10 --min-size lots"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: --min-size 'lots': not a size (4096, 64KiB, 1.5MiB, ...)", false));
	CU_ASSERT_EQUAL(parse("0x10 --format xml"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: --format 'xml': choose plain, rst or json", false));
	CU_ASSERT_EQUAL(parse("0x10 --sites=0"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: --sites '0': not a positive count", false));
	CU_ASSERT_EQUAL(parse("0x10 --pid 0"), MP_CMD_BAD);
	/* an option of another command says which */
	CU_ASSERT_EQUAL(parse("0x10 --abbreviated"), MP_CMD_BAD);
	CU_ASSERT(refused("demo: unknown option '--abbreviated' (an option of 'summary')", true));
	/* the positional words the debugger requires (an optional snapshot defaults to 'now') */
	CU_ASSERT_EQUAL(parse("--top 2"), MP_CMD_OK);
	CU_ASSERT_EQUAL(mp_command_check_words(&ctx, &args), MP_CMD_BAD);
	CU_ASSERT(refused("demo: missing address", true));
	CU_ASSERT_EQUAL(parse("0x10"), MP_CMD_OK);
	CU_ASSERT_EQUAL(mp_command_check_words(&ctx, &args), MP_CMD_OK);
}

static void test_words_and_sizes(void)
{
	int min, max;
	int64_t size;
	char kind[32];

	mp_command_positional_count(&cmd, &min, &max);
	CU_ASSERT_EQUAL(min, 1);
	CU_ASSERT_EQUAL(max, 2);
	CU_ASSERT_STRING_EQUAL(mp_command_positional_kind(&cmd, 1, kind, sizeof kind), "snapshot");
	CU_ASSERT_STRING_EQUAL(mp_command_positional_kind(&cmd, 2, kind, sizeof kind), "");
	CU_ASSERT_EQUAL(mp_command_positional_index(&cmd, 1, "snapshot"), 0);
	CU_ASSERT(mp_parse_size("64KiB", &size) && size == 65536);
	CU_ASSERT(mp_parse_size("1.5M", &size) && size == 1572864);
	CU_ASSERT(!mp_parse_size("-1", &size));
	CU_ASSERT(!mp_parse_size("1e30", &size));
	/* every shared command: a name, a one-line summary, and a handler */
	for (size_t i = 0; i < mp_ncommands; i++) {
		const mp_command *c = mp_commands[i];

		CU_ASSERT_PTR_NOT_NULL(c->run);
		CU_ASSERT(c->summary[0] != '\0' && strchr(c->summary, '\n') == NULL);
		CU_ASSERT_PTR_EQUAL(mp_command_find(mp_commands, mp_ncommands, c->name, MP_FRONT_ALL, NULL), c);
	}
}

/* A variadic command ("file..."): its last kind takes any number of words, among options and their values. */
static void test_variadic(void)
{
	static const mp_command many = {
		"many", MP_FRONT_ALL, "a command of many files", "FILE...", "", "file...", options, "", noop, 0, NULL,
	};
	static char *words[] = { "a", "--top", "3", "b", "-oout", "c", "--sites", "2", "d", "--blocks", "--", "-e" };
	static const char *const want[] = { "a", "b", "c", "d", "-e" };
	int min, max;
	char kind[32];

	CU_ASSERT(mp_command_variadic(&many));
	CU_ASSERT(!mp_command_variadic(&cmd));
	mp_command_positional_count(&many, &min, &max);
	CU_ASSERT(min == 1 && max == 1);
	CU_ASSERT_STRING_EQUAL(mp_command_positional_kind(&many, 0, kind, sizeof kind), "file");
	memset(&ctx, 0, sizeof ctx);
	CU_ASSERT_EQUAL(mp_command_parse(&ctx, &many, NULL, 12, words, &args), MP_CMD_OK);
	CU_ASSERT_EQUAL(args.npos + args.nmore, 5);
	for (int i = 0; i < 5; i++)
		CU_ASSERT(mp_command_word(&args, i) != NULL && strcmp(mp_command_word(&args, i), want[i]) == 0);
	CU_ASSERT_PTR_NULL(mp_command_word(&args, 5));
	CU_ASSERT_STRING_EQUAL(mp_arg(&args, MP_O_SITES), "2");
	/* a command that is not variadic still refuses a word too many */
	CU_ASSERT_EQUAL(parse("0x10 snap extra"), MP_CMD_BAD);
}

/* Each option id names one option word, told apart from every other; every table's options are named. */
static void test_option_names(void)
{
	CU_ASSERT_STRING_EQUAL(mp_option_name(MP_O_NONE), "");
	CU_ASSERT_STRING_EQUAL(mp_option_name(MP_O_COUNT), "");
	for (int i = MP_O_NONE + 1; i < MP_O_COUNT; i++) {
		const char *name = mp_option_name((enum mp_option_id)i);

		CU_ASSERT(name[0] == '-' && strlen(name) >= 2);
		for (int j = i + 1; j < MP_O_COUNT; j++)
			CU_ASSERT(strcmp(name, mp_option_name((enum mp_option_id)j)) != 0);
	}
	CU_ASSERT_STRING_EQUAL(mp_option_name(MP_O_OUTPUT), "-o");
	CU_ASSERT_STRING_EQUAL(mp_option_name(MP_O_NO_OWNERS), "--no-owners");
	for (size_t c = 0; c < mp_ncommands; c++)
		for (const mp_option *o = mp_commands[c]->options; o != NULL && o->id != MP_O_NONE; o++)
			CU_ASSERT(o->id > MP_O_NONE && o->id < MP_O_COUNT);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "values by kind", test_values },
		{ "forms of a word", test_forms },
		{ "refusals and their messages", test_refusals },
		{ "positional words, sizes, the table", test_words_and_sizes },
		{ "option names by id", test_option_names },
		{ "a variadic command's words", test_variadic },
	};

	return UNIT_RUN("command", tests, NULL, NULL);
}

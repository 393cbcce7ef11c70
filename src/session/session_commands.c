/* session_commands.c - the command table the debugger registers: names, help, flags, and the
   completion of their words. */
#include <stdlib.h>
#include <string.h>

#include "session_int.h"

#define SNAPSHOT_ARG                                                                            \
	"SNAPSHOT (default now) is a name from 'memprof snapshot take/load', 'now' (the target as\n" \
	"it stands), or a snapshot file (pickle or memprof JSON).\n"

const struct session_command session_commands[] = {
	{ "segsum", "Map how the allocator filled its segments, as _memory_viz stats.\n"
		    "Usage: memprof segsum [SNAPSHOT]\n"
		    "Overall statistics, then one line per segment of 20 MiB or more showing each page as\n"
		    "allocated, free or empty, byte for byte as `python -m torch.cuda._memory_viz stats`.\n"
		    SNAPSHOT_ARG,
	  0, session_cmd_segsum, "", "snapshot" },
	{ "stats", "Print the allocator's statistics as torch.cuda.memory_summary().\n"
		   "Usage: memprof stats [SNAPSHOT] [--device N] [--abbreviated]\n"
		   "Allocated, reserved, active and inactive memory (large and small pools), allocation\n"
		   "retries and OOMs, per device: N, else the 'memprof device' setting (all: each device).\n"
		   SNAPSHOT_ARG,
	  0, session_cmd_stats, "--device --abbreviated", "snapshot" },
	{ "snapshot", "Keep, list, save, load and drop named snapshots of the allocator's state.\n"
		      "Usage: memprof snapshot take|list|save|load|drop ...\n",
	  MP_SESSION_PREFIX, session_cmd_snapshot, "", "" },
	{ "snapshot take", "Keep the allocator's state as it stands now under NAME.\n"
			   "Usage: memprof snapshot take NAME\n"
			   "NAME: letters, digits, '_', '-', '.'; an existing name is replaced.\n",
	  0, session_cmd_take, "", "" },
	{ "snapshot list", "List the named snapshots: where and when each was taken, its size.\n"
			   "Usage: memprof snapshot list\n",
	  0, session_cmd_list, "", "" },
	{ "snapshot save", "Write a snapshot to FILE as PyTorch's pickle or memprof JSON.\n"
			   "Usage: memprof snapshot save NAME FILE [--format pickle|json]\n"
			   "NAME may be 'now'. Without --format, a FILE ending in .json gets JSON, anything else\n"
			   "a pickle that torch.cuda._memory_viz and the memory_viz web page read; device\n"
			   "statistics ride along under 'device_stats', which they ignore.\n",
	  0, session_cmd_save, "--format", "snapshot file" },
	{ "snapshot load", "Load a snapshot file (pickle or memprof JSON) under NAME.\n"
			   "Usage: memprof snapshot load FILE NAME\n",
	  0, session_cmd_load, "", "file" },
	{ "snapshot drop", "Forget the named snapshot NAME.\n"
			   "Usage: memprof snapshot drop NAME\n",
	  0, session_cmd_drop, "", "snapshot" },
	{ "compare", "What changed between two snapshots: segments, then blocks.\n"
		     "Usage: memprof compare A B [-o FILE]\n"
		     "A and B are snapshot names, files, or 'now'. Prints the segments only in A and only\n"
		     "in B and their blocks' folded stacks as `_memory_viz compare` (to FILE with -o, an\n"
		     "SVG flame graph when FILE ends in .svg), then every block allocated (+) or freed (-)\n"
		     "between A and B.\n",
	  0, session_cmd_compare, "-o", "snapshot snapshot" },
	{ "segments", "Flame graph input: the memory of each segment by block and call site.\n"
		      "Usage: memprof segments [SNAPSHOT] [-o FILE]\n"
		      "Folded stack lines as `_memory_viz segments`, printed or written to FILE (an SVG\n"
		      "flame graph when FILE ends in .svg).\n" SNAPSHOT_ARG,
	  0, session_cmd_segments, "-o", "snapshot" },
	{ "memory", "Flame graph input: memory by allocation call site.\n"
		    "Usage: memprof memory [SNAPSHOT] [-o FILE]\n"
		    "Like 'memprof segments' without the segment level (`_memory_viz memory`).\n" SNAPSHOT_ARG,
	  0, session_cmd_memory, "-o", "snapshot" },
	{ "trace", "Print the last N events of the allocator's trace ring (all without N).\n"
		   "Usage: memprof trace [N] [--of SNAPSHOT]\n"
		   "As `_memory_viz trace`: one pseudo-Python line per alloc, free and segment event.\n"
		   "The ring records only while history is on (torch.cuda.memory._record_memory_history).\n",
	  0, session_cmd_trace, "--of", "" },
	{ "blocks", "List the allocator's blocks, filtered.\n"
		    "Usage: memprof blocks [SNAPSHOT] [--device D|all] [--stream S] [--state LIST]\n"
		    "                      [--min-size SIZE] [--top N]\n"
		    "LIST: comma-separated states: allocated, pending (active_pending_free), inactive,\n"
		    "active (allocated and pending). SIZE: 4096, 64KiB, 1.5MiB, ... --top N: the N largest.\n"
		    "Sizes follow 'set memprof units'; the device defaults to 'set memprof device'.\n"
		    SNAPSHOT_ARG,
	  0, session_cmd_blocks, "--device --stream --state --min-size --top", "snapshot" },
	{ "block", "Which segment and block own an address.\n"
		   "Usage: memprof block ADDRESS [SNAPSHOT]\n"
		   "ADDRESS is an expression (a pointer variable, tensor.data_ptr() as a number, ...).\n"
		   "Prints the segment, the block, ADDRESS's offset in it, its state and sizes, and its\n"
		   "allocation frames when they were recorded.\n",
	  MP_SESSION_EXPRESSION, session_cmd_block, "", "" },
	{ "categories", "What the memory is: bytes and blocks per category (parameters, gradients, ...).\n"
			"Usage: memprof categories [SNAPSHOT] [--scheme profiler|tracker] [--rules FILE]\n"
			"                          [--format plain|rst|json] [--device D|all]\n"
			"                          [--explain ADDRESS | --sites [N] [--by KEY] | --segsum]\n"
			"A block's category comes from the data (a profiler-made 'category'), else the first\n"
			"matching rule over its allocation frames (--rules FILE first, then the defaults of\n"
			"CATEGORY-RULES.md), else UNKNOWN. --explain says which, for the block at ADDRESS.\n"
			"--sites [N]: the N (default 10) call sites with the most active bytes, by innermost\n"
			"user frame, with their top category, the other sites and the total; --by KEY groups\n"
			"them by site (function, file, line), function, file or module instead.\n"
			"--segsum: the segsum map with each 20 MiB page drawn as its category's letter.\n"
			SNAPSHOT_ARG,
	  0, session_cmd_categories, "--scheme --rules --format --explain --device --sites --by --segsum",
	  "snapshot" },
	{ "timeline", "Bytes per category over time, from the allocator's trace ring.\n"
		      "Usage: memprof timeline [SNAPSHOT] [-o FILE] [--format json|raw|html|svg]\n"
		      "                        [--device D|all] [--rules FILE] [--scheme profiler|tracker]\n"
		      "An allocation counts from its alloc entry until its free_completed, in its category\n"
		      "(as 'memprof categories' decides it); what the ring never saw allocated counts from its\n"
		      "start. Without -o, a summary per device: span, peak, each category at the peak and at\n"
		      "the end. -o FILE writes torch.profiler's export_memory_timeline JSON (.json), its raw\n"
		      "form (.raw.json), or a stacked area plot (.html page, .svg); --format overrides the\n"
		      "name. The ring records only while torch.cuda.memory._record_memory_history is on.\n"
		      SNAPSHOT_ARG,
	  0, session_cmd_timeline, "-o --format --device --rules --scheme", "snapshot" },
	{ "info", "What memprof finds in the target: library, version, layout, backend, devices.\n"
		  "Usage: memprof info\n",
	  0, session_cmd_info, "", "" },
};
const size_t session_ncommands = sizeof session_commands / sizeof session_commands[0];

const char *mp_session_command_name(int i)
{
	return i >= 0 && (size_t)i < session_ncommands ? session_commands[i].name : NULL;
}

const char *mp_session_command_help(int i)
{
	return i >= 0 && (size_t)i < session_ncommands ? session_commands[i].help : NULL;
}

unsigned mp_session_command_flags(int i)
{
	return i >= 0 && (size_t)i < session_ncommands ? session_commands[i].flags : 0;
}

/* ---- completion */

/* Append the words of WORDS (space-separated) that start with WORD, one per line. */
static void add_matching(mp_out *out, const char *words, const char *word)
{
	size_t wl = strlen(word);

	while (*words != '\0') {
		size_t n = strcspn(words, " ");

		if (n >= wl && strncmp(words, word, wl) == 0) {
			mp_out_write(out, words, n);
			mp_out_putc(out, '\n');
		}
		words += n;
		words += strspn(words, " ");
	}
}

static void add_snapshot_names(mp_session *s, mp_out *out, const char *word)
{
	add_matching(out, "now", word);
	for (size_t i = 0; i < s->nsnaps; i++)
		add_matching(out, s->snaps[i].name, word);
}

/* The I-th space-separated word of LIST into BUF ("" past its end). */
static const char *nth_word(const char *list, int i, char *buf, size_t size)
{
	while (*list != '\0') {
		size_t n = strcspn(list, " ");

		if (i-- == 0) {
			if (n >= size)
				n = size - 1;
			memcpy(buf, list, n);
			buf[n] = '\0';
			return buf;
		}
		list += n;
		list += strspn(list, " ");
	}
	return "";
}

/* Whether WORD (N bytes) is one of the space-separated WORDS. */
static bool is_one_of(const char *words, const char *word, size_t n)
{
	while (*words != '\0') {
		size_t m = strcspn(words, " ");

		if (m == n && strncmp(words, word, n) == 0)
			return true;
		words += m;
		words += strspn(words, " ");
	}
	return false;
}

/* Whether option WORD (N bytes) of C takes a value (every option but the flags; --sites's
   count is optional, so what follows it is completed as if it had none). */
static bool takes_value(const struct session_command *c, const char *word, size_t n)
{
	return !is_one_of("--abbreviated --sites --segsum", word, n) && is_one_of(c->options, word, n);
}

/* What the words typed before WORD say comes next: an option's value ("file" for -o, else the
   option), or the command's positional kind ("snapshot", "file", or ""). */
static const char *expected(const struct session_command *c, const char *text, const char *word, char *buf,
			    size_t size)
{
	size_t done = strlen(text) - strlen(word); /* TEXT ends with WORD */
	const char *option = NULL;
	size_t option_len = 0;
	int npos = 0;

	for (size_t i = 0, n; i < done; i += n) {
		i += strspn(text + i, " \t");
		n = strcspn(text + i, " \t");
		if (n == 0 || i + n > done)
			break;
		if (option != NULL)
			option = NULL; /* this word was the option's value */
		else if (text[i] == '-' && takes_value(c, text + i, n))
			option = text + i, option_len = n;
		else if (text[i] != '-')
			npos++;
	}
	if (option != NULL) {
		if (option_len == 2 && strncmp(option, "-o", 2) == 0)
			return "file";
		snprintf(buf, size, "%.*s", (int)option_len, option);
		return buf;
	}
	return nth_word(c->positional, npos, buf, size);
}

const char *mp_session_complete(mp_session *s, int i, const char *text, const char *word)
{
	const struct session_command *c;
	const char *what;
	char buf[32];
	mp_out out;

	free(s->completion);
	s->completion = NULL;
	if (i < 0 || (size_t)i >= session_ncommands || text == NULL || word == NULL || strlen(word) > strlen(text))
		return "";
	c = &session_commands[i];
	mp_out_init(&out);
	what = expected(c, text, word, buf, sizeof buf);
	if (word[0] == '-')
		add_matching(&out, c->options, word);
	else if (strcmp(what, "file") == 0)
		mp_out_puts(&out, "<file>\n");
	else if (strcmp(what, "snapshot") == 0)
		add_snapshot_names(s, &out, word);
	else if (strcmp(what, "--format") == 0)
		add_matching(&out, c->run == session_cmd_categories ? "plain rst json"
				   : c->run == session_cmd_timeline ? "json raw html svg" : "pickle json", word);
	else if (strcmp(what, "--scheme") == 0)
		add_matching(&out, "profiler tracker", word);
	else if (strcmp(what, "--by") == 0)
		add_matching(&out, "site function file module", word);
	else if (strcmp(what, "--rules") == 0)
		mp_out_puts(&out, "<file>\n");
	else if (strcmp(what, "--state") == 0)
		add_matching(&out, "allocated pending inactive active active_allocated active_pending_free", word);
	else if (strcmp(what, "--device") == 0)
		add_matching(&out, "all", word);
	else if (strcmp(what, "--of") == 0)
		add_snapshot_names(s, &out, word);
	s->completion = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return s->completion != NULL ? s->completion : "";
}

/* cli_target.c - what a command's SNAPSHOT word is on the command line: a snapshot file, a core
   dump (told apart by content, read once), or a live process (--pid: held still while it is read, unless
   --no-stop); the last two are walked. A process is opened once per run (one hold) and walked once per
   read of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_prefetch.h"
#include "mp_layout.h"
#include "mp_snapshot_walk.h"

const mp_option cli_target_options[] = {
	{ MP_O_PID, MP_OPT_COUNT, NULL, "PID", "read the allocator of live process PID (nothing is written to it)" },
	{ MP_O_STOP, MP_OPT_FLAG, NULL, NULL, "hold it still (ptrace) while it is read, then let it go on (the default)" },
	{ MP_O_NO_STOP, MP_OPT_FLAG, NULL, NULL, "read it while it runs (again when it moves under the read)" },
	{ MP_O_SYSROOT, MP_OPT_FILE, NULL, "DIR", "look for the core's libraries under DIR (a core from elsewhere)" },
	{ MP_O_SOLIB_PATH, MP_OPT_TEXT, NULL, "DIRS", "colon-separated directories to search for the core's libraries" },
	{ MP_O_LAYOUT, MP_OPT_FILE, NULL, "FILE", "struct layout to use instead of DWARF or memprof's tables" },
	{ MP_O_NO_FRAMES, MP_OPT_FLAG, NULL, NULL, "decode no allocation frames (every frames list empty): a faster walk" },
	{ MP_O_RANKS, MP_OPT_FLAG, NULL, NULL,
	  "snapshot only: --pid is a job's launcher; each process below it with PyTorch's CUDA allocator is a rank\n"
	  "(RANK in its environment), all held still together, saved as DIR/rank-R/snapshot.pickle (-o DIR)" },
	{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
};

/* The walk of --pid in this run (the process is C->live), until it moves under the read. */
static mp_walk *live_walk;

static const mp_command_args *args_of(const mp_command_ctx *c)
{
	return c->data;
}

/* The name of target WORD (NULL: --pid). */
static const char *target_name(mp_command_ctx *c, int i, const char *word, char *buf, size_t size)
{
	const char *pid = mp_arg(args_of(c), MP_O_PID);

	(void)i;
	if (word != NULL)
		return word;
	snprintf(buf, size, "pid %s", pid != NULL ? pid : "?");
	return buf;
}

/* Progress on a terminal: the walk of a big heap takes a while. */
static void show_progress(void *ctx, size_t blocks)
{
	(void)ctx;
	fprintf(stderr, "\rmemprof: %zu blocks read...", blocks);
}

/* Open the core WORD (told a core already), or --pid when WORD is NULL (held still unless --no-stop; once
   per run: it is then C->live, the run's), into *T. */
static int open_target(mp_command_ctx *c, int i, const char *word, mp_target **t)
{
	const mp_command_args *a = args_of(c);
	const char *pid = mp_arg(a, MP_O_PID);
	mp_target_opts topts = {
		.sysroot = mp_arg(a, MP_O_SYSROOT), .solib_path = mp_arg(a, MP_O_SOLIB_PATH),
		.stop = !mp_arg_given(a, MP_O_NO_STOP),
	};
	char name[64];
	long n = 0;
	mp_diag diag;
	mp_err err;

	*t = word == NULL ? c->live : NULL;
	if (*t != NULL)
		return MP_CMD_OK;
	mp_command_diag(c, &diag);
	if (word != NULL)
		err = mp_target_open_core(word, &topts, t, &diag);
	else
		err = (pid != NULL && mp_parse_long(pid, &n)) ? mp_target_open_pid((int)n, &topts, t, &diag) : MP_E_USAGE;
	if (err != MP_OK)
		return mp_command_fail(c, target_name(c, i, word, name, sizeof name), err, &diag);
	if (word == NULL)
		c->live = *t;
	return MP_CMD_OK;
}

static int target(mp_command_ctx *c, int i, const char *word, mp_target **t, bool *owned)
{
	*owned = word != NULL;
	if (word != NULL && mp_file_kind(word) != MP_FILE_CORE)
		return mp_command_error(c, "'%s': not a core dump", word);
	return open_target(c, i, word, t);
}

/* Open and walk the core WORD, or --pid when WORD is NULL. */
static int walk(mp_command_ctx *c, int i, const char *word, mp_target **t, mp_walk **w)
{
	const char *layout_path = mp_arg(args_of(c), MP_O_LAYOUT);
	mp_walk_opts wopts = { 0 };
	mp_layout layout;
	char name[64];
	mp_diag diag;
	mp_err err;
	int rc;
	bool tty = isatty(STDERR_FILENO);

	*t = NULL;
	*w = NULL;
	if (word == NULL && live_walk != NULL) {
		*t = c->live;
		*w = live_walk;
		return MP_CMD_OK;
	}
	mp_command_diag(c, &diag);
	if (layout_path != NULL) {
		if ((err = mp_layout_load_file(layout_path, &layout, &diag)) != MP_OK)
			return mp_command_fail(c, layout_path, err, &diag);
		wopts.layout = &layout;
	}
	if ((rc = open_target(c, i, word, t)) != MP_CMD_OK)
		return rc;
	if (tty)
		wopts.progress = show_progress;
	rc = mp_command_walk(c, target_name(c, i, word, name, sizeof name), *t, &wopts, w);
	if (tty)
		fputs("\r\033[K", stderr);
	if (rc != MP_CMD_OK)
		*t = NULL;
	else if (word == NULL)
		live_walk = *w;
	return rc;
}

static int walked(mp_command_ctx *c, int i, const char *word, mp_target **t, mp_walk **w, bool *owned)
{
	*owned = word != NULL;
	if (word != NULL && mp_file_kind(word) != MP_FILE_CORE)
		return mp_command_error(c, "'%s': not a core dump", word);
	return walk(c, i, word, t, w);
}

/* The word of the command's snapshot number I (NULL: none, or --pid). */
static const char *snapshot_word(const mp_command_args *a, int i)
{
	char kind[32];

	for (int j = 0, k = 0; j < a->npos; j++)
		if (strcmp(mp_command_positional_kind(a->cmd, j, kind, sizeof kind), "snapshot") == 0 && k++ == i)
			return a->pos[j];
	return NULL;
}

/* Read the file of snapshot number I: taken from the read ahead, or read now while the file of
   the next one (if it is a file) is read ahead. */
static mp_err load_file(mp_command_ctx *c, int i, const char *word, unsigned load_flags, mp_snapshot **snap,
			mp_diag *diag)
{
	const char *next = snapshot_word(args_of(c), i + 1);
	mp_err err;

	if (cli_prefetch_take(word, load_flags, snap, &err, diag))
		return err;
	if (next != NULL && mp_file_kind(next) == MP_FILE_SNAPSHOT)
		cli_prefetch_start(next, load_flags);
	return mp_snapshot_load(word, load_flags, snap, diag);
}

static int snapshot(mp_command_ctx *c, int i, const char *word, unsigned load_flags, unsigned walk_flags,
		    mp_snapshot **snap, bool *owned)
{
	mp_target *t;
	mp_walk *w;
	char name[64];
	mp_diag diag;
	mp_err err;
	int rc;

	*owned = true;
	mp_command_diag(c, &diag);
	switch (word != NULL ? mp_file_kind(word) : MP_FILE_CORE) {
	case MP_FILE_SNAPSHOT:
	case MP_FILE_UNREADABLE: /* the loader says why */
		if ((err = load_file(c, i, word, load_flags, snap, &diag)) == MP_OK)
			return MP_CMD_OK;
		if (diag.msg[0] != '\0')
			return mp_command_error(c, "%s", diag.msg);
		return mp_command_error(c, "'%s': %s", word, mp_strerror(err));
	case MP_FILE_OTHER_ELF:
		return mp_command_error(c, "'%s': an ELF file but not a core dump", word);
	case MP_FILE_CORE:
		break;
	}
	if ((rc = walk(c, i, word, &t, &w)) != MP_CMD_OK)
		return rc;
	err = mp_snapshot_from_walk(w, t, walk_flags | (mp_arg_given(args_of(c), MP_O_NO_FRAMES) ? MP_SW_NO_FRAMES : 0), snap, &diag);
	if (word != NULL) {
		mp_walk_free(w);
		mp_target_close(t);
	}
	if (err != MP_OK)
		return mp_command_fail(c, target_name(c, i, word, name, sizeof name), err, &diag);
	return MP_CMD_OK;
}

static int emit(mp_command_ctx *c, const mp_out *text)
{
	if ((text->len > 0 && fwrite(text->data, 1, text->len, stdout) != text->len) || fflush(stdout) != 0)
		return mp_command_error(c, "cannot write to standard output: %m");
	return MP_CMD_OK;
}

static FILE *stream(mp_command_ctx *c)
{
	(void)c;
	return stdout;
}

/* --pid moved under the read: its walk goes (the process stays open, held or not). */
static void again(mp_command_ctx *c)
{
	(void)c;
	mp_walk_free(live_walk);
	live_walk = NULL;
}

const mp_command_front cli_front = {
	.mask = MP_FRONT_CLI,
	.snapshot = snapshot,
	.walked = walked,
	.target = target,
	.label = target_name,
	.emit = emit,
	.stream = stream,
	.warn = cli_keep_warning,
	.again = again,
};

void cli_ctx_init(mp_command_ctx *c, const mp_command_args *a)
{
	memset(c, 0, sizeof *c);
	c->front = &cli_front;
	c->data = (void *)a;
	c->units = MP_UNITS_AUTO;
	c->device = -1;
	c->one_device = 0; /* as torch.cuda.memory_summary() */
}

/* MEMPROF_DEBUG_LIVE set: how long --pid was held, and how many reads the command took, on stderr. */
static void debug_live(const mp_command_ctx *c)
{
	const char *env = getenv("MEMPROF_DEBUG_LIVE");
	mp_target_hold_info h;

	if (env == NULL || env[0] == '\0' || c->live == NULL)
		return;
	mp_target_hold_info_get(c->live, &h);
	fprintf(stderr, "memprof: debug: %s: %u read%s", mp_target_get_info(c->live)->origin, c->reads,
		c->reads == 1 ? "" : "s");
	if (h.threads > 0)
		fprintf(stderr, "; held %.3f ms (%zu threads, stopped in %.3f ms)", (double)h.held_ns / 1e6, h.threads,
			(double)h.stop_ns / 1e6);
	fputc('\n', stderr);
}

void cli_ctx_finish(mp_command_ctx *c)
{
	debug_live(c);
	again(c);
	mp_target_close(c->live); /* lets the process go on */
	c->live = NULL;
}

/* --pid stands for the last SNAPSHOT word (after the others, as the command line names targets):
   the words from there on move one place on. */
static void place_pid(mp_command_args *a, int last)
{
	for (int i = a->npos; i > last; i--)
		a->pos[i] = a->pos[i - 1];
	a->pos[last] = NULL;
	a->npos++;
}

int cli_check_targets(mp_command_ctx *c, mp_command_args *a)
{
	/* --pid stands for a target word only in commands that read one (watch has its own --pid) */
	int want = 0, words = 0, last = -1, missing;
	int pid = mp_command_takes(a->cmd, "snapshot") && mp_arg_given(a, MP_O_PID);
	char kind[32];

	if (mp_arg_given(a, MP_O_STOP) && mp_arg_given(a, MP_O_NO_STOP))
		return mp_command_usage_error(c, "%s: --stop and --no-stop contradict each other", a->cmd->name);
	/* a target's --ranks is taken by `snapshot --pid PID --ranks -o DIR` before it gets here (watch has its own) */
	if (mp_command_takes(a->cmd, "snapshot") && mp_arg_given(a, MP_O_RANKS))
		return mp_command_usage_error(c, "%s: --ranks is for 'memprof snapshot --pid PID --ranks -o DIR'",
					      a->cmd->name);
	for (int i = 0; mp_command_positional_kind(a->cmd, i, kind, sizeof kind)[0] != '\0'; i++) {
		words++;
		if (strcmp(kind, "snapshot") == 0)
			want++, last = i;
	}
	if (a->npos + pid == words) {
		if (pid)
			place_pid(a, last);
		return MP_CMD_OK;
	}
	/* The first word not given, the words filling the places --pid leaves. */
	missing = pid && a->npos >= last ? a->npos + 1 : a->npos;
	mp_command_positional_kind(a->cmd, missing < words ? missing : last, kind, sizeof kind);
	if (a->npos + pid > words || strcmp(kind, "snapshot") == 0)
		return mp_command_usage_error(c, "%s: expected %s", a->cmd->name, want == 1 ? "one target" : "two targets");
	return mp_command_usage_error(c, "%s: missing %s", a->cmd->name, kind);
}

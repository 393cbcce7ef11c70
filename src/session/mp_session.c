/* mp_session.c - a session's life: its target, settings, runs and what a run leaves behind. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mp_snapshot_walk.h"
#include "session_int.h"

const char *mp_session_version(void)
{
	return PACKAGE_VERSION;
}

mp_session *mp_session_new(void)
{
	mp_session *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	mp_out_init(&s->out);
	mp_out_init(&s->warnings);
	session_settings_defaults(s);
	mp_session_use_none(s, "no process or core file");
	return s;
}

static void forget_target(mp_session *s)
{
	session_drop_target(s);
	free(s->why);
	free(s->core);
	free(s->sysroot);
	free(s->solib_path);
	free(s->cb_name);
	free(s->maps_text);
	s->why = s->core = s->sysroot = s->solib_path = s->cb_name = s->maps_text = NULL;
	s->cb_read = NULL;
	s->cb_ctx = NULL;
	s->pid = 0;
	s->reads = 0;
}

void mp_session_free(mp_session *s)
{
	if (s == NULL)
		return;
	forget_target(s);
	for (size_t i = 0; i < s->nsnaps; i++) {
		free(s->snaps[i].name);
		free(s->snaps[i].origin);
		mp_snapshot_free(s->snaps[i].snap);
	}
	free(s->snaps);
	session_catch_free(s);
	free(s->layout_path);
	free(s->viewer);
	free(s->d3);
	free(s->completion);
	mp_out_free(&s->out);
	mp_out_free(&s->warnings);
	free(s);
}

static char *dup_or_null(const char *text)
{
	return text != NULL && text[0] != '\0' ? strdup(text) : NULL;
}

static bool same(const char *a, const char *b)
{
	return (a == NULL || a[0] == '\0') ? (b == NULL || b[0] == '\0') : (b != NULL && strcmp(a, b) == 0);
}

int mp_session_use_none(mp_session *s, const char *why)
{
	if (s->kind == ST_NONE && same(s->why, why))
		return 0;
	forget_target(s);
	s->kind = ST_NONE;
	s->why = dup_or_null(why != NULL ? why : "no target");
	return 0;
}

int mp_session_use_pid(mp_session *s, int pid)
{
	if (s->kind == ST_PID && s->pid == pid)
		return 0;
	forget_target(s);
	s->kind = ST_PID;
	s->pid = pid;
	return 0;
}

int mp_session_use_core(mp_session *s, const char *core, const char *sysroot, const char *solib_path)
{
	if (s->kind == ST_CORE && same(s->core, core) && same(s->sysroot, sysroot) && same(s->solib_path, solib_path))
		return 0;
	forget_target(s);
	s->kind = ST_CORE;
	s->core = dup_or_null(core);
	s->sysroot = dup_or_null(sysroot);
	s->solib_path = dup_or_null(solib_path);
	return 0;
}

int mp_session_use_callback(mp_session *s, const char *name, int pid, mp_read_fn read, void *ctx,
			    const char *maps_text)
{
	if (s->kind == ST_CALLBACK && s->pid == pid && s->cb_read == read && s->cb_ctx == ctx &&
	    same(s->cb_name, name) && same(s->maps_text, maps_text))
		return 0;
	forget_target(s);
	s->kind = ST_CALLBACK;
	s->pid = pid;
	s->cb_name = dup_or_null(name);
	s->cb_read = read;
	s->cb_ctx = ctx;
	s->maps_text = dup_or_null(maps_text);
	return 0;
}

void mp_session_invalidate(mp_session *s)
{
	mp_snapshot_free(s->now);
	mp_walk_free(s->walk);
	s->now = NULL;
	s->walk = NULL;
	if (s->target != NULL)
		mp_target_flush(s->target);
}

void mp_session_set_poll(mp_session *s, mp_session_poll_fn poll, void *ctx)
{
	s->poll = poll;
	s->poll_ctx = ctx;
}

uint64_t mp_session_reads(const mp_session *s)
{
	return s->reads;
}

/* ---- runs */

/* ctypes reads the texts as C strings: end them with a NUL that their length does not count. */
static void terminate(mp_out *out)
{
	char *p = mp_out_reserve(out, 1);

	if (p != NULL)
		*p = '\0';
}

/* The words of the old `trace [N] [--of SNAPSHOT]` as `trace [SNAPSHOT] [--last N]` into WORDS (room for
   ARGC + 1); true when there was an old spelling. */
static bool old_trace_words(int argc, char **argv, char **words, int *n)
{
	static char last[] = "--last";
	bool old = false;

	*n = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--last") == 0 && i + 1 < argc) { /* the new spelling: its count as it is */
			words[(*n)++] = argv[i];
			words[(*n)++] = argv[++i];
		} else if (strcmp(argv[i], "--of") == 0 && i + 1 < argc) {
			words[(*n)++] = argv[++i];
			old = true;
		} else if (argv[i][0] != '\0' && strspn(argv[i], "0123456789") == strlen(argv[i])) {
			if (strspn(argv[i], "0") != strlen(argv[i])) { /* 0 was all of it */
				words[(*n)++] = last;
				words[(*n)++] = argv[i];
			}
			old = true;
		} else {
			words[(*n)++] = argv[i];
		}
	}
	return old;
}

/* The command ARGV names (a prefix's subcommand, an old name's command), its words after the name. */
static const mp_command *find_command(mp_session *s, int *argc, char ***argv)
{
	const mp_command *c, *alias;
	char full[64];

	c = session_find_command((*argv)[0], &alias);
	if (c == NULL) {
		session_error(s, "no command '%s' (see 'help memprof')", (*argv)[0]);
		return NULL;
	}
	if (alias != NULL)
		mp_out_printf(&s->warnings, "memprof: note: '%s' is now called '%s'\n", alias->name, c->name);
	if (c->flags & MP_CMD_PREFIX) {
		const mp_command *prefix = c;

		if (*argc < 2) {
			session_error(s, "%s: say %s (see 'help memprof %s')", c->name, c->synopsis, c->name);
			return NULL;
		}
		snprintf(full, sizeof full, "%s %s", c->name, (*argv)[1]);
		if ((c = session_find_command(full, NULL)) == NULL) {
			session_error(s, "%s: no subcommand '%s' (%s)", (*argv)[0], (*argv)[1], prefix->synopsis);
			return NULL;
		}
		--*argc, ++*argv;
	}
	return c;
}

int session_run_words(mp_session *s, int argc, char **argv)
{
	const mp_command *c;
	mp_command_args a;
	mp_command_ctx ctx;
	char **words = NULL;
	int n, rc;

	if (argc < 1 || argv == NULL || argv[0] == NULL)
		return session_error(s, "no command given");
	if ((c = find_command(s, &argc, &argv)) == NULL)
		return MP_SESSION_ERROR;
	session_ctx_init(s, &ctx, argv[0]);
	if (c == &mp_cmd_trace) {
		if ((words = malloc(((size_t)argc + 1) * sizeof *words)) == NULL)
			return session_error(s, "out of memory");
		if (old_trace_words(argc - 1, argv + 1, words, &n))
			mp_out_puts(&s->warnings, "memprof: note: 'trace N --of SNAPSHOT' is now 'trace SNAPSHOT --last N'\n");
		rc = mp_command_parse(&ctx, c, NULL, n, words, &a);
	} else {
		rc = mp_command_parse(&ctx, c, NULL, argc - 1, argv + 1, &a);
	}
	if (rc == MP_CMD_OK && !a.help)
		rc = mp_command_check_words(&ctx, &a);
	if (rc != MP_CMD_OK) {
		rc = ctx.usage ? session_error(s, "%s (see 'help memprof %s')", ctx.error, c->name)
			       : session_error(s, "%s", ctx.error);
		ctx.error[0] = '\0';
	} else if (a.help) {
		for (int i = 0; session_command(i) != NULL; i++)
			if (session_command(i) == c)
				mp_out_puts(&s->out, mp_session_command_help(i));
	} else {
		rc = mp_command_run(&ctx, &a);
	}
	free(words);
	/* a handler's error is in CTX; the session's own steps (the walk, a name) set S's directly */
	if (rc == MP_SESSION_ERROR && ctx.error[0] != '\0')
		session_error(s, "%s", ctx.error);
	if (rc != MP_SESSION_ERROR && s->out.err != MP_OK)
		rc = session_error(s, "%s", mp_strerror(s->out.err));
	return rc;
}

void session_begin_run(mp_session *s)
{
	mp_out_free(&s->out);
	mp_out_free(&s->warnings);
	mp_out_init(&s->out);
	mp_out_init(&s->warnings);
	s->error[0] = '\0';
	/* a process memprof does not hold may have run since the last command: look again (its tracer may hold
	   it still, as gdb does at a prompt: then the walk of this stop stands), and read it afresh if it runs */
	if (s->kind == ST_PID && s->target != NULL) {
		mp_target_flush(s->target);
		if (mp_target_live(s->target) == MP_LIVE_RUNNING)
			mp_session_invalidate(s);
	}
}

void session_end_run(mp_session *s)
{
	/* one hold per command: the process goes on between commands (and what was read of it goes) */
	if (s->kind == ST_PID && s->stop)
		session_drop_target(s);
	terminate(&s->out);
	terminate(&s->warnings);
}

int mp_session_run(mp_session *s, int argc, char **argv)
{
	int rc;

	session_begin_run(s);
	rc = session_run_words(s, argc, argv);
	session_end_run(s);
	return rc;
}

const char *mp_session_output(const mp_session *s)
{
	return s->out.data != NULL && s->out.err == MP_OK ? s->out.data : "";
}

size_t mp_session_output_len(const mp_session *s)
{
	return s->out.data != NULL && s->out.err == MP_OK ? s->out.len : 0;
}

const char *mp_session_error(const mp_session *s)
{
	return s->error;
}

const char *mp_session_warnings(const mp_session *s)
{
	return s->warnings.data != NULL && s->warnings.err == MP_OK ? s->warnings.data : "";
}

int session_error(mp_session *s, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(s->error, sizeof s->error, "memprof: ");

	va_start(ap, fmt);
	vsnprintf(s->error + n, sizeof s->error - (size_t)n, fmt, ap);
	va_end(ap);
	/* one line: a message that carries newlines would break the debugger's error line */
	for (char *p = s->error; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return MP_SESSION_ERROR;
}

int session_fail(mp_session *s, const char *what, mp_err err, const mp_diag *diag)
{
	if (err == MP_E_INTERRUPTED && (diag == NULL || diag->msg[0] == '\0'))
		return session_error(s, "interrupted");
	if (diag != NULL && diag->msg[0] != '\0')
		return session_error(s, "%s: %s", what, diag->msg);
	return session_error(s, "%s: %s", what, mp_strerror(err));
}

void session_diag_init(mp_session *s, mp_diag *diag)
{
	memset(diag, 0, sizeof *diag);
	diag->warn = session_front.warn;
	diag->warn_ctx = s;
}

void session_emit(mp_session *s, mp_out *out, bool print_newline)
{
	if (out->err != MP_OK) {
		s->out.err = out->err;
		return;
	}
	mp_out_write(&s->out, out->data != NULL ? out->data : "", out->len);
	if (print_newline)
		mp_out_putc(&s->out, '\n');
}

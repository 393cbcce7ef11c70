/* session_cmd_catch.c - `memprof catch oom`: the debugger stops where PyTorch's CUDA caching allocator throws its
   c10::OutOfMemoryError (after the allocator's retry, before anything unwinds or is freed) and the session
   explains it there. The debugger only places a breakpoint where mp_session_catch_location says, reads the two
   registers mp_session_catch_registers names at each stop and hands them to mp_session_catch_throw, which
   tells an OOM from any other C++ throw, writes the report and its files (mp_catch.h: the same set as
   `memprof watch`) and says whether the program stops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mp_catch.h"
#include "mp_file.h"
#include "mp_torch_error.h"
#include "session_int.h"

/* libstdc++'s function every C++ throw calls with the thrown object and its std::type_info: an export, so
   stripped builds have it. */
#define THROW_FUNCTION "__cxa_throw"

static void disarm(struct session_catch *k)
{
	free(k->dir);
	*k = (struct session_catch){ 0 };
}

void session_catch_free(mp_session *s)
{
	disarm(&s->catching);
}

static int run_catch_oom(mp_command_ctx *c, const mp_command_args *a)
{
	mp_session *s = c->data;
	const char *dir = mp_arg(a, MP_O_OUTPUT), *format = mp_arg(a, MP_O_FORMAT);
	struct session_catch k = { .armed = true, .go_on = mp_arg_given(a, MP_O_CONTINUE) };

	if (a->npos == 1 && strcmp(a->pos[0], "off") != 0)
		return mp_command_usage_error(c, "catch oom: '%s': say off to stop catching, or nothing", a->pos[0]);
	disarm(&s->catching);
	if (a->npos == 1) {
		mp_out_puts(&s->out, "memprof: no longer catching CUDA OOMs\n");
		return MP_SESSION_OK;
	}
	snprintf(k.format, sizeof k.format, "%s", format != NULL ? format : "plain");
	if (dir != NULL) {
		mp_diag diag = { .msg = "" };

		if (mp_file_mkdirs(dir, &diag) != MP_OK)
			return mp_command_error(c, "catch oom: %s", diag.msg);
		if ((k.dir = strdup(dir)) == NULL)
			return mp_command_error(c, "catch oom: out of memory");
	}
	s->catching = k;
	mp_out_puts(&s->out, "memprof: catching CUDA OOMs (c10::OutOfMemoryError)\n");
	return MP_SESSION_OK;
}

const char *mp_session_catch_location(const mp_session *s)
{
	return s->catching.armed ? THROW_FUNCTION : NULL;
}

const char *mp_session_catch_registers(void)
{
#if defined(__x86_64__)
	return "rdi rsi"; /* the System V AMD64 ABI's first two integer arguments */
#elif defined(__aarch64__)
	return "x0 x1";
#else
	return NULL;
#endif
}

static bool read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	mp_diag quiet = { .msg = "" }; /* an unreadable name is no OOM */

	return mp_target_read(ctx, addr, buf, len, &quiet) == MP_OK;
}

/* Run ARGV in the session with its output into *TEXT (the caller frees it): the run's status. */
static int capture(mp_session *s, int argc, char **argv, char **text, size_t *len)
{
	mp_out saved = s->out;
	int rc;

	mp_out_init(&s->out);
	rc = session_run_words(s, argc, argv);
	*text = mp_out_take(&s->out, len);
	mp_out_free(&s->out);
	s->out = saved;
	return *text != NULL ? rc : session_error(s, "out of memory");
}

static bool write_file(mp_session *s, const char *path, const char *text, size_t len)
{
	mp_diag diag;

	session_diag_init(s, &diag);
	if (mp_file_write(path, text != NULL ? text : "", len, &diag) == MP_OK)
		return true;
	mp_out_printf(&s->warnings, "memprof: warning: %s\n", diag.msg);
	return false;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The Nth OOM's report, and its files when the catch writes them: an mp_session_status. */
static int report(mp_session *s, uint64_t thrown)
{
	struct session_catch *k = &s->catching;
	bool json = strcmp(k->format, "json") == 0;
	char addr[32], path[4200], names[4300], *text = NULL;
	char *explain[] = { "oom", "--cxx-exception", addr, "--format", k->format, NULL };
	char *stacks[] = { "pystack", NULL };
	char *save[] = { "snapshot", "save", "now", path, NULL };
	size_t len;
	int rc;

	snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)thrown);
	mp_out_printf(&s->out, "memprof: c10::OutOfMemoryError thrown (#%u)\n", k->count);
	rc = capture(s, 5, explain, &text, &len);
	if (k->dir == NULL) {
		mp_out_write(&s->out, text != NULL ? text : "", text != NULL ? len : 0);
		free(text);
		return rc;
	}
	if (rc == MP_SESSION_ERROR) { /* no files: the error says why */
		free(text);
		return rc;
	}
	if (mp_catch_path(path, sizeof path, k->dir, k->count, MP_CATCH_REPORT, json))
		write_file(s, path, text, text != NULL ? len : 0);
	free(text);
	/* the stacks and the snapshot are kept even when one of them fails: each says so in the warnings */
	if (capture(s, 1, stacks, &text, &len) != MP_SESSION_ERROR &&
	    mp_catch_path(path, sizeof path, k->dir, k->count, MP_CATCH_PYSTACK, json))
		write_file(s, path, text, len);
	else
		mp_out_printf(&s->warnings, "memprof: warning: catch oom: pystack: %s\n", s->error);
	free(text);
	text = NULL;
	if (mp_catch_path(path, sizeof path, k->dir, k->count, MP_CATCH_SNAPSHOT, json) &&
	    capture(s, 4, save, &text, &len) == MP_SESSION_ERROR)
		mp_out_printf(&s->warnings, "memprof: warning: catch oom: snapshot: %s\n", s->error);
	free(text); /* NULL when the path did not fit */
	s->error[0] = '\0';
	mp_catch_names(names, sizeof names, k->dir, k->count, json);
	mp_out_printf(&s->out, "memprof: wrote %s\n", names);
	return MP_SESSION_OK;
}

int mp_session_catch_throw(mp_session *s, uint64_t thrown, uint64_t type_info)
{
	struct timespec t0;
	mp_diag diag;
	int rc;

	session_begin_run(s);
	rc = MP_SESSION_CATCH_PASS;
	if (!s->catching.armed)
		goto out;
	mp_session_invalidate(s); /* the program ran to this throw */
	if (s->kind == ST_NONE) {
		session_error(s, "catch oom: %s", s->why != NULL ? s->why : "no target");
		rc = MP_SESSION_CATCH_FAILED;
		goto out;
	}
	session_diag_init(s, &diag);
	if (session_open(s, &diag) != MP_OK) {
		session_error(s, "catch oom: %s", diag.msg[0] != '\0' ? diag.msg : "cannot read the target");
		rc = MP_SESSION_CATCH_FAILED;
		goto out;
	}
	if (!mp_torch_throws_oom(read_target, s->target, type_info))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->catching.count++;
	if (report(s, thrown) == MP_SESSION_ERROR)
		rc = MP_SESSION_CATCH_FAILED;
	else
		rc = s->catching.go_on ? MP_SESSION_CATCH_GO_ON : MP_SESSION_CATCH_STOP;
	if (s->catching.dir != NULL) /* what the job waited for this report */
		(void)mp_catch_write_pause(s->catching.dir, s->catching.count, seconds_since(&t0));
out:
	session_end_run(s);
	return rc;
}

#define CATCH_HELP                                                                                            \
	"Stops the program when the allocator throws its c10::OutOfMemoryError, after its retry and before\n"   \
	"the exception unwinds and frees anything, and prints `memprof oom` for it (the request, PyTorch's\n"    \
	"numbers, the replayed decision, the causes, who holds the memory, what would have worked). Other\n"    \
	"C++ throws go on. -o DIR writes, for the Nth OOM, DIR/oom-N.txt (.json with --format json),\n"         \
	"DIR/oom-N.pystack.txt (every thread's Python stack), DIR/oom-N.pickle (the snapshot) and\n"           \
	"DIR/oom-N.pause (the seconds the job stood). --continue does not stop: the program goes on after\n"    \
	"the report (what `memprof watch` does without a debugger). `memprof catch oom off` stops catching.\n" \
	"Works on stripped builds: it needs only libstdc++'s " THROW_FUNCTION " and the exception's type name.\n" \
	"Nothing is written to the program but the debugger's breakpoint.\n"

const mp_command session_cmd_catch = {
	"catch", MP_FRONT_SESSION, "stop where something happens in the program: a CUDA OOM",
	"oom ...", "", "", NULL, "", NULL, MP_CMD_PREFIX, NULL,
};

const mp_command session_cmd_catch_oom = {
	"catch oom", MP_FRONT_SESSION, "stop where PyTorch's CUDA caching allocator runs out of memory, and explain why",
	"[off] [-o DIR] [--continue] [--format plain|rst|json]", CATCH_HELP, "[off]",
	(const mp_option[]){
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "DIR", "write each OOM's report, stacks, snapshot and pause into DIR" },
		{ MP_O_CONTINUE, MP_OPT_FLAG, NULL, NULL, "report and go on instead of stopping" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "the report's format: plain (default), rst or json" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"", run_catch_oom, 0, NULL,
};

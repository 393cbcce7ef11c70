/* command_read.c - a command's run, read again while what it reads is a running process that moved under
   the read: its output held back at the gate, its warnings held until the read is settled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_int.h"

#define READ_ATTEMPTS 5

/* What one read of a running process came to. */
enum verdict { UNDECIDED, SETTLED, RACED };

struct command_attempt {
	mp_out warnings;   /* held back until the read is settled, one a line */
	unsigned damage;   /* damage warnings among them */
	enum verdict verdict;
	bool moved_now;    /* this read moved */
	const char *last;  /* the read before's signature when nothing moved under it, else NULL */
};

/* Whether warnings are being held: a read of a live process is under way. */
static bool holding(const mp_command_ctx *c)
{
	return c->attempt != NULL && c->live != NULL;
}

static void command_warn(void *ctx, const char *line)
{
	mp_command_ctx *c = ctx;

	if (!holding(c)) {
		c->front->warn(c->data, line);
		return;
	}
	mp_out_puts(&c->attempt->warnings, line);
	mp_out_putc(&c->attempt->warnings, '\n');
}

static void command_damaged(void *ctx)
{
	mp_command_ctx *c = ctx;

	if (holding(c))
		c->attempt->damage++;
}

void mp_command_diag(mp_command_ctx *c, mp_diag *diag)
{
	memset(diag, 0, sizeof *diag);
	diag->warn = command_warn;
	diag->damaged = command_damaged;
	diag->warn_ctx = c;
}

/* What a read came to, for comparing two reads: its status, error and warnings (malloc'd, NULL when out of
   memory). */
static char *signature(const mp_command_ctx *c, int rc)
{
	const mp_out *w = &c->attempt->warnings;
	char *sig = NULL;

	if (asprintf(&sig, "%d\n%s\n%.*s", rc == MP_CMD_BAD, c->error, (int)w->len, w->data != NULL ? w->data : "") < 0)
		return NULL;
	return sig;
}

/* Whether the damage (or error) of the read just done (status RC) is what the read before found. */
static bool as_before(mp_command_ctx *c, int rc)
{
	char *sig = signature(c, rc);
	bool same = sig != NULL && c->attempt->last != NULL && strcmp(sig, c->attempt->last) == 0;

	free(sig);
	return same;
}

/* Whether the read just done (status RC) of a process memprof holds stands: the hold caught no writer inside
   (mp_target_moved) and it found no damage, or the same as the read before; a hold that keeps catching the job
   mid-update, or damage that keeps changing, is read as it stands at the last read (the job is stuck there). */
static enum verdict judge_held(mp_command_ctx *c, int rc)
{
	struct command_attempt *at = c->attempt;
	bool last = c->reads == READ_ATTEMPTS;

	if ((at->moved_now = mp_target_moved(c->live))) {
		if (!last)
			return RACED;
		mp_out_puts(&at->warnings, "each hold caught a thread of the job inside the allocator or the garbage "
					   "collector: it is read as it stood\n");
	}
	return at->damage == 0 || last || as_before(c, rc) ? SETTLED : RACED;
}

/* Whether the read just done (status RC) stands: the process does not move (a core, held still by its tracer),
   or memprof holds it (judge_held), or nothing moved under the read and it found no damage, or the same damage
   (or error) as the read before, under which nothing moved either: then it is the process's, not a race's. */
static enum verdict judge(mp_command_ctx *c, int rc)
{
	struct command_attempt *at = c->attempt;
	enum mp_target_live live = c->live != NULL ? mp_target_live(c->live) : MP_LIVE_NONE;

	if (live == MP_LIVE_HELD)
		return judge_held(c, rc);
	if (live != MP_LIVE_RUNNING)
		return SETTLED;
	if ((at->moved_now = mp_target_moved(c->live)))
		return RACED;
	return (at->damage == 0 && rc != MP_CMD_BAD) || as_before(c, rc) ? SETTLED : RACED;
}

int mp_command_gate(mp_command_ctx *c)
{
	struct command_attempt *at = c->attempt;

	if (at == NULL)
		return MP_CMD_OK;
	if (at->verdict == UNDECIDED) {
		at->verdict = judge(c, MP_CMD_OK);
		/* the read is over: the job goes on before the output is written (a pipe may be slow to take it) */
		if (at->verdict == SETTLED && c->live != NULL)
			mp_target_let_go(c->live);
	}
	return at->verdict == SETTLED ? MP_CMD_OK : MP_CMD_RACED;
}

/* Hand the settled read's warnings to the front end, one line at a time. */
static void release_warnings(mp_command_ctx *c)
{
	mp_out *w = &c->attempt->warnings;
	char *line, *nl;

	if (w->len == 0)
		return;
	mp_out_putc(w, '\0');
	if (w->err != MP_OK)
		return;
	for (line = w->data; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		c->front->warn(c->data, line);
	}
}

/* Forget the read that did not stand (keeping its signature when nothing moved under it) and begin another: a
   process held still is let go a moment and held again. */
static char *again(mp_command_ctx *c, int rc)
{
	struct command_attempt *at = c->attempt;
	char *last = at->moved_now ? NULL : signature(c, rc);
	mp_diag diag;

	mp_out_free(&at->warnings);
	mp_out_init(&at->warnings);
	at->damage = 0;
	at->verdict = UNDECIDED;
	at->moved_now = false;
	c->error[0] = '\0';
	c->usage = false;
	if (c->front->again != NULL)
		c->front->again(c);
	mp_command_diag(c, &diag);
	if (mp_target_again(c->live, &diag) != MP_OK) /* it cannot be held again (gone?): said, and the read says more */
		mp_warn(&diag, "%s", diag.msg);
	c->reads++;
	return last;
}

/* The error of a process that moved under every read: use --stop, or why it could not be held. */
static int racing(mp_command_ctx *c)
{
	const char *origin = mp_target_get_info(c->live)->origin;
	mp_target_hold_info h;

	mp_target_hold_info_get(c->live, &h);
	if (h.asked)
		return mp_command_error(c, "%s: the job was running and could not be stopped (%s): it changed under each "
				       "of %d reads", origin, h.why_not, READ_ATTEMPTS);
	return mp_command_error(c, "%s: the job was running: use --stop (it changed under each of %d reads)", origin,
				READ_ATTEMPTS);
}

int mp_command_run(mp_command_ctx *c, const mp_command_args *a)
{
	struct command_attempt at = { .verdict = UNDECIDED };
	char *last = NULL;
	int rc;

	mp_out_init(&at.warnings);
	c->attempt = &at;
	c->reads = 1;
	for (;;) {
		rc = a->cmd->run(c, a);
		if (at.verdict == UNDECIDED)
			at.verdict = judge(c, rc);
		if (at.verdict == SETTLED || c->live == NULL)
			break;
		free(last);
		last = NULL;
		at.last = NULL;
		if (c->reads == READ_ATTEMPTS) {
			rc = racing(c);
			break;
		}
		last = again(c, rc);
		at.last = last;
	}
	if (at.verdict == SETTLED)
		release_warnings(c);
	free(last);
	mp_out_free(&at.warnings);
	c->attempt = NULL;
	return rc == MP_CMD_RACED ? MP_CMD_BAD : rc;
}

/* cli_prefetch.c - a command's next snapshot file, read on another thread while it reads the
   one before (compare BEFORE AFTER: two files, two cores, the time of one).

   Only files are read ahead (a core or a process is walked as before), with the flags the
   first was asked with; the reader keeps nothing shared between two loads, and its warnings
   are held here and handed on, in order, when the snapshot is taken. A read ahead that is not
   taken (the first failed, or the flags differ) is waited for and freed. */
#include "cli_prefetch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mp_out.h"

struct prefetch {
	pthread_t thread;
	bool running;
	const char *word;
	unsigned flags;
	mp_snapshot *snap;
	mp_err err;
	mp_diag diag;
	mp_out warnings; /* NUL-separated lines */
};

/* One command at a time runs in a process. */
static struct prefetch ahead;

static void hold_warning(void *ctx, const char *line)
{
	struct prefetch *p = ctx;

	mp_out_write(&p->warnings, line, strlen(line) + 1);
}

static void *load(void *arg)
{
	struct prefetch *p = arg;

	p->err = mp_snapshot_load(p->word, p->flags, &p->snap, &p->diag);
	return NULL;
}

void cli_prefetch_start(const char *word, unsigned flags)
{
	cli_prefetch_drop();
	memset(&ahead, 0, sizeof ahead);
	ahead.word = word;
	ahead.flags = flags;
	ahead.diag.warn = hold_warning;
	ahead.diag.warn_ctx = &ahead;
	mp_out_init(&ahead.warnings);
	/* No thread, no read ahead: the file is read when it is asked for. */
	ahead.running = pthread_create(&ahead.thread, NULL, load, &ahead) == 0;
	if (!ahead.running)
		mp_out_free(&ahead.warnings);
}

bool cli_prefetch_take(const char *word, unsigned flags, mp_snapshot **snap, mp_err *err, mp_diag *diag)
{
	if (!ahead.running || strcmp(ahead.word, word) != 0 || ahead.flags != flags)
		return false;
	pthread_join(ahead.thread, NULL);
	ahead.running = false;
	for (size_t at = 0; at < ahead.warnings.len; at += strlen(ahead.warnings.data + at) + 1) {
		diag->nwarn++;
		if (diag->warn != NULL)
			diag->warn(diag->warn_ctx, ahead.warnings.data + at);
	}
	mp_out_free(&ahead.warnings);
	memcpy(diag->msg, ahead.diag.msg, sizeof diag->msg);
	*snap = ahead.snap;
	*err = ahead.err;
	return true;
}

void cli_prefetch_drop(void)
{
	if (!ahead.running)
		return;
	pthread_join(ahead.thread, NULL);
	ahead.running = false;
	mp_out_free(&ahead.warnings);
	if (ahead.err == MP_OK)
		mp_snapshot_free(ahead.snap);
}

/* fleet_read.c - every rank read on a fixed number of worker threads: each takes the next rank, loads its
   snapshot (frames passed over unless asked for), reduces it to the rank's figures and frees it, so memory
   holds one snapshot per thread and the figures; a core goes to the front end's reader, one at a time. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet_int.h"
#include "mp_snapshot_file.h"

#define MAX_THREADS 64

void mp_fleet_opts_init(mp_fleet_opts *o)
{
	*o = (mp_fleet_opts){ .device = -1, .depth = 1, .frames = true };
}

struct work {
	mp_fleet *f;
	atomic_size_t next;     /* the next rank to take */
	pthread_mutex_t other;  /* one load_other at a time */
};

/* Whether PATH begins as an ELF file does (a core dump: not for the snapshot loader). */
static bool is_elf(const char *path)
{
	unsigned char head[4] = { 0 };
	FILE *fp = fopen(path, "rb");
	bool elf;

	if (fp == NULL)
		return false;
	elf = fread(head, 1, 4, fp) == 4 && memcmp(head, "\177ELF", 4) == 0;
	fclose(fp);
	return elf;
}

/* DIAG's line, or the text of ERR, as R's error. */
static void set_error(fleet_rank *r, mp_err err, const mp_diag *diag)
{
	free(r->error);
	r->error = strdup(diag->msg[0] != '\0' ? diag->msg : mp_strerror(err));
}

/* Load rank R's snapshot and reduce it. */
static void read_rank(struct work *w, fleet_rank *r)
{
	const mp_fleet_opts *o = &w->f->opts;
	mp_snapshot *snap = NULL;
	mp_diag diag = { 0 };
	bool owned = true;
	mp_err err;

	if (r->oom_path != NULL)
		fleet_oom_read(r);
	if (r->path == NULL) {
		free(r->error);
		r->error = strdup(r->oom_path != NULL ? "no snapshot beside its OOM explanation"
						      : "no snapshot (snapshot.pickle, snapshot.json, *.pickle, core)");
		return;
	}
	if (is_elf(r->path)) {
		if (o->load_other == NULL) {
			set_error(r, mp_fail(&diag, MP_E_UNSUPPORTED, "'%s': an ELF file, not a snapshot", r->path), &diag);
			return;
		}
		pthread_mutex_lock(&w->other);
		err = o->load_other(o->load_ctx, r->path, o->frames, &snap, &owned, &diag);
		pthread_mutex_unlock(&w->other);
	} else {
		err = mp_snapshot_load(r->path, o->frames ? 0 : MP_LOAD_NO_FRAMES, &snap, &diag);
	}
	if (err == MP_OK)
		err = fleet_reduce(w->f, r, snap, &diag);
	if (owned)
		mp_snapshot_free(snap);
	if (err != MP_OK) {
		set_error(r, err, &diag);
		memset(r->metric, 0, sizeof r->metric);
		return;
	}
	r->read = true;
}

static void *worker(void *arg)
{
	struct work *w = arg;
	size_t i;

	while ((i = atomic_fetch_add(&w->next, 1)) < w->f->n)
		read_rank(w, &w->f->ranks[i]);
	return NULL;
}

/* The worker threads for N ranks by O: O's, else MEMPROF_THREADS, else the online processors. */
static size_t thread_count(const mp_fleet_opts *o, size_t n)
{
	const char *env = getenv("MEMPROF_THREADS");
	long t = o->threads > 0 ? (long)o->threads : env != NULL ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);

	if (t < 1)
		t = 1;
	if (t > MAX_THREADS)
		t = MAX_THREADS;
	return (size_t)t < n ? (size_t)t : n;
}

/* Each rank that was not read, in rank order, as a warning. */
static void warn_unread(const mp_fleet *f, mp_diag *diag)
{
	for (size_t i = 0; i < f->n; i++) {
		const fleet_rank *r = &f->ranks[i];

		if (!r->read)
			mp_warn(diag, "rank %ld not read: %s", r->rank, r->error != NULL ? r->error : "out of memory");
		else if (r->error != NULL)
			mp_warn(diag, "rank %ld: %s", r->rank, r->error);
	}
}

mp_err mp_fleet_read(mp_fleet *f, const mp_fleet_opts *o, mp_diag *diag)
{
	struct work w = { .f = f };
	pthread_t threads[MAX_THREADS];
	size_t n, started = 0;

	f->opts = *o;
	if (f->opts.depth < 0)
		f->opts.depth = 0;
	n = thread_count(o, f->n);
	atomic_init(&w.next, 0);
	pthread_mutex_init(&w.other, NULL);
	for (size_t i = 1; i < n; i++)
		if (pthread_create(&threads[i], NULL, worker, &w) == 0)
			started++;
		else
			break;
	worker(&w); /* this thread is one of them, and the only one when none could start */
	for (size_t i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&w.other);
	warn_unread(f, diag);
	f->nread = 0;
	for (size_t i = 0; i < f->n; i++)
		f->nread += f->ranks[i].read;
	if (f->nread == 0) /* the warnings are not shown with the error: the first rank's reason is */
		return mp_fail(diag, MP_E_NOTFOUND, "no rank could be read (of %zu): rank %ld: %s", f->n, f->ranks[0].rank,
			       f->ranks[0].error != NULL ? f->ranks[0].error : "out of memory");
	return fleet_stats(f) != MP_OK ? mp_fail(diag, MP_E_NOMEM, "fleet: out of memory") : MP_OK;
}

size_t mp_fleet_nread(const mp_fleet *f)
{
	return f->nread;
}

/* fleet_find.c - the ranks a job's targets name: a directory of rank-R/ subdirectories (each with its snapshot
   and the oom-N.* files `memprof watch` leaves), a directory of rank files (rank-3.pickle), files one by one;
   for each rank, its snapshot file and its first OOM's explanation. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleet_int.h"
#include "mp_array.h"

/* A directory's entries, sorted by name. */
struct names {
	char **v;
	size_t n, cap;
};

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of DIR but . and .., sorted, into *S. MP_E_ERRNO (errno set) or MP_E_NOMEM. */
static mp_err list_dir(const char *dir, struct names *s)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	mp_err err = MP_OK;

	memset(s, 0, sizeof *s);
	if (d == NULL)
		return MP_E_ERRNO;
	while (err == MP_OK && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((err = mp_array_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) == MP_OK &&
		    (s->v[s->n] = strdup(e->d_name)) == NULL)
			err = MP_E_NOMEM;
		if (err == MP_OK)
			s->n++;
	}
	closedir(d);
	if (err == MP_OK)
		mp_sort(s->v, s->n, sizeof *s->v, cmp_name);
	else
		names_free(s);
	return err;
}

static char *join(const char *dir, const char *name)
{
	char *p;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The rank NAME holds: "rank" in any case, then '-', '_' or '.' or nothing, then digits ("rank-3", "job_rank07"). */
static bool rank_number(const char *name, long *out)
{
	for (const char *p = name; (p = strcasestr(p, "rank")) != NULL; p += 4) {
		const char *d = p + 4;
		char *end;

		if (*d == '-' || *d == '_' || *d == '.')
			d++;
		if (*d < '0' || *d > '9')
			continue;
		errno = 0;
		*out = strtol(d, &end, 10);
		if (errno == 0 && *out <= 1000000000L)
			return true;
	}
	return false;
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && strcasecmp(name + n - m, suffix) == 0;
}

static bool snapshot_name(const char *name)
{
	return has_suffix(name, ".pickle") || has_suffix(name, ".pkl") || has_suffix(name, ".json");
}

/* The OOM number of oom-N.json / oom-N.txt (*JSON: which), or -1. */
static long oom_number(const char *name, bool *json)
{
	const char *d = name + 4;
	char *end;
	long n;

	if (strncmp(name, "oom-", 4) != 0 || *d < '0' || *d > '9')
		return -1;
	n = strtol(d, &end, 10);
	if (strcmp(end, ".json") != 0 && strcmp(end, ".txt") != 0)
		return -1;
	*json = strcmp(end, ".json") == 0;
	return n;
}

/* Add rank RANK read from PATH (taken: freed on failure) to F; a rank named already is a warning. */
static mp_err add_rank(mp_fleet *f, long rank, char *path, const char *origin, fleet_rank **added, mp_diag *diag)
{
	fleet_rank *r;

	*added = NULL;
	for (size_t i = 0; i < f->n; i++)
		if (f->ranks[i].rank == rank) {
			mp_warn(diag, "rank %ld named twice ('%s', then '%s'): the second passed over", rank,
				f->ranks[i].path != NULL ? f->ranks[i].path : f->ranks[i].origin, path != NULL ? path : origin);
			free(path);
			return MP_OK;
		}
	if (mp_array_grow((void **)&f->ranks, &f->cap, f->n + 1, sizeof *f->ranks) != MP_OK) {
		free(path);
		return mp_fail(diag, MP_E_NOMEM, "fleet: out of memory");
	}
	r = &f->ranks[f->n];
	*r = (fleet_rank){ .rank = rank, .path = path, .origin = strdup(origin) };
	if (r->origin == NULL) {
		free(path);
		return mp_fail(diag, MP_E_NOMEM, "fleet: out of memory");
	}
	f->n++;
	*added = r;
	return MP_OK;
}

/* The snapshot of a rank's directory among its sorted entries S: snapshot.pickle, snapshot.json, the first
   *.pickle, core, the first core.*; NULL when none. */
static const char *rank_snapshot(const struct names *s, const char *dir)
{
	static const char *const exact[] = { "snapshot.pickle", "snapshot.json" };

	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < s->n; i++)
			if (strcmp(s->v[i], exact[k]) == 0)
				return s->v[i];
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < s->n; i++) {
			const char *n = s->v[i];
			bool fits = pass == 0 ? has_suffix(n, ".pickle") || has_suffix(n, ".pkl")
				    : pass == 1 ? strcmp(n, "core") == 0
						: strncmp(n, "core.", 5) == 0;
			char *p;
			bool file;

			if (!fits || (p = join(dir, n)) == NULL)
				continue;
			file = is_file(p);
			free(p);
			if (file)
				return n;
		}
	return NULL;
}

/* The first OOM's explanation among S (the lowest N; its JSON before its text) and how many OOMs there are. */
static const char *rank_oom(const struct names *s, unsigned *count)
{
	const char *best = NULL;
	long best_n = -1, last = -1;
	bool best_json = false, json;

	*count = 0;
	for (size_t i = 0; i < s->n; i++) {
		long n = oom_number(s->v[i], &json);

		if (n < 0)
			continue;
		if (n != last)
			++*count; /* sorted by name: oom-1.json and oom-1.txt are neighbours */
		last = n;
		if (best == NULL || n < best_n || (n == best_n && json && !best_json)) {
			best = s->v[i];
			best_n = n;
			best_json = json;
		}
	}
	return best;
}

/* Rank RANK from directory DIR: its snapshot and OOM files. */
static mp_err add_rank_dir(mp_fleet *f, long rank, const char *dir, mp_diag *diag)
{
	struct names s;
	const char *snap, *oom;
	fleet_rank *r;
	char *path = NULL;
	unsigned nooms;
	mp_err err;

	if ((err = list_dir(dir, &s)) != MP_OK) {
		mp_warn(diag, "cannot read the directory '%s': %s", dir, strerror(errno));
		return err == MP_E_NOMEM ? mp_fail(diag, err, "fleet: out of memory") : MP_OK;
	}
	snap = rank_snapshot(&s, dir);
	oom = rank_oom(&s, &nooms);
	if (snap != NULL && (path = join(dir, snap)) == NULL)
		err = mp_fail(diag, MP_E_NOMEM, "fleet: out of memory");
	if (err == MP_OK)
		err = add_rank(f, rank, path, dir, &r, diag);
	if (err == MP_OK && r != NULL && oom != NULL) {
		r->nooms = nooms;
		if ((r->oom_path = join(dir, oom)) == NULL)
			err = mp_fail(diag, MP_E_NOMEM, "fleet: out of memory");
	}
	names_free(&s);
	return err;
}

/* The rank DIR's own name holds (its last component, trailing slashes passed over). */
static bool base_rank(const char *dir, long *rank)
{
	size_t end = strlen(dir), start;
	char name[256];

	while (end > 1 && dir[end - 1] == '/')
		end--;
	for (start = end; start > 0 && dir[start - 1] != '/'; start--)
		;
	snprintf(name, sizeof name, "%.*s", (int)(end - start), dir + start);
	return rank_number(name, rank);
}

/* Whether DIR is itself one rank's directory: a snapshot in it and no rank entries. */
static bool holds_snapshot(const struct names *s, const char *dir)
{
	return rank_snapshot(s, dir) != NULL || rank_oom(s, &(unsigned){ 0 }) != NULL;
}

/* The ranks of directory DIR: its rank-R/ subdirectories and rank files; or DIR as one rank (NEXT: the rank of
   a target without a number, counted on). */
static mp_err find_in_dir(mp_fleet *f, const char *dir, long *next, mp_diag *diag)
{
	struct names s;
	size_t before = f->n, named = 0;
	mp_err err;
	long rank;

	if ((err = list_dir(dir, &s)) != MP_OK) {
		mp_warn(diag, "cannot read the directory '%s': %s", dir, strerror(errno));
		return err == MP_E_NOMEM ? mp_fail(diag, err, "fleet: out of memory") : MP_OK;
	}
	for (size_t i = 0; i < s.n && err == MP_OK; i++) {
		char *path;
		fleet_rank *r;

		if (!rank_number(s.v[i], &rank))
			continue;
		if ((path = join(dir, s.v[i])) == NULL) {
			err = mp_fail(diag, MP_E_NOMEM, "fleet: out of memory");
		} else if (is_dir(path)) {
			named++;
			err = add_rank_dir(f, rank, path, diag);
			free(path);
		} else if (is_file(path) && (snapshot_name(s.v[i]) || strstr(s.v[i], "core") != NULL)) {
			named++;
			err = add_rank(f, rank, path, dir, &r, diag);
		} else {
			free(path);
		}
	}
	if (err == MP_OK && named == 0 && holds_snapshot(&s, dir))
		err = add_rank_dir(f, base_rank(dir, &rank) ? rank : (*next)++, dir, diag);
	else if (err == MP_OK && f->n == before && named == 0)
		mp_warn(diag, "'%s' holds no rank (rank-R/ directories, rank-R.pickle files or a snapshot)", dir);
	names_free(&s);
	return err;
}

static int cmp_rank(const void *pa, const void *pb)
{
	const fleet_rank *a = pa, *b = pb;

	return (a->rank > b->rank) - (a->rank < b->rank);
}

static mp_err fleet_new(mp_fleet **out)
{
	mp_fleet *f = calloc(1, sizeof *f);

	if ((*out = f) == NULL)
		return MP_E_NOMEM;
	for (int d = 0; d < FLEET_DIMS; d++)
		pthread_mutex_init(&f->keys[d].lock, NULL);
	mp_fleet_opts_init(&f->opts);
	return MP_OK;
}

/* The warnings of a search, passed on, the first kept: when no rank is found, it says why. */
struct first_warning {
	mp_diag *to;
	char line[256];
};

static void keep_first(void *ctx, const char *line)
{
	struct first_warning *w = ctx;

	if (w->line[0] == '\0')
		snprintf(w->line, sizeof w->line, "%s", line);
	mp_warn(w->to, "%s", line);
}

mp_err mp_fleet_find(const char *const *targets, size_t n, mp_fleet **out, mp_diag *diag)
{
	struct first_warning first = { .to = diag };
	mp_diag d = { .warn = keep_first, .warn_ctx = &first };
	mp_fleet *f;
	mp_err err = MP_OK;
	long next = 0;

	*out = NULL;
	if (fleet_new(&f) != MP_OK)
		return mp_fail(diag, MP_E_NOMEM, "fleet: out of memory");
	for (size_t i = 0; i < n && err == MP_OK; i++) {
		char *path;
		fleet_rank *r;

		if (is_dir(targets[i])) {
			err = find_in_dir(f, targets[i], &next, &d);
		} else if (access(targets[i], F_OK) != 0) {
			mp_warn(&d, "cannot read '%s': %s", targets[i], strerror(errno));
		} else if ((path = strdup(targets[i])) == NULL) {
			err = mp_fail(&d, MP_E_NOMEM, "fleet: out of memory");
		} else {
			err = add_rank(f, next++, path, targets[i], &r, &d);
		}
	}
	if (err == MP_OK && f->n == 0)
		err = mp_fail(&d, MP_E_NOTFOUND, "no rank found%s%s", first.line[0] != '\0' ? ": " : "", first.line);
	if (err != MP_OK) {
		mp_fail(diag, err, "%s", d.msg);
		mp_fleet_free(f);
		return err;
	}
	mp_sort(f->ranks, f->n, sizeof *f->ranks, cmp_rank);
	*out = f;
	return MP_OK;
}

size_t mp_fleet_nranks(const mp_fleet *f)
{
	return f->n;
}

void mp_fleet_free(mp_fleet *f)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < f->n; i++) {
		fleet_rank *r = &f->ranks[i];

		free(r->path);
		free(r->origin);
		free(r->oom_path);
		free(r->oom);
		free(r->error);
		for (int d = 0; d < FLEET_DIMS; d++)
			free(r->cells[d]);
	}
	free(f->ranks);
	for (int d = 0; d < FLEET_DIMS; d++) {
		for (size_t k = 0; k < f->keys[d].n; k++)
			free(f->keys[d].text[k]);
		free(f->keys[d].text);
		mp_table_free(&f->keys[d].index);
		pthread_mutex_destroy(&f->keys[d].lock);
		free(f->key_median[d]);
	}
	free(f);
}

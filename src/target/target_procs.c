/* target_procs.c - a job's processes from /proc (mp_procs.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_procs.h"

/* PID's parent from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold blanks and parentheses: the
   fields follow its last ')'); -1 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], line[1024], *close;
	FILE *f;
	long ppid;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	close = fgets(line, sizeof line, f) != NULL ? strrchr(line, ')') : NULL;
	fclose(f);
	if (close == NULL || sscanf(close + 1, " %*c %ld", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

struct proc {
	pid_t pid, ppid;
};

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;

	return (x > y) - (x < y);
}

/* Every process of this machine with its parent, sorted by pid. */
static mp_err all_procs(struct proc **out, size_t *n, mp_diag *diag)
{
	struct proc *list = NULL;
	size_t cap = 0, count = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");
	mp_err err = MP_OK;

	if (d == NULL)
		return mp_fail(diag, MP_E_ERRNO, "cannot list /proc");
	while (err == MP_OK && (e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		pid_t ppid;

		if (*end != '\0' || pid <= 0 || (ppid = parent_of((pid_t)pid)) < 0)
			continue; /* not a process, or one that ended */
		if (count == MP_PROCS_MAX)
			err = mp_fail(diag, MP_E_LIMIT, "more than %d processes", MP_PROCS_MAX);
		else if ((err = mp_array_grow((void **)&list, &cap, count + 1, sizeof *list)) == MP_OK)
			list[count++] = (struct proc){ (pid_t)pid, ppid };
	}
	closedir(d);
	if (err != MP_OK) {
		free(list);
		return err;
	}
	qsort(list, count, sizeof *list, by_pid);
	*out = list;
	*n = count;
	return MP_OK;
}

mp_err mp_procs_below(pid_t root, pid_t **out, size_t *n, mp_diag *diag)
{
	struct proc *procs = NULL;
	size_t nprocs = 0, found = 0, cap = 0;
	pid_t *below = NULL;
	mp_err err;

	*out = NULL;
	*n = 0;
	if (parent_of(root) < 0)
		return mp_fail(diag, MP_E_NOTFOUND, "no process with pid %d", (int)root);
	if ((err = all_procs(&procs, &nprocs, diag)) != MP_OK)
		return err;
	if ((err = mp_array_grow((void **)&below, &cap, 1, sizeof *below)) == MP_OK)
		below[found++] = root;
	/* a process is below ROOT when its parent is: pass over the list until a pass adds none (pids are not
	   ordered by ancestry once they wrap) */
	for (bool added = true; err == MP_OK && added;) {
		added = false;
		for (size_t i = 0; err == MP_OK && i < nprocs; i++) {
			bool parent_in = false, in = false;

			for (size_t j = 0; j < found && !(parent_in && in); j++) {
				parent_in = parent_in || below[j] == procs[i].ppid;
				in = in || below[j] == procs[i].pid;
			}
			if (!parent_in || in)
				continue;
			if ((err = mp_array_grow((void **)&below, &cap, found + 1, sizeof *below)) == MP_OK) {
				below[found++] = procs[i].pid;
				added = true;
			}
		}
	}
	free(procs);
	if (err != MP_OK) {
		free(below);
		return err;
	}
	*out = below;
	*n = found;
	return MP_OK;
}

bool mp_proc_getenv(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64], entry[4096];
	size_t len = strlen(name), used = 0;
	bool found = false;
	FILE *f;
	int c;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	if (size == 0 || (f = fopen(path, "r")) == NULL)
		return false;
	/* NUL-separated NAME=VALUE entries; an entry longer than ENTRY is passed over */
	while (!found && (c = fgetc(f)) != EOF) {
		if (c != '\0') {
			if (used < sizeof entry - 1)
				entry[used++] = (char)c;
			continue;
		}
		entry[used] = '\0';
		if (used > len && strncmp(entry, name, len) == 0 && entry[len] == '=') {
			snprintf(buf, size, "%s", entry + len + 1);
			found = true;
		}
		used = 0;
	}
	fclose(f);
	return found;
}

bool mp_proc_maps(pid_t pid, const char *prefix)
{
	char path[64], line[4096];
	size_t len = strlen(prefix);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		char *base = strrchr(line, '/');

		found = base != NULL && strncmp(base + 1, prefix, len) == 0;
	}
	fclose(f);
	return found;
}

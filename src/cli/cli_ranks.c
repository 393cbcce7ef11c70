/* cli_ranks.c - `memprof snapshot --pid PID --ranks -o DIR`: a distributed job read from its launcher's process
   (torchrun's agent, an srun step, a shell). Every process below PID that has mapped PyTorch's CUDA allocator is
   a rank, named by RANK (else LOCAL_RANK) in its environment; all of them are held still first, so that the
   snapshots are of one moment, then each is saved into DIR/rank-R/ as `snapshot save` saves one process, and
   DIR/ranks-HOST.json says which process each rank was. The nodes of a job (an srun step, torchrun's nodes) may
   each write their ranks into one shared DIR. `memprof fleet DIR` reads the directory. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mp_file.h"
#include "mp_procs.h"

/* The library that makes a process one of the job's ranks: PyTorch's CUDA caching allocator. */
#define ALLOCATOR_LIBRARY "libc10_cuda.so"

/* Where a rank's number is in its environment, in order: torchrun's (and torch.distributed's env://), then
   Slurm's task (srun without torchrun), Open MPI's and PMI's. */
static const char *const rank_variables[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK" };
static const char *const local_rank_variables[] = { "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK" };

/* The first of VARS (N) that PID's environment sets to a whole number, into BUF; false when none does. */
static bool number_from_env(pid_t pid, const char *const *vars, size_t n, char *buf, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (mp_proc_getenv(pid, vars[i], buf, size) && buf[0] != '\0' && strspn(buf, "0123456789") == strlen(buf))
			return true;
	buf[0] = '\0';
	return false;
}

typedef struct rank {
	cli_rank is;
	mp_target *hold; /* held still until every rank is saved (NULL with --no-stop) */
	int status;      /* the save's exit status */
} rank;

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

mp_err cli_find_ranks(long launcher, cli_rank **out, size_t *n, mp_diag *diag)
{
	pid_t *pids;
	size_t npids;
	cli_rank *list;
	mp_err err;

	*out = NULL;
	*n = 0;
	if ((err = mp_procs_below((pid_t)launcher, &pids, &npids, diag)) != MP_OK)
		return err;
	if ((list = calloc(npids, sizeof *list)) == NULL) {
		free(pids);
		return MP_E_NOMEM;
	}
	for (size_t i = 0; i < npids; i++) {
		cli_rank *r = &list[*n];

		if (!mp_proc_maps(pids[i], ALLOCATOR_LIBRARY))
			continue;
		*r = (cli_rank){ .pid = pids[i] };
		r->numbered = number_from_env(r->pid, rank_variables, sizeof rank_variables / sizeof rank_variables[0],
					      r->name, sizeof r->name);
		if (!r->numbered && r->pid == (pid_t)launcher)
			continue; /* torchrun's agent imported torch too: the launcher is a rank only when numbered */
		(void)number_from_env(r->pid, local_rank_variables,
				      sizeof local_rank_variables / sizeof local_rank_variables[0], r->local_rank,
				      sizeof r->local_rank);
		if (!r->numbered)
			snprintf(r->name, sizeof r->name, "pid%d", (int)r->pid);
		for (size_t j = 0; j < *n; j++) /* two processes of one rank (a restart's leftover): both kept */
			if (strcmp(list[j].name, r->name) == 0)
				snprintf(r->name + strlen(r->name), sizeof r->name - strlen(r->name), ".pid%d", (int)r->pid);
		++*n;
	}
	free(pids);
	/* where some processes have a rank number, those without are not ranks (a helper process of the job) */
	size_t kept = 0;
	bool numbered = false;

	for (size_t i = 0; i < *n; i++)
		numbered = numbered || list[i].numbered;
	for (size_t i = 0; i < *n; i++)
		if (list[i].numbered || !numbered)
			list[kept++] = list[i];
	*n = kept;
	*out = list;
	return MP_OK;
}

/* The ranks below LAUNCHER into *OUT (N); an error line when there is none. */
static int find_ranks(long launcher, rank **out, size_t *n)
{
	mp_diag diag = { .msg = "" };
	cli_rank *found;
	size_t nfound;

	*out = NULL;
	*n = 0;
	if (cli_find_ranks(launcher, &found, &nfound, &diag) != MP_OK) {
		cli_error("snapshot --ranks: %s", diag.msg[0] != '\0' ? diag.msg : "out of memory");
		return MP_CMD_BAD;
	}
	if (nfound == 0 || (*out = calloc(nfound, sizeof **out)) == NULL) {
		free(found);
		if (nfound == 0)
			cli_error("snapshot --ranks: no process below pid %ld has PyTorch's CUDA allocator (%s) mapped",
				  launcher, ALLOCATOR_LIBRARY);
		else
			cli_error("snapshot --ranks: out of memory");
		return MP_CMD_BAD;
	}
	for (size_t i = 0; i < nfound; i++)
		(*out)[i].is = found[i];
	*n = nfound;
	free(found);
	return MP_CMD_OK;
}

/* Hold every rank still (all first: the snapshots are then of one moment). */
static int hold_all(rank *ranks, size_t n, const char *sysroot)
{
	mp_target_opts opts = { .sysroot = sysroot, .stop = true };

	for (size_t i = 0; i < n; i++) {
		mp_diag diag = { .msg = "" };

		if (mp_target_open_pid(ranks[i].is.pid, &opts, &ranks[i].hold, &diag) != MP_OK) {
			cli_error("snapshot --ranks: rank %s (pid %d): %s", ranks[i].is.name, (int)ranks[i].is.pid, diag.msg);
			return MP_CMD_BAD;
		}
	}
	return MP_CMD_OK;
}

static void let_go(rank *ranks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		mp_target_close(ranks[i].hold);
		ranks[i].hold = NULL;
	}
}

/* DIR/ranks-HOST.json: the launcher, this machine, and each rank's process and file (one a node: the nodes of a
   job may write into one shared directory). */
static void write_manifest(const char *dir, long launcher, const rank *ranks, size_t n, const char *file,
			   double held)
{
	char path[4200], host[256] = "";
	cJSON *root = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(root, "ranks");
	char *text;
	FILE *f;

	(void)gethostname(host, sizeof host - 1);
	cJSON_AddNumberToObject(root, "launcher", (double)launcher);
	cJSON_AddStringToObject(root, "host", host);
	cJSON_AddNumberToObject(root, "held_seconds", held);
	for (size_t i = 0; i < n; i++) {
		cJSON *r = cJSON_CreateObject();
		char rel[300];

		snprintf(rel, sizeof rel, "rank-%s/%s", ranks[i].is.name, file);
		cJSON_AddStringToObject(r, "rank", ranks[i].is.name);
		cJSON_AddStringToObject(r, "local_rank", ranks[i].is.local_rank);
		cJSON_AddNumberToObject(r, "pid", (double)ranks[i].is.pid);
		cJSON_AddStringToObject(r, "snapshot", rel);
		cJSON_AddBoolToObject(r, "saved", ranks[i].status == MP_CMD_OK);
		cJSON_AddItemToArray(list, r);
	}
	snprintf(path, sizeof path, "%s/ranks-%s.json", dir, host[0] != '\0' ? host : "localhost");
	if ((text = cJSON_Print(root)) != NULL && (f = fopen(path, "w")) != NULL) {
		fprintf(f, "%s\n", text);
		if (fclose(f) != 0)
			cli_error("snapshot --ranks: cannot write %s", path);
	}
	free(text);
	cJSON_Delete(root);
}

/* The words of one rank's `snapshot save`: WORDS without --pid, --ranks, --stop and --no-stop (given again
   here), then the rank's --pid, --no-stop when memprof holds it already, and its file. */
static int save_words(char **words, int n, const rank *r, bool held, char *pid, size_t pid_size, char *path,
		      char **out)
{
	int m = 0;

	for (int i = 0; i < n; i++) {
		if (strcmp(words[i], "--pid") == 0) {
			i++;
			continue;
		}
		if (strncmp(words[i], "--pid=", 6) == 0 || strcmp(words[i], "--ranks") == 0 ||
		    strcmp(words[i], "--stop") == 0 || strcmp(words[i], "--no-stop") == 0)
			continue;
		out[m++] = words[i];
	}
	snprintf(pid, pid_size, "%d", (int)r->is.pid);
	out[m++] = "--pid";
	out[m++] = pid;
	if (held)
		out[m++] = "--no-stop"; /* memprof is its tracer already: read as it holds it */
	out[m++] = path;
	out[m] = NULL;
	return m;
}

int cli_snapshot_ranks(int n, char **words, const char *dir, int (*save)(int argc, char **argv))
{
	const mp_command *cmd = &mp_cmd_snapshot_save;
	mp_command_args a = { 0 };
	mp_command_ctx c;
	const char *format, *file;
	struct timespec t0;
	char **argv;
	rank *ranks;
	size_t nranks, saved = 0;
	long launcher;
	bool hold;
	double held = 0;
	int rc;

	cli_ctx_init(&c, &a);
	if (mp_command_parse(&c, cmd, cli_target_options, n, words, &a) != MP_CMD_OK) {
		cli_error("%s", c.error);
		return MP_CMD_BAD;
	}
	if (!mp_parse_long(mp_arg(&a, MP_O_PID) != NULL ? mp_arg(&a, MP_O_PID) : "", &launcher) || launcher <= 0 ||
	    a.npos != 0) {
		cli_error("snapshot --ranks: give the launcher as --pid PID and the directory as -o DIR, no target");
		return MP_CMD_BAD;
	}
	format = mp_arg(&a, MP_O_FORMAT);
	file = format != NULL && strcmp(format, "json") == 0 ? "snapshot.json" : "snapshot.pickle";
	hold = !mp_arg_given(&a, MP_O_NO_STOP);
	mp_diag diag = { .msg = "" };

	if (mp_file_mkdirs(dir, &diag) != MP_OK) {
		cli_error("snapshot --ranks: %s", diag.msg);
		return MP_CMD_BAD;
	}
	if ((rc = find_ranks(launcher, &ranks, &nranks)) != MP_CMD_OK)
		return rc;
	if ((argv = calloc((size_t)n + 6, sizeof *argv)) == NULL) {
		free(ranks);
		cli_error("snapshot --ranks: out of memory");
		return MP_CMD_BAD;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = hold ? hold_all(ranks, nranks, mp_arg(&a, MP_O_SYSROOT)) : MP_CMD_OK;
	for (size_t i = 0; rc == MP_CMD_OK && i < nranks; i++) {
		char sub[4200], path[4300], pid[24];

		snprintf(sub, sizeof sub, "%s/rank-%s", dir, ranks[i].is.name);
		snprintf(path, sizeof path, "%s/%s", sub, file);
		diag.msg[0] = '\0';
		if (mp_file_mkdirs(sub, &diag) != MP_OK) {
			cli_error("snapshot --ranks: %s", diag.msg);
			ranks[i].status = MP_CMD_BAD;
			continue;
		}
		int m = save_words(words, n, &ranks[i], hold, pid, sizeof pid, path, argv);

		if ((ranks[i].status = save(m, argv)) == MP_CMD_OK)
			saved++;
	}
	held = seconds_since(&t0);
	let_go(ranks, nranks);
	if (rc == MP_CMD_OK) {
		write_manifest(dir, launcher, ranks, nranks, file, held);
		printf("memprof: %zu of %zu ranks below pid %ld saved in %s/rank-*/%s (%s %.3f s)\n", saved, nranks,
		       launcher, dir, file, hold ? "held still together for" : "read running, in", held);
		rc = saved == nranks ? MP_CMD_OK : MP_CMD_BAD;
	}
	free(argv);
	free(ranks);
	return rc;
}

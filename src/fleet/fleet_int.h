/* fleet_int.h - what the fleet's files share (private to src/fleet): the ranks, their figures and the keys
   of their tables. */
#ifndef MEMPROF_FLEET_INT_H
#define MEMPROF_FLEET_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_fleet.h"
#include "mp_table.h"

/* The figures of a rank that outliers are judged by. */
enum fleet_metric { FLEET_RESERVED, FLEET_ALLOCATED, FLEET_ACTIVE, FLEET_FREE, FLEET_BLOCKS, FLEET_METRICS };

/* The tables of a rank: bytes by category, by module and category (FLEET_SEP between them), by call site. */
enum fleet_dim { FLEET_CATEGORY, FLEET_MODULE, FLEET_SITE, FLEET_DIMS };

/* Between a module and its category in a FLEET_MODULE key. */
#define FLEET_SEP '\x1f'

/* One row of a rank's table: the key's id in the fleet's keys of that table, and its bytes. */
typedef struct fleet_cell {
	uint32_t key;
	int64_t bytes;
} fleet_cell;

typedef struct fleet_rank {
	long rank;
	char *path;     /* the file its snapshot is read from; NULL when none was found */
	char *origin;   /* what named it (a directory, a file), for messages */
	char *oom_path; /* its first OOM's explanation (oom-N.json or oom-N.txt), or NULL */
	unsigned nooms; /* how many OOMs its directory holds */
	char *oom;      /* what the explanation says, lines ended by '\n'; NULL when there is none or it is unread */
	bool read;
	char *error;    /* why it was not read (or why its OOM explanation was not) */
	bool annotated; /* its blocks name their owners ('owner', 'category': snapshot save --owners) */
	int64_t metric[FLEET_METRICS];
	int64_t largest_free; /* the largest inactive block */
	size_t segments;
	fleet_cell *cells[FLEET_DIMS]; /* by key id, ascending */
	size_t ncells[FLEET_DIMS];
} fleet_rank;

/* The keys of one table over every rank, interned: ids in the order they came. Workers add under LOCK. */
typedef struct fleet_keys {
	char **text;
	size_t n, cap;
	mp_table index;
	pthread_mutex_t lock;
} fleet_keys;

struct mp_fleet {
	fleet_rank *ranks; /* ascending by rank */
	size_t n, cap;
	fleet_keys keys[FLEET_DIMS];
	mp_fleet_opts opts; /* as read */
	size_t nread;
	/* the statistics over the ranks read */
	double median[FLEET_METRICS], mad[FLEET_METRICS];
	double *key_median[FLEET_DIMS]; /* each key's median over the ranks read (a rank without it: 0) */
};

/* The figures' names ("reserved", ...) and what a rank does with them in a sentence ("reserves %s"). */
extern const char *const fleet_metric_names[FLEET_METRICS];
extern const char *const fleet_metric_verbs[FLEET_METRICS];

/* Intern TEXT (LEN bytes) among K (the caller holds K's lock) into *ID. MP_E_NOMEM. */
mp_err fleet_key_intern(fleet_keys *k, const char *text, size_t len, uint32_t *id) MP_WUR;

/* Reduce SNAP, rank R's snapshot, to R's figures and tables by F's options (keys interned in F). MP_E_NOMEM
   with DIAG. */
mp_err fleet_reduce(mp_fleet *f, fleet_rank *r, mp_snapshot *snap, mp_diag *diag) MP_WUR;

/* What R's OOM explanation (R->oom_path) says, in a few lines, into R->oom; a file that cannot be read leaves
   R->oom NULL and says why in R->error when that is free. */
void fleet_oom_read(fleet_rank *r);

/* The statistics of F's ranks read: medians and MADs of the figures, each key's median. MP_E_NOMEM. */
mp_err fleet_stats(mp_fleet *f) MP_WUR;

/* How far rank R's figure M lies from the median, relative to how far it may (above 1: an outlier). */
double fleet_deviation(const mp_fleet *f, const fleet_rank *r, enum fleet_metric m);

/* R's bytes under key KEY of table D (0 when it has none). */
int64_t fleet_cell_bytes(const fleet_rank *r, enum fleet_dim d, uint32_t key);

/* A difference from the median: a key of a table, the rank's bytes, the median's. */
typedef struct fleet_diff {
	uint32_t key;
	int64_t bytes;
	double median;
} fleet_diff;

/* The keys of table D where rank R differs from the median over the ranks, the largest differences first, at
   most TOP, into *OUT (malloc'd; free() it) and *N. MP_E_NOMEM. */
mp_err fleet_diffs(const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, size_t top, fleet_diff **out,
		   size_t *n) MP_WUR;

/* The outlier ranks of F, most deviant first (fleet_deviation's largest over the figures), into *OUT (malloc'd)
   and *N. MP_E_NOMEM. */
mp_err fleet_outliers(const mp_fleet *f, const fleet_rank ***out, size_t *n) MP_WUR;

/* Whether table D has keys that say more than "unknown": a FLEET_MODULE key not in parentheses. */
bool fleet_dim_informative(const mp_fleet *f, enum fleet_dim d);

/* The one line that says why R stands out: its largest differences by module and by call site. */
void fleet_why(const mp_fleet *f, const fleet_rank *r, enum mp_units u, mp_out *out);

/* A difference of BYTES as "+450.0MiB" / "-20.0MiB" in units U. */
void fleet_put_delta(mp_out *out, double bytes, enum mp_units u);

/* Key KEY of table D as a person reads it (a module key: "model.encoder (parameter)"). */
void fleet_put_key(mp_out *out, const mp_fleet *f, enum fleet_dim d, uint32_t key);

/* The formats: JSON and HTML (fleet_json.c, fleet_html.c); plain and rst are fleet_report.c's. */
void fleet_report_json(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out);
void fleet_report_html(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out);

/* The category columns of F in their order (the known ones first), into *OUT (malloc'd) and *N. MP_E_NOMEM. */
mp_err fleet_category_order(const mp_fleet *f, uint32_t **out, size_t *n) MP_WUR;

#endif

/* mp_fleet.h - the memory of a distributed job, rank by rank: the ranks found in directories and files, each
   rank's snapshot reduced to its figures on worker threads (bytes reserved, allocated, active, free; bytes by
   category, by module, by call site), the ranks that stand out by robust statistics, and why (FLEET.md). */
#ifndef MEMPROF_FLEET_H
#define MEMPROF_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_snapshot.h"

typedef struct mp_fleet mp_fleet;

/* Reads the rank file PATH that is not a snapshot pickle or JSON (an ELF file: a core dump) into *OUT, its frames
   decoded when FRAMES; *OWNED: the fleet frees it. Called on one thread at a time. MP_OK, or an error with DIAG's
   line saying why. */
typedef mp_err (*mp_fleet_load_fn)(void *ctx, const char *path, bool frames, mp_snapshot **out, bool *owned,
				   mp_diag *diag);

/* How the ranks are read. */
typedef struct mp_fleet_opts {
	int64_t device;   /* only this device's segments; -1: every device */
	int depth;        /* module names kept below a module tree's root (model.encoder: 1) */
	bool frames;      /* read the frames: call sites, and categories from frames where blocks name none */
	unsigned threads; /* worker threads; 0: MEMPROF_THREADS, else one per online processor (at most 64) */
	mp_fleet_load_fn load_other; /* for ELF files (cores); NULL: they are refused with a warning */
	void *load_ctx;
} mp_fleet_opts;

/* Defaults: every device, depth 1, frames read, threads chosen. This function can't fail. */
void mp_fleet_opts_init(mp_fleet_opts *o);

/* The ranks TARGETS (N paths) name, into *OUT: a directory of rank-R/ subdirectories (rank R: the first of
   snapshot.pickle, snapshot.json, *.pickle, core, core.* in it, and its oom-N.json or oom-N.txt), a directory
   of files whose names hold "rank" and digits (rank-3.pickle: rank 3), or a file (the files given one by one
   are ranks 0, 1, ... in their order). What names no rank (a missing path, an empty directory, a rank named
   twice) is a warning through DIAG, not an error. MP_E_NOMEM; MP_E_NOTFOUND when no rank was found (DIAG says
   so). Free *OUT with mp_fleet_free. */
mp_err mp_fleet_find(const char *const *targets, size_t n, mp_fleet **out, mp_diag *diag) MP_WUR;

/* The number of ranks F holds. This function can't fail. */
size_t mp_fleet_nranks(const mp_fleet *f);

/* Read every rank of F by O: its snapshot loaded, reduced to its figures and freed, on O's worker threads (so
   memory holds one snapshot per thread), its OOM explanation summed up. A rank that cannot be read is a
   warning through DIAG (after every rank was read, in rank order) and stays in F without figures. MP_E_NOMEM;
   MP_E_NOTFOUND when no rank could be read (DIAG says why). Then the statistics over the ranks read. */
mp_err mp_fleet_read(mp_fleet *f, const mp_fleet_opts *o, mp_diag *diag) MP_WUR;

/* The ranks of F that were read. This function can't fail. */
size_t mp_fleet_nread(const mp_fleet *f);

enum mp_fleet_format { MP_FLEET_PLAIN, MP_FLEET_RST, MP_FLEET_JSON, MP_FLEET_HTML };

/* Read "plain", "rst", "json" or "html" (any case). False for anything else. */
bool mp_fleet_format_parse(const char *text, enum mp_fleet_format *out);

typedef struct mp_fleet_report_opts {
	enum mp_fleet_format format;
	enum mp_units units; /* of the tables (JSON counts bytes) */
	size_t top;          /* rows of each difference table, call sites per rank in JSON */
} mp_fleet_report_opts;

/* The report of F (read by mp_fleet_read) into OUT: every rank's figures side by side, the outlier ranks
   with their figures against the median, each outlier's differences from the median rank by module and by
   call site and the one line that says why, the bytes by category of every rank, and the OOMs. OUT's sticky
   error. */
mp_err mp_fleet_report(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out) MP_WUR;

/* Free F. F may be NULL. */
void mp_fleet_free(mp_fleet *f);

/* ---- the robust statistics the outliers are judged by */

/* The median of the N values at V (reordered); 0 for none. This function can't fail. */
double mp_fleet_median(double *v, size_t n);

/* The median absolute deviation from MEDIAN of the N values at V (overwritten). This function can't fail. */
double mp_fleet_mad(double *v, size_t n, double median);

/* How far X may lie from MEDIAN before it is an outlier: max(3.5 x 1.4826 x MAD, FLOOR, 5 % of |MEDIAN|).
   This function can't fail. */
double mp_fleet_threshold(double median, double mad, double floor);

#endif

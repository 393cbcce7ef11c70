/* mp_owners_report.h - the owners as tables (plain, reStructuredText) or JSON: per device, bytes per category
   for each module (MemTracker's breakdown), per category, or tensor by tensor. */
#ifndef MEMPROF_OWNERS_REPORT_H
#define MEMPROF_OWNERS_REPORT_H

#include "mp_format.h"
#include "mp_out.h"
#include "mp_owners.h"
#include "mp_snapshot.h"

enum mp_owners_by { MP_OWNERS_BY_MODULE, MP_OWNERS_BY_CATEGORY, MP_OWNERS_BY_TENSOR };
enum mp_owners_format { MP_OWNERS_PLAIN, MP_OWNERS_RST, MP_OWNERS_JSON };

typedef struct mp_owners_report_opts {
	enum mp_owners_by by;
	enum mp_owners_format format;
	int depth;            /* module rows: the root and at most DEPTH names below it; -1: every module */
	long device;          /* -1: every device */
	enum mp_units units;
} mp_owners_report_opts;

/* Write the report of O (SNAP: the snapshot O's blocks index) to OUT. Every device's rows add up to its
   active bytes: a block's whole size goes to its owner's row. Tensors on the CPU are listed under "cpu" with
   their storages' sizes. */
void mp_owners_report(const mp_owners *o, const mp_snapshot *snap, const mp_owners_report_opts *opts, mp_out *out);

/* Who owns device memory at ADDR, for `block`: the tensors whose storage holds it (name, category, dtype,
   shape, the storage's extent), else the owner of the active block it lies in, else that no Python tensor
   reaches it. Nothing when ADDR is in no active block and no storage. */
void mp_owners_describe_addr(const mp_owners *o, const mp_snapshot *snap, uint64_t addr, enum mp_units u, mp_out *out);

/* Write O into SNAP (the snapshot O's blocks index): each owned block gets 'owner' (its tensor's name) and,
   for a parameter, buffer, gradient, optimizer state or activation, 'category'. MP_E_NOMEM. */
mp_err mp_owners_annotate(const mp_owners *o, mp_snapshot *snap, mp_diag *diag) MP_WUR;

#endif

/* mp_snapshot_stats.h - the per-device statistics a snapshot file may carry ('device_stats',
   which memprof's own exports and the test bed's ground truth add to PyTorch's keys). */
#ifndef MEMPROF_SNAPSHOT_STATS_H
#define MEMPROF_SNAPSHOT_STATS_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_memstats.h"
#include "mp_snapshot.h"

/* The value of top-level key NAME that memprof's model does not know (MP_ABSENT if none). */
mp_val mp_snapshot_top_extra(const mp_snapshot *snap, const char *name);

/* Device DEVICE's memory_stats() from SNAP's 'device_stats' (a list, per device, of dicts from
   key to int). *NDEVICES gets the list's length. OUT->v is malloc'd (free it); its keys point
   into SNAP's heap. MP_E_NOTFOUND when SNAP has no such key or device, MP_E_TYPE (with DIAG)
   when it is not shaped so. */
mp_err mp_snapshot_device_stats(const mp_snapshot *snap, size_t device, mp_memstats *out, size_t *ndevices,
				mp_diag *diag) MP_WUR;

#endif

/* mp_snapshot_walk.h - a walk of the allocator's memory as the snapshot PyTorch would return. */
#ifndef MEMPROF_SNAPSHOT_WALK_H
#define MEMPROF_SNAPSHOT_WALK_H

#include "mp_err.h"
#include "mp_snapshot.h"
#include "mp_walk.h"

enum mp_snapshot_walk_flags {
	/* Add a top-level 'device_stats' key: per device, the flattened memory_stats() dict. PyTorch's
	   snapshot has no such key; _memory_viz.py and the memory_viz page ignore it. */
	MP_SW_DEVICE_STATS = 1u << 0,
};

/* Build the snapshot of W: segments in device then address order, blocks with their states,
   device_traces per device oldest first, allocator_settings when they were readable, and
   external_annotations empty. Frames are empty lists (`frames` of trace entries appear, empty,
   where the entry had a context). */
mp_err mp_snapshot_from_walk(const mp_walk *w, unsigned flags, mp_snapshot **out, mp_diag *diag) MP_WUR;

#endif

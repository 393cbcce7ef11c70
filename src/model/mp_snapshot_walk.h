/* mp_snapshot_walk.h - a walk of the allocator's memory as the snapshot PyTorch would return. */
#ifndef MEMPROF_SNAPSHOT_WALK_H
#define MEMPROF_SNAPSHOT_WALK_H

#include "mp_err.h"
#include "mp_snapshot.h"
#include "mp_target.h"
#include "mp_walk.h"

enum mp_snapshot_walk_flags {
	/* Add a top-level 'device_stats' key: per device, the flattened memory_stats() dict. PyTorch's
	   snapshot has no such key; _memory_viz.py and the memory_viz page ignore it. */
	MP_SW_DEVICE_STATS = 1u << 0,
	/* Decode no allocation context: every frames list is empty (--no-frames; commands that show no
	   frames, such as segsum, ask for it too). */
	MP_SW_NO_FRAMES = 1u << 1,
};

/* Build the snapshot of W, walked on target T: segments in device then address order, blocks with their
   states, device_traces per device oldest first, allocator_settings when they were readable, and
   external_annotations empty. Frames are decoded from T's allocation contexts (src/context): a block's,
   a segment's and a trace entry's as _snapshot() gives them, entries of equal contexts sharing one list;
   what cannot be decoded is an empty list and a warning in DIAG. T NULL or MP_SW_NO_FRAMES: every
   frames list is empty (`frames` of trace entries still appear where the entry had a context). */
mp_err mp_snapshot_from_walk(const mp_walk *w, mp_target *t, unsigned flags, mp_snapshot **out,
			     mp_diag *diag) MP_WUR;

#endif

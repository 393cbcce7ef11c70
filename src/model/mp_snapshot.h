/* mp_snapshot.h - the snapshot model: what torch.cuda.memory._snapshot() returns, typed. */
#ifndef MEMPROF_SNAPSHOT_H
#define MEMPROF_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_value.h"

/* Every dict-shaped record keeps:
   - PRESENT: a bit per known key (MP_F_*) saying whether the key was there;
   - SHAPE: a tuple of its keys in their original order (so output keeps the
     order PyTorch wrote, which repr() in `trace` and round trips depend on);
   - EXTRAS: a tuple with the values of the keys memprof does not know, in
     SHAPE order (MP_ABSENT when there are none).
   Known values of Python types other than int are kept as handles into the
   snapshot's heap: strings are interned there and frame lists are hash-consed,
   so equal frames share one handle. */

/* Known keys of each record, as bits of PRESENT. */
enum mp_field {
	/* segment */
	MP_F_SEG_DEVICE = 1u << 0,
	MP_F_SEG_ADDRESS = 1u << 1,
	MP_F_SEG_TOTAL_SIZE = 1u << 2,
	MP_F_SEG_ALLOCATED_SIZE = 1u << 3,
	MP_F_SEG_ACTIVE_SIZE = 1u << 4,
	MP_F_SEG_REQUESTED_SIZE = 1u << 5,
	MP_F_SEG_STREAM = 1u << 6,
	MP_F_SEG_SEGMENT_TYPE = 1u << 7,
	MP_F_SEG_SEGMENT_POOL_ID = 1u << 8,
	MP_F_SEG_IS_EXPANDABLE = 1u << 9,
	MP_F_SEG_FRAMES = 1u << 10,
	MP_F_SEG_BLOCKS = 1u << 11,
	/* block */
	MP_F_BLK_ADDRESS = 1u << 0,
	MP_F_BLK_SIZE = 1u << 1,
	MP_F_BLK_REQUESTED_SIZE = 1u << 2,
	MP_F_BLK_STATE = 1u << 3,
	MP_F_BLK_FRAMES = 1u << 4,
	MP_F_BLK_HISTORY = 1u << 5,
	/* trace entry */
	MP_F_TR_ACTION = 1u << 0,
	MP_F_TR_ADDR = 1u << 1,        /* 'addr' */
	MP_F_TR_DEVICE_FREE = 1u << 2, /* 'device_free' (oom entries), stored in addr */
	MP_F_TR_SIZE = 1u << 3,
	MP_F_TR_STREAM = 1u << 4,
	MP_F_TR_TIME_US = 1u << 5,
	MP_F_TR_FRAMES = 1u << 6,
	MP_F_TR_COMPILE_CONTEXT = 1u << 7,
	MP_F_TR_USER_METADATA = 1u << 8,
	/* top level */
	MP_F_TOP_SEGMENTS = 1u << 0,
	MP_F_TOP_DEVICE_TRACES = 1u << 1,
	MP_F_TOP_ALLOCATOR_SETTINGS = 1u << 2,
};

typedef struct mp_block {
	int64_t address;
	int64_t size;
	int64_t requested_size;
	mp_val state;   /* str: 'active_allocated', 'active_pending_free', 'inactive', ... */
	mp_val frames;  /* list of frame dicts */
	mp_val history; /* legacy (2.0) list of {'addr', 'real_size', 'frames'} dicts */
	mp_val shape;
	mp_val extras;
	uint32_t present;
} mp_block;

typedef struct mp_segment {
	int64_t device;
	int64_t address;
	int64_t total_size;
	int64_t allocated_size;
	int64_t active_size;
	int64_t requested_size;
	int64_t stream;
	mp_val segment_type;    /* str 'large' / 'small' */
	mp_val segment_pool_id; /* tuple (first, second) */
	mp_val is_expandable;   /* bool */
	mp_val frames;
	size_t first_block;     /* index into mp_snapshot.blocks */
	size_t nblocks;
	mp_val shape;
	mp_val extras;
	uint32_t present;
} mp_segment;

typedef struct mp_trace_entry {
	mp_val action; /* str: 'alloc', 'free_requested', ... */
	int64_t addr;  /* or device_free for 'oom' entries (see present) */
	int64_t size;
	int64_t stream;
	int64_t time_us;
	mp_val frames;
	mp_val compile_context;
	mp_val user_metadata;
	mp_val shape;
	mp_val extras;
	uint32_t present;
} mp_trace_entry;

/* One device's list in device_traces: entries [first, first + n) of mp_snapshot.trace. */
typedef struct mp_trace_list {
	size_t first;
	size_t n;
} mp_trace_list;

typedef struct mp_snapshot {
	mp_heap *heap; /* owned */
	mp_segment *segments;
	size_t nsegments;
	mp_block *blocks;
	size_t nblocks;
	mp_trace_entry *trace;
	size_t ntrace;
	mp_trace_list *device_traces;
	size_t ndevice_traces;
	mp_val allocator_settings; /* any value, usually a dict */
	mp_val shape;              /* top-level keys in order */
	mp_val extras;             /* e.g. external_annotations */
	uint32_t present;
	bool bare_list; /* the file held only a list of segments (the oldest form) */
	bool projected; /* loaded without frames (MP_SKIPPED stands in): for reading only */
} mp_snapshot;

/* A frame of a traceback, read from a frame dict. Strings point into the heap. */
typedef struct mp_frame {
	const char *filename;
	size_t filename_len;
	const char *name;
	size_t name_len;
	int64_t line;
} mp_frame;

/* Build a snapshot from ROOT (a dict as _snapshot() returns, or a bare list of
   segments) in HEAP. On success the snapshot owns HEAP; on failure the caller
   still does. Known keys must hold values of the types PyTorch writes
   (MP_E_TYPE with DIAG naming the place otherwise). */
mp_err mp_snapshot_from_value(mp_heap *heap, mp_val root, mp_snapshot **out, mp_diag *diag) MP_WUR;

/* Options for turning a snapshot back into generic values. */
enum mp_to_value_flags {
	MP_TV_POOL_ID_AS_LIST = 1u << 0, /* JSON has no tuples: write segment_pool_id as a list */
};

/* Rebuild the generic value of SNAP (in SNAP's heap) in its original key order. */
mp_err mp_snapshot_to_value(mp_snapshot *snap, unsigned flags, mp_val *out, mp_diag *diag) MP_WUR;

/* Rebuild trace entry E as a generic dict (in SNAP's heap), keys in original order. */
mp_err mp_trace_entry_to_value(mp_snapshot *snap, const mp_trace_entry *e, mp_val *out) MP_WUR;

/* Create an empty snapshot with a fresh heap (for builders such as the walker and tests). */
mp_err mp_snapshot_new(mp_snapshot **out) MP_WUR;

/* Free SNAP and its heap. SNAP may be NULL. */
void mp_snapshot_free(mp_snapshot *snap);

/* The blocks of segment SEG. */
static inline mp_block *mp_segment_blocks(const mp_snapshot *snap, const mp_segment *seg)
{
	return snap->blocks + seg->first_block;
}

/* Number of frames in FRAMES (a list handle or MP_ABSENT). */
size_t mp_frames_len(const mp_snapshot *snap, mp_val frames);

/* Read frame I of FRAMES into *OUT. Returns false when it is not a frame dict
   with str 'filename'/'name' and int 'line': the loader checks only that frames
   are lists, so analyses that format frames report odd ones themselves. */
bool mp_frames_get(const mp_snapshot *snap, mp_val frames, size_t i, mp_frame *out);

/* Whether str handle V equals the known key K (e.g. mp_heap_keys(h)->active_allocated). */
static inline bool mp_val_is(mp_val v, mp_val k)
{
	return v == k;
}

#endif

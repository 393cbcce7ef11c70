/* snapshot_builder.h - build typed snapshots by hand for the analysis tests (header-only). */
#ifndef MEMPROF_TEST_SNAPSHOT_BUILDER_H
#define MEMPROF_TEST_SNAPSHOT_BUILDER_H

#include <stdlib.h>
#include <string.h>

#include "mp_snapshot.h"

/* Any allocation failure in a test is fatal: the tests are not about that. */
static inline void sb_check(int ok)
{
	if (!ok)
		abort();
}

/* Make room for element COUNT of array P: capacity doubles whenever COUNT is 0
   or a power of two, so the arrays need no capacity field. */
static inline void *sb_room(void *p, size_t count, size_t elem)
{
	void *np;

	if (count != 0 && (count & (count - 1)) != 0)
		return p;
	np = realloc(p, (count ? 2 * count : 1) * elem);
	sb_check(np != NULL);
	return np;
}

static inline mp_snapshot *sb_new(void)
{
	mp_snapshot *s;

	sb_check(mp_snapshot_new(&s) == MP_OK);
	s->present = MP_F_TOP_SEGMENTS | MP_F_TOP_DEVICE_TRACES;
	return s;
}

static inline mp_val sb_str(mp_snapshot *s, const char *text)
{
	mp_val v;

	sb_check(mp_heap_str(s->heap, text, strlen(text), &v) == MP_OK);
	return v;
}

static inline mp_val sb_int(mp_snapshot *s, int64_t i)
{
	mp_val v;

	sb_check(mp_heap_int(s->heap, i, &v) == MP_OK);
	return v;
}

/* One frame as PyTorch writes it: {'name': ..., 'filename': ..., 'line': ...}. */
struct sb_frame {
	const char *name, *filename;
	int64_t line;
};

/* A (hash-consed) frames list of N frames, innermost first. */
static inline mp_val sb_frames(mp_snapshot *s, size_t n, const struct sb_frame *f)
{
	const mp_keys *k = mp_heap_keys(s->heap);
	mp_val *dicts = calloc(n ? n : 1, sizeof *dicts), list;

	sb_check(dicts != NULL);
	for (size_t i = 0; i < n; i++) {
		mp_val kv[6] = { k->name, sb_str(s, f[i].name), k->filename, sb_str(s, f[i].filename),
				 k->line, sb_int(s, f[i].line) };

		sb_check(mp_heap_make(s->heap, MP_T_DICT, kv, 3, &dicts[i]) == MP_OK);
	}
	sb_check(mp_heap_make(s->heap, MP_T_LIST, dicts, n, &list) == MP_OK);
	free(dicts);
	return list;
}

/* Append a segment with the keys every PyTorch snapshot has; blocks follow with sb_block. */
static inline mp_segment *sb_segment(mp_snapshot *s, int64_t device, int64_t address, int64_t total_size,
			      int64_t stream)
{
	mp_segment *seg;

	s->segments = sb_room(s->segments, s->nsegments, sizeof *s->segments);
	seg = &s->segments[s->nsegments++];
	memset(seg, 0, sizeof *seg);
	seg->device = device;
	seg->address = address;
	seg->total_size = total_size;
	seg->stream = stream;
	seg->first_block = s->nblocks;
	seg->present = MP_F_SEG_DEVICE | MP_F_SEG_ADDRESS | MP_F_SEG_TOTAL_SIZE | MP_F_SEG_STREAM |
		       MP_F_SEG_BLOCKS;
	return seg;
}

/* Append a block ({'address', 'size', 'requested_size', 'state', 'frames'}) to the last segment. */
static inline mp_block *sb_block(mp_snapshot *s, int64_t size, int64_t requested_size, const char *state,
			  mp_val frames)
{
	mp_segment *seg = &s->segments[s->nsegments - 1];
	mp_block *b;

	s->blocks = sb_room(s->blocks, s->nblocks, sizeof *s->blocks);
	b = &s->blocks[s->nblocks++];
	memset(b, 0, sizeof *b);
	b->size = size;
	b->requested_size = requested_size;
	b->state = sb_str(s, state);
	b->frames = frames;
	b->present = MP_F_BLK_ADDRESS | MP_F_BLK_SIZE | MP_F_BLK_REQUESTED_SIZE | MP_F_BLK_STATE |
		     MP_F_BLK_FRAMES;
	seg->nblocks++;
	return b;
}

/* Start the next device's list in device_traces. */
static inline void sb_device(mp_snapshot *s)
{
	s->device_traces = sb_room(s->device_traces, s->ndevice_traces, sizeof *s->device_traces);
	s->device_traces[s->ndevice_traces++] = (mp_trace_list){ s->ntrace, 0 };
}

/* Append {'action', 'addr', 'size', 'stream': 0, 'time_us': 0} to the last device's list. */
static inline mp_trace_entry *sb_entry(mp_snapshot *s, const char *action, int64_t addr, int64_t size)
{
	mp_trace_entry *e;

	s->trace = sb_room(s->trace, s->ntrace, sizeof *s->trace);
	e = &s->trace[s->ntrace++];
	memset(e, 0, sizeof *e);
	e->action = sb_str(s, action);
	e->addr = addr;
	e->size = size;
	e->present = MP_F_TR_ACTION | MP_F_TR_ADDR | MP_F_TR_SIZE | MP_F_TR_STREAM | MP_F_TR_TIME_US;
	s->device_traces[s->ndevice_traces - 1].n++;
	return e;
}

#endif

/* walk_trace.c - a device's trace ring (RingBuffer<TraceEntry> alloc_buffer) in time order:
   entries [next, size) then [0, next) once the ring has wrapped (allocator-facts §3.7). */
#include <stdlib.h>

#include "mp_array.h"
#include "walk_int.h"

/* The ring is read in chunks of this many entries. */
enum { TRACE_CHUNK = 64 };

/* An entry of DEVICE's ring. 2.0's and 2.1's TraceEntry has neither device_ (the ring's device is the entry's) nor time_. */
static mp_err read_entry(struct walk *wk, const unsigned char *e, int device, mp_walk_trace *out)
{
	*out = (mp_walk_trace){
		.action = wk_i32(e, OFF(wk, TE_ACTION)),
		.device = HAS(wk, TE_DEVICE) ? (int8_t)wk_u8(e, OFF(wk, TE_DEVICE)) : (int8_t)device,
		.addr = wk_u64(e, OFF(wk, TE_ADDR)),
		.size = wk_u64(e, OFF(wk, TE_SIZE)),
		.stream = wk_u64(e, OFF(wk, TE_STREAM)),
		.tsc = HAS(wk, TE_TIME) ? wk_u64(e, OFF(wk, TE_TIME)) : 0,
		.context = wk_u64(e, OFF(wk, TE_CONTEXT)),
	};
	if (out->action < 0 || out->action > MP_WALK_ACTION_MAX)
		return MP_E_CORRUPT;
	/* SEGMENT_MAP and SEGMENT_UNMAP came with expandable segments (2.1), before SNAPSHOT and OOM: 2.0's
	   enumeration stops at OOM = 6. mp_walk_trace numbers actions as 2.1 on does. */
	if (!HAS(wk, BLOCK_EXPANDABLE_SEGMENT) && out->action >= 5) {
		if (out->action > 6)
			return MP_E_CORRUPT;
		out->action += 2;
	}
	if (HAS(wk, TE_MEMPOOL)) {
		out->mempool[0] = wk_u64(e, OFF(wk, TE_MEMPOOL));
		out->mempool[1] = wk_u64(e, OFF(wk, TE_MEMPOOL) + 8);
	}
	return MP_OK;
}

/* The entry's strings: their characters live elsewhere in the target. */
static mp_err entry_strings(struct walk *wk, uint64_t at, mp_walk_trace *tr)
{
	mp_err err = MP_OK;

	if (HAS(wk, TE_COMPILE_CONTEXT))
		err = wk_string(wk, at + (uint64_t)OFF(wk, TE_COMPILE_CONTEXT), &tr->compile_context);
	if (err == MP_OK && HAS(wk, TE_USER_METADATA))
		err = wk_string(wk, at + (uint64_t)OFF(wk, TE_USER_METADATA), &tr->user_metadata);
	return err;
}

mp_err wk_ring(struct walk *wk, uint64_t ring, size_t esize, size_t max, struct wk_ring *out)
{
	unsigned char hdr[WK_RING_HEADER];
	uint64_t vec;

	*out = (struct wk_ring){ 0 };
	if (wk_read(wk, ring, hdr, sizeof hdr) != MP_OK)
		return MP_E_TRUNCATED;
	out->max_entries = wk_u64(hdr, OFF(wk, RB_MAX_ENTRIES));
	out->next = wk_u64(hdr, OFF(wk, RB_NEXT));
	out->vector = vec = wk_u64(hdr, OFF(wk, RB_VECTOR));
	if (vec == 0)
		return MP_OK; /* never recorded */
	if (wk_vector(wk, vec, esize, max, &out->begin, &out->n) != MP_OK ||
	    (out->n != 0 && out->next >= out->n) || out->n > out->max_entries)
		return MP_E_CORRUPT;
	return MP_OK;
}

mp_err wk_trace(struct walk *wk, mp_walk_device *dev)
{
	unsigned char buf[TRACE_CHUNK * WK_MAX_ENTRY];
	uint64_t ring = dev->address + (uint64_t)OFF(wk, DCA_ALLOC_BUFFER), next, begin;
	size_t esize = (size_t)OFF(wk, TE_SIZEOF), n;
	struct wk_ring r;
	mp_walk *w = wk->w;
	uint8_t history = 0;
	mp_err err;

	dev->first_trace = w->ntrace;
	if (HAS(wk, DCA_RECORD_HISTORY) &&
	    mp_target_read_u8(wk->t, dev->address + (uint64_t)OFF(wk, DCA_RECORD_HISTORY), &history, NULL) == MP_OK)
		dev->record_history = history == 1;
	err = wk_ring(wk, ring, esize, WK_MAX_TRACE, &r);
	dev->ring_max_entries = r.max_entries;
	if (err == MP_E_TRUNCATED) {
		wk_damaged(wk, "device %d: its trace ring is unreadable", dev->index);
		return MP_OK;
	}
	if (err != MP_OK) {
		wk_damaged(wk, "device %d: the trace ring (vector 0x%llx) is damaged; no trace for it", dev->index,
			   (unsigned long long)r.vector);
		return MP_OK;
	}
	next = r.next, begin = r.begin, n = r.n;
	for (size_t done = 0; done < n;) {
		/* Logical entry DONE is ring slot (next + done) % n; read runs of slots at once. */
		size_t slot = (size_t)((next + done) % n), run = n - slot;

		if (run > n - done)
			run = n - done;
		if (run > TRACE_CHUNK)
			run = TRACE_CHUNK;
		if ((err = wk_read(wk, begin + slot * esize, buf, run * esize)) != MP_OK) {
			wk_damaged(wk, "device %d: trace entries from %zu are unreadable; the trace is cut short",
				   dev->index, done);
			break;
		}
		/* Room for what was read, not for what the vector claims (a damaged end may claim
		   millions of entries of memory that is not there). */
		if ((err = mp_array_grow((void **)&w->trace, &wk->trace_cap, w->ntrace + run, sizeof *w->trace)) != MP_OK)
			return err;
		for (size_t i = 0; i < run; i++) {
			mp_walk_trace *tr = &w->trace[w->ntrace];

			if (read_entry(wk, buf + i * esize, dev->index, tr) != MP_OK ||
			    (err = entry_strings(wk, begin + (slot + i) * esize, tr)) != MP_OK) {
				if (err == MP_E_NOMEM)
					return err;
				free(tr->compile_context);
				free(tr->user_metadata);
				wk_damaged(wk, "device %d: trace entry %zu is damaged; skipped", dev->index, done + i);
				err = MP_OK;
				continue;
			}
			w->ntrace++;
		}
		done += run;
	}
	dev->ntrace = w->ntrace - dev->first_trace;
	return MP_OK;
}

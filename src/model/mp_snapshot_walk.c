/* mp_snapshot_walk.c - the snapshot torch.cuda.memory._snapshot() would have returned, built
   from what the walker read: each record's pairs go to the snapshot builder (key order as
   torch/csrc/cuda/Module.cpp inserts keys); only the values inside records are made as values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_context.h"
#include "mp_snapshot_walk.h"
#include "snapshot_build_int.h"

/* How many blocks ahead of the one given the builder its context is prefetched (mp_ctx_prefetch). */
enum { CTX_AHEAD = 8 };

struct build {
	mp_heap *heap;
	const mp_keys *k;
	mp_val empty_list;
	mp_snapshot_builder *sb;
	mp_ctx_reader *ctx; /* NULL: no frames decoded */
	mp_val *seq_lists;  /* per frame sequence of CTX, its list once built (0: not yet) */
	size_t seq_lists_cap;
	mp_val *frame_dicts; /* per frame of CTX, its dict once built */
	size_t frame_dicts_cap;
	bool shape_2_14; /* the snapshot as 2.14's _snapshot() shapes it: trace entries' pool_id, host keys */
};

static mp_err str(struct build *b, const char *s, mp_val *out)
{
	return mp_heap_str(b->heap, s, strlen(s), out);
}

static mp_err u64(struct build *b, uint64_t v, mp_val *out)
{
	/* Addresses and sizes are below 2^63; PyTorch casts them to int64 the same way. */
	return mp_heap_int(b->heap, (int64_t)v, out);
}

/* PyTorch's frame line is a uint64_t: a Python line of -1 is 2^64 - 1, past int64. */
static mp_err line_value(struct build *b, uint64_t line, mp_val *out)
{
	unsigned char le[9] = { 0 };

	if (line <= INT64_MAX)
		return mp_heap_int(b->heap, (int64_t)line, out);
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(line >> (8 * i));
	return mp_heap_int_le(b->heap, le, sizeof le, out);
}

/* Make the cache *V (of *CAP handles) hold NEED, new handles 0. */
static mp_err cache_grow(mp_val **v, size_t *cap, size_t need)
{
	size_t old = *cap;
	mp_err err = mp_array_grow((void **)v, cap, need, sizeof **v);

	if (err == MP_OK && *cap > old)
		memset(*v + old, 0, (*cap - old) * sizeof **v);
	return err;
}

/* Frame ID of the context reader as {'name', 'filename', 'line'}, built once. */
static mp_err frame_dict(struct build *b, uint32_t id, mp_val *out)
{
	const mp_ctx_frame *f = mp_ctx_frame_at(b->ctx, id);
	mp_val kv[6] = { b->k->name, 0, b->k->filename, 0, b->k->line, 0 };
	mp_err err;

	if ((err = cache_grow(&b->frame_dicts, &b->frame_dicts_cap, mp_ctx_nframes(b->ctx))) != MP_OK)
		return err;
	if (b->frame_dicts[id] != 0) {
		*out = b->frame_dicts[id];
		return MP_OK;
	}
	if ((err = str(b, f->name, &kv[1])) != MP_OK || (err = str(b, f->filename, &kv[3])) != MP_OK ||
	    (err = line_value(b, f->line, &kv[5])) != MP_OK || (err = mp_heap_make(b->heap, MP_T_DICT, kv, 3, out)) != MP_OK)
		return err;
	b->frame_dicts[id] = *out;
	return MP_OK;
}

/* The frames list of the context at CTX (a GatheredContext*, 0: none): the empty list when there is
   none, frames are not decoded, or it cannot be; one list per distinct sequence. */
static mp_err frames_of(struct build *b, uint64_t ctx, mp_val *out)
{
	const uint32_t *ids;
	mp_val *items;
	uint32_t seq;
	size_t n;
	mp_err err;

	*out = b->empty_list;
	if (b->ctx == NULL || ctx == 0)
		return MP_OK;
	if ((err = mp_ctx_get(b->ctx, ctx, &seq)) != MP_OK ||
	    (err = cache_grow(&b->seq_lists, &b->seq_lists_cap, mp_ctx_nseqs(b->ctx))) != MP_OK)
		return err;
	if (seq == 0)
		return MP_OK;
	if (b->seq_lists[seq] != 0) {
		*out = b->seq_lists[seq];
		return MP_OK;
	}
	ids = mp_ctx_seq(b->ctx, seq, &n);
	if ((items = calloc(n > 0 ? n : 1, sizeof *items)) == NULL)
		return MP_E_NOMEM;
	err = MP_OK;
	for (size_t i = 0; i < n && err == MP_OK; i++)
		err = frame_dict(b, ids[i], &items[i]);
	if (err == MP_OK)
		err = mp_heap_make(b->heap, MP_T_LIST, items, n, out);
	free(items);
	if (err == MP_OK)
		b->seq_lists[seq] = *out;
	return err;
}

/* A block, as the pairs of its dict, to the builder (no dict is made). */
static mp_err give_block(struct build *b, const mp_walk_block *blk)
{
	mp_val kv[10] = { b->k->address, 0, b->k->size, 0, b->k->requested_size, 0, b->k->state, 0, b->k->frames, 0 };
	mp_err err;

	if ((err = u64(b, blk->ptr, &kv[1])) != MP_OK || (err = u64(b, blk->size, &kv[3])) != MP_OK ||
	    (err = u64(b, blk->requested_size, &kv[5])) != MP_OK ||
	    (err = str(b, mp_walk_state_name(blk->state), &kv[7])) != MP_OK || (err = frames_of(b, blk->context, &kv[9])) != MP_OK)
		return err;
	return mp_sb_block(b->sb, kv, 5);
}

/* A segment, then its blocks, to the builder. */
static mp_err give_segment(struct build *b, const mp_walk *w, const mp_walk_segment *seg)
{
	mp_val kv[24], pool[2];
	size_t n = 0;
	mp_err err = MP_OK;
	const uint64_t ints[] = { seg->address,        seg->total_size,     seg->allocated_size,
				  seg->active_size,    seg->requested_size, seg->stream };
	const mp_val int_keys[] = { b->k->address,     b->k->total_size,     b->k->allocated_size,
				    b->k->active_size, b->k->requested_size, b->k->stream };

	kv[n++] = b->k->device;
	if ((err = mp_heap_int(b->heap, seg->device, &kv[n++])) != MP_OK)
		return err;
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		kv[n++] = int_keys[i];
		if ((err = u64(b, ints[i], &kv[n++])) != MP_OK)
			return err;
	}
	kv[n++] = b->k->segment_type;
	kv[n++] = seg->is_large ? b->k->large : b->k->small;
	/* 2.0's snapshot has neither: both came in 2.1, with expandable segments. */
	if (w->layout.off[MP_L_BLOCK_EXPANDABLE_SEGMENT] != MP_LAYOUT_ABSENT) {
		kv[n++] = b->k->segment_pool_id;
		if ((err = u64(b, seg->pool_id[0], &pool[0])) != MP_OK ||
		    (err = u64(b, seg->pool_id[1], &pool[1])) != MP_OK ||
		    (err = mp_heap_make(b->heap, MP_T_TUPLE, pool, 2, &kv[n++])) != MP_OK)
			return err;
		kv[n++] = b->k->is_expandable;
		kv[n++] = mp_val_bool(seg->is_expandable);
	}
	/* Module.cpp sets frames at once when the segment has no context, after its blocks when it has one. */
	if (seg->context == 0) {
		kv[n++] = b->k->frames;
		kv[n++] = b->empty_list;
	}
	kv[n++] = b->k->blocks;
	kv[n++] = b->empty_list; /* the blocks go to the builder on their own */
	if (seg->context != 0) {
		kv[n++] = b->k->frames;
		if ((err = frames_of(b, seg->context, &kv[n++])) != MP_OK)
			return err;
	}
	if ((err = mp_sb_segment(b->sb, kv, n / 2)) != MP_OK)
		return err;
	for (size_t i = 0; i < seg->nblocks && err == MP_OK; i++) {
		if (b->ctx != NULL && i + CTX_AHEAD < seg->nblocks)
			mp_ctx_prefetch(b->ctx, w->blocks[seg->first_block + i + CTX_AHEAD].context);
		err = give_block(b, &w->blocks[seg->first_block + i]);
	}
	return err == MP_OK ? mp_sb_blocks_end(b->sb) : err;
}

/* A trace entry, as the pairs of its dict, to the builder. */
static mp_err give_trace(struct build *b, const mp_walk *w, const mp_walk_trace *tr)
{
	mp_val kv[20]; /* at most 9 pairs */
	size_t n = 0;
	const char *action = mp_walk_action_name(tr->action);
	mp_err err;

	kv[n++] = b->k->action;
	if ((err = str(b, action != NULL ? action : "unknown", &kv[n++])) != MP_OK)
		return err;
	kv[n++] = tr->action == 8 /* OOM */ ? b->k->device_free : b->k->addr;
	if ((err = u64(b, tr->addr, &kv[n++])) != MP_OK)
		return err;
	kv[n++] = b->k->size;
	if ((err = u64(b, tr->size, &kv[n++])) != MP_OK)
		return err;
	kv[n++] = b->k->stream;
	if ((err = u64(b, tr->stream, &kv[n++])) != MP_OK)
		return err;
	if (w->layout.off[MP_L_TE_TIME] != MP_LAYOUT_ABSENT) { /* 2.1's entries have no time */
		kv[n++] = b->k->time_us;
		if ((err = mp_heap_int(b->heap, tr->time_us, &kv[n++])) != MP_OK)
			return err;
	}
	if (w->layout.off[MP_L_TE_COMPILE_CONTEXT] != MP_LAYOUT_ABSENT) {
		kv[n++] = b->k->compile_context;
		if ((err = str(b, tr->compile_context != NULL ? tr->compile_context : "", &kv[n++])) != MP_OK)
			return err;
	}
	if (w->layout.off[MP_L_TE_USER_METADATA] != MP_LAYOUT_ABSENT) {
		kv[n++] = b->k->user_metadata;
		if ((err = str(b, tr->user_metadata != NULL ? tr->user_metadata : "", &kv[n++])) != MP_OK)
			return err;
	}
	if (b->shape_2_14 && w->layout.off[MP_L_TE_MEMPOOL] != MP_LAYOUT_ABSENT) {
		mp_val pool[2];

		kv[n++] = b->k->pool_id;
		if ((err = u64(b, tr->mempool[0], &pool[0])) != MP_OK || (err = u64(b, tr->mempool[1], &pool[1])) != MP_OK ||
		    (err = mp_heap_make(b->heap, MP_T_TUPLE, pool, 2, &kv[n++])) != MP_OK)
			return err;
	}
	/* PyTorch writes frames only for entries with a context. */
	if (tr->context != 0) {
		kv[n++] = b->k->frames;
		if ((err = frames_of(b, tr->context, &kv[n++])) != MP_OK)
			return err;
	}
	return mp_sb_trace_entry(b->sb, kv, n / 2);
}

static mp_err list_of(struct build *b, size_t n, mp_err (*item)(struct build *, const mp_walk *, size_t, mp_val *),
		      const mp_walk *w, size_t first, mp_val *out)
{
	mp_val *items = calloc(n ? n : 1, sizeof *items);
	mp_err err = MP_OK;

	if (items == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n && err == MP_OK; i++)
		err = item(b, w, first + i, &items[i]);
	if (err == MP_OK)
		err = mp_heap_make(b->heap, MP_T_LIST, items, n, out);
	free(items);
	return err;
}

static mp_err device_stats(struct build *b, const mp_walk *w, size_t d, mp_val *out)
{
	const mp_memstats *st = &w->devices[d].stats;
	mp_val *kv = calloc(2 * st->n + 1, sizeof *kv);
	mp_err err = MP_OK;

	if (kv == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < st->n && err == MP_OK; i++) {
		err = str(b, st->v[i].key, &kv[2 * i]);
		if (err == MP_OK)
			err = mp_heap_int(b->heap, st->v[i].value, &kv[2 * i + 1]);
	}
	if (err == MP_OK)
		err = mp_heap_make(b->heap, MP_T_DICT, kv, st->n, out);
	free(kv);
	return err;
}

/* A str key and its value, appended to KV (*N entries so far). */
static mp_err put_int(struct build *b, mp_val *kv, size_t *n, const char *key, int64_t v)
{
	mp_err err = str(b, key, &kv[*n]);

	if (err == MP_OK)
		err = mp_heap_int(b->heap, v, &kv[*n + 1]);
	*n += 2;
	return err;
}

/* The same for a bool. */
static mp_err put_bool(struct build *b, mp_val *kv, size_t *n, const char *key, bool v)
{
	mp_err err = str(b, key, &kv[*n]);

	kv[*n + 1] = mp_val_bool(v);
	*n += 2;
	return err;
}

/* roundup_power2_divisions: {'1': d0, '2': d1, ..., '32768': d15}. */
static mp_err divisions_dict(struct build *b, const int64_t div[16], mp_val *out)
{
	mp_val kv[32];
	size_t n = 0;
	mp_err err = MP_OK;

	for (int i = 0; i < 16 && err == MP_OK; i++) {
		char key[8];

		snprintf(key, sizeof key, "%d", 1 << i);
		err = put_int(b, kv, &n, key, div[i]);
	}
	return err == MP_OK ? mp_heap_make(b->heap, MP_T_DICT, kv, 16, out) : err;
}

/* allocator_settings in snapshot()'s key order (allocator-facts §6.3): 2.6's keys, and where the
   version has them (2.14) graph_capture_record_stream_reuse, then max_round_threshold and
   max_cached_size, before roundup_power2_divisions. */
static mp_err settings_dict(struct build *b, const mp_walk_settings *s, mp_val *out)
{
	mp_val kv[24];
	size_t n = 0;
	mp_err err;

	if ((err = str(b, "PYTORCH_CUDA_ALLOC_CONF", &kv[n++])) != MP_OK ||
	    (err = str(b, s->last_settings != NULL ? s->last_settings : "", &kv[n++])) != MP_OK ||
	    (err = put_int(b, kv, &n, "max_split_size", s->max_split_size)) != MP_OK ||
	    (err = str(b, "garbage_collection_threshold", &kv[n++])) != MP_OK ||
	    (err = mp_heap_float(b->heap, s->garbage_collection_threshold, &kv[n++])) != MP_OK ||
	    (err = put_bool(b, kv, &n, "expandable_segments", s->expandable_segments)) != MP_OK ||
	    (err = put_int(b, kv, &n, "pinned_num_register_threads", s->pinned_num_register_threads)) != MP_OK ||
	    (err = put_bool(b, kv, &n, "release_lock_on_cudamalloc", s->release_lock_on_cudamalloc)) != MP_OK ||
	    (err = put_bool(b, kv, &n, "pinned_use_cuda_host_register", s->pinned_use_cuda_host_register)) != MP_OK)
		return err;
	if (s->has_graph_capture_record_stream_reuse &&
	    (err = put_bool(b, kv, &n, "graph_capture_record_stream_reuse", s->graph_capture_record_stream_reuse)) != MP_OK)
		return err;
	if (s->has_pinned_limits && ((err = put_int(b, kv, &n, "max_round_threshold", s->max_round_threshold)) != MP_OK ||
				     (err = put_int(b, kv, &n, "max_cached_size", s->max_cached_size)) != MP_OK))
		return err;
	if ((err = str(b, "roundup_power2_divisions", &kv[n++])) != MP_OK ||
	    (err = divisions_dict(b, s->roundup_power2_divisions, &kv[n++])) != MP_OK)
		return err;
	return mp_heap_make(b->heap, MP_T_DICT, kv, n / 2, out);
}

/* External annotation I: its metadata in the map's order, then device and time_us, as _snapshot() has it. */
static mp_err annotation(struct build *b, const mp_walk *w, size_t i, mp_val *out)
{
	const mp_walk_annotation *a = &w->annotations[i];
	mp_val *kv = calloc(2 * a->nmeta + 4, sizeof *kv);
	size_t n = 0;
	mp_err err = MP_OK;

	if (kv == NULL)
		return MP_E_NOMEM;
	for (size_t k = 0; k < 2 * a->nmeta && err == MP_OK; k++)
		err = str(b, a->meta[k], &kv[n++]);
	if (err == MP_OK) {
		kv[n++] = b->k->device;
		err = mp_heap_int(b->heap, a->device, &kv[n++]);
	}
	if (err == MP_OK) {
		kv[n++] = b->k->time_us;
		err = mp_heap_int(b->heap, a->time_us, &kv[n++]);
	}
	if (err == MP_OK)
		err = mp_heap_make(b->heap, MP_T_DICT, kv, n / 2, out);
	free(kv);
	return err;
}

/* The segments with their blocks, each device's trace, then the top level, to the builder. */
static mp_err give_all(struct build *b, const mp_walk *w, unsigned flags)
{
	mp_val kv[14], key;
	size_t n = 0;
	mp_err err = mp_heap_make(b->heap, MP_T_LIST, NULL, 0, &b->empty_list);

	if (err == MP_OK)
		err = mp_sb_reserve_blocks(b->sb, w->nblocks);
	for (size_t i = 0; i < w->nsegments && err == MP_OK; i++)
		err = give_segment(b, w, &w->segments[i]);
	for (size_t d = 0; d < w->ndevices && err == MP_OK; d++) {
		for (size_t i = 0; i < w->devices[d].ntrace && err == MP_OK; i++)
			err = give_trace(b, w, &w->trace[w->devices[d].first_trace + i]);
		if (err == MP_OK)
			err = mp_sb_device_end(b->sb);
	}
	if (err != MP_OK)
		return err;
	kv[n++] = b->k->segments;
	kv[n++] = b->empty_list;
	kv[n++] = b->k->device_traces;
	kv[n++] = b->empty_list;
	if (w->settings.present) {
		kv[n++] = b->k->allocator_settings;
		if ((err = settings_dict(b, &w->settings, &kv[n++])) != MP_OK)
			return err;
	}
	/* 2.0 to 2.4 have no annotation ring, and their snapshots no such key. */
	if (w->layout.off[MP_L_NCA_ANNOTATION_BUFFER] != MP_LAYOUT_ABSENT) {
		kv[n++] = b->k->external_annotations;
		if ((err = list_of(b, w->nannotations, annotation, w, 0, &kv[n++])) != MP_OK)
			return err;
	}
	/* The pinned host allocator's state, which memprof does not read: always empty here (SCHEMA.md). */
	if (b->shape_2_14) {
		kv[n++] = b->k->host_segments;
		kv[n++] = b->empty_list;
		kv[n++] = b->k->host_traces;
		kv[n++] = b->empty_list;
	}
	if (flags & MP_SW_DEVICE_STATS) {
		if ((err = str(b, "device_stats", &key)) != MP_OK)
			return err;
		kv[n++] = key;
		if ((err = list_of(b, w->ndevices, device_stats, w, 0, &kv[n++])) != MP_OK)
			return err;
	}
	return mp_sb_top(b->sb, kv, n / 2);
}

/* Whether W's release shapes its snapshot as 2.14 does: by its version where memprof knows it, else by the
   settings only 2.14 has. */
static bool shaped_as_2_14(const mp_walk *w)
{
	unsigned major, minor;

	if (sscanf(w->c10.version, "%u.%u", &major, &minor) == 2)
		return major > 2 || (major == 2 && minor >= 14);
	return w->settings.has_pinned_limits;
}

mp_err mp_snapshot_from_walk(const mp_walk *w, mp_target *t, unsigned flags, mp_snapshot **out, mp_diag *diag)
{
	struct build b = { .heap = mp_heap_new(), .shape_2_14 = shaped_as_2_14(w) };
	mp_err err;

	*out = NULL;
	if (b.heap == NULL)
		return MP_E_NOMEM;
	b.k = mp_heap_keys(b.heap);
	err = t != NULL && !(flags & MP_SW_NO_FRAMES) ? mp_ctx_open(t, &b.ctx, diag) : MP_OK;
	if (err == MP_OK)
		err = mp_sb_new(b.heap, diag, &b.sb);
	if (err == MP_OK)
		err = give_all(&b, w, flags);
	if (b.ctx != NULL) {
		if (err == MP_OK)
			mp_ctx_report(b.ctx, diag);
		mp_ctx_close(b.ctx);
	}
	free(b.seq_lists);
	free(b.frame_dicts);
	if (err == MP_OK && (err = mp_sb_finish(b.sb, out)) == MP_OK)
		b.sb = NULL;
	mp_sb_abandon(b.sb);
	if (err != MP_OK) {
		mp_heap_free(b.heap);
		return err == MP_E_NOMEM ? mp_fail(diag, err, "out of memory building the snapshot") : err;
	}
	return MP_OK;
}

/* test_snapshot.c - generic values <-> the typed snapshot model. */
#include <stdlib.h>
#include <string.h>

#include "mp_pickle_read.h"
#include "mp_repr.h"
#include "mp_snapshot.h"
#include "mp_snapshot_walk.h"
#include "pickle_vectors.h"
#include "unit_main.h"

/* The snapshot vector is, in Python:
   {'segments': [{'device': 0, 'address': 4096, 'total_size': 2048, ..., 'frames': [],
      'blocks': [{'address': 4096, 'size': 512, 'requested_size': 500, 'state': 'active_allocated',
                  'frames': FR, 'mystery': [1, 2]},
                 {'address': 4608, 'size': 1536, 'requested_size': 0, 'state': 'inactive', 'frames': []}],
      'extra_seg': 'kept'}],
    'device_traces': [[{'action': 'alloc', ...,'frames': FR}, {'action': 'oom', 'device_free': 10, ...}]],
    'allocator_settings': {'max_split_size': -1}, 'external_annotations': []}
   with FR = [{'filename': '/x/train.py', 'line': 3, 'name': 'main'}]. */

static mp_err load(const unsigned char *data, size_t len, mp_snapshot **snap, mp_val *root, mp_diag *diag)
{
	mp_heap *heap = mp_heap_new();
	mp_err err;

	memset(diag, 0, sizeof *diag);
	err = mp_pickle_read(heap, data, len, root, NULL, diag);
	if (err == MP_OK)
		err = mp_snapshot_from_value(heap, *root, snap, diag);
	if (err != MP_OK)
		mp_heap_free(heap);
	return err;
}

static void test_fields(void)
{
	mp_snapshot *s;
	mp_val root;
	mp_diag diag;
	mp_frame f;
	const mp_keys *k;

	CU_ASSERT_FATAL(load(vec_snapshot, sizeof vec_snapshot, &s, &root, &diag) == MP_OK);
	k = mp_heap_keys(s->heap);
	CU_ASSERT_EQUAL(s->nsegments, 1);
	CU_ASSERT_EQUAL(s->nblocks, 2);
	CU_ASSERT_EQUAL(s->segments[0].total_size, 2048);
	CU_ASSERT_EQUAL(s->segments[0].segment_type, k->small);
	CU_ASSERT_EQUAL(s->segments[0].is_expandable, MP_FALSE);
	CU_ASSERT_EQUAL(mp_segment_blocks(s, &s->segments[0])[1].address, 4608);
	CU_ASSERT_EQUAL(s->blocks[0].state, k->active_allocated);
	CU_ASSERT_EQUAL(s->blocks[0].requested_size, 500);
	CU_ASSERT_NOT_EQUAL(s->blocks[0].extras, MP_ABSENT); /* 'mystery' */
	CU_ASSERT_EQUAL(mp_frames_len(s, s->blocks[0].frames), 1);
	CU_ASSERT_FATAL(mp_frames_get(s, s->blocks[0].frames, 0, &f));
	CU_ASSERT_STRING_EQUAL(f.filename, "/x/train.py");
	CU_ASSERT_EQUAL(f.line, 3);
	/* the same frames in a trace entry share the handle */
	CU_ASSERT_EQUAL(s->trace[0].frames, s->blocks[0].frames);
	CU_ASSERT_EQUAL(s->ndevice_traces, 1);
	CU_ASSERT_EQUAL(s->device_traces[0].n, 2);
	CU_ASSERT(s->trace[1].present & MP_F_TR_DEVICE_FREE);
	CU_ASSERT_FALSE(s->trace[1].present & MP_F_TR_ADDR);
	CU_ASSERT_EQUAL(s->trace[1].addr, 10);
	mp_snapshot_free(s);
}

static void test_round_trip(void)
{
	mp_snapshot *s;
	mp_val root, again, entry;
	mp_diag diag;

	CU_ASSERT_FATAL(load(vec_snapshot, sizeof vec_snapshot, &s, &root, &diag) == MP_OK);
	CU_ASSERT_FATAL(mp_snapshot_to_value(s, 0, &again, &diag) == MP_OK);
	CU_ASSERT(mp_heap_equal(s->heap, root, again));
	/* key order survives: 'extra_seg' is still last in the segment */
	{
		mp_val seg = mp_heap_items(s->heap, mp_heap_items(s->heap, again)[1])[0];
		size_t n = mp_heap_len(s->heap, seg);
		const char *last = mp_heap_atom(s->heap, mp_heap_items(s->heap, seg)[2 * (n - 1)], NULL);

		CU_ASSERT_STRING_EQUAL(last, "extra_seg");
	}
	CU_ASSERT(mp_trace_entry_to_value(s, &s->trace[1], &entry) == MP_OK);
	CU_ASSERT_EQUAL(mp_heap_dict_get(s->heap, entry, mp_heap_keys(s->heap)->device_free),
			mp_val_from_small_int(10));
	/* JSON form writes segment_pool_id as a list */
	CU_ASSERT_FATAL(mp_snapshot_to_value(s, MP_TV_POOL_ID_AS_LIST, &again, &diag) == MP_OK);
	CU_ASSERT_FALSE(mp_heap_equal(s->heap, root, again));
	mp_snapshot_free(s);
}

static void test_legacy(void)
{
	mp_snapshot *s;
	mp_val root, again;
	mp_diag diag;

	CU_ASSERT_FATAL(load(vec_legacy, sizeof vec_legacy, &s, &root, &diag) == MP_OK);
	CU_ASSERT(s->bare_list);
	CU_ASSERT(s->blocks[0].present & MP_F_BLK_HISTORY);
	CU_ASSERT_FALSE(s->blocks[0].present & MP_F_BLK_FRAMES);
	CU_ASSERT_FATAL(mp_snapshot_to_value(s, 0, &again, &diag) == MP_OK);
	CU_ASSERT(mp_heap_equal(s->heap, root, again));
	mp_snapshot_free(s);
}

static void test_bad_type(void)
{
	mp_snapshot *s;
	mp_val root;
	mp_diag diag;

	CU_ASSERT_EQUAL(load(vec_badtype, sizeof vec_badtype, &s, &root, &diag), MP_E_TYPE);
	CU_ASSERT_STRING_EQUAL(diag.msg,
			       "snapshot: segments[0].blocks[0].'size': expected an int within 64 bits, got str");
}

/* repr() of the allocator_settings of the snapshot of a walk that read SET (NULL: none read);
   malloc'd. */
static char *settings_repr(const mp_walk_settings *set)
{
	mp_walk w = { 0 };
	mp_snapshot *s = NULL;
	mp_diag diag = { 0 };
	mp_out out;
	char *text;

	if (set != NULL)
		w.settings = *set;
	CU_ASSERT_FATAL(mp_snapshot_from_walk(&w, NULL, 0, &s, &diag) == MP_OK);
	mp_out_init(&out);
	mp_repr(s->heap, s->allocator_settings, &out);
	text = mp_out_take(&out, NULL);
	mp_snapshot_free(s);
	return text;
}

/* The expected texts are repr() of what the jobs' own torch.cuda.memory._snapshot() returned
   (tests/testbed/jobs/settings.py: PyPI's 2.14.1 and Debian's 2.6, the settings string shortened):
   2.14 adds graph_capture_record_stream_reuse, max_round_threshold and max_cached_size before the
   divisions, and sizes without a limit (SIZE_MAX) read -1. */
static void test_settings_from_walk(void)
{
	mp_walk_settings s214 = {
		.present = true, .last_settings = "max_split_size_mb:64", .max_split_size = 67108864,
		.garbage_collection_threshold = 0.6, .pinned_num_register_threads = 4,
		.release_lock_on_cudamalloc = true, .pinned_use_cuda_host_register = true,
		.has_graph_capture_record_stream_reuse = true, .has_pinned_limits = true,
		.max_round_threshold = 16777216, .max_cached_size = 67108864,
		.roundup_power2_divisions = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8 },
	};
	mp_walk_settings s26 = { .present = true, .max_split_size = -1, .pinned_num_register_threads = 1 };
	char *text;

	text = settings_repr(&s214);
	CU_ASSERT_STRING_EQUAL(text,
		"{'PYTORCH_CUDA_ALLOC_CONF': 'max_split_size_mb:64', 'max_split_size': 67108864, "
		"'garbage_collection_threshold': 0.6, 'expandable_segments': False, 'pinned_num_register_threads': 4, "
		"'release_lock_on_cudamalloc': True, 'pinned_use_cuda_host_register': True, "
		"'graph_capture_record_stream_reuse': False, 'max_round_threshold': 16777216, "
		"'max_cached_size': 67108864, 'roundup_power2_divisions': {'1': 1, '2': 1, '4': 1, '8': 1, '16': 1, "
		"'32': 1, '64': 1, '128': 1, '256': 1, '512': 2, '1024': 4, '2048': 8, '4096': 8, '8192': 8, "
		"'16384': 8, '32768': 8}}");
	free(text);
	text = settings_repr(&s26);
	CU_ASSERT_STRING_EQUAL(text,
		"{'PYTORCH_CUDA_ALLOC_CONF': '', 'max_split_size': -1, 'garbage_collection_threshold': 0.0, "
		"'expandable_segments': False, 'pinned_num_register_threads': 1, 'release_lock_on_cudamalloc': False, "
		"'pinned_use_cuda_host_register': False, 'roundup_power2_divisions': {'1': 0, '2': 0, '4': 0, '8': 0, "
		"'16': 0, '32': 0, '64': 0, '128': 0, '256': 0, '512': 0, '1024': 0, '2048': 0, '4096': 0, "
		"'8192': 0, '16384': 0, '32768': 0}}");
	free(text);
	/* Settings the walk could not read leave the key out. */
	text = settings_repr(NULL);
	CU_ASSERT_STRING_EQUAL(text, "<absent>");
	free(text);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "known fields, extras, frames", test_fields },
		{ "round trip keeps values and key order", test_round_trip },
		{ "legacy bare list with history", test_legacy },
		{ "wrong type names the place", test_bad_type },
		{ "allocator_settings of a walk, 2.6 and 2.14", test_settings_from_walk },
	};

	return UNIT_RUN("snapshot", tests, NULL, NULL);
}

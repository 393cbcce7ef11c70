/* test_json_stream.c - mp_json_read_snapshot: it takes ordinary snapshots and gives what the whole-text
   reader gives; it gives up on what it does not take, and the loader then reads the text the old way. */
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"
#include "mp_json_stream.h"
#include "mp_snapshot_file.h"
#include "unit_main.h"

/* A snapshot as `memprof convert` writes one, with an unknown key, a tag and two devices. */
static const char snapshot[] =
	"{\n"
	"  \"segments\": [\n"
	"    {\"device\": 0, \"address\": 4096, \"total_size\": 3072, \"allocated_size\": 1024, "
	"\"active_size\": 1024, \"requested_size\": 1000, \"stream\": 0, \"segment_type\": \"small\", "
	"\"segment_pool_id\": [0, 0], \"is_expandable\": false, \"frames\": [], \"blocks\": ["
	"{\"address\": 4096, \"size\": 1024, \"requested_size\": 1000, \"state\": \"active_allocated\", "
	"\"frames\": [{\"name\": \"f\", \"filename\": \"a.py\", \"line\": 3}]}, "
	"{\"address\": 5120, \"size\": 2048, \"requested_size\": 0, \"state\": \"inactive\", \"frames\": []}]},\n"
	"    {\"device\": 1, \"address\": 65536, \"total_size\": 512, \"stream\": 7, \"blocks\": "
	"[{\"size\": 512, \"state\": \"inactive\", \"odd\": {\"__tuple__\": [1, {\"__int__\": \"18446744073709551616\"}]}}]}\n"
	"  ],\n"
	"  \"device_traces\": [\n"
	"    [{\"action\": \"alloc\", \"addr\": 4096, \"size\": 1024, \"stream\": 0, \"time_us\": 5, "
	"\"frames\": [{\"name\": \"f\", \"filename\": \"a.py\", \"line\": 3}]}],\n"
	"    []\n"
	"  ],\n"
	"  \"allocator_settings\": {\"expandable_segments\": false},\n"
	"  \"extra\": [1.5, null, \"\\u00e9\"]\n"
	"}\n";

/* SNAP as memprof's JSON text (free() it). */
static char *saved(mp_snapshot *snap)
{
	mp_out out;
	mp_diag diag = { 0 };

	mp_out_init(&out);
	CU_ASSERT_FATAL(mp_snapshot_save(snap, MP_FMT_JSON, &out, &diag) == MP_OK);
	mp_out_putc(&out, '\0');
	return out.data;
}

/* Read TEXT with the stream reader alone (SKIP: the key whose lists are passed over). */
static mp_err stream_read(const char *text, mp_val (*skip)(const mp_heap *), mp_snapshot **out)
{
	mp_heap *heap = mp_heap_new();
	struct mp_json_stream_opts opts = { 0 };
	mp_err err;

	CU_ASSERT_FATAL(heap != NULL);
	opts.skip_key = skip ? skip(heap) : MP_ABSENT;
	err = mp_json_read_snapshot(heap, text, strlen(text), &opts, out);
	if (err != MP_OK)
		mp_heap_free(heap);
	return err;
}

/* Load TEXT through the loader with FLAGS (the stream reader first, or only the old way). */
static mp_err load(const char *text, unsigned flags, mp_snapshot **out, mp_diag *diag)
{
	return mp_snapshot_load_mem("t", (const unsigned char *)text, strlen(text), flags, out, diag);
}

/* TEXT loads through the loader (the stream reader first) as it does the old way alone: the same
   snapshot, or the same error and message. */
static void loads_as_before(const char *text)
{
	mp_snapshot *a = NULL, *b = NULL;
	mp_diag da = { 0 }, db = { 0 };
	mp_err ea = load(text, 0, &a, &da), eb = load(text, MP_LOAD_GENERIC, &b, &db);

	CU_ASSERT_EQUAL(ea, eb);
	CU_ASSERT_STRING_EQUAL(da.msg, db.msg);
	if (ea == MP_OK && eb == MP_OK) {
		char *ta = saved(a), *tb = saved(b);

		CU_ASSERT_STRING_EQUAL(ta, tb);
		free(ta);
		free(tb);
	}
	mp_snapshot_free(a);
	mp_snapshot_free(b);
}

static void test_takes_a_snapshot(void)
{
	mp_snapshot *a = NULL;

	CU_ASSERT_FATAL(stream_read(snapshot, NULL, &a) == MP_OK);
	CU_ASSERT_EQUAL(a->nsegments, 2);
	CU_ASSERT_EQUAL(a->nblocks, 3);
	CU_ASSERT_EQUAL(a->ntrace, 1);
	CU_ASSERT_EQUAL(a->ndevice_traces, 2);
	CU_ASSERT_FALSE(a->projected);
	mp_snapshot_free(a);
	loads_as_before(snapshot);
}

static mp_val frames_key(const mp_heap *heap)
{
	return mp_heap_keys(heap)->frames;
}

/* Without frames (segsum): the frames lists are parsed but not built, in both readers alike. */
static void test_passes_over_frames(void)
{
	mp_snapshot *a = NULL, *b = NULL;
	mp_diag diag = { 0 };

	CU_ASSERT_FATAL(stream_read(snapshot, frames_key, &a) == MP_OK);
	CU_ASSERT_TRUE(a->projected);
	CU_ASSERT_EQUAL(a->blocks[0].frames, MP_SKIPPED);
	CU_ASSERT_EQUAL(a->segments[0].frames, MP_SKIPPED);
	CU_ASSERT_EQUAL(a->trace[0].frames, MP_SKIPPED);
	CU_ASSERT_FATAL(load(snapshot, MP_LOAD_GENERIC | MP_LOAD_NO_FRAMES, &b, &diag) == MP_OK);
	CU_ASSERT_TRUE(b->projected);
	CU_ASSERT_EQUAL(b->blocks[0].frames, MP_SKIPPED);
	mp_snapshot_free(a);
	mp_snapshot_free(b);
	/* A 'frames' that is not a list is still refused, by both. */
	CU_ASSERT_EQUAL(stream_read("{\"segments\": [{\"address\": 0, \"total_size\": 0, \"stream\": 0, "
				    "\"frames\": 3, \"blocks\": []}]}",
				    frames_key, &a),
			MP_E_UNSUPPORTED);
}

/* Inputs the stream reader leaves to the old way: each gives up, and the loader's result (a snapshot or
   an error) is the old way's, message included. */
static void test_gives_up(void)
{
	static const char *const texts[] = {
		"[]",                                          /* a bare list of segments */
		"{\"segments\": [], \"segments\": []}",        /* a repeated key */
		"{\"segments\": [{\"address\": 0, \"total_size\": 0, \"stream\": 0, \"blocks\": "
		"[{\"size\": 1, \"size\": 2, \"state\": \"inactive\"}]}]}", /* in a block */
		"{\"segments\": [{\"__dict__\": [[\"blocks\", []]]}]}", /* a tag where a segment is */
		"{\"segments\": [{\"address\": 0, \"total_size\": 0, \"stream\": 0, \"blocks\": "
		"[{\"__tuple__\": []}]}]}",                    /* a tag where a block is */
		"{\"__tuple__\": [1]}",                        /* a tag at the top */
		"{\"segments\": []} x",                        /* data after the value */
		"{\"segments\": [}",                           /* a syntax error */
		"{\"segments\": [",                            /* cut short */
		"{\"segments\":\f[]}",                         /* whitespace cJSON allows but JSON does not */
		"{\"segments\": [\xef\xbb\xbf]}",              /* a byte order mark inside */
		"{\"segments\": [\"a\\u0000b\"]}",             /* \u0000, which cJSON would cut */
		"{\"settings\": \"\xff\", \"segments\": []}",  /* invalid UTF-8 */
		"{\"device_traces\": []}",                     /* no segments */
		"{\"segments\": {}}",                          /* segments not a list */
		"{\"segments\": [], \"device_traces\": [{}]}", /* a device's list not a list */
		"{}",
	};

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		mp_snapshot *a = NULL;

		CU_ASSERT_EQUAL(stream_read(texts[i], NULL, &a), MP_E_UNSUPPORTED);
		loads_as_before(texts[i]);
	}
}

/* Nesting counts the lists and dicts around a value: a frames list the whole-text reader finds too deep
   is refused by the stream reader too, however deep cJSON finds it alone. */
static void test_depth(void)
{
	const char *head = "{\"segments\": [{\"address\": 0, \"total_size\": 0, \"stream\": 0, \"blocks\": "
			   "[{\"size\": 1, \"state\": \"inactive\", \"frames\": ";
	const char *tail = "}]}]}";
	/* Around the frames list: the top, segments, the segment, blocks, the block. */
	for (size_t levels = MP_JSON_MAX_DEPTH - 6; levels <= MP_JSON_MAX_DEPTH - 4; levels++) {
		size_t n = strlen(head) + 2 * levels + strlen(tail) + 1;
		char *text = malloc(n);
		mp_snapshot *a = NULL;

		CU_ASSERT_FATAL(text != NULL);
		strcpy(text, head);
		memset(text + strlen(head), '[', levels);
		memset(text + strlen(head) + levels, ']', levels);
		strcpy(text + strlen(head) + 2 * levels, tail);
		loads_as_before(text);
		CU_ASSERT_EQUAL(stream_read(text, NULL, &a) == MP_OK, levels <= MP_JSON_MAX_DEPTH - 5);
		mp_snapshot_free(a);
		free(text);
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "takes a snapshot", test_takes_a_snapshot },
		{ "passes over frames", test_passes_over_frames },
		{ "gives up", test_gives_up },
		{ "depth", test_depth },
	};

	return UNIT_RUN("json stream", tests, NULL, NULL);
}

/* test_json.c - mp_json_write / mp_json_read: round trips, exact text, tags and bad input. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_json.h"
#include "unit_main.h"

static mp_heap *heap;

/* ---- building values */

#define S(s) unit_str(heap, s)
#define I(i) unit_int(heap, i)
#define F(d) unit_float(heap, d)

static mp_val SN(const char *s, size_t n)
{
	mp_val v;

	CU_ASSERT_FATAL(mp_heap_str(heap, s, n, &v) == MP_OK);
	return v;
}

static mp_val B(const char *b, size_t n)
{
	mp_val v;

	CU_ASSERT_FATAL(mp_heap_bytes(heap, b, n, &v) == MP_OK);
	return v;
}

/* An int of N bytes of two's complement: FILL bytes under the top byte TOP. */
static mp_val BIG(size_t n, unsigned char fill, unsigned char top)
{
	unsigned char *le = malloc(n);
	mp_val v;

	CU_ASSERT_FATAL(le != NULL);
	memset(le, fill, n);
	le[n - 1] = top;
	CU_ASSERT_FATAL(mp_heap_int_le(heap, le, n, &v) == MP_OK);
	free(le);
	return v;
}

/* A frozen container of TYPE from N items (a dict: N key/value pairs, 2N arguments). */
#define C(type, ...) unit_make(heap, type, __VA_ARGS__)

/* ---- helpers */

/* The JSON text of V (free() it), or NULL with *ERR and DIAG set. */
static char *to_json(mp_val v, mp_err *err, mp_diag *diag)
{
	mp_out out;
	char *text;

	mp_out_init(&out);
	mp_diag_reset(diag);
	*err = mp_json_write(heap, v, &out, diag);
	text = *err == MP_OK ? mp_out_take(&out, NULL) : NULL;
	mp_out_free(&out);
	return text;
}

/* Parse LEN bytes copied to an exact-size buffer (no NUL after them, so
   that the sanitizer catches any read past the end). */
static mp_err from_json(const char *text, size_t len, mp_val *v, mp_diag *diag)
{
	char *copy = malloc(len ? len : 1);
	mp_err err;

	CU_ASSERT_FATAL(copy != NULL);
	memcpy(copy, text, len);
	mp_diag_reset(diag);
	err = mp_json_read(heap, copy, len, MP_ABSENT, v, diag);
	free(copy);
	return err;
}

/* Whether V survives write + read unchanged (Python equality). */
static bool round_trips(mp_val v)
{
	mp_diag diag = { 0 };
	mp_err err;
	char *text = to_json(v, &err, &diag);
	mp_val back = MP_ABSENT;
	bool ok;

	if (text == NULL) {
		fprintf(stderr, "\nwrite: %s\n", diag.msg);
		return false;
	}
	err = from_json(text, strlen(text), &back, &diag);
	ok = err == MP_OK && mp_heap_equal(heap, v, back);
	if (!ok)
		fprintf(stderr, "\nround trip failed (%s): %.300s\n", diag.msg, text);
	free(text);
	return ok;
}

/* Whether V is written as exactly WANT. */
static bool writes_as(mp_val v, const char *want)
{
	mp_diag diag = { 0 };
	mp_err err;
	char *text = to_json(v, &err, &diag);
	bool ok = text != NULL && strcmp(text, want) == 0;

	if (!ok)
		fprintf(stderr, "\ngot  %s\nwant %s\n", text ? text : diag.msg, want);
	free(text);
	return ok;
}

/* Whether TEXT is refused with ERR and a one-line message containing PART. */
static bool refused(const char *text, mp_err want, const char *part)
{
	mp_diag diag = { 0 };
	mp_val v;
	mp_err err = from_json(text, strlen(text), &v, &diag);
	bool ok = err == want && strstr(diag.msg, part) != NULL && strchr(diag.msg, '\n') == NULL &&
		  strncmp(diag.msg, "json: ", 6) == 0;

	if (!ok)
		fprintf(stderr, "\n%.60s: err %d (want %d), msg '%s' (want '%s')\n", text, err, want,
			diag.msg, part);
	return ok;
}

/* Read TEXT; its value in *V. */
static bool reads(const char *text, mp_val *v)
{
	mp_diag diag = { 0 };
	mp_err err = from_json(text, strlen(text), v, &diag);

	if (err != MP_OK)
		fprintf(stderr, "\n%.60s: %s\n", text, diag.msg);
	return err == MP_OK;
}

/* ---- tests */

static void test_atoms(void)
{
	CU_ASSERT(writes_as(C(MP_T_LIST, 4, MP_NONE, MP_TRUE, MP_FALSE, I(-7)),
			    "[null, true, false, -7]\n"));
	CU_ASSERT(writes_as(C(MP_T_LIST, 6, F(0.1), F(1.0), F(-0.0), F(1e300), F(5e-324), F(2.5e-7)),
			    "[0.1, 1.0, -0.0, 1e+300, 5e-324, 2.5e-07]\n"));
	CU_ASSERT(writes_as(C(MP_T_LIST, 3, F(NAN), F(INFINITY), F(-INFINITY)),
			    "[{\"__float__\": \"nan\"}, {\"__float__\": \"inf\"}, "
			    "{\"__float__\": \"-inf\"}]\n"));
	CU_ASSERT(round_trips(C(MP_T_LIST, 7, MP_NONE, MP_TRUE, MP_FALSE, F(0.1), F(1e300),
				F(-2.5), F(INFINITY))));
}

static void test_floats_read(void)
{
	mp_val v;
	const mp_val *items;

	/* Integral numbers within 2^53 read as ints, the documented loss. */
	CU_ASSERT_FATAL(reads("[2.0, 2, 1e300, 0.5, -0.0, 9007199254740992, 1e16, "
			      "{\"__float__\": \"nan\"}]", &v));
	items = mp_heap_items(heap, v);
	CU_ASSERT(mp_val_type(items[0]) == MP_T_INT && mp_val_small_int(items[0]) == 2);
	CU_ASSERT(mp_val_type(items[1]) == MP_T_INT);
	CU_ASSERT(mp_val_type(items[2]) == MP_T_FLOAT);
	CU_ASSERT(mp_val_type(items[3]) == MP_T_FLOAT && mp_heap_float_value(heap, items[3]) == 0.5);
	CU_ASSERT(mp_val_type(items[4]) == MP_T_INT && mp_val_small_int(items[4]) == 0);
	CU_ASSERT(mp_val_type(items[5]) == MP_T_INT);
	CU_ASSERT(mp_val_type(items[6]) == MP_T_FLOAT);
	CU_ASSERT(mp_val_type(items[7]) == MP_T_FLOAT && isnan(mp_heap_float_value(heap, items[7])));
	/* ... which Python equality accepts. */
	CU_ASSERT(round_trips(C(MP_T_DICT, 2, S("threshold"), F(0.0), S("x"), F(3.0))));
}

static void test_ints(void)
{
	int64_t exact = (int64_t)1 << 53;

	CU_ASSERT(writes_as(C(MP_T_LIST, 4, I(exact), I(-exact), I(exact + 1), I(INT64_MIN)),
			    "[9007199254740992, -9007199254740992, "
			    "{\"__int__\": \"9007199254740993\"}, "
			    "{\"__int__\": \"-9223372036854775808\"}]\n"));
	CU_ASSERT(writes_as(C(MP_T_LIST, 3, BIG(9, 0xff, 0x7f), BIG(9, 0x00, 0x80), BIG(9, 0, 1)),
			    "[{\"__int__\": \"2361183241434822606847\"}, "
			    "{\"__int__\": \"-2361183241434822606848\"}, "
			    "{\"__int__\": \"18446744073709551616\"}]\n"));
	CU_ASSERT(round_trips(C(MP_T_LIST, 10, I(0), I(-1), I(exact + 1), I(-exact - 1),
				I(MP_SMALL_INT_MAX), I(MP_SMALL_INT_MIN), I(INT64_MAX), I(INT64_MIN),
				BIG(255, 0xff, 0x7f), BIG(1000, 0x00, 0x80))));
}

static void test_int_limits(void)
{
	mp_diag diag = { 0 };
	mp_err err;
	char *text, *big = malloc(MP_JSON_MAX_INT_DIGITS + 40);
	mp_val v;

	/* 1780 bytes: 4285 digits, writable; 1790 bytes: 4310 digits, not. */
	CU_ASSERT(round_trips(BIG(1780, 0xff, 0x7f)));
	text = to_json(BIG(1790, 0xff, 0x7f), &err, &diag);
	CU_ASSERT(text == NULL && err == MP_E_RANGE && strstr(diag.msg, "4300 digits") != NULL);
	free(text);
	CU_ASSERT_FATAL(big != NULL);
	strcpy(big, "{\"__int__\": \"-");
	memset(big + 14, '9', MP_JSON_MAX_INT_DIGITS);
	strcpy(big + 14 + MP_JSON_MAX_INT_DIGITS, "\"}");
	CU_ASSERT(reads(big, &v) && mp_val_type(v) == MP_T_BIGINT);
	strcpy(big + 14 + MP_JSON_MAX_INT_DIGITS, "9\"}");
	CU_ASSERT(refused(big, MP_E_LIMIT, "4300 digits"));
	free(big);
}

static void test_strings(void)
{
	CU_ASSERT(writes_as(C(MP_T_LIST, 3, S("q\"b\\s/\n\r\t\b\f\x01\x1f\x7f"), S("h\xc3\xa9 \xe2\x82\xac"),
			      S("__tuple__")),
			    "[\"q\\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\", \"h\xc3\xa9 \xe2\x82\xac\", "
			    "\"__tuple__\"]\n"));
	/* NUL and surrogates go in __str__ (cJSON can carry neither). */
	CU_ASSERT(writes_as(C(MP_T_LIST, 2, SN("a\0b", 3), SN("\xed\xa0\x80", 3)),
			    "[{\"__str__\": \"YQBi\"}, {\"__str__\": \"7aCA\"}]\n"));
	CU_ASSERT(round_trips(C(MP_T_LIST, 6, S(""), S("\xf0\x9f\x98\x80 \xe2\x82\xac"),
				SN("a\0b", 3), SN("x\xed\xb3\xbf", 4), S("\x01\"\\"),
				S("{\"__int__\": \"1\"}"))));
}

static void test_bytes(void)
{
	CU_ASSERT(writes_as(C(MP_T_LIST, 4, B("", 0), B("a", 1), B("ab", 2), B("\0\xff\x10", 3)),
			    "[{\"__bytes__\": \"\"}, {\"__bytes__\": \"YQ==\"}, "
			    "{\"__bytes__\": \"YWI=\"}, {\"__bytes__\": \"AP8Q\"}]\n"));
	CU_ASSERT(round_trips(C(MP_T_LIST, 5, B("", 0), B("a", 1), B("ab", 2), B("abc", 3),
				B("\0\xff\x10\x80", 4))));
}

static void test_containers(void)
{
	mp_val t2 = C(MP_T_TUPLE, 2, I(1), S("a"));

	/* A top-level list of containers (a bare segment list) takes a line per item. */
	CU_ASSERT(writes_as(C(MP_T_LIST, 3, C(MP_T_LIST, 0), C(MP_T_DICT, 0), C(MP_T_TUPLE, 0)),
			    "[\n  [],\n  {},\n  {\"__tuple__\": []}\n]\n"));
	CU_ASSERT(writes_as(C(MP_T_DICT, 2, I(1), t2, t2, MP_NONE),
			    "{\"__dict__\": [[1, {\"__tuple__\": [1, \"a\"]}], "
			    "[{\"__tuple__\": [1, \"a\"]}, null]]}\n"));
	/* A real dict shaped like a tag is escaped; with two keys it is not. */
	CU_ASSERT(writes_as(C(MP_T_TUPLE, 2, C(MP_T_DICT, 1, S("__tuple__"), I(1)),
			      C(MP_T_DICT, 2, S("__int__"), S("5"), S("x"), I(1))),
			    "{\"__tuple__\": [{\"__dict__\": [[\"__tuple__\", 1]]}, "
			    "{\"__int__\": \"5\", \"x\": 1}]}\n"));
	CU_ASSERT(round_trips(C(MP_T_LIST, 8, t2, C(MP_T_TUPLE, 1, C(MP_T_TUPLE, 0)),
				C(MP_T_DICT, 1, S("__dict__"), C(MP_T_LIST, 0)),
				C(MP_T_DICT, 1, S("__float__"), S("nan")),
				C(MP_T_DICT, 3, I(5), S("five"), t2, F(1.5), MP_NONE, MP_TRUE),
				C(MP_T_DICT, 1, SN("k\0", 2), I(1)),
				C(MP_T_DICT, 2, S("__tuple__"), I(1), S("b"), C(MP_T_LIST, 1, t2)),
				C(MP_T_DICT, 0))));
}

static void test_pretty(void)
{
	mp_val seg = C(MP_T_DICT, 2, S("address"), I(4096), S("blocks"),
		       C(MP_T_LIST, 1, C(MP_T_DICT, 1, S("size"), I(512))));
	mp_val entry = C(MP_T_DICT, 1, S("action"), S("alloc"));
	mp_val snap = C(MP_T_DICT, 3, S("segments"), C(MP_T_LIST, 2, seg, seg), S("device_traces"),
			C(MP_T_LIST, 2, C(MP_T_LIST, 1, entry), C(MP_T_LIST, 0)), S("allocator_settings"),
			C(MP_T_DICT, 1, S("max_split_size"), I(-1)));

	CU_ASSERT(writes_as(snap, "{\n"
				  "  \"segments\": [\n"
				  "    {\"address\": 4096, \"blocks\": [{\"size\": 512}]},\n"
				  "    {\"address\": 4096, \"blocks\": [{\"size\": 512}]}\n"
				  "  ],\n"
				  "  \"device_traces\": [\n"
				  "    [\n"
				  "      {\"action\": \"alloc\"}\n"
				  "    ],\n"
				  "    []\n"
				  "  ],\n"
				  "  \"allocator_settings\": {\"max_split_size\": -1}\n"
				  "}\n"));
	CU_ASSERT(round_trips(snap));
}

/* N lists nested in each other, or N tuples when TUPLES. */
static mp_val nested(size_t n, bool tuples)
{
	mp_val v = C(tuples ? MP_T_TUPLE : MP_T_LIST, 0);

	for (size_t i = 1; i < n; i++)
		v = C(tuples ? MP_T_TUPLE : MP_T_LIST, 1, v);
	return v;
}

static void test_depth(void)
{
	mp_diag diag = { 0 };
	mp_err err;
	char *text, deep[2100];

	CU_ASSERT(round_trips(nested(MP_JSON_MAX_DEPTH, false)));
	CU_ASSERT(round_trips(nested(MP_JSON_MAX_DEPTH / 2, true))); /* a tuple takes 2 levels */
	text = to_json(nested(MP_JSON_MAX_DEPTH + 1, false), &err, &diag);
	CU_ASSERT(text == NULL && err == MP_E_LIMIT && strstr(diag.msg, "1000 levels") != NULL);
	free(text);
	text = to_json(nested(MP_JSON_MAX_DEPTH / 2 + 1, true), &err, &diag);
	CU_ASSERT(text == NULL && err == MP_E_LIMIT);
	free(text);
	text = to_json(C(MP_T_LIST, 1, C(MP_T_DICT, 1, S("a"), nested(MP_JSON_MAX_DEPTH - 1, false))),
		       &err, &diag);
	CU_ASSERT(text == NULL && err == MP_E_LIMIT && strstr(diag.msg, "[0]['a'][0]") != NULL);
	free(text);
	memset(deep, '[', 1001);
	memset(deep + 1001, ']', 1001);
	deep[2002] = '\0';
	CU_ASSERT(refused(deep, MP_E_LIMIT, "deeper than 1000 levels"));
}

/* LEVELS lists of 10 copies of the level below (one handle each): 10^LEVELS ints. */
static mp_val laughs(int levels)
{
	mp_val v = I(7), ten[10];

	for (int l = 0; l < levels; l++) {
		for (int i = 0; i < 10; i++)
			ten[i] = v;
		CU_ASSERT_FATAL(mp_heap_make(heap, MP_T_LIST, ten, 10, &v) == MP_OK);
	}
	return v;
}

static void test_expansion_limit(void)
{
	mp_diag diag = { 0 };
	mp_err err;
	char *text;

	CU_ASSERT(round_trips(laughs(4)));
	text = to_json(C(MP_T_DICT, 1, S("lol"), laughs(10)), &err, &diag);
	CU_ASSERT(text == NULL && err == MP_E_LIMIT && strstr(diag.msg, "expand to 11111111113 values") != NULL);
	free(text);
	text = to_json(laughs(40), &err, &diag);
	CU_ASSERT(text == NULL && err == MP_E_LIMIT && strstr(diag.msg, "more than 2^64") != NULL);
	free(text);
}

static void test_unhashable_key(void)
{
	mp_diag diag = { 0 };
	mp_err err;
	char *text = to_json(C(MP_T_DICT, 1, S("x"), C(MP_T_DICT, 2, I(1), I(1),
						       C(MP_T_TUPLE, 1, C(MP_T_LIST, 0)), I(2))),
			     &err, &diag);

	CU_ASSERT(text == NULL && err == MP_E_TYPE && strstr(diag.msg, "['x'][1]") != NULL);
	free(text);
}

static void test_bad_input(void)
{
	CU_ASSERT(refused("", MP_E_TRUNCATED, "empty"));
	CU_ASSERT(refused(" \n\t", MP_E_TRUNCATED, "empty"));
	CU_ASSERT(refused("{x", MP_E_CORRUPT, "syntax error at line 1"));
	CU_ASSERT(refused("[1,\n2,\n", MP_E_CORRUPT, "line"));
	CU_ASSERT(refused("[1, 2", MP_E_CORRUPT, "syntax error"));
	CU_ASSERT(refused("{} x", MP_E_CORRUPT, "after the value"));
	CU_ASSERT(refused("[NaN]", MP_E_CORRUPT, "syntax error"));
	CU_ASSERT(refused("\"\xff\"", MP_E_CORRUPT, "UTF-8"));
	CU_ASSERT(refused("{\"\xc0\x80\": 1}", MP_E_CORRUPT, "UTF-8"));
	CU_ASSERT(refused("\"\xed\xa0\x80\"", MP_E_CORRUPT, "UTF-8"));
	CU_ASSERT(refused("[\"a\\u0000b\"]", MP_E_CORRUPT, "\\u0000"));
	CU_ASSERT(refused("{\"__tuple__\": 1}", MP_E_CORRUPT, "__tuple__ needs a list"));
	CU_ASSERT(refused("{\"__bytes__\": \"abc\"}", MP_E_CORRUPT, "base64"));
	CU_ASSERT(refused("{\"__bytes__\": 5}", MP_E_CORRUPT, "needs a string"));
	CU_ASSERT(refused("{\"__str__\": \"/w==\"}", MP_E_CORRUPT, "UTF-8"));
	CU_ASSERT(refused("{\"__int__\": \"12a\"}", MP_E_CORRUPT, "decimal"));
	CU_ASSERT(refused("{\"__int__\": \"-\"}", MP_E_CORRUPT, "decimal"));
	CU_ASSERT(refused("{\"__float__\": \"1.5\"}", MP_E_CORRUPT, "__float__"));
	CU_ASSERT(refused("{\"__dict__\": [[1]]}", MP_E_CORRUPT, "[key, value]"));
	CU_ASSERT(refused("{\"__dict__\": [1]}", MP_E_CORRUPT, "[key, value]"));
	CU_ASSERT(refused("{\"__dict__\": [[[1], 2]]}", MP_E_CORRUPT, "unhashable"));
	CU_ASSERT(refused("{\"__dict__\": [[{\"__tuple__\": [{}]}, 2]]}", MP_E_CORRUPT, "unhashable"));
	CU_ASSERT(refused("{\"a\": [1, {\"__int__\": \"x\"}]}", MP_E_CORRUPT, "at ['a'][1]"));
	CU_ASSERT(refused("{\"__dict__\": [[1, 2], [3, {\"__int__\": \"x\"}]]}", MP_E_CORRUPT,
			  "at [1][1]"));
}

static void test_nul_byte(void)
{
	mp_diag diag = { 0 };
	mp_val v;

	CU_ASSERT(from_json("[\"a\0\"]", 6, &v, &diag) == MP_E_CORRUPT);
	CU_ASSERT(strstr(diag.msg, "NUL byte") != NULL);
	/* An escaped backslash before u0000 is not an escape of NUL. */
	CU_ASSERT(reads("[\"\\\\u0000\"]", &v) &&
		  mp_heap_equal(heap, v, C(MP_T_LIST, 1, S("\\u0000"))));
	/* A byte order mark and surrounding space are fine. */
	CU_ASSERT(reads("\xef\xbb\xbf [1]\n\n", &v) && mp_heap_equal(heap, v, C(MP_T_LIST, 1, I(1))));
}

static void test_shared_and_duplicates(void)
{
	mp_val v, frames = C(MP_T_LIST, 1, C(MP_T_DICT, 1, S("line"), I(3)));
	const mp_val *items;

	/* Equal containers read back as one handle (hash-consing). */
	CU_ASSERT_FATAL(reads("[[{\"line\": 3}], [{\"line\": 3}]]", &v));
	items = mp_heap_items(heap, v);
	CU_ASSERT(items[0] == items[1] && items[0] == frames);
	/* A repeated key keeps its first place and its last value, as Python does. */
	CU_ASSERT(reads("{\"a\": 1, \"b\": 2, \"a\": 3}", &v));
	CU_ASSERT(mp_heap_len(heap, v) == 2 &&
		  mp_heap_equal(heap, v, C(MP_T_DICT, 2, S("a"), I(3), S("b"), I(2))));
}

/* A snapshot-shaped value of N blocks whose frames repeat. */
static mp_val snapshot_like(size_t n)
{
	mp_val blocks, fr[3];

	for (int k = 0; k < 3; k++)
		fr[k] = C(MP_T_LIST, 1,
			  C(MP_T_DICT, 3, S("name"), S(k ? "forward" : "main"), S("filename"),
			    S("model.py"), S("line"), I(10 + k)));
	CU_ASSERT_FATAL(mp_heap_open(heap, MP_T_LIST, &blocks) == MP_OK);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_FATAL(mp_heap_append(heap, blocks,
					       C(MP_T_DICT, 4, S("address"), I((int64_t)i * 512),
						 S("size"), I(512), S("state"), S("active_allocated"),
						 S("frames"), fr[i % 3])) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_freeze(heap, blocks, &blocks) == MP_OK);
	return C(MP_T_DICT, 2, S("segments"),
		 C(MP_T_LIST, 1, C(MP_T_DICT, 2, S("segment_pool_id"), C(MP_T_LIST, 2, I(0), I(0)),
				   S("blocks"), blocks)),
		 S("device_traces"), C(MP_T_LIST, 0));
}

static void test_big_value(void)
{
	CU_ASSERT(round_trips(snapshot_like(100000)));
}

/* The output is strict JSON that Python's json module takes, with the value expected. */
static void test_python_reads_it(void)
{
	char path[] = "/tmp/test_json.XXXXXX", cmd[4096];
	const char *py = getenv("PYTHON") ? getenv("PYTHON") : "python3";
	mp_diag diag = { 0 };
	mp_err err;
	char *text = to_json(C(MP_T_DICT, 3, S("s"), S("h\xc3\xa9\n\x01"), S("t"),
			       C(MP_T_TUPLE, 2, F(0.1), I(1)), S("b"), BIG(9, 0, 1)),
			     &err, &diag);
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(text != NULL && fd >= 0);
	CU_ASSERT(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof cmd,
		 "'%s' -c 'import json, sys; v = json.load(open(sys.argv[1], encoding=\"utf-8\")); "
		 "sys.exit(v != {\"s\": \"h\\u00e9\\n\\x01\", \"t\": {\"__tuple__\": [0.1, 1]}, "
		 "\"b\": {\"__int__\": str(2**64)}})' '%s'",
		 py, path);
	CU_ASSERT(system(cmd) == 0);
	unlink(path);
	free(text);
}

/* ---- main */

static int suite_init(void)
{
	heap = mp_heap_new();
	return heap == NULL ? -1 : 0;
}

static int suite_clean(void)
{
	mp_heap_free(heap);
	return 0;
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "atoms", test_atoms },
		{ "floats read", test_floats_read },
		{ "ints", test_ints },
		{ "int limits", test_int_limits },
		{ "strings", test_strings },
		{ "bytes", test_bytes },
		{ "containers", test_containers },
		{ "pretty", test_pretty },
		{ "depth", test_depth },
		{ "expansion limit", test_expansion_limit },
		{ "unhashable key", test_unhashable_key },
		{ "bad input", test_bad_input },
		{ "NUL bytes", test_nul_byte },
		{ "shared and duplicates", test_shared_and_duplicates },
		{ "big value", test_big_value },
		{ "python reads it", test_python_reads_it },
	};

	return UNIT_RUN("json", tests, suite_init, suite_clean);
}

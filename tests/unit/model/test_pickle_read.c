/* test_pickle_read.c - the pickle machine on CPython's own output and on hostile input. */
#include <stdlib.h>
#include <string.h>

#include "mp_pickle_read.h"
#include "mp_value.h"
#include "pickle_vectors.h"
#include "unit_main.h"

static mp_heap *heap;

static mp_err load_opts(const unsigned char *data, size_t len, mp_val *root, bool skip_frames,
		       mp_diag *diag)
{
	struct mp_pickle_opts opts = { 0 };
	mp_val frames;

	mp_heap_free(heap);
	heap = mp_heap_new();
	memset(diag, 0, sizeof *diag);
	frames = mp_heap_keys(heap)->frames;
	opts.skip_keys = &frames;
	opts.nskip_keys = skip_frames;
	return mp_pickle_read(heap, data, len, root, &opts, diag);
}

static mp_err load(const unsigned char *data, size_t len, mp_val *root, mp_diag *diag)
{
	return load_opts(data, len, root, false, diag);
}

#define str(s) unit_str(heap, s)

static int64_t int_at(mp_val list, size_t i)
{
	int64_t v = 0;

	CU_ASSERT(mp_heap_get_i64(heap, mp_heap_items(heap, list)[i], &v));
	return v;
}

static void check_small_dict(const unsigned char *data, size_t len)
{
	mp_val root, b, c;
	mp_diag diag;

	CU_ASSERT_FATAL(load(data, len, &root, &diag) == MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_val_type(root), MP_T_DICT);
	CU_ASSERT_EQUAL(mp_heap_len(heap, root), 3);
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, root, str("a")), mp_val_from_small_int(1));
	b = mp_heap_dict_get(heap, root, str("b"));
	CU_ASSERT_EQUAL_FATAL(mp_val_type(b), MP_T_LIST);
	CU_ASSERT_EQUAL(mp_heap_len(heap, b), 3);
	CU_ASSERT_EQUAL(int_at(b, 2), 3);
	c = mp_heap_dict_get(heap, root, str("c"));
	CU_ASSERT_EQUAL(mp_val_type(c), MP_T_TUPLE);
	CU_ASSERT_EQUAL(mp_heap_len(heap, c), 2);
	/* keys keep their order */
	CU_ASSERT_EQUAL(mp_heap_items(heap, root)[0], str("a"));
	CU_ASSERT_EQUAL(mp_heap_items(heap, root)[4], str("c"));
}

static void test_protocols(void)
{
	check_small_dict(vec_dict_p2, sizeof vec_dict_p2);
	check_small_dict(vec_dict_p4, sizeof vec_dict_p4);
	check_small_dict(vec_dict_p5, sizeof vec_dict_p5);
}

static void test_ints(void)
{
	static const int64_t want[] = { 0, 255, 256, 65535, 65536, -1, 2147483647LL, -2147483648LL,
					2147483648LL, 1LL << 59, -(1LL << 59) - 1, INT64_MAX, INT64_MIN };
	mp_val root;
	mp_diag diag;
	size_t n = sizeof want / sizeof want[0];
	int64_t v;

	CU_ASSERT_FATAL(load(vec_ints, sizeof vec_ints, &root, &diag) == MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_heap_len(heap, root), n + 2);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(int_at(root, i), want[i]);
	/* 2**64 and -2**100 do not fit in 64 bits but are kept exactly */
	CU_ASSERT_EQUAL(mp_val_type(mp_heap_items(heap, root)[n]), MP_T_BIGINT);
	CU_ASSERT_FALSE(mp_heap_get_i64(heap, mp_heap_items(heap, root)[n], &v));
	CU_ASSERT_EQUAL(mp_val_type(mp_heap_items(heap, root)[n + 1]), MP_T_BIGINT);
}

static void test_atoms(void)
{
	mp_val root;
	mp_diag diag;
	const mp_val *it;
	size_t len;

	CU_ASSERT_FATAL(load(vec_atoms, sizeof vec_atoms, &root, &diag) == MP_OK);
	it = mp_heap_items(heap, root);
	CU_ASSERT_EQUAL(it[0], MP_NONE);
	CU_ASSERT_EQUAL(it[1], MP_TRUE);
	CU_ASSERT_EQUAL(it[2], MP_FALSE);
	CU_ASSERT_DOUBLE_EQUAL(mp_heap_float_value(heap, it[3]), 1.5, 0);
	CU_ASSERT_STRING_EQUAL(mp_heap_atom(heap, it[5], &len), "é中");
	CU_ASSERT_EQUAL(len, strlen("é中"));
	CU_ASSERT_EQUAL(mp_val_type(it[6]), MP_T_BYTES);
	CU_ASSERT_EQUAL(mp_heap_len(heap, it[8]), 0);
}

static void test_sharing(void)
{
	mp_val root, inner;
	mp_diag diag;
	const mp_val *it;

	CU_ASSERT_FATAL(load(vec_shared, sizeof vec_shared, &root, &diag) == MP_OK);
	it = mp_heap_items(heap, root);
	/* the same list object referenced three times is one value */
	CU_ASSERT_EQUAL(it[0], it[1]);
	inner = mp_heap_dict_get(heap, it[2], str("x"));
	CU_ASSERT_EQUAL(inner, it[0]);
	/* equal frame dicts that were distinct objects are interned into one */
	CU_ASSERT_FATAL(load(vec_duplicate_frames, sizeof vec_duplicate_frames, &root, &diag) == MP_OK);
	it = mp_heap_items(heap, root);
	CU_ASSERT_EQUAL(it[0], it[1]);
}

static void expect_error(const unsigned char *data, size_t len, mp_err want, const char *needle)
{
	mp_val root;
	mp_diag diag;
	mp_err err = load(data, len, &root, &diag);

	CU_ASSERT_EQUAL(err, want);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, needle));
	if (err != want || strstr(diag.msg, needle) == NULL)
		fprintf(stderr, "\n  got %d '%s', wanted %d '%s'\n", err, diag.msg, want, needle);
}

static void test_refuses_code(void)
{
	/* pickle.dumps(os.system) style: GLOBAL 'posix\nsystem\n' */
	static const unsigned char global[] = "\x80\x02" "cposix\nsystem\n" "q\x00.";
	static const unsigned char reduce[] = "\x80\x04" "N)R.";
	static const unsigned char build[] = "\x80\x04" "}}b.";
	static const unsigned char stack_global[] = "\x80\x04\x8c\x01" "a" "\x8c\x01" "b" "\x93.";

	expect_error(global, sizeof global - 1, MP_E_UNSUPPORTED, "GLOBAL (0x63) at byte 2");
	expect_error(reduce, sizeof reduce - 1, MP_E_UNSUPPORTED, "REDUCE (0x52) at byte 4");
	expect_error(build, sizeof build - 1, MP_E_UNSUPPORTED, "BUILD");
	expect_error(stack_global, sizeof stack_global - 1, MP_E_UNSUPPORTED, "STACK_GLOBAL");
}

static void test_truncation_everywhere(void)
{
	/* every proper prefix of a valid pickle fails cleanly */
	for (size_t n = 0; n < sizeof vec_dict_p4; n++) {
		mp_val root;
		mp_diag diag;
		mp_err err = load(vec_dict_p4, n, &root, &diag);

		CU_ASSERT(err == MP_E_TRUNCATED || err == MP_E_CORRUPT);
		CU_ASSERT(diag.msg[0] != '\0');
	}
}

static void test_hostile(void)
{
	static const unsigned char huge_str[] = "\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f" "abc.";
	static const unsigned char huge_frame[] = "\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xffN.";
	static const unsigned char bad_get[] = "\x80\x04h\x05.";
	static const unsigned char bad_put[] = "\x80\x04Nr\xff\xff\xff\xff.";
	static const unsigned char underflow[] = "\x80\x04]a.";
	static const unsigned char empty_stop[] = "\x80\x04.";
	static const unsigned char cycle[] = "\x80\x04]\x94h\x00" "a.";
	static const unsigned char bad_utf8[] = "\x80\x04\x8c\x02\xc3\x28.";
	static const unsigned char no_mark[] = "\x80\x04]e.";
	static const unsigned char proto9[] = "\x80\x09N.";

	expect_error(huge_str, sizeof huge_str - 1, MP_E_TRUNCATED, "byte 2");
	expect_error(huge_frame, sizeof huge_frame - 1, MP_E_TRUNCATED, "byte 2");
	expect_error(bad_get, sizeof bad_get - 1, MP_E_CORRUPT, "memo index 5 not defined");
	expect_error(bad_put, sizeof bad_put - 1, MP_E_LIMIT, "memo index");
	expect_error(underflow, sizeof underflow - 1, MP_E_CORRUPT, "stack underflow");
	expect_error(empty_stop, sizeof empty_stop - 1, MP_E_CORRUPT, "STOP with nothing");
	expect_error(cycle, sizeof cycle - 1, MP_E_UNSUPPORTED, "cycle");
	expect_error(bad_utf8, sizeof bad_utf8 - 1, MP_E_CORRUPT, "UTF-8");
	expect_error(no_mark, sizeof no_mark - 1, MP_E_CORRUPT, "no mark");
	expect_error(proto9, sizeof proto9 - 1, MP_E_UNSUPPORTED, "protocol 9");
}

static void test_deep_nesting(void)
{
	/* 200,000 nested lists built then closed: bounded work, no recursion */
	size_t depth = 200000, n = 2 + depth * 2 + 1;
	unsigned char *p = malloc(n + depth), *q = p;
	mp_val root;
	mp_diag diag;

	*q++ = 0x80, *q++ = 4;
	for (size_t i = 0; i < depth; i++)
		*q++ = ']';
	for (size_t i = 1; i < depth; i++)
		*q++ = 'a';
	*q++ = '.';
	CU_ASSERT_EQUAL(load(p, (size_t)(q - p), &root, &diag), MP_OK);
	CU_ASSERT_EQUAL(mp_val_type(root), MP_T_LIST);
	free(p);
}

static void test_skip_frames(void)
{
	mp_val root, seg, blk, trace;
	mp_diag diag;

	/* the projection passes over frames and keeps everything else */
	CU_ASSERT_FATAL(load_opts(vec_snapshot, sizeof vec_snapshot, &root, true, &diag) == MP_OK || (fprintf(stderr, "%s\n", diag.msg), 0));
	seg = mp_heap_items(heap, mp_heap_dict_get(heap, root, str("segments")))[0];
	blk = mp_heap_items(heap, mp_heap_dict_get(heap, seg, str("blocks")))[0];
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, blk, str("frames")), MP_SKIPPED);
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, blk, str("size")), mp_val_from_small_int(512));
	CU_ASSERT_EQUAL(mp_heap_len(heap, mp_heap_dict_get(heap, blk, str("mystery"))), 2);
	CU_ASSERT_EQUAL(mp_heap_len(heap, mp_heap_dict_get(heap, seg, str("blocks"))), 2);
	CU_ASSERT_STRING_EQUAL(mp_heap_atom(heap, mp_heap_dict_get(heap, seg, str("extra_seg")), NULL), "kept");
	trace = mp_heap_items(heap, mp_heap_items(heap, mp_heap_dict_get(heap, root, str("device_traces")))[0])[0];
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, trace, str("frames")), MP_SKIPPED);
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, trace, str("time_us")), mp_val_from_small_int(7));
	/* a string first seen inside skipped frames is built when wanted later */
	CU_ASSERT_FATAL(load_opts(vec_lazy, sizeof vec_lazy, &root, true, &diag) == MP_OK);
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, root, str("frames")), MP_SKIPPED);
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, root, str("other")), str("lazyword"));
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, root, str("n")), mp_val_from_small_int(7));
	/* and every prefix still fails cleanly with the projection on */
	for (size_t n = 0; n < sizeof vec_snapshot; n++)
		CU_ASSERT_NOT_EQUAL(load_opts(vec_snapshot, n, &root, true, &diag), MP_OK);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "protocols 2, 4, 5", test_protocols },
		{ "ints incl. LONG1/LONG4", test_ints },
		{ "atoms", test_atoms },
		{ "memo sharing and interning", test_sharing },
		{ "code opcodes refused", test_refuses_code },
		{ "truncation at every length", test_truncation_everywhere },
		{ "hostile pickles", test_hostile },
		{ "deep nesting", test_deep_nesting },
		{ "skipping frames (projection)", test_skip_frames },
	};
	int status;

	status = UNIT_RUN("pickle_read", tests, NULL, NULL);
	mp_heap_free(heap);
	return status;
}

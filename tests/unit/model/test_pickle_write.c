/* test_pickle_write.c - mp_pickle_write output checked by CPython's pickle.load and pickletools. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_pickle_write.h"
#include "unit_main.h"

/* The checker: loads argv[1] with pickle, compares it strictly (types, key
   order, NaN == NaN) with the Python expression in argv[2] (or calls it, if
   it is a lambda), refuses any opcode outside the memory_viz-safe set, and
   requires the opcodes listed in argv[3] (comma-separated, may be empty);
   "EXACT" there also requires the bytes of CPython's pickle.dumps(x, 4). */
static const char checker_py[] =
	"import math, pickle, pickletools, sys\n"
	"ALLOWED = set('PROTO FRAME STOP MARK EMPTY_DICT EMPTY_LIST EMPTY_TUPLE TUPLE1 TUPLE2 TUPLE3 '\n"
	"  'TUPLE SETITEM SETITEMS APPEND APPENDS BININT BININT1 BININT2 LONG1 NONE NEWTRUE '\n"
	"  'NEWFALSE BINFLOAT SHORT_BINUNICODE BINUNICODE MEMOIZE BINGET LONG_BINGET'.split())\n"
	"def depth(v):\n"
	"    d = 0\n"
	"    while isinstance(v, list) and v:\n"
	"        v, d = v[0], d + 1\n"
	"    return d + isinstance(v, list)\n"
	"def same(a, b):\n"
	"    if type(a) is not type(b): return False\n"
	"    if isinstance(a, float):\n"
	"        return (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b))\n"
	"    if isinstance(a, (list, tuple)):\n"
	"        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))\n"
	"    if isinstance(a, dict):\n"
	"        return len(a) == len(b) and all(same(k, l) and same(v, w)\n"
	"            for (k, v), (l, w) in zip(a.items(), b.items()))\n"
	"    return a == b\n"
	"data = open(sys.argv[1], 'rb').read()\n"
	"want = eval(open(sys.argv[2]).read())\n"
	"need = [x for x in sys.argv[3].split(',') if x]\n"
	"ops = [op.name for op, arg, pos in pickletools.genops(data)]\n"
	"assert data[:2] == b'\\x80\\x04', data[:2]\n"
	"assert set(ops) <= ALLOWED, set(ops) - ALLOWED\n"
	"for n in need:\n"
	"    if n == 'EXACT':\n"
	"        ref = pickle.dumps(want, 4)\n"
	"        at = next((i for i in range(min(len(data), len(ref))) if data[i] != ref[i]), None)\n"
	"        assert data == ref, ('differs from CPython at byte', at, len(data), len(ref))\n"
	"    else:\n"
	"        assert n in ops, n + ' not used'\n"
	"got = pickle.loads(data)\n"
	"ok = want(got) if callable(want) else same(got, want)\n"
	"if not ok: print('got', repr(got)[:500]); print('want', repr(want)[:500])\n"
	"sys.exit(0 if ok else 1)\n";

static mp_heap *heap;
static char dir[] = "/tmp/test_pickle_write.XXXXXX";
static char checker[4096];

/* ---- building values */

#define S(s) unit_str(heap, s)
#define I(i) unit_int(heap, i)
#define F(d) unit_float(heap, d)

/* A frozen container of TYPE from N items (a dict: N key/value pairs, 2N arguments). */
#define C(type, ...) unit_make(heap, type, __VA_ARGS__)

/* ---- writing and checking */

static mp_err write_file(mp_val v, const char *path, mp_diag *diag)
{
	FILE *f = fopen(path, "wb");
	mp_out out;
	mp_err err;

	CU_ASSERT_FATAL(f != NULL);
	mp_out_init_file(&out, f);
	mp_diag_reset(diag);
	err = mp_pickle_write(heap, v, &out, diag);
	if (mp_out_flush(&out) != MP_OK)
		err = MP_E_ERRNO;
	mp_out_free(&out);
	fclose(f);
	return err;
}

/* Write V, then let CPython load it and compare with the Python expression WANT. */
static bool py_check(mp_val v, const char *want, const char *need)
{
	char pk[4096], ex[4096], cmd[16384];
	const char *py = getenv("PYTHON") ? getenv("PYTHON") : "python3";
	mp_diag diag = { 0 };
	FILE *f;

	snprintf(pk, sizeof pk, "%s/out.pickle", dir);
	snprintf(ex, sizeof ex, "%s/want.py", dir);
	if (write_file(v, pk, &diag) != MP_OK) {
		fprintf(stderr, "\nmp_pickle_write failed: %s\n", diag.msg);
		return false;
	}
	f = fopen(ex, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(want, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s' '%s'", py, checker, pk, ex, need ? need : "");
	return system(cmd) == 0;
}

/* The bytes mp_pickle_write gives for V (free() them). */
static char *pickle_bytes(mp_val v, size_t *len, mp_err *err, mp_diag *diag)
{
	mp_out out;
	char *data;

	mp_out_init(&out);
	mp_diag_reset(diag);
	*err = mp_pickle_write(heap, v, &out, diag);
	data = mp_out_take(&out, len);
	mp_out_free(&out);
	return data;
}

static size_t count_occurrences(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle), count = 0;

	for (size_t i = 0; i + k <= n; i++)
		count += memcmp(hay + i, needle, k) == 0;
	return count;
}

/* ---- tests */

static void test_atoms(void)
{
	CU_ASSERT(py_check(MP_NONE, "None", "EXACT"));
	CU_ASSERT(py_check(MP_TRUE, "True", "EXACT"));
	CU_ASSERT(py_check(C(MP_T_LIST, 2, MP_TRUE, MP_FALSE), "[True, False]", "EXACT"));
	CU_ASSERT(py_check(F(1.5), "1.5", "EXACT"));
	CU_ASSERT(py_check(C(MP_T_LIST, 7, F(NAN), F(INFINITY), F(-INFINITY), F(-0.0), F(5e-324),
			     F(1e300), F(0.1)),
			   "[float('nan'), float('inf'), float('-inf'), -0.0, 5e-324, 1e300, 0.1]",
			   "BINFLOAT"));
}

static void test_ints(void)
{
	static const int64_t v[] = { 0, 1, 255, 256, 65535, 65536, -1, -255, -256,
				     INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1,
				     (int64_t)INT32_MIN - 1, MP_SMALL_INT_MAX, MP_SMALL_INT_MIN,
				     MP_SMALL_INT_MAX + 1, MP_SMALL_INT_MIN - 1, INT64_MAX, INT64_MIN,
				     140737488355328, 139637976727552 };
	const size_t n = sizeof v / sizeof v[0];
	mp_val list;
	char want[2048];
	size_t at = 0;

	CU_ASSERT_FATAL(mp_heap_open(heap, MP_T_LIST, &list) == MP_OK);
	at += (size_t)snprintf(want + at, sizeof want - at, "[");
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_FATAL(mp_heap_append(heap, list, I(v[i])) == MP_OK);
		at += (size_t)snprintf(want + at, sizeof want - at, "%lld, ", (long long)v[i]);
	}
	snprintf(want + at, sizeof want - at, "]");
	CU_ASSERT_FATAL(mp_heap_freeze(heap, list, &list) == MP_OK);
	CU_ASSERT(py_check(list, want, "EXACT,BININT1,BININT2,BININT,LONG1"));
}

/* An int of N bytes: 0x7f followed by N-1 0xff bytes, big-endian (2**(8N-1) - 1). */
static mp_val big_positive(size_t n)
{
	unsigned char le[400];
	mp_val v;

	memset(le, 0xff, n);
	le[n - 1] = 0x7f;
	CU_ASSERT_FATAL(mp_heap_int_le(heap, le, n, &v) == MP_OK);
	return v;
}

static void test_bigints(void)
{
	unsigned char le[9] = { 0, 0, 0, 0, 0, 0, 0, 0, 0x80 }; /* -2**71 */
	mp_val neg;
	mp_diag diag = { 0 };
	mp_err err;
	size_t len;
	char *data;

	CU_ASSERT_FATAL(mp_heap_int_le(heap, le, 9, &neg) == MP_OK);
	CU_ASSERT(py_check(C(MP_T_LIST, 3, big_positive(9), neg, big_positive(255)),
			   "[2**71 - 1, -2**71, 2**(8*255-1) - 1]", "EXACT,LONG1"));
	data = pickle_bytes(C(MP_T_DICT, 1, S("x"), C(MP_T_LIST, 2, I(1), big_positive(256))), &len,
			    &err, &diag);
	free(data);
	CU_ASSERT(err == MP_E_RANGE);
	CU_ASSERT(strstr(diag.msg, "needs 256 bytes") != NULL);
	CU_ASSERT(strstr(diag.msg, "['x'][1]") != NULL);
	CU_ASSERT(strchr(diag.msg, '\n') == NULL);
}

static void test_strings(void)
{
	char *big = malloc(70001), *mid = malloc(300);
	mp_val vbig, vmid, vsur;

	CU_ASSERT_FATAL(big != NULL && mid != NULL);
	memset(big, 'x', 70000);
	big[70000] = '\0';
	memset(mid, 'y', 299);
	mid[299] = '\0';
	vbig = S(big);
	vmid = S(mid);
	/* '\ud800' as CPython's surrogatepass encoder writes it */
	CU_ASSERT_FATAL(mp_heap_str(heap, "a\xed\xa0\x80", 4, &vsur) == MP_OK);
	CU_ASSERT(py_check(C(MP_T_LIST, 5, S(""), S("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"), vmid,
			     vsur, S("'\"\\\n\t")),
			   "['', 'h\\u00e9llo \\u20ac \\U0001F600', 'y' * 299, 'a\\ud800', '\\'\"\\\\\\n\\t']",
			   "EXACT,SHORT_BINUNICODE,BINUNICODE"));
	/* 70000 bytes leave the frame, CPython-style; the memo still covers it. */
	CU_ASSERT(py_check(C(MP_T_LIST, 3, vbig, I(1), vbig),
			   "lambda v: v == ['x' * 70000, 1, 'x' * 70000] and v[0] is v[2]",
			   "FRAME,BINGET"));
	CU_ASSERT(py_check(C(MP_T_LIST, 3, vbig, I(1), vmid), "['x' * 70000, 1, 'y' * 299]", "EXACT"));
	free(big);
	free(mid);
}

static void test_containers(void)
{
	mp_val t1 = C(MP_T_TUPLE, 1, I(1)), t4 = C(MP_T_TUPLE, 4, I(1), I(2), I(3), I(4));

	CU_ASSERT(py_check(C(MP_T_LIST, 3, C(MP_T_LIST, 0), C(MP_T_DICT, 0), C(MP_T_TUPLE, 0)),
			   "[[], {}, ()]", "EXACT"));
	CU_ASSERT(py_check(C(MP_T_LIST, 5, t1, C(MP_T_TUPLE, 2, I(1), I(2)),
			     C(MP_T_TUPLE, 3, I(1), S("a"), MP_NONE), t4,
			     C(MP_T_TUPLE, 2, t1, C(MP_T_TUPLE, 0))),
			   "[(1,), (1, 2), (1, 'a', None), (1, 2, 3, 4), ((1,), ())]",
			   "EXACT,TUPLE1,TUPLE2,TUPLE3,TUPLE,EMPTY_TUPLE"));
	CU_ASSERT(py_check(C(MP_T_DICT, 4, I(7), S("int"), t4, S("tuple"), MP_NONE, MP_TRUE,
			     S("k"), C(MP_T_LIST, 1, F(2.5))),
			   "{7: 'int', (1, 2, 3, 4): 'tuple', None: True, 'k': [2.5]}",
			   "EXACT,SETITEMS,APPEND"));
	CU_ASSERT(py_check(C(MP_T_DICT, 1, S("only"), I(1)), "{'only': 1}", "EXACT,SETITEM"));
}

/* Lists and dicts of N items, appended in CPython's batches of 1000. */
static void check_batches(size_t n, const char *need)
{
	mp_val list, dict, v;
	char want[512];

	CU_ASSERT_FATAL(mp_heap_open(heap, MP_T_LIST, &list) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_open(heap, MP_T_DICT, &dict) == MP_OK);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_FATAL(mp_heap_append(heap, list, I((int64_t)i * 1000)) == MP_OK);
		CU_ASSERT_FATAL(mp_heap_setitem(heap, dict, I((int64_t)i), S("v")) == MP_OK);
	}
	CU_ASSERT_FATAL(mp_heap_freeze(heap, list, &list) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_freeze(heap, dict, &dict) == MP_OK);
	v = C(MP_T_TUPLE, 2, list, dict);
	snprintf(want, sizeof want,
		 "([i * 1000 for i in range(%zu)], {i: 'v' for i in range(%zu)})", n, n);
	CU_ASSERT(py_check(v, want, need));
}

static void test_batches(void)
{
	/* CPython adds an empty MARK SETITEMS to dicts of 1000k items; memprof does not. */
	check_batches(1000, "APPENDS,SETITEMS");
	check_batches(2, "EXACT");
	check_batches(999, "EXACT");
	check_batches(1001, "EXACT");
	check_batches(2500, "EXACT,FRAME");
}

static void test_memo(void)
{
	mp_val shared = C(MP_T_LIST, 2, S("frame"), I(3)), list, v;
	mp_diag diag = { 0 };
	mp_err err;
	size_t len;
	char *data, name[32];

	/* One handle written twice is one object after loading. */
	v = C(MP_T_LIST, 3, shared, C(MP_T_DICT, 1, S("frames"), shared), shared);
	CU_ASSERT(py_check(v, "lambda v: v[0] is v[1]['frames'] is v[2] and v[0] == ['frame', 3]",
			   "BINGET"));
	data = pickle_bytes(v, &len, &err, &diag);
	CU_ASSERT(err == MP_OK && count_occurrences(data, len, "frame") == 2); /* 'frame', 'frames' */
	free(data);
	/* Past 256 memo entries, gets take LONG_BINGET. */
	CU_ASSERT_FATAL(mp_heap_open(heap, MP_T_LIST, &list) == MP_OK);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 300; i++) {
			snprintf(name, sizeof name, "name%d", i);
			CU_ASSERT_FATAL(mp_heap_append(heap, list, S(name)) == MP_OK);
		}
	}
	CU_ASSERT_FATAL(mp_heap_freeze(heap, list, &list) == MP_OK);
	CU_ASSERT(py_check(list, "lambda v: v == ['name%d' % (i % 300) for i in range(600)] "
				 "and v[299] is v[599]",
			   "BINGET,LONG_BINGET"));
}

/* A snapshot-shaped value of N blocks sharing frame lists: many frames. */
static mp_val snapshot_like(size_t n)
{
	mp_val blocks, fr[3];

	for (int k = 0; k < 3; k++)
		fr[k] = C(MP_T_LIST, 2,
			  C(MP_T_DICT, 3, S("name"), S(k ? "forward" : "main"), S("filename"),
			    S("model.py"), S("line"), I(10 + k)),
			  C(MP_T_DICT, 3, S("name"), S("alloc"), S("filename"), S("torch.py"),
			    S("line"), I(k)));
	CU_ASSERT_FATAL(mp_heap_open(heap, MP_T_LIST, &blocks) == MP_OK);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_FATAL(mp_heap_append(heap, blocks,
					       C(MP_T_DICT, 5, S("address"), I((int64_t)i * 512),
						 S("size"), I(512), S("requested_size"), I(500),
						 S("state"), S("active_allocated"), S("frames"),
						 fr[i % 3])) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_freeze(heap, blocks, &blocks) == MP_OK);
	return C(MP_T_DICT, 1, S("blocks"), blocks);
}

static void test_big_value(void)
{
	CU_ASSERT(py_check(snapshot_like(100000),
			   "lambda v: len(v['blocks']) == 100000 and v['blocks'][99999] == "
			   "{'address': 99999 * 512, 'size': 512, 'requested_size': 500, "
			   "'state': 'active_allocated', 'frames': [{'name': 'main', "
			   "'filename': 'model.py', 'line': 10}, {'name': 'alloc', "
			   "'filename': 'torch.py', 'line': 0}]} and "
			   "v['blocks'][0]['frames'] is v['blocks'][3]['frames']",
			   "FRAME,BINGET"));
}

/* N lists nested in each other. */
static mp_val nested(size_t n)
{
	mp_val v = C(MP_T_LIST, 0);

	for (size_t i = 1; i < n; i++)
		v = C(MP_T_LIST, 1, v);
	return v;
}

static void test_depth(void)
{
	mp_diag diag = { 0 };
	mp_err err;
	size_t len;
	char *data;

	CU_ASSERT(py_check(nested(MP_PICKLE_WRITE_MAX_DEPTH), "lambda v: depth(v) == 10000", ""));
	data = pickle_bytes(nested(MP_PICKLE_WRITE_MAX_DEPTH + 1), &len, &err, &diag);
	free(data);
	CU_ASSERT(err == MP_E_LIMIT);
	CU_ASSERT(strstr(diag.msg, "10000 levels") != NULL);
	CU_ASSERT(strstr(diag.msg, "at [0][0][0]") != NULL && strstr(diag.msg, "...: nested") != NULL);
}

static void test_refused(void)
{
	mp_val b;
	mp_diag diag = { 0 };
	mp_err err;
	size_t len;
	char *data;

	CU_ASSERT_FATAL(mp_heap_bytes(heap, "\x00\x01", 2, &b) == MP_OK);
	data = pickle_bytes(C(MP_T_LIST, 2, I(0), C(MP_T_DICT, 1, S("raw"), b)), &len, &err, &diag);
	free(data);
	CU_ASSERT(err == MP_E_UNSUPPORTED);
	CU_ASSERT(strstr(diag.msg, "bytes") != NULL && strstr(diag.msg, "[1]['raw']") != NULL);
	data = pickle_bytes(C(MP_T_DICT, 2, S("a"), I(1), C(MP_T_TUPLE, 2, I(1),
							   C(MP_T_TUPLE, 1, C(MP_T_LIST, 0))), I(2)),
			    &len, &err, &diag);
	free(data);
	CU_ASSERT(err == MP_E_TYPE && strstr(diag.msg, "dict key at (key 1)") != NULL);
	CU_ASSERT(mp_heap_hashable(heap, C(MP_T_TUPLE, 2, S("a"), C(MP_T_TUPLE, 1, F(1.5)))));
	CU_ASSERT(!mp_heap_hashable(heap, C(MP_T_DICT, 0)));
	data = pickle_bytes(MP_ABSENT, &len, &err, &diag);
	free(data);
	CU_ASSERT(err == MP_E_TYPE);
	CU_ASSERT(strstr(diag.msg, "top level") != NULL);
}

/* ---- main */

static int suite_init(void)
{
	FILE *f;

	heap = mp_heap_new();
	if (heap == NULL || mkdtemp(dir) == NULL)
		return -1;
	snprintf(checker, sizeof checker, "%s/check.py", dir);
	f = fopen(checker, "w");
	if (f == NULL)
		return -1;
	fputs(checker_py, f);
	return fclose(f);
}

static int suite_clean(void)
{
	char cmd[4200];

	mp_heap_free(heap);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "atoms", test_atoms },
		{ "ints", test_ints },
		{ "bigints", test_bigints },
		{ "strings", test_strings },
		{ "containers", test_containers },
		{ "batches", test_batches },
		{ "memo", test_memo },
		{ "big value", test_big_value },
		{ "depth", test_depth },
		{ "refused", test_refused },
	};

	return UNIT_RUN("pickle_write", tests, suite_init, suite_clean);
}

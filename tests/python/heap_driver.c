/* heap_driver.c pid PID|core CORE TRUTH [SYSROOT] - memprof's Python heap reader (mp_py_heap.h) on a live
   process or its core, against what heap_target.py wrote to TRUTH (JSON): the GC walk must see every instance
   and list the target named and as many instances of its classes as gc.get_objects() counted; each
   instance's type, attributes (in order, and one by one), each dict's items in order, each list's and
   tuple's items, each int, float and str value, None, and __main__'s globals must be what the interpreter
   said. Prints the checks made and the differences; exit 0 when there are checks and no difference.
   heap_driver walk pid PID|core CORE [SYSROOT]: the walk alone (bench/py_heap.sh): prints the objects, the
   types they have, and the walk's seconds. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_py_heap.h"

static unsigned long checks, wrong;

#define CHECK(cond, ...)                                      \
	do {                                                  \
		checks++;                                     \
		if (!(cond)) {                                \
			if (wrong++ < 40) {                   \
				printf("differ: ");           \
				printf(__VA_ARGS__);          \
				printf("\n");                 \
			}                                     \
		}                                             \
	} while (0)

static uint64_t id_of(const cJSON *j)
{
	return strtoull(cJSON_GetStringValue(j), NULL, 10);
}

/* ---- the walk: every object's address, and instances of the target's classes counted */
typedef struct walk {
	mp_py_heap *h;
	uint64_t *objs;
	size_t n, cap;
	const cJSON *counts;
	long seen[16];
} walk;

static bool walk_cb(void *ctx, uint64_t obj, uint64_t type)
{
	walk *w = ctx;
	const mp_py_type *ty = mp_py_heap_type(w->h, type, NULL);
	int i = 0;
	const cJSON *c;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 65536;
		if ((w->objs = realloc(w->objs, w->cap * sizeof *w->objs)) == NULL)
			abort();
	}
	w->objs[w->n++] = obj;
	if (ty != NULL)
		cJSON_ArrayForEach(c, w->counts)
		{
			if (i < 16 && strcmp(ty->module, cJSON_GetArrayItem(c, 0)->valuestring) == 0 &&
			    strcmp(ty->name, cJSON_GetArrayItem(c, 1)->valuestring) == 0)
				w->seen[i]++;
			i++;
		}
	return true;
}

/* Warnings are differences too: shown, a few. */
static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	if (wrong < 40)
		printf("warning: %s\n", line);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool walked(const walk *w, uint64_t obj)
{
	return bsearch(&obj, w->objs, w->n, sizeof obj, cmp_u64) != NULL;
}

/* ---- collecting what the reader gives, to compare with a JSON list of pairs */
typedef struct pairs {
	mp_py_heap *h;
	char names[4096][64];
	uint64_t keys[4096], values[4096];
	size_t n;
} pairs;

static bool attr_cb(void *ctx, const char *name, uint64_t value)
{
	pairs *p = ctx;

	if (p->n < 4096) {
		snprintf(p->names[p->n], sizeof p->names[0], "%s", name);
		p->values[p->n] = value;
	}
	p->n++;
	return true;
}

static bool item_cb(void *ctx, uint64_t key, uint64_t value)
{
	pairs *p = ctx;

	if (p->n < 4096) {
		p->keys[p->n] = key;
		p->values[p->n] = value;
	}
	p->n++;
	return true;
}

static void check_instances(mp_py_heap *h, const walk *w, const cJSON *list)
{
	static pairs p;
	const cJSON *o, *a;

	cJSON_ArrayForEach(o, list)
	{
		uint64_t id = id_of(cJSON_GetObjectItem(o, "id")), type, v;
		const char *mod = cJSON_GetObjectItem(o, "module")->valuestring;
		const char *name = cJSON_GetObjectItem(o, "name")->valuestring;
		const cJSON *attrs = cJSON_GetObjectItem(o, "attrs");
		const mp_py_type *ty = NULL;
		mp_diag diag = { 0 };
		size_t i = 0;
		mp_err err;

		CHECK(walked(w, id), "instance 0x%llx of %s not among the GC's objects", (unsigned long long)id, name);
		if (mp_py_object_type(h, id, &type, &diag) == MP_OK)
			ty = mp_py_heap_type(h, type, &diag);
		CHECK(ty != NULL && strcmp(ty->name, name) == 0 && strcmp(ty->module, mod) == 0,
		      "instance 0x%llx: type %s.%s, read %s.%s (%s)", (unsigned long long)id, mod, name,
		      ty ? ty->module : "?", ty ? ty->name : "?", diag.msg);
		if (ty == NULL)
			continue;
		CHECK(mp_py_type_is(h, ty, mod, name) && mp_py_type_is(h, ty, "builtins", "object") &&
			      !mp_py_type_is(h, ty, "builtins", "dict"),
		      "instance 0x%llx: its MRO", (unsigned long long)id);
		p.n = 0;
		p.h = h;
		err = mp_py_attrs_each(h, id, attr_cb, &p, &diag);
		CHECK(err == MP_OK && p.n == (size_t)cJSON_GetArraySize(attrs), "instance 0x%llx (%s): %zu attributes read, %d there (%s)",
		      (unsigned long long)id, name, p.n, cJSON_GetArraySize(attrs), diag.msg);
		cJSON_ArrayForEach(a, attrs)
		{
			const char *an = cJSON_GetArrayItem(a, 0)->valuestring;
			uint64_t want = id_of(cJSON_GetArrayItem(a, 1));

			CHECK(i < p.n && strcmp(p.names[i], an) == 0 && p.values[i] == want,
			      "instance 0x%llx (%s): attribute %zu is %s=0x%llx, read %s=0x%llx", (unsigned long long)id, name,
			      i, an, (unsigned long long)want, i < p.n ? p.names[i] : "-",
			      (unsigned long long)(i < p.n ? p.values[i] : 0));
			CHECK(mp_py_attr(h, id, an, &v, &diag) == MP_OK && v == want, "instance 0x%llx: attribute %s alone",
			      (unsigned long long)id, an);
			i++;
		}
		CHECK(mp_py_attr(h, id, "no_such_attribute", &v, NULL) == MP_E_NOTFOUND,
		      "instance 0x%llx: an attribute it does not have", (unsigned long long)id);
	}
}

static void check_items(mp_py_heap *h, const char *what, uint64_t id, const cJSON *items)
{
	static pairs p;
	mp_diag diag = { 0 };
	const cJSON *it;
	size_t i = 0;
	mp_err err;

	p.n = 0;
	p.h = h;
	err = mp_py_dict_each(h, id, item_cb, &p, &diag);
	CHECK(err == MP_OK && p.n == (size_t)cJSON_GetArraySize(items), "%s 0x%llx: %zu items read, %d there (%s)", what,
	      (unsigned long long)id, p.n, cJSON_GetArraySize(items), diag.msg);
	cJSON_ArrayForEach(it, items)
	{
		uint64_t key = id_of(cJSON_GetArrayItem(it, 0)), value = id_of(cJSON_GetArrayItem(it, 1)), v;
		char *s;

		CHECK(i < p.n && p.keys[i] == key && p.values[i] == value, "%s 0x%llx: item %zu", what,
		      (unsigned long long)id, i);
		/* a str key is found by its text too */
		if (mp_py_str(h, key, &s, NULL) == MP_OK) {
			CHECK(mp_py_dict_get_str(h, id, s, &v, &diag) == MP_OK && v == value, "%s 0x%llx: key '%s' alone", what,
			      (unsigned long long)id, s);
			free(s);
		}
		i++;
	}
	CHECK(mp_py_dict_get_str(h, id, "no such key", &(uint64_t){ 0 }, NULL) == MP_E_NOTFOUND,
	      "%s 0x%llx: a key it does not have", what, (unsigned long long)id);
}

/* The main dict's items: compared by name (a str) and value. */
static void check_main(mp_py_heap *h, const cJSON *main)
{
	uint64_t dict = 0, want = id_of(cJSON_GetObjectItem(main, "id"));
	const cJSON *items = cJSON_GetObjectItem(main, "items"), *it;
	static pairs p;
	mp_diag diag = { 0 };
	size_t i = 0;

	CHECK(mp_py_module_dict(h, "__main__", &dict, &diag) == MP_OK && dict == want,
	      "__main__'s dict: 0x%llx, read 0x%llx (%s)", (unsigned long long)want, (unsigned long long)dict, diag.msg);
	CHECK(mp_py_module_dict(h, "no.such.module", &dict, NULL) == MP_E_NOTFOUND, "a module that is not there");
	p.n = 0;
	CHECK(mp_py_dict_each(h, want, item_cb, &p, &diag) == MP_OK, "__main__'s globals: %s", diag.msg);
	cJSON_ArrayForEach(it, items)
	{
		char *s = NULL;

		CHECK(i < p.n && mp_py_str(h, p.keys[i], &s, NULL) == MP_OK &&
			      strcmp(s, cJSON_GetArrayItem(it, 0)->valuestring) == 0 &&
			      p.values[i] == id_of(cJSON_GetArrayItem(it, 1)),
		      "__main__'s global %zu (%s)", i, cJSON_GetArrayItem(it, 0)->valuestring);
		free(s);
		i++;
	}
	CHECK(p.n == i, "__main__: %zu globals read, %zu there", p.n, i);
}

static void check_seqs(mp_py_heap *h, const walk *w, const cJSON *list)
{
	const cJSON *o, *it;

	cJSON_ArrayForEach(o, list)
	{
		uint64_t id = id_of(cJSON_GetObjectItem(o, "id")), *items = NULL, type;
		const cJSON *want = cJSON_GetObjectItem(o, "items");
		mp_diag diag = { 0 };
		size_t n = 0, i = 0;
		const mp_py_type *ty;

		CHECK(mp_py_seq_items(h, id, &items, &n, 1u << 20, &diag) == MP_OK && n == (size_t)cJSON_GetArraySize(want),
		      "sequence 0x%llx: %zu items read, %d there (%s)", (unsigned long long)id, n, cJSON_GetArraySize(want),
		      diag.msg);
		cJSON_ArrayForEach(it, want)
		{
			CHECK(i < n && items[i] == id_of(it), "sequence 0x%llx: item %zu", (unsigned long long)id, i);
			i++;
		}
		if (n > 2) {
			free(items);
			CHECK(mp_py_seq_items(h, id, &items, &n, 2, NULL) == MP_E_LIMIT && items == NULL,
			      "sequence 0x%llx: more than asked for", (unsigned long long)id);
		}
		free(items);
		/* lists are always tracked */
		if (mp_py_object_type(h, id, &type, NULL) == MP_OK && (ty = mp_py_heap_type(h, type, NULL)) != NULL &&
		    (ty->flags & MP_PY_TPFLAGS_LIST_SUBCLASS))
			CHECK(walked(w, id), "list 0x%llx not among the GC's objects", (unsigned long long)id);
	}
}

static void check_values(mp_py_heap *h, const cJSON *truth)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, cJSON_GetObjectItem(truth, "ints"))
	{
		uint64_t id = id_of(cJSON_GetObjectItem(o, "id"));
		const char *text = cJSON_GetObjectItem(o, "value")->valuestring;
		int64_t v = 0;
		mp_diag diag = { 0 };
		mp_err err = mp_py_long(h, id, &v, &diag);

		if (cJSON_IsTrue(cJSON_GetObjectItem(o, "fits")))
			CHECK(err == MP_OK && v == strtoll(text, NULL, 10), "int %s: read %lld (%s)", text, (long long)v,
			      diag.msg);
		else
			CHECK(err == MP_E_RANGE, "int %s: read %lld, not refused (%s)", text, (long long)v, diag.msg);
	}
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(truth, "floats"))
	{
		uint64_t id = id_of(cJSON_GetObjectItem(o, "id"));
		const char *bits = cJSON_GetObjectItem(o, "bits")->valuestring;
		double d = 0;
		unsigned char b[8];
		char hex[17];
		mp_diag diag = { 0 };

		CHECK(mp_py_float(h, id, &d, &diag) == MP_OK, "float %s: %s", bits, diag.msg);
		memcpy(b, &d, 8);
		for (int i = 0; i < 8; i++)
			snprintf(hex + 2 * i, 3, "%02x", b[i]);
		CHECK(strcmp(hex, bits) == 0, "float %s: read %s", bits, hex);
	}
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(truth, "strs"))
	{
		uint64_t id = id_of(cJSON_GetObjectItem(o, "id"));
		const char *want = cJSON_GetObjectItem(o, "hex")->valuestring;
		char *s = NULL, *hex;
		mp_diag diag = { 0 };
		mp_err err = mp_py_str(h, id, &s, &diag);

		if (err != MP_OK) {
			CHECK(0, "str %.40s: %s", want, diag.msg);
			continue;
		}
		hex = malloc(2 * strlen(s) + 1);
		for (size_t i = 0; s[i]; i++)
			snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
		hex[2 * strlen(s)] = '\0';
		CHECK(strcmp(hex, want) == 0, "str %.40s: read %.40s", want, hex);
		free(hex);
		free(s);
	}
	/* None, and type refusals: an int is no str, a str no int */
	{
		uint64_t none = id_of(cJSON_GetObjectItem(truth, "none")), first_str, first_int;
		char *s = NULL;
		int64_t v;

		first_str = id_of(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(truth, "strs"), 0), "id"));
		first_int = id_of(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(truth, "ints"), 3), "id"));
		CHECK(mp_py_is_none(h, none) && !mp_py_is_none(h, first_str), "None");
		CHECK(mp_py_str(h, first_int, &s, NULL) == MP_E_TYPE && s == NULL, "an int read as a str");
		CHECK(mp_py_long(h, first_str, &v, NULL) == MP_E_TYPE, "a str read as an int");
		CHECK(mp_py_seq_items(h, first_str, &(uint64_t *){ NULL }, &(size_t){ 0 }, 10, NULL) == MP_E_TYPE,
		      "a str read as a list");
	}
}

/* The walk alone: count the objects and ask each one's type (cached). */
static bool count_cb(void *ctx, uint64_t obj, uint64_t type)
{
	mp_py_heap *h = ctx;

	(void)obj;
	(void)mp_py_heap_type(h, type, NULL);
	return true;
}

static int walk_only(int argc, char **argv)
{
	mp_target_opts opts = { .sysroot = argc > 4 ? argv[4] : NULL };
	static mp_py_runtime rt;
	mp_diag diag = { .warn = warn_line };
	struct timespec a, b;
	mp_py_interp py;
	mp_py_heap *h;
	mp_target *t;
	mp_err err;

	if ((strcmp(argv[2], "pid") == 0 ? mp_target_open_pid(atoi(argv[3]), &opts, &t, &diag)
					 : mp_target_open_core(argv[3], &opts, &t, &diag)) != MP_OK ||
	    mp_py_find(t, &py, &diag) != MP_OK || mp_py_runtime_read(t, &py, &rt, &diag) != MP_OK ||
	    mp_py_heap_open(t, &py, &rt, NULL, &h, &diag) != MP_OK)
		return fprintf(stderr, "heap_driver: %s\n", diag.msg), 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	err = mp_py_heap_each(h, count_cb, h, &diag);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%llu objects, %u warnings, %.3f s\n", (unsigned long long)mp_py_heap_count(h), diag.nwarn,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	mp_py_heap_close(h);
	mp_target_close(t);
	return err == MP_OK && diag.nwarn == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	mp_target_opts opts = { .sysroot = argc > 4 ? argv[4] : NULL };
	mp_target *t;
	mp_py_interp py;
	static mp_py_runtime rt;
	mp_py_heap *h;
	mp_diag diag = { .warn = warn_line };
	walk w = { 0 };
	cJSON *truth, *o;
	FILE *f;
	char *text;
	long len;
	int i = 0;

	if (argc >= 4 && strcmp(argv[1], "walk") == 0)
		return walk_only(argc, argv);
	if (argc < 4 || (strcmp(argv[1], "pid") != 0 && strcmp(argv[1], "core") != 0))
		return fprintf(stderr, "usage: heap_driver pid PID|core CORE TRUTH [SYSROOT]\n"), 2;
	if ((f = fopen(argv[3], "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    (text = calloc(1, (size_t)len + 1)) == NULL || fseek(f, 0, SEEK_SET) != 0 ||
	    fread(text, 1, (size_t)len, f) != (size_t)len || (truth = cJSON_Parse(text)) == NULL)
		return fprintf(stderr, "heap_driver: cannot read %s\n", argv[3]), 2;
	fclose(f);
	free(text);
	if ((strcmp(argv[1], "pid") == 0 ? mp_target_open_pid(atoi(argv[2]), &opts, &t, &diag)
					 : mp_target_open_core(argv[2], &opts, &t, &diag)) != MP_OK)
		return fprintf(stderr, "heap_driver: %s\n", diag.msg), 2;
	if (mp_py_find(t, &py, &diag) != MP_OK || mp_py_runtime_read(t, &py, &rt, &diag) != MP_OK ||
	    mp_py_heap_open(t, &py, &rt, NULL, &h, &diag) != MP_OK)
		return printf("no heap: %s\n", diag.msg), 1;
	o = cJSON_GetObjectItem(truth, "version");
	if (py.major != cJSON_GetArrayItem(o, 0)->valueint || py.minor != cJSON_GetArrayItem(o, 1)->valueint)
		return printf("found CPython %d.%d, but it is %d.%d\n", py.major, py.minor,
			      cJSON_GetArrayItem(o, 0)->valueint, cJSON_GetArrayItem(o, 1)->valueint), 1;
	w.h = h;
	w.counts = cJSON_GetObjectItem(truth, "counts");
	CHECK(mp_py_heap_each(h, walk_cb, &w, &diag) == MP_OK && diag.nwarn == 0, "the walk: %s (%u warnings)", diag.msg,
	      diag.nwarn);
	CHECK(mp_py_heap_count(h) == w.n && w.n > 1000, "the walk counted %llu, called back %zu times",
	      (unsigned long long)mp_py_heap_count(h), w.n);
	qsort(w.objs, w.n, sizeof *w.objs, cmp_u64);
	for (size_t k = 1; k < w.n; k++)
		if (w.objs[k] == w.objs[k - 1]) {
			CHECK(0, "object 0x%llx walked twice", (unsigned long long)w.objs[k]);
			break;
		}
	cJSON_ArrayForEach(o, w.counts)
	{
		CHECK(w.seen[i] == cJSON_GetArrayItem(o, 2)->valueint, "%s instances: gc.get_objects() has %d, the walk %ld",
		      cJSON_GetArrayItem(o, 1)->valuestring, cJSON_GetArrayItem(o, 2)->valueint, w.seen[i]);
		i++;
	}
	check_instances(h, &w, cJSON_GetObjectItem(truth, "instances"));
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(truth, "dicts"))
		check_items(h, "dict", id_of(cJSON_GetObjectItem(o, "id")), cJSON_GetObjectItem(o, "items"));
	check_seqs(h, &w, cJSON_GetObjectItem(truth, "seqs"));
	check_values(h, truth);
	check_main(h, cJSON_GetObjectItem(truth, "main"));
	printf("CPython %d.%d: %zu objects walked; %lu checks, %lu differ\n", py.major, py.minor, w.n, checks, wrong);
	free(w.objs);
	mp_py_heap_close(h);
	mp_target_close(t);
	cJSON_Delete(truth);
	return wrong == 0 && checks > 0 ? 0 : 1;
}

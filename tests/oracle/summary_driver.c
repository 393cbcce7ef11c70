/* summary_driver.c - run mp_analysis_memory_summary on stats read from memprof JSON (for summary_*.py).

   summary_driver FILE          FILE holds one case; prints the summary to stdout
   summary_driver --batch FILE  FILE holds a list of cases; for each prints
                                "@@ I ok LEN\n" and LEN bytes, or "@@ I error MSG\n"

   A case is {"device": int, "abbreviated": bool, "stats": {key: int, ...}} in
   memprof's JSON (ints beyond +-2^53 as {"__int__": "..."}); "-" reads stdin.
   Exit 0 done (in one-case mode: the summary was written), 2 bad input or a
   failed summary (one line on stderr). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"
#include "mp_summary.h"
#include "mp_value.h"

static int die(const char *what)
{
	fprintf(stderr, "summary_driver: %s\n", what);
	return 2;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

/* The dict value under the str KEY of DICT, or MP_ABSENT. */
static mp_val get(mp_heap *heap, mp_val dict, const char *key)
{
	mp_val k;

	if (mp_heap_str(heap, key, strlen(key), &k) != MP_OK)
		return MP_ABSENT;
	return mp_heap_dict_get(heap, dict, k);
}

/* Run one case; the summary into OUT, or a one-line reason into DIAG. */
static mp_err run_case(mp_heap *heap, mp_val c, mp_out *out, mp_diag *diag)
{
	mp_val dev, abbr, st;
	int64_t device;
	mp_memstats stats = { 0 };
	mp_err err;

	c = mp_heap_resolve(heap, c);
	if (mp_val_type(c) != MP_T_DICT)
		return mp_fail(diag, MP_E_TYPE, "a case is not a dict");
	dev = get(heap, c, "device");
	abbr = get(heap, c, "abbreviated");
	st = mp_heap_resolve(heap, get(heap, c, "stats"));
	if (!mp_heap_get_i64(heap, dev, &device) || device < -2147483647 - 1 || device > 2147483647)
		return mp_fail(diag, MP_E_TYPE, "'device' is not an int");
	if (abbr != MP_TRUE && abbr != MP_FALSE)
		return mp_fail(diag, MP_E_TYPE, "'abbreviated' is not a bool");
	if (mp_val_type(st) != MP_T_DICT)
		return mp_fail(diag, MP_E_TYPE, "'stats' is not a dict");
	stats.device = (int)device;
	stats.n = mp_heap_len(heap, st);
	stats.v = calloc(stats.n + 1, sizeof *stats.v);
	if (stats.v == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	const mp_val *items = mp_heap_items(heap, st);

	for (size_t i = 0; i < stats.n; i++) {
		stats.v[i].key = mp_heap_atom(heap, items[2 * i], NULL);
		if (mp_val_type(items[2 * i]) != MP_T_STR ||
		    !mp_heap_get_i64(heap, items[2 * i + 1], &stats.v[i].value)) {
			free(stats.v);
			return mp_fail(diag, MP_E_TYPE, "stats item %zu is not str: int64", i);
		}
	}
	err = mp_analysis_memory_summary(&stats, abbr == MP_TRUE, out, diag);
	free(stats.v);
	return err;
}

int main(int argc, char **argv)
{
	bool batch = argc == 3 && strcmp(argv[1], "--batch") == 0;
	size_t len = 0;
	char *text;
	mp_heap *heap;
	mp_val root;
	mp_diag diag = { 0 };
	mp_out out;
	int rc = 0;

	if (argc != 2 + batch)
		return die("usage: summary_driver [--batch] FILE");
	text = slurp(argv[1 + batch], &len);
	if (text == NULL)
		return die("cannot read the input");
	heap = mp_heap_new();
	if (heap == NULL || mp_json_read(heap, text, len, MP_ABSENT, &root, &diag) != MP_OK) {
		fprintf(stderr, "summary_driver: %s\n", diag.msg);
		free(text);
		mp_heap_free(heap);
		return 2;
	}
	free(text);
	mp_out_init_file(&out, stdout);
	if (!batch) {
		if (run_case(heap, root, &out, &diag) != MP_OK) {
			fprintf(stderr, "summary_driver: %s\n", diag.msg);
			rc = 2;
		}
	} else {
		root = mp_heap_resolve(heap, root);
		if (mp_val_type(root) != MP_T_LIST) {
			mp_heap_free(heap);
			return die("--batch wants a list of cases");
		}
		const mp_val *cases = mp_heap_items(heap, root);
		size_t n = mp_heap_len(heap, root);
		mp_out one;

		mp_out_init(&one);
		for (size_t i = 0; i < n; i++) {
			size_t olen = 0;
			char *s;

			mp_diag_reset(&diag);
			if (run_case(heap, cases[i], &one, &diag) != MP_OK) {
				mp_out_free(&one);
				mp_out_init(&one);
				mp_out_printf(&out, "@@ %zu error %s\n", i, diag.msg);
				continue;
			}
			s = mp_out_take(&one, &olen);
			if (s == NULL) {
				rc = die("out of memory");
				break;
			}
			mp_out_printf(&out, "@@ %zu ok %zu\n", i, olen);
			mp_out_write(&out, s, olen);
			free(s);
		}
		mp_out_free(&one);
	}
	if (mp_out_flush(&out) != MP_OK)
		rc = die("cannot write the output");
	mp_out_free(&out);
	mp_heap_free(heap);
	return rc;
}

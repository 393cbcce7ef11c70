/* fuzz_rules.c - libFuzzer harness: the categories rules-file parser on any bytes, and what it accepts put to
   work: categories (both schemes) and timeline with those rules over the example snapshot (tests/data). The
   rules reach the commands as a file (a memfd), as a user's --rules FILE does. Seeds: tests/fuzz/corpus/rules;
   dictionary: json.dict. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_front.h"
#include "fuzz_memfd.h"
#include "mp_category.h"

#ifndef FUZZ_DATA_DIR
#define FUZZ_DATA_DIR "tests/data"
#endif

/* The example snapshot, read once. */
static const uint8_t *example(size_t *len)
{
	static uint8_t *data;
	static size_t n;

	if (data == NULL) {
		FILE *f = fopen(FUZZ_DATA_DIR "/example.pickle", "rb");
		long size;

		if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
		    (data = malloc((size_t)size)) == NULL || fread(data, 1, (size_t)size, f) != (size_t)size)
			fuzz_fail("cannot read " FUZZ_DATA_DIR "/example.pickle");
		fclose(f);
		n = (size_t)size;
	}
	*len = n;
	return data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mp_category_ruleset *set = NULL;
	mp_diag diag = { 0 };
	size_t n, len;
	const uint8_t *snap = example(&len);
	const char *path;

	if (mp_category_rules_parse((const char *)data, size, &set, &diag) != MP_OK) {
		if (diag.msg[0] == '\0')
			fuzz_fail("the rules parser failed without saying why");
		return 0;
	}
	mp_category_ruleset_rules(set, &n);
	mp_category_ruleset_free(set);
	path = fuzz_memfd(data, size);
	{
		const char *const runs[][8] = {
			{ "categories", "in", "--rules", path, NULL },
			{ "categories", "in", "--rules", path, "--scheme", "tracker", "--sites", NULL },
			{ "timeline", "in", "--rules", path, NULL },
		};

		for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
			if (fuzz_command(snap, len, runs[i]) == 2)
				fuzz_fail("rules the parser accepted were refused by a command");
	}
	return 0;
}

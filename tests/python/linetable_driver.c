/* linetable_driver.c - mp_py_addr2line against a CPython's own PyCode_Addr2Line: reads dump_linetables.py's
   lines on standard input, decodes every table at every offset, prints each disagreement and a count.
   Exit 0 when all agree, 1 otherwise, 2 on input it cannot read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_py_linetable.h"

/* The bytes of hex text HEX ("-": none) into OUT (room for LEN); their count, or -1. */
static long unhex(const char *hex, unsigned char *out, size_t len)
{
	size_t n = strlen(hex);

	if (strcmp(hex, "-") == 0)
		return 0;
	if (n % 2 != 0 || n / 2 > len)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return (long)(n / 2);
}

int main(void)
{
	static char line[1 << 22];
	static unsigned char table[1 << 20];
	unsigned long codes = 0, checks = 0, wrong = 0;

	while (fgets(line, sizeof line, stdin) != NULL) {
		char *save = NULL, *hex;
		int format, first, nbytes;
		long len;
		enum mp_py_linetable_format f;

		if (sscanf(line, "%d %d %d", &format, &first, &nbytes) != 3)
			return fprintf(stderr, "linetable_driver: bad line %lu\n", codes + 1), 2;
		strtok_r(line, " \n", &save);
		strtok_r(NULL, " \n", &save);
		strtok_r(NULL, " \n", &save);
		hex = strtok_r(NULL, " \n", &save);
		if (hex == NULL || (len = unhex(hex, table, sizeof table)) < 0)
			return fprintf(stderr, "linetable_driver: bad table on line %lu\n", codes + 1), 2;
		f = format == 310 ? MP_PY_LINETABLE_310 : MP_PY_LINETABLE_311;
		for (int lasti = -1; lasti < nbytes; lasti = lasti < 0 ? 0 : lasti + 2) {
			char *word = strtok_r(NULL, " \n", &save);
			int want, got;

			if (word == NULL)
				return fprintf(stderr, "linetable_driver: short line %lu\n", codes + 1), 2;
			want = atoi(word);
			got = mp_py_addr2line(f, table, (size_t)len, first, lasti);
			checks++;
			if (got != want && wrong++ < 20)
				printf("differ: code %lu (firstlineno %d), lasti %d: CPython %d, memprof %d\n", codes + 1,
				       first, lasti, want, got);
		}
		codes++;
	}
	printf("%lu code objects, %lu offsets, %lu differ\n", codes, checks, wrong);
	return wrong == 0 && codes > 0 ? 0 : 1;
}

/* objects_driver.c pid PID|core CORE [SYSROOT] - memprof's reader of CPython objects (src/python) on a live
   process or on its core: finds
   the interpreter and its version (which must be the one it says), then reads each code object that
   objects_target.py listed (on standard input) and compares its file name, name, qualified name, first line and
   the line of every instruction with what the interpreter said. Exit 0 when all agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_py.h"

/* Whether TEXT equals the UTF-8 whose hex is HEX. */
static int same_hex(const char *text, const char *hex)
{
	size_t n = strlen(hex) / 2;

	if (text == NULL || strlen(text) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1 || (unsigned char)text[i] != v)
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static char line[1 << 20];
	mp_target_opts opts = { .sysroot = argc > 3 ? argv[3] : NULL };
	unsigned long codes = 0, lines = 0, wrong = 0;
	mp_target *t;
	mp_py_interp py;
	mp_diag diag = { 0 };

	if (argc < 3 || (strcmp(argv[1], "pid") != 0 && strcmp(argv[1], "core") != 0))
		return fprintf(stderr, "usage: objects_driver pid PID|core CORE [SYSROOT]\n"), 2;
	if ((strcmp(argv[1], "pid") == 0 ? mp_target_open_pid(atoi(argv[2]), &opts, &t, &diag)
					 : mp_target_open_core(argv[2], &opts, &t, &diag)) != MP_OK)
		return fprintf(stderr, "objects_driver: %s\n", diag.msg), 2;
	if (mp_py_find(t, &py, &diag) != MP_OK)
		return printf("no interpreter found: %s\n", diag.msg), 1;
	while (fgets(line, sizeof line, stdin) != NULL) {
		char *save = NULL, *w[7];
		const mp_py_layout *l;
		mp_py_code c;

		for (int i = 0; i < 7; i++)
			w[i] = strtok_r(i == 0 ? line : NULL, " \n", &save);
		if (w[6] == NULL)
			return fprintf(stderr, "objects_driver: bad line\n"), 2;
		/* the version memprof found must be the one the interpreter says it is */
		if (py.major != atoi(w[1]) || py.minor != atoi(w[2]))
			return printf("found CPython %d.%d in %s, but it is %s.%s\n", py.major, py.minor, py.path, w[1], w[2]), 1;
		l = py.layout;
		codes++;
		if (mp_py_read_code(t, l, NULL, strtoull(w[0], NULL, 10), &c, &diag) != MP_OK) {
			printf("differ: code %s: %s\n", w[0], diag.msg);
			wrong++;
			continue;
		}
		if (c.firstlineno != atoi(w[3]) || !same_hex(c.filename, w[4]) || !same_hex(c.name, w[5]) ||
		    !same_hex(c.qualname, w[6])) {
			printf("differ: code %s: read %d %s %s %s\n", w[0], c.firstlineno, c.filename, c.name, c.qualname);
			wrong++;
		}
		for (char *pair; (pair = strtok_r(NULL, " \n", &save)) != NULL; lines++) {
			int lasti = atoi(pair), want = atoi(strchr(pair, ':') + 1), got = mp_py_code_line(l, &c, lasti);

			if (got != want && wrong++ < 20)
				printf("differ: code %s (%s), lasti %d: CPython %d, memprof %d\n", w[0], c.qualname, lasti, want,
				       got);
		}
		mp_py_code_free(&c);
	}
	mp_target_close(t);
	if (py.micro >= 0)
		printf("CPython %d.%d.%d", py.major, py.minor, py.micro);
	else
		printf("CPython %d.%d (by its file's name)", py.major, py.minor);
	printf(" found in %s; %lu code objects, %lu lines, %lu differ\n", py.path, codes, lines, wrong);
	return wrong == 0 && codes > 0 ? 0 : 1;
}

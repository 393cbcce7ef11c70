/* layout_dump.c - print the layout memprof reads from the DWARF of a libc10_cuda.so, in the
   layout-file format: the generator for src/symbols/layouts/ *.layout. */
#include <stdio.h>
#include <stdlib.h>

#include "mp_layout.h"

int main(int argc, char **argv)
{
	mp_layout l;
	mp_diag d = { 0 };
	char *text;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: layout_dump LIBC10_CUDA [DEBUG_ROOT]\n");
		return 2;
	}
	if (mp_layout_from_dwarf(argv[1], argc > 2 ? argv[2] : NULL, &l, &d) != MP_OK) {
		fprintf(stderr, "layout_dump: %s\n", d.msg);
		return 1;
	}
	text = mp_layout_format(&l);
	if (text == NULL)
		return 1;
	fputs(text, stdout);
	free(text);
	return 0;
}

/* command_files.c - what a file named as a SNAPSHOT word is: a core dump (an ELF file of type
   ET_CORE), another ELF file, or anything else, left to the snapshot reader. Read once, from its
   first 18 bytes. */
#include <stdio.h>
#include <string.h>

#include "mp_command.h"

enum mp_file_kind mp_file_kind(const char *path)
{
	unsigned char h[18];
	FILE *f;
	size_t n;

	if (strcmp(path, "-") == 0)
		return MP_FILE_SNAPSHOT;
	f = fopen(path, "rb");
	if (f == NULL)
		return MP_FILE_UNREADABLE;
	n = fread(h, 1, sizeof h, f);
	fclose(f);
	if (n < sizeof h || memcmp(h, "\177ELF", 4) != 0)
		return MP_FILE_SNAPSHOT;
	/* e_type sits at 16 in both ELF classes, in the file's byte order (h[5]: 1 LE, 2 BE) */
	return (h[5] == 2 ? (h[16] << 8 | h[17]) : (h[17] << 8 | h[16])) == 4 ? MP_FILE_CORE : MP_FILE_OTHER_ELF;
}

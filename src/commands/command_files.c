/* command_files.c - what a file named as a SNAPSHOT word is: a core dump (an ELF file of type
   ET_CORE), another ELF file, or anything else, left to the snapshot reader (read once, from its
   first 18 bytes); and the walk of a target a front end opened for such a word. */
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

int mp_command_walk(mp_command_ctx *c, const char *label, mp_target *t, const mp_walk_opts *opts, mp_walk **w)
{
	mp_diag diag;
	mp_err err;

	mp_command_diag(c, &diag);
	if ((err = mp_walk_run(t, NULL, opts, w, &diag)) != MP_OK) {
		if (t != c->live)
			mp_target_close(t);
		return mp_command_fail(c, label, err, &diag);
	}
	return MP_CMD_OK;
}

/* core_int.h - the body of mp_core, shared by the files of the core reader (not installed). */
#ifndef MEMPROF_CORE_INT_H
#define MEMPROF_CORE_INT_H

#include <libelf.h>
#include <stdint.h>

#include "mp_core.h"

/* Caps on what a core's headers may make us allocate. */
#define CORE_NOTES_MAX (256u << 20)  /* bytes in one PT_NOTE */
#define CORE_FILES_MAX (1u << 20)    /* NT_FILE entries */

struct mp_core {
	int fd;
	uint64_t size;          /* of the file */
	const unsigned char *map; /* the whole file, read-only (NULL if it could not be mapped) */
	uint64_t want;          /* the size its PT_LOADs need */
	const char *path;       /* for messages */
	char *path_copy;
	Elf *elf;
	mp_core_segment *segs;  /* PT_LOADs with memsz > 0, by address */
	size_t nsegs;
	const mp_core_segment *last; /* the segment mp_core_direct found last, NULL: none yet */
	mp_core_file *files;    /* NT_FILE, by address */
	size_t nfiles;
	char *file_names;       /* the strings files[].path point into */
	mp_core_info info;
	char fname[17];
	char psargs[81];
};

/* Read the notes of the PT_NOTE at OFFSET (SIZE bytes, aligned ALIGN) into C's info and
   files. */
mp_err core_read_notes(mp_core *c, uint64_t offset, uint64_t size, uint64_t align, mp_diag *diag) MP_WUR;

#endif

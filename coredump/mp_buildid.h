/* mp_buildid.h - GNU build-ids (NT_GNU_BUILD_ID) of ELF files and of ELF images read from a
   process's memory, found through the program headers with libelf. */
#ifndef MEMPROF_BUILDID_H
#define MEMPROF_BUILDID_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_err.h"

#define MP_BUILDID_MAX 64

typedef struct mp_buildid {
	size_t len; /* 0: none */
	unsigned char bytes[MP_BUILDID_MAX];
} mp_buildid;

/* The build-id of the ELF file open for reading at FD (read with pread; FD's offset does not
   matter). MP_E_FORMAT when it is not ELF, MP_E_NOTFOUND when it has no build-id note. */
mp_err mp_buildid_of_fd(int fd, mp_buildid *out, mp_diag *diag) MP_WUR;

/* The build-id in IMAGE, LEN bytes of an ELF file as mapped from file offset 0 (the first
   page(s) of a mapping in a process's memory: program headers and notes at their file
   offsets). Same errors as mp_buildid_of_fd; MP_E_TRUNCATED when the notes lie past LEN. */
mp_err mp_buildid_of_image(const void *image, size_t len, mp_buildid *out, mp_diag *diag) MP_WUR;

/* ID in lower-case hex into BUF (N bytes, NUL-terminated, cut short to fit); "none" when
   it is empty. This function can't fail. */
void mp_buildid_hex(const mp_buildid *id, char *buf, size_t n);

/* Whether A and B are the same build-id. */
bool mp_buildid_equal(const mp_buildid *a, const mp_buildid *b);

#endif

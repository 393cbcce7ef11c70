/* mp_file.h - write a result file whole or not at all, and the directories it goes into. */
#ifndef MEMPROF_FILE_H
#define MEMPROF_FILE_H

#include <stddef.h>

#include "mp_err.h"

/* Write LEN bytes of DATA to PATH through a temporary name beside it, renamed into place when
   all went well: a failure never leaves half a file behind. MP_E_ERRNO with DIAG naming PATH
   and the system's reason. */
mp_err mp_file_write(const char *path, const void *data, size_t len, mp_diag *diag) MP_WUR;

/* Make directory PATH and its parents, as mkdir -p (one that exists is fine). MP_E_ERRNO with DIAG naming the
   directory and the system's reason (DIAG may be NULL). */
mp_err mp_file_mkdirs(const char *path, mp_diag *diag) MP_WUR;

#endif

/* fuzz_memfd.h - the fuzz input as a file: readers that take a path (rules files, cores) read it from a memfd. */
#ifndef MEMPROF_FUZZ_MEMFD_H
#define MEMPROF_FUZZ_MEMFD_H

#include <stddef.h>
#include <stdint.h>

/* Write DATA (LEN bytes) to this process's one memfd, replacing what it held, and return its path
   ("/proc/self/fd/N"). Aborts when the memfd cannot be made or written. */
const char *fuzz_memfd(const uint8_t *data, size_t len);

#endif

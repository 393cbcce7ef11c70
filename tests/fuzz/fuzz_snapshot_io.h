/* fuzz_snapshot_io.h - the snapshot file readers and the round trip through the writers (fuzz_snapshot_io.c). */
#ifndef MEMPROF_FUZZ_SNAPSHOT_IO_H
#define MEMPROF_FUZZ_SNAPSHOT_IO_H

#include <stddef.h>
#include <stdint.h>

/* Read DATA as a snapshot file both ways (projected and full); round-trip what loads. Aborts on a broken
   invariant. */
void fuzz_snapshot_io(const uint8_t *data, size_t len);

#endif

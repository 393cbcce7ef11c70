/* fuzz_overlay.h - real cores whose memory the fuzz input rewrites (fuzz_walker, fuzz_python).
   Each core of a colon-separated list is opened once and worked on cleanly through a callback target that notes
   every page the work reads; the input then picks a core (its first byte, bits 1 on) and patches those pages
   ([offset: u32 LE][length: u8][bytes]..., the offset taken modulo the pages' size, the length modulo 33), and
   the work runs again on a target that serves the patched pages over the rest of the core. */
#ifndef MEMPROF_FUZZ_OVERLAY_H
#define MEMPROF_FUZZ_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_c10.h"
#include "mp_target.h"

/* The work on a target: T (closed by the caller), C10 the core's allocator library as found on the clean core
   (its allocator not found: zeroed), FLAG the input's first byte's bit 0. Whether it went through (the clean run
   must). */
typedef bool (*fuzz_work_fn)(mp_target *t, const mp_c10 *c10, bool flag);

/* Run WORK on the core the input DATA (SIZE bytes) picks among those ENV names, patched by the input. The first
   call sets every core up (a clean run of WORK each, recording the pages it reads); it aborts when ENV names
   none or a clean run fails. */
void fuzz_overlay_run(const char *env, fuzz_work_fn work, const uint8_t *data, size_t size);

#endif

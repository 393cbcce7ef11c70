/* mp_catch.h - a CUDA OOM caught where PyTorch throws it, by the debugger's `memprof catch oom` (src/session) or
   by `memprof watch` (src/cli): the files each caught OOM leaves, named once for both. For the Nth in DIR:
   oom-N.txt (the explanation; oom-N.json in JSON), oom-N.pickle (the snapshot), oom-N.pystack.txt (every
   thread's Python stack), oom-N.pause (the seconds the job stood while they were written). */
#ifndef MEMPROF_CATCH_H
#define MEMPROF_CATCH_H

#include <stdbool.h>
#include <stddef.h>

enum mp_catch_file { MP_CATCH_REPORT, MP_CATCH_SNAPSHOT, MP_CATCH_PYSTACK, MP_CATCH_PAUSE };

/* The path of file F of the Nth OOM in DIR into BUF (SIZE bytes; JSON: the report is JSON). False when it does
   not fit. */
bool mp_catch_path(char *buf, size_t size, const char *dir, unsigned n, enum mp_catch_file f, bool json);

/* The files of the Nth OOM as a message names them, "DIR/oom-N.{txt,pickle,pystack.txt}", into BUF. */
void mp_catch_names(char *buf, size_t size, const char *dir, unsigned n, bool json);

/* Write SECONDS into the Nth OOM's pause file; false when it cannot be written. */
bool mp_catch_write_pause(const char *dir, unsigned n, double seconds);

#endif

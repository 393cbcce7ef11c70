/* cli_prefetch.h - reading a command's next snapshot file on another thread (cli_prefetch.c). */
#ifndef MEMPROF_CLI_PREFETCH_H
#define MEMPROF_CLI_PREFETCH_H

#include <stdbool.h>

#include "mp_err.h"
#include "mp_snapshot.h"
#include "mp_snapshot_file.h"

/* Start reading snapshot file WORD with load FLAGS (enum mp_load_flags) on another thread,
   dropping any read ahead not taken. WORD must live until it is taken or dropped. */
void cli_prefetch_start(const char *word, unsigned flags);

/* If WORD is being read ahead with FLAGS: wait for it and give what mp_snapshot_load would
   have (*SNAP, *ERR, DIAG's message; its warnings go to DIAG's sink now), and return true. */
bool cli_prefetch_take(const char *word, unsigned flags, mp_snapshot **snap, mp_err *err, mp_diag *diag);

/* Wait for a read ahead that was not taken, and free it. */
void cli_prefetch_drop(void);

#endif

/* mp_session_table.h - the debugger's commands as entries of the command table (src/commands), for the
   tools built with the library that describe them (the manual page and its generator, doc/). Not part of
   libmemprof's exported API: mp_session_command_name/help/spec (mp_session.h) are. */
#ifndef MEMPROF_SESSION_TABLE_H
#define MEMPROF_SESSION_TABLE_H

#include "mp_command.h"

/* The session's command I, in help order (its own, then the shared table's), or NULL past the last. */
const mp_command *session_command(int i);

#endif

/* fuzz_front.h - what the harnesses share: memprof's commands run over a snapshot held in memory (the fuzz
   input), through the same command table and parser the CLI and the debugger use. */
#ifndef MEMPROF_FUZZ_FRONT_H
#define MEMPROF_FUZZ_FRONT_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point, which every harness defines (replay_main.c calls it on files). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run the command of WORDS (its name first, NULL-ended; "in" stands for a SNAPSHOT word) over the snapshot in
   DATA (LEN bytes, pickle or JSON): every SNAPSHOT word loads DATA with the load flags the command asks for.
   Output and warnings are dropped. The command's status (enum mp_command_status); a status the CLI never returns
   aborts, as would a crash. */
int fuzz_command(const uint8_t *data, size_t len, const char *const *words);

/* An abort with a message: an invariant of the harness broke (a round trip that does not hold). */
_Noreturn void fuzz_fail(const char *what);

#endif

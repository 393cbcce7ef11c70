/* mp_err.h - memprof's error codes and the one-line diagnostic that goes with them. */
#ifndef MEMPROF_ERR_H
#define MEMPROF_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Every code names what went wrong; mp_strerror gives its generic text. */
#define MP_ERRORS                                                         \
	MP_ERROR(OK, "success")                                           \
	MP_ERROR(NOMEM, "out of memory")                                  \
	MP_ERROR(ERRNO, "system call failed")                             \
	MP_ERROR(USAGE, "bad usage")                                      \
	MP_ERROR(FORMAT, "unrecognised input format")                     \
	MP_ERROR(TRUNCATED, "input truncated")                            \
	MP_ERROR(CORRUPT, "input is malformed")                           \
	MP_ERROR(UNSUPPORTED, "unsupported construct in input")           \
	MP_ERROR(TYPE, "value of the wrong type")                         \
	MP_ERROR(RANGE, "value out of range")                             \
	MP_ERROR(LIMIT, "input exceeds a safety limit")                   \
	MP_ERROR(CYCLE, "cyclic structure")                               \
	MP_ERROR(NOTFOUND, "not found")                                   \
	MP_ERROR(SKIPPED, "a value needed was passed over when reading")  \
	MP_ERROR(INTERRUPTED, "interrupted")

#define MP_ERROR(name, text) MP_E_##name,
typedef enum mp_err { MP_ERRORS MP_E__COUNT } mp_err;
#undef MP_ERROR

#define MP_OK MP_E_OK

#define MP_WUR __attribute__((warn_unused_result))
#define MP_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* A caller-owned record of the first error's detail and of warnings.
   MSG holds one line without a trailing newline (empty when none was set).
   WARN, when set, receives each warning line as it happens; NWARN counts them. DAMAGED, when set,
   is told (with WARN_CTX) before WARN of each warning that says the memory read was damaged or
   inconsistent (mp_warn_damage): in a process that runs on while it is read, that may be a race. */
typedef struct mp_diag {
	char msg[512];
	unsigned nwarn;
	void (*warn)(void *ctx, const char *line);
	void *warn_ctx;
	void (*damaged)(void *ctx);
} mp_diag;

/* Generic text for ERR. This function can't fail. */
const char *mp_strerror(mp_err err);

/* Clear DIAG's message and warning count, keeping its warning sink. */
void mp_diag_reset(mp_diag *diag);

/* Record ERR's detail in DIAG (if DIAG is not NULL and holds no message yet:
   the first, innermost failure wins) and return ERR, so that callers can write
   "return mp_fail(diag, MP_E_CORRUPT, "...", ...)". */
mp_err mp_fail(mp_diag *diag, mp_err err, const char *fmt, ...) MP_PRINTF(3, 4);

/* Report one warning through DIAG's sink and count it. DIAG may be NULL. */
void mp_warn(mp_diag *diag, const char *fmt, ...) MP_PRINTF(2, 3);
/* The same for a warning about damage: memory that could not be read where a pointer led, or that
   contradicts itself (a list that does not link back, statistics that disagree with the blocks). A
   reader says so whenever it passes over something damaged, so that a front end can tell a race
   with a running process from damage and read again. DIAG may be NULL. */
void mp_warn_damage(mp_diag *diag, const char *fmt, ...) MP_PRINTF(2, 3);
/* Copy FROM's warning sink (warn, damaged, their context) into TO. */
void mp_diag_sink(mp_diag *to, const mp_diag *from);

#endif

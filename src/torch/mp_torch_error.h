/* mp_torch_error.h - c10::Error objects (c10::OutOfMemoryError among them) read from a target: what a C++
   exception PyTorch throws says, before Python ever sees it. */
#ifndef MEMPROF_TORCH_ERROR_H
#define MEMPROF_TORCH_ERROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_target.h"

/* The longest message read. */
#define MP_TORCH_ERROR_MAX_MSG 65536

/* The message (msg_, the text without context or backtrace) of the c10::Error at ADDR into *OUT (the caller
   frees it). Every 2.x release keeps msg_ as the first member after the vtable pointer, a std::string whose
   first word points at its NUL-terminated characters in both of libstdc++'s string ABIs. Errors of
   mp_target_read; MP_E_CORRUPT when the text is not there. */
mp_err mp_torch_error_message(mp_target *t, uint64_t addr, char **out, mp_diag *diag) MP_WUR;

/* Whether a C++ throw is the caching allocator's OOM, from the std::type_info libstdc++'s __cxa_throw gets (its
   second argument): a vtable pointer, then its name, the mangled c10::OutOfMemoryError every 2.x release gives
   it (after a '*' when names are compared by address). READ(CTX, ADDR, BUF, LEN) reads LEN bytes of the
   process, true when it could; a name that cannot be read is no OOM. The debugger's catch and memprof watch
   both ask here. */
typedef bool (*mp_torch_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
bool mp_torch_throws_oom(mp_torch_read_fn read, void *ctx, uint64_t type_info);

#endif

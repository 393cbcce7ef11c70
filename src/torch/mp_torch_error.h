/* mp_torch_error.h - c10::Error objects (c10::OutOfMemoryError among them) read from a target: what a C++
   exception PyTorch throws says, before Python ever sees it. */
#ifndef MEMPROF_TORCH_ERROR_H
#define MEMPROF_TORCH_ERROR_H

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

#endif

/* mp_out.h - a growable text/byte output buffer, optionally draining into a FILE. */
#ifndef MEMPROF_OUT_H
#define MEMPROF_OUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mp_err.h"

/* Analyses write into an mp_out; front ends decide where the bytes go
   (stdout, a file, a Python string for gdb's pager). With a SINK the buffer
   drains into it whenever it passes a threshold, so output of any size needs
   bounded memory. An allocation or write failure is sticky: later appends do
   nothing and mp_out_finish reports it. */
typedef struct mp_out {
	char *data;
	size_t len;
	size_t cap;
	FILE *sink;
	uint64_t drained; /* bytes written to the sink so far */
	mp_err err;
} mp_out;

/* Start OUT writing to memory only. This function can't fail. */
void mp_out_init(mp_out *out);

/* Start OUT draining into SINK (not closed by memprof). This function can't fail. */
void mp_out_init_file(mp_out *out, FILE *sink);

/* Flush what is buffered to the sink (if any) and return the sticky error
   (MP_OK, MP_E_NOMEM or MP_E_ERRNO). The buffer stays usable. */
mp_err mp_out_flush(mp_out *out) MP_WUR;

/* Release OUT's buffer. Does not flush. */
void mp_out_free(mp_out *out);

/* Hand the buffered bytes to the caller (NUL-terminated, LEN in *LEN; free()
   them) and reset OUT to empty. Returns NULL after an error. */
char *mp_out_take(mp_out *out, size_t *len);

void mp_out_write(mp_out *out, const void *data, size_t len);
void mp_out_puts(mp_out *out, const char *s);
void mp_out_putc(mp_out *out, char c);
void mp_out_printf(mp_out *out, const char *fmt, ...) MP_PRINTF(2, 3);
void mp_out_vprintf(mp_out *out, const char *fmt, va_list ap) MP_PRINTF(2, 0);
void mp_out_i64(mp_out *out, int64_t v);
void mp_out_u64(mp_out *out, uint64_t v);

/* Make room for N more bytes and return where they go (NULL after an error);
   the caller then advances out->len itself. For hot loops. */
char *mp_out_reserve(mp_out *out, size_t n);

#endif

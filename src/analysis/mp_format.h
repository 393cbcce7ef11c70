/* mp_format.h - the number formatting of PyTorch's _memory_viz.py: _format_size (Bytes),
   _report_free and Python's int arithmetic that they rely on. */
#ifndef MEMPROF_FORMAT_H
#define MEMPROF_FORMAT_H

#include "mp_out.h"

/* Sums of int64 snapshot fields can pass int64 on hostile input, and Python's
   ints never overflow, so totals are kept in 128 bits. */
__extension__ typedef __int128 mp_i128;

/* Write V in decimal, as Python's str(int). This function can't fail. */
void mp_format_i128(mp_out *out, mp_i128 v);

/* Python's A / B for ints (true division): the correctly rounded double of
   the exact quotient. B must not be 0. */
double mp_format_int_div(mp_i128 a, mp_i128 b);

/* Write _format_size(N) for an int N (what f"{Bytes(n)}" prints), e.g. "20.0MiB". */
void mp_format_bytes(mp_out *out, mp_i128 n);

/* Write _report_free(EXTERNAL, INTERNAL), e.g. "1.5KiB (33.3% internal)". */
void mp_format_report_free(mp_out *out, mp_i128 external, mp_i128 internal);

#endif

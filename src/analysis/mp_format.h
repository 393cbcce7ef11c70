/* mp_format.h - the number formatting of PyTorch's _memory_viz.py: _format_size (Bytes),
   _report_free and Python's int arithmetic that they rely on. */
#ifndef MEMPROF_FORMAT_H
#define MEMPROF_FORMAT_H

#include <stdbool.h>

#include "mp_out.h"

/* Sums of int64 snapshot fields can pass int64 on hostile input, and Python's
   ints never overflow, so totals are kept in 128 bits. */
__extension__ typedef __int128 mp_i128;

/* Write V in decimal, as Python's str(int). This function can't fail. */
void mp_format_i128(mp_out *out, mp_i128 v);
/* The most characters mp_format_i128_to writes (a sign and 39 digits). */
#define MP_I128_CHARS 40
/* V in decimal at DST (room for MP_I128_CHARS); returns the length. This function can't fail. */
size_t mp_format_i128_to(char *dst, mp_i128 v);

/* Python's A / B for ints (true division): the correctly rounded double of
   the exact quotient. B must not be 0. */
double mp_format_int_div(mp_i128 a, mp_i128 b);

/* Write _format_size(N) for an int N (what f"{Bytes(n)}" prints), e.g. "20.0MiB". */
void mp_format_bytes(mp_out *out, mp_i128 n);

/* Size units a user may choose. AUTO is _format_size's own choice. */
enum mp_units { MP_UNITS_AUTO, MP_UNITS_B, MP_UNITS_KIB, MP_UNITS_MIB, MP_UNITS_GIB };

/* The words mp_units_parse reads, blank-separated: the choices of every --units and of the setting. */
#define MP_UNITS_CHOICES "auto B KiB MiB GiB"

/* Read TEXT ("auto", "B", "KiB", "MiB", "GiB", any case) into *OUT. False for
   anything else (*OUT unchanged). */
bool mp_units_parse(const char *text, enum mp_units *out);

/* The name mp_units_parse reads for U ("auto", "B", "KiB", ...); "?" for no unit. */
const char *mp_units_name(enum mp_units u);

/* Write N in units U: AUTO as mp_format_bytes; B as the integer and "B"
   ("1536B"); the others with one decimal, spelled as mp_format_bytes spells
   them ("1.5MiB"). This function can't fail. */
void mp_format_size(mp_out *out, mp_i128 n, enum mp_units u);

/* V as PyTorch's own format_size (c10) prints sizes in its messages: up to 1024 "N bytes", up to 1 MiB
   "x.xx KiB", up to 1 GiB "x.xx MiB", else "x.xx GiB"; a negative V (a difference) as '-' and the size of its
   magnitude. In BUF of N bytes; returns BUF. This function can't fail. */
const char *mp_format_torch_size(char *buf, size_t n, int64_t v);

/* Write _report_free(EXTERNAL, INTERNAL), e.g. "1.5KiB (33.3% internal)". */
void mp_format_report_free(mp_out *out, mp_i128 external, mp_i128 internal);

#endif

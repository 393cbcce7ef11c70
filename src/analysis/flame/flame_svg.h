/* flame_svg.h - render folded stack lines as a self-contained flame graph SVG. */
#ifndef MEMPROF_FLAME_SVG_H
#define MEMPROF_FLAME_SVG_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_out.h"

/* Render folded stack lines (TEXT, LEN bytes: "frame1;frame2;...;frameN COUNT\n" per line, COUNT a
   non-negative decimal integer, frames separated by ';') as a flame graph SVG into OUT. TITLE is the
   heading; COUNTNAME labels the counts (e.g. "bytes"). Returns MP_OK, or MP_E_CORRUPT with DIAG set for
   a malformed line (naming its line number), or MP_E_NOMEM.

   Details: identical stacks are merged and siblings sorted by name (bytewise), so the output depends
   only on the multiset of lines, never on their order, and is byte-identical for the same input.
   Blank lines and lines with a negative count (which _memory_viz writes for gaps) are skipped; the count is the last whitespace-separated field, and a trailing '\r' is
   ignored. TEXT need not be NUL-terminated and may hold any bytes: invalid UTF-8 and control
   characters are shown as U+FFFD. Input with no stacks, or only zero counts, gives a valid SVG that
   says "No data". TITLE and COUNTNAME may be NULL ("Flame Graph", "samples"). Nothing is written to
   OUT unless the whole input parses. When OUT drains into a file, its sticky MP_E_ERRNO is returned
   too. DIAG may be NULL. */
mp_err mp_flame_svg(const char *text, size_t len, const char *title, const char *countname, mp_out *out,
		    mp_diag *diag) MP_WUR;

/* Write folded lines TEXT (LEN bytes) to the file PATH as they are, or rendered by mp_flame_svg
   (TITLE, counts in bytes) when PATH ends in ".svg"; whole or not at all (mp_file_write). */
mp_err mp_flame_write(const char *text, size_t len, const char *path, const char *title, mp_diag *diag) MP_WUR;

#endif

/* mp_py_linetable.h - the line of a Python frame: CPython's PyCode_Addr2Line over a code object's line table,
   read from the target as bytes, for each format CPython has used since 3.10. */
#ifndef MEMPROF_PY_LINETABLE_H
#define MEMPROF_PY_LINETABLE_H

#include <stdbool.h>
#include <stddef.h>

/* The formats of co_linetable. */
enum mp_py_linetable_format {
	MP_PY_LINETABLE_310, /* 3.10 (PEP 626): (bytes, line delta) pairs, a delta of -128 for "no line" */
	MP_PY_LINETABLE_311, /* 3.11 and later: the location table (one entry per run of code units, varints) */
};

/* The format CPython MAJOR.MINOR writes; false for a version memprof does not know (before 3.10). */
bool mp_py_linetable_format_of(int major, int minor, enum mp_py_linetable_format *out);

/* The line of the instruction at byte offset LASTI of a code object whose line table is TABLE (LEN bytes)
   and whose co_firstlineno is FIRSTLINENO: what PyCode_Addr2Line(code, lasti) returns. LASTI < 0 (a frame
   that has not started) gives FIRSTLINENO; an instruction without a line, or LASTI past the table, gives -1.
   Reads only TABLE[0, LEN): a damaged table gives a wrong line or -1, never a read outside it. */
int mp_py_addr2line(enum mp_py_linetable_format f, const unsigned char *table, size_t len, int firstlineno,
		    int lasti);

#endif

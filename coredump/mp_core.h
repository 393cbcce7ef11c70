/* mp_core.h - an ELF core file read with libelf: its PT_LOAD segments, its notes (NT_FILE,
   NT_PRSTATUS, NT_PRPSINFO, NT_AUXV) and the memory bytes it holds. */
#ifndef MEMPROF_CORE_H
#define MEMPROF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

typedef struct mp_core mp_core;

/* One PT_LOAD: [VADDR, VADDR+MEMSZ) of the process; the first FILESZ bytes are at OFFSET in
   the core, of which the first AVAIL are really there (less than FILESZ in a truncated core). */
typedef struct mp_core_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz, avail;
	uint32_t flags; /* PF_R | PF_W | PF_X */
} mp_core_segment;

/* One NT_FILE entry: [START, END) maps PATH from byte FILE_OFFSET on. */
typedef struct mp_core_file {
	uint64_t start, end;
	uint64_t file_offset;
	const char *path;
} mp_core_file;

/* What the notes say about the process; strings are NULL and numbers 0 when absent. */
typedef struct mp_core_info {
	int pid;              /* NT_PRPSINFO pr_pid, else the first NT_PRSTATUS pr_pid */
	int signo;            /* the first NT_PRSTATUS pr_cursig */
	const char *fname;    /* NT_PRPSINFO pr_fname (16 bytes at most) */
	const char *psargs;   /* NT_PRPSINFO pr_psargs (80 bytes at most), trailing blanks cut */
	uint64_t at_phdr;     /* NT_AUXV AT_PHDR: the executable's program headers */
	uint64_t at_execfn;   /* NT_AUXV AT_EXECFN: address of the exec'd file name */
	uint64_t at_pagesz;   /* NT_AUXV AT_PAGESZ */
	uint64_t file_page_size; /* the page size NT_FILE counted offsets in (gdb 1, the kernel 4096) */
	unsigned nthreads;    /* NT_PRSTATUS notes */
} mp_core_info;

/* Why mp_core_read stopped short. */
enum mp_core_hole {
	MP_CORE_HOLE_NONE,       /* it did not */
	MP_CORE_HOLE_UNMAPPED,   /* no PT_LOAD covers the address (gdb leaves out what it did not dump) */
	MP_CORE_HOLE_NOT_DUMPED, /* a PT_LOAD covers it past its p_filesz (the kernel did not dump it) */
	MP_CORE_HOLE_TRUNCATED,  /* the core holds it, but the file ends before */
	MP_CORE_HOLE_IO,         /* reading the core failed */
};

/* Open the core file PATH. Fails with a one-line reason in DIAG when PATH is not a regular
   file, not a 64-bit little-endian ELF core, or when its program headers or notes lie outside
   the file or are malformed. A core cut short (by a core size limit) opens, with a warning
   through DIAG; the bytes past its end read as holes of kind MP_CORE_HOLE_TRUNCATED. */
mp_err mp_core_open(const char *path, mp_core **out, mp_diag *diag) MP_WUR;

/* Close C. C may be NULL. */
void mp_core_close(mp_core *c);

/* Copy the leading bytes of [ADDR, ADDR+LEN) that the core holds into BUF and return how
   many. When that is less than LEN, *HOLE says why the next byte is missing and *HOLE_LEN
   how many bytes from there on are missing for the same reason (at least 1, at most what is
   left of LEN). HOLE and HOLE_LEN may be NULL. */
size_t mp_core_read(mp_core *c, uint64_t addr, void *buf, size_t len, enum mp_core_hole *hole,
		    uint64_t *hole_len);

/* The PT_LOAD segments in address order (valid until mp_core_close). */
/* A pointer to the LEN bytes at ADDR inside the core file (mapped read-only) when the core
   holds all of them in one segment, else NULL (then mp_core_read says what is missing). C remembers the
   segment it found: a walk reads one heap segment many times in a row. */
const void *mp_core_direct(mp_core *c, uint64_t addr, size_t len);

size_t mp_core_segments(const mp_core *c, const mp_core_segment **out);

/* The NT_FILE entries in address order (valid until mp_core_close). */
size_t mp_core_files(const mp_core *c, const mp_core_file **out);

const mp_core_info *mp_core_get_info(const mp_core *c);

/* Whether the core is shorter than its segments say; *HAVE and *WANT (may be NULL) get the
   real and the expected size. */
bool mp_core_truncated(const mp_core *c, uint64_t *have, uint64_t *want);

#endif

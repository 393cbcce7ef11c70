/* fuzz_core.c - libFuzzer harness: the core-file reader (coredump/) on any bytes, as a file: ELF and program
   headers, the notes (NT_FILE, NT_PRSTATUS, NT_PRPSINFO, NT_AUXV), reads across and beside every segment, then
   the same bytes as a memprof target, whose mapped files are looked for libc10_cuda.so as `memprof info` does.
   Seeds: tests/fuzz/corpus/core (real cores, minimised: headers, notes and a few bytes of memory). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_front.h"
#include "fuzz_memfd.h"
#include "mp_c10.h"
#include "mp_core.h"
#include "mp_target.h"

/* Everything the reader hands out, touched: strings to their end, reads at the edges of each segment. */
static void read_all(mp_core *c)
{
	const mp_core_segment *seg;
	const mp_core_file *files;
	const mp_core_info *info = mp_core_get_info(c);
	size_t nseg = mp_core_segments(c, &seg), nfiles = mp_core_files(c, &files);
	unsigned char buf[256];
	enum mp_core_hole hole;
	uint64_t hole_len, have, want;
	volatile size_t sum = 0;

	for (size_t i = 0; i < nfiles; i++) {
		if (files[i].path == NULL || files[i].start > files[i].end)
			fuzz_fail("an NT_FILE entry without a path, or ending before it starts");
		sum += strlen(files[i].path);
	}
	if (info->fname != NULL)
		sum += strlen(info->fname);
	if (info->psargs != NULL)
		sum += strlen(info->psargs);
	for (size_t i = 0; i < nseg && i < 64; i++) {
		uint64_t at[] = { seg[i].vaddr, seg[i].vaddr + seg[i].memsz - 1, seg[i].vaddr + seg[i].filesz - 1,
				  seg[i].vaddr - 1, seg[i].vaddr + seg[i].memsz - 128 };

		for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
			size_t got = mp_core_read(c, at[k], buf, sizeof buf, &hole, &hole_len);

			if (got > sizeof buf || (got < sizeof buf && (hole == MP_CORE_HOLE_NONE || hole_len == 0)))
				fuzz_fail("mp_core_read stopped short without a hole");
			if (mp_core_direct(c, at[k], 16) != NULL)
				sum += ((const unsigned char *)mp_core_direct(c, at[k], 16))[15];
		}
	}
	mp_core_truncated(c, &have, &want);
	(void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_memfd(data, size);
	mp_core *c = NULL;
	mp_target *t = NULL;
	mp_target_opts topts = { 0 };
	mp_diag diag = { 0 };
	mp_c10 c10;

	if (mp_core_open(path, &c, &diag) != MP_OK) {
		if (diag.msg[0] == '\0')
			fuzz_fail("mp_core_open failed without saying why");
		return 0;
	}
	read_all(c);
	mp_core_close(c);
	memset(&diag, 0, sizeof diag);
	if (mp_target_open_core(path, &topts, &t, &diag) == MP_OK) {
		memset(&diag, 0, sizeof diag);
		if (mp_c10_find(t, &c10, &diag) != MP_OK && diag.msg[0] == '\0')
			fuzz_fail("mp_c10_find failed without saying why");
		mp_target_close(t);
	}
	return 0;
}

/* fuzz_walker.c - libFuzzer harness: the walker over a real core whose allocator memory the fuzzer rewrites.
   The cores (MEMPROF_FUZZ_CORE, colon-separated: test-bed cores of PyTorch's real allocator in several scenarios,
   made by core_for_walker.sh) are each walked once cleanly through a callback target that notes every page the
   walk reads: the allocator object and its device allocators, blocks, free-block trees, hash tables, private
   pools, expandable segments, the trace ring and its entries, contexts, the library's pointer slot. The input's
   first byte picks the core (bits 1 on) and whether the allocator is located again (bit 0); the rest is a list
   of patches to those pages, each [offset: u32 LE][length: u8][bytes], the offset taken modulo the pages' size
   and the length modulo 33; the pages so rewritten are served over the rest of the core. Then the walk runs, its
   snapshot is built with frames and written as a pickle: pointers, counts, trees, rings and contexts are all
   attacked, and the self-check, the limits and the partial walks must hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_front.h"
#include "mp_c10.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"
#include "mp_target.h"
#include "mp_walk.h"

#define PAGE 4096u
#define MAX_PAGES 4096u /* 16 MiB of attacked memory at most */
#define MAX_CORES 8

struct core {
	mp_target *core;
	const mp_mapping *maps;
	size_t nmaps;
	mp_c10 c10;
	uint64_t pages[MAX_PAGES]; /* sorted, once the clean walk is done */
	size_t npages;
	unsigned char *clean, *work; /* npages * PAGE bytes each */
	bool recording;
};
static struct core cores[MAX_CORES];
static size_t ncores;
static struct core *F; /* the one walked now */

/* Bytes of the core at ADDR: as many leading ones as it holds. */
static size_t core_read(uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	if (mp_target_read(F->core, addr, buf, len, NULL) == MP_OK)
		return len;
	while (done < len) {
		size_t n = PAGE - (size_t)((addr + done) % PAGE);

		if (n > len - done)
			n = len - done;
		if (mp_target_read(F->core, addr + done, (char *)buf + done, n, NULL) != MP_OK)
			break;
		done += n;
	}
	return done;
}

static void note_page(uint64_t page)
{
	for (size_t i = 0; i < F->npages; i++)
		if (F->pages[i] == page)
			return;
	if (F->npages < MAX_PAGES)
		F->pages[F->npages++] = page;
}

static long find_page(uint64_t page)
{
	size_t lo = 0, hi = F->npages;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (F->pages[mid] == page)
			return (long)mid;
		if (F->pages[mid] < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The callback target's reads: the rewritten pages where the walk read before, the core elsewhere. */
static size_t overlay_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	(void)ctx;
	while (done < len) {
		uint64_t at = addr + done, page = at - at % PAGE;
		size_t n = PAGE - (size_t)(at - page);
		long i;

		if (n > len - done)
			n = len - done;
		if (F->recording) {
			note_page(page);
			i = -1;
		} else {
			i = find_page(page);
		}
		if (i >= 0) {
			memcpy((char *)buf + done, F->work + (size_t)i * PAGE + (at - page), n);
		} else {
			size_t got = core_read(at, (char *)buf + done, n);

			done += got;
			if (got < n)
				break;
			continue;
		}
		done += n;
	}
	return done;
}

/* One walk over the overlay: find (when asked), walk, snapshot with frames, pickle. Whether it walked. */
static bool walk_once(bool find)
{
	mp_target *t = NULL;
	mp_walk *w = NULL;
	mp_snapshot *snap = NULL;
	mp_walk_opts opts = { .max_blocks = 1u << 20 };
	mp_diag diag = { 0 };
	mp_c10 c10 = F->c10;
	mp_out out;

	if (mp_target_open_callback("fuzz", overlay_read, NULL, F->maps, F->nmaps, &t, &diag) != MP_OK)
		fuzz_fail("cannot open the overlay target");
	if (find && mp_c10_find(t, &c10, &diag) != MP_OK) {
		mp_target_close(t);
		return false;
	}
	memset(&diag, 0, sizeof diag);
	bool walked = mp_walk_run(t, &c10, &opts, &w, &diag) == MP_OK;
	if (walked) {
		memset(&diag, 0, sizeof diag);
		if (mp_snapshot_from_walk(w, t, MP_SW_DEVICE_STATS, &snap, &diag) == MP_OK) {
			mp_out_init(&out);
			memset(&diag, 0, sizeof diag);
			if (mp_snapshot_save(snap, MP_FMT_PICKLE, &out, &diag) != MP_OK && diag.msg[0] == '\0')
				fuzz_fail("writing the walk's snapshot failed without saying why");
			mp_out_free(&out);
			mp_snapshot_free(snap);
		}
		mp_walk_free(w);
	} else if (diag.msg[0] == '\0') {
		fuzz_fail("the walk failed without saying why");
	}
	mp_target_close(t);
	return walked;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Open the core PATH as F, locate the allocator, and walk once cleanly to learn which pages the walk reads. */
static void setup_core(const char *path)
{
	mp_target_opts topts = { 0 };
	mp_diag diag = { 0 };

	if (mp_target_open_core(path, &topts, &F->core, &diag) != MP_OK)
		fuzz_fail(diag.msg);
	F->nmaps = mp_target_mappings(F->core, &F->maps);
	if (mp_c10_find(F->core, &F->c10, &diag) != MP_OK)
		fuzz_fail(diag.msg);
	F->recording = true;
	if (!walk_once(true))
		fuzz_fail("the clean walk of MEMPROF_FUZZ_CORE failed");
	F->recording = false;
	if (getenv("MEMPROF_FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_walker: the walk reads %zu pages of %s\n", F->npages, path);
	qsort(F->pages, F->npages, sizeof F->pages[0], cmp_u64);
	F->clean = malloc((size_t)F->npages * PAGE);
	F->work = malloc((size_t)F->npages * PAGE);
	if (F->clean == NULL || F->work == NULL)
		fuzz_fail("out of memory");
	for (size_t i = 0; i < F->npages; i++) {
		memset(F->clean + i * PAGE, 0, PAGE);
		core_read(F->pages[i], F->clean + i * PAGE, PAGE);
	}
}

/* Every core of MEMPROF_FUZZ_CORE, set up. */
static void setup(void)
{
	const char *list = getenv("MEMPROF_FUZZ_CORE");
	char *copy, *save = NULL;

	if (list == NULL || *list == '\0')
		fuzz_fail("MEMPROF_FUZZ_CORE names no core (tests/fuzz/core_for_walker.sh makes them)");
	if ((copy = strdup(list)) == NULL)
		fuzz_fail("out of memory");
	for (char *p = strtok_r(copy, ":", &save); p != NULL && ncores < MAX_CORES; p = strtok_r(NULL, ":", &save)) {
		F = &cores[ncores++];
		setup_core(p);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t region, at = 1;

	if (ncores == 0)
		setup();
	F = &cores[size > 0 ? (size_t)(data[0] >> 1) % ncores : 0];
	region = F->npages * PAGE;
	memcpy(F->work, F->clean, region);
	while (at + 5 <= size) {
		uint32_t off = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 | (uint32_t)data[at + 2] << 16 |
			       (uint32_t)data[at + 3] << 24;
		size_t len = data[at + 4] % 33, pos = off % region;

		at += 5;
		if (len > size - at)
			len = size - at;
		if (len > region - pos)
			len = region - pos;
		memcpy(F->work + pos, data + at, len);
		at += len;
	}
	(void)walk_once(size > 0 && (data[0] & 1));
	return 0;
}

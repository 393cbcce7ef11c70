/* fuzz_overlay.c - real cores whose memory the fuzz input rewrites (fuzz_overlay.h). */
#include "fuzz_overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_front.h"
#include "mp_array.h"

#define PAGE 4096u
#define MAX_PAGES 4096u /* 16 MiB of attacked memory at most */
#define MAX_CORES 8

struct core {
	const char *path;
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

/* A target over the overlay of F. */
static mp_target *overlay_target(void)
{
	mp_target *t = NULL;
	mp_diag diag = { 0 };

	if (mp_target_open_callback("fuzz", overlay_read, NULL, F->maps, F->nmaps, &t, &diag) != MP_OK)
		fuzz_fail("cannot open the overlay target");
	return t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Open the core PATH as F, find its allocator library, and run WORK once cleanly to learn which pages it reads. */
static void setup_core(const char *path, fuzz_work_fn work)
{
	mp_target_opts topts = { 0 };
	mp_diag diag = { 0 };
	mp_target *t;
	bool ok;

	F->path = path;
	if (mp_target_open_core(path, &topts, &F->core, &diag) != MP_OK)
		fuzz_fail(diag.msg);
	F->nmaps = mp_target_mappings(F->core, &F->maps);
	memset(&diag, 0, sizeof diag);
	if (mp_c10_find(F->core, &F->c10, &diag) != MP_OK)
		memset(&F->c10, 0, sizeof F->c10);
	F->recording = true;
	t = overlay_target();
	ok = work(t, &F->c10, true);
	mp_target_close(t);
	F->recording = false;
	if (!ok)
		fuzz_fail("the clean run on a core of MEMPROF_FUZZ_CORE failed");
	if (F->npages == 0)
		fuzz_fail("the clean run read nothing");
	mp_sort(F->pages, F->npages, sizeof F->pages[0], cmp_u64);
	F->clean = malloc((size_t)F->npages * PAGE);
	F->work = malloc((size_t)F->npages * PAGE);
	if (F->clean == NULL || F->work == NULL)
		fuzz_fail("out of memory");
	for (size_t i = 0; i < F->npages; i++) {
		memset(F->clean + i * PAGE, 0, PAGE);
		core_read(F->pages[i], F->clean + i * PAGE, PAGE);
	}
	if (getenv("MEMPROF_FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "fuzz: the clean run reads %zu pages of %s\n", F->npages, path);
}

void fuzz_overlay_run(const char *env, fuzz_work_fn work, const uint8_t *data, size_t size)
{
	size_t region, at = 1;
	mp_target *t;

	if (ncores == 0) {
		const char *list = getenv(env);
		char *copy, *save = NULL;

		if (list == NULL || *list == '\0')
			fuzz_fail("the environment names no core (tests/fuzz/core_for.sh makes them)");
		if ((copy = strdup(list)) == NULL)
			fuzz_fail("out of memory");
		for (char *p = strtok_r(copy, ":", &save); p != NULL && ncores < MAX_CORES;
		     p = strtok_r(NULL, ":", &save)) {
			F = &cores[ncores++];
			setup_core(strdup(p), work);
		}
		free(copy);
	}
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
	t = overlay_target();
	(void)work(t, &F->c10, size > 0 && (data[0] & 1));
	mp_target_close(t);
}

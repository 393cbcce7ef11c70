/* Address-space arenas: one PROT_NONE host reservation handed out first-fit as device ranges. */
#define _GNU_SOURCE
#include "vaspace.h"

#include <stdlib.h>
#include <sys/mman.h>

struct va_extent {
	uintptr_t start;
	size_t size;
	struct va_extent *next;
};

struct va_record {
	uintptr_t start;
	size_t size;
	struct va_record *next;
};

static size_t bucket(uintptr_t addr)
{
	return (addr >> 12) % VA_BUCKETS;
}

/* Device memory must not land in cores (real VRAM never does), so every range we touch is MADV_DONTDUMP. */
static int dontdump(uintptr_t addr, size_t size)
{
	return madvise((void *)addr, size, MADV_DONTDUMP);
}

int va_arena_init(struct va_arena *arena, size_t size)
{
	/* PROT_NONE + MAP_NORESERVE costs no memory; the kernel's top-down placement puts it in the
	   0x7f... region next to the libraries, well away from the brk heap, like real device pointers. */
	void *base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	struct va_extent *all = malloc(sizeof *all);
	if (!all || dontdump((uintptr_t)base, size)) {
		free(all);
		munmap(base, size);
		return -1;
	}
	*all = (struct va_extent){ (uintptr_t)base, size, NULL };
	pthread_mutex_init(&arena->lock, NULL);
	arena->base = (uintptr_t)base;
	arena->size = size;
	arena->free = all;
	for (size_t i = 0; i < VA_BUCKETS; i++)
		arena->live[i] = NULL;
	return 0;
}

int va_arena_contains(const struct va_arena *arena, uintptr_t addr)
{
	return arena->size && addr >= arena->base && addr - arena->base < arena->size;
}

/* Takes [start, start+size) out of extent *link, which must contain it. */
static int carve(struct va_extent **link, uintptr_t start, size_t size)
{
	struct va_extent *extent = *link;
	uintptr_t end = start + size, extent_end = extent->start + extent->size;
	if (end < extent_end) {
		struct va_extent *tail = malloc(sizeof *tail);
		if (!tail)
			return -1;
		*tail = (struct va_extent){ end, extent_end - end, extent->next };
		extent->next = tail;
	}
	if (start > extent->start) {
		extent->size = start - extent->start;
	} else {
		*link = extent->next;
		free(extent);
	}
	return 0;
}

uintptr_t va_alloc(struct va_arena *arena, size_t size, size_t align)
{
	uintptr_t found = 0;
	struct va_record *record = malloc(sizeof *record);
	if (!record || !size)
		goto out;
	pthread_mutex_lock(&arena->lock);
	for (struct va_extent **link = &arena->free; *link; link = &(*link)->next) {
		struct va_extent *extent = *link;
		uintptr_t start = (extent->start + align - 1) & ~(uintptr_t)(align - 1);
		if (start - extent->start + size > extent->size)
			continue;
		if (carve(link, start, size) == 0) {
			*record = (struct va_record){ start, size, arena->live[bucket(start)] };
			arena->live[bucket(start)] = record;
			found = start;
		}
		break;
	}
	pthread_mutex_unlock(&arena->lock);
out:
	if (!found)
		free(record);
	return found;
}

size_t va_size_of(const struct va_arena *arena, uintptr_t addr)
{
	size_t size = 0;
	pthread_mutex_lock((pthread_mutex_t *)&arena->lock);
	for (const struct va_record *r = arena->live[bucket(addr)]; r; r = r->next)
		if (r->start == addr)
			size = r->size;
	pthread_mutex_unlock((pthread_mutex_t *)&arena->lock);
	return size;
}

int va_range_of(const struct va_arena *arena, uintptr_t addr, uintptr_t *start, size_t *size)
{
	int found = -1;
	if (!va_arena_contains(arena, addr))
		return -1;
	/* A scan of every live range: only rare queries (cuMemGetAddressRange) come here. */
	pthread_mutex_lock((pthread_mutex_t *)&arena->lock);
	for (size_t i = 0; i < VA_BUCKETS && found; i++)
		for (const struct va_record *r = arena->live[i]; r; r = r->next)
			if (addr >= r->start && addr - r->start < r->size) {
				*start = r->start;
				*size = r->size;
				found = 0;
				break;
			}
	pthread_mutex_unlock((pthread_mutex_t *)&arena->lock);
	return found;
}

/* Puts a range back on the sorted free list, merging with its neighbours. */
static int give_back(struct va_arena *arena, uintptr_t start, size_t size)
{
	struct va_extent **link = &arena->free, *prev = NULL;
	while (*link && (*link)->start < start) {
		prev = *link;
		link = &(*link)->next;
	}
	struct va_extent *next = *link;
	if (prev && prev->start + prev->size == start) {
		prev->size += size;
		if (next && start + size == next->start) {
			prev->size += next->size;
			prev->next = next->next;
			free(next);
		}
		return 0;
	}
	if (next && start + size == next->start) {
		next->start = start;
		next->size += size;
		return 0;
	}
	struct va_extent *extent = malloc(sizeof *extent);
	if (!extent)
		return -1;
	*extent = (struct va_extent){ start, size, next };
	*link = extent;
	return 0;
}

int va_release(struct va_arena *arena, uintptr_t addr)
{
	int status = -1;
	pthread_mutex_lock(&arena->lock);
	for (struct va_record **link = &arena->live[bucket(addr)]; *link; link = &(*link)->next) {
		struct va_record *record = *link;
		if (record->start != addr)
			continue;
		status = give_back(arena, record->start, record->size);
		if (status == 0) {
			*link = record->next;
			free(record);
		}
		break;
	}
	pthread_mutex_unlock(&arena->lock);
	return status;
}

int va_back(uintptr_t addr, size_t size, int prot)
{
	void *p = mmap((void *)addr, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* A MAP_FIXED mapping is a new VMA: the arena's DONTDUMP flag does not carry over. */
	return dontdump(addr, size);
}

int va_unback(uintptr_t addr, size_t size)
{
	/* Replacing the pages (rather than munmap) keeps the hole reserved, so nothing else lands there. */
	void *p = mmap((void *)addr, size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	return dontdump(addr, size);
}

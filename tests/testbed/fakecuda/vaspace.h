/* Address-space arenas: a reserved host VA range carved first-fit into "device" ranges. */
#ifndef FAKECUDA_VASPACE_H
#define FAKECUDA_VASPACE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct va_extent;
struct va_record;

#define VA_BUCKETS 4096

struct va_arena {
	pthread_mutex_t lock;
	uintptr_t base;
	size_t size;
	struct va_extent *free;			/* sorted by address, coalesced */
	struct va_record *live[VA_BUCKETS];	/* hash of handed-out ranges: start -> size */
};

int va_arena_init(struct va_arena *arena, size_t size);
int va_arena_contains(const struct va_arena *arena, uintptr_t addr);
uintptr_t va_alloc(struct va_arena *arena, size_t size, size_t align);
/* Returns the size handed out at addr, or 0 when addr is not the start of a live range. */
size_t va_size_of(const struct va_arena *arena, uintptr_t addr);
int va_release(struct va_arena *arena, uintptr_t addr);
/* The live range that contains addr: 0 and its start and size, or -1. */
int va_range_of(const struct va_arena *arena, uintptr_t addr, uintptr_t *start, size_t *size);

/* Page-level helpers that keep device ranges out of core dumps. */
int va_back(uintptr_t addr, size_t size, int prot);
int va_unback(uintptr_t addr, size_t size);

#endif

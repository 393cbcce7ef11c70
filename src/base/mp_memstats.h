/* mp_memstats.h - one device's allocator statistics as torch.cuda.memory_stats() reports them. */
#ifndef MEMPROF_MEMSTATS_H
#define MEMPROF_MEMSTATS_H

#include <stddef.h>
#include <stdint.h>

/* One flattened key ("allocated_bytes.all.current", "num_ooms", ...) and its value. */
typedef struct mp_memstat {
	const char *key; /* static storage or owned by whoever made the array */
	int64_t value;
} mp_memstat;

/* The statistics of DEVICE: N keys sorted by plain byte order, as memory_stats() returns them. */
typedef struct mp_memstats {
	int device;
	mp_memstat *v;
	size_t n;
} mp_memstats;

#endif

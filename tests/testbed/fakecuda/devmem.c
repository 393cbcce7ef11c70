/* cudaMalloc's device memory: page-backed ranges of one reserved address range per device. */
#define _GNU_SOURCE
#include "fakecuda_internal.h"
#include "vaspace.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* Big allocations get the 2 MiB alignment real cudaMalloc gives; small ones a page. */
#define LARGE_ALIGN ((size_t)2 << 20)

static struct va_arena arenas[FAKECUDA_MAX_DEVICES];
static int arenas_ready;
static pthread_once_t arenas_once = PTHREAD_ONCE_INIT;

static void reserve_arenas(void)
{
	const struct fakecuda_config *config = fakecuda_config();
	/* Alignment padding can at most double what fits, so 4x capacity never runs out first. */
	size_t size = 4 * config->capacity + LARGE_ALIGN;
	for (int d = 0; d < config->devices; d++)
		if (va_arena_init(&arenas[d], size))
			return;
	arenas_ready = 1;
}

static int ready(void)
{
	pthread_once(&arenas_once, reserve_arenas);
	return arenas_ready;
}

static size_t page_round(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	return (size + page - 1) & ~(page - 1);
}

int fakecuda_malloc(int device, size_t size, void **out)
{
	if (!ready())
		return FAKECUDA_ESYS;
	if (device < 0 || device >= fakecuda_config()->devices)
		return FAKECUDA_ENODEV;
	fakecuda_delay();
	size_t bytes = page_round(size);
	if (bytes < size)
		return FAKECUDA_ENOMEM;
	int status = fakecuda_charge(device, bytes);
	if (status)
		return status;
	uintptr_t addr = va_alloc(&arenas[device], bytes,
				  bytes >= LARGE_ALIGN ? LARGE_ALIGN : (size_t)sysconf(_SC_PAGESIZE));
	if (!addr) {
		fakecuda_uncharge(device, bytes);
		return FAKECUDA_ENOMEM;
	}
	if (va_back(addr, bytes, PROT_READ | PROT_WRITE)) {
		va_release(&arenas[device], addr);
		fakecuda_uncharge(device, bytes);
		return FAKECUDA_ESYS;
	}
	*out = (void *)addr;
	return FAKECUDA_OK;
}

static int device_of(uintptr_t addr)
{
	for (int d = 0; d < fakecuda_config()->devices; d++)
		if (va_arena_contains(&arenas[d], addr))
			return d;
	return -1;
}

int fakecuda_free(void *ptr)
{
	uintptr_t addr = (uintptr_t)ptr;
	int device = ready() ? device_of(addr) : -1;
	if (device < 0)
		return FAKECUDA_EINVAL;
	size_t bytes = va_size_of(&arenas[device], addr);
	if (!bytes)
		return FAKECUDA_EINVAL;
	/* Dropping the pages makes freed device memory read back as zeros, and returns it to the host. */
	if (va_unback(addr, bytes) || va_release(&arenas[device], addr))
		return FAKECUDA_ESYS;
	fakecuda_uncharge(device, bytes);
	return FAKECUDA_OK;
}

/* Driver reservations are looked up in driver.c; this answers for cudaMalloc ranges. */
enum fakecuda_origin fakecuda_malloc_origin(const void *ptr, int *device)
{
	int d = ready() ? device_of((uintptr_t)ptr) : -1;
	if (d < 0)
		return FAKECUDA_ORIGIN_NONE;
	*device = d;
	return FAKECUDA_ORIGIN_MALLOC;
}

/* The cudaMalloc range that holds ptr, or else the driver reservation. */
int fakecuda_range(const void *ptr, uintptr_t *start, size_t *size)
{
	int d = ready() ? device_of((uintptr_t)ptr) : -1;
	if (d >= 0)
		return va_range_of(&arenas[d], (uintptr_t)ptr, start, size) ? FAKECUDA_EINVAL : FAKECUDA_OK;
	return fakecuda_reserved_range(ptr, start, size);
}

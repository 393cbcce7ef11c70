/* mem_image.h - target memory made by hand, for the unit tests of readers (included once per test program):
   MEM_IMAGE_SIZE bytes at address MEM_IMAGE_BASE, read through the callback target. The includer defines both
   before it includes this. The target caches pages: flush it (mp_target_flush) after changing MEM. */
#ifndef MEMPROF_TEST_MEM_IMAGE_H
#define MEMPROF_TEST_MEM_IMAGE_H

#include <string.h>

#include "mp_target.h"
#include "unit_main.h"

static unsigned char mem[MEM_IMAGE_SIZE];

static size_t read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < MEM_IMAGE_BASE || addr - MEM_IMAGE_BASE >= sizeof mem)
		return 0;
	if (len > sizeof mem - (addr - MEM_IMAGE_BASE))
		len = sizeof mem - (addr - MEM_IMAGE_BASE);
	memcpy(buf, mem + (addr - MEM_IMAGE_BASE), len);
	return len;
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - MEM_IMAGE_BASE), &v, 8);
}

static inline void put32(uint64_t addr, uint32_t v)
{
	memcpy(mem + (addr - MEM_IMAGE_BASE), &v, 4);
}

/* A callback target over MEM. */
static mp_target *open_mem(void)
{
	mp_target *t = NULL;
	mp_diag diag = { 0 };

	CU_ASSERT_EQUAL_FATAL(mp_target_open_callback("test memory", read_mem, NULL, NULL, 0, &t, &diag), MP_OK);
	return t;
}

#endif

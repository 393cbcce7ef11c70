/* Private interface that libcuda.so.1 (the fake driver) exports to libcudart (the fake runtime). */
#ifndef FAKECUDA_INTERNAL_H
#define FAKECUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* cuda.h maps some names to versioned ones (cuCtxPushCurrent -> cuCtxPushCurrent_v2), so a definition under
   the plain name defines the versioned symbol; callers that dlsym() the plain name get it through this alias. */
#define FAKECUDA_PLAIN_ALIAS(plain, versioned) \
	__typeof__(versioned) fakecuda_alias_##plain __asm__(#plain) __attribute__((alias(#versioned)));

/* Fake devices are numbered 0..FAKECUDA_MAX_DEVICES-1; more than this is a configuration error. */
#define FAKECUDA_MAX_DEVICES 16

struct fakecuda_config {
	int devices;		/* FAKECUDA_DEVICES */
	size_t capacity;	/* FAKECUDA_CAPACITY, bytes per device */
	size_t granularity;	/* FAKECUDA_GRANULARITY, driver API allocation granularity */
	unsigned delay_us;	/* FAKECUDA_DELAY_US, sleep per allocation */
};

/* Error results of the private interface; runtime and driver translate them to their own codes. */
enum fakecuda_status {
	FAKECUDA_OK = 0,
	FAKECUDA_EINVAL,	/* bad argument */
	FAKECUDA_ENODEV,	/* device ordinal out of range */
	FAKECUDA_ENOMEM,	/* capacity (or reserved address space) exhausted */
	FAKECUDA_ESYS,		/* the host refused an mmap/mprotect */
};

/* Where a device pointer came from, for cudaPointerGetAttributes. */
enum fakecuda_origin {
	FAKECUDA_ORIGIN_NONE = 0,
	FAKECUDA_ORIGIN_MALLOC,		/* cudaMalloc */
	FAKECUDA_ORIGIN_RESERVE,	/* cuMemAddressReserve */
};

/* config.c */
const struct fakecuda_config *fakecuda_config(void);
void fakecuda_delay(void);

/* capacity.c: the single accounting of "physical" device memory shared by runtime and driver. */
int fakecuda_charge(int device, size_t bytes);
void fakecuda_uncharge(int device, size_t bytes);
size_t fakecuda_used(int device);

/* devmem.c: device memory for cudaMalloc, from one reserved address range per device. */
int fakecuda_malloc(int device, size_t size, void **out);
int fakecuda_free(void *ptr);
enum fakecuda_origin fakecuda_malloc_origin(const void *ptr, int *device);
/* The live range (cudaMalloc allocation or driver reservation) holding ptr: FAKECUDA_OK, or FAKECUDA_EINVAL. */
int fakecuda_range(const void *ptr, uintptr_t *start, size_t *size);

/* driver.c: which allocator a pointer belongs to (device is -1 for driver reservations). */
enum fakecuda_origin fakecuda_lookup(const void *ptr, int *device);
int fakecuda_reserved_range(const void *ptr, uintptr_t *start, size_t *size);

/* attributes.c: device attributes, keyed by CUdevice_attribute (cudaDeviceAttr uses the same numbers), and
   the device's name and UUID (16 bytes), the same through the runtime, the driver and NVML. */
int fakecuda_attribute(int device, int attribute, int *value);
void fakecuda_device_name(int device, char *name, size_t size);
void fakecuda_uuid(int device, char bytes[16]);

/* driver_context.c: the calling thread's current device (its current context), shared with the runtime. */
int fakecuda_current_device(void);
void fakecuda_set_current_device(int device);

#endif

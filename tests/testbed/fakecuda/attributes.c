/* Device attributes of the fake device (shaped like an H100), keyed by CUdevice_attribute. */
#include "fakecuda_internal.h"

#include <cuda.h>
#include <stdio.h>
#include <string.h>

int fakecuda_attribute(int device, int attribute, int *value)
{
	const struct fakecuda_config *config = fakecuda_config();
	if (device < 0 || device >= config->devices)
		return FAKECUDA_ENODEV;
	switch (attribute) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_INTEGRATED: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
	/* Distinct PCI locations per device, so anything keyed by bus id tells them apart. */
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *value = 0x10 + device; break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *value = 1; break;
	/* Export of handles is not implemented, so do not advertise it. */
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 0; break;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *value = 0; break;
	/* What PyTorch's kernels and libraries size themselves by (H100 SXM figures). */
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 << 10; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 227 << 10; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 228 << 10; break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 32; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 << 20; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = 2619000; break;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = 5120; break;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *value = 64 << 10; break;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *value = 1; break;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *value = 1; break;
	default:
		/* Any other attribute of the enum: 0 ("not supported", "none"), as a minimal device would say. */
		if (attribute < 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX)
			return FAKECUDA_EINVAL;
		*value = 0;
	}
	return FAKECUDA_OK;
}

void fakecuda_device_name(int device, char *name, size_t size)
{
	snprintf(name, size, "fakecuda device %d", device);
}

void fakecuda_uuid(int device, char bytes[16])
{
	memset(bytes, 0, 16);
	memcpy(bytes, "fakecuda", 8);
	bytes[15] = (char)device;
}

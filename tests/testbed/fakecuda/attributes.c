/* Device attributes of the fake device (shaped like an H100), keyed by CUdevice_attribute. */
#include "fakecuda_internal.h"

#include <cuda.h>

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
	default: return FAKECUDA_EINVAL;
	}
	return FAKECUDA_OK;
}

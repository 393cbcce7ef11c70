/* The fake device's cudaDeviceProp and a kernel's cudaFuncAttributes, for whichever CUDA headers include this
   file: runtime_device.c and runtime_launch.c (the headers fakecuda is built with), runtime_props12.c (CUDA 12
   headers, for libcudart.so.12) and runtime_abi11.c (CUDA 11 headers, for libcudart.so.11.0), whose structs
   are laid out differently. Fields that one major lacks are under CUDART_VERSION. */
#ifndef FAKECUDA_DEVICE_PROPS_H
#define FAKECUDA_DEVICE_PROPS_H

#include "fakecuda_internal.h"

#include <cuda.h>
#include <string.h>

static inline int fc_props_attribute(int device, int attr)
{
	int value = 0;
	fakecuda_attribute(device, attr, &value);
	return value;
}

/* The fields at the head (name .. maxGridSize) sit at the same offsets in the CUDA 11, 12 and 13 layouts. */
static inline void fc_fill_props_head(struct cudaDeviceProp *prop, int device)
{
	const struct fakecuda_config *config = fakecuda_config();
	fakecuda_device_name(device, prop->name, sizeof prop->name);
	fakecuda_uuid(device, prop->uuid.bytes);
	memset(prop->luid, 0, sizeof prop->luid);
	prop->luidDeviceNodeMask = 0;
	prop->totalGlobalMem = config->capacity;
	prop->sharedMemPerBlock = 48 << 10;
	prop->regsPerBlock = 65536;
	prop->warpSize = 32;
	prop->memPitch = (size_t)2147483647;
	prop->maxThreadsPerBlock = 1024;
	for (int i = 0; i < 3; i++)
		prop->maxThreadsDim[i] = i < 2 ? 1024 : 64;
	prop->maxGridSize[0] = 2147483647;
	prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
}

/* The whole struct, the figures of an H100 SXM (attributes.c): PyTorch reads well past the head
   (multiProcessorCount, l2CacheSize, sharedMemPerBlockOptin, ...). */
static inline void fc_fill_props(struct cudaDeviceProp *prop, int device)
{
	memset(prop, 0, sizeof *prop);
	fc_fill_props_head(prop, device);
	prop->totalConstMem = 64 << 10;
	prop->major = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	prop->minor = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	prop->textureAlignment = 512;
	prop->texturePitchAlignment = 32;
	prop->multiProcessorCount = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	prop->integrated = 0;
	prop->canMapHostMemory = 1;
	prop->concurrentKernels = 1;
	prop->ECCEnabled = 1;
	prop->pciDomainID = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
	prop->pciBusID = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
	prop->pciDeviceID = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
	prop->asyncEngineCount = 3;
	prop->unifiedAddressing = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
	prop->memoryBusWidth = 5120;
	prop->l2CacheSize = 50 << 20;
	prop->persistingL2CacheMaxSize = 30 << 20;
	prop->maxThreadsPerMultiProcessor = 2048;
	prop->streamPrioritiesSupported = 1;
	prop->globalL1CacheSupported = 1;
	prop->localL1CacheSupported = 1;
	prop->sharedMemPerMultiprocessor = 228 << 10;
	prop->regsPerMultiprocessor = 65536;
	prop->managedMemory = 1;
	prop->isMultiGpuBoard = 0;
	prop->hostNativeAtomicSupported = 0;
	prop->pageableMemoryAccess = 0;
	prop->concurrentManagedAccess = 0;
	prop->computePreemptionSupported = 1;
	prop->cooperativeLaunch = 1;
	prop->sharedMemPerBlockOptin = 227 << 10;
	prop->maxBlocksPerMultiProcessor = 32;
	prop->accessPolicyMaxWindowSize = 128 << 20;
	prop->reservedSharedMemPerBlock = 1 << 10;
#if CUDART_VERSION >= 12000
	prop->memoryPoolsSupported = 0;	/* not in CUDA 11's struct */
#endif
#if CUDART_VERSION < 13000
	/* Removed from the struct in CUDA 13 (cudaDeviceGetAttribute answers them there). */
	prop->clockRate = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
	prop->memoryClockRate = fc_props_attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
	prop->deviceOverlap = 1;
	prop->kernelExecTimeoutEnabled = 0;
	prop->computeMode = 0;
	prop->singleToDoublePrecisionPerfRatio = 2;
	prop->maxTexture1DLinear = 268435456;
#endif
}

/* The figures of an sm_90 kernel with no shared memory and 32 registers. */
static inline void fc_fill_func_attributes(struct cudaFuncAttributes *attributes)
{
	memset(attributes, 0, sizeof *attributes);
	attributes->maxThreadsPerBlock = 1024;
	attributes->numRegs = 32;
	attributes->ptxVersion = 90;
	attributes->binaryVersion = 90;
	attributes->maxDynamicSharedSizeBytes = 48 << 10;
	attributes->preferredShmemCarveout = -1;
}

#endif

/* libnvidia-ml.so.1 for the fake device. Nothing links NVML; c10 dlopen()s it and calls it on the OOM path
   (to list the processes on the device) and for peer topology. Without a GPU the real NVML fails
   (INTERNAL ASSERT in CUDACachingAllocator.cpp), so this one knows the fake devices and no processes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NOT_FOUND = 6 };

/* An nvmlDevice_t is a pointer to one of these. */
struct nvml_device {
	unsigned index;
};
static struct nvml_device devices[16];

static unsigned device_count(void)
{
	const char *text = getenv("FAKECUDA_DEVICES");
	unsigned n = text && *text ? (unsigned)strtoul(text, NULL, 10) : 1;
	return n > 16 ? 16 : n;
}

static struct nvml_device *device(unsigned index)
{
	devices[index].index = index;
	return &devices[index];
}

int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
	return NVML_SUCCESS;
}

int nvmlShutdown(void);
int nvmlShutdown(void)
{
	return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned *count);
int nvmlDeviceGetCount_v2(unsigned *count)
{
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = device_count();
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, struct nvml_device **out);
int nvmlDeviceGetHandleByIndex_v2(unsigned index, struct nvml_device **out)
{
	if (!out || index >= device_count())
		return NVML_ERROR_INVALID_ARGUMENT;
	*out = device(index);
	return NVML_SUCCESS;
}

/* "0000:10:00.0" for device 0: the bus ids fakecuda's runtime reports (bus 0x10 + index). */
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, struct nvml_device **out);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, struct nvml_device **out)
{
	unsigned domain, bus, slot;
	if (!bus_id || !out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sscanf(bus_id, "%x:%x:%x", &domain, &bus, &slot) != 3 || bus < 0x10 || bus - 0x10 >= device_count())
		return NVML_ERROR_NOT_FOUND;
	*out = device(bus - 0x10);
	return NVML_SUCCESS;
}

int nvmlDeviceGetUUID(struct nvml_device *dev, char *uuid, unsigned length);
int nvmlDeviceGetUUID(struct nvml_device *dev, char *uuid, unsigned length)
{
	if (!dev || !uuid || !length)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(uuid, length, "GPU-66616b65-6375-6461-0000-0000000000%02x", dev->index);
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, struct nvml_device **out);
int nvmlDeviceGetHandleByUUID(const char *uuid, struct nvml_device **out)
{
	char expected[64];
	for (unsigned i = 0; uuid && out && i < device_count(); i++) {
		nvmlDeviceGetUUID(device(i), expected, sizeof expected);
		if (!strcmp(uuid, expected)) {
			*out = device(i);
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

/* No other process uses the fake device. */
int nvmlDeviceGetComputeRunningProcesses(struct nvml_device *dev, unsigned *count, void *infos);
int nvmlDeviceGetComputeRunningProcesses(struct nvml_device *dev, unsigned *count, void *infos)
{
	(void)infos;
	if (!dev || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

int nvmlSystemGetCudaDriverVersion_v2(int *version);
int nvmlSystemGetCudaDriverVersion_v2(int *version)
{
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	*version = 13000;
	return NVML_SUCCESS;
}

/* No NVLink, no fabric: every topology query is "not supported", which PyTorch handles. */
#define NOT_SUPPORTED(name)						\
	int nvstub_nvml_##name(void) __asm__(#name);			\
	int nvstub_nvml_##name(void) { return NVML_ERROR_NOT_SUPPORTED; }
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemoteDeviceType)
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemotePciInfo_v2)
NOT_SUPPORTED(nvmlDeviceGetP2PStatus)

/* A GPU outside any fabric, as NVML reports it: success, state NVML_GPU_FABRIC_STATE_NOT_SUPPORTED (0). PyTorch 2.13
   requires the success; 2.14 also accepts "not supported". The caller's struct starts with its version word, whose
   low 24 bits are the struct's size (NVML_STRUCT_VERSION): everything after that word is zeroed, nothing beyond. */
int nvmlDeviceGetGpuFabricInfoV(struct nvml_device *dev, unsigned *info);
int nvmlDeviceGetGpuFabricInfoV(struct nvml_device *dev, unsigned *info)
{
	unsigned size;

	if (dev == NULL || info == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	size = info[0] & 0xffffffu;
	if (size < sizeof *info || size > 4096)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(info + 1, 0, size - sizeof *info);
	return NVML_SUCCESS;
}

const char *nvmlErrorString(int result);
const char *nvmlErrorString(int result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	default: return "Unknown Error";
	}
}

/* Self-test of fakecuda through its public ABI: runtime calls, and the driver as c10 finds it. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed, failed;

/* The fake's own addition (runtime_streams.c), for the NCCL stub. */
cudaError_t fakecudaStreamSetImmediate(cudaStream_t stream, int immediate);

#define CHECK(cond) check((cond), #cond, __LINE__)

static void check(int ok, const char *what, int line)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL line %d: %s\n", line, what);
	}
}

/* Whether the mapping holding addr carries the "dd" (MADV_DONTDUMP) flag in /proc/self/smaps. */
static int dont_dump(const void *addr)
{
	FILE *smaps = fopen("/proc/self/smaps", "r");
	char line[512];
	int inside = 0, result = 0;
	uintptr_t a = (uintptr_t)addr;
	while (smaps && fgets(line, sizeof line, smaps)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			inside = a >= lo && a < hi;
		else if (inside && !strncmp(line, "VmFlags:", 8))
			result = strstr(line, " dd") != NULL;
	}
	if (smaps)
		fclose(smaps);
	return result;
}

/* How many bytes of the caller's struct each query must write, from the environment (selftest.sh measures
   them with the headers of the runtime's CUDA major when it has them), else what these headers (CUDA 13's)
   say the runtime under test writes; 0: the query must be refused, writing nothing. */
static size_t expected_bytes(const char *variable, size_t fallback)
{
	const char *value = getenv(variable);
	return value && *value ? (size_t)strtoull(value, NULL, 10) : fallback;
}

static size_t default_props_bytes(int abi)
{
	if (abi >= 13)
		return sizeof(struct cudaDeviceProp);
	/* libcudart.so.12 without CUDA12_HOME writes the head the majors share (name .. maxGridSize);
	   libcudart.so.11.0 without CUDA11_HOME refuses. */
	return abi == 12 ? offsetof(struct cudaDeviceProp, maxGridSize) + sizeof(int[3]) : 0;
}

static size_t default_funcattr_bytes(int abi)
{
	return abi == 11 ? 0 : sizeof(struct cudaFuncAttributes);
}

static size_t default_ptrattr_bytes(int abi)
{
	return abi >= 13 ? sizeof(struct cudaPointerAttributes)
			 : offsetof(struct cudaPointerAttributes, hostPointer) + sizeof(void *);
}

/* One past the last byte that a query changed in a buffer of canaries: run twice, over two patterns, so a
   byte written with the canary's own value is seen in the other run. -1 if the two runs' results differ. */
#define CANARY_BUFFER 4096
static long written_extent(cudaError_t (*query)(void *buffer, void *context), void *context, cudaError_t *result)
{
	static const unsigned char patterns[2] = { 0xa5, 0x5a };
	static unsigned char buffer[CANARY_BUFFER] __attribute__((aligned(64)));
	long extent = 0;
	for (int p = 0; p < 2; p++) {
		memset(buffer, patterns[p], sizeof buffer);
		cudaError_t error = query(buffer, context);
		if (p && error != *result)
			return -1;
		*result = error;
		for (long i = CANARY_BUFFER - 1; i >= extent; i--)
			if (buffer[i] != patterns[p]) {
				extent = i + 1;
				break;
			}
	}
	return extent;
}

static cudaError_t query_props(void *buffer, void *context)
{
	(void)context;
	return cudaGetDeviceProperties(buffer, 0);
}

static cudaError_t query_funcattr(void *buffer, void *context)
{
	return cudaFuncGetAttributes(buffer, context);
}

static cudaError_t query_ptrattr(void *buffer, void *context)
{
	return cudaPointerGetAttributes(buffer, context);
}

static void kernel_stub(void);

/* The structs whose layout differs between CUDA majors: a query writes exactly its major's struct (the
   runtime must never write past a CUDA 11 caller's smaller one), or is refused and writes nothing. */
static void test_struct_writes(int abi)
{
	cudaError_t result = cudaSuccess;
	size_t props = expected_bytes("FAKECUDA_SELFTEST_PROPS_BYTES", default_props_bytes(abi));
	long extent = written_extent(query_props, NULL, &result);
	CHECK(props ? result == cudaSuccess : result == cudaErrorNotSupported);
	CHECK(extent == (long)props);
	if (extent != (long)props)
		printf("  cudaGetDeviceProperties wrote %ld bytes, expected %zu\n", extent, props);

	size_t funcattr = expected_bytes("FAKECUDA_SELFTEST_FUNCATTR_BYTES", default_funcattr_bytes(abi));
	extent = written_extent(query_funcattr, (void *)kernel_stub, &result);
	CHECK(funcattr ? result == cudaSuccess : result == cudaErrorNotSupported);
	CHECK(extent == (long)funcattr);
	if (extent != (long)funcattr)
		printf("  cudaFuncGetAttributes wrote %ld bytes, expected %zu\n", extent, funcattr);

	void *p = NULL;
	size_t ptrattr = expected_bytes("FAKECUDA_SELFTEST_PTRATTR_BYTES", default_ptrattr_bytes(abi));
	CHECK(cudaMalloc(&p, 4096) == cudaSuccess);
	extent = written_extent(query_ptrattr, p, &result);
	CHECK(result == cudaSuccess && extent == (long)ptrattr);
	if (extent != (long)ptrattr)
		printf("  cudaPointerGetAttributes wrote %ld bytes, expected %zu\n", extent, ptrattr);
	CHECK(cudaFree(p) == cudaSuccess);
	cudaGetLastError();

	/* cudaGetDriverEntryPoint: CUDA 11's takes 3 arguments, CUDA 12's a 4th, the query result (CUDA 13 has
	   only ...ByVersion). Called with 4 here: a CUDA 11 runtime must leave the 4th alone. */
	typedef cudaError_t (*entry_point_fn)(const char *, void **, unsigned long long,
					      enum cudaDriverEntryPointQueryResult *);
	entry_point_fn get_entry_point = (entry_point_fn)dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPoint");
	CHECK(abi >= 13 || get_entry_point);
	if (abi < 13 && get_entry_point) {
		void *entry = NULL;
		enum cudaDriverEntryPointQueryResult status = (enum cudaDriverEntryPointQueryResult)12345;
		CHECK(get_entry_point("cuMemCreate", &entry, 0, &status) == cudaSuccess
		      && entry == dlsym(RTLD_DEFAULT, "cuMemCreate"));
		CHECK(abi == 11 ? (int)status == 12345 : status == cudaDriverEntryPointSuccess);
	}
}

static void test_versions(int abi)
{
	int runtime = 0, driver = 0;
	CHECK(cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime / 1000 == abi);
	CHECK(cudaDriverGetVersion(&driver) == cudaSuccess && driver >= runtime);
}

static void test_devices(int abi, int devices, size_t capacity)
{
	int count = -1, device = -1;
	CHECK(cudaGetDeviceCount(&count) == cudaSuccess && count == devices);
	CHECK(cudaGetDevice(&device) == cudaSuccess && device == 0);
	CHECK(cudaSetDevice(devices) == cudaErrorInvalidDevice);
	CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
	CHECK(cudaGetLastError() == cudaSuccess);
	/* Read through these headers' struct: name and totalGlobalMem sit alike in CUDA 11, 12 and 13. The
	   struct is oversized (a CUDA 12 or 11 runtime writes no more than its own, test_struct_writes). */
	union {
		struct cudaDeviceProp prop;
		unsigned char bytes[4096];
	} u;
	memset(&u, 0, sizeof u);
	if (expected_bytes("FAKECUDA_SELFTEST_PROPS_BYTES", default_props_bytes(abi))) {
		CHECK(cudaGetDeviceProperties(&u.prop, devices - 1) == cudaSuccess);
		char name[64];
		snprintf(name, sizeof name, "fakecuda device %d", devices - 1);
		CHECK(!strcmp(u.prop.name, name) && u.prop.totalGlobalMem == capacity);
	}
	int major = 0;
	CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess
	      && major == 9);
	/* An attribute the fake does not model answers 0, one outside the enum fails. */
	int value = -1;
	CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxTexture1DWidth, 0) == cudaSuccess && value == 0);
	CHECK(cudaDeviceGetAttribute(&value, (enum cudaDeviceAttr)100000, 0) != cudaSuccess);
	cudaGetLastError();
}

/* Allocates 2 MiB blocks until the capacity runs out, then frees them all. */
static void test_oom(size_t capacity)
{
	size_t free_bytes = 0, total = 0, chunk = (size_t)2 << 20, n = capacity / chunk, got = 0;
	void **ptrs = calloc(n + 1, sizeof *ptrs);
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && total == capacity
	      && free_bytes == capacity);
	cudaError_t error = cudaSuccess;
	while (got <= n && (error = cudaMalloc(&ptrs[got], chunk)) == cudaSuccess) {
		memset(ptrs[got], 0xab, 64);	/* device memory is host-writable here */
		got++;
	}
	CHECK(got == n);
	CHECK(error == cudaErrorMemoryAllocation);
	CHECK(cudaPeekAtLastError() == cudaErrorMemoryAllocation);
	CHECK(cudaGetLastError() == cudaErrorMemoryAllocation && cudaGetLastError() == cudaSuccess);
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes == 0);
	int aligned = 1, distinct = 1;
	for (size_t i = 0; i < got; i++) {
		aligned &= (uintptr_t)ptrs[i] % chunk == 0;
		for (size_t j = 0; j < i; j++)
			distinct &= ptrs[i] != ptrs[j];
	}
	CHECK(aligned && distinct);
	void *host = malloc(64);
	/* Device pointers sit in a reservation far from the brk heap. */
	CHECK(got && ((uintptr_t)ptrs[0] > (uintptr_t)host + ((size_t)1 << 32)));
	CHECK(got && dont_dump(ptrs[0]) && !dont_dump(host));
	free(host);
	struct cudaPointerAttributes attr;
	CHECK(got && cudaPointerGetAttributes(&attr, ptrs[0]) == cudaSuccess
	      && attr.type == cudaMemoryTypeDevice && attr.device == 0);
	CHECK(cudaPointerGetAttributes(&attr, &attr) == cudaSuccess
	      && attr.type == cudaMemoryTypeUnregistered);
	for (size_t i = 0; i < got; i++)
		CHECK(cudaFree(ptrs[i]) == cudaSuccess);
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes == capacity);
	CHECK(cudaFree(NULL) == cudaSuccess);
	CHECK(cudaFree(ptrs) == cudaErrorInvalidValue);	/* a host pointer */
	cudaGetLastError();
	free(ptrs);
	/* An odd size is charged in whole pages; one larger than the capacity fails outright. */
	void *p = NULL;
	CHECK(cudaMalloc(&p, 1000) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total) == cudaSuccess
	      && free_bytes == capacity - 4096);
	CHECK(cudaFree(p) == cudaSuccess);
	CHECK(cudaMalloc(&p, capacity + 1) == cudaErrorMemoryAllocation);
	cudaGetLastError();
}

static void test_second_device(size_t capacity)
{
	void *p = NULL;
	size_t free_bytes = 0, total = 0;
	CHECK(cudaSetDevice(1) == cudaSuccess);
	CHECK(cudaMalloc(&p, (size_t)4 << 20) == cudaSuccess);
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess
	      && free_bytes == capacity - ((size_t)4 << 20));
	struct cudaPointerAttributes attr;
	CHECK(cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.device == 1);
	CHECK(cudaSetDevice(0) == cudaSuccess);
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes == capacity);
	CHECK(cudaFree(p) == cudaSuccess);	/* from any current device, as on the real runtime */
	CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
	CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
	cudaGetLastError();
}

static void test_streams(void)
{
	int least = 1, greatest = 1;
	CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess
	      && least == 0 && greatest < 0);
	cudaStream_t s[3];
	unsigned long long id[3];
	for (int i = 0; i < 3; i++) {
		CHECK(cudaStreamCreateWithPriority(&s[i], cudaStreamNonBlocking, -i) == cudaSuccess);
		CHECK(cudaStreamGetId(s[i], &id[i]) == cudaSuccess);
	}
	CHECK(s[0] != s[1] && s[1] != s[2] && id[0] != id[1] && id[1] != id[2] && id[0] != id[2]);
	int priority = 0;
	CHECK(cudaStreamGetPriority(s[2], &priority) == cudaSuccess && priority == -2);
	cudaStream_t clamped;
	CHECK(cudaStreamCreateWithPriority(&clamped, 0, -100) == cudaSuccess);
	CHECK(cudaStreamGetPriority(clamped, &priority) == cudaSuccess && priority == greatest);
	enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
	CHECK(cudaStreamIsCapturing(s[0], &status) == cudaSuccess && status == cudaStreamCaptureStatusNone);
	CHECK(cudaStreamIsCapturing(0, &status) == cudaSuccess);
	/* Stream capture, as PyTorch 2.0's private pools use it: a stream captures from Begin to End; nothing is
	   recorded; the legacy stream cannot capture, a stream cannot capture twice or end what it did not begin. */
	cudaGraph_t graph = NULL;
	CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeRelaxed) == cudaSuccess);
	CHECK(cudaStreamIsCapturing(s[0], &status) == cudaSuccess && status == cudaStreamCaptureStatusActive);
	CHECK(cudaStreamIsCapturing(s[1], &status) == cudaSuccess && status == cudaStreamCaptureStatusNone);
	CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeRelaxed) == cudaErrorIllegalState);
	CHECK(cudaStreamEndCapture(s[0], &graph) == cudaSuccess && graph != NULL);
	CHECK(cudaStreamIsCapturing(s[0], &status) == cudaSuccess && status == cudaStreamCaptureStatusNone);
	CHECK(cudaStreamEndCapture(s[0], &graph) == cudaErrorIllegalState);
	CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
	cudaGetLastError();

	/* Events: not ready after a record until a sync that covers them. */
	cudaEvent_t e;
	CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
	CHECK(cudaEventQuery(e) == cudaSuccess);	/* never recorded */
	CHECK(cudaEventRecord(e, s[1]) == cudaSuccess);
	CHECK(cudaEventQuery(e) == cudaErrorNotReady);
	CHECK(cudaStreamQuery(s[1]) == cudaErrorNotReady && cudaStreamQuery(s[0]) == cudaSuccess);
	CHECK(cudaStreamSynchronize(s[0]) == cudaSuccess && cudaEventQuery(e) == cudaErrorNotReady);
	CHECK(cudaStreamSynchronize(s[1]) == cudaSuccess && cudaEventQuery(e) == cudaSuccess);
	CHECK(cudaEventRecord(e, s[2]) == cudaSuccess && cudaEventQuery(e) == cudaErrorNotReady);
	CHECK(cudaDeviceSynchronize() == cudaSuccess && cudaEventQuery(e) == cudaSuccess);
	CHECK(cudaEventRecord(e, 0) == cudaSuccess && cudaEventQuery(e) == cudaErrorNotReady);
	CHECK(cudaEventSynchronize(e) == cudaSuccess && cudaEventQuery(e) == cudaSuccess);
	CHECK(cudaStreamWaitEvent(s[0], e, 0) == cudaSuccess);
	cudaEvent_t timed;
	float ms;
	CHECK(cudaEventCreate(&timed) == cudaSuccess);
	CHECK(cudaEventElapsedTime(&ms, timed, timed) == cudaErrorInvalidResourceHandle); /* not recorded */
	CHECK(cudaEventElapsedTime(&ms, e, e) == cudaErrorInvalidResourceHandle);	    /* no timing */
	cudaGetLastError();
	cudaEvent_t later;
	CHECK(cudaEventCreate(&later) == cudaSuccess);
	CHECK(cudaEventRecord(timed, s[1]) == cudaSuccess && cudaEventRecord(later, s[1]) == cudaSuccess);
	CHECK(cudaEventElapsedTime(&ms, timed, later) == cudaErrorNotReady);
	cudaGetLastError();
	CHECK(cudaStreamSynchronize(s[1]) == cudaSuccess);
	CHECK(cudaEventElapsedTime(&ms, timed, later) == cudaSuccess && ms >= 0 && ms < 1000);
	/* A stream whose work completes as it is issued (the NCCL stub's). */
	CHECK(cudaEventRecord(later, s[1]) == cudaSuccess && cudaEventQuery(later) == cudaErrorNotReady);
	cudaGetLastError();
	CHECK(fakecudaStreamSetImmediate(s[1], 1) == cudaSuccess);
	CHECK(cudaEventQuery(later) == cudaSuccess && cudaStreamQuery(s[1]) == cudaSuccess);
	CHECK(cudaEventRecord(later, s[1]) == cudaSuccess && cudaEventQuery(later) == cudaSuccess);
	CHECK(fakecudaStreamSetImmediate(s[1], 0) == cudaSuccess);
	CHECK(cudaEventRecord(later, s[1]) == cudaSuccess && cudaEventQuery(later) == cudaErrorNotReady);
	cudaGetLastError();
	CHECK(cudaStreamSynchronize(s[1]) == cudaSuccess);
	CHECK(cudaEventDestroy(later) == cudaSuccess);
	CHECK(cudaEventDestroy(timed) == cudaSuccess && cudaEventDestroy(e) == cudaSuccess);
	CHECK(cudaStreamDestroy(s[2]) == cudaSuccess);
	CHECK(cudaStreamDestroy(s[2]) == cudaErrorInvalidResourceHandle);
	cudaGetLastError();
	enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
	CHECK(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess
	      && mode == cudaStreamCaptureModeGlobal);
	CHECK(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess
	      && mode == cudaStreamCaptureModeRelaxed);
}

static void test_unsupported(void)
{
	void *p;
	cudaIpcMemHandle_t handle;
	cudaMemPool_t pool;
	CHECK(cudaMallocAsync(&p, 1024, 0) == cudaErrorNotSupported);
	CHECK(cudaMallocManaged(&p, 1024, cudaMemAttachGlobal) == cudaErrorNotSupported);
	CHECK(cudaIpcGetMemHandle(&handle, p) == cudaErrorNotSupported);
	CHECK(cudaDeviceGetDefaultMemPool(&pool, 0) == cudaErrorNotSupported);
	CHECK(cudaGetLastError() == cudaErrorNotSupported);
	CHECK(strlen(cudaGetErrorString(cudaErrorNotSupported)) > 0);
}

/* The names c10's DriverAPI dlsym()s from the already-loaded libcuda.so.1. */
static const char *const c10_driver_names[] = {
	"cuDeviceGetAttribute", "cuMemAddressReserve", "cuMemRelease", "cuMemMap",
	"cuMemAddressFree", "cuMemSetAccess", "cuMemUnmap", "cuMemCreate",
	"cuMemGetAllocationGranularity", "cuMemExportToShareableHandle",
	"cuMemImportFromShareableHandle", "cuMemsetD32Async", "cuStreamWriteValue32",
	"cuGetErrorString",
};

static void test_driver(size_t capacity, size_t expected_granularity)
{
	void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	CHECK(driver != NULL);
	if (!driver)
		return;
	int found = 0;
	for (size_t i = 0; i < sizeof c10_driver_names / sizeof c10_driver_names[0]; i++)
		found += dlsym(driver, c10_driver_names[i]) != NULL;
	CHECK(found == (int)(sizeof c10_driver_names / sizeof c10_driver_names[0]));

	CUmemAllocationProp prop = { 0 };
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	size_t gran = 0, free_bytes, total;
	CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS
	      && gran == expected_granularity);
	CUdeviceptr base = 0;
	CHECK(cuMemAddressReserve(&base, capacity + capacity / 8, 0, 0, 0) == CUDA_SUCCESS);
	CHECK(base % gran == 0);
	CHECK(cuMemAddressReserve(&base, gran + 1, 0, 0, 0) == CUDA_ERROR_INVALID_VALUE);
	size_t handles = capacity / gran;
	CUmemGenericAllocationHandle *h = calloc(handles + 1, sizeof *h);
	size_t made = 0;
	while (made <= handles && cuMemCreate(&h[made], gran, &prop, 0) == CUDA_SUCCESS)
		made++;
	CHECK(made == handles);		/* the same capacity as cudaMalloc */
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes == 0);
	void *p;
	CHECK(cudaMalloc(&p, 4096) == cudaErrorMemoryAllocation);
	cudaGetLastError();
	CUmemAccessDesc access = { { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CHECK(cuMemMap(base, gran, 0, h[0], 0) == CUDA_SUCCESS);
	CHECK(cuMemMap(base + gran, gran, 0, h[1], 0) == CUDA_SUCCESS);
	CHECK(cuMemSetAccess(base, 2 * gran, &access, 1) == CUDA_SUCCESS);
	memset((void *)base, 0x5a, 2 * gran);
	CHECK(((unsigned char *)base)[2 * gran - 1] == 0x5a);
	CHECK(dont_dump((void *)base));
	struct cudaPointerAttributes attr;
	CHECK(cudaPointerGetAttributes(&attr, (void *)base) == cudaSuccess
	      && attr.type == cudaMemoryTypeDevice);
	CHECK(cuMemUnmap(base, 2 * gran) == CUDA_SUCCESS);
	for (size_t i = 0; i < made; i++)
		CHECK(cuMemRelease(h[i]) == CUDA_SUCCESS);
	CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes == capacity);
	CHECK(cuMemAddressFree(base, gran) == CUDA_ERROR_INVALID_VALUE);	/* wrong size */
	CHECK(cuMemAddressFree(base, capacity + capacity / 8) == CUDA_SUCCESS);
	CHECK(cuMemExportToShareableHandle(&p, h[0], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)
	      == CUDA_ERROR_NOT_SUPPORTED);
	const char *text = NULL;
	CHECK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text) == CUDA_SUCCESS && text
	      && strstr(text, "out of memory"));
	free(h);
}

/* What a whole PyTorch needs besides the allocator: registration of its kernels and device variables, launches
   (no-ops), occupancy, pinned host memory, PCI ids, driver entry points and contexts. */
void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
		       size_t size, int constant, int global);
void __cudaUnregisterFatBinary(void **handle);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream);

static char device_variable[64];

static void kernel_stub(void)
{
}

static void test_pytorch_support(int abi, int devices)
{
	void **binary = __cudaRegisterFatBinary((void *)"fatbin");
	CHECK(binary != NULL);
	__cudaRegisterVar(binary, device_variable, device_variable, "var", 0, sizeof device_variable, 0, 0);
	__cudaRegisterFatBinaryEnd(binary);
	void *symbol = NULL;
	size_t size = 0;
	CHECK(cudaGetSymbolAddress(&symbol, device_variable) == cudaSuccess && symbol && symbol != device_variable);
	CHECK(cudaGetSymbolSize(&size, device_variable) == cudaSuccess && size == sizeof device_variable);
	int in = 42, out = 0;
	CHECK(cudaMemcpyToSymbol(device_variable, &in, sizeof in, 8, cudaMemcpyHostToDevice) == cudaSuccess);
	CHECK(cudaMemcpyFromSymbol(&out, device_variable, sizeof out, 8, cudaMemcpyDeviceToHost) == cudaSuccess
	      && out == 42);
	CHECK(cudaMemcpyToSymbol(device_variable, &in, sizeof in, 62, cudaMemcpyHostToDevice) != cudaSuccess);
	CHECK(cudaGetSymbolAddress(&symbol, &in) == cudaErrorInvalidSymbol);
	cudaGetLastError();

	dim3 grid = { 4, 1, 1 }, block = { 256, 1, 1 }, g, b;
	size_t shared;
	cudaStream_t stream = NULL;
	CHECK(__cudaPushCallConfiguration(grid, block, 128, NULL) == 0);
	CHECK(__cudaPopCallConfiguration(&g, &b, &shared, &stream) == cudaSuccess && g.x == 4 && b.x == 256
	      && shared == 128);
	CHECK(cudaLaunchKernel((const void *)kernel_stub, grid, block, NULL, 0, NULL) == cudaSuccess);
	dim3 too_big = { 2048, 1, 1 };
	CHECK(cudaLaunchKernel((const void *)kernel_stub, grid, too_big, NULL, 0, NULL)
	      == cudaErrorInvalidConfiguration);
	cudaGetLastError();
	int blocks = 0;
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)kernel_stub, 256, 0)
	      == cudaSuccess && blocks == 8);
	/* maxThreadsPerBlock sits alike in CUDA 11's, 12's and 13's struct; CUDA 11's is smaller than these
	   headers' (test_struct_writes). */
	union {
		struct cudaFuncAttributes fattr;
		unsigned char bytes[1024];
	} fu;
	if (expected_bytes("FAKECUDA_SELFTEST_FUNCATTR_BYTES", default_funcattr_bytes(abi)))
		CHECK(cudaFuncGetAttributes(&fu.fattr, (const void *)kernel_stub) == cudaSuccess
		      && fu.fattr.maxThreadsPerBlock == 1024);

	void *pinned = NULL;
	CHECK(cudaHostAlloc(&pinned, 1 << 20, cudaHostAllocDefault) == cudaSuccess && pinned
	      && (uintptr_t)pinned % 4096 == 0);
	CHECK(cudaFreeHost(pinned) == cudaSuccess);

	char bus[32];
	CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, devices - 1) == cudaSuccess);
	char expected[32];
	snprintf(expected, sizeof expected, "0000:%02x:00.0", 0x10 + devices - 1);
	CHECK(!strcmp(bus, expected));

	void *entry = NULL;
	enum cudaDriverEntryPointQueryResult status;
	CHECK(cudaGetDriverEntryPointByVersion("cuMemCreate", &entry, 12000, 0, &status) == cudaSuccess
	      && status == cudaDriverEntryPointSuccess && entry == dlsym(RTLD_DEFAULT, "cuMemCreate"));
	CHECK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &entry, 12000, 0, &status) == cudaSuccess
	      && status == cudaDriverEntryPointSymbolNotFound && !entry);

	/* The driver's current context follows the runtime's device. */
	CUcontext context = NULL, primary = NULL;
	CUdevice current = -1;
	CHECK(cudaSetDevice(devices - 1) == cudaSuccess);
	CHECK(cuCtxGetCurrent(&context) == CUDA_SUCCESS && context);
	CHECK(cuDevicePrimaryCtxRetain(&primary, devices - 1) == CUDA_SUCCESS && primary == context);
	CHECK(cuCtxGetDevice(&current) == CUDA_SUCCESS && current == devices - 1);
	CHECK(cudaSetDevice(0) == cudaSuccess);

	void *p = NULL;
	CUdeviceptr base = 0;
	size_t length = 0;
	CHECK(cudaMalloc(&p, 3 << 20) == cudaSuccess);
	CHECK(cuMemGetAddressRange(&base, &length, (CUdeviceptr)p + 12345) == CUDA_SUCCESS
	      && base == (CUdeviceptr)p && length == (size_t)3 << 20);
	CHECK(cudaFree(p) == cudaSuccess);
	__cudaUnregisterFatBinary(binary);
}

/* FAKECUDA_DELAY_US must make every allocation take at least that long. */
static void test_delay(unsigned delay_us)
{
	struct timespec t0, t1;
	void *p;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 5; i++)
		CHECK(cudaMalloc(&p, 4096) == cudaSuccess && cudaFree(p) == cudaSuccess);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
	CHECK(us >= 5.0 * delay_us);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s ABI_MAJOR DEVICES CAPACITY_BYTES GRANULARITY_BYTES\n", argv[0]);
		return 2;
	}
	int abi = atoi(argv[1]), devices = atoi(argv[2]);
	size_t capacity = strtoull(argv[3], NULL, 10), granularity = strtoull(argv[4], NULL, 10);
	const char *delay = getenv("FAKECUDA_DELAY_US");
	if (delay && atoi(delay) > 0)
		test_delay((unsigned)atoi(delay));
	test_versions(abi);
	test_devices(abi, devices, capacity);
	test_struct_writes(abi);
	test_oom(capacity);
	if (devices > 1)
		test_second_device(capacity);
	test_streams();
	test_unsupported();
	test_driver(capacity, granularity);
	test_pytorch_support(abi, devices);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}

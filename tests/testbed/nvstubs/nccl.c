/* libnccl.so.2 for the fake device: communicators whose ranks meet through a shared file, collectives computed
   on the CPU.

   PyTorch's ProcessGroupNCCL (the `nccl` backend of torch.distributed) links NCCL; the real library cannot run on
   the fake device (no GPU, no NVLink, no kernels). This one keeps what a distributed job's memory and control flow
   depend on and nothing else:
   - a communicator knows its size, rank and CUDA device; ncclGetUniqueId makes an id no other job shares (random
     bytes, the pid, the time), which PyTorch passes through its c10d store as it does NCCL's own;
   - ranks meet where NCCL's do, across processes: communicator creation (ncclCommInitRank*) waits until every
     rank has joined, and each collective (all-reduce, broadcast, reduce, all-gather, reduce-scatter, all-to-all,
     gather, scatter) waits until every rank of the communicator has entered its collective of the same number.
     So a rank that never enters a collective leaves the others blocked in it, as on real GPUs (there they block
     later, in a stream synchronisation; here the calling thread waits inside the NCCL call). A send waits for
     its receive (in a group, at ncclGroupEnd). The meeting point is a shared file per communicator,
     FAKENCCL_DIR/fakenccl-<id> (default /dev/shm, else /tmp), removed by the last rank that destroys it;
   - the data moves (nccl_data.c): each rank reads the others' send buffers out of their processes and reduces
     on the CPU (sum, prod, max, min, avg, pre-multiplied sum; integer, float16/32/64 and bfloat16 elements;
     float8 is not reduced), since PyTorch's own control flow depends on some values (DDP compares parameter
     shapes across ranks, object collectives pickle through NCCL) even where kernels compute nothing;
   - ncclCommSplit computes each new communicator from every rank's colour and key, as NCCL does;
   - ncclMemAlloc/ncclMemFree allocate through the fake runtime's cudaMalloc/cudaFree (outside the caching
     allocator, as NCCL's own cuMem allocations are);
   - no window/RMA, device communicator, suspend/resume, grow/shrink/revoke: those return ncclInvalidUsage, which
     PyTorch reports as an error where a job asks for them.
   FAKENCCL_TIMEOUT=SECONDS (default: none, like NCCL) makes a rank that waits longer fail with ncclTimeout;
   FAKENCCL_DEBUG=1 logs each call to stderr.

   Types are written out here (nccl.h is not needed to build; nccl_internal.h): every enum is an int, a
   communicator a pointer, a unique id 128 bytes. ncclCommInitAll's communicators (every rank in one process)
   neither meet nor move data. NCCL's symbols carry no version node. NVSTUB_NCCL_VERSION is the version reported
   (the real library's, read by build.sh, so that PyTorch takes the paths it takes with that library). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef NVSTUB_NCCL_VERSION
#define NVSTUB_NCCL_VERSION 22105
#endif

#include "nccl_internal.h"

#define COMM_MAGIC 0x6e63636c636f6d6dULL

static int debug_on(void)
{
	static int on = -1;
	if (on < 0) {
		const char *text = getenv("FAKENCCL_DEBUG");
		on = text && *text && *text != '0';
	}
	return on;
}

void nccl_debug(const char *format, ...)
{
	va_list args;
	if (!debug_on())
		return;
	va_start(args, format);
	fprintf(stderr, "fakenccl[%d]: ", (int)getpid());
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
}

static __thread char thread_error[256];

nccl_result nccl_fail(struct nccl_comm *comm, nccl_result result, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(thread_error, sizeof thread_error, format, args);
	va_end(args);
	if (comm)
		snprintf(comm->last_error, sizeof comm->last_error, "%s", thread_error);
	nccl_debug("error %d: %s", result, thread_error);
	return result;
}

/* --- the CUDA runtime: whichever libcudart the process loaded (the fake's, preloaded) --- */

static int cuda_call(const char *name, int (*call)(void *fn, void *arg), void *arg)
{
	void *fn = dlsym(RTLD_DEFAULT, name);
	return fn ? call(fn, arg) : -1;
}

static int call_get_device(void *fn, void *arg)
{
	return ((int (*)(int *))fn)(arg);
}

static int current_device(void)
{
	int device = 0;
	if (cuda_call("cudaGetDevice", call_get_device, &device) != 0)
		device = 0;
	return device;
}

/* The fake runtime's own call: the stream's work is complete as it is issued (a collective here ends inside its
   call), so the events PyTorch records after it are ready, as on a GPU once the kernel has run. */
static void stream_completes(void *stream)
{
	static int (*set_immediate)(void *, int);
	static _Atomic int looked;
	if (!atomic_load(&looked)) {
		set_immediate = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "fakecudaStreamSetImmediate");
		atomic_store(&looked, 1);
	}
	if (set_immediate)
		set_immediate(stream, 1);
}

/* --- waiting --- */

static double timeout_seconds(void)
{
	const char *text = getenv("FAKENCCL_TIMEOUT");
	return text && *text ? atof(text) : 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Waits until done(comm, arg) holds: 0, or the reason it gave up (another rank aborted the communicator, this
   one was aborted from another thread, FAKENCCL_TIMEOUT passed). Polls, backing off to 2 ms. */
nccl_result nccl_wait(struct nccl_comm *comm, int (*done)(struct nccl_comm *, uint64_t), uint64_t arg,
		      const char *what)
{
	double limit = timeout_seconds(), start = now();
	long sleep_ns = 20000;
	while (!done(comm, arg)) {
		if (atomic_load(&comm->aborted))
			return nccl_fail(comm, ncclInvalidUsage, "%s: the communicator was aborted", what);
		if (atomic_load(&comm->shared->aborted))
			return nccl_fail(comm, ncclRemoteError, "%s: another rank aborted the communicator", what);
		if (limit > 0 && now() - start > limit)
			return nccl_fail(comm, ncclTimeout, "%s: not every rank arrived within FAKENCCL_TIMEOUT=%g s",
					 what, limit);
		struct timespec ts = {0, sleep_ns};
		nanosleep(&ts, NULL);
		if (sleep_ns < 2000000)
			sleep_ns *= 2;
	}
	return ncclSuccess;
}

static int all_joined(struct nccl_comm *comm, uint64_t unused)
{
	(void)unused;
	return atomic_load(&comm->shared->joined) >= comm->nranks;
}

static int all_split(struct nccl_comm *comm, uint64_t generation)
{
	for (int r = 0; r < comm->nranks; r++)
		if (atomic_load(&comm->shared->split[r].generation) < generation)
			return 0;
	return 1;
}

/* Every rank of COMM enters its next collective here; returns when all have (a collective without data). */
static nccl_result meet(struct nccl_comm *comm, const char *what)
{
	struct nccl_call call = {.kind = KIND_BARRIER, .what = what};
	return nccl_collective(comm, &call);
}

/* --- communicators --- */

static const char *shared_dir(void)
{
	const char *dir = getenv("FAKENCCL_DIR");
	if (dir && *dir)
		return dir;
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

static void id_name(const nccl_unique_id *id, char *out, size_t size)
{
	/* the id's random part (bytes 8..39): unique per ncclGetUniqueId and per split */
	size_t n = 0;
	n += (size_t)snprintf(out, size, "fakenccl-");
	for (int i = 8; i < 40 && n + 2 < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%02x", (unsigned char)id->internal[i]);
}

static nccl_result attach_shared(struct nccl_comm *comm)
{
	char name[80];
	id_name(&comm->id, name, sizeof name);
	snprintf(comm->path, sizeof comm->path, "%s/%s", shared_dir(), name);
	int fd = open(comm->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return nccl_fail(comm, ncclSystemError, "cannot open %s: %s", comm->path, strerror(errno));
	/* every rank sizes it the same; a file that already has that size keeps its contents */
	if (ftruncate(fd, sizeof(struct shared)) != 0) {
		close(fd);
		return nccl_fail(comm, ncclSystemError, "cannot size %s: %s", comm->path, strerror(errno));
	}
	void *map = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return nccl_fail(comm, ncclSystemError, "cannot map %s: %s", comm->path, strerror(errno));
	comm->shared = map;
	comm->shared->magic = SHARED_MAGIC;
	return ncclSuccess;
}

/* This rank is done with the communicator: the last rank to go removes the file. */
static void depart(struct nccl_comm *comm)
{
	if (!comm->shared || atomic_exchange(&comm->departed, 1))
		return;
	if (atomic_fetch_add(&comm->shared->left, 1) + 1 >= comm->nranks)
		unlink(comm->path);
}

static void detach_shared(struct nccl_comm *comm)
{
	if (!comm->shared)
		return;
	depart(comm);
	munmap(comm->shared, sizeof(struct shared));
	comm->shared = NULL;
}

struct nccl_comm *nccl_valid(const void *handle)
{
	struct nccl_comm *comm = (struct nccl_comm *)handle;
	return comm && comm->magic == COMM_MAGIC ? comm : NULL;
}

/* A communicator of rank RANK among NRANKS on the current device; joins the others unless LOCAL. */
static nccl_result create(struct nccl_comm **out, int nranks, const nccl_unique_id *id, int rank, int device,
			  int local)
{
	if (!out)
		return nccl_fail(NULL, ncclInvalidArgument, "comm is NULL");
	*out = NULL;
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return nccl_fail(NULL, ncclInvalidArgument, "rank %d of %d", rank, nranks);
	if (memcmp(id->internal, "fakenccl", 8) != 0)
		return nccl_fail(NULL, ncclInvalidArgument, "not an id of ncclGetUniqueId (of this stub)");
	if (!local && nranks > MAX_RANKS)
		return nccl_fail(NULL, ncclInvalidUsage, "%d ranks: the fake device's NCCL serves up to %d", nranks,
				 MAX_RANKS);
	struct nccl_comm *comm = calloc(1, sizeof *comm);
	if (!comm)
		return nccl_fail(NULL, ncclSystemError, "out of host memory");
	comm->magic = COMM_MAGIC;
	comm->id = *id;
	comm->nranks = nranks;
	comm->rank = rank;
	comm->device = device;
	comm->local = local;
	if (!local) {
		nccl_result result = attach_shared(comm);
		if (result == ncclSuccess) {
			atomic_store(&comm->shared->slot[rank].pid, (int32_t)getpid());
			atomic_fetch_add(&comm->shared->joined, 1);
			result = nccl_wait(comm, all_joined, 0, "ncclCommInitRank");
		}
		if (result != ncclSuccess) {
			detach_shared(comm);
			free(comm);
			return result;
		}
	}
	nccl_debug("comm %p: rank %d of %d, device %d", (void *)comm, rank, nranks, device);
	*out = comm;
	return ncclSuccess;
}

nccl_result ncclGetVersion(int *version);
nccl_result ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = NVSTUB_NCCL_VERSION;
	return ncclSuccess;
}

nccl_result ncclGetUniqueId(nccl_unique_id *id);
nccl_result ncclGetUniqueId(nccl_unique_id *id)
{
	static _Atomic uint64_t counter;
	if (!id)
		return ncclInvalidArgument;
	memset(id, 0, sizeof *id);
	memcpy(id->internal, "fakenccl", 8);
	/* bytes 8..39: random, then pid, time and a counter (unique even if getrandom gave nothing) */
	if (getrandom(id->internal + 8, 16, GRND_NONBLOCK) != 16)
		memset(id->internal + 8, 0, 16);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint32_t pid = (uint32_t)getpid();
	uint64_t stamp = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + atomic_fetch_add(&counter, 1);
	uint32_t low = (uint32_t)stamp;
	memcpy(id->internal + 24, &pid, 4);
	memcpy(id->internal + 28, &stamp, 8);
	memcpy(id->internal + 36, &low, 4);
	return ncclSuccess;
}

nccl_result ncclCommInitRank(void **comm, int nranks, nccl_unique_id id, int rank);
nccl_result ncclCommInitRank(void **comm, int nranks, nccl_unique_id id, int rank)
{
	return create((struct nccl_comm **)comm, nranks, &id, rank, current_device(), 0);
}

nccl_result ncclCommInitRankConfig(void **comm, int nranks, nccl_unique_id id, int rank, void *config);
nccl_result ncclCommInitRankConfig(void **comm, int nranks, nccl_unique_id id, int rank, void *config)
{
	(void)config;
	return create((struct nccl_comm **)comm, nranks, &id, rank, current_device(), 0);
}

nccl_result ncclCommInitRankScalable(void **comm, int nranks, int rank, int n_ids, nccl_unique_id *ids,
				     void *config);
nccl_result ncclCommInitRankScalable(void **comm, int nranks, int rank, int n_ids, nccl_unique_id *ids,
				     void *config)
{
	(void)config;
	if (n_ids < 1 || !ids)
		return nccl_fail(NULL, ncclInvalidArgument, "ncclCommInitRankScalable: no id");
	return create((struct nccl_comm **)comm, nranks, &ids[0], rank, current_device(), 0);
}

/* One process, NDEV devices (devlist, or 0..NDEV-1): ranks that live in one thread cannot wait for each other,
   so these never wait. */
nccl_result ncclCommInitAll(void **comms, int ndev, const int *devlist);
nccl_result ncclCommInitAll(void **comms, int ndev, const int *devlist)
{
	nccl_unique_id id;
	if (!comms || ndev < 1)
		return nccl_fail(NULL, ncclInvalidArgument, "ncclCommInitAll: %d devices", ndev);
	ncclGetUniqueId(&id);
	for (int i = 0; i < ndev; i++) {
		nccl_result result = create((struct nccl_comm **)&comms[i], ndev, &id, i, devlist ? devlist[i] : i, 1);
		if (result != ncclSuccess)
			return result;
	}
	return ncclSuccess;
}

/* Collective over PARENT: every rank gives a colour and a key; the ranks of one colour form a communicator,
   ranked by key (then by their rank in PARENT). NCCL_SPLIT_NOCOLOR gets none. */
nccl_result ncclCommSplit(void *parent, int color, int key, void **newcomm, void *config);
nccl_result ncclCommSplit(void *parent, int color, int key, void **newcomm, void *config)
{
	struct nccl_comm *comm = nccl_valid(parent);
	(void)config;
	if (!comm || !newcomm)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommSplit: no communicator");
	*newcomm = NULL;
	uint64_t generation = ++comm->splits;
	int nranks = 1, rank = 0;
	if (comm->shared) {
		atomic_store(&comm->shared->split[comm->rank].color, color);
		atomic_store(&comm->shared->split[comm->rank].key, key);
		atomic_store(&comm->shared->split[comm->rank].generation, generation);
		nccl_result result = nccl_wait(comm, all_split, generation, "ncclCommSplit");
		if (result != ncclSuccess)
			return result;
		nranks = 0;
		for (int r = 0; r < comm->nranks; r++) {
			int c = atomic_load(&comm->shared->split[r].color), k = atomic_load(&comm->shared->split[r].key);
			if (c != color)
				continue;
			nranks++;
			if (r != comm->rank && (k < key || (k == key && r < comm->rank)))
				rank++;
		}
		/* nobody overwrites a slot before every rank has read them all */
		result = meet(comm, "ncclCommSplit");
		if (result != ncclSuccess)
			return result;
	} else if (comm->nranks > 1) {
		return nccl_fail(comm, ncclInvalidUsage, "ncclCommSplit of a communicator whose ranks do not meet");
	}
	if (color == NCCL_SPLIT_NOCOLOR)
		return ncclSuccess;
	/* the child's id: the parent's with the generation and the colour mixed into its random part */
	nccl_unique_id id = comm->id;
	uint64_t mix[2] = {generation * 0x9e3779b97f4a7c15ULL, ((uint64_t)(uint32_t)color + 1) * 0xc2b2ae3d27d4eb4fULL};
	for (int i = 0; i < 16; i++)
		id.internal[8 + i] ^= (char)(((const unsigned char *)mix)[i]);
	return create((struct nccl_comm **)newcomm, nranks, &id, rank, comm->device, 0);
}

static nccl_result destroy(void *handle, const char *what)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm)
		return nccl_fail(NULL, ncclInvalidArgument, "%s: not a communicator", what);
	nccl_debug("%s %p", what, handle);
	detach_shared(comm);
	comm->magic = 0;
	free(comm);
	return ncclSuccess;
}

nccl_result ncclCommFinalize(void *comm);
nccl_result ncclCommFinalize(void *comm)
{
	return nccl_valid(comm) ? ncclSuccess : nccl_fail(NULL, ncclInvalidArgument, "ncclCommFinalize: not a communicator");
}

nccl_result ncclCommDestroy(void *comm);
nccl_result ncclCommDestroy(void *comm)
{
	return destroy(comm, "ncclCommDestroy");
}

/* Another thread may be waiting in this communicator (PyTorch's watchdog aborts a hung one): it is told, and
   ranks of other processes waiting in it fail too; the communicator itself is left allocated, since the waiter
   still reads it. */
nccl_result ncclCommAbort(void *handle);
nccl_result ncclCommAbort(void *handle)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm)
		return handle ? nccl_fail(NULL, ncclInvalidArgument, "ncclCommAbort: not a communicator") : ncclSuccess;
	nccl_debug("ncclCommAbort %p", handle);
	atomic_store(&comm->aborted, 1);
	if (comm->shared) {
		atomic_store(&comm->shared->aborted, 1);
		depart(comm);
	}
	return ncclSuccess;
}

nccl_result ncclCommGetAsyncError(void *handle, nccl_result *error);
nccl_result ncclCommGetAsyncError(void *handle, nccl_result *error)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || !error)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommGetAsyncError");
	*error = ncclSuccess;
	return ncclSuccess;
}

nccl_result ncclCommCount(const void *handle, int *count);
nccl_result ncclCommCount(const void *handle, int *count)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || !count)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommCount");
	*count = comm->nranks;
	return ncclSuccess;
}

nccl_result ncclCommCuDevice(const void *handle, int *device);
nccl_result ncclCommCuDevice(const void *handle, int *device)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || !device)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommCuDevice");
	*device = comm->device;
	return ncclSuccess;
}

nccl_result ncclCommUserRank(const void *handle, int *rank);
nccl_result ncclCommUserRank(const void *handle, int *rank)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || !rank)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommUserRank");
	*rank = comm->rank;
	return ncclSuccess;
}

nccl_result ncclCommGetUniqueId(void *handle, nccl_unique_id *id);
nccl_result ncclCommGetUniqueId(void *handle, nccl_unique_id *id)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || !id)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommGetUniqueId");
	*id = comm->id;
	return ncclSuccess;
}

const char *ncclGetErrorString(nccl_result result);
const char *ncclGetErrorString(nccl_result result)
{
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	case ncclTimeout: return "NCCL operation timed out";
	default: return "unknown result code";
	}
}

const char *ncclGetLastError(void *handle);
const char *ncclGetLastError(void *handle)
{
	struct nccl_comm *comm = nccl_valid(handle);
	return comm && comm->last_error[0] ? comm->last_error : thread_error;
}

/* --- memory: through the fake runtime, outside the caching allocator --- */

struct alloc_args {
	void **ptr;
	size_t size;
};

static int call_malloc(void *fn, void *arg)
{
	struct alloc_args *a = arg;
	return ((int (*)(void **, size_t))fn)(a->ptr, a->size);
}

static int call_free(void *fn, void *arg)
{
	return ((int (*)(void *))fn)(arg);
}

nccl_result ncclMemAlloc(void **ptr, size_t size);
nccl_result ncclMemAlloc(void **ptr, size_t size)
{
	struct alloc_args args = {ptr, size};
	if (!ptr)
		return nccl_fail(NULL, ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
	int status = cuda_call("cudaMalloc", call_malloc, &args);
	return status == 0 ? ncclSuccess : nccl_fail(NULL, ncclUnhandledCudaError, "cudaMalloc(%zu) failed: %d", size, status);
}

nccl_result ncclMemFree(void *ptr);
nccl_result ncclMemFree(void *ptr)
{
	if (!ptr)
		return ncclSuccess;
	int status = cuda_call("cudaFree", call_free, ptr);
	return status == 0 ? ncclSuccess : nccl_fail(NULL, ncclUnhandledCudaError, "cudaFree failed: %d", status);
}

/* Registration: a handle that names the buffer; nothing is pinned or mapped. */
struct registration {
	void *buffer;
	size_t size;
};

nccl_result ncclCommRegister(const void *handle, void *buffer, size_t size, void **out);
nccl_result ncclCommRegister(const void *handle, void *buffer, size_t size, void **out)
{
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || !out)
		return nccl_fail(comm, ncclInvalidArgument, "ncclCommRegister");
	struct registration *r = malloc(sizeof *r);
	if (!r)
		return nccl_fail(comm, ncclSystemError, "out of host memory");
	r->buffer = buffer;
	r->size = size;
	*out = r;
	return ncclSuccess;
}

nccl_result ncclCommDeregister(const void *handle, void *registration);
nccl_result ncclCommDeregister(const void *handle, void *registration)
{
	if (!nccl_valid(handle))
		return nccl_fail(NULL, ncclInvalidArgument, "ncclCommDeregister");
	free(registration);
	return ncclSuccess;
}

/* --- reduction operators --- */

/* ncclRedOpCreatePreMulSum's operators: the scalar each multiplies the sum by. A host-immediate scalar is read
   at creation, one in device memory (host memory here too) when the operator is used. */
#define MAX_PREMUL 256
static struct premul {
	int used, type, in_device;
	const void *pointer;
	double value;
} premuls[MAX_PREMUL];
static pthread_mutex_t premul_lock = PTHREAD_MUTEX_INITIALIZER;
enum { ncclNumOps = 5, ncclScalarDevice = 0 };

int nccl_premul_scalar(int op, double *scalar)
{
	int i = op - ncclNumOps, found = 0;
	pthread_mutex_lock(&premul_lock);
	if (i >= 0 && i < MAX_PREMUL && premuls[i].used) {
		*scalar = premuls[i].in_device ? (double)nccl_load(premuls[i].pointer, 0, premuls[i].type) : premuls[i].value;
		found = 1;
	}
	pthread_mutex_unlock(&premul_lock);
	return found;
}

nccl_result ncclRedOpCreatePreMulSum(int *op, void *scalar, int datatype, int residence, void *handle);
nccl_result ncclRedOpCreatePreMulSum(int *op, void *scalar, int datatype, int residence, void *handle)
{
	if (!op || !scalar || !nccl_valid(handle))
		return nccl_fail(nccl_valid(handle), ncclInvalidArgument, "ncclRedOpCreatePreMulSum");
	pthread_mutex_lock(&premul_lock);
	int i = 0;
	while (i < MAX_PREMUL && premuls[i].used)
		i++;
	if (i < MAX_PREMUL)
		premuls[i] = (struct premul){1, datatype, residence == ncclScalarDevice, scalar,
					     residence == ncclScalarDevice ? 0 : (double)nccl_load(scalar, 0, datatype)};
	pthread_mutex_unlock(&premul_lock);
	if (i == MAX_PREMUL)
		return nccl_fail(nccl_valid(handle), ncclInvalidUsage, "more than %d live pre-multiplied sums",
				 MAX_PREMUL);
	*op = ncclNumOps + i;
	return ncclSuccess;
}

nccl_result ncclRedOpDestroy(int op, void *handle);
nccl_result ncclRedOpDestroy(int op, void *handle)
{
	if (!nccl_valid(handle))
		return nccl_fail(NULL, ncclInvalidArgument, "ncclRedOpDestroy");
	pthread_mutex_lock(&premul_lock);
	if (op >= ncclNumOps && op < ncclNumOps + MAX_PREMUL)
		premuls[op - ncclNumOps].used = 0;
	pthread_mutex_unlock(&premul_lock);
	return ncclSuccess;
}

/* --- groups: collectives run as they are called (every rank calls them in the same order), point-to-point
   operations at the end of the outermost group --- */

nccl_result ncclGroupStart(void);
nccl_result ncclGroupStart(void)
{
	nccl_group_depth++;
	return ncclSuccess;
}

nccl_result ncclGroupEnd(void);
nccl_result ncclGroupEnd(void)
{
	if (nccl_group_depth <= 0)
		return nccl_fail(NULL, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
	return --nccl_group_depth ? ncclSuccess : nccl_p2p_flush();
}

/* ncclSimInfo_t: size, magic, version, then the estimated time (a float), which stays 0 here. */
struct sim_info {
	size_t size;
	unsigned magic, version;
	float estimated_time;
};

nccl_result ncclGroupSimulateEnd(struct sim_info *info);
nccl_result ncclGroupSimulateEnd(struct sim_info *info)
{
	if (info)
		info->estimated_time = 0;
	return ncclGroupEnd();
}

/* --- operations --- */

static nccl_result collective(void *handle, struct nccl_call call, void *stream)
{
	struct nccl_comm *comm = nccl_valid(handle);
	nccl_debug("%s on stream %p", call.what, stream);
	stream_completes(stream);
	if (!comm)
		return nccl_fail(NULL, ncclInvalidArgument, "%s: not a communicator", call.what);
	if (atomic_load(&comm->aborted))
		return nccl_fail(comm, ncclInvalidUsage, "%s: the communicator was aborted", call.what);
	if ((call.kind == KIND_BROADCAST || call.kind == KIND_REDUCE || call.kind == KIND_GATHER ||
	     call.kind == KIND_SCATTER) && (call.root < 0 || call.root >= comm->nranks))
		return nccl_fail(comm, ncclInvalidArgument, "%s: root %d of %d ranks", call.what, call.root,
				 comm->nranks);
	return nccl_collective(comm, &call);
}

static nccl_result point_to_point(void *handle, int send, void *buffer, size_t count, int type, int peer,
				  const char *what, void *stream)
{
	stream_completes(stream);
	struct nccl_comm *comm = nccl_valid(handle);
	if (!comm || peer < 0 || peer >= comm->nranks || !nccl_type_size(type))
		return nccl_fail(comm, ncclInvalidArgument, "%s: peer %d, type %d", what, peer, type);
	if (atomic_load(&comm->aborted))
		return nccl_fail(comm, ncclInvalidUsage, "%s: the communicator was aborted", what);
	return nccl_p2p(comm, send, buffer, count * nccl_type_size(type), peer);
}

#define CALL(kind_, send_, recv_, count_, type_, op_, root_) \
	((struct nccl_call){.kind = (kind_), .what = __func__, .send = (send_), .recv = (recv_), .count = (count_), \
			    .type = (type_), .op = (op_), .root = (root_)})

nccl_result ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, void *comm, void *stream);
nccl_result ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_ALL_REDUCE, send, recv, count, type, op, 0), stream);
}

nccl_result ncclReduce(const void *send, void *recv, size_t count, int type, int op, int root, void *comm,
		       void *stream);
nccl_result ncclReduce(const void *send, void *recv, size_t count, int type, int op, int root, void *comm,
		       void *stream)
{
	return collective(comm, CALL(KIND_REDUCE, send, recv, count, type, op, root), stream);
}

nccl_result ncclBcast(void *buffer, size_t count, int type, int root, void *comm, void *stream);
nccl_result ncclBcast(void *buffer, size_t count, int type, int root, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_BROADCAST, buffer, buffer, count, type, 0, root), stream);
}

nccl_result ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, void *comm, void *stream);
nccl_result ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_BROADCAST, send, recv, count, type, 0, root), stream);
}

nccl_result ncclAllGather(const void *send, void *recv, size_t count, int type, void *comm, void *stream);
nccl_result ncclAllGather(const void *send, void *recv, size_t count, int type, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_ALL_GATHER, send, recv, count, type, 0, 0), stream);
}

nccl_result ncclReduceScatter(const void *send, void *recv, size_t count, int type, int op, void *comm,
			      void *stream);
nccl_result ncclReduceScatter(const void *send, void *recv, size_t count, int type, int op, void *comm,
			      void *stream)
{
	return collective(comm, CALL(KIND_REDUCE_SCATTER, send, recv, count, type, op, 0), stream);
}

nccl_result ncclAlltoAll(const void *send, void *recv, size_t count, int type, void *comm, void *stream);
nccl_result ncclAlltoAll(const void *send, void *recv, size_t count, int type, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_ALL_TO_ALL, send, recv, count, type, 0, 0), stream);
}

nccl_result ncclGather(const void *send, void *recv, size_t count, int type, int root, void *comm, void *stream);
nccl_result ncclGather(const void *send, void *recv, size_t count, int type, int root, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_GATHER, send, recv, count, type, 0, root), stream);
}

nccl_result ncclScatter(const void *send, void *recv, size_t count, int type, int root, void *comm, void *stream);
nccl_result ncclScatter(const void *send, void *recv, size_t count, int type, int root, void *comm, void *stream)
{
	return collective(comm, CALL(KIND_SCATTER, send, recv, count, type, 0, root), stream);
}

nccl_result ncclSend(const void *send, size_t count, int type, int peer, void *comm, void *stream);
nccl_result ncclSend(const void *send, size_t count, int type, int peer, void *comm, void *stream)
{
	return point_to_point(comm, 1, (void *)(uintptr_t)send, count, type, peer, "ncclSend", stream);
}

nccl_result ncclRecv(void *recv, size_t count, int type, int peer, void *comm, void *stream);
nccl_result ncclRecv(void *recv, size_t count, int type, int peer, void *comm, void *stream)
{
	return point_to_point(comm, 0, recv, count, type, peer, "ncclRecv", stream);
}

/* --- not on the fake device: windows and RMA, device communicators, elasticity, memory offload --- */

#define UNSUPPORTED(name)                                                                                  \
	nccl_result name(void);                                                                            \
	nccl_result name(void)                                                                             \
	{                                                                                                  \
		return nccl_fail(NULL, ncclInvalidUsage, #name " is not supported by the fake device's NCCL"); \
	}

UNSUPPORTED(ncclCommRevoke)
UNSUPPORTED(ncclCommShrink)
UNSUPPORTED(ncclCommGrow)
UNSUPPORTED(ncclCommSuspend)
UNSUPPORTED(ncclCommResume)
UNSUPPORTED(ncclCommMemStats)
UNSUPPORTED(ncclCommQueryProperties)
UNSUPPORTED(ncclCommWindowRegister)
UNSUPPORTED(ncclCommWindowDeregister)
UNSUPPORTED(ncclWinGetUserPtr)
UNSUPPORTED(ncclPutSignal)
UNSUPPORTED(ncclSignal)
UNSUPPORTED(ncclWaitSignal)
UNSUPPORTED(ncclDevCommCreate)
UNSUPPORTED(ncclDevCommDestroy)
UNSUPPORTED(ncclGetLsaDevicePointer)
UNSUPPORTED(ncclGetLsaMultimemDevicePointer)
UNSUPPORTED(ncclGetMultimemDevicePointer)
UNSUPPORTED(ncclGetPeerDevicePointer)

/* The NCCL stub's data movement. The fake device's memory is host memory of each rank's process, so a rank
   computes its own output by reading the other ranks' send buffers out of their processes (process_vm_readv,
   else /proc/PID/mem) and reducing on the CPU; it writes only its own receive buffer. A collective has two
   meetings: all ranks have published their send buffers (entered), all have read what they need (read); only
   then does each write its output, so an in-place collective never changes a buffer a peer still reads.
   PyTorch needs the values for its own control flow (DDP compares parameter shapes across ranks with an
   all-gather, object collectives pickle through NCCL), even though the kernels that compute on them do nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nccl_internal.h"

enum {
	ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64,
	ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2,
};
enum { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg };

size_t nccl_type_size(int type)
{
	switch (type) {
	case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
	case ncclFloat16: case ncclBfloat16: return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
	case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
	default: return 0;
	}
}

/* --- reading another rank's memory --- */

static nccl_result read_rank(struct nccl_comm *comm, int rank, uint64_t addr, void *into, size_t bytes)
{
	if (!bytes)
		return ncclSuccess;
	if (rank == comm->rank) {
		memcpy(into, (const void *)(uintptr_t)addr, bytes);
		return ncclSuccess;
	}
	pid_t pid = atomic_load(&comm->shared->slot[rank].pid);
	size_t done = 0;
	while (done < bytes) {
		struct iovec local = {(char *)into + done, bytes - done};
		struct iovec remote = {(void *)(uintptr_t)(addr + done), bytes - done};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done < bytes) { /* no process_vm_readv (seccomp, an old kernel): the same through /proc */
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		while (fd >= 0 && done < bytes) {
			ssize_t n = pread(fd, (char *)into + done, bytes - done, (off_t)(addr + done));
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		if (fd >= 0)
			close(fd);
	}
	if (done < bytes)
		return nccl_fail(comm, ncclSystemError, "cannot read %zu bytes at 0x%llx of rank %d (pid %d): %s",
				 bytes, (unsigned long long)addr, rank, (int)pid, strerror(errno));
	return ncclSuccess;
}

/* --- reductions, on the CPU --- */

static float half_to_float(uint16_t h)
{
	int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
	float value;
	if (exponent == 0)
		value = ldexpf((float)mantissa, -24);
	else if (exponent == 31)
		value = mantissa ? NAN : INFINITY;
	else
		value = ldexpf((float)(mantissa | 0x400), exponent - 25);
	return (h & 0x8000) ? -value : value;
}

static uint16_t float_to_half(float f)
{
	uint32_t bits;
	memcpy(&bits, &f, 4);
	uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
	if (isnan(f))
		return sign | 0x7e00;
	float magnitude = fabsf(f);
	if (magnitude >= 65520.0f)
		return sign | 0x7c00;
	if (magnitude < ldexpf(1, -24) / 2)
		return sign;
	int exponent;
	frexpf(magnitude, &exponent); /* magnitude = m * 2^exponent, m in [0.5, 1) */
	if (exponent < -13)	      /* subnormal: units of 2^-24 */
		return sign | (uint16_t)lrintf(ldexpf(magnitude, 24));
	uint32_t scaled = (uint32_t)lrintf(ldexpf(magnitude, 11 - exponent)); /* 11 bits, rounded */
	if (scaled == 0x800) {
		scaled = 0x400;
		exponent++;
	}
	if (exponent + 14 >= 31)
		return sign | 0x7c00;
	return sign | (uint16_t)((exponent + 14) << 10) | (uint16_t)(scaled & 0x3ff);
}

static float bf16_to_float(uint16_t b)
{
	uint32_t bits = (uint32_t)b << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t bits;
	memcpy(&bits, &f, 4);
	if (isnan(f))
		return (uint16_t)((bits >> 16) | 0x40);
	bits += 0x7fff + ((bits >> 16) & 1); /* round to nearest even */
	return (uint16_t)(bits >> 16);
}

/* Element I of P, of type TYPE, as a long double (exact for every integer and float type here); float8 reads 0. */
long double nccl_load(const void *p, size_t i, int type)
{
	switch (type) {
	case ncclInt8: return ((const int8_t *)p)[i];
	case ncclUint8: return ((const uint8_t *)p)[i];
	case ncclInt32: return ((const int32_t *)p)[i];
	case ncclUint32: return ((const uint32_t *)p)[i];
	case ncclInt64: return ((const int64_t *)p)[i];
	case ncclUint64: return ((const uint64_t *)p)[i];
	case ncclFloat16: return half_to_float(((const uint16_t *)p)[i]);
	case ncclFloat32: return ((const float *)p)[i];
	case ncclFloat64: return ((const double *)p)[i];
	case ncclBfloat16: return bf16_to_float(((const uint16_t *)p)[i]);
	default: return 0;
	}
}

static void store(void *p, size_t i, int type, long double v)
{
	switch (type) {
	case ncclInt8: ((int8_t *)p)[i] = (int8_t)v; break;
	case ncclUint8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case ncclInt32: ((int32_t *)p)[i] = (int32_t)v; break;
	case ncclUint32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case ncclInt64: ((int64_t *)p)[i] = (int64_t)v; break;
	case ncclUint64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case ncclFloat16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
	case ncclFloat32: ((float *)p)[i] = (float)v; break;
	case ncclFloat64: ((double *)p)[i] = (double)v; break;
	case ncclBfloat16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
	default: break; /* float8: left as it was */
	}
}

/* acc[i] = acc[i] OP in[i], each step rounded to the type as NCCL's kernels do; avg and pre-multiplied sums add
   here, finish() scales. */
static void reduce(void *acc, const void *in, size_t count, int type, int op)
{
	for (size_t i = 0; i < count; i++) {
		long double a = nccl_load(acc, i, type), b = nccl_load(in, i, type);
		long double r = op == ncclProd ? a * b : op == ncclMax ? fmaxl(a, b) : op == ncclMin ? fminl(a, b) : a + b;
		store(acc, i, type, r);
	}
}

/* The last step of an average (divide by the ranks) or a pre-multiplied sum (times its scalar). */
static void finish(void *acc, size_t count, int type, int op, int nranks)
{
	double factor;
	if (op == ncclAvg)
		factor = 1.0 / nranks;
	else if (op <= ncclAvg || !nccl_premul_scalar(op, &factor))
		return;
	for (size_t i = 0; i < count; i++)
		store(acc, i, type, nccl_load(acc, i, type) * factor);
}

/* --- collectives --- */

static int all_entered(struct nccl_comm *comm, uint64_t n)
{
	for (int r = 0; r < comm->nranks; r++)
		if (atomic_load(&comm->shared->entered[r]) < n)
			return 0;
	return 1;
}

static int all_read(struct nccl_comm *comm, uint64_t n)
{
	for (int r = 0; r < comm->nranks; r++)
		if (atomic_load(&comm->shared->read[r]) < n)
			return 0;
	return 1;
}

/* OUT (BYTES) = OP over every rank of their send buffer at OFFSET, COUNT elements. */
static nccl_result reduce_ranks(struct nccl_comm *comm, const struct nccl_call *call, size_t offset, void *out,
				size_t count, size_t bytes)
{
	void *scratch = malloc(bytes ? bytes : 1);
	if (!scratch)
		return nccl_fail(comm, ncclSystemError, "%s: out of host memory", call->what);
	nccl_result result = ncclSuccess;
	for (int q = 0; q < comm->nranks && result == ncclSuccess; q++) {
		result = read_rank(comm, q, comm->shared->slot[q].send + offset, q ? scratch : out, bytes);
		if (result == ncclSuccess && q)
			reduce(out, scratch, count, call->type, call->op);
	}
	free(scratch);
	if (result == ncclSuccess)
		finish(out, count, call->type, call->op, comm->nranks);
	return result;
}

/* This rank's output of CALL, into OUT (OUT_BYTES), from the published send buffers. */
static nccl_result compute(struct nccl_comm *comm, const struct nccl_call *call, void *out, size_t chunk)
{
	int n = comm->nranks, me = comm->rank;
	nccl_result result = ncclSuccess;
	switch (call->kind) {
	case KIND_ALL_REDUCE:
		return reduce_ranks(comm, call, 0, out, call->count, chunk);
	case KIND_REDUCE:
		return me == call->root ? reduce_ranks(comm, call, 0, out, call->count, chunk) : ncclSuccess;
	case KIND_REDUCE_SCATTER:
		return reduce_ranks(comm, call, (size_t)me * chunk, out, call->count, chunk);
	case KIND_BROADCAST:
		return read_rank(comm, call->root, comm->shared->slot[call->root].send, out, chunk);
	case KIND_SCATTER:
		return read_rank(comm, call->root, comm->shared->slot[call->root].send + (size_t)me * chunk, out, chunk);
	case KIND_GATHER:
		if (me != call->root)
			return ncclSuccess;
		/* fall through */
	case KIND_ALL_GATHER:
		for (int q = 0; q < n && result == ncclSuccess; q++)
			result = read_rank(comm, q, comm->shared->slot[q].send, (char *)out + (size_t)q * chunk, chunk);
		return result;
	case KIND_ALL_TO_ALL:
		for (int q = 0; q < n && result == ncclSuccess; q++)
			result = read_rank(comm, q, comm->shared->slot[q].send + (size_t)me * chunk,
					   (char *)out + (size_t)q * chunk, chunk);
		return result;
	case KIND_BARRIER:
		return ncclSuccess;
	}
	return ncclSuccess;
}

/* Every rank must call the same collective with the same element type and size; NCCL's behaviour otherwise
   is undefined (a hang or garbage): here it is an error. */
static nccl_result check_peers(struct nccl_comm *comm, const struct nccl_call *call)
{
	const struct slot *mine = &comm->shared->slot[comm->rank];
	for (int q = 0; q < comm->nranks; q++) {
		const struct slot *peer = &comm->shared->slot[q];
		if (peer->type != mine->type || peer->bytes != mine->bytes)
			return nccl_fail(comm, ncclInvalidUsage,
					 "%s #%llu: rank %d has %llu bytes of type %d, rank %d %llu of type %d", call->what,
					 (unsigned long long)comm->collectives, comm->rank,
					 (unsigned long long)mine->bytes, mine->type, q, (unsigned long long)peer->bytes,
					 peer->type);
	}
	return ncclSuccess;
}

nccl_result nccl_collective(struct nccl_comm *comm, const struct nccl_call *call)
{
	size_t esize = call->kind == KIND_BARRIER ? 1 : nccl_type_size(call->type);
	if (!esize)
		return nccl_fail(comm, ncclInvalidArgument, "%s: unknown data type %d", call->what, call->type);
	comm->collectives++;
	nccl_debug("%s comm %p rank %d #%llu, %zu elements", call->what, (void *)comm, comm->rank,
		   (unsigned long long)comm->collectives, call->count);
	if (!comm->shared) /* ncclCommInitAll's: nothing to meet, nothing moved */
		return ncclSuccess;
	int n = comm->nranks;
	size_t chunk = call->kind == KIND_BARRIER ? 0 : call->count * esize; /* one rank's part */
	size_t send_bytes = chunk, out_bytes = chunk;
	switch (call->kind) {
	case KIND_REDUCE_SCATTER: case KIND_ALL_TO_ALL: case KIND_SCATTER: send_bytes = chunk * (size_t)n; break;
	default: break;
	}
	switch (call->kind) {
	case KIND_ALL_GATHER: case KIND_ALL_TO_ALL: case KIND_GATHER: out_bytes = chunk * (size_t)n; break;
	default: break;
	}

	struct slot *mine = &comm->shared->slot[comm->rank];
	mine->send = (uint64_t)(uintptr_t)call->send;
	mine->bytes = send_bytes;
	mine->type = call->type;
	mine->op = call->op;
	atomic_store(&comm->shared->entered[comm->rank], comm->collectives);
	nccl_result result = nccl_wait(comm, all_entered, comm->collectives, call->what);
	if (result == ncclSuccess)
		result = check_peers(comm, call);

	void *out = NULL;
	if (result == ncclSuccess && out_bytes) {
		out = malloc(out_bytes);
		if (!out)
			result = nccl_fail(comm, ncclSystemError, "%s: out of host memory", call->what);
	}
	int writes = call->kind != KIND_BARRIER &&
		     !((call->kind == KIND_REDUCE || call->kind == KIND_GATHER) && comm->rank != call->root);
	if (result == ncclSuccess)
		result = compute(comm, call, out, chunk);
	/* Told even after a failure: the others must not wait for this rank's reading. */
	atomic_store(&comm->shared->read[comm->rank], comm->collectives);
	if (result == ncclSuccess)
		result = nccl_wait(comm, all_read, comm->collectives, call->what);
	if (result == ncclSuccess && writes && out_bytes)
		memcpy(call->recv, out, out_bytes);
	free(out);
	return result;
}

/* --- point to point: each ordered pair of ranks has a channel with one message in flight --- */

struct p2p_op {
	struct nccl_comm *comm;
	int send, peer, done;
	void *buffer;
	size_t bytes;
	uint64_t number; /* the message's number on its channel, from 1 */
};

static __thread struct p2p_op *queue;
static __thread size_t queued, queue_size;
__thread int nccl_group_depth;

static struct channel *channel_of(const struct p2p_op *op)
{
	int me = op->comm->rank;
	return op->send ? &op->comm->shared->channel[me][op->peer] : &op->comm->shared->channel[op->peer][me];
}

/* One pass over the queue: posts what can be posted, reads what has arrived. True once everything is done; a
   failed read is kept in *failure. */
static nccl_result failure;

static int progress(struct nccl_comm *unused, uint64_t arg)
{
	(void)unused, (void)arg;
	int all = 1;
	for (size_t i = 0; i < queued; i++) {
		struct p2p_op *op = &queue[i];
		if (op->done)
			continue;
		struct channel *ch = channel_of(op);
		if (op->send) {
			if (atomic_load(&ch->posted) == op->number - 1 && atomic_load(&ch->taken) == op->number - 1) {
				ch->addr = (uint64_t)(uintptr_t)op->buffer;
				ch->bytes = op->bytes;
				atomic_store(&ch->posted, op->number);
			}
			op->done = atomic_load(&ch->taken) >= op->number;
		} else if (atomic_load(&ch->posted) >= op->number && atomic_load(&ch->taken) == op->number - 1) {
			size_t bytes = ch->bytes < op->bytes ? ch->bytes : op->bytes;
			nccl_result result = read_rank(op->comm, op->peer, ch->addr, op->buffer, bytes);
			if (result != ncclSuccess && failure == ncclSuccess)
				failure = result;
			atomic_store(&ch->taken, op->number);
			op->done = 1;
		}
		all &= op->done;
	}
	return all || failure != ncclSuccess;
}

nccl_result nccl_p2p_flush(void)
{
	nccl_result result = ncclSuccess;
	failure = ncclSuccess;
	if (queued)
		result = nccl_wait(queue[0].comm, progress, 0, queue[0].send ? "ncclSend" : "ncclRecv");
	if (result == ncclSuccess)
		result = failure;
	queued = 0;
	return result;
}

nccl_result nccl_p2p(struct nccl_comm *comm, int send, void *buffer, size_t bytes, int peer)
{
	if (!comm->shared) /* ncclCommInitAll's: nothing moved */
		return ncclSuccess;
	if (queued == queue_size) {
		size_t size = queue_size ? 2 * queue_size : 16;
		struct p2p_op *grown = realloc(queue, size * sizeof *grown);
		if (!grown)
			return nccl_fail(comm, ncclSystemError, "out of host memory");
		queue = grown;
		queue_size = size;
	}
	uint64_t number = send ? ++comm->sent[peer] : ++comm->received[peer];
	queue[queued++] = (struct p2p_op){comm, send, peer, 0, buffer, bytes, number};
	return nccl_group_depth > 0 ? ncclSuccess : nccl_p2p_flush();
}

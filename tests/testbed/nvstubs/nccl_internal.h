/* Shared by nccl.c (the API, communicators, meeting) and nccl_data.c (moving the data). */
#ifndef NVSTUBS_NCCL_INTERNAL_H
#define NVSTUBS_NCCL_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int nccl_result;
enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
	ncclTimeout = 8,
};
#define NCCL_UNIQUE_ID_BYTES 128
#define NCCL_SPLIT_NOCOLOR (-1)
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} nccl_unique_id;

/* Ranks one shared file serves; a larger communicator is refused. */
#define MAX_RANKS 128
#define SHARED_MAGIC 0x66616b656e63636cULL /* "fakenccl" */

/* What a rank publishes for its current collective: the others read its send buffer from its process. */
struct slot {
	_Atomic int32_t pid;
	int32_t pad;
	uint64_t send;	 /* address of the send buffer in that process */
	uint64_t bytes;	 /* of the send buffer */
	int32_t op, type;
};

/* One ordered pair's point-to-point channel: one message in flight. */
struct channel {
	_Atomic uint64_t posted; /* messages the sender has published */
	_Atomic uint64_t taken;	 /* messages the receiver has read */
	uint64_t addr, bytes;	 /* of the last one posted */
};

/* The meeting point of one communicator: a file every rank maps (FAKENCCL_DIR/fakenccl-<id>). */
struct shared {
	uint64_t magic;
	_Atomic int32_t joined;	 /* ranks that have created their communicator */
	_Atomic int32_t left;	 /* ranks that have destroyed or aborted it */
	_Atomic int32_t aborted; /* a rank aborted it: waiters fail */
	int32_t pad;
	_Atomic uint64_t entered[MAX_RANKS]; /* collectives each rank has entered (its slot is filled) */
	_Atomic uint64_t read[MAX_RANKS];    /* collectives each rank has read its inputs of */
	struct slot slot[MAX_RANKS];
	struct {
		_Atomic int32_t color, key;
		_Atomic uint64_t generation; /* the split this slot is for (1, 2, ...) */
	} split[MAX_RANKS];
	struct channel channel[MAX_RANKS][MAX_RANKS]; /* [from][to] */
};

struct nccl_comm {
	uint64_t magic;
	nccl_unique_id id;
	int nranks, rank, device;
	int local;		/* ncclCommInitAll: every rank in this process, no meeting, no data moved */
	struct shared *shared;	/* NULL when local or alone */
	char path[256];
	uint64_t collectives;	/* entered by this rank */
	uint64_t splits;
	uint64_t sent[MAX_RANKS], received[MAX_RANKS]; /* point-to-point messages, by peer */
	_Atomic int aborted;
	_Atomic int departed;	/* counted in shared->left (by abort or destroy) */
	char last_error[256];
};

/* nccl.c */
nccl_result nccl_fail(struct nccl_comm *comm, nccl_result result, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
void nccl_debug(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Waits until done(comm, arg) holds, or gives up (abort, FAKENCCL_TIMEOUT): 0 or the reason. */
nccl_result nccl_wait(struct nccl_comm *comm, int (*done)(struct nccl_comm *, uint64_t), uint64_t arg,
		      const char *what);
struct nccl_comm *nccl_valid(const void *handle);
/* The user-defined operator OP (ncclRedOpCreatePreMulSum): its scalar, as a double; 0 if it is none. */
int nccl_premul_scalar(int op, double *scalar);

/* nccl_data.c */
enum nccl_kind {
	KIND_ALL_REDUCE,
	KIND_REDUCE,
	KIND_BROADCAST,
	KIND_ALL_GATHER,
	KIND_REDUCE_SCATTER,
	KIND_ALL_TO_ALL,
	KIND_GATHER,
	KIND_SCATTER,
	KIND_BARRIER, /* no data (ncclCommSplit's) */
};
struct nccl_call {
	enum nccl_kind kind;
	const char *what;
	const void *send;
	void *recv;
	size_t count; /* elements, as the API call counts them */
	int type, op, root;
};
nccl_result nccl_collective(struct nccl_comm *comm, const struct nccl_call *call);
size_t nccl_type_size(int type);
/* Element I of P of the NCCL data type TYPE (float8: 0). */
long double nccl_load(const void *p, size_t i, int type);
/* Point-to-point: queued in a group, run at its end (or at once outside one). */
nccl_result nccl_p2p(struct nccl_comm *comm, int send, void *buffer, size_t bytes, int peer);
nccl_result nccl_p2p_flush(void);
extern __thread int nccl_group_depth;

#endif

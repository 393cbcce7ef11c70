/* mp_oom.h - why a request ran out of memory: the failed request (the trace's oom entry, the message of an
   OutOfMemoryError, or a size asked about), the caching allocator's own decision replayed on the state memprof
   read, the reserved memory that could not serve it sorted into causes, and what would have worked.

   The replay follows the allocator's rules for a request (c10/cuda/CUDACachingAllocator.cpp, the same in every
   2.x release memprof reads): round_size (512-byte steps, roundup_power2_divisions when set), the small pool
   for rounded sizes up to 1 MiB and the large pool above, the best fit on the request's stream among that
   pool's free blocks, max_split_size's refusal of oversize blocks, the size cudaMalloc would be asked for
   (2 MiB, 20 MiB, or the request rounded up to 2 MiB), then the retry that synchronises pending frees and
   releases every cached segment that is free as a whole. A state read at the OOM is the state after that
   retry, so replaying it on that state reproduces the allocator's answer. */
#ifndef MEMPROF_OOM_H
#define MEMPROF_OOM_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_sim.h"
#include "mp_snapshot.h"

/* The numbers PyTorch's OutOfMemoryError message printed (−1 when the message does not say). Sizes are
   format_size's: two decimals of their unit. */
typedef struct mp_oom_message {
	int64_t device;
	int64_t tried;                /* "Tried to allocate" */
	int64_t capacity;             /* "total capacity" */
	int64_t free;                 /* "of which ... is free" */
	int64_t in_use;               /* "this process has ... memory in use" (non-PyTorch memory included) */
	int64_t allowed;              /* "... allowed;" (a per-process memory fraction) */
	int64_t allocated;            /* "... is allocated by PyTorch" */
	int64_t private_pools;        /* "with ... allocated in private pools" */
	int64_t reserved_unallocated; /* "... is reserved by PyTorch but unallocated" */
	int64_t allowed_slack;        /* how far ALLOWED may be from the true cap: half its last printed digit */
} mp_oom_message;

/* Read the numbers of TEXT, an OutOfMemoryError's message (2.0's "(GPU 0; 1.00 GiB total capacity; ...)"
   form and the later sentences). False when TEXT is no CUDA OOM message. */
bool mp_oom_message_parse(const char *text, mp_oom_message *out);

/* Write N as PyTorch's format_size prints it in its messages: "512 bytes", "4.00 KiB", "922.00 MiB". */
void mp_oom_format_size(mp_out *out, int64_t n);

enum mp_oom_source {
	MP_OOM_FROM_TRACE,     /* the last 'oom' entry of the device's trace: the rounded size, exactly */
	MP_OOM_FROM_EXCEPTION, /* an OutOfMemoryError's message: the size to format_size's precision */
	MP_OOM_FROM_ARGS,      /* a size asked about: would this request be served now? */
};

typedef struct mp_oom_request {
	enum mp_oom_source source;
	int64_t device;
	int64_t stream;
	int64_t size;          /* as asked, or as the trace holds it (already rounded) */
	int64_t device_free;   /* free device memory at the OOM (cudaMemGetInfo), −1 unknown */
	int64_t trace_index;   /* the oom entry's index in the snapshot's trace, −1 */
	int64_t events_after;  /* allocs and frees the trace holds after it: the state read is that much later */
	bool has_message;
	mp_oom_message message;
	char where[160];       /* how it was found: "trace entry 812", "torch.OutOfMemoryError handled in thread ..." */
	mp_sim_release release; /* the PyTorch release whose allocator raised it ({0, 0}: unknown, guessed) */
} mp_oom_request;

/* The last 'oom' entry of DEVICE's trace in SNAP (DEVICE −1: of any device) as a request. MP_E_NOTFOUND when
   there is none. */
mp_err mp_oom_request_from_trace(const mp_snapshot *snap, long device, mp_oom_request *out);

/* A request from an OutOfMemoryError's message TEXT (its device, size and free memory); STREAM the stream
   it is assumed to have asked on (the message does not say; 0, the default stream, unless known). False when
   TEXT is no CUDA OOM message. */
bool mp_oom_request_from_message(const char *text, int64_t stream, mp_oom_request *out);

/* The id of each cause, in the fixed set documented in src/oom/OOM-CAUSES.md. */
enum mp_oom_cause_id {
	MP_OOM_DEVICE_FULL,    /* live tensors + the request exceed what the process can have */
	MP_OOM_OUTSIDE,        /* device memory neither free nor reserved by this allocator */
	MP_OOM_PRIVATE_POOL,   /* free memory inside private pools (CUDA graphs, MemPool) */
	MP_OOM_PENDING_FREE,   /* freed blocks waiting for other streams' work (record_stream) */
	MP_OOM_OTHER_POOL,     /* free memory in the other pool (small for a large request, or the reverse) */
	MP_OOM_OTHER_STREAM,   /* free memory of the request's pool cached for other streams */
	MP_OOM_OVERSIZE_SPLIT, /* large segments kept from release by small live blocks inside them */
	MP_OOM_FRAGMENTATION,  /* the rest: free blocks on the request's stream and pool, each too small */
	MP_OOM__NCAUSES
};
const char *mp_oom_cause_name(enum mp_oom_cause_id id);

typedef struct mp_oom_cause {
	enum mp_oom_cause_id id;
	int64_t bytes;
	int64_t largest;  /* the largest single free block it holds (0 for device_full, outside) */
	bool sufficient;  /* its memory, usable by the request, with the free memory would have served it (always
			     false for device_full and outside, which are no memory the request could use) */
	char evidence[400];
} mp_oom_cause;

enum mp_oom_remedy_id {
	MP_OOM_R_EXPANDABLE,   /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True */
	MP_OOM_R_MAX_SPLIT,    /* max_split_size_mb:M */
	MP_OOM_R_GC_THRESHOLD, /* garbage_collection_threshold */
	MP_OOM_R_EMPTY_CACHE,  /* torch.cuda.empty_cache() at a point */
	MP_OOM_R_FREE,         /* free what a named owner (or call site, or block) holds */
	MP_OOM_R_PRIVATE_POOL, /* release a private pool: drop the MemPool or CUDA graph that owns it */
	MP_OOM_R_NOTHING,      /* nothing of the allocator's: the live tensors exceed the device */
	MP_OOM_R_SETTING,      /* another of the user's own settings changed (roundup_power2_divisions, ...) */
	MP_OOM__NREMEDIES
};
const char *mp_oom_remedy_name(enum mp_oom_remedy_id id);

/* What a claim about another run rests on. */
enum mp_oom_evidence {
	MP_OOM_EV_STATE,  /* estimated from the state at the OOM alone */
	MP_OOM_EV_REPLAY, /* the job's recorded requests replayed through the allocator model (src/whatif) */
};
const char *mp_oom_evidence_name(enum mp_oom_evidence e);

/* How a remedy about a holder (MP_OOM_R_FREE) makes its memory go: OOM-CAUSES.md's "kind". */
enum mp_oom_remedy_kind {
	MP_OOM_K_NONE,            /* not about a holder: a setting, a pool, empty_cache */
	MP_OOM_K_DEL,             /* delete the variable (every reference to it), or free what a call site made */
	MP_OOM_K_SMALLER_BATCH,   /* activations saved for backward grow with the batch */
	MP_OOM_K_CHECKPOINT,      /* torch.utils.checkpoint around repeated blocks: recompute instead of saving */
	MP_OOM_K_LOWER_PRECISION, /* autocast to 16 bits: float32 activations in half the bytes */
};
const char *mp_oom_remedy_kind_name(enum mp_oom_remedy_kind kind);

typedef struct mp_oom_remedy {
	enum mp_oom_remedy_id id;
	bool works;        /* memprof claims it would have served the request; false: considered, would not */
	bool untested;     /* no claim either way: a change of the job's own requests (checkpointing, autocast)
			      that neither the model nor an estimate proven by the campaign can weigh; listed
			      with its facts as worth trying ("to_try"), WORKS unused */
	enum mp_oom_evidence evidence;
	bool covers_step;  /* works: the replay served the rest of the step too, not only the request */
	bool fails_later;  /* not working: the replay served the request, and ran out later in the step */
	char action[240];  /* the setting or the action */
	char why[400];
	bool has_conf;     /* a setting: CONF is the whole PYTORCH_CUDA_ALLOC_CONF to run with ("": unset) */
	char conf[200];
	/* empty_cache: right after this line of the job's code ("" when no place is named) */
	char place_file[200];
	int64_t place_line;
	char place_function[80];
	enum mp_oom_remedy_kind kind; /* a remedy about a holder: how; MP_OOM_K_NONE for the others */
	char holder[200];  /* the holder it is about: a holder's name, or what the names of the holders it is
			      about begin with ("activations": all of them) */
} mp_oom_remedy;

/* A setting of the user's own that causes the OOM: without it (or with it changed), the job gets past. */
typedef struct mp_oom_setting_cause {
	char setting[120];  /* "max_split_size_mb:21" */
	enum mp_oom_evidence evidence;
	char why[400];
} mp_oom_setting_cause;

/* Free memory of one (pool, stream): how broken up it is. */
typedef struct mp_oom_frag {
	int64_t stream;
	char pool[48];        /* "large", "small", "private (1, 0) large" */
	int64_t free_bytes, largest, nfree;
	double fragmentation; /* 1 − largest / free: 0 when all free memory is one block */
	double sq_ratio;      /* Σ free² / (Σ free)²: 1 when it is one block, → 1/n for n equal pieces */
} mp_oom_frag;

/* What a holder is: OOM-CAUSES.md's holder "what". */
enum mp_oom_holder_what {
	MP_OOM_H_VARIABLE,    /* a variable (or a path below one) that holds tensors */
	MP_OOM_H_MODEL,       /* a module tree: its parameters, buffers and gradients */
	MP_OOM_H_OPTIMIZER,   /* an optimizer's state */
	MP_OOM_H_ACTIVATIONS, /* activations: saved for backward by the autograd graph, or no variable holds them */
	MP_OOM_H_SITE,        /* what a call site allocated (no owners known) */
	MP_OOM_H_UNKNOWN,     /* no Python tensor, no frames: a block */
};
const char *mp_oom_holder_what_name(enum mp_oom_holder_what what);

/* Who holds live memory: owners (the 'owner' key of blocks: Python names; activations by module), else call
   sites, else blocks. */
typedef struct mp_oom_holder {
	char name[200];
	int64_t bytes;
	int64_t nblocks;
	enum mp_oom_holder_what what;
} mp_oom_holder;

enum mp_oom_verdict {
	MP_OOM_V_OOM,            /* no block fits and cudaMalloc fails, also after the retry: out of memory */
	MP_OOM_V_CACHED,         /* a cached block serves it */
	MP_OOM_V_CUDAMALLOC,     /* cudaMalloc of the allocation size succeeds */
	MP_OOM_V_AFTER_RELEASE,  /* cudaMalloc succeeds after the retry released cached segments */
	MP_OOM_V_UNKNOWN_FREE,   /* no block fits and the device's free memory is unknown */
};

#define MP_OOM_MAX_CAUSES MP_OOM__NCAUSES
#define MP_OOM_MAX_REMEDIES 24
#define MP_OOM_MAX_HOLDERS 8
#define MP_OOM_MAX_FRAGS 32

typedef struct mp_oom {
	mp_oom_request req;
	/* the allocator's settings as read (allocator_settings), defaults where absent, under the release's rules */
	mp_sim_release release;  /* the request's, else what the snapshot's keys tell */
	mp_sim_conf conf;
	char conf_text[256];     /* the job's PYTORCH_CUDA_ALLOC_CONF as it last set it, "" */
	int64_t max_split_size;  /* INT64_MAX: none */
	bool expandable;
	double gc_threshold;
	int64_t divisions[16];   /* roundup_power2_divisions per power-of-two interval from 1 MiB */
	bool settings_known;
	/* the replay */
	int64_t rounded, alloc_size;
	bool small_pool;
	bool size_exact;                      /* false: the message gives the allocation size only; ROUNDED is
						 the smallest size the allocator's failure allows (2 and 20 MiB
						 allocations) or that allocation size (within 2 MiB above) */
	/* the bounds of the request's rounded size when not exact: more than SIZE_ABOVE and at most SIZE_MAX;
	   a 20 MiB allocation also allows more than 18 MiB and at most 20 MiB (SIZE_ALSO_LARGE) */
	int64_t size_above, size_max;
	bool size_also_large;
	int64_t best_fit_addr, best_fit_size; /* the block that would serve it, −1 */
	int64_t largest_free;                 /* on the request's stream and pool (default pools) */
	int64_t released_by_retry;            /* what the retry would release now */
	bool retry_skipped;                   /* the OOM happened although the retry would have released enough:
						 it did not run (2.6 skips it while a MemPool or a graph capture
						 routes allocations to a private pool) */
	enum mp_oom_verdict verdict;
	char **decision;                      /* the replay's steps, as sentences, each as long as it is */
	int ndecision;
	size_t cap_decision;
	/* the device's memory */
	int64_t reserved, allocated, live, pending, usable; /* usable: reserved + room, −1 when free unknown */
	int64_t room;                         /* what cudaMalloc could still get: the device's free memory, less under
						 a memory fraction (the message's "allowed" minus what is reserved);
						 −1 unknown */
	int64_t live_needed;                  /* what the live tensors need at least, whatever the settings: their
						 requested sizes in 512-byte steps (LIVE counts their blocks, which a
						 setting can make larger) */
	int64_t private_free;                 /* free blocks inside private pools */
	mp_oom_message computed;              /* what PyTorch's message says for this state (capacity unknown) */
	mp_oom_cause causes[MP_OOM_MAX_CAUSES];
	int ncauses;
	mp_oom_remedy remedies[MP_OOM_MAX_REMEDIES];
	int nremedies;
	/* the replay of the job's requests: the settings remedies' evidence when the model passed its check */
	bool replayed;
	char no_replay[300];  /* why the remedies rest on the state alone */
	mp_oom_setting_cause setting_causes[4];
	int nsetting_causes;
	mp_oom_holder holders[MP_OOM_MAX_HOLDERS];
	int nholders;
	const char *holders_by; /* "owner", "call site", "block" */
	bool training;          /* a training step is underway: gradients, optimizer state or a live autograd graph */
	char holders_note[640]; /* how the activations were told and grouped, and what training rules out; "" */
	mp_oom_frag frags[MP_OOM_MAX_FRAGS];
	int nfrags;
} mp_oom;

/* Explain REQ on SNAP (a snapshot of the same moment: its allocator_settings, segments, block states,
   'owner' keys and frames when present). MP_E_NOTFOUND when SNAP has no segment of REQ's device and REQ
   gives no free memory either; MP_E_NOMEM. The caller frees *OUT with mp_oom_free(). */
mp_err mp_oom_explain(const mp_snapshot *snap, const mp_oom_request *req, mp_oom **out, mp_diag *diag) MP_WUR;

/* Release O (mp_oom_explain's) and what it holds; NULL is fine. */
void mp_oom_free(mp_oom *o);

/* Whether O is an OOM to explain: the allocator would raise (or, for a request asked about, could not serve
   it from what it holds). */
bool mp_oom_is_oom(const mp_oom *o);

enum mp_oom_format { MP_OOM_PLAIN, MP_OOM_RST, MP_OOM_JSON };

/* O as one screen of text (PLAIN, RST) or a JSON object (JSON: the figures, 'causes' ordered by weight,
   'remedies', 'not_helping', 'holders', 'fragmentation'). */
void mp_oom_report(const mp_oom *o, enum mp_oom_format format, enum mp_units units, mp_out *out);

#endif

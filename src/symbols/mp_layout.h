/* mp_layout.h - where the caching allocator keeps each member: offsets of PyTorch's structs,
   from DWARF, from a per-version table shipped with memprof, or from a user's --layout file. */
#ifndef MEMPROF_LAYOUT_H
#define MEMPROF_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

/* Every offset the walker uses: X(ID, "Struct", "member"). "sizeof" as the member means the
   struct's size. Struct names are the C++ class names without namespaces (Block lives in an
   anonymous namespace, DeviceStats in c10::CachingDeviceAllocator, AcceleratorAllocatorConfig
   (2.14: most allocator settings, in libc10) in c10::CachingAllocator, ...). In layout files a
   field is written "Struct.member OFFSET"; optional members (absent in some versions) are
   written "Struct.member -" or left out. Stat (current, peak, allocated, freed at 0/8/16/24),
   StatArray (3 Stats: all, small_pool, large_pool) and the libstdc++/ska containers' own
   headers are fixed and not listed. The slots of the ska tables the walker reads are listed as
   two structs of their own: GraphPoolsEntry, a slot of DeviceCachingAllocator's graph_pools and
   graph_pools_freeable (sherwood_v3_entry<pair<MempoolId_t, unique_ptr<PrivatePool> or
   PrivatePool*>>: "id" the key's first, its second 8 bytes on, "pool" the PrivatePool pointer),
   and ActiveBlocksEntry, one of active_blocks (sherwood_v3_entry<Block*>: "block"); their sizeof
   is the table's stride. */
#define MP_LAYOUT_FIELDS                                                                      \
	X(NCA_DEVICE_ALLOCATOR, "NativeCachingAllocator", "device_allocator")                  \
	X(NCA_CLOCK_CONVERTER, "NativeCachingAllocator", "clock_converter")                    \
	X(NCA_ANNOTATION_BUFFER, "NativeCachingAllocator", "annotation_buffer")                \
	X(DCA_SIZEOF, "DeviceCachingAllocator", "sizeof")                                      \
	X(DCA_STATS, "DeviceCachingAllocator", "stats")                                        \
	X(DCA_DEVICE_ID, "DeviceCachingAllocator", "device_id")                                \
	X(DCA_LARGE_BLOCKS, "DeviceCachingAllocator", "large_blocks")                          \
	X(DCA_SMALL_BLOCKS, "DeviceCachingAllocator", "small_blocks")                          \
	X(DCA_ACTIVE_BLOCKS, "DeviceCachingAllocator", "active_blocks")                        \
	X(DCA_TOTAL_ALLOCATED_MEMORY, "DeviceCachingAllocator", "total_allocated_memory")      \
	X(DCA_EXPANDABLE_SEGMENTS, "DeviceCachingAllocator", "expandable_segments_")           \
	X(DCA_RECORD_HISTORY, "DeviceCachingAllocator", "record_history")                      \
	X(DCA_ALLOC_BUFFER, "DeviceCachingAllocator", "alloc_buffer")                          \
	X(DCA_GRAPH_POOLS, "DeviceCachingAllocator", "graph_pools")                            \
	X(DCA_GRAPH_POOLS_FREEABLE, "DeviceCachingAllocator", "graph_pools_freeable")          \
	X(DS_SIZEOF, "DeviceStats", "sizeof")                                                  \
	X(DS_ALLOCATION, "DeviceStats", "allocation")                                          \
	X(DS_SEGMENT, "DeviceStats", "segment")                                                \
	X(DS_ACTIVE, "DeviceStats", "active")                                                  \
	X(DS_INACTIVE_SPLIT, "DeviceStats", "inactive_split")                                  \
	X(DS_ALLOCATED_BYTES, "DeviceStats", "allocated_bytes")                                \
	X(DS_RESERVED_BYTES, "DeviceStats", "reserved_bytes")                                  \
	X(DS_ACTIVE_BYTES, "DeviceStats", "active_bytes")                                      \
	X(DS_INACTIVE_SPLIT_BYTES, "DeviceStats", "inactive_split_bytes")                      \
	X(DS_REQUESTED_BYTES, "DeviceStats", "requested_bytes")                                \
	X(DS_NUM_ALLOC_RETRIES, "DeviceStats", "num_alloc_retries")                            \
	X(DS_NUM_OOMS, "DeviceStats", "num_ooms")                                              \
	X(DS_OVERSIZE_ALLOCATIONS, "DeviceStats", "oversize_allocations")                      \
	X(DS_OVERSIZE_SEGMENTS, "DeviceStats", "oversize_segments")                            \
	X(DS_NUM_SYNC_ALL_STREAMS, "DeviceStats", "num_sync_all_streams")                      \
	X(DS_NUM_DEVICE_ALLOC, "DeviceStats", "num_device_alloc")                              \
	X(DS_NUM_DEVICE_FREE, "DeviceStats", "num_device_free")                                \
	X(DS_NUM_OOM_REJECTIONS, "DeviceStats", "num_oom_rejections")                          \
	X(DS_MAX_SPLIT_SIZE, "DeviceStats", "max_split_size")                                  \
	X(DS_RESERVED_BYTES_BY_PRIVATE_POOLS, "DeviceStats", "reserved_bytes_by_private_pools") \
	X(BP_SIZEOF, "BlockPool", "sizeof")                                                    \
	X(BP_BLOCKS, "BlockPool", "blocks")                                                    \
	X(BP_UNMAPPED, "BlockPool", "unmapped")                                                \
	X(BP_IS_SMALL, "BlockPool", "is_small")                                                \
	X(BP_OWNER_PRIVATEPOOL, "BlockPool", "owner_PrivatePool")                              \
	X(PP_SIZEOF, "PrivatePool", "sizeof")                                                  \
	X(PP_ID, "PrivatePool", "id")                                                          \
	X(PP_USE_COUNT, "PrivatePool", "use_count")                                            \
	X(PP_LARGE_BLOCKS, "PrivatePool", "large_blocks")                                      \
	X(PP_SMALL_BLOCKS, "PrivatePool", "small_blocks")                                      \
	X(GPE_SIZEOF, "GraphPoolsEntry", "sizeof")                                             \
	X(GPE_ID, "GraphPoolsEntry", "id")                                                     \
	X(GPE_POOL, "GraphPoolsEntry", "pool")                                                 \
	X(ABE_SIZEOF, "ActiveBlocksEntry", "sizeof")                                           \
	X(ABE_BLOCK, "ActiveBlocksEntry", "block")                                             \
	X(BLOCK_SIZEOF, "Block", "sizeof")                                                     \
	X(BLOCK_DEVICE, "Block", "device")                                                     \
	X(BLOCK_STREAM, "Block", "stream")                                                     \
	X(BLOCK_STREAM_USES, "Block", "stream_uses")                                           \
	X(BLOCK_SIZE, "Block", "size")                                                         \
	X(BLOCK_REQUESTED_SIZE, "Block", "requested_size")                                     \
	X(BLOCK_POOL, "Block", "pool")                                                         \
	X(BLOCK_PTR, "Block", "ptr")                                                           \
	X(BLOCK_ALLOCATED, "Block", "allocated")                                               \
	X(BLOCK_MAPPED, "Block", "mapped")                                                     \
	X(BLOCK_PREV, "Block", "prev")                                                         \
	X(BLOCK_NEXT, "Block", "next")                                                         \
	X(BLOCK_EVENT_COUNT, "Block", "event_count")                                           \
	X(BLOCK_CONTEXT_WHEN_ALLOCATED, "Block", "context_when_allocated")                     \
	X(BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED, "Block", "context_when_segment_allocated")     \
	X(BLOCK_EXPANDABLE_SEGMENT, "Block", "expandable_segment_")                            \
	X(BLOCK_HISTORY, "Block", "history")                                                   \
	X(HISTORY_CONTEXT, "History", "context")                                               \
	X(ES_PTR, "ExpandableSegment", "ptr_")                                                 \
	X(ES_SEGMENT_SIZE, "ExpandableSegment", "segment_size_")                               \
	X(ES_MAX_HANDLES, "ExpandableSegment", "max_handles_")                                 \
	X(RB_MAX_ENTRIES, "RingBuffer", "alloc_trace_max_entries_")                            \
	X(RB_NEXT, "RingBuffer", "alloc_trace_next")                                           \
	X(RB_VECTOR, "RingBuffer", "alloc_trace")                                              \
	X(TE_SIZEOF, "TraceEntry", "sizeof")                                                   \
	X(TE_ACTION, "TraceEntry", "action_")                                                  \
	X(TE_DEVICE, "TraceEntry", "device_")                                                  \
	X(TE_ADDR, "TraceEntry", "addr_")                                                      \
	X(TE_CONTEXT, "TraceEntry", "context_")                                                \
	X(TE_STREAM, "TraceEntry", "stream_")                                                  \
	X(TE_SIZE, "TraceEntry", "size_")                                                      \
	X(TE_MEMPOOL, "TraceEntry", "mempool_")                                                \
	X(TE_TIME, "TraceEntry", "time_")                                                      \
	X(TE_COMPILE_CONTEXT, "TraceEntry", "compile_context_")                                \
	X(TE_USER_METADATA, "TraceEntry", "user_metadata_")                                    \
	X(AE_SIZEOF, "AnnotationEntry", "sizeof")                                              \
	X(AE_DEVICE, "AnnotationEntry", "device_")                                             \
	X(AE_TIME, "AnnotationEntry", "time_")                                                 \
	X(AE_METADATA, "AnnotationEntry", "metadata_")                                         \
	X(CFG_SIZEOF, "CUDAAllocatorConfig", "sizeof")                                         \
	X(CFG_MAX_SPLIT_SIZE, "CUDAAllocatorConfig", "m_max_split_size")                       \
	X(CFG_ROUNDUP_POWER2_DIVISIONS, "CUDAAllocatorConfig", "m_roundup_power2_divisions")   \
	X(CFG_GARBAGE_COLLECTION_THRESHOLD, "CUDAAllocatorConfig", "m_garbage_collection_threshold") \
	X(CFG_PINNED_NUM_REGISTER_THREADS, "CUDAAllocatorConfig", "m_pinned_num_register_threads") \
	X(CFG_EXPANDABLE_SEGMENTS, "CUDAAllocatorConfig", "m_expandable_segments")             \
	X(CFG_RELEASE_LOCK_ON_CUDAMALLOC, "CUDAAllocatorConfig", "m_release_lock_on_cudamalloc") \
	X(CFG_PINNED_USE_CUDA_HOST_REGISTER, "CUDAAllocatorConfig", "m_pinned_use_cuda_host_register") \
	X(CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE, "CUDAAllocatorConfig", "m_graph_capture_record_stream_reuse") \
	X(CFG_LAST_ALLOCATOR_SETTINGS, "CUDAAllocatorConfig", "m_last_allocator_settings")     \
	X(AAC_SIZEOF, "AcceleratorAllocatorConfig", "sizeof")                                  \
	X(AAC_MAX_SPLIT_SIZE, "AcceleratorAllocatorConfig", "max_split_size_")                 \
	X(AAC_ROUNDUP_POWER2_DIVISIONS, "AcceleratorAllocatorConfig", "roundup_power2_divisions_") \
	X(AAC_GARBAGE_COLLECTION_THRESHOLD, "AcceleratorAllocatorConfig", "garbage_collection_threshold_") \
	X(AAC_USE_EXPANDABLE_SEGMENTS, "AcceleratorAllocatorConfig", "use_expandable_segments_") \
	X(AAC_PINNED_MAX_ROUND_THRESHOLD, "AcceleratorAllocatorConfig", "pinned_max_round_threshold_") \
	X(AAC_PINNED_MAX_CACHED_SIZE, "AcceleratorAllocatorConfig", "pinned_max_cached_size_") \
	X(AAC_LAST_ALLOCATOR_SETTINGS, "AcceleratorAllocatorConfig", "last_allocator_settings_")

enum mp_layout_field {
#define X(id, s, m) MP_L_##id,
	MP_LAYOUT_FIELDS
#undef X
	MP_L__COUNT
};

#define MP_LAYOUT_ABSENT (-1)

/* What a layout was made for: the keys that change PyTorch's layouts. */
typedef struct mp_layout_key {
	char torch_version[16]; /* "2.6", "2.14"; "" = any */
	int cxx11_abi;          /* 1: std::string is the 32-byte SSO string; 0: the old 8-byte COW string;
				   -1: any (a layout file without "key cxx11_abi", DWARF layouts) */
	int cuda_major;         /* CUDA major the build used where a struct embeds cudaDeviceProp; 0 = any */
} mp_layout_key;

typedef struct mp_layout {
	char name[64];    /* "torch-2.6", "dwarf", "file" ... */
	char source[256]; /* for `memprof info`: "table torch-2.6.layout", "DWARF of /path/libc10_cuda.so", ... */
	mp_layout_key key;
	int32_t off[MP_L__COUNT]; /* byte offset (or size for *_SIZEOF); MP_LAYOUT_ABSENT when the version lacks it */
} mp_layout;

/* "Struct" and "member" of field F (never NULL for F < MP_L__COUNT). */
const char *mp_layout_struct_name(enum mp_layout_field f);
const char *mp_layout_member_name(enum mp_layout_field f);

/* Whether a field is required: every layout must give it (others may be MP_LAYOUT_ABSENT). */
bool mp_layout_field_required(enum mp_layout_field f);

/* Make L an empty layout named NAME from SOURCE: no key (version "", cxx11_abi -1,
   cuda_major 0), every field MP_LAYOUT_ABSENT. This function can't fail. */
void mp_layout_init(mp_layout *l, const char *name, const char *source);

/* Check L: every required field present, every offset in [0, 1<<20), every member offset
   below its struct's size where the struct has a "sizeof" field, and the ska slots' members
   (8-byte words, GraphPoolsEntry.id two) whole inside their slot. MP_E_NOTFOUND naming the
   first missing required field, MP_E_RANGE naming the first bad offset. */
mp_err mp_layout_check(const mp_layout *l, mp_diag *diag) MP_WUR;

/* Parse a layout file's text TEXT (LEN bytes) named NAME. Lines: "# comment", "key version 2.6",
   "key cxx11_abi 1", "key cuda_major 12", "Struct.member OFFSET|-" (OFFSET decimal or 0x hex;
   blanks around words are free). Unknown fields or keys, duplicates, bad numbers, offsets
   outside [0, 1<<20), control characters (binary input), a text without any field (empty) and
   whatever mp_layout_check refuses fail with the line number in DIAG. A file that gives none of
   GraphPoolsEntry's or of ActiveBlocksEntry's fields (written before memprof listed them) gets
   the slots every release 2.0 to 2.14 has, which memprof read then. OUT's name is NAME and its
   source "layout file NAME". */
mp_err mp_layout_parse(const char *name, const char *text, size_t len, mp_layout *out,
		       mp_diag *diag) MP_WUR;

/* Read and parse the layout file PATH (--layout). */
mp_err mp_layout_load_file(const char *path, mp_layout *out, mp_diag *diag) MP_WUR;

/* The layout tables compiled into memprof (from src/symbols/layouts/ *.layout), in file-name
   order (oldest first). Each is named after its file without ".layout" ("torch-2.6") with
   source "table torch-2.6.layout". Thread-safe (parsed once, on the first call). */
size_t mp_layout_builtin_count(void);
const mp_layout *mp_layout_builtin(size_t i);
/* The built-in table named NAME ("torch-2.14-cuda13"), or NULL. */
const mp_layout *mp_layout_builtin_named(const char *name);

/* Read every field from the DWARF of the ELF file PATH (or its separate debug file found by
   build-id under DEBUG_ROOT/.build-id/xx/rest.debug; DEBUG_ROOT NULL = /usr/lib/debug) with
   libdw. MP_E_NOTFOUND when there is no DWARF for the allocator's types; fields the DWARF lacks
   stay MP_LAYOUT_ABSENT, and a missing required field is MP_E_NOTFOUND naming it. */
mp_err mp_layout_from_dwarf(const char *path, const char *debug_root, mp_layout *out,
			    mp_diag *diag) MP_WUR;

/* Write LAYOUT in the layout-file format (what `memprof info --dump-layout` prints). Returns a
   malloc'd NUL-terminated string, or NULL when out of memory. */
char *mp_layout_format(const mp_layout *layout);

#endif

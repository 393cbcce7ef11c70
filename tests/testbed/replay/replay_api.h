// replay_api.h - what replay.cpp needs of c10's allocator API beyond ../scenarios/release_api.h, per release:
// private pools (MemPool spans) by pool id, recordStream of a raw allocation, and the statistics and snapshot
// fields that some releases lack. MEMPROF_TORCH_MINOR is the release's minor (6 for Debian's 2.6 source).
// Ours, written for memprof from the releases' public headers; no PyTorch code is copied here.
#ifndef MEMPROF_REPLAY_API_H
#define MEMPROF_REPLAY_API_H

#include "release_api.h"

#include <c10/core/Allocator.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>

namespace replay_api {

namespace alloc = c10::cuda::CUDACachingAllocator;

// MemPool spans: 2.3 on route by a filter on the stream (beginAllocateToPool), 2.1 and 2.2 by the stream itself
// (beginAllocateStreamToPool / endAllocateStreamToPool, the end naming the stream, not the pool). 2.0 routes only
// streams under graph capture: no MemPool, so replay.cpp refuses the pool ops there.
#if MEMPROF_TORCH_MINOR >= 1
constexpr bool have_pools = true;
#else
constexpr bool have_pools = false;
#endif

inline c10::cuda::MempoolId_t user_pool(uint64_t pid) {
	return {0, static_cast<c10::cuda::CaptureId_t>(pid)};
}

inline void pool_begin(uint64_t pid, cudaStream_t stream) {
#if MEMPROF_TORCH_MINOR >= 3
	alloc::beginAllocateToPool(0, user_pool(pid), [stream](cudaStream_t s) { return s == stream; });
#elif MEMPROF_TORCH_MINOR >= 1
	alloc::beginAllocateStreamToPool(0, stream, user_pool(pid));
#else
	(void)pid, (void)stream;
#endif
}

inline void pool_end(uint64_t pid, cudaStream_t stream) {
#if MEMPROF_TORCH_MINOR >= 3
	(void)stream;
	alloc::endAllocateToPool(0, user_pool(pid));
#elif MEMPROF_TORCH_MINOR >= 1
	(void)pid;
	alloc::endAllocateStreamToPool(0, stream);
#else
	(void)pid, (void)stream;
#endif
}

inline void pool_release(uint64_t pid) {
#if MEMPROF_TORCH_MINOR >= 1
	alloc::releasePool(0, user_pool(pid));
#else
	(void)pid;
#endif
}

// recordStream takes the DataPtr a tensor holds and ignores one whose deleter is not the allocator's own, so a raw
// allocation is wrapped in a DataPtr with that deleter (raw_deleter()), which is then let go of unfreed.
inline void record_stream(void* ptr, c10::cuda::CUDAStream stream) {
	c10::DataPtr dp(ptr, ptr, alloc::get()->raw_deleter(), c10::Device(c10::DeviceType::CUDA, 0));
	alloc::recordStream(dp, stream);
	dp.release_context();
}

MEMPROF_HAS_MEMBER(requested_size)

// "-" where the release does not keep a value (OPS.md: not compared).
template <class S>
int64_t num_device_alloc(const S& st) {
	if constexpr (release_api::has_num_device_alloc<S>::value)
		return st.num_device_alloc;
	else
		return -1;
}
template <class S>
int64_t num_device_free(const S& st) {
	if constexpr (release_api::has_num_device_free<S>::value)
		return st.num_device_free;
	else
		return -1;
}
template <class S>
int64_t requested_bytes(const S& st) {
	if constexpr (release_api::has_requested_bytes<S>::value)
		return st.requested_bytes[0].current;
	else
		return -1;
}
template <class B>
int64_t block_requested(const B& b) {
	if constexpr (has_requested_size<B>::value)
		return static_cast<int64_t>(b.requested_size);
	else
		return -1;
}
template <class Seg>
uint64_t segment_pool(const Seg& seg) {
	if constexpr (release_api::has_owner_private_pool_id<Seg>::value)
		return static_cast<uint64_t>(seg.owner_private_pool_id.second);
	else
		return 0;
}
template <class Seg>
bool segment_expandable(const Seg& seg) {
	if constexpr (release_api::has_is_expandable<Seg>::value)
		return seg.is_expandable;
	else
		return false;
}

} // namespace replay_api

#endif

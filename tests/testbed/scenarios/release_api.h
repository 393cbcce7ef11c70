// release_api.h - the parts of c10's allocator API that changed between PyTorch 2.0 and 2.14, behind one name each,
// so that driver.cpp compiles against the headers of every release (tests/testbed/pypi/c10.sh passes the
// release's minor version as MEMPROF_TORCH_MINOR; Debian's 2.6 source builds pass nothing).
//
// Members that some releases lack (DeviceStats counters, SegmentInfo/BlockInfo/TraceEntry fields, the snapshot's
// config_metadata) are detected with MEMPROF_HAS_MEMBER and written only where they exist, as PyTorch's own
// snapshot() does; what cannot be detected that way (function signatures, enumerators) goes by the version.
// Ours, written for memprof from the releases' public headers; no PyTorch code is copied here.
#ifndef MEMPROF_RELEASE_API_H
#define MEMPROF_RELEASE_API_H

#include <c10/cuda/CUDACachingAllocator.h>
#if __has_include(<c10/cuda/PeerToPeerAccess.h>)
#include <c10/cuda/PeerToPeerAccess.h>
#define MEMPROF_HAVE_P2P_CACHE 1
#endif

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef MEMPROF_TORCH_MINOR
#define MEMPROF_TORCH_MINOR 6
#endif

namespace release_api {

namespace alloc = c10::cuda::CUDACachingAllocator;

// The base of a recorded context: 2.0 calls it CUDACachingAllocator::Context, 2.1 on c10::GatheredContext.
#if MEMPROF_TORCH_MINOR == 0
using GatheredContext = alloc::Context;
#else
using GatheredContext = c10::GatheredContext;
#endif
using ContextPtr = std::shared_ptr<GatheredContext>;

// recordHistory(enabled, recorder, ring entries, record on alloc and free): 2.0 takes a bool for "record contexts
// of trace entries", 2.1 a RecordContext, 2.8 adds clearHistory, 2.11 the actions to skip.
inline void record_history(ContextPtr (*recorder)(), size_t ring_entries) {
#if MEMPROF_TORCH_MINOR == 0
	alloc::recordHistory(true, recorder, ring_entries, true);
#elif MEMPROF_TORCH_MINOR < 8
	alloc::recordHistory(true, recorder, ring_entries, alloc::RecordContext::ALL);
#elif MEMPROF_TORCH_MINOR < 11
	alloc::recordHistory(true, recorder, ring_entries, alloc::RecordContext::ALL, false);
#else
	alloc::recordHistory(true, recorder, ring_entries, alloc::RecordContext::ALL, false, {});
#endif
}

// Routing a stream's allocations to a private pool: 2.1 and 2.2 route by stream, 2.3 on by a filter. 2.0 routes
// only streams that are being captured, by the capture's id (cudaStreamGetCaptureInfo): there the stream captures
// (on the fake device, a capture records nothing) while the pool is in use.
#if MEMPROF_TORCH_MINOR == 0
inline unsigned long long capture_id(cudaStream_t stream) {
	cudaStreamCaptureStatus status;
	unsigned long long id = 0;
	if (cudaStreamGetCaptureInfo(stream, &status, &id) != cudaSuccess || status != cudaStreamCaptureStatusActive)
		throw std::runtime_error("the capture stream is not capturing");
	return id;
}
#endif
inline void begin_pool(c10::cuda::MempoolId_t pool, cudaStream_t stream) {
#if MEMPROF_TORCH_MINOR >= 3
	alloc::beginAllocateToPool(0, pool, [stream](cudaStream_t s) { return s == stream; });
#elif MEMPROF_TORCH_MINOR >= 1
	alloc::beginAllocateStreamToPool(0, stream, pool);
#else
	if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) != cudaSuccess)
		throw std::runtime_error("cudaStreamBeginCapture failed");
	alloc::notifyCaptureBegin(0, capture_id(stream), pool);
#endif
}
inline void end_pool(c10::cuda::MempoolId_t pool, cudaStream_t stream) {
#if MEMPROF_TORCH_MINOR >= 3
	(void)stream;
	alloc::endAllocateToPool(0, pool);
#elif MEMPROF_TORCH_MINOR >= 1
	(void)pool;
	alloc::endAllocateStreamToPool(0, stream);
#else
	(void)pool;
	unsigned long long id = capture_id(stream);
	cudaGraph_t graph;
	alloc::notifyCaptureAboutToEnd(0, id);
	if (cudaStreamEndCapture(stream, &graph) != cudaSuccess)
		throw std::runtime_error("cudaStreamEndCapture failed");
	alloc::notifyCaptureEnded(0, id);
#endif
}

// The snapshot's name of a trace entry's action (SEGMENT_MAP and SEGMENT_UNMAP came with expandable segments, 2.1).
inline const char* action_name(alloc::TraceEntry::Action a) {
	switch (a) {
	case alloc::TraceEntry::ALLOC: return "alloc";
	case alloc::TraceEntry::FREE_REQUESTED: return "free_requested";
	case alloc::TraceEntry::FREE_COMPLETED: return "free_completed";
	case alloc::TraceEntry::SEGMENT_ALLOC: return "segment_alloc";
	case alloc::TraceEntry::SEGMENT_FREE: return "segment_free";
#if MEMPROF_TORCH_MINOR >= 1
	case alloc::TraceEntry::SEGMENT_MAP: return "segment_map";
	case alloc::TraceEntry::SEGMENT_UNMAP: return "segment_unmap";
#endif
	case alloc::TraceEntry::SNAPSHOT: return "snapshot";
	case alloc::TraceEntry::OOM: return "oom";
	default: return "unknown";
	}
}

// From 2.11 on, c10 keeps a peer-access cache that expandable segments consult; ATen's CUDA hooks fill it at
// start-up, so a program of c10 alone must (else: "p2p access cache not initialized").
inline void init_peer_access(int ndev) {
#ifdef MEMPROF_HAVE_P2P_CACHE
	c10::cuda::detail::init_p2p_access_cache(ndev);
#else
	(void)ndev;
#endif
}

// The type getDeviceStats() returns (c10::CachingDeviceAllocator::DeviceStats from 2.5 on, the allocator's own
// DeviceStats before).
using DeviceStats = decltype(alloc::getDeviceStats(0));

} // namespace release_api

// MEMPROF_HAS_MEMBER(NAME) defines has_NAME<T>: whether T has a data member NAME.
#define MEMPROF_HAS_MEMBER(name)                                                                                    \
	template <class T, class = void>                                                                            \
	struct has_##name : std::false_type {};                                                                     \
	template <class T>                                                                                          \
	struct has_##name<T, std::void_t<decltype(std::declval<T&>().name)>> : std::true_type {};

namespace release_api {
MEMPROF_HAS_MEMBER(num_sync_all_streams)
MEMPROF_HAS_MEMBER(num_device_alloc)
MEMPROF_HAS_MEMBER(num_device_free)
MEMPROF_HAS_MEMBER(num_oom_rejections)
MEMPROF_HAS_MEMBER(reserved_bytes_by_private_pools)
MEMPROF_HAS_MEMBER(requested_bytes)
MEMPROF_HAS_MEMBER(time_)
MEMPROF_HAS_MEMBER(config_metadata)
MEMPROF_HAS_MEMBER(is_expandable)
MEMPROF_HAS_MEMBER(owner_private_pool_id)
MEMPROF_HAS_MEMBER(context_when_allocated)
MEMPROF_HAS_MEMBER(history)
MEMPROF_HAS_MEMBER(graph_capture_record_stream_reuse)
MEMPROF_HAS_MEMBER(max_round_threshold)
MEMPROF_HAS_MEMBER(max_cached_size)
} // namespace release_api

#endif

// smoke.cpp - allocate through PyTorch's real CUDA caching allocator (on a fake device) and print its snapshot.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <exception>
#include <vector>

namespace c10::cuda::_internal {
// Defined in c10/cuda/CUDAFunctions.cpp but declared in no header; ATen's CUDAHooks normally registers it.
C10_CUDA_API void setHasPrimaryContext(bool (*func)(DeviceIndex));
} // namespace c10::cuda::_internal

namespace {
bool smoke_has_primary_context(c10::DeviceIndex) {
	return true;
}
} // namespace

int main() {
	namespace alloc = c10::cuda::CUDACachingAllocator;
	try {
		// Which runtime the loader really bound (smoke.sh checks that it is the fake one).
		Dl_info info;
		if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) && info.dli_fname)
			std::printf("cudart %s\n", info.dli_fname);
		c10::cuda::_internal::setHasPrimaryContext(smoke_has_primary_context);
		int ndev = c10::cuda::device_count();
		std::printf("devices %d\n", ndev);
		if (ndev < 1) {
			std::fprintf(stderr, "smoke: no CUDA device visible (is the fake runtime loaded?)\n");
			return 2;
		}
		alloc::init(ndev);

		// A few tensors' worth: small (< 1 MiB, 2 MiB segments) and large ones, some freed again.
		const size_t sizes[] = {512, 4096, 100000, 1 << 20, 3 << 20, 25 << 20, 700};
		std::vector<void*> ptrs;
		for (size_t s : sizes)
			ptrs.push_back(alloc::raw_alloc(s));
		alloc::raw_delete(ptrs[1]);
		alloc::raw_delete(ptrs[4]);

		alloc::SnapshotInfo snap = alloc::snapshot();
		size_t nblocks = 0, nallocated = 0;
		for (const auto& seg : snap.segments) {
			std::printf("segment device=%d address=0x%zx total=%zu allocated=%zu large=%d blocks=%zu\n",
				    (int)seg.device, seg.address, seg.total_size, seg.allocated_size,
				    (int)seg.is_large, seg.blocks.size());
			for (const auto& b : seg.blocks) {
				nblocks++;
				nallocated += b.allocated;
			}
		}
		auto stats = alloc::getDeviceStats(0);
		std::printf("segments %zu blocks %zu allocated_blocks %zu\n", snap.segments.size(), nblocks,
			    nallocated);
		std::printf("stats allocated_bytes %lld reserved_bytes %lld allocation %lld segment %lld\n",
			    (long long)stats.allocated_bytes[0].current, (long long)stats.reserved_bytes[0].current,
			    (long long)stats.allocation[0].current, (long long)stats.segment[0].current);

		for (size_t i = 0; i < ptrs.size(); i++)
			if (i != 1 && i != 4)
				alloc::raw_delete(ptrs[i]);
		alloc::emptyCache();
		std::printf("after emptyCache segments %zu\n", alloc::snapshot().segments.size());
	} catch (const std::exception& e) {
		std::fprintf(stderr, "smoke: exception: %s\n", e.what());
		return 1;
	}
	return 0;
}

// replay.cpp - replays allocator op scripts (tests/allocsim/OPS.md) on PyTorch's real caching allocator (a
// release's libc10_cuda.so on the fake CUDA device of tests/testbed/fakecuda) and prints their logs.
//
//   replay SCRIPT...
//
// One process runs a batch: every SCRIPT must have the header (settings, capacity, fraction) of the first, since
// the allocator reads PYTORCH_CUDA_ALLOC_CONF once and the fake its capacity once; replay sets both from the first
// script before the first CUDA call. Between scripts the allocator is reset (what is left freed, pools ended and
// released, a device sync, emptyCache, peak and accumulated stats reset) and must be back to an empty device:
// no segment, no byte charged, and the same first addresses from cudaMalloc and cuMemAddressReserve as at the
// start. Output, per script:
//
//   ### begin PATH
//   <the script's log, OPS.md>
//   ### end PATH ok|error
//
// An `error ...` line before `### end PATH error` says why a script was refused (a c10::Error other than an
// out-of-memory error, an op the release lacks, an ID the script never allocated); the batch goes on with the next
// script after the reset. A reset that does not leave the device empty prints `### reset-failed ...` and ends the
// process with status 4 (what would follow could not be trusted). A reset that leaves only address space reserved
// by the allocator (an emptied expandable segment it keeps: Replayer::reset) prints `### restart after PATH: ...`
// and ends the process with status 5: the scripts after PATH need a new process.
// Status: 0 all scripts ok, 3 some refused, 4 a reset failed, 5 restart, 2 usage or a bad script header.
//
// Ours, written for memprof; it calls only c10's public API (no PyTorch code is copied here) and compiles against
// the headers of every release from 2.0 to 2.14 (../scenarios/release_api.h, replay_api.h).
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include "release_api.h"
#include "replay_api.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace c10::cuda::_internal {
// Defined in c10/cuda/CUDAFunctions.cpp but declared in no header; ATen's CUDAHooks normally registers it.
C10_CUDA_API void setHasPrimaryContext(bool (*func)(DeviceIndex));
} // namespace c10::cuda::_internal

namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
using c10::cuda::CUDAStream;

constexpr size_t MiB = 1024 * 1024;
constexpr int max_sid = 15;
constexpr uint64_t pool_stride = 1000; // pool PIDs of a script: 1 to 999

// ---------------------------------------------------------------------------------------------------------------
// Scripts.

struct Op {
	int n = 0;
	std::string line; // as in the script, for the log
	std::string kind;
	std::vector<uint64_t> args;
};

struct Script {
	std::string path;
	std::string settings = "-";
	uint64_t capacity = 0;
	std::string fraction; // empty: none
	std::vector<int> sids;
	std::vector<Op> ops;
};

bool parse_u64(const std::string& s, uint64_t& v, int base = 10) {
	if (s.empty() || s[0] == '-' || s[0] == '+')
		return false;
	char* end = nullptr;
	errno = 0;
	v = std::strtoull(s.c_str(), &end, base);
	return errno == 0 && *end == '\0';
}

std::vector<std::string> words(const std::string& line) {
	std::vector<std::string> w;
	std::istringstream in(line);
	for (std::string x; in >> x;)
		w.push_back(x);
	return w;
}

// The number of arguments each op takes (all unsigned integers).
int op_arity(const std::string& kind) {
	static const std::map<std::string, int> arity = {
	    {"alloc", 3},       {"free", 1},     {"record", 2},      {"sync", 0},         {"sync_stream", 1},
	    {"empty_cache", 0}, {"pool_begin", 2}, {"pool_end", 1}, {"pool_release", 1}, {"state", 0},
	};
	auto it = arity.find(kind);
	return it == arity.end() ? -1 : it->second;
}

// Throws std::runtime_error naming the line that is wrong.
Script parse_script(const std::string& path) {
	std::ifstream in(path);
	if (!in)
		throw std::runtime_error(path + ": cannot open");
	Script s;
	s.path = path;
	std::string line;
	int lineno = 0, stage = 0; // 0 settings, 1 capacity, 2 fraction/stream, 3 ops
	auto bad = [&](const std::string& why) { throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + why); };
	while (std::getline(in, line)) {
		lineno++;
		while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
			line.pop_back();
		if (line.empty() || line[0] == '#')
			continue;
		auto w = words(line);
		if (stage == 0) {
			if (w.size() != 2 || w[0] != "settings")
				bad("expected `settings CONF`");
			s.settings = w[1];
			stage = 1;
		} else if (stage == 1) {
			if (w.size() != 2 || w[0] != "capacity" || !parse_u64(w[1], s.capacity) || !s.capacity ||
			    s.capacity % (2 * MiB))
				bad("expected `capacity BYTES`, a multiple of 2 MiB");
			stage = 2;
		} else if (stage == 2 && w[0] == "fraction") {
			char* end = nullptr;
			double f = w.size() == 2 ? std::strtod(w[1].c_str(), &end) : 0;
			if (w.size() != 2 || *end || !(f > 0 && f <= 1) || !s.fraction.empty() || !s.sids.empty())
				bad("expected one `fraction F` (0 < F <= 1) before the streams");
			s.fraction = w[1];
		} else if (stage == 2 && w[0] == "stream") {
			uint64_t sid = 0, handle = 0;
			if (w.size() < 2 || w.size() > 3 || !parse_u64(w[1], sid) || sid < 1 || sid > max_sid ||
			    (w.size() == 3 && !parse_u64(w[2].rfind("0x", 0) == 0 ? w[2].substr(2) : w[2], handle, 16)))
				bad("expected `stream SID [HANDLE]`, SID 1 to 15");
			if (std::find(s.sids.begin(), s.sids.end(), static_cast<int>(sid)) != s.sids.end())
				bad("stream " + w[1] + " twice");
			s.sids.push_back(static_cast<int>(sid));
		} else {
			stage = 3;
			Op op;
			op.n = static_cast<int>(s.ops.size()) + 1;
			op.line = line;
			op.kind = w[0];
			int arity = op_arity(op.kind);
			if (arity < 0)
				bad("unknown op `" + op.kind + "`");
			if (static_cast<int>(w.size()) != arity + 1)
				bad("`" + op.kind + "` takes " + std::to_string(arity) + " arguments");
			for (size_t i = 1; i < w.size(); i++) {
				uint64_t v;
				if (!parse_u64(w[i], v))
					bad("not a number: " + w[i]);
				op.args.push_back(v);
			}
			s.ops.push_back(op);
		}
	}
	if (stage < 2)
		bad("no settings/capacity header");
	std::sort(s.sids.begin(), s.sids.end());
	return s;
}

// ---------------------------------------------------------------------------------------------------------------
// The device's address ranges: the first cudaMalloc and the first cuMemAddressReserve of an empty fake device
// (first fit, 2 MiB aligned) give the bases that OPS.md's m+/r+ addresses are relative to.

struct Bases {
	uintptr_t m = 0, r = 0;
	bool operator==(const Bases& o) const {
		return m == o.m && r == o.r;
	}
};

using ReserveFn = CUresult (*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
using AddressFreeFn = CUresult (*)(CUdeviceptr, size_t);

// The driver library the fake runtime loaded (as c10's DriverAPI finds it: already loaded, by soname).
void* driver_symbol(const char* name) {
	static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void* sym = lib ? dlsym(lib, name) : nullptr;
	if (!sym)
		throw std::runtime_error(std::string("no ") + name + " in the loaded libcuda.so.1");
	return sym;
}

// Whether the driver's address space is free from its base up to 16 times the capacity: where the allocator's
// reservations of a script lie (about 9/8 of the capacity each), first fit. A 2 MiB probe would still land on the
// base in front of a reservation left further up.
bool reserve_range_free(uintptr_t base, uint64_t capacity) {
	auto reserve = reinterpret_cast<ReserveFn>(driver_symbol("cuMemAddressReserve"));
	auto address_free = reinterpret_cast<AddressFreeFn>(driver_symbol("cuMemAddressFree"));
	CUdeviceptr r = 0;
	size_t size = 16 * capacity;
	if (reserve(&r, size, 0, 0, 0) != CUDA_SUCCESS)
		return false;
	if (address_free(r, size) != CUDA_SUCCESS)
		throw std::runtime_error("cuMemAddressFree of the probe failed");
	return static_cast<uintptr_t>(r) == base;
}

Bases learn_bases() {
	Bases b;
	void* p = nullptr;
	if (cudaMalloc(&p, 2 * MiB) != cudaSuccess || cudaFree(p) != cudaSuccess)
		throw std::runtime_error("cudaMalloc/cudaFree of 2 MiB failed");
	b.m = reinterpret_cast<uintptr_t>(p);
	auto reserve = reinterpret_cast<ReserveFn>(driver_symbol("cuMemAddressReserve"));
	auto address_free = reinterpret_cast<AddressFreeFn>(driver_symbol("cuMemAddressFree"));
	CUdeviceptr r = 0;
	if (reserve(&r, 2 * MiB, 0, 0, 0) != CUDA_SUCCESS || address_free(r, 2 * MiB) != CUDA_SUCCESS)
		throw std::runtime_error("cuMemAddressReserve/cuMemAddressFree of 2 MiB failed");
	b.r = static_cast<uintptr_t>(r);
	return b;
}

// ---------------------------------------------------------------------------------------------------------------
// Output (stdout, fully buffered; flushed after each script).

void out(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void out(const char* fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	std::vfprintf(stdout, fmt, ap);
	va_end(ap);
}

// ---------------------------------------------------------------------------------------------------------------
// The replayer: one per process.

struct Refused : std::runtime_error {
	using std::runtime_error::runtime_error;
};

class Replayer {
      public:
	Replayer(const Bases& bases, uint64_t capacity) : bases_(bases), capacity_(capacity) {
		// Side streams from c10's pool, taken once for the whole batch so that every script sees the same
		// handles. SID k takes the pool's stream (13 k mod 32): SID order is then not the handles' order, which
		// the allocator's free lists (ordered by stream handle) would otherwise always see the same way.
		std::vector<CUDAStream> pool;
		for (int i = 0; i < 32; i++)
			pool.push_back(c10::cuda::getStreamFromPool(false, 0));
		streams_.push_back(c10::cuda::getDefaultCUDAStream(0));
		for (int sid = 1; sid <= max_sid; sid++) {
			CUDAStream s = pool[(13 * sid) % 32];
			for (const auto& t : streams_)
				if (t.stream() == s.stream())
					throw std::runtime_error("the stream pool gave one stream twice");
			streams_.push_back(s);
		}
	}

	// Runs one script; false if it was refused (the `error` line is printed).
	bool run(const Script& s) {
		sids_ = s.sids;
		out("streams");
		for (int sid : s.sids)
			out(" %d=0x%" PRIxPTR, sid, reinterpret_cast<uintptr_t>(streams_[sid].stream()));
		out("\n");
		int last = 0;
		bool state_printed = false;
		for (const Op& op : s.ops) {
			try {
				std::string result = apply(op);
				auto st = alloc::getDeviceStats(0);
				out("%d %s => %s reserved=%" PRId64 " allocated=%" PRId64 "\n", op.n, op.line.c_str(),
				    result.c_str(), static_cast<int64_t>(st.reserved_bytes[0].current),
				    static_cast<int64_t>(st.allocated_bytes[0].current));
				state_printed = op.kind == "state" || result == "oom";
				if (state_printed)
					print_state(op.n);
			} catch (const Refused& e) {
				out("error %d %s: %s\n", op.n, op.line.c_str(), e.what());
				return false;
			} catch (const c10::Error& e) {
				out("error %d %s: c10::Error: %s\n", op.n, op.line.c_str(), first_line(e.what_without_backtrace()).c_str());
				return false;
			}
			last = op.n;
		}
		// One state block after the last op (not a second one when that op printed its own).
		if (!state_printed)
			print_state(last);
		return true;
	}

	// Back to an empty allocator and device; the problem found, or "". *retained is set when the only problem
	// is address space that the allocator still reserves with nothing mapped in it: an expandable segment whose
	// pages were all unmapped by something other than emptyCache (the out-of-memory path's partial release,
	// garbage collection) is never released by emptyCache and is reused later (2.6, 2.14). The device is empty
	// then, but not as a fresh process's: the next script needs a new process.
	std::string reset(bool* retained) {
		*retained = false;
		try {
			for (const auto& span : open_spans_)
				replay_api::pool_end(pool_base_ + span.first, streams_[span.second].stream());
			open_spans_.clear();
			for (const auto& a : live_)
				alloc::raw_delete(a.second);
			live_.clear();
			failed_.clear();
			for (auto& uses : pool_uses_)
				for (; uses.second > 0; uses.second--)
					replay_api::pool_release(pool_base_ + uses.first);
			pool_uses_.clear();
			pool_base_ += pool_stride;
			if (cudaDeviceSynchronize() != cudaSuccess)
				return "cudaDeviceSynchronize failed";
			alloc::emptyCache();
			alloc::resetPeakStats(0);
			alloc::resetAccumulatedStats(0);
		} catch (const std::exception& e) {
			return std::string("the reset threw: ") + first_line(e.what());
		}
		auto st = alloc::getDeviceStats(0);
		if (st.allocated_bytes[0].current || st.reserved_bytes[0].current || st.active_bytes[0].current ||
		    st.segment[0].current || st.allocation[0].current || st.active[0].current ||
		    st.inactive_split[0].current || st.inactive_split_bytes[0].current || replay_api::requested_bytes(st) > 0)
			return "statistics not back to 0 (reserved " + std::to_string(st.reserved_bytes[0].current) +
			       ", allocated " + std::to_string(st.allocated_bytes[0].current) + ")";
		if (!alloc::snapshot().segments.empty())
			return "snapshot() still lists " + std::to_string(alloc::snapshot().segments.size()) + " segments";
		size_t free_bytes = 0, total = 0;
		if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess || free_bytes != total)
			return "the device still has " + std::to_string(total - free_bytes) + " bytes charged";
		Bases now = learn_bases();
		if (now.m != bases_.m)
			return "the address space of cudaMalloc is not empty";
		if (now.r != bases_.r || !reserve_range_free(bases_.r, capacity_)) {
			*retained = true;
			return "the allocator still reserves driver address space (an emptied expandable segment)";
		}
		return "";
	}

      private:
	static std::string first_line(const std::string& s) {
		return s.substr(0, s.find('\n'));
	}

	CUDAStream stream_of(uint64_t sid) {
		if (sid != 0 && std::find(sids_.begin(), sids_.end(), static_cast<int>(sid)) == sids_.end())
			throw Refused("stream " + std::to_string(sid) + " is not declared");
		return streams_[sid];
	}

	void* live(uint64_t id) {
		auto it = live_.find(id);
		if (it != live_.end())
			return it->second;
		if (failed_.count(id))
			throw Refused("allocation " + std::to_string(id) + " ran out of memory (OPS.md: never freed or used)");
		throw Refused("no live allocation " + std::to_string(id));
	}

	void need_pools() {
		if (!replay_api::have_pools)
			throw Refused("this release has no MemPool API (2.0 routes to private pools only under graph capture)");
	}

	std::string apply(const Op& op) {
		const auto& a = op.args;
		if (op.kind == "alloc") {
			if (live_.count(a[0]) || failed_.count(a[0]))
				throw Refused("allocation " + std::to_string(a[0]) + " again");
			cudaStream_t stream = stream_of(a[2]).stream();
			try {
				void* p = alloc::raw_alloc_with_stream(a[1], stream);
				if (!p)
					throw Refused("raw_alloc_with_stream gave nullptr");
				live_[a[0]] = p;
				return address(reinterpret_cast<uintptr_t>(p));
			} catch (const c10::OutOfMemoryError&) {
				failed_.insert(a[0]);
				return "oom";
			}
		}
		if (op.kind == "free") {
			void* p = live(a[0]);
			live_.erase(a[0]);
			alloc::raw_delete(p);
		} else if (op.kind == "record") {
			replay_api::record_stream(live(a[0]), stream_of(a[1]));
		} else if (op.kind == "sync") {
			if (cudaDeviceSynchronize() != cudaSuccess)
				throw Refused("cudaDeviceSynchronize failed");
		} else if (op.kind == "sync_stream") {
			if (cudaStreamSynchronize(stream_of(a[0]).stream()) != cudaSuccess)
				throw Refused("cudaStreamSynchronize failed");
		} else if (op.kind == "empty_cache") {
			alloc::emptyCache();
		} else if (op.kind == "pool_begin") {
			need_pools();
			if (a[0] == 0 || a[0] >= pool_stride || open_spans_.count(a[0]))
				throw Refused("pool " + std::to_string(a[0]) + " is 0, above 999 or already open");
			cudaStream_t stream = stream_of(a[1]).stream();
			replay_api::pool_begin(pool_base_ + a[0], stream);
			open_spans_[a[0]] = static_cast<int>(a[1]);
			pool_uses_[a[0]]++;
		} else if (op.kind == "pool_end") {
			need_pools();
			auto it = open_spans_.find(a[0]);
			if (it == open_spans_.end())
				throw Refused("pool " + std::to_string(a[0]) + " is not open");
			replay_api::pool_end(pool_base_ + a[0], streams_[it->second].stream());
			open_spans_.erase(it);
		} else if (op.kind == "pool_release") {
			need_pools();
			if (pool_uses_[a[0]] <= 0)
				throw Refused("pool " + std::to_string(a[0]) + " has no use left to release");
			replay_api::pool_release(pool_base_ + a[0]);
			pool_uses_[a[0]]--;
		} else if (op.kind != "state") {
			throw Refused("unknown op");
		}
		return "ok";
	}

	// OPS.md's address: relative to the base of the range it lies in (the nearest base at or below it).
	std::string address(uintptr_t p) const {
		char buf[64];
		bool in_m = p >= bases_.m, in_r = p >= bases_.r;
		if (in_m && (!in_r || bases_.m >= bases_.r))
			std::snprintf(buf, sizeof buf, "m+0x%" PRIxPTR, p - bases_.m);
		else if (in_r)
			std::snprintf(buf, sizeof buf, "r+0x%" PRIxPTR, p - bases_.r);
		else
			std::snprintf(buf, sizeof buf, "?0x%" PRIxPTR, p);
		return buf;
	}

	std::string sid_of(const void* handle) const {
		for (int sid = 0; sid <= max_sid; sid++)
			if (streams_[sid].stream() == handle)
				return std::to_string(sid);
		char buf[40];
		std::snprintf(buf, sizeof buf, "?%p", handle);
		return buf;
	}

	// The script's PID of an allocator pool id (0: the default pools). An earlier script's pool, which the
	// reset should have emptied, would show as 1000000000 + its id.
	uint64_t script_pool(uint64_t id) const {
		if (id == 0)
			return 0;
		return id > pool_base_ ? id - pool_base_ : 1000000000 + id;
	}

	static std::string value(int64_t v) {
		return v < 0 ? "-" : std::to_string(v);
	}

	void print_state(int n) {
		auto st = alloc::getDeviceStats(0);
		out("state %d\n", n);
		out("stats allocated=%" PRId64 " reserved=%" PRId64 " active=%" PRId64 " requested=%s inactive_split=%" PRId64
		    " inactive_split_bytes=%" PRId64 " segment=%" PRId64 " peak_allocated=%" PRId64 " peak_reserved=%" PRId64
		    " num_alloc_retries=%" PRId64 " num_ooms=%" PRId64 " num_device_alloc=%s num_device_free=%s"
		    " oversize_allocations=%" PRId64 " oversize_segments=%" PRId64 "\n",
		    static_cast<int64_t>(st.allocated_bytes[0].current), static_cast<int64_t>(st.reserved_bytes[0].current),
		    static_cast<int64_t>(st.active_bytes[0].current), value(replay_api::requested_bytes(st)).c_str(),
		    static_cast<int64_t>(st.inactive_split[0].current),
		    static_cast<int64_t>(st.inactive_split_bytes[0].current), static_cast<int64_t>(st.segment[0].current),
		    static_cast<int64_t>(st.allocated_bytes[0].peak), static_cast<int64_t>(st.reserved_bytes[0].peak),
		    static_cast<int64_t>(st.num_alloc_retries), static_cast<int64_t>(st.num_ooms),
		    value(replay_api::num_device_alloc(st)).c_str(), value(replay_api::num_device_free(st)).c_str(),
		    static_cast<int64_t>(st.oversize_allocations.current),
		    static_cast<int64_t>(st.oversize_segments.current));
		alloc::SnapshotInfo snap = alloc::snapshot();
		auto segments = snap.segments;
		std::stable_sort(segments.begin(), segments.end(),
				 [](const auto& x, const auto& y) { return x.address < y.address; });
		for (const auto& seg : segments) {
			out("segment %s %zu %s %s %" PRIu64 " %s\n", address(seg.address).c_str(),
			    static_cast<size_t>(seg.total_size), sid_of(seg.stream).c_str(), seg.is_large ? "large" : "small",
			    script_pool(replay_api::segment_pool(seg)), replay_api::segment_expandable(seg) ? "expandable" : "fixed");
			uintptr_t addr = seg.address;
			for (const auto& b : seg.blocks) {
				const char* state = b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive";
				int64_t requested = b.active ? replay_api::block_requested(b) : 0;
				out("block %s %zu %s %s\n", address(addr).c_str(), static_cast<size_t>(b.size),
				    value(requested).c_str(), state);
				addr += b.size;
			}
		}
		out("end\n");
	}

	Bases bases_;
	uint64_t capacity_;
	std::vector<CUDAStream> streams_; // by SID; 0 the default stream
	std::vector<int> sids_;           // the current script's side streams
	std::map<uint64_t, void*> live_;
	std::map<uint64_t, int> open_spans_; // pool id -> SID of its open span
	std::map<uint64_t, int> pool_uses_;  // pool id -> begins not yet released
	std::set<uint64_t> failed_;        // allocations that ran out of memory
	// Each script's pool PID is (0, pool_base_ + PID) to the allocator, a fresh id per script: a released pool
	// can outlive the reset (2.6 and 2.14 keep a PrivatePool whose expandable segments were mapped and unmapped
	// in different pieces: its cudaMalloc_count never returns to 0), and beginning it again would trip an
	// internal assertion. Ids keep their order, which is all the allocator compares them by.
	uint64_t pool_base_ = 0;
};

[[maybe_unused]] bool has_primary_context(c10::DeviceIndex) {
	return true;
}

// The environment the fake and the allocator read once: from the batch's header, before the first CUDA call.
void set_environment(const Script& s) {
	if (s.settings == "-")
		unsetenv("PYTORCH_CUDA_ALLOC_CONF");
	else
		setenv("PYTORCH_CUDA_ALLOC_CONF", s.settings.c_str(), 1);
	setenv("FAKECUDA_CAPACITY", std::to_string(s.capacity).c_str(), 1);
	setenv("FAKECUDA_DEVICES", "1", 1);
}

} // namespace

int main(int argc, char** argv) {
	if (argc < 2 || argv[1][0] == '-') {
		std::fprintf(stderr, "usage: replay SCRIPT... (op scripts of tests/allocsim/OPS.md with one header)\n");
		return 2;
	}
	static char buf[1 << 20];
	std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
	std::vector<Script> scripts;
	try {
		for (int i = 1; i < argc; i++)
			scripts.push_back(parse_script(argv[i]));
	} catch (const std::exception& e) {
		std::fprintf(stderr, "replay: %s\n", e.what());
		return 2;
	}
	const Script& first = scripts.front();
	for (const Script& s : scripts)
		if (s.settings != first.settings || s.capacity != first.capacity || s.fraction != first.fraction) {
			std::fprintf(stderr, "replay: %s: its header differs from %s's (one batch, one header)\n",
				     s.path.c_str(), first.path.c_str());
			return 2;
		}

	int status = 0;
	try {
		set_environment(first);
#if MEMPROF_TORCH_MINOR >= 1 // 2.0's c10 has no such hook (and asks nobody)
		c10::cuda::_internal::setHasPrimaryContext(has_primary_context);
#endif
		int ndev = c10::cuda::device_count();
		if (ndev != 1) {
			std::fprintf(stderr, "replay: %d CUDA devices visible, not 1 (is the fake runtime loaded?)\n", ndev);
			return 2;
		}
		release_api::init_peer_access(ndev);
		alloc::init(ndev);
		Bases bases = learn_bases(); // before the allocator's first use
		if (!first.fraction.empty())
			alloc::setMemoryFraction(std::strtod(first.fraction.c_str(), nullptr), 0);
		out("### batch settings=%s capacity=%" PRIu64 " fraction=%s\n", first.settings.c_str(), first.capacity,
		    first.fraction.empty() ? "-" : first.fraction.c_str());
		Replayer r(bases, first.capacity);
		for (const Script& s : scripts) {
			out("### begin %s\n", s.path.c_str());
			bool ok = r.run(s);
			out("### end %s %s\n", s.path.c_str(), ok ? "ok" : "error");
			if (!ok)
				status = 3;
			bool retained = false;
			std::string problem = r.reset(&retained);
			if (retained && &s != &scripts.back()) {
				out("### restart after %s: %s\n", s.path.c_str(), problem.c_str());
				std::fflush(stdout);
				return 5;
			}
			if (!problem.empty() && !retained) {
				out("### reset-failed after %s: %s\n", s.path.c_str(), problem.c_str());
				std::fflush(stdout);
				std::fprintf(stderr, "replay: RESET FAILED after %s: %s\n", s.path.c_str(), problem.c_str());
				return 4;
			}
			std::fflush(stdout);
		}
	} catch (const std::exception& e) {
		std::fflush(stdout);
		std::fprintf(stderr, "replay: %s\n", e.what());
		return 1;
	}
	std::fflush(stdout);
	return status;
}

// driver.cpp - memprof test bed scenario driver.
//
// Puts PyTorch's real CUDA caching allocator (c10, on the fake CUDA runtime of tests/testbed/fakecuda) into a
// named state that users meet, writes the allocator's own view of it (snapshot() + getDeviceStats()) as memprof
// JSON ("ground truth"), then stops the way the caller asked:
//
//   driver SCENARIO MODE [--truth PATH]
//   MODE: truth       write the truth and exit 0
//         checkpoint  write the truth, call memprof_checkpoint() (a gdb breakpoint), exit 0
//         checkpoint2 as checkpoint, then known work (second_step()), a second truth PATH.2, memprof_checkpoint()
//                     again, exit 0 (the gdb tests compare snapshots taken at the two stops)
//         sleep       write the truth, print "ready", sleep until killed (gcore / attach)
//         abort       write the truth, abort() (kernel core; needs `ulimit -c unlimited`)
//
// Scenarios: training fragmented pending_free oom multi_device private_pool expandable history huge.
// preset_env() sets each scenario's FAKECUDA_* / PYTORCH_CUDA_ALLOC_CONF defaults with setenv(..., 0) before the
// first CUDA call, so the environment can override them.
//
// Ours, written for memprof; no PyTorch code is copied here (it only calls c10's public API). It compiles against
// the headers of every release from 2.0 to 2.14 (release_api.h hides what changed).
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include "release_api.h"

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <type_traits>
#include <utility>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace c10::cuda::_internal {
// Defined in c10/cuda/CUDAFunctions.cpp but declared in no header; ATen's CUDAHooks normally registers it.
C10_CUDA_API void setHasPrimaryContext(bool (*func)(DeviceIndex));
} // namespace c10::cuda::_internal

// The well-known stop for gdb: `break memprof_checkpoint`. Exported, never inlined, does nothing.
extern "C" __attribute__((visibility("default"), noinline, used)) void memprof_checkpoint(void) {
	asm volatile("" ::: "memory");
}

namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
using c10::cuda::CUDAStream;

// ---------------------------------------------------------------------------------------------------------------
// Context recorder: a GatheredContext of our own holding one "frame" per call path. Each call path sets the
// thread-local site before allocating; the allocator calls record_context() on alloc (and on free with ALL).

struct Frame {
	std::string name;
	std::string filename;
	int line;
};

struct DriverContext : release_api::GatheredContext {
	std::vector<Frame> frames; // innermost first
};

thread_local std::vector<Frame> current_site;

release_api::ContextPtr record_context() {
	auto ctx = std::make_shared<DriverContext>();
	ctx->frames.assign(current_site.rbegin(), current_site.rend());
	ctx->frames.push_back({"main", __FILE__, 0});
	return ctx;
}

// RAII: pushes a frame named after a call path for everything allocated in its scope.
struct Site {
	Site(const char* name, int line) {
		current_site.push_back({name, __FILE__, line});
	}
	~Site() {
		current_site.pop_back();
	}
};
#define SITE(name) Site site_##__LINE__(name, __LINE__)

// ---------------------------------------------------------------------------------------------------------------
// A tiny JSON writer (compact; strings escaped; numbers as integers).

class Json {
      public:
	explicit Json(FILE* f) : f_(f) {}
	void begin_object() {
		value_prefix();
		std::fputc('{', f_);
		first_.push_back(true);
	}
	void end_object() {
		flush_nl();
		first_.pop_back();
		std::fputc('}', f_);
	}
	void begin_array() {
		value_prefix();
		std::fputc('[', f_);
		first_.push_back(true);
	}
	void end_array() {
		flush_nl();
		first_.pop_back();
		std::fputc(']', f_);
	}
	// A key inside an object; the next value call writes its value.
	void key(const std::string& k) {
		comma();
		string_raw(k);
		std::fputs(": ", f_);
		after_key_ = true;
	}
	void str(const std::string& s) {
		value_prefix();
		string_raw(s);
	}
	void i64(int64_t v) {
		value_prefix();
		std::fprintf(f_, "%" PRId64, v);
	}
	void u64(uint64_t v) {
		value_prefix();
		// memprof's JSON: ints beyond +-2^53 are tagged (cJSON keeps doubles).
		if (v > (uint64_t(1) << 53))
			std::fprintf(f_, "{\"__int__\": \"%" PRIu64 "\"}", v);
		else
			std::fprintf(f_, "%" PRIu64, v);
	}
	void boolean(bool b) {
		value_prefix();
		std::fputs(b ? "true" : "false", f_);
	}
	void f64(double d) {
		value_prefix();
		char buf[64];
		std::snprintf(buf, sizeof buf, "%.17g", d);
		if (!std::strpbrk(buf, ".eEn"))
			std::strcat(buf, ".0");
		std::fputs(buf, f_);
	}
	void null() {
		value_prefix();
		std::fputs("null", f_);
	}
	// A line break before the next item (after its comma): one item per line in top-level lists.
	void newline() {
		pending_nl_ = true;
	}

      private:
	void flush_nl() {
		if (pending_nl_)
			std::fputc('\n', f_);
		pending_nl_ = false;
	}
	void comma() {
		if (!first_.empty()) {
			if (!first_.back())
				std::fputs(pending_nl_ ? "," : ", ", f_);
			first_.back() = false;
		}
		if (pending_nl_)
			std::fputc('\n', f_);
		pending_nl_ = false;
	}
	void value_prefix() {
		if (after_key_)
			after_key_ = false;
		else
			comma();
	}
	void string_raw(const std::string& s) {
		std::fputc('"', f_);
		for (unsigned char c : s) {
			switch (c) {
			case '"': std::fputs("\\\"", f_); break;
			case '\\': std::fputs("\\\\", f_); break;
			case '\n': std::fputs("\\n", f_); break;
			case '\r': std::fputs("\\r", f_); break;
			case '\t': std::fputs("\\t", f_); break;
			default:
				if (c < 0x20)
					std::fprintf(f_, "\\u%04x", c);
				else
					std::fputc(c, f_); // UTF-8 passes through
			}
		}
		std::fputc('"', f_);
	}
	FILE* f_;
	std::vector<bool> first_;
	bool after_key_ = false;
	bool pending_nl_ = false;
};

// ---------------------------------------------------------------------------------------------------------------
// Ground truth.

struct Extra {
	std::string scenario;
	std::string oom_message;
	bool has_oom = false;
	uint64_t oom_request_bytes = 0;
	std::map<std::string, int64_t> notes; // scenario facts the sanity checker uses
};

void write_frames(Json& j, const release_api::ContextPtr& ctx) {
	j.begin_array();
	if (auto* dc = dynamic_cast<DriverContext*>(ctx.get())) {
		for (const Frame& fr : dc->frames) {
			j.begin_object();
			j.key("name");
			j.str(fr.name);
			j.key("filename");
			j.str(fr.filename);
			j.key("line");
			j.i64(fr.line);
			j.end_object();
		}
	}
	j.end_array();
}

template <class StatArray>
void write_statarray(std::map<std::string, int64_t>& out, const std::string& name, const StatArray& a) {
	static const char* const types[] = {"all", "small_pool", "large_pool"};
	for (size_t i = 0; i < 3; i++) {
		const auto& s = a[i];
		std::string p = name + "." + types[i] + ".";
		out[p + "current"] = s.current;
		out[p + "peak"] = s.peak;
		out[p + "allocated"] = s.allocated;
		out[p + "freed"] = s.freed;
	}
}

template <class Stat>
void write_stat(std::map<std::string, int64_t>& out, const std::string& name, const Stat& s) {
	out[name + ".current"] = s.current;
	out[name + ".peak"] = s.peak;
	out[name + ".allocated"] = s.allocated;
	out[name + ".freed"] = s.freed;
}

// The counters a release's DeviceStats has (requested_bytes in every 2.x; num_sync_all_streams, num_device_alloc
// and num_device_free from 2.3; num_oom_rejections from 2.12; reserved_bytes_by_private_pools from 2.13; the
// mutant-2.14-stats variants are 2.6 code with 2.14's DeviceStats). A template, so that the branch a DeviceStats
// lacks is never compiled.
template <class S>
void write_optional_counters(std::map<std::string, int64_t>& m, const S& st) {
	if constexpr (release_api::has_requested_bytes<S>::value)
		write_statarray(m, "requested_bytes", st.requested_bytes);
	if constexpr (release_api::has_num_sync_all_streams<S>::value)
		m["num_sync_all_streams"] = st.num_sync_all_streams;
	if constexpr (release_api::has_num_device_alloc<S>::value)
		m["num_device_alloc"] = st.num_device_alloc;
	if constexpr (release_api::has_num_device_free<S>::value)
		m["num_device_free"] = st.num_device_free;
	if constexpr (release_api::has_num_oom_rejections<S>::value)
		m["num_oom_rejections"] = st.num_oom_rejections;
	// 2.14: each private pool's reserved bytes, as memory_stats() flattens them ("...by_private_pools.1_0.all.peak").
	if constexpr (release_api::has_reserved_bytes_by_private_pools<S>::value)
		for (const auto& pool : st.reserved_bytes_by_private_pools)
			write_statarray(m,
					"reserved_bytes_by_private_pools." + std::to_string(pool.first.first) + "_" +
					    std::to_string(pool.first.second),
					pool.second);
}

// torch.cuda.memory_stats(device): flattened with '.', keys in byte order (std::map<std::string> sorts so).
std::map<std::string, int64_t> flat_stats(c10::DeviceIndex dev) {
	auto st = alloc::getDeviceStats(dev);
	std::map<std::string, int64_t> m;
	write_statarray(m, "allocation", st.allocation);
	write_statarray(m, "segment", st.segment);
	write_statarray(m, "active", st.active);
	write_statarray(m, "inactive_split", st.inactive_split);
	write_statarray(m, "allocated_bytes", st.allocated_bytes);
	write_statarray(m, "reserved_bytes", st.reserved_bytes);
	write_statarray(m, "active_bytes", st.active_bytes);
	write_statarray(m, "inactive_split_bytes", st.inactive_split_bytes);
	m["num_alloc_retries"] = st.num_alloc_retries;
	m["num_ooms"] = st.num_ooms;
	write_stat(m, "oversize_allocations", st.oversize_allocations);
	write_stat(m, "oversize_segments", st.oversize_segments);
	write_optional_counters(m, st);
	m["max_split_size"] = st.max_split_size;
	return m;
}

// Snapshot fields some releases lack (release_api.h): templates, so that a field's code is compiled only where the
// release has it, and written only then, as the release's own snapshot dict has it or not.
template <class Seg>
void write_segment_fields(Json& j, const Seg& seg) {
	if constexpr (release_api::has_owner_private_pool_id<Seg>::value) {
		j.key("segment_pool_id");
		j.begin_array();
		j.i64(static_cast<int64_t>(seg.owner_private_pool_id.first));
		j.i64(static_cast<int64_t>(seg.owner_private_pool_id.second));
		j.end_array();
	}
	if constexpr (release_api::has_is_expandable<Seg>::value) {
		j.key("is_expandable");
		j.boolean(seg.is_expandable);
	}
}

// The context a segment or block was allocated with (2.0 keeps a block's in its history list, the newest first,
// which is what PyTorch's _memory_viz.py reads of a 2.0 snapshot; its segments keep none).
template <class Seg>
release_api::ContextPtr segment_context(const Seg& seg) {
	if constexpr (release_api::has_context_when_allocated<Seg>::value)
		return seg.context_when_allocated;
	else
		return nullptr;
}
template <class B>
release_api::ContextPtr block_context(const B& b) {
	if constexpr (release_api::has_context_when_allocated<B>::value)
		return b.context_when_allocated;
	else if constexpr (release_api::has_history<B>::value)
		return b.history.empty() ? nullptr : b.history.front().context;
	else
		return nullptr;
}

// A trace entry's time (2.2 on: snapshot() has converted it to microseconds).
template <class TE>
void write_time(Json& j, const TE& te) {
	if constexpr (release_api::has_time_<TE>::value) {
		j.key("time_us");
		j.i64(static_cast<int64_t>(te.time_.t_));
	}
}

// Settings that later releases' config_metadata added (graph_capture_record_stream_reuse; the pinned memory
// limits max_round_threshold and max_cached_size), in the order PyTorch's snapshot dict has them.
template <class MD>
void write_newer_settings(Json& j, const MD& md) {
	if constexpr (release_api::has_graph_capture_record_stream_reuse<MD>::value) {
		j.key("graph_capture_record_stream_reuse");
		j.boolean(md.graph_capture_record_stream_reuse);
	}
	if constexpr (release_api::has_max_round_threshold<MD>::value) {
		j.key("max_round_threshold");
		j.i64(static_cast<int64_t>(md.max_round_threshold));
	}
	if constexpr (release_api::has_max_cached_size<MD>::value) {
		j.key("max_cached_size");
		j.i64(static_cast<int64_t>(md.max_cached_size));
	}
}

// The allocator's settings (snapshot()'s config_metadata, 2.3 on).
template <class Snap>
void write_settings(Json& j, const Snap& snap) {
	if constexpr (release_api::has_config_metadata<Snap>::value) {
		const auto& md = snap.config_metadata;
		j.newline();
		j.key("allocator_settings");
		j.begin_object();
		j.key("PYTORCH_CUDA_ALLOC_CONF");
		j.str(md.last_allocator_settings);
		j.key("max_split_size");
		j.i64(static_cast<int64_t>(md.max_split_size));
		j.key("garbage_collection_threshold");
		j.f64(md.garbage_collection_threshold);
		j.key("expandable_segments");
		j.boolean(md.expandable_segments);
		j.key("pinned_num_register_threads");
		j.i64(static_cast<int64_t>(md.pinned_num_register_threads));
		j.key("release_lock_on_cudamalloc");
		j.boolean(md.release_lock_on_malloc);
		j.key("pinned_use_cuda_host_register");
		j.boolean(md.pinned_use_host_register);
		write_newer_settings(j, md);
		j.key("roundup_power2_divisions");
		j.begin_object();
		for (size_t i = 0; i < md.roundup_power2_divisions.size(); i++) {
			j.key(std::to_string(uint64_t(1) << i));
			j.i64(static_cast<int64_t>(md.roundup_power2_divisions[i]));
		}
		j.end_object();
		j.end_object();
	}
}

void write_truth(const std::string& path, const Extra& extra) {
	int ndev = c10::cuda::device_count();
	// Stats first: snapshot() adds a SNAPSHOT trace entry but changes no statistic.
	std::vector<std::map<std::string, int64_t>> stats;
	for (int d = 0; d < ndev; d++)
		stats.push_back(flat_stats(static_cast<c10::DeviceIndex>(d)));
	alloc::SnapshotInfo snap = alloc::snapshot();

	std::string tmp = path + ".tmp";
	FILE* f = std::fopen(tmp.c_str(), "w");
	if (!f) {
		std::perror(tmp.c_str());
		std::exit(2);
	}
	Json j(f);
	j.begin_object();

	j.newline();
	j.key("segments");
	j.begin_array();
	for (const auto& seg : snap.segments) {
		j.newline();
		j.begin_object();
		j.key("device");
		j.i64(seg.device);
		j.key("address");
		j.u64(seg.address);
		j.key("total_size");
		j.u64(seg.total_size);
		j.key("allocated_size");
		j.u64(seg.allocated_size);
		j.key("active_size");
		j.u64(seg.active_size);
		j.key("requested_size");
		j.u64(seg.requested_size);
		j.key("stream");
		j.i64(reinterpret_cast<int64_t>(seg.stream));
		j.key("segment_type");
		j.str(seg.is_large ? "large" : "small");
		write_segment_fields(j, seg);
		// PyTorch's order: an empty frames list comes before blocks, a non-empty one after.
		bool seg_frames = static_cast<bool>(segment_context(seg));
		if (!seg_frames) {
			j.key("frames");
			j.begin_array();
			j.end_array();
		}
		j.key("blocks");
		j.begin_array();
		size_t addr = seg.address;
		for (const auto& b : seg.blocks) {
			j.begin_object();
			j.key("address");
			j.u64(addr);
			j.key("size");
			j.u64(b.size);
			j.key("requested_size");
			j.u64(b.requested_size);
			j.key("state");
			j.str(b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive");
			j.key("frames");
			write_frames(j, block_context(b));
			j.end_object();
			addr += b.size;
		}
		j.end_array();
		if (seg_frames) {
			j.key("frames");
			write_frames(j, segment_context(seg));
		}
		j.end_object();
	}
	j.end_array();

	j.newline();
	j.key("device_traces");
	j.begin_array();
	for (const auto& trace : snap.device_traces) {
		j.newline();
		j.begin_array();
		for (const auto& te : trace) {
			j.newline();
			j.begin_object();
			j.key("action");
			j.str(release_api::action_name(te.action_));
			j.key(te.action_ == alloc::TraceEntry::OOM ? "device_free" : "addr");
			j.u64(te.addr_);
			j.key("size");
			j.u64(te.size_);
			j.key("stream");
			j.i64(reinterpret_cast<int64_t>(te.stream_));
			write_time(j, te);
#if MEMPROF_TORCH_MINOR >= 14
			j.key("pool_id"); // 2.14's _snapshot() names each entry's pool
			j.begin_array();
			j.u64(te.mempool_.first);
			j.u64(te.mempool_.second);
			j.end_array();
#endif
			if (te.context_) {
				j.key("frames");
				write_frames(j, te.context_);
			}
			j.end_object();
		}
		j.end_array();
	}
	j.end_array();

	write_settings(j, snap);
#if MEMPROF_TORCH_MINOR >= 5 // the annotation ring came in 2.5 (this driver records none)
	j.newline();
	j.key("external_annotations");
	j.begin_array();
	j.end_array();
#endif
#if MEMPROF_TORCH_MINOR >= 14 // the pinned host allocator's state (this driver pins no memory)
	j.newline();
	j.key("host_segments");
	j.begin_array();
	j.end_array();
	j.newline();
	j.key("host_traces");
	j.begin_array();
	j.end_array();
#endif

	// memprof test bed additions (unknown keys to PyTorch's tools; memprof keeps them).
	j.newline();
	j.key("time_is_tsc");
	j.boolean(false); // snapshot() already converted the trace's TSC stamps to microseconds
	j.newline();
	j.key("scenario");
	j.str(extra.scenario);
	j.newline();
	j.key("device_stats");
	j.begin_array();
	for (const auto& m : stats) {
		j.newline();
		j.begin_object();
		for (const auto& kv : m) {
			j.key(kv.first);
			j.i64(kv.second);
		}
		j.end_object();
	}
	j.end_array();
	if (extra.has_oom) {
		j.newline();
		j.key("oom_message");
		j.str(extra.oom_message);
		j.newline();
		j.key("oom_request_bytes");
		j.u64(extra.oom_request_bytes);
	}
	j.newline();
	j.key("scenario_notes");
	j.begin_object();
	for (const auto& kv : extra.notes) {
		j.key(kv.first);
		j.i64(kv.second);
	}
	j.end_object();
	j.newline();
	j.end_object();
	std::fputc('\n', f);
	if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
		std::perror(path.c_str());
		std::exit(2);
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers.

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

[[maybe_unused]] bool has_primary_context(c10::DeviceIndex) { // 2.0 asks nobody (main)
	return true;
}

void* alloc_on(size_t n, cudaStream_t s) {
	return alloc::raw_alloc_with_stream(n, s);
}

cudaStream_t default_stream(c10::DeviceIndex dev = 0) {
	return c10::cuda::getDefaultCUDAStream(dev).stream();
}

// Fills a block's bytes (the fake device memory is host memory) so cores show it was used.
void touch(void* p, size_t n, unsigned char v) {
	std::memset(p, v, n);
}

// An allocation through the Allocator interface (a DataPtr, as tensors hold): on the current stream.
c10::DataPtr data_alloc(size_t n) {
	return alloc::get()->allocate(n);
}

// ---------------------------------------------------------------------------------------------------------------
// Scenarios. Each returns with the allocator in the state to record; live pointers are deliberately kept.

std::vector<void*> keep; // allocations alive at the end (never freed: the state must stay)
// Leaked on purpose: no DataPtr destructor may free a block at exit.
std::vector<c10::DataPtr>& keep_dp = *new std::vector<c10::DataPtr>;

// training: a small model's parameters, gradients, optimizer states and activations, each from its own call
// path and with its own sizes, for two steps; activations and temporaries are freed, so the cache holds holes.
struct Layer {
	size_t weight, bias;
	void *w = nullptr, *b = nullptr, *gw = nullptr, *gb = nullptr;
	void *m_w = nullptr, *v_w = nullptr, *m_b = nullptr, *v_b = nullptr;
};

__attribute__((noinline)) void init_parameters(std::vector<Layer>& layers, cudaStream_t s) {
	SITE("init_parameters");
	for (auto& l : layers) {
		l.w = alloc_on(l.weight, s);
		l.b = alloc_on(l.bias, s);
		touch(l.w, 64, 0x11);
	}
}

__attribute__((noinline)) std::vector<void*> forward(std::vector<Layer>& layers, size_t batch, cudaStream_t s) {
	SITE("forward");
	std::vector<void*> acts;
	size_t act = batch * 3000;
	for (size_t i = 0; i < layers.size(); i++) {
		acts.push_back(alloc_on(act, s));
		void* tmp = alloc_on(act / 3 + 100, s); // a temporary (e.g. a matmul workspace)
		alloc::raw_delete(tmp);
		act = act * 3 / 4 + 512;
	}
	return acts;
}

__attribute__((noinline)) void backward(std::vector<Layer>& layers, std::vector<void*>& acts, cudaStream_t s) {
	SITE("backward");
	for (size_t i = layers.size(); i-- > 0;) {
		if (!layers[i].gw) {
			layers[i].gw = alloc_on(layers[i].weight, s);
			layers[i].gb = alloc_on(layers[i].bias, s);
		}
		alloc::raw_delete(acts[i]);
	}
	acts.clear();
}

__attribute__((noinline)) void optimizer_step(std::vector<Layer>& layers, cudaStream_t s) {
	SITE("optimizer_step");
	for (auto& l : layers) {
		if (!l.m_w) {
			l.m_w = alloc_on(l.weight, s);
			l.v_w = alloc_on(l.weight, s);
			l.m_b = alloc_on(l.bias, s);
			l.v_b = alloc_on(l.bias, s);
		}
		void* scratch = alloc_on(l.weight / 2 + 4 * KiB, s);
		alloc::raw_delete(scratch);
	}
}

void scenario_training(Extra& ex) {
	release_api::record_history(record_context, 4096);
	cudaStream_t s = default_stream();
	std::vector<Layer> layers = {
	    {25 * MiB + 4 * KiB, 64 * KiB}, // embedding
	    {9 * MiB, 12 * KiB},
	    {3 * MiB + 512, 3 * KiB},
	    {600 * KiB, 1200},
	    {40 * KiB, 160}, // head
	};
	init_parameters(layers, s);
	for (int step = 0; step < 2; step++) {
		auto acts = forward(layers, 256 + 64 * step, s);
		backward(layers, acts, s);
		optimizer_step(layers, s);
	}
	// One step's worth of activations held at the end (a model mid-forward), on a side stream for one.
	auto acts = forward(layers, 128, s);
	for (void* a : acts)
		keep.push_back(a);
	CUDAStream side = c10::cuda::getStreamFromPool(false, 0);
	{
		SITE("data_loader");
		keep.push_back(alloc_on(3 * MiB, side.stream()));
		keep.push_back(alloc_on(6 * KiB, side.stream()));
	}
	ex.notes["layers"] = static_cast<int64_t>(layers.size());
}

// fragmented: 2 MiB tensors fill 20 MiB large segments; every other one is freed (holes that cannot be released
// while their neighbours live), then a request larger than any hole and than the free capacity fails.
void scenario_fragmented(Extra& ex) {
	cudaStream_t s = default_stream();
	std::vector<void*> ptrs;
	for (int i = 0; i < 110; i++)
		ptrs.push_back(alloc_on(2 * MiB, s));
	for (int i = 0; i < 400; i++) // small ones too: 2 MiB small segments with holes
		ptrs.push_back(alloc_on(4 * KiB + 512 * (i % 7), s));
	size_t freed = 0;
	for (size_t i = 0; i < ptrs.size(); i += 2) {
		alloc::raw_delete(ptrs[i]);
		ptrs[i] = nullptr;
		freed++;
	}
	for (void* p : ptrs)
		if (p)
			keep.push_back(p);
	const size_t big = 64 * MiB;
	try {
		keep.push_back(alloc_on(big, s));
		std::fprintf(stderr, "driver: fragmented: the %zu-byte request did not fail\n", big);
		std::exit(3);
	} catch (const c10::OutOfMemoryError& e) {
		ex.has_oom = true;
		ex.oom_message = e.what_without_backtrace();
		ex.oom_request_bytes = big;
	}
	ex.notes["holes"] = static_cast<int64_t>(freed);
}

// pending_free: tensors used on a second stream (recordStream) and freed before that stream synchronises: the
// fake events stay not-ready, so their blocks are active_pending_free.
void scenario_pending_free(Extra& ex) {
	CUDAStream side = c10::cuda::getStreamFromPool(false, 0);
	std::vector<c10::DataPtr> used;
	for (size_t n : {5 * MiB, 300 * KiB, 2 * MiB + 1000, 700UL}) {
		c10::DataPtr dp = data_alloc(n);
		alloc::recordStream(dp, side);
		used.push_back(std::move(dp));
	}
	for (int i = 0; i < 3; i++)
		keep_dp.push_back(data_alloc(1 * MiB + 4096 * i)); // plainly allocated neighbours
	used.clear(); // frees: each block waits for an event on `side`
	// And one freed with no other stream use: inactive.
	void* p = alloc_on(8 * KiB, default_stream());
	alloc::raw_delete(p);
	ex.notes["pending_free_blocks"] = 4;
}

// oom: a real OutOfMemoryError from the fake capacity, after the cache held some freed segments (so the retry
// path frees them first: num_alloc_retries 1).
void scenario_oom(Extra& ex) {
	cudaStream_t s = default_stream();
	keep.push_back(alloc_on(30 * MiB, s));
	keep.push_back(alloc_on(12 * MiB, s));
	keep.push_back(alloc_on(100 * KiB, s));
	void* cached = alloc_on(24 * MiB, s);
	alloc::raw_delete(cached); // a whole cached segment, released by the retry
	const size_t big = 100 * MiB;
	try {
		keep.push_back(alloc_on(big, s));
		std::fprintf(stderr, "driver: oom: the %zu-byte request did not fail\n", big);
		std::exit(3);
	} catch (const c10::OutOfMemoryError& e) {
		ex.has_oom = true;
		ex.oom_message = e.what_without_backtrace();
		ex.oom_request_bytes = big;
	}
}

// multi_device: two fake devices with different contents (and a side stream on device 1).
void scenario_multi_device(Extra& ex) {
	for (c10::DeviceIndex d = 0; d < 2; d++) {
		c10::cuda::CUDAGuard guard(d);
		cudaStream_t s = default_stream(d);
		keep.push_back(alloc_on(3 * MiB * (d + 1), s));
		keep.push_back(alloc_on(1000 + 24 * d, s));
		void* p = alloc_on(700 * KiB, s);
		alloc::raw_delete(p);
		if (d == 1) {
			CUDAStream side = c10::cuda::getStreamFromPool(false, 1);
			keep.push_back(alloc_on(12 * MiB, side.stream()));
		}
	}
	ex.notes["devices"] = 2;
}

// private_pool: allocations made while a pool is being "captured" (as CUDA graphs do, pool id (1, 0)) and into
// a MemPool-style pool (0, 1), next to ordinary ones.
void scenario_private_pool(Extra& ex) {
	cudaStream_t s = default_stream();
	keep.push_back(alloc_on(4 * MiB, s));
	CUDAStream cap = c10::cuda::getStreamFromPool(false, 0);
	cudaStream_t cs = cap.stream();
	c10::cuda::MempoolId_t graph_pool{1, 0}, user_pool{0, 1};
	release_api::begin_pool(graph_pool, cs);
	keep.push_back(alloc_on(6 * MiB, cs));
	keep.push_back(alloc_on(64 * KiB, cs));
	void* t = alloc_on(1 * MiB + 5, cs);
	alloc::raw_delete(t);
	keep.push_back(alloc_on(2 * MiB, s)); // not the capture stream: the ordinary pool
	release_api::end_pool(graph_pool, cs);

	release_api::begin_pool(user_pool, cs);
	keep.push_back(alloc_on(3 * MiB, cs));
	keep.push_back(alloc_on(512, cs));
	release_api::end_pool(user_pool, cs);
	ex.notes["private_pools"] = 2;
}

// expandable: expandable_segments:True; segments grow by mapping pages (cuMemMap on the fake driver).
void scenario_expandable(Extra& ex) {
	cudaStream_t s = default_stream();
	std::vector<void*> ptrs;
	for (size_t n : {30 * MiB, 5 * MiB, 22 * MiB + 7, 100 * KiB, 3000UL, 45 * MiB})
		ptrs.push_back(alloc_on(n, s));
	alloc::raw_delete(ptrs[1]);
	alloc::raw_delete(ptrs[4]);
	ptrs[1] = ptrs[4] = nullptr;
	for (void* p : ptrs)
		if (p)
			keep.push_back(p);
	CUDAStream side = c10::cuda::getStreamFromPool(false, 0);
	keep.push_back(alloc_on(8 * MiB, side.stream()));
	ex.notes["expandable"] = 1;
}

// history: recordHistory with our own context recorder and a small ring (wrapped many times).
__attribute__((noinline)) void history_churn(int rounds, cudaStream_t s) {
	SITE("history_churn");
	for (int i = 0; i < rounds; i++) {
		void* p = alloc_on(4 * KiB * (1 + i % 5), s);
		alloc::raw_delete(p);
	}
}

void scenario_history(Extra& ex) {
	const size_t ring = 64;
	release_api::record_history(record_context, ring);
	cudaStream_t s = default_stream();
	{
		SITE("history_setup");
		keep.push_back(alloc_on(3 * MiB, s));
		keep.push_back(alloc_on(10 * KiB, s));
	}
	history_churn(200, s); // 200 x (alloc + free_requested + free_completed) >> 64
	{
		SITE("history_tail");
		keep.push_back(alloc_on(6 * MiB + 3, s));
	}
	ex.notes["ring_entries"] = static_cast<int64_t>(ring);
}

// huge: >= 100,000 blocks (512-byte allocations in 2 MiB small segments, every third freed).
// MEMPROF_HUGE_ALLOCATIONS changes the count (benchmarks use 1,000,000; FAKECUDA_CAPACITY must hold n * 512 B).
void scenario_huge(Extra& ex) {
	cudaStream_t s = default_stream();
	const char* env = std::getenv("MEMPROF_HUGE_ALLOCATIONS");
	const size_t n = env != nullptr && std::strtoull(env, nullptr, 10) > 0 ? std::strtoull(env, nullptr, 10) : 120000;
	std::vector<void*> ptrs(n);
	for (size_t i = 0; i < n; i++)
		ptrs[i] = alloc_on(512, s);
	for (size_t i = 0; i < n; i += 3) {
		alloc::raw_delete(ptrs[i]);
		ptrs[i] = nullptr;
	}
	ex.notes["allocations"] = static_cast<int64_t>(n);
	// The live ones stay allocated (not tracked in `keep`: the allocator's state is what matters).
}

// checkpoint2's work between the two stops: the cache emptied (unused segments released), a 3 MiB and a 4 KiB
// allocation kept, a 5 MiB one freed again. Whatever fails (a full fake device) is only reported: the second truth
// says what happened.
void second_step() {
	cudaStream_t s = default_stream();
	try {
		alloc::emptyCache();
		SITE("second_step");
		keep.push_back(alloc_on(3 * MiB, s));
		keep.push_back(alloc_on(4 * KiB, s));
		alloc::raw_delete(alloc_on(5 * MiB, s));
	} catch (const std::exception& e) {
		std::fprintf(stderr, "driver: checkpoint2: %s\n", e.what());
	}
}

struct ScenarioDef {
	const char* name;
	void (*run)(Extra&);
};

const ScenarioDef scenarios[] = {
    {"training", scenario_training},
    {"fragmented", scenario_fragmented},
    {"pending_free", scenario_pending_free},
    {"oom", scenario_oom},
    {"multi_device", scenario_multi_device},
    {"private_pool", scenario_private_pool},
    {"expandable", scenario_expandable},
    {"history", scenario_history},
    {"huge", scenario_huge},
};

// Env defaults a scenario needs before CUDA starts (the fake reads its configuration at the first CUDA call, the
// allocator its PYTORCH_CUDA_ALLOC_CONF at init). Set with overwrite 0: the environment wins.
void preset_env(const std::string& name) {
	if (name == "expandable" && MEMPROF_TORCH_MINOR == 0) {
		std::fprintf(stderr, "driver: expandable: this release has no expandable segments (they came in 2.1)\n");
		std::exit(77);
	}
	if (name == "fragmented")
		setenv("FAKECUDA_CAPACITY", "256M", 0);
	else if (name == "oom")
		setenv("FAKECUDA_CAPACITY", "128M", 0);
	else if (name == "multi_device")
		setenv("FAKECUDA_DEVICES", "2", 0);
	else if (name == "expandable")
		setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 0);
	else if (name == "huge")
		setenv("FAKECUDA_CAPACITY", "1G", 0);
}

[[noreturn]] void usage() {
	std::fprintf(stderr, "usage: driver SCENARIO truth|checkpoint|checkpoint2|sleep|abort [--truth PATH]\nscenarios:");
	for (const auto& s : scenarios)
		std::fprintf(stderr, " %s", s.name);
	std::fprintf(stderr, "\n");
	std::exit(2);
}

} // namespace

int main(int argc, char** argv) {
	if (argc < 3)
		usage();
	std::string name = argv[1], mode = argv[2], truth;
	for (int i = 3; i < argc; i++) {
		if (std::strcmp(argv[i], "--truth") == 0 && i + 1 < argc)
			truth = argv[++i];
		else
			usage();
	}
	if (mode != "truth" && mode != "checkpoint" && mode != "checkpoint2" && mode != "sleep" && mode != "abort")
		usage();
	const ScenarioDef* def = nullptr;
	for (const auto& s : scenarios)
		if (name == s.name)
			def = &s;
	if (!def)
		usage();
	if (truth.empty())
		truth = name + ".truth.json";

	Extra ex;
	ex.scenario = name;
	try {
		preset_env(name);
#if MEMPROF_TORCH_MINOR >= 1 // 2.0's c10 has no such hook (and asks nobody)
		c10::cuda::_internal::setHasPrimaryContext(has_primary_context);
#endif
		int ndev = c10::cuda::device_count();
		if (ndev < 1) {
			std::fprintf(stderr, "driver: no CUDA device visible (is the fake runtime loaded?)\n");
			return 2;
		}
		release_api::init_peer_access(ndev);
		alloc::init(ndev);
		def->run(ex);
		write_truth(truth, ex);
	} catch (const std::exception& e) {
		std::fprintf(stderr, "driver: %s: exception: %s\n", name.c_str(), e.what());
		return 1;
	}

	if (mode == "checkpoint" || mode == "checkpoint2") {
		memprof_checkpoint();
		if (mode == "checkpoint2") {
			second_step();
			write_truth(truth + ".2", ex);
			memprof_checkpoint();
		}
	} else if (mode == "sleep") {
		std::printf("ready\n");
		std::fflush(stdout);
		for (;;)
			pause();
	} else if (mode == "abort") {
		std::fflush(nullptr);
		std::abort();
	}
	return 0;
}

/* test_oom.c - the OOM explanation on hand-made allocator states: PyTorch's messages read, the size rules,
   the replayed decision, each cause first where it dominates, and the remedies claimed or refused; the holders
   the owners' keys make (activations by module, a model, an optimizer, a list) and the remedies about them. */
#include <string.h>

#include "mp_frame_filter.h"
#include "mp_oom.h"
#include "mp_snapshot_extras.h"
#include "snapshot_builder.h"
#include "unit_main.h"

#define MIB ((int64_t)1 << 20)

static const char msg_2_14[] =
	"CUDA out of memory. Tried to allocate 922.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which "
	"888.00 MiB is free. Of the allocated memory 90.28 MiB is allocated by PyTorch, and 45.72 MiB is reserved by "
	"PyTorch but unallocated. If reserved but unallocated memory is large try setting "
	"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";

static void test_messages(void)
{
	mp_oom_message m;

	CU_ASSERT_TRUE(mp_oom_message_parse(msg_2_14, &m));
	CU_ASSERT_EQUAL(m.device, 0);
	CU_ASSERT_EQUAL(m.tried, 922 * MIB);
	CU_ASSERT_EQUAL(m.capacity, 1024 * MIB);
	CU_ASSERT_EQUAL(m.free, 888 * MIB);
	CU_ASSERT_EQUAL(m.allocated, (int64_t)(90.28 * MIB + 0.5));
	CU_ASSERT_EQUAL(m.reserved_unallocated, (int64_t)(45.72 * MIB + 0.5));
	CU_ASSERT_EQUAL(m.private_pools, -1);
	CU_ASSERT_TRUE(mp_oom_message_parse(
		"CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 1.00 GiB total capacity; 900.00 MiB already "
		"allocated; 10.00 MiB free; 950.00 MiB reserved in total by PyTorch) If reserved memory is >> allocated",
		&m));
	CU_ASSERT_EQUAL(m.device, 1);
	CU_ASSERT_EQUAL(m.tried, 20 * MIB);
	CU_ASSERT_EQUAL(m.capacity, 1024 * MIB);
	CU_ASSERT_EQUAL(m.allocated, 900 * MIB);
	CU_ASSERT_EQUAL(m.free, 10 * MIB);
	CU_ASSERT_EQUAL(m.reserved_unallocated, 50 * MIB);
	CU_ASSERT_TRUE(mp_oom_message_parse(
		"CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which "
		"424.00 MiB is free. Of the allocated memory 600.00 MiB is allocated by PyTorch, with 600.00 MiB "
		"allocated in private pools (e.g., CUDA Graphs), and 0 bytes is reserved by PyTorch but unallocated.",
		&m));
	CU_ASSERT_EQUAL(m.private_pools, 600 * MIB);
	CU_ASSERT_EQUAL(m.reserved_unallocated, 0);
	/* 2.6 with NVML's process list and a memory fraction */
	CU_ASSERT_TRUE(mp_oom_message_parse(
		"CUDA out of memory. Tried to allocate 2.00 MiB. GPU 3 has a total capacity of 79.19 GiB of which 1.50 "
		"MiB is free. Process 4242 has 79.18 GiB memory in use. Including non-PyTorch memory, this process has "
		"79.18 GiB memory in use. 40.00 GiB allowed; Of the allocated memory 39.50 GiB is allocated by PyTorch, and "
		"312.00 KiB is reserved by PyTorch but unallocated.", &m));
	CU_ASSERT_EQUAL(m.device, 3);
	CU_ASSERT_EQUAL(m.tried, 2 * MIB);
	CU_ASSERT_EQUAL(m.free, (int64_t)(1.5 * MIB));
	CU_ASSERT_EQUAL(m.in_use, (int64_t)(79.18 * 1024 * MIB + 0.5));
	CU_ASSERT_EQUAL(m.allowed, 40 * 1024 * MIB);
	CU_ASSERT_EQUAL(m.allocated, (int64_t)(39.5 * 1024 * MIB));
	CU_ASSERT_EQUAL(m.reserved_unallocated, 312 * 1024);
	CU_ASSERT_FALSE(mp_oom_message_parse("RuntimeError: shape mismatch", &m));
	CU_ASSERT_FALSE(mp_oom_message_parse("out of memory", &m));
	CU_ASSERT_FALSE(mp_oom_message_parse(NULL, &m));
}

/* One segment at ADDR on STREAM of the given block sizes, negative for free blocks. */
static void segment(mp_snapshot *s, int64_t addr, int64_t stream, bool small, const int64_t *sizes, size_t n)
{
	int64_t total = 0, at = addr;
	mp_segment *seg;

	for (size_t i = 0; i < n; i++)
		total += sizes[i] < 0 ? -sizes[i] : sizes[i];
	seg = sb_segment(s, 0, addr, total, stream);
	seg->segment_type = small ? mp_heap_keys(s->heap)->small : mp_heap_keys(s->heap)->large;
	seg->present |= MP_F_SEG_SEGMENT_TYPE;
	for (size_t i = 0; i < n; i++) {
		int64_t size = sizes[i] < 0 ? -sizes[i] : sizes[i];
		mp_block *b = sb_block(s, size, size, sizes[i] < 0 ? "inactive" : "active_allocated", MP_ABSENT);

		b->address = at;
		at += size;
	}
}

static mp_oom *explain(mp_snapshot *s, int64_t size, int64_t stream, int64_t device_free)
{
	mp_oom_request r = { .source = MP_OOM_FROM_TRACE, .device = 0, .stream = stream, .size = size,
			     .device_free = device_free, .trace_index = -1 };
	mp_oom *o = NULL;
	mp_diag d = { 0 };

	CU_ASSERT_EQUAL_FATAL(mp_oom_explain(s, &r, &o, &d), MP_OK);
	return o;
}

static const mp_oom_remedy *remedy(const mp_oom *o, enum mp_oom_remedy_id id)
{
	for (int i = 0; i < o->nremedies; i++)
		if (o->remedies[i].id == id)
			return &o->remedies[i];
	return NULL;
}

static void test_fragmentation(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t sizes[] = { 4 * MIB, -4 * MIB, 4 * MIB, -4 * MIB, 4 * MIB };
	mp_oom *o;

	sb_device(s);
	segment(s, 0x7f0000000000, 0, false, sizes, 5);
	o = explain(s, 8 * MIB, 0, 2 * MIB);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_TRUE(mp_oom_is_oom(o));
	CU_ASSERT_EQUAL(o->rounded, 8 * MIB);
	CU_ASSERT_EQUAL(o->alloc_size, 20 * MIB);
	CU_ASSERT_EQUAL(o->largest_free, 4 * MIB);
	CU_ASSERT_EQUAL_FATAL(o->ncauses, 1);
	CU_ASSERT_EQUAL(o->causes[0].id, MP_OOM_FRAGMENTATION);
	CU_ASSERT_EQUAL(o->causes[0].bytes, 8 * MIB);
	CU_ASSERT_EQUAL(o->computed.reserved_unallocated, 8 * MIB);
	CU_ASSERT_EQUAL(o->frags[0].nfree, 2);
	CU_ASSERT_DOUBLE_EQUAL(o->frags[0].fragmentation, 0.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(o->frags[0].sq_ratio, 0.5, 1e-9);
	/* no trace to replay: expandable segments are judged neither way from the state alone (whether they help
	   depends on the layout the job's history makes with them) */
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_EXPANDABLE));
	/* freeing any one block leaves a free run of 8 MiB or more: a cached block fits */
	CU_ASSERT_EQUAL(strcmp(o->holders_by, "block"), 0);
	int freeing = 0;

	for (int i = 0; i < o->nremedies; i++)
		freeing += o->remedies[i].id == MP_OOM_R_FREE && o->remedies[i].works &&
			   (strstr(o->remedies[i].action, "0x7f0000000000") || strstr(o->remedies[i].action, "0x7f0000800000") ||
			    strstr(o->remedies[i].action, "0x7f0001000000"));
	CU_ASSERT_EQUAL(freeing, 3);
	mp_oom_free(o);
	/* 9 MiB with 1 MiB free: fragmentation; with no message, whether a memory fraction is set (the garbage
	   collector's condition) is not known: nothing is said of it */
	o = explain(s, 9 * MIB, 0, 1 * MIB);
	CU_ASSERT_EQUAL(o->causes[0].id, MP_OOM_FRAGMENTATION);
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_EXPANDABLE));
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_GC_THRESHOLD));
	mp_oom_free(o);
	/* the same request with room on the device: cudaMalloc serves it */
	o = explain(s, 8 * MIB, 0, 40 * MIB);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_CUDAMALLOC);
	CU_ASSERT_FALSE(mp_oom_is_oom(o));
	mp_oom_free(o);
	/* a request a free block fits */
	o = explain(s, 3 * MIB, 0, 0);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_CACHED);
	CU_ASSERT_EQUAL(o->best_fit_addr, 0x7f0000400000);
	mp_oom_free(o);
	mp_snapshot_free(s);
}

static void test_other_stream_and_pool(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t side[] = { 4 * MIB, -96 * MIB }, mine[] = { 20 * MIB }, small[] = { 1 * MIB, -1 * MIB };
	mp_oom *o;

	sb_device(s);
	segment(s, 0x7f0000000000, 7, false, side, 2);
	segment(s, 0x7f0010000000, 0, false, mine, 1);
	segment(s, 0x7f0020000000, 0, true, small, 2);
	o = explain(s, 50 * MIB, 0, 10 * MIB);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_EQUAL_FATAL(o->ncauses, 2);
	CU_ASSERT_EQUAL(o->causes[0].id, MP_OOM_OTHER_STREAM);
	CU_ASSERT_EQUAL(o->causes[0].bytes, 96 * MIB);
	CU_ASSERT_PTR_NOT_NULL(strstr(o->causes[0].evidence, "stream 7"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o->causes[0].evidence, "would fit"));
	CU_ASSERT_EQUAL(o->causes[1].id, MP_OOM_OTHER_POOL);
	CU_ASSERT_EQUAL(o->causes[1].bytes, 1 * MIB);
	/* without a trace to replay, no setting is claimed to help: a state read cannot say what the
	 * allocator would have done with the setting from the start (the campaign measured such guesses) */
	CU_ASSERT_TRUE(remedy(o, MP_OOM_R_MAX_SPLIT) == NULL || !remedy(o, MP_OOM_R_MAX_SPLIT)->works);
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_EXPANDABLE));
	mp_oom_free(o);
	mp_snapshot_free(s);
}

static void test_device_full(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t big[] = { 700 * MIB }, second[] = { 200 * MIB };
	mp_oom *o;

	sb_device(s);
	segment(s, 0x7f0000000000, 0, false, big, 1);
	segment(s, 0x7f1000000000, 0, false, second, 1);
	o = explain(s, 300 * MIB, 0, 124 * MIB);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_EQUAL_FATAL(o->ncauses, 1);
	CU_ASSERT_EQUAL(o->causes[0].id, MP_OOM_DEVICE_FULL);
	CU_ASSERT_EQUAL(o->causes[0].bytes, 900 * MIB + 300 * MIB - 1024 * MIB);
	CU_ASSERT_PTR_NOT_NULL(remedy(o, MP_OOM_R_NOTHING));
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_EXPANDABLE));
	/* freeing the 700 MiB block releases its segment: 824 MiB free */
	CU_ASSERT_PTR_NOT_NULL(remedy(o, MP_OOM_R_FREE));
	mp_oom_free(o);
	mp_snapshot_free(s);
}

static void test_oversize_and_empty_cache(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t arena[] = { 4 * MIB, -896 * MIB };
	const int64_t base = 0x7f0000000000;
	mp_oom *o;

	sb_device(s);
	segment(s, base, 0, false, arena, 2);
	sb_entry(s, "segment_alloc", base, 900 * MIB);
	sb_entry(s, "alloc", base, 900 * MIB);
	sb_entry(s, "free_requested", base, 900 * MIB);
	/* the free's stack, captured with C++ frames ("all"): the place is the job's own innermost frame */
	sb_entry(s, "free_completed", base, 900 * MIB)->frames = sb_frames(s, 5, (const struct sb_frame[]){
		{ "torch::cuda::(anonymous namespace)::gather_with_cpp()", "/pytorch/torch/csrc/cuda/memory_snapshot.cpp", 47 },
		{ "c10::cuda::CUDACachingAllocator::Native::free", "CUDACachingAllocator.cpp", 3001 },
		{ "linear", "/usr/lib/python3/dist-packages/torch/nn/functional.py", 120 },
		{ "_worker", "/opt/py/lib/python3.11/threading.py", 975 },
		{ "step", "/home/u/train.py", 12 } });
	s->trace[s->ntrace - 1].present |= MP_F_TR_FRAMES;
	sb_entry(s, "alloc", base, 4 * MIB);
	sb_entry(s, "oom", 124 * MIB, 950 * MIB);
	o = explain(s, 950 * MIB, 0, 124 * MIB);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_EQUAL_FATAL(o->ncauses, 1);
	CU_ASSERT_EQUAL(o->causes[0].id, MP_OOM_OVERSIZE_SPLIT);
	CU_ASSERT_EQUAL(o->causes[0].bytes, 896 * MIB);
	/* without the free memory at the OOM in the trace the replay's check cannot run: no setting is claimed from
	   the state alone (expandable segments, max_split_size_mb and an earlier empty_cache() depend on the
	   layout the history made), and empty_cache() at the OOM releases nothing the retry did not */
	CU_ASSERT_FALSE(o->replayed);
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_MAX_SPLIT));
	CU_ASSERT_PTR_NULL(remedy(o, MP_OOM_R_EXPANDABLE));
	CU_ASSERT_PTR_NOT_NULL_FATAL(remedy(o, MP_OOM_R_EMPTY_CACHE));
	CU_ASSERT_FALSE(remedy(o, MP_OOM_R_EMPTY_CACHE)->works);
	CU_ASSERT_PTR_NOT_NULL(strstr(remedy(o, MP_OOM_R_EMPTY_CACHE)->action, "at the OOM"));
	mp_oom_free(o);
	/* the place a remedy names for the free: the job's own innermost frame, past torch, C++ and threading */
	char site[128];

	CU_ASSERT_STRING_EQUAL(mp_frames_site(s, s->trace[3].frames, site, sizeof site), "train.py:12 (step)");
	/* the request as the trace holds it */
	mp_oom_request r;

	CU_ASSERT_EQUAL(mp_oom_request_from_trace(s, -1, &r), MP_OK);
	CU_ASSERT_EQUAL(r.size, 950 * MIB);
	CU_ASSERT_EQUAL(r.trace_index, 5);
	CU_ASSERT_EQUAL(mp_oom_request_from_trace(s, 3, &r), MP_E_NOTFOUND);
	mp_snapshot_free(s);
}

/* The last block made gets the owners' keys (NULL: not set; SAVED: 'saved' True). */
static void owned(mp_snapshot *s, const char *owner, const char *category, const char *root, const char *module,
		  const char *dtype, bool saved)
{
	const char *keys[] = { "owner", "category", "root", "module", "dtype" };
	const char *values[] = { owner, category, root, module, dtype };
	size_t b = s->nblocks - 1;

	for (size_t i = 0; i < 5; i++)
		if (values[i] != NULL)
			CU_ASSERT_EQUAL_FATAL(mp_block_set_extra(s, b, keys[i], sb_str(s, values[i])), MP_OK);
	if (saved)
		CU_ASSERT_EQUAL_FATAL(mp_block_set_extra(s, b, "saved", MP_TRUE), MP_OK);
}

static const mp_oom_remedy *remedy_kind(const mp_oom *o, enum mp_oom_remedy_kind kind)
{
	for (int i = 0; i < o->nremedies; i++)
		if (o->remedies[i].kind == kind)
			return &o->remedies[i];
	return NULL;
}

/* The kind of O's holder NAME, -1 when it has none of that name. */
static int holder_what(const mp_oom *o, const char *name)
{
	for (int i = 0; i < o->nholders; i++)
		if (strcmp(o->holders[i].name, name) == 0)
			return (int)o->holders[i].what;
	return -1;
}

/* A training step (a model, its gradients, Adam's state, activations two repeated blocks saved, a list the job
   keeps) that runs out: the activations by module, no del of the model or the optimizer's state, the remedies
   that fit activations; the same model outside training: its del. */
static void test_holders(void)
{
	static const struct { const char *owner, *category, *root, *module; int64_t mib; bool saved; } held[] = {
		{ "model.h.0.fc.weight", "PARAMETER", "model", "model.h.0.fc", 40, false },
		{ "model.h.0.fc.weight.grad", "GRADIENT", "model", "model.h.0.fc", 40, false },
		{ "optimizer.state[model.h.0.fc.weight].exp_avg", "OPTIMIZER_STATE", "optimizer", "model.h.0.fc", 80, false },
		{ "<saved for backward>", "ACTIVATION", NULL, "model.h.0.mlp.fc", 150, true },
		{ "<saved for backward>", "ACTIVATION", NULL, "model.h.0.attn", 150, true },
		{ "<saved for backward>", "ACTIVATION", NULL, "model.h.1.mlp", 150, true },
		{ "<tensor 0x7f0012345678>", "ACTIVATION", NULL, "model.h.1.attn", 150, false },
		{ "kept[0]", NULL, NULL, NULL, 130, false },
		{ "scaler._scale", NULL, NULL, NULL, 2, false },
	};
	mp_snapshot *s = sb_new();
	mp_oom *o;

	sb_device(s);
	for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
		const int64_t size[] = { held[i].mib * MIB };

		segment(s, 0x7f0000000000 + (int64_t)i * 0x100000000, 0, false, size, 1);
		owned(s, held[i].owner, held[i].category, held[i].root, held[i].module,
		      held[i].category != NULL && strcmp(held[i].category, "ACTIVATION") == 0 ? "float16" : NULL,
		      held[i].saved);
	}
	o = explain(s, 120 * MIB, 0, 0);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_TRUE(o->training);
	CU_ASSERT_STRING_EQUAL(o->holders_by, "owner");
	/* activations by module, one module below the repeated block (model.h.0.mlp.fc: model.h.0.mlp) */
	CU_ASSERT_EQUAL(holder_what(o, "activations saved for backward in model.h.0.mlp"), MP_OOM_H_ACTIVATIONS);
	CU_ASSERT_EQUAL(holder_what(o, "activations saved for backward in model.h.0.attn"), MP_OOM_H_ACTIVATIONS);
	CU_ASSERT_EQUAL(holder_what(o, "activations no variable holds in model.h.1.attn"), MP_OOM_H_ACTIVATIONS);
	CU_ASSERT_EQUAL(holder_what(o, "model"), MP_OOM_H_MODEL);
	CU_ASSERT_EQUAL(holder_what(o, "optimizer"), MP_OOM_H_OPTIMIZER);
	CU_ASSERT_EQUAL(holder_what(o, "kept"), MP_OOM_H_VARIABLE);
	for (int i = 0; i < o->nremedies; i++) {
		const mp_oom_remedy *r = &o->remedies[i];

		CU_ASSERT_PTR_NULL(strstr(r->action, "del model"));
		CU_ASSERT_PTR_NULL(strstr(r->action, "del optimizer"));
		CU_ASSERT_PTR_NULL(strstr(r->action, "<tensor"));
		CU_ASSERT_PTR_NULL(strstr(r->action, "del scaler"));
		CU_ASSERT_TRUE(r->kind == MP_OOM_K_NONE || r->holder[0] != '\0');
	}
	/* kept (130 MiB): a plain variable; its segment, released, leaves room for the 120 MiB */
	CU_ASSERT_PTR_NOT_NULL_FATAL(remedy_kind(o, MP_OOM_K_DEL));
	CU_ASSERT_STRING_EQUAL(remedy_kind(o, MP_OOM_K_DEL)->holder, "kept");
	CU_ASSERT_PTR_NOT_NULL_FATAL(remedy_kind(o, MP_OOM_K_SMALLER_BATCH));
	CU_ASSERT_STRING_EQUAL(remedy_kind(o, MP_OOM_K_SMALLER_BATCH)->holder, "activations");
	CU_ASSERT_PTR_NOT_NULL(strstr(remedy_kind(o, MP_OOM_K_SMALLER_BATCH)->why, "the activations (600.00 MiB)"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(remedy_kind(o, MP_OOM_K_CHECKPOINT));
	CU_ASSERT_STRING_EQUAL(remedy_kind(o, MP_OOM_K_CHECKPOINT)->holder, "activations saved for backward in model.h");
	CU_ASSERT_PTR_NOT_NULL(strstr(remedy_kind(o, MP_OOM_K_CHECKPOINT)->action, "around each block of model.h (h.0 to h.1)"));
	/* a smaller batch and checkpointing change the job's requests: listed to try, with their figures, claimed
	   neither way */
	CU_ASSERT_TRUE(remedy_kind(o, MP_OOM_K_CHECKPOINT)->untested);
	CU_ASSERT_TRUE(remedy_kind(o, MP_OOM_K_SMALLER_BATCH)->untested);
	/* float16 already: 16-bit autocast is not offered */
	CU_ASSERT_PTR_NULL(remedy_kind(o, MP_OOM_K_LOWER_PRECISION));
	mp_oom_free(o);
	mp_snapshot_free(s);

	/* outside training (no gradients, no optimizer state, no activations): the model may go */
	s = sb_new();
	sb_device(s);
	for (size_t i = 0; i < 2; i++) {
		const int64_t size[] = { 500 * MIB };

		segment(s, 0x7f0000000000 + (int64_t)i * 0x100000000, 0, false, size, 1);
		owned(s, i == 0 ? "model.fc.weight" : "outputs[3]", i == 0 ? "PARAMETER" : NULL, i == 0 ? "model" : NULL,
		      i == 0 ? "model.fc" : NULL, NULL, false);
	}
	o = explain(s, 120 * MIB, 0, 0);
	CU_ASSERT_FALSE(o->training);
	CU_ASSERT_PTR_NOT_NULL_FATAL(remedy_kind(o, MP_OOM_K_DEL));
	CU_ASSERT_STRING_EQUAL(remedy_kind(o, MP_OOM_K_DEL)->holder, "model");
	CU_ASSERT_PTR_NOT_NULL(strstr(remedy_kind(o, MP_OOM_K_DEL)->action, "del model"));
	mp_oom_free(o);
	mp_snapshot_free(s);
}

static void test_message_request(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t sizes[] = { 4 * MIB, -3 * MIB, 13 * MIB };
	mp_oom_request r;
	mp_oom *o = NULL;
	mp_diag d = { 0 };

	sb_device(s);
	segment(s, 0x7f0000000000, 0, false, sizes, 3);
	/* 20 MiB asked of cudaMalloc: a large request under 10 MiB that no free block (3 MiB) fit */
	CU_ASSERT_TRUE(mp_oom_request_from_message(
		"CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of which "
		"2.00 MiB is free. Of the allocated memory 17.00 MiB is allocated by PyTorch, and 3.00 MiB is reserved "
		"by PyTorch but unallocated.", 0, &r));
	CU_ASSERT_EQUAL_FATAL(mp_oom_explain(s, &r, &o, &d), MP_OK);
	CU_ASSERT_FALSE(o->size_exact);
	CU_ASSERT_EQUAL(o->alloc_size, 20 * MIB);
	CU_ASSERT_EQUAL(o->rounded, 3 * MIB + 512);
	/* the message names no memory allowed: no fraction, and the garbage collector does nothing, a rule */
	CU_ASSERT_FALSE(remedy(o, MP_OOM_R_GC_THRESHOLD)->works);
	CU_ASSERT_FALSE(remedy(o, MP_OOM_R_GC_THRESHOLD)->untested);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_EQUAL(o->computed.allocated, 17 * MIB);
	/* capacity 40 − reserved 20 − free 2: 18 MiB held outside the allocator */
	CU_ASSERT_EQUAL(o->causes[0].id, MP_OOM_OUTSIDE);
	CU_ASSERT_EQUAL(o->causes[0].bytes, 18 * MIB);
	mp_oom_free(o);
	/* a memory fraction: 500 MiB free on the device, but only 30 MiB allowed, 20 of them reserved: cudaMalloc
	   gets 10 MiB at most, an OOM, and no setting is claimed on the device's free memory */
	CU_ASSERT_TRUE(mp_oom_request_from_message(
		"CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which "
		"500.00 MiB is free. 30.00 MiB allowed; Of the allocated memory 17.00 MiB is allocated by PyTorch, and "
		"3.00 MiB is reserved by PyTorch but unallocated.", 0, &r));
	CU_ASSERT_EQUAL_FATAL(mp_oom_explain(s, &r, &o, &d), MP_OK);
	/* "30.00 MiB" is rounded to half a hundredth of a MiB either way: the least cap it can be counts */
	CU_ASSERT_EQUAL(o->req.message.allowed_slack, MIB / 200);
	CU_ASSERT_EQUAL(o->room, 10 * MIB - MIB / 200);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_PTR_NOT_NULL(strstr(o->decision[1], "the memory fraction allows"));
	/* under the fraction the collector changes the layout later requests find: with no history, only to try */
	CU_ASSERT_TRUE(remedy(o, MP_OOM_R_GC_THRESHOLD)->untested);
	for (int i = 0; i < o->nremedies; i++)
		if (o->remedies[i].id == MP_OOM_R_EXPANDABLE || o->remedies[i].id == MP_OOM_R_MAX_SPLIT)
			CU_ASSERT_FALSE(o->remedies[i].works);
	mp_oom_free(o);
	mp_snapshot_free(s);
}

/* A step of the decision as long as its sentence: the retry that 2.6 skips takes 249 characters here (a step
   was cut at 239 once), and the third step is kept whole. */
static void test_long_step(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t sizes[] = { -20 * MIB };
	static const char tail[] = "routes allocations to a private pool";
	const char *d;
	mp_oom *o;

	sb_device(s);
	segment(s, 0x7f0000000000, 0, false, sizes, 1);
	/* 30 MiB with 15 MiB free: no block fits, cudaMalloc fails, and the retry would release the free 20 MiB
	   segment, enough; the trace's OOM says the allocator raised all the same */
	o = explain(s, 30 * MIB, 0, 15 * MIB);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	CU_ASSERT_TRUE(o->retry_skipped);
	CU_ASSERT_EQUAL_FATAL(o->ndecision, 3);
	d = o->decision[2];
	CU_ASSERT_EQUAL(strlen(d), 249);
	CU_ASSERT_EQUAL(strncmp(d, "the retry would release 20.00 MiB (", 35), 0);
	CU_ASSERT_TRUE(strlen(d) > sizeof tail && strcmp(d + strlen(d) - (sizeof tail - 1), tail) == 0);
	mp_oom_free(o);
	mp_snapshot_free(s);
}

/* Sizes no allocator has: refused in one line, never overflowing (the sanitizer pass runs this too). */
static void test_hostile(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t ok[] = { 4 * MIB, -4 * MIB };
	mp_oom_request r = { .source = MP_OOM_FROM_TRACE, .device = 0, .size = 8 * MIB, .device_free = 0,
			     .trace_index = -1 };
	mp_oom *o = NULL;
	mp_diag d = { 0 };

	sb_device(s);
	segment(s, 0x1000000, 0, false, ok, 2);
	/* a block past its segment's end */
	s->blocks[1].size = INT64_MAX / 2;
	CU_ASSERT_EQUAL(mp_oom_explain(s, &r, &o, &d), MP_E_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "overrun"));
	s->blocks[1].size = 4 * MIB;
	/* segments whose sizes would overflow a sum */
	s->segments[0].total_size = INT64_MAX;
	d = (mp_diag){ 0 };
	CU_ASSERT_EQUAL(mp_oom_explain(s, &r, &o, &d), MP_E_CORRUPT);
	s->segments[0].total_size = -8;
	CU_ASSERT_EQUAL(mp_oom_explain(s, &r, &o, &d), MP_E_CORRUPT);
	s->segments[0].total_size = 8 * MIB;
	/* requests no device has */
	r.size = -1;
	CU_ASSERT_EQUAL(mp_oom_explain(s, &r, &o, &d), MP_E_RANGE);
	r.size = INT64_MAX;
	CU_ASSERT_EQUAL(mp_oom_explain(s, &r, &o, &d), MP_E_RANGE);
	r.size = 8 * MIB;
	r.device_free = INT64_MAX;
	CU_ASSERT_EQUAL(mp_oom_explain(s, &r, &o, &d), MP_E_RANGE);
	r.device_free = 0;
	/* a trace of absurd sizes through the segment: ignored, the explanation stands */
	sb_entry(s, "segment_alloc", 0x1000000, 8 * MIB);
	for (int i = 0; i < 40; i++)
		sb_entry(s, "alloc", 0x1000000, (int64_t)1 << 49);
	sb_entry(s, "alloc", 0x1000000, -5);
	CU_ASSERT_EQUAL_FATAL(mp_oom_explain(s, &r, &o, &d), MP_OK);
	CU_ASSERT_EQUAL(o->verdict, MP_OOM_V_OOM);
	mp_oom_free(o);
	mp_snapshot_free(s);
}

/* An oom entry as PyTorch records it: device_free in the place of addr. */
static void oom_entry(mp_snapshot *s, int64_t size, int64_t device_free)
{
	mp_trace_entry *e = sb_entry(s, "oom", device_free, size);

	e->present = (e->present & ~(unsigned)MP_F_TR_ADDR) | MP_F_TR_DEVICE_FREE;
}

/* The same oversize state with its whole history and the free memory at the OOM: the model, replaying the job's
   requests under the job's settings, runs out where the job did with the job's segments, so the remedies rest on
   replays: max_split_size_mb (the smallest of the ladder that keeps the 900 MiB segment whole), expandable
   segments, empty_cache() after the free; the one request covered (no earlier step). */
static void test_replayed_remedies(void)
{
	mp_snapshot *s = sb_new();
	static const int64_t arena[] = { 4 * MIB, -896 * MIB };
	const int64_t base = 0x7f0000000000;
	const mp_oom_remedy *r;
	mp_oom *o;

	sb_device(s);
	segment(s, base, 0, false, arena, 2);
	sb_entry(s, "segment_alloc", base, 900 * MIB);
	sb_entry(s, "alloc", base, 900 * MIB);
	/* freed by the job's own line, under torch's (the remedy's place: the job's line) */
	sb_entry(s, "free_requested", base, 900 * MIB)->frames = sb_frames(s, 2, (const struct sb_frame[]){
		{ "backward", "/usr/lib/python3/dist-packages/torch/autograd/__init__.py", 200 },
		{ "step", "/home/u/train.py", 12 } });
	s->trace[s->ntrace - 1].present |= MP_F_TR_FRAMES;
	sb_entry(s, "free_completed", base, 900 * MIB);
	sb_entry(s, "alloc", base, 4 * MIB);
	oom_entry(s, 950 * MIB, 124 * MIB);
	o = explain(s, 950 * MIB, 0, 124 * MIB);
	CU_ASSERT_TRUE(o->replayed);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r = remedy(o, MP_OOM_R_MAX_SPLIT));
	CU_ASSERT_TRUE(r->works);
	CU_ASSERT_EQUAL(r->evidence, MP_OOM_EV_REPLAY);
	CU_ASSERT_FALSE(r->covers_step);
	CU_ASSERT_TRUE(r->has_conf);
	CU_ASSERT_STRING_EQUAL(r->conf, "max_split_size_mb:21");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r = remedy(o, MP_OOM_R_EXPANDABLE));
	CU_ASSERT_TRUE(r->works);
	CU_ASSERT_STRING_EQUAL(r->conf, "expandable_segments:True");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r = remedy(o, MP_OOM_R_EMPTY_CACHE));
	CU_ASSERT_TRUE(r->works);
	CU_ASSERT_EQUAL(r->evidence, MP_OOM_EV_REPLAY);
	CU_ASSERT_PTR_NOT_NULL(strstr(r->action, "right after train.py:12 (step), each time it runs"));
	CU_ASSERT_STRING_EQUAL(r->place_file, "/home/u/train.py");
	CU_ASSERT_EQUAL(r->place_line, 12);
	mp_oom_free(o);
	/* a device that never had the memory: every setting is refuted by the replay, nothing is claimed */
	mp_snapshot_free(s);
	s = sb_new();
	sb_device(s);
	segment(s, base, 0, false, arena, 2);
	sb_entry(s, "segment_alloc", base, 900 * MIB);
	sb_entry(s, "alloc", base, 900 * MIB);
	sb_entry(s, "free_requested", base, 900 * MIB);
	sb_entry(s, "free_completed", base, 900 * MIB);
	sb_entry(s, "alloc", base, 4 * MIB);
	oom_entry(s, 2000 * MIB, 124 * MIB);
	o = explain(s, 2000 * MIB, 0, 124 * MIB);
	CU_ASSERT_TRUE(o->replayed);
	for (int i = 0; i < o->nremedies; i++)
		if (o->remedies[i].id != MP_OOM_R_NOTHING && o->remedies[i].id != MP_OOM_R_FREE)
			CU_ASSERT_FALSE(o->remedies[i].works);
	mp_oom_free(o);
	mp_snapshot_free(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "PyTorch's OOM messages, 2.0 and later", test_messages },
		{ "fragmentation of the request's stream", test_fragmentation },
		{ "another stream, the other pool", test_other_stream_and_pool },
		{ "live memory exceeds the device", test_device_full },
		{ "oversize split, max_split_size_mb, empty_cache from the trace", test_oversize_and_empty_cache },
		{ "a request from a message", test_message_request },
		{ "a step of the decision kept whole, however long", test_long_step },
		{ "hostile sizes", test_hostile },
		{ "remedies proven by replaying the trace", test_replayed_remedies },
		{ "holders: activations by module, no del mid-training", test_holders },
	};

	return UNIT_RUN("oom", tests, NULL, NULL);
}

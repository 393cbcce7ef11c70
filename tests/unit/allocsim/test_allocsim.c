/* test_allocsim.c - the allocator model's pieces on cases whose answers are facts of PyTorch's allocator:
   PYTORCH_CUDA_ALLOC_CONF as CUDAAllocatorConfig reads it (roundup_power2_divisions' fill rules included),
   round_size, the ordered free sets, and a few requests whose blocks, segments and OOMs the source fixes. The
   model as a whole is proven against the real libc10_cuda.so by tests/allocsim/ (differential). */
#include "unit_main.h"

#include "mp_sim.h"

#define MIB MP_SIM_MIB

static const mp_sim_release r26 = { 2, 6 }, r214 = { 2, 14 };

static mp_sim_conf parsed_by(mp_sim_release r, const char *text, mp_err want)
{
	mp_sim_conf c;
	mp_diag d = { 0 };

	mp_sim_conf_default(&c);
	CU_ASSERT_EQUAL(mp_sim_conf_parse(&c, text, r, &d), want);
	if (want != MP_OK)
		CU_ASSERT_NOT_EQUAL(d.msg[0], '\0');
	return c;
}

static mp_sim_conf parsed(const char *text, mp_err want)
{
	return parsed_by(r26, text, want);
}

static void test_conf(void)
{
	mp_sim_conf c = parsed("expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6", MP_OK);
	char text[200];

	CU_ASSERT_TRUE(c.expandable);
	CU_ASSERT_EQUAL(c.max_split_size, 128 * MIB);
	CU_ASSERT_DOUBLE_EQUAL(c.gc_threshold, 0.6, 1e-12);
	CU_ASSERT_EQUAL(c.max_non_split_rounding, 20 * MIB);
	CU_ASSERT_STRING_EQUAL(mp_sim_conf_format(&c, text, sizeof text),
			       "expandable_segments:True,max_split_size_mb:128,garbage_collection_threshold:0.6");
	/* one value for every interval */
	c = parsed("roundup_power2_divisions:4", MP_OK);
	for (int i = 0; i < MP_SIM_INTERVALS; i++)
		CU_ASSERT_EQUAL(c.divisions[i], 4);
	/* the list: the first key also sets the intervals below it; '>' sets from the last key named, itself
	   included, to the end (so 512's 2 becomes 8) */
	c = parsed("roundup_power2_divisions:[256:1,512:2,>:8]", MP_OK);
	for (int i = 0; i <= 8; i++)
		CU_ASSERT_EQUAL(c.divisions[i], 1);
	for (int i = 9; i < MP_SIM_INTERVALS; i++)
		CU_ASSERT_EQUAL(c.divisions[i], 8);
	/* what the allocator refuses, it refuses with a reason */
	parsed("max_split_size_mb:20", MP_E_USAGE);
	parsed("max_split_size_mb", MP_E_USAGE);
	parsed("roundup_power2_divisions:3", MP_E_USAGE);
	parsed("roundup_power2_divisions:[256:1", MP_E_USAGE);
	parsed("garbage_collection_threshold:1.0", MP_E_USAGE);
	parsed("expandable_segments:yes", MP_E_USAGE);
	parsed("no_such_option:1", MP_E_USAGE);
	parsed("backend:cudaMallocAsync", MP_E_UNSUPPORTED);
	parsed("backend:native,pinned_use_cuda_host_register:True,pinned_num_register_threads:8", MP_OK);
	/* a word longer than any setting is refused, not overrun */
	char long_word[300];

	memset(long_word, 'x', sizeof long_word - 1);
	long_word[sizeof long_word - 1] = '\0';
	parsed(long_word, MP_E_LIMIT);
	/* each release its own keys and checks: 2.0 has no expandable segments, 2.6 no large_segment_size_mb;
	   2.10 takes max_split_size_mb:20 and fills '>' from after the last interval named; 2.11's
	   large_segment_size_mb is the least max_split_size_mb and the default max_non_split_rounding_mb */
	parsed_by((mp_sim_release){ 2, 0 }, "expandable_segments:True", MP_E_USAGE);
	parsed("large_segment_size_mb:32", MP_E_USAGE);
	parsed_by(r214, "max_split_size_mb:20", MP_OK);
	c = parsed_by(r214, "roundup_power2_divisions:[256:1,512:2,>:8]", MP_OK);
	CU_ASSERT_EQUAL(c.divisions[9], 2);
	CU_ASSERT_EQUAL(c.divisions[10], 8);
	c = parsed_by(r214, "max_split_size_mb:40,large_segment_size_mb:32", MP_OK);
	CU_ASSERT_EQUAL(c.large_segment_size, 32 * MIB);
	CU_ASSERT_EQUAL(c.max_non_split_rounding, 32 * MIB);
	parsed_by(r214, "max_split_size_mb:30,large_segment_size_mb:32", MP_E_USAGE);
	parsed_by((mp_sim_release){ 2, 3 }, "roundup_power2_divisions:[256:0]", MP_E_USAGE);
	parsed_by((mp_sim_release){ 2, 4 }, "roundup_power2_divisions:[256:0]", MP_OK);
}

static void test_round_size(void)
{
	mp_sim_conf c;

	mp_sim_conf_default(&c);
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 1), 512);
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 512), 512);
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 513), 1024);
	CU_ASSERT_EQUAL(mp_sim_allocation_size(&c, MIB), 2 * MIB);
	CU_ASSERT_EQUAL(mp_sim_allocation_size(&c, MIB + 512), 20 * MIB);
	CU_ASSERT_EQUAL(mp_sim_allocation_size(&c, 10 * MIB), 10 * MIB);
	CU_ASSERT_EQUAL(mp_sim_allocation_size(&c, 10 * MIB + 512), 12 * MIB);
	/* four steps between powers of two: 1.2 MiB goes to 1.25 MiB, a power of two stays */
	c.divisions[0] = 4;
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 1258291), 1310720);
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 2 * MIB), 2 * MIB);
	/* below 512 x divisions the 512-byte steps apply */
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 1500), 1536);
	/* one division: 512-byte steps from 2.4, the size as asked before */
	c.divisions[0] = 1;
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, r26, 1048577 + 10), 1049088);
	CU_ASSERT_EQUAL(mp_sim_round_size(&c, (mp_sim_release){ 2, 3 }, 1048577 + 10), 1048587);
}

static mp_sim_block *ok_alloc(mp_sim *s, int64_t size, uint64_t stream)
{
	mp_sim_block *b = NULL;

	CU_ASSERT_EQUAL(mp_sim_malloc(s, size, stream, &b), MP_OK);
	return b;
}

/* The small pool packs requests into one 2 MiB segment; a freed block merges with its free neighbours; a request
   the device cannot hold runs out after the retry has released the cached segments free as a whole. */
static void test_requests(void)
{
	mp_sim_conf c;
	mp_sim_release r = { 2, 6 };
	mp_sim *s;
	mp_sim_block *a, *b, *big, *none = NULL;

	mp_sim_conf_default(&c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s = mp_sim_new(&c, r, 64 * MIB, 0));
	a = ok_alloc(s, 1000, 0);
	b = ok_alloc(s, 1000, 0);
	CU_ASSERT_EQUAL(mp_sim_block_addr(b), mp_sim_block_addr(a) + 1024);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->reserved_bytes.current, 2 * MIB);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->allocated_bytes.current, 2048);
	big = ok_alloc(s, 30 * MIB, 0);
	CU_ASSERT_EQUAL(mp_sim_block_size(big), 30 * MIB);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->segment.current, 2);
	mp_sim_free(s, big); /* cached: reserved stays */
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->reserved_bytes.current, 32 * MIB);
	/* 40 MiB: cudaMalloc fails with 32 of 64 MiB taken, the retry releases the cached 30 MiB, then it fits */
	big = ok_alloc(s, 40 * MIB, 0);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->num_alloc_retries, 1);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->reserved_bytes.current, 42 * MIB);
	/* 30 MiB more cannot fit in 64 MiB: out of memory, after the retry */
	CU_ASSERT_EQUAL(mp_sim_malloc(s, 30 * MIB, 0, &none), MP_E_NOMEM);
	CU_ASSERT_PTR_NULL(none);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->num_ooms, 1);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->num_alloc_retries, 2);
	/* a free block merges with its free neighbour: one inactive block of the rest of the segment */
	mp_sim_free(s, a);
	mp_sim_free(s, b);
	mp_sim_empty_cache(s);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->reserved_bytes.current, 40 * MIB);
	CU_ASSERT_EQUAL(mp_sim_malloc(s, -1, 0, &none), MP_E_NOMEM);
	CU_ASSERT_EQUAL(mp_sim_malloc(s, MP_SIM_MAX_SIZE + 1, 0, &none), MP_E_NOMEM);
	mp_sim_free_all(s);
}

/* A block used on another stream waits for that stream's event: pending until a synchronisation covers it and
   the allocator looks again; its tag tells the completion even once the allocator merged it away. */
static void test_events(void)
{
	mp_sim_conf c;
	mp_sim_release r = { 2, 6 };
	mp_sim *s;
	mp_sim_block *a, *b;

	mp_sim_conf_default(&c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s = mp_sim_new(&c, r, 64 * MIB, 0));
	a = ok_alloc(s, 4096, 0);
	mp_sim_record_stream(s, a, 0x1000);
	mp_sim_free(s, a);
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->active_bytes.current, 4096);
	b = ok_alloc(s, 512, 0); /* the event is not done: a stays pending, b goes after it */
	CU_ASSERT_EQUAL(mp_sim_block_addr(b), mp_sim_block_addr(a) + 4096);
	mp_sim_sync(s);
	b = ok_alloc(s, 512, 0); /* now it is: a's 4 KiB is free again and taken first (best fit) */
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->active_bytes.current, 1024);
	a = ok_alloc(s, 4096, 0);
	mp_sim_record_stream(s, a, 0x1000);
	mp_sim_tag(s, a, 7);
	mp_sim_free(s, a);
	mp_sim_empty_cache(s); /* waits for the event itself */
	mp_sim_complete(s, 7); /* nothing left to complete */
	CU_ASSERT_EQUAL(mp_sim_stats_of(s)->active_bytes.current, 1024);
	mp_sim_free_all(s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "PYTORCH_CUDA_ALLOC_CONF as the allocator reads it", test_conf },
		{ "round_size and the cudaMalloc sizes", test_round_size },
		{ "requests, the retry and OOM", test_requests },
		{ "cross-stream events", test_events },
	};

	return UNIT_RUN("allocsim", tests, NULL, NULL);
}

/* test_layout.c - layout files: parsing, every refusal, formatting round trip, built-in tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_c10.h"
#include "mp_layout.h"
#include "unit_main.h"

/* A complete layout text: the built-in torch-2.6 table formatted. */
static char *full_text(void)
{
	const mp_layout *l = mp_layout_builtin_named("torch-2.6");

	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	return mp_layout_format(l);
}

static mp_err parse(const char *text, mp_layout *l, mp_diag *d)
{
	mp_diag_reset(d);
	return mp_layout_parse("t.layout", text, strlen(text), l, d);
}

/* FULL with the line starting with PREFIX replaced by REPL ("" drops it); malloc'd. */
static char *edit(const char *full, const char *prefix, const char *repl)
{
	size_t cap = strlen(full) + strlen(repl) + 2;
	char *out = malloc(cap), *o = out;
	const char *s = full;

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	while (*s != '\0') {
		const char *nl = strchr(s, '\n');
		size_t len = nl != NULL ? (size_t)(nl - s + 1) : strlen(s);

		if (strncmp(s, prefix, strlen(prefix)) == 0) {
			o += sprintf(o, "%s", repl);
		} else {
			memcpy(o, s, len);
			o += len;
		}
		s += len;
	}
	*o = '\0';
	return out;
}

static void expect_fail(const char *text, mp_err want, const char *needle)
{
	mp_layout l;
	mp_diag d = { 0 };
	mp_err err = parse(text, &l, &d);

	CU_ASSERT_EQUAL(err, want);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, needle));
	if (err != want || strstr(d.msg, needle) == NULL)
		fprintf(stderr, "\nwanted %s with '%s', got %s: %s\n", mp_strerror(want), needle,
			mp_strerror(err), d.msg);
}

static void test_field_table(void)
{
	CU_ASSERT_STRING_EQUAL(mp_layout_struct_name(MP_L_BLOCK_SIZE), "Block");
	CU_ASSERT_STRING_EQUAL(mp_layout_member_name(MP_L_BLOCK_SIZE), "size");
	CU_ASSERT_STRING_EQUAL(mp_layout_member_name(MP_L_DS_SIZEOF), "sizeof");
	CU_ASSERT_TRUE(mp_layout_field_required(MP_L_BLOCK_PTR));
	CU_ASSERT_TRUE(mp_layout_field_required(MP_L_DCA_ALLOC_BUFFER));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_DCA_DEVICE_ID));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_PP_ID));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_TE_MEMPOOL));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_TE_DEVICE)); /* 2.1 has neither */
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_TE_TIME));
	CU_ASSERT_TRUE(mp_layout_field_required(MP_L_TE_ACTION));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_CFG_LAST_ALLOCATOR_SETTINGS));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_AAC_SIZEOF));
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L_AAC_LAST_ALLOCATOR_SETTINGS));
	CU_ASSERT_STRING_EQUAL(mp_layout_struct_name(MP_L_AAC_MAX_SPLIT_SIZE), "AcceleratorAllocatorConfig");
	CU_ASSERT_STRING_EQUAL(mp_layout_member_name(MP_L_AAC_MAX_SPLIT_SIZE), "max_split_size_");
	CU_ASSERT_FALSE(mp_layout_field_required(MP_L__COUNT));
	CU_ASSERT_STRING_EQUAL(mp_layout_struct_name(MP_L__COUNT), "?");
}

static void test_builtin_named(void)
{
	CU_ASSERT_PTR_NOT_NULL(mp_layout_builtin_named("torch-2.14-cuda13"));
	CU_ASSERT_STRING_EQUAL(mp_layout_builtin_named("torch-2.6-oldabi")->name, "torch-2.6-oldabi");
	CU_ASSERT_PTR_NULL(mp_layout_builtin_named("torch-2.6.layout"));
	CU_ASSERT_PTR_NULL(mp_layout_builtin_named(""));
}

static void test_builtins(void)
{
	static const char *const names[] = { "torch-2.6", "torch-2.6-oldabi", "torch-2.14-cuda12",
					     "torch-2.14-cuda13", "torch-2.14-cuda12-oldabi",
					     "torch-2.14-cuda13-oldabi", "torch-2.11-cuda13",
					     "torch-2.1-cuda12-oldabi", "torch-2.2-cuda12-oldabi",
					     "torch-2.3-cuda12-oldabi", "torch-2.4-cuda12-oldabi",
					     "torch-2.5-cuda12-oldabi", "torch-2.8-cuda12", "torch-2.9-cuda12",
					     "torch-2.10-cuda12", "torch-2.12-cuda13", "torch-2.0-cuda11-oldabi" };
	size_t n = mp_layout_builtin_count();

	/* Every file listed in local.am parsed. */
	CU_ASSERT_EQUAL(n, sizeof names / sizeof names[0]);
	for (size_t i = 0; i < n; i++) {
		const mp_layout *l = mp_layout_builtin(i);

		CU_ASSERT_STRING_EQUAL(l->name, names[i]);
		CU_ASSERT_EQUAL(mp_layout_check(l, NULL), MP_OK);
		CU_ASSERT_PTR_NOT_NULL(strstr(l->source, "table torch-"));
	}
	CU_ASSERT_PTR_NULL(mp_layout_builtin(n));
	CU_ASSERT_STRING_EQUAL(mp_layout_builtin(0)->key.torch_version, "2.6");
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->key.cxx11_abi, 1);
	CU_ASSERT_EQUAL(mp_layout_builtin(1)->key.cxx11_abi, 0);
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->off[MP_L_BLOCK_PTR], 72);
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->off[MP_L_DCA_DEVICE_ID], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->key.cuda_major, 13);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_DCA_ALLOC_BUFFER], 2816);
	CU_ASSERT_EQUAL(mp_layout_builtin(2)->off[MP_L_DCA_ALLOC_BUFFER], 2840);
	CU_ASSERT_EQUAL(mp_layout_builtin(2)->off[MP_L_TE_SIZEOF], 136);
	/* 2.6 keeps every setting in CUDAAllocatorConfig, 2.14 most in libc10's AcceleratorAllocatorConfig. */
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->off[MP_L_CFG_SIZEOF], 136);
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->off[MP_L_CFG_MAX_SPLIT_SIZE], 0);
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->off[MP_L_AAC_MAX_SPLIT_SIZE], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(mp_layout_builtin(0)->off[MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(mp_layout_builtin(1)->off[MP_L_CFG_SIZEOF], 112);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_CFG_SIZEOF], 40);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_CFG_MAX_SPLIT_SIZE], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE], 22);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_AAC_SIZEOF], 152);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_AAC_ROUNDUP_POWER2_DIVISIONS], 24);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_AAC_LAST_ALLOCATOR_SETTINGS], 120);
	CU_ASSERT_EQUAL(mp_layout_builtin(3)->off[MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS], 576);
	/* 2.11 (measured on its wheel): no per-private-pool statistics, a smaller DeviceCachingAllocator */
	CU_ASSERT_STRING_EQUAL(mp_layout_builtin(6)->key.torch_version, "2.11");
	CU_ASSERT_EQUAL(mp_layout_builtin(6)->off[MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(mp_layout_builtin(6)->off[MP_L_DCA_ALLOC_BUFFER], 2672);
	/* 2.1 (learned on its wheel): trace entries without device or time, no sync/device counters; up to 2.4 the
	   ring's members belong to the allocator itself, the next-slot index first. */
	const mp_layout *t21 = mp_layout_builtin_named("torch-2.1-cuda12-oldabi");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t21);
	CU_ASSERT_STRING_EQUAL(t21->key.torch_version, "2.1");
	CU_ASSERT_EQUAL(t21->key.cxx11_abi, 0);
	CU_ASSERT_EQUAL(t21->off[MP_L_TE_DEVICE], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t21->off[MP_L_TE_TIME], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t21->off[MP_L_NCA_CLOCK_CONVERTER], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t21->off[MP_L_DS_NUM_SYNC_ALL_STREAMS], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t21->off[MP_L_RB_NEXT], 0);
	CU_ASSERT(t21->off[MP_L_RB_MAX_ENTRIES] > t21->off[MP_L_RB_NEXT]);
	CU_ASSERT_EQUAL(mp_layout_builtin_named("torch-2.5-cuda12-oldabi")->off[MP_L_RB_MAX_ENTRIES], 0);
	/* 2.0 (learned on its wheel): a Block's contexts in its history list, no expandable segments, one set per
	   BlockPool; the later tables keep contexts in the Block. */
	const mp_layout *t20 = mp_layout_builtin_named("torch-2.0-cuda11-oldabi");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t20);
	CU_ASSERT_EQUAL(t20->key.cuda_major, 11);
	CU_ASSERT_EQUAL(t20->off[MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t20->off[MP_L_BLOCK_EXPANDABLE_SEGMENT], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t20->off[MP_L_BP_UNMAPPED], MP_LAYOUT_ABSENT);
	CU_ASSERT_EQUAL(t20->off[MP_L_HISTORY_CONTEXT], 16);
	CU_ASSERT(t20->off[MP_L_BLOCK_HISTORY] > t20->off[MP_L_BLOCK_EVENT_COUNT]);
	CU_ASSERT_EQUAL(t21->off[MP_L_BLOCK_HISTORY], MP_LAYOUT_ABSENT);
	/* The ska tables' slots the walker reads, the same in every release (each table lists them). */
	for (size_t i = 0; i < n; i++) {
		const mp_layout *l = mp_layout_builtin(i);

		CU_ASSERT_EQUAL(l->off[MP_L_GPE_SIZEOF], 32);
		CU_ASSERT_EQUAL(l->off[MP_L_GPE_ID], 8);
		CU_ASSERT_EQUAL(l->off[MP_L_GPE_POOL], 24);
		CU_ASSERT_EQUAL(l->off[MP_L_ABE_SIZEOF], 16);
		CU_ASSERT_EQUAL(l->off[MP_L_ABE_BLOCK], 8);
	}
}

/* Members that come together: a layout with half of a group, or with both or neither of a Block's context
   kinds, is refused. */
static void test_field_groups(void)
{
	mp_layout l = *mp_layout_builtin_named("torch-2.0-cuda11-oldabi");
	mp_diag d = { 0 };

	CU_ASSERT_EQUAL(mp_layout_check(&l, NULL), MP_OK);
	l.off[MP_L_HISTORY_CONTEXT] = MP_LAYOUT_ABSENT;
	CU_ASSERT_NOT_EQUAL(mp_layout_check(&l, &d), MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "come together"));
	l.off[MP_L_BLOCK_HISTORY] = MP_LAYOUT_ABSENT;
	mp_diag_reset(&d);
	CU_ASSERT_NOT_EQUAL(mp_layout_check(&l, &d), MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "give one of the two"));

	l = *mp_layout_builtin_named("torch-2.6");
	l.off[MP_L_BP_UNMAPPED] = MP_LAYOUT_ABSENT;
	CU_ASSERT_NOT_EQUAL(mp_layout_check(&l, NULL), MP_OK);
	l = *mp_layout_builtin_named("torch-2.6");
	l.off[MP_L_BLOCK_HISTORY] = 152;
	l.off[MP_L_HISTORY_CONTEXT] = 16;
	CU_ASSERT_NOT_EQUAL(mp_layout_check(&l, NULL), MP_OK);
}

/* The four 2.14 tables are one measurement (the torch 2.14.1 wheel: CUDA 13, new ABI; see
   tests/testbed/c10/layouts-2.14.sh) and two derivations: CUDA 12 moves the DeviceCachingAllocator members
   behind the 1032-byte (not 1008) cudaDeviceProp by 24, the old ABI only TraceEntry's strings and
   AcceleratorAllocatorConfig's size (its last member is a string). */
static void test_214_tables_agree(void)
{
	const mp_layout *t[4];
	static const char *const names[] = { "torch-2.14-cuda13", "torch-2.14-cuda12",
					     "torch-2.14-cuda13-oldabi", "torch-2.14-cuda12-oldabi" };
	const int32_t prop_end = 1664 + 1008; /* device_prop in the CUDA 13 DeviceCachingAllocator */

	for (int i = 0; i < 4; i++) {
		t[i] = NULL;
		for (size_t j = 0; j < mp_layout_builtin_count(); j++)
			if (strcmp(mp_layout_builtin(j)->name, names[i]) == 0)
				t[i] = mp_layout_builtin(j);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t[i]);
	}
	for (int f = 0; f < MP_L__COUNT; f++) {
		int32_t o13 = t[0]->off[f], d12 = 0, dold = 0;

		if (strcmp(mp_layout_struct_name((enum mp_layout_field)f), "DeviceCachingAllocator") == 0 &&
		    o13 >= prop_end)
			d12 = 24;
		if (f == MP_L_TE_SIZEOF)
			dold = -48;
		else if (f == MP_L_TE_USER_METADATA || f == MP_L_AAC_SIZEOF)
			dold = -24;
		if (o13 == MP_LAYOUT_ABSENT)
			d12 = dold = 0;
		CU_ASSERT_EQUAL(t[1]->off[f], o13 + d12);
		CU_ASSERT_EQUAL(t[2]->off[f], o13 + dold);
		CU_ASSERT_EQUAL(t[3]->off[f], o13 + d12 + dold);
		if (t[1]->off[f] != o13 + d12 || t[2]->off[f] != o13 + dold || t[3]->off[f] != o13 + d12 + dold)
			fprintf(stderr, "\n%s.%s: %d %d %d %d\n", mp_layout_struct_name((enum mp_layout_field)f),
				mp_layout_member_name((enum mp_layout_field)f), (int)o13, (int)t[1]->off[f],
				(int)t[2]->off[f], (int)t[3]->off[f]);
	}
	/* What the inferred tables had wrong: 2.14.1's BlockPool holds a third set (blocks_by_addr). */
	CU_ASSERT_EQUAL(t[0]->off[MP_L_BP_SIZEOF], 168);
	CU_ASSERT_EQUAL(t[0]->off[MP_L_BP_UNMAPPED], 96);
	CU_ASSERT_EQUAL(t[0]->off[MP_L_DCA_SMALL_BLOCKS], t[0]->off[MP_L_DCA_LARGE_BLOCKS] + 168);
	CU_ASSERT_EQUAL(t[0]->off[MP_L_PP_SMALL_BLOCKS], t[0]->off[MP_L_PP_LARGE_BLOCKS] + 168);
	CU_ASSERT_EQUAL(t[0]->off[MP_L_DCA_SIZEOF], 3072);
}

static void test_round_trip(void)
{
	for (size_t i = 0; i < mp_layout_builtin_count(); i++) {
		const mp_layout *l = mp_layout_builtin(i);
		char *text = mp_layout_format(l), *again;
		mp_layout back;
		mp_diag d = { 0 };

		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		CU_ASSERT_EQUAL_FATAL(parse(text, &back, &d), MP_OK);
		CU_ASSERT_EQUAL(memcmp(back.off, l->off, sizeof l->off), 0);
		CU_ASSERT_EQUAL(memcmp(&back.key, &l->key, sizeof l->key), 0);
		CU_ASSERT_STRING_EQUAL(back.name, "t.layout");
		snprintf(back.name, sizeof back.name, "%s", l->name);
		snprintf(back.source, sizeof back.source, "%s", l->source);
		again = mp_layout_format(&back);
		CU_ASSERT_STRING_EQUAL(again, text);
		free(again);
		free(text);
	}
}

static void test_good_syntax(void)
{
	char *full = full_text(), *t;
	mp_layout l;
	mp_diag d = { 0 };

	/* Hex numbers, blanks, CRLF, comments, a missing optional field, no trailing newline. */
	t = edit(full, "Block.size ", "  Block.size\t0x30 \r\n# comment\n\n");
	CU_ASSERT_EQUAL(parse(t, &l, &d), MP_OK);
	CU_ASSERT_EQUAL(l.off[MP_L_BLOCK_SIZE], 48);
	free(t);
	t = edit(full, "PrivatePool.use_count", "");
	CU_ASSERT_EQUAL(parse(t, &l, &d), MP_OK);
	CU_ASSERT_EQUAL(l.off[MP_L_PP_USE_COUNT], MP_LAYOUT_ABSENT);
	free(t);
	full[strlen(full) - 1] = '\0';
	CU_ASSERT_EQUAL(parse(full, &l, &d), MP_OK);
	/* No key lines: any version, ABI, CUDA. */
	t = edit(full, "key ", "");
	CU_ASSERT_EQUAL(parse(t, &l, &d), MP_OK);
	CU_ASSERT_STRING_EQUAL(l.key.torch_version, "");
	CU_ASSERT_EQUAL(l.key.cxx11_abi, -1);
	CU_ASSERT_EQUAL(l.key.cuda_major, 0);
	free(t);
	/* A file written before the ska slots were listed (none of a slot's fields): the slots every release has; a
	   slot given is taken as given. */
	t = edit(full, "GraphPoolsEntry.", "");
	CU_ASSERT_EQUAL(parse(t, &l, &d), MP_OK);
	CU_ASSERT_EQUAL(l.off[MP_L_GPE_SIZEOF], 32);
	CU_ASSERT_EQUAL(l.off[MP_L_GPE_ID], 8);
	CU_ASSERT_EQUAL(l.off[MP_L_GPE_POOL], 24);
	free(t);
	t = edit(full, "ActiveBlocksEntry.sizeof", "ActiveBlocksEntry.sizeof 24\n");
	CU_ASSERT_EQUAL(parse(t, &l, &d), MP_OK);
	CU_ASSERT_EQUAL(l.off[MP_L_ABE_SIZEOF], 24);
	CU_ASSERT_EQUAL(l.off[MP_L_ABE_BLOCK], 8);
	free(t);
	free(full);
}

static void test_errors(void)
{
	char *full = full_text(), *t;

	t = edit(full, "Block.size ", "Block.sise 48\n");
	expect_fail(t, MP_E_CORRUPT, "unknown field 'Block.sise'");
	free(t);
	t = edit(full, "Block.size ", "Block.size 48\nBlock.size 48\n");
	expect_fail(t, MP_E_CORRUPT, "given twice");
	free(t);
	t = edit(full, "Block.ptr ", "");
	expect_fail(t, MP_E_NOTFOUND, "required field Block.ptr missing");
	free(t);
	t = edit(full, "Block.ptr ", "Block.ptr -\n");
	expect_fail(t, MP_E_NOTFOUND, "required field Block.ptr missing");
	free(t);
	t = edit(full, "Block.size ", "Block.size 4x8\n");
	expect_fail(t, MP_E_RANGE, "'4x8' is not an offset");
	free(t);
	t = edit(full, "Block.size ", "Block.size -8\n");
	expect_fail(t, MP_E_RANGE, "'-8' is not an offset");
	free(t);
	t = edit(full, "Block.size ", "Block.size 1048576\n");
	expect_fail(t, MP_E_RANGE, "not an offset in [0, 1048576)");
	free(t);
	t = edit(full, "Block.size ", "Block.size 99999999999999999999999\n");
	expect_fail(t, MP_E_RANGE, "is not an offset");
	free(t);
	t = edit(full, "Block.size ", "Block.size 48 49\n");
	expect_fail(t, MP_E_CORRUPT, "expected \"Struct.member OFFSET\"");
	free(t);
	t = edit(full, "Block.size ", "Block.size\n");
	expect_fail(t, MP_E_CORRUPT, "expected \"Struct.member OFFSET\"");
	free(t);
	t = edit(full, "Block.size ", "Block.size 4000\n"); /* past sizeof Block (160) */
	expect_fail(t, MP_E_RANGE, "lies outside sizeof Block");
	free(t);
	/* a slot's 8-byte words must end inside it: the walker reads them from the slot's image */
	t = edit(full, "GraphPoolsEntry.pool ", "GraphPoolsEntry.pool 28\n");
	expect_fail(t, MP_E_RANGE, "GraphPoolsEntry.pool (8 bytes at 28) passes the end of its 32-byte slot");
	free(t);
	t = edit(full, "GraphPoolsEntry.id ", "GraphPoolsEntry.id 24\n");
	expect_fail(t, MP_E_RANGE, "GraphPoolsEntry.id (16 bytes at 24)");
	free(t);
	t = edit(full, "ActiveBlocksEntry.block ", "");
	expect_fail(t, MP_E_NOTFOUND, "required field ActiveBlocksEntry.block missing");
	free(t);
	t = edit(full, "key version", "key flavour 2\n");
	expect_fail(t, MP_E_CORRUPT, "unknown or repeated key 'flavour'");
	free(t);
	t = edit(full, "key version", "key version 2.6\nkey version 2.7\n");
	expect_fail(t, MP_E_CORRUPT, "unknown or repeated key 'version'");
	free(t);
	t = edit(full, "key cxx11_abi", "key cxx11_abi 2\n");
	expect_fail(t, MP_E_RANGE, "cxx11_abi must be 0 or 1");
	free(t);
	t = edit(full, "key version", "key version 2.6.0-a-much-too-long-version\n");
	expect_fail(t, MP_E_RANGE, "version too long");
	free(t);
	expect_fail("", MP_E_FORMAT, "empty");
	expect_fail("# only a comment\n\n", MP_E_FORMAT, "empty");
	expect_fail("Hello, world\n", MP_E_CORRUPT, "t.layout:1: unknown field 'Hello,'");
	free(full);
}

static void test_binary(void)
{
	static const char bin[] = "\177ELF\002\001\001\000\000\000";
	mp_layout l;
	mp_diag d = { 0 };

	CU_ASSERT_EQUAL(mp_layout_parse("bin", bin, sizeof bin - 1, &l, &d), MP_E_FORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "bin:1: binary data"));
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_layout_parse("nul", "Block.size 48\n\0x", 16, &l, &d), MP_E_FORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "nul:2: binary data"));
}

static void test_load_file(void)
{
	char path[] = "/tmp/memprof-test-layout-XXXXXX", *full = full_text();
	int fd = mkstemp(path);
	mp_layout l;
	mp_diag d = { 0 };

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, full, strlen(full)), (ssize_t)strlen(full));
	close(fd);
	CU_ASSERT_EQUAL(mp_layout_load_file(path, &l, &d), MP_OK);
	CU_ASSERT_EQUAL(l.off[MP_L_DCA_ALLOC_BUFFER], 1456);
	CU_ASSERT_STRING_EQUAL(l.name, path);
	unlink(path);
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_layout_load_file(path, &l, &d), MP_E_ERRNO);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "cannot open"));
	free(full);
}

/* Ordering without a target: version, ABI and CUDA major pick the tables. */
static void test_candidates_order(void)
{
	mp_c10 c;
	mp_layout cand[32];
	size_t n;

	memset(&c, 0, sizeof c);
	snprintf(c.version, sizeof c.version, "2.14.1+cu130");
	c.cxx11_abi = 1;
	c.cuda_major = 13;
	n = mp_c10_layout_candidates(&c, cand, 32, NULL);
	CU_ASSERT_EQUAL_FATAL(n, mp_layout_builtin_count());
	CU_ASSERT_STRING_EQUAL(cand[0].name, "torch-2.14-cuda13");
	c.cxx11_abi = 0;
	c.cuda_major = 12;
	mp_c10_layout_candidates(&c, cand, 32, NULL);
	CU_ASSERT_STRING_EQUAL(cand[0].name, "torch-2.14-cuda12-oldabi");
	snprintf(c.version, sizeof c.version, "2.6.0");
	mp_c10_layout_candidates(&c, cand, 32, NULL);
	CU_ASSERT_STRING_EQUAL(cand[0].name, "torch-2.6-oldabi");
	CU_ASSERT_STRING_EQUAL(cand[1].name, "torch-2.6");
	/* 2.140 is not 2.14: no table matches, file order decides among the ABI matches. */
	snprintf(c.version, sizeof c.version, "2.140.0");
	c.cxx11_abi = 1;
	mp_c10_layout_candidates(&c, cand, 32, NULL);
	CU_ASSERT_STRING_EQUAL(cand[0].name, "torch-2.6");
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "field table", test_field_table },
		{ "built-in tables", test_builtins },
		{ "members that come together", test_field_groups },
		{ "a built-in table by name", test_builtin_named },
		{ "2.14 tables agree", test_214_tables_agree },
		{ "format/parse round trip", test_round_trip },
		{ "accepted syntax", test_good_syntax },
		{ "refusals", test_errors },
		{ "binary input", test_binary },
		{ "load file", test_load_file },
		{ "mp_c10 candidate order", test_candidates_order },
	};

	return unit_run("layout", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

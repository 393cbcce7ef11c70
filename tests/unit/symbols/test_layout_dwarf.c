/* test_layout_dwarf.c - mp_layout_from_dwarf on the test bed's real c10 builds, against the
   built-in tables (skipped, exit 77, only when there are no CUDA headers to build them with). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../symbols/testbed.h"
#include "mp_elf.h"
#include "mp_layout.h"
#include "unit_main.h"

static const mp_layout *builtin(const char *name)
{
	const mp_layout *l = mp_layout_builtin_named(name);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	return l;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The DWARF layout of build VARIANT (fails the test when it cannot be had). */
static void dwarf_of(const char *variant, mp_layout *l)
{
	char *lib = testbed_c10(variant);
	mp_diag d = { 0 };
	double t0;
	mp_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
	t0 = now();
	err = mp_layout_from_dwarf(lib, NULL, l, &d);
	printf("\n  %s: DWARF read in %.3f s\n", variant, now() - t0);
	if (err != MP_OK)
		fprintf(stderr, "%s: %s\n", lib, d.msg);
	free(lib);
	CU_ASSERT_EQUAL_FATAL(err, MP_OK);
	/* The goal is well under a second for the ~9 MB of DWARF; allow for a loaded machine. */
	CU_ASSERT(now() - t0 < 3.0);
}

/* Fields F with PREFIX ("" = all) must be equal in A and B; each difference is shown. */
static void same_fields(const mp_layout *a, const mp_layout *b, const char *struct_name)
{
	for (int f = 0; f < MP_L__COUNT; f++) {
		const char *s = mp_layout_struct_name((enum mp_layout_field)f);

		if (struct_name != NULL && strcmp(s, struct_name) != 0)
			continue;
		CU_ASSERT_EQUAL(a->off[f], b->off[f]);
		if (a->off[f] != b->off[f])
			fprintf(stderr, "%s.%s: %s has %d, %s has %d\n", s,
				mp_layout_member_name((enum mp_layout_field)f), a->name, (int)a->off[f],
				b->name, (int)b->off[f]);
	}
}

static void test_debug(void)
{
	mp_layout l;

	dwarf_of("debug", &l);
	CU_ASSERT_STRING_EQUAL(l.name, "dwarf");
	same_fields(&l, builtin("torch-2.6"), NULL);
}

static void test_debug_oldabi(void)
{
	mp_layout l;

	dwarf_of("debug-oldabi", &l);
	same_fields(&l, builtin("torch-2.6-oldabi"), NULL);
}

/* DeviceStats and TraceEntry edited to 2.14.1's shapes: what the 2.14 tables claim. */
static void test_mutant_stats(void)
{
	const mp_layout *t26 = builtin("torch-2.6");
	mp_layout l;

	dwarf_of("mutant-2.14-stats", &l);
	same_fields(&l, builtin("torch-2.14-cuda12"), "DeviceStats");
	same_fields(&l, builtin("torch-2.14-cuda13"), "TraceEntry");
	CU_ASSERT_EQUAL(l.off[MP_L_DS_SIZEOF], 1016);
	CU_ASSERT_EQUAL(l.off[MP_L_TE_SIZEOF], 136);
	/* In the mutant (2.6 code, 2.14 DeviceStats) everything after stats moves +40. The 2.14 tables no
	   longer rest on this: 2.14.1's own DeviceCachingAllocator (BlockPools of 168 bytes, more members) was
	   measured from the release's code (tests/testbed/c10/layouts-2.14.sh); only stats sits where the
	   mutant has it (2.14.1 adds device_id before large_blocks). */
	for (int f = MP_L_DCA_LARGE_BLOCKS; f <= MP_L_DCA_GRAPH_POOLS_FREEABLE; f++)
		CU_ASSERT_EQUAL(l.off[f], t26->off[f] + 40);
	CU_ASSERT_EQUAL(l.off[MP_L_DCA_SIZEOF], t26->off[MP_L_DCA_SIZEOF] + 40);
	CU_ASSERT_EQUAL(l.off[MP_L_DCA_STATS], builtin("torch-2.14-cuda13")->off[MP_L_DCA_STATS]);
	same_fields(&l, t26, "Block");
}

/* Block with the newer registration_counter: the 2.14 tables' Block. */
static void test_mutant_block(void)
{
	mp_layout l;

	dwarf_of("mutant-block-regcounter", &l);
	same_fields(&l, builtin("torch-2.14-cuda12"), "Block");
	same_fields(&l, builtin("torch-2.14-cuda13"), "Block");
	same_fields(&l, builtin("torch-2.6"), "DeviceStats");
}

/* A stripped build has no DWARF; its build-id leads to the debug build's in a debug root. */
static void test_stripped_debug_root(void)
{
	char *stripped = testbed_c10("stripped"), *debug = testbed_c10("debug");
	char root[] = "/tmp/memprof-debugroot-XXXXXX", dir[256], link[512], hex[130];
	const unsigned char *id;
	mp_elf *e = NULL;
	mp_layout l;
	mp_diag d = { 0 };
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(stripped);
	CU_ASSERT_PTR_NOT_NULL_FATAL(debug);
	CU_ASSERT_EQUAL(mp_layout_from_dwarf(stripped, "/nonexistent", &l, &d), MP_E_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "has no DWARF"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(stripped, &e, NULL), MP_OK);
	n = mp_elf_build_id(e, &id, NULL);
	CU_ASSERT_FATAL(n == 20);
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(dir, sizeof dir, "%s/.build-id", root);
	CU_ASSERT(mkdir(dir, 0700) == 0);
	snprintf(dir, sizeof dir, "%s/.build-id/%.2s", root, hex);
	CU_ASSERT(mkdir(dir, 0700) == 0);
	snprintf(link, sizeof link, "%s/%s.debug", dir, hex + 2);
	/* The stripped build is the debug build run through strip: same build-id. */
	CU_ASSERT_EQUAL(symlink(debug, link), 0);
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_layout_from_dwarf(stripped, root, &l, &d), MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.source, ".build-id/"));
	same_fields(&l, builtin("torch-2.6"), NULL);
	unlink(link);
	rmdir(dir);
	snprintf(dir, sizeof dir, "%s/.build-id", root);
	rmdir(dir);
	rmdir(root);
	mp_elf_close(e);
	free(stripped);
	free(debug);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "debug build = torch-2.6", test_debug },
		{ "debug-oldabi build = torch-2.6-oldabi", test_debug_oldabi },
		{ "mutant-2.14-stats = 2.14 DeviceStats/TraceEntry", test_mutant_stats },
		{ "mutant-block-regcounter = 2.14 Block", test_mutant_block },
		{ "stripped + separate debug file", test_stripped_debug_root },
	};

	testbed_require("test_layout_dwarf");
	return unit_run("layout_dwarf", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

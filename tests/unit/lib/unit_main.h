/* unit_main.h - the shared main of the CUnit test programs: run one table of tests as a suite. */
#ifndef MEMPROF_UNIT_MAIN_H
#define MEMPROF_UNIT_MAIN_H

#include <CUnit/Basic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_value.h"

struct unit_test {
	const char *name;
	CU_TestFunc fn;
};

/* Run TESTS (N of them) as the suite NAME, with INIT/CLEAN around it (either
   may be NULL). Returns the program's exit status: 0 when every assertion
   held, 1 when one failed, 2 when CUnit itself could not run. */
static inline int unit_run(const char *name, const struct unit_test *tests, size_t n,
			   CU_InitializeFunc init, CU_CleanupFunc clean)
{
	CU_pSuite suite;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	suite = CU_add_suite(name, init, clean);
	for (size_t i = 0; suite != NULL && i < n; i++)
		if (CU_add_test(suite, tests[i].name, tests[i].fn) == NULL)
			suite = NULL;
	if (suite == NULL) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed == 0 ? 0 : 1;
}

/* Check that GOT (an output taken from an mp_out; freed here) is EXPECT, and
   show both when not. */
static inline void unit_check_text(char *got, const char *expect)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, expect);
	if (strcmp(got, expect) != 0)
		fprintf(stderr, "\n--- expected\n%s--- got\n%s---\n", expect, got);
	free(got);
}

/* Atoms in HEAP for test data; a heap failure fails the test. */
static inline mp_val unit_str(mp_heap *heap, const char *s)
{
	mp_val v = MP_ABSENT;

	CU_ASSERT_FATAL(mp_heap_str(heap, s, strlen(s), &v) == MP_OK);
	return v;
}

static inline mp_val unit_int(mp_heap *heap, int64_t i)
{
	mp_val v = MP_ABSENT;

	CU_ASSERT_FATAL(mp_heap_int(heap, i, &v) == MP_OK);
	return v;
}

static inline mp_val unit_float(mp_heap *heap, double d)
{
	mp_val v = MP_ABSENT;

	CU_ASSERT_FATAL(mp_heap_float(heap, d, &v) == MP_OK);
	return v;
}

/* A frozen container of TYPE in HEAP from N items given as arguments (a dict:
   N key/value pairs, 2N arguments). */
static inline mp_val unit_make(mp_heap *heap, enum mp_vtype type, size_t n, ...)
{
	size_t nh = type == MP_T_DICT ? 2 * n : n;
	mp_val *items = calloc(nh + 1, sizeof *items), v = MP_ABSENT;
	va_list ap;

	CU_ASSERT_FATAL(items != NULL);
	va_start(ap, n);
	for (size_t i = 0; i < nh; i++)
		items[i] = va_arg(ap, mp_val);
	va_end(ap);
	CU_ASSERT_FATAL(mp_heap_make(heap, type, items, n, &v) == MP_OK);
	free(items);
	return v;
}

#define UNIT_RUN(name, tests, init, clean) \
	unit_run(name, tests, sizeof(tests) / sizeof(tests)[0], init, clean)

#endif

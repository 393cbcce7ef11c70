/* unit_main.h - the shared main of the CUnit test programs: run one table of tests as a suite. */
#ifndef MEMPROF_UNIT_MAIN_H
#define MEMPROF_UNIT_MAIN_H

#include <CUnit/Basic.h>
#include <stddef.h>

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

#define UNIT_RUN(name, tests, init, clean) \
	unit_run(name, tests, sizeof(tests) / sizeof(tests)[0], init, clean)

#endif

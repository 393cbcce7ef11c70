/* test_c10.c - symbols of the test bed's real libc10_cuda builds (stripped, old ABI), the PIE
   driver's copy relocation, and mp_c10_find on real cores of the scenario driver (skipped, exit
   77, only when there are no CUDA headers to build the test bed with). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../symbols/testbed.h"
#include "mp_c10.h"
#include "mp_elf.h"
#include "unit_main.h"

#define SYM_ALLOCATOR "_ZN3c104cuda20CUDACachingAllocator9allocatorE"
#define SYM_CONFIG "_ZZN3c104cuda20CUDACachingAllocator19CUDAAllocatorConfig8instanceEvE10s_instance"

static char tmpdir[] = "/tmp/memprof-test-c10-XXXXXX";

static void test_stripped(void)
{
	char *lib = testbed_c10("stripped");
	mp_elf *e = NULL;
	mp_elf_sym sym;
	uint64_t slot, vaddr;
	mp_diag d = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(lib, &e, &d), MP_OK);
	CU_ASSERT_FALSE(mp_elf_has_symtab(e));
	CU_ASSERT_FALSE(mp_elf_has_debug_info(e));
	CU_ASSERT_EQUAL(mp_elf_symbol(e, SYM_ALLOCATOR, MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, &d), MP_OK);
	CU_ASSERT(sym.defined && sym.from_dynsym && sym.size == 8 && sym.bind == 1 && sym.type == 1);
	CU_ASSERT_EQUAL(mp_elf_symbol(e, SYM_CONFIG, MP_ELF_DYNSYM, &sym, &d), MP_OK);
	CU_ASSERT(sym.defined && sym.size == 8 && sym.bind == MP_ELF_STB_GNU_UNIQUE);
	/* The library reaches its own exported objects through GOT slots. */
	CU_ASSERT_EQUAL(mp_elf_got_slot(e, SYM_ALLOCATOR, &slot, &d), MP_OK);
	CU_ASSERT_EQUAL(mp_elf_got_slot(e, SYM_CONFIG, &slot, &d), MP_OK);
	CU_ASSERT_EQUAL(mp_elf_find_string(e, MP_NATIVE_ALLOCATOR_RTTI, &vaddr, &d), MP_OK);
	CU_ASSERT_EQUAL(mp_elf_cxx11_abi(e), 1);
	CU_ASSERT(mp_elf_cuda_major(e) >= 12);
	CU_ASSERT_STRING_EQUAL(mp_elf_soname(e), "libc10_cuda.so");
	mp_elf_close(e);
	free(lib);
	lib = testbed_c10("stripped-oldabi");
	CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(lib, &e, &d), MP_OK);
	CU_ASSERT_EQUAL(mp_elf_cxx11_abi(e), 0);
	mp_elf_close(e);
	free(lib);
}

/* A PIE driver takes an R_X86_64_COPY of the allocator pointer; the default -fPIC one does not. */
static void test_driver_copy_reloc(void)
{
	char *pie = testbed_run("MEMPROF_DRIVER_PIE=1", "tests/testbed/scenarios/run.sh --driver");
	char *pic = testbed_run(NULL, "tests/testbed/scenarios/run.sh --driver");
	mp_elf *e = NULL;
	uint64_t dest = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pie);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pic);
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(pie, &e, NULL), MP_OK);
	CU_ASSERT(mp_elf_copy_reloc(e, SYM_ALLOCATOR, &dest));
	CU_ASSERT(dest != 0);
	mp_elf_close(e);
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(pic, &e, NULL), MP_OK);
	CU_ASSERT_FALSE(mp_elf_copy_reloc(e, SYM_ALLOCATOR, NULL));
	mp_elf_close(e);
	free(pie);
	free(pic);
}

/* Follow *allocator -> vptr -> typeinfo -> name, as allocator-facts §1.2 says. */
static void check_rtti(mp_target *t, const mp_c10 *c)
{
	uint64_t obj = 0, vptr = 0, ti = 0, name = 0;

	CU_ASSERT_EQUAL_FATAL(mp_target_read_u64(t, c->allocator_ptr_addr, &obj, NULL), MP_OK);
	CU_ASSERT_FATAL(obj != 0);
	CU_ASSERT_EQUAL_FATAL(mp_target_read_u64(t, obj, &vptr, NULL), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_target_read_u64(t, vptr - 8, &ti, NULL), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_target_read_u64(t, ti + 8, &name, NULL), MP_OK);
	CU_ASSERT_EQUAL(name, c->native_rtti_name_addr);
}

/* A gcore of scenario oom with the driver ENV builds; *T open on it. */
static void open_core(const char *env, const char *name, mp_target **t)
{
	char cmd[512], *core;
	mp_diag d = { 0 };

	snprintf(cmd, sizeof cmd, "tests/testbed/scenarios/core.sh oom gcore %s/%s", tmpdir, name);
	core = testbed_run(env, cmd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(core);
	if (mp_target_open_core(core, NULL, t, &d) != MP_OK)
		fprintf(stderr, "%s: %s\n", core, d.msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*t);
	free(core);
}

static void test_find_core(void)
{
	mp_target *t = NULL;
	mp_c10 c;
	mp_diag d = { 0 };
	static mp_layout cand[64]; /* DWARF and every table */
	size_t n;

	open_core(NULL, "pic", &t);
	if (mp_c10_find(t, &c, &d) != MP_OK)
		fprintf(stderr, "mp_c10_find: %s\n", d.msg);
	CU_ASSERT_STRING_EQUAL(d.msg, "");
	CU_ASSERT_PTR_NOT_NULL(strstr(c.local_path, "libc10_cuda.so"));
	CU_ASSERT(c.bias != 0 && c.bias % 4096 == 0);
	CU_ASSERT_EQUAL(c.build_id_len, 20);
	CU_ASSERT_FALSE(c.build_id_mismatch);
	CU_ASSERT_EQUAL(c.cxx11_abi, 1);
	CU_ASSERT(c.cuda_major >= 12);
	CU_ASSERT(c.has_dwarf); /* the default variant is the debug build */
	CU_ASSERT_PTR_NOT_NULL(strstr(c.allocator_how, "GOT slot"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.allocator_how, "agrees"));
	CU_ASSERT(c.config_instance_addr != 0);
	check_rtti(t, &c);
	/* DWARF first, then every table. */
	n = mp_c10_layout_candidates(&c, cand, 64, &d);
	CU_ASSERT_EQUAL(n, 1 + mp_layout_builtin_count());
	CU_ASSERT_STRING_EQUAL(cand[0].name, "dwarf");
	CU_ASSERT_STRING_EQUAL(cand[1].name, "torch-2.6");
	CU_ASSERT_EQUAL(memcmp(cand[0].off, cand[1].off, sizeof cand[0].off), 0);
	CU_ASSERT_EQUAL(mp_c10_layout_candidates(&c, cand, 1, &d), 1);
	mp_target_close(t);
}

/* The copy-relocation trap: the library's own allocator object stays 0; its GOT slot points at
   the executable's copy, which holds the live pointer. */
static void test_find_core_pie(void)
{
	mp_target *t = NULL;
	mp_c10 c;
	mp_diag d = { 0 };
	uint64_t own_value = 1;
	mp_elf *e = NULL;
	mp_elf_sym sym;

	open_core("MEMPROF_DRIVER_PIE=1", "pie", &t);
	if (mp_c10_find(t, &c, &d) != MP_OK)
		fprintf(stderr, "mp_c10_find: %s\n", d.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.allocator_how, "another object's copy"));
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(c.local_path, &e, NULL), MP_OK);
	CU_ASSERT_EQUAL(mp_elf_symbol(e, SYM_ALLOCATOR, MP_ELF_DYNSYM, &sym, NULL), MP_OK);
	CU_ASSERT(c.allocator_ptr_addr != c.bias + sym.value);
	CU_ASSERT_EQUAL(mp_target_read_u64(t, c.bias + sym.value, &own_value, NULL), MP_OK);
	CU_ASSERT_EQUAL(own_value, 0);
	check_rtti(t, &c);
	mp_elf_close(e);
	mp_target_close(t);
}

static int clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : 1;
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "stripped builds: .dynsym, GOT, RTTI string, ABI", test_stripped },
		{ "PIE driver: copy relocation", test_driver_copy_reloc },
		{ "mp_c10_find on a core", test_find_core },
		{ "mp_c10_find on a PIE driver's core", test_find_core_pie },
	};

	testbed_require("test_c10");
	if (mkdtemp(tmpdir) == NULL)
		return 2;
	return unit_run("c10", tests, sizeof tests / sizeof tests[0], NULL, clean);
}

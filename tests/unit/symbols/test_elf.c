/* test_elf.c - mp_elf on the files this very test has loaded: libc, libcunit and itself (its
   copy relocation of stderr is the copy-relocation trap in miniature). */
#include <gnu/libc-version.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_elf.h"
#include "unit_main.h"

/* A string only this program has, in its .rodata. */
static const char marker[] = "memprof-test_elf-marker-3f1c";

struct loaded {
	const char *needle;
	char path[4096];
	uint64_t bias;
	bool found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct loaded *l = ctx;

	(void)size;
	if (info->dlpi_name == NULL || strstr(info->dlpi_name, l->needle) == NULL)
		return 0;
	snprintf(l->path, sizeof l->path, "%s", info->dlpi_name);
	l->bias = info->dlpi_addr;
	l->found = true;
	return 1;
}

/* The loaded object whose path contains NEEDLE. */
static struct loaded loaded(const char *needle)
{
	struct loaded l = { .needle = needle };

	dl_iterate_phdr(find_object, &l);
	return l;
}

/* The lowest mapping of PATH with file offset 0, from /proc/self/maps (which names files by
   their real path: /lib is a link to /usr/lib on Debian). */
static uint64_t map_start(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4600], file[4096], real[4096];
	unsigned long long start, end, off, best = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(path, real));
	path = real;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &start, &end, &off, file) != 4)
			continue;
		if (off == 0 && strcmp(file, path) == 0 && (best == 0 || start < best))
			best = start;
	}
	fclose(f);
	return best;
}

static char *self_path(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);

	CU_ASSERT_FATAL(n > 0);
	path[n] = '\0';
	return path;
}

static void test_open_errors(void)
{
	char path[] = "/tmp/memprof-test-elf-XXXXXX";
	int fd = mkstemp(path);
	mp_elf *e = NULL;
	mp_diag d = { 0 };

	CU_ASSERT_EQUAL(mp_elf_open("/nonexistent/libc10_cuda.so", &e, &d), MP_E_ERRNO);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "cannot open '/nonexistent/libc10_cuda.so'"));
	CU_ASSERT_PTR_NULL(e);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_elf_open(path, &e, &d), MP_E_FORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "is not an ELF file"));
	unlink(path);
	mp_elf_close(NULL);
}

static void test_libc(void)
{
	struct loaded libc = loaded("libc.so.6");
	/* Before mp_elf_open: libelf mmaps the file, a second mapping at offset 0. */
	uint64_t start = map_start(libc.path);
	const unsigned char *id;
	uint64_t bias = 0, addr;
	mp_elf_sym sym;
	mp_elf *e = NULL;
	mp_diag d = { 0 };

	CU_ASSERT_FATAL(libc.found);
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(libc.path, &e, &d), MP_OK);
	CU_ASSERT(mp_elf_is_x86_64(e));
	CU_ASSERT_STRING_EQUAL(mp_elf_soname(e), "libc.so.6");
	CU_ASSERT(mp_elf_build_id(e, &id, &addr) >= 16);
	/* The build-id note is loaded: the process's memory holds the same bytes. */
	CU_ASSERT(addr != 0 && memcmp((const void *)(uintptr_t)(libc.bias + addr), id, 16) == 0);
	CU_ASSERT_EQUAL(mp_elf_load_bias(e, start, 0, &bias, &d), MP_OK);
	CU_ASSERT_EQUAL(bias, libc.bias);
	CU_ASSERT_EQUAL(mp_elf_symbol(e, "gnu_get_libc_version", MP_ELF_DYNSYM, &sym, &d), MP_OK);
	CU_ASSERT(sym.defined && sym.from_dynsym && sym.type == 2 /* STT_FUNC */);
	CU_ASSERT_EQUAL(bias + sym.value, (uint64_t)(uintptr_t)&gnu_get_libc_version);
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_elf_symbol(e, "no_such_symbol_here", MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, &d),
			MP_E_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "no symbol no_such_symbol_here"));
	CU_ASSERT_EQUAL(mp_elf_cuda_major(e), 0);
	mp_elf_close(e);
}

/* This program uses stderr, so (PIE or not) it takes an R_X86_64_COPY of it: libc's own stderr
   object is then unused, and libcunit's GOT slot for stderr holds the address of our copy. */
static void test_copy_relocation(void)
{
	struct loaded cunit = loaded("libcunit.so");
	const char *self = self_path();
	uint64_t start = map_start(self);
	mp_elf *exe = NULL, *lib = NULL;
	uint64_t dest, exe_bias = 0, slot;
	mp_diag d = { 0 };

	fprintf(stderr, "%s", "");
	CU_ASSERT_FATAL(cunit.found);
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(self, &exe, &d), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_elf_load_bias(exe, start, 0, &exe_bias, &d), MP_OK);
	CU_ASSERT_FATAL(mp_elf_copy_reloc(exe, "stderr", &dest));
	CU_ASSERT_EQUAL(exe_bias + dest, (uint64_t)(uintptr_t)&stderr);
	CU_ASSERT_FALSE(mp_elf_copy_reloc(exe, "no_such_symbol_here", NULL));
	CU_ASSERT_EQUAL_FATAL(mp_elf_open(cunit.path, &lib, &d), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_elf_got_slot(lib, "stderr", &slot, &d), MP_OK);
	CU_ASSERT_EQUAL(*(const uint64_t *)(uintptr_t)(cunit.bias + slot), (uint64_t)(uintptr_t)&stderr);
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_elf_got_slot(lib, "no_such_symbol_here", &slot, &d), MP_E_NOTFOUND);
	CU_ASSERT_FALSE(mp_elf_copy_reloc(lib, "stderr", NULL));
	CU_ASSERT_EQUAL(mp_elf_cxx11_abi(lib), -1); /* C library: no std::string */
	mp_elf_close(lib);
	mp_elf_close(exe);
}

static void test_strings_and_bytes(void)
{
	const char *self = self_path();
	uint64_t start = map_start(self);
	mp_elf *exe = NULL;
	uint64_t bias = 0, vaddr;
	char buf[sizeof marker];
	bool libc = false;
	mp_diag d = { 0 };

	CU_ASSERT_EQUAL_FATAL(mp_elf_open(self, &exe, &d), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_elf_load_bias(exe, start, 0, &bias, &d), MP_OK);
	CU_ASSERT_EQUAL_FATAL(mp_elf_find_string(exe, marker, &vaddr, &d), MP_OK);
	CU_ASSERT_EQUAL(bias + vaddr, (uint64_t)(uintptr_t)marker);
	/* Only whole strings: a suffix of the marker is not one. */
	CU_ASSERT_EQUAL(mp_elf_find_string(exe, marker + 3, &vaddr, NULL), MP_E_NOTFOUND);
	CU_ASSERT_EQUAL(mp_elf_read(exe, vaddr, buf, sizeof buf, &d), MP_OK);
	CU_ASSERT_STRING_EQUAL(buf, marker);
	mp_diag_reset(&d);
	CU_ASSERT_EQUAL(mp_elf_read(exe, 0x7fffffff0000ull, buf, 8, &d), MP_E_NOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "not in the file image"));
	/* This program links libmemprof statically (libmemprof_core.la): libc is what it surely needs. */
	for (size_t i = 0; i < mp_elf_needed_count(exe); i++)
		libc |= strncmp(mp_elf_needed(exe, i), "libc.so.", 8) == 0;
	CU_ASSERT(libc);
	CU_ASSERT_PTR_NULL(mp_elf_needed(exe, mp_elf_needed_count(exe)));
	CU_ASSERT_PTR_NULL(mp_elf_soname(exe));
	CU_ASSERT_STRING_EQUAL(mp_elf_path(exe), self);
	mp_elf_close(exe);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "open errors", test_open_errors },
		{ "libc: soname, build-id, bias, symbols", test_libc },
		{ "copy relocation and GOT slot", test_copy_relocation },
		{ "strings and file bytes", test_strings_and_bytes },
	};

	return unit_run("elf", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

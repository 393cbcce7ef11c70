/* test_core.c - the core reader and the core target on small cores built here: segments and
   holes, notes, files found by sysroot/solib path, build-id mismatch, and every truncation and
   flipped header or note byte (none may crash, every refusal says why in one line). */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_core.h"
#include "mp_target.h"
#include "unit_main.h"

#define CORE_SIZE 0x3000
#define NOTES_AT 0x120 /* after the ELF header and four program headers */
#define EXE_BASE 0x400000ull
#define DATA_MAP 0x500000ull
#define STACK 0x600000ull

static char dir[64];          /* the sysroot: bin/synth, lib/data.bin */
static char core_path[128];
/* Prefixed to the file names NT_FILE gives ("" : "/bin/synth"; a root: "ROOT/bin/synth", as gcore names the files
   of a chrooted process). */
static const char *nt_file_root = "";
static size_t notes_end;

static unsigned char *put_note(unsigned char *p, uint32_t type, const void *desc, uint32_t len)
{
	Elf64_Nhdr nh = { 5, len, type };

	memcpy(p, &nh, sizeof nh);
	memcpy(p + sizeof nh, "CORE\0\0\0", 8);
	memcpy(p + sizeof nh + 8, desc, len);
	return p + sizeof nh + 8 + ((len + 3) & ~3u);
}

/* A minimal ELF file image: header, one PT_NOTE, a GNU build-id note of ID (4 bytes). */
static void put_elf(unsigned char *p, uint32_t id)
{
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = 64, .e_ehsize = 64, .e_phentsize = 56, .e_phnum = 1 };
	Elf64_Phdr ph = { .p_type = PT_NOTE, .p_offset = 120, .p_filesz = 16 + 4, .p_align = 4 };
	Elf64_Nhdr nh = { 4, 4, NT_GNU_BUILD_ID };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(p, &eh, sizeof eh);
	memcpy(p + 64, &ph, sizeof ph);
	memcpy(p + 120, &nh, sizeof nh);
	memcpy(p + 132, "GNU", 4);
	memcpy(p + 136, &id, 4);
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* The core: a 2-page exe mapping of which the core holds the first, a data file mapping it
   leaves out (as gdb does), and a stack page. NT_FILE counts offsets in PAGE-byte pages. */
static size_t build_core(unsigned char *img, uint64_t page, uint64_t nt_file_count)
{
	Elf64_Ehdr eh = { .e_type = ET_CORE, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = 64, .e_ehsize = 64, .e_phentsize = 56, .e_phnum = 4 };
	Elf64_Phdr ph[4] = {
		{ .p_type = PT_NOTE, .p_offset = NOTES_AT, .p_align = 4 },
		{ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0x1000, .p_vaddr = EXE_BASE,
		  .p_filesz = 0x1000, .p_memsz = 0x2000, .p_align = 0x1000 },
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x2000, .p_vaddr = STACK,
		  .p_filesz = 0x1000, .p_memsz = 0x1000, .p_align = 0x1000 },
		{ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0x3000, .p_vaddr = 0x700000,
		  .p_filesz = 0, .p_memsz = 0x1000, .p_align = 0x1000 },
	};
	unsigned char status[336] = { 0 }, psinfo[136] = { 0 }, auxv[48] = { 0 }, file[256] = { 0 };
	unsigned char *p;
	size_t nf;

	memset(img, 0, CORE_SIZE);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	status[12] = 6;
	psinfo[24] = 0x92, psinfo[25] = 0x10; /* pid 4242 */
	memcpy(psinfo + 40, "synth", 5);
	memcpy(psinfo + 56, "synth -x    ", 12);
	put_u64(auxv, AT_PHDR), put_u64(auxv + 8, EXE_BASE + 64);
	put_u64(auxv + 16, AT_EXECFN), put_u64(auxv + 24, STACK + 16);
	put_u64(file, nt_file_count), put_u64(file + 8, page);
	put_u64(file + 16, EXE_BASE), put_u64(file + 24, EXE_BASE + 0x2000), put_u64(file + 32, 0);
	put_u64(file + 40, DATA_MAP), put_u64(file + 48, DATA_MAP + 0x1000);
	put_u64(file + 56, 0x2000 / page);
	nf = 64;
	nf += (size_t)sprintf((char *)file + nf, "%s/bin/synth", nt_file_root) + 1;
	nf += (size_t)sprintf((char *)file + nf, "%s/lib/data.bin", nt_file_root) + 1;
	p = put_note(img + NOTES_AT, NT_PRSTATUS, status, sizeof status);
	p = put_note(p, NT_PRPSINFO, psinfo, sizeof psinfo);
	p = put_note(p, NT_AUXV, auxv, sizeof auxv);
	p = put_note(p, NT_FILE, file, (uint32_t)nf);
	notes_end = (size_t)(p - img);
	ph[0].p_filesz = notes_end - NOTES_AT;
	memcpy(img, &eh, sizeof eh);
	memcpy(img + 64, ph, sizeof ph);
	put_elf(img + 0x1000, 0xaaaa);
	for (size_t i = 0x2000; i < 0x3000; i++)
		img[i] = (unsigned char)(i * 5);
	memcpy(img + 0x2010, "/bin/synth", 11);
	return CORE_SIZE;
}

static int write_raw(const char *path, const unsigned char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f != NULL && fwrite(data, 1, len, f) == len;

	return f != NULL && fclose(f) == 0 && ok ? 0 : -1;
}

static void write_file(const char *path, const unsigned char *data, size_t len)
{
	CU_ASSERT_FATAL(write_raw(path, data, len) == 0);
}

/* The executable on disk with build-id ID; its second page is all 'S'. */
static int write_exe(uint32_t id)
{
	unsigned char exe[0x2000] = { 0 };
	char path[128];

	put_elf(exe, id);
	memset(exe + 0x1000, 'S', 0x1000);
	snprintf(path, sizeof path, "%s/bin/synth", dir);
	return write_raw(path, exe, sizeof exe);
}

static int setup(void)
{
	static unsigned char img[CORE_SIZE], data[0x3000];
	char path[128];

	snprintf(dir, sizeof dir, "/tmp/memprof-core.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof path, "%s/bin", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/lib", dir);
	mkdir(path, 0700);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 3);
	snprintf(path, sizeof path, "%s/lib/data.bin", dir);
	snprintf(core_path, sizeof core_path, "%s/core", dir);
	if (write_raw(path, data, sizeof data) != 0 || write_exe(0xaaaa) != 0 ||
	    write_raw(core_path, img, build_core(img, 4096, 2)) != 0)
		return 1;
	return 0;
}

static int teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}

static void test_core_reader(void)
{
	mp_diag d = { 0 };
	mp_core *c;
	const mp_core_segment *s;
	const mp_core_file *f;
	const mp_core_info *i;
	unsigned char buf[16];
	enum mp_core_hole hole;
	uint64_t hole_len;

	CU_ASSERT_FATAL(mp_core_open(core_path, &c, &d) == MP_OK);
	CU_ASSERT_EQUAL(d.nwarn, 0);
	CU_ASSERT_EQUAL_FATAL(mp_core_segments(c, &s), 3);
	CU_ASSERT_EQUAL(s[0].vaddr, EXE_BASE);
	CU_ASSERT_EQUAL_FATAL(mp_core_files(c, &f), 2);
	CU_ASSERT_STRING_EQUAL(f[1].path, "/lib/data.bin");
	CU_ASSERT_EQUAL(f[1].file_offset, 0x2000);
	i = mp_core_get_info(c);
	CU_ASSERT_EQUAL(i->pid, 4242);
	CU_ASSERT_EQUAL(i->signo, 6);
	CU_ASSERT_STRING_EQUAL(i->fname, "synth");
	CU_ASSERT_STRING_EQUAL(i->psargs, "synth -x");
	CU_ASSERT_EQUAL(i->file_page_size, 4096);
	CU_ASSERT_EQUAL(i->nthreads, 1);
	CU_ASSERT_EQUAL(mp_core_read(c, EXE_BASE + 0xff8, buf, 16, &hole, &hole_len), 8);
	CU_ASSERT_EQUAL(hole, MP_CORE_HOLE_NOT_DUMPED);
	CU_ASSERT_EQUAL(hole_len, 8);
	CU_ASSERT_EQUAL(mp_core_read(c, DATA_MAP - 4, buf, 16, &hole, &hole_len), 0);
	CU_ASSERT_EQUAL(hole, MP_CORE_HOLE_UNMAPPED);
	CU_ASSERT_EQUAL(mp_core_read(c, 0x700000, buf, 16, &hole, &hole_len), 0);
	CU_ASSERT_EQUAL(hole, MP_CORE_HOLE_NOT_DUMPED);
	CU_ASSERT_EQUAL(mp_core_read(c, STACK, buf, 16, &hole, &hole_len), 16);
	CU_ASSERT_EQUAL(buf[1], (unsigned char)(0x2001 * 5));
	CU_ASSERT_FALSE(mp_core_truncated(c, NULL, NULL));
	mp_core_close(c);
}

static void test_target_core(void)
{
	mp_target_opts opts = { .sysroot = dir };
	mp_diag d = { 0 };
	mp_target *t;
	const mp_mapping *m;
	const mp_target_info *info;
	unsigned char buf[16];
	char local[160];

	CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
	CU_ASSERT_EQUAL(d.nwarn, 0);
	info = mp_target_get_info(t);
	CU_ASSERT_EQUAL(info->kind, MP_TARGET_CORE);
	CU_ASSERT_EQUAL(info->pid, 4242);
	CU_ASSERT_STRING_EQUAL(info->exe, "/bin/synth");
	CU_ASSERT_STRING_EQUAL(info->cmdline, "synth -x");
	CU_ASSERT_EQUAL_FATAL(mp_target_mappings(t, &m), 2);
	snprintf(local, sizeof local, "%s/bin/synth", dir);
	CU_ASSERT_STRING_EQUAL(m[0].local_path, local);
	CU_ASSERT_FALSE(mp_target_mapping_mismatch(t, &m[0]));
	/* The core's page, then the exe's second page from the file, in one read. */
	CU_ASSERT(mp_target_read(t, EXE_BASE + 0xff8, buf, 16, &d) == MP_OK);
	CU_ASSERT(memcmp(buf + 8, "SSSSSSSS", 8) == 0);
	/* A mapping the core left out entirely, at its file offset. */
	CU_ASSERT(mp_target_read(t, DATA_MAP + 1, buf, 1, &d) == MP_OK);
	CU_ASSERT_EQUAL(buf[0], (unsigned char)(0x2001 * 3));
	CU_ASSERT(mp_target_read(t, 0x700000, buf, 1, &d) == MP_E_NOTFOUND);
	CU_ASSERT(strstr(d.msg, "no mapped file covers it") != NULL);
	mp_target_close(t);

	/* solib_path finds by base name; a directory of the same name is not a file. */
	opts = (mp_target_opts){ .solib_path = "/nonexistent::/tmp" };
	snprintf(local, sizeof local, "/nonexistent:%s/bin:%s/lib", dir, dir);
	opts.solib_path = local;
	CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
	CU_ASSERT(mp_target_read(t, DATA_MAP, buf, 16, &d) == MP_OK);
	CU_ASSERT(mp_target_read(t, EXE_BASE + 0x1000, buf, 16, &d) == MP_OK);
	mp_target_close(t);
}

static void test_missing_and_mismatch(void)
{
	mp_target_opts opts = { .sysroot = "/nonexistent" };
	mp_diag d = { 0 };
	mp_target *t;
	const mp_mapping *m;
	unsigned char buf[16];

	CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
	CU_ASSERT_EQUAL(d.nwarn, 2);
	CU_ASSERT_EQUAL_FATAL(mp_target_mappings(t, &m), 2);
	CU_ASSERT_PTR_NULL(m[0].local_path);
	CU_ASSERT(mp_target_read(t, EXE_BASE + 0x1000, buf, 1, &d) == MP_E_NOTFOUND);
	CU_ASSERT(strstr(d.msg, "'/bin/synth', which is not found here") != NULL);
	mp_target_close(t);

	CU_ASSERT_FATAL(write_exe(0xbbbb) == 0);
	mp_diag_reset(&d);
	opts.sysroot = dir;
	CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
	CU_ASSERT_EQUAL(d.nwarn, 1);
	CU_ASSERT_EQUAL_FATAL(mp_target_mappings(t, &m), 2);
	CU_ASSERT(mp_target_mapping_mismatch(t, &m[0]));
	CU_ASSERT_FALSE(mp_target_mapping_mismatch(t, &m[1]));
	CU_ASSERT(mp_target_read(t, EXE_BASE + 0x1000, buf, 1, &d) == MP_E_NOTFOUND);
	CU_ASSERT(strstr(d.msg, "has another build-id") != NULL);
	CU_ASSERT(mp_target_read(t, EXE_BASE, buf, 4, &d) == MP_OK); /* the core's own page */
	mp_target_close(t);
	CU_ASSERT_FATAL(write_exe(0xaaaa) == 0);
}

/* A core that already names its files inside the sysroot (gcore of a chrooted process, from outside): --sysroot
   takes those paths as they are, however the root is spelled, and still prefixes the others. */
static void test_sysroot_already_inside(void)
{
	static unsigned char img[CORE_SIZE];
	char root_slash[80], link[80], local[160];
	const char *roots[3] = { dir, root_slash, link };
	mp_diag d = { 0 };
	mp_target *t;
	const mp_mapping *m;
	unsigned char buf[16];

	snprintf(root_slash, sizeof root_slash, "%s//", dir);
	snprintf(link, sizeof link, "%s.link", dir);
	CU_ASSERT_FATAL(symlink(dir, link) == 0);
	nt_file_root = dir;
	write_file(core_path, img, build_core(img, 4096, 2));
	for (int i = 0; i < 3; i++) {
		mp_target_opts opts = { .sysroot = roots[i] };

		mp_diag_reset(&d);
		CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
		CU_ASSERT_EQUAL(d.nwarn, 0);
		CU_ASSERT_EQUAL_FATAL(mp_target_mappings(t, &m), 2);
		snprintf(local, sizeof local, "%s/bin/synth", dir);
		CU_ASSERT_STRING_EQUAL(m[0].local_path, local);
		CU_ASSERT(mp_target_read(t, DATA_MAP + 1, buf, 1, &d) == MP_OK);
		CU_ASSERT_EQUAL(buf[0], (unsigned char)(0x2001 * 3));
		mp_target_close(t);
	}
	/* Not a prefix on a directory boundary: DIR.link/... is not inside DIR, so it is looked up under it. */
	nt_file_root = link;
	write_file(core_path, img, build_core(img, 4096, 2));
	{
		mp_target_opts opts = { .sysroot = dir };

		mp_diag_reset(&d);
		CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
		CU_ASSERT_EQUAL(d.nwarn, 2);
		CU_ASSERT_EQUAL_FATAL(mp_target_mappings(t, &m), 2);
		CU_ASSERT_PTR_NULL(m[0].local_path);
		mp_target_close(t);
	}
	nt_file_root = "";
	unlink(link);
	write_file(core_path, img, build_core(img, 4096, 2));
}

/* NT_FILE with gdb's page size 1: offsets in bytes. */
static void test_page_size_one(void)
{
	static unsigned char img[CORE_SIZE];
	mp_target_opts opts = { .sysroot = dir };
	mp_diag d = { 0 };
	mp_target *t;
	unsigned char b;

	write_file(core_path, img, build_core(img, 1, 2));
	CU_ASSERT_FATAL(mp_target_open_core(core_path, &opts, &t, &d) == MP_OK);
	CU_ASSERT(mp_target_read(t, DATA_MAP + 1, &b, 1, &d) == MP_OK);
	CU_ASSERT_EQUAL(b, (unsigned char)(0x2001 * 3));
	mp_target_close(t);
	/* A count the note cannot hold. */
	write_file(core_path, img, build_core(img, 4096, 1ull << 40));
	CU_ASSERT(mp_target_open_core(core_path, &opts, &t, &d) == MP_E_CORRUPT);
	CU_ASSERT(strstr(d.msg, "NT_FILE note is malformed") != NULL);
	write_file(core_path, img, build_core(img, 4096, 2));
}

/* Open PATH and read everywhere; a refusal must say why in one line. */
static bool probe(const char *path, bool *opened, unsigned *warnings)
{
	mp_target_opts opts = { .sysroot = dir };
	mp_diag d = { 0 };
	mp_target *t;
	unsigned char buf[64];
	uint64_t at[] = { EXE_BASE, EXE_BASE + 0x1000, DATA_MAP, STACK, STACK + 0xfc0, 0x700000 };

	*opened = mp_target_open_core(path, &opts, &t, &d) == MP_OK;
	*warnings = d.nwarn;
	if (!*opened)
		return d.msg[0] != '\0' && strchr(d.msg, '\n') == NULL;
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
		if (mp_target_read(t, at[i], buf, sizeof buf, &d) != MP_OK)
			mp_diag_reset(&d);
	mp_target_close(t);
	return true;
}

static void test_truncated(void)
{
	static unsigned char img[CORE_SIZE];
	char path[160];
	bool opened;
	unsigned warnings;

	build_core(img, 4096, 2);
	snprintf(path, sizeof path, "%s/cut", dir);
	write_file(path, img, CORE_SIZE);
	for (size_t len = CORE_SIZE + 1; len-- > 0;) {
		CU_ASSERT_FATAL(truncate(path, (off_t)len) == 0);
		CU_ASSERT_FATAL(probe(path, &opened, &warnings));
		/* Headers and notes complete: it opens, with a warning until the last byte. */
		CU_ASSERT_EQUAL_FATAL(opened, len >= notes_end);
		if (opened)
			CU_ASSERT_EQUAL_FATAL(warnings, len < CORE_SIZE ? 1 : 0);
	}
}

static void test_cut_reads(void)
{
	static unsigned char img[CORE_SIZE];
	char path[160];
	mp_target *t;
	mp_diag d = { 0 };
	unsigned char buf[0x100];

	build_core(img, 4096, 2);
	snprintf(path, sizeof path, "%s/cut", dir);
	write_file(path, img, 0x2080);
	CU_ASSERT_FATAL(mp_target_open_core(path, NULL, &t, &d) == MP_OK);
	CU_ASSERT(strstr(d.msg, "") != NULL);
	CU_ASSERT(mp_target_read(t, STACK, buf, 0x80, &d) == MP_OK);
	CU_ASSERT(mp_target_read(t, STACK + 0x40, buf, 0x80, &d) == MP_E_NOTFOUND);
	CU_ASSERT(strstr(d.msg, "0x600080 is unreadable: it lies past the end of the truncated core") != NULL);
	mp_target_close(t);
}

static void test_flipped(void)
{
	static unsigned char img[CORE_SIZE];
	char path[160];
	bool opened;
	unsigned warnings, refused = 0;
	int fd;
	const unsigned char masks[] = { 0xff, 0x80, 0x01, 0x10 };

	build_core(img, 4096, 2);
	snprintf(path, sizeof path, "%s/flip", dir);
	write_file(path, img, CORE_SIZE);
	fd = open(path, O_WRONLY);
	CU_ASSERT_FATAL(fd >= 0);
	for (size_t at = 0; at < notes_end; at++)
		for (size_t k = 0; k < sizeof masks; k++) {
			unsigned char b = img[at] ^ masks[k];

			CU_ASSERT_FATAL(pwrite(fd, &b, 1, (off_t)at) == 1);
			CU_ASSERT_FATAL(probe(path, &opened, &warnings));
			refused += !opened;
			CU_ASSERT_FATAL(pwrite(fd, &img[at], 1, (off_t)at) == 1);
		}
	close(fd);
	CU_ASSERT(refused > 0);
}

static void test_not_cores(void)
{
	mp_diag d = { 0 };
	mp_core *c;
	char path[160];

	CU_ASSERT(mp_core_open(dir, &c, &d) == MP_E_FORMAT);
	CU_ASSERT(strstr(d.msg, "is a directory") != NULL);
	snprintf(path, sizeof path, "%s/empty", dir);
	write_file(path, (const unsigned char *)"", 0);
	mp_diag_reset(&d);
	CU_ASSERT(mp_core_open(path, &c, &d) == MP_E_FORMAT);
	CU_ASSERT(strstr(d.msg, "is empty") != NULL);
	snprintf(path, sizeof path, "%s/bin/synth", dir);
	mp_diag_reset(&d);
	CU_ASSERT(mp_core_open(path, &c, &d) == MP_E_FORMAT);
	CU_ASSERT(strstr(d.msg, "is an ELF file but not a core") != NULL);
	mp_diag_reset(&d);
	CU_ASSERT(mp_core_open("/nonexistent/core", &c, &d) == MP_E_ERRNO);
	CU_ASSERT(strstr(d.msg, "cannot open '/nonexistent/core'") != NULL);
	CU_ASSERT_PTR_NULL(c);
}

static const struct unit_test tests[] = {
	{ "core reader", test_core_reader },
	{ "core target", test_target_core },
	{ "missing and mismatched files", test_missing_and_mismatch },
	{ "sysroot: files already inside it", test_sysroot_already_inside },
	{ "NT_FILE page size 1, bad count", test_page_size_one },
	{ "truncated at every length", test_truncated },
	{ "reads of a cut core", test_cut_reads },
	{ "flipped header and note bytes", test_flipped },
	{ "not cores", test_not_cores },
};

int main(void)
{
	return UNIT_RUN("core", tests, setup, teardown);
}

/* core_poke.c - read and damage a core file at target virtual addresses, for tests/walker/corrupt.sh.
 *
 *   core_poke CORE notes                       OFFSET SIZE of the first PT_NOTE
 *   core_poke CORE where ADDR                  OFFSET VADDR FILESZ of the PT_LOAD whose file bytes hold ADDR
 *   core_poke CORE peek ADDR [N]               N (default 1) little-endian u64 at ADDR, one "0x..." a line
 *   core_poke CORE poke ADDR VALUE             write VALUE as a little-endian u64 at ADDR
 *   core_poke CORE load ADDR                   write the values on standard input (peek's lines) from ADDR on
 *   core_poke CORE flip SEED COUNT ADDR LEN    xor COUNT bytes, picked by SEED, of [ADDR, ADDR+LEN) with
 *                                              non-zero values (only bytes the file holds)
 *
 * The program headers come from libelf; bytes are read and written with pread/pwrite at the file offset of
 * the PT_LOAD that holds them. Numbers take C syntax (0x...). Exit status 0 done, 1 the address is not in
 * the core's file bytes, 2 usage or I/O error. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "core_poke: %s\n", what);
	return 2;
}

static int num(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

/* The PT_LOAD (or PT_NOTE when TYPE says so) whose file bytes hold ADDR; for PT_NOTE the first one. */
static int find_phdr(Elf *e, int type, uint64_t addr, GElf_Phdr *out)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != (unsigned)type)
			continue;
		if (type == PT_NOTE || (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz)) {
			*out = ph;
			return 0;
		}
	}
	return -1;
}

/* File offset of LEN bytes at ADDR, all inside one PT_LOAD's file bytes. */
static int file_off(Elf *e, uint64_t addr, uint64_t len, uint64_t *off)
{
	GElf_Phdr ph;

	if (find_phdr(e, PT_LOAD, addr, &ph) != 0 || ph.p_filesz - (addr - ph.p_vaddr) < len)
		return -1;
	*off = ph.p_offset + (addr - ph.p_vaddr);
	return 0;
}

/* xorshift64*: reproducible across libcs. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

int main(int argc, char **argv)
{
	const char *cmd;
	uint64_t a[4] = { 0 };
	int fd, rc = 0, i;
	Elf *e;
	GElf_Phdr ph;

	if (argc < 3)
		return die("usage: core_poke CORE notes|where|peek|poke|flip ARGS...");
	cmd = argv[2];
	for (i = 3; i < argc && i < 7; i++)
		if (num(argv[i], &a[i - 3]) != 0)
			return die("bad number");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return die("libelf too old");
	fd = open(argv[1], !strcmp(cmd, "poke") || !strcmp(cmd, "flip") || !strcmp(cmd, "load") ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return die(strerror(errno));
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		close(fd);
		return die("not an ELF file");
	}
	if (!strcmp(cmd, "notes") && argc == 3) {
		if (find_phdr(e, PT_NOTE, 0, &ph) == 0)
			printf("%llu %llu\n", (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz);
		else
			rc = 1;
	} else if (!strcmp(cmd, "where") && argc == 4) {
		if (find_phdr(e, PT_LOAD, a[0], &ph) == 0)
			printf("%llu %#llx %llu\n", (unsigned long long)ph.p_offset, (unsigned long long)ph.p_vaddr,
			       (unsigned long long)ph.p_filesz);
		else
			rc = 1;
	} else if (!strcmp(cmd, "peek") && (argc == 4 || argc == 5)) {
		uint64_t n = argc == 5 ? a[1] : 1, off, v, k;

		if (n > 1u << 20 || file_off(e, a[0], n * 8, &off) != 0)
			rc = 1;
		for (k = 0; !rc && k < n; k++) {
			if (pread(fd, &v, 8, (off_t)(off + 8 * k)) != 8)
				rc = 2;
			else
				printf("%#llx\n", (unsigned long long)v);
		}
	} else if (!strcmp(cmd, "poke") && argc == 5) {
		uint64_t off;

		if (file_off(e, a[0], 8, &off) != 0)
			rc = 1;
		else if (pwrite(fd, &a[1], 8, (off_t)off) != 8)
			rc = 2;
	} else if (!strcmp(cmd, "load") && argc == 4) {
		char line[64];
		uint64_t v, off, k = 0;

		while (!rc && fgets(line, sizeof line, stdin) != NULL) {
			if (num(strtok(line, "\n"), &v) != 0)
				rc = 2;
			else if (file_off(e, a[0] + 8 * k++, 8, &off) != 0)
				rc = 1;
			else if (pwrite(fd, &v, 8, (off_t)off) != 8)
				rc = 2;
		}
	} else if (!strcmp(cmd, "flip") && argc == 7) {
		uint64_t s = a[0] * 0x9e3779b97f4a7c15ull + 1, k;

		for (k = 0; k < a[1] && a[3]; k++) {
			uint64_t at = a[2] + rnd(&s) % a[3], off;
			unsigned char b;

			if (file_off(e, at, 1, &off) != 0)
				continue;
			if (pread(fd, &b, 1, (off_t)off) != 1)
				rc = 2;
			b ^= (unsigned char)(1 + rnd(&s) % 255);
			if (!rc && pwrite(fd, &b, 1, (off_t)off) != 1)
				rc = 2;
		}
	} else {
		rc = die("usage: core_poke CORE notes|where ADDR|peek ADDR [N]|poke ADDR VALUE|load ADDR|"
			 "flip SEED COUNT ADDR LEN");
	}
	if (rc == 1)
		fprintf(stderr, "core_poke: %s: address not in the core's file bytes\n", argv[1]);
	elf_end(e);
	close(fd);
	return rc;
}

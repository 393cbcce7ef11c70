/* read_core.c - a CLI-free driver of the target interface for the shell tests:
   read_core [OPTIONS] core PATH|pid PID [COMMAND...]
   OPTIONS: --sysroot DIR, --solib-path DIRS, --stop, --proc-mem.
   COMMANDS: info; maps; read ADDR LEN (hex bytes); cstr ADDR; pattern ADDR LEN (the helper's
   (i * 7 + 3) bytes); state (the process's /proc state letter); mapsof SUBSTR; buildid SUBSTR (from memory
   and from the local file); flush.
   Warnings go to stderr as "warning: ..."; a failed open exits 2, a failed command 1.
   read_core mutate CORE SCRATCH: open copies of CORE cut short and with flipped bytes in
   SCRATCH; every one must open or fail with a one-line message (exit 1 when not). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_buildid.h"
#include "mp_target.h"

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "warning: %s\n", line);
}

static int cmd_read(mp_target *t, const char *a, const char *l, mp_diag *d)
{
	uint64_t addr = strtoull(a, NULL, 16);
	size_t len = strtoul(l, NULL, 0);
	unsigned char *buf = malloc(len ? len : 1);

	if (buf == NULL || mp_target_read(t, addr, buf, len, d) != MP_OK) {
		printf("error: %s\n", d->msg);
		free(buf);
		return 1;
	}
	for (size_t i = 0; i < len; i++)
		printf("%02x", buf[i]);
	printf("\n");
	free(buf);
	return 0;
}

static int cmd_pattern(mp_target *t, const char *a, const char *l, mp_diag *d)
{
	uint64_t addr = strtoull(a, NULL, 16);
	size_t len = strtoul(l, NULL, 0), bad = 0;
	unsigned char *buf = malloc(len ? len : 1);

	if (buf == NULL || mp_target_read(t, addr, buf, len, d) != MP_OK) {
		printf("error: %s\n", d->msg);
		free(buf);
		return 1;
	}
	for (size_t i = 0; i < len; i++)
		bad += buf[i] != (unsigned char)(i * 7 + 3);
	printf(bad ? "pattern differs in %zu bytes\n" : "pattern ok\n", bad);
	free(buf);
	return bad != 0;
}

static int cmd_cstr(mp_target *t, const char *a, mp_diag *d)
{
	char *s;
	size_t n;

	if (mp_target_read_cstr(t, strtoull(a, NULL, 16), 1 << 20, &s, &n, d) != MP_OK) {
		printf("error: %s\n", d->msg);
		return 1;
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

static int cmd_info(mp_target *t)
{
	const mp_target_info *i = mp_target_get_info(t);

	printf("kind %d\norigin %s\npid %d\nexe %s\ncmdline %s\n", (int)i->kind, i->origin, i->pid,
	       i->exe ? i->exe : "(none)", i->cmdline ? i->cmdline : "(none)");
	return 0;
}

static int cmd_maps(mp_target *t, const char *only)
{
	const mp_mapping *m;
	size_t n = mp_target_mappings(t, &m);

	for (size_t i = 0; i < n; i++)
		if (only == NULL || strstr(m[i].path, only) != NULL)
			printf("%llx-%llx %llx %s -> %s%s\n", (unsigned long long)m[i].start,
			       (unsigned long long)m[i].end, (unsigned long long)m[i].file_offset,
			       m[i].path, m[i].local_path ? m[i].local_path : "(not found)",
			       mp_target_mapping_mismatch(t, &m[i]) ? " MISMATCH" : "");
	return 0;
}

/* The build-id of the first mapping whose path holds SUB: from memory, then from its file. */
static int cmd_buildid(mp_target *t, const char *sub, mp_diag *d)
{
	const mp_mapping *m;
	size_t n = mp_target_mappings(t, &m), len;
	mp_buildid mem = { 0 }, disk = { 0 };
	char hm[2 * MP_BUILDID_MAX + 1], hd[2 * MP_BUILDID_MAX + 1];
	int fd;

	for (size_t i = 0; i < n; i++) {
		if (strstr(m[i].path, sub) == NULL)
			continue;
		if (mp_target_mapping_build_id(t, &m[i], mem.bytes, sizeof mem.bytes, &len, d) != MP_OK) {
			printf("error: %s\n", d->msg);
			return 1;
		}
		mem.len = len;
		fd = m[i].local_path ? open(m[i].local_path, O_RDONLY) : -1;
		if (fd < 0 || mp_buildid_of_fd(fd, &disk, d) != MP_OK)
			disk.len = 0;
		if (fd >= 0)
			close(fd);
		mp_buildid_hex(&mem, hm, sizeof hm);
		mp_buildid_hex(&disk, hd, sizeof hd);
		printf("buildid memory %s file %s\n", hm, hd);
		return 0;
	}
	printf("error: no mapping of '%s'\n", sub);
	return 1;
}

static int cmd_state(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL || fgets(buf, sizeof buf, f) == NULL) {
		printf("state ?\n");
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	printf("state %c\n", p && p[1] && p[2] ? p[2] : '?');
	return 0;
}

static int run(mp_target *t, int argc, char **argv)
{
	int rc = 0;

	for (int i = 0; i < argc; i++) {
		mp_diag d = { .warn = warn_line };
		const char *c = argv[i];

		if (strcmp(c, "info") == 0)
			rc |= cmd_info(t);
		else if (strcmp(c, "maps") == 0)
			rc |= cmd_maps(t, NULL);
		else if (strcmp(c, "mapsof") == 0 && i + 1 < argc)
			rc |= cmd_maps(t, argv[++i]);
		else if (strcmp(c, "read") == 0 && i + 2 < argc)
			rc |= cmd_read(t, argv[i + 1], argv[i + 2], &d), i += 2;
		else if (strcmp(c, "pattern") == 0 && i + 2 < argc)
			rc |= cmd_pattern(t, argv[i + 1], argv[i + 2], &d), i += 2;
		else if (strcmp(c, "cstr") == 0 && i + 1 < argc)
			rc |= cmd_cstr(t, argv[++i], &d);
		else if (strcmp(c, "buildid") == 0 && i + 1 < argc)
			rc |= cmd_buildid(t, argv[++i], &d);
		else if (strcmp(c, "state") == 0)
			rc |= cmd_state(mp_target_get_info(t)->pid);
		else if (strcmp(c, "flush") == 0)
			mp_target_flush(t);
		else {
			fprintf(stderr, "read_core: bad command '%s'\n", c);
			return 2;
		}
		fflush(stdout);
	}
	return rc;
}

/* Write LEN bytes of DATA to PATH. */
static int put(const char *path, const unsigned char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f != NULL && fwrite(data, 1, len, f) == len;

	return (f != NULL && fclose(f) == 0 && ok) ? 0 : -1;
}

/* Write byte B at AT of PATH in place. */
static int poke(const char *path, size_t at, unsigned char b)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && pwrite(fd, &b, 1, (off_t)at) == 1;

	return (fd >= 0 && close(fd) == 0 && ok) ? 0 : -1;
}

/* Open PATH as a core and read a little everywhere; 0 when it behaved, 1 when not. */
static int probe(const char *path, unsigned *opened, unsigned *refused)
{
	mp_diag d = { 0 };
	mp_target *t;
	const mp_mapping *m;
	size_t n;
	unsigned char buf[64];

	if (mp_target_open_core(path, NULL, &t, &d) != MP_OK) {
		(*refused)++;
		if (d.msg[0] == '\0' || strchr(d.msg, '\n') != NULL) {
			fprintf(stderr, "mutate: bad message for %s: '%s'\n", path, d.msg);
			return 1;
		}
		return 0;
	}
	(*opened)++;
	n = mp_target_mappings(t, &m);
	for (size_t i = 0; i < n; i++)
		if (mp_target_read(t, m[i].start, buf, sizeof buf, &d) != MP_OK)
			mp_diag_reset(&d);
	mp_target_close(t);
	return 0;
}

static int mutate(const char *core, const char *scratch)
{
	struct stat st;
	unsigned char *img;
	size_t size, head, len;
	unsigned opened = 0, refused = 0, bad = 0;
	FILE *f = fopen(core, "rb");

	if (f == NULL || fstat(fileno(f), &st) != 0)
		return 2;
	size = (size_t)st.st_size;
	img = malloc(size);
	if (img == NULL || fread(img, 1, size, f) != size || put(scratch, img, size) != 0)
		return 2;
	fclose(f);
	head = size < 16384 ? size : 16384;
	/* Flipped bytes in the headers and notes, one at a time. */
	for (size_t at = 0; at < head; at += 1 + at / 256) {
		if (poke(scratch, at, (unsigned char)(img[at] ^ (0xa5 ^ (at & 0x5a)))) != 0)
			return 2;
		bad += probe(scratch, &opened, &refused);
		if (poke(scratch, at, img[at]) != 0)
			return 2;
	}
	printf("flipped: %u opened, %u refused\n", opened, refused);
	opened = refused = 0;
	/* Cut short: a spread over the memory, then every length in the headers and notes. */
	for (len = size; len > 0;) {
		len -= len > head ? (size - head) / 97 + 1 : 1 + len / 64;
		if (truncate(scratch, (off_t)len) != 0)
			return 2;
		bad += probe(scratch, &opened, &refused);
	}
	printf("truncated: %u opened, %u refused\n", opened, refused);
	free(img);
	unlink(scratch);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	mp_target_opts opts = { 0 };
	mp_diag d = { .warn = warn_line };
	mp_target *t = NULL;
	mp_err err;
	int i = 1, rc;

	for (; i + 1 < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--sysroot") == 0)
			opts.sysroot = argv[++i];
		else if (strcmp(argv[i], "--solib-path") == 0)
			opts.solib_path = argv[++i];
		else if (strcmp(argv[i], "--stop") == 0)
			opts.stop = true;
		else if (strcmp(argv[i], "--proc-mem") == 0)
			opts.proc_mem = true;
		else
			break;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: read_core [OPTIONS] core PATH|pid PID|mutate CORE SCRATCH [COMMAND...]\n");
		return 2;
	}
	if (strcmp(argv[i], "mutate") == 0 && i + 2 < argc)
		return mutate(argv[i + 1], argv[i + 2]);
	if (strcmp(argv[i], "core") == 0)
		err = mp_target_open_core(argv[i + 1], &opts, &t, &d);
	else if (strcmp(argv[i], "pid") == 0)
		err = mp_target_open_pid((pid_t)atoi(argv[i + 1]), &opts, &t, &d);
	else
		err = MP_E_USAGE;
	if (err != MP_OK) {
		fprintf(stderr, "read_core: %s\n", d.msg[0] ? d.msg : mp_strerror(err));
		return 2;
	}
	rc = run(t, argc - i - 2, argv + i + 2);
	mp_target_close(t);
	return rc;
}

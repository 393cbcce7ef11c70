/* target_core.c - a target over a core file: the core's bytes first, then the mapped files on
   disk for what the core left out, with each file's build-id checked against the core. */
#include "target_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_buildid.h"
#include "mp_core.h"

/* How much of a mapping's start is read from the core to find its build-id. */
#define IMAGE_MAX (64u * 1024)
/* Missing-file warnings named one by one before a count stands for the rest. */
#define MISSING_NAMED 8

/* A distinct mapped file. */
struct core_file {
	const char *local;  /* the mapping's local_path (owned by the target), NULL: not found */
	int fd;             /* -1 until first read; -2 when it cannot be opened */
	uint64_t size;
	bool mismatch;
};

struct core_src {
	mp_core *core;
	struct core_file *files;
	size_t nfiles;
	size_t *file_of; /* per mapping: index in FILES */
};

static int file_open(struct core_file *f)
{
	struct stat st;

	if (f->fd == -1) {
		f->fd = open(f->local, O_RDONLY | O_CLOEXEC);
		if (f->fd >= 0 && fstat(f->fd, &st) == 0)
			f->size = (uint64_t)st.st_size;
		else if (f->fd >= 0)
			close(f->fd), f->fd = -2;
		else
			f->fd = -2;
	}
	return f->fd;
}

/* Bytes of mapping I at ADDR from its file: what the file holds, then zeros to the end of the
   file's last page (as the kernel maps it). */
static size_t file_bytes(struct core_src *s, const mp_mapping *m, size_t i, uint64_t addr,
			 unsigned char *buf, size_t len)
{
	struct core_file *f = &s->files[s->file_of[i]];
	uint64_t off = m->file_offset + (addr - m->start), page_end;
	size_t done = 0;

	if (f->local == NULL || f->mismatch || off < m->file_offset || file_open(f) < 0)
		return 0;
	if (len > m->end - addr)
		len = (size_t)(m->end - addr);
	while (done < len && off + done < f->size) {
		size_t want = len - done;
		ssize_t n;

		if (want > f->size - (off + done))
			want = (size_t)(f->size - (off + done));
		n = pread(f->fd, buf + done, want, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done;
		done += (size_t)n;
	}
	page_end = (f->size + TARGET_PAGE - 1) & ~(uint64_t)(TARGET_PAGE - 1);
	if (done < len && off + done >= f->size && off + done < page_end) {
		size_t z = (size_t)(page_end - (off + done));

		if (z > len - done)
			z = len - done;
		memset(buf + done, 0, z);
		done += z;
	}
	return done;
}

/* Bytes at ADDR from the mapped files, across adjacent mappings. */
static size_t files_read(mp_target *t, uint64_t addr, unsigned char *buf, size_t len)
{
	struct core_src *s = t->src;
	size_t done = 0;

	while (done < len) {
		ptrdiff_t i = target_find_mapping(t, addr + done);
		size_t n, want;

		if (i < 0)
			break;
		want = len - done;
		if (want > t->maps[i].end - (addr + done))
			want = (size_t)(t->maps[i].end - (addr + done));
		n = file_bytes(s, &t->maps[i], (size_t)i, addr + done, buf + done, want);
		done += n;
		if (n < want)
			break;
	}
	return done;
}

static size_t core_src_read(mp_target *t, uint64_t addr, void *buf, size_t len)
{
	struct core_src *s = t->src;
	unsigned char *b = buf;
	size_t done = 0;

	while (done < len) {
		enum mp_core_hole hole;
		uint64_t hole_len;
		size_t n = mp_core_read(s->core, addr + done, b + done, len - done, &hole, &hole_len);

		done += n;
		if (done == len)
			break;
		/* Only what the core never held comes from the files: bytes a truncated core lost
		   may have differed from the file's. */
		if (hole != MP_CORE_HOLE_UNMAPPED && hole != MP_CORE_HOLE_NOT_DUMPED)
			break;
		n = files_read(t, addr + done, b + done, (size_t)hole_len);
		done += n;
		if (n < hole_len)
			break;
	}
	return done;
}

static void core_src_explain(mp_target *t, uint64_t addr, char *msg, size_t len)
{
	struct core_src *s = t->src;
	enum mp_core_hole hole;
	unsigned char byte;
	ptrdiff_t i;
	const struct core_file *f;

	if (mp_core_read(s->core, addr, &byte, 1, &hole, NULL) == 1)
		return;
	if (hole == MP_CORE_HOLE_TRUNCATED) {
		snprintf(msg, len, "it lies past the end of the truncated core");
		return;
	}
	if (hole == MP_CORE_HOLE_IO) {
		snprintf(msg, len, "reading the core failed");
		return;
	}
	i = target_find_mapping(t, addr);
	if (i < 0) {
		snprintf(msg, len, hole == MP_CORE_HOLE_UNMAPPED ? "the core does not cover it"
			 : "the core did not dump it and no mapped file covers it");
		return;
	}
	f = &s->files[s->file_of[i]];
	if (f->local == NULL)
		snprintf(msg, len, "the core left it to '%s', which is not found here (try a sysroot "
			 "or solib path)", t->maps[i].path);
	else if (f->mismatch)
		snprintf(msg, len, "the core left it to '%s', but '%s' has another build-id",
			 t->maps[i].path, f->local);
	else
		snprintf(msg, len, "the core left it to '%s', which does not hold it", f->local);
}

static void core_src_close(mp_target *t)
{
	struct core_src *s = t->src;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].fd >= 0)
			close(s->files[i].fd);
	free(s->files);
	free(s->file_of);
	mp_core_close(s->core);
	free(s);
}

static const void *core_src_direct(mp_target *t, uint64_t addr, size_t len)
{
	return mp_core_direct(((struct core_src *)t->src)->core, addr, len);
}

static const struct target_ops core_ops = {
	.read = core_src_read,
	.direct = core_src_direct,
	.explain = core_src_explain,
	.close = core_src_close,
};

/* Whether PATH names something no machine holds as a file to read: a device (a GPU's /dev/nvidia*), a file
   deleted since it was mapped, a memfd or SysV shared memory. Its pages are in the core or nowhere, and
   saying so for each would only be noise in the cores of every GPU process. */
static bool no_file_behind(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path);

	return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/SYSV", 5) == 0 ||
	       (len >= sizeof deleted - 1 && strcmp(path + len - (sizeof deleted - 1), deleted) == 0);
}

/* The mappings from NT_FILE, with their local files found (each distinct path once). */
static mp_err add_mappings(mp_target *t, const mp_target_opts *opts, mp_diag *diag)
{
	struct core_src *s = t->src;
	const mp_core_file *cf;
	size_t n = mp_core_files(s->core, &cf), missing = 0;
	mp_err err;

	for (size_t i = 0; i < n; i++) {
		const char *local = NULL;
		char *found = NULL;

		for (size_t j = 0; j < t->nmaps && local == NULL; j++)
			if (strcmp(t->maps[j].path, cf[i].path) == 0)
				local = t->maps[j].local_path;
		if (local == NULL && (found = target_find_file(cf[i].path, opts)) == NULL) {
			bool seen = false;

			for (size_t j = 0; j < t->nmaps && !seen; j++)
				seen = strcmp(t->maps[j].path, cf[i].path) == 0;
			if (!seen && !no_file_behind(cf[i].path) && ++missing <= MISSING_NAMED)
				mp_warn(diag, "mapped file '%s' not found here; what the core left of it "
					"is unreadable", cf[i].path);
		}
		err = target_add_mapping(t, cf[i].start, cf[i].end, cf[i].file_offset, cf[i].path,
					 local != NULL ? local : found, diag);
		free(found);
		if (err != MP_OK)
			return err;
	}
	if (missing > MISSING_NAMED)
		mp_warn(diag, "%zu more mapped files not found here", missing - MISSING_NAMED);
	target_sort_mappings(t);
	return MP_OK;
}

/* One core_file per distinct path, and each mapping's index among them. */
static mp_err index_files(mp_target *t, mp_diag *diag)
{
	struct core_src *s = t->src;

	s->files = calloc(t->nmaps ? t->nmaps : 1, sizeof *s->files);
	s->file_of = calloc(t->nmaps ? t->nmaps : 1, sizeof *s->file_of);
	if (s->files == NULL || s->file_of == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	for (size_t i = 0; i < t->nmaps; i++) {
		size_t j = 0;

		while (j < i && strcmp(t->maps[j].path, t->maps[i].path) != 0)
			j++;
		if (j < i) {
			s->file_of[i] = s->file_of[j];
			continue;
		}
		s->file_of[i] = s->nfiles;
		s->files[s->nfiles].local = t->maps[i].local_path;
		s->files[s->nfiles].fd = -1;
		s->nfiles++;
	}
	return MP_OK;
}

/* Compare the build-id of file FI with the one in the core's copy of its first page. */
static void check_build_id(mp_target *t, size_t fi, unsigned char *image, mp_diag *diag)
{
	struct core_src *s = t->src;
	struct core_file *f = &s->files[fi];
	mp_buildid mem, disk;
	char hm[2 * MP_BUILDID_MAX + 1], hd[2 * MP_BUILDID_MAX + 1];
	size_t i, got, want;
	int fd;
	mp_err err;

	for (i = 0; i < t->nmaps; i++)
		if (s->file_of[i] == fi && t->maps[i].file_offset == 0)
			break;
	if (i == t->nmaps)
		return;
	want = t->maps[i].end - t->maps[i].start < IMAGE_MAX
	       ? (size_t)(t->maps[i].end - t->maps[i].start) : IMAGE_MAX;
	got = mp_core_read(s->core, t->maps[i].start, image, want, NULL, NULL);
	if (mp_buildid_of_image(image, got, &mem, NULL) != MP_OK)
		return; /* not ELF, or the core did not keep its headers: nothing to compare */
	fd = open(f->local, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	err = mp_buildid_of_fd(fd, &disk, NULL);
	close(fd);
	if (err != MP_OK || mp_buildid_equal(&mem, &disk))
		return;
	f->mismatch = true;
	for (size_t j = 0; j < t->nmaps; j++)
		if (s->file_of[j] == fi)
			t->mismatch[j] = true;
	mp_buildid_hex(&mem, hm, sizeof hm);
	mp_buildid_hex(&disk, hd, sizeof hd);
	mp_warn(diag, "'%s' is not the file the core mapped as '%s' (build-id %s, the core's %s); "
		"its pages are not read", f->local, t->maps[i].path, hd, hm);
}

static mp_err check_build_ids(mp_target *t, mp_diag *diag)
{
	struct core_src *s = t->src;
	unsigned char *image = malloc(IMAGE_MAX);

	if (image == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	for (size_t fi = 0; fi < s->nfiles; fi++)
		if (s->files[fi].local != NULL)
			check_build_id(t, fi, image, diag);
	free(image);
	return MP_OK;
}

/* pid, executable and command line from the notes (and AT_EXECFN from memory). */
static mp_err set_info(mp_target *t, mp_diag *diag)
{
	struct core_src *s = t->src;
	const mp_core_info *ci = mp_core_get_info(s->core);
	char execfn[4097];
	const char *exe = ci->fname;
	ptrdiff_t i = ci->at_phdr ? target_find_mapping(t, ci->at_phdr) : -1;
	size_t n;

	t->info.pid = ci->pid;
	if (i >= 0) {
		exe = t->maps[i].path;
	} else if (ci->at_execfn != 0) {
		n = mp_core_read(s->core, ci->at_execfn, execfn, sizeof execfn - 1, NULL, NULL);
		execfn[n] = '\0';
		if (n > 0 && strlen(execfn) < n)
			exe = execfn;
	}
	if (target_set_string(&t->exe, exe, diag) != MP_OK ||
	    target_set_string(&t->cmdline, ci->psargs, diag) != MP_OK)
		return MP_E_NOMEM;
	t->info.exe = t->exe;
	t->info.cmdline = t->cmdline;
	return MP_OK;
}

mp_err mp_target_open_core(const char *path, const mp_target_opts *opts, mp_target **out,
			   mp_diag *diag)
{
	struct core_src *s;
	mp_target *t;
	mp_err err;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if ((err = mp_core_open(path, &s->core, diag)) != MP_OK) {
		free(s);
		return err;
	}
	if ((err = target_new(MP_TARGET_CORE, &core_ops, s, path, &t, diag)) != MP_OK) {
		mp_core_close(s->core);
		free(s);
		return err;
	}
	if ((err = add_mappings(t, opts, diag)) != MP_OK || (err = index_files(t, diag)) != MP_OK || (err = check_build_ids(t, diag)) != MP_OK ||
	    (err = set_info(t, diag)) != MP_OK) {
		mp_target_close(t);
		return err;
	}
	*out = t;
	return MP_OK;
}

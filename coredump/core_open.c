/* core_open.c - open an ELF core with libelf, check its headers, and read the memory it holds. */
#include "core_int.h"
#include "mp_array.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int seg_cmp(const void *a, const void *b)
{
	const mp_core_segment *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static mp_err open_file(mp_core *c, mp_diag *diag)
{
	struct stat st;

	c->fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return mp_fail(diag, MP_E_ERRNO, "cannot open '%s': %s", c->path, strerror(errno));
	if (fstat(c->fd, &st) != 0)
		return mp_fail(diag, MP_E_ERRNO, "cannot stat '%s': %s", c->path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return mp_fail(diag, MP_E_FORMAT, "'%s' is a directory, not a core file", c->path);
	if (!S_ISREG(st.st_mode))
		return mp_fail(diag, MP_E_FORMAT, "'%s' is not a regular file", c->path);
	if (st.st_size == 0)
		return mp_fail(diag, MP_E_FORMAT, "'%s' is empty, not a core file", c->path);
	c->size = (uint64_t)st.st_size;
	/* Reading a walk's many small structs from a mapping costs a memcpy each, not a system
	   call; without the mapping, reads fall back to pread. */
	if (c->size > 0 && c->size <= SIZE_MAX) {
		void *m = mmap(NULL, (size_t)c->size, PROT_READ, MAP_PRIVATE, c->fd, 0);

		c->map = m == MAP_FAILED ? NULL : m;
	}
	return MP_OK;
}

/* The ELF header: a 64-bit little-endian ET_CORE. */
static mp_err check_header(mp_core *c, mp_diag *diag)
{
	GElf_Ehdr eh;
	const char *ident;

	c->elf = elf_begin(c->fd, ELF_C_READ, NULL);
	if (c->elf == NULL || elf_kind(c->elf) != ELF_K_ELF)
		return mp_fail(diag, MP_E_FORMAT, "'%s' is not an ELF file", c->path);
	ident = elf_getident(c->elf, NULL);
	if (ident == NULL || gelf_getehdr(c->elf, &eh) == NULL)
		return mp_fail(diag, MP_E_TRUNCATED, "'%s': ELF header unreadable: %s", c->path,
			       elf_errmsg(-1));
	if (ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB)
		return mp_fail(diag, MP_E_UNSUPPORTED,
			       "'%s' is not a 64-bit little-endian ELF file (only those are read)", c->path);
	if (eh.e_type != ET_CORE)
		return mp_fail(diag, MP_E_FORMAT, "'%s' is an ELF file but not a core (e_type %u)",
			       c->path, (unsigned)eh.e_type);
	return MP_OK;
}

/* Record PT_LOAD PH, after checking that its numbers make sense. */
static mp_err add_load(mp_core *c, size_t i, const GElf_Phdr *ph, mp_diag *diag)
{
	mp_core_segment *s;

	if (ph->p_memsz == 0)
		return MP_OK;
	if (ph->p_vaddr + ph->p_memsz < ph->p_vaddr || ph->p_filesz > ph->p_memsz ||
	    ph->p_offset + ph->p_filesz < ph->p_offset)
		return mp_fail(diag, MP_E_CORRUPT,
			       "'%s': PT_LOAD %zu is malformed (vaddr 0x%llx memsz 0x%llx filesz 0x%llx "
			       "offset 0x%llx)", c->path, i, (unsigned long long)ph->p_vaddr,
			       (unsigned long long)ph->p_memsz, (unsigned long long)ph->p_filesz,
			       (unsigned long long)ph->p_offset);
	s = &c->segs[c->nsegs++];
	s->vaddr = ph->p_vaddr;
	s->memsz = ph->p_memsz;
	s->offset = ph->p_offset;
	s->filesz = ph->p_filesz;
	s->avail = ph->p_offset >= c->size ? 0
		   : (ph->p_filesz < c->size - ph->p_offset ? ph->p_filesz : c->size - ph->p_offset);
	s->flags = ph->p_flags;
	if (ph->p_filesz > 0 && ph->p_offset + ph->p_filesz > c->want)
		c->want = ph->p_offset + ph->p_filesz;
	return MP_OK;
}

/* Walk the program headers: segments first, then notes (which may need nothing else). */
static mp_err read_phdrs(mp_core *c, mp_diag *diag)
{
	size_t n = 0;
	GElf_Phdr ph;
	mp_err err;

	if (elf_getphdrnum(c->elf, &n) != 0)
		return mp_fail(diag, MP_E_CORRUPT, "'%s': bad program header count: %s", c->path,
			       elf_errmsg(-1));
	if (n == 0)
		return mp_fail(diag, MP_E_CORRUPT, "'%s': core has no program headers", c->path);
	if (n > c->size / sizeof(Elf64_Phdr))
		return mp_fail(diag, MP_E_TRUNCATED, "'%s': %zu program headers cannot fit in %llu bytes",
			       c->path, n, (unsigned long long)c->size);
	c->segs = calloc(n, sizeof *c->segs);
	if (c->segs == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (gelf_getphdr(c->elf, (int)i, &ph) == NULL)
			return mp_fail(diag, MP_E_TRUNCATED, "'%s': program headers truncated: %s",
				       c->path, elf_errmsg(-1));
		if (ph.p_type == PT_LOAD && (err = add_load(c, i, &ph, diag)) != MP_OK)
			return err;
	}
	mp_sort(c->segs, c->nsegs, sizeof *c->segs, seg_cmp);
	for (size_t i = 1; i < c->nsegs; i++)
		if (c->segs[i].vaddr < c->segs[i - 1].vaddr + c->segs[i - 1].memsz)
			return mp_fail(diag, MP_E_CORRUPT, "'%s': PT_LOAD segments overlap at 0x%llx",
				       c->path, (unsigned long long)c->segs[i].vaddr);
	for (size_t i = 0; i < n; i++) {
		if (gelf_getphdr(c->elf, (int)i, &ph) == NULL)
			return mp_fail(diag, MP_E_TRUNCATED, "'%s': program headers truncated", c->path);
		if (ph.p_type == PT_NOTE &&
		    (err = core_read_notes(c, ph.p_offset, ph.p_filesz, ph.p_align, diag)) != MP_OK)
			return err;
	}
	return MP_OK;
}

mp_err mp_core_open(const char *path, mp_core **out, mp_diag *diag)
{
	mp_core *c;
	mp_err err;

	*out = NULL;
	(void)elf_version(EV_CURRENT);
	c = calloc(1, sizeof *c);
	if (c == NULL || (c->path_copy = strdup(path)) == NULL) {
		free(c);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	c->path = c->path_copy;
	c->fd = -1;
	if ((err = open_file(c, diag)) != MP_OK || (err = check_header(c, diag)) != MP_OK ||
	    (err = read_phdrs(c, diag)) != MP_OK) {
		mp_core_close(c);
		return err;
	}
	if (c->want > c->size)
		mp_warn(diag, "core '%s' is truncated: %llu of %llu bytes (a core size limit?); "
			"memory past its end is unreadable", path, (unsigned long long)c->size,
			(unsigned long long)c->want);
	*out = c;
	return MP_OK;
}

void mp_core_close(mp_core *c)
{
	if (c == NULL)
		return;
	if (c->elf != NULL)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	if (c->map != NULL)
		munmap((void *)c->map, (size_t)c->size);
	free(c->segs);
	free(c->files);
	free(c->file_names);
	free(c->path_copy);
	free(c);
}

/* The segment holding ADDR, or NULL; *NEXT gets the start of the next one above ADDR (0: none). */
static const mp_core_segment *find_segment(const mp_core *c, uint64_t addr, uint64_t *next)
{
	size_t lo = 0, hi = c->nsegs;

	while (lo < hi) { /* the first segment starting above ADDR */
		size_t mid = lo + (hi - lo) / 2;

		if (c->segs[mid].vaddr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*next = lo < c->nsegs ? c->segs[lo].vaddr : 0;
	if (lo > 0 && addr - c->segs[lo - 1].vaddr < c->segs[lo - 1].memsz)
		return &c->segs[lo - 1];
	return NULL;
}

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf = (char *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return true;
}

static size_t stop(enum mp_core_hole why, uint64_t n, uint64_t rest, size_t done,
		   enum mp_core_hole *hole, uint64_t *hole_len)
{
	if (hole != NULL)
		*hole = why;
	if (hole_len != NULL)
		*hole_len = n < rest ? n : rest;
	return done;
}

size_t mp_core_read(mp_core *c, uint64_t addr, void *buf, size_t len, enum mp_core_hole *hole,
		    uint64_t *hole_len)
{
	size_t done = 0;

	if (hole != NULL)
		*hole = MP_CORE_HOLE_NONE;
	if (hole_len != NULL)
		*hole_len = 0;
	while (done < len) {
		uint64_t a = addr + done, rest = len - done, next, off, n;
		const mp_core_segment *s;

		if (a < addr) /* wrapped past the top of the address space */
			return stop(MP_CORE_HOLE_UNMAPPED, rest, rest, done, hole, hole_len);
		s = find_segment(c, a, &next);
		if (s == NULL)
			return stop(MP_CORE_HOLE_UNMAPPED, next > a ? next - a : rest, rest, done, hole,
				    hole_len);
		off = a - s->vaddr;
		if (off >= s->filesz)
			return stop(MP_CORE_HOLE_NOT_DUMPED, s->memsz - off, rest, done, hole, hole_len);
		if (off >= s->avail)
			return stop(MP_CORE_HOLE_TRUNCATED, s->filesz - off, rest, done, hole, hole_len);
		n = s->avail - off < rest ? s->avail - off : rest;
		if (c->map != NULL)
			memcpy((char *)buf + done, c->map + s->offset + off, (size_t)n);
		else if (!pread_all(c->fd, (char *)buf + done, (size_t)n, s->offset + off))
			return stop(MP_CORE_HOLE_IO, n, rest, done, hole, hole_len);
		done += (size_t)n;
	}
	return done;
}

const void *mp_core_direct(mp_core *c, uint64_t addr, size_t len)
{
	const mp_core_segment *s = c->last;
	uint64_t next, off;

	if (c->map == NULL || len == 0 || addr + len < addr)
		return NULL;
	/* a million reads of one heap segment otherwise search the core's hundreds of segments a million times */
	if (s == NULL || addr < s->vaddr || addr - s->vaddr >= s->memsz) {
		if ((s = find_segment(c, addr, &next)) == NULL)
			return NULL;
		c->last = s;
	}
	off = addr - s->vaddr;
	if (off >= s->avail || len > s->avail - off)
		return NULL;
	return c->map + s->offset + off;
}

size_t mp_core_segments(const mp_core *c, const mp_core_segment **out)
{
	*out = c->segs;
	return c->nsegs;
}

size_t mp_core_files(const mp_core *c, const mp_core_file **out)
{
	*out = c->files;
	return c->nfiles;
}

const mp_core_info *mp_core_get_info(const mp_core *c)
{
	return &c->info;
}

bool mp_core_truncated(const mp_core *c, uint64_t *have, uint64_t *want)
{
	if (have != NULL)
		*have = c->size;
	if (want != NULL)
		*want = c->want;
	return c->want > c->size;
}

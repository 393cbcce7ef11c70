/* core_notes.c - the notes of a core: NT_FILE, NT_PRSTATUS, NT_PRPSINFO and NT_AUXV. */
#include "core_int.h"
#include "mp_array.h"

#include <elf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* Offsets in the 64-bit Linux structs (the same on x86-64 and aarch64). */
#define PRSTATUS_CURSIG 12
#define PRSTATUS_PID 32
#define PRPSINFO_PID 24
#define PRPSINFO_FNAME 40
#define PRPSINFO_PSARGS 56
#define PRPSINFO_SIZE 136
#define NT_FILE_ENTRY 24 /* start, end, page offset: three 64-bit words */

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int file_cmp(const void *a, const void *b)
{
	const mp_core_file *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static mp_err nt_file_bad(mp_core *c, const char *why, mp_diag *diag)
{
	return mp_fail(diag, MP_E_CORRUPT, "'%s': NT_FILE note is malformed: %s", c->path, why);
}

/* NT_FILE: count, page size, COUNT (start, end, page offset) triples, then COUNT paths. */
static mp_err read_nt_file(mp_core *c, const unsigned char *d, size_t n, mp_diag *diag)
{
	uint64_t count, page;
	size_t names, at;

	if (c->files != NULL)
		return MP_OK; /* only the first counts */
	if (n < 16)
		return nt_file_bad(c, "shorter than its header", diag);
	count = le64(d);
	page = le64(d + 8);
	if (count > (n - 16) / NT_FILE_ENTRY)
		return nt_file_bad(c, "more entries than the note can hold", diag);
	if (count > CORE_FILES_MAX)
		return mp_fail(diag, MP_E_LIMIT, "'%s': NT_FILE has %llu entries (limit %u)", c->path,
			       (unsigned long long)count, CORE_FILES_MAX);
	if (page == 0)
		return nt_file_bad(c, "page size 0", diag);
	names = 16 + (size_t)count * NT_FILE_ENTRY;
	c->files = calloc(count ? count : 1, sizeof *c->files);
	c->file_names = malloc(n - names + 1);
	if (c->files == NULL || c->file_names == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	memcpy(c->file_names, d + names, n - names);
	c->file_names[n - names] = '\0';
	at = 0;
	for (size_t i = 0; i < count; i++) {
		const unsigned char *e = d + 16 + i * NT_FILE_ENTRY;
		mp_core_file *f = &c->files[i];
		uint64_t pgoff = le64(e + 16);
		size_t l;

		f->start = le64(e);
		f->end = le64(e + 8);
		if (f->end <= f->start)
			return nt_file_bad(c, "an entry ends before it starts", diag);
		if (pgoff > UINT64_MAX / page)
			return nt_file_bad(c, "a file offset overflows", diag);
		f->file_offset = pgoff * page;
		if (at >= n - names)
			return nt_file_bad(c, "fewer paths than entries", diag);
		l = strnlen(c->file_names + at, n - names - at);
		if (l == n - names - at)
			return nt_file_bad(c, "a path runs past the note's end", diag);
		f->path = c->file_names + at;
		at += l + 1;
	}
	c->nfiles = (size_t)count;
	c->info.file_page_size = page;
	mp_sort(c->files, c->nfiles, sizeof *c->files, file_cmp);
	return MP_OK;
}

static void read_prpsinfo(mp_core *c, const unsigned char *d, size_t n)
{
	size_t l;

	if (n < PRPSINFO_SIZE)
		return;
	c->info.pid = (int)le32(d + PRPSINFO_PID);
	memcpy(c->fname, d + PRPSINFO_FNAME, 16);
	c->fname[16] = '\0';
	memcpy(c->psargs, d + PRPSINFO_PSARGS, 80);
	c->psargs[80] = '\0';
	l = strlen(c->psargs);
	while (l > 0 && c->psargs[l - 1] == ' ')
		c->psargs[--l] = '\0';
	c->info.fname = c->fname[0] ? c->fname : NULL;
	c->info.psargs = c->psargs[0] ? c->psargs : NULL;
}

static void read_prstatus(mp_core *c, const unsigned char *d, size_t n)
{
	if (n < PRSTATUS_PID + 4)
		return;
	if (c->info.nthreads++ > 0)
		return;
	c->info.signo = (int)(d[PRSTATUS_CURSIG] | d[PRSTATUS_CURSIG + 1] << 8);
	if (c->info.pid == 0)
		c->info.pid = (int)le32(d + PRSTATUS_PID);
}

static void read_auxv(mp_core *c, const unsigned char *d, size_t n)
{
	for (size_t i = 0; i + 16 <= n; i += 16) {
		uint64_t type = le64(d + i), val = le64(d + i + 8);

		if (type == AT_NULL)
			break;
		if (type == AT_PHDR)
			c->info.at_phdr = val;
		else if (type == AT_EXECFN)
			c->info.at_execfn = val;
		else if (type == AT_PAGESZ)
			c->info.at_pagesz = val;
	}
}

mp_err core_read_notes(mp_core *c, uint64_t offset, uint64_t size, uint64_t align, mp_diag *diag)
{
	Elf_Data *data;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	mp_err err;

	if (size == 0)
		return MP_OK;
	if (offset >= c->size || size > c->size - offset)
		return mp_fail(diag, MP_E_TRUNCATED, "'%s': notes at 0x%llx (%llu bytes) lie past the "
			       "end of the file (%llu bytes)", c->path, (unsigned long long)offset,
			       (unsigned long long)size, (unsigned long long)c->size);
	if (size > CORE_NOTES_MAX)
		return mp_fail(diag, MP_E_LIMIT, "'%s': %llu bytes of notes (limit %u)", c->path,
			       (unsigned long long)size, CORE_NOTES_MAX);
	data = elf_getdata_rawchunk(c->elf, (int64_t)offset, size, align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
	if (data == NULL)
		return mp_fail(diag, MP_E_CORRUPT, "'%s': notes unreadable: %s", c->path, elf_errmsg(-1));
	while (off < data->d_size) {
		const unsigned char *base = data->d_buf, *desc;
		bool core;

		next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
		if (next == 0)
			return mp_fail(diag, MP_E_CORRUPT, "'%s': malformed note at 0x%llx", c->path,
				       (unsigned long long)(offset + off));
		desc = base + desc_off;
		core = nh.n_namesz == 5 && memcmp(base + name_off, "CORE", 5) == 0;
		if (core && nh.n_type == NT_FILE && (err = read_nt_file(c, desc, nh.n_descsz, diag)) != MP_OK)
			return err;
		if (core && nh.n_type == NT_PRPSINFO)
			read_prpsinfo(c, desc, nh.n_descsz);
		if (core && nh.n_type == NT_PRSTATUS)
			read_prstatus(c, desc, nh.n_descsz);
		if (core && nh.n_type == NT_AUXV)
			read_auxv(c, desc, nh.n_descsz);
		off = next;
	}
	return MP_OK;
}

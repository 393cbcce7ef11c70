/* core_buildid.c - build-ids of ELF files and in-memory ELF images, through libelf. */
#include "mp_buildid.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Notes in a PT_NOTE larger than this are not build-id notes worth reading. */
#define NOTE_SEGMENT_MAX (1u << 20)

static void elf_init(void)
{
	static int done;

	if (!done) {
		(void)elf_version(EV_CURRENT);
		done = 1;
	}
}

/* Look for NT_GNU_BUILD_ID "GNU" in the notes of PHDR. 1 found, 0 not, -1 out of bounds. */
static int note_segment_build_id(Elf *e, const GElf_Phdr *ph, mp_buildid *out)
{
	Elf_Data *data;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	const char *base;

	if (ph->p_filesz == 0 || ph->p_filesz > NOTE_SEGMENT_MAX)
		return 0;
	data = elf_getdata_rawchunk(e, (int64_t)ph->p_offset, ph->p_filesz,
				    ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
	if (data == NULL)
		return -1;
	base = data->d_buf;
	while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(base + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= MP_BUILDID_MAX) {
			out->len = nh.n_descsz;
			memcpy(out->bytes, base + desc_off, nh.n_descsz);
			return 1;
		}
		off = next;
	}
	return 0;
}

static mp_err elf_build_id(Elf *e, const char *what, mp_buildid *out, mp_diag *diag)
{
	size_t n = 0;
	bool outside = false;

	out->len = 0;
	if (elf_kind(e) != ELF_K_ELF)
		return mp_fail(diag, MP_E_FORMAT, "%s is not ELF", what);
	if (elf_getphdrnum(e, &n) != 0)
		return mp_fail(diag, MP_E_CORRUPT, "%s: bad program headers: %s", what, elf_errmsg(-1));
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		int r;

		if (gelf_getphdr(e, (int)i, &ph) == NULL)
			return mp_fail(diag, MP_E_TRUNCATED, "%s: program header %zu unreadable: %s", what,
				       i, elf_errmsg(-1));
		if (ph.p_type != PT_NOTE)
			continue;
		r = note_segment_build_id(e, &ph, out);
		if (r > 0)
			return MP_OK;
		if (r < 0)
			outside = true;
	}
	if (outside)
		return mp_fail(diag, MP_E_TRUNCATED, "%s: notes lie past its end", what);
	return mp_fail(diag, MP_E_NOTFOUND, "%s has no build-id", what);
}

mp_err mp_buildid_of_fd(int fd, mp_buildid *out, mp_diag *diag)
{
	Elf *e;
	mp_err err;

	elf_init();
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL)
		return mp_fail(diag, MP_E_FORMAT, "not ELF: %s", elf_errmsg(-1));
	err = elf_build_id(e, "the file", out, diag);
	elf_end(e);
	return err;
}

mp_err mp_buildid_of_image(const void *image, size_t len, mp_buildid *out, mp_diag *diag)
{
	Elf *e;
	char *copy;
	mp_err err;

	out->len = 0;
	if (len < EI_NIDENT || memcmp(image, ELFMAG, SELFMAG) != 0)
		return mp_fail(diag, MP_E_FORMAT, "the memory image is not ELF");
	elf_init();
	/* elf_memory wants a writable image; ours is the caller's const. */
	copy = malloc(len);
	if (copy == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	memcpy(copy, image, len);
	e = elf_memory(copy, len);
	if (e == NULL) {
		free(copy);
		return mp_fail(diag, MP_E_FORMAT, "the memory image is not ELF: %s", elf_errmsg(-1));
	}
	err = elf_build_id(e, "the memory image", out, diag);
	elf_end(e);
	free(copy);
	return err;
}

void mp_buildid_hex(const mp_buildid *id, char *buf, size_t n)
{
	size_t at = 0;

	if (n == 0)
		return;
	buf[0] = '\0';
	if (id->len == 0) {
		snprintf(buf, n, "none");
		return;
	}
	for (size_t i = 0; i < id->len && at + 3 <= n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%02x", id->bytes[i]);
}

bool mp_buildid_equal(const mp_buildid *a, const mp_buildid *b)
{
	return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

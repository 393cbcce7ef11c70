/* mp_elf.c - ELF files on disk through libelf: build-id, symbols, dynamic section, relocations. */
#include "mp_elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BUILD_ID 64
#define PAGE_MASK (~(uint64_t)4095)

struct mp_elf {
	char *path;
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	Elf_Scn *dynsym;  /* .dynsym or NULL */
	Elf_Scn *symtab;  /* .symtab or NULL */
	bool has_debug_info;
	unsigned char build_id[MAX_BUILD_ID];
	size_t build_id_len;
	uint64_t build_id_addr;
	const char **needed; /* DT_NEEDED strings (inside the ELF image) */
	size_t nneeded;
	const char *soname;
};

static mp_err elf_fail(mp_diag *diag, const char *path, const char *what)
{
	return mp_fail(diag, MP_E_FORMAT, "'%s': %s: %s", path, what, elf_errmsg(-1));
}

/* Name of section SCN, "" when it has none. */
static const char *scn_name(const mp_elf *e, Elf_Scn *scn)
{
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (gelf_getshdr(scn, &sh) == NULL || elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return "";
	n = elf_strptr(e->elf, shstrndx, sh.sh_name);
	return n != NULL ? n : "";
}

/* Look for NT_GNU_BUILD_ID in the notes of DATA (from a note segment or section at ADDR; ADDR 0:
   not loaded). */
static bool scan_notes(mp_elf *e, Elf_Data *data, uint64_t addr)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data != NULL && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || memcmp(name, "GNU", 4) != 0 ||
		    nh.n_descsz == 0 || nh.n_descsz > MAX_BUILD_ID)
			continue;
		memcpy(e->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
		e->build_id_len = nh.n_descsz;
		e->build_id_addr = addr != 0 ? addr + desc_off : 0;
		return true;
	}
	return false;
}

static void read_build_id(mp_elf *e)
{
	size_t nph = 0;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(e->elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (gelf_getphdr(e->elf, (int)i, &ph) == NULL || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(e->elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (scan_notes(e, d, ph.p_vaddr))
				return;
		}
	}
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
			continue;
		if (scan_notes(e, elf_getdata(scn, NULL), (sh.sh_flags & SHF_ALLOC) ? sh.sh_addr : 0))
			return;
	}
}

static mp_err read_dynamic(mp_elf *e, Elf_Scn *scn, mp_diag *diag)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (gelf_getshdr(scn, &sh) == NULL || d == NULL || sh.sh_entsize == 0)
		return MP_OK;
	n = sh.sh_size / sh.sh_entsize;
	e->needed = calloc(n + 1, sizeof *e->needed);
	if (e->needed == NULL)
		return mp_fail(diag, MP_E_NOMEM, "'%s': out of memory", e->path);
	for (size_t i = 0; i < n; i++) {
		GElf_Dyn dyn;
		const char *s;

		if (gelf_getdyn(d, (int)i, &dyn) == NULL || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME)
			continue;
		s = elf_strptr(e->elf, sh.sh_link, dyn.d_un.d_val);
		if (s == NULL)
			continue;
		if (dyn.d_tag == DT_SONAME)
			e->soname = s;
		else
			e->needed[e->nneeded++] = s;
	}
	return MP_OK;
}

static mp_err index_sections(mp_elf *e, mp_diag *diag)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) == NULL)
			return elf_fail(diag, e->path, "bad section header");
		if (sh.sh_type == SHT_DYNSYM)
			e->dynsym = scn;
		else if (sh.sh_type == SHT_SYMTAB)
			e->symtab = scn;
		else if (sh.sh_type == SHT_DYNAMIC && e->needed == NULL) {
			mp_err err = read_dynamic(e, scn, diag);

			if (err != MP_OK)
				return err;
		}
		name = scn_name(e, scn);
		if (sh.sh_type != SHT_NOBITS &&
		    (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0))
			e->has_debug_info = true;
	}
	return MP_OK;
}

mp_err mp_elf_open(const char *path, mp_elf **out, mp_diag *diag)
{
	mp_elf *e;
	mp_err err;

	*out = NULL;
	elf_version(EV_CURRENT);
	e = calloc(1, sizeof *e);
	if (e == NULL || (e->path = strdup(path)) == NULL) {
		free(e);
		return mp_fail(diag, MP_E_NOMEM, "'%s': out of memory", path);
	}
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0) {
		err = mp_fail(diag, MP_E_ERRNO, "cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (e->elf == NULL || elf_kind(e->elf) != ELF_K_ELF || gelf_getehdr(e->elf, &e->ehdr) == NULL) {
		err = mp_fail(diag, MP_E_FORMAT, "'%s' is not an ELF file", path);
		goto fail;
	}
	err = index_sections(e, diag);
	if (err != MP_OK)
		goto fail;
	read_build_id(e);
	*out = e;
	return MP_OK;
fail:
	mp_elf_close(e);
	return err;
}

void mp_elf_close(mp_elf *e)
{
	if (e == NULL)
		return;
	if (e->elf != NULL)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->needed);
	free(e->path);
	free(e);
}

const char *mp_elf_path(const mp_elf *e)
{
	return e->path;
}

bool mp_elf_is_x86_64(const mp_elf *e)
{
	return e->ehdr.e_machine == EM_X86_64 && e->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
}

size_t mp_elf_build_id(const mp_elf *e, const unsigned char **out, uint64_t *addr)
{
	*out = e->build_id;
	if (addr != NULL)
		*addr = e->build_id_addr;
	return e->build_id_len;
}

mp_err mp_elf_load_bias(const mp_elf *e, uint64_t start, uint64_t file_offset, uint64_t *bias,
			mp_diag *diag)
{
	size_t nph = 0;

	if (elf_getphdrnum(e->elf, &nph) != 0)
		return elf_fail(diag, e->path, "no program headers");
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		/* The loader maps a segment from the page holding p_offset to the page holding
		   p_vaddr: both are rounded down to the page. */
		if ((ph.p_offset & PAGE_MASK) == (file_offset & PAGE_MASK)) {
			*bias = start - (file_offset - (ph.p_offset & PAGE_MASK)) - (ph.p_vaddr & PAGE_MASK);
			return MP_OK;
		}
	}
	return mp_fail(diag, MP_E_NOTFOUND, "'%s': no PT_LOAD maps file offset 0x%llx", e->path,
		       (unsigned long long)file_offset);
}

bool mp_elf_mapping_fits(const mp_elf *e, uint64_t bias, uint64_t start, uint64_t file_offset)
{
	size_t nph = 0;

	if (elf_getphdrnum(e->elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) != NULL && ph.p_type == PT_LOAD &&
		    (ph.p_offset & PAGE_MASK) == file_offset && bias + (ph.p_vaddr & PAGE_MASK) == start)
			return true;
	}
	return false;
}

/* Find NAME in the symbol table SCN; true with *OUT filled when found (defined preferred). */
static bool find_in_table(const mp_elf *e, Elf_Scn *scn, const char *name, mp_elf_sym *out)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;
	bool found = false;

	if (scn == NULL || gelf_getshdr(scn, &sh) == NULL || sh.sh_entsize == 0 ||
	    (d = elf_getdata(scn, NULL)) == NULL)
		return false;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (gelf_getsym(d, (int)i, &sym) == NULL || sym.st_name == 0)
			continue;
		s = elf_strptr(e->elf, sh.sh_link, sym.st_name);
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		out->value = sym.st_value;
		out->size = sym.st_size;
		out->bind = GELF_ST_BIND(sym.st_info);
		out->type = GELF_ST_TYPE(sym.st_info);
		out->defined = sym.st_shndx != SHN_UNDEF;
		out->from_dynsym = scn == e->dynsym;
		found = true;
		if (out->defined)
			return true;
	}
	return found;
}

mp_err mp_elf_symbol(const mp_elf *e, const char *name, unsigned which, mp_elf_sym *out,
		     mp_diag *diag)
{
	mp_elf_sym undef;
	bool have_undef = false;

	if ((which & MP_ELF_DYNSYM) && find_in_table(e, e->dynsym, name, out)) {
		if (out->defined)
			return MP_OK;
		undef = *out;
		have_undef = true;
	}
	if ((which & MP_ELF_SYMTAB) && find_in_table(e, e->symtab, name, out) && out->defined)
		return MP_OK;
	if (have_undef) {
		*out = undef;
		return MP_OK;
	}
	return mp_fail(diag, MP_E_NOTFOUND, "'%s': no symbol %s", e->path, name);
}

bool mp_elf_has_symtab(const mp_elf *e)
{
	return e->symtab != NULL;
}

bool mp_elf_has_debug_info(const mp_elf *e)
{
	return e->has_debug_info;
}

const char *mp_elf_soname(const mp_elf *e)
{
	return e->soname;
}

size_t mp_elf_needed_count(const mp_elf *e)
{
	return e->nneeded;
}

const char *mp_elf_needed(const mp_elf *e, size_t i)
{
	return i < e->nneeded ? e->needed[i] : NULL;
}

/* The first dynamic relocation of type TYPE against symbol NAME: its r_offset in *OFF. */
static bool find_reloc(const mp_elf *e, const char *name, unsigned type, uint64_t *off)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *symd;
		size_t n;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_entsize == 0 || (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		symscn = elf_getscn(e->elf, sh.sh_link);
		if (symscn == NULL || gelf_getshdr(symscn, &symsh) == NULL ||
		    (symd = elf_getdata(symscn, NULL)) == NULL)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *s;

			if (gelf_getrela(d, (int)i, &r) == NULL || GELF_R_TYPE(r.r_info) != type ||
			    GELF_R_SYM(r.r_info) == 0 ||
			    gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym) == NULL)
				continue;
			s = elf_strptr(e->elf, symsh.sh_link, sym.st_name);
			if (s != NULL && strcmp(s, name) == 0) {
				*off = r.r_offset;
				return true;
			}
		}
	}
	return false;
}

mp_err mp_elf_got_slot(const mp_elf *e, const char *name, uint64_t *slot, mp_diag *diag)
{
	if (!mp_elf_is_x86_64(e))
		return mp_fail(diag, MP_E_UNSUPPORTED, "'%s': relocations are read for x86-64 only",
			       e->path);
	if (find_reloc(e, name, R_X86_64_GLOB_DAT, slot) || find_reloc(e, name, R_X86_64_64, slot))
		return MP_OK;
	return mp_fail(diag, MP_E_NOTFOUND, "'%s': no GOT slot for %s", e->path, name);
}

bool mp_elf_copy_reloc(const mp_elf *e, const char *name, uint64_t *dest)
{
	uint64_t off;

	if (!mp_elf_is_x86_64(e) || !find_reloc(e, name, R_X86_64_COPY, &off))
		return false;
	if (dest != NULL)
		*dest = off;
	return true;
}

/* S (with its NUL) as a whole string inside section SCN: its vaddr in *VADDR. */
static bool string_in_section(Elf_Scn *scn, const char *s, uint64_t *vaddr)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t len = strlen(s) + 1;
	const char *base, *p, *end;

	if (gelf_getshdr(scn, &sh) == NULL || (d = elf_rawdata(scn, NULL)) == NULL || d->d_buf == NULL)
		return false;
	base = d->d_buf;
	end = base + d->d_size;
	for (p = base; p < end && (p = memmem(p, (size_t)(end - p), s, len)) != NULL; p++) {
		if (p == base || p[-1] == '\0' || p[-1] == '*') {
			*vaddr = sh.sh_addr + (uint64_t)(p - base);
			return true;
		}
	}
	return false;
}

mp_err mp_elf_find_string(const mp_elf *e, const char *s, uint64_t *vaddr, mp_diag *diag)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn)) != NULL)
		if (strcmp(scn_name(e, scn), ".rodata") == 0 && string_in_section(scn, s, vaddr))
			return MP_OK;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)))
			continue;
		if (string_in_section(scn, s, vaddr))
			return MP_OK;
	}
	return mp_fail(diag, MP_E_NOTFOUND, "'%s': no string \"%s\"", e->path, s);
}

mp_err mp_elf_read(const mp_elf *e, uint64_t addr, void *buf, size_t len, mp_diag *diag)
{
	size_t nph = 0, fsize = 0;
	const char *image = elf_rawfile(e->elf, &fsize);

	if (image != NULL && elf_getphdrnum(e->elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			uint64_t off;

			if (gelf_getphdr(e->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD ||
			    addr < ph.p_vaddr || addr - ph.p_vaddr > ph.p_filesz ||
			    len > ph.p_filesz - (addr - ph.p_vaddr))
				continue;
			off = ph.p_offset + (addr - ph.p_vaddr);
			if (off > fsize || len > fsize - off)
				break;
			memcpy(buf, image + off, len);
			return MP_OK;
		}
	}
	return mp_fail(diag, MP_E_NOTFOUND, "'%s': 0x%llx+%zu is not in the file image", e->path,
		       (unsigned long long)addr, len);
}

int mp_elf_cxx11_abi(const mp_elf *e)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;
	int abi = -1;

	if (e->dynsym == NULL || gelf_getshdr(e->dynsym, &sh) == NULL || sh.sh_entsize == 0 ||
	    (d = elf_getdata(e->dynsym, NULL)) == NULL)
		return -1;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (gelf_getsym(d, (int)i, &sym) == NULL ||
		    (s = elf_strptr(e->elf, sh.sh_link, sym.st_name)) == NULL)
			continue;
		if (strstr(s, "B5cxx11") != NULL || strstr(s, "St7__cxx11") != NULL)
			return 1;
		if (strncmp(s, "_ZNSs", 5) == 0 || strncmp(s, "_ZNKSs", 6) == 0)
			abi = 0;
	}
	return abi;
}

int mp_elf_cuda_major(const mp_elf *e)
{
	static const char prefix[] = "libcudart.so.";

	for (size_t i = 0; i < e->nneeded; i++) {
		const char *s = e->needed[i];

		if (strncmp(s, prefix, sizeof prefix - 1) == 0) {
			int major = atoi(s + sizeof prefix - 1);

			if (major > 0)
				return major;
		}
	}
	return 0;
}

mp_err mp_elf_dwarf_file(const char *path, const char *debug_root, char *out, size_t size,
			 mp_diag *diag)
{
	mp_elf *e = NULL, *dbg = NULL;
	const unsigned char *id;
	size_t idlen;
	char hex[2 * MAX_BUILD_ID + 1], cand[4096];
	mp_err err;

	err = mp_elf_open(path, &e, diag);
	if (err != MP_OK)
		return err;
	if (e->has_debug_info) {
		snprintf(out, size, "%s", path);
		goto out;
	}
	idlen = mp_elf_build_id(e, &id, NULL);
	if (idlen < 2) {
		err = mp_fail(diag, MP_E_NOTFOUND, "'%s' has no DWARF and no build-id", path);
		goto out;
	}
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(cand, sizeof cand, "%s/.build-id/%.2s/%s.debug",
		 debug_root != NULL ? debug_root : "/usr/lib/debug", hex, hex + 2);
	if (access(cand, R_OK) != 0 || mp_elf_open(cand, &dbg, NULL) != MP_OK || !dbg->has_debug_info) {
		err = mp_fail(diag, MP_E_NOTFOUND, "'%s' has no DWARF, nor has '%s'", path, cand);
		goto out;
	}
	snprintf(out, size, "%s", cand);
out:
	mp_elf_close(dbg);
	mp_elf_close(e);
	return err;
}

/* mp_elf.h - what memprof needs from an ELF file on disk (libelf): build-id, symbols, dynamic
   section, relocations, strings and bytes at virtual addresses. */
#ifndef MEMPROF_ELF_H
#define MEMPROF_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

typedef struct mp_elf mp_elf;

/* STB_GNU_UNIQUE and STT_OBJECT from <elf.h>, so that callers need not include it. */
#define MP_ELF_STB_GNU_UNIQUE 10
#define MP_ELF_STT_OBJECT 1

/* Which symbol tables mp_elf_symbol searches. */
#define MP_ELF_DYNSYM 1u
#define MP_ELF_SYMTAB 2u

/* One symbol: VALUE is its ELF virtual address (add the load bias for the target's). */
typedef struct mp_elf_sym {
	uint64_t value;
	uint64_t size;
	int bind;       /* STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2, MP_ELF_STB_GNU_UNIQUE 10 */
	int type;       /* STT_OBJECT 1, STT_FUNC 2, ... */
	bool defined;   /* st_shndx != SHN_UNDEF */
	bool from_dynsym;
} mp_elf_sym;

/* Open the ELF file PATH read-only. MP_E_ERRNO when it cannot be opened, MP_E_FORMAT when it is
   not ELF (DIAG says which). The caller closes *OUT with mp_elf_close. */
mp_err mp_elf_open(const char *path, mp_elf **out, mp_diag *diag) MP_WUR;

/* Close E (may be NULL). */
void mp_elf_close(mp_elf *e);

/* The path E was opened with. */
const char *mp_elf_path(const mp_elf *e);

/* Whether E is an x86-64 ELF (relocation lookups only know x86-64's types). */
bool mp_elf_is_x86_64(const mp_elf *e);

/* E's NT_GNU_BUILD_ID bytes in *OUT (valid until mp_elf_close); returns their count, 0 when E
   has none. ADDR (may be NULL) receives the note's descriptor vaddr, 0 when the note is in no
   PT_LOAD (then the target's memory does not hold it). */
size_t mp_elf_build_id(const mp_elf *e, const unsigned char **out, uint64_t *addr);

/* Load bias of E when the page holding file offset FILE_OFFSET is mapped at START (a mapping
   of the target): target address = bias + ELF vaddr. MP_E_NOTFOUND when no PT_LOAD starts in
   that page. */
mp_err mp_elf_load_bias(const mp_elf *e, uint64_t start, uint64_t file_offset, uint64_t *bias,
			mp_diag *diag) MP_WUR;

/* Whether a mapping at START of file offset FILE_OFFSET is where the loader puts one of E's
   PT_LOADs when the load bias is BIAS (tells the loader's mappings from other mmaps of E). */
bool mp_elf_mapping_fits(const mp_elf *e, uint64_t bias, uint64_t start, uint64_t file_offset);

/* Look NAME up in the tables WHICH (MP_ELF_DYNSYM and/or MP_ELF_SYMTAB), .dynsym first. A
   defined symbol wins over an undefined one. MP_E_NOTFOUND when neither table has it. */
mp_err mp_elf_symbol(const mp_elf *e, const char *name, unsigned which, mp_elf_sym *out,
		     mp_diag *diag) MP_WUR;

/* Whether E has a .symtab (not stripped) / any DWARF (.debug_info). */
bool mp_elf_has_symtab(const mp_elf *e);
bool mp_elf_has_debug_info(const mp_elf *e);

/* DT_SONAME, or NULL. */
const char *mp_elf_soname(const mp_elf *e);

/* DT_NEEDED entries in order: their count, and the I-th (NULL past the end). */
size_t mp_elf_needed_count(const mp_elf *e);
const char *mp_elf_needed(const mp_elf *e, size_t i);

/* The GOT slot through which E reaches symbol NAME: the r_offset (a vaddr of E) of its
   R_X86_64_GLOB_DAT, or failing that R_X86_64_64, dynamic relocation. After loading, the slot
   holds the address the dynamic loader bound NAME to: the executable's copy when the
   executable took an R_X86_64_COPY of it, the first definition in lookup order otherwise.
   MP_E_NOTFOUND when there is none; MP_E_UNSUPPORTED when E is not x86-64. */
mp_err mp_elf_got_slot(const mp_elf *e, const char *name, uint64_t *slot, mp_diag *diag) MP_WUR;

/* Whether E (normally an executable) has an R_X86_64_COPY relocation of NAME; *DEST (may be
   NULL) receives its r_offset, the vaddr in E of the copy. */
bool mp_elf_copy_reloc(const mp_elf *e, const char *name, uint64_t *dest);

/* The vaddr of the NUL-terminated string S as a whole string (preceded by a NUL, a '*' or the
   start of the section) in .rodata, or in another allocated, non-writable, non-executable
   PROGBITS section when .rodata lacks it. MP_E_NOTFOUND when absent. */
mp_err mp_elf_find_string(const mp_elf *e, const char *s, uint64_t *vaddr, mp_diag *diag) MP_WUR;

/* Copy LEN bytes of E's file image at vaddr ADDR into BUF (bytes a PT_LOAD takes from the file;
   .bss reads fail). MP_E_NOTFOUND when any byte is not file-backed. */
mp_err mp_elf_read(const mp_elf *e, uint64_t addr, void *buf, size_t len, mp_diag *diag) MP_WUR;

/* The C++ string ABI E was built with, from the mangled names in .dynsym: 1 when some name
   carries the new ABI's "B5cxx11" tag or std::__cxx11::basic_string, 0 when it uses the old
   std::string ("_ZNSs...", "_ZNKSs..."), -1 when neither shows. */
int mp_elf_cxx11_abi(const mp_elf *e);

/* The CUDA major E was built with, from a DT_NEEDED libcudart.so.N; 0 when none. */
int mp_elf_cuda_major(const mp_elf *e);

/* Where the DWARF of ELF file PATH is: PATH itself when it has .debug_info, else the separate
   debug file DEBUG_ROOT/.build-id/xx/rest.debug of its build-id (DEBUG_ROOT NULL =
   /usr/lib/debug) when that exists and has .debug_info. Writes the path into OUT (SIZE bytes).
   MP_E_NOTFOUND when neither has DWARF (DIAG says where it looked). */
mp_err mp_elf_dwarf_file(const char *path, const char *debug_root, char *out, size_t size,
			 mp_diag *diag) MP_WUR;

#endif

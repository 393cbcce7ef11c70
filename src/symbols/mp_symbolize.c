/* mp_symbolize.c - C++ return addresses named through libdwfl: each mapped file is reported to one
   offline Dwfl at its load bias the first time an address falls in it; the symbol comes from .symtab
   (or .dynsym), the line from DWARF where the file or its separate debug file has it. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_elf.h"
#include "mp_symbolize.h"
#include "symtab_int.h"

/* libstdc++'s demangler (extern "C" in <cxxabi.h>): the names PyTorch prints are demangled by it. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

enum file_state { FILE_UNSEEN, FILE_REPORTED, FILE_FAILED };

struct mp_symbolizer {
	mp_target *t;
	Dwfl *dwfl;
	const mp_mapping *maps;
	size_t nmaps;
	unsigned char *state;  /* per mapping: enum file_state of its file */
	Dwfl_Module **modules; /* per mapping, once reported */
	uint64_t *bias;        /* per mapping */
	mp_symtab **symtabs;   /* per mapping, its file's function symbols (owned by the first mapping's entry) */
	char *demangled;       /* the last name, demangled (realloc'd by __cxa_demangle) */
	size_t demangled_size;
	char *path;            /* the last source path joined with its compilation directory */
	size_t path_size;
};

static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

mp_err mp_symbolizer_new(mp_target *t, mp_symbolizer **out, mp_diag *diag)
{
	mp_symbolizer *s = calloc(1, sizeof *s);

	*out = NULL;
	if (s == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory for the symbolizer");
	s->t = t;
	s->nmaps = mp_target_mappings(t, &s->maps);
	s->state = calloc(s->nmaps + 1, 1);
	s->modules = calloc(s->nmaps + 1, sizeof *s->modules);
	s->bias = calloc(s->nmaps + 1, sizeof *s->bias);
	s->symtabs = calloc(s->nmaps + 1, sizeof *s->symtabs);
	s->dwfl = dwfl_begin(&callbacks);
	if (s->state == NULL || s->modules == NULL || s->bias == NULL || s->symtabs == NULL || s->dwfl == NULL) {
		mp_symbolizer_free(s);
		return mp_fail(diag, MP_E_NOMEM, "out of memory for the symbolizer");
	}
	*out = s;
	return MP_OK;
}

void mp_symbolizer_free(mp_symbolizer *s)
{
	if (s == NULL)
		return;
	/* a table is built at the mapping of its file's first page; the file's other mappings share it */
	for (size_t i = 0; s->symtabs != NULL && i < s->nmaps; i++)
		if (s->state[i] == FILE_REPORTED && s->maps[i].file_offset == 0)
			mp_symtab_free(s->symtabs[i]);
	if (s->dwfl != NULL)
		dwfl_end(s->dwfl);
	free(s->symtabs);
	free(s->state);
	free(s->modules);
	free(s->bias);
	free(s->demangled);
	free(s->path);
	free(s);
}

/* The index of the mapping holding ADDR, or NMAPS. */
static size_t mapping_of(const mp_symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < s->maps[mid].start)
			hi = mid;
		else if (addr >= s->maps[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return s->nmaps;
}

/* Whether M maps the first page of the file PATH. */
static bool first_page_of(const mp_mapping *m, const char *path)
{
	return m->file_offset == 0 && m->path != NULL && strcmp(m->path, path) == 0;
}

/* Report mapping I's file (found through the mapping of its first page) to the Dwfl. */
static void report(mp_symbolizer *s, size_t i)
{
	const mp_mapping *m = &s->maps[i];
	size_t first = i;
	mp_elf *e;
	uint64_t bias;

	s->state[i] = FILE_FAILED;
	if (m->path == NULL || m->local_path == NULL)
		return;
	/* The loader maps a file's segments next to each other: its first page is a few mappings back. */
	while (!first_page_of(&s->maps[first], m->path)) {
		if (first == 0 || i - first >= 16)
			return;
		first--;
	}
	if (s->state[first] != FILE_UNSEEN) {
		s->state[i] = s->state[first];
		s->modules[i] = s->modules[first];
		s->bias[i] = s->bias[first];
		s->symtabs[i] = s->symtabs[first];
		return;
	}
	s->state[first] = FILE_FAILED;
	if (mp_elf_open(m->local_path, &e, NULL) != MP_OK)
		return;
	if (mp_elf_load_bias(e, s->maps[first].start, 0, &bias, NULL) == MP_OK) {
		const char *base = strrchr(m->path, '/');

		dwfl_report_begin_add(s->dwfl);
		s->modules[first] = dwfl_report_elf(s->dwfl, base != NULL ? base + 1 : m->path, m->local_path, -1,
						    bias, true);
		dwfl_report_end(s->dwfl, NULL, NULL);
		if (s->modules[first] != NULL && (s->symtabs[first] = mp_symtab_build(s->modules[first])) != NULL) {
			s->state[first] = FILE_REPORTED;
			s->bias[first] = bias;
		}
	}
	mp_elf_close(e);
	s->state[i] = s->state[first];
	s->modules[i] = s->modules[first];
	s->bias[i] = s->bias[first];
	s->symtabs[i] = s->symtabs[first];
}

static const char *demangle(mp_symbolizer *s, const char *name)
{
	int status = -1;
	char *d;

	if (strncmp(name, "_Z", 2) != 0)
		return name;
	d = __cxa_demangle(name, s->demangled, &s->demangled_size, &status);
	if (status != 0 || d == NULL)
		return name;
	s->demangled = d;
	return d;
}

/* Move *DIE to the last of the subprograms that follow it and cover PC too (assembler aliases). */
static void last_alias(Dwarf_Die *die, Dwarf_Addr pc)
{
	Dwarf_Die next = *die;

	while (dwarf_siblingof(&next, &next) == 0 && dwarf_tag(&next) == DW_TAG_subprogram && dwarf_haspc(&next, pc) > 0)
		*die = next;
}

/* The function that holds CALL in MOD's DWARF, innermost first: an inlined function's own name where
   it was inlined, as PyTorch's symbolizer names a frame (its linkage name, to be demangled, else its name). */
static const char *dwarf_function(Dwfl_Module *mod, uint64_t call)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, call, &bias), *scopes = NULL;
	const char *name = NULL;
	int n;

	if (cu == NULL || (n = dwarf_getscopes(cu, call - bias, &scopes)) <= 0)
		return NULL;
	for (int i = 0; i < n && name == NULL; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute attr;
		const char *linkage;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		/* An assembler's CU names one routine by all its aliases, one subprogram each over the same code:
		   addr2line names it by the last of them. */
		if (tag == DW_TAG_subprogram)
			last_alias(&scopes[i], call - bias);
		linkage = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
		if (linkage == NULL)
			linkage = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &attr));
		name = linkage != NULL ? linkage : dwarf_diename(&scopes[i]);
	}
	free(scopes);
	return name;
}

/* FILE of a line table, joined with its compilation directory DIR when relative. */
static const char *source_path(mp_symbolizer *s, const char *file, const char *dir)
{
	size_t need;

	if (file[0] == '/' || dir == NULL || dir[0] == '\0')
		return file;
	need = strlen(dir) + strlen(file) + 2;
	if (need > s->path_size) {
		char *p = realloc(s->path, need);

		if (p == NULL)
			return file;
		s->path = p;
		s->path_size = need;
	}
	snprintf(s->path, s->path_size, "%s/%s", dir, file);
	return s->path;
}

void mp_symbolize(mp_symbolizer *s, uint64_t addr, mp_symbol_at *out)
{
	size_t i = addr != 0 ? mapping_of(s, addr) : s->nmaps;
	uint64_t call = addr - 1;
	const char *name, *file;
	Dwfl_Line *line;
	int lineno = 0;

	*out = (mp_symbol_at){ .name = "<unwind unsupported>", .filename = "??" };
	if (i == s->nmaps)
		return;
	if (s->state[i] == FILE_UNSEEN)
		report(s, i);
	out->in_file = true;
	out->name = "??";
	out->filename = s->maps[i].path != NULL ? s->maps[i].path : "??";
	if (s->state[i] != FILE_REPORTED) {
		out->line = 0;
		return;
	}
	/* as addr2line says what it does not know: a local symbol's file (its STT_FILE), else "??", line 0 */
	out->line = 0;
	out->filename = "??";
	name = dwarf_function(s->modules[i], call);
	if (name == NULL || *name == '\0') {
		mp_symtab_hit hit = mp_symtab_lookup(s->symtabs[i], call);

		name = hit.name;
		out->nearest = name != NULL && !hit.covers;
		if (hit.file != NULL)
			out->filename = hit.file;
	}
	if (name != NULL && *name != '\0') {
		out->name = demangle(s, name);
		out->has_symbol = true;
	}
	if ((line = dwfl_module_getsrc(s->modules[i], call)) != NULL &&
	    (file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL)) != NULL) {
		out->filename = source_path(s, file, dwfl_line_comp_dir(line));
		out->line = lineno > 0 ? (uint64_t)lineno : 0;
	}
}

/* py_interp.c - which CPython a target runs: the mapped ELF file (libpython3.X.so, or a python executable
   that links it in) that defines Py_Version, whose value the target's memory holds (3.11 and later). 3.10 has
   no Py_Version: its version is the one in the name of the file that defines Py_Initialize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_elf.h"
#include "mp_py.h"

/* The minor version in a CPython file's name ("libpython3.10.so.1.0", "python3.10"), or -1. */
static int minor_in_name(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	int minor;

	base = base != NULL ? base + 1 : path;
	if ((p = strstr(base, "python3.")) == NULL || sscanf(p + strlen("python3."), "%d", &minor) != 1)
		return -1;
	return minor;
}

/* Whether E defines NAME in its dynamic symbols; its value in *SYM. */
static bool defines(const mp_elf *e, const char *name, mp_elf_sym *sym)
{
	return mp_elf_symbol(e, name, MP_ELF_DYNSYM, sym, NULL) == MP_OK && sym->defined;
}

/* The version of the CPython that mapping M's file E holds (its load bias BIAS); false when E holds none. */
static bool version_of(mp_target *t, const mp_mapping *m, const mp_elf *e, uint64_t bias, mp_py_interp *out)
{
	mp_elf_sym sym;
	uint32_t v;

	if (defines(e, "Py_Version", &sym)) {
		if (mp_target_read_u32(t, bias + sym.value, &v, NULL) != MP_OK)
			return false;
		out->major = (int)(v >> 24);
		out->minor = (int)(v >> 16 & 0xff);
		out->micro = (int)(v >> 8 & 0xff);
	} else if (defines(e, "Py_Initialize", &sym) && minor_in_name(m->path) == 10) {
		out->major = 3;
		out->minor = 10;
		out->micro = -1; /* not known */
	} else {
		return false;
	}
	snprintf(out->path, sizeof out->path, "%s", m->path);
	out->bias = bias;
	/* the type objects, to tell a code object, a str and a bytes from whatever else a pointer may reach */
	if (defines(e, "PyCode_Type", &sym))
		out->types.code = bias + sym.value;
	if (defines(e, "PyUnicode_Type", &sym))
		out->types.str = bias + sym.value;
	if (defines(e, "PyBytes_Type", &sym))
		out->types.bytes = bias + sym.value;
	if (defines(e, "_PyRuntime", &sym))
		out->runtime = bias + sym.value;
	return true;
}

mp_err mp_py_find(mp_target *t, mp_py_interp *out, mp_diag *diag)
{
	const mp_mapping *maps;
	size_t n = mp_target_mappings(t, &maps);

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < n; i++) {
		const mp_mapping *m = &maps[i];
		mp_elf *e;
		uint64_t bias;
		bool found;

		/* only the mapping of a file's first page: where its ELF header is, and the load bias with it */
		if (m->file_offset != 0 || m->local_path == NULL || m->path == NULL || minor_in_name(m->path) < 0 ||
		    mp_elf_open(m->local_path, &e, NULL) != MP_OK)
			continue;
		found = mp_elf_load_bias(e, m->start, 0, &bias, NULL) == MP_OK && version_of(t, m, e, bias, out);
		mp_elf_close(e);
		if (!found)
			continue;
		if ((out->layout = mp_py_layout_for(out->major, out->minor)) == NULL)
			return mp_fail(diag, MP_E_UNSUPPORTED, "%s: CPython %d.%d, which memprof cannot read yet (3.10-3.14)",
				       out->path, out->major, out->minor);
		return MP_OK;
	}
	return mp_fail(diag, MP_E_NOTFOUND, "no CPython interpreter among the target's mapped files");
}

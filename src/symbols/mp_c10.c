/* mp_c10.c - find libc10_cuda.so in a target and what the walker needs from it. */
#include "mp_c10.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_elf.h"

#define SYM_ALLOCATOR "_ZN3c104cuda20CUDACachingAllocator9allocatorE"
#define SYM_CONFIG_INSTANCE \
	"_ZZN3c104cuda20CUDACachingAllocator19CUDAAllocatorConfig8instanceEvE10s_instance"
/* c10::CachingAllocator::AcceleratorAllocatorConfig::instance()::instance and its guard variable
   (libc10.so, 2.14+; local symbols, in .symtab only). */
#define SYM_ACCEL_CONFIG "_ZZN3c1016CachingAllocator26AcceleratorAllocatorConfig8instanceEvE8instance"
#define SYM_ACCEL_CONFIG_GUARD "_ZGVZN3c1016CachingAllocator26AcceleratorAllocatorConfig8instanceEvE8instance"
#define MAX_CANDIDATES 64

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static bool is_c10_cuda(const char *path)
{
	return strncmp(base_name(path), "libc10_cuda.so", 14) == 0;
}

/* libc10.so, libc10.so.2.6, ... (not libc10_cuda.so). */
static bool is_c10(const char *path)
{
	return strncmp(base_name(path), "libc10.so", 9) == 0;
}

/* Whether another mapping of M's file sits where the loader would put one of E's other
   PT_LOADs with load bias BIAS. */
static bool loader_mapping(mp_target *t, const mp_mapping *m, const mp_elf *e, uint64_t bias)
{
	const mp_mapping *maps;
	size_t n = mp_target_mappings(t, &maps);

	for (size_t i = 0; i < n; i++)
		if (&maps[i] != m && maps[i].file_offset != 0 && maps[i].path != NULL &&
		    strcmp(maps[i].path, m->path) == 0 &&
		    mp_elf_mapping_fits(e, bias, maps[i].start, maps[i].file_offset))
			return true;
	return false;
}

/* The mapping of the ELF header page of the library IS names (libc10_cuda.so, libc10.so) that
   the loader made: the lowest one with file offset 0 whose other pages lie where its PT_LOADs
   say (a process may also mmap the file itself), else simply the lowest with file offset 0.
   Opens the file into *E with bias *BIAS (*E NULL in the second case). */
static const mp_mapping *find_mapping(mp_target *t, bool (*is)(const char *), mp_elf **e, uint64_t *bias)
{
	const mp_mapping *maps, *lowest = NULL;
	size_t n = mp_target_mappings(t, &maps);

	*e = NULL;
	for (size_t i = 0; i < n; i++) {
		const mp_mapping *m = &maps[i];

		if (m->path == NULL || !is(m->path) || m->file_offset != 0)
			continue;
		if (lowest == NULL)
			lowest = m;
		if (m->local_path == NULL || mp_elf_open(m->local_path, e, NULL) != MP_OK)
			continue;
		if (mp_elf_load_bias(*e, m->start, 0, bias, NULL) == MP_OK && loader_mapping(t, m, *e, *bias))
			return m;
		mp_elf_close(*e);
		*e = NULL;
	}
	return lowest;
}

/* "2.6.0" from "libc10_cuda.so.2.6.0". */
static bool version_from_name(mp_c10 *c)
{
	const char *v = base_name(c->path) + 14;

	if (*v != '.' || v[1] < '0' || v[1] > '9')
		return false;
	snprintf(c->version, sizeof c->version, "%s", v + 1);
	snprintf(c->version_source, sizeof c->version_source, "file name %.100s", base_name(c->path));
	return true;
}

/* "__version__ = '2.6.0+cu124'" from torch/version.py beside torch/lib/libc10_cuda.so. */
static bool version_from_py(mp_c10 *c)
{
	char path[4096 + 32], line[256];
	const char *slash = strrchr(c->local_path, '/');
	size_t dirlen;
	FILE *f;
	bool found = false;

	if (slash == NULL)
		return false;
	dirlen = (size_t)(slash - c->local_path);
	if (dirlen < 4 || memcmp(slash - 4, "/lib", 4) != 0)
		return false;
	snprintf(path, sizeof path, "%.*s/version.py", (int)(dirlen - 4), c->local_path);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		const char *q;
		size_t len;

		if (strncmp(line, "__version__", 11) != 0 || (q = strpbrk(line, "'\"")) == NULL)
			continue;
		len = strcspn(q + 1, "'\"");
		if (q[1 + len] != *q || len == 0 || len >= sizeof c->version)
			continue;
		snprintf(c->version, sizeof c->version, "%.*s", (int)len, q + 1);
		snprintf(c->version_source, sizeof c->version_source, "%.*s", 127, path);
		found = true;
	}
	fclose(f);
	return found;
}

/* Whether the local file E of mapping M (load bias BIAS) is another build than the target
   mapped: the target's own check (cores), then the build-id note in the target's memory. */
static bool build_id_differs(mp_target *t, const mp_mapping *m, const mp_elf *e, uint64_t bias)
{
	const unsigned char *id;
	uint64_t addr;
	unsigned char mem[64];
	size_t len = mp_elf_build_id(e, &id, &addr);

	if (mp_target_mapping_mismatch(t, m))
		return true;
	return len > 0 && addr != 0 && mp_target_read(t, bias + addr, mem, len, NULL) == MP_OK &&
	       memcmp(mem, id, len) != 0;
}

/* The build-id in the target's memory must be the local file's. */
static mp_err check_build_id(mp_target *t, const mp_mapping *m, const mp_elf *e, mp_c10 *c,
			     mp_diag *diag)
{
	const unsigned char *id;
	size_t len = mp_elf_build_id(e, &id, NULL);

	memcpy(c->build_id, id, len);
	c->build_id_len = len;
	c->build_id_mismatch = build_id_differs(t, m, e, c->bias);
	if (c->build_id_mismatch)
		return mp_fail(diag, MP_E_CORRUPT,
			       "'%s' is not the libc10_cuda the target mapped (build-id differs): "
			       "give the right one with --sysroot or --solib-path",
			       c->local_path);
	return MP_OK;
}

/* A copy relocation of NAME in another loaded object (the executable, normally): its target
   address in *ADDR and the object in *WHO. */
static bool copy_elsewhere(mp_target *t, const mp_mapping *self, const char *name, uint64_t *addr,
			   const char **who)
{
	const mp_mapping *maps;
	size_t n = mp_target_mappings(t, &maps);

	for (size_t i = 0; i < n; i++) {
		const mp_mapping *m = &maps[i];
		mp_elf *e;
		uint64_t dest, bias;
		bool hit;

		if (m->file_offset != 0 || m->local_path == NULL || m->path == NULL ||
		    strcmp(m->path, self->path) == 0 || (i > 0 && maps[i - 1].path != NULL &&
							  strcmp(maps[i - 1].path, m->path) == 0))
			continue;
		if (mp_elf_open(m->local_path, &e, NULL) != MP_OK)
			continue;
		hit = mp_elf_copy_reloc(e, name, &dest) &&
		      mp_elf_load_bias(e, m->start, 0, &bias, NULL) == MP_OK;
		mp_elf_close(e);
		if (hit) {
			*addr = bias + dest;
			*who = m->path;
			return true;
		}
	}
	return false;
}

/* Where the live object NAME (defined in E at SYM) is: what the library's GOT slot says the
   loader bound it to; without a readable slot, another object's copy relocation; else the
   library's own object. */
static uint64_t resolve_object(mp_target *t, const mp_mapping *m, const mp_elf *e, const mp_c10 *c,
			       const char *name, const mp_elf_sym *sym, char *how, size_t howsize,
			       mp_diag *diag)
{
	uint64_t own = c->bias + sym->value, slot, val, addr;
	const char *who;

	if (mp_elf_got_slot(e, name, &slot, NULL) == MP_OK &&
	    mp_target_read_u64(t, c->bias + slot, &val, NULL) == MP_OK && val != 0) {
		if (val == own)
			snprintf(how, howsize, "library object 0x%llx (its GOT slot 0x%llx agrees)",
				 (unsigned long long)own, (unsigned long long)(c->bias + slot));
		else
			snprintf(how, howsize,
				 "GOT slot 0x%llx -> 0x%llx (another object's copy; own 0x%llx unused)",
				 (unsigned long long)(c->bias + slot), (unsigned long long)val,
				 (unsigned long long)own);
		return val;
	}
	if (copy_elsewhere(t, m, name, &addr, &who)) {
		snprintf(how, howsize, "copy relocation in %s at 0x%llx (GOT slot unreadable)",
			 base_name(who), (unsigned long long)addr);
		return addr;
	}
	snprintf(how, howsize, "library object 0x%llx (no readable GOT slot)", (unsigned long long)own);
	if (mp_elf_got_slot(e, name, &slot, NULL) == MP_OK)
		mp_warn(diag, "%s: GOT slot of %s at 0x%llx unreadable: using the library's own object",
			c->local_path, name, (unsigned long long)(c->bias + slot));
	return own;
}

static void find_objects(mp_target *t, const mp_mapping *m, const mp_elf *e, mp_c10 *c,
			 mp_diag *diag)
{
	mp_elf_sym sym;
	uint64_t vaddr;

	if (mp_elf_symbol(e, SYM_ALLOCATOR, MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, NULL) == MP_OK &&
	    sym.defined)
		c->allocator_ptr_addr = resolve_object(t, m, e, c, SYM_ALLOCATOR, &sym, c->allocator_how,
						       sizeof c->allocator_how, diag);
	else
		snprintf(c->allocator_how, sizeof c->allocator_how, "no symbol %s", SYM_ALLOCATOR);
	if (mp_elf_symbol(e, SYM_CONFIG_INSTANCE, MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, NULL) == MP_OK &&
	    sym.defined) {
		char how[128];

		/* STB_GNU_UNIQUE: the loader may bind every user to one definition, maybe not ours. */
		c->config_instance_addr = resolve_object(t, m, e, c, SYM_CONFIG_INSTANCE, &sym, how,
							 sizeof how, diag);
	}
	if (mp_elf_find_string(e, MP_NATIVE_ALLOCATOR_RTTI, &vaddr, NULL) == MP_OK)
		c->native_rtti_name_addr = c->bias + vaddr;
}

/* SYM_ACCEL_CONFIG in E (libc10.so, load bias BIAS), or why not in C->accel_config_why. */
static void accel_config_symbol(const mp_elf *e, uint64_t bias, mp_c10 *c)
{
	mp_elf_sym sym;

	if (mp_elf_symbol(e, SYM_ACCEL_CONFIG, MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, NULL) != MP_OK ||
	    !sym.defined || sym.type != MP_ELF_STT_OBJECT) {
		snprintf(c->accel_config_why, sizeof c->accel_config_why, "'%.180s' %s", mp_elf_path(e),
			 mp_elf_has_symtab(e) ? "has no AcceleratorAllocatorConfig instance"
					      : "has no .symtab (stripped)");
		return;
	}
	c->accel_config_addr = bias + sym.value;
	c->accel_config_size = sym.size;
	if (mp_elf_symbol(e, SYM_ACCEL_CONFIG_GUARD, MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, NULL) == MP_OK &&
	    sym.defined)
		c->accel_config_guard_addr = bias + sym.value;
}

/* libc10.so's AcceleratorAllocatorConfig instance (mp_c10.h). Never fails: what goes wrong is
   said in C->accel_config_why. */
static void find_accel_config(mp_target *t, mp_c10 *c)
{
	mp_elf *e = NULL;
	uint64_t bias = 0;
	const mp_mapping *m = find_mapping(t, is_c10, &e, &bias);

	if (m == NULL) {
		snprintf(c->accel_config_why, sizeof c->accel_config_why, "the target maps no libc10.so");
		return;
	}
	snprintf(c->libc10_path, sizeof c->libc10_path, "%s", m->path);
	if (m->local_path == NULL)
		snprintf(c->accel_config_why, sizeof c->accel_config_why, "'%.180s' (mapped by the target) not found here",
			 m->path);
	else if (e == NULL && (mp_elf_open(m->local_path, &e, NULL) != MP_OK ||
			       mp_elf_load_bias(e, m->start, 0, &bias, NULL) != MP_OK))
		snprintf(c->accel_config_why, sizeof c->accel_config_why, "'%.180s' is not a readable ELF file",
			 m->local_path);
	else if (build_id_differs(t, m, e, bias))
		snprintf(c->accel_config_why, sizeof c->accel_config_why,
			 "'%.180s' is not the libc10.so the target mapped (build-id differs)", m->local_path);
	else
		accel_config_symbol(e, bias, c);
	mp_elf_close(e);
}

mp_err mp_c10_find(mp_target *t, mp_c10 *out, mp_diag *diag)
{
	const mp_mapping *m;
	mp_elf *e = NULL;
	mp_err err;

	memset(out, 0, sizeof *out);
	out->cxx11_abi = -1;
	m = find_mapping(t, is_c10_cuda, &e, &out->bias);
	if (m == NULL)
		return mp_fail(diag, MP_E_NOTFOUND,
			       "no libc10_cuda.so mapped: not a PyTorch process with CUDA");
	snprintf(out->path, sizeof out->path, "%s", m->path);
	if (m->local_path == NULL)
		return mp_fail(diag, MP_E_NOTFOUND,
			       "'%s' (mapped by the target) not found here: give --sysroot or --solib-path",
			       m->path);
	snprintf(out->local_path, sizeof out->local_path, "%s", m->local_path);
	if (e == NULL) {
		err = mp_elf_open(m->local_path, &e, diag);
		if (err != MP_OK)
			goto out;
		err = mp_elf_load_bias(e, m->start, 0, &out->bias, diag);
		if (err != MP_OK)
			goto out;
	}
	err = check_build_id(t, m, e, out, diag);
	if (err != MP_OK)
		goto out;
	/* A known build-id is certain; a version.py beside the library names whatever was installed there. */
	if (version_from_name(out))
		;
	else if (mp_torch_release_by_build_id(out->build_id, out->build_id_len, out->version, sizeof out->version))
		snprintf(out->version_source, sizeof out->version_source, "build-id of PyPI's wheel");
	else
		version_from_py(out);
	out->cxx11_abi = mp_elf_cxx11_abi(e);
	out->cuda_major = mp_elf_cuda_major(e);
	out->has_dwarf = mp_elf_dwarf_file(out->local_path, NULL, out->dwarf_path,
					   sizeof out->dwarf_path, NULL) == MP_OK;
	if (!out->has_dwarf)
		out->dwarf_path[0] = '\0';
	find_objects(t, m, e, out, diag);
	find_accel_config(t, out);
out:
	mp_elf_close(e);
	return err;
}

/* ---- layout candidates */

/* Whether table version V ("2.6") names release VERSION ("2.6.0+cu124"). */
static bool version_matches(const char *v, const char *version)
{
	size_t n = strlen(v);

	return n > 0 && strncmp(v, version, n) == 0 &&
	       (version[n] == '\0' || version[n] == '.' || version[n] == '+');
}

/* How well built-in L suits C10: higher is better; 8+ means every known key agrees. */
static int score(const mp_layout *l, const mp_c10 *c)
{
	int s = 0;

	if (c->version[0] != '\0' && l->key.torch_version[0] != '\0')
		s += version_matches(l->key.torch_version, c->version) ? 8 : 0;
	else
		s += 4;
	if (c->cxx11_abi < 0 || l->key.cxx11_abi < 0 || c->cxx11_abi == l->key.cxx11_abi)
		s += 2;
	if (c->cuda_major == 0 || l->key.cuda_major == 0 || c->cuda_major == l->key.cuda_major)
		s += 1;
	return s;
}

size_t mp_c10_layout_candidates(const mp_c10 *c10, mp_layout *out, size_t max, mp_diag *diag)
{
	size_t n = 0, nb = mp_layout_builtin_count(), order[MAX_CANDIDATES];
	int scores[MAX_CANDIDATES];

	if (max == 0)
		return 0;
	if (c10->has_dwarf) {
		mp_diag d = { 0 };

		if (mp_layout_from_dwarf(c10->dwarf_path, NULL, &out[n], &d) == MP_OK) {
			snprintf(out[n].key.torch_version, sizeof out[n].key.torch_version, "%.15s",
				 c10->version);
			out[n].key.cxx11_abi = c10->cxx11_abi;
			out[n].key.cuda_major = c10->cuda_major;
			n++;
		} else {
			mp_warn(diag, "DWARF of '%s' unusable: %s", c10->dwarf_path, d.msg);
		}
	}
	if (nb > MAX_CANDIDATES)
		nb = MAX_CANDIDATES;
	/* Stable insertion sort of the tables by score (file order among equals). */
	for (size_t i = 0; i < nb; i++) {
		size_t idx = i, j = i;
		int sc = score(mp_layout_builtin(idx), c10);

		while (j > 0 && scores[j - 1] < sc) {
			scores[j] = scores[j - 1];
			order[j] = order[j - 1];
			j--;
		}
		scores[j] = sc;
		order[j] = idx;
	}
	for (size_t i = 0; i < nb && n < max; i++)
		out[n++] = *mp_layout_builtin(order[i]);
	return n;
}

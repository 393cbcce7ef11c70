/* mp_layout_dwarf.c - a layout read from the DWARF of libc10_cuda.so (libdw). */
#include "mp_layout.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mp_elf.h"
#include "mp_layout_int.h"

#define MAX_NS_DEPTH 16
#define MAX_BASE_DEPTH 4

/* The structs the field table names, and where each lives. */
enum want_scope {
	SCOPE_CCA,  /* inside c10::cuda::CUDACachingAllocator (any depth), not CudaMallocAsync */
	SCOPE_C10,  /* anywhere inside c10 */
	SCOPE_RING, /* RingBuffer<...TraceEntry>; better taken from DeviceCachingAllocator */
};

struct want {
	const char *name;
	enum want_scope scope;
	bool optional; /* not in every version: taken where the search meets it, never waited for */
	bool found;
	Dwarf_Die die;
};

static struct want wants_template[] = {
	{ "NativeCachingAllocator", SCOPE_CCA, false, false, { 0 } },
	{ "DeviceCachingAllocator", SCOPE_CCA, false, false, { 0 } },
	{ "DeviceStats", SCOPE_C10, false, false, { 0 } },
	{ "BlockPool", SCOPE_CCA, false, false, { 0 } },
	{ "PrivatePool", SCOPE_CCA, false, false, { 0 } },
	{ "Block", SCOPE_CCA, false, false, { 0 } },
	{ "ExpandableSegment", SCOPE_CCA, false, false, { 0 } },
	{ "RingBuffer", SCOPE_RING, false, false, { 0 } },
	{ "TraceEntry", SCOPE_C10, false, false, { 0 } },
	{ "CUDAAllocatorConfig", SCOPE_CCA, false, false, { 0 } },
	/* 2.14+ (c10::CachingAllocator, libc10): the allocator's CU uses it through CUDAAllocatorConfig's
	   inline accessors, so it is met in the first pass where it exists; 2.6 has none. */
	{ "AcceleratorAllocatorConfig", SCOPE_C10, true, false, { 0 } },
	/* 2.0 only: a Block's history list of {addr, real_size, context} records. */
	{ "History", SCOPE_CCA, true, false, { 0 } },
	/* 2.5 on: the native allocator's annotation ring's entries. */
	{ "AnnotationEntry", SCOPE_C10, true, false, { 0 } },
};
#define NWANTS (sizeof wants_template / sizeof wants_template[0])

struct search {
	struct want w[NWANTS];
	size_t left;
	const char *ns[MAX_NS_DEPTH]; /* enclosing namespace names; NULL = anonymous */
	int depth;
};

static bool scope_ok(const struct search *s, enum want_scope scope)
{
	bool c10 = s->depth > 0 && s->ns[0] != NULL && strcmp(s->ns[0], "c10") == 0;
	bool cca = false;

	for (int i = 0; i < s->depth; i++) {
		if (s->ns[i] == NULL)
			continue;
		if (strcmp(s->ns[i], "CudaMallocAsync") == 0)
			return false;
		if (strcmp(s->ns[i], "CUDACachingAllocator") == 0)
			cca = true;
	}
	return scope == SCOPE_CCA ? c10 && cca : c10;
}

static bool is_definition(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	Dwarf_Attribute a;

	return (tag == DW_TAG_structure_type || tag == DW_TAG_class_type) &&
	       dwarf_hasattr(die, DW_AT_byte_size) && dwarf_attr(die, DW_AT_declaration, &a) == NULL;
}

static void consider(struct search *s, Dwarf_Die *die)
{
	const char *name = dwarf_diename(die);

	if (name == NULL || !is_definition(die))
		return;
	for (size_t i = 0; i < NWANTS; i++) {
		struct want *w = &s->w[i];
		bool match;

		if (w->found)
			continue;
		if (w->scope == SCOPE_RING)
			match = strncmp(name, "RingBuffer<", 11) == 0 && strstr(name, "TraceEntry") != NULL;
		else
			match = strcmp(name, w->name) == 0;
		if (match && scope_ok(s, w->scope)) {
			w->die = *die;
			w->found = true;
			if (!w->optional)
				s->left--;
		}
	}
}

/* Look through the namespaces and types directly under PARENT (not into functions or classes). */
static void walk(struct search *s, Dwarf_Die *parent)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_namespace && s->depth < MAX_NS_DEPTH) {
			s->ns[s->depth++] = dwarf_diename(&child);
			walk(s, &child);
			s->depth--;
		} else if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type) {
			consider(s, &child);
		}
		if (s->left == 0)
			return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Whether CU (its DIE) is the one that defines the allocator. */
static bool is_allocator_cu(Dwarf_Die *cudie)
{
	const char *name = dwarf_diename(cudie);

	return name != NULL && strstr(name, "CUDACachingAllocator.cpp") != NULL;
}

static void ring_from_dca(struct search *s);

/* Search the allocator's CU first, then every other CU, until every struct is found. */
static void search_units(Dwarf *dw, struct search *s)
{
	for (int pass = 0; pass < 2 && s->left > 0; pass++) {
		Dwarf_CU *cu = NULL;
		Dwarf_Die cudie;
		uint8_t unit_type;

		while (s->left > 0 && dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
			if ((unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
			    is_allocator_cu(&cudie) != (pass == 0))
				continue;
			s->depth = 0;
			walk(s, &cudie);
			ring_from_dca(s);
		}
	}
}

/* DIE's DW_AT_data_member_location as a plain offset. */
static bool member_location(Dwarf_Die *die, Dwarf_Word *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_attr(die, DW_AT_data_member_location, &a) == NULL)
		return false;
	if (dwarf_formudata(&a, off) == 0)
		return true;
	if (dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*off = ops[0].number;
		return true;
	}
	return false;
}

/* The struct a member or base of type DIE refers to, through typedefs and qualifiers. */
static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	if (dwarf_attr(die, DW_AT_type, &a) == NULL || dwarf_formref_die(&a, &t) == NULL)
		return false;
	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&t);

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) {
			*out = t;
			return true;
		}
		if (dwarf_attr(&t, DW_AT_type, &a) == NULL || dwarf_formref_die(&a, &t) == NULL)
			return false;
	}
	return false;
}

/* Offset of data member NAME in struct DIE, looking into base classes too. */
static bool find_member(Dwarf_Die *die, const char *name, int depth, Dwarf_Word *off, Dwarf_Die *member)
{
	bool in_union = dwarf_tag(die) == DW_TAG_union_type; /* whose members may give no location: 0 */
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		const char *n;
		Dwarf_Die base;
		Dwarf_Word boff, moff;

		if (tag == DW_TAG_member && (n = dwarf_diename(&child)) != NULL && strcmp(n, name) == 0) {
			if (!member_location(&child, off)) {
				if (!in_union || dwarf_hasattr(&child, DW_AT_data_member_location))
					continue;
				*off = 0;
			}
			if (member != NULL)
				*member = child;
			return true;
		}
		/* a base class, or an anonymous union or struct (a ska slot's value is in one) */
		if ((tag == DW_TAG_inheritance || (tag == DW_TAG_member && dwarf_diename(&child) == NULL)) &&
		    depth < MAX_BASE_DEPTH && member_location(&child, &boff) && type_of(&child, &base) &&
		    find_member(&base, name, depth + 1, &moff, member)) {
			*off = boff + moff;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* RingBuffer<TraceEntry> as DeviceCachingAllocator's alloc_buffer has it. */
static void ring_from_dca(struct search *s)
{
	struct want *dca = &s->w[1], *ring = &s->w[7];
	Dwarf_Die member, t;
	Dwarf_Word off;

	if (ring->found || !dca->found || !find_member(&dca->die, "alloc_buffer", 0, &off, &member) ||
	    !type_of(&member, &t) || !is_definition(&t))
		return;
	ring->die = t;
	ring->found = true;
	s->left--;
}

/* The slot of the ska table that DCA's member TABLE is: the struct its `entries` pointer points to. */
static bool table_slot(Dwarf_Die *dca, const char *table, Dwarf_Die *slot)
{
	Dwarf_Die member, t, ptr;
	Dwarf_Word off;

	return find_member(dca, table, 0, &off, &member) && type_of(&member, &t) &&
	       find_member(&t, "entries", 0, &off, &member) && type_of(&member, &ptr) &&
	       dwarf_tag(&ptr) == DW_TAG_pointer_type && type_of(&ptr, slot) && is_definition(slot);
}

/* GraphPoolsEntry and ActiveBlocksEntry: the slots of graph_pools and active_blocks, from DCA's members' types.
   A slot's value is a pair (key first, the pool pointer second: a unique_ptr's pointer is its first word) or the
   Block pointer itself. */
static void slot_fields(Dwarf_Die *dca, mp_layout *out)
{
	Dwarf_Die slot, value, pair;
	Dwarf_Word size, at, first, second;
	Dwarf_Attribute a;

	if (table_slot(dca, "graph_pools", &slot) && dwarf_attr(&slot, DW_AT_byte_size, &a) != NULL &&
	    dwarf_formudata(&a, &size) == 0 && size < (1u << 20) && find_member(&slot, "value", 0, &at, &value) &&
	    type_of(&value, &pair) && find_member(&pair, "first", 0, &first, NULL) &&
	    find_member(&pair, "second", 0, &second, NULL) && at + second < size) {
		out->off[MP_L_GPE_SIZEOF] = (int32_t)size;
		out->off[MP_L_GPE_ID] = (int32_t)(at + first);
		out->off[MP_L_GPE_POOL] = (int32_t)(at + second);
	}
	if (table_slot(dca, "active_blocks", &slot) && dwarf_attr(&slot, DW_AT_byte_size, &a) != NULL &&
	    dwarf_formudata(&a, &size) == 0 && size < (1u << 20) && find_member(&slot, "value", 0, &at, NULL) &&
	    at < size) {
		out->off[MP_L_ABE_SIZEOF] = (int32_t)size;
		out->off[MP_L_ABE_BLOCK] = (int32_t)at;
	}
}

static void fill_fields(struct search *s, mp_layout *out)
{
	for (int f = 0; f < MP_L__COUNT; f++) {
		const char *sname = mp_layout_struct_name((enum mp_layout_field)f);
		const char *mname = mp_layout_member_name((enum mp_layout_field)f);
		Dwarf_Word v;

		for (size_t i = 0; i < NWANTS; i++) {
			struct want *w = &s->w[i];

			if (strcmp(w->name, sname) != 0 || !w->found)
				continue;
			if (strcmp(mname, "sizeof") == 0) {
				Dwarf_Attribute a;

				if (dwarf_attr(&w->die, DW_AT_byte_size, &a) != NULL &&
				    dwarf_formudata(&a, &v) == 0 && v < (1u << 20))
					out->off[f] = (int32_t)v;
			} else if (find_member(&w->die, mname, 0, &v, NULL) && v < (1u << 20)) {
				out->off[f] = (int32_t)v;
			}
		}
	}
}

mp_err mp_layout_from_dwarf(const char *path, const char *debug_root, mp_layout *out,
			    mp_diag *diag)
{
	char dpath[4096], source[256];
	struct search s;
	Dwarf *dw;
	int fd;
	mp_err err;

	err = mp_elf_dwarf_file(path, debug_root, dpath, sizeof dpath, diag);
	if (err != MP_OK)
		return err;
	snprintf(source, sizeof source, "DWARF of %.240s", dpath);
	mp_layout_init(out, "dwarf", source);
	fd = open(dpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mp_fail(diag, MP_E_ERRNO, "cannot open '%s': %s", dpath, strerror(errno));
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (dw == NULL) {
		close(fd);
		return mp_fail(diag, MP_E_NOTFOUND, "'%s': no usable DWARF: %s", dpath, dwarf_errmsg(-1));
	}
	memset(&s, 0, sizeof s);
	memcpy(s.w, wants_template, sizeof s.w);
	s.left = 0;
	for (size_t i = 0; i < NWANTS; i++)
		s.left += !s.w[i].optional;
	search_units(dw, &s);
	fill_fields(&s, out);
	if (s.w[1].found)
		slot_fields(&s.w[1].die, out);
	dwarf_end(dw);
	close(fd);
	if (!s.w[0].found && !s.w[1].found && !s.w[5].found)
		return mp_fail(diag, MP_E_NOTFOUND, "'%s': the DWARF describes no caching allocator types",
			       dpath);
	return mp_layout_check(out, diag);
}

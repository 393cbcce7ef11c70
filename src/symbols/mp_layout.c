/* mp_layout.c - the field table, layout files (parse, format, load) and the built-in tables. */
#include "mp_layout.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_layout_int.h"

#define MAX_LAYOUT_FILE (1u << 20) /* a layout file is a few KiB */
#define MAX_OFFSET (1 << 20)

static const char *const struct_names[] = {
#define X(id, s, m) s,
	MP_LAYOUT_FIELDS
#undef X
};

static const char *const member_names[] = {
#define X(id, s, m) m,
	MP_LAYOUT_FIELDS
#undef X
};

/* Fields a version may lack. Everything else the walker cannot do without:
   - DCA_DEVICE_ID, PP_ID: added after 2.6 (the device index is the vector index, the pool id
     the graph_pools key);
   - PP_USE_COUNT: the walker does not need it;
   - NCA_CLOCK_CONVERTER: only for converting trace times, which can be approximated;
   - NCA_ANNOTATION_BUFFER and AnnotationEntry (2.5 on): external_annotations only, all or none;
   - DS_NUM_OOM_REJECTIONS, DS_RESERVED_BYTES_BY_PRIVATE_POOLS (2.14), TE_MEMPOOL,
     TE_COMPILE_CONTEXT, TE_USER_METADATA (after 2.6);
   - ES_*: ExpandableSegment has members only when built with the CUDA driver API (Linux CUDA
     builds always are); a layout without them cannot walk expandable segments;
   - expandable segments themselves (2.1 on: Block.mapped and expandable_segment_, BlockPool's
     unmapped set, the allocator's expandable_segments_): all or none (mp_layout_check);
   - a Block's contexts: context_when_allocated and context_when_segment_allocated (2.1 on), or
     2.0's history list (Block.history, History.context): one of the two (mp_layout_check);
   - CFG_*, AAC_*: allocator_settings only; 2.14 moved most of them from CUDAAllocatorConfig to
     AcceleratorAllocatorConfig in libc10. */
static bool field_optional(enum mp_layout_field f)
{
	switch (f) {
	case MP_L_NCA_CLOCK_CONVERTER:
	case MP_L_NCA_ANNOTATION_BUFFER: /* the annotation ring and its entries: 2.5 on */
	case MP_L_AE_SIZEOF:
	case MP_L_AE_DEVICE:
	case MP_L_AE_TIME:
	case MP_L_AE_METADATA:
	case MP_L_DCA_DEVICE_ID:
	case MP_L_DS_NUM_SYNC_ALL_STREAMS: /* these three: 2.3 on */
	case MP_L_DS_NUM_DEVICE_ALLOC:
	case MP_L_DS_NUM_DEVICE_FREE:
	case MP_L_DS_NUM_OOM_REJECTIONS:
	case MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS:
	case MP_L_PP_ID:
	case MP_L_PP_USE_COUNT:
	case MP_L_DCA_EXPANDABLE_SEGMENTS:
	case MP_L_BP_UNMAPPED:
	case MP_L_BLOCK_MAPPED:
	case MP_L_BLOCK_EXPANDABLE_SEGMENT:
	case MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED:
	case MP_L_BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED:
	case MP_L_BLOCK_HISTORY:
	case MP_L_HISTORY_CONTEXT:
	case MP_L_ES_PTR:
	case MP_L_ES_SEGMENT_SIZE:
	case MP_L_ES_MAX_HANDLES:
	case MP_L_TE_DEVICE: /* device_ and time_: 2.2 on */
	case MP_L_TE_TIME:
	case MP_L_TE_MEMPOOL:
	case MP_L_TE_COMPILE_CONTEXT:
	case MP_L_TE_USER_METADATA:
	case MP_L_CFG_SIZEOF:
	case MP_L_CFG_MAX_SPLIT_SIZE:
	case MP_L_CFG_ROUNDUP_POWER2_DIVISIONS:
	case MP_L_CFG_GARBAGE_COLLECTION_THRESHOLD:
	case MP_L_CFG_PINNED_NUM_REGISTER_THREADS:
	case MP_L_CFG_EXPANDABLE_SEGMENTS:
	case MP_L_CFG_RELEASE_LOCK_ON_CUDAMALLOC:
	case MP_L_CFG_PINNED_USE_CUDA_HOST_REGISTER:
	case MP_L_CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE:
	case MP_L_CFG_LAST_ALLOCATOR_SETTINGS:
	case MP_L_AAC_SIZEOF:
	case MP_L_AAC_MAX_SPLIT_SIZE:
	case MP_L_AAC_ROUNDUP_POWER2_DIVISIONS:
	case MP_L_AAC_GARBAGE_COLLECTION_THRESHOLD:
	case MP_L_AAC_USE_EXPANDABLE_SEGMENTS:
	case MP_L_AAC_PINNED_MAX_ROUND_THRESHOLD:
	case MP_L_AAC_PINNED_MAX_CACHED_SIZE:
	case MP_L_AAC_LAST_ALLOCATOR_SETTINGS:
		return true;
	default:
		return false;
	}
}

const char *mp_layout_struct_name(enum mp_layout_field f)
{
	return (unsigned)f < MP_L__COUNT ? struct_names[f] : "?";
}

const char *mp_layout_member_name(enum mp_layout_field f)
{
	return (unsigned)f < MP_L__COUNT ? member_names[f] : "?";
}

bool mp_layout_field_required(enum mp_layout_field f)
{
	return (unsigned)f < MP_L__COUNT && !field_optional(f);
}

void mp_layout_init(mp_layout *l, const char *name, const char *source)
{
	memset(l, 0, sizeof *l);
	snprintf(l->name, sizeof l->name, "%s", name);
	snprintf(l->source, sizeof l->source, "%s", source);
	l->key.cxx11_abi = -1;
	for (int i = 0; i < MP_L__COUNT; i++)
		l->off[i] = MP_LAYOUT_ABSENT;
}

int mp_layout_field_lookup(const char *s, size_t slen, const char *m, size_t mlen)
{
	for (int i = 0; i < MP_L__COUNT; i++)
		if (strlen(struct_names[i]) == slen && memcmp(struct_names[i], s, slen) == 0 &&
		    strlen(member_names[i]) == mlen && memcmp(member_names[i], m, mlen) == 0)
			return i;
	return -1;
}

/* The *_SIZEOF field of F's struct, or -1 when the struct has none listed. */
static int sizeof_field(enum mp_layout_field f)
{
	int i = mp_layout_field_lookup(struct_names[f], strlen(struct_names[f]), "sizeof", 6);

	return i == (int)f ? -1 : i;
}

/* The members of the ska tables' slots: the slot's size field, the member's width (the walker reads it from the
   slot's image, so it must end inside the slot) and where every release 2.0 to 2.14 has it (allocator-facts.md
   §2.1; the tables in layouts/ say so one by one), for a layout file that gives none of a slot's fields, written
   before memprof listed them. */
static const struct {
	enum mp_layout_field field, slot;
	int32_t width, at;
} slot_members[] = {
	{ MP_L_GPE_SIZEOF, MP_L_GPE_SIZEOF, 0, 32 },
	{ MP_L_GPE_ID, MP_L_GPE_SIZEOF, 16, 8 }, /* MempoolId_t: two 8-byte words */
	{ MP_L_GPE_POOL, MP_L_GPE_SIZEOF, 8, 24 },
	{ MP_L_ABE_SIZEOF, MP_L_ABE_SIZEOF, 0, 16 },
	{ MP_L_ABE_BLOCK, MP_L_ABE_SIZEOF, 8, 8 },
};
#define NSLOT_MEMBERS (sizeof slot_members / sizeof slot_members[0])

static mp_err check_slots(const mp_layout *l, mp_diag *diag)
{
	for (size_t i = 0; i < NSLOT_MEMBERS; i++) {
		int32_t at = l->off[slot_members[i].field], size = l->off[slot_members[i].slot];

		if (slot_members[i].width > 0 && at != MP_LAYOUT_ABSENT && size != MP_LAYOUT_ABSENT &&
		    at + slot_members[i].width > size)
			return mp_fail(diag, MP_E_RANGE, "%s: %s.%s (%d bytes at %d) passes the end of its %d-byte slot",
				       l->name, struct_names[slot_members[i].field], member_names[slot_members[i].field],
				       (int)slot_members[i].width, (int)at, (int)size);
	}
	return MP_OK;
}

/* SEEN: the fields a layout file gave; a slot none of whose fields it gave gets every release's. */
static void slots_of_older_files(const bool *seen, mp_layout *l)
{
	for (size_t i = 0; i < NSLOT_MEMBERS; i++) {
		bool given = false;

		for (size_t j = 0; j < NSLOT_MEMBERS; j++)
			given |= slot_members[j].slot == slot_members[i].slot && seen[slot_members[j].field];
		if (!given)
			l->off[slot_members[i].field] = slot_members[i].at;
	}
}

/* Members a release has all of or none of (field_optional); the list ends at MP_L__COUNT. */
static const enum mp_layout_field together[][6] = {
	{ MP_L_DCA_EXPANDABLE_SEGMENTS, MP_L_BP_UNMAPPED, MP_L_BLOCK_MAPPED, MP_L_BLOCK_EXPANDABLE_SEGMENT, MP_L__COUNT },
	{ MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED, MP_L_BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED, MP_L__COUNT },
	{ MP_L_BLOCK_HISTORY, MP_L_HISTORY_CONTEXT, MP_L__COUNT },
	{ MP_L_NCA_ANNOTATION_BUFFER, MP_L_AE_SIZEOF, MP_L_AE_DEVICE, MP_L_AE_TIME, MP_L_AE_METADATA, MP_L__COUNT },
};

static mp_err check_groups(const mp_layout *l, mp_diag *diag)
{
	for (size_t g = 0; g < sizeof together / sizeof together[0]; g++)
		for (size_t i = 1; together[g][i] != MP_L__COUNT; i++) {
			enum mp_layout_field a = together[g][0], b = together[g][i];

			if ((l->off[a] == MP_LAYOUT_ABSENT) != (l->off[b] == MP_LAYOUT_ABSENT))
				return mp_fail(diag, MP_E_NOTFOUND, "%s: %s.%s and %s.%s come together (one is missing)",
					       l->name, struct_names[a], member_names[a], struct_names[b], member_names[b]);
		}
	if ((l->off[MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED] == MP_LAYOUT_ABSENT) ==
	    (l->off[MP_L_BLOCK_HISTORY] == MP_LAYOUT_ABSENT))
		return mp_fail(diag, MP_E_NOTFOUND,
			       "%s: a Block keeps its context in context_when_allocated or in history: give one of the two",
			       l->name);
	return MP_OK;
}

mp_err mp_layout_check(const mp_layout *l, mp_diag *diag)
{
	mp_err err = check_groups(l, diag);

	if (err != MP_OK)
		return err;
	for (int i = 0; i < MP_L__COUNT; i++) {
		int sz = sizeof_field((enum mp_layout_field)i);

		if (l->off[i] == MP_LAYOUT_ABSENT) {
			if (mp_layout_field_required((enum mp_layout_field)i))
				return mp_fail(diag, MP_E_NOTFOUND, "%s: required field %s.%s missing",
					       l->name, struct_names[i], member_names[i]);
			continue;
		}
		if (l->off[i] < 0 || l->off[i] >= MAX_OFFSET)
			return mp_fail(diag, MP_E_RANGE, "%s: %s.%s %d out of range", l->name,
				       struct_names[i], member_names[i], (int)l->off[i]);
		if (sz >= 0 && l->off[sz] != MP_LAYOUT_ABSENT && l->off[i] >= l->off[sz])
			return mp_fail(diag, MP_E_RANGE, "%s: %s.%s %d lies outside sizeof %s (%d)",
				       l->name, struct_names[i], member_names[i], (int)l->off[i],
				       struct_names[i], (int)l->off[sz]);
	}
	return check_slots(l, diag);
}

/* ---- parsing */

struct parser {
	const char *name;
	unsigned line;
	mp_diag *diag;
	bool seen[MP_L__COUNT];
	bool seen_version, seen_abi, seen_cuda;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Next whitespace-separated word of [*P, END): *W, *WLEN; false at the end. */
static bool next_word(const char **p, const char *end, const char **w, size_t *wlen)
{
	while (*p < end && is_space(**p))
		(*p)++;
	if (*p >= end)
		return false;
	*w = *p;
	while (*p < end && !is_space(**p))
		(*p)++;
	*wlen = (size_t)(*p - *w);
	return true;
}

/* A decimal or 0x-hex number in [0, LIMIT). */
static bool parse_number(const char *w, size_t len, long limit, long *out)
{
	char buf[32];
	char *end;
	long v;

	if (len == 0 || len >= sizeof buf || w[0] == '-' || w[0] == '+')
		return false;
	memcpy(buf, w, len);
	buf[len] = '\0';
	errno = 0;
	v = strtol(buf, &end, 0);
	if (errno != 0 || *end != '\0' || v < 0 || v >= limit)
		return false;
	*out = v;
	return true;
}

static mp_err parse_key(struct parser *p, mp_layout *out, const char *s, const char *end)
{
	const char *k, *v, *extra;
	size_t klen, vlen, xlen;
	long n;

	if (!next_word(&s, end, &k, &klen) || !next_word(&s, end, &v, &vlen) ||
	    next_word(&s, end, &extra, &xlen))
		return mp_fail(p->diag, MP_E_CORRUPT, "%s:%u: expected \"key NAME VALUE\"", p->name,
			       p->line);
	if (klen == 7 && memcmp(k, "version", 7) == 0 && !p->seen_version) {
		if (vlen >= sizeof out->key.torch_version)
			return mp_fail(p->diag, MP_E_RANGE, "%s:%u: version too long", p->name, p->line);
		memcpy(out->key.torch_version, v, vlen);
		out->key.torch_version[vlen] = '\0';
		p->seen_version = true;
	} else if (klen == 9 && memcmp(k, "cxx11_abi", 9) == 0 && !p->seen_abi) {
		if (!parse_number(v, vlen, 2, &n))
			return mp_fail(p->diag, MP_E_RANGE, "%s:%u: cxx11_abi must be 0 or 1", p->name,
				       p->line);
		out->key.cxx11_abi = (int)n;
		p->seen_abi = true;
	} else if (klen == 10 && memcmp(k, "cuda_major", 10) == 0 && !p->seen_cuda) {
		if (!parse_number(v, vlen, 1000, &n))
			return mp_fail(p->diag, MP_E_RANGE, "%s:%u: bad cuda_major", p->name, p->line);
		out->key.cuda_major = (int)n;
		p->seen_cuda = true;
	} else {
		return mp_fail(p->diag, MP_E_CORRUPT, "%s:%u: unknown or repeated key '%.*s'", p->name,
			       p->line, (int)klen, k);
	}
	return MP_OK;
}

static mp_err parse_field(struct parser *p, mp_layout *out, const char *s, const char *end)
{
	const char *f, *v, *dot, *extra;
	size_t flen, vlen, xlen;
	int id;
	long n;

	if (!next_word(&s, end, &f, &flen) || !next_word(&s, end, &v, &vlen) ||
	    next_word(&s, end, &extra, &xlen))
		return mp_fail(p->diag, MP_E_CORRUPT, "%s:%u: expected \"Struct.member OFFSET\"",
			       p->name, p->line);
	dot = memchr(f, '.', flen);
	id = dot == NULL ? -1
			 : mp_layout_field_lookup(f, (size_t)(dot - f), dot + 1,
						  flen - (size_t)(dot - f) - 1);
	if (id < 0)
		return mp_fail(p->diag, MP_E_CORRUPT, "%s:%u: unknown field '%.*s'", p->name, p->line,
			       (int)flen, f);
	if (p->seen[id])
		return mp_fail(p->diag, MP_E_CORRUPT, "%s:%u: field '%.*s' given twice", p->name,
			       p->line, (int)flen, f);
	p->seen[id] = true;
	if (vlen == 1 && v[0] == '-') {
		out->off[id] = MP_LAYOUT_ABSENT;
		return MP_OK;
	}
	if (!parse_number(v, vlen, MAX_OFFSET, &n))
		return mp_fail(p->diag, MP_E_RANGE,
			       "%s:%u: '%.*s' is not an offset in [0, %d) for %.*s", p->name, p->line,
			       (int)vlen, v, MAX_OFFSET, (int)flen, f);
	out->off[id] = (int32_t)n;
	return MP_OK;
}

static mp_err parse_line(struct parser *p, mp_layout *out, const char *s, const char *end)
{
	const char *q, *w;
	size_t wlen;

	for (const char *c = s; c < end; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r')
			return mp_fail(p->diag, MP_E_FORMAT, "%s:%u: binary data, not a layout file",
				       p->name, p->line);
	while (s < end && is_space(*s))
		s++;
	if (s == end || *s == '#')
		return MP_OK;
	q = s;
	if (!next_word(&q, end, &w, &wlen))
		return MP_OK;
	if (wlen == 3 && memcmp(w, "key", 3) == 0)
		return parse_key(p, out, s + 3, end);
	return parse_field(p, out, s, end);
}

mp_err mp_layout_parse(const char *name, const char *text, size_t len, mp_layout *out,
		       mp_diag *diag)
{
	struct parser p = { .name = name, .diag = diag };
	const char *s = text, *end = text + len;
	char source[256];
	bool any = false;
	mp_err err;

	snprintf(source, sizeof source, "layout file %s", name);
	mp_layout_init(out, name, source);
	if (len > MAX_LAYOUT_FILE)
		return mp_fail(diag, MP_E_LIMIT, "%s: %zu bytes is too large for a layout file", name, len);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eol = nl != NULL ? nl : end;

		p.line++;
		err = parse_line(&p, out, s, eol);
		if (err != MP_OK)
			return err;
		s = nl != NULL ? nl + 1 : end;
	}
	for (int i = 0; i < MP_L__COUNT; i++)
		any |= p.seen[i];
	if (!any)
		return mp_fail(diag, MP_E_FORMAT, "%s: no fields: empty or not a layout file", name);
	slots_of_older_files(p.seen, out);
	return mp_layout_check(out, diag);
}

mp_err mp_layout_load_file(const char *path, mp_layout *out, mp_diag *diag)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	mp_err err;

	if (f == NULL)
		return mp_fail(diag, MP_E_ERRNO, "cannot open '%s': %s", path, strerror(errno));
	buf = malloc(MAX_LAYOUT_FILE + 1);
	if (buf == NULL) {
		fclose(f);
		return mp_fail(diag, MP_E_NOMEM, "'%s': out of memory", path);
	}
	n = fread(buf, 1, MAX_LAYOUT_FILE + 1, f);
	if (ferror(f))
		err = mp_fail(diag, MP_E_ERRNO, "cannot read '%s': %s", path, strerror(errno));
	else
		err = mp_layout_parse(path, buf, n, out, diag);
	free(buf);
	fclose(f);
	return err;
}

/* ---- formatting */

char *mp_layout_format(const mp_layout *l)
{
	size_t cap = 256 + (size_t)MP_L__COUNT * 96, n = 0;
	char *buf = malloc(cap);

	if (buf == NULL)
		return NULL;
	n += (size_t)snprintf(buf + n, cap - n, "# %s (%s)\n", l->name, l->source);
	if (l->key.torch_version[0] != '\0')
		n += (size_t)snprintf(buf + n, cap - n, "key version %s\n", l->key.torch_version);
	if (l->key.cxx11_abi == 0 || l->key.cxx11_abi == 1)
		n += (size_t)snprintf(buf + n, cap - n, "key cxx11_abi %d\n", l->key.cxx11_abi);
	if (l->key.cuda_major > 0)
		n += (size_t)snprintf(buf + n, cap - n, "key cuda_major %d\n", l->key.cuda_major);
	for (int i = 0; i < MP_L__COUNT; i++) {
		if (l->off[i] == MP_LAYOUT_ABSENT)
			n += (size_t)snprintf(buf + n, cap - n, "%s.%s -\n", struct_names[i],
					      member_names[i]);
		else
			n += (size_t)snprintf(buf + n, cap - n, "%s.%s %d\n", struct_names[i],
					      member_names[i], (int)l->off[i]);
	}
	return buf;
}

/* ---- built-in tables (mp_layout_builtin.c is generated from layouts/ *.layout) */

static mp_layout *builtins;
static size_t nbuiltins;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

/* MEMPROF_LAYOUTS=DIR: the tables are DIR's *.layout files (name order) instead of the built-in ones: to use a
   table set of one's own, or to hide a release's table and see what inference makes of it. */
static int is_layout_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 7 && strcmp(e->d_name + n - 7, ".layout") == 0;
}

static void load_dir(const char *dir)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, is_layout_file, alphasort);

	if (n <= 0) {
		free(names);
		builtins = calloc(1, sizeof *builtins);
		return;
	}
	builtins = calloc((size_t)n, sizeof *builtins);
	for (int i = 0; i < n; i++) {
		char path[4096];
		mp_layout *l = builtins != NULL ? &builtins[nbuiltins] : NULL;
		size_t len = strlen(names[i]->d_name) - 7;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		if (l != NULL && mp_layout_load_file(path, l, NULL) == MP_OK) {
			snprintf(l->name, sizeof l->name, "%.*s", (int)len, names[i]->d_name);
			snprintf(l->source, sizeof l->source, "table %.200s (MEMPROF_LAYOUTS)", path);
			nbuiltins++;
		}
		free(names[i]);
	}
	free(names);
}

static void load_builtins(void)
{
	const char *dir = getenv("MEMPROF_LAYOUTS");

	if (dir != NULL && *dir != '\0') {
		load_dir(dir);
		return;
	}
	builtins = calloc(mp_layout_builtin_nfiles, sizeof *builtins);
	if (builtins == NULL)
		return;
	for (size_t i = 0; i < mp_layout_builtin_nfiles; i++) {
		const struct mp_layout_builtin_file *f = &mp_layout_builtin_files[i];
		mp_layout *l = &builtins[nbuiltins];

		/* A table that does not parse is a build error caught by test_layout. */
		if (mp_layout_parse(f->name, f->text, strlen(f->text), l, NULL) != MP_OK)
			continue;
		size_t nlen = strlen(f->name);

		if (nlen > 7 && strcmp(f->name + nlen - 7, ".layout") == 0)
			nlen -= 7;
		snprintf(l->name, sizeof l->name, "%.*s", (int)nlen, f->name);
		snprintf(l->source, sizeof l->source, "table %s", f->name);
		nbuiltins++;
	}
}

size_t mp_layout_builtin_count(void)
{
	pthread_once(&builtins_once, load_builtins);
	return nbuiltins;
}

const mp_layout *mp_layout_builtin(size_t i)
{
	pthread_once(&builtins_once, load_builtins);
	return i < nbuiltins ? &builtins[i] : NULL;
}

const mp_layout *mp_layout_builtin_named(const char *name)
{
	for (size_t i = 0; i < mp_layout_builtin_count(); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

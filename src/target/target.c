/* target.c - the target interface: reads through the page cache, typed reads, mappings, info. */
#include "target_int.h"

#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_buildid.h"

/* Reads longer than this go to the source directly instead of through (and over) the cache. */
#define DIRECT_READ_MIN (16 * TARGET_PAGE)

mp_err target_set_string(char **slot, const char *s, mp_diag *diag)
{
	char *copy = NULL;

	if (s != NULL && (copy = strdup(s)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	free(*slot);
	*slot = copy;
	return MP_OK;
}

mp_err target_new(enum mp_target_kind kind, const struct target_ops *ops, void *src,
		  const char *origin, mp_target **out, mp_diag *diag)
{
	mp_target *t = calloc(1, sizeof *t);

	*out = NULL;
	if (t == NULL || target_set_string(&t->origin, origin, diag) != MP_OK) {
		free(t);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	t->ops = ops;
	t->src = src;
	t->info.kind = kind;
	t->info.origin = t->origin;
	t->live = -1;
	*out = t;
	return MP_OK;
}

mp_err target_add_mapping(mp_target *t, uint64_t start, uint64_t end, uint64_t file_offset,
			  const char *path, const char *local_path, mp_diag *diag)
{
	size_t cap = t->capmaps;
	mp_mapping *m;

	if (mp_array_grow((void **)&t->maps, &cap, t->nmaps + 1, sizeof *t->maps) != MP_OK)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if (cap != t->capmaps) {
		bool *mm = realloc(t->mismatch, cap * sizeof *mm);

		if (mm == NULL)
			return mp_fail(diag, MP_E_NOMEM, "out of memory");
		t->mismatch = mm;
		t->capmaps = cap;
	}
	m = &t->maps[t->nmaps];
	memset(m, 0, sizeof *m);
	t->mismatch[t->nmaps] = false;
	m->path = path != NULL ? strdup(path) : NULL;
	m->local_path = local_path != NULL ? strdup(local_path) : NULL;
	if ((path != NULL && m->path == NULL) || (local_path != NULL && m->local_path == NULL)) {
		free((char *)m->path);
		free((char *)m->local_path);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	m->start = start;
	m->end = end;
	m->file_offset = file_offset;
	t->nmaps++;
	return MP_OK;
}

static int map_cmp(const void *a, const void *b)
{
	const mp_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void target_sort_mappings(mp_target *t)
{
	/* Called before any mismatch is set: the flags need not follow. */
	if (t->nmaps > 1)
		mp_sort(t->maps, t->nmaps, sizeof *t->maps, map_cmp);
}

ptrdiff_t target_find_mapping(const mp_target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nmaps;

	while (lo < hi) { /* the first mapping starting above ADDR */
		size_t mid = lo + (hi - lo) / 2;

		if (t->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr < t->maps[lo - 1].end)
		return (ptrdiff_t)(lo - 1);
	return -1;
}

void mp_target_close(mp_target *t)
{
	if (t == NULL)
		return;
	if (t->ops->close != NULL)
		t->ops->close(t);
	cache_clear(&t->cache);
	guards_clear(t);
	for (size_t i = 0; i < t->nmaps; i++) {
		free((char *)t->maps[i].path);
		free((char *)t->maps[i].local_path);
	}
	free(t->maps);
	free(t->mismatch);
	free(t->origin);
	free(t->exe);
	free(t->cmdline);
	free(t);
}

static mp_err unreadable(mp_target *t, uint64_t addr, mp_diag *diag)
{
	char why[400] = "";

	if (t->ops->explain != NULL)
		t->ops->explain(t, addr, why, sizeof why);
	return mp_fail(diag, MP_E_NOTFOUND, "%s: address 0x%llx is unreadable%s%s", t->origin,
		       (unsigned long long)addr, why[0] ? ": " : "", why);
}

/* Copy [ADDR, ADDR+LEN) into BUF (NULL: only check), page by page through the cache.
   *BAD gets the first unreadable address when it fails. */
static bool span_read(mp_target *t, uint64_t addr, unsigned char *buf, size_t len, uint64_t *bad)
{
	size_t done = 0;

	while (done < len) {
		uint64_t a = addr + done, page = a & ~(uint64_t)(TARGET_PAGE - 1);
		size_t in = (size_t)(a - page), k = TARGET_PAGE - in;
		const struct cache_page *p = cache_get(t, page);

		if (k > len - done)
			k = len - done;
		if (p == NULL || p->valid < in + k) {
			*bad = p != NULL && p->valid > in ? page + p->valid : a;
			return false;
		}
		if (buf != NULL)
			memcpy(buf + done, p->data + in, k);
		done += k;
	}
	return true;
}

mp_err mp_target_read(mp_target *t, uint64_t addr, void *buf, size_t len, mp_diag *diag)
{
	uint64_t bad;

	if (len == 0)
		return MP_OK;
	if (addr + (len - 1) < addr)
		return mp_fail(diag, MP_E_NOTFOUND, "%s: %zu bytes at 0x%llx run past the end of the "
			       "address space", t->origin, len, (unsigned long long)addr);
	if (t->ops->direct != NULL) {
		const void *p = t->ops->direct(t, addr, len);

		if (p != NULL) {
			memcpy(buf, p, len);
			return MP_OK;
		}
	}
	if (len >= DIRECT_READ_MIN) {
		size_t n = t->ops->read(t, addr, buf, len);

		return n == len ? MP_OK : unreadable(t, addr + n, diag);
	}
	if (!span_read(t, addr, buf, len, &bad))
		return unreadable(t, bad, diag);
	return MP_OK;
}

void mp_target_prefetch(mp_target *t, uint64_t addr, size_t len)
{
	const unsigned char *p;

	if (len == 0 || t->ops->direct == NULL || addr + (len - 1) < addr || (p = t->ops->direct(t, addr, len)) == NULL)
		return;
	for (size_t off = 0; off < len; off += 64)
		__builtin_prefetch(p + off);
	__builtin_prefetch(p + len - 1);
}

bool mp_target_prefetches(const mp_target *t)
{
	return t->ops->direct != NULL;
}

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

mp_err mp_target_read_u64(mp_target *t, uint64_t addr, uint64_t *out, mp_diag *diag)
{
	unsigned char b[8];
	mp_err err = mp_target_read(t, addr, b, sizeof b, diag);

	if (err == MP_OK)
		*out = le(b, sizeof b);
	return err;
}

mp_err mp_target_read_u32(mp_target *t, uint64_t addr, uint32_t *out, mp_diag *diag)
{
	unsigned char b[4];
	mp_err err = mp_target_read(t, addr, b, sizeof b, diag);

	if (err == MP_OK)
		*out = (uint32_t)le(b, sizeof b);
	return err;
}

mp_err mp_target_read_u8(mp_target *t, uint64_t addr, uint8_t *out, mp_diag *diag)
{
	return mp_target_read(t, addr, out, 1, diag);
}

mp_err mp_target_read_cstr(mp_target *t, uint64_t addr, size_t max, char **out, size_t *len,
			   mp_diag *diag)
{
	char *s = NULL;
	size_t n = 0, cap = 0;
	mp_err err = MP_OK;

	*out = NULL;
	*len = 0;
	for (;;) {
		uint64_t a = addr + n, page = a & ~(uint64_t)(TARGET_PAGE - 1);
		size_t in = (size_t)(a - page), k;
		const struct cache_page *p;
		const unsigned char *nul;

		if (a < addr || (p = cache_get(t, page)) == NULL || p->valid <= in) {
			err = unreadable(t, a, diag);
			break;
		}
		k = p->valid - in;
		nul = memchr(p->data + in, '\0', k);
		if (nul != NULL)
			k = (size_t)(nul - (p->data + in));
		if (k > max - n) {
			err = mp_fail(diag, MP_E_LIMIT, "%s: string at 0x%llx is longer than %zu bytes",
				      t->origin, (unsigned long long)addr, max);
			break;
		}
		if (mp_array_grow((void **)&s, &cap, n + k + 1, 1) != MP_OK) {
			err = mp_fail(diag, MP_E_NOMEM, "out of memory");
			break;
		}
		memcpy(s + n, p->data + in, k);
		n += k;
		s[n] = '\0';
		if (nul != NULL) {
			*out = s;
			*len = n;
			return MP_OK;
		}
		if (p->valid < TARGET_PAGE) { /* the string runs into an unreadable byte */
			err = unreadable(t, page + p->valid, diag);
			break;
		}
	}
	free(s);
	return err;
}

bool mp_target_readable(mp_target *t, uint64_t addr, size_t len)
{
	uint64_t bad;

	if (len == 0)
		return true;
	if (addr + (len - 1) < addr)
		return false;
	return span_read(t, addr, NULL, len, &bad);
}

size_t mp_target_mappings(const mp_target *t, const mp_mapping **out)
{
	*out = t->maps;
	return t->nmaps;
}

bool mp_target_mapping_mismatch(const mp_target *t, const mp_mapping *m)
{
	if (m < t->maps || m >= t->maps + t->nmaps)
		return false;
	return t->mismatch[m - t->maps];
}

/* How much of a mapping's start may hold its headers and build-id note. */
#define IMAGE_MAX (64u * 1024)

mp_err mp_target_mapping_build_id(mp_target *t, const mp_mapping *m, unsigned char *id, size_t cap,
				  size_t *len, mp_diag *diag)
{
	const mp_mapping *head = NULL;
	unsigned char *image;
	size_t n = 0, want;
	mp_buildid b;
	mp_err err;

	*len = 0;
	for (size_t i = 0; i < t->nmaps && head == NULL; i++)
		if (t->maps[i].file_offset == 0 && strcmp(t->maps[i].path, m->path) == 0)
			head = &t->maps[i];
	if (head == NULL)
		return mp_fail(diag, MP_E_NOTFOUND, "%s: '%s' is not mapped from its start", t->origin,
			       m->path);
	want = head->end - head->start < IMAGE_MAX ? (size_t)(head->end - head->start) : IMAGE_MAX;
	image = malloc(IMAGE_MAX);
	if (image == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	/* As many whole readable pages as the headers may need. */
	while (n < want && mp_target_readable(t, head->start + n, want - n < TARGET_PAGE ? want - n
					      : TARGET_PAGE)) {
		size_t k = want - n < TARGET_PAGE ? want - n : TARGET_PAGE;

		if (mp_target_read(t, head->start + n, image + n, k, NULL) != MP_OK)
			break;
		n += k;
	}
	err = mp_buildid_of_image(image, n, &b, NULL);
	free(image);
	if (err != MP_OK)
		return mp_fail(diag, MP_E_NOTFOUND, "%s: no build-id in the memory of '%s' at 0x%llx",
			       t->origin, m->path, (unsigned long long)head->start);
	if (b.len > cap)
		return mp_fail(diag, MP_E_LIMIT, "%s: build-id of '%s' is %zu bytes, more than %zu",
			       t->origin, m->path, b.len, cap);
	memcpy(id, b.bytes, b.len);
	*len = b.len;
	return MP_OK;
}

const mp_target_info *mp_target_get_info(const mp_target *t)
{
	return &t->info;
}

void mp_target_flush(mp_target *t)
{
	cache_clear(&t->cache);
	guards_clear(t);
	t->live = -1;
}

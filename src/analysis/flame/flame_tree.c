/* flame_tree.c - the flame graph's call trie: folded stack lines parsed and merged into it. */
#include "flame_int.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_hash.h"

/* Hash seeds: any constants work, they only have to stay fixed. The root's
   path hash seeds its children's; a node's path hash mixes its parent's with
   its name's, so a whole line can be hashed before any lookup. */
#define NAME_SEED 0x6e616d65ull
#define ROOT_HASH 0x616c6cull

/* ---- the trie ---------------------------------------------------------- */

/* P with room for element N (doubling CAP), or NULL with P left intact. */
static void *make_room(void *p, uint32_t n, uint32_t *cap, size_t elem)
{
	void *np;

	if (n < *cap)
		return p;
	if (*cap >= MAX_IDS)
		return NULL;
	np = realloc(p, (size_t)*cap * 2 * elem);
	if (np != NULL)
		*cap *= 2;
	return np;
}

/* The id of name S (LEN bytes, hash HASH), added if new. NONE when out of memory. */
static uint32_t intern_name(ftree *t, const char *s, size_t len, uint64_t hash)
{
	mp_table *ix = &t->name_index;
	mp_table_probe p;
	fname *nn;
	uint32_t id;

	for (id = mp_table_find(ix, hash, &p); id != MP_TABLE_NONE; id = mp_table_next(ix, &p))
		if (t->names[id].len == len && memcmp(t->names[id].s, s, len) == 0)
			return id;
	nn = make_room(t->names, t->nnames, &t->namecap, sizeof *nn);
	if (nn == NULL)
		return NONE;
	t->names = nn;
	t->names[t->nnames] = (fname){ s, hash, (uint32_t)len };
	if (mp_table_add(ix, &p, t->nnames) != MP_OK)
		return NONE;
	return t->nnames++;
}

/* Path hash of the child called NAME of a node whose path hash is PARENT_HASH. */
static uint64_t path_hash(uint64_t parent_hash, uint64_t name_hash)
{
	return mp_hash_finish(mp_hash_mix(parent_hash, name_hash));
}

/* How a node's children are found: none, one (just compare it), or more
   (through the hash index). */
typedef enum kids { NO_KIDS, ONE_KID, INDEXED } kids;

/* The child of PARENT called NAME, or NONE; *HOW says how PARENT's children
   are found, and for INDEXED *P is the lookup of HASH, ready for mp_table_add. */
static uint32_t find_child(const ftree *t, uint32_t parent, uint32_t name, uint64_t hash, kids *how,
			   mp_table_probe *p)
{
	const mp_table *ix = &t->node_index;
	uint32_t c = t->nodes[parent].child;

	/* The flag lives in the parent, which is in cache: no extra memory access. */
	*how = c == NONE ? NO_KIDS : t->nodes[parent].name & WIDE ? INDEXED : ONE_KID;
	if (*how != INDEXED)
		return c != NONE && mp_flame_name_of(&t->nodes[c]) == name ? c : NONE;
	for (c = mp_table_find(ix, hash, p); c != MP_TABLE_NONE; c = mp_table_next(ix, p)) {
		const fnode *n = &t->nodes[c];

		if (n->parent == parent && mp_flame_name_of(n) == name)
			return c;
	}
	return NONE;
}

/* Index the child C of a node whose path hash is PARENT_HASH. */
static bool index_child(ftree *t, uint32_t c, uint64_t parent_hash)
{
	uint64_t h = path_hash(parent_hash, t->names[mp_flame_name_of(&t->nodes[c])].hash);

	return mp_table_insert(&t->node_index, h, c) == MP_OK;
}

/* The child of PARENT (path hash PARENT_HASH) called NAME (path hash HASH),
   created if new; a new node's index is always above its parent's, which
   mp_flame_sum_totals relies on. NONE when out of memory. */
static uint32_t find_or_add(ftree *t, uint32_t parent, uint64_t parent_hash, uint32_t name, uint64_t hash)
{
	mp_table_probe p;
	kids how;
	uint32_t id = find_child(t, parent, name, hash, &how, &p);
	fnode *nn;

	if (id != NONE)
		return id;
	nn = make_room(t->nodes, t->n, &t->cap, sizeof *nn);
	if (nn == NULL)
		return NONE;
	t->nodes = nn;
	id = t->n++;
	t->nodes[id] = (fnode){ 0, name, parent, NONE, t->nodes[parent].child };
	t->nodes[parent].child = id;
	if (how == INDEXED)
		return mp_table_add(&t->node_index, &p, id) == MP_OK ? id : NONE;
	if (how == NO_KIDS)
		return id;
	/* A second child: from now on both are found through the index. */
	t->nodes[parent].name |= WIDE;
	if (!index_child(t, id, parent_hash) || !index_child(t, t->nodes[id].next, parent_hash))
		return NONE;
	return id;
}

static bool path_reserve(ftree *t, size_t need)
{
	size_t cap = t->pathcap ? t->pathcap : 64;
	pframe *np;

	if (need <= t->pathcap)
		return true;
	while (cap < need)
		cap *= 2;
	np = realloc(t->path, cap * sizeof *np);
	if (np == NULL)
		return false;
	t->path = np;
	t->pathcap = cap;
	return true;
}

/* How many leading frames of S equal those of the previous line's stack. */
static size_t shared_frames(const ftree *t, const char *s, size_t slen)
{
	size_t k, start = 0;

	for (k = 0; k < t->depth; k++) {
		size_t end = t->path[k].end;

		if (end > slen || memcmp(s + start, t->prev + start, end - start) != 0)
			break;
		if (end < slen && s[end] != ';')
			break;
		start = end + 1;
	}
	return k;
}

/* Split the frames of S after the first K into PATH and hash them all,
   prefetching their slots so that the cache misses of a whole line overlap
   instead of being paid one after another. Returns the new depth, or 0 with
   *OK false when out of memory. */
static size_t split_frames(ftree *t, const char *s, size_t slen, size_t k, bool *ok)
{
	size_t pos = k ? t->path[k - 1].end + 1 : 0;
	uint64_t ph = k ? t->path[k - 1].path_hash : ROOT_HASH;

	*ok = true;
	/* pos > slen: the shared frames already cover the whole stack. */
	while (slen > 0 && pos <= slen) {
		const char *semi = memchr(s + pos, ';', slen - pos);
		size_t end = semi ? (size_t)(semi - s) : slen;
		uint64_t nh = mp_hash_bytes(s + pos, end - pos, NAME_SEED);

		if (!path_reserve(t, k + 1)) {
			*ok = false;
			return 0;
		}
		ph = path_hash(ph, nh);
		mp_table_prefetch(&t->name_index, nh);
		mp_table_prefetch(&t->node_index, ph);
		t->path[k++] = (pframe){ end, nh, ph, NONE };
		pos = end + 1;
	}
	return k;
}

/* Add COUNT to the call path spelled by stack S (SLEN bytes, may be empty). */
static bool add_stack(ftree *t, const char *s, size_t slen, uint64_t count)
{
	/* An empty stack counts for the root alone, whatever the previous line was. */
	size_t shared = slen > 0 ? shared_frames(t, s, slen) : 0, k, i;
	uint32_t cur = shared ? t->path[shared - 1].node : 0, name;
	size_t pos = shared ? t->path[shared - 1].end + 1 : 0;
	bool ok;

	k = split_frames(t, s, slen, shared, &ok);
	if (!ok)
		return false;
	for (i = shared; i < k; i++) {
		const pframe *f = &t->path[i];

		name = intern_name(t, s + pos, f->end - pos, f->name_hash);
		if (name != NONE)
			cur = find_or_add(t, cur, i ? t->path[i - 1].path_hash : ROOT_HASH, name, f->path_hash);
		else
			cur = NONE;
		if (cur == NONE)
			return false;
		t->path[i].node = cur;
		pos = f->end + 1;
	}
	t->prev = s;
	t->depth = k;
	t->nodes[cur].total += count;
	return true;
}

/* ---- parsing ----------------------------------------------------------- */

/* Why a line is bad, for the diagnostic; NULL when it is fine. */
typedef const char *line_problem;

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Split LINE into its stack (*SLEN bytes) and trailing count. Returns NULL on
   success, or what is wrong with the line. A blank line gives *SLEN == SIZE_MAX. */
static line_problem split_line(const char *line, size_t len, size_t *slen, uint64_t *count)
{
	size_t end = len, q, digits;
	uint64_t v = 0;

	while (end > 0 && is_blank(line[end - 1]))
		end--;
	if (end == 0) {
		*slen = SIZE_MAX;
		return NULL;
	}
	for (q = end; q > 0 && line[q - 1] >= '0' && line[q - 1] <= '9'; q--)
		;
	if (q == end || q == 0)
		return "missing count (expected \"frame;frame;... COUNT\")";
	if (line[q - 1] == '-' && q > 1 && is_blank(line[q - 2])) {
		/* _memory_viz's own 'segments' writes negative <gaps> counts; flamegraph.pl passes over such
		   lines, and so does this renderer */
		*slen = SIZE_MAX;
		return NULL;
	}
	if (line[q - 1] != ' ' && line[q - 1] != '\t')
		return "malformed count";
	for (digits = q; digits < end; digits++) {
		unsigned d = (unsigned)(line[digits] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return "count out of range";
		v = v * 10 + d;
	}
	while (q > 0 && is_blank(line[q - 1]))
		q--;
	*slen = q;
	*count = v;
	return NULL;
}

/* ---- building the tree ------------------------------------------------- */

void mp_flame_tree_free(ftree *t)
{
	free(t->names);
	free(t->nodes);
	mp_table_free(&t->name_index);
	mp_table_free(&t->node_index);
	free(t->path);
}

bool mp_flame_tree_init(ftree *t)
{
	memset(t, 0, sizeof *t);
	t->namecap = t->cap = 1024;
	t->names = malloc(t->namecap * sizeof *t->names);
	t->nodes = malloc(t->cap * sizeof *t->nodes);
	if (t->names == NULL || t->nodes == NULL)
		return false;
	/* The root's name is not indexed: a frame called "all" is a different frame. */
	t->names[0] = (fname){ "all", 0, 3 };
	t->nnames = 1;
	t->nodes[0] = (fnode){ 0, 0, NONE, NONE, NONE };
	t->n = 1;
	return true;
}

/* Feed every line of TEXT into the trie. */
mp_err mp_flame_parse(ftree *t, const char *text, size_t len, mp_diag *diag)
{
	size_t pos = 0, lineno = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (text + pos)) : len - pos;
		size_t slen = 0;
		uint64_t count = 0;
		line_problem why = split_line(text + pos, llen, &slen, &count);

		lineno++;
		if (llen > UINT32_MAX)
			why = "line longer than 4 GiB";
		if (why != NULL)
			return mp_fail(diag, MP_E_CORRUPT, "folded stacks, line %zu: %s", lineno, why);
		if (slen != SIZE_MAX) {
			if (count > UINT64_MAX - t->sum)
				return mp_fail(diag, MP_E_CORRUPT, "folded stacks, line %zu: total count overflows",
					       lineno);
			t->sum += count;
			if (!add_stack(t, text + pos, slen, count))
				return mp_fail(diag, MP_E_NOMEM, "flame graph: out of memory at line %zu", lineno);
		}
		pos += llen + 1;
	}
	return MP_OK;
}

/* Children come after parents in the node array, so one backward pass turns
   self counts into subtree totals. The root's total is the checked sum, so
   nothing overflows. */
void mp_flame_sum_totals(ftree *t)
{
	uint32_t i;

	for (i = t->n - 1; i > 0; i--)
		t->nodes[t->nodes[i].parent].total += t->nodes[i].total;
}

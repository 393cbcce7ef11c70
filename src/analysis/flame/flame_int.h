/* flame_int.h - the flame graph's call trie, shared by its builder and its SVG writer
   (private to src/analysis). */
#ifndef MEMPROF_FLAME_INT_H
#define MEMPROF_FLAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_table.h"

/* A distinct frame name. S points into the caller's text: memory grows with
   distinct names and call paths, never with copies of the input. */
typedef struct fname {
	const char *s;
	uint64_t hash;
	uint32_t len; /* mp_flame_parse rejects longer lines */
} fname;

/* One distinct call path: a name under a parent path. Nodes refer to
   interned names, so finding a child compares two integers instead of
   reading name text scattered across the input (which costs cache misses).
   Only the children of nodes with two or more are in the hash index: most
   nodes have one child (the unique tails of stacks), so the index stays
   small and a new chain of frames is appended without random accesses. */
typedef struct fnode {
	uint64_t total; /* self count while parsing, self + descendants after mp_flame_sum_totals */
	uint32_t name;	/* name id, plus WIDE once the children are in the index */
	uint32_t parent, child, next;
} fnode;

/* One frame of the line being added: where it ends, its hashes, its node. */
typedef struct pframe {
	size_t end;
	uint64_t name_hash, path_hash;
	uint32_t node;
} pframe;

/* The call trie, plus the previous line's path: folded output is usually
   sorted, so a line mostly shares its leading frames with the one before and
   memcmp against it is much cheaper than hashing every frame again. */
typedef struct ftree {
	fname *names;
	uint32_t nnames, namecap;
	fnode *nodes;
	uint32_t n, cap;
	mp_table name_index; /* names by their bytes' hash; ids index names */
	mp_table node_index; /* the children of WIDE nodes by path hash; ids index nodes */
	const char *prev;
	pframe *path; /* PREV's frames, then the current line's */
	size_t depth, pathcap;
	uint64_t sum;
} ftree;

/* Ids are 32-bit to keep nodes at 24 bytes; NONE marks "no id" (it is
   MP_TABLE_NONE, what a lookup that finds nothing returns). The cap leaves the
   top bit of a node's name free for the WIDE flag. */
#define NONE UINT32_MAX
#define MAX_IDS (UINT32_C(1) << 30)
#define WIDE UINT32_C(0x80000000)

/* The name id of node N, without the WIDE flag. This function can't fail. */
static inline uint32_t mp_flame_name_of(const fnode *n)
{
	return n->name & ~WIDE;
}

/* Start the empty trie T: just the root, "all", with a total of 0. Returns
   true, or false when out of memory; either way the caller frees T with
   mp_flame_tree_free. */
bool mp_flame_tree_init(ftree *t);

/* Free what T holds (not T itself). The names still point into the text that
   was parsed, which stays the caller's. This function can't fail. */
void mp_flame_tree_free(ftree *t);

/* Merge every folded stack line of TEXT (LEN bytes, not NUL-terminated) into
   T, adding each line's count to its path's self count and to t->sum. T keeps
   pointers into TEXT, which must outlive it. Returns MP_OK, or with DIAG set
   (naming the line): MP_E_CORRUPT for a malformed line or a total count past
   2^64-1, MP_E_NOMEM. */
mp_err mp_flame_parse(ftree *t, const char *text, size_t len, mp_diag *diag) MP_WUR;

/* Turn the self counts of T's nodes into subtree totals, once, after
   parsing: the root's total is then the sum of all counts. This function
   can't fail. */
void mp_flame_sum_totals(ftree *t);

#endif

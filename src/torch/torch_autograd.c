/* torch_autograd.c - the autograd graph read from a target: a Node's sequence number and the Nodes its edges
   lead to, and the words of its own members that may point at the tensors it saved for backward. */
#include <stdlib.h>

#include "mp_torch.h"

/* A Node subclass with more members than this is none PyTorch generates: its extent is damage. */
#define MAX_NODE_BYTES (64u << 10)
/* Elements of a std::vector<SavedVariable> member read (CatBackward0's tensors_ for a cat of that many). */
#define MAX_SAVED_ITEMS 4096u

mp_err mp_torch_read_node(mp_target *t, const mp_torch_layout *l, uint64_t node, uint64_t *sequence_nr,
			  uint64_t *next, size_t max, size_t *nnext, mp_diag *diag)
{
	uint64_t edges[2], n;
	mp_err err;

	*nnext = 0;
	if (!mp_torch_graph_known(l))
		return mp_fail(diag, MP_E_UNSUPPORTED, "the autograd graph's layout of %s is not known", l->releases);
	if ((node & 7) != 0)
		return mp_fail(diag, MP_E_CORRUPT, "autograd node 0x%llx: misaligned", (unsigned long long)node);
	if ((err = mp_target_read_u64(t, node + l->node_sequence_nr, sequence_nr, diag)) != MP_OK ||
	    (err = mp_target_read(t, node + l->node_next_edges, edges, sizeof edges, diag)) != MP_OK)
		return err;
	if (edges[1] < edges[0] || (edges[1] - edges[0]) % l->edge_size != 0 ||
	    (n = (edges[1] - edges[0]) / l->edge_size) > MP_TORCH_MAX_EDGES || (edges[0] & 7) != 0)
		return mp_fail(diag, MP_E_CORRUPT, "autograd node 0x%llx: its edges [0x%llx, 0x%llx) are no edge list",
			       (unsigned long long)node, (unsigned long long)edges[0], (unsigned long long)edges[1]);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t fn;

		/* Edge: the function's pointer first (intrusive_ptr, or shared_ptr's element pointer) */
		if ((err = mp_target_read_u64(t, edges[0] + i * l->edge_size, &fn, diag)) != MP_OK)
			return err;
		if (fn != 0 && *nnext < max)
			next[(*nnext)++] = fn;
	}
	return MP_OK;
}

/* The bytes a node's malloc chunk gives it (glibc: the size word before the pointer, flags in its 3 low bits;
   an in-use chunk also owns the next chunk's first word), 0 when that word is no chunk size. */
static uint64_t node_extent(mp_target *t, uint64_t node)
{
	uint64_t size;

	if (mp_target_read_u64(t, node - 8, &size, NULL) != MP_OK)
		return 0;
	if (size & 2) /* mmapped: no neighbour's word */
		size = (size & ~7ull) - 16;
	else
		size = (size & ~7ull) - 8;
	return size <= MAX_NODE_BYTES ? size : 0;
}

/* Whether W[0..2] look like a std::vector of ITEM-byte elements: begin, end, end of storage. */
static bool vector_at(const uint64_t *w, uint32_t item, uint64_t *n)
{
	if (w[0] == 0 || (w[0] & 7) != 0 || w[1] < w[0] || w[2] < w[1] || (w[1] - w[0]) % item != 0 ||
	    (w[2] - w[0]) % item != 0)
		return false;
	*n = (w[1] - w[0]) / item;
	return *n > 0 && *n <= MAX_SAVED_ITEMS;
}

mp_err mp_torch_node_members(mp_target *t, const mp_torch_layout *l, uint64_t node,
			     bool (*cb)(void *ctx, uint64_t word), void *ctx, mp_diag *diag)
{
	uint64_t extent = node_extent(t, node), *w, n, *items;
	size_t nw;
	mp_err err;

	if (!mp_torch_graph_known(l))
		return mp_fail(diag, MP_E_UNSUPPORTED, "the autograd graph's layout of %s is not known", l->releases);
	if (extent < l->node_size)
		return mp_fail(diag, MP_E_CORRUPT, "autograd node 0x%llx: no malloc chunk of a node around it",
			       (unsigned long long)node);
	if ((nw = (size_t)(extent - l->node_size) / 8) == 0)
		return MP_OK;
	if ((w = malloc(nw * 8)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if ((err = mp_target_read(t, node + l->node_size, w, nw * 8, diag)) != MP_OK)
		goto out;
	for (size_t i = 0; i < nw; i++) {
		if (w[i] != 0 && (w[i] & 7) == 0 && !cb(ctx, w[i]))
			goto out;
		if (i + 2 >= nw || !vector_at(&w[i], l->saved_size, &n))
			continue;
		if ((items = malloc(n * l->saved_size)) == NULL) {
			err = mp_fail(diag, MP_E_NOMEM, "out of memory");
			goto out;
		}
		/* a vector whose elements cannot be read was none: its words stay candidates of their own */
		if (mp_target_read(t, w[i], items, n * l->saved_size, NULL) == MP_OK)
			for (uint64_t k = 0; k < n; k++) {
				uint64_t data = items[(k * l->saved_size + l->saved_data) / 8];

				if (data != 0 && (data & 7) == 0 && !cb(ctx, data)) {
					free(items);
					goto out;
				}
			}
		free(items);
	}
out:
	free(w);
	return err;
}

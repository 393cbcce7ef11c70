/* owners_graph.c - the autograd graphs alive in the target, from every Python tensor's grad_fn along the nodes'
   edges, and the module whose forward made each node. The graph does not name modules; the parameters do: an
   edge to a parameter's AccumulateGrad (found through the parameter's own autograd meta) marks the node of the
   op that used it (an anchor: model.transformer.h.3.mlp.c_fc's addmm). Nodes are numbered in the order the
   forward made them (sequence_nr), so a node between two anchors was made between those two uses of
   parameters: in the deepest module both lie in (a GELU between c_fc and c_proj: ...h.3.mlp; a residual add
   between attn.c_proj and ln_2: ...h.3), or at the end of the repeated block the first lies in (the residual
   add between h.3.mlp.c_proj and h.4.ln_1: ...h.3). A node before the first anchor or after the last (the
   loss) has no module. A parameter two modules share (a tied head) counts for the one that comes next in the
   tree's order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "owners_int.h"

/* More nodes than this are not followed (a warning says so). */
enum { MAX_NODES = 1 << 21 };

owners_node *owners_node_at(owners_build *b, uint64_t addr)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(&b->by_node, mp_table_hash_u64(addr), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_node, &p))
		if (b->nodes[id].addr == addr)
			return &b->nodes[id];
	return NULL;
}

/* The first PARAMETER entry whose AccumulateGrad is NODE at or after entry FROM (else the first), SIZE_MAX. */
static size_t accumulator_entry(const owners_build *b, uint64_t node, size_t from)
{
	size_t first = SIZE_MAX, best = SIZE_MAX;
	mp_table_probe p;

	for (uint32_t id = mp_table_find(&b->by_acc, mp_table_hash_u64(node), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_acc, &p)) {
		size_t e = b->accs[id].entry;

		if (b->accs[id].node != node)
			continue;
		first = e < first ? e : first;
		if (e >= from && e < best)
			best = e;
	}
	return best != SIZE_MAX ? best : first;
}

static mp_err accumulators(owners_build *b)
{
	mp_err err = MP_OK;

	for (size_t i = 0; i < b->out->ntensors && err == MP_OK; i++) {
		const mp_owned *e = &b->out->tensors[i];
		mp_table_probe p;

		if (e->kind != MP_OWNER_PARAMETER || e->tensor.grad_accumulator == 0)
			continue;
		/* to the end of the probe: several entries (a tied weight's names) share one accumulator */
		for (uint32_t id = mp_table_find(&b->by_acc, mp_table_hash_u64(e->tensor.grad_accumulator), &p);
		     id != MP_TABLE_NONE; id = mp_table_next(&b->by_acc, &p))
			;
		if ((err = mp_array_grow((void **)&b->accs, &b->cap_accs, b->naccs + 1, sizeof *b->accs)) == MP_OK &&
		    (err = mp_table_add(&b->by_acc, &p, (uint32_t)b->naccs)) == MP_OK)
			b->accs[b->naccs++] = (struct accumulator){ e->tensor.grad_accumulator, i };
	}
	return err;
}

/* The node at ADDR added (unread) unless known; *ADDED whether it is new. */
static mp_err add_node(owners_build *b, uint64_t addr, bool *added)
{
	mp_table_probe p;
	mp_err err;

	*added = false;
	for (uint32_t id = mp_table_find(&b->by_node, mp_table_hash_u64(addr), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_node, &p))
		if (b->nodes[id].addr == addr)
			return MP_OK;
	if (b->nnodes >= MAX_NODES)
		return MP_OK;
	if ((err = mp_array_grow((void **)&b->nodes, &b->cap_nodes, b->nnodes + 1, sizeof *b->nodes)) != MP_OK ||
	    (err = mp_table_add(&b->by_node, &p, (uint32_t)b->nnodes)) != MP_OK)
		return err;
	b->nodes[b->nnodes++] = (owners_node){ .addr = addr, .param = SIZE_MAX,
					       .accumulate = accumulator_entry(b, addr, 0) != SIZE_MAX };
	*added = true;
	return MP_OK;
}

/* Breadth first from the grad_fns: each node read once (the nodes array is the queue), its edges kept. */
static mp_err walk(owners_build *b, uint64_t *next)
{
	size_t bad = 0, n;
	bool added;
	mp_err err = MP_OK;

	for (size_t i = 0; i < b->npytensors && err == MP_OK; i++)
		if (b->pytensors[i].read && b->pytensors[i].tensor.grad_fn != 0)
			err = add_node(b, b->pytensors[i].tensor.grad_fn, &added);
	for (size_t i = 0; i < b->nnodes && err == MP_OK; i++) {
		mp_diag d = { .msg = "" };

		if (b->nodes[i].accumulate)
			continue;
		if (mp_torch_read_node(b->t, b->out->layout, b->nodes[i].addr, &b->nodes[i].seq, next,
				       MP_TORCH_MAX_EDGES, &n, &d) != MP_OK) {
			if (bad++ == 0)
				mp_warn_damage(b->diag, "autograd node 0x%llx not read: %s", (unsigned long long)b->nodes[i].addr,
					d.msg);
			continue;
		}
		if ((err = mp_array_grow((void **)&b->edges, &b->cap_edges, b->nedges + n, sizeof *b->edges)) != MP_OK)
			break;
		b->nodes[i].first_edge = b->nedges;
		b->nodes[i].nedges = n;
		memcpy(b->edges + b->nedges, next, n * sizeof *next);
		b->nedges += n;
		for (size_t k = 0; k < n && err == MP_OK; k++)
			err = add_node(b, next[k], &added);
	}
	if (bad > 1)
		mp_warn_damage(b->diag, "%zu autograd nodes in all not read: what they save is not found", bad);
	if (b->nnodes >= MAX_NODES)
		mp_warn(b->diag, "more than %d autograd nodes: the rest of the graph is not followed", MAX_NODES);
	if (bad > 0 || b->nnodes >= MAX_NODES)
		b->out->partial = true;
	return err;
}

/* How long a chain of casts and views of a parameter is followed (t() of an autocast copy: 2). */
enum { MAX_PROXY = 4 };

/* The AccumulateGrad node X passes a parameter on to, when X only passes one on (a chain of nodes of one edge
   each that ends at an AccumulateGrad: the copy autocast makes of a weight, its t(), a view), else 0: such a
   node, and the op that takes what it gives, count as uses of the parameter. */
static uint64_t proxy_of(owners_build *b, const owners_node *x)
{
	for (int i = 0; i < MAX_PROXY && x != NULL && !x->accumulate && x->nedges == 1; i++) {
		uint64_t to = b->edges[x->first_edge];

		if ((x = owners_node_at(b, to)) != NULL && x->accumulate)
			return to;
	}
	return 0;
}

/* The parameter entry node X uses: through an edge to an AccumulateGrad or to a proxy of one, the first
   entry at or after FROM (else the first); SIZE_MAX. */
static size_t uses(owners_build *b, const owners_node *x, size_t from)
{
	size_t best = SIZE_MAX;

	for (size_t k = 0; k < x->nedges; k++) {
		uint64_t to = b->edges[x->first_edge + k];
		const owners_node *y = owners_node_at(b, to);
		uint64_t acc = y == NULL || y->accumulate ? to : proxy_of(b, y);
		size_t e = acc != 0 ? accumulator_entry(b, acc, from) : SIZE_MAX;

		if (e != SIZE_MAX && (best == SIZE_MAX || (e >= from) > (best >= from) ||
				      ((e >= from) == (best >= from) && e < best)))
			best = e;
	}
	return best;
}

static int by_seq(const void *pa, const void *pb)
{
	const owners_node *x = *(owners_node *const *)pa, *y = *(owners_node *const *)pb;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Each anchor's parameter, in the forward's order (ORDER: the nodes by sequence number): of the ones it uses,
   the first entry at or after the previous anchor's. */
static void anchors(owners_build *b, owners_node **order, size_t n)
{
	size_t from = 0;

	for (size_t i = 0; i < n; i++) {
		owners_node *x = order[i];

		if ((x->param = uses(b, x, from)) != SIZE_MAX)
			from = x->param;
	}
}

/* The module of a node made between a use of parameters of module A and one of module C (a malloc'd path),
   NULL when none or out of memory: the deepest module both lie in, or, when A lies in an item of a ModuleList
   or Sequential below that (a numbered path: h.3), that item: the loop over repeated blocks runs nothing
   between them, so what comes after a block's last use of parameters is the end of that block (its residual
   add) rather than the start of the next. */
static char *between_modules(const char *a, const char *c)
{
	size_t n = 0, last = 0;

	for (; a[n] != '\0' && a[n] == c[n]; n++)
		if (a[n] == '.')
			last = n;
	if ((a[n] == '\0' || a[n] == '.') && (c[n] == '\0' || c[n] == '.'))
		last = n;
	for (size_t i = last; a[i] == '.'; i += 1 + strcspn(a + i + 1, ".")) {
		size_t len = strcspn(a + i + 1, ".");

		if (len > 0 && strspn(a + i + 1, "0123456789") == len)
			return strndup(a, i + 1 + len);
	}
	return last > 0 ? strndup(a, last) : NULL;
}

/* Each node's module: its anchor's, else the deepest module the anchors around it share. */
static mp_err modules(owners_build *b, owners_node **order, size_t n)
{
	const char *before = NULL;

	for (size_t i = 0, after = 0; i < n; i++) {
		owners_node *x = order[i];
		const char *m;

		if (x->param != SIZE_MAX) {
			before = b->out->tensors[x->param].module;
			if (before != NULL && (x->module = strdup(before)) == NULL)
				return MP_E_NOMEM;
			continue;
		}
		while (after < n && (after <= i || order[after]->param == SIZE_MAX))
			after++;
		if (before == NULL || after == n || (m = b->out->tensors[order[after]->param].module) == NULL)
			continue;
		x->module = between_modules(before, m);
	}
	return MP_OK;
}

mp_err owners_graph(owners_build *b)
{
	uint64_t *next;
	owners_node **order = NULL;
	size_t n = 0;
	mp_err err;

	if (b->out->layout == NULL || !mp_torch_graph_known(b->out->layout))
		return MP_OK;
	if ((next = malloc(MP_TORCH_MAX_EDGES * sizeof *next)) == NULL)
		return MP_E_NOMEM;
	if ((err = accumulators(b)) != MP_OK || (err = walk(b, next)) != MP_OK)
		goto out;
	if ((order = malloc((b->nnodes + 1) * sizeof *order)) == NULL) {
		err = MP_E_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < b->nnodes; i++)
		if (!b->nodes[i].accumulate)
			order[n++] = &b->nodes[i];
	mp_sort(order, n, sizeof *order, by_seq);
	anchors(b, order, n);
	err = modules(b, order, n);
out:
	free(order);
	free(next);
	return err;
}

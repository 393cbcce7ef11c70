/* sim_set.c - the allocator's std::set<Block*, Comparison> as a treap with parent links: insert, erase,
   lower_bound and in-order stepping, each O(log n) expected. Priorities come from a fixed-seed generator, so
   a run is the same every time. */
#include <stddef.h>

#include "sim_int.h"

#define BLOCK(n) ((mp_sim_block *)(n)) /* the node is the block's first member */

static int cmp_stream_size(const mp_sim_block *a, const mp_sim_block *b)
{
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return (a->size > b->size) - (a->size < b->size);
}

static int cmp_size_addr(const mp_sim_block *a, const mp_sim_block *b)
{
	int c = cmp_stream_size(a, b);

	return c != 0 ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

static int cmp_size_order(const mp_sim_block *a, const mp_sim_block *b)
{
	int c = cmp_stream_size(a, b);

	return c != 0 ? c : (a->order > b->order) - (a->order < b->order);
}

static int cmp_size_order_addr(const mp_sim_block *a, const mp_sim_block *b)
{
	int c = cmp_size_order(a, b);

	return c != 0 ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

sim_cmp sim_cmp_size_for(enum sim_order order)
{
	return order == SIM_ORDER_BLOCK ? cmp_size_order : order == SIM_ORDER_SEGMENT_ADDR ? cmp_size_order_addr
											  : cmp_size_addr;
}

int sim_cmp_addr(const mp_sim_block *a, const mp_sim_block *b)
{
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

void sim_set_init(sim_set *set, sim_cmp cmp)
{
	*set = (sim_set){ .cmp = cmp, .seed = 0x9e3779b9u };
}

static uint32_t next_prio(sim_set *set)
{
	uint32_t x = set->seed;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return set->seed = x;
}

/* Put CHILD where N was under N's parent (or at the root). */
static void replace_child(sim_set *set, sim_node *n, sim_node *child)
{
	if (n->parent == NULL)
		set->root = child;
	else if (n->parent->left == n)
		n->parent->left = child;
	else
		n->parent->right = child;
	if (child != NULL)
		child->parent = n->parent;
}

/* Lift N above its parent P. */
static void rotate_up(sim_set *set, sim_node *n)
{
	sim_node *p = n->parent;

	replace_child(set, p, n);
	if (p->left == n) {
		p->left = n->right;
		if (n->right != NULL)
			n->right->parent = p;
		n->right = p;
	} else {
		p->right = n->left;
		if (n->left != NULL)
			n->left->parent = p;
		n->left = p;
	}
	p->parent = n;
}

void sim_set_insert(sim_set *set, mp_sim_block *b)
{
	sim_node *n = &b->node, **link = &set->root, *parent = NULL;

	*n = (sim_node){ .prio = next_prio(set) };
	while (*link != NULL) {
		parent = *link;
		link = set->cmp(b, BLOCK(parent)) < 0 ? &parent->left : &parent->right;
	}
	*link = n;
	n->parent = parent;
	while (n->parent != NULL && n->parent->prio < n->prio)
		rotate_up(set, n);
	set->n++;
}

void sim_set_erase(sim_set *set, mp_sim_block *b)
{
	sim_node *n = &b->node;

	/* push N down below its higher-priority child until it has at most one child */
	while (n->left != NULL && n->right != NULL)
		rotate_up(set, n->left->prio > n->right->prio ? n->left : n->right);
	replace_child(set, n, n->left != NULL ? n->left : n->right);
	*n = (sim_node){ 0 };
	set->n--;
}

mp_sim_block *sim_set_lower_bound(const sim_set *set, const mp_sim_block *key)
{
	sim_node *n = set->root, *best = NULL;

	while (n != NULL) {
		if (set->cmp(BLOCK(n), key) < 0) {
			n = n->right;
		} else {
			best = n;
			n = n->left;
		}
	}
	return BLOCK(best);
}

mp_sim_block *sim_set_first(const sim_set *set)
{
	sim_node *n = set->root;

	while (n != NULL && n->left != NULL)
		n = n->left;
	return BLOCK(n);
}

mp_sim_block *sim_set_last(const sim_set *set)
{
	sim_node *n = set->root;

	while (n != NULL && n->right != NULL)
		n = n->right;
	return BLOCK(n);
}

mp_sim_block *sim_set_next(const mp_sim_block *b)
{
	const sim_node *n = &b->node;

	if (n->right != NULL) {
		n = n->right;
		while (n->left != NULL)
			n = n->left;
		return BLOCK(n);
	}
	while (n->parent != NULL && n->parent->right == n)
		n = n->parent;
	return BLOCK(n->parent);
}

mp_sim_block *sim_set_prev(const mp_sim_block *b)
{
	const sim_node *n = &b->node;

	if (n->left != NULL) {
		n = n->left;
		while (n->right != NULL)
			n = n->right;
		return BLOCK(n);
	}
	while (n->parent != NULL && n->parent->left == n)
		n = n->parent;
	return BLOCK(n->parent);
}

bool sim_set_contains(const sim_set *set, const mp_sim_block *b)
{
	const sim_node *n = &b->node;

	while (n->parent != NULL)
		n = n->parent;
	return n == set->root && (set->root != NULL);
}

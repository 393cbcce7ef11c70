/* mp_block_diff.c - `diff`: the blocks allocated and freed between two snapshots. */
#include "mp_block_query.h"

#include <stdlib.h>

#include "block_int.h"
#include "mp_array.h"

#define ACTIVE (MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE)

/* One +/- line: a block of one side with no equal block on the other. */
struct change {
	mp_block_ref ref;
	const mp_snapshot *snap; /* the side it comes from */
	bool added;
};

struct changes {
	struct change *c;
	size_t n, cap;
	mp_i128 added, freed; /* bytes */
	size_t nadded;
};

static bool keep_active(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	(void)snap;
	(void)ctx;
	return (r->state & ACTIVE) != 0;
}

/* What makes two blocks "the same": device, address, size and state. */
static int cmp_same(const mp_block_ref *a, const mp_block_ref *b)
{
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return a->state < b->state ? -1 : a->state > b->state;
}

static int cmp_ref(const void *pa, const void *pb)
{
	const mp_block_ref *a = pa, *b = pb;
	int c = cmp_same(a, b);

	return c != 0 ? c : (a->block < b->block ? -1 : a->block > b->block);
}

/* Output order: by device and address; at one address the block that went before the one that came. */
static int cmp_change(const void *pa, const void *pb)
{
	const struct change *a = pa, *b = pb;

	if (a->ref.device != b->ref.device)
		return a->ref.device < b->ref.device ? -1 : 1;
	if (a->ref.address != b->ref.address)
		return a->ref.address < b->ref.address ? -1 : 1;
	if (a->added != b->added)
		return a->added ? 1 : -1;
	return cmp_ref(&a->ref, &b->ref);
}

static bool add_change(struct changes *ch, const mp_snapshot *snap, const mp_block_ref *r, bool added)
{
	if (mp_array_grow((void **)&ch->c, &ch->cap, ch->n + 1, sizeof *ch->c) != MP_OK)
		return false;
	ch->c[ch->n++] = (struct change){ *r, snap, added };
	if (added) {
		ch->nadded++;
		ch->added += r->size;
	} else {
		ch->freed += r->size;
	}
	return true;
}

/* The blocks of each sorted side without an equal one on the other (a multiset difference). */
static bool find_changes(const mp_snapshot *before, const mp_block_ref *b, size_t nb, const mp_snapshot *after,
			 const mp_block_ref *a, size_t na, struct changes *ch)
{
	size_t i = 0, j = 0;

	while (i < nb || j < na) {
		int c = i == nb ? 1 : j == na ? -1 : cmp_same(&b[i], &a[j]);

		if (c == 0) {
			i++;
			j++;
		} else if (c < 0) {
			if (!add_change(ch, before, &b[i++], false))
				return false;
		} else if (!add_change(ch, after, &a[j++], true)) {
			return false;
		}
	}
	return true;
}

static void write_changes(const struct changes *ch, enum mp_units u, mp_out *out)
{
	mp_block_table t;
	size_t nfreed = ch->n - ch->nadded;
	mp_i128 net = ch->added - ch->freed;

	mp_block_table_init(&t, NULL, u, out);
	if (ch->n > 0) {
		mp_out_puts(out, "  ");
		mp_block_table_heads(&t, false);
		mp_out_puts(out, "frame\n");
	}
	for (size_t i = 0; i < ch->n; i++) {
		t.snap = ch->c[i].snap;
		mp_out_puts(out, ch->c[i].added ? "+ " : "- ");
		mp_block_table_cells(&t, &ch->c[i].ref, false);
		mp_block_table_frame(&t, &ch->c[i].ref);
	}
	mp_block_table_free(&t);
	mp_out_printf(out, "%zu allocated (", ch->nadded);
	mp_format_size(out, ch->added, u);
	mp_out_printf(out, "), %zu freed (", nfreed);
	mp_format_size(out, ch->freed, u);
	mp_out_puts(out, net > 0 ? "), net +" : "), net ");
	mp_format_size(out, net, u);
	mp_out_putc(out, '\n');
}

mp_err mp_analysis_block_diff(const mp_snapshot *before, const mp_snapshot *after, enum mp_units u, mp_out *out,
			      size_t *nchanges, mp_diag *diag)
{
	mp_block_ref *b = NULL, *a = NULL;
	size_t nb = 0, na = 0;
	struct changes ch = { 0 };
	mp_err err = mp_block_refs_collect(before, keep_active, NULL, &b, &nb, "diff", diag);

	if (err == MP_OK)
		err = mp_block_refs_collect(after, keep_active, NULL, &a, &na, "diff", diag);
	if (err == MP_OK) {
		if (nb > 1)
			mp_sort(b, nb, sizeof *b, cmp_ref);
		if (na > 1)
			mp_sort(a, na, sizeof *a, cmp_ref);
		if (!find_changes(before, b, nb, after, a, na, &ch))
			err = mp_fail(diag, MP_E_NOMEM, "diff: out of memory");
	}
	if (err == MP_OK) {
		if (ch.n > 1)
			mp_sort(ch.c, ch.n, sizeof *ch.c, cmp_change);
		write_changes(&ch, u, out);
		*nchanges = ch.n;
		err = mp_block_out_status(out, "diff", diag);
	}
	free(ch.c);
	free(a);
	free(b);
	return err;
}

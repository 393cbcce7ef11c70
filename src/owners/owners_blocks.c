/* owners_blocks.c - the snapshot's side: which block each storage's memory lies in, which entry each storage's
   bytes count for (the first, by kind priority, of the entries sharing it), and who owns each active block
   (the counted entry of highest priority in it; NOT_PYTHON when none). A block's whole size goes to its owner,
   slack from the allocator's rounding included, so that the owners' bytes add up to the active bytes exactly. */
#include <stdlib.h>

#include "mp_array.h"
#include "owners_int.h"

/* An active block: where it is, for the search. */
struct span {
	uint64_t start, end;
	int64_t device;
	size_t block;  /* the snapshot's */
	size_t index;  /* into the owners' blocks */
};

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The span holding ADDR, or NULL. */
static const struct span *find(const struct span *spans, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (spans[mid].end <= addr)
			lo = mid + 1;
		else if (spans[mid].start > addr)
			hi = mid;
		else
			return &spans[mid];
	}
	return NULL;
}

/* An entry in priority order: kind, then one a module, a global or a local names before one known only by its
   address (a view of a named tensor counts under the name), then the order it was named in. */
struct rank {
	int kind;
	int anonymous;
	size_t entry;
};

static int by_priority(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->anonymous != y->anonymous)
		return x->anonymous - y->anonymous;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Mark the first entry of each storage, by priority, as the one its bytes count for. */
static mp_err count_storages(mp_owners *o)
{
	struct rank *order = malloc((o->ntensors + 1) * sizeof *order);
	mp_table seen = { 0 };
	mp_err err = MP_OK;

	if (order == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < o->ntensors; i++)
		order[i] = (struct rank){ (int)o->tensors[i].kind,
					  o->tensors[i].module == NULL && o->tensors[i].referrer == NULL, i };
	mp_sort(order, o->ntensors, sizeof *order, by_priority);
	for (size_t k = 0; k < o->ntensors && err == MP_OK; k++) {
		size_t i = order[k].entry;
		uint64_t storage = o->tensors[i].tensor.storage;
		mp_table_probe p;
		uint32_t id;

		for (id = mp_table_find(&seen, mp_table_hash_u64(storage), &p); id != MP_TABLE_NONE;
		     id = mp_table_next(&seen, &p))
			if (o->tensors[id].tensor.storage == storage)
				break;
		if (id != MP_TABLE_NONE)
			continue;
		o->tensors[i].counted = true;
		err = mp_table_add(&seen, &p, (uint32_t)i);
	}
	mp_table_free(&seen);
	free(order);
	return err;
}

mp_err owners_blocks(owners_build *b, const mp_snapshot *snap)
{
	mp_owners *o = b->out;
	const mp_keys *k;
	struct span *spans;
	size_t n = 0;
	mp_err err;

	if ((err = count_storages(o)) != MP_OK || snap == NULL)
		return err;
	k = mp_heap_keys(snap->heap);
	if ((spans = malloc((snap->nblocks + 1) * sizeof *spans)) == NULL ||
	    (o->blocks = malloc((snap->nblocks + 1) * sizeof *o->blocks)) == NULL) {
		free(spans);
		return MP_E_NOMEM;
	}
	for (size_t s = 0; s < snap->nsegments; s++) {
		const mp_segment *seg = &snap->segments[s];

		for (size_t i = seg->first_block; i < seg->first_block + seg->nblocks; i++) {
			const mp_block *blk = &snap->blocks[i];

			if (!mp_val_is(blk->state, k->active_allocated) && !mp_val_is(blk->state, k->active_pending_free))
				continue;
			o->blocks[o->nblocks] = (mp_owner_block){ .block = i, .device = seg->device,
								  .kind = MP_OWNER_NOT_PYTHON, .owner = SIZE_MAX };
			spans[n++] = (struct span){ (uint64_t)blk->address, (uint64_t)blk->address + (uint64_t)blk->size,
						    seg->device, i, o->nblocks++ };
		}
	}
	mp_sort(spans, n, sizeof *spans, by_start);
	for (size_t i = 0; i < o->ntensors; i++) {
		mp_owned *e = &o->tensors[i];
		const struct span *sp;
		mp_owner_block *ob;

		if (e->tensor.device_type != MP_TORCH_DEVICE_CUDA ||
		    (sp = find(spans, n, e->tensor.storage_data)) == NULL || sp->device != e->tensor.device_index)
			continue;
		e->block = sp->block;
		if (!e->counted)
			continue;
		ob = &o->blocks[sp->index];
		ob->covered += e->tensor.storage_nbytes < sp->end - e->tensor.storage_data
				       ? e->tensor.storage_nbytes
				       : sp->end - e->tensor.storage_data;
		if (ob->owner == SIZE_MAX || e->kind < ob->kind) {
			ob->owner = i;
			ob->kind = e->kind;
		}
	}
	free(spans);
	return MP_OK;
}

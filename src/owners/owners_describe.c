/* owners_describe.c - the owner of one address, for `block ADDR`: the tensors whose storage holds it, else
   the owner the block it lies in went to, else none. */
#include "mp_owners_report.h"

static void put_tensor(mp_out *out, const mp_owned *e, enum mp_units u)
{
	mp_out_printf(out, "owner:       %s (%s", e->name, mp_owner_kind_name(e->kind));
	if (e->referrer != NULL)
		mp_out_printf(out, ", %s", e->referrer);
	mp_out_printf(out, "), %s [", mp_torch_dtype_name(e->tensor.dtype));
	for (int i = 0; i < e->tensor.ndim; i++)
		mp_out_printf(out, "%s%lld", i ? ", " : "", (long long)mp_tensor_shape(&e->tensor)[i]);
	mp_out_printf(out, "], storage 0x%llx, ", (unsigned long long)e->tensor.storage_data);
	mp_format_size(out, (mp_i128)e->tensor.storage_nbytes, u);
	mp_out_puts(out, e->counted ? "\n" : " (a view: its storage counts for another)\n");
}

void mp_owners_describe_addr(const mp_owners *o, const mp_snapshot *snap, uint64_t addr, enum mp_units u, mp_out *out)
{
	size_t found = 0;

	for (size_t i = 0; i < o->ntensors; i++) {
		const mp_owned *e = &o->tensors[i];

		if (e->tensor.device_type == MP_TORCH_DEVICE_CUDA && addr >= e->tensor.storage_data &&
		    addr - e->tensor.storage_data < e->tensor.storage_nbytes) {
			put_tensor(out, e, u);
			found++;
		}
	}
	if (found > 0)
		return;
	for (size_t i = 0; i < o->nblocks; i++) {
		const mp_owner_block *ob = &o->blocks[i];
		const mp_block *b = &snap->blocks[ob->block];

		if (addr < (uint64_t)b->address || addr - (uint64_t)b->address >= (uint64_t)b->size)
			continue;
		if (ob->owner == SIZE_MAX)
			mp_out_puts(out, "owner:       no Python tensor reaches this block (not_python: saved for backward, "
					 "held by C++, a workspace)\n");
		else
			mp_out_printf(out, "owner:       none at this address; the block goes to %s (%s), whose storage "
					   "lies elsewhere in it\n",
				      o->tensors[ob->owner].name, mp_owner_kind_name(ob->kind));
		return;
	}
}

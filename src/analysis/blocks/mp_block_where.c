/* mp_block_where.c - `block ADDR`: the segment and block that hold an address, and its frames. */
#include "mp_block_query.h"

#include "block_int.h"
#include "mp_repr.h"

/* Whether ADDR lies in [LO, LO + SIZE); 128 bits, so hostile sizes cannot wrap. */
static bool holds(int64_t lo, int64_t size, uint64_t addr)
{
	return (mp_i128)lo <= (mp_i128)addr && (mp_i128)addr < (mp_i128)lo + size;
}

static void put_expandable(const mp_snapshot *snap, const mp_segment *seg, mp_out *out)
{
	if (!(seg->present & MP_F_SEG_IS_EXPANDABLE))
		mp_out_putc(out, '-');
	else if (seg->is_expandable == MP_TRUE || seg->is_expandable == MP_FALSE)
		mp_out_puts(out, seg->is_expandable == MP_TRUE ? "yes" : "no");
	else
		mp_repr(snap->heap, seg->is_expandable, out);
}

static void write_segment(const mp_snapshot *snap, const mp_segment *seg, enum mp_units u, mp_out *out)
{
	mp_out_puts(out, "segment ");
	block_put_hex(out, seg->address);
	mp_out_putc(out, '-');
	block_put_hex(out, (int64_t)((uint64_t)seg->address + (uint64_t)seg->total_size));
	mp_out_puts(out, ", size ");
	mp_format_size(out, seg->total_size, u);
	mp_out_puts(out, ", device ");
	block_put_field(out, seg->present & MP_F_SEG_DEVICE, seg->device);
	mp_out_puts(out, ", stream ");
	block_put_field(out, seg->present & MP_F_SEG_STREAM, seg->stream);
	mp_out_puts(out, ", type ");
	block_put_word(snap, seg->present & MP_F_SEG_SEGMENT_TYPE, seg->segment_type, out);
	mp_out_puts(out, ", pool ");
	if (seg->present & MP_F_SEG_SEGMENT_POOL_ID)
		mp_repr(snap->heap, seg->segment_pool_id, out);
	else
		mp_out_putc(out, '-');
	mp_out_puts(out, ", expandable ");
	put_expandable(snap, seg, out);
	mp_out_putc(out, '\n');
}

static void write_block(const mp_snapshot *snap, const mp_block *b, int64_t address, uint64_t addr,
			enum mp_units u, mp_out *out)
{
	mp_val frames = mp_block_frames(snap, b);
	size_t nframes = mp_frames_len(snap, frames);

	mp_out_puts(out, "block ");
	block_put_hex(out, address);
	mp_out_puts(out, ", offset ");
	mp_format_i128(out, (mp_i128)addr - address);
	mp_out_puts(out, ", size ");
	mp_format_size(out, b->size, u);
	mp_out_puts(out, ", requested ");
	if (b->present & MP_F_BLK_REQUESTED_SIZE)
		mp_format_size(out, b->requested_size, u);
	else
		mp_out_putc(out, '-');
	mp_out_puts(out, ", state ");
	block_put_word(snap, b->present & MP_F_BLK_STATE, b->state, out);
	mp_out_putc(out, '\n');
	if (nframes == 0) {
		mp_out_puts(out, "no frames recorded\n");
		return;
	}
	mp_out_puts(out, "frames, innermost first:\n");
	for (size_t i = 0; i < nframes; i++) {
		mp_out_puts(out, "  ");
		mp_block_put_frame(snap, frames, i, " at ", out);
		mp_out_putc(out, '\n');
	}
}

/* The block of SEG that holds ADDR, if any (a segment's blocks may leave gaps on odd input). */
static void write_block_of(const mp_snapshot *snap, const mp_segment *seg, uint64_t addr, enum mp_units u,
			   mp_out *out)
{
	const mp_block *blocks = mp_segment_blocks(snap, seg);
	mp_i128 next = seg->address;

	for (size_t j = 0; j < seg->nblocks; j++) {
		int64_t address = block_address(&blocks[j], &next);

		if (holds(address, blocks[j].size, addr)) {
			write_block(snap, &blocks[j], address, addr, u, out);
			return;
		}
	}
	mp_out_puts(out, "no block of the segment holds ");
	block_put_hex(out, (int64_t)addr);
	mp_out_putc(out, '\n');
}

mp_err mp_analysis_block_at(const mp_snapshot *snap, uint64_t addr, enum mp_units u, mp_out *out, bool *found,
			    mp_diag *diag)
{
	*found = false;
	for (size_t i = 0; i < snap->nsegments && !*found; i++) {
		const mp_segment *seg = &snap->segments[i];

		if (!holds(seg->address, seg->total_size, addr))
			continue;
		*found = true;
		write_segment(snap, seg, u, out);
		write_block_of(snap, seg, addr, u, out);
	}
	return mp_block_out_status(out, "block", diag);
}

/* mp_snapshot_fields.c - the table of known keys per snapshot record. */
#include "snapshot_fields_int.h"

#define F(rec, keyname, bitname, kind, field) \
	{ offsetof(mp_keys, keyname), bitname, kind, offsetof(rec, field) }
#define NOFIELD 0

static const struct mp_field_spec top_fields[] = {
	F(mp_snapshot, segments, MP_F_TOP_SEGMENTS, MP_FK_CHILDREN, present),
	F(mp_snapshot, device_traces, MP_F_TOP_DEVICE_TRACES, MP_FK_CHILDREN, present),
	F(mp_snapshot, allocator_settings, MP_F_TOP_ALLOCATOR_SETTINGS, MP_FK_ANY, allocator_settings),
};

static const struct mp_field_spec segment_fields[] = {
	F(mp_segment, device, MP_F_SEG_DEVICE, MP_FK_INT, device),
	F(mp_segment, address, MP_F_SEG_ADDRESS, MP_FK_INT, address),
	F(mp_segment, total_size, MP_F_SEG_TOTAL_SIZE, MP_FK_INT, total_size),
	F(mp_segment, allocated_size, MP_F_SEG_ALLOCATED_SIZE, MP_FK_INT, allocated_size),
	F(mp_segment, active_size, MP_F_SEG_ACTIVE_SIZE, MP_FK_INT, active_size),
	F(mp_segment, requested_size, MP_F_SEG_REQUESTED_SIZE, MP_FK_INT, requested_size),
	F(mp_segment, stream, MP_F_SEG_STREAM, MP_FK_INT, stream),
	F(mp_segment, segment_type, MP_F_SEG_SEGMENT_TYPE, MP_FK_STR, segment_type),
	F(mp_segment, segment_pool_id, MP_F_SEG_SEGMENT_POOL_ID, MP_FK_PAIR, segment_pool_id),
	F(mp_segment, is_expandable, MP_F_SEG_IS_EXPANDABLE, MP_FK_BOOL, is_expandable),
	F(mp_segment, frames, MP_F_SEG_FRAMES, MP_FK_FRAMES, frames),
	F(mp_segment, blocks, MP_F_SEG_BLOCKS, MP_FK_CHILDREN, nblocks),
};

static const struct mp_field_spec block_fields[] = {
	F(mp_block, address, MP_F_BLK_ADDRESS, MP_FK_INT, address),
	F(mp_block, size, MP_F_BLK_SIZE, MP_FK_INT, size),
	F(mp_block, requested_size, MP_F_BLK_REQUESTED_SIZE, MP_FK_INT, requested_size),
	F(mp_block, state, MP_F_BLK_STATE, MP_FK_STR, state),
	F(mp_block, frames, MP_F_BLK_FRAMES, MP_FK_FRAMES, frames),
	F(mp_block, history, MP_F_BLK_HISTORY, MP_FK_LIST, history),
};

static const struct mp_field_spec trace_fields[] = {
	F(mp_trace_entry, action, MP_F_TR_ACTION, MP_FK_STR, action),
	F(mp_trace_entry, addr, MP_F_TR_ADDR, MP_FK_INT, addr),
	F(mp_trace_entry, device_free, MP_F_TR_DEVICE_FREE, MP_FK_INT, addr),
	F(mp_trace_entry, size, MP_F_TR_SIZE, MP_FK_INT, size),
	F(mp_trace_entry, stream, MP_F_TR_STREAM, MP_FK_INT, stream),
	F(mp_trace_entry, time_us, MP_F_TR_TIME_US, MP_FK_INT, time_us),
	F(mp_trace_entry, compile_context, MP_F_TR_COMPILE_CONTEXT, MP_FK_ANY, compile_context),
	F(mp_trace_entry, user_metadata, MP_F_TR_USER_METADATA, MP_FK_ANY, user_metadata),
	F(mp_trace_entry, frames, MP_F_TR_FRAMES, MP_FK_FRAMES, frames),
};

#define SPEC(rec, fields) \
	{ fields, sizeof fields / sizeof fields[0], offsetof(rec, shape), offsetof(rec, extras), \
	  offsetof(rec, present) }

const struct mp_record_spec mp_record_specs[MP_REC__COUNT] = {
	[MP_REC_TOP] = SPEC(mp_snapshot, top_fields),
	[MP_REC_SEGMENT] = SPEC(mp_segment, segment_fields),
	[MP_REC_BLOCK] = SPEC(mp_block, block_fields),
	[MP_REC_TRACE] = SPEC(mp_trace_entry, trace_fields),
};

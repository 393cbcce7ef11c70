/* timeline_json.c - the profiler's two JSON forms of a timeline, spelled as json.dump spells
   them (", " between items), so that the files compare byte for byte with PyTorch's. */
#include "mp_timeline.h"

void mp_timeline_json(const mp_timeline_device *d, mp_out *out)
{
	mp_timeline_cursor c;
	bool first = true;

	mp_out_puts(out, "[[");
	mp_timeline_cursor_init(&c, d);
	while (mp_timeline_next(&c)) {
		if (!first)
			mp_out_puts(out, ", ");
		first = false;
		mp_out_i64(out, c.row.time);
	}
	mp_out_puts(out, "], [");
	first = true;
	mp_timeline_cursor_init(&c, d);
	while (mp_timeline_next(&c)) {
		mp_i128 cols[8] = { 0 };

		for (int k = 0; k < MP_CAT__COUNT; k++)
			cols[mp_timeline_profiler_index((enum mp_category)k)] += c.row.bytes[k];
		/* The profiler's rows lead with a column nothing writes to. */
		mp_out_puts(out, first ? "[0" : ", [0");
		first = false;
		for (int i = 0; i < 8; i++) {
			mp_out_puts(out, ", ");
			mp_format_i128(out, cols[i]);
		}
		mp_out_putc(out, ']');
	}
	mp_out_puts(out, "]]");
}

mp_err mp_timeline_raw(const mp_timeline_device *d, mp_out *out, mp_diag *diag)
{
	mp_out_putc(out, '[');
	for (size_t i = 0; i < d->nevents; i++) {
		const mp_timeline_event *e = &d->events[i];
		int64_t ns = -1;

		/* The profiler's times are nanoseconds, -1 for what was there before. */
		if (e->action != MP_TL_PREEXISTING && __builtin_mul_overflow(e->time_us, 1000, &ns))
			return mp_fail(diag, MP_E_RANGE, "timeline: time_us %lld does not fit in nanoseconds",
				       (long long)e->time_us);
		mp_out_printf(out, "%s[%lld, %d, %lld, %d]", i ? ", " : "", (long long)ns, e->action,
			      (long long)(e->action == MP_TL_DESTROY ? -e->bytes : e->bytes),
			      mp_timeline_profiler_index((enum mp_category)e->category));
	}
	mp_out_putc(out, ']');
	return MP_OK;
}

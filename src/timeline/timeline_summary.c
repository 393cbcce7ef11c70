/* timeline_summary.c - what `memprof timeline` prints without -o: per device the time span, the
   peak and when, and the bytes of each category at the peak and at the end. */
#include <stdlib.h>

#include "mp_timeline.h"

/* Write N in U padded with blanks to WIDTH (the buffer may drain: a cell's length is measured
   in its own buffer). */
static void put_cell(mp_out *out, mp_i128 n, enum mp_units u, int width)
{
	mp_out cell;
	char *text;

	mp_out_init(&cell);
	mp_format_size(&cell, n, u);
	text = mp_out_take(&cell, NULL);
	mp_out_printf(out, "%*s", width, text != NULL ? text : "?");
	free(text);
	mp_out_free(&cell);
}

static void device_summary(const mp_timeline_device *d, const mp_timeline_view *v, mp_out *out)
{
	const enum mp_category *rows;
	mp_timeline_row peak, end, first;
	mp_timeline_cursor c;
	size_t nrows, n;

	mp_timeline_peak(d, &peak, &end, &n);
	rows = mp_category_rows(v->scheme, &nrows);
	mp_out_printf(out, "device %lld: %zu events from %zu ring entries, %zu rows\n", (long long)d->device,
		      d->nevents, d->ring, n);
	if (n == 0) {
		mp_out_puts(out, "  no allocation or free in the ring, no active block\n");
		return;
	}
	mp_timeline_cursor_init(&c, d);
	first = mp_timeline_next(&c) ? c.row : end;
	mp_out_printf(out, "  time:  time_us %lld to %lld (%.6f s)\n", (long long)first.time, (long long)end.time,
		      ((double)end.time - (double)first.time) / 1e6);
	mp_out_puts(out, "  peak:  ");
	mp_format_size(out, mp_timeline_row_total(&peak), v->units);
	mp_out_printf(out, " at +%.6f s (time_us %lld)\n", ((double)peak.time - (double)first.time) / 1e6,
		      (long long)peak.time);
	mp_out_puts(out, "  end:   ");
	mp_format_size(out, mp_timeline_row_total(&end), v->units);
	mp_out_puts(out, "; the snapshot's active blocks requested ");
	mp_format_size(out, d->active_bytes, v->units);
	mp_out_puts(out, d->end_bytes == d->active_bytes ? " (they agree)\n" : " (they DISAGREE: see the warning)\n");
	mp_out_printf(out, "  %-18s %14s %14s\n", "category", "at peak", "at end");
	for (size_t k = 0; k < nrows; k++) {
		mp_out_printf(out, "  %-18s ", mp_category_name(rows[k], v->scheme));
		put_cell(out, mp_timeline_row_bytes(&peak, rows[k], v->scheme), v->units, 14);
		mp_out_putc(out, ' ');
		put_cell(out, mp_timeline_row_bytes(&end, rows[k], v->scheme), v->units, 14);
		mp_out_putc(out, '\n');
	}
}

void mp_timeline_summary(const mp_timeline *tl, const mp_timeline_view *v, mp_out *out)
{
	for (size_t i = 0; i < tl->ndevices; i++) {
		if (i > 0)
			mp_out_putc(out, '\n');
		device_summary(&tl->devices[i], v, out);
	}
}

/* timeline_html.c - every device's timeline on one self-contained HTML page: the SVG plots
   inline, and a table of each category at the peak and at the end. Nothing to fetch, nothing
   to run: it draws from a file:// URL with scripts off. */
#include "mp_timeline.h"

static void put_table(const mp_timeline_device *d, const mp_timeline_view *v, mp_out *out)
{
	const enum mp_category *rows;
	mp_timeline_row peak, end;
	size_t nrows, n;

	mp_timeline_peak(d, &peak, &end, &n);
	rows = mp_category_rows(v->scheme, &nrows);
	mp_out_puts(out, "<table>\n<tr><th>category</th><th>at the peak</th><th>at the end</th></tr>\n");
	for (size_t k = nrows; k-- > 0;) {
		mp_out_printf(out, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>%s</td><td>",
			      mp_timeline_colour(rows[k]), mp_category_name(rows[k], v->scheme));
		mp_format_size(out, mp_timeline_row_bytes(&peak, rows[k], v->scheme), v->units);
		mp_out_puts(out, "</td><td>");
		mp_format_size(out, mp_timeline_row_bytes(&end, rows[k], v->scheme), v->units);
		mp_out_puts(out, "</td></tr>\n");
	}
	mp_out_puts(out, "<tr><th>total</th><th>");
	mp_format_size(out, mp_timeline_row_total(&peak), v->units);
	mp_out_puts(out, "</th><th>");
	mp_format_size(out, mp_timeline_row_total(&end), v->units);
	mp_out_puts(out, "</th></tr>\n</table>\n");
}

mp_err mp_timeline_html(const mp_timeline *tl, const mp_timeline_view *v, mp_out *out, mp_diag *diag)
{
	mp_err err = MP_OK;

	mp_out_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<title>GPU memory timeline by category</title>\n<style>\n"
			 "body { font-family: sans-serif; margin: 16px; color: #222222; }\n"
			 "table { border-collapse: collapse; margin: 8px 0 32px; }\n"
			 "th, td { padding: 2px 12px; text-align: right; border-bottom: 1px solid #dddddd; }\n"
			 "th:first-child, td:first-child { text-align: left; }\n"
			 ".sw { display: inline-block; width: 12px; height: 12px; margin-right: 6px; }\n"
			 "</style>\n</head>\n<body>\n<h1>GPU memory timeline by category</h1>\n"
			 "<p>From the CUDA caching allocator's trace ring, by memprof. Memory counts from an "
			 "allocation until its <code>free_completed</code>; what the ring does not show being "
			 "allocated counts from its start.</p>\n");
	for (size_t i = 0; i < tl->ndevices && err == MP_OK; i++) {
		const mp_timeline_device *d = &tl->devices[i];

		mp_out_printf(out, "<h2>Device %lld</h2>\n", (long long)d->device);
		if ((err = mp_timeline_svg(d, v, false, out, diag)) == MP_OK)
			put_table(d, v, out);
	}
	mp_out_puts(out, "</body>\n</html>\n");
	return err != MP_OK ? err : out->err;
}

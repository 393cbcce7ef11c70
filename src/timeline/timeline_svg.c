/* timeline_svg.c - one device's timeline as a stacked area plot in SVG, drawn by memprof itself:
   axes with units, the categories stacked in the profiler's order, a legend with every
   category's colour and name. No script, no fonts or images from elsewhere. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mp_timeline.h"

/* The canvas and the plot area in it (px). */
enum { WIDTH = 1200, HEIGHT = 640, PX = 90, PY = 70, PW = 860, PH = 500, LEGEND_X = 975, LEGEND_Y = 90 };

/* At most this many scheme rows (the profiler's 8; MemTracker's 7). */
#define MAX_ROWS 8

const char *mp_timeline_colour(enum mp_category c)
{
	static const char *const colours[MP_CAT__COUNT] = {
		[MP_CAT_PARAMETER] = "darkgreen", [MP_CAT_OPTIMIZER_STATE] = "goldenrod",
		[MP_CAT_INPUT] = "black",         [MP_CAT_TEMPORARY] = "mediumpurple",
		[MP_CAT_ACTIVATION] = "red",      [MP_CAT_GRADIENT] = "mediumblue",
		[MP_CAT_AUTOGRAD_DETAIL] = "royalblue", [MP_CAT_BUFFER] = "darkorange",
		[MP_CAT_UNKNOWN] = "grey",
	};

	return (unsigned)c < MP_CAT__COUNT ? colours[c] : "grey";
}

enum mp_units mp_timeline_units(enum mp_units u, mp_i128 bytes)
{
	if (u != MP_UNITS_AUTO)
		return u;
	if (bytes >= (mp_i128)1 << 30)
		return MP_UNITS_GIB;
	if (bytes >= (mp_i128)1 << 20)
		return MP_UNITS_MIB;
	return bytes >= 1024 ? MP_UNITS_KIB : MP_UNITS_B;
}

/* One step of the plot: the bytes of each scheme row (in the y unit) held from X0 to X1. */
struct sample {
	double x0, x1;
	double v[MAX_ROWS];
};

/* What is drawn: the samples, the scales, the names. */
struct plot {
	const mp_timeline_device *d;
	const mp_timeline_view *view;
	const enum mp_category *rows;
	size_t nrows;
	enum mp_units units;
	double unit;           /* bytes per y unit */
	int64_t t0, t1;        /* the time axis, in microseconds */
	double tscale;         /* microseconds per x unit */
	const char *tname;     /* the x unit */
	double ymax, ystep, xmax, xstep;
	struct sample *samples;
	size_t nsamples;
	mp_timeline_row peak, end;
	size_t nrows_data;
};

/* ---- scales */

/* A step of 1, 2 or 5 times a power of ten that cuts SPAN into about five. */
static double nice_step(double span)
{
	double raw = span > 0 ? span / 5 : 1, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void time_scale(struct plot *p)
{
	double span = (double)p->t1 - (double)p->t0;

	/* Training steps take milliseconds, as the profiler's plot assumes; short and long rings get
	   microseconds and seconds. */
	if (span < 1e3)
		p->tscale = 1, p->tname = "\xC2\xB5s";
	else if (span < 1e7)
		p->tscale = 1e3, p->tname = "ms";
	else
		p->tscale = 1e6, p->tname = "s";
	p->xstep = nice_step(span / p->tscale);
	p->xmax = span > 0 ? span / p->tscale : p->xstep;
}

static void size_scale(struct plot *p)
{
	double top;

	p->units = mp_timeline_units(p->view->units, mp_timeline_row_total(&p->peak));
	p->unit = (double)((int64_t)1 << (10 * (int)(p->units - MP_UNITS_B)));
	top = (double)mp_timeline_row_total(&p->peak) / p->unit;
	p->ystep = nice_step(top);
	p->ymax = top > 0 ? ceil(top / p->ystep) * p->ystep : p->ystep;
}

static double x_of(const struct plot *p, double t_us)
{
	return PX + (t_us - (double)p->t0) / p->tscale / p->xmax * PW;
}

static double y_of(const struct plot *p, double v)
{
	return PY + PH - v / p->ymax * PH;
}

/* ---- samples: one pixel column keeps its highest row and its last */

struct column {
	bool used;
	mp_timeline_row top, last;
};

static mp_err make_samples(struct plot *p, mp_diag *diag)
{
	struct column *cols = calloc(PW, sizeof *cols);
	mp_timeline_cursor c;
	size_t n = 0;

	if (cols == NULL || (p->samples = calloc(2 * PW, sizeof *p->samples)) == NULL) {
		free(cols);
		return mp_fail(diag, MP_E_NOMEM, "timeline: out of memory");
	}
	mp_timeline_cursor_init(&c, p->d);
	while (mp_timeline_next(&c)) {
		double x = x_of(p, (double)c.row.time) - PX;
		size_t i = x <= 0 ? 0 : x >= PW - 1 ? PW - 1 : (size_t)x;

		if (!cols[i].used || mp_timeline_row_total(&c.row) > mp_timeline_row_total(&cols[i].top))
			cols[i].top = c.row;
		cols[i].last = c.row;
		cols[i].used = true;
	}
	for (size_t i = 0; i < PW; i++) {
		size_t next = i + 1;

		if (!cols[i].used)
			continue;
		while (next < PW && !cols[next].used)
			next++;
		/* The peak of the column shows one pixel wide, then what it ended at until the next. */
		for (int half = 0; half < 2; half++) {
			const mp_timeline_row *r = half ? &cols[i].last : &cols[i].top;
			struct sample *s = &p->samples[n++];

			s->x0 = PX + (double)i + half;
			s->x1 = half ? PX + (double)next : s->x0 + 1;
			for (size_t k = 0; k < p->nrows; k++)
				s->v[k] = (double)mp_timeline_row_bytes(r, p->rows[k], p->view->scheme) / p->unit;
		}
	}
	p->nsamples = n;
	free(cols);
	return MP_OK;
}

/* ---- drawing */

/* The stacked area of scheme row K: its top edge left to right, the one below right to left. */
static void put_area(const struct plot *p, size_t k, mp_out *out)
{
	double peak = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		peak = fmax(peak, p->samples[i].v[k]);
	if (peak <= 0)
		return;
	mp_out_printf(out, "<path class=\"area\" fill=\"%s\" d=\"", mp_timeline_colour(p->rows[k]));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		double top = 0;

		for (size_t j = 0; j <= k; j++)
			top += s->v[j];
		mp_out_printf(out, "%s%.1f,%.2f H%.1f ", i ? "L" : "M", s->x0, y_of(p, top), s->x1);
	}
	for (size_t i = p->nsamples; i-- > 0;) {
		const struct sample *s = &p->samples[i];
		double below = 0;

		for (size_t j = 0; j < k; j++)
			below += s->v[j];
		mp_out_printf(out, "L%.1f,%.2f H%.1f ", s->x1, y_of(p, below), s->x0);
	}
	mp_out_puts(out, "Z\"/>\n");
}

static void put_axes(const struct plot *p, mp_out *out)
{
	mp_out_printf(out, "<rect id=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", PX, PY,
		      PW, PH);
	for (double v = 0; v <= p->ymax * (1 + 1e-9); v += p->ystep) {
		double y = y_of(p, v);

		mp_out_printf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", PX,
			      PX + PW, y, y);
		mp_out_printf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>\n", PX - 8, y + 4, v);
	}
	for (double t = 0; t <= p->xmax * (1 + 1e-9); t += p->xstep) {
		double x = PX + t / p->xmax * PW;

		mp_out_printf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n", x, x,
			      PY + PH, PY + PH + 6);
		mp_out_printf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.6g</text>\n", x, PY + PH + 22,
			      t);
	}
	mp_out_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">Time (%s) from time_us %lld</text>\n",
		      PX + PW / 2, PY + PH + 48, p->tname, (long long)p->t0);
	mp_out_printf(out, "<text transform=\"translate(24 %d) rotate(-90)\" text-anchor=\"middle\">Memory (%s)</text>\n",
		      PY + PH / 2, mp_units_name(p->units));
}

static void put_frame_and_legend(const struct plot *p, mp_out *out)
{
	mp_out_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333333\"/>\n",
		      PX, PY, PW, PH);
	if (p->nrows_data == 0)
		mp_out_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no allocations in the ring</text>\n",
			      PX + PW / 2, PY + PH / 2);
	mp_out_puts(out, "<g id=\"legend\">\n");
	/* Top to bottom as the areas stack: the last row is drawn highest. */
	for (size_t k = p->nrows; k-- > 0;) {
		int y = LEGEND_Y + 26 * (int)(p->nrows - 1 - k);

		mp_out_printf(out, "<rect class=\"swatch\" x=\"%d\" y=\"%d\" width=\"18\" height=\"18\" fill=\"%s\"/>\n",
			      LEGEND_X, y, mp_timeline_colour(p->rows[k]));
		mp_out_printf(out, "<text x=\"%d\" y=\"%d\">%s</text>\n", LEGEND_X + 26, y + 14,
			      mp_category_name(p->rows[k], p->view->scheme));
	}
	mp_out_puts(out, "</g>\n");
}

static void put_title(const struct plot *p, mp_out *out)
{
	mp_out_printf(out, "<text x=\"%d\" y=\"30\" text-anchor=\"middle\" font-size=\"19\" font-weight=\"bold\">"
			   "GPU memory by category, device %lld</text>\n",
		      WIDTH / 2, (long long)p->d->device);
	mp_out_printf(out, "<text x=\"%d\" y=\"54\" text-anchor=\"middle\">peak ", WIDTH / 2);
	mp_format_size(out, mp_timeline_row_total(&p->peak), p->view->units);
	mp_out_printf(out, " at %.6g %s; at the end ", ((double)p->peak.time - (double)p->t0) / p->tscale, p->tname);
	mp_format_size(out, mp_timeline_row_total(&p->end), p->view->units);
	mp_out_printf(out, "; %zu events</text>\n", p->d->nevents);
}

mp_err mp_timeline_svg(const mp_timeline_device *d, const mp_timeline_view *v, bool standalone, mp_out *out,
		       mp_diag *diag)
{
	struct plot p = { .d = d, .view = v };
	mp_timeline_cursor c;
	mp_err err;

	p.rows = mp_category_rows(v->scheme, &p.nrows);
	if (p.nrows > MAX_ROWS)
		p.nrows = MAX_ROWS;
	mp_timeline_peak(d, &p.peak, &p.end, &p.nrows_data);
	mp_timeline_cursor_init(&c, d);
	for (bool first = true; mp_timeline_next(&c); first = false) {
		p.t0 = first || c.row.time < p.t0 ? c.row.time : p.t0;
		p.t1 = first || c.row.time > p.t1 ? c.row.time : p.t1;
	}
	time_scale(&p);
	size_scale(&p);
	if ((err = make_samples(&p, diag)) != MP_OK)
		return err;
	if (standalone)
		mp_out_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	mp_out_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
			   "font-family=\"sans-serif\" font-size=\"13\" fill=\"#222222\">\n",
		      WIDTH, HEIGHT, WIDTH, HEIGHT);
	mp_out_printf(out, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT);
	put_title(&p, out);
	put_axes(&p, out);
	for (size_t k = 0; k < p.nrows; k++)
		put_area(&p, k, out);
	put_frame_and_legend(&p, out);
	mp_out_puts(out, "</svg>\n");
	free(p.samples);
	return out->err;
}

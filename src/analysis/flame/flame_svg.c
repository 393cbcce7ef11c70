/* flame_svg.c - lay out the call trie and write it as a standalone flame graph SVG. */
#include "flame_svg.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flame_int.h"
#include "mp_array.h"
#include "mp_file.h"
#include "mp_hash.h"

/* Geometry in px, matching the flame graphs people are used to reading. */
#define IMAGE_W 1200
#define XPAD 10
#define FRAME_H 16
#define FONT_SIZE 12
#define CHAR_W (0.59 * FONT_SIZE)
#define MIN_W 0.1
#define TOP_PAD (3 * FONT_SIZE)		/* room for the title and buttons */
#define BOTTOM_PAD (2 * FONT_SIZE + 10) /* room for the details line */
#define LABEL_MARGIN 6.0		/* 3 px either side of a label */

/* Colour hash seed: any constant works, it only has to stay fixed for determinism. */
#define FILL_SEED 0x666c616d65ull

/* ---- text output ------------------------------------------------------- */

/* Bytes in the valid UTF-8 sequence at S (at most LEN), or 0 when S does not
   start one. Surrogates, overlongs and U+FFFE/U+FFFF are invalid in XML. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	uint32_t cp, min;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xC2 || s[0] > 0xF4)
		return 0;
	n = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
	min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
	if (len < n)
		return 0;
	cp = s[0] & (0x7Fu >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3Fu);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
		return 0;
	return n;
}

/* Bytes taken by the displayed character at S: a bad byte shows as one U+FFFD. */
static size_t char_bytes(const unsigned char *s, size_t len)
{
	size_t n = utf8_seq(s, len);

	return n ? n : 1;
}

/* Displayed characters in S, counting no further than LIMIT (so huge names
   cost nothing extra when only "does it fit" matters). */
static size_t count_chars(const char *s, size_t len, size_t limit)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = 0;

	while (i < len && n < limit) {
		i += char_bytes(u + i, len - i);
		n++;
	}
	return n;
}

/* What replaces the character at U (N bytes) in XML text, or NULL to copy it. */
static const char *xml_replacement(const unsigned char *u, size_t n)
{
	if (n == 1) {
		switch (u[0]) {
		case '&': return "&amp;";
		case '<': return "&lt;";
		case '>': return "&gt;";
		case '"': return "&quot;";
		case '\'': return "&apos;";
		default: break;
		}
		if (u[0] < 0x20 || u[0] >= 0x7F)
			return "\xEF\xBF\xBD"; /* controls, DEL and stray bytes: U+FFFD */
	}
	return NULL;
}

/* Write up to MAXCHARS characters of S as XML text, copying safe runs whole. */
static void put_xml(mp_out *out, const char *s, size_t len, size_t maxchars)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, nchars = 0;

	while (i < len && nchars < maxchars) {
		size_t n = utf8_seq(u + i, len - i);
		const char *rep = xml_replacement(u + i, n ? n : 1);

		if (rep != NULL) {
			mp_out_write(out, s + run, i - run);
			mp_out_puts(out, rep);
			run = i + (n ? n : 1);
		}
		i += n ? n : 1;
		nchars++;
	}
	mp_out_write(out, s + run, i - run);
}

/* Label for a frame W px wide: the whole name if it fits, else a prefix and
   "..", else nothing. Counts characters, so multi-byte ones are never split. */
static void put_label(mp_out *out, const char *name, size_t len, double w)
{
	double room = (w - LABEL_MARGIN) / CHAR_W;
	size_t fit = room > 0 ? (size_t)room : 0;

	if (count_chars(name, len, fit + 1) <= fit) {
		put_xml(out, name, len, SIZE_MAX);
	} else if (fit >= 3) {
		put_xml(out, name, len, fit - 2);
		mp_out_puts(out, "..");
	}
}

/* V with thousands separators: 1234567 -> "1,234,567". */
static void put_grouped(mp_out *out, uint64_t v)
{
	char tmp[32];
	char *p = tmp + sizeof tmp;
	int digits = 0;

	do {
		if (digits > 0 && digits % 3 == 0)
			*--p = ',';
		*--p = (char)('0' + v % 10);
		v /= 10;
		digits++;
	} while (v != 0);
	mp_out_write(out, p, (size_t)(tmp + sizeof tmp - p));
}

/* Warm colour from the name's hash: red high, green below red (so red to
   orange to yellow, never green), little blue. Hashing (not position) keeps a
   function's colour stable across graphs. */
static void put_fill(mp_out *out, const char *name, size_t len)
{
	uint64_t h = mp_hash_bytes(name, len, FILL_SEED);
	unsigned r = 205 + (unsigned)(h % 51);

	mp_out_printf(out, "rgb(%u,%u,%u)", r, 40 + (unsigned)((h >> 16) % (r - 70)), (unsigned)((h >> 40) % 60));
}

/* ---- SVG document ------------------------------------------------------ */

/* Click a frame to zoom into it (ancestors stay, dimmed), "Reset Zoom" or a
   full-width frame to undo; "Search" highlights frames matching a regular
   expression and shows how much of the total they cover. Labels are redone
   with the same rule as put_label. Must not contain "]]>". */
static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"\"use strict\";\n"
	"var W=1200,P=10,CW=7.08,F=[],det,unz,mat;\n"
	"function el(i){return document.getElementById(i);}\n"
	"function lab(f,w){var c=Math.floor((w-6)/CW),a=Array.from(f.n);"
	"f.t.textContent=a.length<=c?f.n:c<3?\"\":a.slice(0,c-2).join(\"\")+\"..\";}\n"
	"function put(f,x,w){f.r.setAttribute(\"x\",x.toFixed(2));f.r.setAttribute(\"width\",w.toFixed(2));"
	"f.t.setAttribute(\"x\",(x+3).toFixed(2));lab(f,w);}\n"
	"function frame(e){var g=e.target.closest?e.target.closest(\"#frames>g\"):null;return g?g.F:null;}\n"
	"function zoom(z){if(z&&z.w>=W-2*P-0.05)z=null;var s=z?(W-2*P)/z.w:1,zm=z?z.x+z.w/2:0;\n"
	" F.forEach(function(f){var m=f.x+f.w/2,v=\"inline\",o=\"\";\n"
	"  if(!z)put(f,f.x,f.w);\n"
	"  else if(f.y<=z.y&&m>z.x&&m<z.x+z.w)put(f,P+(f.x-z.x)*s,f.w*s);\n"
	"  else if(f.y>z.y&&zm>f.x&&zm<f.x+f.w){put(f,P,W-2*P);o=\"0.6\";}\n"
	"  else v=\"none\";\n"
	"  f.g.setAttribute(\"display\",v);f.g.style.opacity=o;});\n"
	" unz.setAttribute(\"display\",z?\"inline\":\"none\");}\n"
	"function search(){var q=prompt(\"Search frames (regular expression):\",\"\"),re=null,iv=[],sum=0,end=-1;\n"
	" if(q===null)return;if(q)try{re=new RegExp(q);}catch(x){alert(x);return;}\n"
	" F.forEach(function(f){var hit=re!==null&&re.test(f.n);"
	"f.r.setAttribute(\"fill\",hit?\"rgb(230,0,230)\":f.c);if(hit)iv.push([f.x,f.x+f.w]);});\n"
	" iv.sort(function(a,b){return a[0]-b[0];});\n"
	" iv.forEach(function(v){if(v[1]>end){sum+=v[1]-Math.max(v[0],end);end=v[1];}});\n"
	" mat.textContent=re?\"Matched: \"+(100*sum/(W-2*P)).toFixed(1)+\"%\":\" \";}\n"
	"window.addEventListener(\"load\",function(){det=el(\"details\");unz=el(\"unzoom\");mat=el(\"matched\");\n"
	" var gs=document.querySelectorAll(\"#frames>g\");\n"
	" for(var i=0;i<gs.length;i++){var g=gs[i],r=g.querySelector(\"rect\"),s=g.querySelector(\"title\").textContent;\n"
	"  g.F={g:g,r:r,t:g.querySelector(\"text\"),x:+r.getAttribute(\"x\"),w:+r.getAttribute(\"width\"),"
	"y:+r.getAttribute(\"y\"),c:r.getAttribute(\"fill\"),n:s.slice(0,s.lastIndexOf(\" (\"))};F.push(g.F);}\n"
	" document.addEventListener(\"click\",function(e){var f=frame(e);if(f)zoom(f);"
	"else if(e.target===unz)zoom(null);else if(e.target===el(\"search\"))search();});\n"
	" document.addEventListener(\"mouseover\",function(e){var f=frame(e);"
	"det.textContent=f?f.g.querySelector(\"title\").textContent:\" \";});});\n"
	"]]></script>\n";

static const char style[] =
	"<style type=\"text/css\"><![CDATA[\n"
	"#frames>g{cursor:pointer} #frames>g:hover>rect{stroke:#000;stroke-width:0.5}\n"
	"#frames text{pointer-events:none} .btn{cursor:pointer;fill:#333}\n"
	"]]></style>\n";

/* Everything above the frames: prologue, background, title, buttons. */
static void put_head(mp_out *out, const char *title, unsigned height, bool interactive)
{
	mp_out_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	mp_out_printf(out,
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%u\" "
		      "viewBox=\"0 0 %d %u\" font-family=\"Verdana\" font-size=\"%d\">\n",
		      IMAGE_W, height, IMAGE_W, height, FONT_SIZE);
	mp_out_puts(out, "<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
			 "<stop offset=\"0.05\" stop-color=\"#eeeeee\"/><stop offset=\"0.95\" stop-color=\"#eeeeb0\"/>"
			 "</linearGradient></defs>\n");
	if (interactive) {
		mp_out_puts(out, style);
		mp_out_puts(out, script);
	}
	mp_out_printf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"url(#bg)\"/>\n", IMAGE_W,
		      height);
	mp_out_printf(out, "<text x=\"%d\" y=\"24\" font-size=\"17\" text-anchor=\"middle\">", IMAGE_W / 2);
	put_xml(out, title, strlen(title), SIZE_MAX);
	mp_out_puts(out, "</text>\n");
	if (!interactive)
		return;
	mp_out_printf(out,
		      "<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"24\" display=\"none\">Reset Zoom</text>\n"
		      "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		      "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		      "<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		      XPAD, IMAGE_W - XPAD, XPAD, height - 12, IMAGE_W - XPAD, height - 12);
}

static void put_empty(mp_out *out, const char *title)
{
	put_head(out, title, 120, false);
	mp_out_printf(out, "<text x=\"%d\" y=\"72\" font-size=\"17\" text-anchor=\"middle\">No data</text>\n",
		      IMAGE_W / 2);
	mp_out_puts(out, "</svg>\n");
}

/* What every frame's geometry depends on. */
typedef struct layout {
	double px_per_count;
	size_t maxdepth;
	uint64_t total;
	const char *countname;
} layout;

/* One frame at DEPTH: tooltip "name (N unit, P%)", rectangle, label. OFF counts
   what lies left of it, so x comes from integers and never accumulates error. */
static void put_frame(mp_out *out, const layout *L, const ftree *t, uint32_t node, uint64_t off,
		      size_t depth)
{
	const fnode *f = &t->nodes[node];
	const fname *nm = &t->names[mp_flame_name_of(f)];
	double x = XPAD + (double)off * L->px_per_count;
	double w = (double)f->total * L->px_per_count;
	unsigned long long y = TOP_PAD + (unsigned long long)(L->maxdepth - depth) * FRAME_H;

	mp_out_puts(out, "<g><title>");
	put_xml(out, nm->s, nm->len, SIZE_MAX);
	mp_out_puts(out, " (");
	put_grouped(out, f->total);
	mp_out_putc(out, ' ');
	put_xml(out, L->countname, strlen(L->countname), SIZE_MAX);
	mp_out_printf(out, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%llu\" width=\"%.2f\" height=\"%d\" rx=\"2\" ry=\"2\" fill=\"",
		      100.0 * (double)f->total / (double)L->total, x, y, w, FRAME_H - 1);
	put_fill(out, nm->s, nm->len);
	mp_out_printf(out, "\"/><text x=\"%.2f\" y=\"%llu\">", x + 3, y + FRAME_H - 5);
	put_label(out, nm->s, nm->len, w);
	mp_out_puts(out, "</text></g>\n");
}

static bool visible(const layout *L, const fnode *f)
{
	return (double)f->total * L->px_per_count >= MIN_W;
}

/* A node being walked: which child comes next and where that child starts. */
typedef struct walk {
	uint32_t node, next;
	uint64_t off;
} walk;

/* A child being sorted, with its name at hand for the comparison. */
struct kid {
	const char *s;
	size_t len;
	uint32_t node;
};

/* Depth-first traversal state, without recursion: stacks can be very deep. */
typedef struct walker {
	walk *st;
	size_t sp, cap;
	struct kid *kids; /* scratch for sorting one child list */
	size_t nkids;
} walker;

static bool walk_push(walker *w, const ftree *t, uint32_t node, uint64_t off)
{
	if (mp_array_grow((void **)&w->st, &w->cap, w->sp + 1, sizeof *w->st) != MP_OK)
		return false;
	w->st[w->sp++] = (walk){ node, t->nodes[node].child, off };
	return true;
}

/* The next visible child of the walk's top node, advancing past narrow ones
   (their counts still move the offset, so they stay counted in the parent).
   NONE pops the top: its children are done. */
static uint32_t walk_next(walker *w, const ftree *t, const layout *L, uint64_t *off)
{
	walk *top = &w->st[w->sp - 1];

	while (top->next != NONE) {
		uint32_t c = top->next;

		*off = top->off;
		top->next = t->nodes[c].next;
		top->off += t->nodes[c].total;
		if (visible(L, &t->nodes[c]))
			return c;
	}
	w->sp--;
	return NONE;
}

static int cmp_kids(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->s, y->s, n) : 0;

	if (c != 0)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

/* Relink NODE's children in bytewise name order. Sibling names are unique,
   so the order is total and qsort's instability cannot leak into the output. */
static bool sort_children(walker *w, ftree *t, uint32_t node)
{
	fnode *p = &t->nodes[node];
	size_t m = 0, k;
	uint32_t c;

	if (p->child == NONE || t->nodes[p->child].next == NONE)
		return true;
	for (c = p->child; c != NONE; c = t->nodes[c].next)
		m++;
	if (m > w->nkids) {
		struct kid *nk = realloc(w->kids, m * sizeof *nk);

		if (nk == NULL)
			return false;
		w->kids = nk;
		w->nkids = m;
	}
	for (m = 0, c = p->child; c != NONE; c = t->nodes[c].next) {
		const fname *nm = &t->names[mp_flame_name_of(&t->nodes[c])];

		w->kids[m++] = (struct kid){ nm->s, nm->len, c };
	}
	mp_sort(w->kids, m, sizeof *w->kids, cmp_kids);
	p->child = w->kids[0].node;
	for (k = 0; k + 1 < m; k++)
		t->nodes[w->kids[k].node].next = w->kids[k + 1].node;
	t->nodes[w->kids[m - 1].node].next = NONE;
	return true;
}

/* First pass over what will be drawn: sort those child lists (nothing else
   is ever shown, so the rest of the trie is left unsorted) and find the
   deepest drawn frame, which fixes the image height. */
static bool prepare(walker *w, ftree *t, layout *L)
{
	uint64_t off;
	uint32_t c;

	L->maxdepth = 0;
	if (!sort_children(w, t, 0) || !walk_push(w, t, 0, 0))
		return false;
	while (w->sp > 0) {
		c = walk_next(w, t, L, &off);
		if (c == NONE)
			continue;
		if (!sort_children(w, t, c) || !walk_push(w, t, c, off))
			return false;
		if (w->sp - 1 > L->maxdepth)
			L->maxdepth = w->sp - 1;
	}
	return true;
}

/* Second pass: every drawn frame, depth-first and left to right. */
static bool put_frames(walker *w, mp_out *out, const ftree *t, const layout *L)
{
	uint64_t off;
	uint32_t c;

	put_frame(out, L, t, 0, 0, 0);
	if (!walk_push(w, t, 0, 0))
		return false;
	while (w->sp > 0 && out->err == MP_OK) {
		c = walk_next(w, t, L, &off);
		if (c == NONE)
			continue;
		put_frame(out, L, t, c, off, w->sp);
		if (!walk_push(w, t, c, off))
			return false;
	}
	return true;
}

static bool put_graph(mp_out *out, ftree *t, const char *title, const char *countname)
{
	walker w = { 0 };
	layout L;
	uint64_t height;
	bool ok;

	L.total = t->nodes[0].total;
	L.px_per_count = (double)(IMAGE_W - 2 * XPAD) / (double)L.total;
	L.countname = countname;
	ok = prepare(&w, t, &L);
	if (ok) {
		height = TOP_PAD + ((uint64_t)L.maxdepth + 1) * FRAME_H + BOTTOM_PAD;
		put_head(out, title, (unsigned)(height > UINT32_MAX ? UINT32_MAX : height), true);
		mp_out_puts(out, "<g id=\"frames\">\n");
		ok = put_frames(&w, out, t, &L);
		mp_out_puts(out, "</g>\n</svg>\n");
	}
	free(w.st);
	free(w.kids);
	return ok;
}

mp_err mp_flame_svg(const char *text, size_t len, const char *title, const char *countname, mp_out *out,
		    mp_diag *diag)
{
	ftree t;
	mp_err err = MP_OK;

	if (title == NULL)
		title = "Flame Graph";
	if (countname == NULL)
		countname = "samples";
	if (!mp_flame_tree_init(&t)) {
		mp_flame_tree_free(&t);
		return mp_fail(diag, MP_E_NOMEM, "flame graph: out of memory");
	}
	if (len > 0)
		err = mp_flame_parse(&t, text, len, diag);
	if (err == MP_OK) {
		mp_flame_sum_totals(&t);
		if (t.nodes[0].total == 0)
			put_empty(out, title);
		else if (!put_graph(out, &t, title, countname))
			err = mp_fail(diag, MP_E_NOMEM, "flame graph: out of memory");
	}
	if (err == MP_OK && out->err != MP_OK)
		err = mp_fail(diag, out->err, "flame graph: writing the SVG failed: %s", mp_strerror(out->err));
	mp_flame_tree_free(&t);
	return err;
}

mp_err mp_flame_write(const char *text, size_t len, const char *path, const char *title, mp_diag *diag)
{
	size_t n = strlen(path);
	mp_out svg;
	mp_err err;

	if (n < 4 || strcmp(path + n - 4, ".svg") != 0)
		return mp_file_write(path, text, len, diag);
	mp_out_init(&svg);
	err = mp_flame_svg(text != NULL ? text : "", len, title, "bytes", &svg, diag);
	if (err == MP_OK)
		err = mp_file_write(path, svg.data, svg.len, diag);
	mp_out_free(&svg);
	return err;
}

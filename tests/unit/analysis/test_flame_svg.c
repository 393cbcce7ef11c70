/* test_flame_svg.c - CUnit tests for the folded-stack flame graph SVG renderer. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flame_svg.h"
#include "mp_err.h"
#include "mp_out.h"
#include "unit_main.h"

/* Must match flame_svg.c: the frames span 1200 - 2 * 10 px, labels allow (w - 6) / 7.08 characters. */
#define SPAN 1180.0
#define CHAR_W 7.08

/* One drawn frame, read back from the SVG text. */
typedef struct frame {
	char name[4096];  /* unescaped tooltip name (cut if longer) */
	uint64_t count;   /* from the tooltip, separators removed */
	double x, w;
	long y;
	char label[4096]; /* label as written (still escaped) */
} frame;

typedef struct rendered {
	mp_err err;
	mp_diag diag;
	char *svg;
	size_t len;
	frame *frames;
	size_t nframes;
} rendered;

/* ---- helpers ----------------------------------------------------------- */

static void unescape(char *s)
{
	static const struct { const char *ent; char c; } ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' },
	};
	char *w = s;
	size_t i;

	while (*s) {
		for (i = 0; i < sizeof ents / sizeof ents[0]; i++)
			if (strncmp(s, ents[i].ent, strlen(ents[i].ent)) == 0)
				break;
		if (i < sizeof ents / sizeof ents[0]) {
			*w++ = ents[i].c;
			s += strlen(ents[i].ent);
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* Copy the text between FROM and the next TO after it into DST (bounded). */
static const char *between(const char *p, const char *from, const char *to, char *dst, size_t cap)
{
	const char *a = strstr(p, from), *b;
	size_t n;

	if (a == NULL)
		return NULL;
	a += strlen(from);
	b = strstr(a, to);
	if (b == NULL)
		return NULL;
	n = (size_t)(b - a) < cap - 1 ? (size_t)(b - a) : cap - 1;
	memcpy(dst, a, n);
	dst[n] = '\0';
	return b;
}

/* Parse one "<g><title>NAME (N unit, P%)</title><rect .../><text ...>LABEL</text></g>" line. */
static int parse_frame(const char *line, frame *f)
{
	size_t tcap = strlen(line) + 1;
	char *title = malloc(tcap), num[64], *open, *p, *d;
	int rc = -1;

	if (title == NULL || between(line, "<g><title>", "</title>", title, tcap) == NULL)
		goto out;
	open = strstr(title, " (");
	while (open != NULL && strstr(open + 2, " (") != NULL)
		open = strstr(open + 2, " (");
	if (open == NULL)
		goto out;
	*open = '\0';
	for (p = open + 2, d = num; *p && *p != ' ' && d < num + sizeof num - 1; p++)
		if (*p != ',')
			*d++ = *p;
	*d = '\0';
	f->count = strtoull(num, NULL, 10);
	unescape(title);
	snprintf(f->name, sizeof f->name, "%s", title);
	p = strstr(line, "</title>");
	if (between(p, "<rect x=\"", "\"", num, sizeof num) == NULL)
		goto out;
	f->x = strtod(num, NULL);
	if (between(p, "\" y=\"", "\"", num, sizeof num) == NULL)
		goto out;
	f->y = strtol(num, NULL, 10);
	if (between(p, "width=\"", "\"", num, sizeof num) == NULL)
		goto out;
	f->w = strtod(num, NULL);
	p = strstr(p, "<text ");
	if (p == NULL || between(p, "\">", "</text>", f->label, sizeof f->label) == NULL)
		goto out;
	rc = 0;
out:
	free(title);
	return rc;
}

static void collect_frames(rendered *r)
{
	const char *p = r->svg;
	size_t cap = 16;

	r->frames = calloc(cap, sizeof *r->frames);
	while (r->frames != NULL && (p = strstr(p, "<g><title>")) != NULL) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char *line = malloc(n + 1);

		if (line == NULL)
			break;
		memcpy(line, p, n);
		line[n] = '\0';
		if (r->nframes == cap) {
			frame *nf = realloc(r->frames, 2 * cap * sizeof *nf);

			if (nf == NULL) {
				free(line);
				break;
			}
			r->frames = nf;
			cap *= 2;
		}
		CU_ASSERT_EQUAL(parse_frame(line, &r->frames[r->nframes]), 0);
		r->nframes++;
		free(line);
		p += n;
	}
}

/* Render LEN bytes of IN and read the frames back. */
static rendered render_n(const char *in, size_t len, const char *title, const char *countname)
{
	rendered r;
	mp_out out;

	memset(&r, 0, sizeof r);
	mp_out_init(&out);
	r.err = mp_flame_svg(in, len, title, countname, &out, &r.diag);
	r.svg = mp_out_take(&out, &r.len);
	mp_out_free(&out);
	if (r.err == MP_OK && r.svg != NULL)
		collect_frames(&r);
	return r;
}

static rendered render(const char *in)
{
	return render_n(in, strlen(in), "Test", "bytes");
}

static void release(rendered *r)
{
	free(r->svg);
	free(r->frames);
	memset(r, 0, sizeof *r);
}

static const frame *find(const rendered *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nframes; i++)
		if (strcmp(r->frames[i].name, name) == 0)
			return &r->frames[i];
	return NULL;
}

/* Whether SVG parses as XML, by Python's minidom on a temp file. */
static int well_formed(const char *svg, size_t len)
{
	char path[] = "/tmp/test_flame_svg_XXXXXX";
	char cmd[256];
	int fd = mkstemp(path), rc;
	FILE *f;

	if (fd < 0)
		return 0;
	f = fdopen(fd, "wb");
	if (f == NULL) {
		close(fd);
		unlink(path);
		return 0;
	}
	fwrite(svg, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "python3 -c \"import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])\" %s", path);
	rc = system(cmd);
	unlink(path);
	return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

/* Number of code points in S if it is valid UTF-8, else -1. */
static long utf8_chars(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	long n = 0;

	while (*u) {
		int extra = *u < 0x80 ? 0 : (*u & 0xE0) == 0xC0 ? 1 : (*u & 0xF0) == 0xE0 ? 2 : (*u & 0xF8) == 0xF0 ? 3 : -1;

		if (extra < 0 || (*u >= 0x80 && *u < 0xC2))
			return -1;
		for (u++; extra > 0; extra--, u++)
			if ((*u & 0xC0) != 0x80)
				return -1;
		n++;
	}
	return n;
}

static size_t label_fit(double w)
{
	double room = (w - 6.0) / CHAR_W;

	return room > 0 ? (size_t)room : 0;
}

/* ---- parsing and layout -------------------------------------------------- */

static void test_merge(void)
{
	rendered r = render("a;b 1\na;c 4\na;b 2\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL(r.nframes, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "all"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "b"));
	CU_ASSERT_EQUAL(find(&r, "all")->count, 7);
	CU_ASSERT_EQUAL(find(&r, "a")->count, 7);
	CU_ASSERT_EQUAL(find(&r, "b")->count, 3);
	CU_ASSERT_EQUAL(find(&r, "c")->count, 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "<title>b (3 bytes, 42.86%)</title>"));
	release(&r);
}

static void test_sort_siblings(void)
{
	rendered r = render("z 1\na 1\nm 1\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "z"));
	CU_ASSERT_DOUBLE_EQUAL(find(&r, "a")->x, 10.0, 0.001);
	CU_ASSERT(find(&r, "a")->x < find(&r, "m")->x);
	CU_ASSERT(find(&r, "m")->x < find(&r, "z")->x);
	release(&r);

	/* '2' sorts before ';' bytewise, but frame "foo" still sorts before "foo2"
	   and its lines are merged, wherever they are. */
	r = render("foo2;x 1\nfoo;y 1\nfoo 1\nfoo;y 3\n");
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "foo"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "foo2"));
	CU_ASSERT_EQUAL(find(&r, "foo")->count, 5);
	CU_ASSERT_EQUAL(find(&r, "y")->count, 4);
	CU_ASSERT(find(&r, "foo")->x < find(&r, "foo2")->x);
	CU_ASSERT_EQUAL(r.nframes, 5);
	release(&r);
}

static void test_root_at_bottom(void)
{
	rendered r = render("a;b;c 10\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "c"));
	CU_ASSERT_EQUAL(r.frames[0].y > find(&r, "a")->y, 1);
	CU_ASSERT_EQUAL(find(&r, "a")->y - find(&r, "b")->y, 16);
	CU_ASSERT_EQUAL(find(&r, "b")->y - find(&r, "c")->y, 16);
	CU_ASSERT_STRING_EQUAL(r.frames[0].name, "all");
	CU_ASSERT_DOUBLE_EQUAL(r.frames[0].w, SPAN, 0.001);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "font-family=\"Verdana\" font-size=\"12\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "width=\"1200\""));
	release(&r);
}

/* Children of a frame with no self count exactly tile it. */
static void test_widths_sum_to_parent(void)
{
	const char *in = "m;a;x 300\nm;a;y 123\nm;b 77\nm;c;d;e 1000\nm;c;f 5\nn;q 44\nn;r 1\n";
	rendered r = render(in);
	size_t i, j;

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL(r.nframes, 13);
	for (i = 0; i < r.nframes; i++) {
		const frame *p = &r.frames[i];
		double sum = 0;
		uint64_t csum = 0;
		int kids = 0;

		CU_ASSERT_DOUBLE_EQUAL(p->w, SPAN * (double)p->count / 1550.0, 0.006);
		for (j = 0; j < r.nframes; j++) {
			const frame *c = &r.frames[j];

			if (c->y == p->y - 16 && c->x >= p->x - 0.01 && c->x + c->w <= p->x + p->w + 0.02) {
				sum += c->w;
				csum += c->count;
				kids++;
				/* siblings must not overlap */
				CU_ASSERT(c->x + c->w / 2 > p->x && c->x + c->w / 2 < p->x + p->w);
			}
		}
		if (kids > 0) {
			CU_ASSERT_EQUAL(csum, p->count);
			CU_ASSERT_DOUBLE_EQUAL(sum, p->w, 0.03);
		}
	}
	release(&r);
}

static void test_narrow_frames_omitted(void)
{
	rendered r = render("big 1000000\nbig;tiny 1\nbig;tiny;tinier 1\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NULL(find(&r, "tiny"));
	CU_ASSERT_PTR_NULL(find(&r, "tinier"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r, "big"));
	CU_ASSERT_EQUAL(find(&r, "big")->count, 1000002);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "big (1,000,002 bytes, 100.00%)"));
	CU_ASSERT_EQUAL(r.nframes, 2);
	release(&r);
}

static void test_thousands_and_percent(void)
{
	rendered r = render("a 1234567\nb 9876543210\nc 1\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "<title>a (1,234,567 bytes, 0.01%)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "<title>b (9,876,543,210 bytes, 99.99%)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "<title>all (9,877,777,778 bytes, 100.00%)</title>"));
	release(&r);
	r = render("x 999\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "(999 bytes, 100.00%)"));
	release(&r);
	r = render("x 18446744073709551615\n");
	CU_ASSERT_EQUAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "(18,446,744,073,709,551,615 bytes, 100.00%)"));
	release(&r);
}

static void test_whitespace_and_line_ends(void)
{
	rendered a = render("operator new(unsigned long);a b\t 5\r\nx 2   \r\n\n   \nlast 1");
	rendered b = render("operator new(unsigned long);a b 5\nx 2\nlast 1\n");

	CU_ASSERT_EQUAL_FATAL(a.err, MP_OK);
	CU_ASSERT_EQUAL_FATAL(b.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(find(&a, "operator new(unsigned long)"));
	CU_ASSERT_PTR_NOT_NULL(find(&a, "a b"));
	CU_ASSERT_PTR_NOT_NULL(find(&a, "last"));
	CU_ASSERT_EQUAL(a.len, b.len);
	CU_ASSERT(a.len == b.len && memcmp(a.svg, b.svg, a.len) == 0);
	release(&a);
	release(&b);
}

static void test_odd_stacks(void)
{
	/* Empty frames are frames; an empty stack counts for the root alone. */
	rendered r = render("a;;b 1\n 2\n;x 1\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL(r.frames[0].count, 4);
	CU_ASSERT_PTR_NOT_NULL(find(&r, "b"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "x"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, ""));
	CU_ASSERT(well_formed(r.svg, r.len));
	release(&r);

	/* A frame literally called "all" is not the root. */
	r = render("all;all 3\n");
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL(r.nframes, 3);
	release(&r);
}

/* ---- escaping and text ----------------------------------------------------- */

static void test_xml_escaping(void)
{
	static const char in[] = "std::map<int, a&b>::\"q\";it's 3\n";
	rendered r = render_n(in, sizeof in - 1, "T & <t> \"'", "<bytes>");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "std::map&lt;int, a&amp;b&gt;::&quot;q&quot; (3 &lt;bytes&gt;, 100.00%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "it&apos;s (3 &lt;bytes&gt;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, ">T &amp; &lt;t&gt; &quot;&apos;</text>"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "std::map<int, a&b>::\"q\""));
	CU_ASSERT_PTR_NULL(strstr(r.svg, "a&b"));
	CU_ASSERT(well_formed(r.svg, r.len));
	release(&r);
}

static void test_control_and_invalid_bytes(void)
{
	static const char in[] = "tab\there;nul\0x;bad\xff\xfe;cut\xe2\x82;sur\xed\xa0\x80;del\x7f 1\n";
	rendered r = render_n(in, sizeof in - 1, "t\x01t", NULL);

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(find(&r, "tab\xEF\xBF\xBDhere"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "nul\xEF\xBF\xBDx"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "bad\xEF\xBF\xBD\xEF\xBF\xBD"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "cut\xEF\xBF\xBD\xEF\xBF\xBD"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "del\xEF\xBF\xBD"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "(1 samples, 100.00%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, ">t\xEF\xBF\xBDt</text>"));
	CU_ASSERT_EQUAL(utf8_chars(r.svg) >= 0, 1);
	CU_ASSERT(well_formed(r.svg, r.len));
	release(&r);
}

static void test_valid_utf8_kept(void)
{
	rendered r = render("caf\xc3\xa9;\xe2\x82\xac;\xf0\x9f\x98\x80 1\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(find(&r, "caf\xc3\xa9"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "\xe2\x82\xac"));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "\xf0\x9f\x98\x80"));
	release(&r);
}

/* A long name of N-byte characters, truncated to the root's width. */
static void check_truncation(const char *ch)
{
	char in[4096];
	size_t clen = strlen(ch), i, pos = 0, fit;
	rendered r;
	const frame *f;
	long n;

	for (i = 0; i < 400; i++, pos += clen)
		memcpy(in + pos, ch, clen);
	memcpy(in + pos, " 1\n", 4);
	r = render(in);
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_FATAL(r.nframes == 2);
	f = &r.frames[1];
	fit = label_fit(f->w);
	n = utf8_chars(f->label);
	CU_ASSERT_EQUAL((size_t)n, fit);
	CU_ASSERT_EQUAL(strlen(f->label), (fit - 2) * clen + 2);
	CU_ASSERT(strcmp(f->label + strlen(f->label) - 2, "..") == 0);
	CU_ASSERT_EQUAL(strlen(f->name), 400 * clen);
	release(&r);
}

static void test_truncation_utf8(void)
{
	check_truncation("x");
	check_truncation("\xc3\xa9");
	check_truncation("\xe2\x82\xac");
	check_truncation("\xf0\x9f\x98\x80");
}

static void test_label_fit(void)
{
	/* "wide" is whole, "narrowname" (45 px) cut with "..", "q" (2 px) too thin for a label. */
	rendered r = render("wide 10000\nnarrowname 400\nq 20\n");
	const frame *f;

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_STRING_EQUAL(find(&r, "wide")->label, "wide");
	f = find(&r, "narrowname");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT(label_fit(f->w) < 10 && label_fit(f->w) >= 3);
	CU_ASSERT_EQUAL(strlen(f->label), label_fit(f->w));
	CU_ASSERT(strncmp(f->label, "narrowname", strlen(f->label) - 2) == 0);
	CU_ASSERT_STRING_EQUAL(find(&r, "q")->label, "");
	release(&r);

	/* Escaped characters count once and are never split. */
	r = render("&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&& 1\nx 9\n");
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	f = &r.frames[1];
	CU_ASSERT_STRING_EQUAL(f->name, "&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&");
	CU_ASSERT(strstr(f->label, "&amp;..") != NULL);
	CU_ASSERT_EQUAL(strlen(f->label), (label_fit(f->w) - 2) * 5 + 2);
	release(&r);
}

/* ---- errors and edge cases -------------------------------------------------- */

static void check_bad(const char *in, const char *where)
{
	rendered r = render(in);

	CU_ASSERT_EQUAL(r.err, MP_E_CORRUPT);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.diag.msg, where));
	CU_ASSERT_EQUAL(r.len, 0);
	if (r.err != MP_E_CORRUPT || strstr(r.diag.msg, where) == NULL)
		fprintf(stderr, "\n  input %s -> err %d, diag '%s'\n", in, r.err, r.diag.msg);
	release(&r);
}

/* _memory_viz 'segments' writes negative <gaps> counts: passed over, as flamegraph.pl does. */
static void test_negative_counts_skipped(void)
{
	rendered with = render("ok 1\na;<gaps> -5\n"), without = render("ok 1\n");

	CU_ASSERT_EQUAL(with.err, MP_OK);
	CU_ASSERT_EQUAL(with.len, without.len);
	CU_ASSERT(with.svg != NULL && without.svg != NULL && strcmp(with.svg, without.svg) == 0);
	CU_ASSERT_PTR_NULL(find(&with, "<gaps>"));
	release(&with);
	release(&without);
}

static void test_malformed_lines(void)
{
	check_bad("a;b\n", "line 1: missing count");
	check_bad("ok 1\na;b-5\n", "line 2: malformed count");
	check_bad("ok 1\n\nx 12x\n", "line 3: missing count");
	check_bad("ok 1\nx 1.5\n", "line 2: malformed count");
	check_bad("x 0x10\n", "line 1: malformed count");
	check_bad("x +3\n", "line 1: malformed count");
	check_bad("x;y5\n", "line 1: malformed count");
	check_bad("5\n", "line 1: missing count");
	check_bad("a 1\nb 2\nc 3\nd 4\ne\n", "line 5");
	check_bad("a 18446744073709551616\n", "line 1: count out of range");
	check_bad("a 99999999999999999999999\n", "line 1: count out of range");
	check_bad("a 18446744073709551615\nb 1\n", "line 2: total count overflows");
}

static void test_empty_input(void)
{
	static const char *const inputs[] = { "", "\n", "\n\n  \n\r\n", "a 0\nb;c 0\n" };
	size_t i;

	for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		rendered r = render(inputs[i]);

		CU_ASSERT_EQUAL(r.err, MP_OK);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r.svg);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "No data"));
		CU_ASSERT_EQUAL(r.nframes, 0);
		CU_ASSERT(well_formed(r.svg, r.len));
		release(&r);
	}
	{
		rendered r = render_n(NULL, 0, NULL, NULL);

		CU_ASSERT_EQUAL(r.err, MP_OK);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, ">Flame Graph</text>"));
		release(&r);
	}
}

static void test_deep_stack(void)
{
	size_t depth = 1000, i, pos = 0;
	char *in = malloc(depth * 8 + 16);
	rendered r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	for (i = 0; i < depth; i++)
		pos += (size_t)sprintf(in + pos, "%sf%zu", i ? ";" : "", i);
	pos += (size_t)sprintf(in + pos, " 7\n");
	r = render_n(in, pos, "deep", "bytes");
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL(r.nframes, depth + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "height=\"16086\""));
	CU_ASSERT_PTR_NOT_NULL(find(&r, "f999"));
	CU_ASSERT(well_formed(r.svg, r.len));
	release(&r);
	free(in);
}

static void test_long_line(void)
{
	size_t n = 1u << 20, i;
	char *in = malloc(n + 8);
	rendered r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	for (i = 0; i < n; i++)
		in[i] = (char)('a' + i % 26);
	memcpy(in + n, " 5\n", 3);
	r = render_n(in, n + 3, "long", "bytes");
	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_EQUAL(r.nframes, 2);
	CU_ASSERT_EQUAL(strlen(r.frames[1].label), label_fit(SPAN));
	CU_ASSERT(well_formed(r.svg, r.len));
	release(&r);
	free(in);
}

/* ---- determinism, scale, output ---------------------------------------------- */

static void test_deterministic(void)
{
	const char *in1 = "m;b;c 5\nm;a 3\nx;y 9\nm;b 1\nm;a 2\n";
	const char *in2 = "m;a 2\nx;y 9\nm;b 1\nm;a 3\nm;b;c 5\n";
	rendered a = render(in1), b = render(in1), c = render(in2);

	CU_ASSERT_EQUAL_FATAL(a.err, MP_OK);
	CU_ASSERT(a.len == b.len && memcmp(a.svg, b.svg, a.len) == 0);
	CU_ASSERT(a.len == c.len && memcmp(a.svg, c.svg, a.len) == 0);
	/* colour depends on the name only */
	CU_ASSERT_PTR_NOT_NULL(strstr(a.svg, "fill=\"rgb("));
	release(&a);
	release(&b);
	release(&c);
}

/* Many lines in a scrambled order: totals survive, output equals the sorted input's. */
static void test_many_lines(void)
{
	size_t n = 200000, i, pos = 0, spos = 0;
	char *in = malloc(n * 40), *sorted = malloc(n * 40);
	rendered a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sorted);
	for (i = 0; i < n; i++) {
		size_t k = (i * 7919) % n; /* a permutation of 0..n-1 */

		pos += (size_t)sprintf(in + pos, "main;f%zu;g%zu;h%zu 1\n", k % 7, k % 101, k);
		spos += (size_t)sprintf(sorted + spos, "main;f%zu;g%zu;h%zu 1\n", i % 7, i % 101, i);
	}
	a = render_n(in, pos, "many", "bytes");
	b = render_n(sorted, spos, "many", "bytes");
	CU_ASSERT_EQUAL_FATAL(a.err, MP_OK);
	CU_ASSERT_EQUAL_FATAL(b.err, MP_OK);
	CU_ASSERT_EQUAL(a.frames[0].count, n);
	CU_ASSERT_PTR_NOT_NULL(find(&a, "main"));
	CU_ASSERT(a.len == b.len && memcmp(a.svg, b.svg, a.len) == 0);
	CU_ASSERT(well_formed(a.svg, a.len));
	release(&a);
	release(&b);
	free(in);
	free(sorted);
}

static void test_well_formed_with_script(void)
{
	rendered r = render("a;b 1\na;c 2\nd 3\n");

	CU_ASSERT_EQUAL_FATAL(r.err, MP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "<?xml version=\"1.0\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, "<script"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.svg, ">Test</text>"));
	CU_ASSERT(strstr(r.svg, "</svg>\n") == r.svg + r.len - 7);
	CU_ASSERT(well_formed(r.svg, r.len));
	release(&r);
}

static void test_file_sink(void)
{
	FILE *f = tmpfile();
	mp_out out;
	mp_diag diag = { 0 };
	char head[6] = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	mp_out_init_file(&out, f);
	CU_ASSERT_EQUAL(mp_flame_svg("a;b 1\n", 6, "t", "bytes", &out, &diag), MP_OK);
	CU_ASSERT_EQUAL(mp_out_flush(&out), MP_OK);
	CU_ASSERT(ftell(f) > 1000);
	rewind(f);
	CU_ASSERT_EQUAL(fread(head, 1, 5, f), 5);
	CU_ASSERT_STRING_EQUAL(head, "<?xml");
	mp_out_free(&out);
	fclose(f);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "merge identical stacks", test_merge },
		{ "siblings sorted by name", test_sort_siblings },
		{ "root at the bottom", test_root_at_bottom },
		{ "widths sum to parent", test_widths_sum_to_parent },
		{ "narrow frames omitted", test_narrow_frames_omitted },
		{ "thousands separators", test_thousands_and_percent },
		{ "whitespace and CRLF", test_whitespace_and_line_ends },
		{ "odd stacks", test_odd_stacks },
		{ "XML escaping", test_xml_escaping },
		{ "control and invalid bytes", test_control_and_invalid_bytes },
		{ "valid UTF-8 kept", test_valid_utf8_kept },
		{ "truncation at UTF-8 boundaries", test_truncation_utf8 },
		{ "label fitting", test_label_fit },
		{ "malformed lines", test_malformed_lines },
		{ "negative counts skipped", test_negative_counts_skipped },
		{ "empty input", test_empty_input },
		{ "deep stack", test_deep_stack },
		{ "long line", test_long_line },
		{ "deterministic", test_deterministic },
		{ "many lines", test_many_lines },
		{ "well-formed XML", test_well_formed_with_script },
		{ "file sink", test_file_sink },
	};

	return UNIT_RUN("flame_svg", tests, NULL, NULL);
}

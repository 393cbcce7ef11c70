/* viz_viewer.c - the viewer and the d3 an offline page inlines (mp_viz.h): found on this machine, read, the
   viewer's d3 imports turned into reads of the inlined d3's global, both made safe inside a <script>. */
#include "mp_viz.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MAX_FILE (64u << 20) /* MemoryViz.js is about 50 KB, d3's bundle 0.5 MB */

/* Where Debian's node-d3 puts its bundle (d3 v5 to v7, UMD: it sets globalThis.d3 in a plain script). */
static const char *const machine_d3[] = { "/usr/share/nodejs/d3/dist/d3.min.js", "/usr/share/nodejs/d3/dist/d3.js" };

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The file PATH, whole, into RAW (at most MAX_FILE bytes). */
static mp_err slurp(const char *path, mp_out *raw, mp_diag *diag)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;

	if (f == NULL)
		return mp_fail(diag, MP_E_ERRNO, "%s: %s", path, strerror(errno));
	while ((n = fread(buf, 1, sizeof buf, f)) > 0 && raw->len + n <= MAX_FILE)
		mp_out_write(raw, buf, n);
	if (n > 0 || ferror(f)) {
		fclose(f);
		return n > 0 ? mp_fail(diag, MP_E_LIMIT, "%s: over %u MiB, not a viewer script", path, MAX_FILE >> 20)
			     : mp_fail(diag, MP_E_ERRNO, "%s: read failed", path);
	}
	fclose(f);
	return raw->err == MP_OK ? MP_OK : mp_fail(diag, raw->err, "%s: %s", path, mp_strerror(raw->err));
}

/* The code point of the UTF-8 sequence at S[0..N) and its length in *LEN; U+FFFD (one byte) for a malformed one. */
static uint32_t utf8_at(const unsigned char *s, size_t n, size_t *len)
{
	size_t need = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 1;
	uint32_t cp = need == 4 ? s[0] & 0x07u : need == 3 ? s[0] & 0x0fu : s[0] & 0x1fu;

	*len = 1;
	if (need == 1 || need > n || s[0] > 0xf4)
		return 0xfffd;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0xfffd;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	*len = need;
	return cp;
}

/* Append S (N bytes of script) to OUT so that it stays inside its <script> element and the page is ASCII (as
   PyTorch's is, with no charset to declare): "</script" would end the element and "<!--" changes how HTML reads
   what follows, so they become "<\/script" and "<\!--"; a character past ASCII becomes its \uXXXX escape (a
   surrogate pair past U+FFFF). Both mean the same in the strings, regular expressions, identifiers and comments
   of the scripts they occur in. */
static void put_script_safe(mp_out *out, const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len;

	for (size_t i = 0; i < n; i += len) {
		uint32_t cp;

		len = 1;
		if (s[i] == '<' && ((n - i >= 8 && s[i + 1] == '/' && strncasecmp(text + i + 2, "script", 6) == 0) ||
				    (n - i >= 4 && memcmp(s + i + 1, "!--", 3) == 0))) {
			mp_out_puts(out, "<\\");
		} else if (s[i] < 0x80) {
			mp_out_putc(out, (char)s[i]);
		} else if ((cp = utf8_at(s + i, n - i, &len)) < 0x10000) {
			mp_out_printf(out, "\\u%04x", (unsigned)cp);
		} else {
			cp -= 0x10000;
			mp_out_printf(out, "\\u%04x\\u%04x", 0xd800u + (unsigned)(cp >> 10), 0xdc00u + (unsigned)(cp & 0x3ff));
		}
	}
}

/* A line comment saying where an inlined script came from (its path on its own line, made safe: a newline in
   it ends the comment early). */
static void put_origin(mp_out *out, const char *what, const char *path)
{
	char line[sizeof ((mp_viz_viewer *)0)->memoryviz_path];
	size_t n = strlen(path) < sizeof line ? strlen(path) : sizeof line - 1;

	for (size_t i = 0; i < n; i++)
		line[i] = path[i] == '\n' || path[i] == '\r' ? '?' : path[i];
	mp_out_printf(out, "// %s\n// ", what);
	put_script_safe(out, line, n);
	mp_out_putc(out, '\n');
}

static size_t skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	return i;
}

/* Whether the module specifier Q (QN bytes) names d3 or a d3 module: its last path part is "d3", "d3@5",
   "d3-axis@1", ... */
static bool is_d3(const char *q, size_t qn)
{
	size_t off = qn;

	while (off > 0 && q[off - 1] != '/')
		off--;
	return qn - off >= 2 && memcmp(q + off, "d3", 2) == 0 &&
	       (qn - off == 2 || q[off + 2] == '@' || q[off + 2] == '-' || q[off + 2] == '.');
}

/* The import statement at S[0..N) ("import" and what follows it, to its ';' or its line's end): when it imports
   from d3, OUT gets the same names read from the inlined d3 (import * as d3 from "…/d3@5" becomes
   const d3 = globalThis.d3; import {zoom, zoomIdentity as zi} from "…/d3-zoom@1" becomes
   const {zoom, zoomIdentity: zi} = globalThis.d3;) and *USED its length. Anything else is refused. */
static mp_err rewrite_import(const char *s, size_t n, size_t *used, mp_out *out, mp_diag *diag)
{
	size_t i, clause = skip_space(s, n, 6), clause_end, q0, q1;
	char quote;

	for (i = clause; i < n && s[i] != '"' && s[i] != '\'' && s[i] != ';'; i++)
		;
	if (i == n || s[i] == ';')
		return mp_fail(diag, MP_E_UNSUPPORTED, "an import without a module: %.60s", s);
	quote = s[i], q0 = i + 1;
	for (q1 = q0; q1 < n && s[q1] != quote && s[q1] != '\n'; q1++)
		;
	if (q1 == n || s[q1] != quote)
		return mp_fail(diag, MP_E_UNSUPPORTED, "an import it cannot read: %.60s", s);
	if (!is_d3(s + q0, q1 - q0))
		return mp_fail(diag, MP_E_UNSUPPORTED, "it imports %.*s, not d3: only d3 can be inlined",
			       (int)(q1 - q0), s + q0);
	*used = q1 + 1 < n && s[q1 + 1] == ';' ? q1 + 2 : q1 + 1;
	/* The clause: between "import" and "from" (none: an import for its effects, which the inlined d3 had). */
	clause_end = q0 - 1;
	while (clause_end > clause && isspace((unsigned char)s[clause_end - 1]))
		clause_end--;
	if (clause_end - clause >= 4 && memcmp(s + clause_end - 4, "from", 4) == 0)
		clause_end -= 4;
	while (clause_end > clause && isspace((unsigned char)s[clause_end - 1]))
		clause_end--;
	if (clause == clause_end)
		return MP_OK;
	if (s[clause] == '*') { /* * as NAME */
		i = skip_space(s, clause_end, clause + 1);
		if (clause_end - i < 3 || memcmp(s + i, "as", 2) != 0)
			return mp_fail(diag, MP_E_UNSUPPORTED, "an import it cannot read: %.60s", s);
		i = skip_space(s, clause_end, i + 2);
		mp_out_printf(out, "const %.*s = globalThis.d3;", (int)(clause_end - i), s + i);
	} else if (s[clause] == '{') { /* {A, B as C}: the same names, "as" made ':' */
		mp_out_puts(out, "const ");
		for (i = clause; i < clause_end; i++) {
			if (i + 4 <= clause_end && isspace((unsigned char)s[i]) && memcmp(s + i + 1, "as", 2) == 0 &&
			    isspace((unsigned char)s[i + 3])) {
				mp_out_putc(out, ':');
				i += 2;
			} else {
				mp_out_putc(out, s[i]);
			}
		}
		mp_out_puts(out, " = globalThis.d3;");
	} else { /* a default import: d3's modules have none, the name stands for the whole */
		mp_out_printf(out, "const %.*s = globalThis.d3;", (int)(clause_end - clause), s + clause);
	}
	return MP_OK;
}

/* The viewer's text RAW with each import statement at a line's start rewritten (rewrite_import), into OUT. */
static mp_err rewrite_imports(const mp_out *raw, mp_out *out, const char *path, mp_diag *diag)
{
	const char *s = raw->data;
	size_t n = raw->len, i = 0, line = 1;
	mp_out js;
	mp_err err = MP_OK;

	mp_out_init(&js);
	while (i < n && err == MP_OK) {
		size_t start = i, used = 0;

		while (start < n && (s[start] == ' ' || s[start] == '\t'))
			start++;
		if (n - start > 6 && memcmp(s + start, "import", 6) == 0 && strchr(" \t{*\"'", s[start + 6]) != NULL) {
			mp_out_write(&js, s + i, start - i);
			if ((err = rewrite_import(s + start, n - start, &used, &js, diag)) != MP_OK)
				break;
			for (i = start; i < start + used; i++) /* a statement over several lines */
				line += s[i] == '\n';
		}
		for (; i < n && s[i] != '\n'; i++)
			mp_out_putc(&js, s[i]);
		if (i < n)
			mp_out_putc(&js, s[i++]), line++;
	}
	if (err != MP_OK) {
		char why[sizeof diag->msg];

		snprintf(why, sizeof why, "%s", diag->msg);
		diag->msg[0] = '\0'; /* said again, after where */
		err = mp_fail(diag, err, "%s, line %zu: %s", path, line, why);
	} else {
		put_script_safe(out, js.data, js.len);
	}
	mp_out_free(&js);
	return err;
}

/* The directory of the torch package `python3` would import, found without importing it (torch takes seconds to
   import; finding it takes milliseconds). False when there is none. */
static bool python_torch_dir(char *dir, size_t cap)
{
	FILE *p = popen("python3 -c 'import importlib.util as u; s = u.find_spec(\"torch\"); "
			"print(s.submodule_search_locations[0] if s and s.submodule_search_locations else \"\")' "
			"2>/dev/null",
			"r");
	bool ok;

	if (p == NULL)
		return false;
	ok = fgets(dir, (int)cap, p) != NULL;
	pclose(p);
	dir[ok ? strcspn(dir, "\n") : 0] = '\0';
	return dir[0] != '\0';
}

/* The viewer's path in V: TORCH itself when a file, else under it as in a source tree or a package; without
   TORCH, in python3's torch. */
static mp_err find_viewer(const char *torch, mp_viz_viewer *v, mp_diag *diag)
{
	static const char *const under[] = { "/torch/utils/viz/MemoryViz.js", "/utils/viz/MemoryViz.js" };
	char dir[1024];

	if (torch != NULL && is_file(torch)) {
		snprintf(v->memoryviz_path, sizeof v->memoryviz_path, "%s", torch);
		return MP_OK;
	}
	if (torch == NULL && !python_torch_dir(dir, sizeof dir))
		return mp_fail(diag, MP_E_NOTFOUND, "--offline: python3 finds no torch, and with it PyTorch's viewer "
						    "(MemoryViz.js): give --torch DIR (a PyTorch source tree) or FILE");
	if (torch == NULL)
		torch = dir;
	for (size_t i = 0; i < sizeof under / sizeof *under; i++) {
		int n = snprintf(v->memoryviz_path, sizeof v->memoryviz_path, "%s%s", torch, under[i]);

		if (n > 0 && (size_t)n < sizeof v->memoryviz_path && is_file(v->memoryviz_path))
			return MP_OK;
	}
	return mp_fail(diag, MP_E_NOTFOUND, "--offline: no torch/utils/viz/MemoryViz.js in %s (PyTorch's wheels and "
					    "Debian's package do not install it): give --torch with a PyTorch source tree "
					    "or the file",
		       torch);
}

static mp_err find_d3(const char *d3, mp_viz_viewer *v, mp_diag *diag)
{
	if (d3 != NULL) {
		if (!is_file(d3))
			return mp_fail(diag, MP_E_NOTFOUND, "--d3 %s: no such file", d3);
		snprintf(v->d3_path, sizeof v->d3_path, "%s", d3);
		return MP_OK;
	}
	for (size_t i = 0; i < sizeof machine_d3 / sizeof *machine_d3; i++)
		if (is_file(machine_d3[i])) {
			snprintf(v->d3_path, sizeof v->d3_path, "%s", machine_d3[i]);
			return MP_OK;
		}
	return mp_fail(diag, MP_E_NOTFOUND, "--offline: PyTorch's viewer imports d3 (v5) from a CDN and no d3 is "
					    "on this machine (Debian: apt install node-d3): give --d3 FILE, a UMD bundle");
}

mp_err mp_viz_viewer_load(const mp_viz_sources *src, mp_viz_viewer *v, mp_diag *diag)
{
	mp_out raw;
	mp_err err;

	memset(v, 0, sizeof *v);
	mp_out_init(&v->memoryviz);
	mp_out_init(&v->d3);
	mp_out_init(&raw);
	if ((err = find_viewer(src->torch, v, diag)) == MP_OK && (err = find_d3(src->d3, v, diag)) == MP_OK &&
	    (err = slurp(v->memoryviz_path, &raw, diag)) == MP_OK) {
		put_origin(&v->memoryviz, "PyTorch's viewer, its d3 imports read from the d3 inlined before it:",
			   v->memoryviz_path);
		err = rewrite_imports(&raw, &v->memoryviz, v->memoryviz_path, diag);
	}
	if (err == MP_OK) {
		raw.len = 0;
		put_origin(&v->d3, "d3:", v->d3_path);
		if ((err = slurp(v->d3_path, &raw, diag)) == MP_OK)
			put_script_safe(&v->d3, raw.data, raw.len);
	}
	mp_out_free(&raw);
	if (err == MP_OK && (v->memoryviz.err != MP_OK || v->d3.err != MP_OK))
		err = mp_fail(diag, MP_E_NOMEM, "--offline: out of memory");
	return err;
}

void mp_viz_viewer_free(mp_viz_viewer *v)
{
	mp_out_free(&v->memoryviz);
	mp_out_free(&v->d3);
}

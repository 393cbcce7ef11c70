#!/usr/bin/env bash
# pages.sh - `memprof trace_plot` and `segment_plot` against the pages PyTorch's _memory_viz.py (2.6 and 2.14.1)
# writes for the same snapshot (compare_page.py: the same text around the embedded snapshot, an embedded pickle
# padded as PyTorch pads it that loads to PyTorch's object), on the shipped example, the snapshots real GPU jobs
# wrote (tests/data/real), a bare list of segments and gen_small.py's cases; --filter-freed against 2.14.1's
# filter_freed; the --offline page's viewer and d3 inlined, ASCII, no URL left; and the errors a user meets.
# The pages drawn in Chromium: tests/oracle/memoryviz.sh.
# Env: MEMPROF, top_srcdir, PYTHON. Exit 0 all passed, 1 a check failed, 77 the oracles cannot be fetched.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
srcdir=${srcdir:-$top/tests}
# shellcheck source=../io/setup.sh
. "$srcdir/io/setup.sh" pages
tmp=$work
small_pickles pages
small=$work/small
compare=$top/tests/viz/compare_page.py
oracles=$("$top/tests/oracle/fetch-oracle.sh" 2>"$tmp/fetch.err") || { cat "$tmp/fetch.err"; echo "pages: not run: no oracle"; exit 77; }
old=$(echo "$oracles" | grep trixie) new=$(echo "$oracles" | grep sid)
[ -f "$old" ] && [ -f "$new" ] || { echo "FAIL: fetch-oracle.sh gave '$oracles'"; exit 1; }

# page LABEL MEMVIZ SNAPSHOT KIND [OPTION...]: memprof's page against MEMVIZ's
page() {
	local label=$1 memviz=$2 snap=$3 kind=$4 line
	shift 4
	if ! "$MEMPROF" "$kind" "$snap" "$@" -o "$tmp/page.html" 2>"$tmp/page.err"; then
		# A value the viewer's unpickler cannot read (bytes, an int past 255 bytes): PyTorch writes a page that
		# fails in the browser, memprof refuses it, saying where.
		if grep -q "PyTorch's memory_viz reads" "$tmp/page.err" && [ "$(wc -l <"$tmp/page.err")" -eq 1 ]; then
			ok "$label: refused, as the viewer could not read it: $(cut -c1-120 "$tmp/page.err")"
		else
			bad "$label: memprof $kind $*: $(head -c 300 "$tmp/page.err")"
		fi
	elif line=$("$PYTHON" "$compare" "$memviz" "$tmp/page.html" "$snap" "$kind" "$@" 2>&1); then
		ok "$label: $line"
	else
		bad "$label: $line"
	fi
}

"$PYTHON" -c 'import pickle, sys; pickle.dump(pickle.load(open(sys.argv[1], "rb"))["segments"], open(sys.argv[2], "wb"))' \
	"$top/tests/data/example.pickle" "$tmp/bare-list.pickle"
inputs=("$top/tests/data/example.pickle" "$top/tests/data/real"/*.pickle "$tmp/bare-list.pickle")
for snap in "${inputs[@]}"; do
	name=$(basename "$snap")
	for v in "2.6:$old" "2.14.1:$new"; do
		page "$name/$v" "${v#*:}" "$snap" trace_plot
		page "$name/$v" "${v#*:}" "$snap" trace_plot --plot-segments
		page "$name/$v" "${v#*:}" "$snap" segment_plot
	done
	page "$name/2.14.1" "$new" "$snap" trace_plot --filter-freed
done
# Many shapes, one oracle: what each page embeds must load as PyTorch's does.
for snap in "$small"/*.pickle; do
	page "small/$(basename "$snap")" "$new" "$snap" segment_plot
	page "small/$(basename "$snap")" "$new" "$snap" trace_plot --filter-freed
done

# --offline: PyTorch's viewer and a d3 inlined from files given (stand-ins here: the test needs no real viewer,
# tests/oracle/memoryviz.sh draws the real one), their d3 imports rewritten, the page ASCII and with no URL.
cat >"$tmp/viewer.js" <<'EOF'
'use strict';
import * as d3 from "https://cdn.skypack.dev/d3@5";
import {axisLeft} from "https://cdn.skypack.dev/d3-axis@1";
  import {zoom, zoomIdentity as identity} from 'https://cdn.skypack.dev/d3-zoom@1';
const label = "size \u2264 4 \u2014 </script> <!-- µ 😀";
export function add_local_files(files, view) { document.title = view + files.length + label; }
EOF
printf 'var d3 = {version: "5"}; // a stand-in, "≤"\n' >"$tmp/d3.js"
if "$MEMPROF" trace_plot "$top/tests/data/example.pickle" --offline --torch "$tmp/viewer.js" --d3 "$tmp/d3.js" \
	-o "$tmp/offline.html" 2>"$tmp/offline.err"; then
	why=
	LC_ALL=C grep -q '[^[:print:][:space:]]' "$tmp/offline.html" && why="$why non-ASCII bytes;"
	grep -q 'https://' "$tmp/offline.html" && why="$why a URL left;"
	grep -qF 'const d3 = globalThis.d3;' "$tmp/offline.html" || why="$why the namespace import not rewritten;"
	grep -qF 'const {axisLeft} = globalThis.d3;' "$tmp/offline.html" || why="$why a named import not rewritten;"
	grep -qF "const {zoom, zoomIdentity: identity} = globalThis.d3;" "$tmp/offline.html" || why="$why an 'as' import not rewritten;"
	[ "$(grep -ci '</script' "$tmp/offline.html")" -eq 2 ] || why="$why a '</script' of the viewer left as it was;"
	grep -qF '<\/script> <\!-- \u00b5 \ud83d\ude00' "$tmp/offline.html" || why="$why the viewer's text not escaped;"
	grep -qF "add_local_files(local_files, 'Active Memory Timeline')" "$tmp/offline.html" || why="$why no call of the viewer;"
	[ -z "$why" ] && ok "--offline: the viewer and d3 inlined, imports read from the inlined d3, ASCII, no URL" ||
		bad "--offline:$why"
else
	bad "--offline: $(head -c 300 "$tmp/offline.err")"
fi

# The same through the Python API, the viewer and d3 as the session's settings (memprof.open's keywords).
lib=$(dirname "$MEMPROF")/.libs/libmemprof.so.0
if [ ! -f "$lib" ]; then
	echo "not run: the Python API (no $lib: not a build tree)"
elif [[ $(ldd "$lib" 2>/dev/null) == *libasan.so* ]]; then
	echo "not run: the Python API (a sanitizer's library loads into no interpreter: tests/pyapi/check.sh)"
elif out=$(cd "$tmp" && MEMPROF_LIBRARY=$lib PYTHONPATH=$top/pymemprof "$PYTHON" "$top/tests/viz/api_page.py" \
	"$top/tests/data/example.pickle" "$tmp/viewer.js" "$tmp/d3.js" "$tmp/api.html" 2>&1) && [ "$out" = ok ]; then
	ok "Python API: memprof.open(viewer=, d3=).segment_plot(output=) inlines them; a viewer not there is refused"
else
	bad "Python API: $(echo "$out" | tail -3)"
fi

# errors: one line each, exit 2
expect_error() { # LABEL PATTERN ARGS...
	local label=$1 pattern=$2
	shift 2
	"$MEMPROF" "$@" -o "$tmp/none.html" >"$tmp/err.out" 2>&1
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err.out")" -eq 1 ] && grep -q "$pattern" "$tmp/err.out" &&
		[ ! -e "$tmp/none.html" ]; then
		ok "$label: $(cat "$tmp/err.out")"
	else
		bad "$label: exit $rc, $(head -c 300 "$tmp/err.out")"
	fi
}
mkdir -p "$tmp/emptytorch"
expect_error "--offline, no viewer in a torch" "no torch/utils/viz/MemoryViz.js in" \
	trace_plot "$top/tests/data/example.pickle" --offline --torch "$tmp/emptytorch" --d3 "$tmp/d3.js"
expect_error "--offline, no such d3" "no such file" \
	trace_plot "$top/tests/data/example.pickle" --offline --torch "$tmp/viewer.js" --d3 "$tmp/nosuch.js"
printf 'import {x} from "https://example.com/other.js";\n' >"$tmp/other.js"
expect_error "--offline, a viewer that imports more than d3" "not d3" \
	segment_plot "$top/tests/data/example.pickle" --torch "$tmp/other.js" --d3 "$tmp/d3.js"
printf 'not a pickle' >"$tmp/bad.pickle"
expect_error "a file that is no snapshot" "bad.pickle" segment_plot "$tmp/bad.pickle"

finish pages: || exit 1

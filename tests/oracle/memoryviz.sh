#!/usr/bin/env bash
# memoryviz.sh - memprof's snapshot pickles in PyTorch's own memory_viz web page (MemoryViz.js, what
# `python -m torch.cuda._memory_viz trace_plot|segment_plot` and pytorch.org/memory_viz show), drawn by headless
# Chromium and compared, DOM for DOM, with the page drawn from the pickle PyTorch itself writes for the same state.
#
# What it runs:
# - the page: _memory_viz.py 2.6's own trace_plot() and segment_plot() (tests/oracle/fetch-oracle.sh), fed the
#   pickle file's bytes in place of their pickle.dumps(data), with the CDN URL of MemoryViz.js pointed at a local
#   server (module scripts do not run from file:// URLs), plus three scripts of ours at the end of the body: one
#   holds the page's load event back until the page is done, one records JS errors, one picks every view the page
#   offers (Active Memory Timeline, Allocator State History, Active Cached Segment Timeline, Allocator Settings) on
#   every device it lists, as a person would with its <select>s, then moves the mouse over every element that
#   answers it and notes the text the view then shows (sizes, addresses, states, streams, frames: the page draws
#   frames only there) into the DOM (memoryviz_page.py says how);
# - MemoryViz.js: PyTorch 2.6.0's, from Debian trixie's pytorch orig tarball (tests/testbed/c10/fetch-source.sh
#   --orig; extracted into the test-bed cache by fetch-memoryviz.sh, never stored here), unchanged but for its
#   imports: it imports d3 from cdn.skypack.dev (d3@5, d3-axis@1, d3-scale@1, d3-zoom@1, d3-brush@1); here all
#   five come from Debian bookworm's node-d3 5.16.0 bundle (d3 v5 with axis, scale, zoom and brush inside: the
#   scale is d3-scale 2 where skypack would serve d3-scale@1 for scaleLinear). So this is PyTorch's page on a d3
#   that stands in for skypack's modules, not byte for byte what a browser fetches from the CDN;
# - Chromium --headless --dump-dom, TZ=UTC, one run per page (more when it is slow: "How long Chromium waits" below).
#   --dump-dom takes the DOM at the page's load event, and the page holds that event back until our driver is done.
#
# Checks (one line each):
# 1. four test-bed states (tests/testbed/target.sh SCENARIO VARIANT gcore: training and multi_device on debug,
#    history and private_pool on stripped): memprof's own page of the core (`memprof trace_plot|segment_plot
#    CORE`), `memprof snapshot CORE -o mp.pickle` for what it should show, and the reference pickle that
#    torch.cuda.memory._dump_snapshot() would write at the core (pickle.dump of the allocator's own snapshot() in
#    truth.json, made into _snapshot()'s value at that moment: memoryviz_page.py reference() lists each step;
#    frames emptied while memprof decodes none from a core), in PyTorch's page. For each of trace_plot's and
#    segment_plot's page, memprof's and PyTorch's: no JS error, every view on every device drawn, and enough drawn for the snapshot (a polygon
#    per active block in the timeline, a polygon per segment in the cached-segment timeline, a rect per segment
#    and per active block and a line per listed trace entry in the segment view, every settings key); then the
#    DOM of memprof's page EQUALS the DOM of the reference's.
# 2. tests/data/example.pickle (frames and all) through `memprof convert` to JSON and back: the same checks, its
#    page equal to the original's.
# 3. controls, which must render DIFFERENTLY: example.pickle with its largest segment 2 MiB larger, against the
#    original; the training truth with its frames kept, against memprof's pickle (while memprof writes no frames:
#    shows that the frames left out of the reference are drawn, so emptying them is a real, stated difference).
# 5. a real Python job's kernel core (tests/testbed/jobs history on PyPI's 2.14.1: frames recorded): memprof's pages
#    of the core against PyTorch's pages of the job's own _snapshot() pickled at the same checkpoint, with the
#    'snapshot' entry that call appended to the ring after copying it (memoryviz_page.py job-reference).
# 4. memprof's --offline pages of example.pickle (the viewer and d3 inlined: the files the site serves, given as
#    --torch and --d3): the same checks, each page equal to PyTorch's online one.
# Chromium resolves no host name (--host-resolver-rules): a page that reached for the network would not draw.
#
# What is not compared: the <script> elements of the DOM (their text is the input, the base64 of the pickle:
# memprof's bytes and Python's legitimately differ, e.g. memo order) and the data-memprof-* attributes our
# scripts set. One normalisation: the timeline prints each allocation's time_us as a date to the second, and
# memprof converts a core's TSC stamps itself (within 1 us of snapshot()'s here), so the date is replaced by
# "(time)" lest a stamp a hair from a second boundary print one second off (it has not happened: the pages are
# equal without it too). Nothing else is normalised.
#
# Env: MEMPROF (the binary), top_srcdir, PYTHON, MEMPROF_TESTBED_CACHE, MEMPROF_TESTBED_SKIP=1 (no test-bed
# cores: only 2 and the example's control), MEMPROF_KEEP_FAILED (copy the pages and DOMs of failing checks there),
# MEMPROF_MEMORYVIZ_WAIT (seconds Chromium waits for a page on its first try, default 20; doubled on each of the
# two retries). Exit 0 all passed, 1 a check failed, 77 not run (no chromium, or the downloads failed).
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${PYTHON:-python3}
here=$top/tests/oracle
page_py=$here/memoryviz_page.py
tmp=$(mktemp -d)
server=
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup() {
	[ -z "$server" ] || { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib/check.sh
. "$top/tests/lib/check.sh"
# not_run, with the name of this test in its line
not_run() { echo "memoryviz: not run: $*"; exit 77; }

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || not_run "no chromium (tests/setup-debian.sh installs it)"
oracle=$("$here/fetch-oracle.sh" 2>"$tmp/fetch.err" | head -n1)
[ -f "$oracle" ] || { cat "$tmp/fetch.err"; not_run "fetch-oracle.sh could not download _memory_viz.py"; }
viz=$("$here/fetch-memoryviz.sh" 2>"$tmp/fetch.err")
rc=$?
[ $rc -eq 77 ] && { cat "$tmp/fetch.err"; not_run "fetch-memoryviz.sh could not download MemoryViz.js or d3"; }
[ $rc -eq 0 ] || { cat "$tmp/fetch.err"; echo "FAIL: fetch-memoryviz.sh (exit $rc)"; exit 1; }

mkdir "$tmp/site"
"$py" "$page_py" site "$viz/MemoryViz.js" "$viz/d3.js" "$tmp/site" || { echo "FAIL: rewriting MemoryViz.js's imports"; exit 1; }
"$py" "$page_py" serve "$tmp/site" "$tmp/port" &
server=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { echo "FAIL: the HTTP server did not start"; exit 1; }
port=$(cat "$tmp/port")

keep() { # FILES...: copies for a failing check
	[ -n "${MEMPROF_KEEP_FAILED:-}" ] || return 0
	mkdir -p "$MEMPROF_KEEP_FAILED" && cp "$@" "$MEMPROF_KEEP_FAILED/" 2>/dev/null
}

# How long Chromium waits for a page. --dump-dom dumps at the page's load event, which the page holds back until
# it is done (HOLD_SCRIPT in memoryviz_page.py: a page takes 1-2 s on the 2-core machine, 3-6 s under 16
# CPU hogs), MEMPROF_MEMORYVIZ_WAIT seconds at most (default 20); a page not done by then is loaded again with
# twice the wait, up to 3 tries (20, 40, 80 s). A page with a JS error is not retried (it does not finish).
# Once a page has failed every try, the pages after it get one try (a page that never finishes should not cost
# 140 s 22 times over).
wait_first=${MEMPROF_MEMORYVIZ_WAIT:-20} tries=3 unfinished=
case $wait_first in
''|0|*[!0-9]*) echo "FAIL: MEMPROF_MEMORYVIZ_WAIT=$wait_first: not a whole number of seconds"; exit 1 ;;
esac

# what LABEL is, for the message of a page that did not finish
page_name() {
	case $1 in
	*.memprof) echo "memprof's page" ;;
	*.offline) echo "memprof's --offline page" ;;
	*.pytorch) echo "the control page (the pickle PyTorch would write)" ;;
	*.original) echo "the control page (example.pickle as PyTorch wrote it)" ;;
	*) echo "the must-differ control's page" ;;
	esac
}

# draw LABEL KIND PICKLE [TARGET OPTION...]: PyTorch's KIND page (trace_plot|segment_plot) around PICKLE, or with
# TARGET memprof's own (`memprof KIND TARGET OPTION...`: PICKLE is then what it should show), drawn by Chromium,
# checked; leaves the DOM without scripts in $tmp/site/LABEL.txt
draw() {
	local label=$1 kind=$2 pickle=$3 out=$tmp/site/$1 line secs=$wait_first try=1 n=$tries t0 took rc waits=
	shift 3
	if [ $# -gt 0 ]; then
		if ! "$MEMPROF" "$kind" "$@" -o "$out.raw.html" 2>"$out.mp.err" ||
			! "$py" "$page_py" instrument "$out.raw.html" /MemoryViz.js "$out.html"; then
			bad "$label: memprof $kind: $(head -c 300 "$out.mp.err")"
			return 1
		fi
	elif ! "$py" "$page_py" page "$oracle" "$kind" "$pickle" /MemoryViz.js "$out.html"; then
		bad "$label: could not build the page"
		return 1
	fi
	[ -z "$unfinished" ] || n=1
	while :; do
		t0=$EPOCHREALTIME
		TZ=UTC timeout $((secs + 60)) "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
			--host-resolver-rules='MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' \
			--hide-scrollbars --user-data-dir="$tmp/chrome" --enable-logging=stderr --v=0 \
			--dump-dom "http://127.0.0.1:$port/$label.html?memprof-wait=$((secs * 1000))" >"$out.dom" 2>"$out.err"
		rc=$?
		took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
		waits="$waits${waits:+, }$secs s (took $took s, chromium exit $rc)"
		# Done, or an error: that page will not finish, waiting longer changes nothing.
		grep -qE ' data-memprof-(done|errors)=' "$out.dom" && break
		[ $try -lt $n ] || break
		echo "note: $label: $(page_name "$label") not done within $secs s (try $try of $n: $took s," \
			"chromium exit $rc); again with $((secs * 2)) s"
		secs=$((secs * 2)) try=$((try + 1))
	done
	if ! line=$("$py" "$page_py" dom "$out.dom" "$pickle" "$out.txt"); then
		if grep -q ' data-memprof-done=' "$out.dom" || grep -q ' data-memprof-errors=' "$out.dom"; then
			bad "$label: $line"
		else
			[ -z "$unfinished" ] || waits="$waits (one try: $unfinished never finished)"
			bad "$label: $(page_name "$label") did not finish; waits: $waits: $line"
			[ -n "$unfinished" ] || unfinished=$label
		fi
		keep "$out.html" "$out.dom" "$out.err"
		return 1
	fi
	# What the page's own error hooks cannot see: a module that failed to load, an error before ours ran.
	if grep -E 'CONSOLE.*"(Uncaught|Failed to load)' "$out.err" >"$out.console"; then
		bad "$label: console: $(head -c 300 "$out.console")"
		keep "$out.html" "$out.dom" "$out.err"
		return 1
	fi
	if [ $try -eq 1 ]; then waits=; else waits=" (try $try; waits: $waits)"; fi
	ok "$label: drawn, no JS error, in $took s$waits: $line"
}

# same LABEL A B: the DOMs of pages A and B are equal
same() {
	if cmp -s "$tmp/site/$2.txt" "$tmp/site/$3.txt"; then
		ok "$1: memory_viz draws the same page ($(wc -c <"$tmp/site/$2.txt") bytes of DOM)"
	else
		bad "$1: the pages differ; first difference:"
		diff <(sed 's/></>\n</g' "$tmp/site/$2.txt") <(sed 's/></>\n</g' "$tmp/site/$3.txt") | head -6 | cut -c1-300
		keep "$tmp/site/$2."* "$tmp/site/$3."*
	fi
}

# differs LABEL A B: the DOMs of pages A and B differ (a control)
differs() {
	if [ -f "$tmp/site/$2.txt" ] && [ -f "$tmp/site/$3.txt" ] && ! cmp -s "$tmp/site/$2.txt" "$tmp/site/$3.txt"; then
		ok "$1: the page differs, as it must"
	else
		bad "$1: the page should differ and does not"
	fi
}

# ---- 1. test-bed cores: memprof's pickle against the one PyTorch would write
states="training:debug history:stripped multi_device:debug private_pool:stripped"
if [ "${MEMPROF_TESTBED_SKIP:-}" = 1 ]; then
	echo "skip: the test-bed cores (MEMPROF_TESTBED_SKIP=1)"
	states=
fi
for sv in $states; do
	s=${sv%%:*} v=${sv#*:} d=$tmp/$s
	"$top/tests/testbed/target.sh" "$s" "$v" gcore "$d" >"$tmp/$s.env" 2>"$tmp/$s.log"
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "skip: $s/$v: the test bed cannot make a core here (gcore refused)"
		continue
	elif [ $rc -ne 0 ] || [ ! -f "$d/core" ]; then
		bad "$s/$v: target.sh gcore failed (exit $rc): $(tail -n 3 "$tmp/$s.log")"
		continue
	fi
	if ! "$MEMPROF" snapshot "$d/core" -o "$d/mp.pickle" 2>"$d/snapshot.err"; then
		bad "$s/$v: memprof snapshot: $(head -c 300 "$d/snapshot.err")"
		continue
	fi
	if ! frames=$("$py" "$page_py" reference "$d/truth.json" "$d/mp.pickle" "$d/ref.pickle"); then
		bad "$s/$v: the reference pickle"
		continue
	fi
	for kind in trace_plot segment_plot; do
		# Both pages drawn even when the first fails: a failure then says which of the two did not finish.
		draw "$s.$kind.memprof" "$kind" "$d/mp.pickle" "$d/core"
		a=$?
		draw "$s.$kind.pytorch" "$kind" "$d/ref.pickle" && [ $a -eq 0 ] &&
			same "$s/$v $kind: memprof's page of the core and PyTorch's of its pickle ($frames)" "$s.$kind.memprof" "$s.$kind.pytorch"
	done
	if [ "$s" = training ]; then
		# ---- 3. control: the frames the reference leaves out are drawn
		case $frames in
		*emptied*)
			"$py" "$page_py" reference "$d/truth.json" - "$d/frames.pickle" >/dev/null &&
				draw training.frames segment_plot "$d/frames.pickle" &&
				differs "control: training with the truth's frames (memprof decodes none from a core yet)" \
					training.frames training.segment_plot.memprof
			;;
		esac
	fi
done

# ---- 5. a real Python job (PyTorch 2.14.1, history on): memprof's pages of its kernel core against PyTorch's pages
# of the job's own _snapshot() at the same checkpoint (frames and all)
if [ "${MEMPROF_TESTBED_SKIP:-}" != 1 ]; then
	d=$tmp/job
	"$top/tests/testbed/jobs/run.sh" history pypi-2.14.1 kernel "$d" >"$tmp/job.vars" 2>"$tmp/job.log"
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "skip: the history job: the test bed cannot run it here ($(tail -1 "$tmp/job.log"))"
	elif [ $rc -ne 0 ] || [ ! -f "$d/core" ]; then
		bad "the history job failed (exit $rc): $(tail -n 3 "$tmp/job.log")"
	elif ! "$MEMPROF" snapshot "$d/core" -o "$d/mp.pickle" 2>"$d/snapshot.err" ||
		! added=$("$py" "$page_py" job-reference "$d/snapshot.pickle" "$d/mp.pickle" "$d/ref.pickle"); then
		bad "the history job: its reference pickle: $(head -c 300 "$d/snapshot.err")"
	else
		for kind in trace_plot segment_plot; do
			draw "job.$kind.memprof" "$kind" "$d/mp.pickle" "$d/core"
			a=$?
			draw "job.$kind.pytorch" "$kind" "$d/ref.pickle" && [ $a -eq 0 ] &&
				same "a real job's core (2.14.1, history) $kind: memprof's page and PyTorch's of the job's own snapshot ($added)" \
					"job.$kind.memprof" "job.$kind.pytorch"
		done
	fi
fi

# ---- 2. the shipped example through memprof convert, pickle -> JSON -> pickle
ex=$top/tests/data/example.pickle
if "$MEMPROF" convert "$ex" "$tmp/example.json" && "$MEMPROF" convert "$tmp/example.json" "$tmp/example.pickle"; then
	for kind in trace_plot segment_plot; do
		draw "example.$kind.memprof" "$kind" "$tmp/example.pickle"
		a=$?
		draw "example.$kind.original" "$kind" "$ex" && [ $a -eq 0 ] &&
			same "example.pickle $kind: after memprof convert to JSON and back" "example.$kind.memprof" "example.$kind.original"
	done
	# ---- 4. memprof's --offline page (the viewer and d3 inlined, no URL to load): what the online page draws
	for kind in trace_plot segment_plot; do
		draw "example.$kind.offline" "$kind" "$ex" "$ex" --offline --torch "$viz/MemoryViz.js" --d3 "$viz/d3.js" &&
			same "example.pickle $kind: memprof's --offline page and PyTorch's page" "example.$kind.offline" "example.$kind.original"
	done
	# ---- 3. control: a wrong pickle draws a different page
	"$py" "$page_py" corrupt "$ex" "$tmp/bad.pickle" &&
		draw example.bad trace_plot "$tmp/bad.pickle" &&
		differs "control: example.pickle with one segment 2 MiB larger" example.bad example.trace_plot.original
else
	bad "memprof convert of $ex"
fi

finish memoryviz: || exit 1
[ $pass -gt 0 ] || not_run "no check ran"
exit 0

#!/usr/bin/env bash
# check.sh - memprof timeline on generated training jobs: (a) its JSON and raw forms byte for byte
# against PyTorch 2.6's own MemoryProfileTimeline export functions fed the timeline the simulation
# expects; (b) the last row against the snapshot's active blocks, and the warning when the ring and
# the blocks disagree; (c) the HTML page and the SVG drawn in headless Chromium and the screenshots
# checked; (d) bad input: no ring, bad formats, unwritable files, several devices.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${PYTHON:-python3}
here="$top/tests/timeline"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../lib/check.sh
. "$top/tests/lib/check.sh"
skip=0

"$py" "$here/gen_timeline.py" "$tmp" || { echo "FAIL: gen_timeline.py"; exit 1; }

# ---- (a) PyTorch's own export functions as the oracle
oracle=$("$top/tests/oracle/fetch-oracle.sh" | head -n1) || { echo "FAIL: fetch-oracle.sh"; exit 1; }
profiler_py="$(dirname "$oracle")/_memory_profiler.py"
[ -f "$profiler_py" ] || { echo "FAIL: no $profiler_py"; exit 1; }

# against NAME DEVICE [memprof args]: memprof's .json and .raw.json equal what PyTorch writes
against() {
	local name=$1 dev=$2 o="$tmp/oracle.$1.$2"
	shift 2
	if ! "$py" "$here/oracle_timeline.py" "$profiler_py" "$tmp/$name.expect.json" "$dev" "$o.json" "$o.raw.json"; then
		bad "oracle on $name device $dev"
		return
	fi
	"$MEMPROF" timeline "$tmp/$name.pickle" "$@" -o "$tmp/m.json" 2>"$tmp/err" || bad "$name $dev: json exit $?"
	"$MEMPROF" timeline "$tmp/$name.pickle" "$@" -o "$tmp/m.raw.json" 2>>"$tmp/err" || bad "$name $dev: raw exit $?"
	if cmp -s "$o.json" "$tmp/m.json"; then ok; else bad "$name device $dev: JSON differs from export_memory_timeline"; cmp "$o.json" "$tmp/m.json" | head -3; fi
	if cmp -s "$o.raw.json" "$tmp/m.raw.json"; then ok; else bad "$name device $dev: raw differs from export_memory_timeline_raw"; cmp "$o.raw.json" "$tmp/m.raw.json" | head -3; fi
	if [ -s "$tmp/err" ]; then bad "$name device $dev: unexpected messages"; cat "$tmp/err"; else ok; fi
}
against training 0          # the ring wrapped: frees without allocs, live blocks from before it
against whole 0             # the same job, the whole ring
against profiler 0          # categories from 'category' keys, in any spelling
against multi 0 --device 0  # two devices with rings, one without
against multi 1 --device 1

# --format overrides the name; '-' is standard output
"$MEMPROF" timeline "$tmp/training.pickle" --format raw -o - >"$tmp/stdout.raw" 2>/dev/null
if cmp -s "$tmp/stdout.raw" "$tmp/oracle.training.0.raw.json"; then ok; else bad "--format raw -o -"; fi

# ---- (b) the last row against the snapshot's blocks
# last_total FILE: the total of the last row of a [times, sizes] file
last_total() { "$py" -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))[1][-1]))' "$1"; }
active() { "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][sys.argv[2]]["active_requested"])' "$@"; }
for case in "training 0" "whole 0" "profiler 0" "multi 0" "multi 1"; do
	set -- $case
	"$MEMPROF" timeline "$tmp/$1.pickle" --device "$2" -o "$tmp/l.json" 2>/dev/null
	t=$(last_total "$tmp/l.json") a=$(active "$tmp/$1.expect.json" "$2")
	if [ "$t" = "$a" ]; then ok; else bad "$1 device $2: the last row holds $t bytes, the active blocks requested $a"; fi
done
"$MEMPROF" timeline "$tmp/training.pickle" >"$tmp/out" 2>"$tmp/err"
if grep -q "requested 54.0MiB (they agree)" "$tmp/out" && [ ! -s "$tmp/err" ]; then ok; else bad "summary of a consistent ring"; cat "$tmp/out" "$tmp/err"; fi
# The ring lost a free: the timeline ends above the blocks, and says so.
"$MEMPROF" timeline "$tmp/inconsistent.pickle" -o "$tmp/i.json" 2>"$tmp/err"
rc=$? t=$(last_total "$tmp/i.json") a=$(active "$tmp/inconsistent.expect.json" 0)
if [ $rc -eq 0 ] && [ "$t" -gt "$a" ]; then ok; else bad "inconsistent: exit $rc, last row $t, active $a"; fi
if grep -q "warning: timeline: device 0: 1 allocations the ring leaves live are no active block" "$tmp/err" &&
   grep -q "warning: timeline: device 0: the timeline ends at $t bytes but the snapshot's active blocks requested $a" "$tmp/err"; then ok
else bad "inconsistent: warnings"; cat "$tmp/err"; fi

# ---- (c) the plots in headless Chromium
pil_py=
for p in "$py" /usr/bin/python3; do "$p" -c 'import PIL' 2>/dev/null && { pil_py=$p; break; }; done
browser=$(command -v chromium || command -v chromium-browser || true)
# shot URL PNG WIDTH HEIGHT
shot() {
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/chrome" \
		--screenshot="$2" --window-size="$3,$4" "file://$1" >/dev/null 2>&1 && [ -s "$2" ]
}
if [ -z "$browser" ] || [ -z "$pil_py" ]; then
	echo "SKIP: the plot checks need chromium and python3-pil (tests/setup-debian.sh installs them)"
	skip=1
else
	for case in "training 0" "profiler 0" "multi 1"; do
		set -- $case
		"$MEMPROF" timeline "$tmp/$1.pickle" --device "$2" -o "$tmp/$1.svg" &&
			shot "$tmp/$1.svg" "$tmp/$1.svg.png" 1200 640 || bad "$1: no SVG screenshot"
		if "$pil_py" "$here/screenshot_check.py" svg "$tmp/$1.svg.png" "$tmp/$1.svg" "$tmp/$1.expect.json" "$2"; then ok; else bad "$1: SVG screenshot"; fi
		"$MEMPROF" timeline "$tmp/$1.pickle" --device "$2" -o "$tmp/$1.html" &&
			shot "$tmp/$1.html" "$tmp/$1.html.png" 1250 1100 || bad "$1: no HTML screenshot"
		if "$pil_py" "$here/screenshot_check.py" html "$tmp/$1.html.png" "$tmp/$1.html" "$tmp/$1.expect.json" "$2"; then ok; else bad "$1: HTML screenshot"; fi
	done
	# The checker can tell: MemTracker's legend (Buffer's darkorange, no INPUT) is not the profiler's.
	"$MEMPROF" timeline "$tmp/training.pickle" --scheme tracker -o "$tmp/tracker.svg" &&
		shot "$tmp/tracker.svg" "$tmp/tracker.png" 1200 640 || bad "tracker: no SVG screenshot"
	if "$pil_py" "$here/screenshot_check.py" svg "$tmp/tracker.png" "$tmp/tracker.svg" "$tmp/training.expect.json" 0 >/dev/null; then
		bad "the screenshot check passed a plot with MemTracker's legend"
	else ok; fi
	for name in Parameter Optstate Temp Activation Gradient Buffer Unknown; do
		if grep -q ">$name</text>" "$tmp/tracker.svg"; then ok; else bad "tracker legend lacks $name"; fi
	done
	# One page, every device with a ring.
	"$MEMPROF" timeline "$tmp/multi.pickle" -o "$tmp/all.html"
	if [ "$(grep -c '<svg ' "$tmp/all.html")" = 2 ] && ! grep -qiE '<script|https?://[^"]*\.(js|css)' "$tmp/all.html"; then ok
	else bad "multi: the page should hold two plots and no script"; fi
fi

# ---- (d) bad input: one line on stderr, the documented exit status
# fails NAME STATUS PATTERN ARGS...: memprof timeline ARGS exits STATUS with one line matching PATTERN
fails() {
	local name=$1 want=$2 pattern=$3
	shift 3
	"$MEMPROF" timeline "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qE -- "$pattern" "$tmp/err"; then ok
	else bad "$name: exit $rc (want $want), stderr:"; cat "$tmp/err"; fi
}
fails "no ring" 1 "no trace ring entries .*_record_memory_history" "$tmp/noring.pickle"
fails "no ring, json" 1 "no trace ring entries" "$tmp/noring.pickle" -o "$tmp/n.json"
[ ! -e "$tmp/n.json" ] && ok || bad "no ring: a file was written"
fails "device without a ring" 1 "device 2 has no trace ring entries" "$tmp/multi.pickle" --device 2
fails "several devices" 2 "2 devices have trace rings \(0, 1\): choose one with --device" "$tmp/multi.pickle" -o "$tmp/x.json"
fails "unknown format" 2 "--format 'png': choose json, raw, html or svg" "$tmp/training.pickle" --format png -o "$tmp/x.png"
fails "unknown suffix" 2 "cannot tell the format of '.*x.txt'" "$tmp/training.pickle" -o "$tmp/x.txt"
fails "format without -o" 2 "writes a file: give -o" "$tmp/training.pickle" --format html
fails "unwritable" 2 "/nonexistent/dir/x.html" "$tmp/training.pickle" -o /nonexistent/dir/x.html
fails "bad scheme" 2 "--scheme 'both': choose profiler or tracker" "$tmp/training.pickle" --scheme both
# An option of another command: refused as unknown, naming the command that has it (and where the help is).
fails_usage() {
	local name=$1 pattern=$2
	shift 2
	"$MEMPROF" timeline "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 2 ] && grep -qE -- "$pattern" "$tmp/err" &&
		grep -qx "Try 'memprof timeline --help'." "$tmp/err"; then ok
	else bad "$name: exit $rc (want 2), stderr:"; cat "$tmp/err"; fi
}
fails_usage "categories option" "unknown option '--explain' \(an option of 'categories'\)" "$tmp/training.pickle" --explain 0x10
fails_usage "categories option" "unknown option '--segsum' \(an option of 'categories'\)" "$tmp/training.pickle" --segsum
echo '{"rules": [{"name": "x"}]}' >"$tmp/bad.rules.json"
fails "bad rules" 2 "rules\[0\] \('x'\): no 'category'" "$tmp/training.pickle" --rules "$tmp/bad.rules.json"
head -c 300 "$tmp/training.pickle" >"$tmp/cut.pickle"
fails "truncated snapshot" 2 "cut.pickle" "$tmp/cut.pickle"
ls "$tmp" | grep -q '\.tmp' && bad "a temporary file was left behind" || ok

finish timeline: || exit 1
[ $skip -eq 0 ] || exit 77
exit 0

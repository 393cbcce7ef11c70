#!/usr/bin/env bash
# outputs.sh OLD_BUILDDIR NEW_BUILDDIR [WORKDIR] - every memprof command, on the CLI and in gdb, run with two builds
#                                                  on the same targets, and their outputs compared byte for byte.
#
# The check issue 12 asks of its refactor (one command table for the CLI and the gdb session, src/analysis split):
# "the CLI and gdb outputs of every command on the test-bed cores are byte-identical before and after".
#
# Each BUILDDIR is a memprof build directory (tests/build.sh DIR): DIR/memprof, DIR/.libs/libmemprof.so.0,
# DIR/gdbext/memprof.py. WORKDIR (default ${TMPDIR:-/tmp}/memprof-compat, no blanks) keeps:
#   targets/    the targets, made once by the test bed and reused by later calls (made again when the test-bed
#               files a core names are gone; rm -r it to force it): gcore cores of the C++ scenarios training,
#               history, multi_device, expandable, pending_free, oom on variant debug and of oom on stripped; kernel
#               cores of the Python job `history` on pypi-2.14.1 and on debian-2.6 (chrooted: --sysroot); snapshot
#               files (tests/data's example pickle, its JSON conversion, example-stats.json; the training and
#               history scenarios' truths, with frames and trace times as data; the corpora of tests/categories and
#               tests/timeline; the two truths of the training scenario's checkpoint2 for compare; a layout file)
#   live/       a live training driver, started for each call (its pid for --pid and gdb -p) and stopped at exit
#   out/old, out/new   per command: command, stdout, stderr, status, files/ (what -o and `snapshot save` wrote)
# Each command runs in an empty directory at the same path for both builds (WORKDIR/run), so the file names it
# prints are the same. compare.py compares the trees; an output whose bytes differ is compared again with what
# legitimately differs between two runs of one build masked (normalise.py: gdb's time of day; trace times
# converted from a core's or a process's clock): equal then, it prints "normalised: KIND TARGET/CASE: equal once
# RULES masked".
#
# Prints "not made: TARGET (why)" for a target the test bed could not give (its commands are left out), one line
# per command whose output differs ("differ: KIND TARGET/CASE: stdout, stderr, status, files: NAME, only in
# old|new"), then "N commands compared, M differ". Exit status: 0 identical, 1 any difference, 2 usage, or a
# target not made (fewer commands compared than asked).
#
# renamed.txt (beside this script) names commands, "cli NAME" or "gdb NAME", whose old spelling may differ only
# by one line added to stderr (the renamed command's note); such a case prints "allowed: ..." and is no difference.
#
# Env: MEMPROF_GDB (default gdb), MEMPROF_COMPAT_SHOW=N (after each differing stream, its first N diff lines).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
testbed=$top/tests/testbed
gdb=${MEMPROF_GDB:-gdb}

log() { echo "compat: $*" >&2; }
die() { log "error: $*"; exit 2; }
usage() {
	echo "usage: tests/compat/outputs.sh OLD_BUILDDIR NEW_BUILDDIR [WORKDIR]" >&2
	exit 2
}

# The absolute path of a build directory that has what both interfaces need.
builddir() { # DIR
	local d f
	d=$(cd "$1" 2>/dev/null && pwd) || die "no directory $1"
	for f in memprof .libs/libmemprof.so.0 gdbext/memprof.py; do
		[ -e "$d/$f" ] || die "$d has no $f: not a memprof build directory (tests/build.sh DIR)"
	done
	echo "$d"
}

[ $# -ge 2 ] && [ $# -le 3 ] || usage
old_build=$(builddir "$1") || exit 2
new_build=$(builddir "$2") || exit 2
mkdir -p "${3:-${TMPDIR:-/tmp}/memprof-compat}" || die "cannot make ${3:-the work directory}"
work=$(cd "${3:-${TMPDIR:-/tmp}/memprof-compat}" && pwd)
# Commands are written as words: a blank in a path would split them.
[[ $work != *[[:space:]]* ]] || die "the work directory '$work' has a blank in its path"
command -v "$gdb" >/dev/null || die "no $gdb (the gdb commands are half of what is compared)"
T=$work/targets
run=$work/run
started=$(date +%s)

# ---------------------------------------------------------------------------------------------------------------
# Targets

not_made=()
# Whether a target is made and the files its core names are still there (a rebuilt test-bed cache moves them).
have() { # NAME
	local p
	[ -f "$T/$1/ok" ] || return 1
	for p in $(sed -n 's/^NEEDS="\(.*\)"$/\1/p' "$T/$1/target.env"); do
		[ -e "$p" ] || return 1
	done
}
failed_target() { # NAME WHY
	not_made+=("$1 ($2)")
	log "not made: $1: $2"
}

# target.env of a target: CORE, EXE (the program gdb loads), SYSROOT (empty or the root), ADDR (an address inside
# the first segment's first block, for `block` and --explain: its first 256 bytes lie in any block), NEEDS (what
# must still exist for the core to be read as it was).
first_address() { # SNAPSHOT-FILE (memprof JSON or a pickle of plain containers)
	python3 - "$1" <<-'PY'
		import json, pickle, sys
		data = open(sys.argv[1], "rb").read()
		snap = json.loads(data) if sys.argv[1].endswith(".json") else pickle.loads(data)
		segments = snap["segments"] if isinstance(snap, dict) else snap
		print(hex(segments[0]["address"] + 256))
	PY
}

# A C++ test-bed core (gdb's gcore of the sleeping driver).
tb_core() { # NAME SCENARIO VARIANT
	local dir=$T/$1 CORE DRIVER LOADER TRUTH C10_LIBDIR
	have "$1" && return 0
	rm -rf "$dir" && mkdir -p "$dir"
	log "making $1: target.sh $2 $3 gcore"
	if ! "$testbed/target.sh" "$2" "$3" gcore "$dir/tb" >"$dir/vars" 2>"$dir/log"; then
		failed_target "$1" "$(tail -1 "$dir/log")"
		return 1
	fi
	# shellcheck source=/dev/null
	. "$dir/vars"
	# gdb takes debian-2.6's loader for the program (the driver is mapped like a library): the cores here are
	# on the DWARF and stripped builds, whose exe is the driver.
	printf 'CORE=%s\nEXE=%s\nSYSROOT=\nADDR=%s\nNEEDS="%s %s"\n' "$CORE" "${LOADER:-$DRIVER}" \
		"$(first_address "$TRUTH")" "$DRIVER" "$C10_LIBDIR" >"$dir/target.env"
	touch "$dir/ok"
	# the files made from this core and its truth are made again with it
	rm -f "$T/files/ok"
}

# A Python job's kernel core (tests/testbed/jobs/run.sh).
job_core() { # NAME JOB TORCH
	local dir=$T/$1 rc CORE PYTHON SYSROOT OUTDIR TORCH_LIBDIR
	have "$1" && return 0
	rm -rf "$dir" && mkdir -p "$dir"
	log "making $1: jobs/run.sh $2 $3 kernel"
	"$testbed/jobs/run.sh" "$2" "$3" kernel "$dir/job" >"$dir/vars" 2>"$dir/log"
	rc=$?
	if [ $rc -ne 0 ]; then
		failed_target "$1" "$(grep -v 'note:' "$dir/log" | tail -1) (status $rc)"
		return 1
	fi
	# shellcheck source=/dev/null
	. "$dir/vars"
	printf 'CORE=%s\nEXE=%s\nSYSROOT=%s\nADDR=%s\nNEEDS="%s %s"\n' "$CORE" "$SYSROOT$PYTHON" "$SYSROOT" \
		"$(first_address "$OUTDIR/snapshot.pickle")" "$SYSROOT$PYTHON" "$TORCH_LIBDIR" >"$dir/target.env"
	touch "$dir/ok"
}

# Snapshot files: inputs of both builds, so made once (the JSON conversion and the layout file by the old build).
file_targets() {
	local dir=$T/files
	have files && return 0
	rm -rf "$dir" && mkdir -p "$dir/cat" "$dir/tl"
	log "making files"
	cp "$top/tests/data/example.pickle" "$top/tests/data/example-stats.json" "$dir/" &&
		"$old_build/memprof" convert "$dir/example.pickle" "$dir/example.json" &&
		python3 "$top/tests/categories/gen_corpus.py" "$dir/cat" &&
		python3 "$top/tests/timeline/gen_timeline.py" "$dir/tl" &&
		"$old_build/memprof" info "$(core_of training)" -o "$dir/training.layout" >/dev/null &&
		# the scenarios' own snapshot() (frames from the driver's recorder, trace times as data)
		cp "$T/training/tb/truth.json" "$dir/training.truth.json" &&
		{ ! have history || cp "$T/history/tb/truth.json" "$dir/history.truth.json"; } &&
		# the training scenario's state at its two checkpoints (known work in between): compare's before/after
		(cd "$dir" && MEMPROF_C10_VARIANT=debug "$testbed/scenarios/run.sh" training checkpoint2 \
			--truth "$dir/before.json" >"$dir/driver.out" 2>"$dir/driver.err") &&
		mv "$dir/before.json.2" "$dir/after.json" || {
		failed_target files "see $dir"
		return 1
	}
	printf 'ADDR=%s\nCAT_ADDR=%s\n' "$(first_address "$dir/example.pickle")" \
		"$(first_address "$dir/cat/training.pickle")" >"$dir/target.env"
	touch "$dir/ok"
}

# The live driver (training, with its trace ring): started for this call only.
live_pid=
stop_live() {
	[ -z "$live_pid" ] || "$testbed/target.sh" --stop "$work/live" >/dev/null 2>&1
	live_pid=
}
start_live() {
	local PID
	rm -rf "$work/live"
	if ! "$testbed/target.sh" training debug live "$work/live" >"$work/live.vars" 2>"$work/live.log"; then
		failed_target live "$(tail -1 "$work/live.log")"
		return 1
	fi
	# shellcheck source=/dev/null
	. "$work/live.vars"
	live_pid=$PID
}
trap stop_live EXIT

cpp_targets="training history multi_device expandable pending_free oom oom-stripped"
job_targets="job-pypi job-debian"
make_targets() {
	local name
	mkdir -p "$T"
	for name in training history multi_device expandable pending_free oom; do
		tb_core "$name" "$name" debug
	done
	tb_core oom-stripped oom stripped
	job_core job-pypi history pypi-2.14.1
	job_core job-debian history debian-2.6
	if have training; then file_targets; else failed_target files "needs the training core"; fi
	start_live
}

# Reads a target's target.env into CORE, EXE, SYSROOT, ADDR (and CAT_ADDR for files).
load_target() { # NAME
	CORE='' EXE='' SYSROOT='' ADDR='' CAT_ADDR=''
	# shellcheck source=/dev/null
	. "$T/$1/target.env"
}

# The core of a target.
core_of() { # NAME
	(load_target "$1" && echo "$CORE")
}

# ---------------------------------------------------------------------------------------------------------------
# Running one build: each case leaves OUT/KIND/TARGET/CASE/{command,stdout,stderr,status,files/}

# Where files written by a command go: the run directory is emptied before each CLI command.
fresh_run() {
	rm -rf "$run" && mkdir -p "$run"
}

# A case directory; two cases of one name would hide each other.
case_dir() { # KIND ID
	local dir=$out/$1/$2
	[ ! -e "$dir" ] || die "two cases named $1 $2 (a bug of this script)"
	mkdir -p "$dir"
	echo "$1 $2" >>"$out/index"
	echo "$dir"
}

# cli ID ARGS... - `memprof ARGS` in an empty directory, stdin from $stdin (default /dev/null). ID: TARGET/CASE,
# CASE starting with the command's name (renamed.txt matches it).
cli() {
	local id=$1 dir
	shift
	dir=$(case_dir cli "$id") || exit 2
	echo "memprof $*" >"$dir/command"
	fresh_run
	(cd "$run" && exec "$memprof" "$@") <"${stdin:-/dev/null}" >"$dir/stdout" 2>"$dir/stderr"
	echo $? >"$dir/status"
	if [ -n "$(ls -A "$run")" ]; then mv "$run" "$dir/files"; fi
}

# The CLI commands every core (or --pid) target gets: each command with its usual options. ARGS name the target.
cli_target_cases() { # NAME ARGS...
	local n=$1
	shift
	cli "$n/stats" stats "$@"
	cli "$n/segments" segments "$@"
	cli "$n/memory" memory "$@"
	cli "$n/trace" trace "$@"
	cli "$n/summary" summary "$@"
	cli "$n/summary.abbreviated" summary "$@" --abbreviated
	cli "$n/categories" categories "$@"
	cli "$n/categories.tracker" categories "$@" --scheme tracker
	cli "$n/categories.sites" categories "$@" --sites
	cli "$n/categories.segsum" categories "$@" --segsum
	cli "$n/categories.json-blocks" categories "$@" --format json --blocks
	cli "$n/categories.explain" categories "$@" --explain "$ADDR"
	cli "$n/timeline" timeline "$@"
	cli "$n/timeline.raw" timeline "$@" -o t.raw.json
	cli "$n/info" info "$@" -o target.layout
	cli "$n/snapshot.json" snapshot "$@" -o s.json --stats
	cli "$n/snapshot.pickle" snapshot "$@" -o s.pickle
}

cli_cases() {
	local c f n
	# --- no target: usage, help, version, unknown commands and options
	cli -/none
	cli -/help --help
	cli -/h -h
	cli -/help-word help
	cli -/version --version
	cli -/unknown frobnicate
	for c in stats segments memory compare trace convert snapshot summary categories timeline info; do
		cli "-/$c.help" "$c" -h
		cli "-/$c.bad-option" "$c" --bogus x
		cli "-/$c.no-target" "$c"
		case $c in
		compare) cli "-/$c.missing-file" "$c" "$T/no-such-file" "$T/no-such-file" ;;
		convert) cli "-/$c.missing-file" "$c" "$T/no-such-file" c.json ;;
		snapshot) cli "-/$c.missing-file" "$c" "$T/no-such-file" -o s.json ;;
		*) cli "-/$c.missing-file" "$c" "$T/no-such-file" ;;
		esac
	done

	# --- every core and the live process: the common set
	for n in $cpp_targets job-pypi; do
		have "$n" || continue
		load_target "$n"
		cli_target_cases "$n" "$CORE"
	done
	if have job-debian; then
		load_target job-debian
		cli_target_cases job-debian "$CORE" --sysroot "$SYSROOT"
		# a core from a chroot: its files are not where it names them
		cli job-debian/stats.no-sysroot stats "$CORE"
		cli job-debian/info.no-sysroot info "$CORE"
		cli job-debian/stats.solib-path stats "$CORE" --solib-path "$SYSROOT/usr/lib/x86_64-linux-gnu"
	fi
	if [ -n "$live_pid" ]; then
		ADDR=$(first_address "$work/live/truth.json")
		cli_target_cases live --pid "$live_pid"
		cli live/stats.stop stats --pid "$live_pid" --stop
		cli live/info.stop info --pid "$live_pid" --stop
		if have training; then cli live/compare.core compare "$(core_of training)" --pid "$live_pid"; fi
	fi
	cli -/stats.pid-none stats --pid 2147483647
	cli -/stats.pid-bad stats --pid abc
	cli -/stats.pid-zero stats --pid 0
	cli -/info.pid-not-pytorch info --pid $$
	cli -/stats.elf-not-core stats "$(command -v gdb)"

	# --- options on one target with a trace ring and a side stream (training)
	if have training; then
		load_target training
		f=$T/files
		cli training/segments.svg segments "$CORE" -o s.svg
		cli training/segments.folded segments "$CORE" -o s.folded
		cli training/segments.stdout segments "$CORE" -o -
		cli training/memory.svg memory "$CORE" -o m.svg
		cli training/memory.folded memory "$CORE" -o m.folded
		cli training/stats.two-targets stats "$CORE" "$CORE"
		cli training/stats.layout stats "$CORE" --layout "$f/training.layout"
		cli training/info.layout info "$CORE" --layout "$f/training.layout"
		cli training/stats.layout-missing stats "$CORE" --layout "$T/no-such.layout"
		cli training/stats.layout-bad stats "$CORE" --layout "$f/example.json"
		cli training/stats.sysroot stats "$CORE" --sysroot /
		cli training/stats.solib-path stats "$CORE" --solib-path /nonexistent
		cli training/stats.stop-on-core stats "$CORE" --stop
		cli training/snapshot.no-output snapshot "$CORE"
		cli training/snapshot.bad-format snapshot "$CORE" -o s.txt
		cli training/snapshot.stdout snapshot "$CORE" -o -
		cli training/convert.core convert "$CORE" c.json
		cli training/summary.device-0 summary "$CORE" --device 0
		cli training/summary.device-1 summary "$CORE" --device 1
		cli training/summary.device-negative summary "$CORE" --device -1
		cli training/summary.device-word summary "$CORE" --device x
		cli training/summary.stats-option summary "$CORE" --stats
		cli training/categories.rst categories "$CORE" --format rst
		cli training/categories.json categories "$CORE" --format json
		cli training/categories.blocks-plain categories "$CORE" --blocks
		cli training/categories.units-mib categories "$CORE" --units MiB
		cli training/categories.units-b categories "$CORE" --units B
		cli training/categories.units-bad categories "$CORE" --units furlongs
		cli training/categories.device-0 categories "$CORE" --device 0
		cli training/categories.device-3 categories "$CORE" --device 3
		cli training/categories.sites-3 categories "$CORE" --sites 3
		cli training/categories.sites-eq-3 categories "$CORE" --sites=3
		cli training/categories.sites-first categories --sites 2 "$CORE"
		for by in site function file module bogus; do
			cli "training/categories.by-$by" categories "$CORE" --sites --by "$by"
		done
		cli training/categories.rules categories "$CORE" --rules "$f/cat/user.rules.json"
		cli training/categories.rules-missing categories "$CORE" --rules "$T/no-such.json"
		cli training/categories.rules-bad categories "$CORE" --rules "$f/cat/bad-where.json"
		cli training/categories.scheme-bad categories "$CORE" --scheme bogus
		cli training/categories.format-bad categories "$CORE" --format xml
		cli training/categories.explain-nowhere categories "$CORE" --explain 0x10
		cli training/categories.explain-bad categories "$CORE" --explain zz
		cli training/categories.explain-sites categories "$CORE" --explain "$ADDR" --sites
		cli training/categories.sites-segsum categories "$CORE" --sites --segsum
		cli training/categories.segsum-json categories "$CORE" --segsum --format json
		cli training/categories.segsum-device-3 categories "$CORE" --segsum --device 3
		cli training/categories.sites-device-3 categories "$CORE" --sites --device 3
		cli training/timeline.json timeline "$CORE" -o t.json
		cli training/timeline.html timeline "$CORE" -o t.html
		cli training/timeline.svg timeline "$CORE" -o t.svg
		cli training/timeline.json-stdout timeline "$CORE" --format json -o -
		cli training/timeline.raw-stdout timeline "$CORE" --format raw -o -
		cli training/timeline.html-named timeline "$CORE" --format html -o page
		cli training/timeline.svg-tracker timeline "$CORE" -o t.svg --scheme tracker
		cli training/timeline.format-bad timeline "$CORE" --format xml -o t.xml
		cli training/timeline.unknown-ext timeline "$CORE" -o t.txt
		cli training/timeline.json-no-output timeline "$CORE" --format json
		cli training/timeline.device-0 timeline "$CORE" --device 0
		cli training/timeline.device-5 timeline "$CORE" --device 5
		cli training/timeline.tracker timeline "$CORE" --scheme tracker
		cli training/timeline.units-kib timeline "$CORE" --units KiB
		cli training/timeline.units-bad timeline "$CORE" --units furlongs
		cli training/timeline.scheme-bad timeline "$CORE" --scheme bogus
		cli training/timeline.rules timeline "$CORE" --rules "$f/cat/user.rules.json"
		cli training/timeline.rules-bad timeline "$CORE" --rules "$f/cat/bad-where.json"
		cli training/timeline.sites timeline "$CORE" --sites
		cli training/timeline.unwritable timeline "$CORE" -o /nonexistent/t.json
		cli training/segments.unwritable segments "$CORE" -o /nonexistent/s.svg
		cli training/info.unwritable info "$CORE" -o /nonexistent/l.layout
		if have history; then
			cli training/compare.history compare "$CORE" "$(core_of history)"
			cli training/compare.history-svg compare "$CORE" "$(core_of history)" -o c.svg
			cli training/compare.history-folded compare "$CORE" "$(core_of history)" -o c.folded
		fi
		cli training/compare.self compare "$CORE" "$CORE"
		cli training/compare.one compare "$CORE"
	fi
	if have multi_device; then
		load_target multi_device
		cli multi_device/summary.device-1 summary "$CORE" --device 1
		cli multi_device/summary.device-2 summary "$CORE" --device 2
		cli multi_device/categories.device-1 categories "$CORE" --device 1
		cli multi_device/categories.segsum-device-1 categories "$CORE" --segsum --device 1
		cli multi_device/categories.sites-device-1 categories "$CORE" --sites --device 1
		cli multi_device/timeline.device-1 timeline "$CORE" --device 1
	fi

	# --- snapshot files
	have files || return 0
	load_target files
	f=$T/files
	for n in example.pickle example.json training.truth.json history.truth.json; do
		[ -f "$f/$n" ] || continue
		ADDR=$(first_address "$f/$n")
		cli "$n/stats" stats "$f/$n"
		cli "$n/segments" segments "$f/$n"
		cli "$n/memory" memory "$f/$n"
		cli "$n/trace" trace "$f/$n"
		cli "$n/summary" summary "$f/$n"
		cli "$n/categories" categories "$f/$n"
		cli "$n/categories.sites" categories "$f/$n" --sites
		cli "$n/categories.segsum" categories "$f/$n" --segsum
		cli "$n/categories.explain" categories "$f/$n" --explain "$ADDR"
		cli "$n/timeline" timeline "$f/$n"
		cli "$n/timeline.json" timeline "$f/$n" -o t.json
		cli "$n/timeline.raw" timeline "$f/$n" -o t.raw.json
		cli "$n/timeline.html" timeline "$f/$n" -o t.html
		cli "$n/timeline.svg" timeline "$f/$n" -o t.svg
		cli "$n/info" info "$f/$n"
		cli "$n/snapshot.pickle" snapshot "$f/$n" -o re.pickle
		cli "$n/snapshot.json" snapshot "$f/$n" -o re.json --stats
	done
	stdin=$f/example.pickle cli example.pickle/stats.stdin stats -
	stdin=$f/example.json cli example.json/trace.stdin trace -
	cli example.pickle/compare.json compare "$f/example.pickle" "$f/example.json"
	cli example.pickle/segments.svg segments "$f/example.pickle" -o s.svg
	cli example.pickle/memory.svg memory "$f/example.pickle" -o m.svg
	cli example.pickle/convert.json convert "$f/example.pickle" c.json
	cli example.json/convert.pickle convert "$f/example.json" c.pickle
	cli example.pickle/convert.to-json convert "$f/example.pickle" c --to json
	cli example.pickle/convert.stdout convert "$f/example.pickle" - --to json
	cli example.pickle/convert.to-bad convert "$f/example.pickle" c --to xml
	cli example.pickle/convert.unknown-ext convert "$f/example.pickle" c.txt
	cli example.pickle/convert.one convert "$f/example.pickle"
	cli example.pickle/convert.pid convert --pid 1 "$f/example.pickle" c.json
	cli example-stats.json/summary summary "$f/example-stats.json"
	cli example-stats.json/summary.abbreviated summary "$f/example-stats.json" --abbreviated
	cli example-stats.json/summary.device-1 summary "$f/example-stats.json" --device 1
	cli before-after/compare compare "$f/before.json" "$f/after.json"
	cli before-after/compare.svg compare "$f/before.json" "$f/after.json" -o c.svg
	cli before-after/compare.folded compare "$f/before.json" "$f/after.json" -o c.folded
	cli before-after/stats stats "$f/after.json"
	cli before-after/summary summary "$f/after.json"
	# categories' corpus: frames a core lacks, so rules, sites and sources show
	cli cat/categories categories "$f/cat/training.pickle"
	cli cat/categories.tracker categories "$f/cat/training.pickle" --scheme tracker
	cli cat/categories.rst categories "$f/cat/training.pickle" --format rst
	cli cat/categories.json-blocks categories "$f/cat/training.pickle" --format json --blocks
	cli cat/categories.explain categories "$f/cat/training.pickle" --explain "$CAT_ADDR"
	cli cat/categories.explain-tracker categories "$f/cat/training.pickle" --explain "$CAT_ADDR" --scheme tracker
	cli cat/categories.segsum categories "$f/cat/training.pickle" --segsum
	cli cat/categories.profiler categories "$f/cat/profiler.pickle"
	cli cat/categories.user-rules categories "$f/cat/user.pickle" --rules "$f/cat/user.rules.json"
	cli cat/categories.user-no-rules categories "$f/cat/user.pickle"
	for by in site function file module; do
		cli "cat/categories.sites-by-$by" categories "$f/cat/sites.pickle" --sites 3 --by "$by"
	done
	cli cat/categories.sites-device-0 categories "$f/cat/sites.pickle" --sites --device 0
	cli cat/categories.sites-device-9 categories "$f/cat/sites.pickle" --sites --device 9
	for c in "$f"/cat/bad-*.json; do
		cli "cat/categories.rules-$(basename "$c" .json)" categories "$f/cat/training.pickle" --rules "$c"
	done
	# timeline's corpus: rings that wrapped or not, two devices, a ring that disagrees with the blocks, no ring
	for n in training whole profiler multi inconsistent noring; do
		cli "tl/timeline.$n" timeline "$f/tl/$n.pickle"
	done
	cli tl/timeline.training-json timeline "$f/tl/training.pickle" -o t.json
	cli tl/timeline.training-raw timeline "$f/tl/training.pickle" -o t.raw.json
	cli tl/timeline.training-html timeline "$f/tl/training.pickle" -o t.html
	cli tl/timeline.training-svg timeline "$f/tl/training.pickle" -o t.svg
	cli tl/timeline.training-rules timeline "$f/tl/training.pickle" --rules "$f/cat/user.rules.json"
	cli tl/timeline.multi-json timeline "$f/tl/multi.pickle" -o m.json
	cli tl/timeline.multi-json-device-1 timeline "$f/tl/multi.pickle" -o m.json --device 1
	cli tl/timeline.multi-html timeline "$f/tl/multi.pickle" -o m.html
	cli tl/timeline.multi-device-0 timeline "$f/tl/multi.pickle" --device 0
	cli tl/timeline.multi-units-b timeline "$f/tl/multi.pickle" --units B
	cli tl/timeline.profiler-tracker timeline "$f/tl/profiler.pickle" --scheme tracker -o p.svg
}

# --- gdb: one session per target; compat-case runs each command (capture.py), split.py cuts the streams

cmds=
# The command line of gdb case ID in a command file.
case_command() { # ID FILE
	awk -v id="$1" 'begun { print; exit } $1 == "compat-case" && $2 == id { sub(/^compat-case [^ ]* /, ""); print; exit }
		$1 == "compat-begin" && $2 == id { begun = 1 }' "$2" 2>/dev/null
}

# gcase ID COMMAND... - one command of the session being written (ID: CASE, starting with the command's name).
gcase() {
	! case_command "$1" "$cmds" | grep -q . || die "two gdb cases named $1 (a bug of this script)"
	echo "compat-case $*" >>"$cmds"
}

# graw ID LINE - a command line run as the script has it, trailing blanks kept (`complete memprof `); it must
# not fail, which would end the script.
graw() {
	! case_command "$1" "$cmds" | grep -q . || die "two gdb cases named $1 (a bug of this script)"
	printf 'compat-begin %s\n%s\ncompat-end %s\n' "$1" "$2" "$1" >>"$cmds"
}

# Runs the session written into $cmds: gdb ARGS... in the run directory, with this build's memprof.py.
gdb_session() { # NAME GDB-ARGS...
	local name=$1 dir=$out/gdb/$1 raw=$out/gdb-raw/$1 c
	shift
	mkdir -p "$dir" "$raw"
	cp "$cmds" "$raw/commands.gdb"
	fresh_run
	(cd "$run" && COMPAT_FILES=$raw/files MEMPROF_LIBRARY=$lib exec "$gdb" -nx -batch \
		-iex 'set pagination off' -iex 'set confirm off' -iex 'set width 0' \
		-ex "source $gdbext" -ex "source $here/capture.py" "$@" -x "$raw/commands.gdb") \
		</dev/null >"$raw/stdout" 2>"$raw/stderr"
	echo $? >"$raw/status"
	python3 "$here/split.py" "$raw/stdout" "$raw/stderr" "$dir" || die "split.py failed on $raw"
	# gdb's own exit status is part of the session's outside output
	cp "$raw/status" "$dir/_gdb/status"
	for c in "$dir"/*/; do
		c=$(basename "$c")
		echo "gdb $name/$c" >>"$out/index"
		[ ! -d "$raw/files/$c" ] || mv "$raw/files/$c" "$dir/$c/files"
		[ "$c" = _gdb ] || case_command "$c" "$raw/commands.gdb" >"$dir/$c/command"
	done
}

# What every core gets in gdb.
gdb_target_cases() {
	gcase target maintenance memprof target
	gcase info memprof info
	gcase segsum memprof segsum
	gcase stats memprof stats
	gcase stats.device-0 memprof stats --device 0
	gcase stats.abbreviated memprof stats --abbreviated
	gcase segments memprof segments
	gcase memory memprof memory
	gcase trace memprof trace
	gcase trace.5 memprof trace 5
	gcase blocks memprof blocks
	gcase blocks.top-5 memprof blocks --top 5
	gcase blocks.active memprof blocks --state active
	gcase blocks.inactive-pending memprof blocks --state inactive,pending
	gcase blocks.min-size memprof blocks --min-size 1MiB
	gcase blocks.device-all memprof blocks --device all
	gcase blocks.stream-0 memprof blocks --stream 0
	gcase block memprof block "$ADDR"
	gcase block.expression memprof block "$ADDR" + 16
	gcase categories memprof categories
	gcase categories.tracker memprof categories --scheme tracker
	gcase categories.sites memprof categories --sites 5 --by function
	gcase categories.segsum memprof categories --segsum
	gcase categories.json memprof categories --format json
	gcase categories.explain memprof categories --explain "$ADDR"
	gcase timeline memprof timeline
	gcase timeline.raw memprof timeline -o t.raw.json
	gcase snapshot.list-empty memprof snapshot list
	gcase snapshot.take memprof snapshot take a
	gcase snapshot.save memprof snapshot save a a.json
	gcase snapshot.save-now memprof snapshot save now n.pickle
	gcase snapshot.list memprof snapshot list
	gcase compare memprof compare a now
	gcase settings.units-mib set memprof units MiB
	gcase blocks.units-mib memprof blocks --top 5
	gcase categories.units-mib memprof categories
	gcase timeline.units-mib memprof timeline
	gcase compare.units-mib memprof compare a now
	gcase settings.units-auto set memprof units auto
	gcase settings.device-0 set memprof device 0
	gcase stats.device-setting memprof stats
	gcase blocks.device-setting memprof blocks --top 3
	gcase settings.device-all set memprof device all
	gcase settings.max-blocks-10 set memprof max-blocks 10
	gcase segsum.max-blocks-10 memprof segsum
	gcase settings.max-blocks-0 set memprof max-blocks 0
	gcase settings.show show memprof
}

# Options and errors, on the training core.
gdb_training_cases() {
	local f=$T/files
	gcase segments.svg memprof segments -o s.svg
	gcase segments.folded memprof segments -o s.folded
	gcase memory.svg memprof memory -o m.svg
	gcase segsum.file memprof segsum "$f/example.pickle"
	gcase segsum.bad-option memprof segsum --bogus
	gcase segsum.two memprof segsum now now
	gcase segsum.missing-file memprof segsum "$T/no-such-file"
	gcase stats.device-9 memprof stats --device 9
	gcase stats.device-word memprof stats --device x
	gcase stats.device-no-value memprof stats --device
	gcase trace.word memprof trace x
	gcase trace.negative memprof trace -1
	gcase trace.of-missing memprof trace --of nosuch
	gcase blocks.device-word memprof blocks --device x
	gcase blocks.device-3 memprof blocks --device 3
	gcase blocks.stream-word memprof blocks --stream x
	gcase blocks.stream-9 memprof blocks --stream 9
	gcase blocks.state-bad memprof blocks --state bogus
	gcase blocks.state-all memprof blocks --state allocated,pending,inactive
	gcase blocks.min-size-bad memprof blocks --min-size lots
	gcase blocks.min-size-huge memprof blocks --min-size 1GiB
	gcase blocks.top-0 memprof blocks --top 0
	gcase blocks.top-word memprof blocks --top x
	gcase blocks.too-many memprof blocks now now
	gcase blocks.bad-option memprof blocks --bogus
	gcase block.nowhere memprof block 0x10
	gcase block.syntax memprof block 1+
	gcase block.none memprof block
	gcase block.named memprof block "$ADDR" now
	gcase categories.rst memprof categories --format rst
	gcase categories.sites-3 memprof categories --sites 3
	gcase categories.sites-module memprof categories --sites --by module
	gcase categories.by-bad memprof categories --sites --by bogus
	gcase categories.scheme-bad memprof categories --scheme bogus
	gcase categories.format-bad memprof categories --format xml
	gcase categories.rules memprof categories --rules "$f/cat/user.rules.json"
	gcase categories.rules-missing memprof categories --rules "$T/no-such.json"
	gcase categories.rules-bad memprof categories --rules "$f/cat/bad-where.json"
	gcase categories.explain-nowhere memprof categories --explain 0x10
	gcase categories.explain-bad memprof categories --explain zz
	gcase categories.sites-segsum memprof categories --sites --segsum
	gcase categories.device-word memprof categories --device x
	gcase categories.device-3 memprof categories --device 3
	gcase timeline.json memprof timeline -o t.json
	gcase timeline.html memprof timeline -o t.html
	gcase timeline.svg memprof timeline -o t.svg
	gcase timeline.raw-named memprof timeline --format raw -o raw
	gcase timeline.format-bad memprof timeline --format xml -o t.xml
	gcase timeline.unknown-ext memprof timeline -o t.txt
	gcase timeline.json-no-output memprof timeline --format json
	gcase timeline.device-0 memprof timeline --device 0
	gcase timeline.device-5 memprof timeline --device 5
	gcase timeline.device-word memprof timeline --device x
	gcase timeline.tracker memprof timeline --scheme tracker
	gcase timeline.scheme-bad memprof timeline --scheme bogus
	gcase timeline.rules memprof timeline --rules "$f/cat/user.rules.json"
	gcase timeline.unwritable memprof timeline -o /nonexistent/t.json
	gcase snapshot.alone memprof snapshot
	gcase snapshot.unknown memprof snapshot frob
	gcase snapshot.take-now memprof snapshot take now
	gcase snapshot.take-bad-name memprof snapshot take a/b
	gcase snapshot.take-none memprof snapshot take
	gcase snapshot.take-b memprof snapshot take b
	gcase snapshot.take-replace memprof snapshot take b
	gcase snapshot.save-format memprof snapshot save b b.out --format json
	gcase snapshot.save-format-bad memprof snapshot save b b.out --format xml
	gcase snapshot.save-missing memprof snapshot save nosuch x.json
	gcase snapshot.save-none memprof snapshot save
	gcase snapshot.save-unwritable memprof snapshot save b /nonexistent/b.json
	gcase snapshot.load memprof snapshot load "$f/example.pickle" ex
	gcase snapshot.load-json memprof snapshot load "$f/example.json" exj
	gcase snapshot.load-missing memprof snapshot load "$T/no-such.pickle" x
	gcase snapshot.load-no-name memprof snapshot load "$f/example.pickle"
	gcase snapshot.load-core memprof snapshot load "$CORE" c
	gcase snapshot.list-three memprof snapshot list
	gcase compare.files memprof compare ex exj
	gcase compare.file-now memprof compare ex now -o c.svg
	gcase compare.one memprof compare b
	gcase compare.missing memprof compare nosuch now
	gcase segsum.named memprof segsum ex
	gcase trace.of-named memprof trace 3 --of ex
	gcase snapshot.drop memprof snapshot drop ex
	gcase snapshot.drop-missing memprof snapshot drop ex
	gcase snapshot.list-after-drop memprof snapshot list
	gcase unknown memprof frob
	gcase alone memprof
	gcase settings.units-bad set memprof units furlongs
	gcase settings.device-word set memprof device x
	gcase settings.device-negative set memprof device -1
	gcase settings.device-3 set memprof device 3
	gcase stats.device-3-setting memprof stats
	gcase settings.device-all-again set memprof device all
	gcase settings.max-blocks-word set memprof max-blocks x
	gcase settings.layout set memprof layout "$f/training.layout"
	gcase info.layout memprof info
	gcase segsum.layout memprof segsum
	gcase settings.layout-missing set memprof layout "$T/no-such.layout"
	gcase settings.layout-bad set memprof layout "$f/example.json"
	gcase settings.show-layout show memprof layout
	gcase settings.layout-auto set memprof layout auto
	gcase settings.show-units show memprof units
	gcase settings.set-alone set memprof
	gcase settings.backend-gdb set memprof backend gdb
	gcase segsum.backend-gdb memprof segsum
	gcase settings.backend-auto set memprof backend auto
	gcase maintenance.bad maintenance memprof bogus
}

# No process or core (gdb holds only the driver): snapshot files, help texts.
gdb_file_cases() {
	local f=$T/files c
	gcase segsum.no-target memprof segsum
	gcase info.no-target memprof info
	gcase snapshot.take-no-target memprof snapshot take x
	gcase target maintenance memprof target
	gcase segsum memprof segsum "$f/example.pickle"
	gcase segsum.json memprof segsum "$f/example.json"
	gcase stats.no-stats memprof stats "$f/example.pickle"
	gcase stats memprof stats "$f/example-stats.json"
	gcase stats.abbreviated memprof stats "$f/example-stats.json" --abbreviated
	gcase segments memprof segments "$f/example.pickle"
	gcase memory.svg memprof memory "$f/example.pickle" -o m.svg
	gcase trace memprof trace --of "$f/example.pickle"
	gcase trace.4 memprof trace 4 --of "$f/example.pickle"
	gcase blocks memprof blocks "$f/example.pickle"
	gcase block memprof block "$ADDR" "$f/example.pickle"
	gcase snapshot.load memprof snapshot load "$f/example.pickle" ex
	gcase snapshot.load-json memprof snapshot load "$f/example.json" exj
	gcase snapshot.load-before memprof snapshot load "$f/before.json" before
	gcase snapshot.list memprof snapshot list
	gcase compare.files memprof compare ex exj
	gcase compare memprof compare before "$f/after.json"
	gcase compare.svg memprof compare before "$f/after.json" -o c.svg
	gcase compare.now memprof compare before now
	gcase blocks.named memprof blocks ex --top 3
	gcase snapshot.save memprof snapshot save ex ex.json
	gcase snapshot.save-pickle memprof snapshot save exj exj.pickle
	gcase categories memprof categories "$f/cat/training.pickle"
	gcase categories.explain memprof categories "$f/cat/training.pickle" --explain "$CAT_ADDR"
	gcase categories.user-rules memprof categories "$f/cat/user.pickle" --rules "$f/cat/user.rules.json"
	gcase categories.sites memprof categories "$f/cat/sites.pickle" --sites 3 --by file
	gcase categories.segsum memprof categories "$f/cat/training.pickle" --segsum
	gcase categories.rst memprof categories "$f/cat/training.pickle" --format rst --scheme tracker
	gcase timeline memprof timeline "$f/tl/training.pickle"
	gcase timeline.json memprof timeline "$f/tl/training.pickle" -o t.json
	gcase timeline.html memprof timeline "$f/tl/multi.pickle" -o m.html
	gcase timeline.multi-json memprof timeline "$f/tl/multi.pickle" -o m.json
	gcase timeline.multi-device-1 memprof timeline "$f/tl/multi.pickle" --device 1 -o m1.json
	gcase timeline.inconsistent memprof timeline "$f/tl/inconsistent.pickle"
	gcase timeline.noring memprof timeline "$f/tl/noring.pickle"
	# completion comes from the command table too (mp_session_complete), with the names loaded above
	graw complete.commands "complete memprof "
	graw complete.snapshot "complete memprof snapshot "
	graw complete.names "complete memprof segsum "
	graw complete.options "complete memprof blocks --"
	graw complete.state "complete memprof blocks --state a"
	graw complete.device "complete memprof stats --device "
	graw complete.categories-format "complete memprof categories --format "
	graw complete.timeline-format "complete memprof timeline --format "
	graw complete.save-format "complete memprof snapshot save ex x.json --format "
	graw complete.scheme "complete memprof categories --scheme "
	graw complete.by "complete memprof categories --sites --by "
	graw complete.of "complete memprof trace --of "
	graw complete.compare-second "complete memprof compare ex "
	graw complete.file "complete memprof snapshot load $f/cat/tr"
	graw complete.output "complete memprof segments -o $f/ex"
	gcase help help memprof
	for c in segsum stats snapshot "snapshot take" "snapshot list" "snapshot save" "snapshot load" \
		"snapshot drop" compare segments memory trace blocks block categories timeline info; do
		gcase "help.${c// /-}" help memprof "$c"
	done
	gcase help.set help set memprof
	gcase help.show help show memprof
	gcase help.maintenance help maintenance memprof
	gcase help.units help set memprof units
}

# The live driver, attached: memprof reads it directly, then through gdb's own reads.
gdb_live_cases() {
	gcase target maintenance memprof target
	gcase info memprof info
	gcase segsum memprof segsum
	gcase stats memprof stats
	gcase blocks memprof blocks --top 5
	gcase trace memprof trace 5
	gcase categories memprof categories
	gcase timeline memprof timeline
	gcase snapshot.take memprof snapshot take l
	gcase snapshot.list memprof snapshot list
	gcase compare memprof compare l now
	gcase settings.backend-gdb set memprof backend gdb
	gcase target.backend-gdb maintenance memprof target
	gcase segsum.backend-gdb memprof segsum
	gcase blocks.backend-gdb memprof blocks --top 5
	gcase info.backend-gdb memprof info
	gcase maintenance.reads maintenance memprof reads
	gcase settings.backend-auto set memprof backend auto
	gcase detach detach
}

gdb_cases() {
	local n args
	mkdir -p "$out/gdb-raw"
	for n in $cpp_targets $job_targets; do
		have "$n" || continue
		load_target "$n"
		cmds=$out/gdb-raw/$n.gdb && : >"$cmds"
		args=()
		if [ -n "$SYSROOT" ]; then args+=(-iex "set sysroot $SYSROOT"); fi
		# memprof reads the libraries itself: gdb need not load PyTorch's gigabyte of them
		case $n in job-*) args+=(-iex 'set auto-solib-add off') ;; esac
		gdb_target_cases
		[ "$n" != training ] || gdb_training_cases
		if [ "$n" = multi_device ]; then
			gcase stats.device-1 memprof stats --device 1
			gcase blocks.device-1 memprof blocks --device 1
			gcase categories.device-1 memprof categories --device 1
			gcase settings.device-1 set memprof device 1
			gcase blocks.device-1-setting memprof blocks
			gcase timeline.device-1-setting memprof timeline
		fi
		gdb_session "$n" "${args[@]}" "$EXE" "$CORE"
	done
	if have job-debian; then
		# the chroot's core without its root: memprof cannot find the files it names
		load_target job-debian
		cmds=$out/gdb-raw/job-debian-no-sysroot.gdb && : >"$cmds"
		gcase segsum memprof segsum
		gcase info memprof info
		gdb_session job-debian-no-sysroot -iex 'set auto-solib-add off' "$EXE" "$CORE"
	fi
	if have files && have training; then
		load_target files
		cmds=$out/gdb-raw/files.gdb && : >"$cmds"
		gdb_file_cases
		load_target training
		gdb_session files "$EXE"
	fi
	if [ -n "$live_pid" ]; then
		cmds=$out/gdb-raw/live.gdb && : >"$cmds"
		gdb_live_cases
		gdb_session live -p "$live_pid"
	fi
}

run_build() { # SIDE BUILDDIR
	out=$work/out/$1
	memprof=$2/memprof
	lib=$2/.libs/libmemprof.so.0
	gdbext=$2/gdbext/memprof.py
	rm -rf "$out" && mkdir -p "$out"
	: >"$out/index"
	log "running $1 ($2)"
	SECONDS=0
	cli_cases
	log "$1: CLI commands in $SECONDS s"
	SECONDS=0
	gdb_cases
	log "$1: gdb commands in $SECONDS s"
	rm -rf "$run"
}

# ---------------------------------------------------------------------------------------------------------------
# Comparing

# compare.py does the comparing (a few processes per case would take longer than the commands); the trace-time
# masks apply only to the targets whose clock memprof converts.
compare_builds() {
	local s rc
	for s in "${not_made[@]}"; do echo "not made: $s"; done
	echo "outputs: $work/out/old $work/out/new ($(($(date +%s) - started)) s so far)"
	python3 "$here/compare.py" "$work/out" "$here/renamed.txt" "$cpp_targets $job_targets job-debian-no-sysroot live"
	rc=$?
	[ $rc -eq 0 ] || return $rc
	# fewer targets, fewer commands: not the comparison asked for
	[ ${#not_made[@]} -eq 0 ] || { echo "incomplete: ${#not_made[@]} target(s) not made"; return 2; }
}

make_targets
run_build old "$old_build"
run_build new "$new_build"
stop_live
compare_builds
exit $?

# lib.sh - sourced by the gdb tests: where memprof, its library, its gdb script and gdb are, and counters.
#
# Env: MEMPROF (the CLI; its build directory holds .libs/libmemprof.so.0 and gdbext/memprof.py), MEMPROF_GDB (the
# gdb to test, default gdb: cuda-gdb works the same), MEMPROF_LIBRARY and MEMPROF_GDB_SCRIPT (override the
# library and the script), MEMPROF_GDB_VARIANTS / MEMPROF_GDB_SCENARIOS (what commands.sh runs).
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables for the scripts that source this
gdb_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/check.sh
. "$gdb_here/../lib/check.sh"
top=$(cd "$gdb_here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
builddir=$(cd "$(dirname "$memprof")" && pwd)
gdbext=${MEMPROF_GDB_SCRIPT:-$builddir/gdbext/memprof.py}
export MEMPROF_LIBRARY=${MEMPROF_LIBRARY:-$builddir/.libs/libmemprof.so.0}
gdb=${MEMPROF_GDB:-gdb}
# The sanitizer pass builds libmemprof with ASan/UBSan, whose runtime must be loaded first; gdb itself
# deadlocks at start under that runtime (a futex wait before its first command, gdb 13.1), so these tests
# run in the plain pass only. tests/session/walk.sh drives the same session code under the sanitizers.
# (ldd's output is read whole: `ldd | grep -q` under pipefail fails when grep stops reading first.)
if [[ $(ldd "$MEMPROF_LIBRARY" 2>/dev/null) == *libasan.so* ]]; then
	not_run "gdb cannot host the sanitizer build's libmemprof (gdb hangs under the ASan runtime);" \
		"the plain pass runs this test, tests/session/walk.sh covers the session under ASan"
fi
helpers=$gdb_here/helpers.py
target=$top/tests/testbed/target.sh
all_variants=$("$target" --list c10-variants)
all_scenarios=$("$target" --list scenarios)
compare=$top/tests/walker/compare_truth.py

# Skip (77) where there is nothing to test with.
command -v "$gdb" >/dev/null || not_run "no $gdb"
"$gdb" -nx -batch -ex 'python print("py")' 2>/dev/null | grep -qx py || not_run "$gdb has no Python"
[ -f "$gdbext" ] || not_run "no $gdbext (make builds it)"
[ -e "$MEMPROF_LIBRARY" ] || not_run "no $MEMPROF_LIBRARY"

# A scratch directory, $work, removed at exit after every live driver that target.sh left in it is stopped.
scratch_cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$target" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	rm -rf "$work"
}
scratch() { # NAME
	work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	trap scratch_cleanup EXIT
}

# gdb in batch mode with memprof's commands and the test helpers loaded; extra arguments follow.
mgdb() {
	"$gdb" -nx -batch -iex 'set pagination off' -iex 'set confirm off' -iex 'set width 0' \
		-ex "source $gdbext" -ex "source $helpers" "$@"
}

# memprof-gdb, the launcher that keeps gdb from reading the libraries' symbols, on this build's command set.
launcher() {
	MEMPROF_GDB=$gdb MEMPROF_GDB_SCRIPT=$gdbext "$builddir/memprof-gdb" -nx -batch -iex 'set pagination off' \
		-iex 'set confirm off' -iex 'set width 0' "$@"
}

# A check that two outputs are the same and not empty; on failure, their errors (FILE.err) and the diff.
same() { # LABEL A B
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		ok "$1"
	else
		bad "$1"
		for f in "$2" "$3"; do [ -s "$f.err" ] && sed 's/^/    error: /' "$f.err"; done
		diff "$2" "$3" 2>&1 | head -6 | sed 's/^/    /'
	fi
}

# Whether a file holds exactly one line and no Python traceback.
one_line() { # FILE
	[ -s "$1" ] && [ "$(wc -l <"$1")" -eq 1 ] && ! grep -q 'Traceback\|Python Exception' "$1"
}

# The driver of a test bed variant (built or reused) and, for debian-2.6, the loader it runs under.
driver_of() { # VARIANT -> sets driver, loader, libpath
	local c10
	c10=$("$top/tests/testbed/c10/build.sh" "$1" 2>/dev/null) || return 1
	driver=$(MEMPROF_C10_DIR=$c10 "$top/tests/testbed/scenarios/run.sh" --driver 2>/dev/null) || return 1
	loader='' libpath=''
	if [ -f "$(dirname "$driver")/driver.env" ]; then
		# shellcheck source=/dev/null
		loader=$(DRIVER_LOADER='' && . "$(dirname "$driver")/driver.env" && echo "$DRIVER_LOADER")
		# shellcheck source=/dev/null
		libpath=$(DRIVER_LIBRARY_PATH='' && . "$(dirname "$driver")/driver.env" && echo "$DRIVER_LIBRARY_PATH")
	fi
}

# The layout a variant needs (a stripped mutant: its DWARF twin's, tests/walker/twin_layout.sh): sets $layout (a
# file or empty) and $largs (the CLI's --layout arguments); fails, counted, when it could not be made.
variant_layout() { # VARIANT
	largs=()
	if ! layout=$("$top/tests/walker/twin_layout.sh" "$1" "$work/layouts/$1"); then
		bad "$1: no layout from its DWARF twin: $(cat "$work/layouts/$1"/*.err 2>/dev/null | tail -1)"
		return 1
	fi
	[ -z "$layout" ] || largs=(--layout "$layout")
}

# gdb's `set memprof layout` line for $layout (nothing when it is empty).
layout_setting() {
	[ -z "$layout" ] || echo "set memprof layout $layout"
}

# The CLI on the variant's layout.
cli() { # COMMAND TARGET ARGS...
	"$memprof" "$@" "${largs[@]}"
}

# A snapshot memprof saved (JSON) against the allocator's own snapshot() at that stop (compare_truth.py).
saved_equals_truth() { # LABEL TRUTH SAVED [ERRFILE: the save command's error, shown on failure] [COMPARE ARGS...]
	local out=$3.compare label=$1 truth=$2 saved=$3 err=${4:-/dev/null}
	shift $(($# < 4 ? $# : 4))
	set -- "$label" "$truth" "$saved" "$err" "$@"
	if [ -s "$3" ] && python3 "$compare" --ring-max truth "${@:5}" "$2" "$3" >"$out" 2>&1; then
		ok "$1 == the allocator's snapshot() ($(grep -m1 '^segments' "$out" | sed 's/^segments: *//'))"
	else
		bad "$1 differs from the allocator's snapshot(): $(head -c 200 "${4:-/dev/null}" 2>/dev/null)"
		head -10 "$out" 2>/dev/null | sed 's/^/    /'
	fi
}

# Whether gdb can start VARIANT's driver and stop it at memprof_checkpoint(): not debian-2.6, whose driver runs under
# trixie's loader, where gdb has no symbols of it. Sets what driver_of and variant_layout set; says why not.
stoppable_variant() { # VARIANT
	driver_of "$1" || { bad "$1: the test bed gives no driver"; return 1; }
	if [ -n "$loader" ]; then
		echo "not run: $1: its driver runs under $loader (gdb has no symbols of it to stop at)"
		return 1
	fi
	variant_layout "$1"
}

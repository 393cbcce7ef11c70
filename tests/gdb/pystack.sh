#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# pystack.sh - `memprof pystack` in gdb on real PyTorch jobs (tests/testbed/jobs: PyPI's torch 2.14.1 under
# CPython 3.11, Debian's 2.6 under CPython 3.13 chrooted), against the dump of every thread the job's checkpoint
# wrote from the line it parks or aborts on (threads-stop.txt; tests/python/threads_compare.py compares):
#   - gdb attached to the `hung` job's python process: `memprof pystack` (plain and --format json) equals the
#     dump, and prints what the CLI's `memprof pystack --pid` prints;
#   - gdb on the gcore it took of that process: the same;
#   - gdb on the kernel core of the `oom` job (aborted inside `except torch.OutOfMemoryError`): equals the dump,
#     the main thread handling that error with the job's message.
# Prints one line per check and "N passed, M failed".
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

job=$top/tests/testbed/job.sh
run=$top/tests/testbed/jobs/run.sh
compare=$top/tests/python/threads_compare.py
builds=${MEMPROF_GDB_JOB_BUILDS:-$("$job" --list)}
scratch memprof-gdb-pystack
jobs_cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$job" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap jobs_cleanup EXIT

# gdb's pystack output in DIR/NAME.txt and DIR/NAME.json against DIR/threads-stop.txt.
equals_dump() { # LABEL DIR NAME [--exception TYPE:MESSAGE]
	local out
	if [ -s "$2/$3.err" ] || [ ! -s "$2/$3.json" ]; then
		bad "$1: $(cat "$2/$3.err" "$2/$3.json.err" 2>/dev/null | head -1)"
	elif out=$(python3 "$compare" "$2/threads-stop.txt" "$2/$3.json" "$2/$3.txt" "${@:4}"); then
		ok "$1: $out"
	else
		bad "$1: $out"
	fi
}

# Start scenario SCENARIO of BUILD in MODE into DIR (its variables sourced); false (counted) when it failed.
start_job() { # LABEL SCENARIO BUILD MODE DIR
	local rc
	mkdir -p "$5"
	"$run" "$2" "$3" "$4" "$5" >"$5/job.vars" 2>"$5/job.log"
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "not run: $1: $(tail -1 "$5/job.log")"
		return 1
	elif [ $rc -ne 0 ]; then
		bad "$1: the job failed: $(grep -v 'note:' "$5/job.log" | tail -2 | tr '\n' ' ')"
		return 1
	fi
	unset PID SYSROOT PYTHON CORE
	# shellcheck source=/dev/null
	. "$5/job.vars"
}

pystack_commands() { # DIR NAME
	cat <<-GDB
		mp-capture $1/$2.txt memprof pystack
		mp-capture $1/$2.json memprof pystack --format json
	GDB
}

for build in $builds; do
	# --- attached to the live python process, then on its gcore
	dir=$work/$build/live
	label=$build/hung/live
	if start_job "$label" hung "$build" live "$dir"; then
		{ pystack_commands "$dir" live; echo "gcore $dir/core"; } >"$dir/live.gdb"
		mgdb -iex 'set auto-solib-add off' -p "$PID" -x "$dir/live.gdb" -ex detach >"$dir/gdb.out" 2>&1
		"$memprof" pystack --pid "$PID" >"$dir/cli.txt" 2>"$dir/cli.err"
		"$job" --stop "$dir" >/dev/null 2>&1
		grep -q 'Traceback\|Python Exception' "$dir/gdb.out" && bad "$label: a Python traceback in gdb's output"
		equals_dump "$label: gdb's memprof pystack == the job's dump" "$dir" live
		same "$label: gdb's memprof pystack == memprof pystack --pid" "$dir/live.txt" "$dir/cli.txt"
		if [ -s "$dir/core" ]; then
			{ [ -z "$SYSROOT" ] || echo "set sysroot $SYSROOT"; pystack_commands "$dir" core; } >"$dir/core.gdb"
			mgdb -iex 'set auto-solib-add off' -x "$dir/core.gdb" "$SYSROOT$PYTHON" "$dir/core" >"$dir/gdb-core.out" 2>&1
			equals_dump "$label: gdb on its gcore: memprof pystack == the job's dump" "$dir" core
			same "$label: gdb on its gcore: memprof pystack == live" "$dir/core.txt" "$dir/live.txt"
			rm -f "$dir/core"
		else
			bad "$label: gdb wrote no gcore: $(tail -2 "$dir/gdb.out" | tr '\n' ' ')"
		fi
	fi

	# --- gdb on the kernel core of a job that aborted while handling torch.OutOfMemoryError
	dir=$work/$build/kernel
	label=$build/oom/kernel
	if start_job "$label" oom "$build" kernel "$dir"; then
		{ [ -z "$SYSROOT" ] || echo "set sysroot $SYSROOT"; pystack_commands "$dir" core; } >"$dir/core.gdb"
		mgdb -iex 'set auto-solib-add off' -x "$dir/core.gdb" "$SYSROOT$PYTHON" "$CORE" >"$dir/gdb-core.out" 2>&1
		msg=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["oom_message"])' "$dir/notes.json")
		equals_dump "$label: gdb on the kernel core: memprof pystack == the job's dump" "$dir" core \
			--exception "torch.OutOfMemoryError:$msg"
		rm -f "$CORE"
	fi
done
finish

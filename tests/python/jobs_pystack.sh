#!/usr/bin/env bash
# jobs_pystack.sh - `memprof pystack` on real PyTorch jobs (tests/testbed/jobs: PyPI's torch 2.14.1 under CPython
# 3.11, Debian's 2.6 under CPython 3.13 chrooted). Where a job parks (live, gcore) or aborts (kernel), its
# checkpoint writes threads-stop.txt: faulthandler's dump of every thread from the line it then waits or aborts
# on. memprof's stacks of the live process (--pid, and --pid --stop), of its gcore core and of its kernel core
# must equal that dump (threads_compare.py); in the `oom` job the main thread must be handling the
# OutOfMemoryError whose message the job noted; in a kernel core the thread that aborted must hold the GIL.
# MEMPROF_PYSTACK_JOB_BUILDS (default every build of job.sh --list), MEMPROF_PYSTACK_JOB_RUNS (SCENARIO:MODE
# words, default below). Exit 0 when every one agrees, 1 on a difference, 77 when no job could run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
testbed=$top/tests/testbed
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "jobs_pystack: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
builds=${MEMPROF_PYSTACK_JOB_BUILDS:-$("$testbed/job.sh" --list)}
runs=${MEMPROF_PYSTACK_JOB_RUNS:-"hung:live hung:gcore hung:kernel oom:kernel"}
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
ran=0
work=$(mktemp -d /tmp/memprof-jobs-pystack.XXXXXX)
cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$testbed/job.sh" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap cleanup EXIT

# check LABEL DIR SCENARIO ARGS...: memprof pystack ARGS (json and plain) against DIR/threads-stop.txt.
check() {
	local label=$1 dir=$2 scenario=$3 out exc=() msg
	shift 3
	if ! "$memprof" pystack "$@" --format json >"$dir/mp.json" 2>"$dir/mp.err" ||
		! "$memprof" pystack "$@" >"$dir/mp.txt" 2>>"$dir/mp.err"; then
		bad "$label: $(tail -1 "$dir/mp.err")"; return
	fi
	# the chrooted jobs map stub libraries (nvstubs) from a bind mount that the host does not see: not the reader's
	if grep -v "warning: mapped file '.*' not found here" "$dir/mp.err" >"$dir/mp.warn"; then
		bad "$label: memprof warned: $(head -1 "$dir/mp.warn")"; return
	fi
	# a process that aborts from Python code holds the GIL as it dies
	[ "$mode" = kernel ] && exc+=(--gil-current)
	if [ "$scenario" = oom ]; then
		msg=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["oom_message"])' "$dir/notes.json")
		exc+=(--exception "torch.OutOfMemoryError:$msg")
	fi
	if out=$(python3 "$here/threads_compare.py" "$dir/threads-stop.txt" "$dir/mp.json" "$dir/mp.txt" "${exc[@]}"); then
		ok "$label: $out"
	else
		bad "$label: $out"
	fi
}

for build in $builds; do
	for run in $runs; do
		scenario=${run%%:*} mode=${run#*:}
		label=$build/$scenario/$mode
		dir=$work/$build-$scenario-$mode
		mkdir -p "$dir"
		"$testbed/jobs/run.sh" "$scenario" "$build" "$mode" "$dir" >"$dir/job.vars" 2>"$dir/job.log"
		rc=$?
		if [ $rc -eq 77 ]; then
			echo "not run: $label: $(tail -1 "$dir/job.log")"
			continue
		elif [ $rc -ne 0 ]; then
			ran=$((ran + 1))
			bad "$label: the job failed: $(grep -v '^testbed/job: note' "$dir/job.log" | tail -3 | tr '\n' ' ')"
			continue
		fi
		ran=$((ran + 1))
		unset CORE PID SYSROOT
		# shellcheck source=/dev/null
		. "$dir/job.vars"
		if [ ! -s "$dir/threads-stop.txt" ]; then
			bad "$label: the job wrote no threads-stop.txt"
			continue
		fi
		case $mode in
		live)
			check "$label" "$dir" "$scenario" --pid "$PID"
			check "$label --stop" "$dir" "$scenario" --pid "$PID" --stop
			"$testbed/job.sh" --stop "$dir" >/dev/null 2>&1
			;;
		gcore) check "$label" "$dir" "$scenario" "$CORE" ;;
		kernel)
			# a chrooted job's kernel core names its files as the job saw them
			if [ -n "${SYSROOT:-}" ]; then
				check "$label" "$dir" "$scenario" "$CORE" --sysroot "$SYSROOT"
			else
				check "$label" "$dir" "$scenario" "$CORE"
			fi
			;;
		esac
		rm -f "$dir/core" # a gcore of a whole PyTorch is about 2 GB: one at a time on the disk
	done
done
[ "$ran" -gt 0 ] || { finish; exit 77; }
finish

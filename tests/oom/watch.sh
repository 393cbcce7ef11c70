#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# watch.sh - `memprof watch --pid` (src/watch: ptrace and a hardware breakpoint, no debugger) on real PyTorch jobs
# that run out of memory (tests/testbed/jobs/oom_causes.py on the fake device: PyPI's stripped 2.14.1 wheel and
# Debian's 2.6, chrooted: --sysroot), attached while the job waits just before its failing request.
#   - the job first throws a c10::Error that is no OOM: the watch lets it through;
#   - at the c10::OutOfMemoryError the watch writes the explanation (found from the C++ exception's message: the
#     numbers PyTorch's own message printed, the cause first; tests/oom/check.py), the snapshot pickle and the
#     Python stacks, and lets the job go on: it catches its torch.OutOfMemoryError itself and ends normally;
#   - a watch stopped by Ctrl-C before any OOM leaves the job to throw and catch its errors as if never watched
#     (its debug registers cleared: a breakpoint left armed would kill it with SIGTRAP).
# Default: the fragmentation job; MEMPROF_OOM_FULL=1 (make check-oom): every cause. Env: MEMPROF,
# MEMPROF_OOM_JOB_BUILDS (default: every build of job.sh --list), MEMPROF_TESTBED_SKIP=1 (77), KEEP=1 (the scratch
# directory stays). Prints one line per check and "N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "oom/watch: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-oom-watch.XXXXXX")
# shellcheck source=tests/oom/at_throw.sh
. "$here/at_throw.sh"
cleanup() {
	oom_stop_jobs
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

watched() { # LABEL DIR PID SYSROOT CAUSE
	local at=$1 dir=$2 pid=$3 sysroot=$4
	( sleep 3; touch "$dir/RESUME" ) &
	timeout 300 "$memprof" watch --pid "$pid" -o "$dir/out" --format json ${sysroot:+--sysroot "$sysroot"} \
		>"$dir/watch.out" 2>"$dir/watch.err"
	wait
	oom_check_files "$at" "$dir/out" "$dir" "$5"
	grep -q "^caught: CUDA out of memory" "$dir/job.out" 2>/dev/null && grep -q "the job ended; 1 OOM$" "$dir/watch.out" &&
		ok "$at: the job went on past a c10::Error and its OOM, and ended ($(cat "$dir/out/oom-1.pause" 2>/dev/null)s paused)" ||
		bad "$at: the job did not go on: $(tail -2 "$dir/watch.out" "$dir/watch.err" "$dir/job.out" 2>/dev/null | tr '\n' ' ')"
}
oom_each_job watched

# --- stopped before any OOM
build=${oom_builds%% *}
dir=$work/$build/stopped
mkdir -p "$dir"
if pid=$(oom_start "$build" "$dir" fragmentation); then
	sysroot=$(cat "$dir/sysroot")
	"$memprof" watch --pid "$pid" -o "$dir/out" ${sysroot:+--sysroot "$sysroot"} >"$dir/watch.out" 2>"$dir/watch.err" &
	watcher=$!
	sleep 3
	kill -INT "$watcher"
	wait "$watcher"
	rc=$?
	touch "$dir/RESUME"
	for _ in $(seq 300); do [ -f "$dir/oom_message.txt" ] && break; sleep 0.1; done
	[ "$rc" = 0 ] && grep -q "stopped watching; 0 OOMs" "$dir/watch.out" && [ -f "$dir/oom_message.txt" ] &&
		[ ! -e "$dir/out/oom-1.pause" ] &&
		ok "$build/stopped: Ctrl-C detached; the job then threw and caught its errors unwatched" ||
		bad "$build/stopped: rc $rc, $(tr '\n' ' ' <"$dir/watch.out") $(tail -2 "$dir/job.err" | tr '\n' ' ')"
else
	bad "$build/stopped: the job failed: $(tail -2 "$dir/job.log" | tr '\n' ' ')"
fi

# --- what cannot be watched: one line each
"$memprof" watch --pid 999999999 >"$work/none.out" 2>"$work/none.err"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$work/none.err")" = 1 ] && ok "no such process: exit 2, one line ($(cat "$work/none.err"))" ||
	bad "no such process: exit $rc: $(cat "$work/none.err")"
sleep 60 &
sleeper=$!
"$memprof" watch --pid "$sleeper" >"$work/sleep.out" 2>"$work/sleep.err"
rc=$?
kill "$sleeper" 2>/dev/null
[ "$rc" = 2 ] && grep -q "libstdc++" "$work/sleep.err" && ok "a process without libstdc++: exit 2 ($(cat "$work/sleep.err"))" ||
	bad "a process without libstdc++: exit $rc: $(cat "$work/sleep.err")"
finish

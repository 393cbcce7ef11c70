#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# catch_oom.sh - gdb's `memprof catch oom` on real PyTorch jobs that run out of memory (tests/testbed/jobs/
# oom_causes.py on the fake device: PyPI's stripped 2.14.1 wheel, and Debian's 2.6 chrooted, whose libraries gdb
# finds through `set sysroot` once it is given the interpreter), attached while the job waits just before its
# failing request. The job first throws a c10::Error that is no OOM, which must not stop it; gdb stops in
# __cxa_throw at the c10::OutOfMemoryError, before anything unwinds; the explanation written there finds the OOM
# from the C++ exception's message, computes the numbers PyTorch's own message printed and names the cause first
# (tests/oom/check.py); the snapshot pickle and the Python stacks are written; with --continue the job goes on. (`memprof watch`, which needs no
# gdb: tests/oom/watch.sh.)
# Default: the fragmentation job; MEMPROF_OOM_FULL=1 (make check-oom): every cause. Env as lib.sh;
# MEMPROF_OOM_JOB_BUILDS (default: every build of job.sh --list). Prints one line per check and "N passed, M failed".
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"
scratch memprof-gdb-catch-oom
# shellcheck source=tests/oom/at_throw.sh
. "$top/tests/oom/at_throw.sh"
cleanup() {
	oom_stop_jobs
	rm -rf "$work"
}
trap cleanup EXIT

# The first job stops at its OOM (gdb is left in __cxa_throw), under memprof-gdb (no library's symbols read but
# libstdc++'s, which the catch reads itself); the others run with --continue under plain gdb (the report, then the
# job goes on to its end; the pause it stood is written) after a word the command refuses.
jobs_seen=0
caught() { # LABEL DIR PID SYSROOT CAUSE
	local at=$1 dir=$2 pid=$3 sysroot=$4 mode=stop
	jobs_seen=$((jobs_seen + 1))
	[ "$jobs_seen" -gt 1 ] && mode=continue
	# a chrooted job: gdb reads its libraries under the root, and needs the interpreter named to find them
	if [ "$mode" = stop ]; then
		launcher ${sysroot:+-iex "set sysroot $sysroot"} ${sysroot:+"$sysroot$(cat "$dir/python")"} \
			-p "$pid" -ex "memprof catch oom -o $dir/out --format json" \
			-ex "shell touch $dir/RESUME" -ex continue -ex "info registers rip" -ex "bt 3" -ex detach \
			>"$dir/gdb.out" 2>"$dir/gdb.err"
		grep -q "c10::OutOfMemoryError thrown (#1)" "$dir/gdb.out" && grep -q "__cxa_throw" "$dir/gdb.out" &&
			ok "$at: gdb stopped in __cxa_throw at the c10::OutOfMemoryError" ||
			bad "$at: no stop at the OOM: $(tail -3 "$dir/gdb.out" "$dir/gdb.err" | tr '\n' ' ')"
	else
		"$gdb" -nx -batch ${sysroot:+-iex "set sysroot $sysroot"} ${sysroot:+"$sysroot$(cat "$dir/python")"} \
			-p "$pid" -ex "source $gdbext" -ex "memprof catch oom sometimes" \
			-ex "memprof catch oom -o $dir/out --format json --continue" \
			-ex "shell touch $dir/RESUME" -ex continue >"$dir/gdb.out" 2>"$dir/gdb.err"
		grep -q "catch oom: 'sometimes': say off" "$dir/gdb.err" &&
			grep -q "c10::OutOfMemoryError thrown (#1)" "$dir/gdb.out" &&
			grep -q "wrote $dir/out/oom-1.{json,pickle,pystack.txt}" "$dir/gdb.out" &&
			grep -Eq "exited (normally|with code)" "$dir/gdb.out" && grep -Eq '^[0-9.]+$' "$dir/out/oom-1.pause" &&
			ok "$at: --continue reported the OOM, the job went on to its end ($(cat "$dir/out/oom-1.pause")s paused)" ||
			bad "$at: --continue: $(tail -3 "$dir/gdb.out" "$dir/gdb.err" | tr '\n' ' ')"
	fi
	oom_check_files "$at" "$dir/out" "$dir" "$5"
}
oom_each_job caught
finish

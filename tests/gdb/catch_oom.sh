#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# catch_oom.sh - gdb's `memprof catch oom` and the CLI's `memprof watch` on a real PyTorch job that runs out of
# memory (tests/testbed/jobs/oom_causes.py --cause fragmentation on the fake device: PyPI's stripped 2.14.1 wheel,
# Debian's 2.6 chrooted, whose libraries gdb finds through `set sysroot`), attached while the job waits just
# before its failing request.
#   - catch: gdb stops at the c10::OutOfMemoryError (before anything unwinds); the explanation written then
#     finds the OOM from the C++ exception's message, computes the numbers PyTorch's own message printed and
#     names fragmentation first (tests/oom/check.py); the snapshot pickle and the Python stacks are written;
#   - watch: `memprof watch --pid` (ptrace and a hardware breakpoint, no gdb) keeps the same files and lets the job
#     go on: the job then catches its torch.OutOfMemoryError itself and ends normally; the pause it suffered is
#     reported. Before the OOM the job throws a c10::Error that both must let through;
#   - watch stopped by Ctrl-C before any OOM leaves the job to throw and catch its errors as if never watched.
# Default: the fragmentation job; MEMPROF_OOM_FULL=1 (make check-oom): every cause of tests/oom/jobs.sh.
# Env as lib.sh; MEMPROF_GDB_JOB_BUILDS (default: every build of job.sh --list); KEEP=1 leaves the scratch
# directory. Prints one line per check and "N passed, M failed".
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

job=$top/tests/testbed/job.sh
script=$top/tests/testbed/jobs/oom_causes.py
builds=${MEMPROF_GDB_JOB_BUILDS:-$("$job" --list)}
scratch memprof-gdb-catch-oom
cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$job" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap cleanup EXIT
[ -z "${KEEP:-}" ] || trap - EXIT

causes=fragmentation
[ "${MEMPROF_OOM_FULL:-0}" = 1 ] && causes="full fragmentation oversize other_stream private_pool pending_free"

# The job waiting before its request: DIR, then the job's pid on stdout.
start() { # BUILD DIR CAUSE
	"$job" "$1" "$script" live "$2" --cause "$3" --checkpoint-before-oom >"$2/job.vars" 2>"$2/job.log" || return 1
	cat "$2/pid"
}

# The files of the Nth OOM in DIR against the job's message (its oom_message.txt once it has ended).
check_files() { # LABEL DIR JOBDIR CAUSE
	local label=$1 dir=$2 jobdir=$3 cause=$4
	for _ in $(seq 100); do [ -f "$jobdir/oom_message.txt" ] && break; sleep 0.1; done
	python3 -c 'import json, sys; json.dump({"oom_message": open(sys.argv[1]).read()}, open(sys.argv[2], "w"))' \
		"$jobdir/oom_message.txt" "$dir/notes.json" 2>/dev/null || { bad "$label: the job wrote no OOM message"; return; }
	python3 "$top/tests/oom/check.py" "$dir/oom-1.json" "$dir/notes.json" "$cause" >/dev/null 2>"$dir/check.err" &&
		grep -Eq '"source":[[:space:]]*"exception"' "$dir/oom-1.json" &&
		ok "$label: the explanation at the throw (from the C++ exception): PyTorch's numbers, the cause first" ||
		bad "$label: $(tr '\n' ' ' <"$dir/check.err") $(head -c 300 "$dir/oom-1.json")"
	python3 -c 'import pickle, sys; s = pickle.load(open(sys.argv[1], "rb")); sys.exit(0 if s["segments"] else 1)' \
		"$dir/oom-1.pickle" 2>/dev/null && grep -q "oom_causes.py" "$dir/oom-1.pystack.txt" &&
		ok "$label: the snapshot pickle and the Python stacks (in oom_causes.py) were written" ||
		bad "$label: no snapshot pickle or no Python stack in $dir"
}

for build in $builds; do
for cause in $causes; do
	# only 2.6 keeps pending frees at an OOM (inside a MemPool it skips the retry)
	[ "$cause" = pending_free ] && [ "$build" != debian-2.6 ] && continue
	at=$build/$cause
	# --- gdb: memprof catch oom stops the job at the throw
	dir=$work/$at/catch
	mkdir -p "$dir/out"
	if ! pid=$(start "$build" "$dir" "$cause"); then
		bad "$at/catch: the job failed: $(tail -2 "$dir/job.log" | tr '\n' ' ')"
		continue
	fi
	# a chrooted job: gdb reads its libraries under the root, and needs the interpreter named to find them
	sysroot=$(cat "$dir/sysroot")
	"$gdb" -nx -batch ${sysroot:+-iex "set sysroot $sysroot"} ${sysroot:+"$sysroot$(cat "$dir/python")"} -p "$pid" \
		-ex "source $gdbext" \
		-ex "memprof catch oom -o $dir/out --format json" \
		-ex "shell touch $dir/RESUME" -ex continue -ex "info registers rip" -ex "bt 3" -ex detach \
		>"$dir/gdb.out" 2>"$dir/gdb.err"
	grep -q "c10::OutOfMemoryError thrown (#1)" "$dir/gdb.out" && grep -q "__cxa_throw" "$dir/gdb.out" &&
		ok "$at/catch: gdb stopped in __cxa_throw at the c10::OutOfMemoryError" ||
		bad "$at/catch: no stop at the OOM: $(tail -3 "$dir/gdb.out" "$dir/gdb.err" | tr '\n' ' ')"
	check_files "$at/catch" "$dir/out" "$dir" "$cause"

	# --- the shell: memprof watch lets the job go on
	dir=$work/$at/watch
	mkdir -p "$dir"
	if ! pid=$(start "$build" "$dir" "$cause"); then
		bad "$at/watch: the job failed: $(tail -2 "$dir/job.log" | tr '\n' ' ')"
		continue
	fi
	( sleep 3; touch "$dir/RESUME" ) &
	sysroot=$(cat "$dir/sysroot")
	timeout 300 "$memprof" watch --pid "$pid" -o "$dir/out" \
		--format json ${sysroot:+--sysroot "$sysroot"} >"$dir/watch.out" 2>"$dir/watch.err"
	wait
	check_files "$at/watch" "$dir/out" "$dir" "$cause"
	grep -q "^caught: CUDA out of memory" "$dir/job.out" 2>/dev/null &&
		ok "$at/watch: the job went on, caught its OutOfMemoryError and ended ($(cat "$dir/out/oom-1.pause" 2>/dev/null)s paused)" ||
		bad "$at/watch: the job did not go on: $(tail -2 "$dir/watch.err" "$dir/job.out" 2>/dev/null | tr '\n' ' ')"
done
done

# --- memprof watch stopped (SIGINT) before any OOM: the job is let go with its debug registers cleared, so its
# next C++ throws (the c10::Error first, then the OOM) do not kill it with SIGTRAP
build=${builds%% *}
dir=$work/$build/watch-stopped
mkdir -p "$dir"
if pid=$(start "$build" "$dir" fragmentation); then
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
		ok "$build/watch-stopped: Ctrl-C detached; the job then threw and caught its errors unwatched" ||
		bad "$build/watch-stopped: rc $rc, $(tr '\n' ' ' <"$dir/watch.out") $(tail -2 "$dir/job.err" | tr '\n' ' ')"
else
	bad "$build/watch-stopped: the job failed: $(tail -2 "$dir/job.log" | tr '\n' ' ')"
fi
finish

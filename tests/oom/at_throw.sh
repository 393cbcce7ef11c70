# at_throw.sh - sourced by tests/gdb/catch_oom.sh and tests/oom/watch.sh: the oom_causes.py job held just before its
# failing request (it waits at --checkpoint-before-oom, then throws a c10::Error that is no OOM, then the OOM),
# and the check of what a report made at the throw wrote. Needs: top, ok, bad, work.
# shellcheck shell=bash
oom_job=$top/tests/testbed/job.sh
oom_script=$top/tests/testbed/jobs/oom_causes.py
oom_builds=${MEMPROF_OOM_JOB_BUILDS:-$("$oom_job" --list)}
oom_causes=fragmentation
[ "${MEMPROF_OOM_FULL:-0}" = 1 ] && oom_causes="full fragmentation oversize other_stream private_pool pending_free"

# Whether CAUSE runs out of memory on BUILD: only 2.6 keeps pending frees at an OOM (inside a MemPool it skips
# the retry).
oom_runs_on() { # BUILD CAUSE
	[ "$2" != pending_free ] || [ "$1" = debian-2.6 ]
}

# Stop the live jobs left in $work.
oom_stop_jobs() {
	local p
	find "$work" -name pid | while read -r p; do "$oom_job" --stop "$(dirname "$p")" >/dev/null 2>&1; done
}

# For each build and cause: the job started, waiting in $work/BUILD/CAUSE, then FN LABEL DIR PID SYSROOT CAUSE
# (SYSROOT: the root of a chrooted job, else empty).
oom_each_job() { # FN
	local build cause at dir pid
	for build in $oom_builds; do
		for cause in $oom_causes; do
			oom_runs_on "$build" "$cause" || continue
			at=$build/$cause
			dir=$work/$at
			mkdir -p "$dir/out"
			if ! pid=$(oom_start "$build" "$dir" "$cause"); then
				bad "$at: the job failed: $(tail -2 "$dir/job.log" | tr '\n' ' ')"
				continue
			fi
			"$1" "$at" "$dir" "$pid" "$(cat "$dir/sysroot")" "$cause"
		done
	done
}

# The job waiting before its request in DIR; prints its pid.
oom_start() { # BUILD DIR CAUSE
	"$oom_job" "$1" "$oom_script" live "$2" --cause "$3" --checkpoint-before-oom >"$2/job.vars" 2>"$2/job.log" ||
		return 1
	cat "$2/pid"
}

# The files of the first OOM in DIR (oom-1.json, .pickle, .pystack.txt) against the job's own message (its
# oom_message.txt in JOBDIR once it has caught the error).
oom_check_files() { # LABEL DIR JOBDIR CAUSE
	local label=$1 dir=$2 jobdir=$3 cause=$4
	for _ in $(seq 100); do [ -f "$jobdir/oom_message.txt" ] && break; sleep 0.1; done
	python3 -c 'import json, sys; json.dump({"oom_message": open(sys.argv[1]).read()}, open(sys.argv[2], "w"))' \
		"$jobdir/oom_message.txt" "$dir/notes.json" 2>/dev/null || { bad "$label: the job wrote no OOM message"; return; }
	python3 "$top/tests/oom/check.py" "$dir/oom-1.json" "$dir/notes.json" "$cause" >/dev/null 2>"$dir/check.err" &&
		grep -Eq '"source":[[:space:]]*"exception"' "$dir/oom-1.json" &&
		ok "$label: the explanation at the throw (from the C++ exception): PyTorch's numbers, the cause first" ||
		bad "$label: $(tr '\n' ' ' <"$dir/check.err") $(head -c 300 "$dir/oom-1.json" 2>/dev/null)"
	python3 -c 'import pickle, sys; s = pickle.load(open(sys.argv[1], "rb")); sys.exit(0 if s["segments"] else 1)' \
		"$dir/oom-1.pickle" 2>/dev/null && grep -q "oom_causes.py" "$dir/oom-1.pystack.txt" &&
		ok "$label: the snapshot pickle and the Python stacks (in oom_causes.py) were written" ||
		bad "$label: no snapshot pickle or no Python stack in $dir"
}

#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# jobs.sh - the memprof gdb commands on real PyTorch Python jobs (tests/testbed/job.sh: PyPI's torch 2.14.1 under
# CPython 3.11, Debian's 2.6 under CPython 3.13, chrooted), attached to the python process and on its cores.
#
# For each build (MEMPROF_GDB_JOB_BUILDS, default every build of job.sh --list): the `history` job (a transformer
# training step with _record_memory_history) waits at its checkpoint; gdb attaches to the python process and runs
# `memprof segsum`, `summary`, `blocks` and `snapshot save`, then takes a gcore. Checked:
#   - segsum equals what the build's own _memory_viz.py prints for the job's own pickle (_snapshot() in the job);
#   - the saved snapshot equals that pickle field by field (frames too), and the job's memory_stats();
#   - summary equals the CLI's `memprof summary --pid`; the commands wrote nothing to the process;
#   - gdb on that gcore (`gdb PYTHON CORE`, for the chrooted job with `set sysroot ROOT`, which the gcore's
#     paths already lie in) prints the same segsum and blocks;
#   - the `oom-uncaught` job's kernel core (the process died of torch.OutOfMemoryError): gdb on it (chrooted job:
#     `set sysroot ROOT`, since the kernel named the files as the job saw them) prints the segsum that
#     _memory_viz.py prints for that job's pickle, and `memprof snapshot save` equals the pickle.
# Prints one line per check and "N passed, M failed".
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

job=$top/tests/testbed/job.sh
run=$top/tests/testbed/jobs/run.sh
builds=${MEMPROF_GDB_JOB_BUILDS:-$("$job" --list)}
scratch memprof-gdb-jobs
# Stop the live jobs this test left (job.sh --stop), then the scratch directory goes.
jobs_cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$job" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap jobs_cleanup EXIT

# The job's truth (its pickle and memory_stats) against a snapshot memprof saved as JSON.
saved_equals_job() { # LABEL DIR SAVED: frames compared too (the jobs record PyTorch's own contexts)
	python3 "$top/tests/walker/job_truth.py" "$2" "$memprof" >"$2/truth.json" 2>"$2/truth.err"
	saved_equals_truth "$1" "$2/truth.json" "$3" "$3.err" --frames compare
}

# gdb on a core of the job: a command file with the memprof commands, output into DIR/NAME.*.
core_commands() { # DIR NAME SYSROOT
	[ -z "$3" ] || echo "set sysroot $3"
	cat <<-GDB
		mp-capture $1/$2.segsum memprof segsum
		mp-capture $1/$2.target maintenance memprof target
		mp-capture $1/$2.blocks memprof blocks
		mp-capture $1/$2.save memprof snapshot save now $1/$2.json --format json
		mp-capture $1/$2.owners memprof owners --format json
	GDB
}

for build in $builds; do
	# --- attached to the live python process
	dir=$work/$build/live
	mkdir -p "$dir"
	label=$build/history/live
	if ! "$run" history "$build" live "$dir" >"$dir/job.vars" 2>"$dir/job.log"; then
		bad "$label: the job failed: $(grep -v 'note:' "$dir/job.log" | tail -2 | tr '\n' ' ')"
		continue
	fi
	unset PID SYSROOT TORCH_LIBDIR PYTHON
	# shellcheck source=/dev/null
	. "$dir/job.vars"
	memviz=$(dirname "$TORCH_LIBDIR")/cuda/_memory_viz.py
	[ -f "$memviz" ] || memviz=$(dirname "$TORCH_LIBDIR")/python3/dist-packages/torch/cuda/_memory_viz.py
	python3 "$memviz" stats "$dir/snapshot.pickle" >"$dir/memviz.stats" 2>&1
	# gdb needs none of the libraries' symbols for memprof (which reads them itself): not loading them keeps
	# the attach to a process that maps PyTorch's gigabyte of libraries quick.
	cat >"$dir/live.gdb" <<-GDB
		mp-memsum $dir/mem.before
		mp-capture $dir/live.segsum memprof segsum
		mp-capture $dir/live.target maintenance memprof target
		mp-capture $dir/live.stats memprof summary
		mp-capture $dir/live.blocks memprof blocks
		mp-capture $dir/live.save memprof snapshot save now $dir/live.json --format json
		mp-capture $dir/live.owners memprof owners --format json
		set memprof frames off
		mp-capture $dir/live.nf memprof snapshot save now $dir/live-nf.json --format json
		set memprof frames on
		mp-memsum $dir/mem.after
		gcore $dir/core
	GDB
	mgdb -iex 'set auto-solib-add off' -p "$PID" -x "$dir/live.gdb" -ex detach >"$dir/gdb.out" 2>&1
	"$memprof" summary --pid "$PID" >"$dir/cli.summary" 2>"$dir/cli.summary.err"
	"$memprof" owners --pid "$PID" --format json >"$dir/cli.owners" 2>"$dir/cli.owners.err"
	"$job" --stop "$dir" >/dev/null 2>&1
	if grep -q 'Traceback\|Python Exception' "$dir/gdb.out"; then
		bad "$label: a Python traceback in gdb's output"
		grep -m3 -A3 'Traceback\|Python Exception' "$dir/gdb.out" | sed 's/^/    /'
	fi
	grep -q '^pid ' "$dir/live.target" || bad "$label: the target was '$(cat "$dir/live.target")', not the pid"
	same "$label: gdb's memprof segsum == the build's _memory_viz.py stats of the job's pickle" \
		"$dir/live.segsum" "$dir/memviz.stats"
	same "$label: gdb's memprof summary == memprof summary --pid" "$dir/live.stats" "$dir/cli.summary"
	same "$label: the python process's writable memory unchanged by the commands" "$dir/mem.before" "$dir/mem.after"
	saved_equals_job "$label: gdb's memprof snapshot save" "$dir" "$dir/live.json"
	# The parked job still runs its wait loop: how many objects the collector tracks may move by a few.
	for f in live.owners cli.owners; do sed 's/"objects": [0-9]*, //' "$dir/$f" >"$dir/$f.n"; done
	same "$label: gdb's memprof owners == memprof owners --pid" "$dir/live.owners.n" "$dir/cli.owners.n"
	if python3 "$top/tests/owners/check.py" "$dir" "$dir/live.owners" >"$dir/owners.check" 2>&1; then
		ok "$label: gdb's memprof owners == the job's manifest ($(tail -1 "$dir/owners.check"))"
	else
		bad "$label: gdb's memprof owners differs from the job's manifest:"
		head -8 "$dir/owners.check" | sed 's/^/    /'
	fi
	if python3 - "$dir/live-nf.json" <<-'EOF'; then
		import json, sys
		s = json.load(open(sys.argv[1]))
		lists = [x.get("frames", []) for seg in s["segments"] for x in [seg] + seg["blocks"]]
		lists += [e.get("frames", []) for tr in s["device_traces"] for e in tr]
		sys.exit(0 if lists and all(f == [] for f in lists) else 1)
	EOF
		ok "$label: after 'set memprof frames off' every frames list is empty"
	else
		bad "$label: 'set memprof frames off' left frames: $(head -c 200 "$dir/live.nf")"
	fi

	# --- gdb on the gcore it took (paths as this machine names them, inside the root for a chrooted job)
	exe=$SYSROOT$PYTHON
	if [ -s "$dir/core" ]; then
		core_commands "$dir" core "$SYSROOT" >"$dir/core.gdb"
		mgdb -iex 'set auto-solib-add off' -x "$dir/core.gdb" "$exe" "$dir/core" >"$dir/gdb-core.out" 2>&1
		grep -q "^core $dir/core\$" "$dir/core.target" || bad "$label: the gcore's target was '$(cat "$dir/core.target")'"
		same "$label: gdb on its gcore: memprof segsum == live" "$dir/core.segsum" "$dir/live.segsum"
		same "$label: gdb on its gcore: memprof blocks == live" "$dir/core.blocks" "$dir/live.blocks"
		sed 's/"objects": [0-9]*, //' "$dir/core.owners" >"$dir/core.owners.n"
		same "$label: gdb on its gcore: memprof owners == live" "$dir/core.owners.n" "$dir/live.owners.n"
		rm -f "$dir/core"
	else
		bad "$label: gdb wrote no gcore: $(tail -2 "$dir/gdb.out" | tr '\n' ' ')"
	fi

	# --- gdb on the kernel core of a job that died of an uncaught OutOfMemoryError
	dir=$work/$build/kernel
	mkdir -p "$dir"
	label=$build/oom-uncaught/kernel
	"$run" oom-uncaught "$build" kernel "$dir" >"$dir/job.vars" 2>"$dir/job.log"
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "not run: $label: $(tail -1 "$dir/job.log")"
		continue
	elif [ $rc -ne 0 ]; then
		bad "$label: the job failed: $(grep -v 'note:' "$dir/job.log" | tail -2 | tr '\n' ' ')"
		continue
	fi
	python3 "$memviz" stats "$dir/snapshot.pickle" >"$dir/memviz.stats" 2>&1
	core_commands "$dir" core "$SYSROOT" >"$dir/core.gdb"
	mgdb -iex 'set auto-solib-add off' -x "$dir/core.gdb" "$exe" "$dir/core" >"$dir/gdb-core.out" 2>&1
	same "$label: gdb on the kernel core: memprof segsum == _memory_viz.py stats of the job's pickle" \
		"$dir/core.segsum" "$dir/memviz.stats"
	saved_equals_job "$label: gdb on the kernel core: memprof snapshot save" \
		"$dir" "$dir/core.json"
	rm -f "$dir/core"
done

finish

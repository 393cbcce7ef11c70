#!/usr/bin/env bash
# gpu_check.sh OUTDIR - memprof on real jobs on a real GPU, for a machine that has one (never in CI): the walker's
# real-job tier (tests/walker/jobs.sh) on the `system` build (the machine's own python3, torch and GPU), then a real
# OOM read live (`memprof oom`, `owners --depth 2` against the job's own message) and cuda-gdb with the command set
# against the CLI, timed. Writes OUTDIR/env.txt, jobs.txt, oom.txt (and the gpt-oom job's snapshot, for
# tests/data/real). The results of a run on an H200 are in python/README.md.
# Env: MEMPROF (the CLI), MEMPROF_GDB_SCRIPT and MEMPROF_LIBRARY (the command set and its library, for cuda-gdb),
#      RUNS (jobs.sh's SCENARIO:MODE list; default below), JOBS_LIMIT (seconds for jobs.sh, default 300).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: gpu_check.sh OUTDIR" >&2; exit 2; }
O=$1
mkdir -p "$O"
export MEMPROF=${MEMPROF:-$top/_build/memprof} MEMPROF_TESTBED_CACHE=${MEMPROF_TESTBED_CACHE:-/tmp/tbcache}
t0=$(date +%s)
stamp() { echo "== $(($(date +%s) - t0)) s: $*"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
{
	stamp env
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
	python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])'
	cuda-gdb --version 2>&1 | grep -m1 cuda-gdb
	echo "core_pattern: $(cat /proc/sys/kernel/core_pattern); ulimit -Hc $(ulimit -Hc)"
	"$MEMPROF" --version
} >"$O/env.txt" 2>&1

{
	stamp "jobs.sh"
	MEMPROF_JOB_BUILDS=system MEMPROF_JOB_TIMEOUT=120 \
		MEMPROF_JOB_RUNS="${RUNS:-training:live training:gcore training:kernel history-all:live oom:live owners:live gpt-oom:live expandable:live pending_free:live private_pool:live hung:live unseen:live}" \
		timeout "${JOBS_LIMIT:-300}" bash "$top/tests/walker/jobs.sh"
	echo "jobs.sh exit $?"
} >"$O/jobs.txt" 2>&1

d=$O/gpt-oom
{
	stamp "gpt-oom live"
	if timeout 120 "$here/jobs/run.sh" gpt-oom system live "$d" >"$d.vars" 2>"$d.log"; then
		# shellcheck source=/dev/null
		. "$d.vars"
		python3 -c 'import json, sys; print("job message:", json.load(open(sys.argv[1]))["oom_message"])' "$d/notes.json"
		stamp "memprof oom --pid"
		timeout 60 "$MEMPROF" oom --pid "$PID"
		stamp "memprof owners --depth 2 --pid"
		timeout 60 "$MEMPROF" owners --depth 2 --pid "$PID"
		s=$(date +%s%N)
		timeout 60 "$MEMPROF" segsum --pid "$PID" >"$d/segsum.cli" 2>&1
		echo "CLI segsum --pid: $(ms_since "$s") ms"
		s=$(date +%s%N)
		MEMPROF_GDB=cuda-gdb timeout 120 "$(dirname "$MEMPROF")/memprof-gdb" -p "$PID" -batch -ex 'memprof segsum' \
			>"$d/segsum.gdb" 2>"$d/gdb.err"
		echo "cuda-gdb -p + memprof segsum: exit $?, $(ms_since "$s") ms"
		# gdb's own lines ([New LWP ...], the stop) come before the command's output, '[Inferior 1 ... detached]' after.
		if sed -n '/^Summary of segments/,$p' "$d/segsum.gdb" | grep -v '^\[Inferior' | cmp -s - "$d/segsum.cli" &&
			[ -s "$d/segsum.cli" ]; then
			echo "ok: cuda-gdb's memprof segsum == the CLI's segsum --pid ($(wc -l <"$d/segsum.cli") lines)"
		else
			echo "FAIL: cuda-gdb's memprof segsum differs from the CLI's:"
			diff "$d/segsum.gdb" "$d/segsum.cli" | head -20
			head -20 "$d/gdb.err"
		fi
		"$here/job.sh" --stop "$d" >/dev/null 2>&1
	else
		echo "FAIL: the gpt-oom job: $(tail -5 "$d.log")"
	fi
	stamp end
} >"$O/oom.txt" 2>&1

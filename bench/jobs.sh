#!/bin/bash
# jobs.sh - real PyTorch Python jobs on the fake device (tests/testbed/job.sh): how long a job takes to start, and
# memprof on the `huge` job (1,000,000 blocks) from its kernel core, its gcore core and the live process.
#
# Start: best of BENCH_RUNS wall times of `python -c "import torch"` with the fake device's libraries preloaded (the
# reference, in the same run) and of a whole job.sh run of `import torch; torch.empty(1, device="cuda")` and the
# checkpoint (CUDA initialised on the fake device: kernels registered, the allocator made; the truth files).
# Walk: the reference is the build's own _memory_viz.py printing `stats` for the job's own pickle (what a user would
# do: dump a snapshot in the job, then run it); memprof's outputs must equal it.
# Environment: MEMPROF (default ./memprof), BENCH_JOB_BUILDS (default: every build of job.sh --list), BENCH_BLOCKS
# (default 1000000), BENCH_RUNS (default 3). Exit 0 when every memprof stats output equals the reference's, else 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
blocks=${BENCH_BLOCKS:-1000000}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_jobs_init

# Seconds since T0 (a `date +%s%N` reading), as a decimal.
since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }

# Best wall time of CMD... over $runs runs.
best_of() {
	local best='' w s
	for _ in $(seq "$runs"); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>"$tmp/start.err" || { cat "$tmp/start.err" >&2; return 1; }
		w=$(since "$s")
		if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; fi
	done
	echo "$best"
}

# The build's python running CODE with the fake device preloaded (Debian's torch does not even import without its
# cuDNN stub), in the venv or chrooted in the Debian root, without the runner.
plain_python() { # BUILD_DIR CODE
	(
		# shellcheck source=/dev/null
		. "$1/job.env"
		log() { echo "bench: $*" >&2; }
		die() { log "$*"; exit 1; }
		# shellcheck source=tests/testbed/lib/chroot.sh
		. "$top/tests/testbed/lib/chroot.sh"
		export LD_PRELOAD=$JOB_PRELOAD TB_CHROOT_BIND=$JOB_BIND
		if [ -n "$JOB_ROOT" ]; then
			tb_chroot_run "$JOB_ROOT" "$tmp" "$JOB_PYTHON" -c "$2"
		else
			"$JOB_PYTHON" -c "$2"
		fi
	)
}

status=0
for build in $builds; do
	"$job" "$build" "$top/tests/testbed/jobs/hung.py" truth "$tmp/warm" >/dev/null 2>&1 # builds and caches
	echo "== $build"
	printf '%-44s %8s %10s %9s\n' "what" "wall_s" "rss_MiB" "vs ref"
	bdir=$("$top/tests/testbed/python/build.sh" "$build" 2>/dev/null)
	ref=$(best_of plain_python "$bdir" "import torch")
	bench_row "python -c 'import torch' [ref]" "$ref" 0 ""
	printf 'import torch\ntorch.empty(1, device="cuda")\nimport memprof_testbed\nmemprof_testbed.checkpoint()\n' >"$tmp/start.py"
	w=$(best_of "$job" "$build" "$tmp/start.py" truth "$tmp/start")
	bench_row "job.sh: import torch, CUDA init, truth" "$w" 0 ""

	cap=$(((blocks * 512 * 2 / 1048576 / 1024 + 1) * 1024))M
	rm -rf "$tmp/kernel" "$tmp/gcore" "$tmp/live"
	t0=$(date +%s%N)
	FAKECUDA_CAPACITY=$cap "$job" "$build" "$top/tests/testbed/jobs/huge.py" kernel "$tmp/kernel" --blocks "$blocks" >"$tmp/kernel.vars" 2>/dev/null
	echo "-- huge job, $blocks blocks: kernel core $(($(stat -c %s "$tmp/kernel/core") / 1048576)) MiB in $(since "$t0") s (job included)"
	sysroot=$(sed -n 's/^SYSROOT=//p' "$tmp/kernel.vars")
	sysargs=()
	[ -z "$sysroot" ] || sysargs=(--sysroot "$sysroot")
	libdir=$(sed -n 's/^TORCH_LIBDIR=//p' "$tmp/kernel.vars")
	memviz=$(dirname "$libdir")/cuda/_memory_viz.py
	[ -f "$memviz" ] || memviz=$(dirname "$libdir")/python3/dist-packages/torch/cuda/_memory_viz.py
	read -r rw rr < <(/usr/bin/time -f '%e %M' python3 "$memviz" stats "$tmp/kernel/snapshot.pickle" 2>&1 >"$tmp/ref.txt" | tail -1)
	bench_row "_memory_viz.py stats (job's pickle) [ref]" "$rw" "$rr" ""
	read -r w r < <(bench_best "$tmp/out.txt" "$MEMPROF" info "$tmp/kernel/core" "${sysargs[@]}")
	bench_row "memprof info kernel-core (walk)" "$w" "$r" "$rw"
	read -r w r < <(bench_best "$tmp/out.txt" "$MEMPROF" segsum "$tmp/kernel/core" "${sysargs[@]}")
	bench_row "memprof segsum kernel-core" "$w" "$r" "$rw"
	cmp -s "$tmp/out.txt" "$tmp/ref.txt" || { echo "memprof segsum (kernel core) differs from the reference" >&2; status=1; }
	rm -f "$tmp/kernel/core"
	t0=$(date +%s%N)
	FAKECUDA_CAPACITY=$cap "$job" "$build" "$top/tests/testbed/jobs/huge.py" gcore "$tmp/gcore" --blocks "$blocks" >/dev/null 2>&1
	echo "-- gcore core $(($(stat -c %s "$tmp/gcore/core") / 1048576)) MiB in $(since "$t0") s (job included)"
	read -r w r < <(bench_best "$tmp/out.txt" "$MEMPROF" segsum "$tmp/gcore/core")
	python3 "$memviz" stats "$tmp/gcore/snapshot.pickle" >"$tmp/ref.txt"
	bench_row "memprof segsum gcore-core" "$w" "$r" "$rw"
	cmp -s "$tmp/out.txt" "$tmp/ref.txt" || { echo "memprof segsum (gcore) differs from the reference" >&2; status=1; }
	rm -f "$tmp/gcore/core"
	FAKECUDA_CAPACITY=$cap "$job" "$build" "$top/tests/testbed/jobs/huge.py" live "$tmp/live" --blocks "$blocks" >/dev/null 2>&1
	pid=$(cat "$tmp/live/pid")
	python3 "$memviz" stats "$tmp/live/snapshot.pickle" >"$tmp/ref.txt"
	read -r w r < <(bench_best "$tmp/out.txt" "$MEMPROF" segsum --pid "$pid")
	bench_row "memprof segsum --pid" "$w" "$r" "$rw"
	cmp -s "$tmp/out.txt" "$tmp/ref.txt" || { echo "memprof segsum (live) differs from the reference" >&2; status=1; }
	"$job" --stop "$tmp/live" >/dev/null
done
exit $status

#!/bin/bash
# oom.sh - `memprof oom` on a core of the `huge` job (1,000,000 blocks, PyPI's torch 2.14.1 on the fake device):
# the explanation of a request asked about (--size, larger than the device) against `memprof segsum` of the same
# core (the reference, in the same run: one walk and the cheapest analysis), with and without the owners from the
# Python heap. And the pause `memprof watch` costs a job per OOM (its oom-N.pause) on the fragmentation scenario
# alone (about 140 blocks) and with 100,000 more live blocks.
# Environment: MEMPROF (default ./memprof), BENCH_BLOCKS (default 1000000), BENCH_RUNS (default 3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
blocks=${BENCH_BLOCKS:-1000000}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
BENCH_JOB_BUILDS=pypi-2.14.1 bench_jobs_init

FAKECUDA_CAPACITY=2G "$job" pypi-2.14.1 "$top/tests/testbed/jobs/huge.py" gcore "$tmp/gcore" --blocks "$blocks" \
	>"$tmp/gcore.vars" 2>/dev/null
core=$tmp/gcore/core
echo "-- huge job, $blocks blocks: gcore core $(($(stat -c %s "$core") / 1048576)) MiB"
read -r ref_w ref_r < <(bench_best "$tmp/segsum.out" "$MEMPROF" segsum "$core")
bench_row "memprof segsum CORE (reference)" "$ref_w" "$ref_r" ""
read -r w r < <(bench_best "$tmp/oom.out" "$MEMPROF" oom "$core" --size 3GiB --no-owners --format json) || true
grep -q '"verdict"' "$tmp/oom.out" || { echo "bench: memprof oom printed no explanation" >&2; exit 1; }
bench_row "memprof oom CORE --size 3GiB --no-owners" "$w" "$r" "$ref_w"
read -r w r < <(bench_best "$tmp/oom-owners.out" "$MEMPROF" oom "$core" --size 3GiB --format json) || true
bench_row "memprof oom CORE --size 3GiB (owners from the heap)" "$w" "$r" "$ref_w"

# A shape that once made oom quadratic: many split segments and a trace through each (bench/gen_oom_segments.py).
python3 "$here/gen_oom_segments.py" 100000 "$tmp/segments.pickle"
echo "-- 100,000 split segments, 300,001 trace entries (bench/gen_oom_segments.py)"
read -r ref_w ref_r < <(bench_best "$tmp/segsum2.out" "$MEMPROF" segsum "$tmp/segments.pickle")
bench_row "memprof segsum PICKLE (reference)" "$ref_w" "$ref_r" ""
read -r w r < <(bench_best "$tmp/oom2.out" "$MEMPROF" oom "$tmp/segments.pickle")
bench_row "memprof oom PICKLE" "$w" "$r" "$ref_w"

# The pause of memprof watch per OOM: the fragmentation scenario with 100,000 more live blocks, watched from its
# checkpoint just before the failing request.
watch_pause() { # EXTRA_BLOCKS
	local dir=$tmp/watch-$1
	mkdir -p "$dir"
	"$job" pypi-2.14.1 "$top/tests/testbed/jobs/oom_causes.py" live "$dir" --cause fragmentation \
		--checkpoint-before-oom --extra-blocks "$1" >"$dir/vars" 2>/dev/null
	( sleep 3; touch "$dir/RESUME" ) &
	"$MEMPROF" watch --pid "$(cat "$dir/pid")" -o "$dir/out" >/dev/null 2>&1 || true
	wait
	echo "-- memprof watch, the fragmentation job with $1 extra blocks: paused $(cat "$dir/out/oom-1.pause" 2>/dev/null || echo '?') s at its OOM (report, pickle and stacks written)"
	"$job" --stop "$dir" >/dev/null 2>&1 || true
}
watch_pause 0
watch_pause 100000

#!/bin/bash
# oom_replay.sh - `memprof oom` on a job's own snapshot at its OOM with a long memory history
# (bench/oom_history_job.py: BENCH_STEPS training-like steps of 500 requests each, PyPI's torch 2.14.1 on the fake
# device), where every claim about a setting is a replay of the whole history through the allocator model
# (src/allocsim: the job's own settings as the check, expandable segments, the max_split_size_mb ladder,
# empty_cache() after each of the last lines that freed memory), against `memprof segsum` of the same file (the
# reference, in the same run: one read and the cheapest analysis); and `memprof whatif` of one setting (the check
# and one replay).
# Environment: MEMPROF (default ./memprof), BENCH_STEPS (default 200), BENCH_RUNS (default 3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
steps=${BENCH_STEPS:-200}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
BENCH_JOB_BUILDS=pypi-2.14.1 bench_jobs_init

FAKECUDA_CAPACITY=4G "$job" pypi-2.14.1 "$here/oom_history_job.py" truth "$tmp/job" --steps "$steps" \
	>"$tmp/job.vars" 2>"$tmp/job.err" || { echo "bench: the job failed: $(tail -3 "$tmp/job.err")" >&2; exit 1; }
pickle=$tmp/job/snapshot.pickle
entries=$(python3 -c 'import pickle, sys
print(sum(len(t) for t in pickle.load(open(sys.argv[1], "rb"))["device_traces"]))' "$pickle")
echo "-- $steps steps, $entries trace entries, snapshot $(($(stat -c %s "$pickle") / 1048576)) MiB"
read -r ref_w ref_r < <(bench_best "$tmp/segsum.out" "$MEMPROF" segsum "$pickle")
bench_row "memprof segsum PICKLE (reference)" "$ref_w" "$ref_r" ""
read -r w r < <(bench_best "$tmp/oom.out" "$MEMPROF" oom "$pickle" --format json)
# no figure unless the claims rest on replays (the model's check passed)
grep -q '"replayed":[[:space:]]*true' "$tmp/oom.out" || { echo "bench: memprof oom did not replay the history" >&2; exit 1; }
bench_row "memprof oom PICKLE (claims replayed)" "$w" "$r" "$ref_w"
read -r w r < <(bench_best "$tmp/whatif.out" "$MEMPROF" whatif "$pickle" --conf expandable_segments:True)
bench_row "memprof whatif PICKLE --conf expandable..." "$w" "$r" "$ref_w"

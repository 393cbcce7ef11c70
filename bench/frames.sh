#!/bin/bash
# frames.sh - what decoding allocation frames costs: memprof on the `huge-history` job (tests/testbed/jobs: 2,000,000
# small-pool blocks, 1,000,000 of them active, each with a CapturedTraceback of its own recorded by
# _record_memory_history(stacks="python")) from its gcore core, with frames and with --no-frames (the walk alone,
# the reference, in the same run). Before timing, the outputs are checked: `categories --sites` on the core must
# print what it prints on the job's own pickle (its _snapshot(), frames and all).
# Environment: MEMPROF (default ./memprof), BENCH_JOB_BUILD (default pypi-2.14.1), BENCH_RUNS (default 3).
# Exit 0 when the outputs agree, else 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
build=${BENCH_JOB_BUILD:-pypi-2.14.1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_need_time

echo "bench: the huge-history job on $build (a minute; a core of about 6 GB)" >&2
s=$(date +%s)
"$top/tests/testbed/jobs/run.sh" huge-history "$build" gcore "$tmp/job" >"$tmp/job.vars" 2>"$tmp/job.log" ||
	{ tail -5 "$tmp/job.log" >&2; exit 1; }
echo "bench: job and gcore took $(($(date +%s) - s)) s" >&2
core=$tmp/job/core

"$MEMPROF" categories --sites 10 "$core" >"$tmp/sites.core" 2>"$tmp/sites.err"
"$MEMPROF" categories --sites 10 "$tmp/job/snapshot.pickle" >"$tmp/sites.pickle"
if ! cmp -s "$tmp/sites.core" "$tmp/sites.pickle"; then
	echo "bench: categories --sites on the core differs from it on the job's pickle:" >&2
	diff "$tmp/sites.core" "$tmp/sites.pickle" | head >&2
	exit 1
fi
head -1 "$tmp/sites.core"

printf '%-52s %8s %12s %9s\n' what "wall s" "peak MiB" "vs walk"
row() { # NAME "WALL RSS" [REF_WALL REF_RSS]
	local w r
	read -r w r <<<"$2"
	awk -v n="$1" -v w="$w" -v r="$r" -v rw="${3:-}" -v rr="${4:-}" 'BEGIN {
		printf "%-52s %8.2f %12.1f %9s\n", n, w, r / 1024, rw == "" ? "" : sprintf("%.2fx, %.2fx RSS", w / rw, r / rr) }'
}
walk=$(bench_best "$tmp/o" "$MEMPROF" categories --sites 10 --no-frames "$core")
row "categories --sites --no-frames (walk only) [ref]" "$walk"
read -r ww wr <<<"$walk"
row "categories --sites (walk + frames)" "$(bench_best "$tmp/o" "$MEMPROF" categories --sites 10 "$core")" "$ww" "$wr"
row "snapshot -o PICKLE --no-frames" "$(bench_best "$tmp/o" "$MEMPROF" snapshot "$core" --no-frames -o "$tmp/nf.pickle")" "$ww" "$wr"
row "snapshot -o PICKLE (frames written too)" "$(bench_best "$tmp/o" "$MEMPROF" snapshot "$core" -o "$tmp/f.pickle")" "$ww" "$wr"
row "segsum (no frames needed)" "$(bench_best "$tmp/o" "$MEMPROF" segsum "$core")" "$ww" "$wr"

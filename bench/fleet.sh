#!/bin/bash
# fleet.sh - `memprof fleet` on a distributed job of 1,024 ranks of 50,000 blocks each: wall time and peak RSS of
# the whole command (GNU time, the best of BENCH_RUNS runs), frames read (call sites; categories from the frames
# where the blocks name none) and --no-frames, on all processors and on one (MEMPROF_THREADS=1).
#
# The ranks: BENCH_FLEET_DISTINCT (default 4) distinct snapshots of gen_big.py (seeds 0, 1, ...; 2 devices, 6
# frames a block, a 10,000-entry trace ring, about 21 MB each), each as it is and with owners written into its
# blocks (fleet_owners.py: 'owner', 'category', 'module', as `snapshot save --owners` writes them), hard-linked
# to RANKS/rank-R/snapshot.pickle (rank R gets file R mod K): 1,024 distinct files would take 21 GB of disk, and
# memprof reads each rank's file whole either way (only the page cache shares them). Made once under
# ${MEMPROF_CACHE:-~/.cache/memprof}/bench/fleet-*; BENCH_FLEET_RANKS (1024) and BENCH_FLEET_BLOCKS (50000) change
# the job. The report of each run must name the same outliers as the first (memprof's output is checked to be
# whole JSON, with every rank read). Environment: MEMPROF (default ./memprof), PYTHON, BENCH_RUNS (default 3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
ranks=${BENCH_FLEET_RANKS:-1024}
blocks=${BENCH_FLEET_BLOCKS:-50000}
distinct=${BENCH_FLEET_DISTINCT:-4}
py=${PYTHON:-python3}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_need_time

cache=${MEMPROF_CACHE:-$HOME/.cache/memprof}/bench/fleet-$blocks-$distinct-$(cat "$here/gen_big.py" "$here/fleet_owners.py" | md5sum | cut -c1-8)
mkdir -p "$cache"
for ((k = 0; k < distinct; k++)); do
	if [ ! -f "$cache/owners-$k.pickle" ]; then
		echo "bench: generating $cache/{plain,owners}-$k.pickle (once)" >&2
		"$py" "$here/gen_big.py" --blocks "$blocks" --frames 6 --seed "$k" "$cache/plain-$k.pickle" 2>/dev/null
		"$py" "$here/fleet_owners.py" "$cache/plain-$k.pickle" "$cache/owners-$k.pickle.tmp"
		mv "$cache/owners-$k.pickle.tmp" "$cache/owners-$k.pickle"
	fi
done
# the layouts: hard links in the cache (the same file system as the files)
for kind in plain owners; do
	dir=$cache/ranks-$ranks-$kind
	if [ ! -f "$dir/done" ]; then
		rm -rf "$dir"
		for ((r = 0; r < ranks; r++)); do
			mkdir -p "$dir/rank-$r"
			ln "$cache/$kind-$((r % distinct)).pickle" "$dir/rank-$r/snapshot.pickle"
		done
		touch "$dir/done"
	fi
done

# row NAME ENV... -- ARGS...: one timed row of `memprof fleet ARGS --format json`, its JSON checked.
row() {
	local name=$1 w r
	shift
	read -r w r < <(bench_best "$tmp/out.json" env "$@" --format json) || exit 1
	"$py" - "$tmp/out.json" "$ranks" <<'PY' || { echo "bench: '$name': not every rank read" >&2; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["ranks_read"] != int(sys.argv[2]))
PY
	bench_row "$name" "$w" "$r" ""
}

echo "== memprof fleet: $ranks ranks of $blocks blocks ($distinct distinct files, $(($(stat -c %s "$cache/plain-0.pickle") / 1048576)) MiB each), $(nproc) processors"
printf '%-44s %8s %10s %9s\n' "what" "wall_s" "rss_MiB" ""
for kind in owners plain; do
	dir=$cache/ranks-$ranks-$kind
	row "$kind: frames (call sites)" "$MEMPROF" fleet "$dir"
	row "$kind: --no-frames" "$MEMPROF" fleet "$dir" --no-frames
	row "$kind: --no-frames, one thread" MEMPROF_THREADS=1 "$MEMPROF" fleet "$dir" --no-frames
done

#!/bin/bash
# walk.sh - time and size memprof's walk of PyTorch's real caching allocator holding many blocks: the test bed's
# `huge` scenario (N allocations of 512 B, every third freed), from a gcore core and from the live process.
#
# Reference, measured in the same run: PyTorch's own _memory_viz.py (2.6, Debian trixie) printing `stats` for the
# same state, from the pickle memprof exported (what a user would otherwise do: dump a snapshot, then run it).
# Environment: MEMPROF (default ./memprof), BENCH_ALLOCATIONS (default "120000 1000000"), BENCH_VARIANT (default
# stripped: what release builds look like), BENCH_RUNS (memprof runs, best kept; default 3).
# Exit 0 when every memprof segsum output equals the reference's, else 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
sizes=${BENCH_ALLOCATIONS:-"120000 1000000"}
variant=${BENCH_VARIANT:-stripped}
runs=${BENCH_RUNS:-3}
target=$top/tests/testbed/target.sh

"$top/tests/oracle/fetch-oracle.sh" >/dev/null
memviz=${MEMPROF_CACHE:-$HOME/.cache/memprof}/oracle/trixie/_memory_viz.py
tmp=$(mktemp -d)
cleanup() {
	[ -f "$tmp/live/pid" ] && "$target" --stop "$tmp/live" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

row() { # NAME WALL RSS_KIB BLOCKS REF_WALL
	awk -v n="$1" -v w="$2" -v r="$3" -v b="$4" -v ref="$5" 'BEGIN {
		printf "%-34s %8.2f %10.1f %12.2f %9s\n", n, w, r / 1024, w / (b / 1e6),
			ref == "" ? "" : sprintf("%.1fx", ref / w) }'
}

status=0
printf '%-34s %8s %10s %12s %9s\n' "what" "wall_s" "rss_MiB" "s/M blocks" "vs ref"
for n in $sizes; do
	cap=$(((n * 512 * 2 / 1048576 / 1024 + 1) * 1024))M # room for n 512-byte blocks in 2 MiB segments
	rm -rf "$tmp/core" "$tmp/live"
	MEMPROF_HUGE_ALLOCATIONS=$n FAKECUDA_CAPACITY=$cap "$target" huge "$variant" gcore "$tmp/core" >/dev/null
	blocks=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(len(s["blocks"]) for s in d["segments"]))' "$tmp/core/truth.json")
	"$MEMPROF" snapshot "$tmp/core/core" -o "$tmp/mp.pickle"
	read -r rw rr < <(/usr/bin/time -f '%e %M' python3 "$memviz" stats "$tmp/mp.pickle" 2>&1 >"$tmp/ref.txt" | tail -1)
	echo "-- huge, $n allocations: $blocks blocks; core $(($(stat -c %s "$tmp/core/core") / 1048576)) MiB"
	row "_memory_viz.py stats (pickle) [ref]" "$rw" "$rr" "$blocks" ""
	read -r w r < <(bench_best "$tmp/info.txt" "$MEMPROF" info "$tmp/core/core")
	row "memprof info core (walk)" "$w" "$r" "$blocks" "$rw"
	read -r w r < <(bench_best "$tmp/stats.txt" "$MEMPROF" segsum "$tmp/core/core")
	row "memprof segsum core" "$w" "$r" "$blocks" "$rw"
	cmp -s "$tmp/stats.txt" "$tmp/ref.txt" || { echo "memprof segsum (core) differs from the reference" >&2; status=1; }
	MEMPROF_HUGE_ALLOCATIONS=$n FAKECUDA_CAPACITY=$cap "$target" huge "$variant" live "$tmp/live" >/dev/null
	pid=$(cat "$tmp/live/pid")
	read -r w r < <(bench_best "$tmp/info.txt" "$MEMPROF" info --pid "$pid")
	row "memprof info --pid (walk)" "$w" "$r" "$blocks" "$rw"
	read -r w r < <(bench_best "$tmp/stats.txt" "$MEMPROF" segsum --pid "$pid")
	row "memprof segsum --pid" "$w" "$r" "$blocks" "$rw"
	cmp -s "$tmp/stats.txt" "$tmp/ref.txt" || { echo "memprof segsum (live) differs from the reference" >&2; status=1; }
	"$target" --stop "$tmp/live" >/dev/null
done
exit $status

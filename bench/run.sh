#!/bin/bash
# run.sh - time and size memprof stats against PyTorch's _memory_viz.py stats (2.6 and 2.14.1) on a ~340 MB snapshot.
#
# Environment: MEMPROF (default ./memprof), PYTHON (default python3), MEMPROF_CACHE (default
# ~/.cache/memprof; the big pickle is made once under $MEMPROF_CACHE/bench), BENCH_BLOCKS
# (default 1000000), BENCH_RUNS (memprof runs, best kept; default 3).
# Exit 0 when memprof ran and printed exactly what the 2.14.1 oracle printed, else 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python3}
MEMPROF=${MEMPROF:-./memprof}
blocks=${BENCH_BLOCKS:-1000000}
runs=${BENCH_RUNS:-3}

# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_oracle_init
big=$(bench_big_pickle "$blocks")
size=$(stat -c %s "$big")

row() { # row NAME WALL RSS_KIB
    awk -v n="$1" -v w="$2" -v r="$3" -v s="$size" \
        'BEGIN { printf "%-24s %9.2f %12.1f %10.2f\n", n, w, r / 1024, r * 1024 / s }'
}

echo "file: $big ($(awk -v s="$size" 'BEGIN { printf "%.1f MiB", s / 1048576 }'), $blocks blocks)"
printf '%-24s %9s %12s %10s\n' "tool" "wall_s" "peak_rss_MiB" "rss/file"
declare -A wall
for suite in trixie sid; do
    ver=$(basename "$(readlink -f "$odir/$suite")")
    read -r w r < <(runs=1 bench_best "$tmp/oracle-$suite.txt" "$PYTHON" "$here/../tests/oracle/oracle.py" \
        "$odir/$suite/_memory_viz.py" stats "$big")
    wall[$suite]=$w
    row "oracle $ver" "$w" "$r"
done

status=0
if [ -x "$MEMPROF" ]; then
    read -r best_w best_r < <(bench_best "$tmp/memprof.txt" "$MEMPROF" segsum "$big")
    row "memprof (best of $runs)" "$best_w" "$best_r"
    for suite in trixie sid; do
        awk -v o="${wall[$suite]}" -v m="$best_w" -v s="$suite" \
            'BEGIN { printf "speedup vs %s: %.1fx\n", s, (m > 0 ? o / m : 0) }'
    done
    if cmp -s "$tmp/memprof.txt" "$tmp/oracle-sid.txt"; then echo "output: identical to the oracle"
    else echo "output: DIFFERS from the oracle"; status=1; fi
else
    echo "memprof: '$MEMPROF' not found (set MEMPROF); oracle figures only"
    status=1
fi
exit "$status"

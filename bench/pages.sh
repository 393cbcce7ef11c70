#!/usr/bin/env bash
# pages.sh - time `memprof trace_plot` (the page of _memory_viz.py trace_plot: the snapshot pickled and embedded)
# against PyTorch 2.14.1's own, its CLI's way: pickle.load of the file, trace_plot(), the page written. On the
# generated BENCH_BLOCKS-block snapshot (gen_big.py), fresh frames and, with BENCH_SHAPES "fresh 2.1", frames as
# PyTorch 2.1+ writes them. Prints wall s, peak RSS MiB, the oracle's time over memprof's, and each page's size.
#
# Environment: MEMPROF (default ./memprof), BENCH_BLOCKS (default 1000000), BENCH_SHAPES (default "fresh 2.1"),
# BENCH_RUNS (best of; default 3). Exit 1 when a command fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MEMPROF=${MEMPROF:-./memprof}
blocks=${BENCH_BLOCKS:-1000000}
runs=${BENCH_RUNS:-3}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_oracle_init

cat >"$tmp/oracle_page.py" <<'PY'
import importlib.util, pickle, sys
spec = importlib.util.spec_from_file_location("memviz", sys.argv[1])
memviz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(memviz)
with open(sys.argv[2], "rb") as f:
    data = pickle.load(f)
if isinstance(data, list):
    data = {"segments": data, "traces": []}
with open(sys.argv[3], "w") as f:
    f.write(memviz.trace_plot(data))
PY

printf '%-44s %8s %10s %9s %10s\n' "trace_plot, $blocks blocks" "wall s" "peak MiB" "speedup" "page MB"
for shape in ${BENCH_SHAPES:-fresh 2.1}; do
	big=$(bench_big_pickle "$blocks" "$([ "$shape" = 2.1 ] && echo 2.1)")
	read -r ow orss < <(bench_best /dev/null "${PYTHON:-python3}" "$tmp/oracle_page.py" "$odir/sid/_memory_viz.py" "$big" "$tmp/py.html")
	read -r mw mrss < <(bench_best /dev/null "$MEMPROF" trace_plot "$big" -o "$tmp/mp.html")
	size() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }
	printf '%s %10s\n' "$(bench_row "_memory_viz.py trace_plot (2.14.1), $shape frames" "$ow" "$orss" "")" "$(size "$tmp/py.html")"
	printf '%s %10s\n' "$(bench_row "memprof trace_plot, $shape frames" "$mw" "$mrss" "$ow")" "$(size "$tmp/mp.html")"
done

#!/bin/bash
# pyapi.sh - what the Python package costs: memprof.snapshot(FILE), the dict _snapshot() returned (memprof reads the
# pickle, writes it back as PyTorch's pickle and Python reads that), against what a user does without memprof,
# pickle.load(FILE), in the same run, on the generated 1,000,000-block snapshot (gen_big.py). Both results must
# be equal before anything is reported.
# Environment: MEMPROF (default ./memprof: its build directory's .libs/libmemprof.so.0 is loaded), BENCH_BLOCKS
# (default 1000000), BENCH_RUNS (best of; default 3), PYTHON.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_need_time
big=$(bench_big_pickle "${BENCH_BLOCKS:-1000000}")
export MEMPROF_LIBRARY
MEMPROF_LIBRARY=$(cd "$(dirname "$MEMPROF")" && pwd)/.libs/libmemprof.so.0
export PYTHONPATH=$top/pymemprof

"$python" -c '
import memprof, pickle, sys
with open(sys.argv[1], "rb") as f:
    sys.exit(0 if memprof.snapshot(sys.argv[1]) == pickle.load(f) else "pyapi: memprof.snapshot() differs")
' "$big"

ref=$(bench_best "$tmp/out" "$python" -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$big")
mine=$(bench_best "$tmp/out" "$python" -c 'import memprof, sys; memprof.snapshot(sys.argv[1])' "$big")
echo "$(basename "$big") ($(du -m "$big" | cut -f1) MB), best of $runs, this machine ($(nproc) cores):"
printf "%-44s %8s %10s %9s\n" "what" "wall s" "RSS MiB" "vs ref"
bench_row "pickle.load(FILE) [ref]" $ref ""
bench_row "memprof.snapshot(FILE)" $mine "${ref%% *}"

#!/bin/bash
# summary_differential.sh - memprof's memory_summary against torch/cuda/memory.py of PyTorch 2.6.0 and 2.14.1, byte for byte.
#
# Environment: MEMPROF (the memprof CLI; the driver is found beside it as
# tests/oracle/summary_driver) or SUMMARY_DRIVER, PYTHON (default python3),
# MEMPROF_CORPUS_SEED (default 20261121), MEMPROF_SUMMARY_COUNT (default 1500 stats dicts,
# each run abbreviated and not), MEMPROF_KEEP_FAILED, MEMPROF_CACHE (see fetch-oracle.sh).
# Exit 0 all passed, 1 otherwise; a missing oracle (no network on the first run) is a
# failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" 2>/dev/null && pwd) || here=${srcdir:-.}/oracle
PYTHON=${PYTHON:-python3}
seed=${MEMPROF_CORPUS_SEED:-20261121}
count=${MEMPROF_SUMMARY_COUNT:-1500}

fail() { echo "summary_differential: $*"; echo "0 passed, 1 failed"; exit 1; }

driver=${SUMMARY_DRIVER:-$(dirname "${MEMPROF:-./memprof}")/tests/oracle/summary_driver}
[ -f "$driver" ] && [ -x "$driver" ] || fail "no summary driver at '$driver' (set SUMMARY_DRIVER or MEMPROF)"

oracles=$("$here/fetch-oracle.sh") ||
    fail "fetch-oracle.sh failed: PyTorch's memory.py could not be fetched (network needed on first run)"
oracle_dir=$(dirname "$(dirname "$(echo "$oracles" | head -n1)")")
specs=()
for s in trixie sid; do
    m="$oracle_dir/$s/memory.py"
    [ -f "$m" ] || fail "fetch-oracle.sh gave no $m"
    specs+=(--oracle "$s:$(basename "$(readlink -f "$oracle_dir/$s")")=$m")
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memprof-summary.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$here/summary_corpus.py" --seed "$seed" --count "$count" \
    --out "$tmp/corpus.json" || fail "summary_corpus.py failed"
rc=0
PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$here/summary_compare.py" --driver "$driver" \
    --corpus "$tmp/corpus.json" "${specs[@]}" ${MEMPROF_KEEP_FAILED:+--keep "$MEMPROF_KEEP_FAILED"} || rc=$?
[ "$rc" -le 1 ] || { echo "summary_differential: summary_compare.py died (exit $rc)"; echo "0 passed, 1 failed"; rc=1; }
exit "$rc"

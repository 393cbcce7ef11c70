#!/bin/bash
# run-differential.sh - diff memprof's analyses byte-for-byte against PyTorch 2.6 and 2.14.1 _memory_viz.py on a seeded corpus
# and on the snapshots real jobs wrote (tests/data/real).
#
# Environment: MEMPROF (memprof CLI, default ./memprof), PYTHON (default python3),
# MEMPROF_CORPUS_SEED (default 20261121), MEMPROF_CORPUS_COUNT (default 300),
# MEMPROF_JOBS (default nproc), MEMPROF_KEEP_FAILED (directory for failing inputs/outputs),
# MEMPROF_CACHE (oracle cache, see fetch-oracle.sh), MEMPROF_ANNOTATE_SUITE (sid or trixie: the
# version whose trace() output for 2.14-style annotate entries memprof follows; default sid).
# `run-differential.sh --oracle-only` checks the oracles and the corpus without memprof.
# Exit 0 all comparisons passed, 1 otherwise (never 77: a missing oracle or memprof is a failure).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" 2>/dev/null && pwd) || here=${srcdir:-.}/oracle
PYTHON=${PYTHON:-python3}
seed=${MEMPROF_CORPUS_SEED:-20261121}
count=${MEMPROF_CORPUS_COUNT:-300}
jobs=${MEMPROF_JOBS:-$(nproc 2>/dev/null || echo 2)}

fail() { echo "run-differential: $*"; echo "0 passed, 1 failed"; exit 1; }

if [ "${1:-}" = --oracle-only ]; then
    who=(--oracle-only)
else
    MEMPROF=${MEMPROF:-./memprof}
    case $MEMPROF in */*) ;; *) MEMPROF=$(command -v "$MEMPROF" || echo "$MEMPROF") ;; esac
    if [ ! -f "$MEMPROF" ] || [ ! -x "$MEMPROF" ]; then
        fail "MEMPROF='$MEMPROF' is not an executable file (set MEMPROF)"
    fi
    who=(--memprof "$MEMPROF")
fi

oracles=$("$here/fetch-oracle.sh") || fail "fetch-oracle.sh failed (network needed on first run)"
oracle_dir=$(dirname "$(dirname "$(echo "$oracles" | head -n1)")")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memprof-diff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "run-differential: corpus seed $seed, $count files, $jobs jobs"
"$PYTHON" "$here/gen_corpus.py" --seed "$seed" --count "$count" --out "$tmp/corpus" --real "$here/../data/real" ||
    fail "gen_corpus.py failed"
"$PYTHON" "$here/gen_corpus.py" --edge --seed "$seed" --out "$tmp/edge" || fail "gen_corpus.py --edge failed"

rc=0
"$PYTHON" "$here/differential.py" "${who[@]}" --oracle-dir "$oracle_dir" \
    --corpus "$tmp/corpus" --edge "$tmp/edge" --jobs "$jobs" --annotate-suite "${MEMPROF_ANNOTATE_SUITE:-sid}" \
    ${MEMPROF_KEEP_FAILED:+--keep "$MEMPROF_KEEP_FAILED"} || rc=$?
[ "$rc" -le 1 ] || { echo "run-differential: differential.py died (exit $rc)"; echo "0 passed, 1 failed"; rc=1; }
exit "$rc"

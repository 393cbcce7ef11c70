#!/bin/bash
# infer.sh - what inferring a layout costs: `memprof stats` on a gcore core of the test bed's `huge` scenario
# (PyPI's torch 2.4.1, BENCH_BLOCKS allocations, a third freed) with the release's tables (the reference, in the
# same run) and with MEMPROF_LAYOUTS holding every table but the two that fit 2.4.1 (so memprof infers the layout
# from the nearest, then walks). The outputs must be equal before a time is reported.
# Environment: MEMPROF (default ./memprof), BENCH_BLOCKS (default 1000000), BENCH_RUNS (default 3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
blocks=${BENCH_BLOCKS:-1000000}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_need_time
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

MEMPROF_HUGE_ALLOCATIONS=$blocks FAKECUDA_CAPACITY=$((blocks / 1000 + 64))M \
	"$top/tests/testbed/target.sh" huge pypi-2.4.1 gcore "$tmp/g" >/dev/null 2>"$tmp/target.err" ||
	{ echo "bench: no huge core: $(tail -1 "$tmp/target.err")" >&2; exit 1; }
mkdir "$tmp/layouts"
cp "$top"/src/symbols/layouts/*.layout "$tmp/layouts/"
rm -f "$tmp"/layouts/torch-2.3-*.layout "$tmp"/layouts/torch-2.4-*.layout
echo "-- huge scenario on PyPI's torch 2.4.1, $blocks allocations: gcore core $(($(stat -c %s "$tmp/g/core") / 1048576)) MiB"
read -r ref_w ref_r < <(bench_best "$tmp/table.out" "$MEMPROF" stats "$tmp/g/core")
bench_row "memprof stats CORE (its table; reference)" "$ref_w" "$ref_r" ""
read -r w r < <(MEMPROF_LAYOUTS=$tmp/layouts bench_best "$tmp/inferred.out" "$MEMPROF" stats "$tmp/g/core")
grep -q 'walked with a layout inferred' "$tmp/stderr" || { echo "bench: the layout was not inferred" >&2; exit 1; }
cmp -s "$tmp/table.out" "$tmp/inferred.out" || { echo "bench: the inferred walk's stats differ" >&2; exit 1; }
bench_row "memprof stats CORE (layout inferred)" "$w" "$r" "$ref_w"

#!/usr/bin/env bash
# categories.sh - time memprof's category analyses on the 1,000,000-block snapshot (gen_big.py, shared with
# run.sh), against `memprof segsum` on the same file in the same run (the reference: 1x).
#
# Environment: MEMPROF (default ./memprof), BENCH_BLOCKS (default 1000000), BENCH_RUNS (best of; default 3).
# Prints one row per command: wall s, peak RSS MiB, time relative to stats. Exit 1 when a command fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MEMPROF=${MEMPROF:-./memprof}
blocks=${BENCH_BLOCKS:-1000000}
runs=${BENCH_RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_need_time
big=$(bench_big_pickle "$blocks")

# Each case: a name and the memprof arguments after the file. Options a build does not have yet are
# left out (told on stderr), so the script runs on older builds too.
cases=(
	"stats|stats"
	"categories|categories"
	"categories --scheme tracker|categories --scheme tracker"
	"categories --format json --blocks|categories --format json --blocks"
	"categories --sites 20|categories --sites 20"
	"categories --sites 20 --by module|categories --sites 20 --by module"
	"categories --segsum|categories --segsum"
	"timeline -o T.json|timeline -o $tmp/t.json"
	"timeline -o T.html|timeline -o $tmp/t.html"
)
printf '%-40s %8s %8s %8s\n' "memprof ... on $blocks blocks" wall_s rss_MiB vs_stats
status=0 ref=
for c in "${cases[@]}"; do
	name=${c%%|*}
	read -ra args <<<"${c#*|}"
	if ! "$MEMPROF" "${args[0]}" --help 2>/dev/null | grep -q -- "${args[1]:-^}"; then
		echo "(skipped: this memprof has no '$name')" >&2
		continue
	fi
	if ! read -r w r < <(bench_best "$tmp/out" "$MEMPROF" "${args[0]}" "$big" "${args[@]:1}"); then
		status=1
		continue
	fi
	[ -n "$ref" ] || ref=$w
	awk -v n="$name" -v w="$w" -v r="$r" -v ref="$ref" \
		'BEGIN { printf "%-40s %8.2f %8.1f %7.1fx\n", n, w, r / 1024, (ref > 0 ? w / ref : 0) }'
done
exit $status

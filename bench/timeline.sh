#!/usr/bin/env bash
# timeline.sh - time `memprof timeline` on a long trace ring (a simulated training job from
# tests/timeline/gen_timeline.py, BENCH_RING entries, made once) and on the 1,000,000-block snapshot
# (gen_big.py, 10,000-entry ring), against `memprof segsum` on the same file in the same run (1x).
#
# Environment: MEMPROF (default ./memprof), BENCH_RING (default 1000000), BENCH_BLOCKS (default
# 1000000), BENCH_RUNS (best of; default 3). Prints one row per command: wall s, peak RSS MiB, time
# relative to stats on that file. Exit 1 when a command fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MEMPROF=${MEMPROF:-./memprof}
blocks=${BENCH_BLOCKS:-1000000}
ring=${BENCH_RING:-1000000}
runs=${BENCH_RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_need_time

# ring_pickle N: a snapshot whose device 0 ring holds about N entries of training steps, made once.
ring_pickle() {
	local gen=$here/../tests/timeline/gen_timeline.py cache=${MEMPROF_CACHE:-$HOME/.cache/memprof}/bench f
	f=$cache/ring-$1-$(cat "$gen" "$here/../tests/categories/gen_corpus.py" | md5sum | cut -c1-8).pickle
	mkdir -p "$cache"
	if [ ! -f "$f" ]; then
		echo "bench: generating $f (once)" >&2
		"${PYTHON:-python3}" - "$gen" "$1" "$f.tmp.$$" <<'PY' >&2
import importlib.util, pickle, sys
spec = importlib.util.spec_from_file_location("gen", sys.argv[1])
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
job = gen.Job(7)
params = [job.alloc("module_to", 4 * gen.MB) for _ in range(4)]
while len(job.ring[0]) < int(sys.argv[2]):
    gen.training_step(job, params)
with open(sys.argv[3], "wb") as f:
    pickle.dump(job.snapshot(None)[0], f, protocol=4)
PY
		mv "$f.tmp.$$" "$f"
	fi
	echo "$f"
}

# bench FILE LABEL: stats, then the timeline's forms, on FILE
bench() {
	local file=$1 ref='' name w r
	for c in "stats|stats" "timeline|timeline" "timeline -o T.json|timeline -o $tmp/t.json" \
		"timeline -o T.raw.json|timeline -o $tmp/t.raw.json" "timeline -o T.html|timeline -o $tmp/t.html"; do
		name=${c%%|*}
		read -ra args <<<"${c#*|}"
		read -r w r < <(bench_best "$tmp/out" "$MEMPROF" "${args[0]}" "$file" "${args[@]:1}") || return 1
		[ -n "$ref" ] || ref=$w
		awk -v n="$name" -v l="$2" -v w="$w" -v r="$r" -v ref="$ref" \
			'BEGIN { printf "%-22s %-26s %8.2f %8.1f %7.2fx\n", l, n, w, r / 1024, (ref > 0 ? w / ref : 0) }'
	done
}

printf '%-22s %-26s %8s %8s %8s\n' file "memprof ..." wall_s rss_MiB vs_stats
bench "$(ring_pickle "$ring")" "ring of $ring"
bench "$(bench_big_pickle "$blocks")" "$blocks blocks"

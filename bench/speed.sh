#!/bin/bash
# speed.sh - every analysis on the big snapshot pickle, and stats at several sizes, in one run: medians of
# BENCH_RUNS runs (wall time and peak RSS), each command against `memprof segsum` on the same file and
# segsum against PyTorch's `_memory_viz.py stats` (2.6, Debian trixie; median of BENCH_ORACLE_RUNS, 3). Outputs are checked
# before any time is reported: segsum must print what the oracle prints, and each command must print the
# same with the stream reader and the second thread as with the plain generic reader on one thread
# (MEMPROF_NO_PICKLE_STREAM=1 MEMPROF_THREADS=1). Then segsum and trace on the same snapshot as memprof's
# JSON (converted once, cached beside the pickle), checked against the whole-text JSON reader.
#
# Usage, from the build directory:  MEMPROF=./memprof ../bench/speed.sh
# Environment: MEMPROF, PYTHON, BENCH_SIZES (blocks; default "100000 1000000 3000000 1000000:2.1": 3000000
# is a ~1 GB pickle, made once in ~90 s with ~8 GB of memory; N:2.1 has its frames as PyTorch 2.1 and later
# write them, one dict per distinct frame fetched from the memo after, gen_big.py --frames-as-2.1),
# BENCH_COMMANDS_AT (the sizes every command runs at; default "1000000 1000000:2.1"), BENCH_RUNS (default 3),
# BENCH_ORACLE_RUNS (default 3), MEMPROF_CACHE.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python3}
MEMPROF=${MEMPROF:-./memprof}
sizes=${BENCH_SIZES:-100000 1000000 3000000 1000000:2.1}
at=" ${BENCH_COMMANDS_AT:-1000000 1000000:2.1} "
runs=${BENCH_RUNS:-3}
oracle_runs=${BENCH_ORACLE_RUNS:-3} # the oracle's time varies most on a shared machine

# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_oracle_init
oracle=$odir/trixie/_memory_viz.py

# median CMD...: one run not counted (the file back in the page cache after the oracle's gigabytes), then $runs
# runs; "wall_s peak_rss_kib" (medians) into $tmp/med; the last run's stdout in $tmp/out
median() {
	local w r
	: >"$tmp/w"; : >"$tmp/r"
	"$@" >/dev/null 2>&1 || true
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || [ $? -le 1 ] ||
			{ echo "speed: '$*' failed: $(tail -1 "$tmp/err")" >&2; exit 1; }
		read -r w r < <(tail -1 "$tmp/time")
		echo "$w" >>"$tmp/w"
		echo "$r" >>"$tmp/r"
	done
	echo "$(bench_median <"$tmp/w")" "$(bench_median <"$tmp/r")" >"$tmp/med"
}

row() { # NAME WALL RSS_KIB SIZE_BYTES RATIO_TEXT
	awk -v n="$1" -v w="$2" -v r="$3" -v s="$4" -v t="$5" 'BEGIN {
		printf "| %s | %.3f | %.0f | %.2f | %s |\n", n, w, r / 1024, r * 1024 / s, t }'
}

echo "| what | wall s | peak RSS MiB | RSS / file | ratio |"
echo "|---|---|---|---|---|"
for spec in $sizes; do
	n=${spec%%:*}
	shape=${spec#"$n"}
	big=$(bench_big_pickle "$n" "${shape#:}")
	size=$(stat -c %s "$big")
	runs=$oracle_runs median "$PYTHON" "$here/../tests/oracle/oracle.py" "$oracle" stats "$big"
	read -r ow orr <"$tmp/med"
	cp "$tmp/out" "$tmp/oracle.txt"
	median "$MEMPROF" segsum "$big"
	read -r sw sr <"$tmp/med"
	cmp -s "$tmp/out" "$tmp/oracle.txt" || { echo "speed: segsum differs from the oracle on $big" >&2; exit 1; }
	label="$n blocks${shape:+ (frames as 2.1)}, $(awk -v s="$size" 'BEGIN { printf "%.0f MB", s / 1e6 }')"
	row "_memory_viz.py stats (2.6), $label" "$ow" "$orr" "$size" ""
	row "memprof segsum, $label" "$sw" "$sr" "$size" "$(awk -v a="$ow" -v b="$sw" 'BEGIN { printf "%.1fx faster", a / b }')"
	[[ $at == *" $spec "* ]] || continue
	for cmd in "segments" "memory" "compare $big" "trace" "categories" "categories --sites 20" "timeline"; do
		# shellcheck disable=SC2086 # CMD is words
		MEMPROF_NO_PICKLE_STREAM=1 MEMPROF_THREADS=1 "$MEMPROF" $cmd "$big" >"$tmp/ref.txt" 2>/dev/null || true
		# shellcheck disable=SC2086
		median "$MEMPROF" $cmd "$big"
		read -r w r <"$tmp/med"
		cmp -s "$tmp/out" "$tmp/ref.txt" || { echo "speed: '$cmd' differs from the generic reader's" >&2; exit 1; }
		row "memprof ${cmd//$big/FILE}" "$w" "$r" "$size" "$(awk -v a="$w" -v b="$sw" 'BEGIN { printf "%.1fx segsum'"'"'s time", a / b }')"
	done
	[ -z "$shape" ] || continue
	# The same snapshot as memprof's JSON: the stream reader, against the whole-text reader's output.
	json=$(bench_big_json "$big")
	jsize=$(stat -c %s "$json")
	for cmd in segsum trace; do
		MEMPROF_NO_JSON_STREAM=1 "$MEMPROF" "$cmd" "$json" >"$tmp/ref.txt" 2>/dev/null || true
		median "$MEMPROF" "$cmd" "$json"
		read -r w r <"$tmp/med"
		cmp -s "$tmp/out" "$tmp/ref.txt" || { echo "speed: '$cmd' on the JSON differs from the whole-text reader's" >&2; exit 1; }
		row "memprof $cmd FILE.json ($(awk -v s="$jsize" 'BEGIN { printf "%.0f MB", s / 1e6 }'))" "$w" "$r" "$jsize" \
			"$(awk -v s="$jsize" -v w="$w" 'BEGIN { printf "%.0f MB/s", s / 1e6 / w }')"
	done
done

# bench/lib.sh - what the benchmarks share (sourced): the big snapshot and best-of-N timing.
# Needs: $here (bench/), $tmp (a scratch directory), $runs (BENCH_RUNS).

# bench_big_pickle BLOCKS [2.1]: the path of the generated BLOCKS-block snapshot (with 2.1: its frames as
# PyTorch 2.1 and later write them, gen_big.py --frames-as-2.1), made once under
# ${MEMPROF_CACHE:-~/.cache/memprof}/bench and remade when gen_big.py changes.
bench_big_pickle() {
	local cache=${MEMPROF_CACHE:-$HOME/.cache/memprof}/bench big
	big=$cache/big-$1${2:+-as$2}-$(md5sum "$here/gen_big.py" | cut -c1-8).pickle
	mkdir -p "$cache"
	if [ ! -f "$big" ]; then
		echo "bench: generating $big (once)" >&2
		"${PYTHON:-python3}" "$here/gen_big.py" --blocks "$1" --frames 6 ${2:+--frames-as-$2} "$big.tmp.$$" >&2
		mv "$big.tmp.$$" "$big"
	fi
	echo "$big"
}

# bench_big_json PICKLE: the same snapshot in memprof's JSON (memprof convert, with $MEMPROF), made once beside it.
bench_big_json() {
	local json=${1%.pickle}.json
	if [ ! -f "$json" ]; then
		echo "bench: converting $1 to JSON (once)" >&2
		"$MEMPROF" convert "$1" "$json.tmp.$$.json" >&2
		mv "$json.tmp.$$.json" "$json"
	fi
	echo "$json"
}

# bench_need_time: GNU time, for wall time and peak RSS.
bench_need_time() {
	[ -x /usr/bin/time ] && return 0
	echo "bench: installing GNU time" >&2
	if [ "$(id -u)" -eq 0 ]; then apt-get install -y -q time >&2; else sudo apt-get install -y -q time >&2; fi
}

# bench_oracle_init: what the benchmarks against PyTorch's _memory_viz.py share: a scratch $tmp removed at exit,
# GNU time, the oracle files fetched once, and odir, where they are.
bench_oracle_init() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	bench_need_time
	"$here/../tests/oracle/fetch-oracle.sh" >/dev/null
	odir=${MEMPROF_CACHE:-$HOME/.cache/memprof}/oracle
}

# bench_median: the median of the numbers on stdin, one per line.
bench_median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# bench_best OUT CMD...: $runs runs; prints "wall_s peak_rss_kib" of the fastest; CMD's stdout goes to OUT
# (its stderr, warnings included, to $tmp/stderr: shown only when it fails).
# Fails (1) when a run of CMD fails.
bench_best() {
	local out=$1 w r bw='' br=''
	shift
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$out" 2>"$tmp/stderr" ||
			{ echo "bench: '$*' failed: $(tail -2 "$tmp/stderr")" >&2; return 1; }
		read -r w r <"$tmp/time"
		if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then bw=$w br=$r; fi
	done
	echo "$bw $br"
}

# bench_jobs_init: what the benchmarks of real jobs share: job (job.sh), builds (BENCH_JOB_BUILDS, default every
# build job.sh lists), a scratch $tmp removed at exit (a job left live in $tmp/live stopped first), GNU time.
bench_jobs_init() {
	job=$top/tests/testbed/job.sh
	builds=${BENCH_JOB_BUILDS:-$("$job" --list)}
	tmp=$(mktemp -d)
	trap bench_jobs_cleanup EXIT
	bench_need_time
}

bench_jobs_cleanup() {
	[ -f "$tmp/live/pid" ] && "$job" --stop "$tmp/live" >/dev/null 2>&1
	rm -rf "$tmp"
}

# bench_row NAME WALL RSS_KIB REF_WALL: one line of a table: the wall time, the peak RSS in MiB ("-" for 0) and,
# with REF_WALL, the reference's time over this one.
bench_row() {
	awk -v n="$1" -v w="$2" -v r="$3" -v ref="$4" 'BEGIN {
		printf "%-44s %8.3f %10s %9s\n", n, w, r == 0 ? "-" : sprintf("%.1f", r / 1024), ref == "" ? "" : sprintf("%.1fx", ref / w) }'
}

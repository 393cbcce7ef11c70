#!/usr/bin/env bash
# run.sh SECONDS TARGET... - make fuzz: run each libFuzzer harness (FUZZ_BIN/fuzz_TARGET) for SECONDS, on a corpus
# kept in ~/.cache/memprof-fuzz/TARGET (seeded from tests/fuzz/corpus/TARGET and regress/TARGET), with the
# target's dictionary and the limits of tests/fuzz/README.md: 10 s per input, 2 GB of memory, leaks reported.
# FUZZ_PARALLEL=N runs N targets at once. A crash, hang, leak or out-of-memory leaves its input under
# ~/.cache/memprof-fuzz/TARGET/artifacts and fails the run; FUZZ_KEEP_GOING=1 (a campaign) goes on after one
# (libFuzzer's fork mode) and fails at the end if any was found. Prints one line per target: executions,
# coverage, features, corpus size, findings.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { echo "usage: run.sh SECONDS TARGET..." >&2; exit 2; }
secs=$1
shift
bin=${FUZZ_BIN:?FUZZ_BIN: the directory of the fuzz_* programs}
cache=${MEMPROF_FUZZ_CACHE:-$HOME/.cache/memprof-fuzz}
parallel=${FUZZ_PARALLEL:-1}

maxlen() {
	case $1 in
	walker | python) echo 4096 ;;
	rules) echo 16384 ;;
	core) echo 131072 ;;
	*) echo 65536 ;;
	esac
}

dict() {
	case $1 in
	pickle | analyses) echo "-dict=$here/pickle.dict" ;;
	json | rules) echo "-dict=$here/json.dict" ;;
	esac
}

one() {
	local t=$1 d=$cache/$1 seeds=() rc
	mkdir -p "$d/corpus" "$d/artifacts"
	for s in "$here/corpus/$t" "$here/regress/$t"; do
		[ -d "$s" ] && seeds+=("$s")
	done
	[ "$t" = analyses ] && seeds+=("$here/corpus/pickle" "$here/corpus/json")
	case $t in
	walker | python)
		local cores
		cores=$("$here/core_for.sh" "$t" "$cache/$t-cores") || {
			echo "$t: not run: the test bed made no core"
			return 0
		}
		export MEMPROF_FUZZ_CORE="$cores" MEMPROF_FUZZ_PY_CORE="$cores"
		;;
	esac
	local keep=()
	[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
	local before
	before=$(find "$d/artifacts" -type f | wc -l)
	# shellcheck disable=SC2046 # dict() is one word or none
	"$bin/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
		-max_len="$(maxlen "$t")" -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$d/artifacts/" \
		"${keep[@]}" $(dict "$t") "$d/corpus" "${seeds[@]}" >"$d/log" 2>&1
	rc=$?
	local execs cov ft units found
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log" | tail -1)
	[ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$d/log" | tail -1 | tr -d '#')
	cov=$(grep -o 'cov: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)
	units=$(find "$d/corpus" -type f | wc -l)
	found=$(($(find "$d/artifacts" -type f | wc -l) - before))
	[ "$found" -gt 0 ] && rc=1
	if [ $rc -eq 0 ]; then
		echo "$t: ${secs} s, ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, corpus $units, nothing found"
	else
		echo "$t: FAILED (exit $rc, $found new in $d/artifacts): ${execs:-?} executions, cov ${cov:-?}"
		grep -E 'Test unit written|SUMMARY|CRASH|TIMEOUT|OOM' "$d/log" | sort | uniq -c | head -20 | sed 's/^/    /'
		return 1
	fi
}

failed=0
if [ "$parallel" -le 1 ]; then
	for t in "$@"; do one "$t" || failed=1; done
else
	pids=()
	for t in "$@"; do
		one "$t" &
		pids+=($!)
		while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do sleep 1; done
	done
	for p in "${pids[@]}"; do wait "$p" || failed=1; done
fi
[ $failed -eq 0 ]

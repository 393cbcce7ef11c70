#!/usr/bin/env bash
# differential.sh - memprof's allocator model (src/allocsim) against PyTorch's real caching allocator: random op
# scripts (gen_ops.py) replayed on a release's real libc10_cuda.so on the fake device (tests/testbed/replay) and
# by the model ($BUILD/tests/allocsim/replay_ops), logs compared line by line (OPS.md).
#
#   differential.sh [--count N] [--seed S] [--variants "V..." | all] [--results DIR] [--build DIR]
#
# --count     scripts per variant (MEMPROF_ALLOCSIM_COUNT, default 100)
# --seed      gen_ops.py's seed (MEMPROF_ALLOCSIM_SEED, default 1); the same seed gives the same scripts
# --variants  test-bed variants (MEMPROF_ALLOCSIM_VARIANTS, default "debian-2.6 pypi-2.14.1"; "all": those and
#             every PyPI release the test bed knows)
# --results   where differences, failed checks and the run's files are kept (MEMPROF_ALLOCSIM_RESULTS, default a
#             fresh directory under ${TMPDIR:-/tmp}); kept only when something failed, unless given
# --build     memprof's build directory, for the model's replay_ops (BUILD; default the directory of $MEMPROF as
#             make check sets it, else _build in this tree)
#
# Per variant, scripts are generated for its release (gen_ops.py --release), grouped by header and replayed in
# batches, one process per header; then the real side's own checks, which must hold whatever the model says:
# every batch reset left an empty device (replay exits 4 otherwise), no script was refused (one the real
# allocator stopped with an INTERNAL ASSERT of its own, a bug of that release, is counted apart), every log passes
# `replaylog.py check` (reserved = the segments, blocks tile them, live allocations are their blocks), and one
# script in ten gives the same log when replayed again in another process, in another order. When replay_ops
# exists, each script (its stream lines given the handles the real side printed) is replayed by the model and the
# logs compared; otherwise this says so and compares nothing. Prints per variant: scripts, ops, OOMs, refused,
# differences, check failures, time (and per 1,000 scripts); each difference with its seed, the script kept under
# the results directory and the first differing line of each side. Exit 0 when every check held and no log
# differed, 1 otherwise, 2 usage, 77 when no variant could be built (MEMPROF_ALLOCSIM_SKIP=1 or
# MEMPROF_TESTBED_SKIP=1 also give 77).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
testbed=$top/tests/testbed
log() { echo "allocsim/differential: $*" >&2; }
die() { log "error: $*"; exit 2; }
# shellcheck source=../testbed/lib/common.sh
. "$testbed/lib/common.sh"

if [ "${MEMPROF_ALLOCSIM_SKIP:-0}" = 1 ] || [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	log "MEMPROF_ALLOCSIM_SKIP=1 or MEMPROF_TESTBED_SKIP=1: skipped"
	exit 77
fi
count=${MEMPROF_ALLOCSIM_COUNT:-100}
seed=${MEMPROF_ALLOCSIM_SEED:-1}
variants=${MEMPROF_ALLOCSIM_VARIANTS:-debian-2.6 pypi-2.14.1}
results=${MEMPROF_ALLOCSIM_RESULTS:-}
# The build directory: BUILD, else that of the CLI that make check names (MEMPROF), else _build.
build=${BUILD:-$(dirname "${MEMPROF:-$top/_build/memprof}")}
while [ $# -gt 0 ]; do
	case $1 in
	--count) count=$2 ;;
	--seed) seed=$2 ;;
	--variants) variants=$2 ;;
	--results) results=$2 ;;
	--build) build=$2 ;;
	*) die "usage: differential.sh [--count N] [--seed S] [--variants \"V...\"|all] [--results DIR] [--build DIR]" ;;
	esac
	shift 2
done
case $count in '' | *[!0-9]*) die "--count takes a number" ;; esac
if [ "$variants" = all ]; then
	variants="debian-2.6 $(for r in $tb_pypi_releases; do echo "pypi-$r"; done)"
fi
keep_results=1
if [ -z "$results" ]; then
	results=$(mktemp -d "${TMPDIR:-/tmp}/allocsim-differential.XXXXXX")
	keep_results=0
fi
mkdir -p "$results"
results=$(cd "$results" && pwd)
model=$build/tests/allocsim/replay_ops
py() { python3 "$here/replaylog.py" "$@"; }

release_of() { # VARIANT -> X.Y
	case $1 in
	debian-2.6) echo 2.6 ;;
	pypi-*) local v=${1#pypi-} && echo "${v%.*}" ;;
	*) echo 2.6 ;; # the c10 builds of tests/testbed/c10 are 2.6's source
	esac
}

# batches OPSDIR - "FILE FILE ..." per line: the scripts grouped by header, at most 200 a batch.
batches() {
	awk 'FNR == 1 { if (key != "") print key "\t" file; key = ""; file = FILENAME }
	     /^(settings|capacity|fraction) / { key = key $0 "|" }
	     END { if (key != "") print key "\t" file }' "$1"/*.ops |
		sort -t"$(printf '\t')" -k1,1 -k2,2 |
		awk -F'\t' '$1 != prev || n == 200 { if (line != "") print line; line = ""; n = 0; prev = $1 }
		            { line = line (n ? " " : "") $2; n++ } END { if (line != "") print line }'
}

# replay_batches VARIANT BATCHFILE OUTDIR - every batch of BATCHFILE replayed; the logs in OUTDIR/logs, the
# per-script statuses in OUTDIR/status; returns 1 if a process failed or a reset did not leave the device empty.
# A process that asks for a restart (replay.cpp: the allocator keeps an emptied expandable segment's address
# space) is followed by a new one for the rest of its batch; OUTDIR/restarts counts them.
replay_batches() {
	local variant=$1 list=$2 dir=$3 k=0 rc bad=0 files
	mkdir -p "$dir/logs"
	: >"$dir/status"
	: >"$dir/restarts"
	while read -r files; do
		while [ -n "$files" ]; do
			k=$((k + 1))
			rc=0
			# shellcheck disable=SC2086 # one word per script
			nice $runner $files >"$dir/batch-$k.out" 2>"$dir/batch-$k.err" || rc=$?
			py split "$dir/batch-$k.out" "$dir/logs" >>"$dir/status" || bad=1
			case $rc in
			0 | 3) files= ;;
			5) echo "$k" >>"$dir/restarts"
				# shellcheck disable=SC2086
				files=$(awk 'NR == FNR { if ($1 == "###" && $2 == "end") done[$3] = 1; next }
				             { for (i = 1; i <= NF; i++) if (!($i in done)) printf "%s ", $i }' \
					"$dir/batch-$k.out" - <<<"$files")
				files=${files% } ;;
			4) log "$variant: batch $k: a reset did not leave the device empty: $(grep -h reset-failed "$dir/batch-$k.out")"
				bad=1 files= ;;
			*) log "$variant: batch $k: replay exited $rc: $(tail -3 "$dir/batch-$k.err")"
				bad=1 files= ;;
			esac
		done
	done <"$list"
	return $bad
}

total_failed=0
built=0
summary=()
for variant in $variants; do
	release=$(release_of "$variant")
	failed=0
	if ! bin=$(MEMPROF_C10_JOBS=2 "$testbed/replay/run.sh" --binary "$variant" 2>"$results/$variant.build.log"); then
		log "$variant: the replay program did not build here: $(tail -2 "$results/$variant.build.log")"
		summary+=("$variant: NOT BUILT (see $results/$variant.build.log)")
		total_failed=1
		keep_results=1
		continue
	fi
	built=$((built + 1))
	DRIVER_LOADER=
	DRIVER_LIBRARY_PATH=
	# shellcheck source=/dev/null
	. "$(dirname "$bin")/driver.env"
	runner=$bin
	t0=$(date +%s.%N) # the time to replay and check, the builds aside
	[ -z "$DRIVER_LOADER" ] || runner="$DRIVER_LOADER --library-path $DRIVER_LIBRARY_PATH $bin"

	ops=$results/ops-$release-s$seed-n$count
	[ -f "$ops/.complete" ] || { python3 "$here/gen_ops.py" --release "$release" "$seed" "$count" "$ops" && touch "$ops/.complete"; }
	work=$results/$variant
	rm -rf "$work"
	mkdir -p "$work"
	batches "$ops" >"$work/batches"
	replay_batches "$variant" "$work/batches" "$work/run1" || failed=1
	# A script the real allocator stopped with an INTERNAL ASSERT of its own is a bug of that release (2.1-2.4's
	# expandable segments), not a refusal: counted apart; the model must stop at the same op (compared below).
	asserted=0 refused=0
	while read -r name status; do
		[ "$status" = ok ] && continue
		if [ "$status" = error ] && tail -n 1 "$work/run1/logs/$name.log" | grep -q '^error .*INTERNAL ASSERT FAILED'; then
			asserted=$((asserted + 1))
			continue
		fi
		refused=$((refused + 1))
		if [ $refused -le 5 ]; then
			grep -h '^error' "$work/run1/logs/$name.log" 2>/dev/null | sed "s|^|  $name: |" >&2 || true
		fi
	done <"$work/run1/status"
	if [ "$refused" -gt 0 ]; then
		log "$variant: $refused scripts refused or unfinished (the first 5 above)"
		failed=1
	fi
	# shellcheck disable=SC2046
	read -r n_scripts n_ops n_ooms < <(py count $(find "$work/run1/logs" -name '*.log' | sort))
	[ "$n_scripts" -eq "$count" ] || { log "$variant: $n_scripts logs for $count scripts"; failed=1; }
	checks=0
	if ! find "$work/run1/logs" -name '*.log' -print0 | xargs -0 python3 "$here/replaylog.py" check >"$work/check.txt"; then
		checks=$(wc -l <"$work/check.txt")
		log "$variant: $checks own-check failures, the first: $(head -3 "$work/check.txt")"
		failed=1
	fi
	# Determinism and batch independence: one script in ten again, in another process, in the other order.
	awk '{ for (i = NF; i >= 1; i--) if ((++n) % 10 == 1) printf "%s%s", $i, " "; print "" }' "$work/batches" |
		sed 's/ *$//' | grep . >"$work/batches2" || true
	if [ -s "$work/batches2" ]; then
		replay_batches "$variant" "$work/batches2" "$work/run2" || failed=1
		names=$(sed 's/ .*//' "$work/run2/status" | sort -u)
		# shellcheck disable=SC2086
		if ! py same "$work/run1/logs" "$work/run2/logs" $names >"$work/same.txt"; then
			log "$variant: not reproducible: $(head -2 "$work/same.txt")"
			checks=$((checks + $(wc -l <"$work/same.txt")))
			failed=1
		fi
	fi
	diffs=-
	if [ -x "$model" ]; then
		names=$(sed 's/ .*//' "$work/run1/status")
		# shellcheck disable=SC2086
		if py model "$model" "$release" "$ops" "$work/run1/logs" "$work/model" "$results/differences-$variant" \
			$names >"$work/differences.txt"; then
			diffs=0
		else
			diffs=$(grep -c '^DIFF' "$work/differences.txt" || true)
			cat "$work/differences.txt"
			failed=1
		fi
	else
		log "$variant: $model is not built: the model is not compared (the real side's own checks only)"
	fi
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	per=$(echo "scale=1; $secs * 1000 / $count" | bc)
	restarts=$(wc -l <"$work/run1/restarts")
	summary+=("$variant (release $release): $n_scripts scripts, $n_ops ops, $n_ooms OOMs, $refused refused, $asserted stopped by the allocator's own assert, differences $diffs, own-check failures $checks, $restarts restarts, ${secs%.*} s ($per s per 1,000)")
	[ $failed -eq 0 ] || { total_failed=1; keep_results=1; }
done

for line in "${summary[@]}"; do
	echo "allocsim/differential: $line"
done
[ $built -gt 0 ] || { log "no variant could be built here"; exit 77; }
if [ $keep_results -eq 1 ]; then
	echo "allocsim/differential: results in $results"
else
	rm -rf "$results"
fi
exit $total_failed

#!/usr/bin/env bash
# parity.sh [--builds "B..."] [--stacks "python all"] [--seeds "S..."] [--out DIR] [--gate] - memprof's categories
# against PyTorch's memory profiler, allocation by allocation (README.md): each job runs on the fake device with
# both recorders on (profiler_oracle.py), match.py pairs the profiler's allocations with the ring's, and
# compare.py sets memprof's timeline (every allocation) and categories (the end state) beside the profiler's.
# Jobs: job_mlp.py, and the OOM campaign's generated programs of --seeds (tests/oom/campaign/gen.py: MLP, CNN,
# transformer, recurrent; optimizers, AMP, checkpointing, streams) run for two steps on a device they fit.
# --gate: exit 1 unless every job reaches the issue's bar (bytes agreeing over the timeline: 95 % with stacks
# "all", 85 % with "python"; the end state equal for every block the profiler labels).
# Env: MEMPROF (default _build/memprof).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
MEMPROF=${MEMPROF:-$top/_build/memprof}
builds=pypi-2.14.1 stacks="python all" seeds= out= gate=0
while [ $# -gt 0 ]; do
	case $1 in
	--builds) builds=$2; shift 2 ;;
	--stacks) stacks=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--gate) gate=1; shift ;;
	*) sed -n '2,10s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; }
mkdir -p "$out"
failed=0

# measure LABEL DIR MODE: DIR holds the oracle's snapshot.pickle and profiler_categories.json
measure() {
	local label=$1 p=$2 mode=$3
	python3 "$here/match.py" "$p/snapshot.pickle" "$p/profiler_categories.json" --out "$p/matches.json" \
		>"$p/match.txt" || { echo "parity: $label: not every allocation matched: $(tail -3 "$p/match.txt")"; return 1; }
	"$MEMPROF" timeline "$p/snapshot.pickle" -o "$p/timeline.raw.json" --format raw 2>"$p/memprof.err" &&
		"$MEMPROF" categories "$p/snapshot.pickle" --format json --blocks >"$p/blocks.json" 2>>"$p/memprof.err" ||
		{ echo "parity: $label: memprof failed: $(tail -2 "$p/memprof.err")"; return 1; }
	python3 "$here/compare.py" "$p/matches.json" "$p/timeline.raw.json" "$p/blocks.json" --json "$p/parity.json" \
		--label "$label"
	[ $gate -eq 1 ] || return 0
	python3 - "$p/parity.json" "$mode" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
bar = 0.95 if sys.argv[2] == "all" else 0.85
share = r["agree_bytes"] / max(r["bytes"], 1)
end = r["end_state"]
if share < bar or end["agree"] != end["blocks"]:
    sys.exit("parity: below the bar: %.1f %% of bytes (needs %.0f %%), end state %d/%d"
             % (100 * share, 100 * bar, end["agree"], end["blocks"]))
EOF
}

# run LABEL DIR BUILD SCRIPT ARGS...: the job through the test bed; 77 when the build cannot run here
run() {
	local label=$1 dir=$2 build=$3 script=$4 rc
	shift 4
	rm -rf "$dir"
	FAKECUDA_CAPACITY=16G "$top/tests/testbed/job.sh" "$build" "$script" truth "$dir" "$@" >/dev/null 2>"$dir.err"
	rc=$?
	[ $rc -eq 0 ] && return 0
	[ $rc -eq 77 ] && { echo "parity: $build cannot run here: $(tail -1 "$dir.err")"; return 77; }
	echo "parity: $label: the job failed: $(tail -3 "$dir.err")"
	return 1
}

for build in $builds; do
	for mode in $stacks; do
		# the job's cwd is DIR; the oracle writes DIR/parity/ (the checkpoint's own snapshot.pickle stays apart)
		dir=$out/$build-mlp-$mode
		run "$build mlp $mode" "$dir" "$build" "$here/job_mlp.py" --stacks "$mode"
		case $? in
		0) measure "$build mlp stacks=$mode" "$dir/parity" "$mode" || failed=1 ;;
		77) continue 2 ;;
		*) failed=1 ;;
		esac
		for seed in $seeds; do
			job=$out/gen-$seed
			[ -d "$job" ] || python3 "$top/tests/oom/campaign/gen.py" "$seed" "$job" >/dev/null ||
				{ echo "parity: gen.py $seed failed"; failed=1; continue; }
			cp "$here/profiler_oracle.py" "$job/"
			dir=$out/$build-gen-$seed-$mode
			family=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"]["family"])' "$job/spec.json")
			run "$build seed $seed $mode" "$dir" "$build" "$job/job_$seed.py" "$job/spec.json" \
				--set "history=\"$mode\"" --set 'memory_fraction=null' --parity parity --stop-after-step 1 ||
				{ failed=1; continue; }
			measure "$build seed $seed ($family) stacks=$mode" "$dir/parity" "$mode" || failed=1
		done
	done
done
exit $failed

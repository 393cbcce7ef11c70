#!/usr/bin/env bash
# parity.sh [--builds "B..."] [--stacks "python all"] [--out DIR] [--gate] - memprof's categories against PyTorch's
# memory profiler, allocation by allocation (README.md): each job runs on the fake device with both recorders on
# (profiler_oracle.py), match.py pairs the profiler's allocations with the ring's, and compare.py sets memprof's
# timeline (every allocation) and categories (the end state) beside the profiler's categories.
# --gate: exit 1 unless every build and stacks mode reaches the issue's bar (bytes agreeing over the timeline: 95 %
# with stacks "all", 85 % with "python"; the end state equal for every block the profiler labels).
# Env: MEMPROF (default _build/memprof).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
MEMPROF=${MEMPROF:-$top/_build/memprof}
builds=pypi-2.14.1 stacks="python all" out= gate=0
while [ $# -gt 0 ]; do
	case $1 in
	--builds) builds=$2; shift 2 ;;
	--stacks) stacks=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--gate) gate=1; shift ;;
	*) sed -n '2,8s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; }
mkdir -p "$out"
failed=0
for build in $builds; do
	for mode in $stacks; do
		dir=$out/$build-mlp-$mode
		rm -rf "$dir"
		# the job's cwd is DIR; the oracle writes DIR/parity/ (the checkpoint's own snapshot.pickle stays apart)
		"$top/tests/testbed/job.sh" "$build" "$here/job_mlp.py" truth "$dir" --stacks "$mode" >/dev/null 2>"$dir.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			[ $rc -eq 77 ] && { echo "parity: $build cannot run here: $(tail -1 "$dir.err")"; continue; }
			echo "parity: $build $mode: the job failed: $(tail -3 "$dir.err")"
			failed=1
			continue
		fi
		p=$dir/parity
		python3 "$here/match.py" "$p/snapshot.pickle" "$p/profiler_categories.json" --out "$p/matches.json" \
			>"$p/match.txt" || { echo "parity: $build $mode: not every allocation matched: $(tail -3 "$p/match.txt")"; failed=1; continue; }
		"$MEMPROF" timeline "$p/snapshot.pickle" -o "$p/timeline.raw.json" --format raw &&
			"$MEMPROF" categories "$p/snapshot.pickle" --format json --blocks >"$p/blocks.json" ||
			{ echo "parity: $build $mode: memprof failed"; failed=1; continue; }
		python3 "$here/compare.py" "$p/matches.json" "$p/timeline.raw.json" "$p/blocks.json" --json "$p/parity.json" \
			--label "$build mlp stacks=$mode"
		[ $gate -eq 1 ] || continue
		python3 - "$p/parity.json" "$mode" <<'EOF' || failed=1
import json, sys
r = json.load(open(sys.argv[1]))
bar = 0.95 if sys.argv[2] == "all" else 0.85
share = r["agree_bytes"] / max(r["bytes"], 1)
end = r["end_state"]
if share < bar or end["agree"] != end["blocks"]:
    sys.exit("parity: below the bar: %.1f %% of bytes (needs %.0f %%), end state %d/%d"
             % (100 * share, 100 * bar, end["agree"], end["blocks"]))
EOF
	done
done
exit $failed

#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# torchrun.sh - a real distributed job from its launcher: tests/testbed/dist.sh runs uneven.py under torchrun (4
# ranks, the nccl backend on the test bed's NCCL stub, PyPI's 2.14.1, each rank on its own fake device, waiting in
# its checkpoint); `memprof snapshot --pid AGENT --ranks` reads every rank from torchrun's agent (the agent, which
# imported torch but is no rank, left out), each equal to that rank's own _snapshot(); `memprof fleet` over the
# directory names rank 2 alone as the outlier, and its difference from the median rank is what rank 2's notes say
# it holds more (the shard's bytes as a parameter, each leaked buffer by its name). Env: MEMPROF (the CLI),
# MEMPROF_DIST_TORCH (the build, default pypi-2.14.1; debian-2.6 runs chrooted and is read with --sysroot).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fleet_dist_job
"$top/tests/testbed/dist.sh" "$torch" "$top/tests/testbed/jobs/uneven.py" live "$job" >"$work/dist.vars" \
	2>"$work/dist.err"
case $? in
0) ;;
77) not_run "the test bed cannot run $torch under torchrun here: $(tail -1 "$work/dist.err")" ;;
*) bad "the job did not start: $(tail -3 "$work/dist.err" | tr '\n' ' ')"; finish; exit 1 ;;
esac
agent=$(cat "$job/launcher.pid")
sysroot=$(cat "$job/rank-0/sysroot")

"$memprof" snapshot --pid "$agent" --ranks -o "$work/out" --owners ${sysroot:+--sysroot "$sysroot"} \
	>"$work/ranks.out" 2>"$work/ranks.err" &&
	grep -q "4 of 4 ranks below pid $agent saved" "$work/ranks.out" &&
	ok "snapshot --ranks from torchrun's agent: 4 ranks, the agent itself left out" ||
	bad "snapshot --ranks: $(cat "$work/ranks.out" "$work/ranks.err" | tr '\n' ' ')"
same=0
for r in 0 1 2 3; do
	"$memprof" convert "$job/rank-$r/snapshot.pickle" "$work/truth-$r.json" 2>/dev/null &&
		"$memprof" convert "$work/out/rank-$r/snapshot.pickle" "$work/mine-$r.json" 2>/dev/null &&
		python3 "$top/tests/walker/compare_truth.py" "$work/truth-$r.json" "$work/mine-$r.json" >"$work/cmp-$r" 2>&1 &&
		same=$((same + 1))
done
[ "$same" -eq 4 ] && ok "every rank's snapshot from the agent's pid is the rank's own _snapshot()" ||
	bad "$((4 - same)) ranks differ from their own _snapshot(): $(tail -q -n 3 "$work"/cmp-* | tr '\n' ' ')"

"$memprof" fleet "$work/out" --format json >"$work/fleet.json" 2>"$work/fleet.err" &&
	python3 - "$work/fleet.json" "$job/rank-2/notes.json" >"$work/fleet.check" 2>&1 <<'PY' &&
import json, sys
fleet, notes = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
outliers = sorted({o["rank"] for o in fleet["outliers"]})
assert outliers == [notes["heavy_rank"]], "outliers %s, the notes say rank %d" % (outliers, notes["heavy_rank"])
diff = {(m["module"], m["category"]): m["difference"] for m in fleet["outliers"][0]["modules"]}
for name, size in notes["extra"].items():
    if name.startswith("leak["):  # a Python list's item, named as the job names it
        assert diff.get((name, "other_python")) == size, (name, size, diff.get((name, "other_python")))
    else:  # the frozen shard: a module's parameter (named by the job's variable), its bytes
        assert size in [d for (m, c), d in diff.items() if c == "parameter"], (name, size, diff)
print("ok")
PY
	ok "fleet: rank 2 alone is the outlier, by the shard's and each leak's bytes its notes name" ||
	bad "fleet: $(cat "$work/fleet.check" "$work/fleet.err" | tr '\n' ' ')"
finish

#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# ranks.sh - `memprof snapshot --pid LAUNCHER --ranks -o DIR` on a job of two ranks (tests/fleet/launch.py: two
# test-bed jobs of PyPI's 2.14.1 below one launcher, RANK in their environment, waiting in their checkpoints):
# every rank's snapshot, read from the launcher's pid with the ranks held still together, equals that rank's own
# _snapshot() (tests/walker/compare_truth.py); DIR/ranks-HOST.json names each rank's process; the ranks are let go
# after (they run on to their end); a launcher with no rank below it and --ranks elsewhere are refused in one line.
# Env: MEMPROF (the CLI).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
loop=$top/tests/testbed/jobs/training_loop.py
fleet_launch -- "$loop" 2 -- "$loop" 2

"$memprof" snapshot --pid "$launcher" --ranks -o "$work/out" --format json --owners >"$work/ranks.out" \
	2>"$work/ranks.err" &&
	grep -q "2 of 2 ranks below pid $launcher saved in $work/out/rank-\*/snapshot.json (held still together" \
		"$work/ranks.out" && ok "snapshot --ranks: 2 ranks saved, held still together" ||
	bad "snapshot --ranks: $(cat "$work/ranks.out" "$work/ranks.err" | tr '\n' ' ')"
for r in 0 1; do
	"$memprof" convert "$work/job-$r/snapshot.pickle" "$work/truth-$r.json" 2>"$work/convert.err" &&
		python3 "$top/tests/walker/compare_truth.py" "$work/truth-$r.json" "$work/out/rank-$r/snapshot.json" \
			>"$work/compare-$r.txt" 2>&1 &&
		ok "rank $r: the snapshot read from the launcher's pid is the rank's own _snapshot()" ||
		bad "rank $r: $(tail -4 "$work/compare-$r.txt" "$work/convert.err" 2>/dev/null | tr '\n' ' ')"
done
python3 - "$work" <<'PY' && ok "ranks-HOST.json names each rank's process" || bad "ranks-HOST.json: $(cat "$work"/out/ranks-*.json)"
import glob, json, sys
work = sys.argv[1]
m = json.load(open(glob.glob(work + "/out/ranks-*.json")[0]))
pids = {r: int(open("%s/job-%s/pid" % (work, r)).read()) for r in ("0", "1")}
assert int(open(work + "/launcher").read()) == m["launcher"]
assert sorted(r["rank"] for r in m["ranks"]) == ["0", "1"]
assert all(r["pid"] == pids[r["rank"]] and r["saved"] and r["local_rank"] == r["rank"] for r in m["ranks"])
assert any(b.get("owner") for r in m["ranks"] for s in json.load(open(work + "/out/" + r["snapshot"]))["segments"]
           for b in s["blocks"])
PY
# let go: resumed, each rank runs on to its end
for r in 0 1; do "$top/tests/testbed/job.sh" --resume "$work/job-$r" >/dev/null 2>&1; done
ended=0
for _ in $(seq 120); do
	ended=0
	for r in 0 1; do kill -0 "$(cat "$work/job-$r/pid")" 2>/dev/null || ended=$((ended + 1)); done
	[ "$ended" -eq 2 ] && break
	sleep 0.5
done
[ "$ended" -eq 2 ] && ok "the ranks were let go: resumed, both ran to their end" || bad "the ranks did not run on"

"$memprof" snapshot --pid $$ --ranks -o "$work/none" >"$work/none.out" 2>&1
[ $? -eq 2 ] && [ "$(wc -l <"$work/none.out")" -eq 1 ] &&
	grep -q "no process below pid $$ has PyTorch's CUDA allocator" "$work/none.out" &&
	ok "a launcher with no rank below it: exit 2, one line" || bad "no ranks: $(cat "$work/none.out")"
"$memprof" segsum --pid $$ --ranks >"$work/misuse.out" 2>&1
[ $? -eq 2 ] && grep -q "\-\-ranks is for 'memprof snapshot --pid PID --ranks -o DIR'" "$work/misuse.out" &&
	ok "--ranks elsewhere is refused" || bad "segsum --ranks: $(cat "$work/misuse.out")"
finish

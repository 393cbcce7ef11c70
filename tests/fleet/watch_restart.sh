#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# watch_restart.sh - `memprof watch --pid AGENT --ranks` across a restart: tests/testbed/jobs/restart.py under
# torchrun (dist.sh --max-restarts 1, 4 ranks, PyPI's 2.14.1) is watched from the agent's pid in its first attempt;
# rank 1 fails, torchrun stops the others and starts all four again. The watch lets the ended ranks go (saying
# so), watches the new ones, and when the new rank 1 runs out of memory (oom_rank.py's job) its explanation goes to
# DIR/rank-1/ and the other ranks' snapshots of that moment beside theirs; `memprof fleet DIR` shows rank 1's OOM.
# Env: MEMPROF (the CLI), MEMPROF_DIST_TORCH (the build, default pypi-2.14.1).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fleet_dist_job
mkdir -p "$job"
"$top/tests/testbed/dist.sh" --max-restarts 1 "$torch" "$top/tests/testbed/jobs/restart.py" live "$job" \
	>"$work/dist.vars" 2>"$work/dist.err" &
dist=$!
first() { cat "$job"/rank-[0-3]/attempt-0.pid 2>/dev/null | wc -l; }
for _ in $(seq 600); do [ "$(first)" -eq 4 ] || ! kill -0 "$dist" 2>/dev/null && break; sleep 0.5; done
if [ "$(first)" -ne 4 ]; then
	rc=0
	wait "$dist" || rc=$?
	[ "$rc" -eq 77 ] && not_run "the test bed cannot run $torch under torchrun here: $(tail -1 "$work/dist.err")"
	bad "the first attempt did not start (dist.sh $rc): $(tail -3 "$work/dist.err" | tr '\n' ' ')"
	finish
	exit 1
fi
agent=$(cat "$job/.launcherpid")
"$memprof" watch --pid "$agent" --ranks -o "$work/out" --format json >"$work/watch.out" 2>"$work/watch.err" &
watcher=$!
for _ in $(seq 100); do [ "$(grep -c "^memprof: watching rank" "$work/watch.out")" -ge 4 ] && break; sleep 0.2; done
old1=$(cat "$job/rank-1/attempt-0.pid")
grep -q "^memprof: watching rank 1 (pid $old1)$" "$work/watch.out" &&
	[ "$(grep -c "^memprof: watching rank" "$work/watch.out")" -eq 4 ] &&
	ok "the first attempt's 4 ranks watched from the agent" ||
	bad "first attempt: $(cat "$work/watch.out" "$work/watch.err" | tr '\n' ' ')"

touch "$job/CRASH" # rank 1 fails; torchrun starts them all again, and the new rank 1 runs out
rc=0
wait "$dist" || rc=$?
dist=
[ "$rc" -eq 0 ] ||
	bad "the second attempt did not reach every checkpoint (dist.sh $rc): $(tail -3 "$work/dist.err" | tr '\n' ' ')"
new1=$(cat "$job/rank-1/pid" 2>/dev/null)
for _ in $(seq 100); do grep -q "OutOfMemoryError #1 in rank 1" "$work/watch.out" && break; sleep 0.2; done
ended=0
for r in 0 1 2 3; do
	grep -q "^memprof: rank $r (pid $(cat "$job/rank-$r/attempt-0.pid")) ended$" "$work/watch.out" && ended=$((ended + 1))
done
[ "$ended" -eq 4 ] && [ -n "$new1" ] && [ "$new1" != "$old1" ] &&
	grep -q "^memprof: watching rank 1 (pid $new1)$" "$work/watch.out" &&
	ok "the restart: the 4 ended ranks let go, the new ones watched (rank 1: pid $old1, then $new1)" ||
	bad "the restart: $ended ended, rank 1 $old1 -> ${new1:-?}: $(cat "$work/watch.out" "$work/watch.err" | tr '\n' ' ')"
said="OutOfMemoryError #1 in rank 1 (pid $new1, thread [0-9]*): wrote $work/out/rank-1/oom-1.{json,pickle,pystack.txt}"
grep -q "$said; the other 3 ranks' snapshots" "$work/watch.out" &&
	python3 "$top/tests/oom/check.py" "$work/out/rank-1/oom-1.json" "$job/rank-1/notes.json" full \
		>"$work/check.out" 2>&1 &&
	ok "the new rank 1's OOM explained in its own directory (PyTorch's message), the 3 others' snapshots kept" ||
	bad "rank 1's OOM: $(cat "$work/check.out" "$work/watch.out" "$work/watch.err" | tr '\n' ' ')"
"$memprof" fleet "$work/out" >"$work/fleet.txt" 2>&1 &&
	grep -q "rank 1 ran out of memory (1 OOM; the first: $work/out/rank-1/oom-1.json)" "$work/fleet.txt" &&
	ok "fleet over the watch's directory: rank 1's OOM beside the others' state" ||
	bad "fleet: $(head -30 "$work/fleet.txt" | tr '\n' ' ')"
fleet_stop_watch
[ "$rc" -eq 0 ] && grep -q "stopped watching; 1 OOM$" "$work/watch.out" &&
	ok "Ctrl-C: the watch ended cleanly" || bad "Ctrl-C: rc $rc, $(tail -2 "$work/watch.out" | tr '\n' ' ')"
finish

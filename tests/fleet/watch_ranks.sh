#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# watch_ranks.sh - `memprof watch --pid LAUNCHER --ranks -o DIR` on a job of two ranks (tests/fleet/launch.py, PyPI's
# 2.14.1): rank 0 is oom_causes.py held before its failing request, rank 1 a training loop waiting in its checkpoint.
# Both are watched from the launcher's pid; when rank 0 runs out, its explanation (from the C++ exception), stacks
# and snapshot go to DIR/rank-0/, and rank 1's snapshot of that moment (held still) to DIR/rank-1/oom-1.pickle,
# equal to its own _snapshot(); `memprof fleet DIR` shows rank 0's OOM explained beside rank 1's state; Ctrl-C then
# lets both go. Env: MEMPROF (the CLI).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../oom/at_throw.sh
. "$top/tests/oom/at_throw.sh" # oom_check_files
fleet_launch -- "$top/tests/testbed/jobs/oom_causes.py" --cause fragmentation \
	--checkpoint-before-oom -- "$top/tests/testbed/jobs/training_loop.py" 2

"$memprof" watch --pid "$launcher" --ranks -o "$work/out" --format json >"$work/watch.out" 2>"$work/watch.err" &
watcher=$!
for _ in $(seq 100); do [ "$(grep -c "^memprof: watching rank" "$work/watch.out")" -ge 2 ] && break; sleep 0.2; done
grep -q "^memprof: watching rank 0 (pid $(cat "$work/job-0/pid"))" "$work/watch.out" &&
	grep -q "^memprof: watching rank 1 (pid $(cat "$work/job-1/pid"))" "$work/watch.out" &&
	ok "watch --ranks: both ranks found below the launcher and watched" ||
	bad "watch --ranks: $(cat "$work/watch.out" "$work/watch.err" | tr '\n' ' ')"
touch "$work/job-0/RESUME" # rank 0 goes on to its failing request
for _ in $(seq 300); do grep -q "OutOfMemoryError #1 in rank 0" "$work/watch.out" && break; sleep 0.2; done
grep -q "OutOfMemoryError #1 in rank 0 (pid $(cat "$work/job-0/pid"), thread [0-9]*): wrote $work/out/rank-0/oom-1.{json,pickle,pystack.txt}; the other 1 rank' snapshots" \
	"$work/watch.out" && ok "rank 0's OOM reported in its own directory, the other rank's snapshot kept" ||
	bad "no report of rank 0's OOM: $(cat "$work/watch.out" "$work/watch.err" | tr '\n' ' ')"
oom_check_files "rank 0" "$work/out/rank-0" "$work/job-0" fragmentation
"$memprof" convert "$work/job-1/snapshot.pickle" "$work/truth-1.json" 2>/dev/null &&
	"$memprof" convert "$work/out/rank-1/oom-1.pickle" "$work/at-oom-1.json" 2>/dev/null &&
	python3 "$top/tests/walker/compare_truth.py" "$work/truth-1.json" "$work/at-oom-1.json" >"$work/compare.txt" 2>&1 &&
	ok "rank 1's snapshot at rank 0's OOM is its own _snapshot() (it waited in its checkpoint)" ||
	bad "rank 1 at the OOM: $(tail -4 "$work/compare.txt" 2>/dev/null | tr '\n' ' ')"
"$memprof" fleet "$work/out" >"$work/fleet.txt" 2>&1 &&
	grep -q "rank 0 ran out of memory (1 OOM; the first: $work/out/rank-0/oom-1.json)" "$work/fleet.txt" &&
	grep -q "first cause: fragmentation" "$work/fleet.txt" && grep -Eq "^ +1 +[0-9.]+MiB" "$work/fleet.txt" &&
	ok "fleet over the watch's directory: rank 0's OOM explained beside rank 1's state at that moment" ||
	bad "fleet over the watch's directory: $(head -30 "$work/fleet.txt" | tr '\n' ' ')"
fleet_stop_watch
[ "$rc" -eq 0 ] && grep -q "stopped watching; 1 OOM$" "$work/watch.out" && kill -0 "$(cat "$work/job-1/pid")" &&
	"$top/tests/testbed/job.sh" --resume "$work/job-1" >/dev/null 2>&1 &&
	ok "Ctrl-C: the watch let the ranks go on" || bad "Ctrl-C: rc $rc, $(tail -2 "$work/watch.out" | tr '\n' ' ')"
finish

#!/usr/bin/env bash
# check.sh - the job runner itself (../job.sh, memprof_testbed): what it promises a job script, on each build
# (MEMPROF_JOB_BUILDS, default job.sh --list), in truth mode:
#   - the truth files are there and agree with each other: every CUDA tensor of the manifest lies inside an active
#     block of the job's own snapshot, the memory_stats of every device are there, threads.txt names every thread;
#   - ARGS reach the script, the environment reaches the fake device (FAKECUDA_DEVICES=3: three devices);
#   - PyTorch's MemTracker table is written when the script asks for it;
#   - a script that raises, or ends without a checkpoint, or checkpoints twice fails the run (exit 1) with its
#     stderr; an unknown build is a usage error (2);
#   - live mode: the job waits in its checkpoint, --resume lets it finish, --stop reaps it.
# Prints one line per check and "N passed, M failed". MEMPROF_TESTBED_SKIP=1: 77.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
job=$here/../job.sh
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "jobs runner: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
builds=${MEMPROF_JOB_BUILDS:-$("$job" --list)}
# shellcheck source=../../lib/check.sh
. "$here/../../lib/check.sh"
check() { # LABEL COMMAND...: ok when COMMAND succeeds
	local label=$1
	shift
	if "$@"; then ok "$label"; else bad "$label"; fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-runner.XXXXXX")
trap 'for p in "$work"/*/*/pid; do [ -f "$p" ] && "$job" --stop "$(dirname "$p")" >/dev/null 2>&1; done; rm -rf "$work"' EXIT

# A job script from stdin, saved as NAME.py.
script() { cat >"$work/$1.py"; echo "$work/$1.py"; }

consistent=$(script consistent <<'PY'
import sys, threading, torch, memprof_testbed
assert sys.argv[1:] == ["--flag", "two words"], sys.argv
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.BatchNorm1d(64)).cuda()
opt = torch.optim.Adam(model.parameters())
with memprof_testbed.mem_tracker(model, opt):
    model(torch.randn(8, 64, device="cuda")).sum().backward()
    opt.step()
    extra = memprof_testbed.register("extra", torch.empty(1000, device="cuda:2"))
    blocker = threading.Event()
    threading.Thread(target=blocker.wait, name="idle", daemon=True).start()
    memprof_testbed.checkpoint()
PY
)
# Every CUDA tensor of the manifest inside an active block of the snapshot; stats for every device; the thread.
cat >"$work/agree.py" <<'PY'
import json, pickle, sys
out = sys.argv[1]
snap = pickle.load(open(f"{out}/snapshot.pickle", "rb"))
blocks = [(s["device"], b["address"], b["size"]) for s in snap["segments"] for b in s["blocks"]
          if b["state"] == "active_allocated"]
manifest = json.load(open(f"{out}/manifest.json"))
cuda = [e for e in manifest if e["device"].startswith("cuda")]
kinds = {e["kind"] for e in cuda}
assert {"parameter", "gradient", "buffer", "optimizer_state", "registered"} <= kinds, kinds
for e in cuda:
    dev = int(e["device"].split(":")[1])
    assert any(d == dev and a <= e["data_ptr"] and e["data_ptr"] + e["nbytes"] <= a + n for d, a, n in blocks), e
names = {e["name"] for e in manifest}
assert "model.0.weight" in names and "model.0.weight.grad" in names and "model.1.running_mean" in names, names
assert any(n.startswith("opt.state[model.0.weight].exp_avg") for n in names), names
stats = json.load(open(f"{out}/memory_stats.json"))
assert sorted(stats) == ["0", "1", "2"], sorted(stats)
assert stats["2"]["allocated_bytes.all.current"] > 0
threads = open(f"{out}/threads.txt").read()
assert "in wait" in threads and "in checkpoint" in threads, threads
tracker = json.load(open(f"{out}/mem_tracker.json"))
assert tracker["current"]["cuda:0"]["Parameter"] > 0, tracker
print(f"{len(cuda)} CUDA tensors in active blocks, {len(stats)} devices")
PY

raises=$(script raises <<'PY'
import torch
torch.empty(10, device="cuda")
raise RuntimeError("the job's own error")
PY
)
no_checkpoint=$(script no_checkpoint <<'PY'
import torch
torch.empty(10, device="cuda")
PY
)
twice=$(script twice <<'PY'
import memprof_testbed
memprof_testbed.checkpoint()
memprof_testbed.checkpoint()
PY
)
resumes=$(script resumes <<'PY'
import torch, memprof_testbed
x = torch.empty(10, device="cuda")
memprof_testbed.checkpoint()
print("resumed")
PY
)

for build in $builds; do
	d=$work/$build
	mkdir -p "$d"
	if FAKECUDA_DEVICES=3 "$job" "$build" "$consistent" truth "$d/ok" --flag "two words" >"$d/ok.vars" 2>"$d/ok.err"; then
		if python3 "$work/agree.py" "$d/ok" >"$d/agree.out" 2>&1; then
			ok "$build: the truth files agree ($(cat "$d/agree.out")); ARGS and FAKECUDA_DEVICES reached the job"
		else
			bad "$build: the truth files disagree: $(tail -2 "$d/agree.out")"
		fi
	else
		bad "$build: the job failed: $(tail -3 "$d/ok.err")"
	fi
	"$job" "$build" "$raises" truth "$d/raises" >/dev/null 2>"$d/raises.err"
	rc=$?
	check "$build: a job that raises fails the run (exit $rc) with its traceback" \
		test $rc -eq 1 -a -n "$(grep "RuntimeError: the job's own error" "$d/raises.err")"
	"$job" "$build" "$no_checkpoint" truth "$d/none" >/dev/null 2>"$d/none.err"
	rc=$?
	check "$build: a job without a checkpoint fails the run (exit $rc)" \
		test $rc -eq 1 -a -n "$(grep 'without reaching memprof_testbed.checkpoint' "$d/none.err")"
	"$job" "$build" "$twice" truth "$d/twice" >/dev/null 2>"$d/twice.err"
	rc=$?
	check "$build: a second checkpoint fails the run (exit $rc)" \
		test $rc -eq 1 -a -n "$(grep 'called twice' "$d/twice.err")"
	if "$job" "$build" "$resumes" live "$d/live" >"$d/live.vars" 2>"$d/live.err"; then
		pid=$(sed -n 's/^PID=//p' "$d/live.vars")
		sleep 0.3
		check "$build: live: the job waits in its checkpoint" kill -0 "$pid"
		"$job" --resume "$d/live"
		for _ in $(seq 100); do grep -q resumed "$d/live/job.out" 2>/dev/null && break; sleep 0.1; done
		check "$build: live: --resume lets it finish" grep -q resumed "$d/live/job.out"
		"$job" --stop "$d/live"
		check "$build: live: --stop reaps it" test ! -d "/proc/$pid" -o "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$pid/status" 2>/dev/null)" = Z
	else
		bad "$build: live: the job failed: $(tail -3 "$d/live.err")"
	fi
done
"$job" no-such-build "$resumes" truth "$work/usage" >/dev/null 2>&1
rc=$?
check "an unknown build is a usage error (exit $rc)" test $rc -eq 2
"$job" >/dev/null 2>&1
check "no arguments: usage (exit 2)" test $? -eq 2
finish

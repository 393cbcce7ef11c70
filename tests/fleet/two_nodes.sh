#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# two_nodes.sh - two "nodes" on this machine: two torchrun agents (--nnodes 2, a c10d rendezvous on localhost), 2
# ranks each, of the test bed's uneven.py (PyPI's 2.14.1 on the fake device and the NCCL stub), every rank waiting
# in its checkpoint. memprof's per-node step, as it runs on each node of a real job, reads each agent's ranks into
# one shared directory; every rank there equals its own _snapshot(), and `memprof fleet` over the directory names
# the heavy rank alone, wherever the rendezvous placed it. Env: MEMPROF (the CLI).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
log() { echo "two_nodes: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { die "usage"; }
# shellcheck source=../testbed/lib/common.sh
. "$top/tests/testbed/lib/common.sh"
job=$work/job
agents=()
stop_all() {
	local pid
	for pid in "${agents[@]}"; do pkill -KILL -P "$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null; done
	fleet_cleanup
}
trap stop_all EXIT
( tb_job_args pypi-2.14.1 "$top/tests/testbed/jobs/uneven.py" "$job" >/dev/null ) 2>"$work/args.err" ||
	not_run "the test bed cannot run PyPI's 2.14.1 here: $(tail -1 "$work/args.err")"
tb_job_args pypi-2.14.1 "$top/tests/testbed/jobs/uneven.py" "$job" 2>>"$work/args.err"
mkdir -p "$job/nccl"
for r in 0 1 2 3; do mkdir -p "$job/rank-$r"; done
pydir=$top/tests/testbed/python
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for node in 0 1; do
	(
		cd "$job" || exit 1
		export MEMPROF_TESTBED_OUT=$job MEMPROF_TESTBED_MODE=live MEMPROF_TESTBED_RANKS=1 FAKENCCL_DIR=$job/nccl
		export FAKECUDA_DEVICES=2 PYTHONPATH=$pydir/boot:$pydir LD_PRELOAD=$JOB_PRELOAD
		exec "$JOB_PYTHON" -m torch.distributed.run --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d \
			--rdzv-endpoint "127.0.0.1:$port" --rdzv-id memprof-two-nodes --local-addr 127.0.0.1 \
			--log-dir "$work/logs-$node" --redirects 3 "$script"
	) </dev/null >"$work/agent-$node.out" 2>"$work/agent-$node.err" &
	agents+=($!)
done
ready=0
for _ in $(seq 240); do
	ready=0
	for r in 0 1 2 3; do [ -f "$job/rank-$r/READY" ] && ready=$((ready + 1)); done
	[ "$ready" -eq 4 ] && break
	sleep 0.5
done
[ "$ready" -eq 4 ] && ok "two torchrun agents, 2 ranks each, every rank in its checkpoint" ||
	{ bad "$ready of 4 ranks ready: $(tail -q -n 3 "$work"/agent-*.err | tr '\n' ' ')"; finish; exit 1; }

for node in 0 1; do
	"$memprof" snapshot --pid "${agents[$node]}" --ranks -o "$work/shared" >"$work/step-$node.out" 2>&1 ||
		bad "node $node's step: $(cat "$work/step-$node.out")"
done
grep -q "2 of 2 ranks" "$work/step-0.out" && grep -q "2 of 2 ranks" "$work/step-1.out" &&
	ok "each node's step read its agent's 2 ranks into the shared directory" ||
	bad "steps: $(cat "$work"/step-*.out | tr '\n' ' ')"
same=0
for r in 0 1 2 3; do
	"$memprof" convert "$job/rank-$r/snapshot.pickle" "$work/truth-$r.json" 2>/dev/null &&
		"$memprof" convert "$work/shared/rank-$r/snapshot.pickle" "$work/mine-$r.json" 2>/dev/null &&
		python3 "$top/tests/walker/compare_truth.py" "$work/truth-$r.json" "$work/mine-$r.json" >/dev/null 2>&1 &&
		same=$((same + 1))
done
[ "$same" -eq 4 ] && ok "the 4 ranks, read on their nodes, each equal its own _snapshot()" || bad "$same of 4 ranks equal"
heavy=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["heavy_rank"])' "$job/rank-0/notes.json")
"$memprof" fleet "$work/shared" --format json 2>/dev/null |
	python3 -c 'import json, sys; print(" ".join(str(o["rank"]) for o in json.load(sys.stdin)["outliers"]))' \
		>"$work/outliers" 2>&1
[ "$(cat "$work/outliers")" = "$heavy" ] && ok "fleet over the shared directory: rank $heavy alone stands out" ||
	bad "fleet's outliers: '$(cat "$work/outliers")', the heavy rank is $heavy"
finish

#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# check.sh - memprof's per-node step of a distributed job under a real Slurm (issue 34): a single-host Slurm on this
# machine (munged, slurmctld, slurmd with a private slurm.conf, key and munge socket under a temporary directory,
# SLURM_CONF), a batch job whose step runs `srun -n 2` of test-bed jobs (tests/slurm/task.py: each task a rank of
# PyPI's 2.14.1 on the fake device, waiting in its checkpoint, named by SLURM_PROCID only), then memprof as users
# run it, one task per node inside the job:
#   srun --overlap --jobid=JOBID -N1 -n1 memprof snapshot --pid <the step's slurmstepd> --ranks -o DIR
# DIR/rank-0 and DIR/rank-1 must each equal that task's own _snapshot() (tests/walker/compare_truth.py), and
# DIR/ranks-HOST.json name each task's process. The jobs are then let go and the Slurm job must end COMPLETED.
# Every daemon it started is stopped at exit. Not in `make check` (it installs and runs daemons): `make check-slurm`.
# Installs slurmctld, slurmd, slurm-client and munge (Debian) when missing and root; exit 77 with one line naming the
# step that cannot run here. Env: MEMPROF (the CLI), MEMPROF_SLURM_SKIP=1 (skip).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
memprof=$(cd "$(dirname "$memprof")" && pwd)/$(basename "$memprof")
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
[ "${MEMPROF_SLURM_SKIP:-}" != 1 ] || not_run "MEMPROF_SLURM_SKIP=1"
[ -x "$memprof" ] || not_run "no memprof at $memprof (MEMPROF)"

need="slurmctld slurmd sbatch srun sinfo squeue scancel scontrol munged"
missing() { for c in $need; do command -v "$c" >/dev/null || return 0; done; return 1; }
if missing; then
	[ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null ||
		not_run "no Slurm here ($need) and not root with apt-get to install it"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
		>/tmp/memprof-slurm-apt.log 2>&1 ||
		not_run "apt-get install slurmctld slurmd slurm-client munge failed: $(tail -1 /tmp/memprof-slurm-apt.log)"
	missing && not_run "apt-get installed Slurm, but no $(for c in $need; do command -v "$c" >/dev/null || echo "$c"; done)"
fi
[ "$(id -u)" -eq 0 ] || not_run "a private Slurm runs its daemons as root here (SlurmUser=root): not root"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-slurm.XXXXXX")
chmod 755 "$work"
daemons=() jobid=
# log FILE: its last lines on one line, for a reason.
log() { tail -n 3 "$1" 2>/dev/null | tr '\n' ' '; }
cleanup() {
	if [ -n "$jobid" ]; then
		scancel "$jobid" 2>/dev/null
		for _ in $(seq 40); do [ -z "$(squeue -h -j "$jobid" 2>/dev/null)" ] && break; sleep 0.5; done
	fi
	for d in "$work"/job-*/; do [ -f "$d/pid" ] && "$top/tests/testbed/job.sh" --stop "$d" >/dev/null 2>&1; done
	# slurmd first (its steps' slurmstepd end with the job), then slurmctld, then munged: each by the pid we got
	for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
		kill "${daemons[i]}" 2>/dev/null
		for _ in $(seq 20); do kill -0 "${daemons[i]}" 2>/dev/null || break; sleep 0.25; done
		kill -9 "${daemons[i]}" 2>/dev/null
		wait "${daemons[i]}" 2>/dev/null
	done
	if [ -n "$jobid" ]; then # a slurmstepd of our job that outlived slurmd
		for p in $(pgrep -f "^slurmstepd: \[$jobid\."); do kill -9 "$p" 2>/dev/null; done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- munge: a generated key and a private socket (the machine's munged, if any, is left alone)
mkdir -m 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$work/munge/munge.key"
sock=$work/munge/munge.sock
# --force: munged refuses root and a socket directory under /tmp without it
munged -F --force --socket="$sock" --key-file="$work/munge/munge.key" --pid-file="$work/munge/munged.pid" \
	--log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" >"$work/munge/out" 2>&1 &
daemons+=($!)
for _ in $(seq 40); do [ -S "$sock" ] && break; kill -0 "${daemons[0]}" 2>/dev/null || break; sleep 0.25; done
[ -S "$sock" ] || not_run "munged did not start: $(log "$work/munge/out") $(log "$work/munge/munged.log")"
munge --socket="$sock" -n </dev/null | unmunge --socket="$sock" >/dev/null 2>"$work/munge/unmunge.err" ||
	not_run "munge credentials do not round-trip: $(log "$work/munge/unmunge.err")"

# ---- slurm.conf
ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
read -r ctldport slurmdport <<<"$ports"
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=memprof
SlurmctldHost=localhost
SlurmctldPort=$ctldport
SlurmdPort=$slurmdport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=localhost CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

# ---- the daemons, in the foreground of background jobs of ours
t0=$(date +%s)
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
daemons+=($!)
state=
for _ in $(seq 120); do
	kill -0 "${daemons[1]}" 2>/dev/null ||
		not_run "slurmctld exited: $(log "$work/slurmctld.out") $(log "$work/slurmctld.log")"
	kill -0 "${daemons[2]}" 2>/dev/null || not_run "slurmd exited: $(log "$work/slurmd.out") $(log "$work/slurmd.log")"
	state=$(sinfo -h -N -n localhost -o '%t' 2>"$work/sinfo.err")
	[ "$state" = idle ] && break
	sleep 0.5
done
[ "$state" = idle ] || not_run "the node is not idle after 60 s (sinfo: '$state' $(log "$work/sinfo.err")):" \
	"$(log "$work/slurmd.log")"
ok "a single-host Slurm $(sinfo -V | cut -d' ' -f2) is up in $(($(date +%s) - t0)) s: node localhost idle"

# ---- the job: one step of two tasks, each a test-bed rank waiting in its checkpoint
loop=$top/tests/testbed/jobs/training_loop.py
t0=$(date +%s)
jobid=$(sbatch --parsable -n 2 -D "$work" -o "$work/batch.out" -J memprof-ranks \
	--wrap "srun -n 2 python3 $here/task.py $work $loop 2") ||
	{ bad "sbatch: $jobid"; finish; exit 1; }
ready=0
for _ in $(seq 1200); do
	ready=0
	for r in 0 1; do [ -f "$work/job-$r/pid" ] && ready=$((ready + 1)); done
	[ "$ready" -eq 2 ] && break
	if compgen -G "$work/job-*.rc" >/dev/null; then
		grep -qx 77 "$work"/job-*.rc &&
			not_run "the test bed cannot run PyPI's 2.14.1 here: $(tail -q -n 1 "$work"/job-*.err | tr '\n' ' ')"
		break
	fi
	[ -n "$(squeue -h -j "$jobid" 2>/dev/null)" ] || break
	sleep 0.5
done
if [ "$ready" -ne 2 ]; then
	bad "the step's tasks did not reach their checkpoints: $(tail -q -n 2 "$work"/job-*.err "$work/batch.out" \
		2>/dev/null | tr '\n' ' ')"
	finish
	exit 1
fi
stepd=$(pgrep -f "^slurmstepd: \[$jobid\.0\]")
[ "$(wc -w <<<"$stepd")" -eq 1 ] && ok "job $jobid: step $jobid.0's two tasks wait in their checkpoints" \
	"($(($(date +%s) - t0)) s), below slurmstepd pid $stepd" ||
	{ bad "no single slurmstepd of step $jobid.0: '$stepd'"; finish; exit 1; }

# ---- memprof's per-node step, as users run it: a task of its own in the job, on this node
t0=$(date +%s)
out=$work/snapshots
srun --overlap --jobid="$jobid" -N1 -n1 "$memprof" snapshot --pid "$stepd" --ranks -o "$out" \
	>"$work/ranks.out" 2>"$work/ranks.err" &&
	grep -q "2 of 2 ranks below pid $stepd saved in $out/rank-\*/snapshot.pickle" "$work/ranks.out" &&
	ok "srun --overlap --jobid=$jobid memprof snapshot --pid $stepd --ranks: 2 ranks saved" \
		"($(($(date +%s) - t0)) s)" ||
	bad "srun ... memprof snapshot --ranks: $(cat "$work/ranks.out" "$work/ranks.err" | tr '\n' ' ')"
# The recipe of README.md for N nodes as written there (here N=1): each node's task finds its node's slurmstepd of
# step 0 itself.
MEMPROF_BIN=$memprof OUT=$work/recipe srun --overlap --jobid="$jobid" -N1 --ntasks-per-node=1 \
	sh -c '"$MEMPROF_BIN" snapshot --pid "$(pgrep -f "^slurmstepd: \[$SLURM_JOB_ID\.0\]")" --ranks -o "$OUT"' \
	>"$work/recipe.out" 2>&1 && grep -q "2 of 2 ranks below pid $stepd saved" "$work/recipe.out" &&
	ok "the README's recipe (srun ... sh -c 'memprof snapshot --pid \"\$(pgrep -f ...)\" --ranks -o DIR'): 2 ranks" ||
	bad "the README's recipe: $(tr '\n' ' ' <"$work/recipe.out")"
for r in 0 1; do
	"$memprof" convert "$work/job-$r/snapshot.pickle" "$work/truth-$r.json" 2>"$work/convert.err" ||
		bad "convert the truth of rank $r: $(cat "$work/convert.err")"
	for d in snapshots recipe; do
		[ -s "$work/$d/rank-$r/snapshot.pickle" ] &&
			"$memprof" convert "$work/$d/rank-$r/snapshot.pickle" "$work/read-$d-$r.json" 2>"$work/convert.err" &&
			python3 "$top/tests/walker/compare_truth.py" "$work/truth-$r.json" "$work/read-$d-$r.json" \
				>"$work/compare-$d-$r.txt" 2>&1 &&
			ok "rank $r (SLURM_PROCID=$r): $d/rank-$r/snapshot.pickle is the task's own _snapshot()" ||
			bad "rank $r ($d): $(tail -4 "$work/compare-$d-$r.txt" "$work/convert.err" 2>/dev/null | tr '\n' ' ')"
	done
done
python3 - "$work" "$stepd" <<'PY' && ok "ranks-HOST.json: the step's slurmstepd, each task's process, named by SLURM_PROCID" ||
import glob, json, os, sys
work, stepd = sys.argv[1], int(sys.argv[2])
m = json.load(open(glob.glob(work + "/snapshots/ranks-*.json")[0]))
pids = {r: int(open("%s/job-%s/pid" % (work, r)).read()) for r in ("0", "1")}
assert m["launcher"] == stepd, m
assert sorted(r["rank"] for r in m["ranks"]) == ["0", "1"], m
for r in m["ranks"]:
    assert r["pid"] == pids[r["rank"]] and r["saved"] and r["local_rank"] == r["rank"], r
    env = open("/proc/%d/environ" % r["pid"], "rb").read().split(b"\0")
    assert not any(e.startswith(b"RANK=") for e in env), "RANK set"
    assert ("SLURM_PROCID=%s" % r["rank"]).encode() in env, "SLURM_PROCID"
PY
	bad "ranks-HOST.json: $(cat "$work"/snapshots/ranks-*.json 2>/dev/null)"

# ---- let go: each task's job runs on to its end, the tasks end, and so does the Slurm job
for r in 0 1; do "$top/tests/testbed/job.sh" --resume "$work/job-$r" >/dev/null 2>&1; done
for _ in $(seq 240); do [ -z "$(squeue -h -j "$jobid" 2>/dev/null)" ] && break; sleep 0.5; done
jstate=$(scontrol show job "$jobid" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
[ "$jstate" = COMPLETED ] && ok "the ranks were let go: both ran to their end, job $jobid COMPLETED" ||
	bad "job $jobid after the ranks were let go: '${jstate:-gone}' $(log "$work/batch.out")"
[ "$jstate" = COMPLETED ] && jobid=
finish

#!/usr/bin/env bash
# dist.sh [--nproc N] [--max-restarts K] TORCH SCRIPT.py MODE OUTDIR [ARGS...]
#                           - run a distributed Python script under torchrun (--standalone --nproc-per-node N,
#                             N=4 by default; --max-restarts K, 0 by default: when a rank fails torchrun starts
#                             them all again, K times) with the nccl backend on the fake device: every rank its
#                             own process and its own fake device (FAKECUDA_DEVICES=N unless set higher; the
#                             script calls torch.cuda.set_device(LOCAL_RANK)), NCCL the test bed's stub
#                             (nvstubs/nccl.c), and each rank's memprof_testbed.checkpoint() writing into
#                             OUTDIR/rank-R/.
# dist.sh --stop OUTDIR     - kill the live ranks and the torchrun agent that `dist.sh ... live OUTDIR` left.
# dist.sh --resume OUTDIR   - let every live rank go on past its checkpoint (RESUME in each rank-R/).
#
# TORCH: as for job.sh (pypi-X.Y.Z, pypi-2.14.1 the tests' default; debian-2.6 chrooted).
# MODE:  truth   run to the end; each rank's checkpoint writes its truth
#        live    every rank waits in its checkpoint (or, with checkpoint(go_on=True), goes on to where the script
#                hangs it): pids in OUTDIR/rank-R/pid, the agent's in OUTDIR/launcher.pid
# The script runs with OUTDIR as its working directory and the environment job.sh gives (LD_PRELOAD of the fake
# runtime, driver and NVIDIA stubs, NCCL's among them; PYTHONPATH; MEMPROF_TESTBED_OUT=OUTDIR and _MODE), plus
# MEMPROF_TESTBED_RANKS=1 (memprof_testbed writes into rank-$RANK/) and FAKENCCL_DIR=OUTDIR/nccl (the stub's
# meeting files). FAKECUDA_CAPACITY and the like apply to every rank's device alike.
#
# Leaves in OUTDIR: rank-R/ for every rank, each as job.sh leaves an OUTDIR (snapshot.pickle, memory_stats.json,
# manifest.json, threads.txt, notes.json, python, sysroot, libdir; pid in live mode) with job.out and job.err the
# rank's own output (links into torchrun's log directory, OUTDIR/logs); launcher.out, launcher.err (torchrun's
# own); launcher.pid in live mode. Prints on stdout, one a line: TORCH= MODE= OUTDIR= NPROC= PYTHON= SYSROOT=
# TORCH_LIBDIR= TORCH_VERSION=, and in live mode LAUNCHER_PID= and RANK_PIDS='P0 P1 ...'. Logs go to stderr.
# Exit status: 0 done; 1 the job failed (a rank raised or exited without its checkpoint; the ranks' stderr is
# shown); 2 usage; 77 the build cannot be fetched.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "testbed/dist: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
	log "usage: dist.sh [--nproc N] [--max-restarts K] TORCH SCRIPT.py truth|live OUTDIR [ARGS...] |" \
		"dist.sh --stop|--resume OUTDIR"
	exit 2
}
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/chroot.sh
. "$here/lib/chroot.sh"

ranks() { # OUTDIR: the rank directories
	find "$1" -maxdepth 1 -type d -name 'rank-[0-9]*' | sort -V
}

# The processes started for OUTDIR that still live: the agent and its ranks (their environment says
# MEMPROF_TESTBED_OUT=OUTDIR), ranks first.
ours() { # OUTDIR
	local p pid agents=
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		tb_job_ours "$pid" "$1" || continue
		if grep -qx 'torch.distributed.run' <<<"$(tr '\0' '\n' 2>/dev/null <"$p/cmdline")"; then
			agents="$agents $pid"
		else
			echo "$pid"
		fi
	done
	for pid in $agents; do echo "$pid"; done
}

stop() { # OUTDIR: every rank, then the agent (which would otherwise see them die and report it)
	local out=$1 pid
	for pid in $(ours "$out"); do tb_job_kill "$pid" "$out"; done
	rm -f "$out/launcher.pid" "$out"/rank-[0-9]*/pid
}

nproc=4 restarts=0
case ${1:-} in
--stop | --resume)
	[ $# -eq 2 ] && [ -d "$2" ] || usage
	out=$(cd "$2" && pwd)
	if [ "$1" = --stop ]; then
		stop "$out"
	else
		for dir in $(ranks "$out"); do touch "$dir/RESUME"; done
	fi
	exit 0
	;;
esac
while [ $# -ge 2 ]; do
	case $1 in
	--nproc) [[ $2 =~ ^[1-9][0-9]*$ ]] || usage; nproc=$2 ;;
	--max-restarts) [[ $2 =~ ^[0-9]+$ ]] || usage; restarts=$2 ;;
	*) break ;;
	esac
	shift 2
done
[ $# -ge 4 ] || usage
torch=$1 script=$2 mode=$3
shift 3
case $mode in truth | live) ;; *) usage ;; esac
tb_job_args "$torch" "$script" "$1"
shift

# A rerun into the same OUTDIR: whatever a live run left there is stopped first.
stop "$out"
rm -rf "$out"/rank-[0-9]* "$out/logs" "$out/nccl" "$out/launcher.out" "$out/launcher.err" "$out/.launcherpid"
mkdir -p "$out/nccl" "$out/logs"
for ((r = 0; r < nproc; r++)); do
	mkdir -p "$out/rank-$r"
	echo "$JOB_PYTHON" >"$out/rank-$r/python"
	echo "$JOB_ROOT" >"$out/rank-$r/sysroot"
	echo "$JOB_TORCH_LIBDIR" >"$out/rank-$r/libdir"
done

pydir=$here/python
export MEMPROF_TESTBED_OUT=$out MEMPROF_TESTBED_MODE=$mode MEMPROF_TESTBED_RANKS=1 FAKENCCL_DIR=$out/nccl
[ "${FAKECUDA_DEVICES:-0}" -ge "$nproc" ] || export FAKECUDA_DEVICES=$nproc
export PYTHONPATH=$pydir/boot:$pydir${PYTHONPATH:+:$PYTHONPATH}
export LD_PRELOAD=$JOB_PRELOAD
export TB_CHROOT_BIND="$JOB_BIND $pydir $(dirname "$script")"
# The agent's own rendezvous is a TCP store on a free port of localhost (--standalone), named by its address (a
# chroot's /etc/hosts need not know this machine's name); each rank's output goes to OUTDIR/logs (--redirects 3)
# instead of being interleaved with the others'.
launch=(-m torch.distributed.run --standalone --nproc-per-node "$nproc" --max-restarts "$restarts"
	--local-addr 127.0.0.1 --log-dir "$out/logs" --redirects 3)
# Debian builds PyTorch without libuv, which 2.6's TCP stores ask for by default (the agent's whatever USE_LIBUV
# says): with USE_LIBUV=0, python/boot/sitecustomize.py makes torch.distributed.TCPStore default to no libuv.
[ -n "${USE_LIBUV:-}" ] || case $torch in debian-*) export USE_LIBUV=0 ;; esac
# A restart's ranks would find the first attempt's NCCL ids in the agent's store, which they share with it by
# default (PyTorch's issue 135712: real NCCL then fails to connect, the stub waits forever): a store of their own.
[ "$restarts" -eq 0 ] || export TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1
launch+=("$script" "$@")
start() {
	if [ -n "$JOB_ROOT" ]; then
		TB_CHROOT_PIDFILE=$out/.launcherpid tb_chroot_run "$JOB_ROOT" "$out" "$JOB_PYTHON" "${launch[@]}"
	else
		cd "$out" && echo $BASHPID >"$out/.launcherpid" && exec "$JOB_PYTHON" "${launch[@]}"
	fi
}
t0=$(date +%s)
{ start </dev/null >"$out/launcher.out" 2>"$out/launcher.err" 9>&- 8>&- & } 2>/dev/null
runner=$!
unset LD_PRELOAD

# job.out / job.err of each rank: its files in torchrun's log directory (LOGDIR/RUN/attempt_K/R/std*.log), the
# last attempt's.
link_logs() {
	local r f
	for ((r = 0; r < nproc; r++)); do
		for f in stdout stderr; do
			local log
			log=$(find "$out/logs" -path "*/attempt_*/$r/$f.log" 2>/dev/null | sort -V | tail -n1)
			[ -z "$log" ] || ln -sfn "../${log#"$out/"}" "$out/rank-$r/job.${f/std/}"
		done
	done
}

failed() { # WHY
	stop "$out"
	kill -9 "$runner" 2>/dev/null || true
	wait "$runner" 2>/dev/null || true
	link_logs
	for ((r = 0; r < nproc; r++)); do
		[ ! -s "$out/rank-$r/job.err" ] || { log "rank $r's stderr:"; tail -n 15 "$out/rank-$r/job.err" >&2; }
	done
	tail -n 15 "$out/launcher.err" >&2
	die "$(basename "$script") on $torch with $nproc ranks: $1"
}

# Every rank's checkpoint (READY in its directory), or the agent's end.
timeout=${MEMPROF_JOB_TIMEOUT:-600}
while :; do
	ready=0
	for ((r = 0; r < nproc; r++)); do [ ! -f "$out/rank-$r/READY" ] || ready=$((ready + 1)); done
	[ "$ready" -lt "$nproc" ] || break
	if ! kill -0 "$runner" 2>/dev/null; then
		rc=0
		{ wait "$runner" || rc=$?; } 2>/dev/null
		failed "torchrun exited with status $rc and $ready of $nproc ranks at their checkpoint"
	fi
	[ $(($(date +%s) - t0)) -lt "$timeout" ] || failed "$ready of $nproc ranks at their checkpoint after $timeout s"
	sleep 0.1
done

case $mode in
truth)
	while kill -0 "$runner" 2>/dev/null; do
		[ $(($(date +%s) - t0)) -lt "$timeout" ] || failed "the ranks did not end within $timeout s"
		sleep 0.1
	done
	rc=0
	{ wait "$runner" || rc=$?; } 2>/dev/null
	[ $rc -eq 0 ] || failed "torchrun exited with status $rc after every rank's checkpoint"
	rm -f "$out/.launcherpid"
	;;
live)
	mv "$out/.launcherpid" "$out/launcher.pid"
	;;
esac
link_logs
pids=
for ((r = 0; r < nproc; r++)); do
	for f in snapshot.pickle memory_stats.json manifest.json threads.txt notes.json; do
		[ -s "$out/rank-$r/$f" ] || die "rank $r's checkpoint wrote no $f"
	done
	pids="$pids${pids:+ }$(cat "$out/rank-$r/READY")"
done
log "$nproc ranks of $(basename "$script") at their checkpoint ($mode) in $(($(date +%s) - t0)) s"

echo "TORCH=$torch"
echo "MODE=$mode"
echo "OUTDIR=$out"
echo "NPROC=$nproc"
echo "PYTHON=$JOB_PYTHON"
echo "SYSROOT=$JOB_ROOT"
echo "TORCH_LIBDIR=$JOB_TORCH_LIBDIR"
echo "TORCH_VERSION=$JOB_TORCH_VERSION"
if [ "$mode" = live ]; then
	echo "LAUNCHER_PID=$(cat "$out/launcher.pid")"
	echo "RANK_PIDS='$pids'"
fi

#!/usr/bin/env bash
# job.sh TORCH SCRIPT.py MODE OUTDIR [ARGS...] - run a Python script, unchanged, on the fake CUDA device with a
#                                                real PyTorch build, and stop it where it calls
#                                                memprof_testbed.checkpoint(): a truth, a live process or a core.
# job.sh --stop OUTDIR                         - kill the live job `job.sh ... live OUTDIR` left, and reap it.
# job.sh --resume OUTDIR                       - let that live job go on past its checkpoint (it then runs to
#                                                its end; --stop still reaps it).
# job.sh --list                                - the TORCH builds, on one line.
#
# TORCH: pypi-X.Y.Z (PyPI's CUDA wheel of that release in a venv of CPython 3.11; pypi-2.14.1 is the tests'
#        default) or debian-2.6 (Debian trixie's
#        python3-torch-cuda with its CPython 3.13, chrooted in a trixie root): python/README.md.
# MODE:  truth   run to the end; the checkpoint only writes the truth
#        live    the job waits in its checkpoint (pid in OUTDIR/pid): attach a debugger, or memprof --pid
#        gcore   gdb's gcore of the waiting job (OUTDIR/core), which is then killed
#        kernel  the kernel's core when the job aborts in its checkpoint (OUTDIR/core; cwd OUTDIR,
#                ulimit -c unlimited)
# The script runs with OUTDIR as its working directory, ARGS as its arguments, and this environment
# (FAKECUDA_CAPACITY, FAKECUDA_DEVICES, PYTORCH_CUDA_ALLOC_CONF, ...), plus LD_PRELOAD (the fake runtime, driver
# and NVIDIA stubs), PYTHONPATH (memprof_testbed first), MEMPROF_TESTBED_OUT and MEMPROF_TESTBED_MODE.
# MEMPROF_TESTBED_EXTRAS=REQ[:REQ...] (transformers==5.24.0:accelerate==1.15.0) runs it with the interpreter of a
# venv beside a PyPI build that adds those packages to its torch (python/extras.sh; exit 77 when they cannot be
# installed); MEMPROF_TESTBED_PYTHON names such an interpreter directly.
#
# Leaves in OUTDIR: the truth files the checkpoint wrote (snapshot.pickle, memory_stats.json, manifest.json,
# threads.txt, notes.json, mem_tracker.json when the script asked for it), job.out and job.err (the script's output), and
#   python   the interpreter the job ran (for a chroot job: its path inside the root)
#   sysroot  empty, or the root of a chroot job (its kernel core names files as the job saw them: memprof
#            --sysroot; a gcore core, written from outside, names them as this machine does)
#   libdir   the directory of the libc10_cuda.so the job loaded, as this machine names it
#   core     gcore / kernel;   pid   live
# and prints on stdout, one a line: TORCH= MODE= OUTDIR= PYTHON= SYSROOT= TORCH_LIBDIR= TORCH_VERSION=, then
# CORE= (gcore, kernel) or PID= (live). Logs go to stderr. Exit status: 0 done; 1 the job failed (raised, exited
# without a checkpoint, crashed; its stderr is shown); 2 usage; 77 this machine cannot give the MODE (no ptrace
# for gcore, cores piped away for kernel) or cannot fetch the build (no network, nothing cached).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "testbed/job: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
	log "usage: job.sh TORCH SCRIPT.py truth|live|gcore|kernel OUTDIR [ARGS...] | job.sh --stop|--resume OUTDIR" \
		"| job.sh --list"
	exit 2
}
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/chroot.sh
. "$here/lib/chroot.sh"

stop() { # OUTDIR
	local out=$1
	[ -f "$out/pid" ] || die "no $out/pid"
	tb_job_kill "$(cat "$out/pid")" "$out"
	rm -f "$out/pid"
}

case ${1:-} in
--list)
	[ $# -eq 1 ] || usage
	exec "$here/python/build.sh" --list
	;;
--stop)
	[ $# -eq 2 ] || usage
	stop "$(cd "$2" && pwd)"
	exit 0
	;;
--resume)
	[ $# -eq 2 ] || usage
	touch "$2/RESUME"
	exit 0
	;;
esac
[ $# -ge 4 ] || usage
torch=$1 script=$2 mode=$3
shift 3
case $mode in truth | live | gcore | kernel) ;; *) usage ;; esac
tb_job_args "$torch" "$script" "$1"
shift
if [ -n "${MEMPROF_TESTBED_EXTRAS:-}" ] && [ -z "${MEMPROF_TESTBED_PYTHON:-}" ]; then
	# shellcheck disable=SC2046 # the requirements are words
	MEMPROF_TESTBED_PYTHON=$("$here/python/extras.sh" "$torch" $(tr ':' ' ' <<<"$MEMPROF_TESTBED_EXTRAS")) || exit $?
fi
if [ -n "${MEMPROF_TESTBED_PYTHON:-}" ]; then
	[ -z "$JOB_ROOT" ] || die "MEMPROF_TESTBED_PYTHON: $torch runs chrooted, with its own interpreter"
	JOB_PYTHON=$MEMPROF_TESTBED_PYTHON
fi

[ "$mode" != kernel ] || tb_kernel_cores_land_here
[ "$mode" != gcore ] || command -v cuda-gdb >/dev/null || tb_install_debs gdb

rm -rf "$out/core" "$out"/core.[0-9]* "$out/pid" "$out/READY" "$out/RESUME" "$out/UNCAUGHT" "$out"/*.tmp \
	"$out/snapshot.pickle" "$out/memory_stats.json" "$out/manifest.json" "$out/threads.txt" "$out/threads-stop.txt" \
	"$out/notes.json" "$out"/mem_tracker*.json
echo "$JOB_PYTHON" >"$out/python"
echo "$JOB_ROOT" >"$out/sysroot"
echo "$JOB_TORCH_LIBDIR" >"$out/libdir"

# The job sees the script and memprof_testbed at the paths of this machine: a chroot job gets their directories
# bind-mounted (with the fake's and the stubs').
pydir=$here/python
export MEMPROF_TESTBED_OUT=$out MEMPROF_TESTBED_MODE=$mode
# boot/sitecustomize.py turns cuDNN off in the job (its library is a stub): python/README.md.
export PYTHONPATH=$pydir/boot:$pydir${PYTHONPATH:+:$PYTHONPATH}
[ "${MEMPROF_TESTBED_CUDNN:-}" = 1 ] ||
	log "note: cuDNN is a stub on the fake device; the job runs with torch.backends.cudnn.enabled = False"
export LD_PRELOAD=$JOB_PRELOAD
export TB_CHROOT_BIND="$JOB_BIND $pydir $(dirname "$script")"
start() {
	[ "$mode" != kernel ] || ulimit -c unlimited
	if [ -n "$JOB_ROOT" ]; then
		TB_CHROOT_PIDFILE=$out/.jobpid tb_chroot_run "$JOB_ROOT" "$out" "$JOB_PYTHON" "$script" "$@"
	else
		cd "$out" && echo $BASHPID >"$out/.jobpid" && exec "$JOB_PYTHON" "$script" "$@"
	fi
}
rm -f "$out/.jobpid"
# The job must not hold our stdout (a caller reading it through a pipe would wait for the job).
{ start "$@" </dev/null >"$out/job.out" 2>"$out/job.err" 9>&- 8>&- & } 2>/dev/null
runner=$!
unset LD_PRELOAD

# failed WHY - the job failed: show its stderr and give up.
failed() {
	kill -9 "$runner" 2>/dev/null || true
	[ ! -s "$out/.jobpid" ] || kill -9 "$(cat "$out/.jobpid")" 2>/dev/null || true
	wait "$runner" 2>/dev/null || true
	tail -n 40 "$out/job.err" >&2
	die "$(basename "$script") on $torch: $1"
}

# Wait for the checkpoint (READY) or the job's end; import torch alone takes seconds.
t0=$(date +%s)
while [ ! -f "$out/READY" ]; do
	if ! kill -0 "$runner" 2>/dev/null; then
		rc=0
		{ wait "$runner" || rc=$?; } 2>/dev/null
		[ -f "$out/READY" ] && break
		failed "exited with status $rc without reaching memprof_testbed.checkpoint()"
	fi
	[ $(($(date +%s) - t0)) -lt "${MEMPROF_JOB_TIMEOUT:-600}" ] || failed "no checkpoint within ${MEMPROF_JOB_TIMEOUT:-600} s"
	sleep 0.05
done
pid=$(cat "$out/READY")

core=
case $mode in
truth)
	rc=0
	{ wait "$runner" || rc=$?; } 2>/dev/null
	# A job that checkpoints from its excepthook (memprof_testbed.checkpoint_on_uncaught_exception) then dies
	# of the exception, as it should.
	[ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ -f "$out/UNCAUGHT" ]; } ||
		failed "exited with status $rc after its checkpoint"
	;;
live)
	echo "$pid" >"$out/pid"
	;;
gcore)
	tb_gcore "$pid" "$out"
	wait "$runner" 2>/dev/null || true
	core=$out/core
	;;
kernel)
	rc=0
	{ wait "$runner" || rc=$?; } 2>/dev/null
	[ $rc -eq 134 ] || failed "ended with status $rc in its checkpoint, not SIGABRT"
	tb_take_kernel_core "$out"
	core=$out/core
	;;
esac
for f in snapshot.pickle memory_stats.json manifest.json threads.txt notes.json; do
	[ -s "$out/$f" ] || die "the checkpoint wrote no $f"
done

echo "TORCH=$torch"
echo "MODE=$mode"
echo "OUTDIR=$out"
echo "PYTHON=$JOB_PYTHON"
echo "SYSROOT=$JOB_ROOT"
echo "TORCH_LIBDIR=$JOB_TORCH_LIBDIR"
echo "TORCH_VERSION=$JOB_TORCH_VERSION"
[ -z "$core" ] || echo "CORE=$core"
[ "$mode" != live ] || echo "PID=$pid"

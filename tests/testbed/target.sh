#!/usr/bin/env bash
# target.sh SCENARIO VARIANT MODE OUTDIR - PyTorch's real caching allocator in a known state, as a target for
#                                          memprof: a truth file plus a live process or a core of it.
# target.sh --stop OUTDIR                - kill the live driver that `target.sh ... live OUTDIR` left, and reap it.
# target.sh --list variants|c10-variants|pypi-variants|scenarios - the names this script takes, on one line
#           (variants: the c10 builds, then PyPI's releases).
#
# SCENARIO: training fragmented pending_free oom multi_device private_pool expandable history huge
#           (scenarios/README.md).
# VARIANT:  a c10 build of c10/build.sh: debug stripped debug-oldabi stripped-oldabi mutant-2.14-stats
#           mutant-block-regcounter stripped-mutant-2.14-stats stripped-mutant-block-regcounter, or debian-2.6
#           (Debian's released libc10_cuda.so.2.6, run under trixie's loader).
#           or pypi-X.Y.Z: PyPI's released libc10_cuda.so of torch X.Y.Z as users run it (pypi/c10.sh; any 2.x
#           release; the last patch of each minor is listed).
# MODE:     truth   only the truth
#           live    the driver stays asleep in the scenario's state (pid in OUTDIR/pid; stop it with --stop)
#           gcore   a core written by gdb's gcore of the sleeping driver, which is then killed
#           kernel  a core written by the kernel when the driver abort()s (cwd OUTDIR, ulimit -c unlimited)
#
# Builds or reuses everything (cache: ${MEMPROF_TESTBED_CACHE:-~/.cache/memprof-testbed}). Leaves in OUTDIR:
#   truth.json   the allocator's own snapshot() and stats just before the stop (scenarios/README.md, "The truth")
#   driver.path  the driver binary (for gdb: `gdb $(cat driver.path) core`)
#   libdir       the directory of the libc10_cuda.so the driver loaded (for debian-2.6: the release library's)
#   loader       the program loader the driver ran under: empty, or trixie's ld.so for debian-2.6 (then a
#                kernel core's and /proc/PID/exe's executable is that loader, not the driver)
#   core         gcore / kernel modes;   pid   live mode
# and prints on stdout, one per line: SCENARIO= VARIANT= MODE= TRUTH= DRIVER= C10_LIBDIR= LOADER= and CORE= (gcore,
# kernel) or PID= (live). Everything else goes to stderr. Exit status 0 done, 2 usage, 77 this machine cannot
# give the MODE (kernel: core_pattern pipes cores elsewhere; gcore/live: no ptrace) or the release the scenario
# (2.0: expandable), 1 anything else.
# Env: what scenarios/run.sh reads (FAKECUDA_*, PYTORCH_CUDA_ALLOC_CONF, MEMPROF_DRIVER_PIE=1,
# MEMPROF_TESTBED_CACHE, MEMPROF_CUDA_HEADERS=debian).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "testbed/target: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
	log "usage: target.sh SCENARIO VARIANT truth|live|gcore|kernel OUTDIR | target.sh --stop OUTDIR" \
		"| target.sh --list variants|c10-variants|pypi-variants|scenarios"
	exit 2
}
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"

# The pid is only ours to kill if it is still the driver we started (pids get reused).
still_ours() { # PID OUTDIR
	local cmd
	[ -r "/proc/$1/cmdline" ] || return 1
	cmd=$(tr '\0' ' ' <"/proc/$1/cmdline")
	case $cmd in *"$(cat "$2/driver.path")"*) return 0 ;; esac
	return 1
}

stop() { # OUTDIR
	local out=$1 pid state
	[ -f "$out/pid" ] || die "no $out/pid"
	pid=$(cat "$out/pid")
	if still_ours "$pid" "$out"; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null || true)
			# Gone, or a zombie waiting for its parent (init or the caller's subreaper) to reap it.
			[ -z "$state" ] || [ "$state" = Z ] && break
			sleep 0.05
		done
		still_ours "$pid" "$out" && [ "$state" != Z ] && { kill -9 "$pid" 2>/dev/null || true; }
	fi
	# Our own child (a shell that ran this script with the driver in the same process group) reaps it here.
	wait "$pid" 2>/dev/null || true
	rm -f "$out/pid"
}

if [ "${1:-}" = --stop ]; then
	[ $# -eq 2 ] || usage
	stop "$2"
	exit 0
fi
if [ "${1:-}" = --list ]; then
	[ $# -eq 2 ] || usage
	# shellcheck disable=SC2086 # one line of words
	case $2 in
	variants) echo $tb_variants $(for r in $tb_pypi_releases; do echo "pypi-$r"; done) ;;
	c10-variants) echo $tb_variants ;;
	pypi-variants) echo $(for r in $tb_pypi_releases; do echo "pypi-$r"; done) ;;
	scenarios) echo $tb_scenarios ;;
	*) usage ;;
	esac
	exit 0
fi
[ $# -eq 4 ] || usage
scenario=$1 variant=$2 mode=$3
case " $tb_scenarios " in
*" $scenario "*) ;;
*) log "unknown scenario '$scenario'"; usage ;;
esac
case $mode in truth | live | gcore | kernel) ;; *) usage ;; esac
mkdir -p "$4"
out=$(cd "$4" && pwd)

# Build or reuse: the c10 variant (its build.env says where its libc10_cuda.so is), then the driver.
c10=$("$here/c10/build.sh" "$variant") || die "c10 variant '$variant' did not build"
driver=$(MEMPROF_C10_DIR=$c10 "$here/scenarios/run.sh" --driver) || die "the scenario driver did not build"
export MEMPROF_DRIVER=$driver
libdir=$(C10_LIBDIR='' && . "$c10/build.env" && echo "$C10_LIBDIR")
DRIVER_LOADER=
if [ -f "$(dirname "$driver")/driver.env" ]; then
	# shellcheck source=/dev/null
	. "$(dirname "$driver")/driver.env"
fi

rm -f "$out/truth.json" "$out/core" "$out"/core.[0-9]* "$out/pid" "$out/driver.out"
echo "$driver" >"$out/driver.path"
echo "$libdir" >"$out/libdir"
echo "$DRIVER_LOADER" >"$out/loader"

# Starts the driver asleep in the scenario's state, detached from our stdout/stderr (a caller reading our output
# through a pipe must not wait for the driver); sets $pid once it said "ready".
start_sleeping() {
	(cd "$out" && exec "$here/scenarios/run.sh" "$scenario" sleep --truth "$out/truth.json" \
		</dev/null >"$out/driver.out" 2>&1 9>&- 8>&-) &
	pid=$!
	for _ in $(seq 1200); do
		grep -q '^ready$' "$out/driver.out" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill "$pid" 2>/dev/null || true
	local rc=0
	wait "$pid" 2>/dev/null || rc=$?
	[ $rc -eq 77 ] && cannot
	cat "$out/driver.out" >&2
	die "$scenario on $variant did not reach its sleep"
}

# The driver exits 77 where the release cannot give the scenario (2.0 has no expandable segments): so do we.
cannot() {
	log "$(tail -1 "$out/driver.out")"
	exit 77
}

core=
case $mode in
truth)
	(cd "$out" && "$here/scenarios/run.sh" "$scenario" truth --truth "$out/truth.json" >"$out/driver.out" 2>&1) || {
		[ $? -eq 77 ] && cannot
		cat "$out/driver.out" >&2
		die "$scenario on $variant failed"
	}
	;;
live)
	start_sleeping
	echo "$pid" >"$out/pid"
	;;
gcore)
	tb_install_debs gdb
	start_sleeping
	tb_gcore "$pid" "$out"
	core=$out/core
	;;
kernel)
	tb_kernel_cores_land_here
	set +e
	# run.sh sets `ulimit -c unlimited`; the subshell keeps bash's "Aborted" message off our stderr.
	{ (cd "$out" && exec "$here/scenarios/run.sh" "$scenario" abort --truth "$out/truth.json" \
		</dev/null >"$out/driver.out" 2>&1); } 2>/dev/null
	rc=$?
	set -e
	[ $rc -eq 77 ] && cannot
	[ $rc -eq 134 ] || {
		cat "$out/driver.out" >&2
		die "$scenario abort run ended with status $rc, not SIGABRT"
	}
	tb_take_kernel_core "$out"
	core=$out/core
	;;
esac
[ -s "$out/truth.json" ] || die "no truth written"

echo "SCENARIO=$scenario"
echo "VARIANT=$variant"
echo "MODE=$mode"
echo "TRUTH=$out/truth.json"
echo "DRIVER=$driver"
echo "C10_LIBDIR=$libdir"
echo "LOADER=$DRIVER_LOADER"
[ -z "$core" ] || echo "CORE=$core"
[ "$mode" != live ] || echo "PID=$pid"

#!/usr/bin/env bash
# run.sh SCENARIO MODE [--truth PATH] - run one scenario of the driver on PyTorch's real allocator (fake CUDA).
# run.sh --driver                      - build (or reuse) the driver and print its path.
#
# MODE: truth       write the ground truth and exit 0
#       checkpoint  write the truth, then call memprof_checkpoint() (break there in gdb), then exit 0
#       checkpoint2 the same, then known work, a second truth (PATH.2) and memprof_checkpoint() again
#       sleep       write the truth, print "ready" on stdout, sleep until killed (for gcore / gdb attach);
#                   this script execs the driver, so `run.sh ... &` gives the driver's own pid in $!
#       abort       write the truth, then abort(): a kernel core. This script sets `ulimit -c unlimited`; here
#                   /proc/sys/kernel/core_pattern is `core` (a file `core` in the cwd, overwritten by the next
#                   one: give each run its own cwd). Where the pattern pipes elsewhere, use sleep + gcore instead.
# Scenarios: training fragmented pending_free oom multi_device private_pool expandable history huge.
# Truth: PATH, default ./SCENARIO.truth.json (memprof's JSON = PyTorch's snapshot dict + device_stats,
# scenario, oom_message, scenario_notes, time_is_tsc).
#
# Env: MEMPROF_DRIVER (a built driver: use it, build nothing), MEMPROF_C10_VARIANT (default debug; any variant
# of tests/testbed/c10/build.sh) or MEMPROF_C10_DIR (a c10 build dir); MEMPROF_DRIVER_PIE=1 (see build.sh);
# MEMPROF_FAKECUDA_DIR (a built fakecuda dir; default: built into the cache, against the CUDA headers c10 uses);
# MEMPROF_TESTBED_CACHE (default ~/.cache/memprof-testbed); FAKECUDA_* and PYTORCH_CUDA_ALLOC_CONF override the
# scenario's defaults. Build logs go to stderr; stdout carries only the driver's output.
# A driver whose directory holds a driver.env naming DRIVER_LOADER (variant debian-2.6) is run through that loader:
# `exec LOADER --library-path DRIVER_LIBRARY_PATH DRIVER ...` (the process is the same, the exe is the loader).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testbed=$(cd "$here/.." && pwd)
log() { echo "scenarios/run: $*" >&2; }
die() { log "error: $*"; exit 2; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$testbed/lib/common.sh"
cache=$tb_cache

driver_path() {
	local c10 fake key dir
	if [ -n "${MEMPROF_DRIVER:-}" ]; then
		echo "$MEMPROF_DRIVER"
		return
	fi
	if [ -n "${MEMPROF_C10_DIR:-}" ]; then
		c10=$MEMPROF_C10_DIR
	else
		c10=$("$testbed/c10/build.sh" "${MEMPROF_C10_VARIANT:-debug}") || die "c10 build failed"
	fi
	fake=$(tb_fakecuda_for_c10 "$c10") || die "tests/testbed/fakecuda did not build"
	key=$( (echo "$c10 $fake ${MEMPROF_DRIVER_PIE:-0}"; cat "$here/driver.cpp" "$here/release_api.h" "$here/build.sh" "$here/../nvstubs/nvml.c") | sha256sum | cut -c1-12)
	dir=$cache/scenarios-$(basename "$c10")-$key
	if [ ! -x "$dir/driver" ]; then
		(
			flock 8
			[ -x "$dir/driver" ] || "$here/build.sh" "$c10" "$fake" "$dir" >/dev/null
		) 8>"$cache/.lock-scenarios" || die "driver build failed"
	fi
	echo "$dir/driver"
}

if [ "${1:-}" = --driver ]; then
	driver_path
	exit 0
fi
[ $# -ge 2 ] || die "usage: run.sh SCENARIO truth|checkpoint|checkpoint2|sleep|abort [--truth PATH] | run.sh --driver"
scenario=$1 mode=$2
shift 2
driver=$(driver_path)
if [ "$mode" = abort ]; then
	ulimit -c unlimited
	case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
	\|*) log "warning: core_pattern pipes cores to a program; no core will land in the cwd (use sleep + gcore)" ;;
	esac
fi
args=("$scenario" "$mode")
if [ $# -eq 0 ]; then
	args+=(--truth "$scenario.truth.json")
else
	args+=("$@")
fi
DRIVER_LOADER=
DRIVER_LIBRARY_PATH=
if [ -f "$(dirname "$driver")/driver.env" ]; then
	# shellcheck source=/dev/null
	. "$(dirname "$driver")/driver.env"
fi
if [ -n "$DRIVER_LOADER" ]; then
	exec "$DRIVER_LOADER" --library-path "$DRIVER_LIBRARY_PATH" "$driver" "${args[@]}"
fi
exec "$driver" "${args[@]}"

#!/usr/bin/env bash
# run.sh VARIANT SCRIPT...  - replay op scripts (tests/allocsim/OPS.md) on the real allocator of VARIANT: one
#                             process, one batch (the scripts must share their header); the batch's output on stdout.
# run.sh --binary VARIANT   - build (or reuse) the replay program for VARIANT and print its path.
#
# VARIANT: any of `../target.sh --list variants` (debian-2.6, pypi-X.Y.Z, the c10 builds). The program is built
# by ../scenarios/build.sh against the variant's c10 and the fake CUDA it needs, cached in
# $MEMPROF_TESTBED_CACHE/replay-<c10 build>-<key>/, and run as the scenario driver is (debian-2.6 through trixie's
# loader). Exit status: the program's (replay.cpp: 0 ok, 3 a script refused, 4 a reset failed, 2 usage), 1 when
# the build failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testbed=$(cd "$here/.." && pwd)
log() { echo "replay/run: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$testbed/lib/common.sh"

binary() { # VARIANT
	local c10 fake key dir
	c10=$("$testbed/c10/build.sh" "$1") || die "c10 variant '$1' did not build"
	fake=$(tb_fakecuda_for_c10 "$c10") || die "tests/testbed/fakecuda did not build"
	key=$( (echo "$c10 $fake"; cat "$here/replay.cpp" "$here/replay_api.h" "$testbed/scenarios/release_api.h" \
		"$testbed/scenarios/build.sh" "$testbed/nvstubs/nvml.c") | sha256sum | cut -c1-12)
	dir=$tb_cache/replay-$(basename "$c10")-$key
	if [ ! -x "$dir/replay" ]; then
		(
			flock 8
			[ -x "$dir/replay" ] || nice "$testbed/scenarios/build.sh" "$c10" "$fake" "$dir" "$here/replay.cpp" >/dev/null
		) 8>"$tb_cache/.lock-replay" || die "the replay program did not build for $1"
	fi
	echo "$dir/replay"
}

[ $# -ge 2 ] || { log "usage: run.sh VARIANT SCRIPT... | run.sh --binary VARIANT"; exit 2; }
if [ "$1" = --binary ]; then
	binary "$2"
	exit 0
fi
variant=$1
shift
bin=$(binary "$variant")
DRIVER_LOADER=
DRIVER_LIBRARY_PATH=
# shellcheck source=/dev/null
. "$(dirname "$bin")/driver.env"
if [ -n "$DRIVER_LOADER" ]; then
	exec "$DRIVER_LOADER" --library-path "$DRIVER_LIBRARY_PATH" "$bin" "$@"
fi
exec "$bin" "$@"

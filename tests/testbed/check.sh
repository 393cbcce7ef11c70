#!/usr/bin/env bash
# check.sh - the allocator test bed as one test of `make check` (tests/testbed.am) and `make check-testbed`:
# the fake CUDA's self-test, real c10 on it (smoke), and every scenario on every variant with its modes
# (scenarios/check.sh: truth + sanity.py + memprof stats, checkpoint, and target.sh's live/gcore/kernel, with
# gdb+DWARF reading a Block back from each core of a DWARF variant).
#
# First run: downloads from Debian's archive (the pytorch source, libtorch-cuda-2.6 and trixie's runtime, and
# where /usr/local/cuda has no headers nvidia-cuda-dev's) and builds c10 four times; everything lands in
# ${MEMPROF_TESTBED_CACHE:-~/.cache/memprof-testbed} and later runs use no network. Installs gdb and libfmt-dev when
# missing and running as root. Times: tests/testbed/README.md.
#
# The second run of the same tree (tests/run-all.sh runs make check again under ASan) is quick: after a full pass,
# a stamp in the cache names a hash of every test-bed file, the variants, the CUDA headers, the kernel and its
# core_pattern; while such a stamp is less than 6 hours old, only what depends on the memprof binary runs again
# (every scenario's truth on `debug`, read by `memprof segsum`). MEMPROF_TESTBED_FULL=1 always runs everything.
#
# Env: MEMPROF_TESTBED_VARIANTS (default: all nine, see below), MEMPROF_TESTBED_SKIP=1 (exit 77: skipped),
# MEMPROF (the memprof binary, set by make), MEMPROF_CUDA_HEADERS=debian (build against Debian's CUDA 12.4
# headers even where /usr/local/cuda has some), and what the scripts below read.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "testbed/check: $*" >&2; }
die() { log "error: $*"; exit 1; }
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "testbed: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"

variants=${MEMPROF_TESTBED_VARIANTS:-$tb_variants}
status=0
t_start=$(date +%s)
step() { # WHAT COMMAND...: run one step, report its time and result
	local what=$1 t0 rc
	shift
	t0=$(date +%s)
	echo "== testbed: $what"
	"$@"
	rc=$?
	echo "== testbed: $what: $([ $rc -eq 0 ] && echo ok || echo "FAILED (status $rc)") in $(($(date +%s) - t0)) s"
	[ $rc -eq 0 ] || status=1
}

tb_install_debs gdb libfmt-dev
cuda_home=$(tb_cuda_home) || die "no CUDA headers (Debian's could not be fetched)"
echo "== testbed: cache $tb_cache; CUDA headers $cuda_home ($(tb_cuda_tag "$cuda_home")); variants: $(echo $variants)"

stamp=$tb_cache/check-passed-$(
	{
		(cd "$here" && find . -type f -print0 | sort -z | xargs -0 cat)
		echo "$variants $cuda_home $(tb_cuda_tag "$cuda_home") $(uname -r) $(cat /proc/sys/kernel/core_pattern)"
	} | sha256sum | cut -c1-12)
if [ "${MEMPROF_TESTBED_FULL:-0}" != 1 ] && [ -n "$(find "$stamp" -mmin -360 2>/dev/null)" ]; then
	echo "== testbed: this test bed passed in full at $(date -r "$stamp" '+%F %T') (stamp $stamp); quick run"
	step "scenarios on debug, memprof segsum only" env MEMPROF_C10_VARIANTS=debug MEMPROF_CHECK_MODES=0 \
		"$here/scenarios/check.sh"
	echo "== testbed: $([ $status -eq 0 ] && echo "all passed" || echo "FAILED") in $(($(date +%s) - t_start)) s (quick)"
	exit $status
fi

step "fakecuda self-test" env CUDA_HOME="$cuda_home" "$here/fakecuda/selftest.sh"
# The smoke program on one built variant: the fake exports every cuda* import of real c10, and c10 runs on it.
step "c10 smoke (debug)" env CUDA_HOME="$cuda_home" "$here/c10/smoke.sh" debug
step "scenarios x variants" env MEMPROF_C10_VARIANTS="$(echo $variants)" "$here/scenarios/check.sh"

[ $status -ne 0 ] || touch "$stamp"
echo "== testbed: $([ $status -eq 0 ] && echo "all passed" || echo "FAILED") in $(($(date +%s) - t_start)) s"
exit $status

#!/usr/bin/env bash
# check.sh - the slice of the parity with PyTorch's memory profiler that make check runs (README.md): the MLP job
# with C++ frames on PyPI's 2.14.1 and 2.6.0, and one generated CNN (seed 4) with Python frames only, each read
# from its snapshot file and from its core; FAILS below the issue's bar (bytes agreeing over the timeline: 95 % with
# stacks="all", 85 % with "python"; the end state equal for every block the profiler labels) or when a job
# or memprof fails. The full measurement: make check-categories-parity. Env: MEMPROF, MEMPROF_TESTBED_SKIP=1 (77).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "categories/parity: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
"$here/parity.sh" --builds "pypi-2.14.1 pypi-2.6.0" --stacks all --core --gate --out "$out/all" >"$out/all.log" 2>&1 || rc=1
"$here/parity.sh" --stacks python --seeds 4 --no-mlp --core --gate --out "$out/python" >"$out/python.log" 2>&1 || rc=1
cat "$out/all.log" "$out/python.log"
if grep -q "cannot run here" "$out/all.log" "$out/python.log"; then
	echo "categories/parity: a build cannot run on this machine (the test bed's note above)"
	exit 77
fi
[ $rc -eq 0 ] && echo "categories/parity: every job at the bar" || echo "FAIL: categories/parity: below the bar (above)"
exit $rc

#!/usr/bin/env bash
# core_for_walker.sh DIR - print MEMPROF_FUZZ_CORE for fuzz_walker: test-bed cores of PyTorch's real allocator
# (the `stripped` c10 build) in the scenarios that reach most of the walker: training (many blocks, a ring not
# yet full), history (a wrapped ring), private_pool (graph pools), expandable (unmapped blocks), made in DIR once,
# colon-separated. Exit 77 when the test bed cannot make them here (MEMPROF_TESTBED_SKIP=1, no gdb or ptrace).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$1
list=
for s in training history private_pool expandable; do
	d=$dir/$s
	if [ ! -s "$d/core" ] || [ ! -s "$d/truth.json" ]; then
		[ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ] && { echo "core_for_walker: MEMPROF_TESTBED_SKIP=1" >&2; exit 77; }
		mkdir -p "$d"
		"$here/../testbed/target.sh" "$s" stripped gcore "$d" >"$d/target.out" 2>"$d/target.err"
		rc=$?
		[ $rc -eq 0 ] || { tail -1 "$d/target.err" >&2; exit $rc; }
	fi
	list=${list:+$list:}$d/core
done
echo "$list"

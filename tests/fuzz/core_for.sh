#!/usr/bin/env bash
# core_for.sh walker|python DIR - print the cores a harness works on, colon-separated, made in DIR once:
#   walker: test-bed cores of PyTorch's real allocator (the `stripped` c10 build) in the scenarios that reach
#           most of the walker: training (many blocks, a ring not yet full), history (a wrapped ring),
#           private_pool (graph pools), expandable (unmapped blocks);
#   python: a gcore core of a real Python training job (PyPI's torch 2.14.1 on the fake device, history recorded:
#           tests/testbed/jobs/transformer.py), about 2 GB on disk.
# Exit 77 when the test bed cannot make them here (MEMPROF_TESTBED_SKIP=1, no gdb or ptrace, no PyPI wheel).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 2 ] || { echo "usage: core_for.sh walker|python DIR" >&2; exit 2; }
kind=$1 dir=$2
[ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ] && { echo "core_for: MEMPROF_TESTBED_SKIP=1" >&2; exit 77; }
make_one() { # NAME COMMAND...: DIR/NAME/core, made by COMMAND (its last argument is the directory)
	local d=$dir/$1 rc
	shift
	if [ ! -s "$d/core" ]; then
		rm -rf "$d"
		"$@" "$d" >"$d.out" 2>"$d.err"
		rc=$?
		[ $rc -eq 0 ] && [ -s "$d/core" ] || { tail -1 "$d.err" >&2; exit $((rc ? rc : 1)); }
	fi
	list=${list:+$list:}$d/core
}
list=
mkdir -p "$dir"
case $kind in
walker)
	for s in training history private_pool expandable; do
		make_one "$s" "$here/../testbed/target.sh" "$s" stripped gcore
	done
	;;
python)
	job() { "$here/../testbed/job.sh" pypi-2.14.1 "$here/../testbed/jobs/transformer.py" gcore "$1" --history python; }
	make_one transformer job
	;;
*) echo "core_for: no such harness: $kind" >&2; exit 2 ;;
esac
echo "$list"

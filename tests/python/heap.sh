#!/usr/bin/env bash
# heap.sh - memprof's reader of the Python heap (src/python/heap/mp_py_heap.h: the GC's lists, types, dicts, lists,
# tuples, instance attributes, ints, floats, strs, sys.modules) on live interpreters: each runs
# tests/python/heap_target.py, which builds known objects and writes what the interpreter says of them (JSON);
# heap_driver reads them from the process's memory, then from a gcore core of it, and compares exactly. The
# interpreters: every CPython 3.10+ of this machine (interpreters.sh: PATH, pyenv), and the Debian trixie
# root's CPython 3.13 (tests/testbed/debian/python-root.sh, chrooted).
# Exit 0 when every one agrees, 1 on a difference, 77 when no interpreter could run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
driver=${HEAP_DRIVER:-$(dirname "${MEMPROF:-$top/_build/memprof}")/tests/python/heap_driver}
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
ran=0
log() { echo "heap: $*" >&2; }
die() { log "error: $*"; exit 2; }
[ -x "$driver" ] || die "no $driver (make check builds it)"

read_target() { # MODE WHERE OUT SYSROOT
	"$driver" "$1" "$2" "$3" $4
}

# shellcheck source=tests/python/targets.sh
. "$here/targets.sh"
targets_run "$here/heap_target.py" truth.json
[ "$ran" -gt 0 ] || { finish; exit 77; }
finish

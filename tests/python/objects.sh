#!/usr/bin/env bash
# objects.sh - memprof's reader of CPython objects (src/python: str, bytes, code objects, their layouts per
# version) on live interpreters: each runs tests/python/objects_target.py, which lists its code objects (names
# in ASCII, Latin-1, UCS-2 and UCS-4, a long one, lines past 1230) with what the interpreter says of them; the
# driver finds the interpreter and its version, reads them from the process's memory and compares. The
# interpreters: every CPython 3.10+ of this machine (interpreters.sh: PATH, pyenv), and the Debian trixie
# root's CPython 3.13 (tests/testbed/debian/python-root.sh, chrooted).
# Exit 0 when every one agrees, 1 on a difference, 77 when no interpreter could run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
driver=${OBJECTS_DRIVER:-$(dirname "${MEMPROF:-$top/_build/memprof}")/tests/python/objects_driver}
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
ran=0
log() { echo "objects: $*" >&2; }
die() { log "error: $*"; exit 2; }
[ -x "$driver" ] || die "no $driver (make check builds it)"

read_target() { # MODE WHERE OUT SYSROOT
	"$driver" "$1" "$2" $4 <"$3"
}

# shellcheck source=tests/python/targets.sh
. "$here/targets.sh"
targets_run "$here/objects_target.py" list
[ "$ran" -gt 0 ] || { finish; exit 77; }
finish

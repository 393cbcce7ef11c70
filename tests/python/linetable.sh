#!/usr/bin/env bash
# linetable.sh - memprof's line-table decoder (src/python/py_linetable.c) against real CPython interpreters:
# every code object of a sample of each interpreter's standard library (tests/python/dump_linetables.py), at
# every instruction, must get the line that interpreter's own PyCode_Addr2Line gives. The interpreters: every
# CPython 3.10+ of this machine (interpreters.sh: PATH, pyenv), and the Debian trixie root's (CPython 3.13,
# tests/testbed/debian/python-root.sh, chrooted).
# Exit 0 when every one agrees, 1 on a difference, 77 when no interpreter could run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
driver=${LINETABLE_DRIVER:-$(dirname "${MEMPROF:-$top/_build/memprof}")/tests/python/linetable_driver}
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
ran=0
log() { echo "linetable: $*" >&2; }
die() { log "error: $*"; exit 2; }
[ -x "$driver" ] || die "no $driver (make check builds it)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() { # NAME DUMP
	local out
	if [ ! -s "$2" ]; then
		bad "$1: the interpreter dumped nothing"
	elif out=$("$driver" <"$2"); then
		ok "$1: $out"
	else
		bad "$1: $out"
	fi
	ran=$((ran + 1))
}

# shellcheck source=tests/python/interpreters.sh
. "$here/interpreters.sh"
while read -r version python; do
	"$python" "$here/dump_linetables.py" >"$work/$version.dump" 2>/dev/null
	check "CPython $version ($python)" "$work/$version.dump"
done < <(py_interpreters)

# The trixie root: Debian's CPython 3.13 (built once into the test-bed cache; needs root and the Debian mirror).
if root=$("$top/tests/testbed/debian/python-root.sh" 2>"$work/root.log"); then
	# shellcheck source=tests/testbed/lib/chroot.sh
	. "$top/tests/testbed/lib/chroot.sh"
	mkdir "$work/chroot"
	TB_CHROOT_BIND="$here" tb_chroot_run "$root/root" "$work/chroot" python3 "$here/dump_linetables.py" \
		>"$work/trixie.dump" 2>/dev/null
	check "CPython 3.13 (Debian trixie root)" "$work/trixie.dump"
else
	echo "not run: the Debian trixie root: $(tail -1 "$work/root.log")"
fi
[ "$ran" -gt 0 ] || { finish; exit 77; }
finish

#!/usr/bin/env bash
# objects.sh - memprof's reader of CPython objects (src/python: str, bytes, code objects, their layouts per
# version) on live interpreters: each runs tests/python/objects_target.py, which lists its code objects (names
# in ASCII, Latin-1, UCS-2 and UCS-4, a long one, lines past 1230) with what the interpreter says of them; the
# driver reads them from the process's memory and compares. The interpreters: this machine's python3, and the
# Debian trixie root's CPython 3.13 (tests/testbed/debian/python-root.sh, chrooted).
# Exit 0 when every one agrees, 1 on a difference, 77 when no interpreter could run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
driver=${OBJECTS_DRIVER:-$(dirname "${MEMPROF:-$top/_build/memprof}")/tests/python/objects_driver}
pass=0 fail=0 ran=0
log() { echo "objects: $*" >&2; }
die() { log "error: $*"; exit 2; }
[ -x "$driver" ] || die "no $driver (make check builds it)"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

# check NAME DIR SYSROOT: the target listed its code objects in DIR/list and waits on DIR/in; its pid is in DIR/pid.
check() {
	local i out
	for i in $(seq 100); do [ -s "$2/list" ] && break; sleep 0.1; done
	ran=$((ran + 1))
	if [ ! -s "$2/list" ]; then
		echo "FAIL: $1: the interpreter listed nothing"; fail=$((fail + 1)); return
	fi
	sleep 0.1 # the list is written whole before the wait
	if out=$("$driver" "$(cat "$2/pid")" $3 <"$2/list"); then
		echo "ok: $1: $out"; pass=$((pass + 1))
	else
		echo "FAIL: $1: $out"; fail=$((fail + 1))
	fi
}

# Each target waits on a fifo for its standard input, closed at exit.
start() { # DIR CMD...: run CMD with its pid in DIR/pid
	local dir=$1
	shift
	mkdir -p "$dir"
	mkfifo "$dir/in"
	"$@" <"$dir/in" &
	exec {hold}>"$dir/in"
	pids+=($!)
	echo $! >"$dir/pid"
}

start "$work/host" python3 "$here/objects_target.py" "$work/host/list"
check "$(python3 -c 'import sys; print("CPython %d.%d (this machine)" % sys.version_info[:2])')" "$work/host" ""

if root=$("$top/tests/testbed/debian/python-root.sh" 2>"$work/root.log"); then
	# shellcheck source=tests/testbed/lib/chroot.sh
	. "$top/tests/testbed/lib/chroot.sh"
	mkdir -p "$work/trixie"
	mkfifo "$work/trixie/in"
	TB_CHROOT_PIDFILE=$work/trixie/pid TB_CHROOT_BIND="$here" tb_chroot_run "$root/root" "$work/trixie" \
		python3 "$here/objects_target.py" "$work/trixie/list" <"$work/trixie/in" &
	exec {hold2}>"$work/trixie/in"
	pids+=($!)
	for i in $(seq 100); do [ -s "$work/trixie/pid" ] && break; sleep 0.1; done
	check "CPython 3.13 (Debian trixie root)" "$work/trixie" "$root/root"
else
	echo "not run: the Debian trixie root: $(tail -1 "$work/root.log")"
fi
echo "$pass passed, $fail failed"
[ "$ran" -gt 0 ] || exit 77
[ "$fail" -eq 0 ]

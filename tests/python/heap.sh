#!/usr/bin/env bash
# heap.sh - memprof's reader of the Python heap (src/python/mp_py_heap.h: the GC's lists, types, dicts, lists,
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
pass=0 fail=0 ran=0
log() { echo "heap: $*" >&2; }
die() { log "error: $*"; exit 2; }
[ -x "$driver" ] || die "no $driver (make check builds it)"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

# check NAME DIR SYSROOT: the target wrote its truth to DIR/truth.json and waits on DIR/in; its pid is in DIR/pid.
# Read live, then from a gcore core of it.
check() {
	local i out
	for i in $(seq 300); do [ -s "$2/truth.json" ] && break; sleep 0.1; done
	ran=$((ran + 1))
	if [ ! -s "$2/truth.json" ]; then
		echo "FAIL: $1: the interpreter wrote no truth"; fail=$((fail + 1)); return
	fi
	sleep 0.2 # the truth is renamed into place just before the wait
	if out=$("$driver" pid "$(cat "$2/pid")" "$2/truth.json" $3); then
		echo "ok: $1, live: $out"; pass=$((pass + 1))
	else
		echo "FAIL: $1, live: $out"; fail=$((fail + 1))
	fi
	if ! command -v gcore >/dev/null; then
		echo "not run: $1, gcore core: no gcore (gdb)"; return
	fi
	ran=$((ran + 1))
	if ! gcore -o "$2/core" "$(cat "$2/pid")" >"$2/gcore.log" 2>&1; then
		echo "FAIL: $1: gcore: $(tail -1 "$2/gcore.log")"; fail=$((fail + 1))
	elif out=$("$driver" core "$2/core.$(cat "$2/pid")" "$2/truth.json" $3); then
		echo "ok: $1, gcore core: $out"; pass=$((pass + 1))
	else
		echo "FAIL: $1, gcore core: $out"; fail=$((fail + 1))
	fi
	rm -f "$2/core".*
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

# shellcheck source=tests/python/interpreters.sh
. "$here/interpreters.sh"
while read -r version python; do
	start "$work/$version" "$python" "$here/heap_target.py" "$work/$version/truth.json"
	check "CPython $version ($python)" "$work/$version" ""
done < <(py_interpreters)

if root=$("$top/tests/testbed/debian/python-root.sh" 2>"$work/root.log"); then
	# shellcheck source=tests/testbed/lib/chroot.sh
	. "$top/tests/testbed/lib/chroot.sh"
	mkdir -p "$work/trixie"
	mkfifo "$work/trixie/in"
	TB_CHROOT_PIDFILE=$work/trixie/pid TB_CHROOT_BIND="$here" tb_chroot_run "$root/root" "$work/trixie" \
		python3 "$here/heap_target.py" "$work/trixie/truth.json" <"$work/trixie/in" &
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

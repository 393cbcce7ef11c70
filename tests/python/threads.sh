#!/usr/bin/env bash
# threads.sh - `memprof pystack` (src/python/threads/mp_py_threads.h) on live interpreters and their cores: each runs
# tests/python/threads_target.py (threads blocked on a lock, 150 frames deep, in a generator, in a coroutine,
# asleep; the main thread handling a ValueError), which writes faulthandler's dump of every thread from the very
# line it then sleeps on. memprof's stacks must equal that dump (threads_compare.py): live (--pid, and --pid
# --stop), then from a gcore core. The interpreters: every CPython 3.10+ of this machine (interpreters.sh) and
# the Debian trixie root's CPython 3.13 (tests/testbed/debian/python-root.sh, chrooted, read with --sysroot).
# Exit 0 when every one agrees, 1 on a difference, 77 when no interpreter could run.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
ran=0
log() { echo "threads: $*" >&2; }
die() { log "error: $*"; exit 2; }
[ -x "$memprof" ] || die "no $memprof (build it first)"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

# compare NAME DIR OUT: memprof's json (OUT.json) and plain (OUT.txt) against DIR/dump and DIR/ids.
compare() {
	local out
	ran=$((ran + 1))
	if [ -s "$3.err" ]; then
		bad "$1: memprof warned: $(head -1 "$3.err")"; return
	fi
	if out=$(python3 "$here/threads_compare.py" "$2/dump" "$3.json" "$3.txt" --ids "$2/ids" \
		--exception "ValueError:boom: handled in main"); then
		ok "$1: $out"
	else
		bad "$1: $out"
	fi
}

# pystack OUT ARGS...: memprof pystack ARGS into OUT.json and OUT.txt (warnings into OUT.err)
pystack() {
	local out=$1
	shift
	"$memprof" pystack "$@" --format json >"$out.json" 2>"$out.err" &&
		"$memprof" pystack "$@" >"$out.txt" 2>>"$out.err"
}

# check NAME DIR SYSROOT: the target dumped its threads to DIR/dump; its pid is in DIR/pid.
check() {
	local i pid sysroot=()
	[ -n "$3" ] && sysroot=(--sysroot "$3")
	for i in $(seq 100); do [ -s "$2/dump" ] && [ -s "$2/ids" ] && break; sleep 0.1; done
	if [ ! -s "$2/dump" ]; then
		ran=$((ran + 1)); bad "$1: the interpreter dumped nothing"; return
	fi
	sleep 0.3 # the dump is written whole before the sleep
	pid=$(cat "$2/pid")
	if pystack "$2/live" --pid "$pid" "${sysroot[@]}"; then
		compare "$1, live" "$2" "$2/live"
	else
		ran=$((ran + 1)); bad "$1, live: $(tail -1 "$2/live.err")"
	fi
	if pystack "$2/stop" --pid "$pid" --stop "${sysroot[@]}"; then
		compare "$1, live --stop" "$2" "$2/stop"
	else
		ran=$((ran + 1)); bad "$1, live --stop: $(tail -1 "$2/stop.err")"
	fi
	if ! command -v gcore >/dev/null; then
		echo "not run: $1, gcore core: no gcore (gdb)"; return
	fi
	if ! gcore -o "$2/core" "$pid" >"$2/gcore.log" 2>&1; then
		ran=$((ran + 1)); bad "$1: gcore: $(tail -1 "$2/gcore.log")"
	elif pystack "$2/core" "$2/core.$pid" "${sysroot[@]}"; then
		compare "$1, gcore core" "$2" "$2/core"
	else
		ran=$((ran + 1)); bad "$1, gcore core: $(tail -1 "$2/core.err")"
	fi
	rm -f "$2/core".*
}

# shellcheck source=tests/python/interpreters.sh
. "$here/interpreters.sh"
while read -r version python; do
	mkdir -p "$work/$version"
	"$python" "$here/threads_target.py" "$work/$version" &
	pids+=($!)
	echo $! >"$work/$version/pid"
	check "CPython $version ($python)" "$work/$version" ""
	kill "$(cat "$work/$version/pid")" 2>/dev/null
done < <(py_interpreters)

if root=$("$top/tests/testbed/debian/python-root.sh" 2>"$work/root.log"); then
	# shellcheck source=tests/testbed/lib/chroot.sh
	. "$top/tests/testbed/lib/chroot.sh"
	mkdir -p "$work/trixie"
	TB_CHROOT_PIDFILE=$work/trixie/pid TB_CHROOT_BIND="$here" tb_chroot_run "$root/root" "$work/trixie" \
		python3 "$here/threads_target.py" "$work/trixie" &
	pids+=($!)
	for i in $(seq 100); do [ -s "$work/trixie/pid" ] && break; sleep 0.1; done
	pids+=("$(cat "$work/trixie/pid")")
	check "CPython 3.13 (Debian trixie root)" "$work/trixie" "$root/root"
	kill "$(cat "$work/trixie/pid")" 2>/dev/null
else
	echo "not run: the Debian trixie root: $(tail -1 "$work/root.log")"
fi
[ "$ran" -gt 0 ] || { finish; exit 77; }
finish

#!/usr/bin/env bash
# walk.sh - the session (src/session) over real targets, driven through its C interface as the gdb extension
# drives it, but without gdb: so it runs in the sanitizer pass too, where gdb cannot load the instrumented
# library. On the test bed's `training` (live process and gcore) and `huge` (live) scenarios it checks that
# the session prints what the CLI prints for the same state, by every backend (core, pid, read callback),
# that a snapshot saved from it equals the allocator's own truth, and that a walk stops when interrupted.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
lib=${MEMPROF_LIBRARY:-$(dirname "$memprof")/.libs/libmemprof.so.0}
target=$top/tests/testbed/target.sh
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"

# An instrumented library needs its sanitizer runtimes loaded first (Python's own leaks are not ours).
preload=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
drive() { # KIND WHAT COMMAND...
	LD_PRELOAD=${preload%:} ASAN_OPTIONS=${preload:+detect_leaks=0:abort_on_error=1} \
		python3 "$here/drive.py" "$lib" "$@"
}
# The output of command COMMAND in a drive.py transcript.
section() { # FILE COMMAND
	awk -v want="== $2" '$0 == want { on = 1; next } /^== / { on = 0 } on' "$1"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-session.XXXXXX")
cleanup() {
	for d in "$work"/live "$work"/huge; do [ -f "$d/pid" ] && "$target" --stop "$d" >/dev/null 2>&1; done
	rm -rf "$work"
}
[ -n "${MEMPROF_KEEP:-}" ] && echo "work: $work" || trap cleanup EXIT

if ! "$target" training debug live "$work/live" >/dev/null 2>"$work/live.err"; then
	rc=$?
	echo "not run: the test bed could not start a live driver: $(tail -1 "$work/live.err")"
	exit $([ $rc -eq 77 ] && echo 77 || echo 1)
fi
pid=$(cat "$work/live/pid")
"$memprof" segsum --pid "$pid" >"$work/cli.segsum" 2>/dev/null
"$memprof" summary --pid "$pid" >"$work/cli.summary" 2>/dev/null
commands=("segsum" "summary --device 0" "blocks --device all" "snapshot take a" "compare a now" "info"
	"snapshot save now $work/now.json")
for kind in pid callback; do
	drive "$kind" "$pid" "${commands[@]}" >"$work/$kind.out" 2>"$work/$kind.err"
	section "$work/$kind.out" segsum | sed 1,2d >"$work/$kind.segsum"
	section "$work/$kind.out" "summary --device 0" | sed 1,2d >"$work/$kind.summary"
	section "$work/$kind.out" "blocks --device all" | sed 1,2d >"$work/$kind.blocks"
	if cmp -s "$work/$kind.segsum" "$work/cli.segsum"; then
		ok "$kind: segsum == memprof segsum --pid"
	else
		bad "$kind: segsum differs from memprof segsum --pid ($(head -c 200 "$work/$kind.err"))"
		grep -m 3 '^error memprof' "$work/$kind.out" | sed 's/^/    drive: /'
		grep 'libc10' "/proc/$pid/maps" | sed 's/^/    maps: /'
	fi
	cmp -s "$work/$kind.summary" "$work/cli.summary" && ok "$kind: summary == memprof summary --pid" ||
		bad "$kind: summary differs from memprof summary --pid"
	grep -q "^status 1$" <(section "$work/$kind.out" "compare a now") && ok "$kind: compare a now: nothing changed" ||
		bad "$kind: compare of a snapshot with the same stop found changes"
	if python3 "$top/tests/walker/compare_truth.py" "$work/live/truth.json" "$work/now.json" >"$work/$kind.cmp" 2>&1; then
		ok "$kind: snapshot save now equals the truth"
	else
		bad "$kind: the saved snapshot differs from the truth: $(head -3 "$work/$kind.cmp")"
	fi
done
cmp -s "$work/pid.blocks" "$work/callback.blocks" && [ -s "$work/pid.blocks" ] &&
	ok "callback: the same blocks as the direct read" || bad "callback: blocks differ from the direct read"
grep -q "debugger: reads through" "$work/callback.out" && reads=$(section "$work/callback.out" reads) &&
	[ "${reads:-0}" -gt 0 ] && ok "callback: info says so; $reads reads" || bad "callback: no reads counted"

# A core of the same state, read by the session, prints what the CLI prints.
if gcore -o "$work/core" "$pid" >/dev/null 2>&1; then
	drive core "$work/core.$pid" segsum >"$work/core.out" 2>&1
	section "$work/core.out" segsum | sed 1,2d >"$work/core.segsum"
	if cmp -s "$work/core.segsum" "$work/cli.segsum"; then
		ok "core: segsum == memprof segsum"
	else
		bad "core: segsum differs:"
		diff "$work/core.segsum" "$work/cli.segsum" | head -5 | sed 's/^/    /'
		grep -v '^\[' "$work/core.out" | tail -5 | sed 's/^/    drive: /'
	fi
else
	bad "gcore of the live driver failed"
fi

# Interrupted at once, part way through a 120,001-block walk, then free to run again.
# (Once more if the driver did not reach its sleep: under a loaded make -j check it has been seen to fail
# to start once; its own output is shown then.)
start_huge() { "$target" huge debug live "$work/huge" >/dev/null 2>"$work/huge.err"; }
if start_huge || { echo "note: huge did not start: $(tail -3 "$work/huge.err" | tr '\n' ' ')"; start_huge; }; then
	hpid=$(cat "$work/huge/pid") failed_before=$fail
	drive pid "$hpid" "!interrupt-after 0" segsum "!interrupt-after 3" segsum "!go" "blocks --top 1" >"$work/huge.out" 2>&1
	drc=$?
	n=$(grep -c '^error memprof: interrupted$' "$work/huge.out")
	[ "$n" -eq 2 ] && ok "huge: interrupted before and during the walk" || bad "huge: $n of 2 walks interrupted"
	[[ $(section "$work/huge.out" "blocks --top 1") == *"showing 1 of 120001 blocks"* ]] &&
		ok "huge: the next command walks all 120,001 blocks" || bad "huge: no full walk after the interrupt"
	[ "$fail" -eq "$failed_before" ] || { echo "    drive exit status $drc"; grep -v '^0x' "$work/huge.out" | tail -8 | sed 's/^/    drive: /'; }
else
	bad "huge: the test bed could not start it: $(tail -3 "$work/huge.err" | tr '\n' ' ')"
fi

finish

#!/usr/bin/env bash
# target.sh - the target interface on a real process: read by pid (with and without stopping it),
# from a gcore core and from a kernel core; the .rodata that only the executable on disk holds,
# NT_FILE, pid/exe/cmdline, missing and rebuilt (other build-id) files, bad and mangled cores.
set -u
READ_CORE=${READ_CORE:-$PWD/tests/target/read_core}
src=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/target
tmp=$(mktemp -d /tmp/memprof-target.XXXXXX)
# shellcheck source=../lib/check.sh
. "$src/../lib/check.sh"
helper_pid=
cleanup() {
	[ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# expect NAME PATTERN FILE: FILE has a line matching PATTERN (grep -E)
expect() { if grep -qE -- "$2" "$3"; then ok; else bad "$1: no /$2/ in:"; head -20 "$3"; fi; }
expect_not() { if grep -qE -- "$2" "$3"; then bad "$1: /$2/ found in:"; head -20 "$3"; else ok; fi; }
# rc NAME WANT GOT
rc() { if [ "$3" -eq "$2" ]; then ok; else bad "$1: exit status $3, not $2"; fi; }

# The helper, twice: the one that runs, and a rebuild of it with another build-id.
mkdir -p "$tmp/bin" "$tmp/other" "$tmp/empty" "$tmp/kernel"
cc=${HELPER_CC:-cc}
"$cc" -O0 -g -Wl,--build-id=0x5eed0001aa "$src/helper.c" -o "$tmp/bin/helper" &&
	"$cc" -O0 -g -Wl,--build-id=0x5eed0002bb "$src/helper.c" -o "$tmp/other/helper" ||
	{ echo "FAIL: cannot build the helper with $cc"; exit 1; }
helper=$tmp/bin/helper

# where FILE NAME: export NAME's address (and length) from the helper's output
where() {
	ro=$(awk '$1 == "rodata" {print $2}' "$1"); ro_len=$(awk '$1 == "rodata" {print $3}' "$1")
	data=$(awk '$1 == "data" {print $2}' "$1"); small=$(awk '$1 == "small" {print $2}' "$1")
	big=$(awk '$1 == "big" {print $2}' "$1"); big_len=$(awk '$1 == "big" {print $3}' "$1")
	hpid=$(awk '$1 == "pid" {print $2}' "$1")
}

# check_core NAME CORE PID ARGS: what every core of the helper must give
check_core() {
	local name=$1 core=$2 pid=$3 args=$4 out=$tmp/$1.out err=$tmp/$1.err
	"$READ_CORE" core "$core" info >"$tmp/$name.out.info" 2>&1
	"$READ_CORE" core "$core" info maps cstr "$ro" cstr "$data" cstr "$small" pattern "$big" "$big_len" \
		read "$ro" 22 buildid helper >"$out" 2>"$err"
	rc "$name: read" 0 $?
	expect "$name: pid" "^pid $pid\$" "$out"
	expect "$name: exe" "^exe $helper\$" "$out"
	# gdb writes only the program's name when it attached; the kernel writes the arguments.
	expect "$name: cmdline" "^cmdline $helper( $args)?\$" "$out"
	expect "$name: NT_FILE lists the helper" "^[0-9a-f]+-[0-9a-f]+ 0 $helper -> $helper\$" "$out"
	expect "$name: NT_FILE lists libc" " /.*libc\.so[.0-9]* -> " "$out"
	expect "$name: .rodata from the file" "^memprof-rodata-marker:0123456789abcdef.*:end\$" "$out"
	expect "$name: .data" "^memprof-data-marker!\$" "$out"
	expect "$name: heap" "^memprof-heap-marker-$pid\$" "$out"
	expect "$name: mmap'd block" "^pattern ok\$" "$out"
	expect "$name: raw bytes" "^6d656d70726f662d726f646174612d6d61726b65723a\$" "$out"
	expect "$name: build-id" "^buildid memory 5eed0001aa file 5eed0001aa\$" "$out"
	expect_not "$name: no warning" "warning" "$err"

	# Without the executable here, .rodata is gone (it came from the file) but .data stays.
	"$READ_CORE" --sysroot "$tmp/empty" core "$core" cstr "$ro" cstr "$data" buildid helper >"$out" 2>"$err"
	rc "$name: without files" 1 $?
	expect "$name: missing file warned" "warning: mapped file '$helper' not found" "$err"
	expect "$name: missing file named" "^error: .*0x0*${ro#0x}.*'$helper', which is not found" "$out"
	expect "$name: .data needs no file" "^memprof-data-marker!\$" "$out"
	expect "$name: headers are in the core" "^buildid memory 5eed0001aa file none\$" "$out"

	# The rebuilt executable (other build-id) by solib path: a warning, a mismatch, no .rodata.
	"$READ_CORE" --solib-path "$tmp/empty:$tmp/other" core "$core" mapsof helper cstr "$ro" >"$out" 2>"$err"
	rc "$name: other build-id" 1 $?
	expect "$name: mismatch warned" "warning: '$tmp/other/helper' is not the file .*5eed0002bb.*5eed0001aa" "$err"
	expect "$name: mismatch flagged" "^[0-9a-f]+-[0-9a-f]+ 0 $helper -> $tmp/other/helper MISMATCH\$" "$out"
	expect "$name: mismatched file not read" "^error: .*has another build-id" "$out"

	# The same file under a sysroot is found and read.
	mkdir -p "$tmp/sysroot$(dirname "$helper")"
	cp "$helper" "$tmp/sysroot$helper"
	"$READ_CORE" --sysroot "$tmp/sysroot" core "$core" mapsof helper cstr "$ro" >"$out" 2>/dev/null
	expect "$name: sysroot" "^[0-9a-f]+-[0-9a-f]+ 0 $helper -> $tmp/sysroot$helper\$" "$out"
	expect "$name: .rodata from sysroot" "^memprof-rodata-marker:" "$out"

	# Mangled copies: cut short at many lengths, flipped bytes in headers and notes.
	"$READ_CORE" mutate "$core" "$tmp/scratch" >"$out" 2>"$err"
	rc "$name: mangled copies" 0 $?
	expect "$name: some truncations refused" "^truncated: [0-9]+ opened, [1-9][0-9]* refused" "$out"
}

# ---- live process
"$helper" wait >"$tmp/live.txt" &
helper_pid=$!
for _ in $(seq 100); do grep -q '^ready$' "$tmp/live.txt" && break; sleep 0.05; done
where "$tmp/live.txt"
for opt in "" --stop --proc-mem; do
	name="pid${opt:+ $opt}"
	"$READ_CORE" $opt pid "$helper_pid" info state cstr "$ro" cstr "$data" cstr "$small" \
		pattern "$big" "$big_len" buildid helper read 0 8 >"$tmp/live.out" 2>&1
	rc "$name: read (address 0 fails)" 1 $?
	expect "$name: pid" "^pid $helper_pid\$" "$tmp/live.out"
	expect "$name: exe" "^exe $helper\$" "$tmp/live.out"
	expect "$name: cmdline" "^cmdline $helper wait\$" "$tmp/live.out"
	expect "$name: .rodata" "^memprof-rodata-marker:0123456789abcdef.*:end\$" "$tmp/live.out"
	expect "$name: .data" "^memprof-data-marker!\$" "$tmp/live.out"
	expect "$name: heap" "^memprof-heap-marker-$helper_pid\$" "$tmp/live.out"
	expect "$name: mmap'd block" "^pattern ok\$" "$tmp/live.out"
	expect "$name: build-id" "^buildid memory 5eed0001aa file 5eed0001aa\$" "$tmp/live.out"
	expect "$name: unreadable address" "^error: pid $helper_pid: address 0x0 is unreadable" "$tmp/live.out"
	if [ "$opt" = --stop ]; then
		expect "$name: stopped while read" "^state t\$" "$tmp/live.out"
	else
		expect "$name: not stopped" "^state [SR]\$" "$tmp/live.out"
	fi
done
state=$(awk '{print $3}' "/proc/$helper_pid/stat" 2>/dev/null)
case $state in S | R) ok ;; *) bad "pid: state '$state' after detaching" ;; esac
"$READ_CORE" pid 999999999 info >"$tmp/live.out" 2>&1
rc "pid: no such process" 2 $?
expect "pid: no such process message" "^read_core: no process with pid 999999999\$" "$tmp/live.out"

# ---- gcore
if command -v gcore >/dev/null; then
	gcore -o "$tmp/gcore" "$helper_pid" >/dev/null 2>&1
	if [ -s "$tmp/gcore.$helper_pid" ]; then
		check_core gcore "$tmp/gcore.$helper_pid" "$helper_pid" wait
	else
		bad "gcore wrote no core"
	fi
else
	echo "SKIP: gcore: gdb is not installed"
fi
kill "$helper_pid"; wait "$helper_pid" 2>/dev/null; helper_pid=

# ---- kernel core
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in
'|'*) echo "SKIP: kernel core: core_pattern pipes to '$pattern'" ;;
*)
	{ (cd "$tmp/kernel" && ulimit -c unlimited && exec "$helper" abort >"$tmp/kernel.txt"); } 2>/dev/null
	core=$(ls "$tmp/kernel"/core* 2>/dev/null | head -1)
	if [ -n "$core" ]; then
		where "$tmp/kernel.txt"
		check_core kernel "$core" "$hpid" abort
		expect "kernel: arguments" "^cmdline $helper abort\$" "$tmp/kernel.out.info"
		# Cut in the middle of the mmap'd block's segment: opens with a warning; what is
		# left reads, what is lost is an error naming the truncation.
		off=
		while read -r type o va _ fs ms _; do
			[ "$type" = LOAD ] && ((va <= big && big < va + ms && fs > 0)) && off=$((o + big - va))
		done < <(readelf -lW "$core")
		if [ -n "$off" ]; then
			cp "$core" "$tmp/cut"
			truncate -s $((off + 5000)) "$tmp/cut"
			"$READ_CORE" core "$tmp/cut" pattern "$big" 4096 pattern "$big" "$big_len" >"$tmp/cut.out" 2>"$tmp/cut.err"
			rc "cut: lost bytes fail" 1 $?
			expect "cut: warned" "^warning: core '.*' is truncated: $((off + 5000)) of [0-9]+ bytes" "$tmp/cut.err"
			expect "cut: bytes before the cut" "^pattern ok\$" "$tmp/cut.out"
			expect "cut: bytes after the cut" "^error: .*past the end of the truncated core\$" "$tmp/cut.out"
		else
			bad "kernel: no PT_LOAD holds the mmap'd block"
		fi
	else
		case $pattern in
		/*) echo "SKIP: kernel core: core_pattern '$pattern' writes elsewhere" ;;
		*) bad "kernel: no core in $tmp/kernel (core_pattern '$pattern')" ;;
		esac
	fi
	;;
esac

# ---- not cores
: >"$tmp/empty.core"
echo "not a core" >"$tmp/text.core"
head -c 40 "$helper" >"$tmp/short.core"
for f in "$tmp/empty" "$tmp/empty.core" "$tmp/text.core" "$tmp/short.core" "$helper" "$tmp/missing"; do
	"$READ_CORE" core "$f" info >"$tmp/bad.out" 2>&1
	st=$?
	rc "bad input $f" 2 $st
	[ "$(wc -l <"$tmp/bad.out")" -eq 1 ] && ok || { bad "bad input $f: not one line"; cat "$tmp/bad.out"; }
done
expect "directory" "is a directory" <("$READ_CORE" core "$tmp/empty" 2>&1)
expect "empty" "is empty" <("$READ_CORE" core "$tmp/empty.core" 2>&1)
expect "text" "is not an ELF file" <("$READ_CORE" core "$tmp/text.core" 2>&1)
expect "executable" "is an ELF file but not a core" <("$READ_CORE" core "$helper" 2>&1)

finish

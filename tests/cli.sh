#!/usr/bin/env bash
# cli.sh - the memprof command line: help, exit codes, one-line errors, outputs.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
example="$top/tests/data/example.pickle"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=lib/check.sh
. "$top/tests/lib/check.sh"

# matches FILE PATTERN: an extended regex some line matches, or EMPTY for an empty file.
matches() {
	if [ "$2" = EMPTY ]; then [ ! -s "$1" ]; else grep -qE -- "$2" "$1"; fi
}

# expect NAME STATUS STDOUT-PATTERN STDERR-PATTERN -- COMMAND...: exit status and output shapes.
expect() {
	local name=$1 want=$2 outpat=$3 errpat=$4
	shift 5
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" -ne "$want" ] || ! matches "$tmp/out" "$outpat" || ! matches "$tmp/err" "$errpat"; then
		bad "$name: exit $got (wanted $want)"; head -3 "$tmp/out" "$tmp/err"
	else
		ok
	fi
}
# one_line_error NAME -- COMMAND...: exit 2 and exactly one "memprof: " line on stderr.
one_line_error() {
	local name=$1
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$? lines
	lines=$(wc -l <"$tmp/err")
	if [ "$got" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q '^memprof: ' "$tmp/err"; then
		bad "$name: exit $got, $lines stderr lines"; cat "$tmp/err"
	else
		ok
	fi
}

expect "top help" 0 '^usage: memprof' EMPTY -- "$MEMPROF" --help
expect "no args" 2 EMPTY 'usage' -- "$MEMPROF"
expect "unknown command" 2 EMPTY "'frobnicate' is not a memprof command" -- "$MEMPROF" frobnicate
for cmd in segsum summary segments memory compare trace blocks block categories timeline info snapshot convert; do
	expect "$cmd -h" 0 "^usage: memprof $cmd" EMPTY -- "$MEMPROF" "$cmd" -h
	expect "$cmd bad option" 2 EMPTY "unknown option" -- "$MEMPROF" "$cmd" --bogus x
done
expect "segsum needs a file" 2 EMPTY 'expected one target' -- "$MEMPROF" segsum
expect "compare needs two" 2 EMPTY 'expected two targets' -- "$MEMPROF" compare "$example"
expect "--pid counts as a target" 2 EMPTY 'expected one target' -- "$MEMPROF" segsum "$example" --pid 1
expect "convert takes no --pid" 2 EMPTY "unknown option '--pid'" -- "$MEMPROF" convert --pid 1 "$example" x.json
expect "segsum takes no --stats" 2 EMPTY "unknown option '--stats'" -- "$MEMPROF" segsum --stats "$example"
expect "bad pid" 2 EMPTY "--pid 'abc'" -- "$MEMPROF" segsum --pid abc
# oom: a snapshot without an OOM says so (exit 1); a request asked about is explained (exit 1 when a cached
# block or cudaMalloc would serve it); bad words are one line
expect "oom: the example's OOM" 0 "^  => out of memory" EMPTY -- "$MEMPROF" oom "$example"
python3 -c 'import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
s["device_traces"] = [[]]
pickle.dump(s, open(sys.argv[2], "wb"))' "$example" "$tmp/no-trace.pickle"
expect "oom: a snapshot without an OOM" 1 EMPTY "no OOM to explain: no 'oom' entry" -- "$MEMPROF" oom "$tmp/no-trace.pickle"
expect "oom --size: a huge request" 0 '^OOM on device 0, stream 0' EMPTY -- "$MEMPROF" oom "$example" --size 64GiB
expect "oom --size: json" 0 '"verdict":[[:space:]]*"unknown_free"' EMPTY -- "$MEMPROF" oom "$example" --size 64GiB --format json
expect "oom --size: a small request a block serves" 1 'a cached block serves it' EMPTY -- "$MEMPROF" oom "$example" --size 512
# a snapshot without history, and the message a log kept
msg="CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 150.00 MiB of which 3.00 MiB is free. Of the allocated memory 102.00 MiB is allocated by PyTorch, and 40.00 MiB is reserved by PyTorch but unallocated."
expect "oom --message on a snapshot without history" 0 'Found in --message' EMPTY -- "$MEMPROF" oom "$tmp/no-trace.pickle" --message "$msg"
one_line_error "oom: --message that is no OOM message" -- "$MEMPROF" oom "$tmp/no-trace.pickle" --message "shape mismatch"
one_line_error "oom: bad size" -- "$MEMPROF" oom "$example" --size lots
one_line_error "oom: bad stream" -- "$MEMPROF" oom "$example" --size 1MiB --stream x
one_line_error "oom: bad exception address" -- "$MEMPROF" oom "$example" --cxx-exception zz
one_line_error "watch needs --pid" -- "$MEMPROF" watch
expect "bad device" 2 EMPTY "--device '-1'" -- "$MEMPROF" summary --device -1 "$example"
# Targets that are not what the command needs: one line each, never a crash.
one_line_error "snapshot needs -o" -- "$MEMPROF" snapshot "$example"
one_line_error "snapshot of an unknown format" -- "$MEMPROF" snapshot "$example" -o "$tmp/x.txt"
one_line_error "info on a pickle" -- "$MEMPROF" info "$example"
one_line_error "summary without statistics" -- "$MEMPROF" summary "$example"
one_line_error "an ELF file that is no core" -- "$MEMPROF" segsum "$(command -v ls)"
one_line_error "a pid that does not exist" -- "$MEMPROF" segsum --pid 2147483647
one_line_error "a process without PyTorch" -- "$MEMPROF" info --pid $$
one_line_error "a missing layout file" -- "$MEMPROF" info --pid $$ --layout "$tmp/none.layout"
expect "a snapshot file re-exported" 0 EMPTY EMPTY -- "$MEMPROF" snapshot "$example" -o "$tmp/re.pickle"
expect "summary from a file with device_stats" 0 '^\|  *PyTorch CUDA memory summary, device ID 0 ' EMPTY -- \
	"$MEMPROF" summary "$top/tests/data/example-stats.json"

# The old name of segsum: the same output, and one note.
expect "stats is segsum's old name" 0 '^Summary of segments >= 20.0MiB in size$' "^memprof: note: 'stats' is now called 'segsum'$" -- \
	"$MEMPROF" stats "$example"
expect "segsum on the example" 0 '^Summary of segments >= 20.0MiB in size$' EMPTY -- "$MEMPROF" segsum "$example"
expect "segsum from stdin" 0 '^total_reserved: 142.0MiB$' EMPTY -- sh -c "\"$MEMPROF\" segsum - < \"$example\""
expect "trace on the example" 0 '^raise OutOfMemoryError # 64.0MiB requested, 3.0MiB free in CUDA$' EMPTY -- "$MEMPROF" trace "$example"
expect "segments to stdout" 0 '^stream_0;seg_[0-9]+;active_allocated;' EMPTY -- "$MEMPROF" segments "$example"
expect "compare with itself" 1 '^only_before = \[\]$' EMPTY -- "$MEMPROF" compare "$example" "$example"
expect "memory as svg" 0 EMPTY EMPTY -- "$MEMPROF" memory "$example" -o "$tmp/m.svg"
if head -c 400 "$tmp/m.svg" | grep -q '<svg' && grep -q 'train.py' "$tmp/m.svg"; then
	ok
else
	bad "memory -o x.svg did not write an SVG naming the call sites"
fi

# -o onto what is not a regular file is written through, never replaced (renamed over, as root, /dev/null
# became a plain file): a symlink keeps pointing at its target, which gets the data; a FIFO is read from.
ln -s "$tmp/target.pickle" "$tmp/link.pickle"
expect "snapshot -o through a symlink" 0 EMPTY EMPTY -- "$MEMPROF" snapshot "$example" -o "$tmp/link.pickle"
if [ -L "$tmp/link.pickle" ] && cmp -s "$tmp/target.pickle" "$tmp/re.pickle"; then
	ok
else
	bad "-o onto a symlink replaced the link or left its target unwritten"
fi
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from-fifo" &
expect "snapshot -o into a FIFO" 0 EMPTY EMPTY -- "$MEMPROF" snapshot "$example" --format pickle -o "$tmp/fifo"
wait
if [ -p "$tmp/fifo" ] && cmp -s "$tmp/from-fifo" "$tmp/re.pickle"; then
	ok
else
	bad "-o onto a FIFO replaced it or its reader got other bytes"
fi

one_line_error "missing file" -- "$MEMPROF" segsum "$tmp/nope.pickle"
one_line_error "directory" -- "$MEMPROF" segsum "$tmp"
: >"$tmp/empty"
one_line_error "empty file" -- "$MEMPROF" segsum "$tmp/empty"
printf 'hello world' >"$tmp/text"
one_line_error "not a snapshot" -- "$MEMPROF" segsum "$tmp/text"
printf '\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x8c\x06system\x93.' >"$tmp/evil.pickle"
one_line_error "code in a pickle" -- "$MEMPROF" segsum "$tmp/evil.pickle"
grep -q 'STACK_GLOBAL' "$tmp/err" && ok || bad "opcode not named"
one_line_error "convert to unknown format" -- "$MEMPROF" convert "$example" "$tmp/x.txt"
one_line_error "unwritable output" -- "$MEMPROF" convert "$example" "$tmp/no/such/dir/x.json"

finish

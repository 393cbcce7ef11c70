#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# errors.sh - every way a memprof gdb command can fail ends in one clear gdb error line, never a Python traceback:
# no inferior, a process without libc10_cuda.so, an allocator of no known layout (a stripped layout mutant's core;
# then `set memprof layout` with its DWARF twin's layout file walks it), an address in no segment, an expression
# gdb cannot evaluate, a bad setting value, a walk interrupted by Ctrl-C (a KeyboardInterrupt at a read callback
# while the huge scenario is read through gdb; the next command works again), a missing library and a library of
# another version (the extension refuses to load, in one line, and `memprof` then repeats why). And completion
# (libmemprof's words and file names, after gdb's own word breaks at '-' and '/').
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

scratch memprof-gdb-err

# CHECK LABEL FILE [PATTERN]: FILE.err is one line (matching PATTERN) and gdb's output has no traceback.
check() {
	local label=$1 f=$2 pattern=${3:-}
	if one_line "$f.err" && { [ -z "$pattern" ] || grep -q -- "$pattern" "$f.err"; } &&
		! grep -q 'Traceback\|Python Exception' "$work/gdb.out"; then
		ok "$label: $(cat "$f.err")"
	else
		bad "$label: $(head -c 300 "$f.err" 2>/dev/null) (want one line${pattern:+ with \"$pattern\"})"
		grep -m2 -A3 'Traceback\|Python Exception' "$work/gdb.out" | sed 's/^/    /'
	fi
}

mgdb -ex "mp-capture $work/none memprof segsum" -ex "mp-capture $work/none2 memprof blocks" \
	-ex "mp-capture $work/units set memprof units parsecs" -ex "mp-capture $work/units.show show memprof units" \
	-ex "mp-capture $work/units.next memprof segsum" >"$work/gdb.out" 2>&1
check "no inferior" "$work/none" "no process or core file"
check "no inferior (blocks)" "$work/none2" "no process or core file"
# gdb 12 and later refuse the value at `set`; gdb 10 (cuda-gdb 11.8) stores it before the extension sees it,
# so there the next memprof command refuses it.
if [ -s "$work/units.err" ]; then
	check "bad setting value" "$work/units" "parsecs"
else
	check "bad setting value (refused by the next command: this gdb sets first)" "$work/units.next" "parsecs"
fi
grep -q '"auto"' "$work/units.show" && ok "the setting kept its value: $(cat "$work/units.show")" ||
	bad "after a bad value: $(cat "$work/units.show")"

mgdb -ex starti -ex "mp-capture $work/sleep memprof segsum" -ex kill --args /bin/sleep 30 >"$work/gdb.out" 2>&1
check "a process without libc10_cuda (/bin/sleep)" "$work/sleep" "libc10_cuda"

# Cores of the test bed: a debug one, and a stripped layout mutant with its DWARF twin's layout.
if "$target" oom debug gcore "$work/oom" >/dev/null 2>"$work/oom.err"; then
	mgdb -ex "mp-capture $work/addr memprof block 0x10" -ex "mp-capture $work/expr memprof block no_such_symbol + 1" \
		-ex "mp-capture $work/snapname memprof block 0x10 nosuchsnapshot" \
		"$(cat "$work/oom/driver.path")" "$work/oom/core" >"$work/gdb.out" 2>&1
	check "an address in no segment" "$work/addr" "0x10"
	check "an expression gdb cannot evaluate" "$work/expr" "no_such_symbol"
	check "an unknown snapshot after the address" "$work/snapname" "'nosuchsnapshot' is no snapshot name"
else
	bad "the test bed gave no oom/debug core: $(tail -1 "$work/oom.err")"
fi
m=stripped-mutant-2.14-stats
if "$target" oom $m gcore "$work/mutant" >/dev/null 2>"$work/mutant.err" &&
	"$target" oom "${m#stripped-}" gcore "$work/twin" >/dev/null 2>"$work/twin.err" &&
	"$memprof" info "$work/twin/core" -o "$work/layout" >/dev/null 2>&1; then
	# No table fits: the layout is inferred, as the CLI infers it, and said in a warning.
	mgdb -ex "mp-capture $work/mutant.out memprof segsum" -ex "set memprof layout $work/layout" \
		-ex "mp-capture $work/mutant.layout memprof segsum" \
		"$(cat "$work/mutant/driver.path")" "$work/mutant/core" >"$work/gdb.out" 2>&1
	"$memprof" segsum "$work/mutant/core" >"$work/mutant.inferred" 2>/dev/null
	[ -s "$work/mutant.out" ] && cmp -s "$work/mutant.out" "$work/mutant.inferred" &&
		grep -q 'walked with a layout inferred from' "$work/mutant.out.warn" &&
		ok "an allocator of no known layout ($m): inferred, said so, segsum == memprof segsum" ||
		bad "an allocator of no known layout ($m): $(head -c 300 "$work/mutant.out.err" 2>/dev/null)"
	# Without any table (MEMPROF_LAYOUTS: an empty directory) there is nothing to infer from: one line.
	mkdir -p "$work/no-tables"
	MEMPROF_LAYOUTS=$work/no-tables mgdb -ex "mp-capture $work/notables memprof segsum" \
		"$(cat "$work/mutant/driver.path")" "$work/mutant/core" >"$work/gdb.out" 2>&1
	check "no layout table at all ($m)" "$work/notables" "knows no layout"
	"$memprof" segsum "$work/mutant/core" --layout "$work/layout" >"$work/mutant.cli" 2>/dev/null
	[ -s "$work/mutant.layout" ] && cmp -s "$work/mutant.layout" "$work/mutant.cli" &&
		ok "$m: with set memprof layout, segsum == memprof segsum --layout" ||
		bad "$m: with set memprof layout: $(head -c 300 "$work/mutant.layout.err" 2>/dev/null)"
else
	bad "the test bed gave no $m core or layout: $(tail -1 "$work/mutant.err" "$work/twin.err" 2>/dev/null)"
fi

# Ctrl-C during a long walk: the huge scenario read through gdb (about 500 reads), a KeyboardInterrupt at the 50th
# read (a timer raced the walk once it took 50 ms).
if "$target" huge debug live "$work/huge" >/dev/null 2>"$work/huge.err"; then
	mgdb -p "$(cat "$work/huge/pid")" -ex 'set memprof backend gdb' -ex 'mp-interrupt-at-read 50' \
		-ex "mp-capture $work/int memprof segsum" -ex "mp-capture $work/after memprof segsum" -ex detach \
		>"$work/gdb.out" 2>&1
	check "a walk interrupted by Ctrl-C" "$work/int" "^interrupted$"
	[ -s "$work/after" ] && [ ! -e "$work/after.err" ] && ok "the next command after the interrupt works" ||
		bad "after the interrupt: $(head -c 300 "$work/after.err" 2>/dev/null)"
	"$target" --stop "$work/huge" >/dev/null 2>&1
else
	bad "the test bed gave no live huge process: $(tail -1 "$work/huge.err")"
fi

# Completion.
mkdir -p "$work/cdir/sub-dir" && touch "$work/cdir/a-file.json"
mgdb -ex "complete memprof snapshot save now $work/cdir/" -ex 'complete memprof blocks --st' \
	-ex 'complete memprof compare n' >"$work/complete" 2>&1
printf '%s\n' "memprof snapshot save now $work/cdir/a-file.json" "memprof snapshot save now $work/cdir/sub-dir/" \
	"memprof blocks --state" "memprof blocks --stream" "memprof compare now" >"$work/complete.want"
cmp -s "$work/complete" "$work/complete.want" && ok "completion of files, options and snapshot names" ||
	{ bad "completion:"; diff "$work/complete.want" "$work/complete" | sed 's/^/    /'; }

# The extension refuses a missing library or one of another version, in one line, and says so again on use.
refused() { # LABEL PATTERN ENV...
	local label=$1 pattern=$2
	shift 2
	env "$@" "$gdb" -nx -batch -ex "source $work/memprof.py" -ex 'memprof segsum' >"$work/gdb.out" 2>&1
	if [ "$(wc -l <"$work/gdb.out")" -eq 2 ] && grep -q -- "$pattern" "$work/gdb.out" &&
		! grep -q Traceback "$work/gdb.out"; then
		ok "$label: $(head -1 "$work/gdb.out")"
	else
		bad "$label: $(head -c 400 "$work/gdb.out")"
	fi
}
cp "$gdbext" "$work/memprof.py"
refused "no binding beside the script" "memprof_library.py"
cp "$(dirname "$gdbext")/memprof_library.py" "$work/"
refused "no library" "not found" MEMPROF_LIBRARY="$work/nonexistent/libmemprof.so.0"
sed 's/^MEMPROF_VERSION = .*/MEMPROF_VERSION = "0.0.0-other"/' "$gdbext" >"$work/memprof.py"
refused "a library of another version" "this extension is 0.0.0-other"
finish

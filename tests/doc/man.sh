#!/usr/bin/env bash
# man.sh - the manual pages built from the command tables (doc/): memprof(1) and memprof-gdb(7) render with
# man-db and groff without a warning (MANWIDTH=80 man --warnings -l PAGE: any line on stderr fails), and
# man_check.py finds in them every command and option the CLI and the debugger session really offer, asked
# of the built binary and library at test time.
# Environment: MEMPROF (the CLI; doc/ and .libs/libmemprof.so.0 beside it), top_srcdir, PYTHON.
set -uo pipefail
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
memprof=${MEMPROF:-$top/_build/memprof}
build=$(dirname "$memprof")
lib=${MEMPROF_LIBRARY:-$build/.libs/libmemprof.so.0}
python=${PYTHON:-python3}
# shellcheck source=../lib/check.sh
. "$top/tests/lib/check.sh"

command -v man >/dev/null && command -v groff >/dev/null || not_run "no man or groff"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

for page in "$build/doc/memprof.1" "$build/doc/memprof-gdb.7"; do
	name=$(basename "$page")
	[ -s "$page" ] || { bad "$name: not built"; continue; }
	if MANWIDTH=80 man --warnings -l "$page" >"$work/$name.txt" 2>"$work/$name.err" && [ ! -s "$work/$name.err" ] &&
		[ -s "$work/$name.txt" ]; then
		ok
	else
		bad "$name: man --warnings -l says:"; head -5 "$work/$name.err"
	fi
	# Wide, plain text for the checks: no line filled past a word the checks look for.
	MANWIDTH=400 man -l "$page" 2>/dev/null | col -b >"$work/$name.wide"
done

# man_check.py loads the library through ctypes: an ASan build's runtime must come first (as fronts.sh does).
preload=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
if LD_PRELOAD=${preload%:} ASAN_OPTIONS=${preload:+detect_leaks=0:abort_on_error=1} \
	"$python" "$top/tests/doc/man_check.py" "$memprof" "$lib" "$top" "$work/memprof.1.wide" "$work/memprof-gdb.7.wide" \
	>"$work/check.out"; then
	ok
else
	bad "man_check.py:"; grep -v '^ok' "$work/check.out"
fi
tail -1 "$work/check.out"
finish

#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# install.sh - `make install DESTDIR=...` puts the gdb command set where gdbext/README.md says, with this build's
# version and directories substituted, and a gdb whose data directory holds the installed startup file has the
# `memprof` commands without any `source` (the data directory is a symlink copy of this gdb's own, so gdb's
# Python keeps working; MEMPROF_GDB_SCRIPT and MEMPROF_LIBRARY point into DESTDIR).
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

scratch memprof-gdb-inst
dest=$work/dest
var() { sed -n "s/^$1 = //p" "$builddir/Makefile"; }
prefix=$(var prefix)
version=$(var PACKAGE_VERSION)

if ! make -C "$builddir" install DESTDIR="$dest" >"$work/install.log" 2>&1; then
	bad "make install DESTDIR=$dest failed: $(tail -3 "$work/install.log")"
	finish
	exit 1
fi
# Autoconf's defaults below the configured prefix (a build configured with other directories is not checked).
script=$dest$prefix/share/memprof/gdb/memprof.py
startup=$dest$prefix/share/gdb/python/gdb/command/memprof.py
lib=$dest$prefix/lib/libmemprof.so.0
for f in "$script" "$startup" "$lib"; do
	[ -e "$f" ] && ok "installed ${f#"$dest"}" || bad "not installed: ${f#"$dest"}"
done
grep -qx "MEMPROF_VERSION = \"$version\"" "$script" && grep -qx "MEMPROF_LIBDIR = \"$prefix/lib\"" "$script" &&
	ok "memprof.py: version $version, library from $prefix/lib" || bad "memprof.py: version or libdir not substituted"
grep -q "\"$prefix/share/memprof/gdb/memprof.py\"" "$startup" && ok "the startup file loads $prefix/share/memprof/gdb/memprof.py" ||
	bad "the startup file does not name $prefix/share/memprof/gdb/memprof.py"
if grep -q '@[a-zA-Z_]*@' "$script" "$startup"; then bad "unsubstituted @VARIABLES@ left"; else ok "no @VARIABLES@ left"; fi

# A gdb started on a data directory that holds the startup file loads memprof at startup.
datadir=$("$gdb" -nx -batch -ex 'show data-directory' | sed -n 's/^GDB.s data directory is "\(.*\)"\.$/\1/p')
mkdir -p "$work/data"
cp -rs "$datadir/." "$work/data/" && cp "$startup" "$work/data/python/gdb/command/memprof.py"
MEMPROF_GDB_SCRIPT=$script MEMPROF_LIBRARY=$lib "$gdb" -nx -data-directory "$work/data" -batch \
	-ex 'help memprof segsum' -ex 'memprof segsum' >"$work/gdb.out" 2>&1
if [ "$(head -1 "$work/gdb.out")" = "$("$gdb" -nx -batch -ex "source $gdbext" -ex 'help memprof segsum' 2>&1 | head -1)" ] &&
	grep -q 'no process or core file' "$work/gdb.out" && ! grep -q Traceback "$work/gdb.out"; then
	ok "gdb with the installed startup file has the commands: $(head -1 "$work/gdb.out")"
else
	bad "gdb with the installed startup file: $(head -c 400 "$work/gdb.out")"
fi
MEMPROF_GDB_AUTOLOAD=0 MEMPROF_GDB_SCRIPT=$script MEMPROF_LIBRARY=$lib "$gdb" -nx -data-directory "$work/data" -batch \
	-ex 'help memprof' >"$work/gdb.off" 2>&1
grep -q 'Undefined command: "memprof"' "$work/gdb.off" && ok "MEMPROF_GDB_AUTOLOAD=0 turns it off" ||
	bad "MEMPROF_GDB_AUTOLOAD=0: $(head -c 300 "$work/gdb.off")"
make -C "$builddir" uninstall DESTDIR="$dest" >"$work/uninstall.log" 2>&1
left=$(find "$dest" -type f | sed "s|^$dest||")
[ -z "$left" ] && ok "make uninstall removes every file" || bad "left after uninstall: $left"
finish

#!/usr/bin/env bash
# build.sh - configure and build memprof out of tree: tests/build.sh BUILDDIR [configure args...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:?usage: tests/build.sh BUILDDIR [configure args...]}
shift
if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
   [ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
	(cd "$top" && autoreconf -fi >/dev/null 2>&1) || (cd "$top" && autoreconf -fi)
fi
mkdir -p "$builddir"
cd "$builddir"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
	"$top/configure" --quiet "$@"
fi
make -s -j"$(nproc)" >/dev/null

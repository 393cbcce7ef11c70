#!/usr/bin/env bash
# build-wheel.sh OUTDIR [BUILDDIR] - the memprof wheel, made by `pip wheel` from a copy of the sources (nothing is
# written into the source tree). With BUILDDIR (a configured and built tree: `make wheel` passes its own), the
# wheel takes that build's library and CLI (setup.py's MEMPROF_PREBUILT) and the copy holds only what setup.py
# reads; without, the copy is the whole tree and pip's build runs configure and make, as `pip install .` does.
# PYTHON: the interpreter whose pip runs (default python3). Exit 77 when pip cannot reach PyPI for its build
# requirements.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: build-wheel.sh OUTDIR [BUILDDIR]" >&2; exit 2; }
out=$1
python=${PYTHON:-python3}
src=$(mktemp -d "${TMPDIR:-/tmp}/memprof-wheel.XXXXXX")
trap 'rm -rf "$src"' EXIT
if [ $# -eq 2 ]; then
	export MEMPROF_PREBUILT
	MEMPROF_PREBUILT=$(cd "$2" && pwd)
	for f in setup.py pyproject.toml configure.ac gdbext/memprof.py.in gdbext/memprof-gdb.in pymemprof; do
		mkdir -p "$src/$(dirname "$f")"
		cp -R "$top/$f" "$src/$f"
	done
else
	unset MEMPROF_PREBUILT
	tar -C "$top" --exclude='./_build*' --exclude=./.git --exclude=./build --exclude='*.egg-info' -cf - . |
		tar -C "$src" -xf -
fi
mkdir -p "$out"
if ! "$python" -m pip wheel --no-deps -q -w "$out" "$src" >"$src/pip.log" 2>&1; then
	grep -qiE "connection|resolve|network|Could not find a version" "$src/pip.log" &&
		{ echo "build-wheel: pip cannot reach PyPI" >&2; exit 77; }
	cat "$src/pip.log" >&2
	exit 1
fi
ls "$out"/memprof-*.whl

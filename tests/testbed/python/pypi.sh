#!/usr/bin/env bash
# pypi.sh VERSION [PYTHON] - a virtual environment with PyPI's torch==VERSION (its default CUDA wheel and the
# nvidia-* wheels it requires, exactly what `pip install torch==VERSION` gives a user) and numpy, in the test-bed
# cache; prints the venv's directory. PYTHON (default python3.11) is the interpreter the venv is made from.
#
# Directory: $MEMPROF_TESTBED_CACHE/pypi-VERSION-<python tag>-<hash of this script>/venv, complete once .complete
# exists beside it; one installer at a time. Exit 77 when no package index of the machine's pip configuration
# offers torch==VERSION (none answers, or it lacks that release) and nothing is cached.
# pip's own configuration applies (this machine's pip finds torch 2.14.1's wheels on local disk).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "python/pypi: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: pypi.sh VERSION [PYTHON]"
version=$1 python=${2:-python3.11}
command -v "$python" >/dev/null || die "$python not found"
pytag=$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
key=$(tb_hash "$here/pypi.sh")
pointer=$tb_cache/pypi-$version-$pytag.$key.dir
if tb_cached "$pointer" "pypi-$version-$pytag"; then
	echo "$tb_cached_dir/venv"
	exit 0
fi

out=$tb_cache/pypi-$version-$pytag-$key
# Made in its final place (a venv's scripts name their own path); incomplete until .complete, gone on failure.
rm -rf "$out"
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
t0=$(date +%s)
log "pip install torch==$version into a $pytag venv (a few GB; about a minute from a local wheel cache)"
"$python" -m venv "$out/venv"
if ! "$out/venv/bin/python" -m pip install --no-input --progress-bar off "torch==$version" numpy \
	>"$out/pip.log" 2>&1; then
	tail -5 "$out/pip.log" >&2
	if ! tb_pip_offers "$out/venv/bin/python" "torch==$version"; then
		log "no package index of pip's configuration offers torch==$version, and it is not cached here"
		exit 77
	fi
	die "pip install torch==$version failed"
fi
"$out/venv/bin/python" -m pip freeze >"$out/freeze.txt"
touch "$out/.complete"
trap - EXIT
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s, $(du -sh "$out" | cut -f1)"
echo "$out/venv"

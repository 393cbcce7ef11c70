#!/usr/bin/env bash
# extras.sh TORCH REQUIREMENT... - a virtual environment beside the test bed's PyPI build TORCH (pypi-X.Y.Z) that
# sees its torch and adds the packages REQUIREMENT... (transformers==5.24.0 accelerate==1.15.0, as pip takes them:
# with their dependencies, torch itself left as it is); prints the venv's python. Jobs run with it through
# MEMPROF_TESTBED_PYTHON (../job.sh).
#
# The new venv is made from the build's interpreter and reads the build's site-packages through a .pth file, so
# the 5.5 GB of torch and its CUDA wheels are neither copied nor installed twice. Directory:
# $MEMPROF_TESTBED_CACHE/extras-TORCH-<hash of the requirements and this script>/venv, complete once .complete
# exists beside it; one installer at a time. Exit 77 when no package index of the machine's pip configuration
# offers the REQUIREMENTs (none answers, or one lacks that release) and nothing is cached.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "python/extras: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"

[ $# -ge 2 ] || die "usage: extras.sh pypi-X.Y.Z REQUIREMENT..."
torch=$1
shift
case $torch in pypi-*) ;; *) die "extras.sh takes PyPI builds only (pypi-X.Y.Z), not '$torch'" ;; esac
base=$("$here/pypi.sh" "${torch#pypi-}") || exit $?
key=$( (cat "$here/extras.sh"; echo "$torch $*") | sha256sum | cut -c1-12)
pointer=$tb_cache/extras-$torch.$key.dir
if tb_cached "$pointer" "extras-$torch"; then
	echo "$tb_cached_dir/venv/bin/python"
	exit 0
fi

out=$tb_cache/extras-$torch-$key
rm -rf "$out"
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
t0=$(date +%s)
log "pip install $* beside $torch (a minute or two)"
"$base/bin/python" -m venv "$out/venv"
site=$(ls -d "$out"/venv/lib/python3.*/site-packages)
ls -d "$base"/lib/python3.*/site-packages >"$site/memprof-testbed-torch.pth"
if ! "$out/venv/bin/python" -m pip install --no-input --progress-bar off "$@" >"$out/pip.log" 2>&1; then
	tail -5 "$out/pip.log" >&2
	if ! tb_pip_offers "$out/venv/bin/python" "$@"; then
		log "no package index of pip's configuration offers $*, and it is not cached here"
		exit 77
	fi
	die "pip install $* failed"
fi
"$out/venv/bin/python" -c 'import torch, sys; assert torch.__file__.startswith(sys.argv[1]), torch.__file__' "$base" ||
	die "the venv does not take torch from $base"
"$out/venv/bin/python" -m pip freeze >"$out/freeze.txt"
touch "$out/.complete"
trap - EXIT
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s, $(du -sh "$out" | cut -f1)"
echo "$out/venv/bin/python"

#!/usr/bin/env bash
# wheel.sh VERSION - PyPI's default x86_64 CUDA wheel of torch==VERSION, cut down to what the test bed needs;
# prints the directory:
#   lib/libc10.so lib/libc10_cuda.so   the release's allocator, as users run it (stripped, .symtab kept)
#   include/                           torch/include (the release's own headers, for the scenario driver)
#   version.py                         torch/version.py
#   VERSION                            "WHEEL VERSION GIT CUDA CXX11_ABI CUDART_SONAME" on one line
# Cached in $MEMPROF_TESTBED_CACHE/torch-wheel-VERSION-<key>; one fetcher per version (a lock per version, so
# several versions download side by side). The wheel itself (0.7-2.5 GB) is deleted once cut.
# Exit 77 when no package index of the machine's pip configuration offers torch==VERSION and nothing is cached.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "pypi/wheel: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"

[ $# -eq 1 ] || die "usage: wheel.sh VERSION"
version=$1
case $version in
2.[0-9].[0-9] | 2.[0-9][0-9].[0-9]) ;;
*) die "not a torch 2.x release: $version" ;;
esac
key=$( (printf 'torch==%s cp311 x86_64 v1\n' "$version"; cat "$here/wheel-cut.py") | sha256sum | cut -c1-12)
pointer=$tb_cache/torch-wheel-$version.$key.dir
if tb_cached "$pointer" "torch-wheel-$version"; then
	echo "$tb_cached_dir"
	exit 0
fi
tb_need python3 readelf nm
out=$tb_cache/torch-wheel-$version-$key
tmp=$out.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/dl"
t0=$(date +%s)
log "pip download torch==$version (cp311, x86_64 Linux) -> $out"
# The platform list covers every tag 2.x wheels were published with (manylinux1 up to 2.7, then 2_28);
# "===" matches the version string exactly: "==2.13.0" would also take the "2.13.0+cpu" wheel.
if ! python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
	--abi cp311 --platform manylinux1_x86_64 --platform manylinux2014_x86_64 \
	--platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
	--progress-bar off --dest "$tmp/dl" "torch===$version" >"$tmp/pip.log" 2>&1; then
	tail -3 "$tmp/pip.log" >&2
	if ! tb_pip_offers python3 "torch===$version"; then
		log "no package index of pip's configuration offers torch==$version, and it is not cached here"
		exit 77
	fi
	die "pip download torch==$version failed"
fi
t1=$(date +%s)
python3 "$here/wheel-cut.py" "$tmp" "$version" || die "could not cut the wheel of torch==$version"
rm -rf "$tmp/dl"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out" >"$pointer"
log "torch==$version ready: download $((t1 - t0)) s, cut $(($(date +%s) - t1)) s, $(du -sh "$out" | cut -f1): $(cat "$out/VERSION")"
echo "$out"

#!/usr/bin/env bash
# fetch-headers.sh - CUDA headers from Debian for machines without /usr/local/cuda; prints a CUDA_HOME-like dir.
#
# c10 (and the fake CUDA) compile against the CUDA runtime/driver headers. A fresh Debian 12 has none. Debian
# ships them only in `nvidia-cuda-dev` (trixie non-free, CUDA 12.4: a 934 MB .deb with the whole toolkit's
# headers and libraries; bookworm's 11.8, for the fake's libcudart.so.11.0 that PyPI's 2.0.1 needs, is
# fetch-headers11.sh's). So this downloads that .deb once through a private apt directory (lib/common.sh), keeps only
# usr/include, and deletes the .deb. For linking, it adds trixie's `libcudart12` (176 KB): the real runtime, only
# ever linked against, never run (programs load the fake libcudart.so.12 at run time).
#
# The printed directory ($MEMPROF_TESTBED_CACHE/cuda-debian-<nvidia-cuda-dev version>-<hash of this script>/)
# holds include/ (cuda_runtime_api.h, cuda.h, driver_types.h, ...), lib64/libcudart.so -> libcudart.so.12,
# VERSION. Once complete, no network is used.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "cuda/fetch-headers: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

key=$(tb_hash "$here/fetch-headers.sh")
pointer=$tb_cache/cuda-debian.$key.dir
if tb_cached "$pointer" cuda-debian; then
	echo "$tb_cached_dir"
	exit 0
fi

tb_need apt-get dpkg-deb tar
t0=$(date +%s)
tb_apt trixie-cuda trixie "deb trixie non-free"
ver=$(tb_apt_version nvidia-cuda-dev)
[ -n "$ver" ] || die "nvidia-cuda-dev is not in trixie non-free"
out=$tb_cache/cuda-debian-$ver-$key
log "nvidia-cuda-dev $ver -> $out (a 934 MB download, once)"
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/x" "$tmp/lib64"
trap 'rm -rf "$tmp"' EXIT

mapfile -t debs < <(tb_apt_download nvidia-cuda-dev libcudart12)
log "downloaded $(du -ch "${debs[@]}" | tail -n1 | cut -f1) in $(($(date +%s) - t0)) s"
dpkg-deb --fsys-tarfile "${debs[0]}" | tar -x -C "$tmp/x" ./usr/include || die "no usr/include in ${debs[0]}"
mv "$tmp/x/usr/include" "$tmp/include"
dpkg-deb -x "${debs[1]}" "$tmp/x"
rt=$(ls "$tmp"/x/usr/lib/x86_64-linux-gnu/libcudart.so.12* 2>/dev/null | head -n1)
[ -n "$rt" ] || die "no libcudart.so.12 in ${debs[1]}"
cp -L "$rt" "$tmp/lib64/libcudart.so.12"
ln -s libcudart.so.12 "$tmp/lib64/libcudart.so"
rm -rf "$tmp/x"
for h in cuda_runtime_api.h cuda_runtime.h cuda.h driver_types.h; do
	[ -f "$tmp/include/$h" ] || die "nvidia-cuda-dev $ver has no usr/include/$h"
done
printf '%s\n' "$ver" >"$tmp/VERSION"
touch "$tmp/.complete"
# The 934 MB .deb is not kept: the cache keeps the headers.
rm -f "${debs[0]}"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s ($(du -sh "$out" | cut -f1))"
echo "$out"

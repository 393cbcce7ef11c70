#!/usr/bin/env bash
# fetch-headers11.sh - CUDA 11.8 headers from Debian bookworm; prints a CUDA_HOME-like dir (CUDA11_HOME of
# ../fakecuda/Makefile and tb_fakecuda).
#
# PyPI's torch 2.0.1 (+cu117) links libcudart.so.11.0, whose cudaDeviceProp differs from CUDA 12's and 13's: CUDA 12
# appended fields (728 -> 1032 bytes; 11.8's 79 fields keep their offsets in 12.4) and named the query
# cudaGetDeviceProperties_v2, CUDA 13 removed fields and moved the rest. The fake's libcudart.so.11.0 fills that
# struct from one object compiled against these headers, so its offsets and size are the compiler's, not typed in. Debian ships CUDA 11
# headers only in bookworm's `nvidia-cuda-dev` (non-free, 11.8: a 774 MB .deb with the whole toolkit's headers and
# libraries), so this downloads that .deb once through a private apt directory (lib/common.sh), keeps only
# usr/include, and deletes the .deb. Nothing is installed on the machine; its apt sources are never read.
# (cuda/fetch-headers.sh does the same for trixie's CUDA 12.4.)
#
# The printed directory ($MEMPROF_TESTBED_CACHE/cuda11-debian-<nvidia-cuda-dev version>-<hash of this script>/)
# holds include/ (cuda_runtime_api.h, driver_types.h, ...) and VERSION. Once complete, no network is used.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "cuda/fetch-headers11: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

key=$(tb_hash "$here/fetch-headers11.sh")
pointer=$tb_cache/cuda11-debian.$key.dir
if tb_cached "$pointer" cuda11-debian; then
	echo "$tb_cached_dir"
	exit 0
fi

tb_need apt-get apt-cache dpkg-deb tar
t0=$(date +%s)
tb_apt bookworm-cuda bookworm "deb bookworm non-free"
ver=$(tb_apt_version nvidia-cuda-dev)
[ -n "$ver" ] || die "nvidia-cuda-dev is not in bookworm non-free"
case $ver in 11.*) ;; *) die "bookworm's nvidia-cuda-dev is $ver, not CUDA 11" ;; esac
out=$tb_cache/cuda11-debian-$ver-$key
log "nvidia-cuda-dev $ver -> $out (a 774 MB download, once)"
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/x"
trap 'rm -rf "$tmp"' EXIT

mapfile -t debs < <(tb_apt_download nvidia-cuda-dev)
[ "${#debs[@]}" -eq 1 ] || die "apt-get download nvidia-cuda-dev failed"
log "downloaded $(du -ch "${debs[@]}" | tail -n1 | cut -f1) in $(($(date +%s) - t0)) s"
# The .deb goes whatever happens next: it is only ever needed for these headers.
trap 'rm -rf "$tmp"; rm -f "${debs[0]}"' EXIT
dpkg-deb --fsys-tarfile "${debs[0]}" | tar -x -C "$tmp/x" ./usr/include || die "no usr/include in ${debs[0]}"
mv "$tmp/x/usr/include" "$tmp/include"
rm -rf "$tmp/x"
for h in cuda_runtime_api.h cuda_runtime.h cuda.h driver_types.h; do
	[ -f "$tmp/include/$h" ] || die "nvidia-cuda-dev $ver has no usr/include/$h"
done
v=$(sed -n 's/^#define CUDART_VERSION *\([0-9][0-9]*\).*/\1/p' "$tmp/include/cuda_runtime_api.h" | head -n1)
[ "$((v / 1000))" -eq 11 ] 2>/dev/null || die "nvidia-cuda-dev $ver: CUDART_VERSION is '$v', not 11xxx"
printf '%s\n' "$ver" >"$tmp/VERSION"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
rm -f "${debs[0]}"
trap - EXIT
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s ($(du -sh "$out" | cut -f1))"
echo "$out"

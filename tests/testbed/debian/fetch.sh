#!/usr/bin/env bash
# fetch.sh - Debian's released PyTorch 2.6 c10 libraries (libtorch-cuda-2.6, trixie contrib) and the trixie
# runtime they need, in a private root in the test-bed cache; prints that directory.
#
# The directory ($MEMPROF_TESTBED_CACHE/debian-<libtorch version>-<hash of this script>/) holds
#   root/usr/lib/x86_64-linux-gnu/libc10.so.2.6*, libc10_cuda.so.2.6*  (stripped release binaries, .dynsym only)
#   root/usr/lib/x86_64-linux-gnu/...  trixie's libc6, libstdc++6, libgcc-s1, libnuma1, libcpuinfo0, ...
#   root/usr/lib64/ld-linux-x86-64.so.2  trixie's loader: run programs with
#       root/usr/lib64/ld-linux-x86-64.so.2 --library-path FAKECUDA:root/usr/lib/x86_64-linux-gnu PROGRAM ...
#   VERSION (the libtorch-cuda-2.6 version), packages (name version per line), ldd (the check below).
# Only usr/lib/x86_64-linux-gnu/libc10* is taken from the 481 MB libtorch-cuda-2.6 .deb; the .deb itself is
# deleted once the root is complete. Checks that libc10_cuda.so's DT_NEEDED closure resolves in the root, all but
# libcudart.so.12 (the fake CUDA runtime serves that). Once complete, no network is used.
# Env: MEMPROF_TESTBED_CACHE, MEMPROF_DEBIAN_MIRROR, MEMPROF_DEBIAN_KEYRING (lib/common.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "debian/fetch: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

# Trixie's runtime for the release binaries (glibc 2.38+, GLIBCXX_3.4.32): what ldd shows missing on Debian 12.
runtime_pkgs=(libc6 libstdc++6 libgcc-s1 libnuma1 libcpuinfo0)
key=$(tb_hash "$here/fetch.sh")
pointer=$tb_cache/debian-2.6.$key.dir

if tb_cached "$pointer" debian; then
	echo "$tb_cached_dir"
	exit 0
fi

tb_need apt-get dpkg-deb tar
t0=$(date +%s)
tb_apt trixie-bin trixie "deb trixie main contrib"
ver=$(tb_apt_version libtorch-cuda-2.6)
[ -n "$ver" ] || die "libtorch-cuda-2.6 is not in trixie contrib"
out=$tb_cache/debian-$ver-$key
log "libtorch-cuda-2.6 $ver -> $out"
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/root"
trap 'rm -rf "$tmp"' EXIT

mapfile -t debs < <(tb_apt_download libtorch-cuda-2.6 "${runtime_pkgs[@]}")
log "downloaded $(du -ch "${debs[@]}" | tail -n1 | cut -f1) in $(($(date +%s) - t0)) s"
dpkg-deb --fsys-tarfile "${debs[0]}" |
	tar -x -C "$tmp/root" --wildcards './usr/lib/x86_64-linux-gnu/libc10*' ||
	die "no libc10* in ${debs[0]}"
for deb in "${debs[@]:1}"; do
	dpkg-deb -x "$deb" "$tmp/root"
done
{
	echo "libtorch-cuda-2.6 $ver"
	for p in "${runtime_pkgs[@]}"; do echo "$p $(tb_apt_version "$p")"; done
} >"$tmp/packages"

lib=$tmp/root/usr/lib/x86_64-linux-gnu
loader=$tmp/root/usr/lib64/ld-linux-x86-64.so.2
[ -e "$loader" ] || die "trixie's libc6 has no usr/lib64/ld-linux-x86-64.so.2"
c10_cuda=$(ls "$lib"/libc10_cuda.so.* 2>/dev/null | head -n1)
[ -n "$c10_cuda" ] || die "libtorch-cuda-2.6 holds no libc10_cuda.so.*"
# Every dependency must resolve inside the root, except the CUDA runtime (the fake's). (The loader's --list stops
# at the first library it cannot find, so walk DT_NEEDED with readelf.)
needed_closure() { # LIB: prints "NAME found|missing" for LIB's DT_NEEDED closure
	local todo=("$1") seen=" " f n
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case $seen in *" $n "*) continue ;; esac
			seen="$seen$n "
			if [ -e "$lib/$n" ]; then
				echo "$n found"
				todo+=("$lib/$n")
			else
				echo "$n missing"
			fi
		done
	done
}
needed_closure "$c10_cuda" >"$tmp/ldd"
unresolved=$(awk '$2 == "missing" && $1 != "libcudart.so.12" {print $1}' "$tmp/ldd")
[ -z "$unresolved" ] || die "libc10_cuda.so needs what the private root lacks: $(echo $unresolved)"
grep -q '^libcudart.so.12 missing' "$tmp/ldd" || die "libc10_cuda.so does not need libcudart.so.12"
printf '%s\n' "$ver" >"$tmp/VERSION"
touch "$tmp/.complete"
# The big .deb is not kept (the cache keeps what was extracted from it).
rm -f "${debs[0]}"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s"
echo "$out"

#!/usr/bin/env bash
# build.sh VARIANT - build (or reuse from the cache) PyTorch 2.6 libc10.so + libc10_cuda.so; prints the output dir.
#
# Variants: debug, stripped, debug-oldabi, stripped-oldabi (-D_GLIBCXX_USE_CXX11_ABI=0),
#           mutant-2.14-stats (DeviceStats + TraceEntry in their 2.14.1 shapes), mutant-block-regcounter
#           (Block with newer releases' int32 registration_counter before size), and stripped-mutant-2.14-stats,
#           stripped-mutant-block-regcounter. Every stripped-X is X's libraries after strip --strip-all.
#           debian-2.6: not built here but Debian's released, stripped libc10*.so.2.6 (libtorch-cuda-2.6, fetched by
#           ../debian/fetch.sh with trixie's runtime); build.env then also names the loader to run programs with.
# The output dir holds lib/libc10.so, lib/libc10_cuda.so and build.env (include dirs and flags a consumer
# must compile with; the mutants' headers differ from the pristine source, so always use C10_INCLUDE_DIRS).
# build.env: C10_LIBDIR (where the libc10_cuda.so a program loads lies), C10_LINKDIR (-L for -lc10_cuda -lc10),
# C10_INCLUDE_DIRS, C10_CXXFLAGS, C10_CUDA_HOME; debian-2.6 adds C10_LOADER (run programs with it and
# --library-path FAKECUDA:C10_LIBDIR), C10_LDFLAGS and C10_BINARY_VERSION.
# Cache key: ${MEMPROF_TESTBED_CACHE}/c10-<source version>-<variant>-cuda<X.Y>-<hash of Makefile+scripts>/, X.Y the
# CUDA headers' version (/usr/local/cuda's, or Debian's 12.4 where it has none: ../lib/common.sh tb_cuda_home).
# Env: MEMPROF_TESTBED_CACHE, MEMPROF_C10_JOBS (default 2), CUDA_HOME (default: see tb_cuda_home),
#      MEMPROF_CUDA_HEADERS=debian (use Debian's CUDA 12.4 headers even where /usr/local/cuda has some).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "c10/build: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"
cache=$tb_cache
jobs=${MEMPROF_C10_JOBS:-2}

variants="debug stripped debug-oldabi stripped-oldabi mutant-2.14-stats mutant-block-regcounter"
variants="$variants stripped-mutant-2.14-stats stripped-mutant-block-regcounter debian-2.6"
[ $# -eq 1 ] || die "usage: build.sh VARIANT (one of: $variants, pypi-X.Y.Z)"
variant=$1
# PyPI's released wheels are not built here: ../pypi/c10.sh cuts one and writes its build.env.
case $variant in
pypi-*) exec "$here/../pypi/c10.sh" "${variant#pypi-}" ;;
esac

abi_flags=
base=
mutant=
case $variant in
debug) ;;
debug-oldabi) abi_flags=-D_GLIBCXX_USE_CXX11_ABI=0 ;;
stripped) base=debug ;;
stripped-oldabi) base=debug-oldabi abi_flags=-D_GLIBCXX_USE_CXX11_ABI=0 ;; # flags for build.env
mutant-2.14-stats) mutant=2.14-stats ;;
mutant-block-regcounter) mutant=block-regcounter ;;
stripped-mutant-2.14-stats | stripped-mutant-block-regcounter) base=${variant#stripped-} ;;
debian-2.6) ;;
*) die "unknown variant '$variant'" ;;
esac

# What the build needs on the machine (libfmt-dev is installed on demand: fmt is used header-only).
check_deps() {
	local t
	for t in g++ make strip python3 flock; do
		command -v "$t" >/dev/null || die "$t not found"
	done
	[ -f "$cuda_home/include/cuda_runtime_api.h" ] || die "no CUDA headers in $cuda_home/include"
	[ -f "$cuda_home/include/cuda.h" ] || die "no cuda.h in $cuda_home/include"
	ls "$cuda_home"/lib64/libcudart.so* >/dev/null 2>&1 || die "no libcudart in $cuda_home/lib64"
	tb_install_debs libfmt-dev
}

src=$("$here/fetch-source.sh")
ver=$(cat "$src/VERSION")
cuda_home=$(tb_cuda_home) || die "no CUDA headers"
cuda_tag=$(tb_cuda_tag "$cuda_home")
if [ "$variant" = debian-2.6 ]; then
	key=$(tb_hash "$here/build.sh" "$here/../debian/fetch.sh")
else
	key=$(tb_hash "$here/Makefile" "$here/build.sh" "$here/mutate.py")
fi
out="$cache/c10-$ver-$variant-$cuda_tag-$key"

if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

# One builder per variant at a time (parallel test runs wait here, then find the finished build).
exec 9>"$cache/.lock-c10-$variant"
flock 9
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/include/c10/macros" "$tmp/include/c10/cuda/impl" "$tmp/lib"
trap 'rm -rf "$tmp"' EXIT

# The two headers CMake would generate: shared libs on, no glog, no gflags, no numa.
# (Debian's libc10.so.2.6 needs neither libglog nor libgflags; it links libnuma, which only c10/util/numa.h sees.)
cat >"$tmp/include/c10/macros/cmake_macros.h" <<'EOF'
#ifndef C10_MACROS_CMAKE_MACROS_H_
#define C10_MACROS_CMAKE_MACROS_H_
// Written by memprof's tests/testbed/c10/build.sh (stands in for CMake's generated header).
#define C10_BUILD_SHARED_LIBS
/* #undef C10_USE_GLOG */
/* #undef C10_USE_GFLAGS */
/* #undef C10_USE_NUMA */
/* #undef C10_USE_MSVC_STATIC_RUNTIME */
/* #undef C10_USE_ROCM_KERNEL_ASSERT */
#endif // C10_MACROS_CMAKE_MACROS_H_
EOF
cat >"$tmp/include/c10/cuda/impl/cuda_cmake_macros.h" <<'EOF'
#pragma once
// Written by memprof's tests/testbed/c10/build.sh (stands in for CMake's generated header).
#define C10_CUDA_BUILD_SHARED_LIBS
EOF

tree="$src/tree"
loader_env=
if [ "$variant" = debian-2.6 ]; then
	# Debian's release binaries: no build; lib/ holds the link names a driver links with, build.env says how to
	# run it (trixie's loader; the libraries need glibc 2.38 and a newer libstdc++ than Debian 12's).
	tb_install_debs libfmt-dev
	deb=$("$here/../debian/fetch.sh") || die "could not fetch Debian's libtorch-cuda-2.6"
	rootlib=$deb/root/usr/lib/x86_64-linux-gnu
	ln -s "$rootlib/libc10.so.2.6" "$tmp/lib/libc10.so"
	ln -s "$rootlib/libc10_cuda.so.2.6" "$tmp/lib/libc10_cuda.so"
	loader_env="C10_BINARY_VERSION='libtorch-cuda-2.6 $(cat "$deb/VERSION")'
C10_LIBDIR='$rootlib'
C10_LOADER='$deb/root/usr/lib64/ld-linux-x86-64.so.2'
C10_LDFLAGS='-Wl,--allow-shlib-undefined'"
elif [ -n "$mutant" ]; then
	# Mutants edit a private copy of c10/ (the cached source stays pristine).
	mkdir -p "$tmp/src"
	cp -a "$src/tree/c10" "$tmp/src/c10"
	python3 "$here/mutate.py" "$mutant" "$tmp/src" >&2
	tree="$out/src"
fi

if [ "$variant" = debian-2.6 ]; then
	:
elif [ -n "$base" ]; then
	# Stripped = the same objects as the DWARF build, stripped to .dynsym only (as release wheels ship).
	base_out=$("$here/build.sh" "$base")
	cp "$base_out/lib/libc10.so" "$base_out/lib/libc10_cuda.so" "$tmp/lib/"
	# A stripped mutant compiles against its base's edited headers.
	[ -d "$base_out/src" ] && tree="$base_out/src"
	strip --strip-all "$tmp/lib/libc10.so" "$tmp/lib/libc10_cuda.so"
else
	# DWARF names the final directory, not the temporary one it is built in.
	vflags="-g -fdebug-prefix-map=$tmp=$out $abi_flags"
	start=$(date +%s)
	log "building $variant in $out (make -j$jobs)"
	check_deps
	make -s -j"$jobs" -f "$here/Makefile" SRC="${tree/#"$out"/$tmp}" GEN="$tmp/include" \
		NVML_INC="$src/include" OUT="$tmp" CUDA_HOME="$cuda_home" VARIANT_CXXFLAGS="$vflags" >&2
	rm -rf "$tmp/obj"
	log "built $variant in $(($(date +%s) - start)) s"
fi

cat >"$tmp/build.env" <<EOF
# Written by tests/testbed/c10/build.sh: how to compile and link a program against this c10 build.
C10_SOURCE_VERSION='$ver'
C10_VARIANT='$variant'
C10_LIBDIR='$out/lib'
C10_LINKDIR='$out/lib'
C10_INCLUDE_DIRS='$out/include $tree $src/include $cuda_home/include'
C10_CXXFLAGS='-std=c++17 -DFMT_HEADER_ONLY=1${abi_flags:+ $abi_flags}'
C10_CUDA_HOME='$cuda_home'
EOF
# debian-2.6: its own C10_LIBDIR (the release libraries' directory) overrides the one above.
[ -z "$loader_env" ] || echo "$loader_env" >>"$tmp/build.env"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
# Drop this variant's builds made by older scripts (the key is exactly 12 hex digits, so that "debug" does not
# match "debug-oldabi"; the second pattern is the older naming without the CUDA tag).
for old in "$cache/c10-$ver-$variant-$cuda_tag-"???????????? "$cache/c10-$ver-$variant-"????????????; do
	[ "$old" = "$out" ] || [ ! -f "$old/.complete" ] || rm -rf "$old"
done
echo "$out"

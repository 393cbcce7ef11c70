#!/usr/bin/env bash
# build.sh VARIANT - build (or reuse from the cache) PyTorch 2.6 libc10.so + libc10_cuda.so; prints the output dir.
#
# Variants: debug, stripped, debug-oldabi, stripped-oldabi (-D_GLIBCXX_USE_CXX11_ABI=0),
#           mutant-2.14-stats (DeviceStats + TraceEntry in their 2.14.1 shapes), mutant-block-regcounter
#           (Block with newer releases' int32 registration_counter before size), and stripped-mutant-2.14-stats,
#           stripped-mutant-block-regcounter. Every stripped-X is X's libraries after strip --strip-all.
# The output dir holds lib/libc10.so, lib/libc10_cuda.so and build.env (include dirs and flags a consumer
# must compile with; the mutants' headers differ from the pristine source, so always use C10_INCLUDE_DIRS).
# Cache key: ${MEMPROF_TESTBED_CACHE}/c10-<source version>-<variant>-<hash of Makefile+scripts>/.
# Env: MEMPROF_TESTBED_CACHE, MEMPROF_C10_JOBS (default 2), CUDA_HOME (default /usr/local/cuda).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${MEMPROF_TESTBED_CACHE:-$HOME/.cache/memprof-testbed}
export MEMPROF_TESTBED_CACHE=$cache
jobs=${MEMPROF_C10_JOBS:-2}
cuda_home=${CUDA_HOME:-/usr/local/cuda}

log() { echo "c10/build: $*" >&2; }
die() { log "error: $*"; exit 1; }

variants="debug stripped debug-oldabi stripped-oldabi mutant-2.14-stats mutant-block-regcounter"
variants="$variants stripped-mutant-2.14-stats stripped-mutant-block-regcounter"
[ $# -eq 1 ] || die "usage: build.sh VARIANT (one of: $variants)"
variant=$1

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
	if ! dpkg-query -W -f='${Status}' libfmt-dev 2>/dev/null | grep -q "install ok installed"; then
		[ "$(id -u)" -eq 0 ] || die "libfmt-dev is missing (apt-get install libfmt-dev)"
		log "installing libfmt-dev"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libfmt-dev >&2
	fi
}

src=$("$here/fetch-source.sh")
ver=$(cat "$src/VERSION")
key=$(cat "$here/Makefile" "$here/build.sh" "$here/mutate.py" | sha256sum | cut -c1-12)
out="$cache/c10-$ver-$variant-$key"

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

check_deps
tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/include/c10/macros" "$tmp/include/c10/cuda/impl" "$tmp/lib"
trap 'rm -rf "$tmp"' EXIT

# The two headers CMake would generate: shared libs on, no glog, no gflags, no numa.
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
if [ -n "$mutant" ]; then
	# Mutants edit a private copy of c10/ (the cached source stays pristine).
	mkdir -p "$tmp/src"
	cp -a "$src/tree/c10" "$tmp/src/c10"
	python3 "$here/mutate.py" "$mutant" "$tmp/src" >&2
	tree="$out/src"
fi

if [ -n "$base" ]; then
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
C10_INCLUDE_DIRS='$out/include $tree $src/include $cuda_home/include'
C10_CXXFLAGS='-std=c++17 -DFMT_HEADER_ONLY=1${abi_flags:+ $abi_flags}'
EOF
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
# Drop this variant's builds made by older scripts (the key is exactly 12 hex digits, so that "debug" does not
# match "debug-oldabi").
for old in "$cache/c10-$ver-$variant-"????????????; do
	[ "$old" = "$out" ] || [ ! -f "$old/.complete" ] || rm -rf "$old"
done
echo "$out"

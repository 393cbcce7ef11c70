#!/usr/bin/env bash
# c10.sh VERSION - the c10 "build" of the test-bed variant pypi-VERSION: PyPI's released libc10.so and
# libc10_cuda.so of torch==VERSION as users run them (wheel.sh), with a build.env in the format of
# ../c10/build.sh, so that scenarios/build.sh compiles the driver against the release's own headers, with the C++
# string ABI the wheel was built with, and links it against the release's libraries. Prints the directory.
#
# build.env adds C10_TORCH_VERSION (2.4.1), C10_TORCH_MINOR (4: the driver's API switches), C10_CXX11_ABI,
# C10_CUDART (the runtime soname the release needs; the fake CUDA must provide it) and C10_WHEEL (the wheel's
# file name and git commit). Cached in $MEMPROF_TESTBED_CACHE/c10-pypi-VERSION-<key>.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "pypi/c10: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"

[ $# -eq 1 ] || die "usage: c10.sh VERSION"
version=$1
wheel=$("$here/wheel.sh" "$version") || exit $?
cuda_home=$(tb_cuda_home) || die "no CUDA headers"
key=$( (cat "$here/c10.sh" "$wheel/VERSION"; echo "$cuda_home") | sha256sum | cut -c1-12)
out=$tb_cache/c10-pypi-$version-$key
if [ ! -f "$out/build.env" ]; then
	read -r whl full git cuda abi cudart <"$wheel/VERSION"
	minor=${version#2.}
	minor=${minor%%.*}
	# C++17 up to 2.9; 2.10 on need C++20 (their headers use <concepts> and designated initialisers).
	std=c++17
	[ "$minor" -lt 10 ] || std=c++20
	mkdir -p "$out"
	cat >"$out/build.env.tmp" <<ENV
# Written by tests/testbed/pypi/c10.sh: how to compile and link a program against PyPI's torch $version.
C10_SOURCE_VERSION='$full'
C10_VARIANT='pypi-$version'
C10_LIBDIR='$wheel/lib'
C10_LINKDIR='$wheel/lib'
C10_INCLUDE_DIRS='$wheel/include $cuda_home/include'
C10_CXXFLAGS='-std=$std -D_GLIBCXX_USE_CXX11_ABI=$abi -DMEMPROF_TORCH_MINOR=$minor'
C10_CUDA_HOME='$cuda_home'
C10_TORCH_VERSION='$version'
C10_TORCH_MINOR='$minor'
C10_CXX11_ABI='$abi'
C10_CUDA='$cuda'
C10_CUDART='$cudart'
C10_WHEEL='$whl $git'
ENV
	mv "$out/build.env.tmp" "$out/build.env"
fi
echo "$out"

#!/bin/sh
# Builds fakecuda into a temporary directory and runs its self-test in several configurations.
# Optional env: CUDA12_HOME, CUDA11_HOME (CUDA 12 / 11 headers: ../cuda/fetch-headers.sh, fetch-headers11.sh):
# a second build with them, whose libcudart.so.12 / .so.11.0 must write exactly the structs those headers
# declare. Without them: libcudart.so.12 writes cudaDeviceProp's head, libcudart.so.11.0 refuses the queries
# whose struct CUDA 11 lays out differently.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/fakecuda.XXXXXX")
trap 'rm -rf "$out"' EXIT
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CUDA12_HOME=${CUDA12_HOME:-}
CUDA11_HOME=${CUDA11_HOME:-}

build() { # $1: output directory; then make variables
	dir=$1
	shift
	make -s -C "$here" OUT="$dir" CUDA_HOME="$CUDA_HOME" "$@" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
}
build "$out/plain" CUDA12_HOME= CUDA11_HOME=
if [ -n "$CUDA12_HOME$CUDA11_HOME" ]; then
	build "$out/headers" CUDA12_HOME="$CUDA12_HOME" CUDA11_HOME="$CUDA11_HOME"
fi

# The runtime's SONAME (and version node) for an ABI major.
soname() { if [ "$1" = 11 ]; then echo libcudart.so.11.0; else echo "libcudart.so.$1"; fi; }

# The sizes of the structs whose layout differs between majors, as the headers in $1 declare them:
# the env settings that tell selftest.c how many bytes each query must write.
measure() {
	cat >"$out/sizes.c" <<'C'
#include <cuda_runtime_api.h>
#include <stdio.h>
int main(void)
{
	printf("FAKECUDA_SELFTEST_PROPS_BYTES=%zu FAKECUDA_SELFTEST_FUNCATTR_BYTES=%zu FAKECUDA_SELFTEST_PTRATTR_BYTES=%zu\n",
	       sizeof(struct cudaDeviceProp), sizeof(struct cudaFuncAttributes), sizeof(struct cudaPointerAttributes));
	return 0;
}
C
	${CC:-cc} -I"$1/include" "$out/sizes.c" -o "$out/sizes" && "$out/sizes"
}

# From here on a failing check is counted, not fatal.
set +e
passed=0 failed=0
record() { # $1: 0 if the step passed; $2: what
	if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi
}

# The loader cache knows the real libcudart.so.13, so the test binaries carry an rpath to ours.
check_build() { # $1: build directory
	dir=$1
	for abi in 13 12 11; do
		so=$(soname $abi)
		${CC:-cc} -std=gnu11 -Wall -Wextra -I"$CUDA_HOME/include" "$here/selftest.c" -o "$dir/selftest$abi" \
			-L"$dir" -l:"$so" -l:libcuda.so.1 -ldl -Wl,-rpath,"$dir"
		ldd "$dir/selftest$abi" >"$dir/ldd$abi"
		grep -q "$so => $dir/$so" "$dir/ldd$abi"; record $? "selftest$abi loads our $so"
		grep -q "libcuda.so.1 => $dir/libcuda.so.1" "$dir/ldd$abi"; record $? "selftest$abi loads our libcuda.so.1"
	done

	# Every symbol in the version node named after the SONAME, as NVIDIA's runtime does it.
	for abi in 13 12 11; do
		so=$(soname $abi)
		lib="$dir/$so"
		readelf -d "$lib" | grep -q "SONAME.*\[$so\]"; record $? "SONAME of $lib"
		readelf -d "$lib" | grep -q "NEEDED.*\[libcuda.so.1\]"; record $? "$lib needs libcuda.so.1"
		# shellcheck disable=SC2016 # a literal $ORIGIN
		readelf -d "$lib" | grep -q 'RUNPATH.*\[\$ORIGIN\]'; record $? "RUNPATH of $lib"
		bad=$(nm -D --defined-only --with-symbol-versions "$lib" |
			awk -v node="@@$so" '$3 ~ /^cuda/ && substr($3, length($3) - length(node) + 1) != node' | wc -l)
		[ "$bad" -eq 0 ]; record $? "all cuda* of $lib versioned $so"
		# CUDA 12 introduced cudaGetDeviceProperties_v2 with its new struct: not in a CUDA 11 runtime.
		if [ "$abi" = 11 ]; then
			! nm -D --defined-only "$lib" | grep -qw cudaGetDeviceProperties_v2
			record $? "$lib does not export cudaGetDeviceProperties_v2"
		else
			nm -D --defined-only "$lib" | grep -qw cudaGetDeviceProperties_v2
			record $? "$lib exports cudaGetDeviceProperties_v2"
		fi
	done
}
check_build "$out/plain"
[ ! -d "$out/headers" ] || check_build "$out/headers"

run() { # $1: build directory, $2: binary abi, $3 $4 $5: expected devices, capacity, granularity; then env settings
	dir=$1 abi=$2 devices=$3 capacity=$4 granularity=$5
	shift 5
	label="$(basename "$dir") selftest$abi $(echo "$*" | sed 's/-u [A-Z_]* *//g')"
	if env "$@" "$dir/selftest$abi" "$abi" "$devices" "$capacity" "$granularity" >"$out/run.log" 2>&1; then
		record 0 ""
	else
		record 1 "$label"
		cat "$out/run.log"
	fi
	tail -n 1 "$out/run.log" | sed "s/^/  $label: /"
}
defaults="-u FAKECUDA_DEVICES -u FAKECUDA_CAPACITY -u FAKECUDA_GRANULARITY -u FAKECUDA_DELAY_US
	-u FAKECUDA_SELFTEST_PROPS_BYTES -u FAKECUDA_SELFTEST_FUNCATTR_BYTES -u FAKECUDA_SELFTEST_PTRATTR_BYTES"
# shellcheck disable=SC2086
run "$out/plain" 13 2 67108864 2097152 $defaults FAKECUDA_DEVICES=2 FAKECUDA_CAPACITY=64M
# shellcheck disable=SC2086
run "$out/plain" 12 2 67108864 2097152 $defaults FAKECUDA_DEVICES=2 FAKECUDA_CAPACITY=64M
# shellcheck disable=SC2086
run "$out/plain" 11 2 67108864 2097152 $defaults FAKECUDA_DEVICES=2 FAKECUDA_CAPACITY=64M
# shellcheck disable=SC2086
run "$out/plain" 13 1 1073741824 2097152 $defaults
# shellcheck disable=SC2086
run "$out/plain" 13 3 33554432 4194304 $defaults FAKECUDA_DEVICES=3 FAKECUDA_CAPACITY=32m FAKECUDA_GRANULARITY=4M \
	FAKECUDA_DELAY_US=2000
for abi in 12 11; do
	eval "headers=\$CUDA${abi}_HOME"
	[ -n "$headers" ] || continue
	sizes=$(measure "$headers")
	record $? "struct sizes of the CUDA $abi headers in $headers"
	# shellcheck disable=SC2086
	run "$out/headers" $abi 2 67108864 2097152 $defaults FAKECUDA_DEVICES=2 FAKECUDA_CAPACITY=64M $sizes
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

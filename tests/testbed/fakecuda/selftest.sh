#!/bin/sh
# Builds fakecuda into a temporary directory and runs its self-test in several configurations.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/fakecuda.XXXXXX")
trap 'rm -rf "$out"' EXIT
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

make -s -C "$here" OUT="$out" CUDA_HOME="$CUDA_HOME" >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }

# From here on a failing check is counted, not fatal.
set +e
passed=0 failed=0
record() { # $1: 0 if the step passed; $2: what
	if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi
}

# The loader cache knows the real libcudart.so.13, so the test binaries carry an rpath to ours.
for abi in 13 12; do
	${CC:-cc} -std=gnu11 -Wall -Wextra -I"$CUDA_HOME/include" "$here/selftest.c" -o "$out/selftest$abi" \
		-L"$out" -l:libcudart.so.$abi -l:libcuda.so.1 -ldl -Wl,-rpath,"$out"
	ldd "$out/selftest$abi" >"$out/ldd$abi"
	grep -q "libcudart.so.$abi => $out/libcudart.so.$abi" "$out/ldd$abi"; record $? "selftest$abi loads our libcudart.so.$abi"
	grep -q "libcuda.so.1 => $out/libcuda.so.1" "$out/ldd$abi"; record $? "selftest$abi loads our libcuda.so.1"
done

# Every symbol in the version node named after the SONAME, as NVIDIA's runtime does it.
for abi in 13 12; do
	lib="$out/libcudart.so.$abi"
	readelf -d "$lib" | grep -q "SONAME.*\[libcudart.so.$abi\]"; record $? "SONAME of $lib"
	readelf -d "$lib" | grep -q "NEEDED.*\[libcuda.so.1\]"; record $? "$lib needs libcuda.so.1"
	# shellcheck disable=SC2016 # a literal $ORIGIN
	readelf -d "$lib" | grep -q 'RUNPATH.*\[\$ORIGIN\]'; record $? "RUNPATH of $lib"
	bad=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '$3 ~ /^cuda/ && $3 !~ /@@libcudart.so.'"$abi"'$/' | wc -l)
	[ "$bad" -eq 0 ]; record $? "all cuda* of $lib versioned libcudart.so.$abi"
	nm -D --defined-only "$lib" | grep -qw cudaGetDeviceProperties_v2; record $? "$lib exports cudaGetDeviceProperties_v2"
done

run() { # $1: binary abi, $2 $3 $4: expected devices, capacity, granularity; then env settings
	abi=$1 devices=$2 capacity=$3 granularity=$4; shift 4
	label="selftest$abi $(echo "$*" | sed 's/-u [A-Z_]* *//g')"
	if env "$@" "$out/selftest$abi" "$abi" "$devices" "$capacity" "$granularity" >"$out/run.log" 2>&1; then
		record 0 ""
	else
		record 1 "$label"
		cat "$out/run.log"
	fi
	tail -n 1 "$out/run.log" | sed "s/^/  $label: /"
}
defaults="-u FAKECUDA_DEVICES -u FAKECUDA_CAPACITY -u FAKECUDA_GRANULARITY -u FAKECUDA_DELAY_US"
# shellcheck disable=SC2086
run 13 2 67108864 2097152 $defaults FAKECUDA_DEVICES=2 FAKECUDA_CAPACITY=64M
# shellcheck disable=SC2086
run 12 2 67108864 2097152 $defaults FAKECUDA_DEVICES=2 FAKECUDA_CAPACITY=64M
# shellcheck disable=SC2086
run 13 1 1073741824 2097152 $defaults
# shellcheck disable=SC2086
run 13 3 33554432 4194304 $defaults FAKECUDA_DEVICES=3 FAKECUDA_CAPACITY=32m FAKECUDA_GRANULARITY=4M \
	FAKECUDA_DELAY_US=2000

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

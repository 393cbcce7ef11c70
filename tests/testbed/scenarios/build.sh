#!/usr/bin/env bash
# build.sh C10_DIR FAKECUDA_DIR OUT_DIR [SOURCE.cpp] - build the scenario driver (or another program of ours
#                                                    on c10's public API: ../replay/replay.cpp) against one c10
#                                                    build and the fake CUDA; the program is OUT_DIR/NAME, NAME
#                                                    the source's name without .cpp (default: driver.cpp).
#
# C10_DIR: an output dir of tests/testbed/c10/build.sh (holds build.env and lib/); FAKECUDA_DIR: an OUT of
# `make -C tests/testbed/fakecuda`. Writes OUT_DIR/driver with RUNPATH FAKECUDA_DIR:C10_DIR/lib, so the FAKE
# libcudart/libcuda are loaded (the loader cache knows the real ones), and checks that with ldd. For a c10 build
# whose build.env names C10_LOADER (debian-2.6: Debian's release libraries, which need trixie's glibc), the driver
# is linked with C10_LDFLAGS and must run as `C10_LOADER --library-path FAKECUDA_DIR:C10_LIBDIR driver ...`;
# OUT_DIR/driver.env records that (DRIVER_LOADER, DRIVER_LIBRARY_PATH; both empty for the other builds).
# MEMPROF_DRIVER_PIE=1 compiles the driver -fPIE instead of -fPIC: then c10's `allocator` pointer gets a copy
# relocation into the executable (what a C++ libtorch application sees); the default keeps it in the library.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "scenarios/build: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: build.sh C10_DIR FAKECUDA_DIR OUT_DIR [SOURCE.cpp]"
source=${4:-$here/driver.cpp}
[ -f "$source" ] || die "no $source"
name=$(basename "$source" .cpp)
c10=$(cd "$1" && pwd)
fake=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
[ -f "$c10/build.env" ] || die "$c10 has no build.env (not a tests/testbed/c10/build.sh output)"

# shellcheck source=/dev/null
. "$c10/build.env"
incs=()
for d in $C10_INCLUDE_DIRS; do incs+=("-I$d"); done
# shellcheck disable=SC2206
cxxflags=($C10_CXXFLAGS)
# shellcheck disable=SC2206
ldflags=(${C10_LDFLAGS:-})

C10_LINKDIR=${C10_LINKDIR:-$C10_LIBDIR}
C10_LOADER=${C10_LOADER:-}
# The runtime SONAME libc10_cuda.so was linked against (libcudart.so.13 with CUDA 13 headers; .so.11.0 for 2.0.1).
cudart=$(readelf -d "$C10_LINKDIR/libc10_cuda.so" | sed -n 's/.*(NEEDED).*\[\(libcudart\.so\.[0-9.]*\)\]/\1/p')
[ -n "$cudart" ] || die "cannot tell which libcudart $C10_LINKDIR/libc10_cuda.so needs"
[ -f "$fake/$cudart" ] || die "fake CUDA dir $fake has no $cudart"
[ -f "$fake/libcuda.so.1" ] || die "fake CUDA dir $fake has no libcuda.so.1"

pic=-fPIC
[ "${MEMPROF_DRIVER_PIE:-0}" = 1 ] && pic=-fPIE

# c10 dlopen()s NVML where expandable segments ask for the device's fabric access (PyPI's 2.1 on; ATen is not
# there to have loaded it). The driver links our NVML stub (../nvstubs/nvml.c), so that dlopen finds the object
# already loaded under that soname.
cc -std=gnu11 -O2 -g -Wall -Wextra -fPIC -I"$here/../nvstubs" -DNVSTUB_CUDART_VERSION=13000 -shared \
	-Wl,-soname,libnvidia-ml.so.1 -o "$out/libnvidia-ml.so.1" "$here/../nvstubs/nvml.c"

# -I$here: release_api.h, which every program of ours includes.
g++ "${cxxflags[@]}" -O1 -g $pic -Wall -Wextra -Wno-unused-parameter -I"$here" "${incs[@]}" \
	-o "$out/$name.tmp" "$source" \
	-L"$C10_LINKDIR" -lc10_cuda -lc10 -L"$fake" -l:"$cudart" "${ldflags[@]}" \
	-Wl,--no-as-needed -L"$out" -l:libnvidia-ml.so.1 -Wl,--as-needed \
	-Wl,--enable-new-dtags -Wl,-rpath,"$fake:$C10_LIBDIR:$out" -Wl,--export-dynamic-symbol=memprof_checkpoint

if [ -n "$C10_LOADER" ]; then
	# Debian 12's ldd cannot run a program that needs trixie's glibc: ask trixie's loader.
	"$C10_LOADER" --list --library-path "$fake:$C10_LIBDIR" "$out/$name.tmp" >"$out/$name.ldd" ||
		die "$C10_LOADER --list failed on the driver: $(cat "$out/$name.ldd")"
	library_path=$fake:$C10_LIBDIR
else
	ldd "$out/$name.tmp" >"$out/$name.ldd"
	library_path=
fi
grep -q "$cudart => $fake/$cudart" "$out/$name.ldd" || die "driver does not load the fake $cudart: $(grep cudart "$out/$name.ldd")"
grep -q "libcuda.so.1 => $fake/libcuda.so.1" "$out/$name.ldd" || die "driver does not load the fake libcuda.so.1"
grep -q "libc10_cuda.so[.0-9]* => $C10_LIBDIR/libc10_cuda.so" "$out/$name.ldd" || die "driver does not load $C10_LIBDIR/libc10_cuda.so"
if [ "$name" = driver ]; then
	grep -qw memprof_checkpoint <<<"$(nm -D --defined-only "$out/$name.tmp")" ||
		die "memprof_checkpoint is not exported" # (nm's output read whole: grep -q may stop reading first)
fi
printf "DRIVER_LOADER='%s'\nDRIVER_LIBRARY_PATH='%s'\n" "$C10_LOADER" "$library_path" >"$out/driver.env"
mv "$out/$name.tmp" "$out/$name"
echo "$out/$name"

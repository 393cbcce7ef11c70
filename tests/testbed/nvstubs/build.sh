#!/usr/bin/env bash
# build.sh OUT CUDART_VERSION IMPORTER... - stub NVIDIA libraries for PyTorch on the fake device, into OUT:
#   libcublas.so.N, libcublasLt.so.N, libcudnn.so.N  for each such soname the IMPORTERs (PyTorch's own shared
#                                                    objects) import from: every imported symbol, in its version
#                                                    node; hand-written where PyTorch reads results (cublas.c,
#                                                    cublaslt.c, cudnn.c), generated otherwise (gen.py)
#   libnvidia-ml.so.1                                hand-written (nvml.c): c10 dlopen()s it
#   libnccl.so.2                                     when the IMPORTERs import NCCL (its symbols carry no version
#                                                    node: the unversioned nccl* imports): nccl.c, and for any
#                                                    other nccl* import a generated function that fails
#                                                    (ncclInvalidUsage)
# CUDART_VERSION (e.g. 13000) is what cudnnGetCudartVersion reports. NVSTUBS_NCCL_LIB=the real libnccl.so.2 that
# PyTorch would load: the stub reports its version (default 2.21.5). Prints nothing; logs to stderr.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "nvstubs/build: $*" >&2; }
die() { log "error: $*"; exit 1; }
[ $# -ge 3 ] || die "usage: build.sh OUT CUDART_VERSION IMPORTER..."
out=$1 cudart=$2
shift 2
mkdir -p "$out/obj"
cflags=(-std=gnu11 -O2 -g -Wall -Wextra -fPIC -I"$here" -DNVSTUB_CUDART_VERSION="$cudart")

# The version nodes the importers reference: "libcublas.so.13" and so on.
nodes=$(for f in "$@"; do readelf -W --dyn-syms "$f"; done | awk '$7 == "UND" {print $8}' |
	sed -n 's/.*@\(libcublas\.so\.[0-9]*\|libcublasLt\.so\.[0-9]*\|libcudnn\.so\.[0-9]*\)$/\1/p' | sort -u)
[ -n "$nodes" ] || die "the importers import nothing from cuBLAS, cuBLASLt or cuDNN"

for soname in $nodes; do
	major=${soname##*.}
	case $soname in
	libcublasLt.*) src=cublaslt.c ;;
	libcublas.*) src=cublas.c ;;
	libcudnn.*) src=cudnn.c ;;
	esac
	obj=$out/obj/${soname}.hand.o
	cc "${cflags[@]}" -DNVSTUB_CUBLAS_VERSION=$((major * 10000)) -DNVSTUB_CUDNN_MAJOR="$major" \
		-c "$here/$src" -o "$obj"
	python3 "$here/gen.py" "$soname" "$@" --skip "$obj" --c "$out/obj/$soname.gen.c" --map "$out/obj/$soname.map"
	cc "${cflags[@]}" -c "$out/obj/$soname.gen.c" -o "$out/obj/$soname.gen.o"
	cc -shared -Wl,-soname,"$soname" -Wl,--version-script,"$out/obj/$soname.map" -o "$out/$soname" \
		"$obj" "$out/obj/$soname.gen.o"
done
cc "${cflags[@]}" -shared -Wl,-soname,libnvidia-ml.so.1 -o "$out/libnvidia-ml.so.1" "$here/nvml.c"

# NCCL: the version the real library says it is ("NCCL version 2.30.7+cuda13.3" in its data), as ncclGetVersion's
# code: 2.9 and later X*10000+Y*100+Z, before X*1000+Y*100+Z.
nccl_imports=$(for f in "$@"; do readelf -W --dyn-syms "$f"; done | awk '$7 == "UND" {print $8}' |
	grep '^nccl[A-Z]' || true)
if [ -n "$nccl_imports" ]; then
	nccl_version=2.21.5
	if [ -n "${NVSTUBS_NCCL_LIB:-}" ]; then
		nccl_version=$(grep -aom1 'NCCL version [0-9]*\.[0-9]*\.[0-9]*' "$NVSTUBS_NCCL_LIB" | cut -d' ' -f3) ||
			die "no NCCL version in $NVSTUBS_NCCL_LIB"
	fi
	IFS=. read -r x y z <<<"$nccl_version"
	if [ "$x" -gt 2 ] || [ "$y" -ge 9 ]; then code=$((x * 10000 + y * 100 + z)); else code=$((x * 1000 + y * 100 + z)); fi
	obj=$out/obj/libnccl.so.2.hand.o
	cc "${cflags[@]}" -DNVSTUB_NCCL_VERSION="$code" -c "$here/nccl.c" -o "$out/obj/nccl.o"
	cc "${cflags[@]}" -c "$here/nccl_data.c" -o "$out/obj/nccl_data.o"
	ld -r -o "$obj" "$out/obj/nccl.o" "$out/obj/nccl_data.o"
	python3 "$here/gen.py" libnccl.so.2 "$@" --unversioned nccl --status 5 --skip "$obj" \
		--c "$out/obj/libnccl.so.2.gen.c" --map "$out/obj/libnccl.so.2.map"
	cc "${cflags[@]}" -c "$out/obj/libnccl.so.2.gen.c" -o "$out/obj/libnccl.so.2.gen.o"
	cc -shared -Wl,-soname,libnccl.so.2 -Wl,--version-script,"$out/obj/libnccl.so.2.map" -o "$out/libnccl.so.2" \
		"$obj" "$out/obj/libnccl.so.2.gen.o" -ldl -lpthread -lm
	log "libnccl.so.2 reports NCCL $nccl_version ($code)"
fi

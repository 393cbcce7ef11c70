#!/usr/bin/env bash
# build.sh OUT CUDART_VERSION IMPORTER... - stub NVIDIA libraries for PyTorch on the fake device, into OUT:
#   libcublas.so.N, libcublasLt.so.N, libcudnn.so.N  for each such soname the IMPORTERs (PyTorch's own shared
#                                                    objects) import from: every imported symbol, in its version
#                                                    node; hand-written where PyTorch reads results (cublas.c,
#                                                    cublaslt.c, cudnn.c), generated otherwise (gen.py)
#   libnvidia-ml.so.1                                hand-written (nvml.c): c10 dlopen()s it
# CUDART_VERSION (e.g. 13000) is what cudnnGetCudartVersion reports. Prints nothing; logs to stderr.
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

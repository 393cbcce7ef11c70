#!/usr/bin/env bash
# build.sh TORCH - set up (or reuse) what a Python job needs to run on the fake device with the PyTorch build
# TORCH, and print a directory holding job.env (sourced by ../job.sh):
#   JOB_PYTHON       the interpreter (for a chroot build: its path inside the root)
#   JOB_ROOT         empty, or the root the job runs chrooted in (lib/chroot.sh)
#   JOB_PRELOAD      the fake CUDA runtime and driver and the NVIDIA stubs, for LD_PRELOAD: loaded first, they
#                    win over the real libraries by soname, whatever RPATH the wheel's libraries carry
#   JOB_BIND         host directories a chroot job must see at the same path (the fake, the stubs)
#   JOB_TORCH_LIBDIR where PyTorch's libc10_cuda.so lies (as the job maps it: a host path, also for a chroot)
#   JOB_TORCH        TORCH;   JOB_TORCH_VERSION  torch.__version__ as the installed files say
# TORCH: pypi-X.Y.Z (PyPI's CUDA wheel in a venv of CPython 3.11: ./pypi.sh), debian-2.6 (Debian trixie's
# python3-torch-cuda with trixie's CPython 3.13, chrooted: ../debian/python-root.sh), or system (the machine's own
# python3, torch and GPU; not listed). `build.sh --list` prints the listed ones.
# Exit 77 when a registry cannot be reached and nothing is cached.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testbed=$(cd "$here/.." && pwd)
log() { echo "python/build: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$testbed/lib/common.sh"

builds="pypi-2.14.1 debian-2.6"
[ $# -eq 1 ] || die "usage: build.sh TORCH | build.sh --list"
if [ "$1" = --list ]; then
	echo "$builds"
	exit 0
fi
torch=$1

# needed_cudart LIBDIR - the CUDA runtime soname PyTorch's libc10_cuda.so needs ("libcudart.so.13").
needed_cudart() {
	local lib
	lib=$(ls "$1"/libc10_cuda.so* | head -n1)
	readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(libcudart\.so\.[0-9]*\)\]/\1/p' | head -n1
}

# stubs OUT CUDART_SONAME IMPORTER... - the NVIDIA stubs (../nvstubs) for these importers, cached by their key.
stubs() {
	local out=$1 cudart=$2
	shift 2
	if [ ! -f "$out/.complete" ]; then
		rm -rf "$out"
		# The NCCL stub reports the version of the real library it replaces (when there is one).
		NVSTUBS_NCCL_LIB=$([ ! -f "$nccl" ] || echo "$nccl") \
			"$testbed/nvstubs/build.sh" "$out" "$((${cudart##*.} * 1000))" "$@" || die "nvstubs did not build"
		touch "$out/.complete"
	fi
}

case $torch in
system)
	# The machine's own python3 and its torch, on the machine's own GPU: nothing fake, nothing preloaded, cuDNN
	# real; the allocator capped at the scenario's FAKECUDA_CAPACITY (boot/sitecustomize.py). Not in the default
	# list; for a machine with a GPU (MEMPROF_JOB_BUILDS=system tests/walker/jobs.sh).
	python=$(command -v python3) || die "system: no python3"
	torch_version=$("$python" -c 'import torch; print(torch.__version__)') || die "system: python3 cannot import torch"
	torch_libdir=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
	"$python" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' || die "system: torch sees no GPU"
	dir=$tb_cache/job-system
	mkdir -p "$dir"
	cat >"$dir/job.env" <<ENV
JOB_TORCH='$torch'
JOB_TORCH_VERSION='$torch_version'
JOB_PYTHON='$python'
JOB_ROOT=''
JOB_PRELOAD=''
JOB_BIND=''
JOB_TORCH_LIBDIR='$torch_libdir'
export MEMPROF_TESTBED_CUDNN=1 MEMPROF_TESTBED_CAPACITY="\${FAKECUDA_CAPACITY:-1G}"
ENV
	echo "$dir"
	exit 0
	;;
pypi-*)
	version=${torch#pypi-}
	venv=$("$here/pypi.sh" "$version") || exit $?
	site=$(ls -d "$venv"/lib/python3.*/site-packages | head -n1)
	python=$venv/bin/python
	root=
	torch_libdir=$site/torch/lib
	importers=("$torch_libdir"/*.so)
	torch_version=$(sed -n "s/^__version__ = '\(.*\)'.*/\1/p" "$site/torch/version.py")
	cuda12=
	nccl=$site/nvidia/nccl/lib/libnccl.so.2
	;;
debian-2.6)
	root=$("$testbed/debian/python-root.sh") || exit $?
	root=$root/root
	python=/usr/bin/python3
	torch_libdir=$root/usr/lib/x86_64-linux-gnu
	importers=("$torch_libdir"/libtorch_cuda.so.* "$torch_libdir"/libtorch_python.so.* "$torch_libdir"/libtorch_cpu.so.*
		"$torch_libdir"/libc10_cuda.so.*)
	torch_version=$(sed -n "s/^__version__ = '\(.*\)'.*/\1/p" "$root"/usr/lib/python3/dist-packages/torch/version.py)
	# Its libcudart.so.12 callers read the whole CUDA 12 cudaDeviceProp.
	cuda12=$("$testbed/cuda/fetch-headers.sh") || die "no CUDA 12 headers"
	nccl=$torch_libdir/libnccl.so.2
	;;
*) die "unknown build '$torch' (one of: $builds)" ;;
esac
[ -d "$torch_libdir" ] || die "no $torch_libdir"
cudart=$(needed_cudart "$torch_libdir")
[ -n "$cudart" ] || die "libc10_cuda.so in $torch_libdir needs no libcudart"
# A wheel built for CUDA 12 (PyPI's 2.1 to 2.10) reads the whole CUDA 12 cudaDeviceProp, as Debian's 2.6 does.
if [ "$cudart" = libcudart.so.12 ] && [ -z "$cuda12" ]; then
	cuda12=$("$testbed/cuda/fetch-headers.sh") || die "no CUDA 12 headers"
fi
fake=$(tb_fakecuda "$cuda12") || die "tests/testbed/fakecuda did not build"

key=$( (echo "$torch $fake $python $root"; cat "$here/build.sh" "$testbed"/nvstubs/*) | sha256sum | cut -c1-12)
dir=$tb_cache/job-$torch-$key
mkdir -p "$dir"
(
	flock 8
	stubs "$dir/nvstubs" "$cudart" "${importers[@]}"
	preload="$fake/$cudart $fake/libcuda.so.1"
	for lib in "$dir"/nvstubs/lib*.so*; do preload="$preload $lib"; done
	cat >"$dir/job.env.tmp" <<ENV
JOB_TORCH='$torch'
JOB_TORCH_VERSION='$torch_version'
JOB_PYTHON='$python'
JOB_ROOT='$root'
JOB_PRELOAD='$preload'
JOB_BIND='$fake $dir/nvstubs'
JOB_TORCH_LIBDIR='$torch_libdir'
ENV
	mv "$dir/job.env.tmp" "$dir/job.env"
) 8>"$tb_cache/.lock-job-$torch"
echo "$dir"

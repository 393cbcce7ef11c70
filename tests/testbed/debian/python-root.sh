#!/usr/bin/env bash
# python-root.sh - a Debian trixie root in which Debian's released PyTorch 2.6 CUDA build (python3-torch-cuda)
# runs with trixie's CPython 3.13, built once with mmdebstrap into the test-bed cache; prints that root's directory.
#
# The directory ($MEMPROF_TESTBED_CACHE/debian-python-root-<hash of this script>/) holds
#   root/      the root: mmdebstrap --variant=apt of trixie main contrib non-free non-free-firmware, without
#              Recommends, with python3-torch-cuda, python3-numpy, procps and binutils (PyTorch's _snapshot()
#              symbolizes C++ frames with addr2line; without it: RuntimeError: stoi). apt's .deb cache is emptied.
#              Run things in it with tb_chroot_run (lib/chroot.sh). The real NVIDIA runtime libraries are there
#              (libcudart.so.12, cuBLAS, NCCL, and libcuda.so.1 of the 550 driver; no NVML, no cuDNN); the GPU-less
#              jobs put a fake CUDA in front of them.
#   packages   dpkg-query -W of the root: "name version" per line
#   VERSIONS   "python3 3.13.x-y" and "torch 2.6.0+dfsg-..." (python3-torch-cuda's version)
#   .complete
# and $MEMPROF_TESTBED_CACHE/debian-python-root.<hash>.dir names it. Built in a temporary directory beside it
# and renamed once complete.
#
# Trap: trixie's nvidia-cudnn (needed by libtorch-cuda-2.6) is an installer whose postinst downloads cuDNN from
# NVIDIA; without that network it fails and leaves torch unconfigured. mmdebstrap gets an empty package of that
# name (a version above the mirror's) from a local repository instead (copy://: apt copies the .deb into the
# root's cache; with file:// dpkg, chrooted, cannot see it), which also keeps nvidia-cuda-dev out.
# So the root holds no libcudnn.so.9.
#
# Needs root (mmdebstrap's root mode, chroot), and the Debian mirror for the first build only (about 4 GB, some
# minutes). Installs mmdebstrap and dpkg-dev on this machine when missing; never touches its apt sources.
# Exit status: 0 (directory printed), 77 when the mirror cannot be reached (nothing built), 1 on other failures.
# Env: MEMPROF_TESTBED_CACHE, MEMPROF_DEBIAN_MIRROR, MEMPROF_DEBIAN_KEYRING (lib/common.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "debian/python-root: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/chroot.sh
. "$here/../lib/chroot.sh"

suite=trixie
components="main contrib non-free non-free-firmware"
include=python3-torch-cuda,python3-numpy,procps,binutils
key=$(tb_hash "$here/python-root.sh")
out=$tb_cache/debian-python-root-$key
pointer=$tb_cache/debian-python-root.$key.dir

if tb_cached "$pointer" debian-python-root; then
	echo "$tb_cached_dir"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building the root needs root (mmdebstrap --mode=root, chroot)"
tb_need apt-get dpkg-deb dpkg-query flock unshare chroot mount mountpoint
# The archive (the machine's apt sources, or MEMPROF_DEBIAN_MIRROR), before anything else: tests skip (77) when it
# cannot be reached.
tb_debian_mirror
probe=$(mktemp)
if ! timeout 120 /usr/lib/apt/apt-helper -o APT::Sandbox::User=root \
	download-file "$tb_mirror/dists/$suite/InRelease" "$probe" >/dev/null 2>&1; then
	rm -f "$probe"
	log "skip: the Debian mirror $tb_mirror cannot be reached ($suite InRelease)"
	exit 77
fi
rm -f "$probe"

tb_install_debs mmdebstrap dpkg-dev
tb_need mmdebstrap dpkg-scanpackages
t0=$(date +%s)

# Left over by a build that was killed (the lock is ours: nobody else is building).
for stale in "$out".tmp.*; do
	[ -e "$stale" ] || continue
	log "removing the leftover $stale"
	tb_chroot_rm "$stale"
done
tmp=$out.tmp.$$
mkdir -p "$tmp"
trap 'tb_chroot_rm "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

# The stand-in nvidia-cudnn: above the mirror's version, so that apt takes it, and satisfying libtorch's depends.
tb_apt trixie-python "$suite" "deb $suite $components"
real_cudnn=$(tb_apt_version nvidia-cudnn)
[ -n "$real_cudnn" ] || die "no nvidia-cudnn in $suite (contrib)"
cudnn_dep=$(apt-cache "${tb_apt_opts[@]}" show libtorch-cuda-2.6 2>/dev/null | sed -n 's/^Depends: //p' | head -n1 |
	tr ',' '\n' | sed -n 's/^ *\(nvidia-cudnn.*\)/\1/p')
[ -n "$cudnn_dep" ] || log "note: libtorch-cuda-2.6 no longer depends on nvidia-cudnn"
dummy_ver=$real_cudnn+memprof.empty
log "$suite: nvidia-cudnn $real_cudnn, libtorch-cuda-2.6 needs ${cudnn_dep:-none}; stand-in $dummy_ver"
mkdir -p "$tmp/dummy/pkg/DEBIAN" "$tmp/dummy/repo"
cat >"$tmp/dummy/pkg/DEBIAN/control" <<EOF
Package: nvidia-cudnn
Version: $dummy_ver
Architecture: all
Maintainer: memprof test bed <memprof-testbed@invalid>
Section: contrib/libs
Priority: optional
Description: empty stand-in for NVIDIA's cuDNN installer (memprof test bed)
 Debian's nvidia-cudnn downloads cuDNN from NVIDIA in its postinst; this one
 installs nothing, so that python3-torch-cuda installs without that network.
EOF
dpkg-deb --root-owner-group -b "$tmp/dummy/pkg" "$tmp/dummy/repo/nvidia-cudnn_${dummy_ver}_all.deb" >/dev/null ||
	die "dpkg-deb could not build the nvidia-cudnn stand-in"
(cd "$tmp/dummy/repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null) ||
	die "dpkg-scanpackages failed"
dummy_line="deb [trusted=yes] copy://$tmp/dummy/repo ./"

# Same trust as the private apt directory: the keyring, or [trusted=yes] where tb_apt had to fall back to it.
if grep -q 'trusted=yes' "$tb_apt_dir/sources.list"; then
	mirror_line="deb [trusted=yes] $tb_mirror $suite $components"
else
	mirror_line="deb $tb_mirror $suite $components"
fi
log "mmdebstrap $suite ($include) -> $tmp/root"
# In a private mount namespace: mmdebstrap's mounts of the root (/proc, /dev, the local repository) vanish with it
# even when it is killed.
if ! unshare -m --propagation private -- mmdebstrap --mode=root --variant=apt --keyring="$tb_keyring" \
	--aptopt='APT::Install-Recommends "false"' --include="$include" \
	"$suite" "$tmp/root" "$mirror_line" "$dummy_line" >"$tmp/mmdebstrap.log" 2>&1; then
	tail -n 40 "$tmp/mmdebstrap.log" >&2
	die "mmdebstrap failed (log above)"
fi
log "mmdebstrap done in $(($(date +%s) - t0)) s"
root=$tmp/root
[ -z "$(tb_chroot_mounts "$root")" ] || die "something stayed mounted under $root"
rm -f "$root"/var/cache/apt/archives/*.deb
# The local repository is gone once this script ends: drop it from the root's sources.
for f in "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*; do
	[ -f "$f" ] || continue
	grep -v -F "copy://$tmp/dummy/repo" "$f" >"$f.new" || true
	cat "$f.new" >"$f"
	rm -f "$f.new"
done

# Checks: every package configured, the stand-in taken, python3.13, numpy, addr2line, torch's files.
admin=(--admindir="$root/var/lib/dpkg")
dpkg-query "${admin[@]}" -W -f='${Package} ${Version}\n' >"$tmp/packages"
bad=$(dpkg-query "${admin[@]}" -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 != "ii" {print $2 "(" $1 ")"}')
[ -z "$bad" ] || die "packages not installed cleanly in the root: $(echo $bad)"
grep -q -x "nvidia-cudnn $dummy_ver" "$tmp/packages" || die "the root did not take the nvidia-cudnn stand-in"
py_ver=$(awk '$1 == "python3" {print $2}' "$tmp/packages")
torch_ver=$(awk '$1 == "python3-torch-cuda" {print $2}' "$tmp/packages")
case $py_ver in 3.13.*) ;; *) die "python3 in the root is ${py_ver:-missing}, not 3.13" ;; esac
case $torch_ver in 2.6.0*) ;; *) die "python3-torch-cuda in the root is ${torch_ver:-missing}, not 2.6.0" ;; esac
printf 'python3 %s\ntorch %s\n' "$py_ver" "$torch_ver" >"$tmp/VERSIONS"
[ -x "$root/usr/bin/addr2line" ] || die "no usr/bin/addr2line in the root"
ls "$root"/usr/lib/x86_64-linux-gnu/libc10_cuda.so.2.6* >/dev/null 2>&1 || die "no libc10_cuda.so.2.6 in the root"
mkdir -p "$tmp/check"
tb_chroot_run "$root" "$tmp/check" python3 -c '
import sys, numpy
assert sys.version_info[:2] == (3, 13), sys.version
print("python", sys.version.split()[0], "numpy", numpy.__version__)
' >&2 || die "python3 / numpy do not run in the root"
tb_chroot_run "$root" "$tmp/check" addr2line --version >/dev/null || die "addr2line does not run in the root"
# torch's extension module resolves everything in the root but cuDNN (the stand-in is empty; the jobs bring a
# stub libcudnn.so.9 along with the fake CUDA). libtorch_cuda is linked with BIND_NOW, so plain `import torch`
# fails here with "ImportError: libcudnn.so.9: cannot open shared object file".
tb_chroot_run "$root" "$tmp/check" sh -c 'ldd /usr/lib/python3/dist-packages/torch/_C.cpython-*.so' >"$tmp/check/ldd" ||
	die "ldd of torch's _C failed in the root"
missing=$(awk '/not found/ {print $1}' "$tmp/check/ldd" | sort -u)
[ "$missing" = libcudnn.so.9 ] || die "torch's _C misses other libraries than libcudnn.so.9 in the root: $(echo $missing)"
rm -rf "$tmp/check"

touch "$tmp/.complete"
rm -rf "$tmp/dummy" "$tmp/mmdebstrap.log"
[ -e "$out" ] && tb_chroot_rm "$out"
mv "$tmp" "$out"
trap - EXIT INT TERM HUP
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s: $(wc -l <"$out/packages") packages, python3 $py_ver, torch $torch_ver"
echo "$out"

#!/usr/bin/env bash
# cuda-gdb.sh - Debian's cuda-gdb (package nvidia-cuda-gdb, non-free), fetched once into the test-bed cache and
# extracted there (nothing is installed on the machine); prints the path of a runnable cuda-gdb on stdout.
# Exits 77 with a one-line reason on stderr when it cannot be had or cannot run here.
#
#   MEMPROF_GDB=$(tests/gdb/cuda-gdb.sh) || exit $?     # then run the gdb batch tests with $MEMPROF_GDB
#
# Which one (MEMPROF_CUDA_GDB_SUITE):
#   bookworm (default)  11.8.86~11.8.0-5~deb12u1, GNU gdb 10.2, a 3.2 MB .deb. Runs natively on Debian 12 and has
#                       Python (it links the machine's libpython3.11.so.1.0: Python 3.11). It is the only Debian
#                       build of cuda-gdb with Python. Its Python layer has real bugs (None/True/False copied into
#                       the executable, so C-side None is not Python's None) and its BFD cannot read .relr.dyn
#                       sections: see CUDA-GDB.md beside this file before reading a failure as memprof's.
#   trixie              12.4.127~12.4.1-2, based on gdb 13.1, a 3.8 MB .deb, built --without-python (so are sid's
#                       and experimental's). It needs glibc 2.38 / GLIBCXX 3.4.32: trixie's libc6, libstdc++6 and
#                       libgcc-s1 are fetched beside it (about 4.5 MB more) and the printed wrapper runs it under
#                       trixie's loader; its other libraries (babeltrace, debuginfod, ...) are the machine's.
#                       Useful to check what memprof's gdb front end says in a cuda-gdb without Python.
#
# The printed path is a wrapper script, $MEMPROF_TESTBED_CACHE/cuda-gdb-<suite>-<version>-<hash>/cuda-gdb, that
# passes the extracted tree's --data-directory and every argument on. Beside it: root/ (the extracted package),
# VERSION, PYTHON (the Python version it embeds, or "none"). The .debs are deleted once it is complete; after
# that, no network is used. Needs apt-get, dpkg-deb (root is not needed beyond what `apt-get download` into a
# private directory needs: lib/common.sh never touches the machine's apt state).
# The libraries the binary needs are not fetched: on a Debian 12 that has `gdb` installed (the test bed installs
# it) they are all there; when one is missing this exits 77 naming it.
# Env: MEMPROF_CUDA_GDB_SUITE, MEMPROF_TESTBED_CACHE, MEMPROF_DEBIAN_MIRROR, MEMPROF_DEBIAN_KEYRING (lib/common.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "cuda-gdb: $*" >&2; }
die() { log "skip: $*"; exit 77; }
# shellcheck source-path=SCRIPTDIR source=../testbed/lib/common.sh
. "$here/../testbed/lib/common.sh"

suite=${MEMPROF_CUDA_GDB_SUITE:-bookworm}
case $suite in
bookworm) runtime_pkgs=() ;;
trixie) runtime_pkgs=(libc6 libstdc++6 libgcc-s1) ;;
*) die "MEMPROF_CUDA_GDB_SUITE=$suite: bookworm or trixie" ;;
esac
[ "$(uname -m)" = x86_64 ] || die "nvidia-cuda-gdb is fetched for amd64 only (this is $(uname -m))"
key=$(tb_hash "$here/cuda-gdb.sh")
pointer=$tb_cache/cuda-gdb-$suite.$key.dir

# check DIR - the wrapper in DIR runs (cheap: done on every call, the machine's libraries can change).
check() {
	local out
	out=$("$1/cuda-gdb" -nx -batch --version 2>&1 | head -n1) || true
	case $out in
	*"CUDA Debugger"* | *cuda-gdb*) return 0 ;;
	esac
	log "$1/cuda-gdb --version printed: $out"
	return 1
}

# missing_libs BIN LIBDIR... - sonames of BIN's DT_NEEDED that neither LIBDIR nor the machine's loader cache has.
missing_libs() {
	local bin=$1 n d found cache
	shift
	cache=$(/sbin/ldconfig -p 2>/dev/null || true)
	for n in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		found=
		for d in "$@"; do
			[ -e "$d/$n" ] && found=1
		done
		[ -n "$found" ] || grep -q "^[[:space:]]*$n " <<<"$cache" || echo "$n"
	done
}

if tb_cached "$pointer" cuda-gdb; then
	check "$tb_cached_dir" || die "the cached cuda-gdb in $tb_cached_dir does not run here"
	echo "$tb_cached_dir/cuda-gdb"
	exit 0
fi

tb_need apt-get dpkg-deb tar readelf flock
t0=$(date +%s)
if [ "$suite" = bookworm ]; then
	tb_apt bookworm-nonfree bookworm "deb bookworm non-free"
else
	tb_apt trixie-cudagdb trixie "deb trixie main non-free"
fi
ver=$(tb_apt_version nvidia-cuda-gdb)
[ -n "$ver" ] || die "nvidia-cuda-gdb is not in $suite non-free"
out=$tb_cache/cuda-gdb-$suite-$ver-$key
log "nvidia-cuda-gdb $ver ($suite non-free) -> $out"
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/root"
trap 'rm -rf "$tmp"' EXIT

mapfile -t debs < <(tb_apt_download nvidia-cuda-gdb "${runtime_pkgs[@]}")
log "downloaded $(du -ch "${debs[@]}" | tail -n1 | cut -f1) in $(($(date +%s) - t0)) s"
for deb in "${debs[@]}"; do
	dpkg-deb -x "$deb" "$tmp/root"
done
# Only the debugger is kept (not cuda-gdbserver, the man pages, the docs).
rm -rf "$tmp/root/usr/share/doc" "$tmp/root/usr/share/man" "$tmp/root/usr/share/lintian" "$tmp/root/usr/bin/cuda-gdbserver"
bin=$tmp/root/usr/bin/cuda-gdb
[ -x "$bin" ] || die "nvidia-cuda-gdb $ver has no usr/bin/cuda-gdb"
[ -d "$tmp/root/usr/share/cuda-gdb" ] || die "nvidia-cuda-gdb $ver has no usr/share/cuda-gdb"

lib=$tmp/root/usr/lib/x86_64-linux-gnu
if [ "$suite" = bookworm ]; then
	lacking=$(missing_libs "$bin" | tr '\n' ' ')
else
	[ -e "$tmp/root/usr/lib64/ld-linux-x86-64.so.2" ] || die "trixie's libc6 has no usr/lib64/ld-linux-x86-64.so.2"
	lacking=$(missing_libs "$bin" "$lib" | tr '\n' ' ')
fi
[ -z "$lacking" ] || die "cuda-gdb $ver needs libraries this machine lacks: ${lacking% } (apt-get install gdb brings them on Debian 12)"

# The wrapper: paths relative to itself, so the cache directory can move.
{
	echo '#!/bin/sh'
	echo "# cuda-gdb $ver from Debian $suite non-free (written by tests/gdb/cuda-gdb.sh)"
	if [ "$suite" = bookworm ]; then
		cat <<'WRAP'
d=$(dirname "$(readlink -f "$0")")
exec "$d/root/usr/bin/cuda-gdb" --data-directory="$d/root/usr/share/cuda-gdb" "$@"
WRAP
	else
		# trixie's loader with trixie's libc/libstdc++ first, then the machine's libraries (ld.so.cache);
		# --argv0 keeps argv[0] the debugger's own path.
		cat <<'WRAP'
d=$(dirname "$(readlink -f "$0")")
exec "$d/root/usr/lib64/ld-linux-x86-64.so.2" --library-path "$d/root/usr/lib/x86_64-linux-gnu" \
	--argv0 "$d/root/usr/bin/cuda-gdb" "$d/root/usr/bin/cuda-gdb" --data-directory="$d/root/usr/share/cuda-gdb" "$@"
WRAP
	fi
} >"$tmp/cuda-gdb"
chmod +x "$tmp/cuda-gdb"
check "$tmp" || die "cuda-gdb $ver does not run here"
py=$("$tmp/cuda-gdb" -nx -batch -ex 'python import sys; print("PY=%d.%d.%d" % sys.version_info[:3])' 2>/dev/null |
	sed -n 's/^PY=//p') || true
printf '%s\n' "${py:-none}" >"$tmp/PYTHON"
printf '%s\n' "$ver" >"$tmp/VERSION"
touch "$tmp/.complete"
rm -f "${debs[@]}"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out" >"$pointer"
log "ready in $(($(date +%s) - t0)) s ($(du -sh "$out" | cut -f1), Python: ${py:-none})"
echo "$out/cuda-gdb"

#!/usr/bin/env bash
# fetch-source.sh - fetch Debian trixie's pytorch source (c10/ only) and nvml.h into the test-bed cache; prints the dir.
# fetch-source.sh --orig - the same, but prints the path of the pytorch orig tarball it downloaded (kept in the
#                          private apt directory's dl/; fetched again when missing), for files outside c10/
#                          (tests/oracle/fetch-memoryviz.sh takes torch/utils/viz/MemoryViz.js from it).
#
# Uses a private apt directory under the cache, on the Debian archive of the machine's apt sources (lib/common.sh's
# tb_apt; the machine's apt sources are read, never touched).
# Idempotent: once src-<version>/.complete exists, no network is used.
# Env: MEMPROF_TESTBED_CACHE (default ~/.cache/memprof-testbed), MEMPROF_DEBIAN_SUITE (default trixie),
#      MEMPROF_DEBIAN_MIRROR, MEMPROF_DEBIAN_KEYRING (lib/common.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { echo "fetch-source: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"
cache=$tb_cache
suite=${MEMPROF_DEBIAN_SUITE:-trixie}

want=src
case ${1:-} in
--orig) want=orig ;;
'') ;;
*) die "usage: fetch-source.sh [--orig]" ;;
esac

pointer="$cache/pytorch-$suite.version"
apt_dir="$cache/apt-$suite"

# done_if_complete: print what was asked and exit when the version pointer names a complete source directory
# (and, for --orig, the orig tarball of that version is still in dl/).
done_if_complete() {
	local ver origs
	[ -f "$pointer" ] || return 0
	ver=$(cat "$pointer")
	[ -f "$cache/src-$ver/.complete" ] || return 0
	if [ "$want" = src ]; then
		echo "$cache/src-$ver"
		exit 0
	fi
	# The orig tarball is named by the upstream version: the Debian revision (-7) stripped.
	origs=("$apt_dir/dl/pytorch_${ver%-*}.orig.tar."*)
	if [ -f "${origs[0]}" ]; then
		echo "${origs[0]}"
		exit 0
	fi
}

# Warm path: no network.
done_if_complete

# One fetcher at a time (parallel test runs share the private apt directory); the next finds the finished tree.
exec 9>"$cache/.lock-fetch-source"
flock 9
done_if_complete

for tool in apt-get dpkg-deb tar xz; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

# The private apt directory apt-$suite (the one done_if_complete looks in).
tb_apt "$suite" "$suite" "deb-src $suite main" "deb $suite non-free"
[ "$tb_apt_dir" = "$apt_dir" ] || die "tb_apt made $tb_apt_dir, not $apt_dir"
opts=("${tb_apt_opts[@]}")

ver=$(apt-get "${opts[@]}" source --print-uris pytorch 2>/dev/null |
	sed -n "s/^'[^']*' pytorch_\([^ ]*\)\.dsc .*/\1/p" | head -n1)
[ -n "$ver" ] || die "no pytorch source package found in $suite"
src="$cache/src-$ver"
log "pytorch source version $ver -> $src"

# Source package: download only (no unpacking of the 158 MB tree, no patches: they do not touch c10's allocator).
(cd "$apt_dir/dl" && apt-get "${opts[@]}" -qq source --download-only pytorch >&2)
orig=$(ls "$apt_dir/dl"/pytorch_*.orig.tar.* 2>/dev/null | head -n1)
[ -n "$orig" ] || die "no orig tarball downloaded"
if [ "$want" = orig ] && [ -f "$src/.complete" ]; then
	printf '%s\n' "$ver" >"$pointer"
	echo "$orig"
	exit 0
fi

# nvml.h (c10/cuda/driver_api.h includes it; the machine's CUDA install lacks it).
(cd "$apt_dir/dl" && apt-get "${opts[@]}" -qq download libnvidia-ml-dev >&2)
nvml_deb=$(ls "$apt_dir/dl"/libnvidia-ml-dev_*.deb 2>/dev/null | head -n1)
[ -n "$nvml_deb" ] || die "libnvidia-ml-dev download failed"

rm -rf "$src.tmp"
mkdir -p "$src.tmp/tree" "$src.tmp/nvml"
# Only c10/ (the top directory of the orig tarball is stripped).
tar -xf "$orig" -C "$src.tmp/tree" --strip-components=1 --wildcards --no-wildcards-match-slash '*/c10'
[ -f "$src.tmp/tree/c10/cuda/CUDACachingAllocator.cpp" ] || die "c10/ not found in $orig"
dpkg-deb -x "$nvml_deb" "$src.tmp/nvml"
nvml_h=$(find "$src.tmp/nvml" -name nvml.h | head -n1)
[ -n "$nvml_h" ] || die "nvml.h not found in $nvml_deb"
mkdir -p "$src.tmp/include"
cp "$nvml_h" "$src.tmp/include/nvml.h"
rm -rf "$src.tmp/nvml"
printf '%s\n' "$ver" >"$src.tmp/VERSION"
touch "$src.tmp/.complete"
rm -rf "$src"
mv "$src.tmp" "$src"
printf '%s\n' "$ver" >"$pointer"
if [ "$want" = orig ]; then echo "$orig"; else echo "$src"; fi

#!/usr/bin/env bash
# fetch-memoryviz.sh - PyTorch 2.6's memory_viz page script and a d3 v5 for it, in the test-bed cache; prints the dir.
#
# The dir holds MemoryViz.js (torch/utils/viz/MemoryViz.js of Debian trixie's pytorch 2.6.0 orig tarball, the
# tarball tests/testbed/c10/fetch-source.sh --orig downloads; untouched) and d3.js (usr/share/nodejs/d3/dist/d3.js
# of Debian bookworm's node-d3 5.16.0, a UMD bundle of all of d3 v5, fetched with `apt-get download` in a private
# apt directory of tests/testbed/lib/common.sh). Nothing of either is stored in this repository.
# Cache: ${MEMPROF_TESTBED_CACHE:-~/.cache/memprof-testbed}/memoryviz-<pytorch version>-d3-<node-d3 version>/,
# named by memoryviz.dir there. Warm (both files there): no network, a few ms.
# Exit status: 0 done; 77 a download failed (no network, no mirror: the caller's test is not run); 1 anything else
# (the files are not what they should be).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "fetch-memoryviz: $*" >&2; }
die() { log "error: $*"; exit 1; }
unavailable() { log "unavailable: $*"; exit 77; }
# shellcheck source-path=SCRIPTDIR source=../testbed/lib/common.sh
. "$here/../testbed/lib/common.sh"

pointer=$tb_cache/memoryviz.dir
warm() {
	local d
	[ -f "$pointer" ] || return 1
	d=$(cat "$pointer")
	[ -f "$d/.complete" ] || return 1
	echo "$d"
}
warm && exit 0

exec 9>"$tb_cache/.lock-memoryviz"
flock 9
warm && exit 0

for tool in apt-get dpkg-deb tar xz; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
orig=$("$here/../testbed/c10/fetch-source.sh" --orig) || unavailable "the pytorch source tarball (fetch-source.sh --orig failed)"
# pytorch_2.6.0+dfsg.orig.tar.xz -> 2.6.0+dfsg
pt_ver=${orig##*/pytorch_}
pt_ver=${pt_ver%.orig.tar.*}

# die() inside tb_apt / tb_apt_download means the archive could not be reached: not run, rather than failed.
# shellcheck disable=SC2317 # called by common.sh
die() { unavailable "$*"; }
tb_apt bookworm-main bookworm "deb bookworm main"
d3_ver=$(tb_apt_version node-d3)
[ -n "$d3_ver" ] || unavailable "no node-d3 in bookworm main"
d3_deb=$(tb_apt_download node-d3)
die() { log "error: $*"; exit 1; }

dest=$tb_cache/memoryviz-$pt_ver-d3-$d3_ver
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp/x"
tar -xJf "$orig" -C "$dest.tmp/x" --wildcards '*/torch/utils/viz/MemoryViz.js' ||
	die "no torch/utils/viz/MemoryViz.js in $orig"
js=$(find "$dest.tmp/x" -name MemoryViz.js | head -n1)
[ -n "$js" ] || die "no MemoryViz.js in $orig"
grep -q '^export function add_local_files' "$js" || die "$js has no add_local_files"
mv "$js" "$dest.tmp/MemoryViz.js"
rm -rf "$dest.tmp/x"
mkdir "$dest.tmp/x"
dpkg-deb -x "$d3_deb" "$dest.tmp/x"
[ -f "$dest.tmp/x/usr/share/nodejs/d3/dist/d3.js" ] || die "no usr/share/nodejs/d3/dist/d3.js in $d3_deb"
head -n1 "$dest.tmp/x/usr/share/nodejs/d3/dist/d3.js" | grep -q 'd3js.org v5\.' || die "$d3_deb's d3.js is not d3 v5"
mv "$dest.tmp/x/usr/share/nodejs/d3/dist/d3.js" "$dest.tmp/d3.js"
rm -rf "$dest.tmp/x"
printf 'MemoryViz.js from %s\nd3.js from %s\n' "${orig##*/}" "${d3_deb##*/}" >"$dest.tmp/SOURCES"
touch "$dest.tmp/.complete"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$dest" >"$pointer.tmp.$$"
mv "$pointer.tmp.$$" "$pointer"
log "MemoryViz.js (pytorch $pt_ver) and d3.js (node-d3 $d3_ver) in $dest"
echo "$dest"

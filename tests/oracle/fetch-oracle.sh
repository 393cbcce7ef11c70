#!/bin/bash
# fetch-oracle.sh - download PyTorch's _memory_viz.py, memory.py and _memory_profiler.py (Debian trixie 2.6,
# sid 2.14.x) and make patched copies.
#
# Usage: fetch-oracle.sh            prints the two oracle paths (trixie, then sid), one a line
#
# Cache: ${MEMPROF_CACHE:-$HOME/.cache/memprof}/oracle/<deb-version>/{_memory_viz.py,memory.py,_memory_profiler.py},
# with oracle/<suite> a symlink to the version directory and oracle/<suite>/_memory_viz_fixed.py the
# copy patched by patch_memviz.py (see TRACE-DEVIATIONS.md).  No network when all files of both suites exist.
# torch/cuda/memory.py (memory_summary, for tests/oracle/summary_*) and torch/profiler/_memory_profiler.py
# (the memory timeline, for tests/timeline/) are extracted beside _memory_viz.py.
# Uses a private apt directory per suite, on the Debian archive of the machine's apt sources (tb_debian_mirror of
# tests/testbed/lib/common.sh: MEMPROF_DEBIAN_MIRROR overrides it); the machine's own apt sources are read, never
# touched. MEMPROF_DEBIAN_KEYRING overrides the archive keyring (default: the Debian archive keyring).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
cache=${MEMPROF_CACHE:-$HOME/.cache/memprof}/oracle
suites=(trixie sid)

workdirs=()
cleanup() { [ ${#workdirs[@]} -eq 0 ] || rm -rf "${workdirs[@]}"; }
trap cleanup EXIT
log() { echo "fetch-oracle: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../testbed/lib/common.sh
. "$here/../testbed/lib/common.sh"
keyring=$tb_keyring

# apt_run DIR ARGS... : apt-get confined to the private directory DIR
apt_run() {
    local d=$1; shift
    apt-get -q \
        -o Dir::Etc::sourcelist="$d/sources.list" \
        -o Dir::Etc::sourceparts=- \
        -o Dir::Etc::preferences=/dev/null \
        -o Dir::Etc::preferencesparts=- \
        -o Dir::State::Lists="$d/lists" \
        -o Dir::Cache="$d/cache" \
        -o APT::Architectures=amd64 \
        -o Debug::NoLocking=1 \
        "$@"
}

# The files taken from the package, as paths under its torch/ directory.
files=(cuda/_memory_viz.py cuda/memory.py profiler/_memory_profiler.py)

# fetch_suite SUITE : download python3-torch of SUITE, extract FILES, point oracle/SUITE at it
fetch_suite() {
    local suite=$1 work deb version dest
    work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-oracle-$suite.XXXXXX")
    workdirs+=("$work")
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
    tb_debian_mirror
    echo "deb [signed-by=$keyring] $tb_mirror $suite main" >"$work/sources.list"
    local rc=0
    apt_run "$work" update >"$work/update.log" 2>&1 || rc=$?
    if grep -qE '^(W|E): .*(NO_PUBKEY|EXPKEYSIG|not signed|[Ss]ignature)' "$work/update.log"; then
        echo "fetch-oracle: warning: signature check failed for '$suite' with $keyring;" \
            "falling back to [trusted=yes] (package is NOT verified)" >&2
        echo "deb [trusted=yes] $tb_mirror $suite main" >"$work/sources.list"
        rm -rf "$work/lists"; mkdir -p "$work/lists/partial"
        rc=0
        apt_run "$work" update >"$work/update.log" 2>&1 || rc=$?
    fi
    if [ "$rc" -ne 0 ] || grep -q '^E:' "$work/update.log"; then
        cat "$work/update.log" >&2
        die "apt-get update failed for '$suite'"
    fi
    # apt-get download writes into the cwd; as root it warns about the _apt sandbox (harmless)
    (cd "$work" && apt_run "$work" download python3-torch) >"$work/download.log" 2>&1 ||
        { cat "$work/download.log" >&2; die "apt-get download python3-torch failed for '$suite'"; }
    local debs=("$work"/python3-torch_*.deb)
    deb=${debs[0]}
    [ -f "$deb" ] || die "no python3-torch .deb downloaded for '$suite'"
    version=$(dpkg-deb -f "$deb" Version)
    mkdir -p "$work/x"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/x" --wildcards "${files[@]/#/*/torch/}"
    dest="$cache/$version"
    mkdir -p "$dest"
    local src f
    for f in "${files[@]}"; do
        src=$(find "$work/x" -path "*/torch/$f" | head -n1)
        [ -n "$src" ] || die "$f not found in $deb"
        f=${f##*/}
        cp "$src" "$dest/$f.tmp" && mv "$dest/$f.tmp" "$dest/$f"
    done
    ln -sfn "$version" "$cache/$suite.tmp" && mv -T "$cache/$suite.tmp" "$cache/$suite"
    echo "fetch-oracle: $suite: python3-torch $version" >&2
}

mkdir -p "$cache"
# cached SUITE : whether every file of SUITE is in the cache
cached() {
    local f
    for f in "${files[@]}"; do [ -f "$cache/$1/${f##*/}" ] || return 1; done
}

for s in "${suites[@]}"; do
    cached "$s" || fetch_suite "$s"
done

# (Re)make the fixed copies when missing or older than the patcher; atomic so parallel runs are safe.
for s in "${suites[@]}"; do
    orig="$cache/$s/_memory_viz.py" fixed="$cache/$s/_memory_viz_fixed.py"
    if [ ! -f "$fixed" ] || [ "$here/patch_memviz.py" -nt "$fixed" ] || [ "$orig" -nt "$fixed" ]; then
        "$python" "$here/patch_memviz.py" "$orig" "$fixed.tmp.$$" || die "patching $orig failed"
        mv "$fixed.tmp.$$" "$fixed"
    fi
done

for s in "${suites[@]}"; do echo "$cache/$s/_memory_viz.py"; done

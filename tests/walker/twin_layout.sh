#!/usr/bin/env bash
# twin_layout.sh VARIANT DIR - the layout file a test-bed variant needs, printed as a path (nothing when it needs
# none). A stripped layout mutant matches no release, so no built-in table fits it: its layout is the one
# `memprof info -o` writes from a core of its DWARF twin (the same build before stripping). Made once in DIR.
# Env: MEMPROF (the binary). Exit 1 when a stripped mutant's layout could not be made (DIR/*.err say why).
set -uo pipefail
variant=$1 dir=$2
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
case $variant in stripped-mutant-*) ;; *) exit 0 ;; esac
mkdir -p "$dir"
if [ ! -s "$dir/layout" ]; then
	"$top/tests/testbed/target.sh" oom "${variant#stripped-}" gcore "$dir" >/dev/null 2>"$dir/target.err" &&
		"$memprof" info "$dir/core" -o "$dir/layout" >/dev/null 2>"$dir/info.err"
	rm -f "$dir/core"
fi
[ -s "$dir/layout" ] || exit 1
echo "$dir/layout"

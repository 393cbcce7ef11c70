#!/usr/bin/env bash
# build-ids.sh [--check FILE] [RELEASE...] - the build-id of libc10_cuda.so in PyPI's wheel of each RELEASE (default:
# every release of the test bed, ../lib/common.sh tb_pypi_releases), as the rows of src/symbols/mp_torch_builds.c: { "BUILD-ID", "VERSION" },
# with VERSION the wheel's torch.__version__. Releases whose wheel is not cut yet are fetched (wheel.sh).
# --check FILE: exit 1 unless every row printed is in FILE (memprof's table), naming the ones that are not.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"
check=
if [ "${1:-}" = --check ]; then
	check=$2
	shift 2
fi
rows=
for r in ${*:-$tb_pypi_releases}; do
	w=$("$here/wheel.sh" "$r")
	id=$(readelf -n "$w/lib/libc10_cuda.so" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	read -r _ full _ <"$w/VERSION"
	rows="$rows	{ \"$id\", \"$full\" },
"
done
if [ -z "$check" ]; then
	printf '%s' "$rows"
	exit 0
fi
missing=0
while IFS= read -r row; do
	[ -n "$row" ] || continue
	grep -qF "${row#	}" "$check" || { echo "build-ids: not in $check: ${row#	}"; missing=1; }
done <<<"$rows"
exit $missing

#!/usr/bin/env bash
# versions.sh - memprof on PyPI's torch of every 2.x minor: the test-bed variants pypi-X.Y.Z (the release's own,
# stripped libc10_cuda.so, as users run it), every scenario, from a gcore core, a kernel core and the live
# process, against the allocator's own snapshot() (tests/walker/truth.sh's checks, one row per release).
#
# Default (make check): the releases whose wheel the test-bed cache already holds, plus 2.14.1 (on this
# machine's disk); MEMPROF_VERSIONS_FETCH=1 (make check-versions) fetches every release first; MEMPROF_VERSIONS
# names releases. After a full pass, a stamp keyed by memprof's source, the test bed and these scripts makes a
# rerun of the same tree within 6 hours (the ASan pass of tests/run-all.sh) quick: `training` and `oom` in gcore
# mode. Also: the build-id table (src/symbols/mp_torch_builds.c) against the wheels, and `memprof info` naming
# each release.
# Prints truth.sh's lines, then one row per release: release, torch.__version__, C++ ABI, CUDA, layout, checks,
# seconds. Env: MEMPROF (the binary), MEMPROF_VERSIONS_FULL=1 (no quick path).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
testbed=$top/tests/testbed
memprof=${MEMPROF:-$top/_build/memprof}
target=$testbed/target.sh
log() { echo "versions: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=../testbed/lib/common.sh
. "$testbed/lib/common.sh"

cached() { # RELEASE: its wheel is cut in the cache already
	local p
	for p in "$tb_cache"/torch-wheel-"$1".*.dir; do
		[ -f "$p" ] && [ -f "$(cat "$p")/.complete" ] && return 0
	done
	return 1
}

if [ -n "${MEMPROF_VERSIONS:-}" ]; then
	releases=$MEMPROF_VERSIONS
elif [ "${MEMPROF_VERSIONS_FETCH:-0}" = 1 ]; then
	releases=$tb_pypi_releases
else
	releases=
	for r in $tb_pypi_releases; do
		{ [ "$r" = 2.14.1 ] || cached "$r"; } && releases="$releases $r"
	done
fi

stamp=$tb_cache/versions-passed-$( (cat "$0" "$here/truth.sh" "$here/compare_truth.py"; echo "$releases";
	find "$testbed" "$top/src" "$top/coredump" -type f \( -name '*.[ch]' -o -name '*.sh' -o -name '*.py' \
		-o -name '*.cpp' -o -name '*.layout' -o -name Makefile \) -print0 | sort -z | xargs -0 cat) |
	sha256sum | cut -c1-12)
scenarios= modes=
if [ "${MEMPROF_VERSIONS_FULL:-0}" != 1 ] && [ -n "$(find "$stamp" -mmin -360 2>/dev/null)" ]; then
	echo "== versions: these releases passed with this source at $(date -r "$stamp" '+%F %T'); quick run"
	scenarios="training oom" modes=gcore
fi

# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
rows=
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-versions.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The build-id table names every release checked here.
if [ -n "$releases" ]; then
	# shellcheck disable=SC2086 # the releases, one word each
	if out=$("$testbed/pypi/build-ids.sh" --check "$top/src/symbols/mp_torch_builds.c" $releases 2>&1); then
		ok "build-ids of$releases are in mp_torch_builds.c"
	else
		bad "build-id table: $out"
	fi
fi

for r in $releases; do
	t0=$(date +%s)
	"$testbed/pypi/wheel.sh" "$r" >"$work/wheel-$r.out" 2>"$work/wheel-$r.err"
	case $? in
	0) ;;
	77) echo "not run: $r: $(tail -1 "$work/wheel-$r.err")"; continue ;; # PyPI out of reach, nothing cached
	*) bad "$r: no wheel: $(tail -1 "$work/wheel-$r.err")"; continue ;;
	esac
	read -r _ full _ cuda abi cudart <"$(cat "$work/wheel-$r.out")/VERSION"
	dir=$work/$r
	mkdir -p "$dir"
	# What memprof tells of the release.
	if "$target" training "pypi-$r" gcore "$dir/info" >"$dir/info.out" 2>"$dir/info.err"; then
		"$memprof" info "$dir/info/core" >"$dir/info.txt" 2>"$dir/info.txt.err"
		rc=$?
		layout=$(sed -n 's/^layout: *\([^ ]*\).*/\1/p' "$dir/info.txt")
		if grep -q "^version: *$full " "$dir/info.txt"; then
			ok "$r: memprof info names the release ($(grep '^version:' "$dir/info.txt" | sed 's/^version: *//'))"
		else
			bad "$r: memprof info does not name $full: $(grep '^version:' "$dir/info.txt")"
		fi
	else
		bad "$r: the test bed could not make a core: $(tail -1 "$dir/info.err")"
		continue
	fi
	MEMPROF=$memprof MEMPROF_WALK_VARIANTS="pypi-$r" MEMPROF_WALK_SCENARIOS="${scenarios:-$tb_scenarios}" \
		MEMPROF_WALK_MODES="${modes:-gcore kernel live}" "$here/truth.sh" >"$dir/truth.out" 2>&1
	grep -E '^(ok|FAIL|not run):' "$dir/truth.out"
	np=$(grep -c '^ok:' "$dir/truth.out")
	nf=$(grep -c '^FAIL:' "$dir/truth.out")
	pass=$((pass + np)) fail=$((fail + nf))
	rows="$rows$(printf '%-8s %-14s %-4s %-6s %-26s %d passed, %d failed, %d s' "$r" "$full" "$abi" "$cuda" \
		"${layout:-?}" "$np" "$nf" $(($(date +%s) - t0)))
"
done

echo "release  torch          ABI  CUDA   layout                     checks"
printf '%s' "$rows"
finish || exit 1
[ -z "$scenarios" ] && [ -n "$releases" ] && touch "$stamp"
exit 0

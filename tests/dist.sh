#!/usr/bin/env bash
# dist.sh - the release tarball holds every file git tracks, but for the few listed below that belong to the git
# checkout alone: a file the build, the tests or the docs need and EXTRA_DIST forgot fails here, in seconds, rather
# than in a `make distcheck` run (whose own check is only that the tarball's tests pass, and a test whose script is
# missing may skip quietly). The files `make distdir` would copy (into a scratch directory, not the build's) are
# compared with `git ls-files`.
# Needs the git checkout the source directory is the top of, and git: from a tarball (make distcheck) there is no
# list to compare with, and the test is not run (status 77).
# Environment: MEMPROF (the CLI; its directory is the build directory), top_srcdir.
set -uo pipefail
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "$(dirname "${MEMPROF:-$top/_build/memprof}")" && pwd)

# Tracked, deliberately not shipped (each with why).
not_shipped=(
	.gitignore # git's own
	.ci/run    # the CI service's entry point: runs tests/run-all.sh, which is shipped
)

command -v git >/dev/null || { echo "not run: no git"; exit 77; }
# The source directory must be the checkout's top: a tarball unpacked inside some other checkout (make distcheck
# unpacks it under the build directory) is not one.
gtop=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) &&
	[ "$(cd "$gtop" && pwd -P)" = "$(cd "$top" && pwd -P)" ] ||
	{ echo "not run: $top is not the top of a git checkout (a tarball has no git ls-files to compare with)"; exit 77; }
[ -f "$builddir/Makefile" ] || { echo "FAIL: no Makefile in $builddir"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-dist.XXXXXX") || exit 2
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
pkg=$work/pkg
if ! make -s --no-print-directory -C "$builddir" distdir distdir="$pkg" top_distdir="$pkg" >"$work/make.log" 2>&1; then
	echo "FAIL: make distdir: $(tail -5 "$work/make.log")"
	exit 1
fi

# Tracked files (those removed from the work tree but not yet from git are passed over).
missing=() n=0
while IFS= read -r -d '' f; do
	[ -e "$top/$f" ] || [ -L "$top/$f" ] || continue
	n=$((n + 1))
	skip=
	for x in "${not_shipped[@]}"; do [ "$f" = "$x" ] && skip=1; done
	[ -n "$skip" ] && continue
	[ -e "$pkg/$f" ] || missing+=("$f")
done < <(git -C "$top" ls-files -z)

for x in "${not_shipped[@]}"; do
	[ -e "$pkg/$x" ] && echo "note: $x is listed as not shipped, but the tarball holds it: drop it from the list"
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "FAIL: ${#missing[@]} of $n tracked files are not in the tarball (add them to EXTRA_DIST in the local.am" \
		"of their layer or in Makefile.am, or to not_shipped in $0 saying why):"
	printf '  %s\n' "${missing[@]}"
	exit 1
fi
echo "ok: the tarball holds all $n tracked files but the ${#not_shipped[@]} not shipped"

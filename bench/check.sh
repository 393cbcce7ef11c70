#!/bin/bash
# check.sh - the performance regression guard: the current build against another commit's (the
# previous one by default), same files, same run, runs interleaved; fails when any figure (wall time or
# peak RSS of a command) is more than 20 % worse, or when the two builds print different outputs.
#
# Usage, from the build directory after make:  MEMPROF=./memprof ../bench/check.sh [REV]
# Environment: MEMPROF (default ./memprof), BENCH_BLOCKS (default 1000000), BENCH_RUNS (runs per build and
# figure, median kept; default 3), BENCH_SLACK (allowed worsening, default 0.20), MEMPROF_CACHE (the big
# pickle and the other commit's build are cached under it, by commit), BENCH_ALLOW_DIFF=1 (outputs may
# differ: for commits that change them on purpose). Not part of `make check`: timings are not tests.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=$(readlink -f "${MEMPROF:-./memprof}")
rev=${1:-HEAD~1}
blocks=${BENCH_BLOCKS:-1000000}
runs=${BENCH_RUNS:-3}
slack=${BENCH_SLACK:-0.20}
cache=${MEMPROF_CACHE:-$HOME/.cache/memprof}

# shellcheck source=bench/lib.sh
. "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_need_time
[ -x "$MEMPROF" ] || { echo "check: '$MEMPROF' not found (set MEMPROF)" >&2; exit 2; }

# The other commit's memprof, built once per commit in the cache (a worktree, configured like a plain build).
sha=$(git -C "$top" rev-parse --verify "$rev^{commit}")
base=$cache/bench/build-$sha
if [ ! -x "$base/build/memprof" ]; then
	echo "check: building $rev (${sha:0:12}) once, in $base" >&2
	rm -rf "$base"
	mkdir -p "$base"
	git -C "$top" worktree add --detach -f "$base/src" "$sha" >/dev/null
	(cd "$base/src" && autoreconf -fi >/dev/null 2>&1)
	mkdir -p "$base/build"
	(cd "$base/build" && "$base/src/configure" --quiet >/dev/null && make -s -j"$(nproc)" memprof >/dev/null)
	git -C "$top" worktree remove --force "$base/src" 2>/dev/null || true
fi
old=$base/build/memprof

big=$(bench_big_pickle "$blocks")
echo "file: $big ($blocks blocks); this build against $rev (${sha:0:12}), median of $runs, interleaved"
printf '%-34s %9s %9s %7s %9s %9s %7s\n' "command" "old_s" "new_s" "new/old" "old_MiB" "new_MiB" "new/old"


# figure NAME ARGS...: time both builds on ARGS (the file appended), check outputs, print a row; sets worse=1
worse=0
figure() {
	local name=$1 b w r rc
	shift
	: >"$tmp/old.w"; : >"$tmp/new.w"; : >"$tmp/old.r"; : >"$tmp/new.r"
	for _ in $(seq "$runs"); do
		for b in old new; do
			local bin=$MEMPROF
			[ "$b" = old ] && bin=$old
			# exit 1 is an answer for some commands (compare: no difference); 2 and up are failures
			rc=0
			/usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" "$@" "$big" >"$tmp/$b.out" 2>"$tmp/$b.err" || rc=$?
			[ "$rc" -le 1 ] || { echo "check: $b build: '$name' failed: $(tail -1 "$tmp/$b.err")" >&2; exit 2; }
			read -r w r < <(tail -1 "$tmp/time") # after "Command exited with non-zero status 1"
			echo "$w" >>"$tmp/$b.w"
			echo "$r" >>"$tmp/$b.r"
		done
	done
	if ! cmp -s "$tmp/old.out" "$tmp/new.out" && [ "${BENCH_ALLOW_DIFF:-0}" != 1 ]; then
		echo "check: '$name': the two builds print different outputs" >&2
		worse=1
	fi
	awk -v n="$name" -v ow="$(bench_median <"$tmp/old.w")" -v nw="$(bench_median <"$tmp/new.w")" \
		-v or="$(bench_median <"$tmp/old.r")" -v nr="$(bench_median <"$tmp/new.r")" -v s="$slack" 'BEGIN {
		tw = ow > 0 ? nw / ow : 1; tr = or > 0 ? nr / or : 1
		flag = (tw > 1 + s || tr > 1 + s) ? "  WORSE" : ""
		printf "%-34s %9.3f %9.3f %7.2f %9.1f %9.1f %7.2f%s\n", n, ow, nw, tw, or / 1024, nr / 1024, tr, flag
		exit flag != "" }' || worse=1
}

figure "segsum" segsum
figure "segments" segments
figure "memory" memory
figure "trace" trace
figure "categories" categories
figure "categories --sites 20" categories --sites 20
figure "timeline (summary)" timeline
figure "compare (with itself)" compare "$big"

if [ "$worse" -ne 0 ]; then
	echo "check: worse than $rev by more than $slack on a figure above (or outputs differ)"
	exit 1
fi
echo "check: no figure worse than $rev by more than $slack"

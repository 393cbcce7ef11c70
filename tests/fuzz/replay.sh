#!/usr/bin/env bash
# replay.sh - make check's part of the fuzzing (tests/fuzz/README.md): every harness, built with the project's
# compiler and a plain main, runs once on each committed seed (corpus/TARGET) and each regression input
# (regress/TARGET: the inputs that once crashed, hung or leaked). The sanitizer pass of tests/run-all.sh runs
# the same under ASan and UBSan. Env: MEMPROF (the built memprof: the harnesses are beside it, in tests/fuzz).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(dirname "${MEMPROF:-$here/../../_build/memprof}")/tests/fuzz
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-fuzz-replay.XXXXXX")
trap 'rm -rf "$work"' EXIT
cache=${MEMPROF_FUZZ_CACHE:-$HOME/.cache/memprof-fuzz}

for t in pickle json analyses rules core walker python; do
	dirs=()
	seeds=$t
	[ "$t" = analyses ] && seeds="pickle json"
	for d in $(for s in $seeds; do echo "$here/corpus/$s"; done) "$here/regress/$t"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	if [ "$t" = walker ] || [ "$t" = python ]; then
		if ! cores=$("$here/core_for.sh" "$t" "$cache/$t-cores" 2>"$work/core.err"); then
			echo "not run: $t: the test bed made no core: $(tail -1 "$work/core.err")"
			continue
		fi
		export MEMPROF_FUZZ_CORE="$cores" MEMPROF_FUZZ_PY_CORE="$cores"
	fi
	if out=$(timeout 600 "$bin/replay_$t" "${dirs[@]}" 2>&1); then
		ok "$t: replayed $(echo "$out" | tail -1) (${dirs[*]#"$here/"})"
	else
		bad "$t:"
		echo "$out" | tail -20 | sed 's/^/    /'
	fi
done
finish

#!/usr/bin/env bash
# judgment.sh - `memprof oom`'s judgment on real OOMs where a rule of thumb answers wrong
# (tests/testbed/jobs/oom_judgment.py on the fake device, PyPI's torch 2.14.1 by default): an 8 MiB request with
# 18 MiB free under expandable segments (20 MiB pages) is an OOM; 19 MiB holes between live blocks hold no page,
# so expandable segments are not claimed; the job's own max_split_size_mb:21 is named as the cause; a request
# known from its message is told by its bounds; the empty_cache() place is the job's own line also with C++
# frames recorded. judgment_check.py checks each explanation; then every claim with something to run is run:
# the job again with the remedy's conf (PYTORCH_CUDA_ALLOC_CONF), empty_cache() after the named line, or the
# named variable deleted must not run out of memory; a setting in not_helping must still run out.
#
# Default (lean): four variants on PyPI's 2.14.1; MEMPROF_OOM_FULL=1 (make check-oom): every variant.
# Env: MEMPROF, MEMPROF_JUDGMENT_BUILDS (default pypi-2.14.1; "all": every build job.sh knows),
# MEMPROF_TESTBED_SKIP=1 (77). Prints one line per check and "N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
testbed=$top/tests/testbed
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "oom/judgment: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
builds=${MEMPROF_JUDGMENT_BUILDS:-pypi-2.14.1}
# name:case:extra job arguments (",": none); the lean default takes one of each kind
variants="page-expandable:page:--alloc-conf,expandable_segments:True holes:holes:, own_split:own_split:, step:step:,"
if [ "${MEMPROF_OOM_FULL:-0}" = 1 ]; then
	variants="page-message:page:, $variants page-expandable-history:page:--alloc-conf,expandable_segments:True,--history,python
		holes-state:holes:--history,none holes-cpp:holes:--history,all"
fi
[ "$builds" = all ] && builds=$("$testbed/job.sh" --list)
# shellcheck source=../testbed/lib/common.sh
. "$testbed/lib/common.sh"
# After a pass of the same sources within 6 hours (the sanitizer pass of tests/run-all.sh), memprof's checks run
# again on one variant, without the re-runs of its claims (they run the job, not memprof).
stamp=$tb_cache/judgment-passed-$( (cat "$0" "$here/judgment_check.py" "$testbed/jobs/oom_judgment.py" \
	"$testbed/jobs/list"; find "$top/src" -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z | xargs -0 cat) |
	sha256sum | cut -c1-12)
quick=
if [ "${MEMPROF_OOM_FULL:-0}" != 1 ] && [ -n "$(find "$stamp" -mmin -360 2>/dev/null)" ]; then
	echo "== judgment: these variants passed with this memprof source at $(date -r "$stamp" '+%F %T'); quick run"
	variants="own_split:own_split:,"
	quick=1
fi
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-judgment.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The job of scenario judgment-CASE (its environment from the list) with ARGS, in truth mode, in DIR.
run_job() { # BUILD CASE DIR ARGS...
	local build=$1 case=$2 dir=$3 line env args vars=()
	shift 3
	line=$(grep -v '^#' "$testbed/jobs/list" | awk -v n="judgment-$case" '$1 == n')
	read -r _ env _ args <<<"$line"
	[ "$env" = - ] || IFS=, read -r -a vars <<<"$env"
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # the list's arguments are words
	env "${vars[@]}" "$testbed/job.sh" "$build" "$testbed/jobs/oom_judgment.py" truth "$dir" $args "$@" \
		>"$dir/vars" 2>"$dir/log"
}

# "oom", "no oom" or "failed" for the job run again with ARGS.
outcome() { # BUILD CASE DIR ARGS...
	run_job "$@" || { echo failed; return; }
	python3 -c 'import json, sys; print("no oom" if json.load(open(sys.argv[1]))["oom_message"] is None else "oom")' \
		"$3/notes.json"
}

for build in $builds; do
	for variant in $variants; do
		IFS=: read -r name case extra <<<"$variant"
		args=()
		[ "$extra" = , ] || IFS=, read -r -a args <<<"$extra"
		# after the list's own arguments: a variant's --history wins (argparse keeps the last)
		dir=$work/$build-$name
		if ! run_job "$build" "$case" "$dir" "${args[@]}"; then
			rc=$?
			[ $rc = 77 ] && { echo "skip: $build/$name: the test bed cannot give it here"; continue; }
			bad "$build/$name: the job failed: $(tail -3 "$dir/log" | tr '\n' ' ')"
			continue
		fi
		message=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["oom_message"] or "")' "$dir/notes.json")
		[ -n "$message" ] || { bad "$build/$name: the job did not run out of memory"; continue; }
		"$memprof" oom "$dir/snapshot.pickle" --message "$message" --format json >"$dir/oom.json" 2>"$dir/oom.err"
		rc=$?
		if [ $rc != 0 ]; then
			bad "$build/$name: memprof oom exited $rc: $(head -2 "$dir/oom.err" | tr '\n' ' ')"
			continue
		fi
		"$memprof" oom "$dir/snapshot.pickle" --message "$message" >"$dir/oom.txt" 2>&1
		if python3 "$here/judgment_check.py" "$name" "$dir/oom.json" "$dir/oom.txt" >"$dir/claims" 2>"$dir/check.err"; then
			ok "$build/$name: $(head -1 "$dir/check.err")"
		else
			bad "$build/$name: $(tr '\n' ' ' <"$dir/check.err")"
		fi
		# memprof whatif says of each replayed setting what oom said (the same replay, through its own command)
		while IFS=$'\t' read -r want conf; do
			passes=$("$memprof" whatif "$dir/snapshot.pickle" --conf "${conf:-max_split_size_mb:21}" --format json |
				python3 -c 'import json, sys; print(json.load(sys.stdin)["tried"]["passes"])')
			[ "$passes" = "$want" ] && ok "$build/$name: whatif --conf '$conf': passes $passes, as oom says" ||
				bad "$build/$name: whatif --conf '$conf': passes $passes, oom says $want"
		done < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for works, key in ((True, "remedies"), (False, "not_helping")):
    for x in r[key]:
        if x.get("evidence") == "replay" and "conf" in x and x["conf"]:
            print("%s\t%s" % (works, x["conf"]))' "$dir/oom.json")
		# every claim with something to run, run: WANT, then the job's arguments; a claim about the OOM's step
		# runs the job to the end of that step
		step=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("oom_step", ""))' "$dir/notes.json")
		[ -z "$step" ] || args+=(--until-step "$step")
		n=0
		[ -z "$quick" ] || continue
		while IFS=$'\t' read -r want what rerun; do
			n=$((n + 1))
			read -r -a more <<<"$rerun"
			got=$(outcome "$build" "$case" "$dir-claim-$n" "${args[@]}" "${more[@]}")
			[ "$got" = "$want" ] && ok "$build/$name: $what: $got, as memprof says" ||
				bad "$build/$name: $what: $got, but memprof says $want"
		done <"$dir/claims"
	done
done
finish || exit 1
[ -n "$quick" ] || touch "$stamp"

#!/usr/bin/env bash
# jobs.sh - `memprof oom` on real out-of-memory errors of real PyTorch Python jobs (tests/testbed/jobs/oom_causes.py
# on the fake device: PyPI's torch 2.14.1, Debian's 2.6), each built so that one cause dominates: device_full,
# fragmentation, oversize_split, other_stream, private_pool, and on 2.6 pending_free (a request inside a MemPool,
# where 2.6 skips the retry that would wait for them).
#
# For each build, scenario and mode (a gcore core, the kernel's core, the live process): memprof's explanation
# (--format json) must find the OOM, compute the numbers the job's own OutOfMemoryError printed, give every byte
# reserved but not live to one cause and name the intended cause first (check.py). Then every remedy memprof
# claims is tried: the same job runs again with that setting or change (expandable_segments, max_split_size_mb,
# empty_cache() after the free it names, deleting the variable it names, dropping the private pool) and must not
# run out of memory; and where memprof says a setting would not have helped, the job run with it must still run
# out of memory. The oversize and fragmentation jobs record their history: memprof oom on the job's own pickle
# (_snapshot() in the except block) must equal memprof oom on its core (--no-owners; the pickle has no exception
# message); the other_stream job records none: its pickle with the message it printed (`--message`) must give the
# core's explanation.
#
# Default (lean): PyPI's 2.14.1, every scenario on its gcore core and its remedies; Debian's 2.6 fragmentation on a
# kernel core and pending_free on a gcore core. MEMPROF_OOM_FULL=1 (make check-oom): both builds, every scenario, gcore and kernel cores and the live
# process. After a whole pass of the same sources within 6 hours, one scenario without its remedies. Env: MEMPROF,
# MEMPROF_TESTBED_SKIP=1 (77), MEMPROF_OOM_RUNS ("BUILD:CAUSE:MODE ..." instead of the lists above; BUILD system on
# a machine with a GPU: tests/testbed/python/README.md). Prints one line per check and "N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
testbed=$top/tests/testbed
script=$testbed/jobs/oom_causes.py
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "oom/jobs: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-oom-jobs.XXXXXX")
cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$testbed/job.sh" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=../testbed/lib/common.sh
. "$testbed/lib/common.sh"
# After a pass of the same sources within 6 hours (the sanitizer pass of tests/run-all.sh), one scenario runs
# again, without the reruns of its remedies (they run the job, not memprof).
stamp=$tb_cache/oom-passed-$( (cat "$0" "$here/check.py" "$script" "$testbed/jobs/list"; find "$top/src" -type f \
	\( -name '*.c' -o -name '*.h' \) -print0 | sort -z | xargs -0 cat) | sha256sum | cut -c1-12)
quick=
if [ -n "${MEMPROF_OOM_RUNS:-}" ]; then
	runs=$MEMPROF_OOM_RUNS
elif [ "${MEMPROF_OOM_FULL:-0}" != 1 ] && [ -n "$(find "$stamp" -mmin -360 2>/dev/null)" ]; then
	echo "== oom: these scenarios passed with this memprof source at $(date -r "$stamp" '+%F %T'); quick run"
	runs="pypi-2.14.1:fragmentation:gcore"
	quick=1
elif [ "${MEMPROF_OOM_FULL:-0}" = 1 ]; then
	runs=
	for b in $("$testbed/job.sh" --list); do
		for c in full fragmentation oversize other_stream private_pool pending_free; do
			# only 2.6 keeps pending frees at an OOM (inside a MemPool it skips the retry)
			[ "$c" = pending_free ] && [ "$b" != debian-2.6 ] && continue
			for m in gcore kernel live; do runs="$runs $b:$c:$m"; done
		done
	done
else
	runs="pypi-2.14.1:full:gcore pypi-2.14.1:fragmentation:gcore pypi-2.14.1:oversize:gcore
		pypi-2.14.1:other_stream:gcore pypi-2.14.1:private_pool:gcore debian-2.6:fragmentation:kernel
		debian-2.6:pending_free:gcore"
fi
declare -A remedies_done

# The job of BUILD and CAUSE run again in truth mode with ARGS: prints "oom" or "no oom".
rerun() { # BUILD CAUSE DIR ARGS...
	local build=$1 cause=$2 dir=$3 args
	shift 3
	args=$(grep -v '^#' "$testbed/jobs/list" | awk -v n="oom-$cause" '$1 == n {for (i = 4; i <= NF; i++) printf "%s ", $i}')
	# shellcheck disable=SC2086 # the list's arguments are words
	if ! "$testbed/job.sh" "$build" "$script" truth "$dir" $args "$@" >"$dir.vars" 2>"$dir.log"; then
		echo "failed"
		return
	fi
	python3 -c 'import json, sys; print("no oom" if json.load(open(sys.argv[1]))["oom_message"] is None else "oom")' \
		"$dir/notes.json"
}

# Each remedy of REPORT claimed (must not OOM) or rejected where the job can try it (must still OOM).
check_remedies() { # BUILD CAUSE REPORT
	local build=$1 cause=$2 report=$3 line id action args want got n=0
	[ -z "${remedies_done[$build:$cause]:-}" ] || return 0
	remedies_done[$build:$cause]=1
	while IFS=$'\t' read -r want id action; do
		case $id in
		expandable_segments) args=(--alloc-conf expandable_segments:True) ;;
		max_split_size_mb)
			[[ $action =~ max_split_size_mb:([0-9]+) ]] || continue
			args=(--alloc-conf "max_split_size_mb:${BASH_REMATCH[1]}") ;;
		empty_cache) [ "$want" = "no oom" ] || continue; args=(--empty-cache-after-free) ;;
		free) [[ $action =~ ^del\ ([A-Za-z_][A-Za-z0-9_]*) ]] || continue; args=(--free "${BASH_REMATCH[1]}") ;;
		release_private_pool) args=(--free pool) ;;
		*) continue ;;
		esac
		n=$((n + 1))
		got=$(rerun "$build" "$cause" "$work/$build-$cause-remedy-$n" "${args[@]}")
		[ "$got" = "$want" ] && ok "$build/$cause: ${args[*]}: $got, as memprof says" ||
			bad "$build/$cause: ${args[*]}: $got, but memprof says $want ($action)"
	done < <(python3 - "$report" <<-'PY'
		import json, sys
		r = json.load(open(sys.argv[1]))
		for x in r["remedies"]:
		    print("no oom\t%s\t%s" % (x["id"], x["action"]))
		for x in r["not_helping"]:
		    if x["id"] in ("expandable_segments", "max_split_size_mb"):
		        # rejected without a size: the smallest size PyTorch takes is tried
		        print("oom\t%s\t%s" % (x["id"], x["action"].replace(":M", ":21")))
		PY
	)
}

for run in $runs; do
	IFS=: read -r build cause mode <<<"$run"
	dir=$work/$build-$cause-$mode
	mkdir -p "$dir"
	if ! "$testbed/jobs/run.sh" "oom-$cause" "$build" "$mode" "$dir" >"$dir/job.vars" 2>"$dir/job.log"; then
		rc=$?
		[ $rc = 77 ] && { echo "skip: $run: the test bed cannot give it here"; continue; }
		bad "$run: the job failed: $(tail -3 "$dir/job.log" | tr '\n' ' ')"
		continue
	fi
	sysroot=$(cat "$dir/sysroot" 2>/dev/null)
	target=()
	case $mode in
	live) target=(--pid "$(cat "$dir/pid")") ;;
	kernel) target=("$dir/core" ${sysroot:+--sysroot "$sysroot"}) ;;
	*) target=("$dir/core") ;;
	esac
	"$memprof" oom "${target[@]}" --format json >"$dir/oom.json" 2>"$dir/oom.err"
	rc=$?
	[ "$mode" = live ] && "$testbed/job.sh" --stop "$dir" >/dev/null 2>&1
	if [ $rc != 0 ]; then
		bad "$run: memprof oom exited $rc: $(head -2 "$dir/oom.err" | tr '\n' ' ')"
		continue
	fi
	if python3 "$here/check.py" "$dir/oom.json" "$dir/notes.json" "$cause" >"$dir/claims" 2>"$dir/check.err"; then
		ok "$run: the OOM, PyTorch's numbers and the cause ($(python3 -c 'import json,sys; print(", ".join(c["id"] for c in json.load(open(sys.argv[1]))["causes"]))' "$dir/oom.json"))"
	else
		bad "$run: $(tr '\n' ' ' <"$dir/check.err")"
	fi
	if { [ "$cause" = oversize ] || [ "$cause" = fragmentation ]; } && [ "$mode" != live ]; then
		"$memprof" oom "${target[@]}" --no-owners --format json >"$dir/core.json" 2>/dev/null
		"$memprof" oom "$dir/snapshot.pickle" --format json >"$dir/pickle.json" 2>/dev/null
		# the core has the exception's message, the pickle none: the message and what only it tells
		# (whether a memory fraction is set, garbage_collection_threshold's condition) aside, the same
		python3 -c 'import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a.pop("message", None)
for x in (a, b):
    x["not_helping"] = [r for r in x["not_helping"] if r["id"] != "garbage_collection_threshold"]
sys.exit(0 if a == b else 1)' "$dir/core.json" "$dir/pickle.json" &&
			ok "$run: memprof oom on the job's own pickle equals it on the core" ||
			bad "$run: memprof oom on the pickle differs from the core's: $(diff "$dir/core.json" "$dir/pickle.json" | head -4 | tr '\n' ' ')"
	fi
	if [ "$cause" = other_stream ] && [ "$mode" != live ]; then
		# no history: the job's own pickle and the message it printed (--message, as from a log) explain the
		# same OOM as the core
		"$memprof" oom "${target[@]}" --no-owners --format json >"$dir/core.json" 2>/dev/null
		"$memprof" oom "$dir/snapshot.pickle" --format json \
			--message "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["oom_message"])' "$dir/notes.json")" \
			>"$dir/pickle.json" 2>/dev/null
		python3 -c 'import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = ("computed_message", "message", "figures", "decision", "causes", "remedies", "not_helping", "fragmentation")
sys.exit(0 if all(a[k] == b[k] for k in keys) else 1)' "$dir/core.json" "$dir/pickle.json" &&
			ok "$run: memprof oom on the job's pickle with its message (--message) equals it on the core" ||
			bad "$run: memprof oom --message on the pickle differs from the core's"
	fi
	[ -n "$quick" ] || check_remedies "$build" "$cause" "$dir/oom.json"
done
finish || exit 1
# Only a whole pass of the default lists vouches for the stamp.
[ -n "$quick" ] || [ -n "${MEMPROF_OOM_RUNS:-}" ] || touch "$stamp"

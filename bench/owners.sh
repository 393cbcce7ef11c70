#!/bin/bash
# owners.sh - `memprof owners` on a job with 1,000,000 other Python objects and 25,000 tensors (owners_job.py: a
# 2,500-block model after an Adam step), from its gcore core and the live process, per build.
#
# The reference, in the same run: the job's own manifest collection timed inside the job (gc.get_objects() and
# isinstance() over the heap, named_parameters(), the optimizers' state: the in-process way to the answer memprof
# reads from outside). memprof's answer must equal that manifest (tests/owners/check.py) or the bench fails.
# Environment: MEMPROF (default ./memprof), BENCH_JOB_BUILDS (default: every build of job.sh --list), BENCH_OBJECTS
# (default 1000000), BENCH_RUNS (default 3). Exit 0 when every answer agrees with the job's manifest, else 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MEMPROF=${MEMPROF:-./memprof}
runs=${BENCH_RUNS:-3}
objects=${BENCH_OBJECTS:-1000000}
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_jobs_init

# memprof's answer of $tmp/out.txt against the job in DIR.
agrees() { # DIR WHAT
	if ! python3 "$top/tests/owners/check.py" "$1" "$tmp/out.txt" >"$tmp/check.txt"; then
		echo "memprof owners ($2) differs from the job's manifest:" >&2
		head -5 "$tmp/check.txt" >&2
		status=1
	fi
}

status=0
for build in $builds; do
	echo "== $build"
	printf '%-44s %8s %10s %9s\n' "what" "wall_s" "rss_MiB" "vs ref"
	rm -rf "$tmp/gcore" "$tmp/live"
	"$job" "$build" "$here/owners_job.py" gcore "$tmp/gcore" --objects "$objects" >"$tmp/gcore.vars" 2>"$tmp/gcore.log" ||
		{ tail -3 "$tmp/gcore.log" >&2; exit 1; }
	ref=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["reference_s"])' "$tmp/gcore/notes.json")
	echo "-- $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tensors"])' "$tmp/gcore/notes.json") manifest tensors, gcore core $(($(stat -c %s "$tmp/gcore/core") / 1048576)) MiB"
	bench_row "in-job manifest collection [ref]" "$ref" 0 ""
	read -r w r < <(bench_best "$tmp/out.txt" "$MEMPROF" owners "$tmp/gcore/core" --format json)
	bench_row "memprof owners gcore-core" "$w" "$r" "$ref"
	agrees "$tmp/gcore" "gcore core"
	objs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["objects"])' "$tmp/out.txt")
	rm -f "$tmp/gcore/core"
	"$job" "$build" "$here/owners_job.py" live "$tmp/live" --objects "$objects" >/dev/null 2>&1
	read -r w r < <(bench_best "$tmp/out.txt" "$MEMPROF" owners --pid "$(cat "$tmp/live/pid")" --format json)
	bench_row "memprof owners --pid" "$w" "$r" "$ref"
	agrees "$tmp/live" "live"
	echo "-- the heap memprof walked: $objs GC-tracked objects"
	"$job" --stop "$tmp/live" >/dev/null
done
exit $status

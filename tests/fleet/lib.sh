# lib.sh - sourced by the tests of a job's ranks read from its launcher (ranks.sh, watch_ranks.sh): where things
# are, a scratch directory, and the launcher of tests/fleet/launch.py started with its ranks waiting.
# shellcheck shell=bash
fleet_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$fleet_here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
# shellcheck source=../lib/check.sh
. "$fleet_here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-fleet.XXXXXX")
launcher= watcher=
fleet_cleanup() {
	[ -n "$watcher" ] && kill -INT "$watcher" 2>/dev/null
	[ -n "$launcher" ] && kill "$launcher" 2>/dev/null
	for d in "$work"/job-*/; do [ -f "$d/pid" ] && "$top/tests/testbed/job.sh" --stop "$d" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap fleet_cleanup EXIT

# fleet_launch -- SCRIPT ARGS... [-- SCRIPT ARGS...]: launch.py's ranks, each waiting; sets $launcher. Ends the
# test (77) when the test bed cannot run them, or as failed when they did not start.
fleet_launch() {
	local pid rc
	python3 "$fleet_here/launch.py" "$work" "$@" &
	pid=$!
	for _ in $(seq 300); do [ -f "$work/launcher" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.5; done
	if [ ! -f "$work/launcher" ]; then
		wait "$pid"
		rc=$?
		[ "$rc" -eq 77 ] &&
			not_run "the test bed cannot run PyPI's 2.14.1 here: $(tail -q -n 1 "$work"/job-*.err | tr '\n' ' ')"
		bad "the jobs did not start (exit $rc): $(tail -q -n 2 "$work"/job-*.err | tr '\n' ' ')"
		finish
		exit 1
	fi
	launcher=$(cat "$work/launcher")
}

# fleet_dist_job: for a test of a tests/testbed/dist.sh job: its OUTDIR $job (stopped at the end, with the
# rest) and its build $torch (MEMPROF_DIST_TORCH, default pypi-2.14.1).
fleet_dist_job() {
	job=$work/job
	torch=${MEMPROF_DIST_TORCH:-pypi-2.14.1}
	trap '"$top/tests/testbed/dist.sh" --stop "$job" >/dev/null 2>&1; fleet_cleanup' EXIT
}

# fleet_stop_watch: Ctrl-C to the watch ($watcher); its exit status in $rc.
fleet_stop_watch() {
	kill -INT "$watcher"
	wait "$watcher"
	rc=$?
	watcher=
}

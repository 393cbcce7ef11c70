# lib.sh - sourced by the campaign's scripts: one run of a generated job, watched or not, through the test bed's
# job runner (tests/testbed/job.sh). Needs: top.
# shellcheck shell=bash
cp_job=$top/tests/testbed/job.sh
memprof=${MEMPROF:-$top/_build/memprof}

# cp_run BUILD SCRIPT SPEC DEVICE OUTDIR [ARGS...] - the job to its end (or its first OOM, or --stop-after-step)
# on a device of DEVICE bytes; OUTDIR/record.json is what it did.
cp_run() {
	local build=$1 script=$2 spec=$3 cap=$4 out=$5
	shift 5
	mkdir -p "$out"
	rm -f "$out/record.json"
	FAKECUDA_CAPACITY=$cap MEMPROF_JOB_TIMEOUT=${MEMPROF_CAMPAIGN_JOB_TIMEOUT:-900} \
		nice "$cp_job" "$build" "$script" truth "$out" "$spec" "$@" >"$out/job.vars" 2>"$out/job.log" &&
		[ -s "$out/record.json" ]
}

# cp_repro BUILD SCRIPT SPEC DEVICE OUTDIR [ARGS...] - OUTDIR/repro.sh: the run as one command.
cp_repro() {
	local build=$1 script=$2 spec=$3 cap=$4 out=$5
	shift 5
	mkdir -p "$out"
	{
		echo "#!/bin/sh"
		echo "# re-run of campaign job $(basename "$script") on $build; its record: OUT/record.json"
		printf 'FAKECUDA_CAPACITY=%s %q %s %q truth "${1:-%s}" %q' "$cap" "$cp_job" "$build" "$script" \
			"$out" "$spec"
		printf ' %q' "$@"
		echo
	} >"$out/repro.sh"
	chmod +x "$out/repro.sh"
}

# cp_why OUTDIR - one line: why the run in OUTDIR failed.
cp_why() {
	{ grep -v '^testbed/job: note' "$1/job.log" 2>/dev/null | tail -n 3; tail -n 1 "$1/job.err" 2>/dev/null; } |
		tr '\n' ' ' | cut -c1-400
}

# cp_watch BUILD SCRIPT SPEC DEVICE OUTDIR - the job started in live mode (it waits in its checkpoint, torch
# loaded), `memprof watch --pid` attached, the job let go; returns when the job has ended. OUTDIR/watch/ holds
# what the watch wrote, OUTDIR/watch.out and watch.err its output.
cp_watch() {
	local build=$1 script=$2 spec=$3 cap=$4 out=$5 pid sysroot watcher i
	mkdir -p "$out"
	rm -rf "$out/watch" "$out/record.json"
	cp_repro "$build" "$script" "$spec" "$cap" "$out"
	FAKECUDA_CAPACITY=$cap nice "$cp_job" "$build" "$script" live "$out" "$spec" >"$out/job.vars" 2>"$out/job.log" ||
		return 1
	pid=$(cat "$out/pid")
	sysroot=$(cat "$out/sysroot")
	timeout "${MEMPROF_CAMPAIGN_JOB_TIMEOUT:-900}" "$memprof" watch --pid "$pid" -o "$out/watch" --format json \
		${sysroot:+--sysroot "$sysroot"} >"$out/watch.out" 2>"$out/watch.err" &
	watcher=$!
	for i in $(seq 2400); do # (up to 2 minutes on a loaded machine)
		grep -q "^memprof: watching pid" "$out/watch.out" 2>/dev/null && break
		kill -0 "$watcher" 2>/dev/null || break
		sleep 0.05
	done
	touch "$out/RESUME"
	wait "$watcher"
	# a watch that could not attach leaves the job running: let it end
	for i in $(seq "$((${MEMPROF_CAMPAIGN_JOB_TIMEOUT:-900} * 10))"); do
		[ -d "/proc/$pid" ] && [ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)" != Z ] ||
			break
		sleep 0.1
	done
	# the watch ends with the job; past the timeout it detaches and the job is stopped here
	"$cp_job" --stop "$out" >/dev/null 2>&1
	[ -s "$out/record.json" ] && grep -q '"steps"' "$out/record.json"
}

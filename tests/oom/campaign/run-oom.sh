#!/usr/bin/env bash
# run-oom.sh SEED BUILD RESULTS - one generated job on one PyTorch build, to its first OOM with `memprof watch`
# attached, then every claim of the explanation re-run (README.md). Leaves RESULTS/BUILD/SEED/:
#   job/            the generated program (job_SEED.py, campaign_rt.py, spec.json): gen.py SEED
#   calib/          the calibration run (a device far too large): each step's peaks
#   watch-N/        the watched run of attempt N (device size: capacity.py); its record.json, and watch/ with
#                   memprof's oom-1.json (the explanation), oom-1.pickle (the snapshot), oom-1.pystack.txt
#   record.json, oom.json, oom.pickle   copies from the attempt that ran out (the artifacts a report cites)
#   device          FAKECUDA_CAPACITY of that attempt
#   plan.json, reruns.tsv               claims.py: the claims and their re-runs
#   reruns/KEY/     each re-run (record.json; job.out/err), repro.sh: the one command that re-runs it
#   result.json     judge.py's verdicts;  status: "oom", or "skip REASON" / "fail REASON"
# A SEED/BUILD whose status exists is done (delete the directory to redo it); a lock makes two runners skip each
# other's work. The calibration and the attempt that ran out are kept in a cache keyed by the generator's sources
# (they do not depend on memprof): a second campaign over the same seeds goes straight to the watched run.
# Env: MEMPROF, MEMPROF_CAMPAIGN_RECALL (1: the candidates too; default 1), MEMPROF_CAMPAIGN_KEEP (1: keep the
# re-runs' truth files; default: only record.json and the logs), MEMPROF_CAMPAIGN_OOMS (do nothing once RESULTS
# holds that many OOMs), MEMPROF_CAMPAIGN_CACHE (default ~/.cache/memprof-campaign/calib).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ $# -eq 3 ] || { echo "usage: run-oom.sh SEED BUILD RESULTS" >&2; exit 2; }
seed=$1 build=$2 results=$3
# enough OOMs: status 255 stops xargs (campaign.sh) from starting more units
if [ -n "${MEMPROF_CAMPAIGN_OOMS:-}" ] && [ ! -f "$results/$build/$seed/status" ] &&
	[ "$(cat "$results"/*/*/status 2>/dev/null | grep -cx oom)" -ge "$MEMPROF_CAMPAIGN_OOMS" ]; then
	echo "$build/$seed: not started: $MEMPROF_CAMPAIGN_OOMS OOMs are in $results"
	exit 255
fi
mkdir -p "$results/$build/$seed"
dir=$(cd "$results/$build/$seed" && pwd)
exec 7>"$dir/.lock"
flock -n 7 || { echo "$build/$seed: another runner has it"; exit 0; }
[ ! -f "$dir/status" ] || { echo "$build/$seed: done ($(cat "$dir/status"))"; exit 0; }
t0=$(date +%s)
finish() { # STATUS
	echo "$1" >"$dir/status.tmp"
	echo "$(($(date +%s) - t0))" >"$dir/seconds"
	mv "$dir/status.tmp" "$dir/status"
	echo "$build/$seed: $1 ($(cat "$dir/seconds") s)"
	exit 0
}

# the program
if [ ! -f "$dir/job/spec.json" ]; then
	python3 "$here/gen.py" "$seed" "$dir/job" >/dev/null 2>"$dir/gen.err" || finish "fail gen.py: $(tail -1 "$dir/gen.err")"
fi
script=$dir/job/job_$seed.py spec=$dir/job/spec.json

# calibration: every step on a device far too large
cache=${MEMPROF_CAMPAIGN_CACHE:-$HOME/.cache/memprof-campaign/calib}/$build-$seed-$(cat "$here/gen.py" \
	"$here/campaign_rt.py" "$here/capacity.py" | sha256sum | cut -c1-12)
if [ -f "$cache/record.json" ] && [ ! -f "$dir/calib/.ok" ]; then
	mkdir -p "$dir/calib"
	cp "$cache/record.json" "$dir/calib/record.json"
	touch "$dir/calib/.ok" "$dir/calib/.cached"
fi
if [ ! -f "$dir/calib/record.json" ] || [ ! -f "$dir/calib/.ok" ]; then
	cp_run "$build" "$script" "$spec" 16G "$dir/calib" || finish "fail calibration: $(cp_why "$dir/calib")"
	touch "$dir/calib/.ok"
	mkdir -p "$cache"
	cp "$dir/calib/record.json" "$cache/record.json"
fi

# the watched runs: a smaller device each attempt until one runs out (from the one that did, when cached)
n=$(cat "$cache/attempt" 2>/dev/null || echo 0) cap=
while :; do
	cap=$(python3 "$here/capacity.py" "$dir/calib/record.json" "$spec" "$n")
	case $cap in skip*) finish "$cap" ;; esac
	w=$dir/watch-$n
	if [ ! -f "$w/.done" ]; then
		cp_watch "$build" "$script" "$spec" "$cap" "$w" || finish "fail watched run: $(cp_why "$w")"
		touch "$w/.done"
	fi
	python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["oom"] else 1)' "$w/record.json" && break
	n=$((n + 1))
done
echo "$cap" >"$dir/device"
echo "$n" >"$cache/attempt"
cp "$w/record.json" "$dir/record.json"
oomjson=$(ls "$w"/watch/oom-1.json "$w"/watch/oom-1.txt 2>/dev/null | head -n1)
grep -q "^memprof: watching pid" "$w/watch.out" 2>/dev/null ||
	finish "fail memprof watch did not attach: $(tr '\n' ' ' <"$w/watch.err" | cut -c1-300)"
[ -s "$oomjson" ] || finish "fail memprof watch wrote no explanation: $(tr '\n' ' ' <"$w/watch.out" | cut -c1-200) $(tr '\n' ' ' <"$w/watch.err" | cut -c1-300)"
cp "$oomjson" "$dir/oom.json"
[ ! -f "$w/watch/oom-1.pickle" ] || cp "$w/watch/oom-1.pickle" "$dir/oom.pickle"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/oom.json" 2>/dev/null ||
	finish "fail the explanation is not JSON: $(head -c 200 "$dir/oom.json")"

# the claims and their re-runs, up to and including the OOM's step
python3 "$here/claims.py" "$dir/oom.json" "$spec" "$dir/oom.pickle" "${MEMPROF_CAMPAIGN_RECALL:-1}" "$dir" \
	2>"$dir/claims.err" || finish "fail claims.py: $(tail -1 "$dir/claims.err")"
step=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["oom"]["step"])' "$dir/record.json")
while IFS=$'\t' read -r -a row; do
	key=${row[0]}
	r=$dir/reruns/$key
	[ -f "$r/record.json" ] && [ -f "$r/.done" ] && continue
	cp_repro "$build" "$script" "$spec" "$cap" "$r" "${row[@]:1}" --stop-after-step "$step"
	cp_run "$build" "$script" "$spec" "$cap" "$r" "${row[@]:1}" --stop-after-step "$step" || true
	touch "$r/.done"
	[ "${MEMPROF_CAMPAIGN_KEEP:-0}" = 1 ] || rm -f "$r/snapshot.pickle" "$r/manifest.json" "$r/threads.txt"
done <"$dir/reruns.tsv"
python3 "$here/judge.py" "$dir" >"$dir/verdicts.txt" 2>"$dir/judge.err" || finish "fail judge.py: $(tail -1 "$dir/judge.err")"
finish oom

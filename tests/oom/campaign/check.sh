#!/usr/bin/env bash
# check.sh [--full] - the soundness campaign of `memprof oom`'s claims as a test (README.md).
#   (default, make check)           the slice: the units of slice.seeds (about 10 OOMs, both builds), claims
#                                   only (no recall candidates); FAILS when a claim with evidence "replay" is
#                                   WRONG, when the claims with evidence "state" (and those that state none) are
#                                   right less often than MEMPROF_CAMPAIGN_STATE_MIN (default 0.95), or when a
#                                   unit failed (a job that did not run, a watch that wrote no explanation).
#                                   After a passing slice of the same memprof and campaign sources within 6
#                                   hours (the ASan pass of tests/run-all.sh), only its first 2 units.
#   --full (make check-oom-campaign) at least MEMPROF_CAMPAIGN_OOMS (default 300) OOMs over both builds, with
#                                   the recall candidates, 2 at once; resumable: the results directory is keyed by
#                                   memprof's sources and the campaign's, so an interrupted run goes on
#                                   where it stopped. Gated like the slice.
# Results under ~/.cache/memprof-campaign/ (slice-KEY, full-KEY; KEY: memprof's sources and the campaign's):
# report.json, summary.txt and each unit's artifacts, which the report's WRONG claims point to. Env: MEMPROF, MEMPROF_TESTBED_SKIP=1 (77),
# MEMPROF_CAMPAIGN_JOBS (parallel units, default 2), MEMPROF_CAMPAIGN_DIR (instead of ~/.cache/memprof-campaign).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
export MEMPROF=$memprof
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "oom/campaign: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
[ -x "$memprof" ] || { echo "FAIL: no memprof at $memprof"; exit 1; }
base=${MEMPROF_CAMPAIGN_DIR:-$HOME/.cache/memprof-campaign}
mkdir -p "$base"
# keyed by memprof's sources (as tests/oom/jobs.sh), so that the ASan pass of the same tree counts as the same
key=$( (find "$top/src" -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z | xargs -0 cat
	cat "$here"/*.py "$here"/*.sh "$here/slice.seeds") | sha256sum | cut -c1-12)
jobs=${MEMPROF_CAMPAIGN_JOBS:-2}
threshold=${MEMPROF_CAMPAIGN_STATE_MIN:-0.95}
t0=$(date +%s)
if [ "${1:-}" = --full ]; then
	results=$base/full-$key
	echo "== oom/campaign: at least ${MEMPROF_CAMPAIGN_OOMS:-300} OOMs into $results (resumable)"
	"$here/campaign.sh" -j "$jobs" --ooms "${MEMPROF_CAMPAIGN_OOMS:-300}" "$results" >"$results.log" 2>&1
	rc=$?
	grep '^campaign: ' "$results.log" | tail -n 20
	[ $rc = 77 ] && { echo "oom/campaign: the test bed cannot run here: $(tail -n 1 "$results.log")"; exit 77; }
	[ $rc = 0 ] || { echo "FAIL: campaign.sh exited $rc ($results.log)"; exit 1; }
	echo "== $(($(date +%s) - t0)) s this run; the units took $(cat "$results"/*/*/seconds | awk '{ s += $1 } END { print s }') s in all"
	python3 "$here/report.py" "$results" --gate --state-threshold "$threshold"
fi

results=$base/slice-$key
stamp=$base/slice-passed-$key
seeds=$here/slice.seeds
if [ -n "$(find "$stamp" -mmin -360 2>/dev/null)" ]; then
	echo "== oom/campaign: this slice passed with this memprof at $(date -r "$stamp" '+%F %T'); its first 2 units"
	grep -v '^[[:space:]]*\(#\|$\)' "$here/slice.seeds" | head -n 2 >"$base/slice-quick-$key.seeds"
	seeds=$base/slice-quick-$key.seeds
	results=$base/slice-quick-$key
fi
rm -rf "$results"
MEMPROF_CAMPAIGN_RECALL=0 "$here/campaign.sh" -j "$jobs" --seeds "$seeds" "$results" >"$results.log" 2>&1
rc=$?
[ $rc = 77 ] && { echo "oom/campaign: the test bed cannot run here: $(tail -n 1 "$results.log")"; exit 77; }
[ $rc = 0 ] || [ $rc = 1 ] || { echo "FAIL: campaign.sh exited $rc: $(tail -n 3 "$results.log" | tr '\n' ' ')"; exit 1; }
grep '^campaign: ' "$results.log"
python3 "$here/report.py" "$results" --gate --state-threshold "$threshold"
rc=$?
echo "== $(($(date +%s) - t0)) s; results in $results"
[ $rc = 0 ] || exit 1
[ "$seeds" != "$here/slice.seeds" ] || touch "$stamp"

#!/usr/bin/env bash
# campaign.sh [OPTIONS] RESULTS - the soundness campaign of `memprof oom`'s claims (README.md): generated jobs on
# each build to their first OOM with `memprof watch` attached, every claim re-run, then the report.
#   -j N              jobs at once (default 1; the machine has 2 cores: -j2 at most)
#   --builds "B..."   default: every build of tests/testbed/job.sh --list (pypi-2.14.1 debian-2.6)
#   --first S         first seed (default 1); --last S: last seed (default first + 9999)
#   --ooms N          stop starting jobs once RESULTS holds N OOMs (default: no limit: every seed)
#   --seeds FILE      run the units FILE lists ("SEED BUILD" a line; # comments) instead of a range
#   --gate            report.py --gate: exit 1 on a wrong replay claim or state precision under the threshold
# Resumable: a unit (seed, build) with a status is not run again, and a unit another campaign is running is
# skipped (its lock), so two campaigns may share RESULTS; after a kill, `rm RESULTS/*/*/.lock` is not needed
# (flock). Prints one line per unit, then the summary (RESULTS/summary.txt, RESULTS/report.json).
# Env: MEMPROF, MEMPROF_CAMPAIGN_RECALL, MEMPROF_CAMPAIGN_KEEP, MEMPROF_CAMPAIGN_CACHE (run-oom.sh).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
jobs=1 builds= first=1 last= ooms= seeds= gate=
while [ $# -gt 1 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	--builds) builds=$2; shift 2 ;;
	--first) first=$2; shift 2 ;;
	--last) last=$2; shift 2 ;;
	--ooms) ooms=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	--gate) gate=--gate; shift ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }
results=$1
mkdir -p "$results"
builds=${builds:-$("$top/tests/testbed/job.sh" --list)}
last=${last:-$((first + 9999))}
t0=$(date +%s)
units() {
	if [ -n "$seeds" ]; then
		grep -v '^[[:space:]]*\(#\|$\)' "$seeds"
	else
		for s in $(seq "$first" "$last"); do
			for b in $builds; do echo "$s $b"; done
		done
	fi
}
# the builds are set up once, before the workers race for them
# (77: a registry cannot be reached and nothing is cached; any other failure is one)
for b in $builds; do
	"$top/tests/testbed/python/build.sh" "$b" >/dev/null
	rc=$?
	[ $rc = 0 ] || { echo "campaign: the test bed cannot set up $b (status $rc)" >&2; exit $rc; }
done
export MEMPROF_CAMPAIGN_OOMS=$ooms
export CAMPAIGN_RESULTS=$results
# (a unit's status 255 makes xargs start no more, once RESULTS holds --ooms OOMs; it waits for the others)
units | xargs -P "$jobs" -L 1 sh -c 'exec "$0" "$1" "$2" "$CAMPAIGN_RESULTS"' "$here/run-oom.sh" 2>&1 |
	grep --line-buffered -v '^xargs: .*status 255; aborting' | sed -u 's/^/campaign: /'
echo "campaign: $(($(date +%s) - t0)) s"
python3 "$here/report.py" "$results" $gate

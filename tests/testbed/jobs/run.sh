#!/usr/bin/env bash
# run.sh NAME TORCH MODE OUTDIR - run the job scenario NAME (./list: its script, arguments and environment) with
#                                 ../job.sh; prints what job.sh prints.
# run.sh --list                 - the scenario names, on one line.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "jobs/run: error: $*" >&2; exit 2; }
scenarios() { grep -v '^#' "$here/list" | awk 'NF {print $1}'; }
if [ "${1:-}" = --list ]; then
	echo $(scenarios)
	exit 0
fi
[ $# -eq 4 ] || die "usage: run.sh NAME TORCH MODE OUTDIR | run.sh --list"
line=$(grep -v '^#' "$here/list" | awk -v n="$1" '$1 == n') || true
[ -n "$line" ] || die "no job scenario '$1' (one of: $(echo $(scenarios)))"
read -r _ env script args <<<"$line"
vars=()
[ "$env" = - ] || IFS=, read -r -a vars <<<"$env"
# shellcheck disable=SC2086 # the list's arguments are words
exec env "${vars[@]}" "$here/../job.sh" "$2" "$here/$script" "$3" "$4" $args

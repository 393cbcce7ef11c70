#!/usr/bin/env bash
# roundtrip.sh - every corpus snapshot survives memprof convert: pickle -> pickle, pickle -> JSON -> pickle.
# Environment: MEMPROF (the CLI), PYTHON (default python3), srcdir (the tests folder).
# The corpora: tests/oracle/gen_corpus.py --seed 7 --count 200, and tests/io/gen_small.py
# (odd values: every type, protocols 2-5). roundtrip_check.py says what is checked.
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/io/setup.sh" roundtrip

if [ -f "$srcdir/oracle/gen_corpus.py" ]; then
	"$PYTHON" "$srcdir/oracle/gen_corpus.py" --seed 7 --count 200 --out "$work/corpus" >/dev/null ||
		{ echo "roundtrip: gen_corpus.py failed"; exit 1; }
fi
small_pickles roundtrip
ls "$work"/corpus/*.pickle "$work"/small/*.pickle 2>/dev/null >"$work/cases"

# convert_one K SRC: the three conversions of source K, exit status and stderr kept.
convert_one() {
	local d=$work/out/$1 src=$2
	mkdir -p "$d"
	run() { # NAME IN OUT
		timeout 60 "$MEMPROF" convert "$2" "$3" 2>"$d/$1.err"
		echo $? >"$d/$1.rc"
	}
	run out.pickle "$src" "$d/out.pickle"
	run out.json "$src" "$d/out.json"
	if [ -f "$d/out.json" ]; then
		run back.pickle "$d/out.json" "$d/back.pickle"
	fi
}
export -f convert_one
export MEMPROF work

awk '{ print NR - 1 "\t" $0 }' "$work/cases" |
	xargs -P 2 -d '\n' -n 1 bash -c 'convert_one "${0%%	*}" "${0#*	}"'
"$PYTHON" "$srcdir/io/roundtrip_check.py" "$work"

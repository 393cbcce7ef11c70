#!/usr/bin/env bash
# badinput.sh - memprof refuses hostile or corrupted snapshots cleanly: one stderr line, no crash, no hang.
# Environment: MEMPROF (the CLI), PYTHON (default python3), srcdir (the tests folder).
# badinput.py writes the cases (truncations, byte flips, random corruptions, hostile pickles,
# bad JSON, odd paths) and says what each must do; they run two at a time under `timeout 10`.
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/io/setup.sh" badinput
"$PYTHON" "$srcdir/io/badinput.py" --out "$work" || { echo "badinput: badinput.py failed"; exit 1; }
mkdir -p "$work/res" "$work/run"

# judge NAME CMD RC EXPECT: whether one run behaved (stderr in $rundir/NAME.CMD.err); a line
# in res/NAME if not. Bash builtins only: thousands of runs, so no process per check.
judge() {
	local name=$1 cmd=$2 rc=$3 expect=$4 why="" lines
	mapfile -t lines <"$rundir/$name.$cmd.err"
	if [[ ${lines[*]} == *Sanitizer* || ${lines[*]} == *"runtime error"* ]]; then
		why="sanitizer report"
	elif [ "$rc" -eq 124 ]; then
		why="still running after 10 s"
	elif [ "$rc" -gt 2 ]; then
		why="exit $rc (crash?)"
	elif [ "$expect" != "*" ] && [ "$rc" -ne "$expect" ]; then
		why="exit $rc, want $expect"
	elif [ "$rc" -eq 2 ] && [ ${#lines[@]} -ne 1 ]; then
		why="want one line on stderr, got ${#lines[@]}"
	elif [ ${#lines[@]} -gt 1 ] && { [ "$rc" -ne 1 ] || [ ${#lines[@]} -gt 2 ] || [[ ${lines[1]} != "memprof: warning: "* ]]; }; then
		# exit 1 (nothing found: oom without an OOM) may follow a warning about the input
		why="${#lines[@]} lines on stderr"
	elif [ ${#lines[@]} -eq 1 ] && [[ ${lines[0]} != "memprof: "* ]]; then
		why="stderr line without 'memprof: '"
	elif [ "$cmd" = stats ] && [ "$rc" -eq 0 ] && ! summary "$rundir/$name.stats.out"; then
		why="exit 0 without a summary"
	fi
	[ -z "$why" ] || echo "FAIL $name: $cmd: $why: ${lines[*]:0:3}" >>"$work/res/$name"
}

# summary FILE: whether stats output FILE has its "segments: N" line.
summary() {
	local line
	while IFS= read -r line; do
		[[ $line == "segments: "* ]] && return 0
	done <"$1"
	return 1
}

# run_case LINE: the runs of one cases.tsv line.
run_case() {
	local name path runs expect rc e_s e_p e_j out
	IFS=$'\t' read -r name path runs expect <<<"$1"
	IFS=, read -r e_s e_p e_j <<<"$expect"
	: >"$work/res/$name"
	timeout 10 "$MEMPROF" segsum "$path" >"$rundir/$name.stats.out" 2>"$rundir/$name.stats.err"
	judge "$name" stats $? "$e_s"
	if [[ $runs == *p* ]]; then
		out=$rundir/$name.out.pickle
		timeout 10 "$MEMPROF" convert "$path" "$out" >/dev/null 2>"$rundir/$name.pickle.err"
		rc=$?
		judge "$name" pickle $rc "$e_p"
		[ $rc -ne 0 ] || echo "$out" >>"$work/outputs.$$"
	fi
	if [[ $runs == *j* ]]; then
		out=$rundir/$name.out.json
		timeout 10 "$MEMPROF" convert "$path" "$out" >/dev/null 2>"$rundir/$name.json.err"
		rc=$?
		judge "$name" json $rc "$e_j"
		[ $rc -ne 0 ] || echo "$out" >>"$work/outputs.$$"
	fi
	if [[ $runs == *t* ]]; then
		timeout 10 "$MEMPROF" trace "$path" >/dev/null 2>"$rundir/$name.trace.err"
		judge "$name" trace $? "*"
		# the OOM explanation: of the trace's oom entry, and of a request asked about (the whole analysis)
		timeout 10 "$MEMPROF" oom "$path" >/dev/null 2>"$rundir/$name.oom.err"
		judge "$name" oom $? "*"
		timeout 10 "$MEMPROF" oom "$path" --size 1GiB --format json >/dev/null 2>"$rundir/$name.oomsize.err"
		judge "$name" oomsize $? "*"
	fi
}
export -f judge summary run_case
export MEMPROF work rundir=$work/run

xargs -P 2 -n 25 -d '\n' bash -c 'for line; do run_case "$line"; done' _ <"$work/cases.tsv"

cat "$work"/outputs.* 2>/dev/null >"$work/outputs"
total=$(wc -l <"$work/cases.tsv")
cat "$work"/res/* | head -n 40
failed=$(cat "$work"/res/* | cut -d: -f1 | sort -u | wc -l)
if ! "$PYTHON" "$srcdir/io/badinput.py" --check "$work/outputs"; then
	failed=$((failed + 1))
fi
echo "$((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

# same_reader.sh - sourced by the io tests that hold a stream reader to the reader it falls back on.
# same_without VAR NAME ARGS...: memprof ARGS as it runs, and with VAR=1 in its environment (the other
# reader): the same stdout, stderr and exit status (files under $work; counted by tests/lib/check.sh).
same_without() {
	local var=$1 name=$2
	shift 2
	"$MEMPROF" "$@" >"$work/on.out" 2>"$work/on.err"
	echo $? >>"$work/on.out"
	env "$var=1" "$MEMPROF" "$@" >"$work/off.out" 2>"$work/off.err"
	echo $? >>"$work/off.out"
	if cmp -s "$work/on.out" "$work/off.out" && cmp -s "$work/on.err" "$work/off.err"; then
		ok
	else
		bad "$name: memprof $* differs with $var=1"
		diff "$work/on.out" "$work/off.out" | head -5
		diff "$work/on.err" "$work/off.err" | head -5
	fi
}

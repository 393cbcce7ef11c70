#!/usr/bin/env bash
# live_stop.sh - memprof --pid on a PyTorch job that keeps training (tests/testbed/jobs/training_loop.py, PyPI's
# torch 2.14.1 on the fake device: Adam, each step allocating and freeing activations, gradients and temporaries,
# in bursts with short stalls between them), read again and again while it trains.
#
# - Held (the default): every `memprof owners` gives the parameter and optimizer-state bytes the job computed for
#   itself (tests/owners/live_check.py) with no warning but the notes a healthy job gives ($notes), every
#   `memprof segsum` runs without a warning (the walker's own cross-check of statistics and blocks would say a
#   torn read), and after each read no thread of the job is left stopped (/proc/PID/task/*/stat).
# - SIGTERM, SIGINT and SIGKILL sent to memprof while it holds the job (every thread in a tracing stop): memprof
#   dies of the signal and the job goes on (no thread stopped, its steps count on).
# - --no-stop: each read is right (exit 0, no warning, the job's numbers) or the one line "the job was running:
#   use --stop" (exit 2); never a damage warning, never a crash.
# - A job another tracer has: gdb holding it at its prompt (`shell memprof owners --pid`: read as it stands, no
#   warning, right), `memprof watch` waiting in it (read running: a warning that says so, then right or the
#   racing line). Where ptrace is refused (tests/target/no_ptrace: seccomp) likewise, with a warning that says
#   why; where memory may not be read at all (another user's job) one error line.
# - At the end the job finishes its steps (it is told to) and ends by itself.
# It prints how long the job was held (MEMPROF_DEBUG_LIVE) and how many reads --no-stop took.
#
# Env: MEMPROF (the binary), NO_PTRACE (default: next to MEMPROF under tests/target), MEMPROF_LIVE_READS (held
# reads of each command, default 20), MEMPROF_LIVE_RUNNING_READS (--no-stop reads of each, default 8: a read of
# owners that the job keeps moving under costs five), MEMPROF_LIVE_BUILDS (default pypi-2.14.1),
# MEMPROF_TESTBED_SKIP=1 (77). `make check-live-full`: 100 reads of each kind, on both builds.
# Exit 77 when the test bed cannot run the job here. Prints one line per check and "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
no_ptrace=${NO_PTRACE:-$(dirname "$memprof")/tests/target/no_ptrace}
testbed=$top/tests/testbed
reads=${MEMPROF_LIVE_READS:-20}
running=${MEMPROF_LIVE_RUNNING_READS:-8}
builds=${MEMPROF_LIVE_BUILDS:-pypi-2.14.1}
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "live_stop: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi

# The notes a read of a healthy job held mid-step may give (no damage): 2.6 keeps Python tensor objects whose
# tensor is being destroyed.
notes='Python tensor objects hold no live tensor of their own'

# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-livestop.XXXXXX")
cleanup() {
	for d in "$work"/*; do
		[ -f "$d/pid" ] && "$testbed/job.sh" --stop "$d" >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap cleanup EXIT

# The job's threads in a tracing stop ('t'), one letter each.
traced() { # PID
	local t n=0
	for t in /proc/"$1"/task/*/stat; do
		[ "$(sed 's/.*) \(.\).*/\1/' "$t" 2>/dev/null)" = t ] && n=$((n + 1))
	done
	echo "$n"
}
threads() { ls /proc/"$1"/task 2>/dev/null | wc -l; }
steps() { cat "$1/steps.txt" 2>/dev/null || echo 0; }
# What MEMPROF_DEBUG_LIVE said in ERRFILE: how long the job was held (ms), how many reads the command took.
held_ms() { sed -n 's/^memprof: debug: .*; held \([0-9.]*\) ms .*/\1/p' "$1"; }
reads_of() { sed -n 's/^memprof: debug: pid [0-9]*: \([0-9]*\) reads\{0,1\}.*/\1/p' "$1"; }

# Whether the job counts on within 10 s (its steps past what they are now).
goes_on() { # DIR
	local from i
	from=$(steps "$1")
	for i in $(seq 200); do
		[ "$(steps "$1")" -gt "$from" ] && return 0
		sleep 0.05
	done
	return 1
}

# Held reads: the job's own numbers, no warning, nothing left stopped.
held_reads() { # LABEL DIR PID
	local label=$1 dir=$2 pid=$3 i right=0 clean=0 left=0 mid=0 bad_line=
	for i in $(seq "$reads"); do
		if MEMPROF_DEBUG_LIVE=1 "$memprof" owners --pid "$pid" --by category --format json >"$dir/held.json" \
			2>"$dir/held.err" && python3 "$here/live_check.py" "$dir/expected.json" "$dir/held.json" \
			>"$dir/check.out" 2>&1; then
			right=$((right + 1))
			grep -q mid-step "$dir/check.out" && mid=$((mid + 1))
		else
			bad_line=${bad_line:-$(cat "$dir/check.out" "$dir/held.err" | grep -v 'debug:' | head -1)}
		fi
		grep -v 'memprof: debug:' "$dir/held.err" | grep -v "$notes" >"$dir/held.warn"
		[ -s "$dir/held.warn" ] || clean=$((clean + 1))
		cat "$dir/held.warn" >>"$dir/held.warnings"
		held_ms "$dir/held.err" >>"$dir/held.owners.ms"
		reads_of "$dir/held.err" >>"$dir/held.reads"
		[ "$(traced "$pid")" -eq 0 ] || left=$((left + 1))
		MEMPROF_DEBUG_LIVE=1 "$memprof" segsum --pid "$pid" >/dev/null 2>"$dir/segsum.err" || echo fail >>"$dir/segsum.err"
		held_ms "$dir/segsum.err" >>"$dir/held.segsum.ms"
		reads_of "$dir/segsum.err" >>"$dir/held.reads"
		grep -v 'memprof: debug:' "$dir/segsum.err" >>"$dir/segsum.warn"
		[ "$(traced "$pid")" -eq 0 ] || left=$((left + 1))
	done
	[ "$right" -eq "$reads" ] &&
		ok "$label: $reads held owners reads == the job's parameter and optimizer-state bytes ($mid caught it mid-step)" ||
		bad "$label: $((reads - right)) of $reads held owners reads differ from the job's own account (first: $bad_line)"
	[ "$clean" -eq "$reads" ] && ok "$label: no held owners read warned (but of what a healthy job shows)" ||
		bad "$label: $((reads - clean)) held owners reads warned: $(head -1 "$dir/held.warnings")"
	[ ! -s "$dir/segsum.warn" ] && ok "$label: $reads held segsum reads without a warning" ||
		bad "$label: held segsum warned or failed: $(head -1 "$dir/segsum.warn")"
	[ "$left" -eq 0 ] && ok "$label: no thread of the job left stopped after any read" ||
		bad "$label: threads left stopped after $left reads"
	goes_on "$dir" && ok "$label: the job trains on after the held reads" || bad "$label: the job no longer trains"
	echo "   held (ms) owners: $(sort -n "$dir/held.owners.ms" | awk '{a[NR]=$1} END {printf "min %s median %s max %s", a[1], a[int((NR+1)/2)], a[NR]}');" \
		"segsum: $(sort -n "$dir/held.segsum.ms" | awk '{a[NR]=$1} END {printf "min %s median %s max %s", a[1], a[int((NR+1)/2)], a[NR]}');" \
		"held again (a hold caught the job mid-update, or damage): $(awk '$1 > 1' "$dir/held.reads" | wc -l) of $((2 * reads))"
}

# memprof killed by SIG while every thread of the job is held: it dies of SIG, the job goes on.
signal_mid_hold() { # LABEL DIR PID SIG
	local label=$1 dir=$2 pid=$3 sig=$4 mp rc=0 i caught=0
	# a shell's background job ignores SIGINT and SIGQUIT: give them back their default first
	env --default-signal "$memprof" owners --pid "$pid" --format json >/dev/null 2>"$dir/sig.err" &
	mp=$!
	for i in $(seq 400); do
		[ "$(traced "$pid")" -ge "$(threads "$pid")" ] && { caught=1; break; }
		sleep 0.005
	done
	kill -"$sig" "$mp" 2>/dev/null
	{ wait "$mp"; } 2>/dev/null || rc=$?
	if [ "$caught" = 0 ]; then
		bad "$label: SIG$sig: memprof was never seen holding the job"
	elif [ "$rc" -ne $((128 + $(kill -l "$sig"))) ]; then
		bad "$label: SIG$sig to memprof mid-hold: exit status $rc, not death by the signal"
	elif [ "$(traced "$pid")" -ne 0 ]; then
		bad "$label: SIG$sig to memprof mid-hold left $(traced "$pid") threads of the job stopped"
	elif ! goes_on "$dir"; then
		bad "$label: SIG$sig to memprof mid-hold: the job no longer trains"
	else
		ok "$label: SIG$sig to memprof while it held every thread: memprof died of it, the job trains on"
	fi
}

# One read of owners (COMMAND... before memprof) of a job memprof cannot hold for REASON (a regex): a warning that
# says so, then the job's numbers; or the one line that the job was running and could not be stopped, and why.
one_read() { # LABEL DIR PID REASON COMMAND...
	local label=$1 dir=$2 pid=$3 reason=$4 rc=0
	shift 4
	"$@" "$memprof" owners --pid "$pid" --by category --format json >"$dir/one.out" 2>"$dir/one.err" || rc=$?
	if [ "$rc" -eq 0 ] && [ "$(wc -l <"$dir/one.err")" -eq 1 ] &&
		grep -qE "^memprof: warning: cannot stop pid $pid: $reason: read while it runs, the result may race\$" \
			"$dir/one.err" && python3 "$here/live_check.py" "$dir/expected.json" "$dir/one.out" >/dev/null 2>&1; then
		ok "$label: said why it could not stop the job, then the job's numbers"
	elif [ "$rc" -eq 2 ] && [ "$(wc -l <"$dir/one.err")" -eq 1 ] &&
		grep -qE "^memprof: pid $pid: the job was running and could not be stopped \\($reason\\): it changed under" \
			"$dir/one.err"; then
		ok "$label: the job was running, and why it could not be stopped"
	else
		bad "$label: exit $rc: $(head -3 "$dir/one.err" | tr '\n' ' ')"
	fi
}

# The job traced by another: gdb at its prompt, memprof watch; ptrace refused; memory not readable.
other_tracers() { # LABEL DIR PID
	local label=$1 dir=$2 pid=$3 w i rc=0
	gdb -batch -nx -iex 'set auto-solib-add off' -p "$pid" \
		-ex "shell $memprof owners --pid $pid --by category --format json >$dir/gdb.out 2>$dir/gdb.err" \
		-ex detach >"$dir/gdb.log" 2>&1
	if [ -s "$dir/gdb.err" ]; then
		bad "$label: memprof under gdb's hold warned: $(head -1 "$dir/gdb.err")"
	elif ! python3 "$here/live_check.py" "$dir/expected.json" "$dir/gdb.out" >"$dir/gdb.check" 2>&1; then
		bad "$label: memprof under gdb's hold: $(cat "$dir/gdb.check" "$dir/gdb.log" | tail -2 | tr '\n' ' ')"
	else
		ok "$label: held by gdb: read as it stands, no warning, the job's numbers"
	fi
	goes_on "$dir" || bad "$label: the job no longer trains after gdb"
	"$memprof" watch --pid "$pid" -o "$dir/watch" >"$dir/watch.log" 2>&1 &
	w=$!
	for i in $(seq 400); do
		[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status")" = "$w" ] && break
		sleep 0.01
	done
	one_read "$label: traced by memprof watch" "$dir" "$pid" "it is traced by pid $w \\(memprof\\)"
	kill -TERM "$w"
	wait "$w" 2>/dev/null
	goes_on "$dir" || bad "$label: the job no longer trains after memprof watch"
	# (LeakSanitizer stops the world with ptrace: refused there, it would fail; an ASan build checks leaks elsewhere)
	one_read "$label: ptrace refused (seccomp)" "$dir" "$pid" "ptrace not permitted \\(Operation not permitted\\)" \
		env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$no_ptrace"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$memprof" segsum --pid "$pid" >/dev/null 2>"$dir/nobody.err" || rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$dir/nobody.err")" -eq 1 ] &&
		grep -q "^memprof: pid $pid: cannot read its memory: ptrace not permitted" "$dir/nobody.err"; then
		ok "$label: another user's memprof: one error line ($(cat "$dir/nobody.err"))"
	else
		bad "$label: another user's memprof: exit $rc: $(head -2 "$dir/nobody.err" | tr '\n' ' ')"
	fi
}

# --no-stop reads: right, or the racing line; never damage, never a crash.
running_reads() { # LABEL DIR PID
	local label=$1 dir=$2 pid=$3 i rc cmd right=0 racing=0 wrong=0 first=
	: >"$dir/reads.txt"
	for i in $(seq "$running"); do
		for cmd in owners segsum; do
			rc=0
			if [ "$cmd" = owners ]; then
				MEMPROF_DEBUG_LIVE=1 "$memprof" owners --pid "$pid" --no-stop --by category --format json \
					>"$dir/run.out" 2>"$dir/run.err" || rc=$?
			else
				MEMPROF_DEBUG_LIVE=1 "$memprof" segsum --pid "$pid" --no-stop >"$dir/run.out" 2>"$dir/run.err" || rc=$?
			fi
			echo "$cmd $(reads_of "$dir/run.err")" >>"$dir/reads.txt"
			grep -v 'memprof: debug:' "$dir/run.err" >"$dir/run.warn"
			if [ "$rc" -eq 0 ] && [ ! -s "$dir/run.warn" ] && { [ "$cmd" = segsum ] ||
				python3 "$here/live_check.py" "$dir/expected.json" "$dir/run.out" >/dev/null 2>&1; }; then
				right=$((right + 1))
			elif [ "$rc" -eq 2 ] && [ "$(wc -l <"$dir/run.warn")" -eq 1 ] &&
				grep -q "^memprof: pid $pid: the job was running: use --stop" "$dir/run.warn"; then
				racing=$((racing + 1))
			else
				wrong=$((wrong + 1))
				first=${first:-"$cmd exit $rc: $(head -2 "$dir/run.warn" | tr '\n' ' ')"}
			fi
		done
	done
	[ "$wrong" -eq 0 ] && ok "$label: $((2 * running)) --no-stop reads: $right right, $racing said the job was running, none wrong" ||
		bad "$label: $wrong of $((2 * running)) --no-stop reads neither right nor the racing line (first: $first)"
	if grep -qiE 'damage|corrupt|malformed' "$dir"/run.warn; then
		bad "$label: a --no-stop read spoke of damage"
	fi
	echo "   --no-stop reads per command: owners $(awk '$1 == "owners" {printf "%s ", $2}' "$dir/reads.txt");" \
		"segsum $(awk '$1 == "segsum" {printf "%s ", $2}' "$dir/reads.txt")"
}

for build in $builds; do
	dir=$work/$build
	mkdir -p "$dir"
	rc=0
	# up to a million steps; bursts of 100 steps back to back, 100 ms stalls between them
	"$testbed/job.sh" "$build" "$testbed/jobs/training_loop.py" live "$dir" 1000000 100 100 >"$dir/job.env" \
		2>"$dir/job.log" || rc=$?
	if [ "$rc" = 77 ]; then
		echo "live_stop: the test bed cannot run $build here (77): $(tail -1 "$dir/job.log")"
		exit 77
	elif [ "$rc" != 0 ]; then
		bad "$build: the job did not start: $(tail -3 "$dir/job.log" | tr '\n' ' ')"
		continue
	fi
	pid=$(cat "$dir/pid")
	"$testbed/job.sh" --resume "$dir"
	if ! goes_on "$dir"; then
		bad "$build: the job does not train"
		continue
	fi
	held_reads "$build" "$dir" "$pid"
	for sig in TERM INT KILL; do
		signal_mid_hold "$build" "$dir" "$pid" "$sig"
	done
	running_reads "$build" "$dir" "$pid"
	other_tracers "$build" "$dir" "$pid"
	touch "$dir/FINISH"
	for i in $(seq 300); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	if [ -d "/proc/$pid" ]; then
		bad "$build: the job did not end within 30 s of being told to"
	elif [ ! -s "$dir/done.txt" ]; then
		bad "$build: the job ended without finishing its steps: $(tail -2 "$dir/job.err" | tr '\n' ' ')"
	else
		ok "$build: the job finished its steps ($(cat "$dir/done.txt")) and ended"
		rm -f "$dir/pid"
	fi
done
finish

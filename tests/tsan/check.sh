#!/usr/bin/env bash
# check.sh - ThreadSanitizer over memprof's threads (tests/tsan/README.md): the pickle reader's second thread
# (src/model/pickle/mp_pickle_ahead.c: the projection segsum and summary read, frames passed over ahead of the
# machine), compare's read ahead of its second file (src/cli/cli_prefetch.c) and fleet's worker threads
# (src/fleet/fleet_read.c). Configures BUILDDIR with -fsanitize=thread when it holds no build (TSAN_CC, default
# gcc), builds only what it runs (memprof, the pickle unit tests, the pickle and analyses fuzz replays), then runs
# them with TSAN_OPTIONS=halt_on_error=1 (any report ends the process, status 66) and MEMPROF_AHEAD_MIN=0 (the
# thread on every input, not only from 16 MiB): the unit tests, the replays of the fuzz seeds and regressions, and
# the CLI on example.pickle, gen_big.py's 20,000- and 200,000-block snapshots (generated once under
# ${MEMPROF_CACHE:-~/.cache/memprof}/bench, as the benchmarks do), truncated and damaged copies, and every fuzz
# seed and regression input, on both CPUs and pinned to one. Every CLI run's status, output and errors must equal
# the reference's: MEMPROF (the plain build), else the TSan build itself, with MEMPROF_THREADS=1 (one thread).
# Usage: tests/tsan/check.sh BUILDDIR. Env: MEMPROF, TSAN_CC, PYTHON, MEMPROF_CACHE.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
builddir=${1:?usage: tests/tsan/check.sh BUILDDIR}
mkdir -p "$builddir" && builddir=$(cd "$builddir" && pwd)
cc=${TSAN_CC:-gcc}
py=${PYTHON:-python3}
tsan_cflags="-O1 -g -fsanitize=thread -fno-omit-frame-pointer"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memprof-tsan.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The readers' own settings come from the runs below only.
unset MEMPROF_THREADS MEMPROF_AHEAD_MIN MEMPROF_NO_PICKLE_STREAM MEMPROF_NO_JSON_STREAM
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
started=$SECONDS
lap=$SECONDS
# phase TEXT: a heading, with the seconds since the start.
phase() {
	echo "-- $1 (at $((SECONDS - started)) s)"
	lap=$SECONDS
}

# report FILE: the first ThreadSanitizer report in FILE (its stacks), for the log.
report() {
	sed -n '/WARNING: ThreadSanitizer\|ERROR: ThreadSanitizer\|FATAL: ThreadSanitizer/,/^SUMMARY: ThreadSanitizer/p' "$1" |
		head -80 | sed 's/^/    /'
}

# verdict NAME LOG RC [WHAT]: a program's run judged by its log and status: a report, a failure, or ok (WHAT).
verdict() {
	if grep -q 'ThreadSanitizer' "$2"; then
		bad "$1: ThreadSanitizer reported:"
		report "$2"
	elif [ "$3" -ne 0 ]; then
		bad "$1: status $3"
		tail -20 "$2"
	else
		ok "$1${4:+: $4}"
	fi
}

# ---- the compiler: a racy program must be caught (status 66, "data race"), or nothing below means anything
phase "the compiler: $cc $tsan_cflags"
runner=()
cat >"$tmp/race.c" <<'EOF'
#include <pthread.h>
static int shared;
static void *writer(void *arg) { shared++; return arg; }
int main(void)
{
	pthread_t t;
	pthread_create(&t, 0, writer, 0);
	shared++;
	pthread_join(t, 0);
	return shared == 0;
}
EOF
if ! $cc $tsan_cflags -fsanitize=thread "$tmp/race.c" -o "$tmp/race" -lpthread 2>"$tmp/cc.err"; then
	bad "$cc cannot build with -fsanitize=thread (Debian: gcc-12's libtsan2, or TSAN_CC=clang):"
	tail -5 "$tmp/cc.err"
	finish "tsan:"
	exit 1
fi
"$tmp/race" >/dev/null 2>"$tmp/race.err"
rc=$?
if [ $rc -ne 66 ] && grep -q 'unexpected memory mapping' "$tmp/race.err"; then
	# The runtime of gcc 12 and clang 14 does not know the mappings of a kernel with more mmap_rnd_bits (28 here
	# is fine); address randomisation off is its known workaround.
	runner=(setarch "$(uname -m)" -R)
	"${runner[@]}" "$tmp/race" >/dev/null 2>"$tmp/race.err"
	rc=$?
	echo "note: ThreadSanitizer's runtime needs address randomisation off here: every run under ${runner[*]}"
fi
if [ $rc -eq 66 ] && grep -q 'WARNING: ThreadSanitizer: data race' "$tmp/race.err"; then
	ok "a deliberate data race is reported and ends the process (status 66)"
else
	bad "a deliberate data race: status $rc, not 66 with a report:"
	head -20 "$tmp/race.err"
	finish "tsan:"
	exit 1
fi

# ---- the build: configured once per BUILDDIR, then only what runs below
phase "the build in $builddir"
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1) || (cd "$top" && autoreconf -fi)
if [ ! -f "$builddir/Makefile" ]; then
	if ! (cd "$builddir" && "$top/configure" --quiet CC="$cc" CFLAGS="$tsan_cflags" LDFLAGS="-fsanitize=thread") \
		>"$tmp/configure.log" 2>&1; then
		bad "configure in $builddir:"
		tail -20 "$tmp/configure.log"
		finish "tsan:"
		exit 1
	fi
elif ! grep -q -e '-fsanitize=thread' "$builddir/config.status"; then
	bad "$builddir holds a build configured without -fsanitize=thread: give another BUILDDIR"
	finish "tsan:"
	exit 1
fi
unit_tests="tests/unit/model/test_pickle_read tests/unit/model/test_pickle_write tests/unit/model/test_snapshot
	tests/unit/model/test_json_stream tests/unit/session/test_session"
# shellcheck disable=SC2086 # the lists are words
if make -C "$builddir" -s -j"$(nproc)" memprof $unit_tests tests/fuzz/replay_pickle tests/fuzz/replay_analyses \
	>/dev/null 2>"$tmp/make.err"; then
	ok "built memprof, the pickle unit tests and the pickle and analyses replays with -fsanitize=thread"
else
	bad "make in $builddir:"
	tail -30 "$tmp/make.err"
	finish "tsan:"
	exit 1
fi
tsan=$builddir/memprof
ref=${MEMPROF:-}
if [ -n "$ref" ] && [ -x "$ref" ]; then
	echo "reference: $ref on one thread (MEMPROF_THREADS=1)"
else
	ref=$tsan
	echo "reference: $ref itself on one thread (MEMPROF_THREADS=1; no plain build in MEMPROF)"
fi

# ---- the second thread really runs where the tests below expect it
phase "the reader's second thread starts"
ex=$top/tests/data/example.pickle
# threads_made ENV...: how many threads memprof segsum example.pickle makes with ENV (strace, else gdb on the
# thread's function); empty when neither can trace here.
threads_made() {
	if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null; then
		env "$@" strace -f -qq -e trace=clone,clone3 -o "$tmp/strace" "${runner[@]}" "$tsan" segsum "$ex" \
			>/dev/null 2>&1
		grep -c 'clone' "$tmp/strace"
	elif command -v gdb >/dev/null && gdb -q -batch -ex run --args true >/dev/null 2>&1; then
		env "$@" gdb -q -batch -ex 'set startup-with-shell off' -ex 'set disable-randomization off' \
			-ex 'break read_ahead' -ex run --args "$tsan" segsum "$ex" 2>&1 | grep -c 'hit Breakpoint'
	fi
}
on=$(threads_made MEMPROF_AHEAD_MIN=0)
off=$(threads_made MEMPROF_AHEAD_MIN=0 MEMPROF_THREADS=1)
if [ -z "$on" ]; then
	echo "note: neither strace nor gdb can trace here: the thread's start is not checked"
elif [ "$on" -gt 0 ] && [ "$off" -eq 0 ]; then
	ok "segsum example.pickle starts a thread with MEMPROF_AHEAD_MIN=0 ($on made), none with MEMPROF_THREADS=1"
else
	bad "segsum example.pickle: $on threads with MEMPROF_AHEAD_MIN=0, $off with MEMPROF_THREADS=1 (want >0, 0)"
fi

# ---- the unit tests of the pickle reader, the writer and the snapshot files, with the thread on every input
phase "the unit tests"
for t in $unit_tests; do
	(cd "$builddir" && MEMPROF_AHEAD_MIN=0 MEMPROF="$tsan" PYTHON="$py" srcdir="$top/tests" top_srcdir="$top" \
		"${runner[@]}" "$builddir/$t") >"$tmp/unit.log" 2>&1
	verdict "$t" "$tmp/unit.log" $?
done

# ---- the fuzz harnesses' replays: the stream reader with the thread against the generic one-thread reader (the
# harness aborts where they differ), the writers' round trip, every analysis
phase "the fuzz replays"
fz=$top/tests/fuzz
replay() { # NAME DIR...
	local name=$1
	shift
	MEMPROF_AHEAD_MIN=0 "${runner[@]}" "$builddir/tests/fuzz/replay_$name" "$@" >"$tmp/replay.log" 2>&1
	verdict "replay_$name" "$tmp/replay.log" $? "$(tail -1 "$tmp/replay.log") (${*#"$top/"})"
}
replay pickle "$fz/corpus/pickle" "$fz/regress/pickle"
replay analyses "$fz/corpus/pickle" "$fz/corpus/json" "$fz/regress/analyses"

# ---- the CLI against the reference on one thread
# same WHAT [PREFIX...] -- ARGS...: memprof ARGS under TSan, after PREFIX (env's words: ENV=VALUE..., then maybe a
# command such as taskset -c 0), stdin from $stdin, gives the reference's status, output and errors on one
# thread, and no report.
stdin=/dev/null
runs=0 group_fail=0
same() {
	local what=$1 prefix=() rc_on rc_ref
	shift
	while [ "$1" != -- ]; do prefix+=("$1"); shift; done
	shift
	runs=$((runs + 1))
	env "${prefix[@]}" "${runner[@]}" "$tsan" "$@" <"$stdin" >"$tmp/on.out" 2>"$tmp/on.err"
	rc_on=$?
	MEMPROF_THREADS=1 "$ref" "$@" <"$stdin" >"$tmp/ref.out" 2>"$tmp/ref.err"
	rc_ref=$?
	if grep -q 'ThreadSanitizer' "$tmp/on.err"; then
		bad "$what: ThreadSanitizer reported (status $rc_on):"
		report "$tmp/on.err"
	elif [ "$rc_on" -ne "$rc_ref" ]; then
		bad "$what: status $rc_on, $rc_ref on one thread:"
		tail -5 "$tmp/on.err"
	elif ! cmp -s "$tmp/on.out" "$tmp/ref.out"; then
		bad "$what: output differs from one thread's:"
		diff "$tmp/ref.out" "$tmp/on.out" | head -20
	elif ! cmp -s "$tmp/on.err" "$tmp/ref.err"; then
		bad "$what: errors differ from one thread's:"
		diff "$tmp/ref.err" "$tmp/on.err" | head -20
	else
		ok
		return 0
	fi
	group_fail=$((group_fail + 1))
}
# group TEXT: one line for the runs since the last group.
group() {
	echo "$1: $runs runs, $group_fail failed ($((SECONDS - lap)) s)"
	lap=$SECONDS runs=0 group_fail=0
}
analyses="segsum summary segments memory trace categories"

phase "the CLI on snapshots of several sizes"
big=()
for n in 20000 200000; do
	# shellcheck source=../../bench/lib.sh
	if b=$(here=$top/bench && PYTHON=$py && . "$top/bench/lib.sh" && bench_big_pickle "$n" 2>"$tmp/gen.err"); then
		big+=("$b")
	else
		bad "gen_big.py --blocks $n:"
		tail -5 "$tmp/gen.err"
	fi
done
for f in "$ex" "${big[@]}"; do
	for a in $analyses; do
		same "$a $(basename "$f")" MEMPROF_AHEAD_MIN=0 -- "$a" "$f"
	done
	# one CPU: the machine waits for the thread, runs out of patience and stops it (mp_pickle_ahead.c)
	same "segsum $(basename "$f") on one CPU" MEMPROF_AHEAD_MIN=0 taskset -c 0 -- segsum "$f"
done
group "the analyses on example.pickle and gen_big.py's 20,000 and 200,000 blocks, on both CPUs and on one"
if [ ${#big[@]} -eq 2 ]; then
	# the default threshold (16 MiB) on the 70 MB one: no MEMPROF_AHEAD_MIN
	same "segsum $(basename "${big[1]}"), the default threshold" -- segsum "${big[1]}"
	same "summary $(basename "${big[1]}"), the default threshold" -- summary "${big[1]}"
	# compare: its second file read on another thread while the first is read
	same "compare of the two" MEMPROF_AHEAD_MIN=0 -- compare "${big[0]}" "${big[1]}"
	stdin=${big[0]}
	same "segsum of standard input" MEMPROF_AHEAD_MIN=0 -- segsum -
	stdin=/dev/null
	# damaged: cut short at three places and one opcode made unknown in the middle, so that the machine fails
	# while the thread reads ahead (or the thread stops first)
	size=$(stat -c %s "${big[0]}")
	for cut in $((size / 3)) $((size / 2 + 7)) $((size - 2)); do
		head -c "$cut" "${big[0]}" >"$tmp/cut.pickle"
		same "segsum cut at $cut" MEMPROF_AHEAD_MIN=0 -- segsum "$tmp/cut.pickle"
	done
	cp "${big[0]}" "$tmp/bad.pickle"
	printf '\377' | dd of="$tmp/bad.pickle" bs=1 seek=$((size / 2)) conv=notrunc status=none
	same "segsum with an unknown opcode in the middle" MEMPROF_AHEAD_MIN=0 -- segsum "$tmp/bad.pickle"
	same "summary with an unknown opcode in the middle" MEMPROF_AHEAD_MIN=0 -- summary "$tmp/bad.pickle"
	group "the default threshold, compare, standard input, cut and damaged copies"
fi

phase "the CLI on the fuzz seeds and regressions"
inputs=("$fz"/corpus/pickle/* "$fz"/regress/pickle/* "$fz"/regress/analyses/*)
for f in "${inputs[@]}"; do
	for a in $analyses; do
		same "$a ${f#"$fz/"}" MEMPROF_AHEAD_MIN=0 -- "$a" "$f"
	done
	same "segsum ${f#"$fz/"} on one CPU" MEMPROF_AHEAD_MIN=0 taskset -c 0 -- segsum "$f"
done
group "the analyses on ${#inputs[@]} fuzz seeds and regression inputs"

phase "fleet's worker threads"
if "$py" "$top/tests/fleet/gen_ranks.py" "$tmp/job" --ranks 6 --outlier 2 --extra-mib 450 --module model.embedding \
	--oom 4 --blocks 2000 >/dev/null 2>"$tmp/gen.err"; then
	same "fleet, 4 threads" MEMPROF_AHEAD_MIN=0 MEMPROF_THREADS=4 -- fleet "$tmp/job"
	same "fleet --no-frames, 4 threads" MEMPROF_AHEAD_MIN=0 MEMPROF_THREADS=4 -- fleet "$tmp/job" --no-frames
	same "fleet --no-frames on one CPU" MEMPROF_AHEAD_MIN=0 MEMPROF_THREADS=4 taskset -c 0 -- fleet "$tmp/job" \
		--no-frames
	group "fleet on 6 generated ranks, each read with the thread too"
else
	bad "gen_ranks.py:"
	tail -5 "$tmp/gen.err"
fi

echo "tsan: $((SECONDS - started)) s"
finish "tsan:"

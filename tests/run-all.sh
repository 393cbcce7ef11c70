#!/usr/bin/env bash
# run-all.sh - set up, build, and run the whole test suite, then again under ASan+UBSan, then ThreadSanitizer over
# memprof's threads (make check-tsan), then a minute of each fuzzer (MEMPROF_FUZZ_TIME seconds).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/setup-debian.sh"

status=0
run_suite() { # NAME BUILDDIR [configure args...]
	local name=$1 dir=$2
	shift 2
	echo "== $name: build in $dir"
	"$top/tests/build.sh" "$dir" "$@"
	echo "== $name: make check"
	if ! make -C "$dir" -s -j"$(nproc)" check; then
		status=1
		# Show the end of each failing test's log (a failed grep is no error here).
		for log in $(grep -rl --include='*.log' -e '^FAIL' -e '^ERROR' "$dir/tests" 2>/dev/null || true); do
			echo "---- $log"
			# The failed checks first (a long log's tail may not show them), then its end.
			grep -m 20 -A 6 '^FAIL' "$log" || true
			echo "---- (end of $log)"
			tail -40 "$log"
		done
	fi
}

run_suite "plain" "$top/_build"
# The sanitizer pass: every test again, with memory and UB errors fatal.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run_suite "asan+ubsan" "$top/_build-asan" \
	CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	LDFLAGS="-fsanitize=address,undefined"

# The ThreadSanitizer pass (tests/tsan/README.md): a third build of only what it runs (memprof, the pickle unit tests,
# two fuzz replays), its threads on every input, each CLI run's output against the plain build's on one thread. It
# counts as one test in the closing line.
tsan_log=$top/_build-tsan/check-tsan.log
tsan_status=0
mkdir -p "$top/_build-tsan"
echo "== tsan: make check-tsan in $top/_build-tsan"
if ! make -C "$top/_build" -s check-tsan TSAN_BUILDDIR="$top/_build-tsan" >"$tsan_log" 2>&1; then
	status=1 tsan_status=1
	echo "---- $tsan_log"
	# The failed checks first (each with the report or the difference under it), then its end.
	grep -m 10 -A 50 '^FAIL' "$tsan_log" || true
	echo "---- (end of $tsan_log)"
	tail -40 "$tsan_log"
fi
tail -2 "$tsan_log"

# The fuzzing smoke run: every harness for a minute under libFuzzer with ASan and UBSan (tests/fuzz/README.md).
fuzz_time=${MEMPROF_FUZZ_TIME:-60}
echo "== fuzz: make fuzz FUZZ_TIME=$fuzz_time in $top/_build-fuzz"
mkdir -p "$top/_build-fuzz"
if ! (cd "$top/_build-fuzz" && { [ -f Makefile ] || "$top/configure" --quiet CC=clang; } &&
	make -s -j"$(nproc)" fuzz FUZZ_TIME="$fuzz_time"); then
	echo "== fuzz: FAILED (inputs under ~/.cache/memprof-fuzz/*/artifacts)"
	status=1
fi

# One closing line for whoever reads only the end.
pass=0 fail=0
for log in "$top"/_build/test-suite.log "$top"/_build-asan/test-suite.log; do
	[ -f "$log" ] || continue
	p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
	f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
	e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0} + ${e:-0}))
done
if [ "$tsan_status" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
exit $status

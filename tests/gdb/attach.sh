#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# attach.sh - memprof-gdb, gdb started without reading the shared libraries' symbols, attached to a real PyTorch job
# (PyPI's 2.14.1 on the fake device, waiting in its checkpoint): the memprof commands say exactly what they say in
# a gdb that read every symbol, torch's libraries stay unread until `sharedlibrary` asks for them, and both times
# are printed (bench/gdb_attach.sh measures them paired). Env as lib.sh.
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"
scratch memprof-gdb-attach
job=$work/job
"$top/tests/testbed/job.sh" pypi-2.14.1 "$top/tests/testbed/jobs/training_loop.py" live "$job" 3 >/dev/null \
	2>"$work/job.err"
case $? in
0) ;;
77) not_run "the test bed cannot run PyPI's 2.14.1 here: $(tail -1 "$work/job.err")" ;;
*) bad "the job did not start: $(tail -3 "$work/job.err" | tr '\n' ' ')"; finish ;;
esac
pid=$(cat "$job/pid")
commands=(-ex "memprof segsum" -ex "memprof owners --depth 2" -ex "memprof summary")
seconds() { # OUT CMD... : run CMD, its output into OUT; print its wall seconds
	local out=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >"$out" 2>"$out.err"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
# what the memprof commands print, without gdb's own lines about the attach
memprof_lines() { sed -n '/^Summary of segments/,$p' "$1" | grep -v -e '^\[Inferior' -e '^Detaching' -e '^\[New'; }

full=$(seconds "$work/full.out" mgdb -p "$pid" "${commands[@]}" -ex detach)
fast=$(seconds "$work/fast.out" launcher -p "$pid" "${commands[@]}" -ex "info sharedlibrary libtorch_cuda" \
	-ex "sharedlibrary libc10[.]so" -ex "info sharedlibrary libc10[.]so" -ex detach)
memprof_lines "$work/full.out" | grep -v -e "^From " -e "^0x0" >"$work/full.memprof"
memprof_lines "$work/fast.out" | grep -v -e "^From " -e "^0x0" -e "^(\*)" >"$work/fast.memprof"
[ "$(wc -l <"$work/full.memprof")" -ge 10 ] && grep -q "allocated" "$work/full.memprof" &&
	cmp -s "$work/full.memprof" "$work/fast.memprof" &&
	ok "memprof-gdb: segsum, owners and summary say what they say in a gdb that read every symbol" ||
	bad "memprof-gdb's output differs: $(diff "$work/full.memprof" "$work/fast.memprof" | head -5 | tr '\n' ' ')"
grep -Eq "^0x[0-9a-f]+ +0x[0-9a-f]+ +No +.*libtorch_cuda[.]so" "$work/fast.out" &&
	grep -Eq "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes.*libc10[.]so" "$work/fast.out" &&
	ok "memprof-gdb: torch's libraries unread, then read by 'sharedlibrary' (C++ backtraces when asked)" ||
	bad "memprof-gdb: symbols read or not as expected: $(grep -E 'libtorch_cuda|libc10' "$work/fast.out" | tr '\n' ' ')"
echo "info: gdb -p + the three commands: ${full} s reading every symbol, ${fast} s under memprof-gdb"
"$top/tests/testbed/job.sh" --stop "$job" >/dev/null 2>&1
finish

#!/usr/bin/env bash
# gdb_attach.sh - how long `gdb -p PID` + `memprof segsum` takes on a real PyTorch job (the test bed's PyPI 2.14.1
# on the fake device, training_loop.py waiting in its checkpoint), under memprof-gdb (gdb reads no shared
# library's symbols) against plain gdb with the command set sourced (gdb reads every library's symbols, torch's
# among them): farm-bench, paired runs, medians. Env: MEMPROF (default ./memprof; its build dir holds memprof-gdb,
# gdbext/memprof.py and .libs/libmemprof.so.0), BENCH_RUNS (default 5), MEMPROF_GDB (default gdb).
set -euo pipefail
MEMPROF=${MEMPROF:-./memprof}
build=$(cd "$(dirname "$MEMPROF")" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
gdb=${MEMPROF_GDB:-gdb}
export MEMPROF_LIBRARY=$build/.libs/libmemprof.so.0 MEMPROF_GDB_SCRIPT=$build/gdbext/memprof.py MEMPROF_GDB=$gdb
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-bench-attach.XXXXXX")
trap '"$top/tests/testbed/job.sh" --stop "$work/job" >/dev/null 2>&1; rm -rf "$work"' EXIT
"$top/tests/testbed/job.sh" pypi-2.14.1 "$top/tests/testbed/jobs/training_loop.py" live "$work/job" 3 >/dev/null
pid=$(cat "$work/job/pid")
echo "$(nproc) cores, $("$gdb" --version | head -1), job pid $pid"
farm-bench -n "${BENCH_RUNS:-5}" --timeout 600 --vs "$gdb -nx -batch -p $pid -ex 'source $MEMPROF_GDB_SCRIPT' -ex 'memprof segsum' -ex detach" \
	-- "$build/memprof-gdb" -nx -batch -p "$pid" -ex "memprof segsum" -ex detach

#!/bin/bash
# py_heap.sh - what walking a big Python heap costs: a CPython (BENCH_PYTHON, default the newest that
# tests/python/interpreters.sh finds) holds BENCH_OBJECTS (default 10,000,000) GC-tracked objects (empty lists
# and instances of a small class, half each), says how many objects gc.get_objects() has, and waits; memprof's
# heap reader (tests/python/heap_driver walk, from the build directory) walks it live and from a gcore core, every
# object's type looked up. The walk must count what gc.get_objects() counted, give or take the few objects made
# while the target wrote its count (100). Prints wall time and peak RSS of each (best of BENCH_RUNS, default 3).
# Environment: HEAP_DRIVER (default tests/python/heap_driver under the current directory).
# Figures (2 vCPUs, 23 GiB; the walk's own seconds, then the driver's wall time and peak RSS, whose core figure
# is mostly the core's mapped pages): CPython 3.13.0, 10,005,075 objects: live 0.76 s, 6 MiB; gcore core
# (935 MiB) 0.34 s, 858 MiB. CPython 3.11.7, 10,011,101 objects: live 0.52 s, 6 MiB; core 0.24 s, 937 MiB.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
runs=${BENCH_RUNS:-3}
n=${BENCH_OBJECTS:-10000000}
driver=${HEAP_DRIVER:-./tests/python/heap_driver}
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
# shellcheck source=tests/python/interpreters.sh
. "$top/tests/python/interpreters.sh"
bench_need_time
[ -x "$driver" ] || { echo "bench: no $driver (make check builds it)" >&2; exit 1; }
python=${BENCH_PYTHON:-$(py_interpreters | tail -1 | cut -d' ' -f2)}

mkfifo "$tmp/in"
cat >"$tmp/target.py" <<'PY'
import gc, sys
class Small:
    def __init__(self, i):
        self.i = i
n = int(sys.argv[1])
keep = [[] for _ in range(n // 2)] + [Small(i) for i in range(n - n // 2)]
gc.collect()
count = len(gc.get_objects())
open(sys.argv[2], "w").write("%d\n" % count)
sys.stdin.read()
PY
"$python" "$tmp/target.py" "$n" "$tmp/count" <"$tmp/in" &
pid=$!
exec {hold}>"$tmp/in"
while [ ! -s "$tmp/count" ]; do sleep 0.5; kill -0 "$pid" || exit 1; done
want=$(cat "$tmp/count")
echo "bench: $python holds $want tracked objects" >&2

check() { # OUT: the walk counted what gc.get_objects() did
	local got
	got=$(cut -d' ' -f1 "$1")
	if [ $((got - want)) -gt 100 ] || [ $((want - got)) -gt 100 ]; then
		echo "bench: the walk counted $got objects, gc.get_objects() $want" >&2
		exit 1
	fi
}
read -r w r < <(bench_best "$tmp/live" "$driver" walk pid "$pid")
check "$tmp/live"
echo "live:       $(cat "$tmp/live"); best wall ${w} s, peak RSS $((r / 1024)) MiB"
s=$(date +%s)
gcore -o "$tmp/core" "$pid" >/dev/null 2>&1
echo "bench: gcore took $(($(date +%s) - s)) s, $(du -m "$tmp/core.$pid" | cut -f1) MiB" >&2
read -r w r < <(bench_best "$tmp/core.out" "$driver" walk core "$tmp/core.$pid")
check "$tmp/core.out"
echo "gcore core: $(cat "$tmp/core.out"); best wall ${w} s, peak RSS $((r / 1024)) MiB"

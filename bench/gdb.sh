#!/usr/bin/env bash
# gdb.sh - `memprof segsum` inside gdb on the test bed's `huge` scenario (N allocations of 512 B, every third
# freed): the live process gdb attached to and its gcore, read by memprof itself (direct) and through gdb's own
# memory access (`set memprof backend gdb`, what a gdbserver target gets). Per case: the wall time of the command
# (time.monotonic around gdb.execute, output captured), first (walk) and again (the walk cached until the process
# runs), and the target reads the command made (mp_session_reads: reads through gdb; 0 for direct reads).
# Env: MEMPROF (default ./memprof; its build dir has .libs/libmemprof.so.0 and gdbext/memprof.py),
# BENCH_ALLOCATIONS (default "120000 1000000"), BENCH_VARIANT (default stripped), MEMPROF_GDB (default gdb).
set -euo pipefail

MEMPROF=${MEMPROF:-./memprof}
MEMPROF=$(cd "$(dirname "$MEMPROF")" && pwd)/$(basename "$MEMPROF")
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/../tests/gdb/lib.sh"   # gdb, mgdb (memprof.py and the helpers loaded), target, scratch
sizes=${BENCH_ALLOCATIONS:-"120000 1000000"}
variant=${BENCH_VARIANT:-stripped}
scratch memprof-bench-gdb
row() { # LABEL FILE-PREFIX
	local first again
	read -r first reads <"$2.1.time"
	read -r again _ <"$2.2.time"
	[ -e "$2.1.err" ] && { echo "$1: failed: $(cat "$2.1.err")"; return; }
	printf '| %-9s | %-28s | %7s s | %7s s | %9s |\n' "$blocks" "$1" "$first" "$again" "$reads"
}

echo "variant $variant, $(nproc) cores, $(uname -r), $("$gdb" --version | head -1)"
printf '| %-9s | %-28s | %9s | %9s | %9s |\n' blocks case "first" "again" "reads"
for n in $sizes; do
	rm -rf "$work/live"
	MEMPROF_HUGE_ALLOCATIONS=$n "$target" huge "$variant" live "$work/live" >/dev/null 2>"$work/target.err" || {
		tail -3 "$work/target.err"
		exit 1
	}
	blocks=$(python3 -c 'import json,sys; print(sum(len(s["blocks"]) for s in json.load(open(sys.argv[1]))["segments"]))' "$work/live/truth.json")
	w=$work/$n
	mgdb -p "$(cat "$work/live/pid")" \
		-ex "mp-timed $w.direct.1 memprof segsum" -ex "mp-timed $w.direct.2 memprof segsum" \
		-ex 'set memprof backend gdb' \
		-ex "mp-timed $w.gdb.1 memprof segsum" -ex "mp-timed $w.gdb.2 memprof segsum" \
		-ex "gcore $work/core" -ex detach >>"$work/gdb.out" 2>&1
	"$target" --stop "$work/live" >/dev/null 2>&1
	mgdb -ex "mp-timed $w.core.1 memprof segsum" -ex "mp-timed $w.core.2 memprof segsum" \
		"$(cat "$work/live/driver.path")" "$work/core" >>"$work/gdb.out" 2>&1
	cmp -s "$w.direct.1" "$w.gdb.1" && cmp -s "$w.direct.1" "$w.core.1" ||
		echo "warning: the outputs differ between direct, gdb and core reads"
	row "live, direct (/proc/PID)" "$w.direct"
	row "live, through gdb" "$w.gdb"
	row "gcore, direct" "$w.core"
	rm -f "$work/core"
done

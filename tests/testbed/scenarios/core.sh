#!/usr/bin/env bash
# core.sh SCENARIO gcore|kernel OUT_DIR - a core of the driver in SCENARIO's state, with its ground truth.
#
# Writes OUT_DIR/truth.json, OUT_DIR/core and OUT_DIR/driver.path (the driver binary the core belongs to: gdb
# needs it, and its RUNPATH names the c10 and fake CUDA libraries that were mapped). gcore: the driver runs in
# `sleep` mode and gdb's gcore dumps it (works whatever core_pattern says); kernel: `abort` mode with
# `ulimit -c unlimited` in OUT_DIR as cwd (needs core_pattern to write a file: here it is `core`). Prints
# OUT_DIR/core. Env: as run.sh (MEMPROF_C10_VARIANT picks the c10 build, MEMPROF_DRIVER a prebuilt driver).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "scenarios/core: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ $# -eq 3 ] || die "usage: core.sh SCENARIO gcore|kernel OUT_DIR"
scenario=$1 kind=$2
mkdir -p "$3"
out=$(cd "$3" && pwd)
driver=$("$here/run.sh" --driver)
export MEMPROF_DRIVER=$driver
echo "$driver" >"$out/driver.path"
rm -f "$out/core" "$out"/core.[0-9]* "$out/truth.json"

case $kind in
gcore)
	command -v gcore >/dev/null || die "gcore (gdb) not found"
	fifo=$out/.ready.$$
	(cd "$out" && exec "$here/run.sh" "$scenario" sleep --truth "$out/truth.json" >"$fifo") &
	pid=$!
	for _ in $(seq 600); do
		grep -q '^ready$' "$fifo" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q '^ready$' "$fifo" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		rm -f "$fifo"
		die "$scenario did not reach its sleep"
	fi
	rm -f "$fifo"
	gcore -o "$out/core" "$pid" >/dev/null 2>&1 || { kill "$pid"; die "gcore failed"; }
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	mv "$out/core.$pid" "$out/core"
	;;
kernel)
	set +e
	{ (cd "$out" && "$here/run.sh" "$scenario" abort --truth "$out/truth.json" >/dev/null); } 2>/dev/null
	rc=$?
	set -e
	[ $rc -eq 134 ] || die "$scenario abort run ended with status $rc, not SIGABRT"
	[ -s "$out/core" ] || die "no core in $out (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
	;;
*) die "kind must be gcore or kernel" ;;
esac
[ -s "$out/truth.json" ] || die "no truth written"
echo "$out/core"

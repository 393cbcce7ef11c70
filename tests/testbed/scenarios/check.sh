#!/usr/bin/env bash
# check.sh [SCENARIO...] - build the test bed (c10 via tests/testbed/c10/build.sh, the fake CUDA via its Makefile,
# the driver via build.sh), run every scenario in `truth` mode, check each truth with sanity.py, read each with
# memprof (`memprof stats TRUTH.json`), check that sanity.py catches broken truths, and exercise the other modes
# once (checkpoint under gdb; then ../target.sh's live, gcore and kernel modes on `oom`: the live process and each
# core must map this variant's libc10_cuda.so, and on DWARF variants gdb reads one Block back from each core that
# must agree with the truth).
#
# Env: MEMPROF_C10_VARIANTS (default "debug"; e.g. "debug stripped debug-oldabi"), MEMPROF (the memprof binary;
# default <repo>/_build/memprof, skipped if absent), MEMPROF_CHECK_MODES=0 skips the mode checks, and what
# run.sh reads. Exit 0 if all passed, 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testbed=$(cd "$here/.." && pwd)
top=$(cd "$here/../../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
all_scenarios=(training fragmented pending_free oom multi_device private_pool expandable history huge)
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=("${all_scenarios[@]}")

log() { echo "scenarios/check: $*" >&2; }
failures=0
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# A first consumer of the cores: gdb + DWARF reads the first free Block of the small (else large) pool of device 0
# straight from the core (walking std::set's red-black tree by hand: no pretty-printers or xmethods on a core;
# the node's value is at +32); the truth must hold an inactive block with that address and size. DWARF only.
# shellcheck disable=SC2016 # single-quoted gdb expressions: $da, $t, $b are gdb convenience variables
core_block_check() { # VARIANT WHAT DRIVER CORE TRUTH
	local variant=$1 what=$2 driver=$3 core=$4 truth=$5 ns=c10::cuda::CUDACachingAllocator::Native out='' pool
	case $variant in stripped* | debian-*) return 0 ;; esac
	command -v gdb >/dev/null || return 0
	for pool in small_blocks large_blocks; do
		out=$(timeout 120 gdb -batch -nx \
			-ex "set \$da = ('$ns::DeviceCachingAllocator' *) *(void**)&'$ns::allocator'.device_allocator._M_impl._M_start[0]" \
			-ex "set \$t = &\$da->$pool.blocks._M_t._M_impl" \
			-ex 'if $t->_M_node_count == 0' -ex 'printf "EMPTY\n"' -ex 'else' \
			-ex "set \$b = ('$ns::(anonymous namespace)::Block' *) *(void**)((char*)\$t->_M_header._M_left + 32)" \
			-ex 'printf "BLOCK %lu %lu %d\n", (unsigned long)$b->ptr, $b->size, (int)$b->allocated' -ex 'end' \
			"$driver" "$core" 2>&1 | grep -E '^(BLOCK|EMPTY)')
		[ "$out" = EMPTY ] || break
	done
	if [ -z "$out" ] || [ "$out" = EMPTY ]; then
		fail "$variant: gdb read no free Block from the $what"
		return
	fi
	# shellcheck disable=SC2086
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
addr, size, allocated = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sys.exit(0 if allocated == 0 and any(b["address"] == addr and b["size"] == size and b["state"] == "inactive"
         for s in d["segments"] if s["device"] == 0 for b in s["blocks"]) else 1)
' "$truth" $out; then
		echo "$variant: gdb+DWARF on the $what: Block (ptr size allocated) ${out#BLOCK } is in the truth: ok"
	else
		fail "$variant: gdb read Block ${out#BLOCK } from the $what, not an inactive block of the truth"
	fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-scenarios.XXXXXX")
trap 'rm -rf "$work"' EXIT

for variant in ${MEMPROF_C10_VARIANTS:-debug}; do
	export MEMPROF_C10_VARIANT=$variant
	t0=$(now)
	if ! driver=$("$here/run.sh" --driver); then
		fail "$variant: could not build the driver"
		continue
	fi
	log "$variant: driver $driver (build or cache: $(elapsed "$t0") s)"
	# Every run of this variant uses this very driver (the c10 scripts may change, and their hash with them,
	# while this runs).
	export MEMPROF_DRIVER=$driver
	for s in "${scenarios[@]}"; do
		dir=$work/$variant/$s
		mkdir -p "$dir"
		truth=$dir/truth.json
		t0=$(now)
		if ! (cd "$dir" && "$here/run.sh" "$s" truth --truth "$truth" >"$dir/run.out" 2>&1); then
			cat "$dir/run.out" >&2
			fail "$variant/$s: driver failed"
			continue
		fi
		t_run=$(elapsed "$t0")
		if python3 "$here/sanity.py" "$truth" >"$dir/sanity.out" 2>&1; then
			res=$(tail -n 1 "$dir/sanity.out")
		else
			cat "$dir/sanity.out" >&2
			fail "$variant/$s: sanity"
			res=$(tail -n 1 "$dir/sanity.out")
		fi
		mp=skipped
		if [ -x "$memprof" ]; then
			t0=$(now)
			if "$memprof" segsum "$truth" >"$dir/stats.out" 2>&1; then
				mp="ok ($(elapsed "$t0") s; $(grep -m1 '^total_allocated' "$dir/stats.out" || echo '?'))"
			else
				cat "$dir/stats.out" >&2
				fail "$variant/$s: memprof segsum"
				mp=failed
			fi
		fi
		printf '%-16s %-12s run %6s s  %-26s  memprof segsum: %s\n' "$variant" "$s" "$t_run" "sanity: $res" "$mp"
	done

	# sanity.py must reject broken truths (else its passes mean nothing).
	src=$work/$variant/pending_free/truth.json
	if [ -f "$src" ]; then
		for mutation in block_size state segment_total stats_allocated; do
			python3 - "$src" "$work/mut-$mutation.json" "$mutation" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = sys.argv[3]
seg = next(s for s in d["segments"] if len(s["blocks"]) > 1)
if m == "block_size":
    seg["blocks"][0]["size"] += 512
elif m == "state":
    for s in d["segments"]:
        for b in s["blocks"]:
            if b["state"] == "active_pending_free":
                b["state"] = "inactive"
elif m == "segment_total":
    seg["total_size"] -= 4096
elif m == "stats_allocated":
    d["device_stats"][0]["allocated_bytes.all.current"] += 1
json.dump(d, open(sys.argv[2], "w"))
EOF
			if python3 "$here/sanity.py" "$work/mut-$mutation.json" >/dev/null 2>&1; then
				fail "$variant: sanity.py accepted a truth with a broken $mutation"
			else
				echo "$variant: sanity.py rejects a broken $mutation: ok"
			fi
		done
	fi

	[ "${MEMPROF_CHECK_MODES:-1}" = 1 ] || { unset MEMPROF_DRIVER; continue; }
	mdir=$work/$variant/modes
	mkdir -p "$mdir"
	DRIVER_LOADER=
	# shellcheck source=/dev/null
	[ ! -f "$(dirname "$driver")/driver.env" ] || . "$(dirname "$driver")/driver.env"
	# checkpoint: gdb stops in memprof_checkpoint after the truth is written. Not for a driver run through an
	# explicit loader (debian-2.6): gdb then takes the loader for the program and never reads the driver's symbols.
	if [ -n "$DRIVER_LOADER" ]; then
		echo "$variant: checkpoint: not checked (the driver runs under $DRIVER_LOADER; gdb sees no driver symbols)"
	elif command -v gdb >/dev/null; then
		if (cd "$mdir" && gdb -batch -nx -ex 'break memprof_checkpoint' -ex run -ex 'bt 1' \
			--args "$driver" pending_free checkpoint --truth cp.json) 2>&1 |
			grep -q '^#0 .*memprof_checkpoint' && [ -s "$mdir/cp.json" ]; then
			echo "$variant: checkpoint: gdb stopped in memprof_checkpoint: ok"
		else
			fail "$variant: checkpoint mode"
		fi
	fi
	# The other modes through the entry point the walker tests use (../target.sh), on `oom`.
	for mode in live gcore kernel; do
		t0=$(now)
		rc=0
		"$testbed/target.sh" oom "$variant" "$mode" "$mdir/$mode" >"$mdir/$mode.kv" 2>"$mdir/$mode.err" || rc=$?
		if [ $rc -eq 77 ]; then
			echo "$variant: $mode: not possible on this machine: $(tail -n1 "$mdir/$mode.err")"
			continue
		elif [ $rc -ne 0 ]; then
			cat "$mdir/$mode.err" >&2
			fail "$variant: target.sh oom $variant $mode (status $rc)"
			continue
		fi
		kv() { sed -n "s/^$1=//p" "$mdir/$mode.kv"; }
		libdir=$(kv C10_LIBDIR)
		case $mode in
		live)
			pid=$(kv PID)
			if grep -q "$libdir/libc10_cuda.so" "/proc/$pid/maps" 2>/dev/null && [ -s "$(kv TRUTH)" ]; then
				echo "$variant: live: pid $pid asleep with $libdir/libc10_cuda.so* mapped ($(elapsed "$t0") s): ok"
			else
				fail "$variant: live: pid $pid does not map $libdir/libc10_cuda.so*"
			fi
			"$testbed/target.sh" --stop "$mdir/$mode"
			if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
				fail "$variant: live: --stop left pid $pid running"
			fi
			;;
		gcore | kernel)
			core=$(kv CORE)
			# NT_FILE names every mapped file: the core must come from a process that used this variant's library.
			if [ -s "$core" ] && grep -q -a "$libdir/libc10_cuda.so" "$core"; then
				echo "$variant: $mode: core of $(stat -c %s "$core") bytes, maps $libdir/libc10_cuda.so* ($(elapsed "$t0") s): ok"
			else
				fail "$variant: $mode: no core, or its NT_FILE does not name $libdir/libc10_cuda.so*"
			fi
			core_block_check "$variant" "$mode core" "$(kv DRIVER)" "$core" "$(kv TRUTH)"
			;;
		esac
	done
	unset MEMPROF_DRIVER
done

if [ $failures -eq 0 ]; then
	log "all passed"
	exit 0
fi
log "$failures failure(s)"
exit 1

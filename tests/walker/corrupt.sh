#!/usr/bin/env bash
# corrupt.sh - memprof on damaged cores of PyTorch's real caching allocator: never a crash, a hang or a
# runaway allocation; always one clear error line (exit 1 or 2) or a result (exit 0) that says with
# "warning:" lines what it could not read. A result with warnings must be consistent with the truth:
# segments left out or cut short, nothing invented, undamaged segments exact (partial_check.py).
#
# The core comes from the test bed (tests/testbed/target.sh, scenario `training` on the `debug` c10 build);
# the damage is done with core_poke (built next to memprof by make check) at addresses found by following
# the allocator's pointers with the layout `memprof info -o` writes. Cases: truncations; the library
# missing or with another build-id; Block.next to itself / to garbage; pool trees with cycles, a huge
# node_count, unmapped nodes; a 2.14 layout forced; a damaged trace ring and DeviceStats; random byte
# flips in the heap. Each memprof run is timed out and its peak RSS (/usr/bin/time) must stay within
# MEMPROF_CORRUPT_MAX_KB (default 200 MB) of the undamaged walk's.
#
# Env: MEMPROF (the binary; run it under ASan+UBSan to check memory errors too), CORE_POKE (default: next to
# MEMPROF), MEMPROF_CORRUPT_SEEDS (random flip runs, default 300), MEMPROF_CORRUPT_VARIANT (default debug).
# Exit 77 when the test bed cannot give a core here. Prints one line per check and "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
poke=${CORE_POKE:-$(dirname "$memprof")/tests/walker/core_poke}
target=$top/tests/testbed/target.sh
check=$here/partial_check.py
seeds=${MEMPROF_CORRUPT_SEEDS:-300}
variant=${MEMPROF_CORRUPT_VARIANT:-debug}
max_kb=${MEMPROF_CORRUPT_MAX_KB:-204800}
tmo=60
# The test bed's driver records contexts of its own type (not torch::CapturedTraceback): nothing to decode here.
# Damaged contexts of real jobs: tests/context/corrupt.sh.
mp_args=(--no-frames)

# shellcheck source=corrupt_lib.sh
. "$here/corrupt_lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-corrupt.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- the undamaged core, its truth, its layout and the addresses the cases damage
base=$work/base
if ! "$target" training "$variant" gcore "$base" >"$work/target.out" 2>"$work/target.err" &&
	! "$target" training "$variant" kernel "$base" >"$work/target.out" 2>"$work/target.err"; then
	not_run "the test bed gives no core here: $(tail -1 "$work/target.err")"
fi
core=$base/core truth=$base/truth.json libdir=$(cat "$base/libdir")
base_mem=0
run_mp base "$core"
if [ $rc -ne 0 ] || ! python3 "$check" "$truth" "$work/base.json" >/dev/null; then
	bad "the undamaged core does not walk to the truth: $(head -c 300 "$work/base.err")"
	finish
	exit 1
fi
base_mem=$mem
ok "undamaged core: walks to the truth (peak RSS $mem KB)"

find_allocator "$core"
o_next=$(L Block.next) o_prev=$(L Block.prev) o_ptr=$(L Block.ptr)

# A segment of several blocks: its head Block (prev NULL, next set), from the active_blocks flat set.
table=$((da + $(L DeviceCachingAllocator.active_blocks)))
entries=$(peek "$core" $table)
slots=$(($(peek "$core" $((table + 8))) + 1 + (($(peek "$core" $((table + 16))) >> 8) & 0xff)))
head='' head2='' seg=''
while read -r dist; read -r b; do
	[ $((dist & 0x80)) -eq 0 ] && [ "$b" != 0 ] || continue
	[ "$(peek "$core" $((b + o_prev)))" = 0 ] || continue
	n=$(peek "$core" $((b + o_next)))
	[ "$n" != 0 ] && [ "$(peek "$core" $((n + o_next)))" != 0 ] || continue
	head=$b head2=$n seg=$(peek "$core" $((b + o_ptr)))
	break
done < <(peek "$core" "$entries" $((2 * slots)))
[ -n "$head" ] || { bad "no segment of 3+ blocks in active_blocks"; exit 1; }

# damage NAME ADDR VALUE [ADDR VALUE]...: a copy of the core with u64 values written.
damage() {
	local name=$1
	shift
	cp "$core" "$work/$name.core"
	while [ $# -ge 2 ]; do
		"$poke" "$work/$name.core" poke "$1" "$2" || { bad "$name: cannot poke $1"; return 1; }
		shift 2
	done
}

# case_poke LABEL PATTERN CHECKARGS -- ADDR VALUE...: damage, walk, judge.
n_case=0
case_poke() {
	local label=$1 pattern=$2 checkargs=$3 name
	shift 4
	n_case=$((n_case + 1))
	name=c$n_case
	damage "$name" "$@" || return
	run_mp "$name" "$work/$name.core"
	# shellcheck disable=SC2086
	verdict "$label" "$name" ${pattern:+--pattern "$pattern"} --consistent $checkargs && ok "$label: $outcome"
	rm -f "$work/$name.core"
}

# ---- 3. Block chains
case_poke "Block.next -> itself (segment head)" '' "--damaged $seg" -- $((head + o_next)) "$head"
case_poke "Block.next -> itself (second block)" '' "--damaged $seg" -- $((head2 + o_next)) "$head2"
case_poke "Block.next -> back to the head (cycle)" '' "--damaged $seg" -- $((head2 + o_next)) "$head"
case_poke "Block.next -> unmapped garbage" '' "--damaged $seg" -- $((head + o_next)) 0xdead00000000
case_poke "Block.next -> mapped garbage (the DeviceCachingAllocator)" '' "--damaged $seg" -- \
	$((head + o_next)) "$da"
case_poke "Block.next -> misaligned" '' "--damaged $seg" -- $((head + o_next)) $((head2 + 3))

# ---- 4. a pool's red-black tree (large_blocks.blocks: header at +8, root +16, leftmost +24, count +40)
tree=$((da + $(L DeviceCachingAllocator.large_blocks) + $(L BlockPool.blocks)))
root=$(peek "$core" $((tree + 16)))
if [ "$root" = 0 ]; then
	bad "the large pool's free-block tree is empty: no tree cases"
else
	case_poke "tree: root.left -> root (cycle)" '' --any-damaged -- $((root + 16)) "$root"
	case_poke "tree: root.right -> header (cycle)" '' --any-damaged -- $((root + 24)) $((tree + 8))
	case_poke "tree: root.left -> its parent slot's header, both children -> root" '' --any-damaged -- \
		$((root + 16)) "$root" $((root + 24)) "$root"
	case_poke "tree: node_count huge" '' --any-damaged -- $((tree + 40)) 0x1000000000000000
	case_poke "tree: node_count 0 with a root" '' --any-damaged -- $((tree + 40)) 0
	case_poke "tree: root -> unmapped" '' --any-damaged -- $((tree + 16)) 0xdead00000000
	case_poke "tree: a node's child -> unmapped" '' --any-damaged -- $((root + 24)) 0x10
	case_poke "tree: a node's parent -> garbage" '' --any-damaged -- $((root + 8)) 0x1234
	case_poke "tree: a node's Block* -> unmapped" '' --any-damaged -- $((root + 32)) 0xdead00000000
	case_poke "tree: leftmost -> unmapped" '' --any-damaged -- $((tree + 24)) 0xdead00000000
fi
# the active_blocks flat set
case_poke "active_blocks: num_slots_minus_one huge" '' --any-damaged -- $((table + 8)) 0xffffffffffff
case_poke "active_blocks: entries -> unmapped" '' --any-damaged -- "$table" 0xdead00000000
case_poke "active_blocks: num_elements off by one" '' --any-damaged -- $((table + 24)) \
	$(($(peek "$core" $((table + 24))) + 1))

# ---- 6. the trace ring and DeviceStats
ring=$((da + $(L DeviceCachingAllocator.alloc_buffer)))
o_rnext=$(L RingBuffer.alloc_trace_next) o_rvec=$(L RingBuffer.alloc_trace)
vec=$(peek "$core" $((ring + o_rvec)))
case_poke "ring: next far beyond size" '' '' -- $((ring + o_rnext)) 100000
case_poke "ring: next == size" '' '' -- $((ring + o_rnext)) 0x7fffffffffffffff
case_poke "ring: vector pointer -> unmapped" '' '' -- $((ring + o_rvec)) 0xdead00000000
case_poke "ring: vector pointer -> mapped garbage (DeviceStats)" '' '' -- $((ring + o_rvec)) \
	$((da + $(L DeviceCachingAllocator.stats)))
case_poke "ring: vector begin -> unmapped" '' '' -- "$vec" 0xdead00000000
case_poke "ring: vector end huge" '' '' -- $((vec + 8)) 0x7fffffffffff
case_poke "ring: max_entries 0" '' '' -- $((ring + $(L RingBuffer.alloc_trace_max_entries_))) 0
stats=$((da + $(L DeviceCachingAllocator.stats)))
reserved=$((stats + $(L DeviceStats.reserved_bytes)))
case_poke "DeviceStats: reserved_bytes.all.current + 2 MiB" 'statistics do not add up' '' -- \
	"$reserved" $(($(peek "$core" "$reserved") + 2097152))
tam=$((da + $(L DeviceCachingAllocator.total_allocated_memory)))
case_poke "total_allocated_memory + 2 MiB" 'statistics do not add up' '' -- "$tam" $(($(peek "$core" "$tam") + 2097152))

# ---- 5. another version's layout forced
for lay in "$top"/src/symbols/layouts/torch-2.14-*.layout; do
	run_mp layout "$core" --layout "$lay"
	verdict "--layout ${lay##*/}" layout --pattern 'does not fit' && [ $rc -ne 0 ] &&
		ok "--layout ${lay##*/}: $outcome" || { [ $rc -eq 0 ] && bad "--layout ${lay##*/}: accepted"; }
done

# ---- 2. the library missing or another build
mkdir -p "$work/empty" "$work/bid"
run_mp sysroot "$core" --sysroot "$work/empty"
verdict "--sysroot without the library" sysroot --pattern 'not found' && [ $rc -ne 0 ] && ok "--sysroot without the library: $outcome"
run_mp solib "$core" --solib-path "$work/empty"
verdict "--solib-path without the library (the recorded path is still read)" solib --consistent &&
	ok "--solib-path without the library (the recorded path is still read): $outcome"
# objcopy on a copy only: with one file argument it rewrites that file in place (truncating it), and the
# kernel then drops every process's copy-on-write pages of it, so the live drivers of other tests lose their
# relocated RELRO and .data pages to the file's bytes (seen as "no readable RTTI name" from their cores).
if cp "$libdir/libc10_cuda.so" "$work/bid/orig.so" &&
	objcopy --dump-section .note.gnu.build-id="$work/bid/note" "$work/bid/orig.so" 2>"$work/objcopy.err" &&
	python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-1] ^= 0xff; open(sys.argv[2], "wb").write(b)' \
		"$work/bid/note" "$work/bid/note2" &&
	objcopy --update-section .note.gnu.build-id="$work/bid/note2" "$work/bid/orig.so" \
		"$work/bid/libc10_cuda.so" 2>>"$work/objcopy.err" && rm "$work/bid/orig.so"; then
	run_mp bid "$core" --solib-path "$work/bid"
	verdict "--solib-path to a libc10_cuda.so with another build-id" bid --pattern 'build-id' && [ $rc -ne 0 ] &&
		ok "--solib-path to a libc10_cuda.so with another build-id: $outcome"
	mkdir -p "$work/sr$libdir" && cp "$work/bid/libc10_cuda.so" "$work/sr$libdir/"
	run_mp bid2 "$core" --sysroot "$work/sr"
	verdict "--sysroot with a libc10_cuda.so of another build-id" bid2 --pattern 'build-id' && [ $rc -ne 0 ] &&
		ok "--sysroot with a libc10_cuda.so of another build-id: $outcome"
	rm -rf "$work/bid" "$work/sr"
else
	bad "objcopy could not give the library another build-id: $(head -c 200 "$work/objcopy.err")"
fi

# ---- 1. truncations: 30 lengths over the file, 10 inside the notes, 20 inside the heap segment with the blocks,
# 10 inside the segment with the NativeCachingAllocator object. A kernel core when the machine gives one (notes
# first, then the memory in address order); gcore puts its notes last.
tcore=$core
if "$target" training "$variant" kernel "$work/kernel" >/dev/null 2>&1; then
	tcore=$work/kernel/core truth_saved=$truth truth=$work/kernel/truth.json
fi
"$memprof" info "$tcore" >"$work/tinfo.out" 2>&1
tobj=$(sed -n 's/^backend: .* at \(0x[0-9a-f]*\).*/\1/p' "$work/tinfo.out")
tda=$(peek "$tcore" "$(peek "$tcore" $((tobj + $(L NativeCachingAllocator.device_allocator))))")
size=$(stat -c %s "$tcore")
read -r n_off n_size < <("$poke" "$tcore" notes)
read -r h_off _ h_size < <("$poke" "$tcore" where "$tda")
read -r o_off _ o_size < <("$poke" "$tcore" where "$tobj")
lens="0 1 63 64 100 $((size - 1))"
for i in $(seq 0 29); do lens="$lens $((size * i / 30))"; done
for i in $(seq 0 9); do lens="$lens $((n_off + n_size * i / 10)) $((o_off + o_size * i / 10))"; done
for i in $(seq 0 19); do lens="$lens $((h_off + h_size * i / 20))"; done
t_err=0 t_res=0 t_fail=0 t_msgs=''
for len in $(tr ' ' '\n' <<<"$lens" | sort -nu); do
	head -c "$len" "$tcore" >"$work/trunc.core"
	run_mp trunc "$work/trunc.core"
	if verdict "core truncated to $len of $size bytes" trunc --consistent --any-damaged >"$work/trunc.verdict"; then
		case $outcome in error*) t_err=$((t_err + 1)) ;; *) t_res=$((t_res + 1)) ;; esac
		t_msgs="$t_msgs$(sed "s|$work/trunc.core|CORE|g; s/0x[0-9a-f]*/X/g; s/[0-9][0-9]*/N/g" <<<"$outcome" | cut -c1-160)"$'\n'
	else
		t_fail=$((t_fail + 1)) # counted by verdict
		cat "$work/trunc.verdict"
	fi
done
rm -f "$work/trunc.core"
[ -n "${truth_saved:-}" ] && truth=$truth_saved
nlens=$(tr ' ' '\n' <<<"$lens" | sort -nu | wc -l)
[ $t_fail -eq 0 ] && ok "truncated cores ($nlens lengths of the ${tcore#$work/} core; notes at $n_off+$n_size, heap at $h_off+$h_size, allocator at $o_off+$o_size): $t_err errors, $t_res results with warnings"
sort <<<"$t_msgs" | uniq -c | sort -rn | sed '/^ *[0-9]* $/d; s/^/    /' | head -8

# ---- 7. random byte flips in the heap segment holding the allocator's structures
f_fail=0 f_err=0 f_res=0 f_warn=0
read -r _ h_vaddr h_size < <("$poke" "$core" where "$head")
h_end=$((h_vaddr + h_size))
for s in $(seq 1 "$seeds"); do
	cp "$core" "$work/flip.core"
	case $((s % 3)) in
	0) "$poke" "$work/flip.core" flip "$s" 32 "$h_vaddr" "$h_size" ;;                  # anywhere in the heap
	1) "$poke" "$work/flip.core" flip "$s" 8 "$da" $((h_end > da ? h_end - da : 0)) ;; # from the allocator on
	2) "$poke" "$work/flip.core" flip "$s" 1 "$da" "$(L DeviceCachingAllocator.sizeof)" ;; # the allocator itself
	esac
	run_mp flip "$work/flip.core"
	if verdict "byte flips, seed $s" flip >"$work/flip.verdict"; then
		case $outcome in
		error*) f_err=$((f_err + 1)) ;;
		*) f_res=$((f_res + 1)); [ -s "$work/flip.err" ] && f_warn=$((f_warn + 1)) ;;
		esac
	else
		f_fail=$((f_fail + 1))
		[ $f_fail -le 5 ] && cat "$work/flip.verdict"
	fi
done
rm -f "$work/flip.core"
fail=$((fail - f_fail))
if [ $f_fail -eq 0 ]; then
	ok "byte flips ($seeds seeds): $f_err clear errors, $f_res results ($f_warn with warnings)"
else
	bad "byte flips: $f_fail of $seeds seeds crashed, hung or answered unclearly"
fi

finish

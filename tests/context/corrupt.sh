#!/usr/bin/env bash
# corrupt.sh - memprof on a real Python job's core whose allocation contexts are damaged: never a crash, a hang or
# a runaway allocation; a result (exit 0) whose allocator state still equals the job's own snapshot, with frames
# left empty or marked unreadable where the damage is, and a warning line that says so.
#
# The core: the `history-all` job (tests/testbed/jobs: _record_memory_history(stacks="all"), Python and C++
# frames) on PyPI's torch 2.14.1 with CPython 3.11, gcore'd. One block's torch::CapturedTraceback is found by
# following the allocator's pointers (the layout `memprof info -o` writes, core_poke), and damaged in place, one
# case at a time (each poke is undone after its run): the shared_ptr dangling or at another object; its frame
# vectors out of order or claiming 2^36 frames; Python frames without their unwinder; a PyFrame's code object
# in no memory or at something else, its lasti out of range; the code object's name, file and line table
# pointing elsewhere, the table claiming a terabyte, or full of garbage; random byte flips over the traceback,
# its frames and the code object. And the interpreter misread: memprof told (through --solib-path and a copy of
# libpython whose Py_Version says so) that the job ran CPython 3.12 (another version's code-object layout), or
# 3.99 (one it cannot read).
#
# Env: MEMPROF (the binary; run it under ASan+UBSan to check memory errors too), CORE_POKE (default: next to
# MEMPROF under tests/walker), MEMPROF_CORRUPT_SEEDS (flip runs, default 24), MEMPROF_TESTBED_SKIP=1 (77).
# Exit 77 when the test bed cannot run the job here. Prints one line per check and "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
poke=${CORE_POKE:-$(dirname "$memprof")/tests/walker/core_poke}
check=$top/tests/walker/partial_check.py
compare=$top/tests/walker/compare_truth.py
seeds=${MEMPROF_CORRUPT_SEEDS:-24}
max_kb=${MEMPROF_CORRUPT_MAX_KB:-204800}
tmo=120
mp_args=()
# shellcheck source=../walker/corrupt_lib.sh
. "$top/tests/walker/corrupt_lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-ctxcorrupt.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- the job's core, its truth, and the undamaged walk (frames equal to the job's own)
"$top/tests/testbed/jobs/run.sh" history-all pypi-2.14.1 gcore "$work/job" >"$work/job.vars" 2>"$work/job.log"
case $? in
0) ;;
77) not_run "$(tail -1 "$work/job.log")" ;;
*) bad "the history-all job failed: $(tail -3 "$work/job.log" | tr '\n' ' ')"; finish; exit 1 ;;
esac
core=$work/job/core truth=$work/truth.json
python3 "$top/tests/walker/job_truth.py" "$work/job" "$memprof" >"$truth" 2>"$work/truth.err" ||
	{ bad "no truth from the job's pickle: $(head -c 200 "$work/truth.err")"; exit 1; }
base_mem=0
run_mp base "$core"
if [ $rc -ne 0 ] || [ -s "$work/base.err" ] ||
	! python3 "$compare" --frames compare "$truth" "$work/base.json" >"$work/base.cmp" 2>&1; then
	bad "the undamaged core does not walk to the job's own snapshot: $(head -c 300 "$work/base.err") $(tail -3 "$work/base.cmp")"
	finish
	exit 1
fi
base_mem=$mem
ok "undamaged core: frames equal the job's own (peak RSS $mem KB; $(grep '^frames' "$work/base.cmp" | cut -c22-))"

# ---- one block's CapturedTraceback, its first Python frame, that frame's code object and line table
find_allocator "$core"
table=$((da + $(L DeviceCachingAllocator.active_blocks)))
entries=$(peek "$core" $table)
slots=$(($(peek "$core" $((table + 8))) + 1 + (($(peek "$core" $((table + 16))) >> 8) & 0xff)))
o_ctx=$(L Block.context_when_allocated)
block='' ct=''
while read -r dist; read -r b; do
	[ $((dist & 0x80)) -eq 0 ] && [ "$b" != 0 ] || continue
	c=$(peek "$core" $((b + o_ctx)))
	# one with Python and C++ frames
	[ "$c" != 0x0 ] && [ "$(peek "$core" $((c + 8)))" != "$(peek "$core" $((c + 16)))" ] &&
		[ "$(peek "$core" $((c + 32)))" != "$(peek "$core" $((c + 40)))" ] || continue
	block=$b ct=$c
	break
done < <(peek "$core" "$entries" $((2 * slots)))
[ -n "$ct" ] || { bad "no active block with a Python and C++ traceback"; finish; exit 1; }
pyframes=$(peek "$core" $((ct + 8)))
code=$(peek "$core" "$pyframes")
# CPython 3.11's PyCodeObject: co_filename 112, co_name 120, co_linetable 136 (src/python/py_layouts.c)
linetable=$(peek "$core" $((code + 136)))

# case LABEL PATTERN ADDR VALUE: poke VALUE at ADDR, walk, judge, undo. The allocator state must still be the
# job's; frames may differ only where the damage is, and a warning matching PATTERN must say so ('' for none).
case_ctx() {
	poked "$1" "$core" "$3" "$4" run_mp_core || return
	verdict "$1" "$name" ${2:+--pattern "$2"} --consistent || return
	same_state "$1" "$name" && ok "$1: $outcome"
}

# run_mp_core NAME: run_mp on the core (poked's command).
run_mp_core() { run_mp "$1" "$core"; }

# The allocator's part of the result equals the truth (segments, blocks, trace entries, statistics, settings).
same_state() {
	python3 "$compare" "$truth" "$work/$2.json" >"$work/$2.cmp" 2>&1 && return 0
	bad "$1: the allocator state differs: $(grep -m3 'differ\|truth' "$work/$2.cmp" | tr '\n' ' ')"
	return 1
}

undecoded='allocation contexts could not be decoded'
unreadable='code objects memprof could not read'
case_ctx "context -> unmapped (dangling shared_ptr)" "$undecoded" $((block + o_ctx)) 0xdead00000000
case_ctx "context -> the allocator object (another vtable)" "$undecoded" $((block + o_ctx)) "$da"
case_ctx "context -> misaligned into its own traceback" "$undecoded" $((block + o_ctx)) $((ct + 3))
case_ctx "Python frames: end before begin" "$undecoded" $((ct + 16)) $((pyframes - 16))
case_ctx "Python frames: 2^36 claimed" "$undecoded" $((ct + 16)) $((pyframes + (1 << 40)))
case_ctx "Python frames: begin unmapped" "$undecoded" $((ct + 8)) 0xdead00000000
case_ctx "C++ frames: end before begin" "$undecoded" $((ct + 40)) $(($(peek "$core" $((ct + 32))) - 8))
case_ctx "C++ frames: size not a multiple of 8" "$undecoded" $((ct + 40)) $(($(peek "$core" $((ct + 40))) + 3))
case_ctx "TorchScript frames: 2^36 claimed" "$undecoded" $((ct + 64)) $(((1 << 40) + 8))
case_ctx "Python frames without the unwinder" "$undecoded" $((ct + 80)) 0
case_ctx "PyFrame.code -> unmapped" "$unreadable" "$pyframes" 0x10
case_ctx "PyFrame.code -> the traceback (not a code object)" "$unreadable" "$pyframes" "$ct"
case_ctx "PyFrame.lasti past the code" '' $((pyframes + 8)) 0x7fffffff
case_ctx "PyFrame.lasti negative" '' $((pyframes + 8)) 0xfffffff9
case_ctx "co_filename -> unmapped" "$unreadable" $((code + 112)) 0xdead00000000
case_ctx "co_name -> the code object itself" "$unreadable" $((code + 120)) "$code"
case_ctx "co_linetable -> the code object (not bytes)" "$unreadable" $((code + 136)) "$code"
case_ctx "co_linetable claims 2^40 bytes" "$unreadable" $((linetable + 16)) $((1 << 40))
case_ctx "co_linetable: garbage entries" '' $((linetable + 32)) 0xffffffffffffffff
case_ctx "co_linetable: zero-length entries" '' $((linetable + 32)) 0x8080808080808080

# ---- random byte flips over the traceback, its Python frames and the code object
f_fail=0 f_res=0 f_warn=0
for s in $(seq 1 "$seeds"); do
	case $((s % 3)) in
	0) at=$ct len=88 ;;
	1) at=$pyframes len=64 ;;
	2) at=$code len=160 ;;
	esac
	# flipped in place and put back afterwards: a copy of a 2 GB core per seed would cost more than the runs
	mapfile -t saved < <(peek "$core" "$at" $((len / 8)))
	"$poke" "$core" flip "$s" 4 "$at" "$len"
	run_mp flip "$core"
	for k in "${!saved[@]}"; do "$poke" "$core" poke $((at + 8 * k)) "${saved[k]}"; done
	if verdict "byte flips, seed $s" flip --consistent >"$work/flip.verdict" && same_state "byte flips, seed $s" flip; then
		f_res=$((f_res + 1))
		[ -s "$work/flip.err" ] && f_warn=$((f_warn + 1))
	else
		f_fail=$((f_fail + 1))
		[ $f_fail -le 5 ] && cat "$work/flip.verdict"
	fi
done
fail=$((fail - f_fail))
[ $f_fail -eq 0 ] && ok "byte flips ($seeds seeds over the traceback, its frames, the code object): $f_res results ($f_warn with warnings)" ||
	bad "byte flips: $f_fail of $seeds seeds crashed, hung, answered unclearly or changed the allocator state"

# ---- the interpreter misread: a copy of libpython whose Py_Version says another version, found first
pyline=$(sed -n 's/^python: *CPython [0-9.]* in \(.*\) (load bias .*/\1/p' "$work/info.out")
if [ -z "$pyline" ] || [ ! -f "$pyline" ]; then
	bad "memprof info names no CPython file: $(grep '^python' "$work/info.out")"
else
	# 3.12 reads 3.11's str objects 8 bytes early (3.12 dropped wstr): names start with NUL, which no code
	# object has, and are refused; 3.99 is refused at once. Either way the frames say so.
	for v in 3.12:0x030c00f0:'another CPython version' 3.99:0x036300f0:'cannot read'; do
		pat=${v#*:*:} v=${v%:*}
		dir=$work/py${v%%:*} # (no colon: --solib-path is a list)
		mkdir -p "$dir"
		cp "$pyline" "$dir/"
		if ! python3 - "$dir/${pyline##*/}" "${v#*:}" <<'EOF'; then
import subprocess, sys
path, value = sys.argv[1], int(sys.argv[2], 16)
syms = subprocess.run(["readelf", "-Ws", "--dyn-syms", path], capture_output=True, text=True, check=True).stdout
addr = next(int(l.split()[1], 16) for l in syms.splitlines() if l.split()[-1:] == ["Py_Version"])
loads = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
for l in loads.splitlines():
    f = l.split()
    if f[:1] == ["LOAD"] and int(f[2], 16) <= addr < int(f[2], 16) + int(f[4], 16):
        with open(path, "r+b") as out:
            out.seek(int(f[1], 16) + addr - int(f[2], 16))
            out.write(value.to_bytes(4, "little"))
        sys.exit(0)
sys.exit("Py_Version is in no LOAD segment")
EOF
			bad "cannot patch Py_Version in a copy of $pyline"
			continue
		fi
		run_mp "py${v%%:*}" "$core" --solib-path "$dir"
		verdict "CPython ${v%%:*} claimed for a 3.11 job" "py${v%%:*}" ${pat:+--pattern "$pat"} --consistent &&
			same_state "CPython ${v%%:*} claimed" "py${v%%:*}" && ok "CPython ${v%%:*} claimed for a 3.11 job: $outcome"
	done
fi

finish

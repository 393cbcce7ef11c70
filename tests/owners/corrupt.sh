#!/usr/bin/env bash
# corrupt.sh - memprof owners on a real Python job's core whose Python heap is damaged: never a crash, a hang or a
# runaway allocation; either a result (exit 0, the JSON whole) with a warning that says what could not be read,
# or one clear error line.
#
# The core: the `training` job (tests/testbed/jobs) on PyPI's torch 2.14.1 with CPython 3.11, gcore'd; its
# manifest gives each tensor's Python object (id()). Damaged in place, one case at a time (each poke undone after
# its run): a tensor's TensorImpl pointer dangling or at another tensor's, a TensorImpl's way back to its Python
# object, its storage, its rank, its dtype; a storage's size; a tensor's ob_type; the GC's link of a tensor;
# random byte flips over tensors, their TensorImpls and the objects around them (modules, dicts, lists).
#
# Env: MEMPROF (the binary; under ASan+UBSan memory errors count too), CORE_POKE (default: next to MEMPROF under
# tests/walker), MEMPROF_CORRUPT_SEEDS (flip runs, default 24), MEMPROF_TESTBED_SKIP=1 (77).
# Exit 77 when the test bed cannot run the job here. Prints one line per check and "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
poke=${CORE_POKE:-$(dirname "$memprof")/tests/walker/core_poke}
seeds=${MEMPROF_CORRUPT_SEEDS:-24}
max_kb=${MEMPROF_CORRUPT_MAX_KB:-204800}
tmo=120
check=$top/tests/walker/partial_check.py
truth=
mp_args=()
# shellcheck source=../walker/corrupt_lib.sh
. "$top/tests/walker/corrupt_lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-ownerscorrupt.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_owners NAME: memprof owners on the core, timed out, its peak RSS measured (what verdict judges).
run_owners() {
	local name=$1
	rm -f "$work/$name.json" "$work/$name.mem"
	if [ ${#timer[@]} -gt 0 ]; then
		"${timer[@]}" "$work/$name.mem" timeout -k 5 "$tmo" "$memprof" owners "$core" --format json \
			>"$work/$name.json" 2>"$work/$name.err"
	else
		timeout -k 5 "$tmo" "$memprof" owners "$core" --format json >"$work/$name.json" 2>"$work/$name.err"
	fi
	rc=$?
	mem=$(tail -n 1 "$work/$name.mem" 2>/dev/null)
	case $mem in '' | *[!0-9]*) mem=0 ;; esac
}

"$top/tests/testbed/jobs/run.sh" training pypi-2.14.1 gcore "$work/job" >"$work/job.vars" 2>"$work/job.log"
case $? in
0) ;;
77) not_run "$(tail -1 "$work/job.log")" ;;
*) bad "the training job failed: $(tail -3 "$work/job.log" | tr '\n' ' ')"; finish; exit 1 ;;
esac
core=$work/job/core
base_mem=0
run_owners base
if [ $rc -ne 0 ] || ! python3 "$here/check.py" "$work/job" "$work/base.json" >"$work/base.check" 2>&1; then
	bad "the undamaged core's owners differ from the job's manifest: $(head -c 300 "$work/base.err") $(tail -3 "$work/base.check")"
	finish
	exit 1
fi
base_mem=$mem
ok "undamaged core: owners equal the job's manifest (peak RSS $mem KB; $(tail -1 "$work/base.check"))"

# Two parameters' Python objects and their TensorImpls, storages (PyPI 2.14's layout: cdata at 16; TensorImpl:
# storage 16, pyobj 48, rank 56, dtype 160; StorageImpl: nbytes 48; src/torch/torch_layouts.c).
read -r t1 t2 < <(python3 -c 'import json, sys
m = [e for e in json.load(open(sys.argv[1])) if e["kind"] == "parameter"]
print(m[3]["id"], m[4]["id"])' "$work/job/manifest.json")
impl=$(peek "$core" $((t1 + 16)))
impl2=$(peek "$core" $((t2 + 16)))
storage=$(peek "$core" $((impl + 16)))

# case LABEL PATTERN ADDR VALUE: poke, run, undo, judge: a result with a warning matching PATTERN, or an error.
case_owners() {
	poked "$1" "$core" "$3" "$4" run_owners || return
	verdict "$1" "$name" ${2:+--pattern "$2"} && ok "$1: $outcome"
}

notread='not read'
case_owners "tensor -> TensorImpl unmapped" "$notread" $((t1 + 16)) 0xdead00000000
case_owners "tensor -> another tensor's TensorImpl" "hold no live tensor" $((t1 + 16)) "$impl2"
case_owners "TensorImpl's Python object elsewhere" "hold no live tensor" $((impl + 48)) "$t2"
case_owners "TensorImpl's storage unmapped" "$notread" $((impl + 16)) 0xdead00000000
case_owners "TensorImpl's rank 2^40" "$notread" $((impl + 56)) $((1 << 40))
case_owners "TensorImpl's dtype unknown" "$notread" $((impl + 160)) 0xffff
case_owners "StorageImpl's size 2^60" "$notread" $((storage + 48)) $((1 << 60))
case_owners "tensor's ob_type -> the TensorImpl" "no tensor memprof could read" $((t1 + 8)) "$impl"
case_owners "tensor's GC link -> unmapped" '' $((t1 - 16)) 0xdead00000000
case_owners "tensor's GC link -> itself" '' $((t1 - 16)) $((t1 - 16))

# ---- random byte flips over a tensor, its TensorImpl, and the 64 KiB of heap around it (modules, dicts, lists)
f_res=0 f_err=0 f_warn=0
for s in $(seq 1 "$seeds"); do
	case $((s % 3)) in
	0) at=$((t1 - 16)) len=48 count=4 ;;
	1) at=$impl len=176 count=6 ;;
	2) at=$((t1 - 32768)) len=65536 count=64 ;;
	esac
	# flipped in place and put back afterwards: a copy of a 2 GB core per seed costs more than the runs
	"$poke" "$core" peek "$at" $(((len + 7) / 8)) >"$work/saved" || { bad "flip $s: cannot read $at"; continue; }
	"$poke" "$core" flip "$s" "$count" "$at" "$len" >/dev/null 2>&1
	run_owners "f$s"
	"$poke" "$core" load "$at" <"$work/saved"
	verdict "flip seed $s ($count bytes of $len at $at)" "f$s" || continue
	case $outcome in error:*) f_err=$((f_err + 1)) ;; *) f_res=$((f_res + 1)) ;; esac
	grep -q '^memprof: warning: ' "$work/f$s.err" && f_warn=$((f_warn + 1))
done
ok "$seeds flip runs: $f_res results ($f_warn with warnings), $f_err clear errors; no crash, hang or runaway memory"
run_owners after
if [ $rc -eq 0 ] && python3 "$here/check.py" "$work/job" "$work/after.json" >/dev/null 2>&1; then
	ok "the core, its bytes put back, reads as before"
else
	bad "the core does not read as before after the flips were undone"
fi
finish

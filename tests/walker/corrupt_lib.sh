# corrupt_lib.sh - what the damaged-core tests share (sourced by tests/walker/corrupt.sh and
# tests/context/corrupt.sh): checks counted, one memprof run timed out and measured, its verdict, and the
# allocator's addresses in a core found through the layout `memprof info -o` writes.
# The sourcing script sets: memprof, poke (core_poke), check (partial_check.py), tmo, max_kb, work, truth;
# base_mem once the undamaged run is measured; mp_args, options every memprof run gets (may be empty).
# Sourcing it exits 77 when the test bed is skipped (MEMPROF_TESTBED_SKIP=1) or core_poke is not built.

# shellcheck source=../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	not_run "MEMPROF_TESTBED_SKIP=1"
fi
[ -x "$poke" ] || not_run "no core_poke at $poke (make check builds it)"

if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f %M -o); else timer=(); fi

# run_mp NAME ARGS...: memprof snapshot ARGS, timed out, its peak RSS measured. Sets rc, mem; leaves
# $work/NAME.err and $work/NAME.json.
run_mp() {
	local name=$1
	shift
	rm -f "$work/$name.json" "$work/$name.mem"
	if [ ${#timer[@]} -gt 0 ]; then
		"${timer[@]}" "$work/$name.mem" timeout -k 5 "$tmo" "$memprof" snapshot "$@" "${mp_args[@]}" --stats \
			-o "$work/$name.json" >/dev/null 2>"$work/$name.err"
	else
		timeout -k 5 "$tmo" "$memprof" snapshot "$@" "${mp_args[@]}" --stats -o "$work/$name.json" >/dev/null 2>"$work/$name.err"
	fi
	rc=$?
	mem=$(tail -n 1 "$work/$name.mem" 2>/dev/null)
	case $mem in '' | *[!0-9]*) mem=0 ;; esac
}

# verdict LABEL NAME [--pattern RE] [--consistent] [CHECK ARGS...]: judge the last run_mp.
# Errors: exit 1 or 2, exactly one line that is not a warning, "memprof: ...". Results: exit 0, valid JSON;
# with --consistent, checked by partial_check.py (CHECK ARGS; no warnings -> it must equal the truth).
# Sets outcome to "error: LINE" or "result: ..." for the report.
verdict() {
	local label=$1 name=$2 pattern='' consistent=0 errs lines msg res
	shift 2
	[ "${1:-}" = --pattern ] && { pattern=$2; shift 2; }
	[ "${1:-}" = --consistent ] && { consistent=1; shift; }
	errs=$work/$name.err
	outcome=''
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		bad "$label: no answer in $tmo s (hang?)"
		return 1
	fi
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|core dumped' "$errs" || [ $rc -ge 128 ]; then
		bad "$label: crashed (exit $rc): $(grep -m3 -E 'ERROR|runtime error|#[0-3] ' "$errs" | tr '\n' ' ' | cut -c1-400)"
		return 1
	fi
	if [ "$mem" -gt $((base_mem + max_kb)) ]; then
		bad "$label: peak RSS $mem KB (undamaged: $base_mem KB)"
		return 1
	fi
	lines=$(grep -vc '^memprof: warning: ' "$errs")
	case $rc in
	1 | 2)
		msg=$(grep -v '^memprof: warning: ' "$errs")
		if [ "$lines" -ne 1 ] || [ "${msg#memprof: }" = "$msg" ]; then
			bad "$label: exit $rc without one clear error line: $(head -c 400 "$errs")"
			return 1
		fi
		if [ -n "$pattern" ] && ! grep -qE "$pattern" <<<"$msg"; then
			bad "$label: error does not say /$pattern/: $msg"
			return 1
		fi
		outcome="error: $msg"
		;;
	0)
		# (partial_check.py parses the JSON; without it, a complete file is enough)
		if [ "$lines" -ne 0 ] || [ "$(tail -c 2 "$work/$name.json" 2>/dev/null | tr -d '\n')" != '}' ]; then
			bad "$label: exit 0 but other output or no JSON: $(head -c 400 "$errs")"
			return 1
		fi
		if [ -n "$pattern" ] && ! grep -qE "$pattern" "$errs"; then
			bad "$label: result without a warning /$pattern/: $(head -c 300 "$errs")"
			return 1
		fi
		res="$(grep -c '^memprof: warning: ' "$errs") warning(s)"
		if [ $consistent -eq 1 ]; then
			if [ -s "$errs" ]; then
				res="$res: $(python3 "$check" "$truth" "$work/$name.json" "$@" 2>&1)" || {
					bad "$label: partial result: $res"
					return 1
				}
			else
				res="$res: $(python3 "$check" "$truth" "$work/$name.json" 2>&1)" || {
					bad "$label: result without warnings that is not the truth: $res"
					return 1
				}
			fi
		fi
		outcome="result, $res; $(head -n 1 "$errs" | cut -c1-200)"
		;;
	*)
		bad "$label: exit $rc: $(head -c 400 "$errs")"
		return 1
		;;
	esac
	return 0
}

# poked LABEL CORE ADDR VALUE CMD...: the u64 at ADDR of CORE set to VALUE while CMD runs, then put back; a
# case numbered in n_case, its run named k<n> ($name). Returns 1 (counted bad) when ADDR cannot be read or written.
n_case=0
poked() {
	local label=$1 core=$2 addr=$3 value=$4 old
	shift 4
	n_case=$((n_case + 1))
	name=k$n_case
	old=$(peek "$core" "$addr") || { bad "$label: cannot read $addr"; return 1; }
	"$poke" "$core" poke "$addr" "$value" || { bad "$label: cannot poke $addr"; return 1; }
	"$@" "$name"
	"$poke" "$core" poke "$addr" "$old"
}

# find_allocator CORE: the layout of CORE's walk in $work/layout (L KEY reads it), the NativeCachingAllocator
# object in $obj and device 0's DeviceCachingAllocator in $da.
L() { awk -v k="$1" '$1 == k { print $2 }' "$work/layout"; }
peek() { "$poke" "$1" peek "$2" "${3:-1}"; }
find_allocator() {
	local core=$1
	"$memprof" info "$core" -o "$work/layout" >"$work/info.out" 2>&1 || { bad "memprof info: $(head -1 "$work/info.out")"; exit 1; }
	obj=$(sed -n 's/^backend: .* at \(0x[0-9a-f]*\).*/\1/p' "$work/info.out")
	da=$(peek "$core" "$(peek "$core" $((obj + $(L NativeCachingAllocator.device_allocator))))")
	[ -n "$obj" ] && [ -n "$da" ] || { bad "cannot find the device allocator in $core"; exit 1; }
}

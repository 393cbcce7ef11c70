#!/usr/bin/env bash
# truth.sh - memprof's walk of PyTorch's real caching allocator against the allocator's own snapshot().
#
# For each c10 variant and scenario of the test bed (tests/testbed/target.sh), memprof rebuilds the snapshot from
# a gcore core, a kernel core and the live process, and compare_truth.py checks it field by field against the
# truth (segments, blocks, states, sizes, streams, pool ids, device stats, settings, trace entries). Then
# `memprof segsum` on the core must print what PyTorch's own _memory_viz.py prints for memprof's exported pickle.
# Stripped layout mutants must be refused by every built-in table (their layout is no release's), then walk with
# a layout memprof infers (equal to the truth) or be refused in one line, and walk with the layout `memprof info
# -o` wrote from their DWARF twin.
#
# Env: MEMPROF (the binary), MEMPROF_WALK_VARIANTS (default: every c10 build; PyPI's releases are versions.sh's),
# MEMPROF_WALK_SCENARIOS (default: every scenario), MEMPROF_WALK_MODES (default "gcore kernel live"). Prints one
# line per check and "N passed, M failed"; exit 0 when all passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
target=$top/tests/testbed/target.sh
compare=$here/compare_truth.py
oracle_dir=${MEMPROF_ORACLE_DIR:-$HOME/.cache/memprof/oracle}
variants=${MEMPROF_WALK_VARIANTS:-$("$target" --list c10-variants)}
scenarios=${MEMPROF_WALK_SCENARIOS:-$("$target" --list scenarios)}
modes=${MEMPROF_WALK_MODES:-"gcore kernel live"}

# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-walk.XXXXXX")
cleanup() {
	for d in "$work"/*/*/live; do
		[ -f "$d/pid" ] && "$target" --stop "$d" >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap cleanup EXIT

"$top/tests/oracle/fetch-oracle.sh" >/dev/null 2>&1 || true
memviz=$oracle_dir/trixie/_memory_viz.py

# Walk TARGET (a core, or --pid N) and compare with the truth. Extra args go to memprof.
check_walk() { # LABEL DIR TRUTH ARGS...
	local label=$1 dir=$2 truth=$3
	shift 3
	if ! "$memprof" snapshot "$@" --stats -o "$dir/mp.json" 2>"$dir/snapshot.err"; then
		bad "$label: memprof snapshot: $(head -c 300 "$dir/snapshot.err")"
		return 1
	fi
	# (compare_truth.py knows that a full ring, as in the history scenario, lost its oldest entry to the SNAPSHOT
	# entry snapshot() added: the truth names the ring's capacity.)
	if python3 "$compare" --ring-max truth "$truth" "$dir/mp.json" >"$dir/compare.out" 2>&1; then
		ok "$label: equal to the truth ($(grep -m1 '^segments' "$dir/compare.out" | sed 's/^segments: *//'))"
	else
		bad "$label: differs from the truth:"
		sed 's/^/    /' "$dir/compare.out" | head -20
		return 1
	fi
}

# memprof segsum on the target == PyTorch's _memory_viz.py stats on memprof's exported pickle.
check_oracle() { # LABEL DIR ARGS...
	local label=$1 dir=$2
	shift 2
	[ -f "$memviz" ] || { bad "$label: no _memory_viz.py oracle at $memviz"; return; }
	if "$memprof" snapshot "$@" -o "$dir/mp.pickle" 2>"$dir/oracle.err" &&
		"$memprof" segsum "$@" >"$dir/stats.mp" 2>>"$dir/oracle.err" &&
		python3 "$memviz" stats "$dir/mp.pickle" >"$dir/stats.py" 2>&1 &&
		cmp -s "$dir/stats.mp" "$dir/stats.py"; then
		ok "$label: memprof stats == _memory_viz.py stats of memprof's pickle"
	else
		bad "$label: memprof stats differs from _memory_viz.py on memprof's pickle"
		head -3 "$dir/oracle.err" | sed 's/^/    memprof: /'
		diff "$dir/stats.mp" "$dir/stats.py" 2>&1 | head -5 | sed 's/^/    /'
	fi
}

for variant in $variants; do
	if ! layout=$("$here/twin_layout.sh" "$variant" "$work/layouts/$variant"); then
		bad "$variant: no layout from its DWARF twin: $(cat "$work/layouts/$variant"/*.err 2>/dev/null | tail -1)"
		continue
	fi
	largs=()
	[ -n "$layout" ] && largs=(--layout "$layout")
	for scenario in $scenarios; do
		for mode in $modes; do
			dir=$work/$variant/$scenario/$mode
			mkdir -p "$dir"
			label="$variant/$scenario/$mode"
			"$target" "$scenario" "$variant" "$mode" "$dir" >"$dir/target.out" 2>"$dir/target.err"
			rc=$?
			if [ $rc -eq 77 ]; then
				echo "not run: $label: $(tail -1 "$dir/target.err")"
				continue
			elif [ $rc -ne 0 ]; then
				bad "$label: the test bed could not make it: $(tail -1 "$dir/target.err")"
				continue
			fi
			if [ "$mode" = live ]; then
				what=(--pid "$(cat "$dir/pid")")
			else
				what=("$dir/core")
			fi
			check_walk "$label" "$dir" "$dir/truth.json" "${what[@]}" "${largs[@]}"
			# Once: the same process held still with ptrace while it is read.
			if [ "$mode" = live ] && [ "$scenario" = training ]; then
				check_walk "$label --stop" "$dir" "$dir/truth.json" "${what[@]}" --stop "${largs[@]}"
				# Just after the detach the process may still be on its way back into its sleep (R).
				for _ in 1 2 3 4 5 6 7 8 9 10; do
					state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$(cat "$dir/pid")/status")
					[ "$state" = S ] && break
					sleep 0.2
				done
				[ "$state" = S ] && ok "$label: running again after --stop (state $state)" ||
					bad "$label: after --stop the process is in state '$state'"
			fi
			# The oracle once per variant and scenario (the same state in every mode).
			[ "$mode" = "${modes%% *}" ] && check_oracle "$label" "$dir" "${what[@]}" "${largs[@]}"
			[ "$mode" = live ] && "$target" --stop "$dir" >/dev/null 2>&1
		done
	done
	# A stripped mutant is no release: every built-in table must be refused by the self-check; then memprof
	# infers a layout (and the walk must equal the truth) or refuses in one line.
	case $variant in stripped-mutant-*)
		dir=$work/$variant/oom/${modes%% *}
		if [ -f "$dir/core" ]; then
			if "$memprof" snapshot "$dir/core" --stats -o "$dir/inferred.json" 2>"$dir/refused.err"; then
				if ! grep -q 'walked with a layout inferred from' "$dir/refused.err"; then
					bad "$variant: a built-in table was accepted for a layout no release has"
				elif python3 "$compare" --ring-max truth "$dir/truth.json" "$dir/inferred.json" >"$dir/inferred.cmp" 2>&1
				then
					ok "$variant: no built-in table fits; the layout inferred walks equal to the truth" \
						"($(sed -n 's/.*walked with a layout \(inferred from [^)]*)\).*/\1/p' "$dir/refused.err"))"
				else
					bad "$variant: an inferred layout gave a WRONG walk: $(grep -m3 ':.*truth' "$dir/inferred.cmp")"
				fi
			elif [ "$(wc -l <"$dir/refused.err")" -eq 1 ] && grep -q 'no known layout fits' "$dir/refused.err"; then
				ok "$variant: built-in tables refused, no layout inferred: $(cut -c1-160 "$dir/refused.err")"
			else
				bad "$variant: refusal is not one clear line: $(head -c 300 "$dir/refused.err")"
			fi
		fi
		;;
	esac
done

finish

#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# checkpoints.sh - named snapshots and `memprof compare` across two stops of one process under gdb.
#
# The driver's checkpoint2 mode stops at memprof_checkpoint(), does known work (empties the cache, allocates
# 3 MiB and 4 KiB, allocates and frees 5 MiB), writes a second truth and stops again. At each stop gdb takes a
# named snapshot (`memprof snapshot take a` / `b`) and saves it; checked:
#   - each saved snapshot equals the allocator's own snapshot() at that stop (the two truths), field by field;
#   - `memprof compare a b` names exactly the segments and blocks that changed between the truths
#     (compare_check.py), and its segment part is the CLI's `memprof compare` of the two saved files;
#   - `compare a now` at the second stop equals `compare a b`; `snapshot list` names both; a dropped name is an
#     error of one line.
# Variants: MEMPROF_GDB_VARIANTS (default all; debian-2.6 is not run: its driver runs under another loader, where
# gdb has no symbols of it to stop at; commands.sh attaches to it instead). A stripped mutant walks with its DWARF
# twin's layout (`set memprof layout`). Scenarios: MEMPROF_GDB_SCENARIOS (default all but huge).
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

variants=${MEMPROF_GDB_VARIANTS:-$all_variants}
scenarios=${MEMPROF_GDB_SCENARIOS:-${all_scenarios/ huge/}}
scratch memprof-gdb-cp

for variant in $variants; do
	stoppable_variant "$variant" || continue
	for scenario in $scenarios; do
		dir=$work/$variant/$scenario
		label=$variant/$scenario
		mkdir -p "$dir"
		layout_setting >"$dir/setup.gdb"
		(cd "$dir" && mgdb -x "$dir/setup.gdb" -ex 'break memprof_checkpoint' -ex run \
			-ex "mp-capture $dir/take.a memprof snapshot take a" \
			-ex "mp-capture $dir/save.a memprof snapshot save a $dir/a.json --format json" \
			-ex continue \
			-ex "mp-capture $dir/take.b memprof snapshot take b" \
			-ex "mp-capture $dir/save.b memprof snapshot save b $dir/b.json" \
			-ex "mp-capture $dir/cmp memprof compare a b" \
			-ex "mp-capture $dir/cmp.now memprof compare a now" \
			-ex "mp-capture $dir/list memprof snapshot list" \
			-ex "mp-capture $dir/drop memprof snapshot drop a" \
			-ex "mp-capture $dir/dropped memprof compare a b" \
			-ex kill --args "$driver" "$scenario" checkpoint2 --truth "$dir/truth.json") >"$dir/gdb.out" 2>&1
		if [ ! -s "$dir/truth.json.2" ] || [ ! -s "$dir/cmp" ]; then
			bad "$label: no second stop or no compare:"
			sed 's/^/    /' "$dir/cmp.err" 2>/dev/null
			tail -5 "$dir/gdb.out" | sed 's/^/    /'
			continue
		fi
		for x in a b; do
			truth=$dir/truth.json
			[ $x = b ] && truth=$dir/truth.json.2
			saved_equals_truth "$label: snapshot $x (stop $x)" "$truth" "$dir/$x.json" "$dir/save.$x.err"
		done
		if python3 "$gdb_here/compare_check.py" "$dir/truth.json" "$dir/truth.json.2" "$dir/cmp" >"$dir/check.out" 2>&1; then
			ok "$label: compare a b: $(cat "$dir/check.out")"
		else
			bad "$label: compare a b is not what changed:"
			sed 's/^/    /' "$dir/check.out"
		fi
		"$memprof" compare "$dir/a.json" "$dir/b.json" >"$dir/cli.cmp" 2>&1
		sed '/^blocks:$/,$d' "$dir/cmp" >"$dir/cmp.segments"
		if cmp -s "$dir/cmp.segments" "$dir/cli.cmp"; then
			ok "$label: its segment part == memprof compare of the saved files"
		else
			bad "$label: its segment part differs from memprof compare of the saved files:"
			diff "$dir/cmp.segments" "$dir/cli.cmp" | head -5 | sed 's/^/    /'
		fi
		cmp -s "$dir/cmp" "$dir/cmp.now" && ok "$label: compare a now == compare a b" ||
			bad "$label: compare a now differs from compare a b"
		if grep -q '^a ' "$dir/list" && grep -q '^b ' "$dir/list"; then ok "$label: snapshot list names a and b"; else
			bad "$label: snapshot list: $(head -c 200 "$dir/list")"; fi
		if one_line "$dir/dropped.err"; then ok "$label: a dropped snapshot: $(cat "$dir/dropped.err")"; else
			bad "$label: compare with a dropped snapshot: $(head -c 300 "$dir/dropped.err" "$dir/dropped" 2>&1)"; fi
	done
done
finish

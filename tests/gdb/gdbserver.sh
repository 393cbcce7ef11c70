#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# gdbserver.sh - the memprof gdb commands on a remote target: gdb drives the test bed's driver through Debian's
# gdbserver (`target remote | gdbserver - DRIVER ...`), so the process is not gdb's own child and memprof must read
# it through gdb's memory access (the read-callback target), as for any gdbserver or other non-native target.
# At memprof_checkpoint(), for each variant (MEMPROF_GDB_VARIANTS, default "debug stripped-oldabi": the read path
# does not depend on the build, which commands.sh covers whole) and scenario (MEMPROF_GDB_SCENARIOS, default all
# but huge), checked:
#   - memprof chose the gdb-read target (maintenance memprof target says "gdb"), and needed reads through gdb;
#   - `memprof segsum` equals the CLI's `memprof segsum` of the allocator's own snapshot() (the truth);
#   - `memprof snapshot save` equals the truth field by field (compare_truth.py);
#   - the inferior's writable memory is unchanged by the commands (digests read through gdb before and after).
# Prints one line per check and "N passed, M failed". Not run (77) without gdbserver.
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"
command -v gdbserver >/dev/null || { echo "not run: no gdbserver (tests/setup-debian.sh installs it)"; exit 77; }

variants=${MEMPROF_GDB_VARIANTS:-"debug stripped-oldabi"}
scenarios=${MEMPROF_GDB_SCENARIOS:-${all_scenarios/ huge/}}
scratch memprof-gdbserver

for variant in $variants; do
	stoppable_variant "$variant" || continue
	for scenario in $scenarios; do
		dir=$work/$variant/$scenario
		label=$variant/$scenario
		mkdir -p "$dir"
		layout_setting >"$dir/setup.gdb"
		(cd "$dir" && mgdb -x "$dir/setup.gdb" \
			-ex "target remote | exec gdbserver - $driver $scenario checkpoint --truth $dir/truth.json" \
			-ex 'break memprof_checkpoint' -ex continue \
			-ex "mp-memsum $dir/mem.before" \
			-ex "mp-capture $dir/segsum memprof segsum" \
			-ex "mp-capture $dir/target maintenance memprof target" \
			-ex "mp-capture $dir/reads maintenance memprof reads" \
			-ex "mp-capture $dir/save memprof snapshot save now $dir/snapshot.json --format json" \
			-ex "mp-memsum $dir/mem.after" \
			-ex kill) >"$dir/gdb.out" 2>&1
		if [ ! -s "$dir/truth.json" ] || [ ! -s "$dir/target" ]; then
			bad "$label: no stop under gdbserver:"
			tail -5 "$dir/gdb.out" | sed 's/^/    /'
			continue
		fi
		if grep -q '^gdb ' "$dir/target" && [ "$(cat "$dir/reads")" -gt 0 ] 2>/dev/null; then
			ok "$label: read through gdb ($(cat "$dir/reads") reads)"
		else
			bad "$label: target '$(cat "$dir/target")', reads '$(cat "$dir/reads")' (want gdb and some)"
		fi
		cli segsum "$dir/truth.json" >"$dir/truth.stats" 2>&1
		if [ -s "$dir/segsum" ] && cmp -s "$dir/segsum" "$dir/truth.stats"; then
			ok "$label: memprof segsum == memprof segsum of the truth"
		else
			bad "$label: memprof segsum differs from memprof segsum of the truth: $(head -c 200 "$dir/segsum.err" 2>/dev/null)"
			diff "$dir/segsum" "$dir/truth.stats" 2>&1 | head -6 | sed 's/^/    /'
		fi
		saved_equals_truth "$label: memprof snapshot save" "$dir/truth.json" "$dir/snapshot.json" "$dir/save.err"
		[ -s "$dir/mem.before" ] && cmp -s "$dir/mem.before" "$dir/mem.after" &&
			ok "$label: the inferior's writable memory unchanged ($(wc -l <"$dir/mem.before") mappings)" ||
			bad "$label: the inferior's writable memory changed or was not read"
		grep -q 'Traceback\|Python Exception' "$dir/gdb.out" && bad "$label: a Python traceback in gdb's output"
	done
done
finish

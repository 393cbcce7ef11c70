#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# commands.sh - the memprof gdb commands on PyTorch's real caching allocator (the test bed), live and on cores.
#
# For each variant (MEMPROF_GDB_VARIANTS, default all nine builds: DWARF, stripped, both C++ ABIs, the layout
# mutants, Debian's released binary; a stripped mutant with `set memprof layout` and the CLI with `--layout`, the
# layout of its DWARF twin) and scenario (MEMPROF_GDB_SCENARIOS, default all nine), gdb stops the driver at
# memprof_checkpoint() (debian-2.6, whose driver runs under another loader so gdb has no symbols of it: gdb
# attaches to the sleeping driver instead) and runs `memprof segsum`, `summary`, `blocks` and `snapshot save` there,
# then takes a gcore. Checked:
#   - segsum and summary equal the CLI's `memprof segsum` and `memprof summary --device D` (each device in turn) of
#     that gcore byte for byte;
#   - the snapshot saved as JSON equals the allocator's own snapshot() (the truth) field by field;
#   - the saved pickle gives, through PyTorch's _memory_viz.py, the same `stats` (all but huge: too slow there);
#   - reading through gdb (`set memprof backend gdb`) gives the same segsum and blocks as memprof's own reads;
#   - the commands wrote nothing: digests of every writable mapping before and after are equal;
#   - gdb on the core (`gdb DRIVER CORE`) prints the same segsum, summary and blocks, read from the core, and the
#     same categories (the table, --sites and --segsum), segment_plot page and timeline as the CLI's (and trace_plot
#     --filter-freed leaves trace as it was); where the scenario records
#     history, the timeline of the real ring ends at the active blocks' requested bytes.
# Prints one line per check and "N passed, M failed".
set -uo pipefail
# shellcheck source=tests/gdb/lib.sh
. "$(dirname "$0")/lib.sh"

variants=${MEMPROF_GDB_VARIANTS:-$all_variants}
scenarios=${MEMPROF_GDB_SCENARIOS:-$all_scenarios}
oracle_dir=${MEMPROF_ORACLE_DIR:-$HOME/.cache/memprof/oracle}
"$top/tests/oracle/fetch-oracle.sh" >/dev/null 2>&1 || true
memviz=$oracle_dir/trixie/_memory_viz.py

scratch memprof-gdb

# The commands run at the stop (gdb command file), into files DIR/live.*.
live_commands() { # DIR
	layout_setting
	cat <<-GDB
		mp-memsum $1/mem.before
		mp-capture $1/live.segsum memprof segsum
		mp-capture $1/live.target maintenance memprof target
		mp-capture $1/live.stats memprof summary
		mp-capture $1/live.blocks memprof blocks
		mp-capture $1/live.save memprof snapshot save now $1/live.json --format json
		mp-capture $1/live.savep memprof snapshot save now $1/live.pickle
		set memprof backend gdb
		mp-capture $1/gdb.segsum memprof segsum
		mp-capture $1/gdb.blocks memprof blocks
		mp-capture $1/gdb.target maintenance memprof target
		set memprof backend auto
		mp-memsum $1/mem.after
		gcore $1/core
	GDB
}

for variant in $variants; do
	driver_of "$variant" || { bad "$variant: the test bed gives no driver"; continue; }
	variant_layout "$variant" || continue
	for scenario in $scenarios; do
		dir=$work/$variant/$scenario
		label=$variant/$scenario
		mkdir -p "$dir"
		live_commands "$dir" >"$dir/live.gdb"
		if [ -n "$loader" ]; then
			# gdb would take the loader for the program: attach to the sleeping driver instead.
			if ! "$target" "$scenario" "$variant" live "$dir" >"$dir/target.out" 2>"$dir/target.err"; then
				bad "$label: the test bed could not start it: $(tail -1 "$dir/target.err")"
				continue
			fi
			mgdb -p "$(cat "$dir/pid")" -x "$dir/live.gdb" -ex detach >"$dir/gdb.out" 2>&1
			"$target" --stop "$dir" >/dev/null 2>&1
			exe=$loader
		else
			(cd "$dir" && mgdb -ex 'break memprof_checkpoint' -ex run -x "$dir/live.gdb" -ex kill \
				--args "$driver" "$scenario" checkpoint --truth "$dir/truth.json") >"$dir/gdb.out" 2>&1
			exe=$driver
		fi
		if [ ! -s "$dir/core" ] || [ ! -s "$dir/truth.json" ]; then
			bad "$label: no stop, truth or gcore under gdb:"
			tail -5 "$dir/gdb.out" | sed 's/^/    /'
			continue
		fi
		grep -q '^pid ' "$dir/live.target" && grep -q '^gdb ' "$dir/gdb.target" ||
			bad "$label: live targets were '$(cat "$dir/live.target")' and '$(cat "$dir/gdb.target")', not pid and gdb"
		if grep -q 'Traceback\|Python Exception' "$dir/gdb.out"; then
			bad "$label: a Python traceback in gdb's output"
			grep -m3 -A3 'Traceback\|Python Exception' "$dir/gdb.out" | sed 's/^/    /'
		fi
		cli segsum "$dir/core" >"$dir/cli.stats" 2>"$dir/cli.stats.err"
		# `memprof summary` in gdb shows every device (`set memprof device all`); the CLI's summary one at a time.
		ndev=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["device_stats"]))' "$dir/truth.json")
		for d in $(seq 0 $((ndev - 1))); do
			cli summary "$dir/core" --device "$d" 2>>"$dir/cli.summary.err"
		done >"$dir/cli.summary"
		same "$label: live memprof segsum == memprof segsum on its gcore" "$dir/live.segsum" "$dir/cli.stats"
		same "$label: live memprof summary == memprof summary on its gcore" "$dir/live.stats" "$dir/cli.summary"
		same "$label: segsum read through gdb == read by memprof" "$dir/gdb.segsum" "$dir/live.segsum"
		same "$label: blocks read through gdb == read by memprof" "$dir/gdb.blocks" "$dir/live.blocks"
		same "$label: the inferior's writable memory unchanged by the commands" "$dir/mem.before" "$dir/mem.after"
		saved_equals_truth "$label: memprof snapshot save" "$dir/truth.json" "$dir/live.json" "$dir/live.save.err"
		if [ "$scenario" != huge ] && [ -f "$memviz" ]; then
			python3 "$memviz" stats "$dir/live.pickle" >"$dir/memviz.stats" 2>&1
			same "$label: _memory_viz.py stats of the saved pickle == memprof segsum" "$dir/memviz.stats" "$dir/live.segsum"
		fi
		# The core, as gdb loads it.
		layout_setting >"$dir/core.gdb"
		cat >>"$dir/core.gdb" <<-GDB
			mp-capture $dir/core.segsum memprof segsum
			mp-capture $dir/core.target maintenance memprof target
			mp-capture $dir/core.stats memprof summary
			mp-capture $dir/core.blocks memprof blocks
			mp-capture $dir/core.categories memprof categories
			mp-capture $dir/core.sites memprof categories --sites 5 --by function
			mp-capture $dir/core.catsegsum memprof categories --segsum
			mp-capture $dir/core.timeline memprof timeline
			memprof segment_plot -o $dir/core.page.html
			mp-capture $dir/core.trace1 memprof trace
			memprof trace_plot --filter-freed -o $dir/core.filtered.html
			mp-capture $dir/core.trace2 memprof trace
		GDB
		mgdb -x "$dir/core.gdb" "$exe" "$dir/core" >"$dir/gdb-core.out" 2>&1
		grep -q "^core $dir/core\$" "$dir/core.target" || bad "$label: the core's target was '$(cat "$dir/core.target")'"
		same "$label: core: memprof segsum == memprof segsum CORE" "$dir/core.segsum" "$dir/cli.stats"
		same "$label: core: memprof summary == memprof summary CORE" "$dir/core.stats" "$dir/cli.summary"
		same "$label: core: memprof blocks == live memprof blocks" "$dir/core.blocks" "$dir/live.blocks"
		cli categories "$dir/core" >"$dir/cli.categories" 2>"$dir/cli.categories.err"
		same "$label: core: memprof categories == memprof categories CORE" "$dir/core.categories" "$dir/cli.categories"
		cli categories "$dir/core" --sites 5 --by function >"$dir/cli.sites" 2>"$dir/cli.sites.err"
		same "$label: core: memprof categories --sites == the CLI's" "$dir/core.sites" "$dir/cli.sites"
		cli categories "$dir/core" --segsum >"$dir/cli.catsegsum" 2>"$dir/cli.catsegsum.err"
		same "$label: core: memprof categories --segsum == the CLI's" "$dir/core.catsegsum" "$dir/cli.catsegsum"
		cli segment_plot "$dir/core" -o "$dir/cli.page.html" 2>"$dir/cli.page.err"
		same "$label: core: memprof segment_plot's page == the CLI's" "$dir/core.page.html" "$dir/cli.page.html"
		# --filter-freed leaves the session's snapshot as it was for the commands after it
		same "$label: core: memprof trace after trace_plot --filter-freed == before" "$dir/core.trace1" "$dir/core.trace2"
		# The timeline of the real trace ring (scenarios that record history): as the CLI's, and its end
		# equal to the active blocks of the same allocator.
		if cli timeline "$dir/core" >"$dir/cli.timeline" 2>"$dir/cli.timeline.err"; then
			# Each run converts the ring's clock stamps with pairs it measures itself: times may differ by
			# a microsecond or so between the two runs.
			if [ -s "$dir/core.timeline" ] && python3 "$gdb_here/same_timeline.py" "$dir/core.timeline" \
				"$dir/cli.timeline" >"$dir/timeline.diff"; then
				ok "$label: core: memprof timeline == the CLI's (times within 5 us)"
			else
				bad "$label: core: memprof timeline differs from the CLI's: $(cat "$dir/timeline.diff")"
			fi
			ends=$(grep -c '^  end:' "$dir/cli.timeline") agree=$(grep -c '^  end:.*(they agree)$' "$dir/cli.timeline")
			if [ "$ends" -gt 0 ] && [ "$ends" -eq "$agree" ]; then
				ok "$label: the timeline of the real ring ends at the active blocks ($ends device(s))"
			else
				bad "$label: the timeline's end differs from the active blocks: $(grep -m1 '^  end:' "$dir/cli.timeline")"
			fi
		fi
	done
done
finish

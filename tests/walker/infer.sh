#!/usr/bin/env bash
# infer.sh - layout inference on every release the test bed has (tests/walker/versions.sh's): for each, memprof
# walks a gcore core of each scenario with MEMPROF_LAYOUTS pointing at the built-in tables less the ones that fit
# that release (its own and any other that walks it), so no table fits and memprof must infer the layout from the
# nearest one left. The walk must equal the allocator's own snapshot() (compare_truth.py), or memprof must refuse
# in one line: never a wrong answer (allocator settings the inference cannot place are left out, and it says
# so: missing, not wrong). Prints one line per release and scenario, then how many releases inference recovers
# (every scenario equal), how many but for settings, and how many it refused.
# Env: MEMPROF, MEMPROF_VERSIONS (default: the releases whose wheel is cached, plus 2.14.1),
# MEMPROF_INFER_SCENARIOS (default: training pending_free private_pool expandable multi_device history).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
testbed=$top/tests/testbed
memprof=${MEMPROF:-$top/_build/memprof}
# shellcheck source=../testbed/lib/common.sh
. "$testbed/lib/common.sh"
scenarios=${MEMPROF_INFER_SCENARIOS:-"training pending_free private_pool expandable multi_device history"}
releases=${MEMPROF_VERSIONS:-}
if [ -z "$releases" ]; then
	for r in $tb_pypi_releases; do
		for p in "$tb_cache"/torch-wheel-"$r".*.dir; do
			{ [ "$r" = 2.14.1 ] || { [ -f "$p" ] && [ -f "$(cat "$p")/.complete" ]; }; } && releases="$releases $r" && break
		done
	done
fi
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
recovered=0 refused=0 settings_out=0
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-infer.XXXXXX")
trap 'rm -rf "$work"' EXIT

for r in $releases; do
	all_equal=1 any_refused=0 partial=0
	for sc in $scenarios; do
		d=$work/$r/$sc
		mkdir -p "$d/layouts"
		cp "$top"/src/symbols/layouts/*.layout "$d/layouts/"
		"$testbed/target.sh" "$sc" "pypi-$r" gcore "$d/g" >"$d/target.out" 2>&1
		rc=$?
		if [ $rc -eq 77 ]; then # the release cannot give the scenario (2.0: expandable)
			echo "not run: $r/$sc: $(tail -1 "$d/target.out")"
			continue
		elif [ $rc -ne 0 ]; then
			bad "$r/$sc: the test bed could not make a core: $(tail -1 "$d/target.out")"
			all_equal=0
			continue
		fi
		# Hide every table that walks this core, until memprof has to infer (or refuses).
		for _ in 1 2 3 4 5 6 7 8; do
			MEMPROF_LAYOUTS=$d/layouts "$memprof" info "$d/g/core" >"$d/info" 2>"$d/info.err"
			used=$(sed -n 's/^layout: *\([^ ]*\) (table.*/\1/p' "$d/info")
			[ -n "$used" ] || break
			rm -f "$d/layouts/$used.layout"
		done
		MEMPROF_LAYOUTS=$d/layouts "$memprof" snapshot "$d/g/core" --stats -o "$d/mp.json" 2>"$d/err"
		rc=$?
		if [ $rc -eq 0 ] && grep -q 'walked with a layout inferred from' "$d/err"; then
			how=$(sed -n 's/.*walked with a layout inferred from \([^ ]*\) (\([0-9]* of [0-9]*\) members sure; \(settings [^)]*\)).*/from \1, \2 members sure, \3/p' "$d/err")
			if python3 "$here/compare_truth.py" --ring-max truth "$d/g/truth.json" "$d/mp.json" >"$d/cmp" 2>&1; then
				ok "$r/$sc: inferred ($how): equal to the truth"
			elif ! grep -q '^ *\(segments\|device_traces\|device_stats\): *[0-9]* difference' "$d/cmp" &&
				! grep -E '^      allocator_settings' "$d/cmp" | grep -qv 'memprof <missing>$'; then
				# Settings the inference could not place are left out, and said so: missing, never wrong.
				ok "$r/$sc: inferred ($how): equal to the truth but for allocator settings left out" \
					"($(grep -c '^      allocator_settings' "$d/cmp") keys)"
				all_equal=0 partial=1
			else
				bad "$r/$sc: an inferred layout gave a WRONG walk:"
				sed 's/^/    /' "$d/cmp" | tail -6
				all_equal=0
			fi
		elif [ $rc -ne 0 ] && [ "$(wc -l <"$d/err")" -eq 1 ]; then
			ok "$r/$sc: refused in one line: $(cut -c1-220 "$d/err")"
			all_equal=0 any_refused=1
		else
			bad "$r/$sc: neither an inferred walk nor a one-line refusal (exit $rc): $(head -c 300 "$d/err")"
			all_equal=0
		fi
	done
	[ $all_equal = 1 ] && recovered=$((recovered + 1))
	[ $partial = 1 ] && [ $any_refused = 0 ] && settings_out=$((settings_out + 1))
	[ $any_refused = 1 ] && refused=$((refused + 1))
done
echo "inference recovered $recovered of $(echo $releases | wc -w) releases (every scenario equal to the truth)," \
	"$settings_out more but for allocator settings left out; $refused refused some scenario"
finish

#!/usr/bin/env bash
# parity.sh [--builds "B..."] [--stacks "python all"] [--seeds "S..."] [--core] [--no-mlp] [--out DIR] [--gate]
# - memprof's categories against PyTorch's memory profiler, allocation by allocation (README.md): each job runs on
# the fake device with both recorders on (profiler_oracle.py), match.py pairs the profiler's allocations with the
# ring's, and compare.py sets memprof's timeline (every allocation) and categories (the end state) beside the
# profiler's. Jobs: job_mlp.py (not with --no-mlp), and the OOM campaign's generated programs of --seeds
# (tests/oom/campaign/gen.py: MLP, CNN, transformer, recurrent; optimizers, AMP, checkpointing, streams) run for
# two steps on a device they fit.
# --core: each job also stops in its checkpoint for gdb's gcore, and memprof reads the core too (the owners from
# its Python heap decide what they name, in the timeline as in the end state).
# --gate: exit 1 unless the jobs reach the issue's bar: bytes agreeing over the timeline 95 % of each job's with
# stacks "all", and 85 % of the generated jobs' bytes together with "python" (each job's figure is printed: Python
# frames do not show what happens inside an operator, and 40 % of job_mlp.py's bytes are one cuBLASLt workspace,
# README.md); the end state equal for every block the profiler labels, on the core with --core.
# Env: MEMPROF (default _build/memprof).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
MEMPROF=${MEMPROF:-$top/_build/memprof}
builds=pypi-2.14.1 stacks="python all" seeds= out= gate=0 core=0 mlp=1
while [ $# -gt 0 ]; do
	case $1 in
	--builds) builds=$2; shift 2 ;;
	--stacks) stacks=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--gate) gate=1; shift ;;
	--core) core=1; shift ;;
	--no-mlp) mlp=0; shift ;;
	*) sed -n '2,/^# Env/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; }
jobmode=truth
[ $core -eq 1 ] && jobmode=gcore
mkdir -p "$out"
failed=0

# against LABEL P MODE TARGET NAME END: memprof's timeline and end state of TARGET (the oracle's snapshot file, or
# the job's core) against the profiler's (P/matches.json), into P/NAME.*; END 1: the gate holds the end state too
against() {
	local label=$1 p=$2 mode=$3 target=$4 name=$5 end=$6
	"$MEMPROF" timeline "$target" -o "$p/$name.raw.json" --format raw 2>"$p/$name.err" &&
		"$MEMPROF" categories "$target" --format json --blocks >"$p/$name.blocks.json" 2>>"$p/$name.err" ||
		{ echo "parity: $label: memprof failed: $(tail -2 "$p/$name.err")"; return 1; }
	python3 "$here/compare.py" "$p/matches.json" "$p/$name.raw.json" "$p/$name.blocks.json" \
		--json "$p/$name.parity.json" --label "$label"
	[ $gate -eq 1 ] || return 0
	python3 - "$p/$name.parity.json" "$mode" "$end" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
share = r["agree_bytes"] / max(r["bytes"], 1)
end = r["end_state"]
if sys.argv[2] == "all" and share < 0.95:
    sys.exit("parity: below the bar: %.1f %% of bytes (needs 95 %%)" % (100 * share))
if sys.argv[3] == "1" and end["labelled_agree"] != end["labelled"]:
    sys.exit("parity: below the bar: end state %d/%d of the blocks it labels" % (end["labelled_agree"], end["labelled"]))
EOF
}

# measure LABEL DIR MODE: DIR holds the oracle's snapshot.pickle and profiler_categories.json; DIR/../core when
# the job was stopped for one. The end state is gated on the core where there is one: a snapshot file has no
# owners, and frames cannot tell a module's buffer from its parameters (CATEGORY-RULES.md)
measure() {
	local label=$1 p=$2 mode=$3 failed=0
	python3 "$here/match.py" "$p/snapshot.pickle" "$p/profiler_categories.json" --out "$p/matches.json" \
		>"$p/match.txt" || { echo "parity: $label: not every allocation matched: $(tail -3 "$p/match.txt")"; return 1; }
	local core_end=0
	[ -f "$p/../core" ] && core_end=1
	against "$label (file)" "$p" "$mode" "$p/snapshot.pickle" file $((1 - core_end)) || failed=1
	if [ $core_end -eq 1 ]; then
		against "$label (core)" "$p" "$mode" "$p/../core" core 1 || failed=1
		rm -f "$p/../core" # gigabytes: the figures are kept
	fi
	return $failed
}

# run LABEL DIR BUILD SCRIPT ARGS...: the job through the test bed; 77 when the build cannot run here
run() {
	local label=$1 dir=$2 build=$3 script=$4 rc
	shift 4
	rm -rf "$dir"
	FAKECUDA_CAPACITY=16G "$top/tests/testbed/job.sh" "$build" "$script" "$jobmode" "$dir" "$@" >/dev/null 2>"$dir.err"
	rc=$?
	[ $rc -eq 0 ] && return 0
	[ $rc -eq 77 ] && { echo "parity: $build cannot run here: $(tail -1 "$dir.err")"; return 77; }
	echo "parity: $label: the job failed: $(tail -3 "$dir.err")"
	return 1
}

for build in $builds; do
	for mode in $stacks; do
		# the job's cwd is DIR; the oracle writes DIR/parity/ (the checkpoint's own snapshot.pickle stays apart)
		dir=$out/$build-mlp-$mode
		if [ $mlp -eq 1 ]; then
			run "$build mlp $mode" "$dir" "$build" "$here/job_mlp.py" --stacks "$mode"
			case $? in
			0) measure "$build mlp stacks=$mode" "$dir/parity" "$mode" || failed=1 ;;
			77) continue 2 ;;
			*) failed=1 ;;
			esac
		fi
		for seed in $seeds; do
			job=$out/gen-$seed
			[ -d "$job" ] || python3 "$top/tests/oom/campaign/gen.py" "$seed" "$job" >/dev/null ||
				{ echo "parity: gen.py $seed failed"; failed=1; continue; }
			cp "$here/profiler_oracle.py" "$job/"
			dir=$out/$build-gen-$seed-$mode
			family=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"]["family"])' "$job/spec.json")
			run "$build seed $seed $mode" "$dir" "$build" "$job/job_$seed.py" "$job/spec.json" \
				--set "history=\"$mode\"" --set 'memory_fraction=null' --parity parity --stop-after-step 1 ||
				{ failed=1; continue; }
			measure "$build seed $seed ($family) stacks=$mode" "$dir/parity" "$mode" || failed=1
		done
		# Python frames: the generated jobs' bytes together
		if [ $gate -eq 1 ] && [ "$mode" = python ] && [ -n "$seeds" ]; then
			python3 - "$out" "$build" <<'EOF' || failed=1
import glob, json, os, sys
for name in ("file", "core"):
    rows = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[1], sys.argv[2] + "-gen-*-python", "parity",
                                                                name + ".parity.json"))]
    if not rows:
        continue
    share = sum(r["agree_bytes"] for r in rows) / max(sum(r["bytes"] for r in rows), 1)
    print("%s stacks=python, %d generated jobs together (%s): %.1f %% of bytes agree" % (sys.argv[2], len(rows), name,
                                                                                       100 * share))
    if share < 0.85:
        sys.exit("parity: below the bar: %.1f %% of bytes (needs 85 %%)" % (100 * share))
EOF
		fi
	done
done
exit $failed

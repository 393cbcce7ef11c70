#!/usr/bin/env bash
# shellcheck disable=SC2015 # `cond && ok ... || bad ...`: ok never fails
# holders.sh - what `memprof oom` says holds the memory of real training jobs that run out of memory inside
# backward, and the remedies it offers about it (tests/testbed/jobs/gpt_train.py: a small GPT trainer with AdamW,
# fp16 autocast and a GradScaler; hf_trainer.py: a HuggingFace Trainer job, GPT-2's architecture, fp16, accelerate's
# AcceleratedOptimizer; lightning_train.py: the GPT in a LightningModule, "16-mixed"), on PyPI's torch 2.14.1 on the
# fake device.
#
# For each: the holders must name the activations by module (activations saved for backward in
# model.transformer.h.N...), no remedy may delete the model, its parameters or the optimizer's state, names must be
# stable paths (optimizer.state[model...], trainer.optimizer.state[...], scaler._scale), every figure must carry its
# unit (holders_check.py); `memprof owners` must name every tensor the job's manifest lists (tests/owners/check.py)
# and warn of nothing it could not read; the activations' remedies (a smaller batch, activation checkpointing,
# 16-bit autocast) must be listed to try (to_try) or claimed with a holder and kind. Then each claim the job can
# take (a remedy about activations, a setting) is tried: the same job runs again with it and must not run out of
# memory; a rejected one must still run out.
#
# Default (lean, in make check): gpt-oom, live. MEMPROF_HOLDERS_FULL=1 (make check-holders): also gpt-oom-trainer
# (the objects held by a trainer object in main(); a gcore core), gpt-oom-fp32 (no autocast: 16-bit autocast is
# listed to try; a kernel core), hf-trainer (transformers 5.24.0 and accelerate 1.15.0) and lightning (lightning 2.6.6),
# installed beside the build's torch (tests/testbed/python/extras.sh; skipped when PyPI cannot be reached), seen
# at their throw by `memprof watch`. Env: MEMPROF, MEMPROF_TESTBED_SKIP=1 (77), KEEP=1 (the scratch directory
# stays). Prints one line per check and "N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
testbed=$top/tests/testbed
build=pypi-2.14.1
if [ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ]; then
	echo "oom/holders: skipped (MEMPROF_TESTBED_SKIP=1)"
	exit 77
fi
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-oom-holders.XXXXXX")
cleanup() {
	local p
	find "$work" -name pid | while read -r p; do "$testbed/job.sh" --stop "$(dirname "$p")" >/dev/null 2>&1; done
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# The list's environment, script and arguments of scenario NAME, as words: ENV SCRIPT ARGS...
scenario() {
	grep -v '^#' "$testbed/jobs/list" | awk -v n="$1" '$1 == n {for (i = 2; i <= NF; i++) printf "%s ", $i}'
}

# Run scenario NAME in MODE into DIR with ARGS after the list's (an env VAR=VALUE first, if any).
job() { # NAME MODE DIR [VAR=VALUE] ARGS...
	local name=$1 mode=$2 dir=$3 env=() vars=() words
	shift 3
	case ${1:-} in *=*) env=("$1"); shift ;; esac
	read -r -a words <<<"$(scenario "$name")"
	if [ "${words[0]}" != - ]; then
		IFS=, read -r -a vars <<<"${words[0]}"
		env+=("${vars[@]}")
	fi
	env "${env[@]}" "$testbed/job.sh" "$build" "$testbed/jobs/${words[1]}" "$mode" "$dir" "${words[@]:2}" "$@" \
		>"$dir.vars" 2>"$dir.log"
}

# The scenario NAME run again in truth mode with ARGS (an env VAR=VALUE first, if any): prints "oom" or "no oom".
rerun() { # NAME DIR [VAR=VALUE] ARGS...
	local name=$1 dir=$2
	shift 2
	if ! job "$name" truth "$dir" "$@"; then
		echo "failed"
		return
	fi
	python3 -c 'import json, sys; print("no oom" if json.load(open(sys.argv[1]))["oom_message"] is None else "oom")' \
		"$dir/notes.json"
}

# Check what memprof said of scenario NAME in DIR (oom.json, oom.txt or -, owners.json, owners.err), then try its
# claims.
judge() { # NAME DIR STYLE LABEL
	local name=$1 dir=$2 style=$3 label=$4 verb kind args n=0 got want text=$2/oom.txt
	[ -f "$text" ] || text=-
	if python3 "$here/holders_check.py" "$dir/oom.json" "$text" "$dir/owners.json" "$dir/notes.json" "$style" \
		>"$dir/claims" 2>"$dir/check.err"; then
		ok "$label: activations by module, no del of the model or the optimizer's state, stable names ($(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
claimed = ", ".join(x["kind"] for x in r["remedies"] if "kind" in x) or "none"
to_try = ", ".join(x["kind"] for x in r["to_try"]) or "none"
print("; ".join(h["name"] for h in r["holders"][:3]) + " ...; claimed: " + claimed + "; to try: " + to_try)' "$dir/oom.json"))"
	else
		bad "$label: $(tr '\n' ' ' <"$dir/check.err")"
	fi
	python3 "$top/tests/owners/check.py" "$dir" "$dir/owners.json" >"$dir/owners.check" 2>&1 &&
		ok "$label: owners == the job's manifest ($(tail -1 "$dir/owners.check"))" ||
		bad "$label: owners differ from the manifest: $(tr '\n' ' ' <"$dir/owners.check" | cut -c1-400)"
	python3 -c 'import json, sys; sys.exit(1 if json.load(open(sys.argv[1]))["partial"] else 0)' "$dir/owners.json" &&
		! grep -q "warning" "$dir/owners.err" && ok "$label: owners read whole, no warning" ||
		bad "$label: owners partial or warned: $(head -3 "$dir/owners.err" | tr '\n' ' ')"
	# the claimed settings too, where the holders' jobs can take them
	python3 - "$dir/oom.json" >>"$dir/claims" <<-'PY'
		import json, re, sys
		for r in json.load(open(sys.argv[1]))["remedies"]:
		    m = re.match(r"PYTORCH_CUDA_ALLOC_CONF=(expandable_segments:True|max_split_size_mb:\d+)$", r["action"])
		    if m:
		        print("RERUN %s PYTORCH_CUDA_ALLOC_CONF=%s" % (r["id"], m.group(1)))
	PY
	while read -r verb kind args; do
		n=$((n + 1))
		want="no oom"
		[ "$verb" = STILL ] && want=oom
		# shellcheck disable=SC2086 # ARGS are words
		got=$(rerun "$name" "$dir-rerun-$n" $args)
		[ "$got" = "$want" ] && ok "$label: $kind ($args): $got, as memprof says" ||
			bad "$label: $kind ($args): $got, but memprof says $want"
	done < <(grep -E '^(RERUN|STILL) ' "$dir/claims")
	# the activations' remedies change the job's requests and are listed to try, not claimed: a job whose only
	# claims are "nothing in the allocator's settings" has nothing to re-run here (the campaign judges those)
	[ "$n" -gt 0 ] || echo "note: $label: no claim the job can re-run"
}

# A gpt_train.py scenario in MODE: memprof oom and owners on its target, then judged.
gpt() { # NAME MODE STYLE
	local name=$1 mode=$2 style=$3 dir=$work/$1-$2 target
	mkdir -p "$dir"
	if ! "$testbed/jobs/run.sh" "$name" "$build" "$mode" "$dir" >"$dir/job.vars" 2>"$dir/job.log"; then
		[ $? = 77 ] && { echo "skip: $name/$mode: the test bed cannot give it here"; return; }
		bad "$name/$mode: the job failed: $(tail -3 "$dir/job.log" | tr '\n' ' ')"
		return
	fi
	case $mode in
	live) target=(--pid "$(cat "$dir/pid")") ;;
	*) target=("$dir/core") ;;
	esac
	"$memprof" oom "${target[@]}" --format json >"$dir/oom.json" 2>"$dir/oom.err" &&
		"$memprof" oom "${target[@]}" >"$dir/oom.txt" 2>>"$dir/oom.err" &&
		"$memprof" owners "${target[@]}" --format json >"$dir/owners.json" 2>"$dir/owners.err"
	rc=$?
	[ "$mode" = live ] && "$testbed/job.sh" --stop "$dir" >/dev/null 2>&1
	rm -f "$dir/core"
	if [ $rc != 0 ]; then
		bad "$name/$mode: memprof failed: $(head -2 "$dir/oom.err" "$dir/owners.err" | tr '\n' ' ')"
		return
	fi
	judge "$name" "$dir" "$style" "$name/$mode"
}

# A framework's job (NAME: hf-trainer, lightning) as STYLE: owners where it waits as the full-length step begins,
# then memprof watch at the OOM's throw (in backward: the activations and the gradient being computed are live
# then; an error caught after the framework's teardown would find the module moved to the CPU).
watched() { # NAME STYLE
	local name=$1 style=$2 dir=$work/$1 pid
	mkdir -p "$dir"
	if ! job "$name" live "$dir" --checkpoint-before-oom; then
		[ $? = 77 ] && { echo "skip: $name: its packages cannot be installed here"; return; }
		bad "$name: the job failed: $(tail -3 "$dir.log" | tr '\n' ' ')"
		return
	fi
	pid=$(cat "$dir/pid")
	"$memprof" owners --pid "$pid" --format json >"$dir/owners.json" 2>"$dir/owners.err"
	( sleep 3; touch "$dir/RESUME" ) &
	timeout 300 "$memprof" watch --pid "$pid" -o "$dir/out" --format json >"$dir/watch.out" 2>"$dir/watch.err"
	wait
	for _ in $(seq 100); do [ -f "$dir/oom_message.txt" ] && break; sleep 0.1; done
	"$testbed/job.sh" --stop "$dir" >/dev/null 2>&1
	if [ ! -f "$dir/out/oom-1.json" ]; then
		bad "$name: the watch wrote no explanation: $(tail -2 "$dir/watch.out" "$dir/watch.err" | tr '\n' ' ')"
		return
	fi
	cp "$dir/out/oom-1.json" "$dir/oom.json"
	judge "$name" "$dir" "$style" "$name/watch"
}

gpt gpt-oom live globals
if [ "${MEMPROF_HOLDERS_FULL:-0}" = 1 ]; then
	gpt gpt-oom-trainer gcore trainer
	gpt gpt-oom-fp32 kernel fp32
	watched hf-trainer hf
	watched lightning lightning
fi
finish

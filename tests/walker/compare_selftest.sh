#!/bin/bash
# compare_selftest.sh - check compare_truth.py on real test bed truths: each equals itself, and
# every kind of mutation (mutate_truth.py --list) is told apart (or, where it must be, accepted).
#
# usage: compare_selftest.sh [SCENARIO...]   (default: training history oom multi_device
#        private_pool expandable pending_free fragmented)
# Truths are made with tests/testbed/scenarios/run.sh (cached builds in ~/.cache/memprof-testbed;
# needs the CUDA headers). MEMPROF (optional): also check that `memprof convert` of each truth
# to JSON compares equal. PYTHON (default python3). Last line: "N passed, M failed"; exit 0/1.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
PYTHON=${PYTHON:-python3}
compare=("$PYTHON" "$here/compare_truth.py")
mutate=("$PYTHON" "$here/mutate_truth.py")
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
    scenarios=(training history oom multi_device private_pool expandable pending_free fragmented)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memprof-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"

# expect RC TEXT ARGS... : run compare_truth with ARGS, want exit RC and TEXT in its output
expect() {
    local want=$1 text=$2 out rc=0; shift 2
    out=$("${compare[@]}" "$@" 2>&1) || rc=$?
    if [ "$rc" -ne "$want" ]; then
        bad "compare_truth $* exited $rc, wanted $want"; echo "$out" | sed 's/^/    /'
    elif [ -n "$text" ] && ! grep -qF -- "$text" <<<"$out"; then
        bad "compare_truth $*: no '$text' in its output"; echo "$out" | sed 's/^/    /'
    else
        ok
    fi
}

truths=()
for s in "${scenarios[@]}"; do
    if "$top/tests/testbed/scenarios/run.sh" "$s" truth --truth "$tmp/$s.json" >"$tmp/$s.log" 2>&1; then
        truths+=("$tmp/$s.json")
    else
        bad "scenario $s: run.sh failed"; tail -n 5 "$tmp/$s.log" | sed 's/^/    /'
    fi
done
# a truth with an oom trace entry, for the device_free check
if [ -f "$tmp/training.json" ] && "${mutate[@]}" "$tmp/training.json" add_oom "$tmp/training+oom.json" >/dev/null; then
    truths+=("$tmp/training+oom.json")
fi

mapfile -t kinds < <("${mutate[@]}" --list)
for t in "${truths[@]}"; do
    name=$(basename "$t" .json)
    expect 0 "result: equal" "$t" "$t" --ring-extra 0
    if [ -n "${MEMPROF:-}" ]; then
        if "$MEMPROF" convert "$t" "$tmp/$name.memprof.json" 2>"$tmp/conv.err"; then
            expect 0 "result: equal" "$t" "$tmp/$name.memprof.json" --ring-extra 0
        else
            bad "memprof convert $t: $(cat "$tmp/conv.err")"
        fi
    fi
    napplied=0
    for k in "${kinds[@]}"; do
        res=$("${mutate[@]}" "$t" "$k" "$tmp/m.json") ; rc=$?
        [ "$rc" -eq 3 ] && continue
        [ "$rc" -eq 0 ] || { bad "mutate_truth $name $k exited $rc"; continue; }
        napplied=$((napplied + 1))
        want=${res%% *} rest=${res#* }
        args=${rest%%|*} text=${rest#*|}
        # shellcheck disable=SC2086 # ARGS are words
        expect "$want" "$text" "$t" "$tmp/m.json" $args
    done
    echo "compare_selftest: $name: $napplied mutation kinds applied"
done

# bad input
expect 2 "" "$tmp/nonexistent.json" "$tmp/nonexistent.json"
echo '{"segments": [' >"$tmp/broken.json"
expect 2 "" "$tmp/broken.json" "$tmp/broken.json"
echo '[1, 2]' >"$tmp/list.json"
expect 2 "" "$tmp/list.json" "$tmp/list.json"
expect 2 "" --bogus-option x y

finish

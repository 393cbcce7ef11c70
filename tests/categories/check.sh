#!/usr/bin/env bash
# check.sh - memprof categories on a generated corpus: every block's category and source and
# every total (both schemes), user rules before the defaults, --explain, categories carried by
# the data, output formats, and one-line errors naming the bad rule; --sites against groups made
# from the frames with PyTorch's own frame filter, --segsum against the real `_memory_viz stats`,
# and the modes that exclude each other.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${PYTHON:-python3}
here="$top/tests/categories"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../lib/check.sh
. "$top/tests/lib/check.sh"

# has NAME PATTERN FILE: an extended regex some line of FILE matches.
has() {
	if grep -qE -- "$2" "$3"; then ok; else bad "$1: no line matches '$2'"; head -20 "$3"; fi
}

"$py" "$here/gen_corpus.py" "$tmp" || { echo "FAIL: gen_corpus.py"; exit 1; }

# Categories and totals, block by block.
for name in training profiler user sites; do
	if "$py" "$here/check_corpus.py" "$MEMPROF" "$tmp" "$name"; then ok; else bad "corpus $name"; fi
done

# --sites and --segsum, with PyTorch's _memory_viz.py (2.6 and 2.14) as the reference.
if oracles=$("$top/tests/oracle/fetch-oracle.sh"); then
	for name in training profiler user sites; do
		viz=$(echo "$oracles" | head -1)
		if "$py" "$here/check_sites.py" "$MEMPROF" "$viz" "$tmp" "$name"; then ok; else bad "sites $name"; fi
		for viz in $oracles; do
			if "$py" "$here/check_segsum.py" "$MEMPROF" "$viz" "$tmp" "$name"; then ok; else bad "segsum $name ($viz)"; fi
		done
	done
else
	bad "fetch-oracle.sh failed (network needed on first run): --sites and --segsum unchecked"
fi

# --sites N as one word or two, a file named like a count after the count, the default of 10.
for form in "--sites=3" "--sites 3"; do
	# shellcheck disable=SC2086
	"$MEMPROF" categories "$tmp/sites.pickle" $form --device 0 >"$tmp/out"
	has "$form" "top 3 of [0-9]+ by site$" "$tmp/out"
done
"$MEMPROF" categories --sites "$tmp/sites.pickle" --device 0 >"$tmp/out"
has "--sites before the target" "top 10 of [0-9]+ by site$" "$tmp/out"
"$MEMPROF" categories --sites 2 "$tmp/sites.pickle" --device 0 >"$tmp/out"
has "--sites N before the target" "top 2 of [0-9]+ by site$" "$tmp/out"
"$MEMPROF" categories "$tmp/sites.pickle" --sites --device 9 >/dev/null 2>"$tmp/err"
if [ $? -eq 2 ] && grep -q "no blocks on device 9" "$tmp/err"; then ok; else bad "--sites on a device without blocks"; fi
"$MEMPROF" categories "$tmp/sites.pickle" --segsum --device 9 >/dev/null 2>"$tmp/err"
if [ $? -eq 2 ] && grep -q "no segments on device 9" "$tmp/err"; then ok; else bad "--segsum on a device without segments"; fi
"$MEMPROF" categories "$tmp/sites.pickle" --segsum --device 1 >"$tmp/out"
has "--segsum --device" "^segments: 2$" "$tmp/out"

# --explain: rule name and frame, data sources, unknown, free blocks, no block.
addr_of() { # addr_of NAME RULE-OR-SOURCE: an address whose expected rule or source is that
	"$py" -c 'import json,sys; e=json.load(open(sys.argv[1]))["blocks"]
print(next(hex(int(a)) for a, v in e.items() if sys.argv[2] in v))' "$tmp/$1.expect.json" "$2"
}
explain() { "$MEMPROF" categories "$tmp/$1.pickle" --explain "$2" "${@:3}" >"$tmp/out" 2>"$tmp/err"; }

explain training "$(addr_of training sgd-momentum-buffer)"
has "explain default rule" "^source: default rule 'sgd-momentum-buffer'" "$tmp/out"
has "explain category" "^category: OPTIMIZER_STATE$" "$tmp/out"
has "explain matched frame" "matched frame 0: _single_tensor_sgd at .*/torch/optim/sgd.py:390" "$tmp/out"
explain training "$(addr_of training accumulate-grad)" --scheme tracker
has "explain tracker name" "^category: Gradient$" "$tmp/out"
explain training "$(addr_of training unknown)"
has "explain unknown" "^source: unknown: no 'category' in the data and none of the 24 rules" "$tmp/out"
explain user "$(addr_of user kv-cache)" --rules "$tmp/user.rules.json"
has "explain user rule" "^source: user rule 'kv-cache'" "$tmp/out"
has "explain innermost user condition" "condition: innermost user frame file \*/model.py function make_kv_cache" "$tmp/out"
explain profiler "$(addr_of profiler trace)"
has "explain trace data" "^source: data: its alloc trace entry \(time_us [0-9]+\) has 'category' 'GRADIENT'" "$tmp/out"
explain profiler "$(addr_of profiler block)"
has "explain block data" "^source: data: the block's 'category' is 'PARAMETER'" "$tmp/out"
# an address inside a block, not at its start
inner=$(printf '0x%x' $(( $(addr_of training module-init) + 4096 )))
explain training "$inner"
has "explain inside a block" "^source: default rule 'module-init'" "$tmp/out"
explain training 0x10
if [ $? -eq 2 ] && grep -q "no block holds 0x10" "$tmp/err"; then ok; else bad "explain: no block"; fi

# Free blocks are counted, not categorised.
"$MEMPROF" categories "$tmp/training.pickle" --device 1 --units MiB >"$tmp/out"
has "plain table" "^GRADIENT +64\.0MiB +1$" "$tmp/out"
has "free row" "^inactive \(free\) +16\.0MiB +1$" "$tmp/out"
if grep -q "^device 0" "$tmp/out"; then bad "--device 1 shows device 0"; else ok; fi
"$MEMPROF" categories "$tmp/training.pickle" --format rst --scheme tracker --units B >"$tmp/out"
has "rst border" "^=================  ================  ========$" "$tmp/out"
has "rst tracker row" "^Optstate +[0-9]+B +[0-9]+$" "$tmp/out"

# Data that names no category: rules decide, with a warning.
"$MEMPROF" categories "$tmp/profiler.pickle" >/dev/null 2>"$tmp/err"
has "unreadable data warning" "warning: 1 block\(s\) carry a 'category' that names no category" "$tmp/err"

# Bad rules files: one line naming the rule and the problem, exit 2.
while IFS=$'\t' read -r file message; do
	"$MEMPROF" categories "$tmp/training.pickle" --rules "$file" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$message" "$tmp/err" &&
		grep -qF -- "'$file': " "$tmp/err"; then
		ok
	else
		bad "bad rules $file (exit $rc): wanted '$message', got: $(cat "$tmp/err")"
	fi
done <"$tmp/bad.list"

# Bad option values, and modes that exclude each other: one line, exit 2.
while IFS='|' read -r opts message; do
	# shellcheck disable=SC2086
	"$MEMPROF" categories "$tmp/training.pickle" $opts >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$message" "$tmp/err"; then
		ok
	else
		bad "bad options '$opts' (exit $rc): wanted '$message', got: $(cat "$tmp/err")"
	fi
done <<'EOF'
--scheme torch|--scheme 'torch'
--format xml|--format 'xml'
--units TB|--units 'TB': choose auto, B, KiB, MiB or GiB
--explain nowhere|--explain 'nowhere'
--sites --segsum|exclude each other
--explain 0x10 --sites 3|exclude each other
--segsum --explain 0x10|exclude each other
--by file|--by groups call sites: it needs --sites
--sites --by line|--by 'line': choose site, function, file or module
--sites=0|--sites '0'
--sites=many|--sites 'many'
--sites 99999999999999999999|--sites '99999999999999999999'
--segsum --format json|--segsum prints text only
EOF

finish categories:

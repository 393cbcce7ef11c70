#!/usr/bin/env bash
# check.sh - memprof fleet on generated rank snapshots (gen_ranks.py): the outlier rank and the module and call
# site that make it one, with their bytes (plain, json, html, rst), an OOM's explanation beside the others'
# state, rank files and files one by one, ranks without owners (categories and sites from frames), damaged and
# missing ranks (a warning each and the others' result), many damaged variants of a rank file (never a crash,
# under the ASan build too), and the same output on one thread as on many.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${PYTHON:-python3}
here="$top/tests/fleet"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../lib/check.sh
. "$top/tests/lib/check.sh"

gen() { "$py" "$here/gen_ranks.py" "$@" >/dev/null || { echo "FAIL: gen_ranks.py $*"; exit 1; }; }

# expect WHAT FILE TEXT: FILE holds the line TEXT (fixed string).
expect() {
	if grep -qF -- "$3" "$2"; then ok; else bad "$1: no '$3' in:"; head -40 "$2"; fi
}

# sane WHAT STATUS ERRFILE: a status memprof gives (0 done, 2 nothing read), no sanitizer's report.
sane() {
	if [ "$2" -ne 0 ] && [ "$2" -ne 2 ]; then
		bad "$1: status $2"; tail -5 "$3"
	elif grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$3"; then
		bad "$1: a sanitizer's report"; grep -m3 -E 'AddressSanitizer|runtime error|LeakSanitizer' "$3"
	else
		ok
	fi
}

# ---- eight ranks with owners, rank 2 holding 450 MiB more of model.embedding's parameters, rank 5 out of memory
gen "$tmp/job" --ranks 8 --outlier 2 --extra-mib 450 --module model.embedding --oom 5
"$MEMPROF" fleet "$tmp/job" >"$tmp/plain" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$tmp/err" ]; then ok; else bad "plain: status $rc"; cat "$tmp/err"; fi
expect plain "$tmp/plain" "rank 2: +450.0MiB in model.embedding (parameter), +450.0MiB at train.py:88 (forward)"
expect plain "$tmp/plain" "rank 2 reserves 706.0MiB, median 256.0MiB (+176%)"
expect plain "$tmp/plain" "rank 5 ran out of memory (2 OOMs; the first: $tmp/job/rank-5/oom-1.json)"
expect plain "$tmp/plain" "first cause: device_full (1.50 GiB)"
# the outliers named are rank 2 alone
if [ "$(sed -n '/^Outliers/,/^Why/p' "$tmp/plain" | grep -c '^  rank [013-9]')" -eq 0 ]; then ok; else bad "plain: another rank named an outlier"; fi

"$MEMPROF" fleet "$tmp/job" --format json >"$tmp/json" 2>"$tmp/err" || bad "json: status $?"
if "$py" - "$tmp/json" <<'EOF'; then ok; else bad "json: the outlier's figures"; fi
import json, sys
d = json.load(open(sys.argv[1]))
MIB = 1 << 20
assert d["fleet"] == 1 and d["ranks_found"] == 8 and d["ranks_read"] == 8, d["ranks_read"]
assert [o["rank"] for o in d["outliers"]] == [2], d["outliers"]
o = d["outliers"][0]
m = o["modules"][0]
assert (m["module"], m["category"], m["difference"], m["bytes"]) == ("model.embedding", "parameter", 450 * MIB, 460 * MIB), m
assert o["sites"][0]["site"] == "train.py:88 (forward)" and o["sites"][0]["difference"] == 450 * MIB, o["sites"]
assert o["categories"][0] == {"category": "parameter", "bytes": 520 * MIB, "median": 70 * MIB, "difference": 450 * MIB}
assert {f["figure"] for f in o["figures"]} == {"reserved", "allocated", "active"}, o["figures"]
r = d["ranks"][2]
assert abs(r["active"] - d["median"]["active"] - 450 * MIB) < MIB and sum(r["categories"].values()) == r["active"]
assert sum(x["bytes"] for x in r["modules"]) == r["active"]
oom = d["ranks"][5]["oom"]
assert oom["count"] == 2 and oom["summary"][0].startswith("verdict oom: a request of 2.00 GiB"), oom
assert all(x["oom"] is None for i, x in enumerate(d["ranks"]) if i != 5)
EOF

"$MEMPROF" fleet "$tmp/job" --format html -o "$tmp/fleet.html" 2>"$tmp/err" || bad "html: status $?"
if head -c 15 "$tmp/fleet.html" | grep -q '<!DOCTYPE html>' && ! grep -qiE '<script|src=|href=|https?:' "$tmp/fleet.html"; then
	ok
else
	bad "html: not one self-contained page"
fi
expect html "$tmp/fleet.html" "rank 2: +450.0MiB in model.embedding (parameter)"
expect html "$tmp/fleet.html" '<tr class="outlier"><td>2</td>'

"$MEMPROF" fleet "$tmp/job" --format rst >"$tmp/rst" 2>"$tmp/err" || bad "rst: status $?"
if "$py" -c 'import docutils' 2>/dev/null; then
	if "$py" -c 'import docutils.core, sys; docutils.core.publish_string(open(sys.argv[1]).read(), writer_name="null", settings_overrides={"halt_level": 2, "report_level": 2})' "$tmp/rst" 2>"$tmp/err"; then
		ok
	else
		bad "rst: docutils refuses it"; head -5 "$tmp/err"
	fi
fi

# one thread or many: the same report
MEMPROF_THREADS=1 "$MEMPROF" fleet "$tmp/job" >"$tmp/one" 2>/dev/null
MEMPROF_THREADS=4 "$MEMPROF" fleet "$tmp/job" >"$tmp/four" 2>/dev/null
if cmp -s "$tmp/one" "$tmp/plain" && cmp -s "$tmp/four" "$tmp/plain"; then ok; else bad "threads: the report differs"; diff "$tmp/one" "$tmp/four" | head -5; fi

# --depth 2: the encoder's layers apart; --no-frames: no call sites
"$MEMPROF" fleet "$tmp/job" --depth 2 --format json >"$tmp/depth" 2>/dev/null
expect depth "$tmp/depth" '"module": "model.encoder.layers", "category": "optimizer_state"'
"$MEMPROF" fleet "$tmp/job" --no-frames >"$tmp/noframes" 2>/dev/null
expect no-frames "$tmp/noframes" "rank 2: +450.0MiB in model.embedding (parameter)"
if grep -q 'by call site' "$tmp/noframes"; then bad "no-frames: call sites shown"; else ok; fi

# ---- rank files without owners: categories and call sites from the frames; files given one by one
gen "$tmp/files" --layout files --ranks 6 --outlier 4 --extra-mib 300 --plain
"$MEMPROF" fleet "$tmp/files" >"$tmp/files.out" 2>"$tmp/err" || bad "files: status $?"
expect files "$tmp/files.out" "+300.0MiB at train.py:88 (forward)"
expect files "$tmp/files.out" "rank 4 reserves"
"$MEMPROF" fleet "$tmp"/files/rank-{0,1,2,3,4,5}.pickle >"$tmp/each.out" 2>"$tmp/err" || bad "one by one: status $?"
if cmp -s "$tmp/files.out" "$tmp/each.out"; then ok; else bad "one by one: not the directory's report"; diff "$tmp/files.out" "$tmp/each.out" | head; fi
# a rank's snapshot as memprof's JSON reads the same
"$MEMPROF" convert "$tmp/files/rank-4.pickle" "$tmp/files/rank-4.json" 2>/dev/null && rm "$tmp/files/rank-4.pickle"
"$MEMPROF" fleet "$tmp/files" >"$tmp/files.json.out" 2>/dev/null
if cmp -s "$tmp/files.out" "$tmp/files.json.out"; then ok; else bad "a JSON rank: not the pickle's report"; fi

# ---- damaged and missing ranks: a warning each, the others' result
gen "$tmp/bad" --ranks 6 --outlier 3
head -c 3000 "$tmp/bad/rank-1/snapshot.pickle" >"$tmp/cut" && mv "$tmp/cut" "$tmp/bad/rank-1/snapshot.pickle"
head -c 5000 /dev/urandom >"$tmp/bad/rank-4/snapshot.pickle"
mkdir "$tmp/bad/rank-7"
echo '{"segments": 5}' >"$tmp/bad/rank-6.json"
"$MEMPROF" fleet "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok || bad "damaged: status $rc"
expect damaged "$tmp/bad.out" "8 ranks, 4 read"
expect damaged "$tmp/bad.out" "rank 3: +450.0MiB in model.embedding (parameter)"
for r in 1 4 6 7; do expect damaged "$tmp/err" "warning: rank $r not read: "; done
# nothing readable: the error says why
"$MEMPROF" fleet "$tmp/bad/rank-4" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && ok || bad "nothing read: status $rc"
expect "nothing read" "$tmp/err" "memprof: fleet: no rank could be read (of 1): rank 4: "
"$MEMPROF" fleet "$tmp/none" >/dev/null 2>"$tmp/err"
expect "no target" "$tmp/err" "memprof: fleet: no rank found: cannot read '$tmp/none'"
"$MEMPROF" fleet >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && ok || bad "no word: status $rc"

# ---- a rank's core (the test bed's allocator in a known state): walked as the other commands walk one, its
# figures the allocator's own snapshot()'s
if MEMPROF_TESTBED_SKIP=${MEMPROF_TESTBED_SKIP:-} "$top/tests/testbed/target.sh" training debug gcore "$tmp/core" >/dev/null 2>"$tmp/core.err"; then
	gen "$tmp/withcore" --ranks 2
	mkdir "$tmp/withcore/rank-2" && ln -s "$tmp/core/core" "$tmp/withcore/rank-2/core"
	"$MEMPROF" fleet "$tmp/withcore" --format json >"$tmp/core.json" 2>"$tmp/err" || bad "core: status $?"
	if "$py" - "$tmp/core.json" "$tmp/core/truth.json" <<'EOF2'; then ok; else bad "core: its figures are not the truth's"; fi
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][2]
segs = json.load(open(sys.argv[2]))["segments"]
assert r["read"] and r["path"].endswith("/rank-2/core"), r
assert r["reserved"] == sum(s["total_size"] for s in segs), (r["reserved"], sum(s["total_size"] for s in segs))
assert r["active"] == sum(b["size"] for s in segs for b in s["blocks"] if b["state"] != "inactive")
EOF2
else
	echo "note: no core rank checked: the test bed gave no core ($(tail -1 "$tmp/core.err"))"
fi

# ---- damaged variants of one rank file, all at once: cut at many places, bytes changed (never a crash)
mkdir "$tmp/fuzz"
"$py" - "$tmp/job/rank-0/snapshot.pickle" "$tmp/fuzz" <<'EOF'
import random, sys
data = open(sys.argv[1], "rb").read()
rng = random.Random(34)
n = 0
for cut in [0, 1, 2, 11, 12, 100, 1000, len(data) // 3, len(data) // 2, len(data) - 1]:
    open("%s/rank-%d.pickle" % (sys.argv[2], n), "wb").write(data[:cut])
    n += 1
for _ in range(40):
    b = bytearray(data)
    for _ in range(rng.choice([1, 2, 8, 64])):
        b[rng.randrange(len(b))] = rng.randrange(256)
    open("%s/rank-%d.pickle" % (sys.argv[2], n), "wb").write(bytes(b))
    n += 1
EOF
for fmt in plain json html; do
	"$MEMPROF" fleet "$tmp/fuzz" --format "$fmt" >/dev/null 2>"$tmp/err"
	sane "damaged variants ($fmt)" $? "$tmp/err"
done
finish

#!/usr/bin/env bash
# dist_check.sh - distributed jobs on the fake device (dist.sh, torchrun, the NCCL stub nvstubs/nccl.c):
# jobs/ddp.py and jobs/uneven.py with 4 ranks in truth mode on pypi-2.14.1 (MEMPROF_DIST_TORCH), and checks that
#   - each job reaches every rank's checkpoint and ends (the collectives of DDP meet and move their data: DDP's
#     parameter-shape check across ranks passes; destroy_process_group returns);
#   - every rank's truth is there and valid: the snapshot pickle loads, its segments are non-empty and on that
#     rank's own device only, their blocks add up, memory_stats' reserved bytes for that device are the
#     segments' sum, the notes name the rank;
#   - ddp.py's ranks reserve about the same (within 2 MiB or 2%: the ranks are not in lockstep); uneven.py's
#     heavy rank reserves the others' bytes plus what its notes say it holds (as closely: those tensors sit in
#     segments of their own, so it is to the byte here), and its manifest has those tensors with those sizes,
#     the others' do not;
#   - memprof's CLI reads each rank's truth ($MEMPROF segsum rank-R/snapshot.pickle);
#   - jobs/collectives.py passes: every collective of the backend gives NCCL's result on known values.
# Exit 77 (one line saying why) when the test bed cannot run it: MEMPROF_TESTBED_SKIP=1, no memprof binary, the
# build cannot be fetched. About 35 s warm on the 2-core machine.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
[ "${MEMPROF_TESTBED_SKIP:-0}" != 1 ] || not_run "distributed jobs: MEMPROF_TESTBED_SKIP=1"
memprof=${MEMPROF:-$here/../../memprof}
[ -x "$memprof" ] || not_run "distributed jobs: no memprof binary (MEMPROF=$memprof)"
torch=${MEMPROF_DIST_TORCH:-pypi-2.14.1}
nproc=4
python=${PYTHON:-python3}

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-dist.XXXXXX")
trap 'for d in "$work"/*/; do "$here/dist.sh" --stop "$d" >/dev/null 2>&1; done; rm -rf "$work"' EXIT
rc=0
"$here/python/build.sh" "$torch" >/dev/null 2>"$work/build.log" || rc=$?
[ $rc -ne 77 ] || not_run "distributed jobs: the build $torch cannot be fetched here"
if [ $rc -ne 0 ]; then
	tail -n 20 "$work/build.log"
	bad "$torch: python/build.sh failed ($rc)"
	finish
	exit
fi

# truth.py OUTDIR NPROC [uneven]: the rank truths, one line per check: "ok TEXT" or "FAIL TEXT".
cat >"$work/truth.py" <<'PY'
import json, pickle, sys

out, nproc, uneven = sys.argv[1], int(sys.argv[2]), sys.argv[3:] == ["uneven"]
reserved = {}
manifests = {}
notes = {}
for r in range(nproc):
    d = f"{out}/rank-{r}"
    try:
        snap = pickle.load(open(f"{d}/snapshot.pickle", "rb"))
        stats = json.load(open(f"{d}/memory_stats.json"))
        manifests[r] = json.load(open(f"{d}/manifest.json"))
        notes[r] = json.load(open(f"{d}/notes.json"))
    except Exception as e:
        print(f"FAIL rank {r}: truth unreadable: {e}")
        continue
    segs = snap["segments"]
    problems = []
    if not segs:
        problems.append("no segments")
    devices = {s["device"] for s in segs}
    if devices - {r}:
        problems.append(f"segments on devices {sorted(devices)}, not only {r}")
    for s in segs:
        if sum(b["size"] for b in s["blocks"]) != s["total_size"]:
            problems.append(f"segment 0x{s['address']:x}: blocks do not add up to {s['total_size']}")
    total = sum(s["total_size"] for s in segs)
    if stats[str(r)]["reserved_bytes.all.current"] != total:
        problems.append(f"memory_stats reserves {stats[str(r)]['reserved_bytes.all.current']}, segments {total}")
    if notes[r].get("rank") != r or notes[r].get("world_size") != nproc:
        problems.append(f"notes say rank {notes[r].get('rank')} of {notes[r].get('world_size')}")
    reserved[r] = total
    print(("FAIL" if problems else "ok") + f" rank {r}: a valid truth ({len(segs)} segments, {total} bytes reserved)"
          + (": " + "; ".join(problems) if problems else ""))


def near(a, b):
    """Equal but for a segment's worth: ranks run the same code, but not in lockstep (the timing of pending
    frees may differ); 2 MiB (a small segment) or 2%."""
    return abs(a - b) <= max(2 << 20, 0.02 * max(a, b))


if len(reserved) == nproc:
    if not uneven:
        same = all(near(v, reserved[0]) for v in reserved.values())
        print(("ok" if same else "FAIL") + f" every rank reserves about the same: {sorted(reserved.items())}")
    else:
        heavy, extra, extra_bytes = notes[0]["heavy_rank"], notes[0]["extra"], notes[0]["extra_bytes"]
        others = sorted(v for r, v in reserved.items() if r != heavy)
        base = others[len(others) // 2]
        same = all(near(v, base) for v in others)
        print(("ok" if same else "FAIL") + f" the ranks but {heavy} reserve about the same: {others}")
        diff = reserved[heavy] - base
        print(("ok" if near(diff, extra_bytes) else "FAIL")
              + f" rank {heavy} reserves {diff} bytes more than the median rank; its notes say {extra_bytes}"
              + f" ({extra})")
        held = {e["name"]: e["nbytes"] for e in manifests[heavy]}
        match = all(held.get(name) == size for name, size in extra.items())
        print(("ok" if match else "FAIL") + f" rank {heavy}'s manifest holds {sorted(extra)} with those sizes"
              + ("" if match else f": {[(n, held.get(n)) for n in extra]}"))
        stray = [r for r in manifests if r != heavy and any(e["name"] in extra for e in manifests[r])]
        print(("FAIL" if stray else "ok") + f" no other rank's manifest holds them{': ' + str(stray) if stray else ''}")
PY

for job in ddp uneven; do
	out=$work/$job
	t0=$(date +%s)
	if "$here/dist.sh" --nproc "$nproc" "$torch" "$here/jobs/$job.py" truth "$out" >"$work/$job.env" \
		2>"$work/$job.log"; then
		ok "$job.py: $nproc ranks on $torch reached their checkpoints and ended ($(($(date +%s) - t0)) s)"
	else
		tail -n 30 "$work/$job.log"
		bad "$job.py: dist.sh failed on $torch"
		continue
	fi
	while read -r status text; do
		if [ "$status" = ok ]; then ok "$job.py: $text"; else bad "$job.py: $text"; fi
	done < <("$python" "$work/truth.py" "$out" "$nproc" $([ "$job" != uneven ] || echo uneven) 2>&1)
	for ((r = 0; r < nproc; r++)); do
		if "$memprof" segsum "$out/rank-$r/snapshot.pickle" >"$work/segsum.out" 2>&1 &&
			grep -q '^total_reserved:' "$work/segsum.out"; then
			ok "$job.py: memprof segsum reads rank $r's truth"
		else
			cat "$work/segsum.out"
			bad "$job.py: memprof segsum on rank $r's truth"
		fi
	done
done
t0=$(date +%s)
if "$here/dist.sh" --nproc "$nproc" "$torch" "$here/jobs/collectives.py" truth "$work/collectives" \
	>/dev/null 2>"$work/collectives.log"; then
	ok "collectives.py: every collective gives NCCL's result on $nproc ranks ($(($(date +%s) - t0)) s)"
else
	grep -m3 'AssertionError\|Error' "$work/collectives.log"
	tail -n 5 "$work/collectives.log"
	bad "collectives.py: a collective gave a wrong result or failed"
fi
finish

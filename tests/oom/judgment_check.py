"""judgment_check.py - what `memprof oom` must say on each judgment job (tests/oom/judgment.sh).

usage: judgment_check.py VARIANT OOM.json OOM.txt

Exits 1 with the failures on stderr; on success its first stderr line says what held. Prints on stdout one line
per claim that can be run again, "WANT<TAB>WHAT<TAB>JOB ARGUMENTS": every remedy (WANT "no oom") and every
setting in not_helping (WANT "oom"), with the job arguments that apply it: --alloc-conf for a remedy's conf ("-"
for none), --empty-cache-after for a place in the job's script, --free for a variable deleted.
"""
import json
import re
import sys

MiB = 1 << 20


def rerun_args(r):
    """The job arguments that apply remedy R, or None when it names nothing the job can do."""
    if "conf" in r:
        return "--alloc-conf " + (r["conf"] or "-")
    place = r.get("empty_cache_after")
    if place and place["file"].endswith("oom_judgment.py"):
        return "--empty-cache-after %d" % place["line"]
    m = re.match(r"del ([A-Za-z_][A-Za-z0-9_]*)\b", r["action"])
    if r["id"] == "free" and m:
        return "--free " + m.group(1)
    return None


def main():
    variant, report, text = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
    failures, held = [], []

    def check(ok, what):
        (held if ok else failures).append(what)

    def remedy(id_, works):
        return [r for r in report["remedies" if works else "not_helping"] if r["id"] == id_]

    check(report["oom"] and report["verdict"] == "oom", "an OOM (verdict %s)" % report["verdict"])
    for r in report["remedies"] + report["not_helping"]:
        check(r.get("evidence") in ("replay", "state"), "%s says its evidence" % r["id"])
    for r in report["remedies"]:
        check(r.get("covers") in ("request", "step"), "%s says what it covers" % r["id"])
    req = report["request"]
    if variant == "page-message":
        # a request known from its message only: bounds, never a lower bound told as 'at most'
        check(not req["size_exact"], "the size is not exact")
        check(req["min"] < 8 * MiB <= req["max"], "8 MiB lies in (%d, %d]" % (req["min"], req["max"]))
        check("at most" in text and "more than" in text and "exact size unknown" in text, "told as bounds")
        check(not remedy("expandable_segments", True), "expandable segments not claimed (20 MiB pages, 18 MiB free)")
    elif variant.startswith("page-expandable"):
        # the job ran with expandable segments: the request needs a 20 MiB page with 18 MiB free
        check(report["figures"]["expandable_segments"], "expandable segments read as on")
        check(any("20.00 MiB" in d for d in report["decision"]), "the decision maps a 20 MiB page")
        check(not remedy("expandable_segments", True) and not remedy("expandable_segments", False)
              or variant.endswith("history"), "expandable segments not suggested again (state)")
        if variant.endswith("history"):
            check(report["replayed"], "the model replays the job under expandable segments: %s" % report["no_replay"])
    elif variant.startswith("holes"):
        check(not remedy("expandable_segments", True), "expandable segments not claimed (no whole free page)")
        if variant == "holes":
            check(report["replayed"], "replayed: %s" % report["no_replay"])
            check(any(r["evidence"] == "replay" for r in remedy("expandable_segments", False)),
                  "expandable segments refuted by the replay")
        if variant == "holes-cpp":
            places = [r["empty_cache_after"] for r in remedy("empty_cache", True) if "empty_cache_after" in r]
            check(places and all(p["file"].endswith("oom_judgment.py") for p in places),
                  "empty_cache() named at the job's own line: %s" % places)
            check("memory_snapshot" not in text and "gather_with_cpp" not in text, "no C++ frame named as the place")
    elif variant == "step":
        check(report["replayed"], "replayed: %s" % report["no_replay"])
        step_claims = [r for r in report["remedies"] if r["evidence"] == "replay"]
        check(step_claims and all(r["covers"] == "step" for r in step_claims),
              "the replayed remedies cover the whole step (the ring holds the step before)")
    elif variant == "own_split":
        check(report["replayed"], "replayed: %s" % report["no_replay"])
        check([c["setting"] for c in report["setting_causes"]] == ["max_split_size_mb"],
              "the job's own max_split_size_mb named as the cause: %s" % report["setting_causes"])
        check(not remedy("nothing", True), "no 'nothing in the allocator's settings' (the replay says otherwise)")
        check(any(r.get("conf") == "" for r in report["remedies"]), "undoing the setting claimed")
    check(not re.search(r"-\d+ bytes", text), "no raw negative byte count")
    for r in report["remedies"]:
        args = rerun_args(r)
        # in the step case a claim for this request only is not run to the step's end (the campaign counts it)
        if args and not (variant == "step" and r["covers"] != "step"):
            print("no oom\t%s (%s, covers %s)\t%s" % (r["action"], r["evidence"], r["covers"], args))
    for r in report["not_helping"]:
        if "conf" in r:
            print("oom\t%s (%s)\t%s" % (r["action"], r["evidence"], rerun_args(r)))
    for f in failures:
        print("FAIL: %s" % f, file=sys.stderr)
    if not failures:
        print("; ".join(held), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

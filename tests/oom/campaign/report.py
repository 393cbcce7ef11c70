"""report.py - the campaign's figures from a results directory (run-oom.sh's RESULTS/BUILD/SEED/).

usage: report.py RESULTS [--gate] [--state-threshold 0.95]

Writes RESULTS/report.json and RESULTS/summary.txt (also printed): per build and in total, the jobs and what
became of them, the OOMs, the claims by kind and by evidence, their verdicts, precision (right / checked) per
evidence kind and per claim kind, recall (per OOM and kind of change: memprof claimed it and it worked / it
worked), the claims that are not re-runnable, and every WRONG claim with its seed, what the re-run did and the
paths to reproduce it.

Evidence: a claim's `evidence` field ("replay" or "state"); claims without one (memprof before the field came)
are "unstated" and are gated as state estimates.

--gate (make check's slice): exit 1 when a replay claim is WRONG, when the precision of state and unstated claims
together is below the threshold, when a job failed (the watch wrote no explanation, a job did not run) or when
no OOM was checked.
"""
import collections
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_units(results):
    units = []
    for status in sorted(glob.glob(os.path.join(results, "*", "*", "status"))):
        d = os.path.dirname(status)
        build, seed = d.split(os.sep)[-2:]
        with open(status) as f:
            st = f.read().strip()
        secs = open(os.path.join(d, "seconds")).read().strip() if os.path.exists(os.path.join(d, "seconds")) else "0"
        units.append({"dir": d, "build": build, "seed": int(seed) if seed.isdigit() else seed, "status": st,
                      "seconds": int(secs or 0), "result": load(os.path.join(d, "result.json")) if st == "oom" else None,
                      "spec": load(os.path.join(d, "job", "spec.json"))})
    return units


def ratio(a, b):
    return round(a / b, 4) if b else None


def evidence_of(c):
    return c.get("evidence") or "unstated"


def claim_kind(c):
    return "%s %s%s" % (c["source"], c["id"], "/" + c["kind"] if c.get("kind") else "")


def figures(units):
    f = {"jobs": len(units), "status": collections.Counter(), "ooms": 0, "seconds_per_oom": None,
         "claims": collections.Counter(), "verdicts": collections.Counter(), "by_evidence": {}, "by_kind": {},
         "not_rerunnable": collections.Counter(), "diverged": 0, "failed_reruns": 0,
         "recall": {"worked": 0, "claimed_and_worked": 0, "by_kind": {},
                    "by_replayed": {"replayed": [0, 0], "not replayed": [0, 0]}}, "wrong": [],
         "literal": {"runs": 0, "differs": []}, "causes_first": collections.Counter(),
         "replay": collections.Counter()}
    ev = collections.defaultdict(collections.Counter)
    rv = collections.defaultdict(collections.Counter)
    kinds = collections.defaultdict(collections.Counter)
    rk = collections.defaultdict(collections.Counter)
    secs = []
    for u in units:
        f["status"][u["status"].split(" ")[0] if not u["status"].startswith("skip") else "skip"] += 1
        res = u["result"]
        if not res:
            continue
        f["ooms"] += 1
        secs.append(u["seconds"])
        oom = load(os.path.join(u["dir"], "oom.json")) or {}
        causes = oom.get("causes") or []
        f["causes_first"][causes[0]["id"] if causes else "(none)"] += 1
        f["replay"][oom.get("verdict") or "(none)"] += 1
        for c in res["claims"]:
            k = claim_kind(c)
            f["claims"][k] += 1
            v = c["verdict"]
            f["verdicts"][v] += 1
            if v == "NOT_RERUNNABLE":
                f["not_rerunnable"][k] += 1
                continue
            if v == "DIVERGED":
                f["diverged"] += 1
                continue
            if v == "FAILED":
                f["failed_reruns"] += 1
                continue
            ev[evidence_of(c)][v] += 1
            rv[oom.get("verdict") or "(none)"][v] += 1
            kinds[k][v] += 1
            if v == "WRONG":
                f["wrong"].append(wrong_entry(u, c, res))
            lit = c.get("literal_outcome")
            if lit and lit.get("ran"):
                f["literal"]["runs"] += 1
                if bool(lit["passed"]) != (v == "RIGHT"):
                    f["literal"]["differs"].append({"build": u["build"], "seed": u["seed"], "claim": claim_kind(c),
                                                    "verdict": v, "literal": lit["what"] + ": " + lit["text"]})
        # apart: OOMs memprof replayed (a trace held the request) and those it did not (no settings claimed)
        split = f["recall"]["by_replayed"]["replayed" if oom.get("replayed") else "not replayed"]
        for k in res["recall"]["worked"]:
            rk[k]["worked"] += 1
            f["recall"]["worked"] += 1
            split[1] += 1
        for k in res["recall"]["claimed_and_worked"]:
            rk[k]["claimed_and_worked"] += 1
            f["recall"]["claimed_and_worked"] += 1
            split[0] += 1
    f["recall"]["recall"] = ratio(f["recall"]["claimed_and_worked"], f["recall"]["worked"])
    f["recall"]["by_kind"] = {k: {"worked": v["worked"], "claimed_and_worked": v["claimed_and_worked"],
                                  "recall": ratio(v["claimed_and_worked"], v["worked"])} for k, v in sorted(rk.items())}
    for e, c in sorted(ev.items()):
        f["by_evidence"][e] = {"right": c["RIGHT"], "wrong": c["WRONG"], "precision": ratio(c["RIGHT"],
                                                                                           c["RIGHT"] + c["WRONG"])}
    f["by_replay"] = {e: {"right": c["RIGHT"], "wrong": c["WRONG"], "precision": ratio(c["RIGHT"], c["RIGHT"] + c["WRONG"])}
                      for e, c in sorted(rv.items())}
    for k, c in sorted(kinds.items()):
        f["by_kind"][k] = {"right": c["RIGHT"], "wrong": c["WRONG"], "precision": ratio(c["RIGHT"],
                                                                                       c["RIGHT"] + c["WRONG"])}
    right, wrong = f["verdicts"]["RIGHT"], f["verdicts"]["WRONG"]
    f["precision"] = ratio(right, right + wrong)
    f["checked"] = right + wrong
    f["seconds_per_oom"] = round(sum(secs) / len(secs), 1) if secs else None
    for k in ("status", "claims", "verdicts", "not_rerunnable", "causes_first", "replay"):
        f[k] = dict(sorted(f[k].items()))
    return f


def wrong_entry(u, c, res):
    d = u["dir"]
    reruns = [os.path.join(d, "reruns", o["rerun"], "repro.sh") for o in c.get("outcomes", [])
              if o.get("rerun") and os.path.exists(os.path.join(d, "reruns", o["rerun"]))]
    oom = load(os.path.join(d, "oom.json")) or {}
    causes = [x["id"] for x in oom.get("causes") or []]
    spec = u["spec"] or {}
    return {"build": u["build"], "seed": u["seed"], "claim": claim_kind(c), "action": c["action"],
            "causes": causes, "memory_fraction": spec.get("memory_fraction"), "history": spec.get("history"),
            "request_source": (oom.get("request") or {}).get("source"), "replay": oom.get("verdict"),
            "evidence": evidence_of(c), "covers": c.get("covers"),
            "why": c.get("why", "")[:300],
            "rerun_did": [o.get("what", "") + ": " + o.get("text", "") for o in c.get("outcomes", [])],
            "oom": "step %d, request #%d" % (res["target"]["step"], res["target"]["ordinal"]),
            "family": (u["spec"] or {}).get("family"), "user_conf": (u["spec"] or {}).get("alloc_conf"),
            "script": os.path.join(d, "job", "job_%s.py" % u["seed"]), "oom_json": os.path.join(d, "oom.json"),
            "snapshot": os.path.join(d, "oom.pickle"), "watched_run": os.path.join(d, "watch-%s" % attempt_of(d)),
            "reproduce": reruns}


def attempt_of(d):
    ws = sorted(glob.glob(os.path.join(d, "watch-*")))
    return ws[-1].rsplit("-", 1)[1] if ws else "0"


def pct(x):
    return "n/a" if x is None else "%.1f %%" % (100 * x)


def summary(rep):
    lines = []
    for name, f in list(rep["builds"].items()) + [("total", rep["total"])]:
        lines.append("== %s: %d jobs (%s), %d OOMs, %s s per OOM with its re-runs" % (
            name, f["jobs"], ", ".join("%s %d" % kv for kv in f["status"].items()), f["ooms"], f["seconds_per_oom"]))
        lines.append("   first causes: %s" % ", ".join("%s %d" % kv for kv in f["causes_first"].items()))
        lines.append("   memprof's replay of the request (verdict; every one of these OOMs was real): %s" % ", ".join(
            "%s %d" % kv for kv in f["replay"].items()))
        lines.append("   claims: %d (%s)" % (sum(f["claims"].values()), ", ".join("%s %d" % kv for kv in
                                                                                      f["verdicts"].items())))
        lines.append("   precision %s (%d right of %d checked); by evidence: %s" % (
            pct(f["precision"]), f["verdicts"].get("RIGHT", 0), f["checked"],
            ", ".join("%s %s (%d/%d)" % (e, pct(x["precision"]), x["right"], x["right"] + x["wrong"])
                      for e, x in f["by_evidence"].items()) or "-"))
        lines.append("   precision by memprof's replay verdict: %s" % (", ".join(
            "%s %s (%d/%d)" % (e, pct(x["precision"]), x["right"], x["right"] + x["wrong"])
            for e, x in f["by_replay"].items()) or "-"))
        for k, x in f["by_kind"].items():
            lines.append("     %-40s %s (%d/%d)" % (k, pct(x["precision"]), x["right"], x["right"] + x["wrong"]))
        lines.append("   recall %s (%d of %d kinds of change that got past an OOM were claimed and right): %s" % (
            pct(f["recall"]["recall"]), f["recall"]["claimed_and_worked"], f["recall"]["worked"],
            ", ".join("%s %d/%d" % (k, v["claimed_and_worked"], v["worked"]) for k, v in
                      f["recall"]["by_kind"].items()) or "-"))
        lines.append("   recall on the OOMs memprof replayed %s (%d/%d), on the others %s (%d/%d)" % tuple(
            x for key in ("replayed", "not replayed") for x in (
                pct(ratio(*f["recall"]["by_replayed"][key])), *f["recall"]["by_replayed"][key])))
        lines.append("   not re-runnable: %d (%s); diverged %d; re-runs failed %d" % (
            sum(f["not_rerunnable"].values()), ", ".join("%s %d" % kv for kv in f["not_rerunnable"].items()) or "-",
            f["diverged"], f["failed_reruns"]))
    lit = rep["total"]["literal"]
    lines.append("== settings remedies also run as their action reads literally (the user's other settings "
                 "dropped): %d, of which %d came out otherwise than the verdict" % (lit["runs"], len(lit["differs"])))
    for x in lit["differs"]:
        lines.append("   %s seed %s %s: %s; literally: %s" % (x["build"], x["seed"], x["claim"], x["verdict"],
                                                          x["literal"]))
    wrong = rep["total"]["wrong"]
    lines.append("== %d WRONG claims" % len(wrong))
    groups = collections.Counter((w["claim"], w["causes"][0] if w["causes"] else "-",
                                  "fraction" if w["memory_fraction"] else "no fraction", w["replay"]) for w in wrong)
    for (k, cause, frac, replay), n in sorted(groups.items(), key=lambda kv: -kv[1]):
        lines.append("   %3d  %-36s first cause %-16s %-12s replay %s" % (n, k, cause, frac, replay))
    for w in wrong:
        lines.append("-- %s seed %s (%s, conf %s, memory fraction %s, history %s): %s [%s, evidence %s]" % (
            w["build"], w["seed"], w["family"], w["user_conf"], w["memory_fraction"], w["history"], w["claim"],
            w["action"], w["evidence"]))
        lines.append("   causes %s; request from the %s; memprof's replay: %s" % (
            ", ".join(w["causes"]) or "-", w["request_source"], w["replay"]))
        lines.append("   OOM at %s; re-run: %s" % (w["oom"], "; ".join(w["rerun_did"])))
        lines.append("   reproduce: %s" % (w["reproduce"][0] if w["reproduce"] else w["watched_run"] + "/repro.sh"))
    return "\n".join(lines) + "\n"


def gate(rep, threshold):
    t = rep["total"]
    problems = []
    if t["ooms"] == 0:
        problems.append("no OOM was checked")
    if t["status"].get("fail"):
        problems.append("%d job(s) failed (see their status files)" % t["status"]["fail"])
    replay = t["by_evidence"].get("replay", {})
    if replay.get("wrong"):
        problems.append("%d replay-evidence claim(s) WRONG (they must all be right)" % replay["wrong"])
    r = sum(t["by_evidence"].get(e, {}).get("right", 0) for e in ("state", "unstated"))
    w = sum(t["by_evidence"].get(e, {}).get("wrong", 0) for e in ("state", "unstated"))
    if r + w and r / (r + w) < threshold:
        problems.append("state-estimated claims %.1f %% right (%d/%d), below %.0f %%" % (
            100 * r / (r + w), r, r + w, 100 * threshold))
    return problems


def main():
    args = sys.argv[1:]
    results = args[0]
    threshold = float(args[args.index("--state-threshold") + 1]) if "--state-threshold" in args else 0.95
    units = read_units(results)
    builds = collections.defaultdict(list)
    for u in units:
        builds[u["build"]].append(u)
    rep = {"results": os.path.abspath(results), "builds": {b: figures(us) for b, us in sorted(builds.items())},
           "total": figures(units)}
    text = summary(rep)
    with open(os.path.join(results, "report.json"), "w") as f:
        json.dump(rep, f, indent=1)
    with open(os.path.join(results, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    if "--gate" in args:
        problems = gate(rep, threshold)
        for p in problems:
            print("FAIL: %s" % p)
        if problems:
            return 1
        print("ok: %d OOMs, no replay claim wrong, state-estimated claims at or above %.0f %%" % (
            rep["total"]["ooms"], 100 * threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""judge.py - each claim of one OOM's explanation against what its re-runs did.

usage: judge.py DIR       (DIR: one job on one build, as run-oom.sh leaves it)

Reads DIR/plan.json, DIR/record.json (the watched run: the OOM's step and request ordinal) and
DIR/reruns/KEY/record.json; writes DIR/result.json.

Verdicts (README.md, "Judging"):
  RIGHT / WRONG  a remedy judged by "request" (covers "request" or no covers): the re-run gets past the OOM's
                 request (no OOM at or before its ordinal); by "step" (covers "step", or a holder change that
                 alters the requests): the OOM's step completes; a not_helping entry: the re-run still runs out at
                 or before the request (every value tried); "nothing": no candidate setting got past it
  DIVERGED       a re-run whose requests before the OOM's step differ from the watched run's (allocations
                 counted at each completed step), where the change should not alter them: the premise of the
                 judgement fails, so no verdict (listed, not counted)
  FAILED         a re-run that did not run (its log says why): no verdict
  NOT_RERUNNABLE the claim asks for a change this job cannot make
"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def outcome(rec, target):
    """What a re-run did, in words and as data."""
    if rec is None:
        return {"ran": False, "text": "the re-run failed"}
    oom = rec.get("oom")
    done = [s["step"] for s in rec.get("steps", []) if s.get("completed")]
    last = rec["steps"][-1]["allocations"] if rec.get("steps") else 0
    o = {"ran": True, "oom_step": oom["step"] if oom else None, "oom_ordinal": oom["ordinal"] if oom else None,
         "completed": done, "allocations": last, "empty_cache_calls": rec.get("empty_cache_calls", 0)}
    if oom:
        o["text"] = "ran out at step %d, request #%d (the OOM was request #%d of step %d)" % (
            oom["step"], oom["ordinal"], target["ordinal"], target["step"])
    else:
        o["text"] = "no OOM through step %d (%d requests; the OOM was request #%d)" % (
            done[-1] if done else -1, last, target["ordinal"])
    return o


def same_requests(orig, rec, upto):
    """Whether the re-run made as many requests as the watched run at the end of each step before UPTO."""
    a = {s["step"]: s["allocations"] for s in orig.get("steps", []) if s.get("completed") and s["step"] < upto}
    b = {s["step"]: s["allocations"] for s in rec.get("steps", []) if s.get("completed") and s["step"] < upto}
    return all(b[k] == a[k] for k in a if k in b)


def passed_request(o, target):
    if not o["ran"]:
        return None
    if o["oom_ordinal"] is not None:
        return o["oom_ordinal"] > target["ordinal"]
    return o["allocations"] >= target["ordinal"] or target["step"] in o["completed"]


def step_done(o, target):
    return target["step"] in o["completed"] if o["ran"] else None


def judge(d):
    plan, orig = load(os.path.join(d, "plan.json")), load(os.path.join(d, "record.json"))
    target = orig["oom"]
    outs, recs = {}, {}
    for key in plan["reruns"]:
        recs[key] = load(os.path.join(d, "reruns", key, "record.json"))
        outs[key] = outcome(recs[key], target)
    # the candidates first ("nothing" is judged by them)
    cands = []
    for c in plan["candidates"]:
        o = outs[c["rerun"]]
        worked = passed_request(o, target)
        diverged = o["ran"] and not same_requests(orig, recs[c["rerun"]], target["step"])
        cands.append(dict(c, worked=None if diverged else worked, diverged=diverged, outcome=o))
    claims = []
    for c in plan["claims"]:
        v = dict(c)
        v["outcomes"] = [dict(outs[k], rerun=k, what=plan["reruns"][k]["what"]) for k in c["reruns"]]
        if c.get("literal"):
            k = c["literal"]["rerun"]
            v["literal_outcome"] = dict(outs[k], rerun=k, what=plan["reruns"][k]["what"],
                                        passed=passed_request(outs[k], target))
        if c["not_rerunnable"]:
            v["verdict"] = "NOT_RERUNNABLE"
        elif c["judge"] == "candidates":
            settings = [x for x in cands if x["kind"] != "empty_cache" and x["worked"] is not None]
            past = [x for x in settings if x["worked"]]
            v["outcomes"] = [dict(x["outcome"], rerun=x["rerun"], what="candidate %s" % x["kind"]) for x in past]
            v["verdict"] = "WRONG" if past else ("RIGHT" if settings else "FAILED")
        else:
            os_ = [outs[k] for k in c["reruns"]]
            if any(not o["ran"] for o in os_):
                v["verdict"] = "FAILED"
            elif c["judge"] in ("request", "oom") and not all(
                    same_requests(orig, recs[k], target["step"]) for k in c["reruns"]):
                v["verdict"] = "DIVERGED"
            elif c["judge"] == "request":
                v["verdict"] = "RIGHT" if all(passed_request(o, target) for o in os_) else "WRONG"
            elif c["judge"] == "step":
                v["verdict"] = "RIGHT" if all(step_done(o, target) for o in os_) else "WRONG"
            elif c["judge"] == "oom":
                v["verdict"] = "RIGHT" if all(not passed_request(o, target) for o in os_) else "WRONG"
            elif c["judge"] == "oom_step":
                v["verdict"] = "RIGHT" if all(not step_done(o, target) for o in os_) else "WRONG"
            else:
                v["verdict"] = "FAILED"
        claims.append(v)
    # recall, per kind of change: a kind worked when a candidate or a claim of that kind got past the request
    worked, claimed_right = set(), set()
    for x in cands:
        if x["worked"]:
            worked.add(x["kind"])
    for v in claims:
        if v["source"] == "remedy" and v.get("recall_kind") and v["verdict"] == "RIGHT":
            claimed_right.add(v["recall_kind"])
            worked.add(v["recall_kind"])
    return {"dir": d, "target": target, "claims": claims, "candidates": cands,
            "recall": {"worked": sorted(worked), "claimed_and_worked": sorted(claimed_right & worked)}}


def main():
    d = sys.argv[1]
    res = judge(d)
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(res, f, indent=1)
    for v in res["claims"]:
        print("%-14s %-11s %s%s" % (v["verdict"], v["source"], v["id"],
                                    (": " + v["outcomes"][0]["text"]) if v.get("outcomes") else
                                    (" (%s)" % v["not_rerunnable"] if v["not_rerunnable"] else "")))


if __name__ == "__main__":
    main()

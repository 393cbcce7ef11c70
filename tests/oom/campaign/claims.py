"""claims.py - every claim of one `memprof oom --format json` explanation, and the re-runs that test it.

usage: claims.py OOM.json SPEC.json OOM.pickle|- RECALL(0|1) OUTDIR

Writes OUTDIR/plan.json and OUTDIR/reruns.tsv (one re-run a line: KEY, then the job's arguments after its
spec, tab-separated; the runner adds --stop-after-step). A re-run is the same job (same seed, same device) with
one change; re-runs that several claims share run once.

What each claim becomes (README.md, "Claims"):
  a setting (remedies, not_helping)  --conf: the remedy's `conf` when the explanation has it ("" unset), else
                                     the settings its `action` names merged into the user's own; a setting
                                     rejected without a value (max_split_size_mb:M, garbage_collection_threshold:T)
                                     is tried with several values, and is right only if every one still runs out
  empty_cache after FILE:LINE        --empty-cache-after FILE:LINE (`empty_cache_after`, else the action's text)
  del NAME (kind del, or id free)    --set keep="none" where NAME is one of the job's own holders (the tensors it
                                     keeps across steps): the requests stay the same, only frees move earlier
  smaller_batch / checkpoint /       --set batch / checkpoint / amp: the requests change, so these are judged by
  lower_precision                    the OOM's step completing
  nothing                            right when no candidate setting (below) got past the request
  anything else                      not re-runnable (counted apart)
Candidates for recall (RECALL=1), whatever memprof said: expandable_segments:True, max_split_size_mb at 21,
64 and 256 (each merged into the user's settings), each of the user's own settings removed, and empty_cache()
after the last free before the OOM at a Python line of the job that the trace (OOM.pickle) names.
A settings remedy whose action, read literally, would drop the user's other settings is also run that way: shown
beside its verdict ("literal"), not judged.
"""
import hashlib
import json
import os
import pickle
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import confs  # noqa: E402

# a setting rejected without a value is tried with these (the same max_split_size_mb values as the candidates,
# so that the runs are shared); garbage_collection_threshold acts only with a memory fraction: one value without
PLACEHOLDER_VALUES = {"max_split_size_mb": ["21", "64", "256"],
                      "garbage_collection_threshold": ["0.6", "0.9"],
                      "roundup_power2_divisions": ["1", "4", "16"]}
SPLIT_CANDIDATES = ["21", "64", "256"]
SETTING_IDS = {"expandable_segments", "max_split_size_mb", "garbage_collection_threshold",
               "roundup_power2_divisions", "settings", "alloc_conf"}


def fails_judge(x):
    """How a not_helping entry is judged: by the request ("oom": the re-run runs out at or before it), or, when
    memprof says the change serves the request but runs out later in the step ("fails": "step"), by the step
    ("oom_step": the re-run does not complete it)."""
    return "oom_step" if x.get("fails") == "step" else "oom"


class Plan:
    def __init__(self, spec, pickle_path="", device=0):
        self.spec = spec
        self.user = spec.get("alloc_conf") or ""
        self.reruns = {}
        self.pickle_path, self.device, self._site = pickle_path, device, False
        self.claims = []
        self.candidates = []

    def rerun(self, args, what):
        key = hashlib.sha256(json.dumps(args).encode()).hexdigest()[:10]
        self.reruns.setdefault(key, {"args": args, "what": what})
        return key

    def last_free_site(self):
        """last_free_site() of this OOM's snapshot, read once."""
        if self._site is False:
            self._site = last_free_site(self.pickle_path, self.device)
        return self._site

    def conf_rerun(self, conf):
        args = ["--conf", conf] if conf else ["--no-conf"]
        return self.rerun(args, "PYTORCH_CUDA_ALLOC_CONF=%s" % (conf or "(unset)"))


def change_kind(user, conf):
    """The kind of change CONF is against the user's, for recall (claims and candidates alike): the keys it sets
    or changes, "-KEY" for one it removes ("-roundup_power2_divisions"), joined by "+"."""
    ch = confs.changes(user, conf)
    return "max_split_size_mb" if ch == ["max_split_size_mb"] else "+".join(ch)


def site_of(frames):
    """The first Python frame outside torch's files (memprof's rule, src/oom/oom_holders.c oom_site_of, but for
    Python files only: a line tracer can act after a Python line, not after a C++ one)."""
    for f in frames or []:
        name = f.get("filename") or ""
        if name.endswith(".py") and "/torch/" not in name:
            return "%s:%d" % (os.path.basename(name), f.get("line", 0)), f.get("name", "")
    return None, None


def last_free_site(pickle_path, device):
    """FILE:LINE of the last free before the device's last OOM entry that the trace names."""
    if pickle_path in ("-", "") or not os.path.exists(pickle_path):
        return None
    try:
        with open(pickle_path, "rb") as f:
            snap = pickle.load(f)
    except Exception:
        return None
    traces = snap.get("device_traces") or []
    if device >= len(traces):
        return None
    trace = traces[device]
    end = max([i for i, e in enumerate(trace) if e.get("action") == "oom"] or [len(trace)])
    for e in reversed(trace[:end]):
        if e.get("action") in ("free_completed", "free_requested"):
            site, _ = site_of(e.get("frames"))
            if site:
                return site
    return None


def holder_names(text):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text or ""))


def add_claim(plan, x, source):
    rid = x.get("id", "")
    action = x.get("action", "")
    c = {"source": source, "id": rid, "action": action, "why": x.get("why", ""),
         "evidence": x.get("evidence"), "covers": x.get("covers"), "kind": x.get("kind"), "holder": x.get("holder"),
         "conf": x.get("conf"), "reruns": [], "judge": None, "not_rerunnable": None, "recall_kind": None}
    plan.claims.append(c)
    expect_pass = source == "remedy"
    by_step = c["covers"] == "step"
    # settings
    if rid in SETTING_IDS or (x.get("conf") is not None and rid not in ("empty_cache",)):
        if x.get("conf") is not None:
            confs_to_try = [x["conf"] or ""]
        else:
            settings = confs.settings_in(action)
            if not settings:
                c["not_rerunnable"] = "no setting in the action"
                return
            values = [[]]
            for s in settings:
                k, _, v = s.partition(":")
                if re.fullmatch(r"[A-Z]", v):  # a placeholder: rejected without a value
                    if expect_pass:
                        c["not_rerunnable"] = "a remedy without a value (%s)" % s
                        return
                    vals = PLACEHOLDER_VALUES.get(k, [])
                    if k == "garbage_collection_threshold" and not plan.spec.get("memory_fraction"):
                        vals = vals[:1]
                    values = [done + ["%s:%s" % (k, val)] for done in values for val in vals]
                else:
                    values = [done + [s] for done in values]
            confs_to_try = []
            for vs in values:
                conf = plan.user
                for s in vs:
                    conf = confs.merge(conf, s)
                confs_to_try.append(conf)
            if not confs_to_try:
                c["not_rerunnable"] = "no value to try"
                return
        c["reruns"] = [plan.conf_rerun(conf) for conf in confs_to_try]
        c["confs"] = confs_to_try
        c["judge"] = ("step" if by_step else "request") if expect_pass else fails_judge(x)
        if expect_pass:
            c["recall_kind"] = change_kind(plan.user, confs_to_try[0])
            # the action's text read literally (the variable set to what it names, the user's other settings
            # dropped): run too where that differs, shown beside the verdict, not judged
            literal = confs.text(confs.parse(",".join(confs.settings_in(action))))
            if x.get("conf") is None and literal and literal != confs_to_try[0]:
                c["literal"] = {"conf": literal, "rerun": plan.conf_rerun(literal)}
        return
    if rid == "empty_cache":
        where = x.get("empty_cache_after")
        if isinstance(where, dict) and where.get("file") and where.get("line"):
            site = "%s:%d" % (os.path.basename(where["file"]), int(where["line"]))
        else:
            m = re.search(r"after (?:the free at )?(\S+):(\d+) \(", action)
            site = "%s:%s" % (m.group(1), m.group(2)) if m else None
        if site is None and not expect_pass and x.get("evidence") == "replay":
            # "replayed after each of the last lines of the job's own code that freed memory": the latest of them
            # is the line of the last free before the OOM that the trace names (the recall's candidate)
            site = plan.last_free_site()
        if site is None:
            c["not_rerunnable"] = "no line named" if not expect_pass else "not at a line (%s)" % action
            return
        if not site.split(":")[0].endswith(".py"):
            c["not_rerunnable"] = "not a Python line (%s)" % site
            return
        c["reruns"] = [plan.rerun(["--empty-cache-after", site], "torch.cuda.empty_cache() after %s" % site)]
        c["judge"] = ("step" if by_step else "request") if expect_pass else fails_judge(x)
        c["recall_kind"] = "empty_cache" if expect_pass else None
        return
    if rid == "nothing":
        c["judge"] = "candidates"
        return
    kind = x.get("kind") or ("del" if rid == "free" and action.startswith("del ") else None)
    if kind == "del":
        holder = x.get("holder")
        text = holder if isinstance(holder, str) else json.dumps(holder) if holder else action.split(" (")[0][4:]
        hit = [h for h in plan.spec.get("holders", {}) if h in holder_names(text)]
        if not hit:
            c["not_rerunnable"] = "the job cannot drop %s" % text
            return
        sets = []
        for h in hit:
            for k, v in plan.spec["holders"][h].items():
                sets += ["--set", "%s=%s" % (k, json.dumps(v))]
        c["reruns"] = [plan.rerun(sets, "without %s" % ", ".join(hit))]
        c["judge"] = ("step" if by_step else "request") if expect_pass else fails_judge(x)
        return
    if kind == "smaller_batch":
        m = re.search(r"batch(?: size)?(?: of| to| <=|:)? (\d+)", action)
        batch = x.get("batch") or (int(m.group(1)) if m else max(1, plan.spec["batch"] // 2))
        c["reruns"] = [plan.rerun(["--set", "batch=%d" % int(batch)], "batch %d" % int(batch))]
        c["judge"] = "step" if expect_pass else "oom_step"
        return
    if kind == "checkpoint":
        holder = x.get("holder")
        text = holder if isinstance(holder, str) else json.dumps(holder) if holder else action
        m = re.search(r"\.(\d+)\b", text or "")
        ck = plan.spec.get("checkpoint")
        if m and int(m.group(1)) < plan.spec.get("layers", 0):
            cur = ck if isinstance(ck, list) else ([] if not ck else list(range(plan.spec["layers"])))
            value = sorted(set(cur) | {int(m.group(1))})
        else:
            value = True
        c["reruns"] = [plan.rerun(["--set", "checkpoint=%s" % json.dumps(value)], "checkpointing %s" % value)]
        c["judge"] = "step" if expect_pass else "oom_step"
        return
    if kind == "lower_precision":
        if plan.spec.get("amp") != "none":
            c["not_rerunnable"] = "the job already runs in %s" % plan.spec.get("amp")
            return
        c["reruns"] = [plan.rerun(["--set", 'amp="bf16"'], "autocast bf16")]
        c["judge"] = "step" if expect_pass else "oom_step"
        return
    c["not_rerunnable"] = "nothing the job can change for %s%s" % (rid, " (%s)" % kind if kind else "")


def add_candidates(plan):
    user = plan.user
    pairs = dict(confs.parse(user))
    tries = []
    if pairs.get("expandable_segments", "").lower() != "true":
        tries.append(confs.merge(user, "expandable_segments:True"))
    for v in SPLIT_CANDIDATES:
        if pairs.get("max_split_size_mb") != v:
            tries.append(confs.merge(user, "max_split_size_mb:%s" % v))
    for k in pairs:
        tries.append(confs.without(user, k))
    for conf in tries:
        ch = confs.changes(user, conf)
        kind = "max_split_size_mb" if ch == ["max_split_size_mb"] else "+".join(ch)
        plan.candidates.append({"kind": kind, "conf": conf, "rerun": plan.conf_rerun(conf)})
    site = plan.last_free_site()
    if site:
        plan.candidates.append({"kind": "empty_cache", "site": site,
                                "rerun": plan.rerun(["--empty-cache-after", site],
                                                    "torch.cuda.empty_cache() after %s" % site)})


def main():
    oom_path, spec_path, pickle_path, recall, out = sys.argv[1:6]
    report, spec = json.load(open(oom_path)), json.load(open(spec_path))
    device = (report.get("request") or {}).get("device", 0) or 0
    plan = Plan(spec, pickle_path, device)
    for x in report.get("remedies") or []:
        add_claim(plan, x, "remedy")
    for x in report.get("not_helping") or []:
        add_claim(plan, x, "not_helping")
    if recall == "1" or any(c["judge"] == "candidates" for c in plan.claims):
        add_candidates(plan)
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump({"user_conf": plan.user, "claims": plan.claims, "candidates": plan.candidates,
                   "reruns": plan.reruns}, f, indent=1)
    with open(os.path.join(out, "reruns.tsv"), "w") as f:
        for key, r in plan.reruns.items():
            f.write("\t".join([key] + r["args"]) + "\n")


if __name__ == "__main__":
    main()

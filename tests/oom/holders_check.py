"""holders_check.py - what `memprof oom` says holds the memory of a real training job that ran out inside backward,
and what it offers about it, against what the job is.

usage: holders_check.py OOM.json OOM.txt|- OWNERS.json|- NOTES.json STYLE

OOM.json and OOM.txt: `memprof oom --format json` and plain of the job's target (- for none); OWNERS.json:
`memprof owners --format json` of it (- for none); NOTES.json: the job's notes (batch); STYLE: what holds the job's objects
(globals: model, optimizer and scaler are globals of __main__; fp32: the same without a scaler; trainer: a
`trainer` object in main() holds them; hf: a HuggingFace Trainer, `trainer` in main(); lightning: a Lightning
Trainer and LightningModule, `trainer` and `lit` in main()).

Checks, each able to fail:
- the OOM was found, and a training step is said to be underway;
- the activations are named by module: holders "activations saved for backward in M" with M in the model's
  repeated blocks (model.transformer.h.N...), and the activation holders hold most of the live memory;
- no holder or remedy is an anonymous tensor, an object's address or a local of a frame inside a package;
- no remedy deletes the model, its parameters, the optimizer's state or the trainer (during training);
- each remedy about a holder carries "holder" and a known "kind"; the smaller batch and checkpointing are among
  them (claimed either way, or listed to try without a claim: to_try);
- names are stable paths: the optimizer's state under the optimizer's path (optimizer.state[model...],
  trainer.optimizer.state[...]), the scaler's scale as scaler._scale (or trainer.scaler._scale), no TYPE@0x...;
- every size in the text has its unit: no raw byte counts, negative or beyond 1 KiB.
Prints one "RERUN KIND ARGS" line per claimed activation remedy (the arguments of the job that try it: --batch N,
--checkpoint, --precision bf16) and one "STILL KIND ARGS" per rejected one it can try; exits 1 on a failure.
"""
import json
import re
import sys

KINDS = {"del", "smaller_batch", "checkpoint", "lower_precision"}
# The paths of the model, the optimizer and the GradScaler (None: the job runs without one) per STYLE.
ROOTS = {"globals": ("model", "optimizer", "scaler"), "fp32": ("model", "optimizer", None),
         "trainer": ("trainer.model", "trainer.optimizer", "trainer.scaler"),
         "hf": ("model", "trainer.optimizer", "trainer.accelerator.scaler"),
         "lightning": ("lit", "trainer.optimizers[0]", "trainer.scaler")}


def main():
    report = json.load(open(sys.argv[1]))
    text = None if sys.argv[2] == "-" else open(sys.argv[2]).read()
    owners = None if sys.argv[3] == "-" else json.load(open(sys.argv[3]))
    notes, style = json.load(open(sys.argv[4])), sys.argv[5]
    model, optimizer, scaler = ROOTS[style]
    bad = []

    def check(ok, what):
        if not ok:
            bad.append(what)

    check(report["oom"] and report["verdict"] == "oom", f"verdict {report['verdict']!r}, not oom")
    check(report.get("training"), "a training step underway is not said to be")
    holders = report["holders"]
    acts = [h for h in holders if h.get("what") == "activations"]
    block = re.compile(r"activations saved for backward in ([\w.]+\.)?transformer\.h\.\d+(\.\w+)?")
    blocks = [h for h in acts if block.fullmatch(h["name"])]
    check(len(blocks) >= 2, "fewer than two holders are activations saved for backward by a block of transformer.h: "
          + "; ".join(h["name"] for h in holders))
    live = report["figures"]["live"]
    check(sum(h["bytes"] for h in acts) * 2 > live, "the activation holders hold less than half of the live memory")
    remedies = report["remedies"] + report["not_helping"] + report["to_try"]
    for name in [h["name"] for h in holders] + [r["action"] for r in remedies]:
        check("<tensor" not in name and "@0x" not in name and "<param" not in name, f"an anonymous name: {name}")
        check(not re.search(r"\bdel (input|inputs|x|hidden_states|self)\b", name), f"an inner frame's local: {name}")
    for r in remedies:
        check(not re.search(r"\bdel (%s|%s|trainer|model|optimizer|lit)\b" % (re.escape(model), re.escape(optimizer)),
                            r["action"]), f"a remedy deletes the model or the optimizer mid-training: {r['action']}")
        if r["id"] == "free":
            check(r.get("holder") and r.get("kind") in KINDS, f"a remedy about a holder without holder/kind: {r}")
        else:
            check("holder" not in r and "kind" not in r, f"a setting with a holder: {r}")
        check(r["why"], f"a remedy without its reason: {r['action']}")
    for r in report["to_try"]:
        check("evidence" not in r and "covers" not in r and "fails" not in r, f"a claim among to_try: {r}")
    kinds = {r.get("kind") for r in remedies}
    check({"smaller_batch", "checkpoint"} <= kinds, f"no smaller batch or no checkpointing considered: {kinds}")
    if text is not None:
        # sizes below 1 KiB print as bytes; anything else in bytes, or negative, is a raw count
        raw = re.findall(r"-\d+ bytes|\b\d{5,} bytes", text)
        check(not raw, f"raw byte counts in the text: {raw[:3]}")
    if owners is not None:
        names = [e["name"] for e in owners["tensors"]]
        addressed = [n for n in names if "@0x" in n]
        check(not addressed, "a TYPE@0x... name: " + ", ".join(addressed)[:200])
        check(any(n.startswith(optimizer + ".state[" + model + ".") for n in names),
              f"no {optimizer}.state[{model}....] name: " + ", ".join(n for n in names if ".state[" in n)[:200])
        check(scaler is None or scaler + "._scale" in names, f"no {scaler}._scale among the names")
    batch = notes.get("batch")
    for r in report["remedies"]:
        if r.get("kind") == "smaller_batch":
            pct = int(re.search(r"at most (\d+)%", r["action"]).group(1))
            print(f"RERUN smaller_batch --batch {batch * pct // 100}")
        elif r.get("kind") == "checkpoint":
            print("RERUN checkpoint --checkpoint")
        elif r.get("kind") == "lower_precision":
            print("RERUN lower_precision --precision bf16")
    for r in report["not_helping"]:
        if r.get("kind") == "checkpoint":
            print("STILL checkpoint --checkpoint")
    for line in bad:
        print("FAIL: " + line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""oracle_timeline.py MEMORY_PROFILER_PY EXPECT_JSON DEVICE JSON_OUT RAW_OUT - PyTorch's own
MemoryProfileTimeline.export_memory_timeline and export_memory_timeline_raw (from the genuine
torch/profiler/_memory_profiler.py, without importing torch) run on the timeline that
gen_timeline.py expects for DEVICE; they write JSON_OUT and RAW_OUT as PyTorch writes them.

What is taken from the source, by name, with the ast module: Category, Action, _CATEGORY_TO_COLORS,
_CATEGORY_TO_INDEX, _ACTION_TO_INDEX and the class MemoryProfileTimeline. Stubs stand in for
torch.device (a string), Key and TensorKey (a device and an id) and the categories (a dict)."""
import ast
import enum
import sys
import typing

WANTED = {"Category", "Action", "_CATEGORY_TO_COLORS", "_CATEGORY_TO_INDEX", "_ACTION_TO_INDEX",
          "MemoryProfileTimeline"}


def load(path):
    tree = ast.parse(open(path).read(), path)
    nodes = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = {node.name}
        elif isinstance(node, ast.Assign):
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        else:
            continue
        if names & WANTED:
            nodes.append(node)
    found = {n.name if isinstance(n, ast.ClassDef) else n.targets[0].id for n in nodes}
    if found != WANTED:
        sys.exit("oracle_timeline: %s lacks %s" % (path, sorted(WANTED - found)))

    class Key:
        def __init__(self, device):
            self.device = device

    class TensorKey(Key):
        def __init__(self, device, tid):
            super().__init__(device)
            self.id = tid

    torch = type(sys)("torch")
    torch.device = str
    ns = {"enum": enum, "torch": torch, "Key": Key, "TensorKey": TensorKey}
    ns.update({name: getattr(typing, name) for name in typing.__all__})
    exec(compile(ast.Module(body=nodes, type_ignores=[]), path, "exec"), ns)
    return ns


class Categories:
    def __init__(self, by_id, category):
        self.by_id, self.category = by_id, category

    def get(self, key, version):
        name = self.by_id[key.id]
        return None if name is None else self.category[name]


def main():
    path, expect, device, json_out, raw_out = sys.argv[1:]
    ns = load(path)
    dev = "cuda:%s" % device
    events = __import__("json").load(open(expect))["devices"][device]["timeline"]
    by_id, timeline = {}, []
    for t, action, tid, size, category in events:
        by_id[tid] = category
        timeline.append((t, ns["Action"][action], (ns["TensorKey"](dev, tid), 0), size))
    # MemoryProfile.timeline sorts its events so (stably: equal keys keep their order).
    timeline.sort(key=lambda x: (x[0], x[1].value))
    profile = type("Profile", (), {})()
    profile.timeline, profile._categories = tuple(timeline), Categories(by_id, ns["Category"])
    mpt = ns["MemoryProfileTimeline"](profile)
    mpt.export_memory_timeline(json_out, dev)
    mpt.export_memory_timeline_raw(raw_out, dev)


if __name__ == "__main__":
    main()

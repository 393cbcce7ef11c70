#!/usr/bin/env python3
"""summary_oracle.py - PyTorch's own torch.cuda.memory_summary() as an oracle, without torch.

load(MEMORY_PY) parses Debian python3-torch's torch/cuda/memory.py, takes only the
`memory_summary` function definition (its helpers _format_size/_format_count are defined
inside it), drops its type annotations (they name torch types) and executes that one
definition in a namespace where `memory_stats` returns the stats dict we give and
`_get_device_index` returns the device unchanged. Nothing else of the module runs.

run(fn, stats, device, abbreviated) -> ("ok", text) or ("error", missing_key) where PyTorch
raises KeyError.

As a script: summary_oracle.py MEMORY_PY CASE.json prints the summary of one case
({"device": int, "abbreviated": bool, "stats": {...}}; ints beyond 2**53 as {"__int__": "..."}).
"""
import ast
import json
import sys


def load(memory_py):
    with open(memory_py, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source, filename=memory_py)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "memory_summary"]
    if len(defs) != 1:
        raise RuntimeError(f"{memory_py}: expected one top-level memory_summary, found {len(defs)}")
    fn = defs[0]
    fn.decorator_list = []
    fn.returns = None
    for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        a.annotation = None
    module = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(module)
    current = {}

    def memory_stats(device=None):
        return current["stats"]

    namespace = {
        "__name__": "memprof_summary_oracle",
        "memory_stats": memory_stats,
        "_get_device_index": lambda device, optional=False: device,
    }
    exec(compile(module, memory_py, "exec"), namespace)
    summary = namespace["memory_summary"]

    def call(stats, device, abbreviated):
        current["stats"] = stats
        return summary(device=device, abbreviated=abbreviated)

    return call


def run(call, stats, device, abbreviated):
    try:
        return ("ok", call(stats, device, abbreviated))
    except KeyError as e:
        return ("error", e.args[0])


def untag(v):
    """memprof JSON's {"__int__": "..."} back to int (the only tag the corpus uses)."""
    if isinstance(v, dict):
        if set(v) == {"__int__"}:
            return int(v["__int__"])
        return {k: untag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [untag(x) for x in v]
    return v


def tag(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and not -(2**53) <= v <= 2**53:
        return {"__int__": str(v)}
    if isinstance(v, dict):
        return {k: tag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tag(x) for x in v]
    return v


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: summary_oracle.py MEMORY_PY CASE.json")
    call = load(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        case = untag(json.load(f))
    kind, res = run(call, case["stats"], case["device"], case["abbreviated"])
    if kind == "error":
        print(f"KeyError: {res!r}", file=sys.stderr)
        sys.exit(3)
    sys.stdout.write(res)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""check.py TRUTHDIR OWNERS.json - memprof owners --format json of a real job's target against what the job
said of itself at the same moment (tests/testbed/python/memprof_testbed):

- manifest.json, tensor for tensor: every parameter, gradient, buffer and optimizer-state tensor of the job's
  modules and optimizers has an entry in memprof's list under the same name, with the same data pointer, size,
  storage, device, dtype and shape; and memprof names no parameter, gradient, buffer or optimizer state the
  manifest does not list;
- memory_stats.json: each device's rows add up to its active_bytes.all.current;
- mem_tracker.json (PyTorch's MemTracker, run inside the job), when present: per device, the bytes of
  parameters, buffers, gradients and optimizer state, and of the other Python tensors (MemTracker's
  activations, temporaries and others together), and per module its parameters' and buffers' bytes, with
  MemTracker's rounding rule: a CUDA storage counts its size rounded up to 512 bytes, others their size.
- CATEGORIES.json (optional, `memprof categories --scheme tracker --format json --blocks` of the same
  target): the owners are its first source, so the blocks it says got their category from the owners add up,
  per device, to the owners' parameter, buffer, gradient, optimizer_state and activation bytes.
Prints what it checked; exit 0 when all agree, 1 otherwise."""
import json
import os
import re
import sys

NAMED = {"parameter", "gradient", "buffer", "optimizer_state"}


def root_split(name):
    """(root, rest) of ROOT.path, where ROOT may hold brackets with dots inside (models['a.b'], others[0])."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "." and depth == 0:
            return name[:i], name[i + 1:]
    return name, ""


STATE = re.compile(r"(.+?)\.state\[(.*)\]\.([^.\]]+)")


def split(name):
    """(roots, rest) of a manifest name: ROOT.path, or OPT.state[ROOT.path].key (its roots are one name each)."""
    m = STATE.fullmatch(name)
    if m:
        proot, prest = root_split(m.group(2))
        return (m.group(1), proot), ("state", "." + prest if prest else "", m.group(3))
    root, rest = root_split(name)
    return (root,), (rest,)


def root_of(name, rest):
    """The root of NAME if it ends with REST (at a '.'), else None: memprof's roots may be paths (trainer.model)."""
    if not rest:
        return name
    return name[:-len(rest) - 1] if name.endswith("." + rest) else None


def pair(theirs, ours):
    """The roots of the manifest's name THEIRS (split) -> memprof's in its name OURS for the same tensor, or None
    when the names differ after their roots."""
    roots, rest = theirs
    m = STATE.fullmatch(ours)
    if rest[0] == "state":
        if not m or m.group(3) != rest[2] or root_of(m.group(2), rest[1].lstrip(".")) is None:
            return None
        return {roots[0]: m.group(1), roots[1]: root_of(m.group(2), rest[1].lstrip("."))}
    root = root_of(ours, rest[0])
    return None if m or root is None else {roots[0]: root}


def rename(name, roots):
    (parts, rest) = split(name)
    parts = [roots.get(p, p) for p in parts]
    if rest[0] == "state":
        return f"{parts[0]}.state[{parts[1]}{rest[1]}].{rest[2]}"
    return f"{parts[0]}.{rest[0]}" if rest[0] else parts[0]


def rounded(e):
    n = e["storage_nbytes"]
    return -(-n // 512) * 512 if e["device"].startswith("cuda") else n


def main():
    truth, mp = sys.argv[1], json.load(open(sys.argv[2]))
    manifest = json.load(open(os.path.join(truth, "manifest.json")))
    stats = json.load(open(os.path.join(truth, "memory_stats.json")))
    bad = []
    # A root (a module or optimizer no module holds) is named by what holds it: the job registered some, the
    # manifest names the others TYPE@ADDRESS; memprof names them by the path from a global or local variable
    # (trainer.model). Roots are paired by the tensors under them (same kind, same data pointer); everything after
    # the root must be the same.
    roots = {}
    by_ptr = {}
    for e in mp["tensors"]:
        by_ptr.setdefault((e["kind"], e["data_ptr"]), []).append(e)
    for t in manifest:
        if t["kind"] not in NAMED:
            continue
        for e in by_ptr.get((t["kind"], t["data_ptr"]), []):
            paired = pair(split(t["name"]), e["name"])
            if paired is not None:
                for a, b in paired.items():
                    roots.setdefault(a, b)
                break
    by_name = {}
    for e in mp["tensors"]:
        by_name.setdefault(e["name"], e)
    fields = ("data_ptr", "nbytes", "storage_ptr", "storage_nbytes", "device", "dtype", "shape")
    listed = set()
    for t in manifest:
        if t["kind"] not in NAMED:
            # registered tensors (names of the job's own containers): the same memory, whatever memprof calls it
            if not any(e["data_ptr"] == t["data_ptr"] and e["nbytes"] == t["nbytes"] for e in mp["tensors"]):
                bad.append(f"{t['name']}: no tensor at 0x{t['data_ptr']:x} ({t['nbytes']} bytes) in memprof's list")
            continue
        name = rename(t["name"], roots)
        listed.add(name)
        e = by_name.get(name)
        if e is None:
            bad.append(f"{t['name']} (memprof's roots: {name}): not in memprof's list")
            continue
        if e["kind"] != t["kind"]:
            bad.append(f"{name}: memprof says {e['kind']}, the job {t['kind']}")
        for f in fields:
            if e[f] != t[f]:
                bad.append(f"{name}: {f} {e[f]!r}, the job says {t[f]!r}")
    extra = sorted(e["name"] for e in mp["tensors"] if e["kind"] in NAMED and e["name"] not in listed)
    if extra:
        bad.append(f"memprof names {len(extra)} tensors the manifest does not: {extra[:5]}")
    for dev in mp["devices"]:
        if dev["device"].startswith("cuda:"):
            active = stats[dev["device"][5:]]["active_bytes.all.current"]
            if dev["total"] != active:
                bad.append(f"{dev['device']}: the rows add up to {dev['total']}, active bytes are {active}")
            if sum(m["total"] for m in dev["modules"]) != dev["total"]:
                bad.append(f"{dev['device']}: the module rows do not add up to the device's total")
    category_checks = 0
    if len(sys.argv) > 3:
        # blocks whose category came from the owners ("source": "owner"), per device and category
        from_owner = {}
        for b in json.load(open(sys.argv[3]))["blocks"]:
            if b["source"] == "owner":
                key = (f"cuda:{b['device']}", b["category"])
                from_owner[key] = from_owner.get(key, 0) + b["size"]
        names = {"parameter": "Parameter", "buffer": "Buffer", "gradient": "Gradient",
                 "optimizer_state": "Optstate", "activation": "Activation"}
        for dev in mp["devices"]:
            if not dev["device"].startswith("cuda:"):
                continue
            for ours, theirs in names.items():
                category_checks += 1
                got = from_owner.get((dev["device"], theirs), 0)
                if got != dev["categories"][ours]["bytes"]:
                    bad.append(f"{dev['device']}: categories takes {got} bytes of {theirs} from the owners, "
                               f"owners say {dev['categories'][ours]['bytes']}")
    tracker_checks = 0
    path = os.path.join(truth, "mem_tracker.json")
    if os.path.exists(path):
        tracker = json.load(open(path))
        ours = {}
        for e in mp["tensors"]:
            if e["counted"]:
                dev = ours.setdefault(e["device"], {})
                dev[e["kind"]] = dev.get(e["kind"], 0) + rounded(e)
        for device, kinds in tracker["current"].items():
            mine = ours.get(device, {})
            pairs = [("Parameter", mine.get("parameter", 0)), ("Buffer", mine.get("buffer", 0)),
                     ("Gradient", mine.get("gradient", 0)), ("Optstate", mine.get("optimizer_state", 0))]
            theirs_other = kinds["Activation"] + kinds["Temp"] + kinds["Other"]
            pairs.append(("Activation+Temp+Other", mine.get("activation", 0) + mine.get("other_python", 0)))
            for key, value in pairs:
                want = theirs_other if key == "Activation+Temp+Other" else kinds[key]
                tracker_checks += 1
                if value != want:
                    bad.append(f"{device} {key}: memprof {value}, MemTracker {want}")
        roots = {e["module"].split(".")[0] for e in mp["tensors"] if e["module"]}
        for m in tracker.get("modules", []):
            head, _, rest = m["fqn"].partition(".")
            if len(roots) != 1:
                break
            fqn = next(iter(roots)) + ("." + rest if rest else "")
            sums = {"parameter": 0, "buffer": 0}
            seen = set()
            for e in mp["tensors"]:
                if e["kind"] in sums and e["module"] and (e["module"] == fqn or e["module"].startswith(fqn + ".")) \
                        and e["storage_ptr"] not in seen:
                    seen.add(e["storage_ptr"])
                    sums[e["kind"]] += rounded(e)
            tracker_checks += 1
            if (sums["parameter"], sums["buffer"]) != (m["parameter_mem"], m["buffer_mem"]):
                bad.append(f"module {m['fqn']}: memprof {sums['parameter']} parameter, {sums['buffer']} buffer bytes; "
                           f"MemTracker {m['parameter_mem']}, {m['buffer_mem']}")
    for line in bad[:20]:
        print("differ: " + line)
    print(f"{len(manifest)} manifest tensors, {len(mp['tensors'])} memprof entries, "
          f"{len(mp['devices'])} device tables, {category_checks} categories, {tracker_checks} MemTracker figures: "
          + ("all agree" if not bad else f"{len(bad)} differences"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

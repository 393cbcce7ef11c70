#!/usr/bin/env python3
"""heap_target.py OUT - a live process for tests/python/heap.sh: builds known objects (instances of classes
with attributes, some made after many instances so that their dicts are materialised or unshared, __slots__,
dicts with str and other keys, a large one, one with deleted entries, a defaultdict, an OrderedDict, lists,
tuples, cycles, ints, floats, strs; sys.monitoring on), writes what the interpreter says of them to OUT as JSON (ids, attribute
names and the ids of their values, dict items, list items, values, the number of GC-tracked instances of a
few classes, __main__'s globals), then waits until its standard input closes. Every id is the object's
address, which the C reader is compared with."""
import collections
import gc
import json
import struct
import sys


class Node:
    def __init__(self, name):
        self.name = name
        self.next = None


class Plain:
    def __init__(self, i):
        self.x = i
        self.y = "y%d" % i


class Slotted:
    __slots__ = ("p", "q")

    def __init__(self):
        self.p = 1
        self.q = 2


class SlottedWithDict:
    __slots__ = ("p", "__dict__")

    def __init__(self):
        self.p = 1
        self.extra = "in the dict"


class Late:
    pass


class MyDict(dict):
    pass


class MyList(list):
    pass


class MyStr(str):
    pass


class MyInt(int):
    pass


class MyFloat(float):
    pass


class VarInt(int):
    """An int subclass whose instances have a __dict__ at a negative tp_dictoffset."""


def build():
    keep = {}
    # a cycle of instances
    a, b = Node("a"), Node("b")
    a.next, b.next = b, a
    keep["cycle"] = [a, b]
    # many instances sharing their keys, then a few that leave the common shape
    plains = [Plain(i) for i in range(300)]
    plains[5].z = "added later"           # a new key after many instances
    del plains[6].x                       # a deleted attribute
    vars(plains[7])                       # the dict materialised
    plains[8].__dict__["w"] = 8           # materialised and grown
    plains[9].y = plains[9].x             # values replaced
    for i in range(40):                   # more keys than shared keys hold
        setattr(plains[10], "k%d" % i, i)
    keep["plains"] = plains
    late = Late()
    late.b, late.a = 1, 2                 # another order
    late2 = Late()
    late2.a, late2.b = 3, 4
    keep["late"] = [late, late2]
    keep["slotted"] = [Slotted(), SlottedWithDict()]
    vi = VarInt(10 ** 30)
    vi.tag = "negative dictoffset"
    keep["varint"] = vi
    # dicts
    keep["d_str"] = {"alpha": 1, "beta": "two", "gamma": None}
    keep["d_mixed"] = {1: "one", (2, 3): "tuple", 4.5: "float", "s": "str", None: 0}
    keep["d_big"] = {"key%d" % i: i for i in range(1500)}
    deleted = {"k%d" % i: i for i in range(100)}
    for i in range(0, 100, 3):
        del deleted["k%d" % i]
    deleted["after"] = "deletes"
    keep["d_deleted"] = deleted
    dd = collections.defaultdict(list)
    dd["x"].append(1)
    dd["y"].append(2)
    keep["d_default"] = dd
    od = collections.OrderedDict([("one", 1), ("two", 2)])
    keep["d_ordered"] = od
    md = MyDict(a=1)
    md[2] = "b"
    keep["d_sub"] = md
    keep["d_empty"] = {}
    cyc = {}
    cyc["self"] = cyc
    keep["d_cycle"] = cyc
    big_general = {i: str(i) for i in range(1200)}
    keep["d_big_general"] = big_general
    # lists and tuples
    lst = [1, "two", 3.0, None]
    lst.append(lst)
    keep["l_cycle"] = lst
    keep["l_empty"] = []
    keep["l_big"] = list(range(2000))
    keep["l_sub"] = MyList([1, 2, 3])
    keep["t_mixed"] = (1, "a", 3.5, None, lst)
    keep["t_nested"] = ((1, 2), (3, (4, 5)))
    # values
    keep["ints"] = [0, 1, -1, 255, 256, 2 ** 30 - 1, 2 ** 30, -2 ** 30, 2 ** 31 - 1, -2 ** 40, 2 ** 60,
                    2 ** 62, 2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 100, -2 ** 100, True, False,
                    MyInt(-77), 12345678901234]
    keep["floats"] = [0.0, -0.0, 1.5, -2.25, 1e300, 5e-324, float("inf"), MyFloat(2.5)]
    keep["strs"] = ["plain", "h\xe9", "h\u20acl", "f\U0001d523", MyStr("sub"), "x" * 1000]
    return keep


def ident(x):
    return str(id(x))


def truth(keep):
    out = {"version": list(sys.version_info[:3])}
    instances = keep["cycle"] + keep["plains"] + keep["late"] + keep["slotted"] + [keep["varint"]]
    out["instances"] = [{"id": ident(o), "module": type(o).__module__, "name": type(o).__name__,
                         "attrs": [[k, ident(v)] for k, v in getattr(o, "__dict__", {}).items()]}
                        for o in instances]
    dicts = [v for k, v in keep.items() if k.startswith("d_")]
    dicts += [vars(o) for o in keep["plains"][5:11]]
    out["dicts"] = [{"id": ident(d), "items": [[ident(k), ident(v)] for k, v in dict.items(d)]} for d in dicts]
    seqs = [v for k, v in keep.items() if k.startswith(("l_", "t_"))] + [keep["t_nested"][1]]
    out["seqs"] = [{"id": ident(s), "items": [ident(x) for x in s]} for s in seqs]
    out["ints"] = [{"id": ident(i), "value": str(int(i)), "fits": -2 ** 63 <= i < 2 ** 63} for i in keep["ints"]]
    out["floats"] = [{"id": ident(f), "bits": struct.pack("<d", f).hex()} for f in keep["floats"]]
    out["strs"] = [{"id": ident(s), "hex": str.encode(s, "utf-8", "surrogatepass").hex()} for s in keep["strs"]]
    out["none"] = ident(None)
    mods = {}
    for o in gc.get_objects():
        t = type(o)
        if t in (Node, Plain, Late, SlottedWithDict, MyDict, MyList, VarInt):
            mods[t.__name__] = mods.get(t.__name__, 0) + 1
    out["counts"] = [[t.__module__, n, c] for t in (Node, Plain, Late, SlottedWithDict, MyDict, MyList, VarInt)
                     for n, c in [(t.__name__, mods.get(t.__name__, 0))]]
    main = sys.modules["__main__"].__dict__
    out["main"] = {"id": ident(main), "items": [[k, ident(v)] for k, v in main.items()]}
    return out


def monitor():
    """Turn sys.monitoring on (3.12 on): 3.13 keeps a version of it where 3.12 kept an interpreter's successor,
    which a reader of the interpreters' list must not follow."""
    if hasattr(sys, "monitoring"):
        sys.monitoring.use_tool_id(3, "heap_target")
        sys.monitoring.register_callback(3, sys.monitoring.events.PY_START, lambda code, offset: None)
        sys.monitoring.set_events(3, sys.monitoring.events.PY_START)


def main():
    monitor()
    keep = build()
    gc.collect()
    data = truth(keep)
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump(data, f)
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    sys.stdin.read()
    return keep


KEPT = None
if __name__ == "__main__":
    KEPT = main()

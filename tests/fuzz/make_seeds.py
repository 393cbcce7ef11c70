#!/usr/bin/env python3
"""make_seeds.py MEMPROF - write the fuzzers' seed corpora (tests/fuzz/corpus/TARGET) from the project's own inputs.

- pickle: tests/data/example.pickle, the small odd-valued pickles of tests/io/gen_small.py (protocols 2 and 4),
  and snapshots memprof rebuilt from test-bed cores of PyTorch's real allocator (oom, history, private_pool);
- json: the same snapshots converted by memprof to its JSON;
- rules: the example of CATEGORY-RULES.md, a rule of each condition kind, and a few refused files;
- core: real cores (gcore and the kernel's) minimised: headers, program headers and notes kept whole, each PT_LOAD
  cut to its first 256 bytes (the offsets laid out again), so the reader meets real notes, NT_FILE included;
- walker, python: patch lists for fuzz_walker and fuzz_python (none: the clean run of each core, with the flag
  or without; one byte rewritten).
Run it when the readers' inputs change; the corpora are committed (a few hundred KB in all).
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


PENDING = []  # (target, name, data): written in place of the old corpora only once all are made


def out(target, name, data):
    PENDING.append((target, name, data))


def write_corpora():
    shutil.rmtree(CORPUS, ignore_errors=True)
    for target, name, data in PENDING:
        d = os.path.join(CORPUS, target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def minimise_core(path, keep=256):
    """The core at PATH with every PT_LOAD cut to KEEP bytes; headers and notes unchanged."""
    raw = open(path, "rb").read()
    if raw[:4] != b"\x7fELF" or raw[4] != 2:
        raise SystemExit("%s: not an ELF64 core" % path)
    phoff, = struct.unpack_from("<Q", raw, 32)
    phentsize, phnum = struct.unpack_from("<HH", raw, 54)
    phdrs = [list(struct.unpack_from("<IIQQQQQQ", raw, phoff + i * phentsize)) for i in range(phnum)]
    body, at = bytearray(), 64 + phnum * phentsize
    for ph in phdrs:  # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align
        n = ph[5] if ph[0] == 4 else min(ph[5], keep)  # PT_NOTE whole
        data = raw[ph[2]:ph[2] + n]
        ph[2], ph[5] = at + len(body), len(data)
        body += data
        body += b"\0" * (-len(body) % 8)
    hdr = bytearray(raw[:64])
    struct.pack_into("<Q", hdr, 32, 64)
    struct.pack_into("<H", hdr, 54, phentsize)
    table = b"".join(struct.pack("<IIQQQQQQ", *ph).ljust(phentsize, b"\0") for ph in phdrs)
    return bytes(hdr) + table + bytes(body)


def testbed(scenario, mode, work):
    d = os.path.join(work, scenario + "-" + mode)
    r = subprocess.run([os.path.join(TOP, "tests", "testbed", "target.sh"), scenario, "stripped", mode, d],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("target.sh %s %s: %s" % (scenario, mode, r.stderr[-300:]))
    return os.path.join(d, "core")


def frames_heavy():
    """A small snapshot in the shape bench/gen_big.py writes (fresh frame strings, shared and empty frames
    lists, a short trace ring): the shapes the pickle stream reader reads in one go and a projection skips."""
    import importlib.util
    import pickle
    import random
    spec = importlib.util.spec_from_file_location("gen_big", os.path.join(TOP, "bench", "gen_big.py"))
    gb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gb)
    rng = random.Random("seeds")
    shared = [[gb.fresh_frame(rng) for _ in range(3)] for _ in range(4)]
    segs = [gb.segment(rng, 0, 0x7F0000000000 + i * 0x10000000, n, 3, shared)[0] for i, n in enumerate((1, 4, 16))]
    return pickle.dumps({"segments": segs, "device_traces": [gb.trace_ring(rng, segs, 12, 3, shared), []]}, 4)


def main():
    memprof = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "_build", "memprof")
    work = tempfile.mkdtemp(prefix="memprof-seeds-")
    try:
        pickles = {"example.pickle": open(os.path.join(TOP, "tests", "data", "example.pickle"), "rb").read(),
                   "gen-big-small.pickle": frames_heavy()}
        small = os.path.join(work, "small")
        subprocess.run([sys.executable, os.path.join(TOP, "tests", "io", "gen_small.py"), "--out", small],
                       check=True, capture_output=True)
        for name in sorted(os.listdir(small)):
            if name.endswith(("-p2.pickle", "-p4.pickle")) and os.path.getsize(os.path.join(small, name)) < 4096:
                pickles[name] = open(os.path.join(small, name), "rb").read()
        cores = {}
        for scenario in ("oom", "history", "private_pool"):
            core = testbed(scenario, "gcore", work)
            cores[scenario + "-gcore"] = core
            p = os.path.join(work, scenario + ".pickle")
            subprocess.run([memprof, "snapshot", core, "-o", p], check=True, capture_output=True)
            pickles["testbed-%s.pickle" % scenario] = open(p, "rb").read()
        cores["training-kernel"] = testbed("training", "kernel", work)
        for name, data in pickles.items():
            out("pickle", name, data)
            src = os.path.join(work, "in-" + name)
            open(src, "wb").write(data)
            j = os.path.join(work, name + ".json")
            if subprocess.run([memprof, "convert", src, j], capture_output=True).returncode == 0:
                out("json", name.replace(".pickle", ".json"), open(j, "rb").read())
        rules = {
            "doc-example.json": {"rules": [
                {"name": "kv-cache", "category": "ACTIVATION",
                 "frames": {"file": "*/model.py", "function": "make_kv_cache", "where": "innermost_user"}},
                {"name": "big-pending", "category": "TEMPORARY", "state": "pending", "min_size": 4194304}]},
            "every-condition.json": {"rules": [
                {"name": "a", "category": "Optstate", "frames": [{"file": ["*.py", "<stdin>"]}, {"function": "step"}],
                 "state": "allocated,active_pending_free", "min_size": 0, "max_size": 1 << 40, "stream": 0,
                 "pool": [1, 0], "segment_type": "large"},
                {"name": "b", "category": "GRADIENT", "segment_type": "small"}]},
            "empty.json": {"rules": []},
        }
        for name, r in rules.items():
            out("rules", name, json.dumps(r).encode())
        out("rules", "refused-unknown-key.json", b'{"rules": [{"name": "x", "category": "BUFFER", "colour": 1}]}')
        out("rules", "refused-truncated.json", b'{"rules": [{"name": "x", "categ')
        for name, core in cores.items():
            out("core", name, minimise_core(core))
        for k, scen in enumerate(("training", "history", "private_pool", "expandable")):  # core_for.sh's order
            out("walker", "clean-" + scen, bytes([2 * k]))
            out("walker", "clean-find-" + scen, bytes([2 * k + 1]))
        out("walker", "one-byte", b"\0" + struct.pack("<IB", 4096 + 8, 1) + b"\xff")
        out("python", "clean", b"\0")
        out("python", "clean-no-frames", b"\1")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_corpora()  # (a failure above left the committed corpora as they were)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(CORPUS) for f in fs)
    print("make_seeds: %d files, %d bytes" % (sum(len(fs) for _, _, fs in os.walk(CORPUS)), total))


if __name__ == "__main__":
    main()

"""check.py - `memprof oom --format json` against what the job itself said.

usage: check.py OOM.json NOTES.json CAUSE

Checks that memprof found the OOM (verdict "oom"); that the numbers it computes from the state equal the
ones PyTorch's own OutOfMemoryError message printed (parsed here, independently of memprof's parser, and
compared as PyTorch prints them: format_size's two decimals); that every byte reserved but not live went to
exactly one cause; and that the cause the job was built to produce comes first. Prints one line per claimed
remedy, "REMEDY <id> <action>", for the runner to check by running the job again, and exits 1 on a failure.
"""
import json
import re
import sys

CAUSE_IDS = {"full": "device_full", "fragmentation": "fragmentation", "oversize": "oversize_split",
             "other_stream": "other_stream", "private_pool": "private_pool", "pending_free": "pending_free"}


def format_size(n):
    """c10's format_size for the OOM message: bytes below 1 KiB, else two decimals of KiB, MiB or GiB."""
    if n < 1024:
        return "%d bytes" % n
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024.0
        if n < 1024.0 or unit == "GiB":
            return "%.2f %s" % (n, unit)


def message_numbers(text):
    """The sizes PyTorch's message prints, as printed."""
    size = r"([0-9.]+ (?:bytes|KiB|MiB|GiB))"
    found = {}
    for key, pattern in (("tried", r"Tried to allocate " + size),
                         ("free", r"of which " + size + " is free"),
                         ("allocated", r"Of the allocated memory " + size + " is allocated by PyTorch"),
                         ("private_pools", r"with " + size + " allocated in private pools"),
                         ("reserved_unallocated", size + r" is reserved by PyTorch but unallocated")):
        m = re.search(pattern, text)
        if m:
            found[key] = m.group(1)
    return found


def main():
    report, notes, cause = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    check(report["oom"] and report["verdict"] == "oom", "verdict %r, not oom" % report["verdict"])
    message = notes.get("oom_message")
    check(message is not None, "the job did not run out of memory")
    if message:
        printed = message_numbers(message)
        check({"tried", "free", "allocated", "reserved_unallocated"} <= set(printed),
              "the job's message lacks numbers: %r" % message[:200])
        computed = report["computed_message"]
        for key, text in printed.items():
            mine = computed.get(key)
            check(mine is not None and format_size(mine) == text,
                  "%s: PyTorch printed %s, memprof computes %s" % (key, text,
                                                                 None if mine is None else format_size(mine)))
    figures = report["figures"]
    held = sum(c["bytes"] for c in report["causes"] if c["id"] not in ("device_full", "outside"))
    check(held == figures["reserved"] - figures["live"],
          "causes hold %d bytes, reserved - live is %d" % (held, figures["reserved"] - figures["live"]))
    ids = [c["id"] for c in report["causes"]]
    check(ids and ids[0] == CAUSE_IDS[cause], "first cause %s, expected %s (causes %s)" %
          (ids[0] if ids else None, CAUSE_IDS[cause], ids))
    check(all(r["why"] for r in report["remedies"] + report["not_helping"]), "a remedy without its reason")
    for r in report["remedies"]:
        print("REMEDY %s %s" % (r["id"], r["action"]))
    for f in failures:
        print("FAIL: %s" % f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

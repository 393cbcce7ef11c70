#!/usr/bin/env python3
"""normalise.py RULES COMMAND NAME FILE - FILE with what legitimately differs between two runs of one build masked,
on stdout; the rules that changed something on stderr, one a line.

outputs.sh calls it only for an output whose bytes differ between the two builds, on both sides, and counts the
case as equal when the masked forms are. RULES: "time-of-day", or "time-of-day,trace-times" for a target whose
trace times memprof converts (a core, a live process; never a snapshot file, whose times are data): the latter
masks what the clock-check rule below masks too. COMMAND is the
case's command (the memprof command name), NAME the stream (stdout, stderr) or the name of a file it wrote.

  time-of-day  gdb's `memprof snapshot take` names the time of day it took the snapshot ("at 12:34:56, N
               segments"), and `snapshot list` repeats it.
  trace-times  a core's or a live process's trace ring holds TSC ticks, which memprof converts to microseconds
               with clock pairs it measures itself at each run (src/walker/walk_clock.c, as PyTorch's
               ApproximateClock does at snapshot time): a time_us may come out 1 us off from one run to the
               next. Masked: the time_us of snapshots (JSON text; pickle integers zeroed in place, so the opcodes
               stay as written) and of --explain. The timeline, whose rows are the distinct microseconds (two
               events one microsecond apart are one row or two) and whose plots place every point by its time, is
               compared with every number masked and repeats collapsed: only its shape and words.
  clock-check  whether the target ran on this boot memprof decides by comparing the rate of the target's clock
               pairs with this machine's TSC rate over 20 ms (walk_clock.c): on a loaded machine that measure
               is off now and then, and memprof then warns "the target ran on another boot or machine: trace
               times are estimates" and `info` says "trace times: estimates". The warning is dropped, the word
               masked.
"""
import io
import pickletools
import re
import sys

TIME_OF_DAY = (re.compile(rb" at \d\d:\d\d:\d\d, (\d+ segments)"), rb" at HH:MM:SS, \1")
TIME_US = [
    (re.compile(rb'"time_us": -?\d+'), rb'"time_us": T'),
    (re.compile(rb"time_us -?\d+"), rb"time_us T"),
]
CLOCK_CHECK = [
    (re.compile(rb"memprof: warning: the target ran on another boot or machine: trace times are estimates[^\n]*\n"),
     b""),
    (re.compile(rb"trace times: (exact \(same boot as the target\)|estimates)"), rb"trace times: X"),
]
DIGITS = (re.compile(rb"\d+"), rb"N")
REPEATS = (re.compile(rb"(.{1,64}?)\1+", re.S), rb"\1")


def sub(data, rule, name, used):
    out = rule[0].sub(rule[1], data)
    if out != data:
        used.add(name)
    return out


def pickle_times(data, used):
    """The pickle with the number stored under every key 'time_us' zeroed in place (same length and opcodes)."""
    out = bytearray(data)
    memo = {}  # memo index -> whether it holds the key 'time_us'
    ops = list(pickletools.genops(io.BytesIO(data)))
    key_next = False  # the object on top of the stack is the key 'time_us'
    for i, (op, arg, pos) in enumerate(ops):
        end = ops[i + 1][2] if i + 1 < len(ops) else len(data)
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            key_next = arg == "time_us"
        elif op.name == "MEMOIZE":
            memo[len(memo)] = key_next  # the key stays on the stack
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = key_next
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            key_next = memo.get(arg, False)
        else:
            if key_next and op.name in ("BININT", "BININT1", "BININT2", "LONG1", "LONG4"):
                # the opcode and a LONG's length stay, the number's bytes go
                for k in range(pos + 1 + {"LONG1": 1, "LONG4": 4}.get(op.name, 0), end):
                    out[k] = 0
                used.add("trace-times")
            key_next = False
    return bytes(out)


def normalise(rules, command, name, data, used):
    data = sub(data, TIME_OF_DAY, "time-of-day", used)
    if "trace-times" not in rules:
        return data
    for rule in CLOCK_CHECK:
        data = sub(data, rule, "clock-check", used)
    if command == "timeline":
        data = sub(data, DIGITS, "trace-times", used)
        return REPEATS[0].sub(REPEATS[1], data)
    if name.endswith((".pickle", ".pkl")) or data.startswith(b"\x80"):
        try:
            return pickle_times(data, used)
        except Exception:  # not a pickle after all: as it is
            return data
    for rule in TIME_US:
        data = sub(data, rule, "trace-times", used)
    return data


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: normalise.py RULES COMMAND NAME FILE")
    with open(sys.argv[4], "rb") as f:
        data = f.read()
    used = set()
    sys.stdout.buffer.write(normalise(sys.argv[1].split(","), sys.argv[2], sys.argv[3], data, used))
    for name in sorted(used):
        print(name, file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""same_timeline.py A B - whether two `memprof timeline` summaries of the same target agree: every line equal,
except the trace times (`time_us N` and every other 13-digit microsecond count, `+S s`, `(S s)`), which may differ by a few microseconds. Each run converts
the ring's TSC stamps with clock pairs it measures itself, as PyTorch does at snapshot time (walk_clock.c), so two
runs can land on either side of a microsecond. Exit 0 when they agree; else print the first difference, exit 1."""
import re
import sys

TOLERANCE_US = 5
TIME = re.compile(r"\b(\d{13,})\b|([+(])(\d+\.\d+) s")


def times(line):
    """The line with its times replaced by a marker, and the times in microseconds."""
    found = []

    def keep(m):
        if m.group(1) is not None:
            found.append(int(m.group(1)))
            return "#"
        found.append(round(float(m.group(3)) * 1e6))
        return m.group(2) + "# s"

    return TIME.sub(keep, line), found


def main():
    a, b = (open(p).read().splitlines() for p in sys.argv[1:3])
    if len(a) != len(b):
        print(f"{len(a)} lines vs {len(b)}")
        return 1
    for n, (x, y) in enumerate(zip(a, b), 1):
        (sx, tx), (sy, ty) = times(x), times(y)
        if sx != sy or len(tx) != len(ty) or any(abs(p - q) > TOLERANCE_US for p, q in zip(tx, ty)):
            print(f"line {n}: {x!r} vs {y!r}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

# patch_memviz.py - make the "fixed" _memory_viz.py whose trace() memprof must match (TRACE-DEVIATIONS.md).
"""Usage: python3 patch_memviz.py ORIG.py FIXED.py

Applies the four trace() fixes listed in TRACE-DEVIATIONS.md to PyTorch's _memory_viz.py
(works on both the 2.6 single-quote and the 2.14 double-quote spelling).  Every edit must match
exactly once, otherwise this exits 1 naming the edit, so a changed upstream file fails loudly.
"""
import re
import sys

Q = r"""(["'])"""  # either quote style; back-referenced as \1 or a named group

EDITS = [
    # (1) TOTAL MEM: stop the enumerate() loop from clobbering the running byte count.
    ("running-total",
     r"for count, e in enumerate\(entries\):",
     "for _entry_index, e in enumerate(entries):"),
    # (2) the footer gets its newline.
    ("footer-newline",
     r"out\.write\(f" + Q + r"TOTAL MEM: \{Bytes\(count\)\}\1\)",
     r"out.write(f\1TOTAL MEM: {Bytes(count)}\\n\1)"),
    # (3) find_segment: a snapshot segment spans total_size, not allocated_size.
    ("segment-extent",
     r"size = seg\[" + Q + r"allocated_size\1\]",
     r"size = seg[\1total_size\1]"),
    # (4) find_segment: only segments of the trace's own device (index into all segments kept).
    ("device-arg",
     r"def format\(entries\):",
     "def format(entries, _device):"),
    ("device-call",
     r"format\(d\)",
     "format(d, i)"),
    ("device-filter",
     r"(?m)^(?P<ind>[ \t]+)for i, seg in enumerate\(data\[" + Q + r"segments\2\]\):\n",
     "\\g<0>\\g<ind>    if seg.get(\"device\") != _device:\n\\g<ind>        continue\n"),
]

HEADER = "# PATCHED by memprof tests/oracle/patch_memviz.py: trace() fixes, see TRACE-DEVIATIONS.md\n"


def patch(text):
    """Return TEXT with every edit applied; raise ValueError naming an edit that does not match once."""
    for name, pattern, repl in EDITS:
        text, n = re.subn(pattern, repl, text)
        if n != 1:
            raise ValueError(f"edit '{name}' matched {n} times (expected 1)")
    return HEADER + text


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        fixed = patch(text)
        compile(fixed, argv[2], "exec")
    except (ValueError, SyntaxError) as e:
        sys.stderr.write(f"patch_memviz: {argv[1]}: {e}\n")
        return 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(fixed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

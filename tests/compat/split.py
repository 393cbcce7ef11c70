#!/usr/bin/env python3
"""split.py STDOUT STDERR OUTDIR - cut one gdb session's two streams into one directory per command.

capture.py's compat-case writes "\\n@@compat begin ID\\n" before a command and "\\n@@compat end ID STATUS\\n" after
it on stdout ("... end ID\\n" on stderr). Each command's bytes go to OUTDIR/ID/stdout, OUTDIR/ID/stderr and its
status to OUTDIR/ID/status ("none" when the end marker never came: gdb died in it). What gdb printed outside every
command (the core's banner, detach messages) goes to OUTDIR/_gdb. The markers' leading newline is theirs: a
command's output that lacks its final newline keeps lacking it.
"""
import os
import re
import sys

MARK = re.compile(rb"\n@@compat (begin|end) (\S+)(?: (\d+))?\n")
OUTSIDE = "_gdb"


def cut(data):
    """{ID: bytes} of one stream, and {ID: status} from its end markers."""
    parts = MARK.split(b"\n" + data)  # the leading newline lets a marker open the stream
    texts = {OUTSIDE: parts[0][1:]}
    status = {}
    current = OUTSIDE
    for i in range(1, len(parts), 4):
        kind, name, code, text = parts[i].decode(), parts[i + 1].decode(), parts[i + 2], parts[i + 3]
        if kind == "begin":
            current = name
            texts.setdefault(name, b"")
        else:
            if code is not None:
                status[name] = code.decode()
            current = OUTSIDE
        texts[current] = texts.get(current, b"") + text
    return texts, status


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: split.py STDOUT STDERR OUTDIR")
    with open(sys.argv[1], "rb") as f:
        out, status = cut(f.read())
    with open(sys.argv[2], "rb") as f:
        err, _ = cut(f.read())
    for name in sorted(set(out) | set(err)):
        d = os.path.join(sys.argv[3], name)
        os.makedirs(d, exist_ok=True)
        for stream, texts in (("stdout", out), ("stderr", err)):
            with open(os.path.join(d, stream), "wb") as f:
                f.write(texts.get(name, b""))
        if name != OUTSIDE:
            with open(os.path.join(d, "status"), "w") as f:
                f.write(status.get(name, "none") + "\n")


if __name__ == "__main__":
    main()

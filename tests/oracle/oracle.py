# oracle.py - run PyTorch's own _memory_viz.py analyses on snapshot pickles: the reference memprof is diffed against.
"""Usage: python3 oracle.py MEMVIZ.py CMD IN [IN2] [-o OUT]

MEMVIZ.py  a _memory_viz.py (from fetch-oracle.sh; never stored in this repository)
CMD        stats     print(segsum(data)), as `python -m torch.cuda._memory_viz stats` prints
           trace     print(trace(data))
           segments  folded flamegraph lines of segments(data) to OUT (default stdout)
           memory    same for memory(data)
           compare   IN IN2: compare(before["segments"], after["segments"]); prints
                     `only_before = [...]` / `only_after = [...]` (addresses sorted ascending)
                     and writes the folded lines to OUT (default stdout, after those two lines)
           load-ok   run segsum, segments, memory and trace on IN; print nothing

Input is read like the CLI's _read: pickle.load, a bare list becomes {"segments": l, "traces": []}.
Output is UTF-8.  Exit 0 ok, 2 usage, 3 when _memory_viz.py (or reading IN) raised: the
exception's one-line text is on stderr.  differential.py imports load_memviz/read_snapshot/run.
"""
import ast
import contextlib
import importlib.util
import io
import pickle
import sys

COMMANDS = ("stats", "trace", "segments", "memory", "compare", "load-ok")


def load_memviz(path, name="_memory_viz_oracle"):
    """Import the _memory_viz.py at PATH as module NAME and return it."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_snapshot(path):
    """Load PATH exactly like _memory_viz.py's CLI `_read` does."""
    with open(path, "rb") as f:
        data = pickle.load(f)
    if isinstance(data, list):  # segments only...
        data = {"segments": data, "traces": []}
    return data


def _normalised_compare_lines(printed):
    """Turn compare()'s two printed lines into the sorted, deterministic form memprof prints."""
    lines = printed.splitlines()
    if len(lines) != 2 or not lines[0].startswith("only_before = ") or not lines[1].startswith("only_after = "):
        raise RuntimeError(f"unexpected compare() stdout: {printed!r}")
    before = sorted(ast.literal_eval(lines[0][len("only_before = "):]))
    after = sorted(ast.literal_eval(lines[1][len("only_after = "):]))
    return f"only_before = {before}\nonly_after = {after}\n"


def run(mod, cmd, data, data2=None):
    """Run CMD of module MOD on loaded snapshot(s).  Return (stdout_bytes, out_bytes_or_None).

    Any exception from _memory_viz.py (or from UTF-8 encoding its text) propagates.
    """
    ident = lambda s: s  # noqa: E731  (format_flamegraph that keeps the folded lines)
    if cmd == "stats":
        return (mod.segsum(data) + "\n").encode("utf-8"), None
    if cmd == "trace":
        return (mod.trace(data) + "\n").encode("utf-8"), None
    if cmd in ("segments", "memory"):
        return b"", getattr(mod, cmd)(data, format_flamegraph=ident).encode("utf-8")
    if cmd == "compare":
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            folded = mod.compare(data["segments"], data2["segments"], format_flamegraph=ident)
        return _normalised_compare_lines(buf.getvalue()).encode("utf-8"), folded.encode("utf-8")
    if cmd == "load-ok":
        mod.segsum(data)
        mod.segments(data, format_flamegraph=ident).encode("utf-8")
        mod.memory(data, format_flamegraph=ident).encode("utf-8")
        mod.trace(data).encode("utf-8")
        return b"", None
    raise ValueError(f"unknown command '{cmd}'")


def one_line(exc):
    """The exception as one line of text: 'Type: message'."""
    text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split("\n"))


def main(argv):
    args, out_path = list(argv[1:]), None
    if "-o" in args:
        i = args.index("-o")
        if i + 1 >= len(args):
            sys.stderr.write(__doc__)
            return 2
        out_path = args[i + 1]
        del args[i:i + 2]
    if len(args) < 3 or args[1] not in COMMANDS or len(args) != (4 if args[1] == "compare" else 3):
        sys.stderr.write(__doc__)
        return 2
    memviz, cmd, inputs = args[0], args[1], args[2:]
    mod = load_memviz(memviz)
    try:
        data = [read_snapshot(p) for p in inputs]
        stdout, out = run(mod, cmd, *data)
    except Exception as e:  # the oracle crashed on this input
        sys.stderr.write(f"oracle: {one_line(e)}\n")
        return 3
    sys.stdout.buffer.write(stdout)
    if out is not None:
        if out_path is None:
            sys.stdout.buffer.write(out)
        else:
            with open(out_path, "wb") as f:
                f.write(out)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

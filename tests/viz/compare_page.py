# compare_page.py - memprof's trace_plot/segment_plot page against the one PyTorch's _memory_viz.py writes.
"""Usage: python3 compare_page.py MEMVIZ.py PAGE SNAPSHOT.pickle KIND [--plot-segments] [--filter-freed]

KIND is trace_plot or segment_plot; PAGE the page memprof wrote for SNAPSHOT with the same options. PyTorch's
page is made by MEMVIZ.py's own function on SNAPSHOT loaded as its CLI loads it. Checked:
- the text around the embedded snapshot is the same, byte for byte, but for the view of --plot-segments (PyTorch
  asks for 'Active Cached Memory Timeline', which its viewer lacks; memprof for 'Active Cached Segment Timeline');
- local_files is one entry named snapshot.pickle whose base64 decodes to a pickle padded with NULs as PyTorch
  pads (1 to 3 of them, to a length a multiple of 3);
- that pickle loads to an object equal to the one PyTorch embeds.
Prints one line; exit 0 equal, 1 not, 2 usage.
"""
import base64
import contextlib
import io
import json
import math
import os
import pickle
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import oracle  # noqa: E402

MARK = "const local_files = "
PYTORCH_CACHED, MEMPROF_CACHED = "'Active Cached Memory Timeline'", "'Active Cached Segment Timeline'"


def split(page):
    """(before, local_files as text, after) of PAGE."""
    at = page.index(MARK) + len(MARK)
    end = page.index("\n", at)
    return page[:at], page[at:end], page[end:]


def embedded(files_text):
    files = json.loads(files_text)
    if len(files) != 1 or files[0].get("name") != "snapshot.pickle":
        raise ValueError(f"local_files is not one snapshot.pickle: {[f.get('name') for f in files]}")
    return base64.b64decode(files[0]["base64"], validate=True)


def same(a, b):
    """Equal as Python values (key order too), a NaN equal to a NaN; iterative: snapshots can nest deeply."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if list(x.keys()) != list(y.keys()):
                return False
            todo.extend((x[k], y[k]) for k in x)
        elif isinstance(x, (list, tuple)):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif x != y:
            return False
    return True


def pytorch_page(mod, data, kind, flags):
    """PyTorch's page, and a note when its --filter_freed raised on a snapshot without device_traces (a bare list
    of segments, the oldest files): memprof then has nothing to filter, and PyTorch's page without it is the one
    to match."""
    if kind == "segment_plot":
        return mod.segment_plot(data), ""
    plot_segments = "--plot-segments" in flags
    if "--filter-freed" in flags:
        if "device_traces" not in data:
            return mod.trace_plot(data, plot_segments=plot_segments), " (no device_traces: PyTorch's filter raises)"
        with contextlib.redirect_stdout(io.StringIO()):  # its 'free_completed without free_requested' lines
            return mod.trace_plot(data, plot_segments=plot_segments, filter_freed=True), ""
    return mod.trace_plot(data, plot_segments=plot_segments), ""


def main(argv):
    if len(argv) < 5 or argv[4] not in ("trace_plot", "segment_plot"):
        print(__doc__, file=sys.stderr)
        return 2
    memviz, page_path, snap_path, kind = argv[1:5]
    flags = set(argv[5:])
    mod = oracle.load_memviz(memviz)
    data = oracle.read_snapshot(snap_path)
    theirs, note = pytorch_page(mod, data, kind, flags)
    with open(page_path, encoding="utf-8") as f:
        mine = f.read()
    if "--plot-segments" in flags:
        theirs = theirs.replace(PYTORCH_CACHED, MEMPROF_CACHED)
    m, t = split(mine), split(theirs)
    if (m[0], m[2]) != (t[0], t[2]):
        print(f"FAIL: the text around the snapshot differs: {m[0][-80:]!r}...{m[2][:80]!r}")
        return 1
    raw_m, raw_t = embedded(m[1]), embedded(t[1])
    obj_m, obj_t = pickle.loads(raw_m), pickle.loads(raw_t)
    body = len(raw_m.rstrip(b"\0"))  # a pickle ends with STOP ('.'), never a NUL
    pad = len(raw_m) - body
    if pad != 3 - body % 3:
        print(f"FAIL: the embedded pickle is not padded as PyTorch pads: {len(raw_m)} bytes, {pad} NULs at the end")
        return 1
    if not same(obj_m, obj_t):
        print("FAIL: the embedded snapshot loads to another object than PyTorch's")
        return 1
    print(f"ok: {kind}{''.join(' ' + f for f in sorted(flags))}: same page text, an embedded pickle of "
          f"{len(raw_m)} bytes (PyTorch's: {len(raw_t)}) that loads to PyTorch's object{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

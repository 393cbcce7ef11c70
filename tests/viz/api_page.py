# api_page.py - a page through the Python API, the viewer and d3 given as the session's settings.
"""Usage: python3 api_page.py SNAPSHOT VIEWER.js D3.js OUT.html   (memprof importable, MEMPROF_LIBRARY set)

memprof.open(SNAPSHOT, viewer=VIEWER.js, d3=D3.js).segment_plot(output=OUT.html) must write a page with the
viewer inlined (its d3 imports rewritten, no URL), and memprof.open with a viewer that is not there must fail
naming the setting. Prints "ok", else raises."""
import sys

import memprof

snap, viewer, d3, page = sys.argv[1:]
memprof.open(snap, viewer=viewer, d3=d3).segment_plot(output=page)
with open(page, encoding="ascii") as f:
    text = f.read()
assert "const {axisLeft} = globalThis.d3;" in text and "https://" not in text, "the viewer is not inlined"
assert "add_local_files(local_files, 'Allocator State History')" in text, "no call of the viewer"
try:
    memprof.open(snap, viewer=viewer + ".nosuch")
except memprof.MemprofError as e:
    assert "viewer" in str(e) and "No such file" in str(e), str(e)
else:
    raise SystemExit("a viewer that is not there was taken")
print("ok")

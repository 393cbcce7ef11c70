#!/usr/bin/env python3
"""memoryviz_page.py - the pieces of tests/oracle/memoryviz.sh: the memory_viz page as PyTorch writes it, around
given pickle bytes, and what headless Chromium made of it.

  memoryviz_page.py site MEMORYVIZ_JS D3_JS DIR
      DIR/MemoryViz.js: PyTorch's file with its five skypack imports of d3 (d3@5, d3-axis@1, d3-scale@1,
      d3-zoom@1, d3-brush@1) replaced by names taken from Debian's d3 v5 UMD bundle, DIR/d3.js, which the
      rewritten file imports first (the bundle sets globalThis.d3). Nothing else of the file changes.
  memoryviz_page.py reference TRUTH.json MEMPROF.pickle|- OUT.pickle
      pickle.dump (protocol 4, as torch.cuda.memory._dump_snapshot) of the test bed's truth made into the value
      _snapshot() would return at the moment of the core (see reference() below); its frames emptied when
      MEMPROF.pickle has no frame at all, kept with '-'. Prints which.
  memoryviz_page.py job-reference JOB.pickle MEMPROF.pickle OUT.pickle
      a job's own _snapshot() with the 'snapshot' entry its call appended to each ring after copying it (which a
      core taken right after holds), taken from memprof's snapshot of that core.
  memoryviz_page.py corrupt IN.pickle OUT.pickle
      the negative control: IN with its largest segment 2 MiB larger (and its last block with it).
  memoryviz_page.py page MEMORY_VIZ_PY trace_plot|segment_plot PICKLE URL OUT.html
      the HTML of _memory_viz.py's own trace_plot()/segment_plot() with the pickle bytes of PICKLE in place of
      its pickle.dumps(data), the CDN URL of MemoryViz.js replaced by URL, and three scripts of ours added at the
      end of the body (see page() below). Loaded with ?memprof-wait=MS, the page holds its load event back until
      it is done, MS ms at most (HOLD_SCRIPT).
  memoryviz_page.py instrument PAGE.html URL OUT.html
      a page memprof wrote (trace_plot, segment_plot; online or --offline) made ready the same way: the CDN URL
      replaced by URL where it has one, our three scripts added.
  memoryviz_page.py dom DUMP.html PICKLE OUT.txt
      check Chromium's --dump-dom of such a page (no error, every view of every device drawn, enough SVG for the
      snapshot) and write the DOM without its scripts to OUT.txt for comparison. Prints one line; exit 1 when a
      check fails.
  memoryviz_page.py serve DIR PORTFILE
      serve DIR over HTTP on 127.0.0.1, a free port written to PORTFILE, until killed (module scripts are not
      run from file:// URLs); /memprof-wait?ms=MS answers after MS ms (HOLD_SCRIPT).
"""
import functools
import http.server
import importlib.util
import json
import os
import pickle
import re
import sys
import time
import urllib.parse
from html.parser import HTMLParser

CDN = "https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js"

# MemoryViz.js 2.6's imports, each replaced by the same names from the d3 v5 bundle. d3.event must stay live
# (d3-selection sets it during each listener call): the bundle keeps it as a plain property of its exports
# object, so `d3` has to be that object, not a copy of its properties.
IMPORTS = {
    'import * as d3 from "https://cdn.skypack.dev/d3@5";':
        'import "./d3.js";\nconst d3 = globalThis.d3;',
    'import {axisLeft} from "https://cdn.skypack.dev/d3-axis@1";': 'const {axisLeft} = globalThis.d3;',
    'import {scaleLinear} from "https://cdn.skypack.dev/d3-scale@1";': 'const {scaleLinear} = globalThis.d3;',
    'import {zoom, zoomIdentity} from "https://cdn.skypack.dev/d3-zoom@1";':
        'const {zoom, zoomIdentity} = globalThis.d3;',
    'import {brushX} from "https://cdn.skypack.dev/d3-brush@1";': 'const {brushX} = globalThis.d3;',
}

# Added before </body>, first: what makes Chromium's --dump-dom wait for the page. --dump-dom serializes the DOM
# once the page's load event has fired (with --virtual-time-budget, once that much virtual time has passed after
# it; but under virtual time the animation frames that MemoryViz.js and our driver wait on all but stop: 3 frames
# in 20 s of virtual time, tried by hand. No budget waits for them, and a page whose frames had not come by its
# load event was dumped unfinished, which a loaded machine made happen). So the page holds its own load event
# back: with ?memprof-wait=MS in its URL, a hidden <iframe> of `serve`'s /memprof-wait?ms=MS, which that server
# answers only after MS ms of real time. The load event waits for the iframe; the driver removes it once the page
# is done (an uncaught error removes it too: the page will not finish then), so the load event, and the dump,
# come right after the page is done, or after MS ms when it never is. When the wait runs out, the iframe's load
# marks <html> data-memprof-wait. The script leaves one newline in the DOM (both pages of a comparison alike).
HOLD_SCRIPT = """<script>
(function () {
  window.memprofRelease = () => {};
  const ms = new URLSearchParams(location.search).get('memprof-wait');
  if (!ms) return;
  const hold = document.createElement('iframe');
  hold.style.display = 'none';
  hold.onload = () => document.documentElement.setAttribute('data-memprof-wait', ms);
  hold.src = '/memprof-wait?ms=' + encodeURIComponent(ms);
  document.body.appendChild(hold);
  window.memprofRelease = () => hold.remove();
  window.addEventListener('error', () => hold.remove());
  window.addEventListener('unhandledrejection', () => hold.remove());
})();
</script>
"""

# Added before </body>. A classic script runs while the page is parsed, before any module script (those are
# deferred), so it sees every error MemoryViz.js raises, and console.error/warn calls; it keeps them in an
# attribute of <html>, which `dom` reads and removes.
ERRORS_SCRIPT = """<script>
(function () {
  const errs = [];
  const note = s => { errs.push(String(s)); document.documentElement.setAttribute('data-memprof-errors', JSON.stringify(errs)); };
  window.addEventListener('error', e => note('error: ' + (e.error && e.error.stack || e.message)));
  window.addEventListener('unhandledrejection', e => note('unhandled rejection: ' + (e.reason && e.reason.stack || e.reason)));
  for (const k of ['error', 'warn']) {
    const f = console[k];
    console[k] = function (...a) { note('console.' + k + ': ' + a.join(' ')); return f.apply(this, a); };
  }
})();
</script>
"""

# A module script after PyTorch's runs after it, once add_local_files() has drawn the page's first view. It then
# does what a person does with the page: with its three <select>s (file, view, device), every view it offers on
# every device it lists (setting the selects and firing 'change': the page's own handler draws each view into a
# div of its own, kept in the DOM; the last one drawn stays visible); then, in each view, the mouse over every
# element that has a mouseover handler (d3 keeps them in node.__on), in document order, noting after each the
# text of the view's <pre>s that are no hover targets (the segment view's stack pane, the timeline's context
# pane: sizes, addresses, states, streams, frames). The notes go into a <pre data-memprof-hover> at the end of
# the body, compared with the rest. Then it waits two animation frames (the segment view selects its last event
# in one), marks <html> data-memprof-done with the number of views drawn and lets the page's load event come
# (HOLD_SCRIPT).
DRIVER_SCRIPT = """<script type="module">
const sel = Array.from(document.querySelectorAll('body > select'));
const done = n => { document.documentElement.setAttribute('data-memprof-done', String(n)); memprofRelease(); };
if (sel.length !== 3) {
  done('no selects: ' + sel.length);
} else {
  const [, view, gpu] = sel;
  const devices = Array.from(gpu.options).map(o => o.value);
  let n = 0;
  for (const v of Array.from(view.options).map(o => o.value)) {
    for (const d of devices) {
      view.value = v;
      gpu.value = d;
      gpu.dispatchEvent(new Event('change'));
      n++;
    }
  }
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const notes = [];
    const hoverable = el => (el.__on || []).some(l => l.type === 'mouseover');
    Array.from(document.querySelectorAll('body > div')).forEach((div, i) => {
      const all = Array.from(div.querySelectorAll('*'));
      const panes = all.filter(el => el.tagName === 'PRE' && !hoverable(el));
      for (const el of all.filter(hoverable)) {
        el.dispatchEvent(new MouseEvent('mouseover'));
        notes.push(`view ${i} ${el.tagName}: ` + panes.map(p => p.textContent).join(' | '));
      }
    });
    const pre = document.createElement('pre');
    pre.setAttribute('data-memprof-hover', String(notes.length));
    pre.textContent = notes.join('\\n');
    document.body.appendChild(pre);
    done(n);
  }));
}
</script>
"""


def site(memoryviz_js, d3_js, out_dir):
    with open(memoryviz_js, encoding="utf-8") as f:
        js = f.read()
    for old, new in IMPORTS.items():
        if js.count(old) != 1:
            sys.exit(f"memoryviz_page: {memoryviz_js}: expected the import line once: {old}")
        js = js.replace(old, new)
    left = [x for x in re.findall(r"^import .*$", js, re.M) if x != 'import "./d3.js";']
    if left:
        sys.exit(f"memoryviz_page: {memoryviz_js}: imports left after the rewrite: {left}")
    with open(f"{out_dir}/MemoryViz.js", "w", encoding="utf-8") as f:
        f.write(js)
    with open(d3_js, "rb") as f, open(f"{out_dir}/d3.js", "wb") as g:
        g.write(f.read())


def untag(v):
    """memprof JSON (src/model/SCHEMA.md) -> the Python value; segment_pool_id 2-lists become tuples below."""
    if isinstance(v, list):
        return [untag(x) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (tag, x), = v.items()
        if tag == "__tuple__":
            return tuple(untag(y) for y in x)
        if tag == "__int__":
            return int(x)
        if tag == "__float__":
            return float(x)
        if tag == "__dict__":
            return {untag(k): untag(y) for k, y in x}
        if tag in ("__bytes__", "__str__"):
            raise SystemExit(f"memoryviz_page: unexpected {tag} in a truth file")
    return {k: untag(x) for k, x in v.items()}


def frames_of(v):
    """Every frame dict in a snapshot value."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "frames" and isinstance(x, list):
                yield from (f for f in x if isinstance(f, dict) and "name" in f)
            elif isinstance(x, (dict, list)):
                yield from frames_of(x)
    elif isinstance(v, list):
        for x in v:
            yield from frames_of(x)


def has_frames(v):
    if isinstance(v, dict):
        return bool(v.get("frames")) or any(has_frames(x) for x in v.values() if isinstance(x, (dict, list)))
    if isinstance(v, list):
        return any(has_frames(x) for x in v)
    return False


def reference(truth_path, memprof_path, out_path):
    """The value PyTorch's _snapshot() would have returned when the core was written, from the truth the test bed's
    driver took with the allocator's own snapshot() just before (tests/testbed/scenarios/README.md):

    - only the keys _snapshot() returns (segments, device_traces, allocator_settings, external_annotations, in
      that order); the test bed's own keys (time_is_tsc, scenario, device_stats, scenario_notes) go;
    - segment_pool_id a tuple, as Module.cpp builds it (the truth's JSON has a 2-list);
    - snapshot() appends a SNAPSHOT entry to each recording device's ring after copying it, so a snapshot() at
      the core holds one more entry: {'action': 'snapshot', 'addr': 0, 'size': the device's active bytes,
      'stream': 0, 'time_us': ...} without frames; a ring at its capacity (scenario_notes.ring_entries) loses its
      oldest entry to it. Its time is not drawn by the page; the last entry's is used;
    - every frames list emptied when memprof's pickle has none: memprof does not decode the frames of a walked
      process yet (README.md, "Status"; tests/walker/compare_truth.py does not compare them either), so the
      frames the test bed's recorder gave are not in its pickle. Frames in the page are checked by the
      example.pickle round trip instead. Once memprof writes frames, the truth's are kept and compared.
    """
    with open(truth_path, encoding="utf-8") as f:
        truth = untag(json.load(f))
    keep = True
    if memprof_path != "-":
        with open(memprof_path, "rb") as f:
            keep = has_frames(pickle.load(f))
    cap = truth.get("scenario_notes", {}).get("ring_entries")
    snap = {k: truth[k] for k in ("segments", "device_traces", "allocator_settings", "external_annotations")
            if k in truth}
    for seg in snap["segments"]:
        seg["segment_pool_id"] = tuple(seg["segment_pool_id"])
        if not keep:
            seg["frames"] = []
            for b in seg["blocks"]:
                b["frames"] = []
    for dev, ring in enumerate(snap["device_traces"]):
        for e in ring:
            if "frames" in e and not keep:
                e["frames"] = []
        if ring:
            active = sum(s["active_size"] for s in snap["segments"] if s["device"] == dev)
            ring.append({"action": "snapshot", "addr": 0, "size": active, "stream": 0,
                         "time_us": ring[-1]["time_us"]})
            if cap is not None and len(ring) > cap:
                del ring[0]
    with open(out_path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print("frames kept" if keep else "frames emptied (memprof's pickle has none)")


def corrupt(in_path, out_path):
    with open(in_path, "rb") as f:
        snap = pickle.load(f)
    seg = max(snap["segments"], key=lambda s: s["total_size"])
    seg["total_size"] += 2 << 20
    seg["blocks"][-1]["size"] += 2 << 20
    with open(out_path, "wb") as f:
        pickle.dump(snap, f, protocol=4)


def job_reference(job_path, memprof_path, out_path):
    """A job's own _snapshot() (JOB_PATH, pickled at its checkpoint) as the ring stood at the core taken right
    after: _snapshot() appends a 'snapshot' entry to each ring it copied, after copying it, so the core holds one
    entry more than the job's pickle. That entry is taken from memprof's snapshot of the core (MEMPROF_PATH) where
    it is the one entry memprof's ring has beyond the job's; nothing else changes."""
    with open(job_path, "rb") as f:
        snap = pickle.load(f)
    with open(memprof_path, "rb") as f:
        mine = pickle.load(f)
    added = 0
    for ring, theirs in zip(snap.get("device_traces", []), mine.get("device_traces", [])):
        if len(theirs) == len(ring) + 1 and theirs[-1].get("action") == "snapshot":
            ring.append(theirs[-1])
            added += 1
    with open(out_path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print(f"{added} 'snapshot' entr{'y' if added == 1 else 'ies'} added")


def page(memory_viz_py, kind, pickle_path, url, out_path):
    """PyTorch's own page: _format_viz() pickles `data` with pickle.dumps and base64s it into its template; here
    its module's `pickle` is a stand-in whose dumps() returns the file's bytes, so the page carries exactly the
    bytes memprof (or the reference) wrote, padded and encoded by PyTorch's code."""
    spec = importlib.util.spec_from_file_location("memory_viz_2_6", memory_viz_py)
    mv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mv)
    with open(pickle_path, "rb") as f:
        raw = f.read()

    class FileBytes:
        @staticmethod
        def dumps(_data):
            return raw

    mv.pickle = FileBytes
    html = {"trace_plot": mv.trace_plot, "segment_plot": mv.segment_plot}[kind](None)
    with_scripts(html, url, out_path, memory_viz_py)


def with_scripts(html, url, out_path, whose):
    """HTML with the CDN URL of MemoryViz.js replaced by URL (an offline page, which has the viewer inlined,
    has none) and our three scripts added at the end of its body, into OUT_PATH."""
    if html.count(CDN) > 1 or (html.count(CDN) == 0 and "export function add_local_files" not in html) or \
            html.count("</body>") != 1:
        sys.exit(f"memoryviz_page: {whose}: its page neither imports {CDN} once nor inlines the viewer")
    html = html.replace(CDN, url).replace("</body>", HOLD_SCRIPT + ERRORS_SCRIPT + DRIVER_SCRIPT + "</body>")
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(html)


def instrument(page_path, url, out_path):
    """A page someone else wrote (memprof's trace_plot/segment_plot), made ready for Chromium as page() makes
    PyTorch's."""
    with open(page_path, encoding="utf-8") as f:
        with_scripts(f.read(), url, out_path, page_path)


# The views of MemoryViz.js 2.6 (its `kinds`), in the page's order, and the two _memory_viz.py's page functions
# open it on. trace_plot(plot_segments=True) asks for 'Active Cached Memory Timeline', a name 2.6's page does not
# have (its view is 'Active Cached Segment Timeline'), so that page is left out.
VIEWS = ("Active Memory Timeline", "Allocator State History", "Active Cached Segment Timeline", "Allocator Settings")


def devices(snap):
    """The devices the page lists (snapshot_change(): those with a trace entry or a segment)."""
    devs = {s["device"] for s in snap["segments"]}
    devs |= {i for i, t in enumerate(snap["device_traces"]) if t}
    return sorted(devs)


def page_events(ring):
    """The entries the segment view lists: annotate_snapshot() folds a free_completed into the free_requested of
    the same address just before it."""
    n, prev = 0, None
    for e in ring:
        if not (e["action"] == "free_completed" and prev is not None and prev["action"] == "free_requested"
                and prev.get("addr") == e.get("addr")):
            n += 1
        prev = e
    return n


class Views(HTMLParser):
    """The top-level <div>s of <body> (the page puts each view it draws in one of its own) with, for each, how
    many elements of each tag it holds and its text."""
    VOID = {"input", "br", "meta", "img", "link", "hr", "col", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.divs, self.selects = [], [], []

    def _in_view(self):
        return len(self.stack) >= 3 and self.stack[:3] == ["html", "body", "div"]

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)
        if self.stack == ["html", "body", "div"] and tag == "div":
            self.divs.append({"#text": ""})
        elif self._in_view():
            self.divs[-1][tag] = self.divs[-1].get(tag, 0) + 1
        if self.stack == ["html", "body", "select"]:
            self.selects.append([])

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            raise ValueError(f"unbalanced </{tag}> in {self.stack[-4:]}")
        self.stack.pop()

    def handle_data(self, data):
        if self._in_view():
            self.divs[-1]["#text"] += data
        elif self.stack[:3] == ["html", "body", "select"] and self.stack[-1] == "option":
            self.selects[-1].append(data)


def dom(dump_path, pickle_path, out_path):
    with open(dump_path, encoding="utf-8") as f:
        text = f.read()
    with open(pickle_path, "rb") as f:
        snap = pickle.load(f)
    problems = []
    m = re.search(r' data-memprof-errors="([^"]*)"', text)
    if m:
        problems.append("JS errors: " + m.group(1).replace("&quot;", '"')[:600])
    devs = devices(snap)
    m = re.search(r' data-memprof-done="([^"]*)"', text)
    if not m:
        w = re.search(r' data-memprof-wait="(\d+)"', text)
        problems.append("the page never finished (no data-memprof-done" +
                        (f"; its wait of {int(w.group(1)) / 1000:g} s ran out)" if w else ")"))
    elif m.group(1) != str(len(VIEWS) * len(devs)):
        problems.append(f"{m.group(1)} views drawn, expected {len(VIEWS)} kinds x devices {devs}")
    m = re.search(r"add_local_files\(local_files, '([^']*)'\)", text)
    first = m.group(1) if m else None
    m = re.search(r'<pre data-memprof-hover="(\d+)">(.*?)</pre>', text, re.S)
    hovers, hover_text = (int(m.group(1)), m.group(2)) if m else (0, "")
    if hovers == 0:
        problems.append("no element answered the mouse")
    # The frames are drawn only on hover: some of them must be in the notes.
    names = {f["name"] for f in frames_of(snap)}
    if names and not any(n in hover_text for n in names):
        problems.append(f"none of the {len(names)} frame names is shown on hover")
    # The DOM without what MemoryViz.js did not draw: the <script> elements (their text is the input: the base64
    # of the pickle, whose bytes legitimately differ between two writers of the same value, and our two scripts)
    # and the attributes our scripts put on <html> and the notes' <pre>.
    body = re.sub(r"<script\b[^>]*>.*?</script>", "", text, flags=re.S)
    body = re.sub(r' data-memprof-[a-z]+="[^"]*"', "", body)
    # The one normalisation of drawn text: the timeline's context pane prints each allocation's time_us as a Date
    # to the second. memprof converts the ring's TSC stamps to time_us itself (README.md; within 1 us of
    # snapshot()'s on this machine, tests/walker/compare_truth.py allows 1000), so a stamp a hair from a second
    # boundary would print one second off. The time is replaced by (time); the rest of the line is kept.
    body = re.sub(r"timestamp [A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[-+]\d{4} \([^)]*\)",
                  "timestamp (time)", body)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(body)
    p = Views()
    try:
        p.feed(body)
        p.close()
    except ValueError as e:
        problems.append(f"DOM: {e}")
    if len(p.selects) != 3 or tuple(p.selects[1]) != VIEWS or p.selects[2] != [str(d) for d in devs]:
        problems.append(f"the page's selects are {p.selects}, expected the views {list(VIEWS)} and devices {devs}")
    # The views in the order their divs were made: the page's first one, then the driver's, each once; the first
    # top-level div is the page's drag-and-drop line.
    order = [(first, devs[0])] if devs else []
    for v in VIEWS:
        for d in devs:
            if (v, d) not in order:
                order.append((v, d))
    views = p.divs[1:]
    if len(views) != len(order):
        problems.append(f"{len(views)} view divs, expected {len(order)}")
    # Enough drawn, per view and device: the timeline a polygon per allocation (every active block is one), the
    # cached-segment timeline a polygon per segment, the segment view a rect per segment and per active block and
    # a <pre> per listed trace entry, the settings view each top-level key.
    shown = []
    for (v, d), got in zip(order, views):
        segs = [s for s in snap["segments"] if s["device"] == d]
        active = sum(b["state"] != "inactive" for s in segs for b in s["blocks"])
        events = page_events(snap["device_traces"][d]) if d < len(snap["device_traces"]) else 0
        if v == "Active Memory Timeline":
            need = {"polygon": active}
        elif v == "Active Cached Segment Timeline":
            need = {"polygon": len(segs)}
        elif v == "Allocator State History":
            need = {"rect": len(segs) + active, "pre": events}
        else:
            need = {}
            keys = snap.get("allocator_settings", {})
            missing = [k for k in keys if f'"{k}"' not in got["#text"]]
            if "allocator_settings" not in snap and "No allocator settings found." not in got["#text"]:
                missing = ["(the no-settings line)"]
            if missing:
                problems.append(f"{v} on {d}: lacks {missing}")
        for tag, n in need.items():
            if got.get(tag, 0) < n:
                problems.append(f"{v} on {d}: {got.get(tag, 0)} <{tag}> for {n} expected at least")
        shown.append("/".join(f"{got.get(t, 0)}" for t in ("polygon", "rect", "pre")))
    if not re.search(r"<polygon\b", body) or not re.search(r"<rect\b", body):
        problems.append("no <polygon> or no <rect> at all")
    summary = (f"{len(views)} views (polygon/rect/pre: {' '.join(shown)}), {hovers} hovers, "
               f"{len(body)} bytes of DOM")
    if problems:
        print(f"{summary}: " + "; ".join(problems))
        return 1
    print(summary)
    return 0


def serve(directory, port_file):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_args):
            pass

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path != "/memprof-wait":
                super().do_GET()
                return
            # The page's hold (HOLD_SCRIPT): answered after ms of real time. A page that finishes first removes
            # its iframe and drops the connection; this thread then only sleeps out its time.
            ms = int(urllib.parse.parse_qs(url.query).get("ms", ["0"])[0])
            time.sleep(ms / 1000)
            body = b"memprof: the page's wait ran out\n"
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=directory))
    with open(port_file + ".tmp", "w", encoding="ascii") as f:
        f.write(f"{server.server_port}\n")
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


def main(argv):
    cmds = {"site": (site, 3), "reference": (reference, 3), "corrupt": (corrupt, 2), "job-reference": (job_reference, 3), "page": (page, 5), "instrument": (instrument, 3),
            "dom": (dom, 3), "serve": (serve, 2)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.exit(__doc__)
    fn, _ = cmds[argv[1]]
    return fn(*argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""screenshot_check.py svg|html PNG PLOT EXPECT_JSON DEVICE - check a headless Chromium screenshot of
memprof's timeline plot: the page is not blank, every legend swatch shows its category's colour
(torch.profiler's _CATEGORY_TO_COLORS), and inside the plot area the colour of every category the
expected timeline holds long enough is drawn, and none of a category it never holds.

svg: PNG is the bare SVG PLOT shot at its own size, so the plot area and the swatches are found
at the coordinates PLOT gives them. html: PNG is the page; colours are counted anywhere."""
import json
import sys
import xml.etree.ElementTree as ET

from PIL import Image

# CSS's named colours, as the profiler names its categories' (None is its UNKNOWN).
COLOURS = {"PARAMETER": ("darkgreen", (0, 100, 0)), "OPTIMIZER_STATE": ("goldenrod", (218, 165, 32)),
           "INPUT": ("black", (0, 0, 0)), "TEMPORARY": ("mediumpurple", (147, 112, 219)),
           "ACTIVATION": ("red", (255, 0, 0)), "GRADIENT": ("mediumblue", (0, 0, 205)),
           "AUTOGRAD_DETAIL": ("royalblue", (65, 105, 225)), None: ("grey", (128, 128, 128))}
SVG = "{http://www.w3.org/2000/svg}"
failures = []


def fail(msg):
    failures.append(msg)


def near(a, b, tol=6):
    return all(abs(x - y) <= tol for x, y in zip(a[:3], b))


def held(expect, device):
    """Per category, the share of the time span it holds at least 3% of the peak total."""
    events = sorted(expect["devices"][device]["timeline"], key=lambda e: (e[0], ["PREEXISTING", "CREATE",
                                                                              "INCREMENT_VERSION", "DESTROY"].index(e[1])))
    times = [e[0] for e in events if e[0] >= 0]
    t_min, t_max = (min(times), max(times)) if times else (0, 0)
    rows, cur, last = [], {}, None
    for t, action, _tid, size, cat in events:
        t = t_min if t < 0 else t
        if last is not None and t != last:
            rows.append((last, dict(cur)))
        cur[cat] = cur.get(cat, 0) + (-size if action == "DESTROY" else size)
        last = t
    rows.append((last, dict(cur)))
    peak = max(sum(r.values()) for _, r in rows) or 1
    span = max(t_max - t_min, 1)
    share, ever = {}, set()
    for (t, r), nxt in zip(rows, rows[1:] + [(t_max, None)]):
        for cat, b in r.items():
            if b > 0:
                ever.add(cat)
            if b >= 0.03 * peak:
                share[cat] = share.get(cat, 0) + (nxt[0] - t) / span
    return {c for c, s in share.items() if s >= 0.03}, ever


def count(img, box, rgb):
    """Pixels of IMG in BOX of about colour RGB (anti-aliased edges aside)."""
    return sum(n for n, c in img.crop(box).getcolors(maxcolors=1 << 24) if near(c, rgb))


def main():
    mode, png, plot, expect_path, device = sys.argv[1:]
    img = Image.open(png).convert("RGB")
    w, h = img.size
    expect = json.load(open(expect_path))
    visible, ever = held(expect, device)
    white = count(img, (0, 0, w, h), (255, 255, 255))
    if white > 0.97 * w * h:
        fail("the screenshot is blank (%d of %d pixels white)" % (white, w * h))
    if mode == "svg":
        root = ET.parse(plot).getroot()
        area = next(r for r in root.iter(SVG + "rect") if r.get("id") == "plot")
        x, y = int(float(area.get("x"))), int(float(area.get("y")))
        box = (x + 2, y + 2, x + int(float(area.get("width"))) - 2, y + int(float(area.get("height"))) - 2)
        swatches = [r for r in root.iter(SVG + "rect") if r.get("class") == "swatch"]
        fills = sorted(r.get("fill") for r in swatches)
        if fills != sorted(name for name, _ in COLOURS.values()):
            fail("legend swatches %s are not the profiler's colours" % fills)
        names = {t.text for t in root.iter(SVG + "text")}
        for cat in COLOURS:
            if (cat or "UNKNOWN") not in names:
                fail("no legend entry names %s" % (cat or "UNKNOWN"))
        for r in swatches:
            cx, cy = int(float(r.get("x")) + 9), int(float(r.get("y")) + 9)
            rgb = next((v for n, v in COLOURS.values() if n == r.get("fill")), None)
            if rgb is None:
                continue  # said above
            if not near(img.getpixel((cx, cy)), rgb):
                fail("the %s swatch at %d,%d shows %s" % (r.get("fill"), cx, cy, img.getpixel((cx, cy))))
    else:
        box = (0, 0, w, h)
        for cat, (name, rgb) in COLOURS.items():
            if count(img, box, rgb) < 100:
                fail("the page shows no %s swatch for %s" % (name, cat))
    for cat, (name, rgb) in COLOURS.items():
        n = count(img, box, rgb)
        if cat in visible and n < 200:
            fail("%s is held for long but only %d %s pixels are drawn" % (cat, n, name))
        if mode == "svg" and cat not in ever and n > 4:
            fail("%s is never held but %d %s pixels are in the plot" % (cat, n, name))
    for f in failures:
        print("screenshot_check: %s: %s" % (png, f))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

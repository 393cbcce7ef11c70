"""compare.py - memprof's categories against PyTorch's memory profiler, allocation by allocation.

usage: compare.py MATCHES.json TIMELINE.raw.json BLOCKS.json [--json OUT] [--label NAME]

MATCHES.json   match.py --out: each ring alloc entry the profiler saw, with the profiler's category
TIMELINE.raw.json   `memprof timeline SNAPSHOT --format raw`: [[time_ns, action, bytes, category index], ...]
BLOCKS.json    `memprof categories SNAPSHOT --format json --blocks`: the end state, block by block

The timeline's CREATE events (action 2) are memprof's categories of the ring's allocs, in time order; an event is
paired with the ring entry of the same time (us) and requested size, in order. Bytes are the profiler's (the block
sizes its timeline charges). The profiler's None and memprof's UNKNOWN are the same answer: no category.

The profiler is read two ways (profiler_oracle.py): as it labels each allocation ("category": its tensor ids
join storages through reused TensorImpl addresses, and a label reaches every storage of an id) and with each
storage its own tensor ("category_per_storage"). Where the two readings agree, that is the reference; where they
differ, the profiler's answer depends on its tensor identity ("ambiguous"), and memprof agrees when it gives one
of the two. The figures count both, and say how many allocations and bytes were ambiguous and which reading
memprof met.

Peaks: each category's largest total over the matched allocations' lifetimes (the ring's alloc to free times),
as memprof and as the profiler (both readings) label them: the same allocations, the same times, only the labels
differ.

Prints: allocations agreeing / all, the share of bytes agreeing, the confusion table (profiler -> memprof, the
profiler's reading as charged, "A|B" where the readings differ) by count and bytes, and the end state (the blocks
alive at the end that the profiler saw allocated: agreeing / all, and among those it labels). A block the
profiler calls PARAMETER only by its data-flow fallback (parameter_source "data_flow": no module or optimizer held
it as a parameter, as its Python tracer saw them) and that memprof, having read the Python heap of a core (where the
owners hold every module's and optimizer's parameters), does not call PARAMETER (a BatchNorm's num_batches_tracked,
a GradScaler's scale) is counted apart ("data_flow_parameters_refuted"), not as labelled.
"""
import argparse
import collections
import json

# export_memory_timeline_raw's category indices (the profiler's plot order), None last
RAW_NAMES = ["PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", None]
CREATE = 2


def label(name):
    return None if name in (None, "UNKNOWN") else name


def readings(m):
    """The profiler's answers for match M: one, or two where its tensor identity decides."""
    as_is = label(m["category"])
    per_storage = label(m.get("category_per_storage", m["category"]))
    return (as_is,) if as_is == per_storage else (as_is, per_storage)


def show(answers):
    return "|".join(str(a) for a in answers)


def memprof_categories(raw, matches):
    """memprof's category of each match, from the timeline's CREATE events ("?" where none pairs). A core's
    times may be a microsecond or two off the oracle's snapshot: each converts the TSC with clock pairs of its own
    moment."""
    creates = collections.defaultdict(collections.deque)
    for t_ns, action, nbytes, cat in raw:
        if action == CREATE:
            creates[(t_ns // 1000, nbytes)].append(RAW_NAMES[cat] if 0 <= cat < len(RAW_NAMES) else "?")
    out = []
    for m in matches:
        q = next((q for dt in (0, -1, 1, -2, 2) for q in [creates.get((m["time_us"] + dt, m["requested"]))] if q),
                 None)
        out.append(label(q.popleft()) if q else "?")
    return out


def peaks(matches, labels):
    """The peak bytes of each category over the matched allocations' lifetimes (the ring's times: alloc to
    free_requested, or the end), LABELS[i] being match i's category."""
    events = []
    for m, cat in zip(matches, labels):
        size = m.get("block_size") or m["requested"]
        events.append((m["time_us"], 1, size, cat))
        if m.get("free_us") is not None:
            events.append((m["free_us"], 0, -size, cat))
    now, peak = collections.Counter(), collections.Counter()
    for _, _, delta, cat in sorted(events, key=lambda e: (e[0], e[1])):
        now[cat] += delta
        peak[cat] = max(peak[cat], now[cat])
    return peak


def compare(matches, raw, blocks):
    by_count, by_bytes = collections.Counter(), collections.Counter()
    r = {"allocations": len(matches), "agree": 0, "bytes": 0, "agree_bytes": 0, "unpaired": 0,
         "ambiguous": {"allocations": 0, "bytes": 0, "met_as_is": 0, "met_per_storage": 0, "met_neither": 0}}
    amb = r["ambiguous"]
    mine_all = memprof_categories(raw, matches)
    mp, prof, narrow = (peaks(matches, mine_all), peaks(matches, [readings(m)[0] for m in matches]),
                        peaks(matches, [readings(m)[-1] for m in matches]))
    r["peaks"] = [{"category": c, "profiler": prof[c], "profiler_per_storage": narrow[c], "memprof": mp[c]}
                  for c in RAW_NAMES if prof[c] or narrow[c] or mp[c]]
    for m, mine in zip(matches, mine_all):
        theirs = readings(m)
        size = m.get("block_size") or m["requested"]
        r["unpaired"] += mine == "?"
        by_count[(show(theirs), mine)] += 1
        by_bytes[(show(theirs), mine)] += size
        r["bytes"] += size
        if mine in theirs:
            r["agree"] += 1
            r["agree_bytes"] += size
        if len(theirs) == 2:
            amb["allocations"] += 1
            amb["bytes"] += size
            amb["met_as_is" if mine == theirs[0] else "met_per_storage" if mine == theirs[1] else "met_neither"] += 1
    # the end state: blocks alive at the end, by address, against the profiler's allocations never freed
    alive = {m["addr"]: readings(m) for m in matches if m.get("alive_at_end")}
    guessed = {m["addr"] for m in matches if m.get("alive_at_end") and m.get("parameter_source") == "data_flow"}
    # memprof read the Python heap (a core): every module's and optimizer's parameters are among the owners
    have_owners = any(b.get("source") == "owner" for b in blocks)
    end_agree = end_total = labelled = labelled_agree = refuted = 0
    end_conf = collections.Counter()
    for b in blocks:
        if b["address"] in alive:
            end_total += 1
            theirs, mine = alive[b["address"]], label(b["category"])
            end_conf[(show(theirs), mine)] += 1
            end_agree += mine in theirs
            if mine not in theirs and b["address"] in guessed and have_owners:
                refuted += 1 # the profiler's data flow guessed a parameter; no module nor optimizer holds it
            elif any(t is not None for t in theirs):
                labelled += 1
                labelled_agree += mine in theirs
    r["confusion"] = [{"profiler": k[0], "memprof": k[1], "count": v, "bytes": by_bytes[k]}
                      for k, v in sorted(by_count.items(), key=lambda kv: -by_bytes[kv[0]])]
    r["end_state"] = {"blocks": end_total, "agree": end_agree, "labelled": labelled, "labelled_agree": labelled_agree,
                      "data_flow_parameters_refuted": refuted,
                      "confusion": [{"profiler": k[0], "memprof": k[1], "count": v}
                                    for k, v in sorted(end_conf.items(), key=lambda kv: -kv[1])]}
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("matches")
    ap.add_argument("raw")
    ap.add_argument("blocks")
    ap.add_argument("--json")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    with open(args.matches) as f:
        matches = json.load(f)["matches"]
    with open(args.raw) as f:
        raw = json.load(f)
    with open(args.blocks) as f:
        blocks = json.load(f)["blocks"]
    r = compare(matches, raw, blocks)
    r["label"] = args.label
    end = r["end_state"]
    print("%s: timeline %d/%d allocations agree (%.1f %% of %d bytes); end state %d/%d blocks (labelled %d/%d%s)%s"
          % (args.label or "parity", r["agree"], r["allocations"], 100.0 * r["agree_bytes"] / max(r["bytes"], 1),
             r["bytes"], end["agree"], end["blocks"], end["labelled_agree"], end["labelled"],
             "; %d data-flow parameters refuted by their owners" % end["data_flow_parameters_refuted"]
             if end["data_flow_parameters_refuted"] else "",
             "; %d ring allocs without a memprof event" % r["unpaired"] if r["unpaired"] else ""))
    amb = r["ambiguous"]
    if amb["allocations"]:
        print("  the profiler's tensor identity decides %d allocations (%.1f %% of bytes): memprof gives its label "
              "as charged for %d, per storage for %d, neither for %d"
              % (amb["allocations"], 100.0 * amb["bytes"] / max(r["bytes"], 1), amb["met_as_is"],
                 amb["met_per_storage"], amb["met_neither"]))
    for c in r["confusion"]:
        if c["memprof"] not in c["profiler"].split("|") and not (c["memprof"] is None and "None" in c["profiler"]):
            print("  %-16s -> %-16s %4d allocations %12d bytes" % (c["profiler"], c["memprof"], c["count"], c["bytes"]))
    for c in r["end_state"]["confusion"]:
        if str(c["memprof"]) not in c["profiler"].split("|"):
            print("  end state: %-16s -> %-16s %4d blocks" % (c["profiler"], c["memprof"], c["count"]))
    print("  peaks (MiB), profiler [per storage] / memprof: " + ", ".join(
        "%s %.1f%s / %.1f" % (p["category"], p["profiler"] / 2**20,
                              " [%.1f]" % (p["profiler_per_storage"] / 2**20)
                              if p["profiler_per_storage"] != p["profiler"] else "", p["memprof"] / 2**20)
        for p in r["peaks"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()

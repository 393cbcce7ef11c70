"""gen_oom_segments.py - a snapshot pickle shaped to find slow paths in `memprof oom`: N large segments, each split
by one small live block (1 to 19 MiB) with the rest free, and a trace in which every segment was allocated whole,
freed, then cut by its small block (3 N + 1 entries, an 'oom' entry last).

usage: gen_oom_segments.py N OUT.pickle
"""
import pickle, sys
nseg = int(sys.argv[1]); out = sys.argv[2]
MiB = 1 << 20
segs = []; trace = []
addr = 0x7f0000000000
for i in range(nseg):
    size = (22 + i % 200) * MiB
    live = ((i % 19) + 1) * MiB
    blocks = [dict(address=addr, size=live, requested_size=live, state="active_allocated", frames=[]),
              dict(address=addr + live, size=size - live, requested_size=0, state="inactive", frames=[])]
    segs.append(dict(device=0, address=addr, total_size=size, allocated_size=live, active_size=live,
                     requested_size=live, stream=0, segment_type="large", segment_pool_id=(0, 0),
                     is_expandable=False, frames=[], blocks=blocks))
    trace += [dict(action="segment_alloc", addr=addr, size=size, stream=0, time_us=0, frames=[]),
              dict(action="alloc", addr=addr, size=size, stream=0, time_us=0, frames=[]),
              dict(action="free_completed", addr=addr, size=size, stream=0, time_us=0, frames=[])]
    addr += size
for i in range(nseg):
    a = segs[i]["address"]
    trace.append(dict(action="alloc", addr=a, size=segs[i]["blocks"][0]["size"], stream=0, time_us=0, frames=[]))
trace.append(dict(action="oom", device_free=10 * MiB, size=1 << 40, stream=0, time_us=0, frames=[]))
pickle.dump(dict(segments=segs, device_traces=[trace]), open(out, "wb"))

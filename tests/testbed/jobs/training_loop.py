"""A job that keeps training, for reads of a running process (tests/owners/live_stop.sh): a small language model
with Adam, each step allocating and freeing activations, gradients (zero_grad sets them to None) and the
optimizer's temporaries a few milliseconds apart. After its first step (Adam's state exists from then on, updated
in place) it writes expected.json: per device, the bytes of the caching allocator's blocks that hold its
parameters and its optimizer's state, by its own torch.cuda.memory._snapshot() (what `memprof owners` must count
for them at any moment, since neither changes while it trains); then the checkpoint (in live mode it waits for
RESUME). Then it trains up to STEPS more steps, in bursts of BURST steps back to back with IDLE_MS between bursts
(a data loader's stall), counting them in steps.txt, until STEPS or until the file FINISH appears in its working
directory; then it writes done.txt (the steps it trained) and ends.

usage: training_loop.py STEPS [BURST IDLE_MS]
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn

import memprof_testbed


class Model(nn.Module):
    def __init__(self, vocab=1000, dim=128, hidden=512, layers=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = x + layer(x)
        return self.head(self.norm(x))


def block_bytes(tensors):
    """The sizes of the active blocks that hold TENSORS' storages (each block once), by the job's own snapshot."""
    blocks = []
    for seg in torch.cuda.memory._snapshot()["segments"]:
        addr = seg["address"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                blocks.append((addr, b["size"]))
            addr += b["size"]
    seen, total = set(), 0
    for t in tensors:
        p = t.untyped_storage().data_ptr()
        hit = [a for a, size in blocks if a <= p < a + size]
        if not hit:
            sys.exit("training_loop: no active block holds a tensor at 0x%x" % p)
        if hit[0] not in seen:
            seen.add(hit[0])
            total += dict(blocks)[hit[0]]
    return total


def step(model, opt, batch):
    loss = model(batch).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()  # set_to_none: the gradients are freed, and allocated again by the next backward


def main():
    steps = int(sys.argv[1])
    burst = int(sys.argv[2]) if len(sys.argv) > 2 else steps
    idle = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.0
    torch.manual_seed(0)
    model = Model().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = torch.randint(0, 1000, (8, 64), device="cuda")
    step(model, opt, batch)
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v) and v.is_cuda]
    expected = {"parameter": block_bytes(list(model.parameters())), "optimizer_state": block_bytes(state),
                "state_tensors": len(state)}
    with open("expected.json.tmp", "w") as f:
        json.dump({"0": expected}, f)
    os.rename("expected.json.tmp", "expected.json")
    memprof_testbed.checkpoint()
    done = 0
    while done < steps and not os.path.exists("FINISH"):
        step(model, opt, batch)
        torch.cuda.synchronize()
        done += 1
        with open("steps.txt.tmp", "w") as f:
            f.write("%d\n" % done)
        os.rename("steps.txt.tmp", "steps.txt")
        if done % burst == 0:
            time.sleep(idle)
    with open("done.txt", "w") as f:
        f.write("%d\n" % done)


if __name__ == "__main__":
    main()

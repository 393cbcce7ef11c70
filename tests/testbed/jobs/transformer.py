"""A training step of a small transformer language model with Adam: the common job.

usage: transformer.py [--history none|python|all] [--steps N] [--optimizer adam|adam-foreach|adam-fused|sgd]
                      [--tracker]

Stops at memprof_testbed.checkpoint() after the last step's backward and optimizer step, before zero_grad:
parameters, gradients, optimizer state and the cached activations' blocks are all in the allocator then.
--history records allocation history (_record_memory_history with stacks "python" or "all"); --tracker runs
PyTorch's MemTracker alongside (its table lands next to the truth).
"""
import argparse
import contextlib

import torch
import torch.nn as nn

import memprof_testbed


class TinyLM(nn.Module):
    def __init__(self, vocab=512, dim=128, heads=4, layers=2, context=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.position = nn.Parameter(torch.zeros(context, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.register_buffer("causal", torch.triu(torch.full((context, context), float("-inf")), 1))

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.embed(tokens) + self.position[:n]
        x = self.encoder(x, mask=self.causal[:n, :n], is_causal=True)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--history", choices=("none", "python", "all"), default="none")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--optimizer", choices=("adam", "adam-foreach", "adam-fused", "sgd"), default="adam")
    ap.add_argument("--tracker", action="store_true")
    args = ap.parse_args()

    if args.history != "none":
        torch.cuda.memory._record_memory_history(stacks=args.history)
    torch.manual_seed(0)
    model = TinyLM().cuda()
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    else:
        kind = {"adam": {}, "adam-foreach": {"foreach": True}, "adam-fused": {"fused": True}}[args.optimizer]
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, **kind)
    memprof_testbed.register("model", model)
    memprof_testbed.register("optimizer", optimizer)

    tracking = memprof_testbed.mem_tracker(model, optimizer) if args.tracker else contextlib.nullcontext()
    with tracking:
        for step in range(args.steps):
            if args.tracker and step:
                tracking.reset_mod_stats()      # MemTracker follows one iteration at a time
            tokens = torch.randint(0, 512, (8, 64), device="cuda")
            logits = model(tokens[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, 512), tokens[:, 1:].reshape(-1))
            loss.backward()
            optimizer.step()
            if step == args.steps - 1:
                memprof_testbed.checkpoint()
            optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()

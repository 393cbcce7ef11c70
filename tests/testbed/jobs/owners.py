"""Ownership that is not a plain tree, for memprof's owners: tied weights (one Parameter under two names), a
submodule registered under two names, a frozen part without gradients, a Parameter subclass, a None and a
non-persistent buffer, a view of a parameter held by a global, a part of the model on the CPU, a second model
that only a list holds, a parameter no module holds (in the optimizer's second param group), SGD's momentum
buffers and Adam's state side by side. (No MemTracker here: it refuses a model with frozen parameters, as it
hooks every parameter's gradient.)

usage: owners.py
"""
import torch
import torch.nn as nn

import memprof_testbed


class Scaled(nn.Parameter):
    """A Parameter subclass, as quantization and sharding libraries make them."""


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("scale", torch.ones(dim))
        self.register_buffer("unused", None)
        self.register_buffer("cache", torch.zeros(dim, dim), persistent=False)

    def forward(self, x):
        return self.proj(x) * self.scale


class Model(nn.Module):
    def __init__(self, vocab=1000, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        shared = Block(dim)
        self.first = shared
        self.again = shared                      # the same module under a second name
        self.frozen = nn.Linear(dim, dim)
        self.frozen.requires_grad_(False)
        self.gain = Scaled(torch.ones(dim))
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight     # tied: one Parameter, two names
        self.side = nn.Linear(dim, 4)            # moved to the CPU below

    def forward(self, tokens):
        x = self.embed(tokens)
        x = self.again(self.first(x)) + self.frozen(x)
        return self.head(x * self.gain)


model = Model().cuda()
model.side.cpu()
first_row = model.embed.weight[0]                # a view: its storage is the parameter's
spare = nn.Parameter(torch.zeros(4096, device="cuda"))
others = [nn.Linear(32, 32).cuda()]              # a model only a list holds


def main():
    opt = torch.optim.Adam([{"params": [p for p in model.parameters() if p.requires_grad]},
                            {"params": [spare], "lr": 1e-4}])
    sgd = torch.optim.SGD(others[0].parameters(), lr=0.1, momentum=0.9)
    memprof_testbed.register("spare", spare)
    tokens = torch.randint(0, 1000, (4, 16), device="cuda")
    loss = model(tokens).float().pow(2).mean() + spare.sum()
    loss.backward()
    opt.step()
    others[0](torch.randn(8, 32, device="cuda")).sum().backward()
    sgd.step()
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()

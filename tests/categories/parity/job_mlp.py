"""An embedding + MLP + LayerNorm classifier trained with Adam for 3 steps on "cuda", recorded by
profiler_oracle (the allocator's memory history and PyTorch's memory profiler over the same steps), then the
test bed's checkpoint.

usage: job_mlp.py [--stacks python|all] [--no-cuda-activity] [--warmup N] [--out DIR]   (DIR default:
       parity, under the cwd; the checkpoint writes its own snapshot.pickle into the cwd)
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import memprof_testbed
import profiler_oracle


class TextClassifier(nn.Module):
    def __init__(self, vocab_size=2000, embed_dim=128, hidden_dim=256, num_classes=10):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.fc1 = nn.Linear(embed_dim, hidden_dim)
        self.norm = nn.LayerNorm(hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, hidden_dim)
        self.classifier = nn.Linear(hidden_dim, num_classes)

    def forward(self, tokens):
        x = self.embedding(tokens).mean(dim=1)
        x = F.relu(self.norm(self.fc1(x)))
        x = F.relu(self.fc2(x))
        return self.classifier(x)


def build(device):
    model = TextClassifier().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, optimizer


def train(model, optimizer, steps, device):
    loss_fn = nn.CrossEntropyLoss()
    for step in range(steps):
        tokens = torch.randint(0, 2000, (32, 24), device=device)
        labels = torch.randint(0, 10, (32,), device=device)
        optimizer.zero_grad()
        logits = model(tokens)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stacks", default="python", choices=("python", "all"))
    ap.add_argument("--no-cuda-activity", action="store_true")
    ap.add_argument("--out", default="parity")
    ap.add_argument("--warmup", type=int, default=0,
                    help="build the model and train this many steps before recording (default: build inside)")
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.warmup:
        model, optimizer = build("cuda")
        train(model, optimizer, args.warmup, "cuda")
    with profiler_oracle.recording(args.out, stacks=args.stacks, cuda_activity=not args.no_cuda_activity):
        if not args.warmup:
            model, optimizer = build("cuda")
        train(model, optimizer, 3, "cuda")
    memprof_testbed.register("model", model)
    memprof_testbed.register("optimizer", optimizer)
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()

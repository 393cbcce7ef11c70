"""A small GPT trainer (nanoGPT's model: token and position embeddings, N blocks of LayerNorm, causal
self-attention written out (q @ k^T, masked softmax, @ v) and a GELU MLP, a final LayerNorm, a head tied to the
token embedding) with AdamW, fp16 autocast and a GradScaler, that runs out of device memory inside backward: the
first steps use short sequences (warm-up: the optimizer has state, the scaler its scale), then a step of full
length saves more activations for backward than the device holds with the gradients backward then asks for.

usage: gpt_train.py [--batch N] [--checkpoint] [--precision fp16|bf16|fp32] [--style globals|trainer]
                    [--history none|python] [--uncaught]

--style globals: model, optimizer and scaler are globals of __main__ (a plain training script); trainer: one
`trainer` object (a local of main()) holds them, and its step() method takes them into locals of its own.
The remedies memprof may claim, for tests that run the job again with them: --batch N (a smaller batch),
--checkpoint (torch.utils.checkpoint around each block of model.transformer.h), --precision (autocast's dtype;
fp32: no autocast and no scaler). When the full-length step then succeeds, the checkpoint comes after its
backward, with oom_message null. Default: the error is caught in the training loop and the checkpoint taken in
the `except` block (notes: oom_message, oom_request_bytes, batch, where); --uncaught lets it escape (the
excepthook checkpoints). The device is FAKECUDA_CAPACITY (1 GiB by default; sizes below assume it).
"""
import argparse
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

import memprof_testbed

VOCAB, CONTEXT, LAYERS, HEADS, WIDTH = 4096, 256, 4, 4, 256
WARMUP_STEPS, WARMUP_LENGTH = 2, 32


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)
        self.register_buffer("bias", torch.tril(torch.ones(CONTEXT, CONTEXT)).view(1, 1, CONTEXT, CONTEXT),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(WIDTH, dim=2)
        q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(WIDTH, 4 * WIDTH)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, checkpointing=False):
        super().__init__()
        self.checkpointing = checkpointing
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, WIDTH), wpe=nn.Embedding(CONTEXT, WIDTH),
            h=nn.ModuleList([Block() for _ in range(LAYERS)]), ln_f=nn.LayerNorm(WIDTH)))
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        T = idx.size(1)
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            if self.checkpointing:
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


def parse_args(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=34)
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--precision", choices=("fp16", "bf16", "fp32"), default="fp16")
    ap.add_argument("--style", choices=("globals", "trainer"), default="globals")
    ap.add_argument("--history", choices=("none", "python"), default="none")
    ap.add_argument("--uncaught", action="store_true")
    return ap.parse_args(argv)


def batch_of(size, length):
    data = torch.randint(0, VOCAB, (size, length + 1), device="cuda")
    return data[:, :-1], data[:, 1:]


def autocast(precision):
    if precision == "fp32":
        return torch.autocast("cuda", enabled=False)
    return torch.autocast("cuda", dtype=torch.float16 if precision == "fp16" else torch.bfloat16)


def train_step(model, optimizer, scaler, precision, x, y):
    """One step; returns the loss."""
    with autocast(precision):
        logits, loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


class Trainer:
    """What a training framework keeps: the model, the optimizer, the scaler, the step count."""

    def __init__(self, model, precision):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
        self.scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
        self.precision = precision
        self.steps = 0

    def step(self, x, y):
        optimizer, scaler = self.optimizer, self.scaler
        self.steps += 1
        return train_step(self.model, optimizer, scaler, self.precision, x, y)


def raised_in(error):
    """'backward', 'forward' or 'step': the part of the training step the error came from."""
    names = []
    tb = error.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    for part in ("backward", "forward", "step"):
        if part in names:
            return part
    return "elsewhere"


ARGS = parse_args(sys.argv[1:])
if ARGS.history != "none":
    torch.cuda.memory._record_memory_history(stacks=ARGS.history)
if ARGS.uncaught:
    memprof_testbed.checkpoint_on_uncaught_exception()
torch.manual_seed(0)
if ARGS.style == "globals":
    model = GPT(ARGS.checkpoint).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=ARGS.precision == "fp16")


def main():
    args = ARGS
    if args.style == "trainer":
        trainer = Trainer(GPT(args.checkpoint).cuda(), args.precision)
        step = trainer.step
        memprof_testbed.register("model", trainer.model)
        memprof_testbed.register("optimizer", trainer.optimizer)
    else:
        def step(x, y):
            return train_step(model, optimizer, scaler, args.precision, x, y)
        memprof_testbed.register("model", model)
        memprof_testbed.register("optimizer", optimizer)
    for _ in range(WARMUP_STEPS):
        step(*batch_of(args.batch, WARMUP_LENGTH))
    memprof_testbed.note("batch", args.batch)
    x, y = batch_of(args.batch, CONTEXT)
    if args.uncaught:
        step(x, y)
    else:
        try:
            step(x, y)
        except torch.OutOfMemoryError as error:
            memprof_testbed.note("oom_message", str(error))
            memprof_testbed.note("where", raised_in(error))
            memprof_testbed.checkpoint()
            print(f"caught: {str(error).splitlines()[0]}")
            return
    memprof_testbed.note("oom_message", None)
    memprof_testbed.checkpoint()
    print("no oom")


if __name__ == "__main__":
    main()

"""A small GPT trainer (gpt_model.GPT: nanoGPT's model, 4 blocks of model.transformer.h) with AdamW, fp16 autocast
and a GradScaler, that runs out of device memory inside backward: the first steps use short sequences (warm-up:
the optimizer has state, the scaler its scale), then a step of full length saves more activations for backward
than the device holds with the gradients backward then asks for.

usage: gpt_train.py [--batch N] [--checkpoint] [--precision fp16|bf16|fp32] [--style globals|trainer]
                    [--history none|python] [--uncaught]

--style globals: model, optimizer and scaler are globals of __main__ (a plain training script); trainer: one
`trainer` object (a local of main()) holds them, and its step() method takes them into locals of its own.
The remedies memprof may claim, for tests that run the job again with them: --batch N (a smaller batch),
--checkpoint (torch.utils.checkpoint around each block of model.transformer.h), --precision (autocast's dtype;
fp32: no autocast and no scaler). When the full-length step then succeeds, the checkpoint comes after its
backward, with oom_message null. Default: the error is caught in the training loop and the checkpoint taken in
the `except` block (notes: oom_message, batch, where); --uncaught lets it escape (the
excepthook checkpoints). The device is FAKECUDA_CAPACITY (1 GiB by default; sizes below assume it).
"""
import argparse
import sys

import torch

import memprof_testbed
from gpt_model import CONTEXT, GPT, VOCAB

WARMUP_STEPS, WARMUP_LENGTH = 2, 32


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
            memprof_testbed.note("where", memprof_testbed.raised_in(error))
            memprof_testbed.checkpoint()
            print(f"caught: {str(error).splitlines()[0]}")
            return
    memprof_testbed.note("oom_message", None)
    memprof_testbed.checkpoint()
    print("no oom")


if __name__ == "__main__":
    main()

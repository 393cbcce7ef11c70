"""A Lightning job (lightning's LightningModule and Trainer, as a user writes them: gpt_model.GPT inside a
LightningModule, AdamW from configure_optimizers, precision "16-mixed": Lightning's own autocast and GradScaler) that
runs out of device memory inside backward: two short warm-up batches, then one of full length. Needs lightning
beside torch (job.sh installs it when MEMPROF_TESTBED_EXTRAS names it: ../python/extras.sh).

usage: lightning_train.py [--batch N] [--checkpoint] [--checkpoint-before-oom]

The checkpoint is taken as the full-length batch begins (a callback), the job then waits in live mode: a watcher
attached there sees the error happen at its throw, before Lightning's teardown moves the module to the CPU; the
message goes to OUTDIR/oom_message.txt. Without --checkpoint-before-oom the checkpoint comes after the training if
it ends without an OOM (oom_message null), else (the teardown has run) with the message, for the reruns of the
remedies. --checkpoint: torch.utils.checkpoint around each block.
"""
import argparse
import os

import lightning as L
import torch

import memprof_testbed
from gpt_model import GPT, WarmupTokens

WARMUP_STEPS, WARMUP_LENGTH = 2, 32


class LitGPT(L.LightningModule):
    def __init__(self, checkpointing):
        super().__init__()
        self.model = GPT(checkpointing)

    def training_step(self, batch, batch_idx):
        _, loss = self.model(batch[:, :-1], batch[:, 1:])
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4, weight_decay=0.1)


class BeforeTheStep(L.Callback):
    """The checkpoint as the full-length batch begins."""

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if batch_idx == WARMUP_STEPS:
            register(trainer)
            memprof_testbed.checkpoint()


def register(trainer):
    memprof_testbed.register("model", trainer.lightning_module)
    memprof_testbed.register("optimizer", trainer.optimizers[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=34)
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--checkpoint-before-oom", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    lit = LitGPT(args.checkpoint)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed", max_steps=WARMUP_STEPS + 1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[BeforeTheStep()] if args.checkpoint_before_oom else None)
    data = torch.utils.data.DataLoader(WarmupTokens(args.batch, WARMUP_STEPS + 1, WARMUP_STEPS, WARMUP_LENGTH),
                                       batch_size=args.batch, shuffle=False)
    memprof_testbed.note("batch", args.batch)
    try:
        trainer.fit(lit, data)
    except torch.OutOfMemoryError as error:
        if args.checkpoint_before_oom:
            with open(os.path.join(os.environ["MEMPROF_TESTBED_OUT"], "oom_message.txt"), "w") as f:
                f.write(str(error))
        else:
            memprof_testbed.note("oom_message", str(error))
            memprof_testbed.checkpoint()
        print(f"caught: {str(error).splitlines()[0]}")
        return
    memprof_testbed.note("oom_message", None)
    register(trainer)
    memprof_testbed.checkpoint()
    print("no oom")


if __name__ == "__main__":
    main()

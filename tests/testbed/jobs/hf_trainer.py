"""A HuggingFace Trainer job (transformers and accelerate, as a user runs them: GPT-2's architecture from a
config, random token data, fp16 through the Trainer's own autocast and GradScaler, AdamW wrapped by accelerate's
AcceleratedOptimizer) that runs out of device memory inside backward: the first steps see short sequences, then a
batch of full length saves more activations for backward than the device holds with the gradients backward then
asks for. Needs transformers and accelerate beside torch: job.sh installs them (../python/extras.sh) when
MEMPROF_TESTBED_EXTRAS names them, as the hf-trainer scenario does.

usage: hf_trainer.py [--batch N] [--checkpoint] [--checkpoint-before-oom]

--checkpoint turns on the model's activation checkpointing (TrainingArguments(activation_checkpointing=True)).
The error escapes trainer.train() and is caught in main(), where the checkpoint is taken (notes: oom_message,
batch); when the training ends without one, the checkpoint comes after it, with oom_message null. The manifest names the model and
the optimizer the Trainer built (the one AcceleratedOptimizer wraps). --checkpoint-before-oom takes the checkpoint
as the full-length step begins instead (a watcher attached there sees the error happen at its throw; its message
then goes to OUTDIR/oom_message.txt).
"""
import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments  # noqa: E402

import memprof_testbed  # noqa: E402
from gpt_model import CONTEXT, VOCAB, WarmupTokens  # noqa: E402

WARMUP_STEPS, WARMUP_LENGTH = 2, 32


class Tokens(WarmupTokens):
    """WarmupTokens as the Trainer takes them: input_ids and labels (the model shifts them itself)."""

    def __getitem__(self, i):
        ids = super().__getitem__(i)[:-1]
        return {"input_ids": ids, "labels": ids.clone()}


class InOrder(Trainer):
    """The batches in the dataset's order (the warm-up ones first)."""

    def _get_train_sampler(self, *args, **kwargs):
        return torch.utils.data.SequentialSampler(self.train_dataset)


class BeforeTheStep(TrainerCallback):
    """The checkpoint as the full-length step begins (the trainer registered first)."""

    def __init__(self):
        self.trainer = None

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == WARMUP_STEPS:
            register(self.trainer)
            memprof_testbed.checkpoint()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=21)
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--checkpoint-before-oom", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=CONTEXT, n_embd=256, n_layer=4, n_head=4,
                                       resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                       bos_token_id=0, eos_token_id=0, attn_implementation="eager"))
    training = TrainingArguments(
        output_dir=os.path.join(os.getcwd(), "hf-out"), per_device_train_batch_size=args.batch,
        max_steps=WARMUP_STEPS + 1, fp16=True, activation_checkpointing=args.checkpoint, report_to=[],
        save_strategy="no", logging_strategy="no", dataloader_num_workers=0, dataloader_pin_memory=False,
        disable_tqdm=True)
    before = BeforeTheStep() if args.checkpoint_before_oom else None
    trainer = InOrder(model=model, args=training,
                      train_dataset=Tokens(args.batch, WARMUP_STEPS + 1, WARMUP_STEPS, WARMUP_LENGTH),
                      callbacks=[before] if before else None)
    memprof_testbed.note("batch", args.batch)
    if before:
        before.trainer = trainer
        try:
            trainer.train()
        except torch.OutOfMemoryError as error:
            with open(os.path.join(os.environ["MEMPROF_TESTBED_OUT"], "oom_message.txt"), "w") as f:
                f.write(str(error))
            print(f"caught: {str(error).splitlines()[0]}")
        return
    try:
        trainer.train()
    except torch.OutOfMemoryError as error:
        memprof_testbed.note("oom_message", str(error))
        memprof_testbed.note("where", memprof_testbed.raised_in(error))
        register(trainer)
        memprof_testbed.checkpoint()
        print(f"caught: {str(error).splitlines()[0]}")
        return
    memprof_testbed.note("oom_message", None)
    register(trainer)
    memprof_testbed.checkpoint()
    print("no oom")


def register(trainer):
    memprof_testbed.register("model", trainer.model)
    optimizer = trainer.optimizer
    memprof_testbed.note("optimizer_type", type(optimizer).__name__)
    memprof_testbed.register("optimizer", getattr(optimizer, "optimizer", optimizer))


if __name__ == "__main__":
    main()

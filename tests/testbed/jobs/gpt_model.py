"""nanoGPT's model, for the test bed's training jobs (gpt_train.py, lightning_train.py): token and position
embeddings, LAYERS blocks (model.transformer.h) of LayerNorm, causal self-attention written out (q @ k^T, masked
softmax, @ v) and a GELU MLP, a final LayerNorm, a head tied to the token embedding. GPT(checkpointing=True) runs
each block under torch.utils.checkpoint (non-reentrant)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

VOCAB, CONTEXT, LAYERS, HEADS, WIDTH = 4096, 256, 4, 4, 256


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


class WarmupTokens(torch.utils.data.Dataset):
    """Random token sequences of LENGTH + 1 (inputs and their next tokens), in batches of BATCH: the first WARMUP
    batches of SHORT tokens (the optimizer gets its state cheaply), the rest of full length (LENGTH)."""

    def __init__(self, batch, steps, warmup, short, length=CONTEXT):
        self.batch, self.n, self.warmup, self.short, self.length = batch, batch * steps, warmup, short, length
        self.generator = torch.Generator().manual_seed(0)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        n = self.short if i < self.warmup * self.batch else self.length
        return torch.randint(0, VOCAB, (n + 1,), generator=self.generator)

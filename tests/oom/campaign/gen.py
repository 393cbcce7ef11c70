"""gen.py - a training-like PyTorch job from a seed: a program nobody tuned memprof for.

usage: gen.py SEED OUTDIR      writes OUTDIR/job_SEED.py, OUTDIR/spec.json and OUTDIR/campaign_rt.py

The seed draws the program's shape, not only its numbers: the model family (MLP, CNN, transformer, recurrent),
how its modules are written (Sequential, ModuleList loops, explicit attributes, residual, gated, depthwise,
hand-written attention or SDPA or nn.TransformerEncoderLayer), the training loop's form (plain loops, a
train_step function, a Trainer class, a batch generator), and the knobs: batch sizes and sequence lengths per
step, mixed precision (autocast fp16 with GradScaler, bf16), activation checkpointing, the optimizer (SGD with
momentum, Adam, AdamW, Adagrad; foreach or not), gradient accumulation, a data stream (record_stream) or an eval
stream, eval passes, tensors kept across steps, the allocator settings (PYTORCH_CUDA_ALLOC_CONF) and a memory
fraction, memory history (stacks python or all). The device's size is not drawn here: the runner sizes it from a
calibration run so that most jobs run out within their steps (run-oom.sh).

Knobs a remedy may change (campaign_rt --set) are read from the spec at run time: batch, amp, checkpoint, keep.
Everything else is in the program text. The model is built on the device (torch.device("cuda")), and data is
made there or copied from zeros, so the fake device's memory holds zeros only and nothing the job does depends on
values: the same requests in the same order whatever the allocator's settings (campaign_rt checks it).
"""
import json
import os
import random
import shutil
import sys

MiB = 1 << 20


class Src:
    def __init__(self):
        self.lines = []
        self.level = 0

    def __call__(self, text=""):
        for line in text.split("\n"):
            self.lines.append(("    " * self.level + line) if line else "")

    def indent(self):
        self.level += 1

    def dedent(self):
        self.level -= 1

    def text(self):
        return "\n".join(self.lines) + "\n"


def draw_conf(r):
    """PYTORCH_CUDA_ALLOC_CONF as a user might set it, and a memory fraction where gc needs one."""
    fraction = None
    parts = []
    kind = r.choices(["none", "expandable", "split", "roundup", "gc", "combo"], [30, 15, 18, 10, 12, 15])[0]
    if kind == "expandable":
        parts.append("expandable_segments:True")
    elif kind == "split":
        parts.append("max_split_size_mb:%d" % r.choice([21, 32, 64, 100, 128, 200, 256, 512]))
    elif kind == "roundup":
        parts.append("roundup_power2_divisions:%d" % r.choice([1, 2, 4, 8, 16]))
    elif kind == "gc":
        parts.append("garbage_collection_threshold:%.1f" % r.choice([0.5, 0.6, 0.7, 0.8, 0.9]))
        fraction = r.choice([0.5, 0.6, 0.7, 0.8, 0.9])
    elif kind == "combo":
        pool = ["max_split_size_mb:%d" % r.choice([21, 48, 128, 300, 512]),
                "roundup_power2_divisions:%d" % r.choice([2, 4, 8]),
                "garbage_collection_threshold:%.1f" % r.choice([0.6, 0.8])]
        if r.random() < 0.3:
            pool.append("expandable_segments:True")
        parts = r.sample(pool, r.randint(2, min(3, len(pool))))
        if any(p.startswith("garbage") for p in parts):
            fraction = r.choice([0.6, 0.75, 0.9])
    if fraction is None and r.random() < 0.1:
        fraction = r.choice([0.7, 0.85, 0.95])
    return (",".join(parts) or None), fraction


def schedule(r, steps, base, spread):
    """Per-step sizes around base: fixed, growing, bucketed or random."""
    kind = r.choice(["fixed", "grow", "bucket", "random"])
    if kind == "fixed":
        return [base] * steps
    if kind == "grow":
        return [max(1, int(base * (1 + spread * i / max(1, steps - 1)))) for i in range(steps)]
    if kind == "bucket":
        buckets = sorted({max(1, int(base * f)) for f in (0.5, 0.75, 1.0, 1.0 + spread)})
        return [r.choice(buckets) for _ in range(steps)]
    return [max(1, int(base * r.uniform(0.4, 1.0 + spread))) for _ in range(steps)]


def nm(r, *choices):
    return r.choice(choices)


# ---------------------------------------------------------------- model families

def mlp(r, s, spec):
    width = r.choice([512, 768, 1024, 1536, 2048, 3072, 4096])
    depth = r.randint(2, 8)
    d_in = r.choice([256, 512, 784, 1024, 2048])
    d_out = r.choice([10, 100, 1000, 4096])
    act = nm(r, "nn.ReLU()", "nn.GELU()", "nn.SiLU()", "nn.Tanh()", "nn.LeakyReLU(0.1)")
    style = r.choice(["sequential", "residual", "gated", "attrs"])
    spec["model"] = {"family": "mlp", "style": style, "width": width, "depth": depth, "in": d_in, "out": d_out}
    s("class %s(nn.Module):" % nm(r, "Block", "ResidualMLP", "FeedForward", "Layer"))
    blk = s.lines[-1].split()[1].split("(")[0]
    s.indent()
    if style == "gated":
        hidden = int(width * r.choice([2, 8 / 3, 4]))
        s("def __init__(self, dim, hidden=%d):" % hidden)
        s("    super().__init__()")
        s("    self.norm = nn.LayerNorm(dim)")
        s("    self.w1 = nn.Linear(dim, hidden, bias=False)")
        s("    self.w3 = nn.Linear(dim, hidden, bias=False)")
        s("    self.w2 = nn.Linear(hidden, dim, bias=False)")
        s("")
        s("def forward(self, x):")
        s("    h = self.norm(x)")
        s("    return x + self.w2(F.silu(self.w1(h)) * self.w3(h))")
    elif style == "residual":
        mult = r.choice([1, 2, 4])
        s("def __init__(self, dim):")
        s("    super().__init__()")
        s("    self.fc1 = nn.Linear(dim, %d * dim)" % mult)
        s("    self.act = %s" % act)
        s("    self.fc2 = nn.Linear(%d * dim, dim)" % mult)
        s("    self.norm = nn.%s(dim)" % r.choice(["LayerNorm", "BatchNorm1d"]))
        if r.random() < 0.5:
            s("    self.drop = nn.Dropout(%.1f)" % r.choice([0.1, 0.2]))
        else:
            s("    self.drop = nn.Identity()")
        s("")
        s("def forward(self, x):")
        s("    return self.norm(x + self.drop(self.fc2(self.act(self.fc1(x)))))")
    else:
        s("def __init__(self, dim):")
        s("    super().__init__()")
        s("    self.body = nn.Sequential(nn.Linear(dim, dim), %s%s)" % (
            act, ", nn.Dropout(0.1)" if r.random() < 0.4 else ""))
        s("")
        s("def forward(self, x):")
        s("    return self.body(x)")
    s.dedent()
    s("")
    s("")
    s("class Net(nn.Module):")
    s.indent()
    s("def __init__(self):")
    s("    super().__init__()")
    s("    self.inp = nn.Linear(%d, %d)" % (d_in, width))
    if style == "attrs":
        for i in range(depth):
            s("    self.layer%d = %s(%d)" % (i, blk, width))
    else:
        s("    self.blocks = nn.ModuleList([%s(%d) for _ in range(%d)])" % (blk, width, depth))
    s("    self.head = nn.Linear(%d, %d)" % (width, d_out))
    s("")
    s("def forward(self, x):")
    s("    x = self.inp(x)")
    if style == "attrs":
        s("    for i in range(%d):" % depth)
        s("        layer = getattr(self, 'layer%d' % i)")
        s("        x = run_block(layer, x, i)")
    else:
        s("    for i, block in enumerate(self.blocks):")
        s("        x = run_block(block, x, i)")
    s("    return self.head(x)")
    s.dedent()
    params = d_in * width + depth * width * width * (3 if style in ("gated", "residual") else 1) + width * d_out
    spec["params_est"] = params
    spec["act_per_sample_est"] = width * depth * 6 * 4
    spec["layers"] = depth
    base = r.choice([32, 64, 128, 256, 512, 1024])
    spec["batch"] = base
    spec["shape"] = schedule(r, spec["steps"], 100, 0.5)  # per-step batch, in percent of CFG["batch"]
    spec["data"] = {"x": [d_in], "y": "class", "classes": d_out}


def cnn(r, s, spec):
    chans = r.choice([[32, 64, 128], [64, 128, 256], [48, 96, 192, 384], [32, 64, 128, 256], [64, 128, 256, 512]])
    nblocks = [r.randint(1, 3) for _ in chans]
    style = r.choice(["plain", "residual", "depthwise"])
    norm = r.choice(["BatchNorm2d", "GroupNorm"])
    classes = r.choice([10, 100, 1000])
    res = r.choice([32, 64, 96, 128])
    spec["model"] = {"family": "cnn", "style": style, "channels": chans, "blocks": nblocks, "norm": norm,
                     "resolution": res}

    def normf(c):
        return "nn.BatchNorm2d(%s)" % c if norm == "BatchNorm2d" else "nn.GroupNorm(math.gcd(8, %s), %s)" % (c, c)

    s("def conv_block(cin, cout, stride=1):")
    s.indent()
    if style == "depthwise":
        s("return nn.Sequential(")
        s("    nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), %s, nn.ReLU(inplace=True)," % normf("cin"))
        s("    nn.Conv2d(cin, cout, 1, bias=False), %s, nn.ReLU(inplace=True))" % normf("cout"))
    else:
        k = r.choice([3, 5])
        s("return nn.Sequential(nn.Conv2d(cin, cout, %d, stride, %d, bias=False), %s, nn.%s)" % (
            k, k // 2, normf("cout"), r.choice(["ReLU(inplace=True)", "SiLU()", "GELU()"])))
    s.dedent()
    s("")
    s("")
    if style == "residual":
        s("class Residual(nn.Module):")
        s("    def __init__(self, c):")
        s("        super().__init__()")
        s("        self.a = conv_block(c, c)")
        s("        self.b = conv_block(c, c)")
        s("")
        s("    def forward(self, x):")
        s("        return x + self.b(self.a(x))")
        s("")
        s("")
    s("class Net(nn.Module):")
    s.indent()
    s("def __init__(self):")
    s("    super().__init__()")
    s("    self.stem = conv_block(3, %d)" % chans[0])
    s("    stages = []")
    s("    cin = %d" % chans[0])
    s("    for cout, n in zip(%r, %r):" % (chans, nblocks))
    s("        stages.append(conv_block(cin, cout, 2 if cin != cout else 1))")
    s("        for _ in range(n):")
    s("            stages.append(%s)" % ("Residual(cout)" if style == "residual" else "conv_block(cout, cout)"))
    s("        cin = cout")
    s("    self.stages = nn.ModuleList(stages)")
    pool = r.choice(["nn.AdaptiveAvgPool2d(1)", "nn.AdaptiveMaxPool2d(1)"])
    s("    self.pool = %s" % pool)
    s("    self.fc = nn.Linear(%d, %d)" % (chans[-1], classes))
    s("")
    s("def forward(self, x):")
    s("    x = self.stem(x)")
    s("    for i, stage in enumerate(self.stages):")
    s("        x = run_block(stage, x, i)")
    s("    return self.fc(torch.flatten(self.pool(x), 1))")
    s.dedent()
    spec["layers"] = sum(nblocks) + len(chans)
    spec["params_est"] = sum(9 * c * c * (n + 1) for c, n in zip(chans, nblocks))
    spec["act_per_sample_est"] = sum(c * (res // (2 ** i)) ** 2 * (n + 1) * 3 * 4 for i, (c, n) in
                                     enumerate(zip(chans, nblocks)))
    spec["batch"] = r.choice([8, 16, 32, 64, 128])
    spec["shape"] = schedule(r, spec["steps"], 100, 0.5)
    spec["data"] = {"x": [3, res, res], "y": "class", "classes": classes}


def transformer(r, s, spec):
    d = r.choice([256, 384, 512, 768, 1024])
    heads = r.choice([h for h in (4, 8, 12, 16) if d % h == 0])
    layers = r.randint(2, 8)
    vocab = r.choice([8000, 16000, 32000, 50304])
    ff = r.choice([2, 4])
    style = r.choice(["encoderlayer", "sdpa", "manual"])
    tied = r.random() < 0.5
    seq = r.choice([128, 256, 512, 1024])
    spec["model"] = {"family": "transformer", "style": style, "d": d, "heads": heads, "layers": layers,
                     "vocab": vocab, "tied": tied}
    if style != "encoderlayer":
        pre = r.random() < 0.7
        s("class Attention(nn.Module):")
        s.indent()
        s("def __init__(self, d, h):")
        s("    super().__init__()")
        s("    self.h = h")
        if r.random() < 0.5:
            s("    self.qkv = nn.Linear(d, 3 * d)")
            fused = True
        else:
            s("    self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)")
            fused = False
        s("    self.out = nn.Linear(d, d)")
        s("")
        s("def forward(self, x):")
        s("    b, t, d = x.shape")
        if fused:
            s("    q, k, v = self.qkv(x).split(d, dim=2)")
        else:
            s("    q, k, v = self.q(x), self.k(x), self.v(x)")
        s("    q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))")
        if style == "sdpa":
            s("    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)")
        else:
            s("    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.h))")
            s("    mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)")
            s("    att = att.masked_fill(mask, float('-inf')).softmax(dim=-1)")
            s("    y = att @ v")
        s("    return self.out(y.transpose(1, 2).contiguous().view(b, t, d))")
        s.dedent()
        s("")
        s("")
        s("class Block(nn.Module):")
        s.indent()
        s("def __init__(self, d, h):")
        s("    super().__init__()")
        s("    self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)")
        s("    self.attn = Attention(d, h)")
        s("    self.mlp = nn.Sequential(nn.Linear(d, %d * d), nn.GELU(), nn.Linear(%d * d, d))" % (ff, ff))
        s("")
        s("def forward(self, x):")
        if pre:
            s("    x = x + self.attn(self.ln1(x))")
            s("    return x + self.mlp(self.ln2(x))")
        else:
            s("    x = self.ln1(x + self.attn(x))")
            s("    return self.ln2(x + self.mlp(x))")
        s.dedent()
        s("")
        s("")
    s("class LM(nn.Module):")
    s.indent()
    s("def __init__(self):")
    s("    super().__init__()")
    s("    self.tok = nn.Embedding(%d, %d)" % (vocab, d))
    s("    self.pos = nn.Embedding(%d, %d)" % (max(2048, seq * 2), d))
    if style == "encoderlayer":
        s("    self.layers = nn.ModuleList([nn.TransformerEncoderLayer(%d, %d, %d, dropout=0.0, batch_first=True, "
          "norm_first=%s) for _ in range(%d)])" % (d, heads, ff * d, r.random() < 0.5, layers))
    else:
        s("    self.layers = nn.ModuleList([Block(%d, %d) for _ in range(%d)])" % (d, heads, layers))
    s("    self.norm = nn.LayerNorm(%d)" % d)
    s("    self.head = nn.Linear(%d, %d, bias=False)" % (d, vocab))
    if tied:
        s("    self.head.weight = self.tok.weight")
    s("")
    s("def forward(self, idx):")
    s("    t = idx.shape[1]")
    s("    x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))")
    s("    for i, layer in enumerate(self.layers):")
    if style == "encoderlayer":
        s("        x = run_block(layer, x, i)")
    else:
        s("        x = run_block(layer, x, i)")
    s("    return self.head(self.norm(x))")
    s.dedent()
    s("")
    s("")
    s("Net = LM")
    spec["layers"] = layers
    spec["params_est"] = vocab * d * (1 if tied else 2) + layers * (4 + 2 * ff) * d * d
    spec["act_per_sample_est"] = seq * (layers * d * (10 + 2 * ff) * 4 + vocab * 4 * 2) + \
        (layers * heads * seq * seq * 4 * 2 if style == "manual" else 0)
    spec["batch"] = r.choice([2, 4, 8, 16, 32])
    spec["shape"] = schedule(r, spec["steps"], seq, 0.5)
    spec["data"] = {"x": "tokens", "y": "tokens", "classes": vocab}


def recurrent(r, s, spec):
    cell = r.choice(["LSTM", "GRU"])
    hidden = r.choice([256, 512, 768, 1024])
    layers = r.randint(1, 3)
    emb = r.choice([128, 256, 512])
    vocab = r.choice([4000, 10000, 30000])
    seq = r.choice([32, 64, 96])
    spec["model"] = {"family": "recurrent", "cell": cell, "hidden": hidden, "layers": layers, "vocab": vocab}
    s("class Net(nn.Module):")
    s.indent()
    s("def __init__(self):")
    s("    super().__init__()")
    s("    self.emb = nn.Embedding(%d, %d)" % (vocab, emb))
    s("    self.rnn = nn.%s(%d, %d, num_layers=%d, batch_first=True)" % (cell, emb, hidden, layers))
    s("    self.proj = nn.Linear(%d, %d)" % (hidden, vocab))
    s("")
    s("def forward(self, idx):")
    s("    out, _ = run_block(self.rnn, self.emb(idx), 0)")
    s("    return self.proj(out)")
    s.dedent()
    spec["layers"] = 1
    spec["params_est"] = vocab * emb + 4 * layers * hidden * (hidden + emb) + hidden * vocab
    spec["act_per_sample_est"] = seq * (hidden * layers * 8 * 4 + vocab * 8)
    spec["batch"] = r.choice([8, 16, 32, 64])
    spec["shape"] = schedule(r, spec["steps"], seq, 0.5)
    spec["data"] = {"x": "tokens", "y": "tokens", "classes": vocab}


FAMILIES = (("mlp", mlp, 30), ("cnn", cnn, 22), ("transformer", transformer, 38), ("recurrent", recurrent, 10))


# ---------------------------------------------------------------- the program around the model

def emit_run_block(r, s, spec):
    """run_block(module, x, i): activation checkpointing of the chosen layers (cfg["checkpoint"]: true, false or
    a list of layer indices)."""
    s("def run_block(module, x, i):")
    s("    ck = CFG['checkpoint']")
    s("    if module.training and (ck is True or (isinstance(ck, list) and i in ck)):")
    s("        return checkpoint(module, x, use_reentrant=False)")
    s("    return module(x)")


def emit_data(r, s, spec):
    """make_batch(step, micro): inputs and targets on the device; maybe made on a data stream and handed over
    with record_stream, maybe copied from pinned zeros."""
    d = spec["data"]
    how = r.choice(["device", "device", "pinned"])
    spec["data"]["how"] = how
    s("def make_batch(step, micro):")
    s.indent()
    if d["x"] == "tokens":
        s("n = CFG['batch']")
        s("t = CFG['shape'][step]")
        xs, ys = "(n, t)", "(n, t)"
        xdt, ydt = "torch.long", "torch.long"
    else:
        s("n = max(1, CFG['batch'] * CFG['shape'][step] // 100)")
        xs = "(n, %s)" % ", ".join(str(v) for v in d["x"])
        ys = "(n,)"
        xdt, ydt = "torch.float32", "torch.long"
    if how == "pinned":
        s("x = torch.zeros(%s, dtype=%s).pin_memory().to('cuda', non_blocking=True)" % (xs, xdt))
        s("y = torch.zeros(%s, dtype=%s).pin_memory().to('cuda', non_blocking=True)" % (ys, ydt))
    else:
        if xdt == "torch.long":
            s("x = torch.randint(0, %d, %s, device='cuda')" % (d["classes"], xs))
        else:
            s("x = torch.randn(%s, device='cuda')" % xs)
        s("y = torch.randint(0, %d, %s, device='cuda')" % (d["classes"], ys))
    s("return x, y")
    s.dedent()
    if spec["data_stream"]:
        s("")
        s("")
        s("class Prefetcher:")
        s("    '''The next batch is made on a side stream while the current one trains.'''")
        s("")
        s("    def __init__(self):")
        s("        self.stream = torch.cuda.Stream()")
        s("        self.next = None")
        s("")
        s("    def load(self, step, micro):")
        s("        with torch.cuda.stream(self.stream):")
        s("            self.next = make_batch(step, micro)")
        s("")
        s("    def get(self, step, micro):")
        s("        if self.next is None:")
        s("            self.load(step, micro)")
        s("        torch.cuda.current_stream().wait_stream(self.stream)")
        s("        x, y = self.next")
        s("        x.record_stream(torch.cuda.current_stream())")
        s("        y.record_stream(torch.cuda.current_stream())")
        s("        self.load(min(step + 1, CFG['steps'] - 1) if micro + 1 >= CFG['accum'] else step, 0)")
        s("        return x, y")


def emit_loss(r, s, spec):
    s("def compute_loss(out, y):")
    if spec["data"]["y"] == "tokens":
        s("    return F.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))")
    else:
        s("    return F.%s(out.float(), y)" % r.choice(["cross_entropy", "cross_entropy", "nll_loss"]))


def optimizer_line(r, spec):
    name = r.choices(["sgd", "adam", "adamw", "adagrad"], [25, 30, 30, 15])[0]
    foreach = r.choice([None, True, False])
    fe = "" if foreach is None else ", foreach=%s" % foreach
    spec["optimizer"] = {"name": name, "foreach": foreach}
    if name == "sgd":
        return "torch.optim.SGD(model.parameters(), lr=0.01, momentum=%s%s)" % (r.choice([0.9, 0.95]), fe)
    if name == "adam":
        return "torch.optim.Adam(model.parameters(), lr=3e-4%s)" % fe
    if name == "adamw":
        return "torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01%s)" % fe
    return "torch.optim.Adagrad(model.parameters(), lr=0.01%s)" % fe


def emit_amp_helpers(s):
    s("def autocast():")
    s("    if CFG['amp'] == 'fp16':")
    s("        return torch.autocast('cuda', dtype=torch.float16)")
    s("    if CFG['amp'] == 'bf16':")
    s("        return torch.autocast('cuda', dtype=torch.bfloat16)")
    s("    return contextlib.nullcontext()")


def loop_plain(r, s, spec, opt):
    """Nested loops in main()."""
    kept, evalv = spec["kept_name"], spec["eval_name"]
    s("def main():")
    s.indent()
    s("with torch.device('cuda'):")
    s("    model = Net()")
    s("model.train()")
    s("opt = %s" % opt)
    s("scaler = torch.amp.GradScaler('cuda', enabled=CFG['amp'] == 'fp16')")
    if spec["data_stream"]:
        s("loader = Prefetcher()")
    if spec["eval_stream"]:
        s("eval_stream = torch.cuda.Stream()")
    s("%s = []" % kept)
    s("%s = None" % evalv)
    s("for step in range(CFG['steps']):")
    s.indent()
    s("with rt.step(step):")
    s.indent()
    s("for micro in range(CFG['accum']):")
    s.indent()
    s("x, y = %s" % ("loader.get(step, micro)" if spec["data_stream"] else "make_batch(step, micro)"))
    s("with autocast():")
    s("    out = model(x)")
    s("    loss = compute_loss(out, y) / CFG['accum']")
    s("scaler.scale(loss).backward()")
    s("if CFG['keep'] == 'outputs':")
    s("    %s.append(out)" % kept)
    s("elif CFG['keep'] == 'losses':")
    s("    %s.append(loss)" % kept)
    s.dedent()
    s("scaler.step(opt)")
    s("scaler.update()")
    s("opt.zero_grad(set_to_none=%s)" % spec["set_to_none"])
    emit_eval(r, s, spec, "model", evalv)
    s.dedent()
    s.dedent()
    s.dedent()


def emit_eval(r, s, spec, model, evalv):
    if not spec["eval_every"]:
        return
    s("if (step + 1) %% %d == 0:" % spec["eval_every"])
    s.indent()
    s("%s.eval()" % model)
    if spec["eval_stream"]:
        s("eval_stream.wait_stream(torch.cuda.current_stream())")
        s("with torch.cuda.stream(eval_stream), torch.no_grad():")
    else:
        s("with torch.no_grad():")
    s("    ex, ey = make_batch(step, CFG['accum'])")
    s("    %s = %s(ex)" % (evalv, model))
    s("%s.train()" % model)
    if spec["eval_stream"]:
        s("torch.cuda.current_stream().wait_stream(eval_stream)")
    s("if CFG['keep'] != 'eval':")
    s("    %s = None" % evalv)
    s.dedent()


def loop_function(r, s, spec, opt):
    """A train_step function returning the loss; main() drives it."""
    kept, evalv = spec["kept_name"], spec["eval_name"]
    s("def train_step(model, opt, scaler, step, fetch):")
    s.indent()
    s("total = 0.0")
    s("outs = []")
    s("for micro in range(CFG['accum']):")
    s.indent()
    s("x, y = fetch(step, micro)")
    s("with autocast():")
    s("    logits = model(x)")
    s("    loss = compute_loss(logits, y)")
    s("scaler.scale(loss / CFG['accum']).backward()")
    s("total = total + loss.detach()")
    s("outs.append(logits if CFG['keep'] == 'outputs' else None)")
    s.dedent()
    if r.random() < 0.5:
        s("scaler.unscale_(opt)")
        s("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)")
    s("scaler.step(opt)")
    s("scaler.update()")
    s("opt.zero_grad(set_to_none=%s)" % spec["set_to_none"])
    s("return total, outs")
    s.dedent()
    s("")
    s("")
    s("def main():")
    s.indent()
    s("with torch.device('cuda'):")
    s("    net = Net()")
    s("opt = %s" % opt.replace("model.", "net."))
    s("scaler = torch.amp.GradScaler('cuda', enabled=CFG['amp'] == 'fp16')")
    if spec["data_stream"]:
        s("fetch = Prefetcher().get")
    else:
        s("fetch = make_batch")
    if spec["eval_stream"]:
        s("eval_stream = torch.cuda.Stream()")
    s("%s = []" % kept)
    s("%s = None" % evalv)
    s("step = 0")
    s("while step < CFG['steps']:")
    s.indent()
    s("with rt.step(step):")
    s.indent()
    s("loss, outs = train_step(net, opt, scaler, step, fetch)")
    s("if CFG['keep'] == 'outputs':")
    s("    %s.extend(outs)" % kept)
    s("elif CFG['keep'] == 'losses':")
    s("    %s.append(loss)" % kept)
    s("del outs")
    if r.random() < 0.5:
        s("print('step', step, float(loss))")
    emit_eval(r, s, spec, "net", evalv)
    s.dedent()
    s("step += 1")
    s.dedent()
    s.dedent()


def loop_trainer(r, s, spec, opt):
    """A Trainer class: fit() calls forward_backward() and optimizer_step(); kept tensors live on self."""
    kept, evalv = spec["kept_name"], spec["eval_name"]
    s("class Trainer:")
    s.indent()
    s("def __init__(self):")
    s.indent()
    s("with torch.device('cuda'):")
    s("    self.model = Net()")
    s("self.opt = %s" % opt.replace("model.", "self.model."))
    s("self.scaler = torch.amp.GradScaler('cuda', enabled=CFG['amp'] == 'fp16')")
    s("self.%s = []" % kept)
    s("self.%s = None" % evalv)
    if spec["data_stream"]:
        s("self.loader = Prefetcher()")
    if spec["eval_stream"]:
        s("self.eval_stream = torch.cuda.Stream()")
    s.dedent()
    s("")
    s("def forward_backward(self, x, y):")
    s("    with autocast():")
    s("        out = self.model(x)")
    s("        loss = compute_loss(out, y) / CFG['accum']")
    s("    self.scaler.scale(loss).backward()")
    s("    if CFG['keep'] == 'outputs':")
    s("        self.%s.append(out)" % kept)
    s("    elif CFG['keep'] == 'losses':")
    s("        self.%s.append(loss)" % kept)
    s("")
    s("def optimizer_step(self):")
    s("    self.scaler.step(self.opt)")
    s("    self.scaler.update()")
    s("    self.opt.zero_grad(set_to_none=%s)" % spec["set_to_none"])
    s("")
    s("def fit(self):")
    s.indent()
    s("for step in range(CFG['steps']):")
    s.indent()
    s("with rt.step(step):")
    s.indent()
    s("for micro in range(CFG['accum']):")
    s("    self.forward_backward(*%s)" % ("self.loader.get(step, micro)" if spec["data_stream"]
                                         else "make_batch(step, micro)"))
    s("self.optimizer_step()")
    if spec["eval_every"]:
        s("self.evaluate(step)")
    s.dedent()
    s.dedent()
    s.dedent()
    if spec["eval_every"]:
        s("")
        s("def evaluate(self, step):")
        s.indent()
        s("model = self.model")
        s("%s = self.%s" % (evalv, evalv))
        if spec["eval_stream"]:
            s("eval_stream = self.eval_stream")
        emit_eval(r, s, spec, "model", evalv)
        s("self.%s = %s" % (evalv, evalv))
        s.dedent()
    s.dedent()
    s("")
    s("")
    s("def main():")
    s("    trainer = Trainer()")
    s("    trainer.fit()")


def loop_generator(r, s, spec, opt):
    """Batches from a generator, a for loop over enumerate(); micro-batches as a list comprehension."""
    kept, evalv = spec["kept_name"], spec["eval_name"]
    s("def batches(fetch):")
    s("    for step in range(CFG['steps']):")
    s("        yield step, [fetch(step, m) for m in range(CFG['accum'])]")
    s("")
    s("")
    s("def main():")
    s.indent()
    s("with torch.device('cuda'):")
    s("    model = Net()")
    s("opt = %s" % opt)
    s("scaler = torch.amp.GradScaler('cuda', enabled=CFG['amp'] == 'fp16')")
    if spec["eval_stream"]:
        s("eval_stream = torch.cuda.Stream()")
    s("%s = []" % kept)
    s("%s = None" % evalv)
    s("for step, micro_batches in batches(%s):" % ("Prefetcher().get" if spec["data_stream"] else "make_batch"))
    s.indent()
    s("with rt.step(step):")
    s.indent()
    s("for x, y in micro_batches:")
    s("    with autocast():")
    s("        pred = model(x)")
    s("    loss = compute_loss(pred, y) / CFG['accum']")
    s("    scaler.scale(loss).backward()")
    s("    if CFG['keep'] == 'outputs':")
    s("        %s.append(pred)" % kept)
    s("    elif CFG['keep'] == 'losses':")
    s("        %s.append(loss)" % kept)
    s("del micro_batches, x, y")
    s("scaler.step(opt)")
    s("scaler.update()")
    s("opt.zero_grad(set_to_none=%s)" % spec["set_to_none"])
    emit_eval(r, s, spec, "model", evalv)
    s.dedent()
    s.dedent()
    s.dedent()


LOOPS = (("plain", loop_plain), ("function", loop_function), ("trainer", loop_trainer), ("generator", loop_generator))


def budget_ok(spec):
    """The job's memory, roughly: parameters, gradients, optimizer state, activations of a micro-batch."""
    opt_mult = {"sgd": 1, "adam": 2, "adamw": 2, "adagrad": 1}[spec["optimizer"]["name"]]
    p = spec["params_est"] * 4 * (2 + opt_mult)
    a = spec["act_per_sample_est"] * spec["batch"] * max(spec["shape"]) / (
        spec["shape"][0] if spec["data"]["x"] == "tokens" else 100)
    spec["mem_est"] = int(p + a)
    return 120 * MiB <= p + a <= 2600 * MiB


def generate(seed):
    r = random.Random(seed)
    for _attempt in range(200):
        s = Src()
        spec = {"seed": seed, "steps": r.randint(3, 6)}
        family = r.choices([f[0] for f in FAMILIES], [f[2] for f in FAMILIES])[0]
        spec["family"] = family
        spec["amp"] = r.choices(["none", "fp16", "bf16"], [45, 30, 25])[0]
        spec["accum"] = r.choices([1, 2, 4], [60, 25, 15])[0]
        spec["data_stream"] = r.random() < 0.25
        spec["eval_every"] = r.choice([0, 0, 1, 2])
        spec["eval_stream"] = bool(spec["eval_every"]) and r.random() < 0.4
        spec["keep"] = r.choices(["none", "outputs", "losses", "eval"], [55, 20, 15, 10])[0]
        if spec["keep"] == "eval" and not spec["eval_every"]:
            spec["keep"] = "none"
        spec["set_to_none"] = r.random() < 0.8
        spec["history"] = r.choices(["none", "python", "all"], [35, 45, 20])[0]
        spec["alloc_conf"], spec["memory_fraction"] = draw_conf(r)
        spec["kept_name"] = r.choice(["kept", "saved_outputs", "history", "debug_tensors", "cache", "outputs_log"])
        spec["eval_name"] = r.choice(["last_eval", "eval_out", "val_logits", "preview"])
        spec["loop"] = r.choice([x[0] for x in LOOPS])
        # the program text
        s('"""A generated training job (tests/oom/campaign/gen.py, seed %d): %s, %s loop."""' % (seed, family,
                                                                                              spec["loop"]))
        s("import contextlib")
        s("import math")
        s("")
        s("import campaign_rt as rt")
        s("")
        s("CFG = rt.setup()")
        s("")
        s("import torch  # noqa: E402")
        s("import torch.nn as nn  # noqa: E402")
        s("import torch.nn.functional as F  # noqa: E402")
        if family == "transformer":
            # the fake device cannot run the fused attention kernels' launchers in half precision: the math one
            s("torch.backends.cuda.enable_flash_sdp(False)")
            s("torch.backends.cuda.enable_mem_efficient_sdp(False)")
            s("if hasattr(torch.backends.cuda, 'enable_cudnn_sdp'):")
            s("    torch.backends.cuda.enable_cudnn_sdp(False)")
        s("from torch.utils.checkpoint import checkpoint  # noqa: E402")
        s("")
        s("")
        emit_run_block(r, s, spec)
        s("")
        s("")
        dict(FAMILIES_FN)[family](r, s, spec)
        s("")
        s("")
        emit_data(r, s, spec)
        s("")
        s("")
        emit_loss(r, s, spec)
        s("")
        s("")
        emit_amp_helpers(s)
        s("")
        s("")
        opt = optimizer_line(r, spec)
        dict(LOOPS)[spec["loop"]](r, s, spec, opt)
        s("")
        s("")
        s("rt.started()")
        s("main()")
        s("rt.finished()")
        ck = r.choices(["off", "all", "some"], [60, 20, 20])[0]
        spec["checkpoint"] = {"off": False, "all": True,
                              "some": sorted(r.sample(range(spec["layers"]), max(1, spec["layers"] // 2)))}[ck]
        if budget_ok(spec):
            # what a remedy may change: the holders a `del` removes, by the names memprof could give them
            spec["holders"] = {}
            if spec["keep"] in ("outputs", "losses"):
                spec["holders"][spec["kept_name"]] = {"keep": "none"}
            if spec["keep"] == "eval":
                spec["holders"][spec["eval_name"]] = {"keep": "none"}
            return s.text(), spec
    raise SystemExit("gen.py: no job within the memory budget for seed %d" % seed)


FAMILIES_FN = [(f[0], f[1]) for f in FAMILIES]


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    seed, out = int(sys.argv[1]), sys.argv[2]
    text, spec = generate(seed)
    os.makedirs(out, exist_ok=True)
    script = os.path.join(out, "job_%d.py" % seed)
    with open(script, "w") as f:
        f.write(text)
    with open(os.path.join(out, "spec.json"), "w") as f:
        json.dump(spec, f, indent=1)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "campaign_rt.py"),
                os.path.join(out, "campaign_rt.py"))
    print(script)


if __name__ == "__main__":
    main()

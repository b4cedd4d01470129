#!/usr/bin/env python3
"""train_gpt.py -- train a small GPT on local text and capture its attention.

usage: train_gpt.py --out DIR [--train-seconds S] [--layers 6] [--heads 8]
                    [--embd 512] [--ctx 1024] [--batch 32] [--seed 1]
                    [--max-text-bytes N] [--capture-rows 256] [--record-x]
                    [--shard-bytes N] [--untrained]

A nanoGPT-style decoder (pre-norm blocks, causal self-attention through
torch.nn.functional.scaled_dot_product_attention, GELU MLP, tied
embeddings, no biases) over bytes (vocabulary 256), trained with AdamW
under BF16 autocast with SDPA pinned to the FLASH backend, on text that
Debian packages install: /usr/share/common-licenses, /usr/share/doc
(plain and gzip-compressed files), the man pages' sources and the Python
standard library's sources, read in sorted path order up to
--max-text-bytes.  The text stays on the machine.

The number of steps follows from --train-seconds and the speed of the
first steps.  At steps 0, T/4, T/2 and T (T the last) the model runs one
forward and backward pass on a fixed batch of 4 held-out sequences with
deterministic algorithms on and experiments/gpu/capture.py recording
(batch entry 0; the flash kernel runs on the whole batch, so on one KV
split), and the capture is written to DIR: cap_s{STEP}.safetensors with
the first --capture-rows positions of every layer and head (a causal
attention of its own), and at step T every position, in shards
cap_final-0000i-of-0000n.safetensors.  From the final capture two small
test captures keep, per layer, the head with the most and the head with
the fewest rows with a repeated exact maximum in the first 256 (and 128)
positions (test_r256, test_r128).  DIR/log.json gets the losses, the
text sources, the exact repeated-maxima counts per layer and head of
every capture (capture.repeated_max_rows, independent of bf16emu) and
the manifests.  --record-x adds X, the input of each layer's c_attn
(capture.py's record_x), to every capture.  --untrained trains nothing:
one capture of every position (cap_full) of the model as initialised, on
random bytes.
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------
def gather_text(max_bytes):
    """Bytes of local text files and a summary of where they came from."""
    import glob
    roots = [("common-licenses", "/usr/share/common-licenses", None),
             ("doc", "/usr/share/doc", None),
             ("man", "/usr/share/man/man1", None),
             ("man", "/usr/share/man/man3", None),
             ("man", "/usr/share/man/man5", None),
             ("man", "/usr/share/man/man7", None),
             ("man", "/usr/share/man/man8", None)]
    for p in sorted(glob.glob("/usr/lib/python3*")):
        roots.append(("python", p, ".py"))
    parts, total, summary = [], 0, {}
    for label, root, ext in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            dirnames[:] = [d for d in dirnames
                           if d not in ("site-packages", "dist-packages",
                                        "__pycache__", "test", "tests")]
            for fn in sorted(filenames):
                if total >= max_bytes:
                    break
                path = os.path.join(dirpath, fn)
                if ext is not None and not fn.endswith(ext):
                    continue
                try:
                    if os.path.islink(path) or os.path.getsize(path) > 4 << 20:
                        continue
                    if fn.endswith(".gz"):
                        with gzip.open(path, "rb") as f:
                            data = f.read(4 << 20)
                    else:
                        with open(path, "rb") as f:
                            data = f.read()
                except (OSError, EOFError, gzip.BadGzipFile):
                    continue
                if not data or b"\0" in data[:4096]:
                    continue  # binary
                parts.append(data)
                total += len(data)
                s = summary.setdefault(label, [0, 0])
                s[0] += 1
                s[1] += len(data)
    return b"\n".join(parts), summary


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------
class Attention(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.h = h
        self.c_attn = nn.Linear(c, 3 * c, bias=False)
        self.c_proj = nn.Linear(c, c, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2)
                   for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c, bias=False)
        self.attn = Attention(c, h)
        self.ln_2 = nn.LayerNorm(c, bias=False)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c, bias=False), nn.GELU(),
                                 nn.Linear(4 * c, c, bias=False))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, layers, heads, embd, ctx, vocab=256):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, embd), wpe=nn.Embedding(ctx, embd),
            h=nn.ModuleList([Block(embd, heads) for _ in range(layers)]),
            ln_f=nn.LayerNorm(embd, bias=False)))
        self.lm_head = nn.Linear(embd, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight
        for n, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if n.endswith("c_proj.weight") or n.endswith("mlp.2.weight"):
                    std = 0.02 / math.sqrt(2 * layers)
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        B, T = idx.shape
        t = self.transformer
        x = t.wte(idx) + t.wpe(torch.arange(T, device=idx.device))
        for b in t.h:
            x = b(x)
        logits = self.lm_head(t.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)),
                               targets.reshape(-1))


# ---------------------------------------------------------------------------
# Captures
# ---------------------------------------------------------------------------
def kernels_of_pass(model, xb, yb):
    """The attention kernels (names with flash, fmha, attention or sdpa)
    of one forward and backward pass, from torch.profiler."""
    import re
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
                torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(xb, yb)
        loss.backward()
        torch.cuda.synchronize()
    model.zero_grad(set_to_none=True)
    names = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and \
                re.search(r"flash|fmha|attention|sdpa", e.name) and \
                e.name not in names:
            names.append(e.name)
    return names


def capture_step(model, xb, yb, step, rows, out_dir, stem, shard_bytes,
                 log, deadline=None, record_x=False):
    """One recorded forward and backward pass on XB, YB at STEP."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    cap = capture.Capture(model, batch=[0], rows=rows, backward=True,
                          grads=False, budget_bytes=80 << 20,
                          record_x=record_x)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
                torch.autocast("cuda", dtype=torch.bfloat16):
            with cap.recording(step=step):
                loss = model(xb, yb)
            loss.backward()
        torch.cuda.synchronize()
    finally:
        torch.use_deterministic_algorithms(False)
    model.zero_grad(set_to_none=True)
    extra = {"model": log["model"],
             "text": log.get("text_note", "local text, bytes"),
             "loss": float(loss)}
    try:
        extra["kernels_seen"] = kernels_of_pass(model, xb, yb)
    except Exception as e:  # noqa: BLE001
        extra["kernels_seen_error"] = "%s: %s" % (type(e).__name__, e)
    files = cap.save(os.path.join(out_dir, stem), shard_bytes=shard_bytes,
                     sidecar=False, extra=extra)
    t0 = time.time()
    counts = {}
    for c in cap.calls:
        q, k = c.tensors["q"][0], c.tensors["k"][0]
        counts[str(c.entry["layer"])] = capture.repeated_max_rows(
            q, k, c.entry["causal"], deadline=deadline)
    log["captures"].append({"step": step, "stem": stem,
                            "files": [os.path.basename(f) for f in files],
                            "loss": float(loss),
                            "repeated_max_rows": counts,
                            "count_seconds": time.time() - t0,
                            "manifest": cap.manifest(extra)})
    with open(os.path.join(out_dir, "log.json"), "w") as f:
        json.dump(log, f, indent=1, default=str)
    return cap, counts


def capture_untrained(a, t_start):
    """--untrained: the model as initialised, one recorded pass over all
    positions of 4 sequences of random bytes (seeded), every layer and
    head of batch entry 0, in shards of at most --shard-bytes."""
    dev = "cuda"
    log = {"model": {"layers": a.layers, "heads": a.heads, "embd": a.embd,
                     "head_dim": a.embd // a.heads, "ctx": a.ctx,
                     "vocab": 256, "seed": a.seed, "tokenizer": "bytes",
                     "trained": False,
                     "precision": "bf16 autocast, SDPA FLASH"},
           "text_note": "random bytes (torch.randint, seeded); the model "
                        "as initialised",
           "losses": [], "captures": []}
    model = GPT(a.layers, a.heads, a.embd, a.ctx).to(dev)
    g = torch.Generator(device=dev).manual_seed(a.seed)
    w = torch.randint(0, 256, (4, a.ctx + 1), device=dev, generator=g)
    capture_step(model, w[:, :-1], w[:, 1:], 0, None, a.out, "cap_full",
                 a.shard_bytes, log,
                 deadline=t_start + min(a.deadline, 1e8) - 10,
                 record_x=a.record_x)
    log["total_seconds"] = time.time() - t_start
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1, default=str)
    print("done in %.0f s" % log["total_seconds"], flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--train-seconds", type=float, default=330.0)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--embd", type=int, default=512)
    ap.add_argument("--ctx", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-text-bytes", type=int, default=120 << 20)
    ap.add_argument("--capture-rows", type=int, default=256)
    ap.add_argument("--deadline", type=float, default=1e9,
                    help="seconds from the start by which to be done")
    ap.add_argument("--record-x", action="store_true",
                    help="also record X, the input of each layer's c_attn")
    ap.add_argument("--untrained", action="store_true",
                    help="no text and no training: one capture of every "
                    "position at step 0 on random bytes (cap_full)")
    ap.add_argument("--shard-bytes", type=int, default=11 << 20,
                    help="the largest shard of the full captures")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    torch.manual_seed(a.seed)
    dev = "cuda"
    if a.untrained:
        return capture_untrained(a, t_start)
    text, sources = gather_text(a.max_text_bytes)
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8)
    n_val = max(len(data) // 20, 8 * a.ctx + 1)
    train, val = data[:-n_val], data[-n_val:]
    train_gpu = train.to(dev).long()
    log = {"model": {"layers": a.layers, "heads": a.heads, "embd": a.embd,
                     "head_dim": a.embd // a.heads, "ctx": a.ctx,
                     "vocab": 256, "batch": a.batch, "lr": a.lr,
                     "seed": a.seed, "tokenizer": "bytes",
                     "precision": "bf16 autocast, SDPA FLASH"},
           "text": {"bytes": len(data), "train": len(train),
                    "val": len(val), "sources": sources,
                    "gather_seconds": time.time() - t_start},
           "losses": [], "captures": []}
    print("text: %d bytes from %s" % (len(data), sources), flush=True)
    model = GPT(a.layers, a.heads, a.embd, a.ctx).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95),
                            weight_decay=0.1, fused=True)
    gen = torch.Generator(device=dev).manual_seed(a.seed)
    # the fixed held-out batch the captures see
    offs = [i * (len(val) - a.ctx - 1) // 4 for i in range(4)]
    xc = torch.stack([val[o:o + a.ctx] for o in offs]).long().to(dev)
    yc = torch.stack([val[o + 1:o + 1 + a.ctx] for o in offs]).long().to(dev)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def batch():
        ix = torch.randint(0, len(train_gpu) - a.ctx - 1, (a.batch,),
                           device=dev, generator=gen)
        r = torch.arange(a.ctx + 1, device=dev)
        w = train_gpu[ix.view(-1, 1) + r.view(1, -1)]
        return w[:, :-1], w[:, 1:]

    def train_step(lr):
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batch()
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
                torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    r = ("first", a.capture_rows)
    caps = {}
    caps[0] = capture_step(model, xc, yc, 0, r, a.out, "cap_s0", 1 << 30,
                           log, record_x=a.record_x)
    # speed from the first steps decides the step count
    warmup = 100

    def lr_at(s):
        if s < warmup:
            return a.lr * (s + 1) / warmup
        frac = (s - warmup) / max(1, total - warmup)
        return a.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    measure = 20
    total = 10 ** 9
    t0 = time.time()
    for s in range(measure):
        loss = train_step(lr_at(s))
    torch.cuda.synchronize()
    dt = (time.time() - t0) / measure
    total = max(2 * measure, int(a.train_seconds / dt))
    log["seconds_per_step"] = dt
    log["steps"] = total
    print("%.1f ms per step: %d steps" % (dt * 1e3, total), flush=True)
    marks = {total // 4: "cap_s%d" % (total // 4),
             total // 2: "cap_s%d" % (total // 2)}
    step = measure
    t_train = time.time()
    stop_at = t_start + a.deadline - 90
    while step < total:
        if time.time() > stop_at:
            log["stopped_early_at"] = step
            break
        if step in marks:
            caps[step] = capture_step(model, xc, yc, step, r, a.out,
                                      marks[step], 1 << 30, log,
                                      record_x=a.record_x)
        loss = train_step(lr_at(step))
        step += 1
        if step % 250 == 0 or step == total:
            with torch.no_grad(), sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
                    torch.autocast("cuda", dtype=torch.bfloat16):
                vl = float(model(xc, yc))
            log["losses"].append([step, float(loss), vl])
            print("step %d loss %.4f val %.4f (%.0f s)"
                  % (step, float(loss), vl, time.time() - t_train),
                  flush=True)
    log["train_seconds"] = time.time() - t_train
    cap, counts = capture_step(model, xc, yc, step, None, a.out,
                               "cap_final", a.shard_bytes, log,
                               deadline=t_start + a.deadline - 40,
                               record_x=a.record_x)
    # small test captures: per layer the heads with most and fewest
    # repeated maxima in the first R positions
    for R in (256, 128):
        heads = {}
        sel = {}
        for c in cap.calls:
            L = c.entry["layer"]
            q, k = c.tensors["q"][0, :, :R], c.tensors["k"][0, :, :R]
            n = capture.repeated_max_rows(q, k, True)
            order = sorted(range(len(n)), key=lambda h: (-n[h], h))
            hs = sorted({order[0], order[-1]})
            heads[L] = hs
            sel[str(L)] = {str(h): n[h] for h in hs}
        sub = cap.subset(heads=heads, first_rows=R)
        files = sub.save(os.path.join(a.out, "test", "capture_r%d" % R),
                         extra={"model": log["model"],
                                "repeated_max_rows_expected": sel})
        log["test_r%d" % R] = {"files": files, "repeated_max_rows": sel}
    log["total_seconds"] = time.time() - t_start
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1, default=str)
    print("done in %.0f s" % log["total_seconds"], flush=True)


if __name__ == "__main__":
    main()

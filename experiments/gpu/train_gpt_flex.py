#!/usr/bin/env python3
"""train_gpt_flex.py -- a small GPT whose attention is FlexAttention,
trained on local text, its attention captured.

usage: train_gpt_flex.py --out DIR [--steps 400] [--layers 4] [--heads 4]
                         [--embd 256] [--ctx 256] [--batch 32]
                         [--window 128] [--softcap 20] [--seed 1]

The decoder of train_gpt.py (pre-norm blocks, GELU MLP, tied embeddings,
bytes) with each layer's attention a torch.compile'd flex_attention:
even layers causal, odd layers a sliding window of --window keys (a
block mask of create_block_mask) with tanh soft-capping at --softcap
(capture.softcap_score_mod), BF16 autocast, AdamW.  After --steps steps
the model runs one forward and backward pass on a fixed held-out batch
with capture.Capture recording every layer's flex_attention call
(batch entry 0, every head, dO and dq, dk, dv): DIR/cap_flex.safetensors
with its manifest, whose calls `bf16emu diff --call L{layer}.s{step}`
and `bf16emu scan` read.  DIR/log.json gets the losses.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402
from train_gpt import gather_text  # noqa: E402


class Attention(nn.Module):
    def __init__(self, c, h, layer, window, cap):
        super().__init__()
        self.h = h
        self.windowed = layer % 2 == 1
        self.window = window
        self.score_mod = capture.softcap_score_mod(cap) \
            if self.windowed and cap > 0 else None
        self.c_attn = nn.Linear(c, 3 * c, bias=False)
        self.c_proj = nn.Linear(c, c, bias=False)

    def forward(self, x, flex, masks):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2)
                   for t in (q, k, v))
        y = flex(q, k, v, block_mask=masks[self.windowed],
                 score_mod=self.score_mod)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, c, h, layer, window, cap):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c, bias=False)
        self.attn = Attention(c, h, layer, window, cap)
        self.ln_2 = nn.LayerNorm(c, bias=False)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c, bias=False), nn.GELU(),
                                 nn.Linear(4 * c, c, bias=False))

    def forward(self, x, flex, masks):
        x = x + self.attn(self.ln_1(x), flex, masks)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.wte = nn.Embedding(256, a.embd)
        self.wpe = nn.Embedding(a.ctx, a.embd)
        self.h = nn.ModuleList(Block(a.embd, a.heads, i, a.window,
                                     a.softcap) for i in range(a.layers))
        self.ln_f = nn.LayerNorm(a.embd, bias=False)
        self.flex = None
        self.masks = None

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1],
                                                  device=idx.device))
        for b in self.h:
            x = b(x, self.flex, self.masks)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, 256), targets.reshape(-1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--window", type=int, default=128)
    ap.add_argument("--softcap", type=float, default=20.0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-text-bytes", type=int, default=32 << 20)
    a = ap.parse_args(argv)
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    dev = "cuda"
    t_start = time.time()
    text, sources = gather_text(a.max_text_bytes)
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8)
    n_val = max(len(data) // 20, 8 * a.ctx + 1)
    train = data[:-n_val].to(dev).long()
    val = data[-n_val:]
    model = GPT(a).to(dev)
    w = a.window
    model.masks = [
        create_block_mask(lambda b, h, q, kv: q >= kv, None, None, a.ctx,
                          a.ctx, device=dev),
        create_block_mask(lambda b, h, q, kv: (q >= kv) & (q - kv < w),
                          None, None, a.ctx, a.ctx, device=dev)]
    compiled = torch.compile(flex_attention, dynamic=False)
    model.flex = compiled
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95),
                            weight_decay=0.1)
    gen = torch.Generator(device=dev).manual_seed(a.seed)
    log = {"model": {"layers": a.layers, "heads": a.heads, "embd": a.embd,
                     "head_dim": a.embd // a.heads, "ctx": a.ctx,
                     "window": a.window, "softcap": a.softcap,
                     "attention": "flex_attention (torch.compile): even "
                                  "layers causal, odd layers a sliding "
                                  "window with soft-capping",
                     "precision": "bf16 autocast", "seed": a.seed},
           "text": {"bytes": len(data), "sources": sources},
           "losses": []}
    for s in range(a.steps):
        lr = a.lr * min(1.0, (s + 1) / 50) * \
            (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * s / a.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        ix = torch.randint(0, len(train) - a.ctx - 1, (a.batch,),
                           device=dev, generator=gen)
        wdw = train[ix.view(-1, 1) + torch.arange(a.ctx + 1, device=dev)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(wdw[:, :-1], wdw[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (s + 1) % 100 == 0 or s + 1 == a.steps:
            log["losses"].append([s + 1, float(loss)])
            print("step %d loss %.4f" % (s + 1, float(loss)), flush=True)
    # the capture: a fixed held-out batch of 4 sequences
    offs = [i * (len(val) - a.ctx - 1) // 4 for i in range(4)]
    xc = torch.stack([val[o:o + a.ctx] for o in offs]).long().to(dev)
    yc = torch.stack([val[o + 1:o + 1 + a.ctx] for o in offs]) \
        .long().to(dev)
    cap = capture.Capture(model, batch=[0], backward=True, grads=True,
                          profile=False, budget_bytes=200 << 20)
    model.flex = cap.flex_attention(compiled)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        with cap.recording(step=a.steps):
            loss = model(xc, yc)
        loss.backward()
    torch.cuda.synchronize()
    model.flex = compiled
    extra = {"model": log["model"], "loss": float(loss)}
    files = cap.save(os.path.join(a.out, "cap_flex"), sidecar=False,
                     extra=extra)
    log["capture"] = {"files": [os.path.basename(f) for f in files],
                      "skipped": cap.skipped, "seen": cap.seen,
                      "manifest": cap.manifest(extra)}
    log["total_seconds"] = time.time() - t_start
    with open(os.path.join(a.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1, default=str)
    print("captured %d calls (skipped %s) in %.0f s"
          % (len(cap.calls), cap.skipped, log["total_seconds"]), flush=True)


if __name__ == "__main__":
    main()

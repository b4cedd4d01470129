#!/usr/bin/env python3
"""invariance_gpt.py -- where a small GPT's greedy generation first
differs with the batch it runs in, and whether bf16emu invariance
predicts the attention part of it.

usage: invariance_gpt.py OUTDIR [--backend default|flash]

The model is train_gpt.py's GPT (4 layers, 8 heads, embedding 512,
context 1,024) as initialised with seed 1, cast to BF16 (inference in
BF16, no autocast).  The prompt is 600 random bytes (seed 7); entry 0 of
batches of BATCHES sizes holds it, the other entries other random bytes.
Generation is greedy, 16 tokens, with no key/value cache: every step is
one forward over the whole sequence, whose attention is a causal
prefill.  SDPA runs as PyTorch picks it ("default") or pinned to FLASH.

Recorded, for entry 0 of each batch size: the tokens generated; at step
0 (the prompt's forward) the output of every module in the order the
forward runs them, and each layer's attention inputs q, k, v and output
O.  OUTDIR/gpt_BACKEND.json says, per batch size, the first step whose
token differs from batch 1's, the first module whose output differs at
step 0 and, per layer, whether q, k, v were bit-equal to batch 1's and
whether O was.

Each layer's attention call of batch 1 is then run alone as entry 0 of
batches of every size (the other entries random, as invariance_batch.py
places them) under flash, cuDNN and the default: OUTDIR/gpt_BACKEND_LL
.safetensors, an invariance dump (heads 0 and 1 of the 8 kept, q, k, v
stored, each class's O once) that bf16emu invariance checks.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402
import invariance_batch as ib  # noqa: E402
import train_gpt  # noqa: E402

BATCHES = [1, 2, 3, 4, 8, 16, 32, 64]
PROMPT, STEPS, KEEP = 600, 16, 2
LAYERS, HEADS, EMBD, CTX = 4, 8, 512, 1024


class Tap:
    """Records entry 0 of SDPA's q, k, v, O and of every module's output
    while on."""

    def __init__(self, model, backend):
        self.on = False
        self.sdpa = []
        self.mods = []
        self.backend = backend
        self.orig = F.scaled_dot_product_attention
        tap = self

        def sdpa(q, k, v, **kw):
            with ib.pin(tap.backend):
                o = tap.orig(q, k, v, **kw)
            if tap.on:
                tap.sdpa.append(tuple(t[:1].detach().clone()
                                      for t in (q, k, v, o)))
            return o
        train_gpt.F.scaled_dot_product_attention = sdpa
        for name, m in model.named_modules():
            if name:
                m.register_forward_hook(self.hook(name))

    def hook(self, name):
        def f(m, inp, out):
            if self.on and torch.is_tensor(out):
                self.mods.append((name, out[:1].detach().clone()))
        return f


def logits_of(model, idx):
    t = model.transformer
    x = t.wte(idx) + t.wpe(torch.arange(idx.shape[1], device=idx.device))
    for b in t.h:
        x = b(x)
    return model.lm_head(t.ln_f(x))


def same(a, b):
    return a.shape == b.shape and torch.equal(a.view(torch.int16),
                                              b.view(torch.int16))


def generate(model, tap, b):
    g = torch.Generator().manual_seed(7)
    prompt = torch.randint(0, 256, (1, PROMPT), generator=g)
    others = torch.randint(0, 256, (b - 1, PROMPT),
                           generator=torch.Generator().manual_seed(100 + b))
    idx = torch.cat([prompt, others]).cuda()
    tokens = []
    with torch.no_grad():
        for step in range(STEPS):
            tap.on = step == 0
            tap.sdpa, tap.mods = ([], []) if step == 0 else (tap.sdpa,
                                                             tap.mods)
            nxt = logits_of(model, idx)[:, -1].float().argmax(-1)
            tokens.append(int(nxt[0]))
            idx = torch.cat([idx, nxt[:, None]], dim=1)
    tap.on = False
    return tokens, list(tap.sdpa), list(tap.mods)


def layer_dump(path, layer, q, k, v, ver):
    """The call (q, k, v: entry 0 of batch 1) alone in batches of every
    size under each backend: an invariance dump."""
    c = {"heads": HEADS, "kv_heads": HEADS, "nq": q.shape[2],
         "nk": k.shape[2], "d": q.shape[3], "dtype": "bf16",
         "causal": True}
    tensors = {"q": q[:, :KEEP].cpu(), "k": k[:, :KEEP].cpu(),
               "v": v[:, :KEEP].cpu()}
    inv = {"batches": BATCHES, "backends": {}}
    for be in ["flash", "cudnn", "default"]:
        reps, rec = [], {"classes": [], "kernels": []}
        for b in BATCHES:
            g = torch.Generator().manual_seed(1000 + b)
            qs, ks, vs = (torch.cat([t, torch.randn(
                (b - 1,) + tuple(t.shape[1:]), generator=g).to(
                t.dtype).cuda()]) for t in (q, k, v))
            box = []
            names = dump_sdpa.kernels_seen(
                lambda: box.append(ib.call(be, c, qs, ks, vs)))
            o = box[0][:1, :KEEP].contiguous()
            rec["kernels"].append(names)
            rec["classes"].append(ib.class_of(o, reps, tensors, be))
        inv["backends"][be] = rec
    man = dict(ver)
    man.update({
        "dtype": "bfloat16",
        "shape": {"batch": 1, "heads": KEEP, "kv_heads": KEEP,
                  "nq": c["nq"], "nk": c["nk"], "d": c["d"]},
        "launch_shape": {"batch": 1, "heads": HEADS, "kv_heads": HEADS,
                         "nq": c["nq"], "nk": c["nk"], "d": c["d"]},
        "heads_from": list(range(KEEP)), "batch_from": 0,
        "causal": True, "scale": "1/sqrt(d) (PyTorch default)",
        "call": "layer %d of the GPT of experiments/gpu/invariance_gpt.py "
                "at batch 1, generation step 0" % layer,
        "invariance": inv,
    })
    man["tensors"] = {n: [str(t.dtype).replace("torch.", ""),
                          list(t.shape)] for n, t in tensors.items()}
    save_file({n: t.contiguous() for n, t in tensors.items()},
              path + ".safetensors",
              metadata={"manifest": json.dumps(man, allow_nan=False)})
    with open(path + ".json", "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")
    return inv


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    backend = "default"
    if len(sys.argv) == 4 and sys.argv[2] == "--backend":
        backend = sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(1)
    model = train_gpt.GPT(LAYERS, HEADS, EMBD, CTX).cuda().to(
        torch.bfloat16).eval()
    tap = Tap(model, backend)
    runs = {b: generate(model, tap, b) for b in BATCHES}
    base_tokens, base_sdpa, base_mods = runs[1]
    report = {"backend": backend, "batches": {}, "tokens_batch1":
              base_tokens, "modules": [n for n, _ in base_mods]}
    for b in BATCHES:
        tokens, sdpa, mods = runs[b]
        first_step = next((i for i, (x, y) in enumerate(
            zip(tokens, base_tokens)) if x != y), None)
        first_mod = next((n for (n, x), (_, y) in zip(mods, base_mods)
                          if not same(x, y)), None)
        layers = [{"qkv_equal": all(same(x, y) for x, y in
                                    zip(s[:3], t[:3])),
                   "o_equal": same(s[3], t[3])}
                  for s, t in zip(sdpa, base_sdpa)]
        report["batches"][b] = {"first_token_step_differing": first_step,
                                "first_module_differing": first_mod,
                                "attention": layers}
        print(backend, b, first_step, first_mod,
              [(x["qkv_equal"], x["o_equal"]) for x in layers], flush=True)
    # the layer calls alone, through SDPA itself
    train_gpt.F.scaled_dot_product_attention = tap.orig
    ver = ib.versions()
    report.update(ver)
    report["layer_dumps"] = {}
    for layer, (q, k, v, _) in enumerate(base_sdpa):
        inv = layer_dump(os.path.join(outdir, "gpt_%s_L%d" % (backend,
                                                               layer)),
                         layer, q, k, v, ver)
        report["layer_dumps"][layer] = {
            n: r["classes"] for n, r in inv["backends"].items()}
    with open(os.path.join(outdir, "gpt_%s.json" % backend), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

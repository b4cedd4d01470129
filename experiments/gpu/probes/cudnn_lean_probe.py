#!/usr/bin/env python3
"""cudnn_lean_probe.py -- crafted inputs for cuDNN's decode lean reduction,
and the FP16 probe of one O element.

usage: cudnn_lean_probe.py OUTDIR [FP16_V.safetensors]

Lean reduction (BF16, Nq = 1): Q = e_0 (one 1 in column 0), K's column 0
the crafted scores and its other columns 0, so every score is exactly the
value written in K[j, 0]; V's column 0 is 1 and the rest 0.  A "dead" key
has score -16384: its P~ and its split's weight underflow to 0.  Tile t
(128 keys) belongs to split t mod S, S the largest power of two not above
Nk / 128 (the families are built for that S; the launches' grids are
recorded).  Scores are given in units of the exp2 argument u = s scale
log2(e) and rounded to BF16.  Per shape, head h is of family h mod 9:

  0 const0   each split one score (u in [-3, 0), one split at 0), ~30% of
             its keys dead: l_s an integer, M = 0
  1 constn1  one split holds one key at 0 (the rest dead), the others one
             score each (u in [-12, -4.5)): L = 1 + sum w_s l_s
  2 one      one split random (u in [-5.5, 0], one key 0), the others dead:
             LSE = log of that split's row sum
  3 onen1    the same with u in [-12, -7.5] and one key 0: l near 1
  4 all      every key random (u in [-3.6, 0]), one key 0
  5 alln1    one key 0, the others u in [-15, -10.5]: L near 1
  6 constm   each split one score, u in [-1.5, 1.5) (M not 0)
  7 tile     each 128-key tile one score (u in [-1, 0), one at 0),
             ~30% of keys dead: the within-split rescale on exact sums
  8 count    the first n keys live at 0 (n random in 1 .. Nk): L = n

Launches of 27 heads (32 for the zero cases): with many heads (135
and more) cuDNN runs one CTA per head and no lean reduction.  Plus
"zero" cases: head h has its first h + 1 keys at 0, the rest dead
(L = h + 1 whatever the split count).  OUTDIR/lean_probe.safetensors holds
per case CASE.scores (BF16 [H, Nk]; the zero cases none), CASE.lse (FP32
[H]) and CASE.o0 (O column 0, BF16 [H]); OUTDIR/lean_probe.json the
shapes and, from one profiled call per case, the kernels and their grids.

FP16: with a file of V heads (v [1, H, 256, 64], FP16), Q and K of
tests/data/gpu/backends/d64_normal_fp16 (head 0) are repeated over the H
heads; OUTDIR/fp16_probe.safetensors holds o and lse.
"""
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

NEG = -16384.0
NFAM = 9
LOG2E = 1.4426950408889634


def splits_of(nk):
    s = 1
    while s * 2 <= nk // 128:
        s *= 2
    return s


def family(g, nk, rng):
    """Scores (u units, float64 tensor [nk]) of family G; NaN marks dead."""
    ns = splits_of(nk)
    tiles = (nk + 127) // 128
    tile = torch.arange(nk) // 128
    split = tile % ns
    dead = torch.full((nk,), float("nan"), dtype=torch.float64)

    def uni(n, lo, hi):
        return lo + (hi - lo) * torch.rand(n, generator=rng,
                                           dtype=torch.float64)

    def pick(n):
        return int(torch.randint(0, n, (1,), generator=rng))

    def holes(u, frac=0.3):
        m = torch.rand(nk, generator=rng) < frac
        u = u.clone()
        u[m] = float("nan")
        # keep one live key per split (or tile) that had any
        return u

    if g in (0, 6):
        c = uni(ns, -3.0, 0.0) if g == 0 else uni(ns, -1.5, 1.5)
        if g == 0:
            c[pick(ns)] = 0.0
        u = c[split]
        u = holes(u)
        for s in range(ns):
            idx = (split == s).nonzero().flatten()
            if torch.isnan(u[idx]).all():
                u[idx[0]] = c[s]
        return u
    if g == 1:
        c = uni(ns, -12.0, -4.5)
        r = pick(ns)
        u = c[split]
        idx = (split == r).nonzero().flatten()
        u[idx] = float("nan")
        u[idx[pick(len(idx))]] = 0.0
        return u
    if g in (2, 3):
        r = pick(ns)
        u = dead.clone()
        idx = (split == r).nonzero().flatten()
        u[idx] = uni(len(idx), -5.5, 0.0) if g == 2 else uni(len(idx),
                                                             -12.0, -7.5)
        u[idx[pick(len(idx))]] = 0.0
        return u
    if g in (4, 5):
        u = uni(nk, -3.6, 0.0) if g == 4 else uni(nk, -15.0, -10.5)
        u[pick(nk)] = 0.0
        return u
    if g == 7:
        c = uni(tiles, -1.0, 0.0)
        c[pick(tiles)] = 0.0
        u = holes(c[tile])
        for t in range(tiles):
            idx = (tile == t).nonzero().flatten()
            if torch.isnan(u[idx]).all():
                u[idx[0]] = c[t]
        return u
    n = 1 + pick(nk)
    u = dead.clone()
    u[:n] = 0.0
    return u


def to_scores(u, d):
    """u units to BF16 scores (dead: NEG)."""
    sl2 = (1.0 / math.sqrt(d)) * LOG2E
    s = torch.where(torch.isnan(u), torch.full_like(u, NEG), u / sl2)
    return s.to(torch.bfloat16)


def run_case(scores, d, profile_launches=None, chunk=32):
    """Scores [H, Nk] (BF16, CPU) -> (lse [H], o column 0 [H]); launches
    of CHUNK heads (cuDNN splits the KV sequence only for few heads), the
    first profiled."""
    lses, os_ = [], []
    for h0 in range(0, scores.shape[0], chunk):
        lse, o0 = run_launch(scores[h0:h0 + chunk], d,
                             profile_launches if h0 == 0 else None)
        lses.append(lse)
        os_.append(o0)
    return torch.cat(lses), torch.cat(os_)


def run_launch(scores, d, profile_launches=None):
    h, nk = scores.shape
    dev = torch.device("cuda")
    q = torch.zeros(1, h, 1, d, dtype=torch.bfloat16, device=dev)
    q[..., 0] = 1.0
    k = torch.zeros(1, h, nk, d, dtype=torch.bfloat16, device=dev)
    k[0, :, :, 0] = scores.to(dev)
    v = torch.zeros(1, h, nk, d, dtype=torch.bfloat16, device=dev)
    v[..., 0] = 1.0
    op = torch.ops.aten._scaled_dot_product_cudnn_attention
    r = op(q, k, v, None, True, 0.0, False, False)
    if profile_launches is not None:
        import dump_sdpa
        dump_sdpa.kernels_seen(
            lambda: op(q, k, v, None, True, 0.0, False, False),
            profile_launches)
    torch.cuda.synchronize()
    return (r[1].float().reshape(h).cpu(),
            r[0][0, :, 0, 0].contiguous().cpu())


SHAPES = [  # name, nk, d, heads
    ("nk1024", 1024, 64, 270),
    ("nk4096", 4096, 64, 270),
    ("nk600", 600, 64, 270),
    ("nk513", 513, 64, 135),
    ("nk1536", 1536, 64, 270),
    ("nk2048d128", 2048, 128, 135),
    ("nk700d128", 700, 128, 135),
    ("nk512", 512, 64, 270),
    ("nk256", 256, 64, 135),
]
ZERO = [("zero4096", 4096, 64, 4096), ("zero1024", 1024, 64, 1024),
        ("zero512", 512, 64, 512)]


def main():
    out = sys.argv[1]
    t0 = time.time()
    torch.manual_seed(0)
    tensors = {}
    meta = {"gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "cases": {}}
    for i, (name, nk, d, h) in enumerate(SHAPES):
        t = time.time()
        rng = torch.Generator().manual_seed(1000 + i)
        sc = torch.stack([to_scores(family(j % NFAM, nk, rng), d)
                          for j in range(h)])
        la = []
        lse, o0 = run_case(sc, d, la, 27)
        tensors[name + ".scores"] = sc.contiguous()
        tensors[name + ".lse"] = lse
        tensors[name + ".o0"] = o0
        meta["cases"][name] = {"nk": nk, "d": d, "heads": h,
                               "splits_rule": splits_of(nk),
                               "launches": la}
        print(name, "%.1f s" % (time.time() - t), [x["grid"] for x in la],
              flush=True)
    for name, nk, d, h in ZERO:
        t = time.time()
        live = torch.arange(nk)[None, :] <= torch.arange(h)[:, None]
        sc = torch.where(live, torch.zeros(()), torch.full((), NEG)).to(
            torch.bfloat16)
        la = []
        lse, o0 = run_case(sc, d, la)
        tensors[name + ".lse"] = lse
        tensors[name + ".o0"] = o0
        meta["cases"][name] = {"nk": nk, "d": d, "heads": h,
                               "live": "head h: keys 0 .. h",
                               "splits_rule": splits_of(nk),
                               "launches": la}
        print(name, "%.1f s" % (time.time() - t), [x["grid"] for x in la],
              flush=True)
    save_file(tensors, os.path.join(out, "lean_probe.safetensors"))
    if len(sys.argv) > 2:
        t = time.time()
        vv = load_file(sys.argv[2])["v"].cuda()
        base = load_file("tests/data/gpu/backends/d64_normal_fp16"
                         ".safetensors")
        h = vv.shape[1]
        q = base["q"].cuda().expand(1, h, -1, -1).contiguous()
        k = base["k"].cuda().expand(1, h, -1, -1).contiguous()
        op = torch.ops.aten._scaled_dot_product_cudnn_attention
        r = op(q, k, vv, None, True, 0.0, False, False)
        la = []
        import dump_sdpa
        dump_sdpa.kernels_seen(
            lambda: op(q, k, vv, None, True, 0.0, False, False), la)
        torch.cuda.synchronize()
        save_file({"o": r[0].contiguous().cpu(),
                   "lse": r[1].float().contiguous().cpu()},
                  os.path.join(out, "fp16_probe.safetensors"))
        meta["fp16"] = {"heads": h, "launches": la}
        print("fp16 %.1f s" % (time.time() - t), flush=True)
    meta["seconds"] = time.time() - t0
    with open(os.path.join(out, "lean_probe.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("total %.1f s" % (time.time() - t0), flush=True)


if __name__ == "__main__":
    main()

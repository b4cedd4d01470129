#!/usr/bin/env python3
"""sdpa_probes.py -- crafted inputs through the cuDNN, flash and
memory-efficient SDPA forwards, one effect at a time.

usage: sdpa_probes.py OUT.safetensors

d = 64 and the default scale 1/8 (exact) throughout; every probe runs
the three fused forwards through their aten ops (cuDNN and efficient
with compute_log_sumexp).  Tensors written, per backend B:

  lse.nk, lse.B      Q = 0 (every score 0, every P~ = 1, l = NK): the LSE
                     of row 0 for each NK (log(l) alone).
  div.L.v, div.L.B   Q = 0, NK = L keys; per column c V[0..2][c] three
                     BF16 values of exact sum S, the other keys 0:
                     O[0][c] = S/L rounded; S chosen (first half of the
                     columns) so that RN(RN(S/L)) and RN(RN(S*RN(1/L)))
                     differ in BF16.  v is [3, ncols] FP32.
  acc.N.spec, acc.N.B  Q = 0, NK = N in {256, 512}; per column +2^e at
                     key a, -2^e at key b and 1 at up to three keys c1..c3
                     (-1: none): O[0][col] * N shows which ones survived
                     the P~V accumulation (spec int32 [ncols, 6]:
                     e, a, b, c1, c2, c3).
  exp.x, exp.B        two keys: score 0 (key 0, V row e0) and x <= 0 (key
                     1, V row e1), x a BF16 value: O[.][0] = 1/l,
                     O[.][1] = P~/l and LSE = log(l), l = 1 + P~; exp.B
                     is [n, 3]: LSE, O0, O1 as FP32.
"""
import json
import sys

import random
import struct
from fractions import Fraction
import torch
from safetensors.torch import save_file

D = 64


def fwd(be, q, k, v):
    """O and LSE (FP32, natural log) of backend BE."""
    with torch.no_grad():
        if be == "cudnn":
            r = torch.ops.aten._scaled_dot_product_cudnn_attention(
                q, k, v, None, True, 0.0, False, False)
            return r[0], r[1].float()
        if be == "flash":
            r = torch.ops.aten._scaled_dot_product_flash_attention(
                q, k, v, 0.0, False, False)
            return r[0], r[1].float()
        r = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, None, True, 0.0, False)
        return r[0], r[1][:, :, :q.shape[2]].float()


def rn(x, mant):
    """X (a Fraction, nonzero, normal range) rounded to nearest even with
    MANT fraction bits."""
    ax = abs(x)
    e = ax.numerator.bit_length() - ax.denominator.bit_length()
    if Fraction(2) ** e > ax:
        e -= 1
    scale = Fraction(2) ** (mant - e)
    y = ax * scale
    n = y.numerator // y.denominator
    r = y - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return (Fraction(n) / scale) * (1 if x > 0 else -1)


def split3(s):
    """S (FP32 value) as three BF16 values summing exactly to S."""
    hi = rn(s, 7)
    mid = rn(s - hi, 7) if s != hi else Fraction(0)
    lo = s - hi - mid
    if lo != 0 and rn(lo, 7) != lo:
        return None
    return hi, mid, lo


def div_columns(L, n, rnd):
    """N columns (three BF16 values each, summing to S exactly): the
    first N/2 discriminate RN(S/L) from RN(S*RN(1/L)) after the BF16
    rounding of the output, the rest are random sums."""
    inv = rn(Fraction(1, L), 23)
    out = []
    tries = 0
    while len(out) < n // 2 and tries < 4000:
        tries += 1
        e = rnd.randint(-3, 4)
        m = Fraction(2 * rnd.randint(128, 255) + 1, 512) * Fraction(2) ** e
        base = m * L
        u = Fraction(2) ** (base.numerator.bit_length()
                            - base.denominator.bit_length() - 24)
        for dl in range(-2 * L, 2 * L + 1):
            s = base + dl * u
            if rn(s, 23) != s:
                continue
            h1 = rn(rn(s / L, 23), 7)
            h2 = rn(rn(s * inv, 23), 7)
            parts = split3(s)
            if h1 != h2 and parts is not None:
                out.append(parts)
                break
    while len(out) < n:
        e = rnd.randint(-3, 4)
        s = rn(Fraction(rnd.randint(1 << 23, (1 << 24) - 1), 1 << 23)
               * Fraction(2) ** e, 23)
        parts = split3(s)
        if parts is not None:
            out.append(parts)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    dev = "cuda"
    dt = torch.bfloat16
    bes = ["cudnn", "flash", "efficient"]
    rnd = random.Random(20261201)
    out = {}
    man = {"producer": "experiments/gpu/probes/sdpa_probes.py",
           "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "d": D, "scale": 0.125, "errors": []}
    # log(l)
    nks = list(range(2, 41)) + [63, 64, 65, 100, 127, 128, 129, 200, 255,
                                256, 257, 300, 384, 500, 512, 1000, 1023,
                                1024, 1025, 2047, 2048, 3000, 4096]
    out["lse.nk"] = torch.tensor(nks, dtype=torch.int32)
    for be in bes:
        vals = []
        for nk in nks:
            q = torch.zeros(1, 1, 64, D, device=dev, dtype=dt)
            k = torch.randn(1, 1, nk, D, device=dev, dtype=dt)
            v = torch.randn(1, 1, nk, D, device=dev, dtype=dt)
            try:
                vals.append(float(fwd(be, q, k, v)[1][0, 0, 0]))
            except Exception as e:
                vals.append(float("nan"))
                man["errors"].append("lse %s %d: %s" % (be, nk, str(e)[:100]))
        out["lse." + be] = torch.tensor(vals, dtype=torch.float32)
    # division by l
    H = 2
    for L in (3, 6, 7, 12):
        cols = div_columns(L, H * D, rnd)
        ab = torch.tensor([[float(c[i]) for c in cols] for i in range(3)],
                          dtype=torch.float32)
        out["div.%d.v" % L] = ab
        v = torch.zeros(1, H, L, D, dtype=torch.float32)
        for i in range(3):
            v[0, :, i, :] = ab[i].reshape(H, D)
        assert torch.equal(v.to(dt).float(), v)
        v = v.to(dt).to(dev)
        q = torch.zeros(1, H, 64, D, device=dev, dtype=dt)
        k = torch.randn(1, H, L, D, device=dev, dtype=dt)
        for be in bes:
            try:
                o = fwd(be, q, k, v)[0]
                out["div.%d.%s" % (L, be)] = o[0, :, 0, :].reshape(-1).float().cpu()
            except Exception as e:
                man["errors"].append("div %s %d: %s" % (be, L, str(e)[:100]))
    # accumulation order
    for N, H in ((256, 32), (512, 64)):
        ncol = H * D
        spec = torch.full((ncol, 6), -1, dtype=torch.int32)
        v = torch.zeros(H, N, D, dtype=torch.float32)
        for c in range(ncol):
            h, j = divmod(c, D)
            e = rnd.choice([24, 25, 26, 30])
            a, b = rnd.sample(range(N), 2)
            spec[c, 0], spec[c, 1], spec[c, 2] = e, a, b
            v[h, a, j] = 2.0 ** e
            v[h, b, j] = -2.0 ** e
            picked = set((a, b))
            for t in range(rnd.randint(1, 3)):
                ci = rnd.randrange(N)
                while ci in picked:
                    ci = rnd.randrange(N)
                picked.add(ci)
                spec[c, 3 + t] = ci
                v[h, ci, j] = 1.0
        out["acc.%d.spec" % N] = spec
        vt = v.unsqueeze(0).to(dt).to(dev)
        q = torch.zeros(1, H, 64, D, device=dev, dtype=dt)
        k = torch.randn(1, H, N, D, device=dev, dtype=dt)
        for be in bes:
            try:
                o = fwd(be, q, k, vt)[0]
                out["acc.%d.%s" % (N, be)] = o[0, :, 0, :].reshape(-1).float().cpu()
            except Exception as e:
                man["errors"].append("acc %s %d: %s" % (be, N, str(e)[:100]))
    # exp: every negative BF16 x in [-64, -2^-6], 16 heads x 64 rows
    allx = [struct.unpack("<f", struct.pack("<I", bits << 16))[0]
            for bits in range(0xBC80, 0xC280 + 1)]  # -2^-6 .. -64
    step = (len(allx) - 1) / 1023.0
    sel = torch.tensor([allx[int(i * step)] for i in range(1024)],
                       dtype=torch.float32)
    H = 16
    out["exp.x"] = sel
    q = torch.zeros(1, H, 64, D, dtype=torch.float32)
    q[0, :, :, 0] = sel.reshape(H, 64)
    q = q.to(dt).to(dev)
    k = torch.zeros(1, H, 2, D, device=dev, dtype=dt)
    k[0, :, 1, 0] = 1.0
    v = torch.zeros(1, H, 2, D, device=dev, dtype=dt)
    v[0, :, 0, 0] = 1.0
    v[0, :, 1, 1] = 1.0
    for be in bes:
        try:
            o, lse = fwd(be, q, k, v)
            r = torch.stack([lse[0].reshape(-1), o[0, :, :, 0].reshape(-1).float(),
                             o[0, :, :, 1].reshape(-1).float()], dim=1)
            out["exp." + be] = r.cpu()
        except Exception as e:
            man["errors"].append("exp %s: %s" % (be, str(e)[:100]))
    out = {n: t.contiguous() for n, t in out.items()}
    save_file(out, sys.argv[1], metadata={"manifest": json.dumps(man)})
    print(json.dumps(man["errors"]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""sdpa_gqa_mask.py -- grouped-query heads and attention masks through
PyTorch's four SDPA backends.

usage: sdpa_gqa_mask.py OUTDIR [NAME ...]

The companion of sdpa_backends.py for what users send beyond plain
heads: key and value heads shared by groups of query heads
(scaled_dot_product_attention(..., enable_gqa=True), Hkv | Hq) and
explicit attention masks (is_causal=False with attn_mask, boolean or
additive).  For each case of GQA_CASES and MASK_CASES: one set of Q, K,
V, dO (torch.randn on a seeded CPU generator, in that order, then
converted to the case's dtype; K and V with their own Hkv heads), then
the flash, cuDNN, memory-efficient and math backends, each pinned with
torch.nn.attention.sdpa_kernel and called through
scaled_dot_product_attention as a user calls it:

  - a backend that refuses the call is recorded as such ("refused":
    PyTorch's error, with its warnings and whatever it printed on the
    standard error), and nothing of it is stored;
  - the forward runs under the profiler (forward_launches: each kernel
    with its grid and block) and, for the cases with a backward,
    SDPA(...).backward(dO) runs under the profiler too
    (backward_launches), with deterministic algorithms on for flash,
    efficient and math and off for cuDNN (its backward has no
    deterministic mode), as in sdpa_backends.py ("deterministic");
  - the forward and backward run a second time under a dispatch mode
    that records the aten ops SDPA called ("aten_ops"; for the fused
    backends the attention op's arguments, "aten_op", the mask as the
    kernel received it included) and whether O and the gradients
    repeat bit for bit ("repeat");
  - the LSE (FP32, natural log) is the fused op's own output: flash
    always returns it; cuDNN and efficient return it when SDPA asks
    (inputs that require grad), else the op is called again with the
    same arguments and compute_log_sumexp, and "lse" records whether
    its O equals SDPA's bit for bit (the LSE is stored only then; else
    that call's O and LSE are stored as "B.op.o", "B.op.lse"); math
    has none;
  - O (and the LSE) are checked against an FP64 reference computed on
    the GPU from the same inputs ("fp64": the largest error over the
    rows that have a key; rows without one are left out);
  - GQA cases: the same call with K and V expanded by
    repeat_interleave (enable_gqa off, the same backend pinned, the
    gradients taken through the expansion) is compared with the
    enable_gqa call: per tensor (o, lse, dq, dk, dv) whether they are
    bit-equal and how many elements differ ("expanded"); only the
    comparison is stored (for a backend that refuses enable_gqa, only
    whether the expanded call ran, and its kernels);
  - mask cases with rows in which every key is masked: per backend,
    what O, the LSE and dQ hold in those rows ("masked_rows").

Files: OUTDIR/gqa/NAME.safetensors and OUTDIR/mask/NAME.safetensors,
each with its manifest as metadata "manifest" and beside it as
NAME.json.  Tensors: q, k, v, do (do only with a backward) and, per
backend B that ran, "B.o", "B.lse", "B.dq", "B.dk", "B.dv"; mask cases
also "attn_mask", the whole call's mask as the user passed it
(broadcastable to [B, H, Nq, Nk]; boolean as safetensors BOOL, True
where the key takes part; additive in the inputs' dtype).  A file keeps
some heads of the launch, as trim_dump.py does: GQA files keep batch 0,
the first KEEP_KV key heads (kv_heads_from) and the query heads of
their groups (heads_from), so that the file is itself a grouped launch
of the same group size, K, V, dK and dV of shape [1, Hkv', Nk, d]; mask
files keep (batch, head) pairs as the heads of batch 1 (batch_from and
heads_from per pair; grouped ones also the key/value heads they read,
kv_heads_from, in order of first use), the mask itself whole; a case
may pass a scale (the manifest's "scale" is then that number).  launch_shape is the call:
batch, heads, kv_heads, nq, nk, d and, where it was passed,
"enable_gqa": true.

OUTDIR/mask/dispatch.json: for every case, which backend PyTorch's
default SDPA (nothing pinned) picks, read from the kernels the profiler
saw, with torch._fused_sdp_choice beside it, in four settings:
inference (no grad) and training (inputs that require grad, forward
and backward), each with deterministic algorithms off and on; for
training, whether the backward ran and with which backend.

With NAMEs, only those cases run (dispatch.json then covers them alone).
"""
import contextlib
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402
from sdpa_backends import BACKENDS  # noqa: E402

PRODUCER = "experiments/gpu/sdpa_gqa_mask.py"
DETERMINISTIC = {"flash": True, "cudnn": False, "efficient": True,
                 "math": True}
FUSED_OPS = ("_scaled_dot_product_flash_attention.",
             "_scaled_dot_product_cudnn_attention.",
             "_scaled_dot_product_efficient_attention.")
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def gqa(hq, hkv, nq, nk, d, seed, dt="bf16", causal=False, bwd=True,
        keep_kv=1, batch=1):
    return dict(batch=batch, heads=hq, kv_heads=hkv, nq=nq, nk=nk, d=d,
                dt=dt, causal=causal, bwd=bwd, seed=seed, keep_kv=keep_kv)


# name: launch; keep_kv key heads (and their query heads) are stored
GQA_CASES = [
    ("gqa_d64_g2", gqa(8, 4, 128, 128, 64, 301, keep_kv=2)),
    ("gqa_d64_g4", gqa(8, 2, 128, 128, 64, 302)),
    ("gqa_d64_g8_mqa", gqa(8, 1, 128, 128, 64, 303)),
    ("gqa_d128_causal_g4", gqa(8, 2, 128, 128, 128, 304, causal=True)),
    ("gqa_d64_g4_fp16", gqa(8, 2, 128, 128, 64, 305, dt="fp16")),
    ("gqa_decode_nk512_h8_g4", gqa(8, 2, 1, 512, 128, 306, bwd=False)),
    ("gqa_decode_nk512_h8_g8", gqa(8, 1, 1, 512, 128, 307, bwd=False)),
    ("gqa_decode_nk512_h32_g4", gqa(32, 8, 1, 512, 128, 308, bwd=False)),
    ("gqa_decode_nk512_h32_g8", gqa(32, 4, 1, 512, 128, 309, bwd=False)),
    ("gqa_decode_nk4096_h8_g8", gqa(8, 1, 1, 4096, 128, 310, bwd=False)),
]


def msk(kind, seed, pairs, dt="bf16", heads=4, kv_heads=4, nq=128, nk=128,
        d=64, scale=None, bwd=True, **params):
    return dict(batch=2, heads=heads, kv_heads=kv_heads, nq=nq, nk=nk, d=d,
                dt=dt, causal=False, bwd=bwd, seed=seed, kind=kind,
                pairs=pairs, params=params, scale=scale)


# name: mask kind, input seed, the (batch, head) pairs stored, parameters
MASK_CASES = [
    ("mask_padding", msk("padding", 401, [(1, 2)], lengths=[128, 77])),
    ("mask_causal_padding", msk("causal-padding", 402, [(1, 1)],
                                lengths=[128, 77])),
    ("mask_window32", msk("window", 403, [(1, 2)], window=32)),
    ("mask_alibi", msk("alibi", 404, [(1, 1)])),
    ("mask_random", msk("random", 405, [(1, 2)], p=0.3, mask_seed=4051)),
    ("mask_all_masked_rows", msk("all-masked-rows", 406, [(1, 0)],
                                 rows=[[3, 64], [0, 1, 63, 64, 127]])),
    ("mask_causal_padding_fp16", msk("causal-padding", 407, [(1, 3)],
                                     dt="fp16", lengths=[128, 77])),
    # scales that are not powers of two (where a bias's place shows), FP16,
    # several KV blocks, grouped heads, one query row
    ("mask_alibi_d128", msk("alibi", 411, [(1, 1), (0, 3)], d=128)),
    ("mask_alibi_scale01", msk("alibi", 412, [(1, 0), (0, 2)], scale=0.1)),
    ("mask_alibi_fp16_d128", msk("alibi", 413, [(1, 2)], dt="fp16",
                                 d=128)),
    ("mask_padding_d128", msk("padding", 414, [(1, 1)], d=128,
                              lengths=[128, 77])),
    ("mask_random_scale01_fp16", msk("random", 415, [(1, 3)], dt="fp16",
                                     scale=0.1, p=0.3, mask_seed=4151)),
    ("mask_window128_n512_d128", msk("window", 416, [(1, 2)], nq=512,
                                     nk=512, d=128, window=128)),
    ("mask_padding_n512_scale03", msk("padding", 417, [(1, 0)], nq=512,
                                      nk=512, scale=0.3,
                                      lengths=[512, 300])),
    ("mask_all_masked_rows_fp16", msk("all-masked-rows", 418, [(1, 1)],
                                      dt="fp16", d=128,
                                      rows=[[5], [0, 2, 127]])),
    ("mask_all_masked_rows_d128", msk("all-masked-rows", 419, [(1, 2)],
                                      d=128, rows=[[5], [0, 2, 127]])),
    ("mask_gqa_padding_g2", msk("padding", 420, [(1, 2), (1, 3)],
                                kv_heads=2, lengths=[128, 77])),
    ("mask_gqa_alibi_g4_d128", msk("alibi", 421, [(1, 0), (1, 1), (1, 2),
                                                  (1, 3)], kv_heads=1,
                                   d=128)),
    ("mask_decode_padding_nk512", msk("padding", 422, [(1, 1), (0, 2)],
                                      nq=1, nk=512, d=128, bwd=False,
                                      lengths=[512, 300])),
    ("mask_decode_alibi_nk2048", msk("alibi", 423, [(1, 3)], nq=1, nk=2048,
                                     d=128, bwd=False)),
]


def build_mask(c):
    """The case's attn_mask (a CPU tensor, as the user passes it) and its
    manifest entry."""
    b, h, kind, p = c["batch"], c["heads"], c["kind"], c["params"]
    nq, n = c["nq"], c["nk"]
    # query i is the launch's row nk - nq + i (the last rows: a decode
    # step's one query is the newest token)
    i = torch.arange(n - nq, n).view(nq, 1)
    j = torch.arange(n).view(1, n)
    entry = {"kind": kind}
    if kind in ("padding", "causal-padding"):
        lens = torch.tensor(p["lengths"]).view(b, 1, 1, 1)
        m = (j.view(1, 1, 1, n) < lens).expand(b, 1, nq, n)
        if kind == "causal-padding":
            m = m & (j <= i).view(1, 1, nq, n)
        m = m.contiguous()
        entry["lengths"] = p["lengths"]
        entry["rule"] = ("key j takes part for batch entry b when j < "
                         "lengths[b]" + (" and j <= i" if kind ==
                                         "causal-padding" else ""))
    elif kind == "window":
        w = p["window"]
        m = ((j <= i) & (i - j < w)).view(1, 1, nq, n).contiguous()
        entry["window"] = w
        entry["rule"] = "key j takes part for query i when i - window < j <= i"
    elif kind == "alibi":
        slopes = [2.0 ** (-8.0 * (x + 1) / h) for x in range(h)]
        dist = (i - j).abs().double()
        m = torch.stack([-s * dist for s in slopes]).view(1, h, nq, n)
        m = m.to(DTYPES[c["dt"]])
        entry["slopes"] = slopes
        entry["rule"] = ("additive: bias[0, h, i, j] = -slopes[h] * "
                         "|i - j| (exact in the dtype), slopes[h] = "
                         "2^(-8 (h + 1) / H)")
    elif kind == "random":
        g = torch.Generator().manual_seed(p["mask_seed"])
        m = torch.rand(b, h, nq, n, generator=g) >= p["p"]
        entry["p"] = p["p"]
        entry["seed"] = p["mask_seed"]
        entry["rule"] = ("key takes part where torch.rand(B, H, N, N, "
                         "generator seeded with seed) >= p")
    elif kind == "all-masked-rows":
        m = torch.ones(b, 1, nq, n, dtype=torch.bool)
        for bb, rows in enumerate(p["rows"]):
            for r in rows:
                m[bb, 0, r, :] = False
        entry["rows"] = p["rows"]
        entry["rule"] = ("every key takes part except in the listed query "
                         "rows of each batch entry, where none does")
    else:
        raise ValueError(kind)
    entry["dtype"] = str(m.dtype).replace("torch.", "")
    entry["shape"] = list(m.shape)
    if m.dtype == torch.bool:
        entry["semantics"] = ("True: the key takes part (PyTorch's boolean "
                              "mask)")
    else:
        entry["semantics"] = "added to the scaled scores"
    return m, entry


def gen_inputs(c):
    """Q, K, V, dO (CPU) of case C: torch.randn on a CPU generator seeded
    with the case's seed, in the order q, k, v, do, then converted."""
    g = torch.Generator().manual_seed(c["seed"])
    dt = DTYPES[c["dt"]]
    b, d = c["batch"], c["d"]

    def draw(h, n):
        return torch.randn(b, h, n, d, generator=g).to(dt)
    q = draw(c["heads"], c["nq"])
    k = draw(c["kv_heads"], c["nk"])
    v = draw(c["kv_heads"], c["nk"])
    do = draw(c["heads"], c["nq"])
    return q, k, v, do


def tidy(text):
    """TEXT on one line, without PyTorch's "(Triggered internally at
    FILE:LINE.)" notes."""
    text = re.sub(r"\s*\(Triggered internally at [^)]*\)\.?", "", str(text))
    return " ".join(text.split())


def one_line(e):
    """An exception as text: its type and the lines of its message."""
    return "%s: %s" % (type(e).__name__, tidy(e)[:600])


STDERR_NOISE = ("STAGE:", "CUPTI", "kineto", "Kineto")


def guarded(fn):
    """Runs FN; returns (error text or None, the Python warnings raised,
    what was written to the stderr file descriptor meanwhile: PyTorch
    prints some of its reasons there)."""
    sys.stderr.flush()
    tmp = tempfile.TemporaryFile()
    saved = os.dup(2)
    os.dup2(tmp.fileno(), 2)
    err = None
    msgs = []
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                fn()
            except Exception as e:  # the refusal, or any failure
                err = one_line(e)
            for x in w:
                s = tidy(x.message)[:600]
                if s not in msgs:
                    msgs.append(s)
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    tmp.seek(0)
    text = tmp.read().decode("utf-8", "replace")
    tmp.close()
    lines = [tidy(ln) for ln in text.splitlines()
             if ln.strip() and not any(s in ln for s in STDERR_NOISE)]
    return err, msgs, "\n".join(lines)[:3000]


def tensor_meta(t):
    """dtype, shape, strides of a tensor (and its values when few)."""
    m = {"dtype": str(t.dtype).replace("torch.", ""),
         "shape": list(t.shape), "stride": list(t.stride())}
    return m


def mask_values(t):
    """The distinct values of a mask as the kernel got it (up to 8, as
    text), or their count."""
    u = torch.unique(t.detach().float().cpu())
    if u.numel() > 8:
        return {"distinct_values": int(u.numel())}
    return {"values": [str(float(x)) for x in u]}


class OpTap(TorchDispatchMode):
    """A dispatch mode recording the aten ops called under it (each name
    once, in the order first called) and the fused attention op's
    arguments and outputs (the last one called)."""

    def __init__(self):
        super().__init__()
        self.ops = []
        self.fused = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = str(func)
        if name not in self.ops:
            self.ops.append(name)
        if any(f in name for f in FUSED_OPS):
            self.fused = (func, list(args), dict(kwargs), out)
        return out


def pin_of(be):
    from torch.nn.attention import SDPBackend
    return {"flash": SDPBackend.FLASH_ATTENTION,
            "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "math": SDPBackend.MATH, None: None}[be]


def sdpa_call(be, q, k, v, do, mask, causal, gqa_on, bwd, profile=True,
              tap=False, expand=1, choice=False, scale=None):
    """One SDPA call on device tensors with backend BE pinned (None: the
    default dispatch): forward, and with BWD the backward of dO.  K and V
    are expanded by repeat_interleave(EXPAND) inside the graph, so that
    dK and dV are the gradients of the unexpanded tensors.  Returns a
    dict: error, warnings, stderr, o, grads, the launches and kernels
    (PROFILE), the OpTap (TAP), backward_error, backward_warnings."""
    from torch.nn.attention import sdpa_kernel
    pin = pin_of(be)
    leaves = [t.detach().clone().requires_grad_(bwd) for t in (q, k, v)]
    r = {"o": None, "grads": None}
    tapper = OpTap() if tap else None
    box = []

    def fwd():
        kx, vx = leaves[1], leaves[2]
        if expand > 1:
            kx = kx.repeat_interleave(expand, dim=1)
            vx = vx.repeat_interleave(expand, dim=1)
        kw = {"attn_mask": mask, "is_causal": causal}
        if scale is not None:
            kw["scale"] = scale
        if gqa_on:
            kw["enable_gqa"] = True
        ctx = sdpa_kernel(pin) if pin is not None \
            else contextlib.nullcontext()
        with ctx, (tapper if tapper is not None
                   else contextlib.nullcontext()):
            box.append(F.scaled_dot_product_attention(
                leaves[0], kx, vx, **kw))
        torch.cuda.synchronize()

    if choice:
        def ch():
            r["fused_sdp_choice"] = dump_sdpa.CHOICE_NAMES.get(int(
                torch._fused_sdp_choice(leaves[0], leaves[1], leaves[2],
                                        mask, 0.0, causal, scale=scale,
                                        enable_gqa=gqa_on)), "unknown")
        e, w, s = guarded(ch)
        if e:
            r["fused_sdp_choice"] = "raised: " + e

    def fwd_run():
        if profile:
            r["forward_launches"] = []
            r["forward_kernels"] = dump_sdpa.kernels_seen(
                fwd, r["forward_launches"])
        else:
            fwd()
    r["error"], r["warnings"], r["stderr"] = guarded(fwd_run)
    r["tap"] = tapper
    if r["error"] is not None or not box:
        if r["error"] is None:
            r["error"] = "no output"
        return r
    r["o"] = box[0].detach()
    if bwd:
        def bwd_run():
            def go():
                box[0].backward(do)
                torch.cuda.synchronize()
            if profile:
                r["backward_launches"] = []
                r["backward_kernels"] = dump_sdpa.kernels_seen(
                    go, r["backward_launches"])
            else:
                go()
        e, w, s = guarded(bwd_run)
        r["backward_error"], r["backward_warnings"], r["backward_stderr"] = \
            e, w, s
        if e is None:
            r["grads"] = tuple(t.grad.detach().clone() for t in leaves)
    return r


def differ(a, b):
    """The number of elements of A and B whose bits differ (None if
    either is missing or the shapes differ)."""
    if a is None or b is None or a.shape != b.shape:
        return None
    return a.numel() - dump_sdpa.count_equal(a, b)


def lse_of(be, tap, o, c, hq):
    """The LSE [B, Hq, Nq] (FP32) of the fused op that SDPA called (from
    TAP), calling it again with compute_log_sumexp where SDPA did not ask
    for it.  Returns (lse or None, op's O if it differs from O else
    None, info)."""
    info = {}
    if be == "math" or tap is None or tap.fused is None:
        return None, None, {"source": None}
    func, args, kwargs, out = tap.fused
    info["op"] = str(func)
    metas = []
    for x, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            m = tensor_meta(a)
            if x == 3 and be in ("cudnn", "efficient"):
                m.update(mask_values(a))
            metas.append(m)
        else:
            metas.append(a if isinstance(a, (int, float, bool, str))
                         or a is None else str(a))
    info["args"] = metas
    info["kwargs"] = {n: (v if isinstance(v, (int, float, bool, str))
                          or v is None else str(v))
                      for n, v in kwargs.items()}
    lse = out[1]
    op_o = out[0]
    asked = be == "flash" or (args[4] if len(args) > 4 else
                              kwargs.get("compute_log_sumexp", False))
    if not asked or lse is None or lse.numel() == 0:
        a2 = list(args)
        if len(a2) > 4:
            a2[4] = True
        else:
            kwargs = dict(kwargs, compute_log_sumexp=True)
        with torch.no_grad():
            out2 = func(*a2, **kwargs)
        torch.cuda.synchronize()
        lse, op_o = out2[1], out2[0]
        info["source"] = ("%s called again with compute_log_sumexp (SDPA "
                          "did not ask for the LSE)" % str(func))
    else:
        info["source"] = "%s as SDPA called it" % str(func)
    nq = c["nq"]
    if be == "efficient":
        lse = lse[:, :, :nq]
        info["source"] += "; padded rows cut"
    lse = lse.detach().float().reshape(c["batch"], hq, nq)
    n = differ(op_o.detach(), o)
    info["o_differ"] = n
    info["o_equal_sdpa"] = n == 0
    return lse, (None if n == 0 else op_o.detach()), info


def reference(q, k, v, mask, causal, group, scale=None):
    """O and LSE in FP64 on the GPU: S = Q K^T / sqrt(d), the mask
    (boolean: -inf where False; additive: added) and the causal mask
    (top-left), softmax and P V; rows without a key give NaN O and -inf
    LSE."""
    kd = k.double().repeat_interleave(group, dim=1)
    vd = v.double().repeat_interleave(group, dim=1)
    s = q.double() @ kd.transpose(-1, -2)
    s = s * scale if scale is not None else s / math.sqrt(q.shape[-1])
    if mask is not None:
        if mask.dtype == torch.bool:
            s = s.masked_fill(~mask, float("-inf"))
        else:
            s = s + mask.double()
    if causal:
        nq, nk = s.shape[-2], s.shape[-1]
        keep = torch.ones(nq, nk, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, dim=-1) @ vd, torch.logsumexp(s, dim=-1)


def fp64_check(o, lse, ref, lse_ref):
    """The largest |O - ref| and |LSE - ref| over the rows with a key,
    and the non-finite O elements there."""
    rows = torch.isfinite(lse_ref)
    out = {"rows_checked": int(rows.sum()),
           "rows_without_key": int((~rows).sum())}
    od = o.double()[rows]
    r = ref[rows]
    fin = torch.isfinite(od)
    out["o_nonfinite"] = int((~fin).sum())
    out["o_max_abs_err"] = float((od - r)[fin].abs().max()) \
        if bool(fin.any()) else None
    if lse is not None:
        dl = (lse.double()[rows] - lse_ref[rows]).abs()
        out["lse_max_abs_err"] = float(dl.max()) if dl.numel() else None
    return out


def classify(t):
    """What the values of T are: "nan", "zero" (with "-0" when a sign
    bit is set), "inf", "finite nonzero" or "mixed"."""
    t = t.detach().float()
    if t.numel() == 0:
        return "empty"
    if bool(torch.isnan(t).all()):
        return "nan"
    if bool((t == 0).all()):
        return "zero (-0 present)" if bool(torch.signbit(t).any()) \
            else "zero"
    if bool(torch.isinf(t).all()):
        return "inf"
    if bool(torch.isfinite(t).all()):
        return "finite nonzero"
    return "mixed"


def masked_rows(rows, o, lse, grads):
    """The values of one backend in the rows without a key."""
    out = {"o": {}, "lse": {}, "dq": {}}
    for b, rs in enumerate(rows):
        for i in rs:
            key = "%d:%d" % (b, i)
            out["o"][key] = classify(o[b, :, i, :])
            if lse is not None:
                vals = sorted({str(float(x)) for x in lse[b, :, i].cpu()})
                out["lse"][key] = vals
            if grads is not None:
                out["dq"][key] = classify(grads[0][b, :, i, :])
    if lse is None:
        del out["lse"]
    if grads is None:
        del out["dq"]
    else:
        out["dk_nonfinite"] = int((~torch.isfinite(grads[1].float())).sum())
        out["dv_nonfinite"] = int((~torch.isfinite(grads[2].float())).sum())
    # one entry per tensor when every row agrees
    for n in ("o", "dq", "lse"):
        if n in out and len({str(x) for x in out[n].values()}) == 1:
            out[n + "_all_rows"] = next(iter(out[n].values()))
    return out


def compare(x, y, names):
    """Per tensor: bit-equal, and the count of differing elements."""
    out = {}
    for n, a, b in zip(names, x, y):
        dd = differ(a, b)
        out[n] = {"equal": dd == 0 if dd is not None else None,
                  "differ": dd}
    return out


def run_backend(be, c, dev_in, mask, group, refs):
    """Backend BE on one case: (manifest entry, tensors on the GPU: o,
    lse, grads, op o, op lse)."""
    q, k, v, do = dev_in
    det = DETERMINISTIC[be]
    causal, bwd, gon = c["causal"], c["bwd"], group > 1
    torch.use_deterministic_algorithms(det)
    try:
        first = sdpa_call(be, q, k, v, do, mask, causal, gon, bwd,
                          scale=c.get("scale"))
        ent = {"pinned": str(pin_of(be)), "deterministic": det}
        if first["error"] is not None:
            ent["refused"] = first["error"]
            if first["warnings"]:
                ent["warnings"] = first["warnings"]
            if first["stderr"]:
                ent["stderr"] = first["stderr"]
            if gon:
                ent["expanded"] = expanded(be, c, dev_in, group, None, None,
                                           mask)
            return ent, None
        ent["ran"] = True
        for n in ("warnings", "stderr"):
            if first[n]:
                ent[n] = first[n]
        ent["forward_kernels"] = first["forward_kernels"]
        ent["forward_launches"] = first["forward_launches"]
        ent["backend_seen"] = dump_sdpa.backend_of_kernels(
            first["forward_kernels"])
        if bwd:
            if first["backward_error"] is not None:
                ent["backward_refused"] = first["backward_error"]
            ent["backward_kernels"] = first.get("backward_kernels", [])
            ent["backward_launches"] = first.get("backward_launches", [])
            for n in ("backward_warnings", "backward_stderr"):
                if first.get(n):
                    ent[n] = first[n]
        second = sdpa_call(be, q, k, v, do, mask, causal, gon, bwd,
                           profile=False, tap=True, scale=c.get("scale"))
        tap = second["tap"]
        ent["aten_ops"] = tap.ops[:40] if tap is not None else None
        names = ("o", "dq", "dk", "dv")
        xs = (first["o"],) + (first["grads"] or (None,) * 3)
        ys = (second["o"],) + (second["grads"] or (None,) * 3)
        rep = compare(xs, ys, names)
        if not bwd:
            rep = {"o": rep["o"]}
        ent["repeat"] = dict(rep, runs=2, equal=all(
            x["equal"] is True for x in rep.values()))
        lse, op_o, info = None, None, {"source": None}
        try:
            lse, op_o, info = lse_of(be, tap, first["o"], c, c["heads"])
        except Exception as e:
            info = {"error": one_line(e)}
        ent["lse"] = info
        op_lse = None
        if op_o is not None:  # the LSE belongs to another O
            op_lse, lse = lse, None
        ref, lse_ref = refs
        ent["fp64"] = fp64_check(first["o"], lse if lse is not None
                                 else op_lse, ref, lse_ref)
        if gon:
            ent["expanded"] = expanded(be, c, dev_in, group, first, lse,
                                       mask)
        tens = {"o": first["o"], "lse": lse, "grads": first["grads"],
                "op_o": op_o, "op_lse": op_lse}
        return ent, tens
    finally:
        torch.use_deterministic_algorithms(False)


def expanded(be, c, dev_in, group, gq, gq_lse, mask=None):
    """The same call with K and V expanded by repeat_interleave and
    enable_gqa off, compared with the enable_gqa call GQ."""
    q, k, v, do = dev_in
    r = sdpa_call(be, q, k, v, do, mask, c["causal"], False, c["bwd"],
                  profile=True, tap=True, expand=group, scale=c.get("scale"))
    ent = {"call": "scaled_dot_product_attention(q, k.repeat_interleave(G, "
           "dim=1), v.repeat_interleave(G, dim=1)), enable_gqa off; dK, dV "
           "through the expansion"}
    if r["error"] is not None:
        ent["refused"] = r["error"]
        if r["warnings"]:
            ent["warnings"] = r["warnings"]
        return ent
    ent["ran"] = True
    ent["forward_kernels"] = r["forward_kernels"]
    if c["bwd"]:
        ent["backward_kernels"] = r.get("backward_kernels", [])
        if r["backward_error"] is not None:
            ent["backward_refused"] = r["backward_error"]
    lse = None
    try:
        lse, op_o, info = lse_of(be, r["tap"], r["o"], c, c["heads"])
        if op_o is not None:
            lse = None
    except Exception as e:
        ent["lse_error"] = one_line(e)
    if gq is None or gq["o"] is None:
        return ent
    names = ["o", "lse"]
    xs = [gq["o"], gq_lse]
    ys = [r["o"], lse]
    if c["bwd"]:
        names += ["dq", "dk", "dv"]
        xs += list(gq["grads"] or (None,) * 3)
        ys += list(r["grads"] or (None,) * 3)
    cmp = compare(xs, ys, names)
    if gq_lse is None and lse is None:
        del cmp["lse"]
    ent["vs_enable_gqa"] = cmp
    ent["all_equal"] = all(x["equal"] is True for x in cmp.values())
    return ent


def pick(t, pairs):
    """The (batch, head) PAIRS of T [B, H, ...] as the heads of batch 1."""
    return torch.stack([t[b, h] for b, h in pairs]).unsqueeze(0)


def versions():
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        drv = "unknown"
    return {"producer": PRODUCER,
            "gpu": torch.cuda.get_device_name(0),
            "cc": "%d.%d" % torch.cuda.get_device_capability(0),
            "driver": drv,
            "cuda": torch.version.cuda, "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(),
            "sms": torch.cuda.get_device_properties(0).multi_processor_count}


def jsonable(x):
    """X with non-finite floats as text (the manifests are strict
    JSON)."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def save(path, tensors, man):
    """Writes PATH.safetensors (manifest as metadata) and PATH.json."""
    tensors = {n: t.detach().cpu().contiguous() for n, t in tensors.items()}
    man["tensors"] = {n: [str(t.dtype).replace("torch.", ""),
                          list(t.shape)] for n, t in tensors.items()}
    man = jsonable(man)
    text = json.dumps(man, allow_nan=False)
    save_file(tensors, path + ".safetensors", metadata={"manifest": text})
    with open(path + ".json", "w") as f:
        json.dump(man, f, indent=1, allow_nan=False)
        f.write("\n")
    return os.path.getsize(path + ".safetensors")


def run_case(name, c, outdir, ver):
    """One case: every backend, the file and its manifest."""
    is_mask = "kind" in c
    group = c["heads"] // c["kv_heads"]
    q, k, v, do = gen_inputs(c)
    dev = torch.device("cuda")
    dev_in = tuple(t.to(dev) for t in (q, k, v, do))
    mask, mentry = (None, None)
    if is_mask:
        mask, mentry = build_mask(c)
        mask_dev = mask.to(dev)
    else:
        mask_dev = None
    ref, lse_ref = reference(dev_in[0], dev_in[1], dev_in[2], mask_dev,
                             c["causal"], group, c.get("scale"))
    if is_mask:
        # the query heads kept, and the key/value heads they read (a
        # group's query heads all kept where the backward is compared)
        qp = list(c["pairs"])
        kp = list(dict.fromkeys((b, h // group) for b, h in qp))
    else:
        kvk = list(range(c["keep_kv"]))
        kp = [(0, h) for h in kvk]
        qp = [(0, h) for h in range(c["heads"]) if h // group in kvk]
    tensors = {"q": pick(q, qp), "k": pick(k, kp), "v": pick(v, kp)}
    if c["bwd"]:
        tensors["do"] = pick(do, qp)
    backends = {}
    summary = {}
    for be in BACKENDS:
        try:
            ent, tens = run_backend(be, c, dev_in, mask_dev, group,
                                    (ref, lse_ref))
        except Exception as e:
            traceback.print_exc()
            ent, tens = {"script_error": one_line(e)}, None
        backends[be] = ent
        if tens is None:
            summary[be] = ("refused" if "refused" in ent else
                           "error: " + ent.get("script_error", "?"))
            print("  %s: %s" % (be, summary[be][:300]), flush=True)
            continue
        tensors[be + ".o"] = pick(tens["o"], qp)
        if tens["lse"] is not None:
            tensors[be + ".lse"] = pick(tens["lse"], qp)
        if tens["op_o"] is not None:
            tensors[be + ".op.o"] = pick(tens["op_o"], qp)
            tensors[be + ".op.lse"] = pick(tens["op_lse"], qp)
        if tens["grads"] is not None:
            tensors[be + ".dq"] = pick(tens["grads"][0], qp)
            tensors[be + ".dk"] = pick(tens["grads"][1], kp)
            tensors[be + ".dv"] = pick(tens["grads"][2], kp)
        if is_mask and c["kind"] == "all-masked-rows":
            ent["masked_rows"] = masked_rows(
                c["params"]["rows"], tens["o"],
                tens["lse"] if tens["lse"] is not None else tens["op_lse"],
                tens["grads"])
        line = "ran %s rep=%s fp64=%s" % (
            ent.get("backend_seen"), ent["repeat"]["equal"],
            ent["fp64"].get("o_max_abs_err"))
        if "expanded" in ent:
            line += " expanded_equal=%s" % ent["expanded"].get("all_equal")
        if "backward_refused" in ent:
            line += " backward refused"
        summary[be] = line
        print("  %s: %s" % (be, line), flush=True)
    dts = {"bf16": "bfloat16", "fp16": "float16"}[c["dt"]]
    launch = {"batch": c["batch"], "heads": c["heads"],
              "kv_heads": c["kv_heads"], "nq": c["nq"], "nk": c["nk"],
              "d": c["d"]}
    if group > 1:
        launch["enable_gqa"] = True
    man = dict(ver)
    man.update({
        "dtype": dts,
        "launch_shape": launch,
        "shape": {"batch": 1, "heads": len(qp), "kv_heads": len(kp),
                  "nq": c["nq"], "nk": c["nk"], "d": c["d"]},
        "heads_from": [h for _, h in qp],
    })
    bs = sorted({b for b, _ in qp})
    man["batch_from"] = bs[0] if len(bs) == 1 else [b for b, _ in qp]
    if not is_mask or group > 1:
        man["kv_heads_from"] = [h for _, h in kp]
        man["group_size"] = group
        man["head_map"] = ("query head h reads key/value head h // "
                           "group_size (the launch's indices)")
    man.update({
        "causal": c["causal"],
        "causal_alignment": "top-left = bottom-right (nq = nk)"
        if c["causal"] else None,
        "scale": c["scale"] if c.get("scale") is not None
        else "1/sqrt(d) (PyTorch default)",
        "seed": c["seed"],
        "inputs": "torch.randn on a CPU generator seeded with seed: q [B, "
        "H, Nq, d], k, v [B, Hkv, Nk, d], do [B, H, Nq, d] in that order, "
        "then .to(%s)" % dts,
        "call": "scaled_dot_product_attention(q, k, v%s%s%s%s)" % (
            ", attn_mask=attn_mask" if is_mask else "",
            ", is_causal=True" if c["causal"] else "",
            (", scale=%r" % c["scale"]) if c.get("scale") is not None
            else "",
            ", enable_gqa=True" if group > 1 else ""),
        "backward_op": "scaled_dot_product_attention(...).backward(do), "
        "backend pinned" if c["bwd"] else None,
    })
    if is_mask:
        mentry["stored"] = "attn_mask (the whole call's mask)"
        man["attn_mask"] = mentry
        man["pairs"] = ("file head i is the launch's (batch_from[i], "
                        "heads_from[i]); attn_mask is broadcast over the "
                        "launch's [B, H, Nq, Nk]")
    man["backends"] = backends
    man["date"] = datetime.datetime.now(datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")
    sub = os.path.join(outdir, "mask" if is_mask else "gqa")
    os.makedirs(sub, exist_ok=True)
    path = os.path.join(sub, name)
    if is_mask:
        mentry["stored_as"] = "BOOL" if mask.dtype == torch.bool \
            else {"bf16": "BF16", "fp16": "F16"}[c["dt"]]
        try:
            size = save(path, dict(tensors, attn_mask=mask), man)
        except Exception as e:  # no BOOL in this safetensors
            print("  BOOL not written (%s): U8 0/1 instead" % one_line(e),
                  flush=True)
            mentry["stored_as"] = "U8 0/1 (1: the key takes part)"
            size = save(path, dict(tensors, attn_mask=mask.to(torch.uint8)),
                        man)
    else:
        size = save(path, tensors, man)
    print("  %d bytes" % size, flush=True)
    return summary


DISPATCH_MODES = (("inference", False, False),
                  ("inference_deterministic", False, True),
                  ("training", True, False),
                  ("training_deterministic", True, True))
KERNEL_WORDS = ("cudnn", "flash", "fmha", "softmax", "gemm", "nvjet",
                "xmma", "attention", "lean_reduction", "gemv", "cutlass")


def attention_kernels(names):
    """The kernel names that tell the backend (elementwise ones out)."""
    return [n for n in names if any(w in n for w in KERNEL_WORDS)
            and "elementwise_kernel" not in n]


def dispatch_case(name, c):
    """The default dispatch (nothing pinned) on case C in each mode."""
    is_mask = "kind" in c
    group = c["heads"] // c["kv_heads"]
    q, k, v, do = gen_inputs(c)
    dev = torch.device("cuda")
    q, k, v, do = (t.to(dev) for t in (q, k, v, do))
    mask = build_mask(c)[0].to(dev) if is_mask else None
    row = {"case": name, "dtype": c["dt"],
           "launch_shape": {"batch": c["batch"], "heads": c["heads"],
                            "kv_heads": c["kv_heads"], "nq": c["nq"],
                            "nk": c["nk"], "d": c["d"]},
           "causal": c["causal"], "enable_gqa": group > 1,
           "attn_mask": c.get("kind")}
    for mode, grad, det in DISPATCH_MODES:
        torch.use_deterministic_algorithms(det)
        try:
            r = sdpa_call(None, q, k, v, do, mask, c["causal"], group > 1,
                          grad, choice=True, scale=c.get("scale"))
        finally:
            torch.use_deterministic_algorithms(False)
        e = {"deterministic": det, "requires_grad": grad,
             "fused_sdp_choice": r.get("fused_sdp_choice")}
        if r["error"] is not None:
            e["ran"] = False
            e["error"] = r["error"]
        else:
            e["ran"] = True
            e["backend"] = dump_sdpa.backend_of_kernels(r["forward_kernels"])
            e["forward_kernels"] = attention_kernels(r["forward_kernels"])
            if grad:
                e["backward_ran"] = r["backward_error"] is None
                if r["backward_error"] is not None:
                    e["backward_error"] = r["backward_error"]
                else:
                    e["backward_backend"] = dump_sdpa.backend_of_kernels(
                        r["backward_kernels"])
                    e["backward_kernels"] = attention_kernels(
                        r["backward_kernels"])
                if r.get("backward_warnings"):
                    e["backward_warnings"] = r["backward_warnings"]
        if r["warnings"]:
            e["warnings"] = r["warnings"]
        if r["stderr"]:
            e["stderr"] = r["stderr"]
        row[mode] = e
        print("  %s: %s %s%s" % (
            mode, e.get("fused_sdp_choice"), e.get("backend", e.get("error")),
            (" bwd " + str(e.get("backward_backend",
                                 e.get("backward_error"))))
            if grad else ""), flush=True)
    return row


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    outdir, only = args[0], set(args[1:])
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    ver = versions()
    print(json.dumps(ver), flush=True)
    cases = [(n, c) for n, c in GQA_CASES + MASK_CASES
             if not only or n in only]
    unknown = only - {n for n, _ in GQA_CASES + MASK_CASES}
    if unknown:
        sys.exit("sdpa_gqa_mask.py: unknown case(s): " +
                 " ".join(sorted(unknown)))
    summary = {}
    for name, c in cases:
        print(name, flush=True)
        try:
            summary[name] = run_case(name, c, outdir, ver)
        except Exception as e:
            traceback.print_exc()
            summary[name] = {"error": one_line(e)}
        print("  %.1f s" % (time.time() - t0), flush=True)
    rows = []
    for name, c in cases:
        print("dispatch " + name, flush=True)
        try:
            rows.append(dispatch_case(name, c))
        except Exception as e:
            traceback.print_exc()
            rows.append({"case": name, "script_error": one_line(e)})
    disp = dict(ver)
    disp["what"] = ("PyTorch's default SDPA (no backend pinned) per case: "
                    "torch._fused_sdp_choice and the backend the profiler's "
                    "kernel names show, for inference (no grad) and "
                    "training (forward and backward), with deterministic "
                    "algorithms off and on; inputs as in the case's file")
    disp["cases"] = rows
    disp["date"] = datetime.datetime.now(datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")
    os.makedirs(os.path.join(outdir, "mask"), exist_ok=True)
    with open(os.path.join(outdir, "mask", "dispatch.json"), "w") as f:
        json.dump(jsonable(disp), f, indent=1, allow_nan=False)
        f.write("\n")
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(jsonable(summary), f, indent=1, allow_nan=False)
        f.write("\n")
    print("done in %.1f s" % (time.time() - t0), flush=True)


if __name__ == "__main__":
    main()

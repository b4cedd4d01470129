#!/usr/bin/env python3
"""dump_sdpa.py -- PyTorch scaled-dot-product attention on the GPU, dumped.

usage: dump_sdpa.py --out FILE.safetensors
                    [--backend flash|cudnn|efficient|math|default]
                    [--batch B] [--heads H] [--nq NQ] [--nk NK] [--d D]
                    [--dtype bf16|fp16] [--seed N] [--causal] [--no-backward]
                    [--gen normal|repeated-max|sink|mirror] [--repeat K]
                    [--mirror-block N] [--mirror-stride G]
                    [--mirror-big X] [--mirror-small X]
                    [--v-mean X] [--v-std X] [--nondeterministic]
                    [--backward-runs N] [--nondet-runs N]
                    [--inputs-gen SEED]

Generates BF16 (or FP16) Q, K, V [B, H, N, d] and dO from a seeded CPU
generator (N(0, 1), rounded by PyTorch's CPU conversion; repeated-max: per
head a direction u of norm 4, queries 4u + N(0, 0.1), the keys N(0, 1/16)
except K of them (spread over the sequence) equal to u, so those K scores
are exactly equal and by far the largest of each row; sink: the same with one key; V ~ N(v-mean, v-std); mirror: the inputs
of normal, then Q's second half of the head dimension zeroed, so that the
scores see only the first half of K; K in blocks of --mirror-block keys
(the backward's KV blocks): block n + G (G = --mirror-stride) copies
block n (itself no copy) with its second half negated and V copied, so that their dS are
equal and their dQ contributions in the second half cancel exactly; that
half scaled by --mirror-big in the mirrored blocks and by --mirror-small
in the others: the dQ there is the small blocks' contribution alone when
the mirrored pairs are added first, and is lost to rounding when a large
one is added before it), runs the forward
with the backend pinned (FLASH_ATTENTION by default: PyTorch 2.11 on an
H200 would pick cuDNN), and the backward with deterministic algorithms on
(--nondeterministic: off, the flash backward's dQ then one buffer that
every KV block's thread block adds into with atomicAdd).
Writes q, k, v, do, o, lse (FP32 [B, H, NQ], natural log), dq, dk, dv to
FILE (safetensors; BF16/FP16 tensors as such) and FILE's name with .json:
GPU, driver, CUDA, torch and cuDNN versions, the backend, the dtype, the
launch shape, the CUDA kernels the profiler saw with their grid and block
dimensions, the shapes, the seed and the date.  "splits" is the number of
KV splits of the flash forward read from the profiler (the split-KV
kernel's grid.y; 1 for the one-pass kernel), "splits_predicted" the
count FA2's heuristic gives for the launch shape (num_splits_heuristic
with 2 x 132 SMs, 64-row query blocks and 256/128/64-key blocks for
d <= 64 / 128 / larger).  With the backward, "backward_launches" lists
its kernels with their grids; "dq_buffers" is the number of dQ
accumulation buffers its convert_dQ kernel adds up: in deterministic
mode the grid.x of flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel (each
thread block walks the KV blocks x, x + grid.x, ... into buffer x),
otherwise 1; "dq_buffers_predicted" is ceil(SMs / (B H)) (the launch
template's rule) in deterministic mode, else 1.  The backward runs
--backward-runs times (default 2) on the same inputs; "backward_repro"
records, per gradient, the number of distinct bit patterns among the
runs and the most elements of one run that differ from the first's;
with --nondeterministic it also records how many dQ elements of the
first run differ from the deterministic backward's on the same inputs.

With --inputs-gen SEED, Q, K, V and dO come from fixgen.py (the
generator splitmix64-ih12 that analysis/fixgen.h reproduces bit for bit:
streams 0 to 3 of SEED, mean 0 and std 1, V --v-mean and --v-std, which
must then be dyadic with at most 24 significant bits; --gen sink and
repeated-max through the u transform, --gen mirror through the mirror
transform, as fixgen_inputs describes) instead of torch.randn; the dump
leaves them out and
the manifest's "inputs_gen" describes them (generator, seed, and per
tensor its stream, dtype, whole shape, mean, std and the hash of the
bits the GPU computed on, read back from the device after the run), so
that bf16emu diff regenerates them.  dO is described only when the
backward ran.

The flash forward is called through aten._scaled_dot_product_flash_attention
(the op SDPA dispatches to for that backend), because it also returns the
log-sum-exp; the cuDNN backend through
aten._scaled_dot_product_cudnn_attention, the memory-efficient backend
through aten._scaled_dot_product_efficient_attention with
compute_log_sumexp (its LSE is padded to a multiple of 32 rows; the
dump keeps the first NQ); the math backend has no LSE.  "default" pins
nothing: SDPA picks (deterministic algorithms off, as a user would run
it, since they rule cuDNN out), and the manifest records
torch._fused_sdp_choice and the backend the kernels show
("backend_seen", from the kernel names).

With --nondet-runs N (N >= 2), the backward is run again N times with
deterministic algorithms off (the efficient backend then splits the keys
over several thread blocks and adds their dQ tiles under a lock in
arrival order); the first of those runs is kept as nd.dq, nd.dk, nd.dv
and the manifest's "nondeterministic" records its launches (the
efficient backward's grid.x is num_splits_key), per gradient the number
of elements bit-equal to the deterministic gradient, and the number of
distinct bit patterns over the N runs.  "backward_launches" and
"deterministic_repeat_equal" (the deterministic backward run a second
time, bit-equal in every gradient) are recorded for every backward.

Shapes with B*H*ceil(NQ/64) >= 212 (or NK <= 128 at d = 64) keep the FA2
kernel on one KV split on an H200.
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixgen  # noqa: E402


def chrome_trace(prof):
    """The profiler session PROF's Chrome trace, as parsed JSON (through a
    temporary file, removed afterwards)."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


def kernels_seen(fn, launches=None):
    """Names of the CUDA kernels FN launches; with a list LAUNCHES, also
    appends {name, grid, block} per distinct launch (from the profiler's
    trace)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events()
                    if e.device_type == torch.autograd.DeviceType.CUDA})
    if launches is not None:
        trace = chrome_trace(prof)
        seen = set()
        for ev in trace.get("traceEvents", []):
            if str(ev.get("cat", "")).lower() != "kernel":
                continue
            args = ev.get("args", {})
            key = (ev.get("name"), str(args.get("grid")),
                   str(args.get("block")))
            if key in seen:
                continue
            seen.add(key)
            launches.append({"name": ev.get("name"),
                             "grid": args.get("grid"),
                             "block": args.get("block")})
    return names


def backend_of_kernels(names):
    """The SDPA backend that the CUDA kernel NAMES belong to: cudnn,
    flash, efficient or math (matrix products and a softmax); None if
    none of them."""
    text = " ".join(names)
    if "cudnn" in text:
        return "cudnn"
    if "flash_fwd" in text or "pytorch_flash" in text:
        return "flash"
    if "fmha_cutlass" in text or "attention_kernel" in text:
        return "efficient"
    if "softmax" in text and ("gemm" in text or "nvjet" in text
                              or "xmma" in text or "cutlass" in text):
        return "math"
    return None


CHOICE_NAMES = {-1: "error", 0: "math", 1: "flash", 2: "efficient",
                3: "cudnn", 4: "overrideable"}


def splits_heuristic(batch, heads, nq, nk, d, num_sms=264, max_splits=128):
    """FA2's num_splits_heuristic for a launch shape (flash_api.cpp; the
    SM count passed is twice the H200's 132)."""
    block_n = 256 if d <= 64 else (128 if d <= 128 else 64)
    n_blocks = (nk + block_n - 1) // block_n
    bhm = batch * heads * ((nq + 63) // 64)
    if bhm >= 0.8 * num_sms:
        return 1
    max_splits = min(max_splits, num_sms, n_blocks)

    def cdiv(a, b):
        return (a + b - 1) // b

    def eligible(s):
        return s == 1 or cdiv(n_blocks, s) != cdiv(n_blocks, s - 1)

    eff = []
    for s in range(1, max_splits + 1):
        if not eligible(s):
            eff.append(0.0)
        else:
            waves = float(bhm * s) / num_sms
            eff.append(waves / math.ceil(waves))
    best = max(eff) if eff else 0.0
    for s in range(1, max_splits + 1):
        if eligible(s) and eff[s - 1] >= 0.85 * best:
            return s
    return 1


def splits_seen(launches):
    """The KV split count of the flash forward among LAUNCHES: grid.y of
    the split-KV kernel, 1 for the one-pass kernel, None if neither."""
    for ln in launches:
        if "flash_fwd_splitkv_kernel" in (ln["name"] or "") and ln["grid"]:
            return int(ln["grid"][1])
    for ln in launches:
        if "flash_fwd_kernel" in (ln["name"] or ""):
            return 1
    return None


def bits_equal(a, b):
    """Whether tensors A and B hold the same bits everywhere."""
    return int(count_equal(a, b)) == a.numel()


def count_equal(a, b):
    """The number of elements of A and B with the same bits."""
    ia = a.detach().contiguous().view(-1).view(torch.int16 if a.element_size()
                                              == 2 else torch.int32)
    ib = b.detach().contiguous().view(-1).view(ia.dtype)
    return int((ia == ib).sum().item())


def nondet_backward(backward, leaves, det_grads, runs, restore):
    """Runs BACKWARD RUNS times with deterministic algorithms off (then
    back to RESTORE): the first run's gradients (CPU), its launches, per
    gradient the elements bit-equal to DET_GRADS and the number of
    distinct bit patterns over the runs."""
    torch.use_deterministic_algorithms(False)
    launches = []
    try:
        kernels = kernels_seen(backward, launches)
        first = None
        patterns = [[], [], []]
        for _ in range(runs):
            backward()
            now = [t.grad.detach().clone() for t in leaves]
            if first is None:
                first = now
            for x, g in enumerate(now):
                if not any(bits_equal(g, p) for p in patterns[x]):
                    patterns[x].append(g)
    finally:
        torch.use_deterministic_algorithms(restore)
    splits = None
    for ln in launches:
        if "fmha_cutlassB" in (ln["name"] or "") and ln["grid"]:
            splits = int(ln["grid"][0])
    names = ("dq", "dk", "dv")
    return {
        "runs": runs,
        "backward_kernels": kernels,
        "backward_launches": launches,
        "num_splits_key": splits,
        "equal_to_deterministic": {n: count_equal(g, d) for n, g, d in
                                   zip(names, first, det_grads)},
        "elements": {n: g.numel() for n, g in zip(names, first)},
        "distinct_patterns": {n: len(p) for n, p in zip(names, patterns)},
        "grads": [g.cpu() for g in first],
    }


def dq_buffers_seen(launches, deterministic):
    """The dQ accumulation buffers of the flash backward among LAUNCHES:
    the grid.x of its dq_dk_dv kernel in deterministic mode, 1 otherwise;
    None without that kernel."""
    for ln in launches:
        if "flash_bwd_dq_dk_dv" in (ln["name"] or "") and ln["grid"]:
            return int(ln["grid"][0]) if deterministic else 1
    return None


def dq_buffers_rule(batch, heads, deterministic, num_sms=132):
    """ceil(SMs / (B H)) in deterministic mode (run_flash_bwd_seqk_parallel
    of flash_bwd_launch_template.h), else 1."""
    if not deterministic:
        return 1
    return (num_sms + batch * heads - 1) // (batch * heads)


def gen_inputs(batch, heads, nq, nk, d, dt, seed, gen_name="normal",
               repeat=4, v_mean=0.0, v_std=1.0, mirror=(128, 2, 256.0,
                                                        2.0 ** -12)):
    """Q, K, V, dO as CPU tensors of dtype DT from a seeded CPU generator
    (the module docstring describes the generators)."""
    gen = torch.Generator().manual_seed(seed)

    def draw(n, mean=0.0, std=1.0):
        x = torch.randn(batch, heads, n, d, generator=gen)
        return (x * std + mean).to(dt)

    q, k = draw(nq), draw(nk)
    v = draw(nk, v_mean, v_std)
    do = draw(nq)
    if gen_name == "mirror":
        block, stride, big, small = mirror
        h = d // 2
        q[..., h:] = 0
        k = k.float()
        nblk = (nk + block - 1) // block
        paired = set()
        for n in range(nblk - stride):
            lo, hi = n * block, min(nk, (n + 1) * block)
            m = (n + stride) * block
            if n in paired or hi - lo != min(nk, m + block) - m:
                continue
            paired.update((n, n + stride))
            k[:, :, m:m + hi - lo, :] = k[:, :, lo:hi, :]
            k[:, :, m:m + hi - lo, h:] *= -1
            v[:, :, m:m + hi - lo, :] = v[:, :, lo:hi, :]
        for n in range(nblk):
            lo, hi = n * block, min(nk, (n + 1) * block)
            k[:, :, lo:hi, h:] *= big if n in paired else small
        k = k.to(dt)
    elif gen_name != "normal":
        u = torch.randn(batch, heads, 1, d, generator=gen)
        u = (u / u.norm(dim=-1, keepdim=True) * 4.0).to(dt)
        k = (k.float() * 0.25).to(dt)
        noise = torch.randn(batch, heads, nq, d, generator=gen)
        q = (4.0 * u.float() + 0.1 * noise).to(dt)
        nrep = repeat if gen_name == "repeated-max" else 1
        step = max(1, nk // nrep)
        for j in range(nrep):
            k[:, :, (j * step + step // 2) % nk, :] = u[:, :, 0, :]
    return q, k, v, do


def fixgen_tensor(seed, name, shape, dt, mean=0.0, std=1.0):
    """Input NAME (q, k, v, do) of shape SHAPE and dtype DT from fixgen.py
    (a CPU tensor), with its inputs_gen entry (hash left out)."""
    fmt = {torch.bfloat16: "bfloat16", torch.float16: "float16"}[dt]
    n = 1
    for x in shape:
        n *= x
    bits = fixgen.gen(seed, fixgen.STREAMS[name], mean, std, fmt, 0, n)
    try:
        import numpy as np
        t = torch.from_numpy(np.asarray(bits, dtype=np.uint16)
                             .view(np.int16).copy())
    except ImportError:
        t = torch.tensor([b - 65536 if b >= 32768 else b for b in bits],
                         dtype=torch.int16)
    t = t.view(dt).reshape(shape)
    entry = {"stream": fixgen.STREAMS[name], "dtype": fmt,
             "shape": list(shape), "mean": float(mean), "std": float(std)}
    return t, entry


def bits_hash(t):
    """fixgen's hash of tensor T's 16-bit patterns (C order)."""
    b = t.detach().contiguous().cpu().view(torch.int16).reshape(-1)
    try:
        import numpy as np
        return fixgen.hash_bits(b.numpy().view(np.uint16))
    except ImportError:
        return fixgen.hash_bits([x & 0xFFFF for x in b.tolist()])


U_STREAM = 4       # fixgen stream of the sink direction u
U_SCALE = 4.0      # Q's mean is U_SCALE u
Q_NOISE_STD = 0.09375  # 3/32: Q's spread about that mean
K_STD = 0.25       # the other keys
SINK_V_STD = 0.40625  # 13/32, the dyadic stand-in for 0.4


def u_std_for(d):
    """u's std: 4 / sqrt(d) to two significant bits (|u| about 4)."""
    x = 4.0 / math.sqrt(d)
    e = math.floor(math.log2(x)) - 1
    return round(x / 2.0 ** e) * 2.0 ** e


def sink_rows(nk, repeat):
    """The key rows that hold u: j step + step // 2 (mod Nk), j < REPEAT,
    step = max(1, Nk // REPEAT), as gen_inputs places them."""
    step = max(1, nk // repeat)
    return sorted({(j * step + step // 2) % nk for j in range(repeat)})


def fixgen_inputs(batch, heads, nq, nk, d, dt, seed, v_mean=0.0,
                  v_std=1.0, gen="normal", repeat=1,
                  mirror=(128, 2, 256.0, 2.0 ** -12)):
    """Q, K, V, dO [B, H, N, d] from fixgen.py (CPU tensors) and their
    inputs_gen entries (hashes left out: inputs_gen_of adds them).  V has
    mean V_MEAN and std V_STD (dyadic, at most 24 significant bits;
    ValueError otherwise).  GEN "normal": N(0, 1) Q, K, dO.  GEN "sink"
    or "repeated-max" (REPEAT rows): the u transform of analysis/fixgen.h,
    the generated counterpart of gen_inputs's: u [B, H, 1, d] of stream
    U_STREAM with std u_std_for(d); Q = U_SCALE u + N(0, Q_NOISE_STD)
    rounded once; K N(0, K_STD) with the rows sink_rows(Nk, REPEAT)
    (one row for "sink") replaced by u.  GEN "mirror" (MIRROR: block,
    stride, big, small as gen_inputs takes them): the mirror transform of
    analysis/fixgen.h on the normal inputs, the generated counterpart of
    gen_inputs's, with half d // 2: Q's second half +0, K's and V's
    target blocks copies of their sources (K's second half negated), K's
    second half times big in paired blocks and small in the others."""
    fixgen.dyadic(v_mean)
    fixgen.dyadic(v_std)
    made, entries = {}, {}
    special = gen in ("sink", "repeated-max")
    if gen not in ("normal", "mirror") and not special:
        raise ValueError("gen %r: not generated" % gen)
    for name, n, mean, std in (("q", nq, 0.0,
                                Q_NOISE_STD if special else 1.0),
                               ("k", nk, 0.0, K_STD if special else 1.0),
                               ("v", nk, v_mean, v_std),
                               ("do", nq, 0.0, 1.0)):
        made[name], entries[name] = fixgen_tensor(
            seed, name, (batch, heads, n, d), dt, mean, std)
    if special:
        fmt = entries["q"]["dtype"]
        us = u_std_for(d)
        u = fixgen.gen(seed, U_STREAM, 0.0, us, fmt, 0, batch * heads * d)
        u = [int(x) for x in u]
        qb = fixgen.gen_u_scaled(seed, fixgen.STREAMS["q"], Q_NOISE_STD, fmt,
                                 u, U_SCALE, batch * heads, nq, d)
        made["q"] = bits_tensor(qb, dt, (batch, heads, nq, d))
        entries["q"]["u"] = {"stream": U_STREAM, "std": us,
                             "scale": U_SCALE}
        ut = bits_tensor(u, dt, (batch, heads, d))
        rows = sink_rows(nk, repeat if gen == "repeated-max" else 1)
        for r in rows:
            made["k"][:, :, r, :] = ut
        entries["k"]["u"] = {"stream": U_STREAM, "std": us, "rows": rows}
    if gen == "mirror":
        block, stride, big, small = mirror
        fixgen.dyadic(big)
        fixgen.dyadic(small)
        fmt = entries["q"]["dtype"]
        specs = {"q": {"half": d // 2},
                 "k": {"block": block, "stride": stride, "half": d // 2,
                       "big": float(big), "small": float(small)},
                 "v": {"block": block, "stride": stride}}
        for name, n in (("q", nq), ("k", nk), ("v", nk)):
            sp = specs[name]
            bits = tensor_bits(made[name])
            out = fixgen.mirror_bits(bits, name, fmt, batch * heads, n, d,
                                     sp.get("block", 1), sp.get("stride", 1),
                                     sp.get("half", 0), sp.get("big", 1.0),
                                     sp.get("small", 1.0))
            made[name] = bits_tensor(out, dt, (batch, heads, n, d))
            entries[name]["mirror"] = sp
    return made["q"], made["k"], made["v"], made["do"], entries


def tensor_bits(t):
    """The 16-bit patterns of the CPU tensor T (C order), a list of
    ints."""
    return [x & 0xFFFF for x in t.contiguous().view(torch.int16)
            .reshape(-1).tolist()]


def bits_tensor(bits, dt, shape):
    """A CPU tensor of DT and SHAPE with the 16-bit patterns BITS."""
    t = torch.tensor([b - 65536 if b >= 32768 else b for b in bits],
                     dtype=torch.int16)
    return t.view(dt).reshape(shape)


def case_args(argv, doc):
    """The case scripts' command line: [--inputs-gen] OUT [CASE...].
    Returns (inputs_gen, out, the set of cases asked for; empty: all);
    exits with DOC when OUT is missing."""
    args = list(argv)
    inputs_gen = args[:1] == ["--inputs-gen"]
    if inputs_gen:
        args = args[1:]
    if not args:
        sys.exit(doc)
    return inputs_gen, args[0], set(args[1:])


def inputs_gen_of(seed, entries, on_gpu, made):
    """The manifest's inputs_gen for the tensors of ON_GPU (name: the
    tensor the GPU computed on): each hash is that of the bits read back
    from the device, which must equal MADE[name]'s (the generated tensor;
    RuntimeError otherwise).  Inputs not in ON_GPU are left out."""
    tensors = {}
    for name, t in on_gpu.items():
        h = bits_hash(t)
        if h != bits_hash(made[name]):
            raise RuntimeError("%s on the GPU differs from the generated "
                               "tensor" % name)
        tensors[name] = dict(entries[name], hash="0x%016x" % h)
    return {"generator": fixgen.NAME, "seed": seed, "tensors": tensors}


def main(argv=None):
    """Runs one dump; ARGV as on the command line (None: sys.argv)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="flash",
                    choices=["flash", "cudnn", "efficient", "math",
                             "default"])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--nq", type=int, default=1024)
    ap.add_argument("--nk", type=int, default=None)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--no-backward", action="store_true")
    ap.add_argument("--gen", default="normal",
                    choices=["normal", "repeated-max", "sink", "mirror"])
    ap.add_argument("--mirror-block", type=int, default=128)
    ap.add_argument("--mirror-stride", type=int, default=2)
    ap.add_argument("--mirror-big", type=float, default=256.0)
    ap.add_argument("--mirror-small", type=float, default=2.0 ** -12)
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--v-mean", type=float, default=0.0)
    ap.add_argument("--v-std", type=float, default=1.0)
    ap.add_argument("--nondet-runs", type=int, default=0)
    ap.add_argument("--nondeterministic", action="store_true")
    ap.add_argument("--backward-runs", type=int, default=2)
    ap.add_argument("--inputs-gen", type=int, default=None, metavar="SEED")
    a = ap.parse_args(argv)
    nk = a.nk if a.nk is not None else a.nq
    if not a.out.endswith(".safetensors"):
        sys.exit("dump_sdpa.py: --out: expected a .safetensors name")

    # cuDNN's backward has no deterministic mode, and deterministic
    # algorithms rule cuDNN out of the default choice
    deterministic = (a.backend not in ("cudnn", "default")
                     and not a.nondeterministic)
    torch.use_deterministic_algorithms(deterministic)
    dt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    gen_entries = None
    if a.inputs_gen is not None:
        if not 0 <= a.inputs_gen <= 2 ** 53:
            sys.exit("dump_sdpa.py: --inputs-gen: expected 0 .. 2^53")
        try:
            fixgen.dyadic(a.v_mean)
            fixgen.dyadic(a.v_std)
        except ValueError as e:
            sys.exit("dump_sdpa.py: --v-mean/--v-std: %s" % e)
        try:
            q, k, v, do, gen_entries = fixgen_inputs(
                a.batch, a.heads, a.nq, nk, a.d, dt, a.inputs_gen, a.v_mean,
                a.v_std, a.gen, a.repeat,
                (a.mirror_block, a.mirror_stride, a.mirror_big,
                 a.mirror_small))
        except ValueError as e:
            sys.exit("dump_sdpa.py: --inputs-gen: %s" % e)
    else:
        q, k, v, do = gen_inputs(a.batch, a.heads, a.nq, nk, a.d, dt, a.seed,
                                 a.gen, a.repeat, a.v_mean, a.v_std,
                                 (a.mirror_block, a.mirror_stride,
                                  a.mirror_big, a.mirror_small))
    dev = torch.device("cuda")
    qg, kg, vg, dog = (t.to(dev).requires_grad_(t is not do)
                       for t in (q, k, v, do))
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"flash": SDPBackend.FLASH_ATTENTION,
               "cudnn": SDPBackend.CUDNN_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION,
               "math": SDPBackend.MATH,
               "default": None}[a.backend]
    import contextlib

    def pinned():
        if backend is None:
            return contextlib.nullcontext()
        return sdpa_kernel(backend)

    fwd_full = []
    # SDPA's own causal mask is top-left aligned and has no flash kernel
    # for NQ != NK; the flash op takes the kernel's bottom-right mask, so
    # that backward goes through the flash backward op directly.
    aten_bwd = a.backend == "flash" and a.causal and a.nq != nk

    def forward():
        if a.backend == "flash":
            r = torch.ops.aten._scaled_dot_product_flash_attention(
                qg, kg, vg, 0.0, a.causal, False)
            fwd_full[:] = list(r)
            return r[0], r[1]
        if a.backend == "cudnn":
            r = torch.ops.aten._scaled_dot_product_cudnn_attention(
                qg, kg, vg, None, True, 0.0, a.causal, False)
            return r[0], r[1]
        if a.backend == "efficient":
            r = torch.ops.aten._scaled_dot_product_efficient_attention(
                qg, kg, vg, None, True, 0.0, a.causal)
            return r[0], r[1][:, :, :a.nq]
        with pinned():
            o = torch.nn.functional.scaled_dot_product_attention(
                qg, kg, vg, is_causal=a.causal)
        return o, None

    fwd_launches = []
    fwd_kernels = kernels_seen(forward, fwd_launches)
    choice = CHOICE_NAMES.get(int(torch._fused_sdp_choice(
        qg, kg, vg, None, 0.0, a.causal)), "unknown")
    bwd_launches = []
    repro = None
    with pinned():
        o, lse = forward()
        bwd_kernels = []
        bwd_launches = []
        grads = None
        det_repeat = None
        nondet = None
        if not a.no_backward:
            def backward():
                for t in (qg, kg, vg):
                    t.grad = None
                o2 = torch.nn.functional.scaled_dot_product_attention(
                    qg, kg, vg, is_causal=a.causal)
                o2.backward(dog)

            def backward_op():
                r = fwd_full
                with torch.no_grad():
                    return torch.ops.aten._scaled_dot_product_flash_attention_backward(
                        dog, qg, kg, vg, r[0], r[1], r[2], r[3], r[4], r[5],
                        0.0, a.causal, r[6], r[7])
            def run_bwd():
                if aten_bwd:
                    return tuple(g.detach().clone()
                                 for g in backward_op()[:3])
                backward()
                return tuple(g.detach().clone()
                             for g in (qg.grad, kg.grad, vg.grad))
            bwd_kernels = kernels_seen(
                backward_op if aten_bwd else backward, bwd_launches)
            runs = [run_bwd() for _ in range(max(1, a.backward_runs))]
            torch.cuda.synchronize()
            grads = runs[0]
            repro = {"runs": len(runs)}
            for gi, gname in enumerate(("dq", "dk", "dv")):
                first = runs[0][gi].view(torch.int16)
                views = [r[gi].view(torch.int16) for r in runs]
                repro[gname + "_distinct"] = sum(
                    1 for i, x in enumerate(views)
                    if not any(torch.equal(x, y) for y in views[:i]))
                repro[gname + "_differ_max"] = max(
                    int((r[gi].view(torch.int16) != first).sum())
                    for r in runs)
            if not deterministic:
                torch.use_deterministic_algorithms(True)
                det = run_bwd()
                torch.cuda.synchronize()
                torch.use_deterministic_algorithms(False)
                repro["dq_differ_vs_deterministic"] = int(
                    (det[0].view(torch.int16)
                     != runs[0][0].view(torch.int16)).sum())
            if len(runs) >= 2 and deterministic:
                det_repeat = repro["dq_distinct"] == 1 and \
                    repro["dk_distinct"] == 1 and repro["dv_distinct"] == 1
            if a.nondet_runs >= 2 and not aten_bwd:
                nondet = nondet_backward(backward, (qg, kg, vg), grads,
                                         a.nondet_runs, deterministic)
    torch.cuda.synchronize()

    inputs_gen = None
    if gen_entries is not None:
        # the hash of the bits the GPU computed on, read back from it
        for name, t in (("q", qg), ("k", kg), ("v", vg), ("do", dog)):
            gen_entries[name]["hash"] = "0x%016x" % bits_hash(t)
            want = bits_hash({"q": q, "k": k, "v": v, "do": do}[name])
            if "0x%016x" % want != gen_entries[name]["hash"]:
                sys.exit("dump_sdpa.py: %s on the GPU differs from the "
                         "generated tensor" % name)
        if a.no_backward:
            del gen_entries["do"]
        inputs_gen = {"generator": fixgen.NAME, "seed": a.inputs_gen,
                      "tensors": gen_entries}
        out = {"o": o.detach().cpu()}
    else:
        out = {"q": q, "k": k, "v": v, "do": do, "o": o.detach().cpu()}
    if lse is not None:
        out["lse"] = lse.detach().float().cpu()
    if grads is not None:
        out["dq"], out["dk"], out["dv"] = (g.detach().cpu() for g in grads)
    if nondet is not None:
        for n, g in zip(("dq", "dk", "dv"), nondet.pop("grads")):
            out["nd." + n] = g
    out = {n: t.contiguous() for n, t in out.items()}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        smi = "unknown"
    manifest = {
        "producer": "experiments/gpu/dump_sdpa.py",
        "gpu": torch.cuda.get_device_name(0),
        "cc": "%d.%d" % torch.cuda.get_device_capability(0),
        "driver": smi,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "backend": a.backend,
        "fused_sdp_choice": choice,
        "backend_seen": backend_of_kernels(fwd_kernels),
        "dtype": {"bf16": "bfloat16", "fp16": "float16"}[a.dtype],
        "launch_shape": {"batch": a.batch, "heads": a.heads, "nq": a.nq,
                         "nk": nk, "d": a.d},
        "forward_kernels": fwd_kernels,
        "forward_launches": fwd_launches,
        "splits": splits_seen(fwd_launches),
        "splits_predicted": splits_heuristic(a.batch, a.heads, a.nq, nk,
                                             a.d),
        "backward_kernels": bwd_kernels,
        "backward_launches": bwd_launches,
        "deterministic_repeat_equal": det_repeat,
        "nondeterministic": nondet,
        "deterministic": deterministic,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "dq_buffers": dq_buffers_seen(bwd_launches, deterministic),
        "dq_buffers_predicted": None if a.no_backward else
        dq_buffers_rule(a.batch, a.heads, deterministic,
                        torch.cuda.get_device_properties(0)
                        .multi_processor_count),
        "backward_repro": repro,
        "shape": {"batch": a.batch, "heads": a.heads, "nq": a.nq, "nk": nk,
                  "d": a.d},
        "causal": a.causal,
        "causal_alignment": ("bottom-right (key j masked for query i when "
                             "j > i + nk - nq: the flash kernel's)"
                             if a.backend == "flash" else
                             "top-left (key j masked for query i when "
                             "j > i: SDPA's is_causal)")
        if a.causal else None,
        "backward_op": None if a.no_backward else
        ("aten._scaled_dot_product_flash_attention_backward" if aten_bwd
         else "scaled_dot_product_attention(...).backward"),
        "scale": "1/sqrt(d) (PyTorch default)",
        "seed": a.seed if inputs_gen is None else a.inputs_gen,
        "inputs": "torch.randn on a CPU generator, then .to(%s)"
        % {"bf16": "bfloat16", "fp16": "float16"}[a.dtype]
        if inputs_gen is None else
        "experiments/gpu/fixgen.py (inputs_gen; not stored)",
        "gen": a.gen, "repeat": a.repeat if a.gen == "repeated-max" else
        (1 if a.gen == "sink" else 0), "v_mean": a.v_mean, "v_std": a.v_std,
        "mirror": {"block": a.mirror_block, "stride": a.mirror_stride,
                   "big": a.mirror_big, "small": a.mirror_small}
        if a.gen == "mirror" else None,
        "single_split": splits_seen(fwd_launches) == 1,
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tensors": {n: [str(t.dtype).replace("torch.", ""), list(t.shape)]
                    for n, t in out.items()},
    }
    if inputs_gen is not None:
        manifest["inputs_gen"] = inputs_gen
    save_file(out, a.out, metadata={"manifest": json.dumps(manifest)})
    with open(a.out[:-len(".safetensors")] + ".json", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(json.dumps({"forward_kernels": fwd_kernels,
                      "backward_kernels": bwd_kernels}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""flex_dump.py -- FlexAttention calls under torch.compile, with the
Triton kernels that ran them.

usage: flex_dump.py OUTDIR [--budget SECONDS] [NAME ...]

For each case of CASES: Q, K, V, dO drawn as sdpa_gqa_mask.py draws them
(torch.randn on a CPU generator seeded with the case's seed, in that
order, then converted to the case's dtype), then
torch.compile(flex_attention) called as a user calls it, with the case's
block mask (create_block_mask of its mask_mod, BLOCK_SIZE 128 unless the
case says otherwise), score_mod, scale, enable_gqa and kernel_options,
asking for the LSE; then O.backward(dO).

Recorded per case (OUTDIR/NAME.safetensors with the manifest as its
metadata "manifest", and NAME.json):
  - tensors q, k, v, do, "flex.o", "flex.lse" (as the call returned it),
    "flex.dq", "flex.dk", "flex.dv"; the block mask's kv_num_blocks,
    kv_indices, full_kv_num_blocks, full_kv_indices (and the q_* ones
    the backward reads) as "block_mask.NAME"; a document case's ids as
    "doc_ids";
  - "repeat": whether a second forward and backward gave the same bits;
  - "kernels": the CUDA kernels the profiler saw in the forward and in
    the backward, with grid and block;
  - "triton": for each Triton kernel the compile produced, its name and
    the constants of its configuration read from the generated source
    (BLOCK_M, BLOCK_N, num_warps, num_stages, ...);
  - the launch (batch, heads, kv_heads, nq, nk, d), the mask and score
    modification by name with their parameters, the scale.

The generated code of every compile (inductor's Python wrappers and
kernels, Triton's TTIR/TTGIR/PTX and metadata) is copied to
OUTDIR/code/NAME/, and the installed flex templates to
OUTDIR/templates/: they are the reading from which the kernel
descriptions are written.

OUTDIR/dot/: a tl.dot probe: D = A B + C for one 64 x K by K x 64 tile
in BF16 and FP16 with an FP32 accumulator (K = 16, 64), the way the
flex kernels call tl.dot, to be checked against the sm90 matrix-unit
model (bf16emu mma).
"""
import argparse
import glob
import json
import logging
import math
import os
import re
import shutil
import sys
import time

WORK = os.path.join(os.environ.get("TMPDIR", "/tmp"), "flex_dump_work")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(WORK, "inductor"))
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(WORK, "triton"))
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402
import sdpa_gqa_mask as sgm  # noqa: E402

PRODUCER = "experiments/gpu/flex_dump.py"


def case(kind, seed, heads=2, kv_heads=None, n=512, d=64, dt="bf16",
         scale=None, block=128, options=None, nq=None, **params):
    return dict(kind=kind, seed=seed, batch=1, heads=heads,
                kv_heads=kv_heads or heads, nq=nq or n, nk=n, d=d, dt=dt,
                scale=scale, block=block, options=options or {},
                params=params)


CASES = [
    ("flex_causal_d64", case("causal", 401)),
    ("flex_causal_d128", case("causal", 402, d=128)),
    ("flex_full_d64", case("full", 403)),
    ("flex_causal_d64_fp16", case("causal", 404, dt="fp16")),
    ("flex_window64", case("window", 405, window=64)),
    ("flex_window128", case("window", 406, window=128)),
    ("flex_window256_n1024", case("window", 407, n=1024, window=256)),
    ("flex_prefix128", case("prefix", 408, prefix=128)),
    ("flex_doc3", case("document", 409, docs=[100, 250, 162])),
    ("flex_doc8", case("document", 410, docs=[40, 90, 33, 77, 61, 120,
                                               50, 41])),
    ("flex_alibi", case("alibi", 411, heads=4)),
    ("flex_softcap30", case("softcap", 412, cap=30.0)),
    ("flex_softcap50_d128", case("softcap", 413, d=128, cap=50.0)),
    ("flex_gqa_g4", case("causal", 414, heads=8, kv_heads=2)),
    ("flex_mqa_fp16", case("causal", 415, heads=4, kv_heads=1, dt="fp16")),
    ("flex_causal_scale03", case("causal", 416, scale=0.3)),
    ("flex_causal_b64x64", case("causal", 417,
                                options={"BLOCK_M": 64, "BLOCK_N": 64})),
    ("flex_full_n300", case("full", 418, n=300)),
    ("flex_window128_fp16_d128", case("window", 419, d=128, dt="fp16",
                                      window=128)),
    ("flex_doc5_block64", case("document", 420, block=64,
                               docs=[128, 64, 192, 32, 96])),
    ("flex_alibi_fp16_d128", case("alibi", 421, heads=4, d=128, dt="fp16")),
    ("flex_decode_nq1", case("full", 422, heads=4, nq=1, n=1024)),
    # flex_decoding (fewer than 128 query rows): the split-KV kernel and
    # the two reductions, with block masks whose blocks fall in several
    # splits, grouped heads packed into one program (BLOCK_M 16 and 32),
    # and launches of 66, 132, 32 and 16 splits
    ("flex_dec_prefix_h4", case("prefix", 423, heads=4, nq=1, n=4096,
                                prefix=1000)),
    ("flex_dec_win_g4", case("decwin", 424, heads=8, kv_heads=2, nq=1,
                             n=2048, window=700)),
    ("flex_dec_win_nq8_g4_fp16_d128", case("decwin", 425, heads=8,
                                           kv_heads=2, nq=8, n=2048,
                                           d=128, dt="fp16", window=1500)),
    ("flex_dec_full_nq16_fp16", case("full", 426, heads=2, nq=16, n=1000,
                                     dt="fp16")),
    ("flex_dec_win_h16", case("decwin", 427, heads=16, nq=1, n=1024,
                              window=900)),
    ("flex_dec_win_h32_kv8_nq2", case("decwin", 428, heads=32, kv_heads=8,
                                      nq=2, n=2048, window=1800)),
    # rows whose keys one program holds: no block mask (program 0 takes
    # every key), and a window inside one program's tile; BLOCK_M 16, 32,
    # 128 and 256 (two warps side by side along the keys below 128 rows)
    ("flex_dec_full_g4", case("full", 429, heads=8, kv_heads=2, nq=1,
                              n=2048)),
    ("flex_dec_full_nq8_g4_fp16_d128", case("full", 430, heads=8,
                                            kv_heads=2, nq=8, n=1536, d=128,
                                            dt="fp16")),
    ("flex_dec_full_nq100", case("full", 431, heads=2, nq=100, n=700)),
    ("flex_dec_full_nq64_g4", case("full", 432, heads=8, kv_heads=2, nq=64,
                                   n=512)),
    ("flex_dec_win50_h4", case("decwin", 433, heads=4, nq=1, n=2048,
                               window=50)),
    # the reductions of other launches: 88 and 264 programs, 66 with 512
    # outputs, 132 with 2,048
    ("flex_dec_win_h3", case("decwin", 434, heads=3, nq=1, n=2048,
                             window=1500)),
    ("flex_dec_win_h1", case("decwin", 435, heads=1, nq=1, n=4096,
                             window=3000)),
    ("flex_dec_win_h8_kv4", case("decwin", 436, heads=8, kv_heads=4, nq=1,
                                 n=2048, window=1500)),
    ("flex_dec_win_h16_kv2", case("decwin", 437, heads=16, kv_heads=2,
                                  nq=1, n=2048, window=1500)),
]


def doc_ids(c):
    ids = []
    for i, n in enumerate(c["params"]["docs"]):
        ids += [i] * n
    assert len(ids) == c["nk"], "document lengths must add up to N"
    return torch.tensor(ids, dtype=torch.int32)


def mods(c, dev):
    """(mask_mod or None, score_mod or None, extra tensors) of case C."""
    p = c["params"]
    kind = c["kind"]

    def causal(b, h, q, kv):
        return q >= kv
    if kind == "full":
        return None, None, {}
    if kind == "causal":
        return causal, None, {}
    if kind == "window":
        w = p["window"]
        return (lambda b, h, q, kv: (q >= kv) & (q - kv < w)), None, {}
    if kind == "decwin":
        # a decode step's sliding window: query row q sits at position
        # q + (Nk - Nq) of the sequence
        w, off = p["window"], c["nk"] - c["nq"]
        return ((lambda b, h, q, kv: (kv <= q + off) & (q + off - kv < w)),
                None, {})
    if kind == "prefix":
        pl = p["prefix"]
        return (lambda b, h, q, kv: (kv < pl) | (q >= kv)), None, {}
    if kind == "document":
        ids = doc_ids(c)
        di = ids.to(dev)
        return ((lambda b, h, q, kv: (di[q] == di[kv]) & (q >= kv)), None,
                {"doc_ids": ids})
    if kind == "alibi":
        hh = c["heads"]
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / hh)
                               for i in range(hh)], dtype=torch.float32)
        sd = slopes.to(dev)

        def alibi(score, b, h, q, kv):
            return score + sd[h] * (kv - q)
        return causal, alibi, {"alibi_slopes": slopes}
    if kind == "softcap":
        cap = p["cap"]

        def softcap(score, b, h, q, kv):
            return cap * torch.tanh(score / cap)
        return causal, softcap, {}
    raise ValueError(kind)


def snapshot():
    """Path -> modification time of every file of the two caches."""
    files = {}
    for root in (os.environ["TORCHINDUCTOR_CACHE_DIR"],
                 os.environ["TRITON_CACHE_DIR"]):
        for p in glob.glob(os.path.join(root, "**", "*"), recursive=True):
            if os.path.isfile(p):
                files[p] = os.path.getmtime(p)
    return files


def written_since(before):
    """The cache files written since the snapshot BEFORE."""
    return {p for p, t in snapshot().items() if before.get(p) != t}


def same_bits(a, b):
    a, b = a.detach().contiguous(), b.detach().contiguous()
    return a.shape == b.shape and bool(torch.equal(a.view(torch.uint8),
                                                   b.view(torch.uint8)))


KEEP = (".py", ".ttir", ".ttgir", ".llir", ".ptx", ".json", ".source")
CONSTS = ("BLOCK_M", "BLOCK_N", "BLOCK_M1", "BLOCK_N1", "BLOCK_M2",
          "BLOCK_N2", "SPARSE_Q_BLOCK_SIZE", "SPARSE_KV_BLOCK_SIZE",
          "PRESCALE_QK", "ROWS_GUARANTEED_SAFE", "BLOCKS_ARE_CONTIGUOUS",
          "IS_DIVISIBLE", "SM_SCALE", "OUTPUT_LOGSUMEXP", "FLOAT32_PRECISION",
          "GQA_SHARED_HEADS", "HAS_FULL_BLOCKS", "QK_HEAD_DIM", "V_HEAD_DIM",
          "SAFE_HEAD_DIM", "USE_TMA", "WRITE_DQ", "SPLIT_KV", "num_warps",
          "num_stages")


def triton_configs(new_files):
    """Name and configuration constants of each generated Triton kernel."""
    out = []
    for p in sorted(new_files):
        if not p.endswith(".py"):
            continue
        try:
            text = open(p, errors="replace").read()
        except OSError:
            continue
        for m in re.finditer(r"def (triton_\w+)\(", text):
            body = text[m.start():m.start() + 20000]
            conf = {}
            for k in CONSTS:
                mm = re.search(r"\b%s\s*:\s*tl\.constexpr\s*=\s*([^\n]+)" % k,
                               body)
                if mm:
                    conf[k] = mm.group(1).strip()
            mm = re.search(r"triton_meta=(\{[^\n]*\})", text[max(0, m.start()
                                                               - 4000):
                                                         m.start()])
            entry = {"name": m.group(1), "file": os.path.basename(p),
                     "constants": conf}
            if mm:
                entry["meta"] = mm.group(1)[:2000]
            out.append(entry)
    for p in sorted(new_files):
        if p.endswith(".json") and "triton" in p:
            try:
                meta = json.load(open(p))
            except (OSError, ValueError):
                continue
            if isinstance(meta, dict) and "name" in meta:
                out.append({"compiled": meta.get("name"),
                            "num_warps": meta.get("num_warps"),
                            "num_stages": meta.get("num_stages"),
                            "num_ctas": meta.get("num_ctas"),
                            "shared": meta.get("shared"),
                            "enable_fp_fusion": meta.get("enable_fp_fusion"),
                            "allow_flush_denorm":
                                meta.get("allow_flush_denorm")})
    return out


def code_log(dest):
    """A handler that writes torch's logs (the output_code artifact among
    them) to DEST/torch_log.txt while one case compiles."""
    os.makedirs(dest, exist_ok=True)
    h = logging.FileHandler(os.path.join(dest, "torch_log.txt"))
    h.setLevel(logging.DEBUG)
    logging.getLogger("torch").addHandler(h)
    return h


def copy_code(new_files, dest):
    os.makedirs(dest, exist_ok=True)
    for p in sorted(new_files):
        if p.endswith(KEEP):
            base = os.path.basename(p)
            tag = os.path.basename(os.path.dirname(p))[:10]
            shutil.copy(p, os.path.join(dest, tag + "_" + base))


def flex_call(c, dev_in, block_mask, score_mod, fn):
    from torch.nn.attention import flex_attention as fa
    q, k, v = (t.detach().clone().requires_grad_(True) for t in dev_in[:3])
    kw = dict(score_mod=score_mod, block_mask=block_mask, scale=c["scale"],
              enable_gqa=c["heads"] != c["kv_heads"])
    if c["options"]:
        kw["kernel_options"] = dict(c["options"])
    if hasattr(fa, "AuxRequest"):
        o, aux = fn(q, k, v, return_aux=fa.AuxRequest(lse=True), **kw)
        lse = aux.lse
    else:
        o, lse = fn(q, k, v, return_lse=True, **kw)
    return q, k, v, o, lse


def run_case(name, c, outdir, fn, ver):
    from torch.nn.attention import flex_attention as fa
    dev = torch.device("cuda")
    q, k, v, do = sgm.gen_inputs(c)
    dev_in = tuple(t.to(dev) for t in (q, k, v, do))
    mask_mod, score_mod, extra = mods(c, dev)
    bm = None
    if mask_mod is not None:
        bm = fa.create_block_mask(mask_mod, None, None, c["nq"], c["nk"],
                                  device="cuda", BLOCK_SIZE=c["block"])
    before = snapshot()
    log = code_log(os.path.join(outdir, "code", name))
    t0 = time.time()
    saved = []

    def pack(t):
        # the forward's saved FP32 row tensors [B, H, Nq]: the kernel's
        # own LSE (base 2) that the backward reads
        if (t.dtype == torch.float32 and t.dim() == 3
                and tuple(t.shape) == (c["batch"], c["heads"], c["nq"])):
            saved.append(t.detach().clone())
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        q1, k1, v1, o, lse = flex_call(c, dev_in, bm, score_mod, fn)
    o.backward(dev_in[3])
    torch.cuda.synchronize()
    compile_s = time.time() - t0
    new = written_since(before)
    res = {"o": o.detach(), "lse": lse.detach(), "dq": q1.grad,
           "dk": k1.grad, "dv": v1.grad}
    fwd_l, bwd_l = [], []

    def again():
        q2, k2, v2, o2, lse2 = flex_call(c, dev_in, bm, score_mod, fn)
        again.out = (q2, k2, v2, o2, lse2)
    dump_sdpa.kernels_seen(again, fwd_l)
    q2, k2, v2, o2, lse2 = again.out
    dump_sdpa.kernels_seen(lambda: o2.backward(dev_in[3]), bwd_l)
    if not any("flex_attention" in (x["name"] or "") or "flex_decoding"
               in (x["name"] or "") for x in fwd_l):
        raise RuntimeError("no FlexAttention Triton kernel ran (eager "
                           "fallback?): %s" % [x["name"] for x in fwd_l])
    rep = {"o": o2.detach(), "lse": lse2.detach(), "dq": q2.grad,
           "dk": k2.grad, "dv": v2.grad}
    repeat = {t: same_bits(res[t], rep[t]) for t in res}
    tensors = {"q": q, "k": k, "v": v, "do": do}
    for t, val in res.items():
        tensors["flex." + t] = val
    for i, t in enumerate(saved):
        tensors["flex.saved%d" % i] = t
    if bm is not None:
        for f in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks",
                  "full_kv_indices", "q_num_blocks", "q_indices",
                  "full_q_num_blocks", "full_q_indices"):
            t = getattr(bm, f, None)
            if t is not None:
                tensors["block_mask." + f] = t
    tensors.update(extra)
    p = dict(c["params"])
    man = dict(ver)
    man.update({
        "case": name, "backend": "flex", "seed": c["seed"],
        "dtype": c["dt"], "layout": "bhnd",
        "launch_shape": {"batch": c["batch"], "heads": c["heads"],
                         "kv_heads": c["kv_heads"], "nq": c["nq"],
                         "nk": c["nk"], "d": c["d"]},
        "enable_gqa": c["heads"] != c["kv_heads"],
        "scale": c["scale"] if c["scale"] is not None
        else 1.0 / math.sqrt(c["d"]),
        "scale_given": c["scale"] is not None,
        "mask_mod": None if mask_mod is None else c["kind"] if c["kind"]
        not in ("alibi", "softcap") else "causal",
        "score_mod": c["kind"] if score_mod is not None else None,
        "params": p, "block_mask_block": c["block"] if bm else None,
        "kernel_options": c["options"], "repeat": repeat,
        "kernels": {"forward": fwd_l, "backward": bwd_l},
        "triton": triton_configs(new), "compile_s": round(compile_s, 1),
        "lse_note": "flex.lse as flex_attention returned it; flex.savedN: "
        "the FP32 [B, H, Nq] tensors the forward saved for the backward "
        "(the kernel's base-2 LSE)",
    })
    logging.getLogger("torch").removeHandler(log)
    log.close()
    sgm.save(os.path.join(outdir, name), tensors, man)
    copy_code(new, os.path.join(outdir, "code", name))
    return man


def templates(outdir):
    import torch._inductor as ind
    root = os.path.dirname(ind.__file__)
    dest = os.path.join(outdir, "templates")
    os.makedirs(dest, exist_ok=True)
    for p in glob.glob(os.path.join(root, "kernel", "flex", "**", "*"),
                       recursive=True):
        if os.path.isfile(p) and not p.endswith(".pyc"):
            rel = os.path.relpath(p, os.path.join(root, "kernel", "flex"))
            shutil.copy(p, os.path.join(dest, rel.replace("/", "__")))
    from torch.nn.attention import flex_attention as fa
    shutil.copy(fa.__file__, os.path.join(dest, "nn_attention_flex.py"))


def dot_probe(outdir):
    """One tl.dot tile: D = A B + C, 64 x K by K x 64, FP32 accumulator."""
    import triton
    import triton.language as tl
    from safetensors.torch import save_file

    @triton.jit
    def dot_kernel(a_ptr, b_ptr, c_ptr, d_ptr, K: tl.constexpr):
        rm = tl.arange(0, 64)
        rk = tl.arange(0, K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * 64 + rm[None, :])
        c = tl.load(c_ptr + rm[:, None] * 64 + rm[None, :])
        d = tl.dot(a, b, acc=c)
        tl.store(d_ptr + rm[:, None] * 64 + rm[None, :], d)

    g = torch.Generator().manual_seed(77)
    out = {}
    for dt_name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        for kk in (16, 64):
            for style in ("normal", "spread"):
                a = torch.randn(64, kk, generator=g)
                b = torch.randn(kk, 64, generator=g)
                c = torch.randn(64, 64, generator=g)
                if style == "spread":
                    a = a * torch.exp2(torch.randint(-12, 12, (64, kk),
                                                     generator=g).float())
                    c = c * torch.exp2(torch.randint(-20, 8, (64, 64),
                                                     generator=g).float())
                a, b = a.to(dt).cuda(), b.to(dt).cuda()
                c = c.float().cuda()
                d = torch.empty_like(c)
                dot_kernel[(1,)](a, b, c, d, K=kk, num_warps=4)
                tag = "%s_k%d_%s" % (dt_name, kk, style)
                out[tag + ".a"] = a.cpu()
                out[tag + ".b"] = b.cpu()
                out[tag + ".c"] = c.cpu()
                out[tag + ".d"] = d.cpu()
    os.makedirs(os.path.join(outdir, "dot"), exist_ok=True)
    save_file(out, os.path.join(outdir, "dot", "tl_dot.safetensors"),
              metadata={"manifest": json.dumps({"producer": PRODUCER,
                                                "what": "D = A B + C"})})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--budget", type=float, default=1e9,
                    help="start no case after this many seconds")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    t0 = time.time()
    from torch.nn.attention.flex_attention import flex_attention
    torch._logging.set_logs(output_code=True)
    # every case compiles its own kernels: past dynamo's recompile limit
    # flex_attention would fall back to its unfused eager implementation
    for knob in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 1 << 20)
    fn = torch.compile(flex_attention, dynamic=False)
    ver = sgm.versions()
    ver["producer"] = PRODUCER
    ver["triton_version"] = __import__("triton").__version__
    templates(a.outdir)
    try:
        dot_probe(a.outdir)
    except Exception as e:  # noqa: BLE001 -- recorded, the cases go on
        print("dot probe failed:", e, flush=True)
    summary = {}
    for name, c in CASES:
        if a.names and name not in a.names:
            continue
        if time.time() - t0 > a.budget:
            summary[name] = "not run: budget"
            continue
        try:
            man = run_case(name, c, a.outdir, fn, ver)
            summary[name] = {"repeat": man["repeat"],
                             "compile_s": man["compile_s"],
                             "kernels": [x["name"] for x in
                                         man["kernels"]["forward"] +
                                         man["kernels"]["backward"]]}
        except Exception as e:  # noqa: BLE001 -- recorded per case
            import traceback
            summary[name] = "failed: " + "".join(
                traceback.format_exception_only(type(e), e)).strip()[-800:]
        print(name, json.dumps(summary[name])[:300], flush=True)
    with open(os.path.join(a.outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""cudnn_bwd_probe.py -- cuDNN's SDPA backward on the GPU, dumped and probed.

usage: cudnn_bwd_probe.py [--inputs-gen] OUTDIR [CASE ...]

Writes OUTDIR/cudnn_bwd.safetensors (every tensor named CASE.NAME; the
d = 192 and 256 cases in OUTDIR/cudnn_bwd_big.safetensors) and
OUTDIR/cudnn_bwd.json (per case: the launch shape, dtype, causal flag,
generator, the kernels and grids the profiler saw, and for the backward
the number of elements of dQ, dK, dV that differ between three runs on
the same inputs).

Three families, all with cuDNN pinned (aten._scaled_dot_product_cudnn_
attention and its backward op called directly, so the O and LSE given
to the backward are known):

- "rand_*": dump_sdpa.gen_inputs inputs (normal, sink, repeated-max;
  causal and not; d 64 and 128; BF16 and FP16), the forward's O and LSE
  fed to the backward with dO.  Tensors q, k, v, do, o, lse, dq, dk, dv.
- "ord_*": S = 0 (Q zero on the last half of the columns, K zero on the
  first half), LSE = 0 and O = 0, so that P = 1, delta = 0 and, with
  V = e_0 and dO[:, 0] = 1, dS = 1 everywhere.  Then dV[j, c] = sum_i
  dO[i, c] (c >= 1), dK[j, c] = scale sum_i Q[i, c] (c < d/2) and
  dQ[i, c] = scale sum_j K[j, c] (c >= d/2): the order of each
  gradient's accumulation, shown by columns of small values with one
  pair of large ones that cancel.
- "del_*": S = 0, LSE = 0 (P = 1), V = K = the identity (Nk = d), so
  dQ[i, c] = scale RN16(dO[i, c] - delta_i); O[i, 0] = dO[i, 0] = 1 and
  the other products small, so dQ[i, 0] shows the low bits of delta_i
  = sum_c O[i, c] dO[i, c] (its order and contractions).

Then the forward alone for d = 192 and 256 (cuDNN pinned, and PyTorch's
default choice with torch._fused_sdp_choice), its O and LSE, and whether
the backward runs there.

With CASEs (names of the steps: rand_*, ord_*, del_*, big_*), only those
run.  With --inputs-gen, the rand_* and big_* cases take Q, K, V, dO
from fixgen.py (dump_sdpa.fixgen_inputs with the case's seed, 11 or 5,
the whole launch; sink and repeated-max through the u transform, V's
std 13/32 for 0.4) instead of
dump_sdpa.gen_inputs; they are left out of the file and the case's
manifest entry "inputs_gen" describes them (each hash that of the bits
the GPU computed on, read back), for split_cudnn_bwd.py to carry over.
"""
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

import dump_sdpa  # noqa: E402

DEV = torch.device("cuda")
TENSORS = {}
MANIFEST = {"producer": "experiments/gpu/probes/cudnn_bwd_probe.py",
            "cases": {}}


def fwd_op(q, k, v, causal):
    return torch.ops.aten._scaled_dot_product_cudnn_attention(
        q, k, v, None, True, 0.0, causal, False)


def bwd_op(do, q, k, v, o, lse, r, causal):
    return torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
        do, q, k, v, o, lse, r[6], r[7], None, r[2], r[3], r[4], r[5], 0.0,
        causal)


def keep(case, **ts):
    for n, t in ts.items():
        if n in ("q", "k", "v", "do") and case in GENERATED:
            continue
        TENSORS[case + "." + n] = t.detach().cpu().contiguous()


GENERATED = set()  # the cases whose inputs inputs_gen describes


def run_case(case, q, k, v, do, causal, o=None, lse=None, info=None,
             gen=None):
    """Forward (unless O and LSE are given: then the forward only gives
    the auxiliary outputs and O, LSE are replaced), backward three times.
    GEN: (seed, inputs_gen entries) when Q, K, V, dO came from
    dump_sdpa.fixgen_inputs."""
    made = {"q": q, "k": k, "v": v, "do": do}
    q, k, v, do = (t.to(DEV) for t in (q, k, v, do))
    m = dict(info or {})
    m["shape"] = list(q.shape) + [k.shape[2]]
    m["dtype"] = str(q.dtype).replace("torch.", "")
    m["causal"] = causal
    launches = []
    r = []

    def f():
        r[:] = list(fwd_op(q, k, v, causal))
    m["forward_kernels"] = dump_sdpa.kernels_seen(f, launches)
    m["forward_launches"] = launches
    fo, flse = r[0], r[1]
    m["lse_shape"] = list(flse.shape)
    m["o_stride"] = list(fo.stride())
    if o is not None:
        fo = fo.clone().copy_(o.to(DEV).to(fo.dtype))
        flse = flse.clone().copy_(lse.to(DEV).reshape(flse.shape))
    blaunch = []
    g = []

    def b():
        g[:] = list(bwd_op(do, q, k, v, fo, flse, r, causal))
    m["backward_kernels"] = dump_sdpa.kernels_seen(b, blaunch)
    m["backward_launches"] = blaunch
    runs = [g]
    for _ in range(2):
        runs.append(list(bwd_op(do, q, k, v, fo, flse, r, causal)))
    torch.cuda.synchronize()
    m["rerun_differences"] = {
        n: [int((runs[0][x].view(torch.int16) != runs[y][x].view(torch.int16))
                .sum()) for y in (1, 2)]
        for x, n in enumerate(("dq", "dk", "dv"))}
    if gen is not None:
        m["inputs"] = "experiments/gpu/fixgen.py (inputs_gen; not stored)"
        m["inputs_gen"] = dump_sdpa.inputs_gen_of(
            gen[0], gen[1], {"q": q, "k": k, "v": v, "do": do}, made)
        GENERATED.add(case)
    keep(case, q=q, k=k, v=v, do=do, o=fo, lse=flse.float().reshape(
        flse.shape[0], flse.shape[1], -1), dq=g[0], dk=g[1], dv=g[2])
    MANIFEST["cases"][case] = m
    print(case, m["rerun_differences"], flush=True)


RAND = [
    ("rand_d64_n256", 64, 256, 256, "normal", False, "bf16"),
    ("rand_d64_n512_causal", 64, 512, 512, "normal", True, "bf16"),
    ("rand_d128_n256", 128, 256, 256, "normal", False, "bf16"),
    ("rand_d128_n512_causal", 128, 512, 512, "normal", True, "bf16"),
    ("rand_d64_n256_sink", 64, 256, 256, "sink", False, "bf16"),
    ("rand_d64_n256_repmax4", 64, 256, 256, "repeated-max", False, "bf16"),
    ("rand_d64_nq128_nk1024", 64, 128, 1024, "normal", False, "bf16"),
    ("rand_d128_nq1024_nk128", 128, 1024, 128, "normal", False, "bf16"),
    ("rand_d128_nq192_nk320", 128, 192, 320, "normal", False, "bf16"),
    ("rand_d64_n256_fp16", 64, 256, 256, "normal", False, "fp16"),
    ("rand_d128_n256_causal_sink", 128, 256, 256, "sink", True, "bf16"),
]


def wide_columns(gen, n, cols, dt):
    """N x COLS: N(0, 1) values with, per column, one pair +-2^e (e in 8
    .. 20) at two random rows."""
    x = torch.randn(n, cols, generator=gen)
    for c in range(cols):
        e = int(torch.randint(8, 21, (1,), generator=gen))
        i, j = torch.randperm(n, generator=gen)[:2].tolist()
        x[i, c] = 2.0 ** e
        x[j, c] = -(2.0 ** e)
    return x.to(dt)


def order_case(case, d, nq, nk, seed, dt=torch.bfloat16):
    gen = torch.Generator().manual_seed(seed)
    h = 2
    q = torch.zeros(1, h, nq, d, dtype=dt)
    k = torch.zeros(1, h, nk, d, dtype=dt)
    v = torch.zeros(1, h, nk, d, dtype=dt)
    do = torch.zeros(1, h, nq, d, dtype=dt)
    for hh in range(h):
        q[0, hh, :, :d // 2] = wide_columns(gen, nq, d // 2, dt)
        k[0, hh, :, d // 2:] = wide_columns(gen, nk, d - d // 2, dt)
        do[0, hh, :, 1:] = wide_columns(gen, nq, d - 1, dt)
    do[..., 0] = 1.0
    v[..., 0] = 1.0
    o = torch.zeros(1, h, nq, d, dtype=dt)
    lse = torch.zeros(1, h, nq)
    run_case(case, q, k, v, do, False, o, lse,
             {"gen": "order", "seed": seed})


def delta_case(case, d, seed, lo, hi, dt=torch.bfloat16):
    gen = torch.Generator().manual_seed(seed)
    h, n = 4, d
    q = torch.zeros(1, h, n, d, dtype=dt)
    eye = torch.eye(d, dtype=dt)
    k = eye.expand(1, h, d, d).clone()
    v = eye.expand(1, h, d, d).clone()
    # O[i, c] dO[i, c] for c >= 1: magnitudes 2^-lo .. 2^-hi, both signs
    mag = torch.randint(lo, hi + 1, (1, h, n, d), generator=gen).float()
    sign = torch.randint(0, 2, (1, h, n, d), generator=gen).float() * 2 - 1
    o = (sign * torch.rand(1, h, n, d, generator=gen).add(1.0)
         * torch.pow(2.0, -mag)).to(dt)
    do = torch.rand(1, h, n, d, generator=gen).add(0.5).to(dt)
    o[..., 0] = 1.0
    do[..., 0] = 1.0
    lse = torch.zeros(1, h, n)
    run_case(case, q, k, v, do, False, o, lse,
             {"gen": "delta", "seed": seed, "exponents": [lo, hi]})


def big_d(case, d, n, causal, inputs_gen=False):
    m = {"d": d}
    gen = None
    if inputs_gen:
        q, k, v, do, entries = dump_sdpa.fixgen_inputs(
            1, 2, n, n, d, torch.bfloat16, 5)
        gen = (5, entries)
        GENERATED.add(case)
    else:
        q, k, v, do = dump_sdpa.gen_inputs(1, 2, n, n, d, torch.bfloat16, 5)
    qg, kg, vg = (t.to(DEV) for t in (q, k, v))
    try:
        launches = []
        r = []

        def f():
            r[:] = list(fwd_op(qg, kg, vg, causal))
        m["forward_kernels"] = dump_sdpa.kernels_seen(f, launches)
        m["forward_launches"] = launches
        keep(case, q=q, k=k, v=v, o=r[0], lse=r[1].float().reshape(1, 2, -1))
    except Exception as e:  # noqa: BLE001
        m["forward_error"] = repr(e)[:500]
    m["fused_sdp_choice"] = dump_sdpa.CHOICE_NAMES.get(int(
        torch._fused_sdp_choice(qg, kg, vg, None, 0.0, causal)), "?")
    qr, kr, vr = (t.clone().requires_grad_(True) for t in (qg, kg, vg))
    try:
        def sd():
            o = torch.nn.functional.scaled_dot_product_attention(
                qr, kr, vr, is_causal=causal)
            o.backward(do.to(DEV))
        m["default_kernels"] = dump_sdpa.kernels_seen(sd)
        m["default_backend_seen"] = dump_sdpa.backend_of_kernels(
            m["default_kernels"])
        m["fused_sdp_choice_grad"] = dump_sdpa.CHOICE_NAMES.get(int(
            torch._fused_sdp_choice(qr, kr, vr, None, 0.0, causal)), "?")
    except Exception as e:  # noqa: BLE001
        m["default_error"] = repr(e)[:500]
    try:
        run_case(case + "_bwd", q, k, v, do, causal, info={"gen": "normal"},
                 gen=gen)
    except Exception as e:  # noqa: BLE001
        m["backward_error"] = repr(e)[:500]
    MANIFEST["cases"][case] = m
    print(case, json.dumps({x: m.get(x) for x in (
        "fused_sdp_choice", "fused_sdp_choice_grad", "default_backend_seen",
        "forward_error", "backward_error")}), flush=True)


def main():
    inputs_gen, out, only = dump_sdpa.case_args(sys.argv[1:], __doc__)
    torch.use_deterministic_algorithms(False)
    MANIFEST["gpu"] = torch.cuda.get_device_name(0)
    MANIFEST["torch"] = torch.__version__
    MANIFEST["cuda"] = torch.version.cuda
    MANIFEST["cudnn"] = torch.backends.cudnn.version()
    steps = []
    for name, d, nq, nk, gen, causal, dts in RAND:
        dt = torch.bfloat16 if dts == "bf16" else torch.float16
        vm, vs = (-1.5, 0.4) if gen != "normal" else (0.0, 1.0)

        def st(name=name, d=d, nq=nq, nk=nk, gen=gen, causal=causal,
               dt=dt, vm=vm, vs=vs):
            fix = None
            if inputs_gen:
                if gen != "normal":  # 0.4 is not dyadic
                    vs = dump_sdpa.SINK_V_STD
                q, k, v, do, entries = dump_sdpa.fixgen_inputs(
                    1, 2, nq, nk, d, dt, 11, vm, vs, gen, 4)
                fix = (11, entries)
            else:
                q, k, v, do = dump_sdpa.gen_inputs(1, 2, nq, nk, d, dt, 11,
                                                   gen, 4, vm, vs)
            run_case(name, q, k, v, do, causal,
                     info={"gen": gen, "seed": 11, "v_mean": vm,
                           "v_std": vs}, gen=fix)
        steps.append((name, st))
    steps += [
        ("ord_d64_n64", lambda: order_case("ord_d64_n64", 64, 64, 64, 21)),
        ("ord_d64_n256", lambda: order_case("ord_d64_n256", 64, 256, 256,
                                            22)),
        ("ord_d128_n64", lambda: order_case("ord_d128_n64", 128, 64, 64,
                                            23)),
        ("ord_d128_n256", lambda: order_case("ord_d128_n256", 128, 256, 256,
                                             24)),
        ("ord_d64_nq64_nk1024",
         lambda: order_case("ord_d64_nq64_nk1024", 64, 64, 1024, 25)),
        ("del_d64_a", lambda: delta_case("del_d64_a", 64, 31, 8, 24)),
        ("del_d64_b", lambda: delta_case("del_d64_b", 64, 32, 2, 30)),
        ("del_d128_a", lambda: delta_case("del_d128_a", 128, 33, 8, 24)),
        ("big_d192", lambda: big_d("big_d192", 192, 256, False,
                                   inputs_gen)),
        ("big_d256", lambda: big_d("big_d256", 256, 256, False,
                                   inputs_gen)),
        ("big_d256_causal", lambda: big_d("big_d256_causal", 256, 256,
                                          True, inputs_gen)),
    ]
    for name, st in steps:
        if only and name not in only:
            continue
        try:
            st()
        except Exception:  # noqa: BLE001
            MANIFEST["cases"].setdefault(name, {})["error"] = (
                traceback.format_exc()[-1500:])
            print(name, "ERROR", traceback.format_exc()[-600:], flush=True)
        for fam, sel in (("cudnn_bwd", lambda n: not n.startswith("big")),
                         ("cudnn_bwd_big", lambda n: n.startswith("big"))):
            part = {n: t for n, t in TENSORS.items() if sel(n)}
            if part:
                save_file(part, os.path.join(out, fam + ".safetensors"))
        with open(os.path.join(out, "cudnn_bwd.json"), "w") as f:
            json.dump(MANIFEST, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()

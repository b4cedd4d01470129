#!/usr/bin/env python3
"""cudnn_repro_probe.py -- does cuDNN's attention give the same bits for the
same inputs twice?

usage: cudnn_repro_probe.py OUTDIR [RUNS]

For each Nk in NKS: 32 distinct heads (B = 1, Nq = 1, d = 64, BF16, Q, K, V
~ N(0, 1), the default scale) launched RUNS times as they are (32 heads:
the lean-reduction launch from 513 keys), RUNS times with every head
repeated 8 times (256 heads: one CTA per head, no lean reduction), and
each head alone 8 times.  Then the crafted triple-probe heads of
cudnn_triple_probe.py for A = 0 .. 7 (64,008 heads, Nk = 512), 6 times,
and one prefill shape (Nq = 128) for comparison.

OUTDIR/decode_repro.json: per experiment the rows whose LSE took more than
one value, and whether O ever changed.
OUTDIR/decode_repro_full.safetensors: per Nk, q, k, v of the 32 heads and
every LSE observed (lse32 [RUNS, 32], lse256 [RUNS, 256], head h of the
256-head launch at 8 h .. 8 h + 7).
OUTDIR/decode_repro.safetensors: the same for a slice of 6 heads (the
first four whose LSE varied at the smallest Nk, then two that did not),
"heads" naming them: the fixture of tests/data/gpu/cudnn.
OUTDIR/sw_*.safetensors: more shapes (Nk 300 to 4096, d 64 and 128,
BF16 and FP16, one CTA per head or the lean reduction), 8 distinct heads
each repeated COPIES times in one launch: q, k, v and lse [RUNS,
8 COPIES], head h at h, h + 8, ...
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

NKS = (512, 1024)
H = 32


def main():
    out = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    dev = torch.device("cuda")
    op = torch.ops.aten._scaled_dot_product_cudnn_attention
    g = torch.Generator().manual_seed(7)
    meta = {"runs": runs, "heads": H, "d": 64, "dtype": "bf16",
            "generator": "torch.Generator().manual_seed(7), randn q, k, v",
            "experiments": {}}
    full, slim = {}, {}
    t0 = time.time()

    def launch(q, k, v, n):
        lses, o0, o_changed = [], None, False
        for _ in range(n):
            o, lse = op(q, k, v, None, True, 0.0, False, False)[:2]
            torch.cuda.synchronize()
            o = o.cpu()
            if o0 is None:
                o0 = o
            o_changed |= bool((o.view(torch.int16)
                               != o0.view(torch.int16)).any())
            lses.append(lse.float().cpu().reshape(-1))
        return torch.stack(lses), o_changed

    def varying(lse):
        b = lse.view(torch.int32)
        return [int(i) for i in torch.nonzero((b != b[0]).any(0))]

    for nk in NKS:
        q = torch.randn(1, H, 1, 64, generator=g).to(torch.bfloat16)
        k = torch.randn(1, H, nk, 64, generator=g).to(torch.bfloat16)
        v = torch.randn(1, H, nk, 64, generator=g).to(torch.bfloat16)
        qd, kd, vd = q.to(dev), k.to(dev), v.to(dev)
        l32, oc32 = launch(qd, kd, vd, runs)
        l256, oc256 = launch(qd.repeat_interleave(8, 1),
                             kd.repeat_interleave(8, 1),
                             vd.repeat_interleave(8, 1), runs)
        alone = [launch(qd[:, h:h + 1], kd[:, h:h + 1], vd[:, h:h + 1], 8)
                 for h in range(H)]
        l1 = torch.cat([a[0] for a in alone], 1)
        v256 = sorted({i // 8 for i in varying(l256)})
        meta["experiments"]["nk%d" % nk] = {
            "launch32": {"B": 1, "H": 32, "Nq": 1, "Nk": nk, "d": 64,
                         "rows_varying": varying(l32), "o_changed": oc32},
            "launch256": {"B": 1, "H": 256, "Nq": 1, "Nk": nk, "d": 64,
                          "heads_varying": v256, "o_changed": oc256},
            "alone": {"B": 1, "H": 1, "Nq": 1, "Nk": nk, "d": 64, "runs": 8,
                      "heads_varying": varying(l1),
                      "o_changed": any(a[1] for a in alone)},
        }
        print(nk, meta["experiments"]["nk%d" % nk], "%.1f s"
              % (time.time() - t0), flush=True)
        p = "nk%d." % nk
        full.update({p + "q": q, p + "k": k, p + "v": v,
                     p + "lse32": l32, p + "lse256": l256})
        if not slim:
            still = [h for h in range(H) if h not in v256]
            heads = (v256[:4] + still[:2])
            idx = torch.tensor(heads)
            sl = torch.cat([torch.arange(8 * h, 8 * h + 8) for h in heads])
            slim = {"heads": idx.to(torch.int32),
                    p + "q": q[:, idx].contiguous(),
                    p + "k": k[:, idx].contiguous(),
                    p + "v": v[:, idx].contiguous(),
                    p + "lse256": l256[:, sl].contiguous()}
            meta["slice"] = {"nk": nk, "heads": heads}
        del qd, kd, vd
        torch.cuda.empty_cache()

    # more shapes: 8 distinct heads, each repeated COPIES times in one
    # launch (33 copies: 264 CTAs, one per head, no lean reduction;
    # 2 or 4 copies: the lean reduction), RUNS launches
    import dump_sdpa
    for nk, d, dt, copies in ((300, 64, torch.bfloat16, 33),
                              (512, 128, torch.bfloat16, 33),
                              (2048, 64, torch.bfloat16, 33),
                              (1024, 64, torch.float16, 33),
                              (600, 64, torch.bfloat16, 2),
                              (1024, 64, torch.bfloat16, 4),
                              (4096, 64, torch.bfloat16, 4)):
        name = "sw_nk%d_d%d_%s_x%d" % (nk, d, "fp16" if dt == torch.float16
                                       else "bf16", copies)
        q = torch.randn(1, 8, 1, d, generator=g).to(dt)
        k = torch.randn(1, 8, nk, d, generator=g).to(dt)
        v = torch.randn(1, 8, nk, d, generator=g).to(dt)
        qd, kd, vd = (x.to(dev).repeat(1, copies, 1, 1) for x in (q, k, v))
        ls, oc = launch(qd, kd, vd, runs)
        vh = sorted({i % 8 for i in varying(ls)})
        launches = []
        dump_sdpa.kernels_seen(
            lambda: op(qd, kd, vd, None, True, 0.0, False, False), launches)
        meta["experiments"][name] = {
            "B": 1, "H": 8 * copies, "Nq": 1, "Nk": nk, "d": d,
            "dtype": "fp16" if dt == torch.float16 else "bf16",
            "distinct_heads": 8, "head_h_at": "h, h + 8, h + 16, ...",
            "heads_varying": vh, "o_changed": oc, "launches": launches}
        print(name, vh, oc, [la["grid"] for la in launches], flush=True)
        save_file({"q": q.contiguous(), "k": k.contiguous(),
                   "v": v.contiguous(), "lse": ls.contiguous()},
                  os.path.join(out, name + ".safetensors"))
        del qd, kd, vd
        torch.cuda.empty_cache()

    # the triple probe's heads, A = 0 .. 7
    import cudnn_triple_probe
    q, k, v = cudnn_triple_probe.triple_heads(range(8), dev)
    h = q.shape[1]
    ls = []
    for _ in range(6):
        r = op(q, k, v, None, True, 0.0, False, False,
               scale=cudnn_triple_probe.LN2)
        torch.cuda.synchronize()
        ls.append(r[1].float().cpu().reshape(-1))
    lt = torch.stack(ls)
    meta["experiments"]["triple"] = {
        "heads": h, "runs": 6, "rows_varying": len(varying(lt)),
        "rows_lse_nonzero_per_run": [int((x != 0).sum()) for x in ls]}
    print(meta["experiments"]["triple"], flush=True)
    del q, k, v
    torch.cuda.empty_cache()

    # a prefill shape (the sm90 engine) for comparison
    q = torch.randn(1, 8, 256, 64, generator=g).to(torch.bfloat16).to(dev)
    k = torch.randn(1, 8, 1024, 64, generator=g).to(torch.bfloat16).to(dev)
    v = torch.randn(1, 8, 1024, 64, generator=g).to(torch.bfloat16).to(dev)
    lp, ocp = launch(q, k, v, runs)
    meta["experiments"]["prefill_nq256_nk1024"] = {
        "B": 1, "H": 8, "Nq": 256, "Nk": 1024, "d": 64,
        "rows": 8 * 256, "rows_varying": len(varying(lp)), "o_changed": ocp}
    print(meta["experiments"]["prefill_nq256_nk1024"], flush=True)

    save_file({k: v.contiguous() for k, v in full.items()},
              os.path.join(out, "decode_repro_full.safetensors"))
    save_file(slim, os.path.join(out, "decode_repro.safetensors"),
              metadata={"manifest": json.dumps(
                  {"backend": "cudnn", "probe": "cudnn_repro_probe.py",
                   "runs": runs, "slice": meta["slice"]})})
    with open(os.path.join(out, "decode_repro.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("total %.1f s" % (time.time() - t0))


if __name__ == "__main__":
    main()

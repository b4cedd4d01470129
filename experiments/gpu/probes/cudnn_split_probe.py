#!/usr/bin/env python3
"""cudnn_split_probe.py -- the split count of cuDNN's decode engine, shape
by shape.

usage: cudnn_split_probe.py OUT.json [SECONDS]

For one query row (Nq = 1) cuDNN 9.19 runs sm80_flash_fprop_wmma_f16_
knob_35_16x128x{64,128} over S key splits (S its grid.x) and then, when
S > 1, cudnn::fusion::lean_reduction_kernel.  Every case of cases() runs
F.scaled_dot_product_attention with only the cuDNN backend enabled on
small random inputs (batch B, H query heads, Hkv key/value heads, Nk
keys, head dim d, BF16 or FP16, is_causal or not), first once to build
cuDNN's plan, then inside one profiler session per batch of cases; the
profiler's trace gives each launch's kernel name, grid and block.  A
launch of one case is every kernel from its cuDNN engine kernel
("flash_fprop") up to the next case's.

Causal cases also record whether O equals the non-causal O (the one row
sees every key: bottom-right alignment) or V's first row (top-left: key
0 alone): "causal_o".

Writes OUT.json (rewritten after each batch, so a run stopped early
keeps what it measured): the versions, and per case batch, heads,
kv_heads, nq, nk, d, dtype, causal, gqa, and "launches" ([{name, grid,
block}], names cut at their argument list) or "error".  The cases are
in priority order; no batch starts after SECONDS (default 100) have
passed.
"""
import datetime
import json
import os
import sys
import time


def cases():
    """(batch, heads, kv_heads, nk, d, dtype, causal), most useful first."""
    out = []

    def add(b=1, h=1, kv=None, nk=4096, d=64, dt="bf16", causal=False):
        c = (b, h, h if kv is None else kv, nk, d, dt, causal)
        if c not in out:
            out.append(c)

    # the cap from the CTAs: B x H around 264 / S (Nk = 4096: 32 splits
    # from the keys alone)
    for h in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 34, 40, 48,
              63, 64, 65, 66, 67, 68, 80, 96, 100, 127, 128, 129, 130, 131,
              132, 133, 134, 135, 150, 200, 256, 263, 264, 265, 270):
        add(h=h)
    # batch against heads
    for b, h in ((2, 16), (2, 17), (33, 1), (3, 11), (11, 3), (2, 33),
                 (66, 1), (67, 1), (6, 11), (132, 1), (133, 1), (2, 66),
                 (4, 16), (16, 2), (64, 1), (65, 1)):
        add(b=b, h=h)
    # the keys: thresholds of S = 4, 8, ..., 256 (one head, no cap below
    # 264 CTAs)
    for nk in (257, 384, 511, 512, 513, 514, 520, 640, 767, 768, 1000,
               1008, 1009, 1012, 1015, 1016, 1017, 1018, 1020, 1023, 1024,
               1025, 1536, 2024, 2025, 2031, 2032, 2033, 2034, 2040, 2041,
               2047, 2048, 3072, 4064, 4065, 4066, 4080, 4081, 4088, 4089,
               4095, 4096, 6144, 8128, 8129, 8130, 8160, 8161, 8176, 8177,
               8184, 8185, 8191, 8192, 16256, 16257, 16258, 16368, 16369,
               16384, 32512, 32513, 32640, 32641, 32768, 65536, 131072):
        add(nk=nk)
    # the cap where the keys give 4 splits: 2, or 1?
    for h in (64, 66, 67, 100, 132, 133, 135):
        add(h=h, nk=600)
    # head dim and FP16 at the boundaries
    for h in (32, 33, 66, 67, 132, 133):
        add(h=h, d=128)
        add(h=h, dt="fp16")
    for nk in (1016, 1017, 1023, 2032, 2033, 4064, 4065):
        add(h=8, nk=nk, d=128)
        add(h=8, nk=nk, dt="fp16")
    for d in (8, 16, 32, 48, 72, 96, 112, 160, 192, 256):
        add(h=8, nk=1017, d=d)
        add(h=8, d=d)
        add(h=33, d=d)
    # grouped-query heads (F.scaled_dot_product_attention, enable_gqa)
    for h, kv in ((8, 2), (32, 8), (64, 8), (32, 4), (32, 2), (32, 1),
                  (16, 1), (34, 2), (48, 3), (64, 2), (64, 1), (128, 4),
                  (128, 8), (256, 16), (66, 33), (132, 66), (134, 67),
                  (264, 132), (266, 133)):
        add(h=h, kv=kv)
    # is_causal with one query row
    for h, nk in ((8, 513), (8, 1024), (8, 4096), (64, 2048), (135, 1024)):
        add(h=h, nk=nk, causal=True)
    return out


def short(name):
    """A kernel name without its argument list."""
    return name.split("(", 1)[0] if name else name


def group_launches(trace, n):
    """The kernel events of TRACE (a chrome trace) in N groups: each from a
    cuDNN engine kernel up to the next one.  None unless there are
    exactly N engine kernels."""
    ks = [e for e in trace.get("traceEvents", [])
          if str(e.get("cat", "")).lower() == "kernel"]
    ks.sort(key=lambda e: float(e.get("ts", 0)))
    starts = [i for i, e in enumerate(ks) if "flash_fprop" in e.get("name",
                                                                     "")]
    if len(starts) != n:
        return None
    groups = []
    for j, s in enumerate(starts):
        end = starts[j + 1] if j + 1 < n else len(ks)
        g = []
        for e in ks[s:end]:
            a = e.get("args", {})
            g.append({"name": short(e.get("name")), "grid": a.get("grid"),
                      "block": a.get("block")})
        groups.append(g)
    return groups


def write(path, meta, rows):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("{\n")
        for k, v in meta.items():
            f.write(" %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write(' "cases": [\n')
        for i, r in enumerate(rows):
            f.write("  " + json.dumps(r) + (",\n" if i + 1 < len(rows)
                                             else "\n"))
        f.write(" ]\n}\n")
    os.replace(tmp, path)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    ".."))
    import dump_sdpa  # the profiler's trace

    out = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) == 3 else 100.0
    t0 = time.time()
    dev = torch.device("cuda")
    p = torch.cuda.get_device_properties(0)
    meta = {"producer": "experiments/gpu/probes/cudnn_split_probe.py",
            "gpu": torch.cuda.get_device_name(0),
            "cc": "%d.%d" % (p.major, p.minor),
            "sms": p.multi_processor_count,
            "cuda": torch.version.cuda, "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "inputs": "torch.randn on the device (seed 0), no scale given",
            "seconds": 0.0}
    gen = torch.Generator(device=dev).manual_seed(0)
    todo = cases()
    rows = []
    per = 16
    for b0 in range(0, len(todo), per):
        if time.time() - t0 > budget:
            print("stopped at case %d of %d (%.0f s)" % (b0, len(todo),
                                                           time.time() - t0),
                  flush=True)
            break
        batch = []
        for (b, h, kv, nk, d, dt, causal) in todo[b0:b0 + per]:
            row = {"batch": b, "heads": h, "kv_heads": kv, "nq": 1,
                   "nk": nk, "d": d, "dtype": dt, "causal": causal,
                   "gqa": kv != h}
            tdt = torch.bfloat16 if dt == "bf16" else torch.float16
            try:
                q = torch.randn(b, h, 1, d, generator=gen, device=dev,
                                dtype=tdt)
                k = torch.randn(b, kv, nk, d, generator=gen, device=dev,
                                dtype=tdt)
                v = torch.randn(b, kv, nk, d, generator=gen, device=dev,
                                dtype=tdt)

                def call(q=q, k=k, v=v, causal=causal, gqa=kv != h):
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                        return F.scaled_dot_product_attention(
                            q, k, v, is_causal=causal, enable_gqa=gqa)
                with torch.no_grad():
                    o = call()
                    if causal:
                        on = call(causal=False)
                        v0 = v[:, :, :1, :].repeat_interleave(h // kv, 1)
                        row["causal_o"] = (
                            "as_noncausal" if torch.equal(o, on) else
                            "key0" if torch.equal(o, v0) else "other")
                torch.cuda.synchronize()
                batch.append((row, call))
            except Exception as ex:  # noqa: BLE001 -- recorded
                row["error"] = str(ex).splitlines()[0][:200] if str(ex) \
                    else type(ex).__name__
            rows.append(row)
        if not batch:
            continue
        with torch.no_grad(), profile(
                activities=[ProfilerActivity.CUDA]) as prof:
            for _, call in batch:
                call()
                torch.cuda.synchronize()
        groups = group_launches(dump_sdpa.chrome_trace(prof), len(batch))
        if groups is None:
            # one profiler session per case instead
            groups = []
            for _, call in batch:
                with torch.no_grad(), profile(
                        activities=[ProfilerActivity.CUDA]) as p1:
                    call()
                    torch.cuda.synchronize()
                g = group_launches(dump_sdpa.chrome_trace(p1), 1)
                groups.append(g[0] if g else [])
        for (row, _), g in zip(batch, groups):
            row["launches"] = g
        del batch
        torch.cuda.empty_cache()
        meta["seconds"] = round(time.time() - t0, 1)
        write(out, meta, rows)
        last = rows[-1]
        print("%d cases, %.1f s; last %s" % (
            len(rows), time.time() - t0,
            [(x["name"][-40:], x["grid"]) for x in last.get("launches", [])]
            or last.get("error")), flush=True)
    meta["seconds"] = round(time.time() - t0, 1)
    write(out, meta, rows)
    # a short table last
    for r in rows:
        ls = r.get("launches") or []
        eng = [x for x in ls if "flash_fprop" in (x["name"] or "")]
        lean = any("lean_reduction" in (x["name"] or "") for x in ls)
        print("B%-3d H%-4d Hkv%-4d Nk%-7d d%-4d %s%s  %s%s" % (
            r["batch"], r["heads"], r["kv_heads"], r["nk"], r["d"],
            r["dtype"], " causal" if r["causal"] else "",
            eng[0]["grid"] if eng else r.get("error", "no engine"),
            " lean" if lean else ""))


if __name__ == "__main__":
    main()

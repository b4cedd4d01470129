#!/usr/bin/env python3
"""cudnn_orders_check.py -- the LSE values cuDNN's decode engine gave over
repeated launches (cudnn_repro_probe.py) against the values the cudnn
description gives with each of the 24 fixed warp orders.

usage: cudnn_orders_check.py BF16EMU DIR [DECODE_LSE]

DIR holds cudnn_repro_probe.py's output: decode_repro_full.safetensors
(nkN.q, .k, .v and nkN.lse256 [RUNS, 256], head h at 8 h .. 8 h + 7; at
Nk = 512 also nkN.lse32 [RUNS, 32], one CTA per head too) and sw_*.safe-
tensors (q, k, v and lse [RUNS, 8 COPIES], head h at h, h + 8, ...).  For
each shape it prints the heads whose GPU values all lie in the set the
orders give ("covered") and those where the default order's value is one
the GPU gave.  Runs `BF16EMU attn --kernel` 25 times per shape (the
description from `attn --policy cudnn --describe`, exp model ex2-sm90).
DECODE_LSE (same or lg2-fma) replaces the description's decode_lse.
Standard library only.
"""
import glob
import itertools
import json
import os
import struct
import subprocess
import sys
import tempfile


def f32_tensors(path):
    """The F32 tensors of a .safetensors file: name -> (shape, bits)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for key, t in head.items():
        if key == "__metadata__" or t["dtype"] != "F32":
            continue
        a, b = t["data_offsets"]
        out[key] = (t["shape"], struct.unpack("<%dI" % ((b - a) // 4),
                                              data[a:b]))
    return out


def splits(nk, heads):
    """cuDNN 9.19's decode split count on an H200 (one query head per key
    head; doc/notes/gpu-crosscheck-log.md, "Crafted decode rows" item 1)."""
    if nk <= 512 or heads > 66:
        return 1
    s = 1
    while s * 2 <= 64 and nk > 127 * s * 2 and s * 2 * heads < 264:
        s *= 2
    return s


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: cudnn_orders_check.py BF16EMU DIR [DECODE_LSE]")
    emu, d = sys.argv[1], sys.argv[2]
    desc = json.loads(subprocess.run(
        [emu, "attn", "--policy", "cudnn", "--describe"], check=True,
        capture_output=True, text=True).stdout)
    if len(sys.argv) == 4:
        desc["decode_lse"] = sys.argv[3]
    orders = ["tree"] + ["".join(p) for p in itertools.permutations("0123")]
    # (label, file, prefix, launch heads, distinct heads, [(key, index of
    # head h's copy c)])
    cases = []
    full = os.path.join(d, "decode_repro_full.safetensors")
    if os.path.exists(full):
        for nk in (512, 1024):
            keys = [("lse256", lambda c, h: 8 * h + c)]
            if nk == 512:
                keys.append(("lse32", lambda c, h: h if c == 0
                             else None))
            cases.append(("Nk %d, 256 heads" % nk, full, "nk%d." % nk, 256,
                          32, keys))
    for path in sorted(glob.glob(os.path.join(d, "sw_*.safetensors"))):
        name = os.path.basename(path)[:-len(".safetensors")]
        copies = int(name.rsplit("_x", 1)[1])
        cases.append((name, path, "", 8 * copies, 8,
                      [("lse", lambda c, h: 8 * c + h)]))
    with tempfile.TemporaryDirectory() as tmp:
        kfile = os.path.join(tmp, "k.json")
        ofile = os.path.join(tmp, "o.safetensors")
        for label, path, prefix, heads, nh, keys in cases:
            t = f32_tensors(path)
            gpu = [set() for _ in range(nh)]
            for key, at in keys:
                shape, bits = t[prefix + key]
                runs, width = shape
                for r in range(runs):
                    for h in range(nh):
                        for c in range(width // nh):
                            i = at(c, h)
                            if i is not None:
                                gpu[h].add(bits[r * width + i])
            nk = int(label.split()[1][:-1]) if label.startswith("Nk") \
                else int(label.split("_")[1][2:])
            s = splits(nk, heads)
            emu_sets = [set() for _ in range(nh)]
            tree = None
            for o in orders:
                desc["decode_span_order"] = o
                with open(kfile, "w") as f:
                    json.dump(desc, f)
                subprocess.run(
                    [emu, "attn", "--kernel", kfile, "--exp", "ex2-sm90",
                     "--q", path + ":" + prefix + "q",
                     "--k", path + ":" + prefix + "k",
                     "--v", path + ":" + prefix + "v",
                     "--splits", str(s), "--no-exact", "--out", ofile,
                     "--force"], check=True, capture_output=True)
                lse = f32_tensors(ofile)["lse"][1]
                for h in range(nh):
                    emu_sets[h].add(lse[h])
                if o == "tree":
                    tree = lse
            covered = sum(gpu[h] <= emu_sets[h] for h in range(nh))
            seen = sum(tree[h] in gpu[h] for h in range(nh))
            print("%-26s S=%-2d covered %2d of %d, default order's value "
                  "seen %2d of %d" % (label, s, covered, nh, seen, nh),
                  flush=True)


if __name__ == "__main__":
    main()

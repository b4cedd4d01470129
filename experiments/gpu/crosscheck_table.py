#!/usr/bin/env python3
"""crosscheck_table.py -- the tables of run_crosscheck.sh's results.

usage: crosscheck_table.py OUTDIR

Reads the reports run_crosscheck.sh leaves under OUTDIR (bf16emu diff
--json, fa_dump and dump_sdpa.py manifests) and prints Markdown tables:
fa_dump against the fa2 policy stage by stage, PyTorch's flash kernel
against fa2 (O, LSE, the bias of O) and against fa_dump, and the trace of
the N = 1024 case.  Standard library only.
"""
import glob
import json
import os
import sys

STAGES = ["s", "m", "p", "l", "acc", "o", "lse"]
VARIANTS = ["plain", "ffma", "rcp", "ffma_rcp"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def shape_str(j):
    s = j["shape"]
    return "%d·%d·%d·%d·%d" % (s["batch"], s["heads"], s["nq"], s["nk"],
                               s["d"])


def stage_map(j):
    return {st["stage"]: st for st in j.get("stages", [])}


def frac(st):
    if st is None:
        return "–"
    if st["equal"] == st["elements"]:
        return "**all %d**" % st["elements"]
    return "%d/%d" % (st["equal"], st["elements"])


def fa_table(title, d):
    files = sorted(glob.glob(os.path.join(d, "*.diff.json")))
    if not files:
        return
    print("\n### %s\n" % title)
    print("| case | B·H·Nq·Nk·d | causal | fix | " + " | ".join(STAGES)
          + " | first divergent |")
    print("|---" * (len(STAGES) + 5) + "|")
    n_all = 0
    for f in files:
        name = os.path.basename(f)[:-len(".diff.json")]
        j = load(f)
        if j is None:
            err = open(f[:-len(".json")] + ".err").read().strip()
            print("| %s | (diff failed: %s) |" % (name, err[:80]))
            continue
        m = stage_map(j)
        every = all(m.get(s) is not None and m[s]["equal"] == m[s]["elements"]
                    for s in STAGES)
        n_all += every
        print("| %s | %s | %s | %s | %s | %s |" % (
            name, shape_str(j), "yes" if j["causal"] else "no",
            j.get("fix", "none"),
            " | ".join(frac(m.get(s)) for s in STAGES),
            j.get("first_divergent_stage") or "none"))
    print("\n%d of %d cases bit-equal in every stage" % (n_all, len(files)))


def bias_str(st, who):
    ex = st.get("exact") if st else None
    if not ex:
        return "–"
    b = ex[who]
    return "%.4g ± %.2g" % (b["mean"], b["se"])


def sdpa_table(d):
    files = sorted(glob.glob(os.path.join(d, "*.diff.json")))
    if not files:
        return
    print("\n### PyTorch SDPA (flash) against fa2 + ex2-sm90, and against "
          "fa_dump\n")
    print("| case | B·H·Nq·Nk·d | causal | gen | kernel | O | LSE | LSE max "
          "ulp | fa_dump O = SDPA O: plain | ffma | rcp | ffma+rcp | O bias "
          "GPU (bf16 ulp) | O bias emulator |")
    print("|---" * 15 + "|")
    n_o = 0
    for f in files:
        name = os.path.basename(f)[:-len(".diff.json")]
        j = load(f)
        man = load(os.path.join(d, name + ".json")) or {}
        kern = man.get("forward_kernels", [])
        kname = "flash" if any("flash_fwd_kernel" in k for k in kern) else "?"
        if any("splitkv" in k for k in kern):
            kname = "SPLIT-KV"
        cmp = []
        for v in VARIANTS:
            fm = load(os.path.join(d, "%s.fa_%s.json" % (name, v)))
            c = fm.get("compare_o") if fm else None
            cmp.append("%d/%d" % (c["equal"], c["of"]) if c else "–")
        if j is None:
            print("| %s | (diff failed) |" % name)
            continue
        m = stage_map(j)
        o, lse = m.get("o"), m.get("lse")
        n_o += o is not None and o["equal"] == o["elements"]
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
              % (name, shape_str(j), "yes" if j["causal"] else "no",
                 man.get("gen", "?"), kname, frac(o), frac(lse),
                 lse["max_distance"] if lse else "–", " | ".join(cmp),
                 bias_str(o, "gpu"), bias_str(o, "emulator")))
    print("\nO bit-equal on %d of %d cases" % (n_o, len(files)))


def trace_table(d):
    for v in VARIANTS:
        j = load(os.path.join(d, "fa_%s.diff.json" % v))
        fm = load(os.path.join(d, "fa_%s.json" % v))
        if j is None:
            continue
        m = stage_map(j)
        c = fm.get("compare_o") if fm else None
        print("\n### trace, fa_dump %s on d64_n1024_normal_s1\n" % v)
        print("stages: " + ", ".join("%s %s" % (s, frac(m.get(s)))
                                     for s in STAGES))
        print("first divergent stage: %s" % j.get("first_divergent_stage"))
        for t in j.get("o_trace", []):
            print("  o %s: block %s visit %s stage %s" % (
                t["index"], t["block"], t["visit"], t["stage"]))
        if c:
            print("fa_dump O = SDPA O: %d/%d; differing: %s" % (
                c["equal"], c["of"], c["differ"]))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    fa_table("fa_dump against the fa2 policy (exp ex2-sm90)",
             os.path.join(out, "fa"))
    fa_table("fa_dump fixtures (tests/data/gpu/)",
             os.path.join(out, "fixtures"))
    sdpa_table(os.path.join(out, "sdpa"))
    trace_table(os.path.join(out, "trace"))


if __name__ == "__main__":
    main()

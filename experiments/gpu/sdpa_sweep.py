#!/usr/bin/env python3
"""sdpa_sweep.py -- the PyTorch SDPA (flash backend) cases of the cross-check.

usage: sdpa_sweep.py [--set crosscheck|extended] [--inputs-gen] OUTDIR
                     [NAME ...]

crosscheck (the default): runs dump_sdpa.py's forward (--no-backward)
once per case of CASES, in one process, writing OUTDIR/NAME.safetensors
and OUTDIR/NAME.json.  Every case keeps the FA2 kernel on one KV split on
an H200 (132 SMs): B*H*ceil(NQ/64) >= 212, or a single KV block.  Names
ending in "_bias" are the cases whose O bias is measured against the
exact reference (repeated maxima or a sink, V with a negative mean).

extended: the cases of EXTENDED (split-KV launches up to 128 splits,
decode with one query row, FP16 inputs, d = 8 to 256, causal with
NQ != NK, backward launches with more KV blocks than dQ buffers), the
backward in deterministic mode where a case asks for it (a "bwd_nondet"
case: not), then head 0 kept alone (slice_heads.py; a forward-only case
without dO) so that the fixture stays small; the manifest keeps the
launch shape, the kernels with their grids, the split count and the
backward's dQ buffer count.

With NAMEs, only those cases run.  With --inputs-gen, the cases of
normal scores get dump_sdpa.py --inputs-gen with their seed (the inputs
from fixgen.py, described in the manifest's inputs_gen instead of
stored); the others are made as before.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402
import slice_heads  # noqa: E402

V_NEG = ["--v-mean", "-1.5", "--v-std", "0.4"]

# name, options (heads, N, d, generator, mask, seed)
CASES = [
    ("d64_n1024_normal_s1", ["--heads", "14", "--nq", "1024", "--seed", "1"]),
    ("d64_n1024_normal_causal_s2",
     ["--heads", "14", "--nq", "1024", "--causal", "--seed", "2"]),
    ("d64_n1024_repmax8_s3",
     ["--heads", "14", "--nq", "1024", "--gen", "repeated-max",
      "--repeat", "8", "--seed", "3"] + V_NEG),
    ("d64_n1024_sink_causal_s4",
     ["--heads", "14", "--nq", "1024", "--gen", "sink", "--causal",
      "--seed", "4"] + V_NEG),
    ("d64_n512_normal_s5", ["--heads", "27", "--nq", "512", "--seed", "5"]),
    ("d64_n512_normal_causal_s6",
     ["--heads", "27", "--nq", "512", "--causal", "--seed", "6"]),
    ("d64_n512_repmax4_s7_bias",
     ["--heads", "27", "--nq", "512", "--gen", "repeated-max",
      "--repeat", "4", "--seed", "7"] + V_NEG),
    ("d64_n512_sink_s8_bias",
     ["--heads", "27", "--nq", "512", "--gen", "sink", "--seed", "8"]
     + V_NEG),
    ("d64_n2048_normal_s9", ["--heads", "7", "--nq", "2048", "--seed", "9"]),
    ("d64_n4096_normal_causal_s10",
     ["--heads", "4", "--nq", "4096", "--causal", "--seed", "10"]),
    ("d64_n128_normal_s11", ["--heads", "4", "--nq", "128", "--seed", "11"]),
    ("d64_n256_normal_causal_s12",
     ["--heads", "53", "--nq", "256", "--causal", "--seed", "12"]),
    ("d128_n1024_normal_s13",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--seed", "13"]),
    ("d128_n1024_normal_causal_s14",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--causal",
      "--seed", "14"]),
    ("d128_n1024_repmax8_s15",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--gen",
      "repeated-max", "--repeat", "8", "--seed", "15"] + V_NEG),
    ("d128_n1024_sink_causal_s16",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--gen", "sink",
      "--causal", "--seed", "16"] + V_NEG),
    ("d128_n512_normal_s17",
     ["--d", "128", "--heads", "27", "--nq", "512", "--seed", "17"]),
    ("d128_n512_sink_s18_bias",
     ["--d", "128", "--heads", "27", "--nq", "512", "--gen", "sink",
      "--seed", "18"] + V_NEG),
    ("d128_n512_repmax4_causal_s19",
     ["--d", "128", "--heads", "27", "--nq", "512", "--gen",
      "repeated-max", "--repeat", "4", "--causal", "--seed", "19"] + V_NEG),
    ("d128_n2048_normal_causal_s20",
     ["--d", "128", "--heads", "7", "--nq", "2048", "--causal",
      "--seed", "20"]),
    ("d128_nq128_nk64_normal_s21",
     ["--d", "128", "--heads", "4", "--nq", "128", "--nk", "64",
      "--seed", "21"]),
    ("d128_n256_normal_s22",
     ["--d", "128", "--heads", "53", "--nq", "256", "--seed", "22"]),
]




# name, options, backward; of every case's B*H heads, batch 0 head 0 is
# kept.  Split-KV: B*H*ceil(NQ/64) below 212 (0.8 x 2 x 132 SMs), the
# split count then set mostly by the number of KV blocks (256/128/64 keys
# at d <= 64 / 128 / 256): the expected count is in the name.  The other
# cases use 53 heads of 128 rows (106 query blocks): one split wherever
# the keys fit one KV block, else the heuristic's count (the manifest
# records it).
SINGLE = ["--heads", "53", "--nq", "128"]
EXTENDED = [
    # split-KV: one head (or 20 heads of 128 rows), 64 query rows
    ("split_d64_s2", ["--heads", "1", "--nq", "64", "--nk", "512",
                      "--seed", "101"], False),
    ("split_d64_s3", ["--heads", "1", "--nq", "64", "--nk", "768",
                      "--seed", "102"], False),
    ("split_d64_s5", ["--heads", "1", "--nq", "64", "--nk", "1280",
                      "--seed", "103"], False),
    ("split_d64_s2_fp16", ["--dtype", "fp16", "--heads", "1", "--nq", "64",
                           "--nk", "512", "--seed", "104"], False),
    ("split_d64_h20_s2", ["--heads", "20", "--nq", "128", "--nk", "512",
                          "--seed", "105"], False),
    ("split_d64_s4_causal", ["--heads", "1", "--nq", "64", "--nk", "1024",
                             "--causal", "--seed", "106"], False),
    ("split_d32_s4_sink", ["--d", "32", "--heads", "1", "--nq", "64",
                           "--nk", "1024", "--gen", "sink", "--seed", "107"]
     + V_NEG, False),
    ("split_d128_s2", ["--d", "128", "--heads", "1", "--nq", "64",
                       "--nk", "256", "--seed", "108"], False),
    ("split_d128_s4_repmax", ["--d", "128", "--heads", "1", "--nq", "64",
                              "--nk", "512", "--gen", "repeated-max",
                              "--repeat", "4", "--seed", "109"] + V_NEG,
     False),
    ("split_d128_s6", ["--d", "128", "--heads", "1", "--nq", "64",
                       "--nk", "768", "--seed", "110"], False),
    ("split_d256_s2", ["--d", "256", "--heads", "1", "--nq", "64",
                       "--nk", "128", "--seed", "111"], False),
    ("split_d256_s4", ["--d", "256", "--heads", "1", "--nq", "64",
                       "--nk", "256", "--seed", "112"], False),
    ("split_d32_s2", ["--d", "32", "--heads", "1", "--nq", "64",
                      "--nk", "512", "--seed", "113"], False),
    # decode: one query row, 8 heads (B*H = 8)
    ("decode_d64_nk512", ["--heads", "8", "--nq", "1", "--nk", "512",
                          "--seed", "121"], False),
    ("decode_d64_nk1024", ["--heads", "8", "--nq", "1", "--nk", "1024",
                           "--seed", "122"], False),
    ("decode_d64_nk2048", ["--heads", "8", "--nq", "1", "--nk", "2048",
                           "--seed", "123"], False),
    ("decode_d32_nk4096", ["--d", "32", "--heads", "8", "--nq", "1",
                           "--nk", "4096", "--seed", "124"], False),
    ("decode_d16_nk16384", ["--d", "16", "--heads", "8", "--nq", "1",
                            "--nk", "16384", "--seed", "125"], False),
    ("decode_d128_nk512_b2", ["--d", "128", "--batch", "2", "--heads", "4",
                              "--nq", "1", "--nk", "512", "--seed", "126"],
     False),
    ("decode_d64_nk1024_fp16_sink", ["--dtype", "fp16", "--heads", "8",
                                     "--nq", "1", "--nk", "1024", "--gen",
                                     "sink", "--seed", "127"] + V_NEG,
     False),
    ("decode_d32_nk1024_fp16", ["--dtype", "fp16", "--d", "32", "--heads",
                                "8", "--nq", "1", "--nk", "1024", "--seed",
                                "128"], False),
    # FP16, one split, with the backward
    ("fp16_d64_normal", ["--dtype", "fp16", "--seed", "131"] + SINGLE, True),
    ("fp16_d64_sink", ["--dtype", "fp16", "--gen", "sink", "--seed", "132"]
     + SINGLE + V_NEG, True),
    ("fp16_d64_repmax8", ["--dtype", "fp16", "--gen", "repeated-max",
                          "--repeat", "8", "--seed", "133"] + SINGLE + V_NEG,
     True),
    ("fp16_d64_sink_causal", ["--dtype", "fp16", "--gen", "sink", "--causal",
                              "--seed", "134"] + SINGLE + V_NEG, True),
    ("fp16_d128_normal_causal", ["--dtype", "fp16", "--d", "128", "--causal",
                                 "--seed", "135"] + SINGLE, True),
    ("fp16_d32_sink", ["--dtype", "fp16", "--d", "32", "--gen", "sink",
                       "--seed", "137"] + SINGLE + V_NEG, True),
    # head dimensions 32, 96, 160, 256, one split
    ("d32_normal", ["--d", "32", "--seed", "141"] + SINGLE, True),
    ("d32_sink_causal", ["--d", "32", "--gen", "sink", "--causal",
                         "--seed", "142"] + SINGLE + V_NEG, True),
    ("d32_repmax8", ["--d", "32", "--gen", "repeated-max", "--repeat", "8",
                     "--seed", "143"] + SINGLE + V_NEG, True),
    ("d96_normal", ["--d", "96", "--seed", "144"] + SINGLE, True),
    ("d96_repmax4", ["--d", "96", "--gen", "repeated-max", "--repeat", "4",
                     "--seed", "145"] + SINGLE + V_NEG, False),
    ("d160_causal", ["--d", "160", "--causal", "--seed", "146"] + SINGLE,
     True),
    ("d256_normal", ["--d", "256", "--seed", "148"] + SINGLE, True),
    # causal with NQ != NK (bottom-right aligned), one split
    ("causal_d64_nq128_nk256", ["--heads", "53", "--nq", "128", "--nk", "256",
                                "--causal", "--seed", "151"], True),
    ("causal_d64_nq256_nk128", ["--heads", "27", "--nq", "256", "--nk", "128",
                                "--causal", "--seed", "152"], True),
    ("causal_d32_nq64_nk256", ["--d", "32", "--heads", "106", "--nq", "64",
                               "--nk", "256", "--causal", "--seed", "153"],
     True),
    ("causal_d32_nq128_nk64_fp16", ["--dtype", "fp16", "--d", "32",
                                    "--heads", "53", "--nq", "128", "--nk",
                                    "64", "--causal", "--seed", "158"], True),
    ("causal_d128_nq64_nk192", ["--d", "128", "--heads", "106", "--nq", "64",
                                "--nk", "192", "--causal", "--seed", "154"],
     False),
    ("causal_d64_nq192_nk320", ["--heads", "36", "--nq", "192", "--nk", "320",
                                "--causal", "--seed", "155"], False),
    ("causal_d96_nq100_nk300_fp16", ["--dtype", "fp16", "--d", "96",
                                     "--heads", "53", "--nq", "100", "--nk",
                                     "300", "--causal", "--seed", "156"],
     False),
    ("causal_d256_nq128_nk64", ["--d", "256", "--heads", "53", "--nq", "128",
                                "--nk", "64", "--causal", "--seed", "157"],
     False),
    # head dimensions 192 and 224 (kernel instances 192 and 256): 106
    # heads of 128 rows (212 query blocks) keep one split; the split and
    # decode cases one head (8 for decode) of 64 rows (1 row), their keys
    # in 64-key blocks
    ("d192_normal", ["--d", "192", "--heads", "106", "--nq", "128",
                     "--seed", "161"], True),
    ("d224_causal", ["--d", "224", "--heads", "106", "--nq", "128",
                     "--causal", "--seed", "162"], True),
    ("fp16_d192_normal", ["--dtype", "fp16", "--d", "192", "--heads", "106",
                          "--nq", "128", "--seed", "163"], True),
    ("split_d192_s6", ["--d", "192", "--heads", "1", "--nq", "64",
                       "--nk", "384", "--seed", "164"], False),
    ("split_d224_s4", ["--d", "224", "--heads", "1", "--nq", "64",
                       "--nk", "256", "--seed", "165"], False),
    ("decode_d192_nk192", ["--d", "192", "--heads", "8", "--nq", "1",
                           "--nk", "192", "--seed", "166"], False),
    # more than 32 splits (the combine kernel's 64- and 128-split
    # instances): one head of 64 rows, the keys in blocks of 256 (d <= 64);
    # 128 blocks give the heuristic's cap, 40 blocks 40 splits
    ("split_d8_s128", ["--d", "8", "--heads", "1", "--nq", "64",
                       "--nk", "32768", "--seed", "171"], False),
    ("split_d16_s40", ["--d", "16", "--heads", "1", "--nq", "64",
                       "--nk", "10240", "--seed", "172"], False),
    # FP16 split-KV and decode at d = 128 and 256
    ("split_d128_s4_fp16", ["--dtype", "fp16", "--d", "128", "--heads", "1",
                            "--nq", "64", "--nk", "512", "--seed", "173"],
     False),
    ("split_d256_s4_fp16_sink", ["--dtype", "fp16", "--d", "256", "--heads",
                                 "1", "--nq", "64", "--nk", "256", "--gen",
                                 "sink", "--seed", "174"] + V_NEG, False),
    ("decode_d128_nk512_fp16", ["--dtype", "fp16", "--d", "128", "--heads",
                                "8", "--nq", "1", "--nk", "512", "--seed",
                                "175"], False),
    ("decode_d256_nk384_fp16_repmax", ["--dtype", "fp16", "--d", "256",
                                       "--heads", "8", "--nq", "1", "--nk",
                                       "384", "--gen", "repeated-max",
                                       "--repeat", "4", "--seed", "176"]
     + V_NEG, False),
    # the deterministic backward with more KV blocks than dQ buffers
    # (ceil(132 / (B H)) of them: 2 for 66 heads, 3 for 44), and the
    # non-deterministic one (one buffer, atomicAdd from every KV block),
    # each backward run several times on the same inputs
    ("bwd_det_d64_h66_nk384", ["--heads", "66", "--nq", "128", "--nk", "384",
                               "--seed", "181", "--backward-runs", "3"],
     True),
    ("bwd_det_d32_h66_nk512_fp16", ["--dtype", "fp16", "--d", "32",
                                    "--heads", "66", "--nq", "128", "--nk",
                                    "512", "--seed", "182",
                                    "--backward-runs", "3"], True),
    ("bwd_det_d128_b2h22_causal", ["--d", "128", "--batch", "2", "--heads",
                                   "22", "--nq", "64", "--nk", "512",
                                   "--causal", "--seed", "183",
                                   "--backward-runs", "3"], True),
    # the same with mirrored KV blocks (dump_sdpa.py --gen mirror): block
    # n + G the mirror of block n for G dQ buffers, so that the buffers'
    # order of addition decides the second half of dQ; 132 heads: one
    # buffer, the KV blocks in ascending order
    ("bwd_det_d64_h66_nk384_mirror", ["--heads", "66", "--nq", "128", "--nk",
                                      "384", "--gen", "mirror",
                                      "--mirror-stride", "2", "--seed",
                                      "185", "--backward-runs", "3"], True),
    ("bwd_det_d128_h44_nk512_mirror_fp16", ["--dtype", "fp16", "--d", "128",
                                            "--heads", "44", "--nq", "64",
                                            "--nk", "512", "--gen", "mirror",
                                            "--mirror-stride", "3",
                                            "--mirror-big", "64",
                                            "--mirror-small", "0.00390625",
                                            "--seed", "186",
                                            "--backward-runs", "3"], True),
    ("bwd_det_d32_h132_nk384_mirror", ["--d", "32", "--heads", "132", "--nq",
                                       "128", "--nk", "384", "--gen",
                                       "mirror", "--mirror-stride", "1",
                                       "--seed", "187", "--backward-runs",
                                       "3"], True),
    ("bwd_nondet_d64_h4_nk384_mirror", ["--heads", "4", "--nq", "128",
                                        "--nk", "384", "--gen", "mirror",
                                        "--mirror-stride", "2", "--seed",
                                        "188", "--nondeterministic",
                                        "--backward-runs", "20"], True),
    ("bwd_nondet_d64_h4_nk512", ["--heads", "4", "--nq", "128", "--nk",
                                 "512", "--seed", "184", "--nondeterministic",
                                 "--backward-runs", "10"], True),
]


def with_inputs_gen(opts, on):
    """OPTS plus --inputs-gen SEED when ON and the case has normal
    scores."""
    if not on or ("--gen" in opts
                  and opts[opts.index("--gen") + 1] != "normal"):
        return opts
    return opts + ["--inputs-gen", opts[opts.index("--seed") + 1]]


def run_extended(out, only, gen=False):
    """The EXTENDED cases into OUT: dump, then keep head 0."""
    import json
    for name, opts, bwd in EXTENDED:
        if only and name not in only:
            continue
        full = os.path.join(out, name + ".full.safetensors")
        dst = os.path.join(out, name + ".safetensors")
        argv = ["--out", full] + with_inputs_gen(opts, gen) \
            + ([] if bwd else ["--no-backward"])
        print(name, flush=True)
        try:
            dump_sdpa.main(argv)
        except Exception as e:  # a backward the build lacks, say
            print("  failed: %s" % e, flush=True)
            if not bwd:
                continue
            print("  retrying forward only", flush=True)
            dump_sdpa.main(argv + ["--no-backward"])
        # a forward-only case keeps no dO
        slice_heads.slice_one(full, dst, [0], batch=0,
                              drop=() if bwd else ("do",))
        os.unlink(full)
        os.unlink(full[:-len(".safetensors")] + ".json")
        with open(dst[:-len(".safetensors")] + ".json") as f:
            man = json.load(f)
        print("  splits %s (predicted %s), dq buffers %s (predicted %s), "
              "%d bytes" % (
                  man.get("splits"), man.get("splits_predicted"),
                  man.get("dq_buffers"), man.get("dq_buffers_predicted"),
                  os.path.getsize(dst)), flush=True)
        if man.get("backward_repro"):
            print("  backward runs: %s" % json.dumps(man["backward_repro"]),
                  flush=True)


def main():
    args = sys.argv[1:]
    which = "crosscheck"
    if args[:1] == ["--set"] and len(args) >= 2:
        which = args[1]
        args = args[2:]
    gen = args[:1] == ["--inputs-gen"]
    if gen:
        args = args[1:]
    if not args or which not in ("crosscheck", "extended"):
        sys.exit(__doc__)
    out = args[0]
    only = set(args[1:])
    os.makedirs(out, exist_ok=True)
    if which == "extended":
        run_extended(out, only, gen)
        return
    for name, opts in CASES:
        if only and name not in only:
            continue
        argv = ["--out", os.path.join(out, name + ".safetensors"),
                "--no-backward"] + with_inputs_gen(opts, gen)
        print(name, flush=True)
        dump_sdpa.main(argv)


if __name__ == "__main__":
    main()

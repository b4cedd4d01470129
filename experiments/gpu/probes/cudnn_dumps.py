#!/usr/bin/env python3
"""cudnn_dumps.py -- the dumps of tests/data/gpu/cudnn.

usage: cudnn_dumps.py [--inputs-gen] OUTDIR

Runs dump_sdpa.py (in one process) for 11 launches with the cuDNN
backend pinned, or with nothing pinned ("default": PyTorch's own choice),
without the backward: cuDNN's decode engine (Nq = 1) with the lean
reduction (Nk = 600 to 4096, d 64 and 128, BF16 and FP16, a sink case)
and the 64 x 128 forward on longer KV sequences (Nk 512 to 1024, causal
and not, FP16).  The committed files keep batch 0 and the first heads
(one, or two for the two Nk = 1024 decode dumps) without dO.  With
--inputs-gen, the launches of normal scores take their inputs from
fixgen.py (dump_sdpa.py --inputs-gen, with the launch's seed) and the
manifest describes them in inputs_gen instead of storing them.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import dump_sdpa  # noqa: E402

CASES = [
    ("dec_d64_nk1024", "cudnn", "--batch 1 --heads 8 --nq 1 --nk 1024 --d 64"),
    ("dec_d64_nk4096", "cudnn", "--batch 1 --heads 2 --nq 1 --nk 4096 --d 64"),
    ("dec_d128_nk2048", "cudnn",
     "--batch 1 --heads 2 --nq 1 --nk 2048 --d 128"),
    ("dec_d128_nk600", "cudnn", "--batch 1 --heads 4 --nq 1 --nk 600 --d 128"),
    ("dec_d64_nk1000_sink", "cudnn",
     "--batch 1 --heads 4 --nq 1 --nk 1000 --d 64 --gen sink --v-mean -1.5 "
     "--v-std 0.4"),
    ("dec_d64_nk1024_fp16", "cudnn",
     "--batch 1 --heads 4 --nq 1 --nk 1024 --d 64 --dtype fp16"),
    ("dec_d64_nk1024_default", "default",
     "--batch 1 --heads 8 --nq 1 --nk 1024 --d 64"),
    ("mb_d64_nq256_nk1024", "cudnn",
     "--batch 1 --heads 2 --nq 256 --nk 1024 --d 64"),
    ("mb_d128_causal_512", "cudnn",
     "--batch 1 --heads 2 --nq 512 --nk 512 --d 128 --causal"),
    ("mb_d64_fp16_nq128_nk768", "cudnn",
     "--batch 1 --heads 2 --nq 128 --nk 768 --d 64 --dtype fp16"),
    ("mb_d64_default_nq128_nk512", "default",
     "--batch 1 --heads 4 --nq 128 --nk 512 --d 64 --seed 7"),
]


def main():
    args_in = sys.argv[1:]
    gen = args_in[:1] == ["--inputs-gen"]
    if gen:
        args_in = args_in[1:]
    if len(args_in) != 1:
        sys.exit(__doc__)
    for name, be, args in CASES:
        t = time.time()
        opts = ["--seed", "11"] + args.split()
        seed = opts[len(opts) - 1 - opts[::-1].index("--seed") + 1]
        if gen and "--gen" not in opts:
            opts += ["--inputs-gen", seed]
        dump_sdpa.main(["--out", os.path.join(args_in[0],
                                              name + ".safetensors"),
                        "--backend", be, "--no-backward"] + opts)
        print(name, "%.1f s" % (time.time() - t), flush=True)


if __name__ == "__main__":
    main()

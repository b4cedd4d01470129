#!/usr/bin/env python3
"""flex_capture_decode.py -- capture.py on FlexAttention calls whose
launch inductor decides at run time.

    python3 experiments/gpu/probes/flex_capture_decode.py OUT \\
        [--keep-recompile-limit]

A small module runs four torch.compile'd flex_attention calls of
flex_dump.py's cases (forward and backward) while capture.Capture records
them through Capture.flex_attention: flex_decoding launches whose merge is
a persistent reduction that inductor configures by timing (16 and 32
programs), one whose merge is a looped reduction (88 programs), and a
prefill call.  The capture (OUT/cap_flex_decode.safetensors) keeps some
heads of each call (whole groups of the grouped one: the launch is the
call's, the file small) with their inputs, O, LSE, dO, dQ, dK, dV, mask
and the grids and blocks of the forward and backward kernels, so that

    bf16emu diff --dump OUT/cap_flex_decode.safetensors --call L0.s0 \\
        --stage o,lse,dq,dk,dv --no-exact

checks call L0.s0 with no other input: the split count and the merge's
configuration come from the recorded launch.  OUT/cap_flex_decode.log.json
says what was recorded and skipped.

Each call compiles its own graph (and the recorded calls, which ask for
the LSE, others again), more than dynamo's default recompile limit
allows; past it flex_attention runs its unfused implementation.  The
probe raises the limit, as flex_dump.py does; with
--keep-recompile-limit it leaves the default, and the calls that fall
back must be skipped by the capture ("flex: unfused"), not recorded as
the Triton kernel's.
"""
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import capture  # noqa: E402
import flex_dump  # noqa: E402
import sdpa_gqa_mask as sgm  # noqa: E402

CASES = ["flex_dec_win_h16", "flex_dec_win_h32_kv8_nq2", "flex_dec_win_h3",
         "flex_window128"]


class Attn(torch.nn.Module):
    """One flex_attention call of case C on fixed inputs."""

    def __init__(self, c, owner):
        super().__init__()
        self.c = c
        self.owner = owner
        dev = torch.device("cuda")
        q, k, v, do = sgm.gen_inputs(c)
        self.q = torch.nn.Parameter(q.to(dev))
        self.k = torch.nn.Parameter(k.to(dev))
        self.v = torch.nn.Parameter(v.to(dev))
        self.register_buffer("do", do.to(dev))
        mask_mod, score_mod, _ = flex_dump.mods(c, dev)
        self.score_mod = score_mod
        self.bm = None
        if mask_mod is not None:
            from torch.nn.attention import flex_attention as fa
            self.bm = fa.create_block_mask(mask_mod, None, None, c["nq"],
                                           c["nk"], device="cuda",
                                           BLOCK_SIZE=128)

    def forward(self):
        o = self.owner.flex(self.q, self.k, self.v, block_mask=self.bm,
                            score_mod=self.score_mod,
                            enable_gqa=self.c["heads"] != self.c["kv_heads"])
        return (o.float() * self.do.float()).sum()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        cases = dict(flex_dump.CASES)
        self.flex = None
        self.layers = torch.nn.ModuleList(
            [Attn(cases[n], self) for n in CASES])

    def forward(self):
        return sum(layer() for layer in self.layers)


def main():
    args = sys.argv[1:]
    keep_limit = "--keep-recompile-limit" in args
    args = [a for a in args if a != "--keep-recompile-limit"]
    if len(args) != 1:
        sys.exit("usage: flex_capture_decode.py OUT [--keep-recompile-limit]")
    out = args[0]
    os.makedirs(out, exist_ok=True)
    if not keep_limit:
        for knob in ("recompile_limit", "cache_size_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 1 << 20)
    from torch.nn.attention.flex_attention import flex_attention
    t0 = time.time()
    model = Model()
    compiled = torch.compile(flex_attention, dynamic=False)
    model.flex = compiled
    model().backward()          # compile and autotune once
    model.zero_grad(set_to_none=True)
    cap = capture.Capture(model, batch=[0], backward=True, grads=True,
                          profile=False, budget_bytes=200 << 20,
                          heads={0: [0, 1], 1: [0, 1, 2, 3], 2: [0, 1],
                                 3: [1]})
    model.flex = cap.flex_attention(compiled)
    with cap.recording(step=0):
        loss = model()
    loss.backward()
    torch.cuda.synchronize()
    files = cap.save(os.path.join(out, "cap_flex_decode"), sidecar=False,
                     extra={"cases": CASES})
    log = {"cases": CASES, "keep_recompile_limit": keep_limit,
           "files": [os.path.basename(f) for f in files],
           "skipped": cap.skipped, "seen": cap.seen,
           "calls": len(cap.calls), "seconds": time.time() - t0,
           "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0)}
    with open(os.path.join(out, "cap_flex_decode.log.json"), "w") as f:
        json.dump(log, f, indent=1, default=str)
    print(json.dumps(log, default=str))


if __name__ == "__main__":
    main()

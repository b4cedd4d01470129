#!/usr/bin/env python3
"""flex_capture_decode.py -- capture.py on FlexAttention calls whose
launch inductor decides at run time.

    python3 experiments/gpu/probes/flex_capture_decode.py OUT

A small module runs four torch.compile'd flex_attention calls of
flex_dump.py's cases (forward and backward) while capture.Capture records
them through Capture.flex_attention: flex_decoding launches whose merge is
a persistent reduction that inductor configures by timing (16 and 32
programs), one whose merge is a looped reduction (88 programs), and a
prefill call.  The capture (OUT/cap_flex_decode.safetensors) keeps each
call's inputs, O, LSE, dO, dQ, dK, dV, mask and the grids and blocks of
its forward and backward kernels, so that

    bf16emu diff --dump OUT/cap_flex_decode.safetensors --call N \\
        --stage o,lse,dq,dk,dv --no-exact

checks call N with no other input: the merge's configuration comes from
the recorded launch.  OUT/cap_flex_decode.log.json says what was
recorded and skipped.
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
    if len(sys.argv) != 2:
        sys.exit("usage: flex_capture_decode.py OUT")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    from torch.nn.attention.flex_attention import flex_attention
    t0 = time.time()
    model = Model()
    compiled = torch.compile(flex_attention, dynamic=False)
    model.flex = compiled
    model().backward()          # compile and autotune once
    model.zero_grad(set_to_none=True)
    cap = capture.Capture(model, batch=[0], backward=True, grads=True,
                          profile=False, budget_bytes=200 << 20)
    model.flex = cap.flex_attention(compiled)
    with cap.recording(step=0):
        loss = model()
    loss.backward()
    torch.cuda.synchronize()
    files = cap.save(os.path.join(out, "cap_flex_decode"), sidecar=False,
                     extra={"cases": CASES})
    log = {"cases": CASES, "files": [os.path.basename(f) for f in files],
           "skipped": cap.skipped, "seen": cap.seen,
           "calls": len(cap.calls), "seconds": time.time() - t0,
           "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0)}
    with open(os.path.join(out, "cap_flex_decode.log.json"), "w") as f:
        json.dump(log, f, indent=1, default=str)
    print(json.dumps(log, default=str))


if __name__ == "__main__":
    main()

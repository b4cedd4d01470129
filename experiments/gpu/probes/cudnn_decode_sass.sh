#!/bin/sh
# cudnn_decode_sass.sh OUT -- the SASS of cuDNN's decode engine, as run.
#
# Runs three SDPA calls pinned to cuDNN that take its 16 x 128 decode
# engine and its split merge, lean_reduction_kernel (Nq 1: Nk 4,096, d 64,
# 16 heads in BF16 and in FP16; Nk 16,384, d 128, 8 heads in BF16) under
# Nsight Compute, and writes the executed kernels' SASS with each
# instruction's execution count (ncu's source page) to
# OUT/cudnn_decode_sass.csv and the launches to OUT/cudnn_decode_ncu.txt.
# The engine's and the merge's orders of operations are read from that
# SASS (doc/gpu-crosscheck.md, "cuDNN decode engine: the machine code");
# the SASS is NVIDIA's code: read, never stored.
set -u
out=${1:?usage: cudnn_decode_sass.sh OUT}
mkdir -p "$out"
call=$(mktemp /tmp/cudnn_decode_call.XXXXXX.py)
cat > "$call" <<'PY'
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(1)
for dt, h, nk, d in ((torch.bfloat16, 16, 4096, 64),
                     (torch.float16, 16, 4096, 64),
                     (torch.bfloat16, 8, 16384, 128)):
    q = torch.randn(1, h, 1, d, device="cuda", dtype=dt)
    k = torch.randn(1, h, nk, d, device="cuda", dtype=dt)
    v = torch.randn(1, h, nk, d, device="cuda", dtype=dt)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
print("ok", o.shape)
PY
ncu --clock-control none -k 'regex:fprop|lean_reduction' -c 6 \
    python3 "$call" > "$out/cudnn_decode_ncu.txt" 2>&1
ncu --clock-control none -k 'regex:fprop|lean_reduction' -c 6 \
    --section SourceCounters \
    --page source --print-source sass --csv \
    python3 "$call" > "$out/cudnn_decode_sass.csv" 2> "$out/cudnn_decode_sass.err"
rc=$?
rm -f "$call"
exit $rc

#!/bin/sh
# cudnn_decode_sass.sh OUT -- the SASS of cuDNN's decode engine, as run.
#
# Runs two SDPA calls pinned to cuDNN that take its 16 x 128 decode engine
# (Nq 1, Nk 4,096, d 64, 16 heads; BF16, then FP16) under Nsight Compute,
# and writes the executed kernels' SASS (ncu's source page) to
# OUT/cudnn_decode_sass.csv and the kernel names to OUT/cudnn_decode_ncu.txt.
# The order of the accumulator update and the normalisation is read from
# that SASS (doc/gpu-crosscheck.md, "cuDNN decode").
set -u
out=${1:?usage: cudnn_decode_sass.sh OUT}
mkdir -p "$out"
call=$(mktemp /tmp/cudnn_decode_call.XXXXXX.py)
cat > "$call" <<'PY'
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(1)
for dt in (torch.bfloat16, torch.float16):
    q = torch.randn(1, 16, 1, 64, device="cuda", dtype=dt)
    k = torch.randn(1, 16, 4096, 64, device="cuda", dtype=dt)
    v = torch.randn(1, 16, 4096, 64, device="cuda", dtype=dt)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
print("ok", o.shape)
PY
ncu --clock-control none -k regex:fprop -c 2 \
    python3 "$call" > "$out/cudnn_decode_ncu.txt" 2>&1
ncu --clock-control none -k regex:fprop -c 2 --section SourceCounters \
    --page source --print-source sass --csv \
    python3 "$call" > "$out/cudnn_decode_sass.csv" 2> "$out/cudnn_decode_sass.err"
rc=$?
rm -f "$call"
exit $rc

#!/bin/sh
# test_chain.sh -- the FA2 chain against the H200: bf16emu attn --policy
# fa2 runs its own forward (O, LSE, the built-in description's lg2-sm90 log
# and ex2-sm90 exp, split-KV through the combine's CUDA expf and logf) and
# the backward from that O and LSE; O, LSE, dQ, dK and dV must equal the
# flash kernel's bit for bit on a few PyTorch 2.11 dumps (non-split, causal
# with a sink, causal Nq != Nk, split-KV with d = 160 and 256, d = 192 and
# 224 on one split, FP16 with d = 64 and 192; FP16 outputs compared in
# FP16), and the forward tile the emulator reports must be the one the
# manifest's kernel name gives (Flash_fwd_kernel_traits<d, kBlockM,
# kBlockN, ...>, of the split kernel where there is one).  A differing
# element prints as its index and both bit patterns.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_attn_inputs
gpu=$srcdir/tests/data/gpu
# the one-pass or split forward kernel's name: \2 kBlockM, \3 kBlockN
traits='.*flash_fwd_\(splitkv_\)\{0,1\}kernel<Flash_fwd_kernel_traits<'
traits=$traits'[0-9]*, \([0-9]*\), \([0-9]*\),.*'

for f in sdpa_h200_d64 sdpa_h200_d64_sink_causal sdpa_ext/causal_d64_nq256_nk128 \
    sdpa_ext/d160_causal sdpa_ext/d256_normal sdpa_ext/d192_normal \
    sdpa_ext/d224_causal sdpa_ext/fp16_d64_normal sdpa_ext/fp16_d192_normal; do
    F=$gpu/$f.safetensors
    m=$gpu/$f.json
    sp=1
    if "$JSONQ" "$m" splits >/dev/null 2>&1; then
        sp=$("$JSONQ" "$m" splits)
    fi
    causal=
    if [ "$("$JSONQ" "$m" causal)" = true ]; then
        causal=--causal
    fi
    run attn --policy fa2 --q "$F:q" --k "$F:k" --v "$F:v" --do "$F:do" \
        --backward $causal --splits "$sp" --no-exact --json \
        --out "$tmp/emu.safetensors" --force
    expect_rc 0
    # kBlockM and kBlockN of the forward kernel the H200 ran
    set -- $(sed -n "s/$traits/\\2 \\3/p" "$m" | sort -u)
    if [ $# -ne 2 ]; then
        fail "$f: expected one forward kernel in the manifest, got: $*"
        continue
    fi
    expect_jsons exp ex2-sm90 tiles.splits "$sp" tiles.br "$1" tiles.bc "$2"
    if "$ATTN_INPUTS" equal "$tmp/emu.safetensors" "$F" o lse dq dk dv \
        >"$tmp/eq"; then
        pass
    else
        fail "$f: the chain differs from the H200:"
        sed 's/^/    /' "$tmp/eq"
    fi
done

# without the lg2 table fa2 stops: exit 2, the file named, nothing written
F=$gpu/sdpa_h200_d64.safetensors
BF16EMU_LG2_TABLE=$tmp/none.bin.gz
export BF16EMU_LG2_TABLE
run attn --policy fa2 --q "$F:q" --k "$F:k" --v "$F:v" --no-exact \
    --out "$tmp/none.safetensors"
expect_rc 2
expect_err_has "--policy: the description's lg2 log needs the lg2-sm90 table (\$BF16EMU_LG2_TABLE): $tmp/none.bin.gz: cannot open the file"
if [ -e "$tmp/none.safetensors" ]; then fail "written"; else pass; fi
run diff --dump "$F" --stage lse --no-exact
expect_rc 2
expect_err_has "lg2-sm90 table"
unset BF16EMU_LG2_TABLE

finish

#!/bin/sh
# run_probe.sh -- runs the tensor-core probe for its three instruction
# paths (mma, wgmma_ss, wgmma_rs) on the first GPU of this machine.
#
# usage: run_probe.sh OUTDIR [PROBE [PUBFILE]]
#
# PROBE is a built mma_probe; when it is absent or does not start here,
# the probe is compiled with nvcc from this directory into a temporary
# directory.  PUBFILE is the published-vector file that
# check_model --pub-export writes (optional).  OUTDIR receives
# <instr>.safetensors and <instr>.json for each path; the log (GPU and
# driver identification, the probe's output, a count of the tensor-core
# instructions in the binary) goes to standard output.

set -u
out=$1
probe=${2:-}
pub=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== nvidia-smi"
nvidia-smi --query-gpu=name,driver_version,vbios_version,pci.bus_id,clocks.sm,clocks.max.sm --format=csv 2>&1
nvidia-smi 2>&1 | head -20
echo "== nvcc: $(nvcc --version 2>/dev/null | tail -2 | tr '\n' ' ')"

if test -z "$probe" || ! "$probe" --instr mma --out "$tmp" --scale 0.0001 --dry-run >/dev/null 2>&1; then
	echo "== building the probe with nvcc"
	nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
		-Xcompiler -ffp-contract=off -o "$tmp/mma_probe" \
		"$here/mma_probe.cu" "$here/probe_vectors.c" "$here/st_io.c" || exit 1
	probe=$tmp/mma_probe
fi
echo "== probe: $probe"
if command -v cuobjdump >/dev/null 2>&1; then
	cuobjdump --dump-sass "$probe" > "$tmp/sass.txt" 2>&1
	echo "== SASS: HMMA $(grep -c 'HMMA' "$tmp/sass.txt"), HGMMA $(grep -c 'HGMMA' "$tmp/sass.txt")"
	grep -E 'HMMA|HGMMA' "$tmp/sass.txt" | sed 's/^ *//' | sort | uniq -c | head -12
fi

status=0
for instr in mma wgmma_ss wgmma_rs; do
	echo "== $instr"
	if test -n "$pub"; then
		"$probe" --instr $instr --out "$out" --pub "$pub" || status=1
	else
		"$probe" --instr $instr --out "$out" || status=1
	fi
done

if command -v python3 >/dev/null 2>&1; then
	echo "== safetensors check"
	python3 - "$out" <<'EOF' 2>&1
import sys, json
try:
    from safetensors.numpy import load_file
except Exception as e:
    print("safetensors not importable:", e); sys.exit(0)
for n in ("mma", "wgmma_ss", "wgmma_rs"):
    try:
        t = load_file(f"{sys.argv[1]}/{n}.safetensors")
        print(n, len(t), "tensors,", sum(v.size for v in t.values()), "values")
    except Exception as e:
        print(n, "failed:", e)
EOF
fi
exit $status

# test_ls.sh -- bf16emu ls: the keys, dtypes, shapes and byte sizes of
# .safetensors and .npy files written here by hand, their metadata and
# manifests (in the metadata or beside the file), --json, a file far
# larger than memory listed from its header alone, and the errors (exit 2,
# the file named, nothing on stdout)
#
# The expected sizes are worked out in the comments from the headers
# written here: bytes = elements x the dtype's size.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq

d=$tmp/d
mkdir "$d" || exit 99

# le8 N: N as 8 little-endian bytes, as printf octal escapes
le8()
{
    _v=$1 _f= _i=0
    while [ $_i -lt 8 ]; do
        _f="$_f\\$(((_v & 255) >> 6 & 7))$(((_v & 255) >> 3 & 7))$((_v & 7))"
        _v=$((_v >> 8))
        _i=$((_i + 1))
    done
    printf '%s\n' "$_f"
}

# st FILE HEADER DATA_BYTES: a safetensors file: the 8-byte length of
# HEADER (padded with blanks to a multiple of 8), HEADER, then DATA_BYTES
# zero bytes
st()
{
    _h=$2
    while [ $((${#_h} % 8)) -ne 0 ]; do
        _h="$_h "
    done
    {
        # shellcheck disable=SC2059
        printf "$(le8 ${#_h})"
        printf '%s' "$_h"
        head -c "$3" /dev/zero
    } >"$1"
}

# A dump of attention inputs: q, k, v BF16 [1, 2, 4, 8] (64 elements,
# 128 bytes each), lse F32 [1, 2, 4] (8 elements, 32 bytes); data 416
# bytes.  The metadata holds a manifest and one more entry.
man='{\"gpu\": \"NVIDIA H200\", \"causal\": true, \"seed\": 7, \"shape\": {\"batch\": 1, \"heads\": 2, \"nq\": 4, \"nk\": 4, \"d\": 8}, \"kernels\": [\"a\", \"b\", \"c\"], \"scale\": 0.125}'
hdr='{"__metadata__":{"format":"pt","manifest":"'$man'"},'
hdr=$hdr'"q":{"dtype":"BF16","shape":[1,2,4,8],"data_offsets":[0,128]},'
hdr=$hdr'"k":{"dtype":"BF16","shape":[1,2,4,8],"data_offsets":[128,256]},'
hdr=$hdr'"v":{"dtype":"BF16","shape":[1,2,4,8],"data_offsets":[256,384]},'
hdr=$hdr'"lse":{"dtype":"F32","shape":[1,2,4],"data_offsets":[384,416]}}'
st "$d/dump.safetensors" "$hdr" 416
hlen=${#hdr}
while [ $((hlen % 8)) -ne 0 ]; do hlen=$((hlen + 1)); done
size=$((8 + hlen + 416))

run ls "$d/dump.safetensors"
expect_rc 0
expect_no_stderr
expect_line "$d/dump.safetensors: .safetensors, 4 tensors, $size bytes (header $((8 + hlen)))"
expect_line "  key  dtype  shape         bytes"
expect_line "  q    BF16   [1, 2, 4, 8]  128"
expect_line "  k    BF16   [1, 2, 4, 8]  128"
expect_line "  v    BF16   [1, 2, 4, 8]  128"
expect_line "  lse  F32    [1, 2, 4]     32"
expect_line "  metadata:"
expect_line "    format: pt"
expect_line '  manifest (__metadata__ "manifest"):'
expect_line "    gpu:      NVIDIA H200"
expect_line "    causal:   true"
expect_line "    seed:     7"
expect_line "    shape:    {batch: 1, heads: 2, nq: 4, nk: 4, d: 8}"
expect_line "    kernels:  [3 items]"
expect_line "    scale:    0.125"

run ls --json "$d/dump.safetensors"
expect_rc 0
expect_jsons files.0.path "$d/dump.safetensors" files.0.format safetensors \
    files.0.bytes $size files.0.header_bytes $((8 + hlen)) \
    files.0.tensors '[4]' files.0.tensors.0.key q \
    files.0.tensors.0.dtype BF16 files.0.tensors.0.shape.3 8 \
    files.0.tensors.0.elements 64 files.0.tensors.0.bytes 128 \
    files.0.tensors.0.offset $((8 + hlen)) \
    files.0.tensors.3.key lse files.0.tensors.3.dtype F32 \
    files.0.tensors.3.elements 8 files.0.tensors.3.bytes 32 \
    files.0.tensors.3.offset $((8 + hlen + 384)) \
    files.0.metadata.format pt files.0.metadata '{1}' \
    files.0.manifest.from __metadata__ \
    files.0.manifest.fields.gpu "NVIDIA H200" \
    files.0.manifest.fields.shape.nq 4 files.0.manifest.fields.kernels.2 c

# npy FILE DICT DATA_BYTES: a version 1.0 .npy file: the magic, the
# version, the 2-byte length of DICT (padded with blanks and a newline to
# a multiple of 64 with the 10 bytes before it), DICT, DATA_BYTES zeros
npy()
{
    _h=$2
    while [ $(((10 + ${#_h} + 1) % 64)) -ne 0 ]; do _h="$_h "; done
    _n=$((${#_h} + 1))
    {
        printf '\223NUMPY\001\000'
        # shellcheck disable=SC2059
        printf "\\$((_n >> 6 & 3))$((_n >> 3 & 7))$((_n & 7))\\000"
        printf '%s\n' "$_h"
        head -c "$3" /dev/zero
    } >"$1"
}

# A .npy file of '<u2' (BF16 patterns) [3, 5]: 15 elements, 30 bytes; the
# dict of 60 bytes makes a 128-byte header; a manifest beside it (x.json).
npy "$d/x.npy" "{'descr': '<u2', 'fortran_order': False, 'shape': (3, 5), }" 30
printf '{"producer": "a script", "dtype": "bfloat16"}\n' >"$d/x.json"
run ls "$d/x.npy"
expect_rc 0
expect_line "$d/x.npy: .npy 1.0, one array, 158 bytes (header 128)"
expect_line "  key  dtype        shape   bytes"
expect_line "  -    U16 ('<u2')  [3, 5]  30"
expect_line "  manifest ($d/x.json):"
expect_line "    producer:  a script"
run ls --json "$d/x.npy" "$d/dump.safetensors"
expect_rc 0
expect_jsons files '[2]' files.0.format npy files.0.npy_version 1.0 \
    files.0.descr '<u2' files.0.fortran_order false \
    files.0.tensors.0.key null files.0.tensors.0.dtype U16 \
    files.0.tensors.0.shape '[2]' files.0.tensors.0.bytes 30 \
    files.0.tensors.0.offset 128 files.0.manifest.from "$d/x.json" \
    files.0.manifest.fields.dtype bfloat16 files.1.tensors.1.key k
# a sidecar that is not JSON is reported, and the listing goes on
printf 'not json\n' >"$d/x.json"
run ls "$d/x.npy"
expect_rc 0
expect_line "  manifest ($d/x.json): not valid JSON"
rm -f "$d/x.json"
run ls "$d/x.npy"
expect_no_line "  manifest ($d/x.json): not valid JSON"
# Fortran order and raw bytes are listed (the readers refuse or need a
# dtype for them)
npy "$d/raw.npy" "{'descr': '|V2', 'fortran_order': True, 'shape': (2,), }" 4
run ls "$d/raw.npy"
expect_rc 0
expect_line "$d/raw.npy: .npy 1.0, one array in Fortran order, 132 bytes (header 128)"
expect_line "  -    raw ('|V2')  [2]    4"

# A file of 64 GiB (sparse): F32 [131072, 131072] is 2^34 elements, 2^36
# bytes.  It is listed from its header, never read.
hdr='{"w":{"dtype":"F32","shape":[131072,131072],"data_offsets":[0,68719476736]}}'
st "$d/big.safetensors" "$hdr" 0
if truncate -s $((8 + 80 + 68719476736)) "$d/big.safetensors" 2>/dev/null
then
    run ls "$d/big.safetensors"
    expect_rc 0
    expect_line "  w    F32    [131072, 131072]  68719476736"
fi
rm -f "$d/big.safetensors"

# Names with odd bytes are escaped; long names widen the column up to 40
hdr='{"a\u0001b":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}'
st "$d/odd.safetensors" "$hdr" 1
run ls "$d/odd.safetensors"
expect_rc 0
expect_line '  a\x01b  U8     []     1'

# ---------------------------------------------------------------------
# Errors: exit 2, the file and the reason, nothing on stdout.
# ---------------------------------------------------------------------
bad "bf16emu ls: expected one or more FILEs" ls
bad "bf16emu ls: expected one or more FILEs" ls --json
bad "bf16emu ls: unknown option '--keys'" ls --keys "$d/x.npy"
bad "bf16emu ls: $d/none.safetensors: cannot open: No such file or directory" \
    ls "$d/x.npy" "$d/none.safetensors"
cp "$d/x.npy" "$d/npy.safetensors"
bad "bf16emu ls: $d/npy.safetensors: not a .safetensors file (it looks like a .npy file;" \
    ls "$d/dump.safetensors" "$d/npy.safetensors"
cp "$d/dump.safetensors" "$d/st.npy"
bad "bf16emu ls: $d/st.npy: magic: expected \"\\x93NUMPY\" (not a .npy file; it looks like a .safetensors file)" \
    ls "$d/st.npy"
printf 'q,k,v\n' >"$d/t.csv"
bad "bf16emu ls: $d/t.csv: not a .safetensors file (it looks like a text file;" \
    ls "$d/t.csv"
bad "bf16emu ls: operand 1: empty file name" ls ''

# The example of README.md: each line it shows (but "...") is a line of
# the listing of the committed dump.
if [ -f "$srcdir/tests/data/gpu/sdpa_h200_d64.safetensors" ]; then
    ctx="README.md's example of bf16emu ls"
    (cd "$srcdir" && "$BF16EMU" ls tests/data/gpu/sdpa_h200_d64.safetensors) \
        >"$tmp/out" 2>"$tmp/err"
    sed -n '/^\$ bf16emu ls tests\/data\/gpu\/sdpa_h200_d64.safetensors$/,/^```$/p' \
        "$srcdir/README.md" | sed '1d;$d' | grep -v '^ *\.\.\.$' \
        >"$tmp/readme"
    if [ "$(wc -l <"$tmp/readme")" -ge 8 ]; then pass; else
        fail "the example is not in README.md"
    fi
    while IFS= read -r line; do
        expect_line "$line"
    done <"$tmp/readme"
fi

run ls --help
expect_rc 0
expect_line "usage: bf16emu ls [--json] FILE..."
run help ls
expect_rc 0
expect_line "usage: bf16emu ls [--json] FILE..."

finish

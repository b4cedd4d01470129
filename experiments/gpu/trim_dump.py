#!/usr/bin/env python3
"""trim_dump.py -- keep some (batch, head) pairs of an attention dump, or
some rows of its outputs.

usage: trim_dump.py IN.safetensors OUT.safetensors PAIRS
       trim_dump.py --rows FILE.safetensors KEYS
       trim_dump.py --self-check

PAIRS is a comma list of the file's own (batch, head) positions, each
B:H or H (batch 0): "3" keeps head 3 of batch 0, "0:3,1:5" head 3 of
batch 0 and head 5 of batch 1.  Heads are independent in attention, so
the kept pairs are a dump of their own, computed by the GPU exactly as
inside the whole launch (the split count, the dQ buffers and the gemv
orders follow the launch shape, which the manifest keeps).

OUT holds every tensor of IN; those of shape [B, H, ...] (the file's B
and H; [B, N, H, ...] under "layout": "bnhd") keep the pairs, in the
order given, as the heads of batch 1; the others are copied whole.  The
manifest (the safetensors "manifest" metadata, and IN's .json beside it
when there is one, written to OUT's .json) gets:

  shape        batch 1, heads the number of pairs (nq, nk, d unchanged)
  heads_from   the launch's head index of each kept head
  batch_from   the launch's batch index: one integer when every pair
               comes from one batch, else one per kept head
  launch_shape unchanged; added from IN's shape when IN had none
  tensors      the shapes written, when it listed IN's tensors (a list
               of the launch's tensors is left as it is)

Indices already recorded in IN (heads_from, batch_from) are composed, so
a slice of a slice names the launch's heads.  Pure Python 3 (standard
library): the safetensors layout is an 8-byte little-endian header
length, a JSON header, then the data.  On bad input: a one-line message,
exit 2, nothing written.

--rows rewrites FILE (atomically, with its .json beside it when there is
one) keeping only some rows of each output named in KEYS (a comma list of
the file's tensor names: "dq,dk,dv,nd.dq"), and records in the manifest
(analysis/dump_outputs.h has the format):

  outputs_kept.KEY  {"shape": the whole tensor's shape,
                     "rows": the kept ranges [a, b) of axis 2,
                     "hash": the fixgen hash of the whole tensor}

A tensor KEY must be [B, H, N, d] or [B, H, N], BF16, F16 or F32.  The
hash is computed from the whole stored tensor before it is cut (16-bit
words of the little-endian data: an F32 element is its low half, then
its high half).  The rows kept (ROWS_END, ROW_STRIDE below; fixed, so
the same dump is always cut the same way) are the first 16 and the last
16 rows of axis 2 (the first and last query rows for o, lse and dq, the
first and last keys for dk and dv: the ends of the first and last 64-
and 128-row blocks of every kernel) and, between them, every row r with
r mod 32 = 31 (the last row of every 32-row stripe, so every interior
block of 64 or 128 rows keeps some).  KEYS naming a tensor already kept
in part, a tensor of another rank or dtype, a tensor of which every
row would be kept, and o or lse (also PREFIX.o, PREFIX.lse) in a file
with gradients (PREFIX.dq, .dk or .dv: o and lse are the backward's
inputs, read whole) are refused (exit 2, nothing written).

--self-check cuts a small dump made here and checks the kept bytes, the
ranges and the hash against values computed independently (the hash of
known vectors from experiments/gpu/fixgen.py's self-check).
"""
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixgen  # noqa: E402

ROWS_END = 16
ROW_STRIDE = 32

SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
         "BF16": 2, "F16": 2, "U16": 2, "I16": 2, "F32": 4, "U32": 4,
         "I32": 4, "F64": 8, "U64": 8, "I64": 8}


class Bad(Exception):
    """A bad input: the message names the file or argument."""


def read(path):
    """(tensors {name: (dtype, shape, bytes)} in file order, metadata)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise Bad("%s: %s" % (path, e.strerror))
    if len(raw) < 8:
        raise Bad("%s: not a safetensors file (shorter than 8 bytes)" % path)
    n = struct.unpack("<Q", raw[:8])[0]
    if n > len(raw) - 8:
        raise Bad("%s: header length %d exceeds the file" % (path, n))
    try:
        hdr = json.loads(raw[8:8 + n])
    except ValueError as e:
        raise Bad("%s: header: not JSON (%s)" % (path, e))
    data = raw[8 + n:]
    meta = hdr.pop("__metadata__", None) or {}
    out = {}
    for name, t in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"]):
        dt, shape = t.get("dtype"), t.get("shape")
        if dt not in SIZES:
            raise Bad("%s: tensor %s: dtype %r (expected one of %s)"
                      % (path, name, dt, ", ".join(sorted(SIZES))))
        a, b = t["data_offsets"]
        size = SIZES[dt]
        for s in shape:
            size *= s
        if b - a != size or b > len(data):
            raise Bad("%s: tensor %s: data_offsets [%d, %d] do not hold "
                      "%s %s" % (path, name, a, b, dt, shape))
        out[name] = (dt, list(shape), data[a:b])
    return out, meta


def write(path, tensors, meta):
    """PATH (atomically: a temporary file renamed) from TENSORS, META."""
    hdr, off = {}, 0
    for name, (dt, shape, blob) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape,
                     "data_offsets": [off, off + len(blob)]}
        off += len(blob)
    hdr["__metadata__"] = meta
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".trim_dump.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for _, _, blob in tensors.values():
                f.write(blob)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_text(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".trim_dump.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def parse_pairs(arg):
    pairs = []
    for item in arg.split(","):
        parts = item.split(":")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            nums = []
        if len(nums) not in (1, 2) or min(nums) < 0:
            raise Bad("PAIRS '%s': '%s' (expected H or B:H, non-negative "
                      "integers)" % (arg, item))
        pairs.append((0, nums[0]) if len(nums) == 1 else tuple(nums))
    if len(set(pairs)) != len(pairs):
        raise Bad("PAIRS '%s': a pair given twice" % arg)
    return pairs


def shape_of(man, path):
    """The manifest's (batch, heads, nq, nk, d) and whether it is a list."""
    sh = man.get("shape")
    if isinstance(sh, dict):
        try:
            return [int(sh[k]) for k in ("batch", "heads", "nq", "nk",
                                          "d")], False
        except (KeyError, TypeError, ValueError):
            pass
    elif isinstance(sh, list) and len(sh) == 4:
        b, h, n, d = sh
        if man.get("layout") == "bnhd":
            b, n, h, d = sh
        return [b, h, n, n, d], True
    raise Bad("%s: manifest: shape: expected {\"batch\", \"heads\", \"nq\", "
              "\"nk\", \"d\"} or [B, H, N, d]" % path)


def manifest_of(path, meta):
    """The JSON manifest in the metadata META of PATH."""
    if "manifest" not in meta:
        raise Bad("%s: no \"manifest\" in the safetensors metadata" % path)
    try:
        return json.loads(meta["manifest"])
    except ValueError as e:
        raise Bad("%s: manifest: not JSON (%s)" % (path, e))


def trim(src, dst, pairs):
    tensors, meta = read(src)
    side = src[:-len(".safetensors")] + ".json"
    man = manifest_of(src, meta)
    (nb, nh, nq, nk, d), listed = shape_of(man, src)
    for b, h in pairs:
        if b >= nb or h >= nh:
            raise Bad("PAIRS: %d:%d is outside the file's %d batch x %d "
                      "heads" % (b, h, nb, nh))
    bnhd = man.get("layout") == "bnhd"
    hdim = 2 if bnhd else 1

    out = {}
    for name, (dt, shape, blob) in tensors.items():
        if len(shape) < 3 or shape[0] != nb or shape[hdim] != nh:
            out[name] = (dt, shape, blob)
            continue
        inner = SIZES[dt]
        for s in shape[hdim + 1:]:
            inner *= s
        mid = shape[1] if bnhd else 1
        parts = []
        for b, h in pairs:
            for m in range(mid):
                base = ((b * mid + m) * nh + h) * inner if bnhd else \
                    (b * nh + h) * inner
                parts.append(blob[base:base + inner])
        if bnhd:
            # [1, N, P, ...]: query row m of every pair together
            per = len(pairs)
            parts = [parts[p * mid + m] for m in range(mid)
                     for p in range(per)]
            new = [1, mid, len(pairs)] + shape[3:]
        else:
            new = [1, len(pairs)] + shape[2:]
        out[name] = (dt, new, b"".join(parts))

    # the launch's indices of the kept pairs
    hf = man.get("heads_from")
    bf = man.get("batch_from", man.get("batch_kept"))
    old_h = hf if isinstance(hf, list) and len(hf) == nh else list(range(nh))
    if isinstance(bf, list) and len(bf) == nh:
        old_b = lambda b, h: bf[h]  # noqa: E731
    elif isinstance(bf, int):
        old_b = lambda b, h: bf  # noqa: E731
    else:
        old_b = lambda b, h: b  # noqa: E731
    heads = [old_h[h] for b, h in pairs]
    batches = [old_b(b, h) for b, h in pairs]

    if "launch_shape" not in man:
        man["launch_shape"] = {"batch": nb, "heads": nh, "nq": nq, "nk": nk,
                               "d": d}
    if listed:
        sh = man["shape"]
        if bnhd:
            man["shape"] = [1, sh[1], len(pairs), sh[3]]
        else:
            man["shape"] = [1, len(pairs), sh[2], sh[3]]
    else:
        man["shape"]["batch"] = 1
        man["shape"]["heads"] = len(pairs)
    man["heads_from"] = heads
    if len(set(batches)) == 1:
        if batches[0] != 0 or "batch_from" in man or nb > 1 \
                or man["launch_shape"].get("batch", 1) > 1:
            man["batch_from"] = batches[0]
    else:
        man["batch_from"] = batches
    # "tensors", when it lists the file's tensors (not the launch's)
    tl = man.get("tensors")
    if isinstance(tl, dict) and all(
            isinstance(v, list) and len(v) == 2 and n in tensors
            and v[1] == tensors[n][1] for n, v in tl.items()):
        for n in tl:
            tl[n] = [tl[n][0], out[n][1]]
    meta = dict(meta)
    meta["manifest"] = json.dumps(man)
    write(dst, out, meta)
    if os.path.exists(side):
        write_text(dst[:-len(".safetensors")] + ".json",
                   json.dumps(man, indent=1) + "\n")
    size = os.path.getsize(dst)
    print("%s: %d of %d x %d heads kept (launch heads %s), %d bytes"
          % (dst, len(pairs), nb, nh, ",".join(map(str, heads)), size))


def kept_rows(n):
    """The kept ranges [a, b) of N rows (see the docstring)."""
    rows = [r for r in range(n) if r < ROWS_END or r >= n - ROWS_END
            or r % ROW_STRIDE == ROW_STRIDE - 1]
    out = []
    for r in rows:
        if out and out[-1][1] == r:
            out[-1][1] = r + 1
        else:
            out.append([r, r + 1])
    return out


def words16(dt, blob):
    """The 16-bit little-endian words of BLOB (an F32 element: low, high)."""
    return struct.unpack("<%dH" % (len(blob) // 2), blob)


def trim_rows(path, keys):
    if not path.endswith(".safetensors"):
        raise Bad("%s: expected a .safetensors file" % path)
    tensors, meta = read(path)
    man = manifest_of(path, meta)
    kept = man.get("outputs_kept", {})
    if not isinstance(kept, dict):
        raise Bad("%s: manifest: outputs_kept: expected an object" % path)
    if len(set(keys)) != len(keys) or not keys:
        raise Bad("KEYS '%s': expected distinct tensor names"
                  % ",".join(keys))
    out = dict(tensors)
    report = []
    # o and lse are the backward's inputs (bf16emu diff and the tests read
    # the GPU's own): a dump with gradients keeps them whole
    for key in keys:
        base = key.split(".")[-1]
        pre = key[:len(key) - len(base)]
        if base in ("o", "lse") and any(pre + g in tensors
                                        for g in ("dq", "dk", "dv")):
            raise Bad("%s: %s: the backward's input (the file holds %s%s); "
                      "a dump with gradients keeps o and lse whole"
                      % (path, key, pre, "dq/dk/dv"))
    for key in keys:
        if key not in tensors:
            raise Bad("%s: no tensor %s (it has %s)"
                      % (path, key, ", ".join(sorted(tensors))))
        if key in kept:
            raise Bad("%s: %s: already kept in part (manifest: "
                      "outputs_kept.%s)" % (path, key, key))
        dt, shape, blob = tensors[key]
        if dt not in ("BF16", "F16", "F32") or len(shape) not in (3, 4):
            raise Bad("%s: %s: %s %s (expected BF16, F16 or F32, [B, H, N, "
                      "d] or [B, H, N])" % (path, key, dt, shape))
        n = shape[2]
        rows = kept_rows(n)
        nk = sum(b - a for a, b in rows)
        if nk == n:
            raise Bad("%s: %s: every one of its %d rows would be kept"
                      % (path, key, n))
        inner = SIZES[dt]
        for s in shape[3:]:
            inner *= s
        nbh = shape[0] * shape[1]
        parts = []
        for bh in range(nbh):
            for a, b in rows:
                base = (bh * n) * inner
                parts.append(blob[base + a * inner:base + b * inner])
        w = words16(dt, blob)
        h = fixgen.hash_final(fixgen.hash_plain(w), len(w))
        kept[key] = {"shape": list(shape), "rows": rows,
                     "hash": "0x%016x" % h}
        out[key] = (dt, shape[:2] + [nk] + shape[3:], b"".join(parts))
        report.append("%s %d of %d rows" % (key, nk, n))
    man["outputs_kept"] = kept
    meta = dict(meta)
    meta["manifest"] = json.dumps(man)
    side = path[:-len(".safetensors")] + ".json"
    write(path, out, meta)
    if os.path.exists(side):
        write_text(side, json.dumps(man, indent=1) + "\n")
    print("%s: %s, %d bytes" % (path, ", ".join(report),
                                os.path.getsize(path)))


def self_check():
    """Cuts a dump made here; exits 1 on a difference."""
    bad = []
    # kept_rows against the rule written out by hand
    want = {64: [[0, 16], [31, 32], [48, 64]],
            100: [[0, 16], [31, 32], [63, 64], [84, 100]],
            128: [[0, 16], [31, 32], [63, 64], [95, 96], [112, 128]],
            40: [[0, 16], [24, 40]]}
    for n, w in want.items():
        if kept_rows(n) != w:
            bad.append("kept_rows(%d) = %s, expected %s"
                       % (n, kept_rows(n), w))
    # the hash of fixgen's known vector: stream 1 of seed S as a tensor
    seed, mean, std, fmt, n, h = fixgen.VEC_HASH[0]
    b = fixgen.gen_plain(seed, 1, mean, std, fmt, 0, n)
    if fixgen.hash_final(fixgen.hash_plain(words16("BF16", struct.pack(
            "<%dH" % n, *b))), n) != h:
        bad.append("hash of fixgen's vector differs")
    d = tempfile.mkdtemp(prefix="trim_dump.")
    try:
        p = os.path.join(d, "x.safetensors")
        n, dd = 100, 3
        dk = struct.pack("<%dH" % (2 * n * dd),
                         *[(i * 40503) & 0xFFFF for i in range(2 * n * dd)])
        lse = struct.pack("<%dI" % (2 * n),
                          *[(i * 2654435761) & 0xFFFFFFFF
                            for i in range(2 * n)])
        write(p, {"dk": ("BF16", [1, 2, n, dd], dk),
                  "acc": ("F32", [2, 1, n], lse)},
              {"manifest": json.dumps({"shape": [1, 2, n, dd]})})
        with open(os.devnull, "w") as null:
            old, sys.stdout = sys.stdout, null
            try:
                trim_rows(p, ["dk", "acc"])
            finally:
                sys.stdout = old
        t, m = read(p)
        ok = json.loads(m["manifest"])["outputs_kept"]
        rows = [r for a, b in kept_rows(n) for r in range(a, b)]
        for key, blob, es, inner in (("dk", dk, 2, dd), ("acc", lse, 4, 1)):
            exp = b"".join(blob[(bh * n + r) * inner * es:
                                (bh * n + r + 1) * inner * es]
                           for bh in range(2) for r in rows)
            if t[key][2] != exp:
                bad.append("%s: kept bytes differ" % key)
            if t[key][1][2] != len(rows):
                bad.append("%s: shape %s" % (key, t[key][1]))
            # the hash by the definition, term by term on 16-bit words
            nw = len(blob) // 2
            acc = 0
            for i in range(nw):
                wd = blob[2 * i] | blob[2 * i + 1] << 8
                acc = (acc + fixgen.mix((i << 16) + wd + fixgen.GOLDEN)) \
                    & fixgen.M64
            if ok[key]["hash"] != "0x%016x" % fixgen.mix(nw + acc):
                bad.append("%s: hash %s" % (key, ok[key]["hash"]))
        try:
            trim_rows(p, ["dk"])
            bad.append("a second cut of dk was not refused")
        except Bad:
            pass
    finally:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
    for b in bad:
        sys.stderr.write("trim_dump.py --self-check: %s\n" % b)
    print("trim_dump.py --self-check: %s" % ("FAILED" if bad else "ok"))
    sys.exit(1 if bad else 0)


def main():
    args = sys.argv[1:]
    if args == ["--self-check"]:
        self_check()
    try:
        if len(args) == 3 and args[0] == "--rows":
            trim_rows(args[1], [k for k in args[2].split(",")])
            return
        if len(args) != 3 or not args[0].endswith(".safetensors") \
                or not args[1].endswith(".safetensors"):
            sys.stderr.write(__doc__)
            sys.exit(2)
        trim(args[0], args[1], parse_pairs(args[2]))
    except Bad as e:
        sys.stderr.write("trim_dump.py: %s\n" % e)
        sys.exit(2)


if __name__ == "__main__":
    main()

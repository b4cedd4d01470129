"""bf16emu: bit-exact emulation of BF16, FP16, FP32, TF32 and FP8 arithmetic,
tensor-core matrix units and flash attention, over NumPy arrays.

Values are bit patterns: BF16 and FP16 in uint16 arrays, FP32 and TF32 in
uint32, E4M3 and E5M2 in uint8.  Every function computes with the C
library libbf16emu (the same bits as the bf16emu tool) and releases the
GIL while it runs.  An array of the expected dtype that is C-contiguous,
aligned and in native byte order is read in place; another array is
refused with an exception that says what was expected.  doc/python.md
describes each function.
"""

import enum as _enum
import json as _json
import math as _math
from fractions import Fraction as _Fraction

import numpy as _np

from . import _ext

__all__ = [
    "Flags", "round", "to_float", "convert", "add", "sub", "mul", "div",
    "fma", "sqrt", "mma", "mma_models", "attention", "Attention", "kernels",
    "describe", "diff", "Diff", "DiffElement", "trace", "Trace", "Rounding", "FORMATS",
    "MODES", "dtype_of",
]

__version__ = "0.1.0"

#: The formats, by the names the library takes.
FORMATS = ("bf16", "f16", "f32", "tf32", "e4m3", "e5m2")
#: The rounding modes: to nearest even, toward zero, down, up, to nearest
#: away, to odd, stochastic.
MODES = ("rne", "rtz", "rdn", "rup", "rna", "rod", "sr")


class Flags(_enum.IntFlag):
    """The IEEE 754 exception flags an operation raised (SoftFloat's bits)."""

    INEXACT = _ext.FLAG_INEXACT
    UNDERFLOW = _ext.FLAG_UNDERFLOW
    OVERFLOW = _ext.FLAG_OVERFLOW
    DIVZERO = _ext.FLAG_DIVZERO
    INVALID = _ext.FLAG_INVALID


_BITS = {"bf16": _np.uint16, "f16": _np.uint16, "fp16": _np.uint16,
         "f32": _np.uint32, "fp32": _np.uint32, "tf32": _np.uint32,
         "e4m3": _np.uint8, "e5m2": _np.uint8}

# ml_dtypes' (and NumPy's float16) dtypes whose bytes are a format's bits
_VIEWS = {"bfloat16": ("bf16", _np.uint16), "float16": ("f16", _np.uint16),
          "float8_e4m3fn": ("e4m3", _np.uint8),
          "float8_e5m2": ("e5m2", _np.uint8)}


def dtype_of(fmt):
    """The NumPy dtype that holds the bit patterns of format FMT."""
    try:
        return _np.dtype(_BITS[fmt])
    except KeyError:
        raise ValueError("fmt=%r: unknown format (expected one of %s)"
                         % (fmt, ", ".join(FORMATS))) from None


# torch dtypes (by name) whose bits NumPy holds as these unsigned
# integers, and the format they are
_TORCH_BITS = {"bfloat16": ("bf16", "int16", _np.uint16),
               "float16": ("f16", "int16", _np.uint16),
               "float8_e4m3fn": ("e4m3", "uint8", _np.uint8),
               "float8_e5m2": ("e5m2", "uint8", _np.uint8)}


def _from_torch(a):
    """A torch tensor as a NumPy array (on the CPU, detached): a 16- or
    8-bit floating-point one as its bit patterns (NumPy has no bfloat16),
    with the format it holds; anything else is not a tensor (None, None).
    torch itself is not imported: a tensor brings it."""
    mod = type(a).__module__ or ""
    if not mod.startswith("torch") or not hasattr(a, "dtype"):
        return None, None
    import sys
    torch = sys.modules["torch"]
    t = a.detach().cpu().contiguous()
    name = str(t.dtype).replace("torch.", "")
    if name in _TORCH_BITS:
        fmt, ibits, npbits = _TORCH_BITS[name]
        return t.view(getattr(torch, ibits)).numpy().view(npbits), fmt
    return t.numpy(), None


def _bits(a, fmt):
    """A as bit patterns of FMT: an ml_dtypes bfloat16 / float8 array or a
    NumPy float16 array of that format is viewed (not copied) as its
    unsigned integers, a torch tensor of that format (on any device)
    copied to the CPU as its bits; anything else goes to the extension as
    it is."""
    t, tfmt = _from_torch(a)
    if t is not None:
        if tfmt is not None and tfmt != _canon(fmt):
            raise TypeError("a torch.%s tensor where fmt is %r"
                            % (str(a.dtype).replace("torch.", ""), fmt))
        return t
    if isinstance(a, _np.ndarray):
        view = _VIEWS.get(a.dtype.name)
        if view is not None and view[0] == _canon(fmt):
            return a.view(view[1])
    return a


def _canon(fmt):
    return {"fp16": "f16", "fp32": "f32"}.get(fmt, fmt)


def _flags(result, flags):
    if flags:
        return result[0], Flags(result[1])
    return result


def round(x, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
          saturate=None, seed=0, flags=False):
    """Round float32 or float64 values X to format FMT with MODE.

    Returns the bit patterns (uint16 for bf16 and f16, uint32 for tf32 and
    f32, uint8 for e4m3 and e5m2) in X's shape, and with flags=True the
    pair (bits, Flags).  ENV is an environment preset of ``bf16emu trace
    --env`` (ieee, x86, avx512bf16, nvidia, arm-bfdot); ftz, daz and
    saturate override it when given; SEED seeds mode "sr".  A list or
    scalar is read as float64; a torch CPU tensor of float32 or float64
    through NumPy.
    """
    if not isinstance(x, _np.ndarray):
        x = _np.asarray(x)
        if x.dtype != _np.float32:
            x = x.astype(_np.float64)
    return _flags(_ext.round(x, fmt, mode, env, _tri(ftz), _tri(daz),
                             _tri(saturate), seed, flags), flags)


def _tri(v):
    return -1 if v is None else int(bool(v))


def to_float(bits, fmt="bf16"):
    """The values of the bit patterns BITS of FMT as float32 (exact: every
    value of every format is a float32; a signalling NaN comes back
    quiet)."""
    return _ext.to_float(_bits(bits, fmt), fmt)


def convert(bits, to, fmt="bf16", mode="rne", *, env="ieee", ftz=None,
            daz=None, saturate=None, seed=0, flags=False):
    """The bit patterns BITS of FMT converted to format TO with MODE."""
    return _flags(_ext.convert(_bits(bits, fmt), to, fmt, mode, env,
                               _tri(ftz), _tri(daz), _tri(saturate), seed,
                               flags), flags)


def _arith(fn, operands, fmt, mode, env, ftz, daz, seed, flags):
    ops = [_bits(o, fmt) for o in operands]
    return _flags(fn(*ops, fmt, mode, env, _tri(ftz), _tri(daz), seed,
                     flags), flags)


def add(a, b, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
        seed=0, flags=False):
    """a + b, element by element, one rounding to FMT with MODE."""
    return _arith(_ext.add, (a, b), fmt, mode, env, ftz, daz, seed, flags)


def sub(a, b, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
        seed=0, flags=False):
    """a - b, element by element, one rounding to FMT with MODE."""
    return _arith(_ext.sub, (a, b), fmt, mode, env, ftz, daz, seed, flags)


def mul(a, b, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
        seed=0, flags=False):
    """a * b, element by element, one rounding to FMT with MODE."""
    return _arith(_ext.mul, (a, b), fmt, mode, env, ftz, daz, seed, flags)


def div(a, b, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
        seed=0, flags=False):
    """a / b, element by element, one rounding to FMT with MODE."""
    return _arith(_ext.div, (a, b), fmt, mode, env, ftz, daz, seed, flags)


def fma(a, b, c, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
        seed=0, flags=False):
    """a * b + c, element by element, one rounding to FMT with MODE."""
    return _arith(_ext.fma, (a, b, c), fmt, mode, env, ftz, daz, seed, flags)


def sqrt(a, fmt="bf16", mode="rne", *, env="ieee", ftz=None, daz=None,
         seed=0, flags=False):
    """The square root of a, element by element, rounded to FMT with MODE."""
    return _arith(_ext.sqrt, (a,), fmt, mode, env, ftz, daz, seed, flags)


def mma_models():
    """The names of the matrix-unit presets (those of ``bf16emu mma
    --model``)."""
    return _ext.mma_models()


def mma(a, b, c=None, model="sm90", fmt="bf16", *, flags=False):
    """D = A B + C through the matrix-unit preset MODEL.

    A [M, K] and B [K, N] hold bit patterns of FMT (the preset's variant
    for that input format is used: sm90 with e4m3 is sm90-fp8); C (None:
    +0) and the returned D [M, N] hold FP32 bit patterns (uint32).
    Batched as numpy.matmul: A [..., M, K], B [..., K, N] and C [..., M,
    N] broadcast over their leading dimensions, each matrix of the batch
    one product (the flags of all of them together).
    """
    a, b = _bits(a, fmt), _bits(b, fmt)
    if not (hasattr(a, "ndim") and hasattr(b, "ndim")) \
            or (a.ndim <= 2 and b.ndim <= 2
                and (c is None or _np.ndim(c) <= 2)):
        return _flags(_ext.mma(a, b, c, model, fmt, flags), flags)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError("a and b: expected matrices [..., M, K] and "
                         "[..., K, N]")
    m, n = a.shape[-2], b.shape[-1]
    try:
        lead = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2],
                                    () if c is None
                                    else _np.shape(c)[:-2])
    except ValueError:
        raise ValueError("a, b, c: leading dimensions %s, %s, %s do not "
                         "broadcast" % (a.shape[:-2], b.shape[:-2],
                                        None if c is None
                                        else _np.shape(c)[:-2])) from None
    a = _np.broadcast_to(a, lead + a.shape[-2:])
    b = _np.broadcast_to(b, lead + b.shape[-2:])
    if c is not None:
        c = _np.broadcast_to(_np.asarray(c), lead + (m, n))
    out = _np.empty(lead + (m, n), dtype=_np.uint32)
    fl = 0
    for idx in _np.ndindex(*lead):
        r = _ext.mma(_np.ascontiguousarray(a[idx]),
                     _np.ascontiguousarray(b[idx]),
                     None if c is None else _np.ascontiguousarray(c[idx]),
                     model, fmt, flags)
        if flags:
            out[idx], f = r
            fl |= int(f)
        else:
            out[idx] = r
    return (out, Flags(fl)) if flags else out


def kernels():
    """The names of the built-in attention kernel descriptions."""
    return _ext.kernels()


def describe(name):
    """The built-in kernel description NAME as a dict: the JSON object
    ``bf16emu attn --policy NAME --describe`` writes ("flash" is fa2).
    A dict of this form, changed or not, is taken by
    ``attention(kernel=...)``."""
    return _json.loads(_ext.describe(name))


# a mask's dtype name -> (the dtype of its bits, the library's type)
_MASK_TYPES = {"bool": (_np.uint8, "bool"), "uint8": (_np.uint8, "bool"),
               "float32": (_np.uint32, "f32"),
               "bfloat16": (_np.uint16, "bf16"),
               "float16": (_np.uint16, "f16")}


def _mask(mask, mask_dtype):
    """MASK as (bits, type) for the extension: a boolean mask (bool, or
    uint8 0/1) or an additive one (float32; bfloat16 of ml_dtypes or
    float16; uint16 bit patterns with MASK_DTYPE "bf16" or "f16")."""
    if mask is None:
        if mask_dtype is not None:
            raise ValueError("mask_dtype is taken with a mask")
        return None, "bool"
    t, tfmt = _from_torch(mask)
    if t is not None:
        # a torch mask: bool, float32, or BF16 / FP16 bits
        mask = t
        if tfmt is not None and mask_dtype is None:
            mask_dtype = tfmt
    if not isinstance(mask, _np.ndarray):
        raise TypeError("mask: expected a numpy.ndarray (bool, float32, "
                        "bfloat16, float16, or uint16 bits with "
                        "mask_dtype), got %s" % type(mask).__name__)
    name = mask.dtype.name
    if mask_dtype is not None:
        want = _canon(mask_dtype)
        if want not in ("bf16", "f16"):
            raise ValueError("mask_dtype=%r: expected 'bf16' or 'f16' "
                             "(the format of uint16 bits)" % (mask_dtype,))
        if name != "uint16" and _MASK_TYPES.get(name, (0, ""))[1] != want:
            raise TypeError("mask: mask_dtype=%r takes uint16 bit "
                            "patterns, got dtype %s" % (mask_dtype, name))
        return mask.view(_np.uint16), want
    if name == "uint16":
        raise TypeError("mask: uint16 bit patterns need mask_dtype='bf16' "
                        "or 'f16'")
    if name not in _MASK_TYPES:
        raise TypeError("mask: expected dtype bool, uint8 (0/1), float32, "
                        "bfloat16 or float16 (or uint16 bits with "
                        "mask_dtype), got dtype %s" % name)
    bits, kind = _MASK_TYPES[name]
    return mask.view(bits), kind


class Attention(tuple):
    """What ``attention`` returns: the tuple (O, LSE), or with backward=True
    (O, LSE, dQ, dK, dV), with the same arrays as attributes ``o``,
    ``lse``, ``dq``, ``dk``, ``dv`` and ``delta`` (the backward's rowsum
    dO o O, [B, H, Nq]; None without backward), and for kernel="sdpa"
    ``sdpa``, PyTorch 2.11's choice: a dict with "backend" (cudnn, flash,
    efficient, math), "variant" (its kernel), "reason", "kernel" (the
    description run) and "splits" (the KV split count used); None for a
    named kernel."""

    def __new__(cls, o, lse, delta, dq, dk, dv, sdpa):
        parts = (o, lse) if dq is None else (o, lse, dq, dk, dv)
        self = super().__new__(cls, parts)
        self.o, self.lse, self.delta = o, lse, delta
        self.dq, self.dk, self.dv = dq, dk, dv
        self.sdpa = None if sdpa is None else dict(
            zip(("backend", "variant", "reason", "kernel", "splits"), sdpa))
        return self


_SDPA_BACKENDS = {"math": 1, "flash": 2, "efficient": 4, "cudnn": 8}


def attention(q, k, v, kernel="fa2", *, causal=False, causal_align=None,
              scale=None, splits=None, launch=None, threads=0, fmt=None,
              backward=False, do=None, sdpa_backends=None, mask=None,
              mask_dtype=None, softcap=None, delta_xblock=None):
    """The attention forward (and backward) of KERNEL on Q [B, H, Nq, d]
    and K, V [B, Hkv, Nk, d], BF16 or FP16 bit patterns (uint16; an
    ml_dtypes bfloat16 or NumPy float16 array is viewed as its bits).

    Returns an ``Attention``: (O, LSE), O [B, H, Nq, d] and LSE
    [B, H, Nq] as FP32 bit patterns (uint32), the values ``bf16emu attn
    --policy KERNEL --out`` writes (O's values lie on the kernel's output
    format, BF16 or FP16 for the GPU kernels: ``convert(o, "bf16",
    "f32")`` is exact); with backward=True and DO (dO, Q's shape and
    format) (O, LSE, dQ, dK, dV), dQ [B, H, Nq, d] and dK, dV
    [B, Hkv, Nk, d] (summed over each group of query heads by the
    description's rule) as FP32 bit patterns, and ``.delta`` [B, H, Nq].
    KERNEL is a built-in description (``kernels()``; "flash" is fa2) or
    "sdpa": the backend PyTorch 2.11 runs for this call on an H100 or
    H200 (``.sdpa`` says which and why; SDPA_BACKENDS, a list of cudnn,
    flash, efficient, math, are those left enabled), or a description as
    a dict (``describe(name)``, changed or not; checked field by field).
    MASK is SDPA's attn_mask, of a shape that broadcasts to
    [B, H, Nq, Nk]: boolean (bool or uint8 0/1; False hides a key) or
    additive (float32; ml_dtypes bfloat16 or float16; uint16 bits with
    MASK_DTYPE "bf16" or "f16"), applied as ``bf16emu attn --mask``
    applies it (not with causal, nor under fa2, which takes none).  Each kernel's
    default exp, log and reciprocal models are used (fa2 and cudnn: the
    measured H200 tables, read on first use from $BF16EMU_EX2_TABLE,
    $BF16EMU_LG2_TABLE, $BF16EMU_RCP_TABLE or the installed data).
    FMT is "bf16" or "f16" (None: f16 for float16 arrays, else bf16).
    causal_align is "top-left" or "bottom-right" (None: bottom-right, or
    for sdpa the chosen backend's alignment); scale None is 1/sqrt(d);
    splits None (the description's), an int 1..128 or "auto" (the
    kernel's rule on LAUNCH); launch (B, H) of the GPU launch, default the
    tensors'; threads 0: OpenMP's default.  SOFTCAP is FlexAttention's
    tanh soft-capping score_mod, cap tanh(score / cap) (descriptions with
    softcap_tanhf: flex); DELTA_XBLOCK the rows per program of flex's
    backward delta kernel, which inductor autotunes on the GPU (None: 8;
    a capture's manifest records the grid it ran).
    """
    if fmt is None:
        fmt = "f16" if getattr(q, "dtype", None) == _np.float16 \
            or str(getattr(q, "dtype", "")) == "torch.float16" else "bf16"
    fmt = _canon(fmt)
    backends = -1
    if sdpa_backends is not None:
        if isinstance(sdpa_backends, str):
            sdpa_backends = sdpa_backends.split(",")
        backends = 0
        for name in sdpa_backends:
            if name not in _SDPA_BACKENDS:
                raise ValueError("sdpa_backends: unknown backend %r "
                                 "(expected cudnn, flash, efficient or "
                                 "math)" % (name,))
            backends |= _SDPA_BACKENDS[name]
    kjson = None
    if isinstance(kernel, dict):
        kjson, kernel = _json.dumps(kernel), "dict"
    elif not isinstance(kernel, str):
        raise TypeError("kernel: expected a name or a description (dict), "
                        "got %s" % type(kernel).__name__)
    mbits, mtype = _mask(mask, mask_dtype)
    return Attention(*_ext.attention(
        _bits(q, fmt), _bits(k, fmt), _bits(v, fmt), kernel, causal,
        causal_align, scale, splits, launch, threads, fmt, backward,
        None if do is None else _bits(do, fmt), backends, kjson, mbits,
        mtype, 0.0 if softcap is None else float(softcap),
        0 if delta_xblock is None else int(delta_xblock)))


# --------------------------------------------------------------------------
# diff: a GPU's array against the emulator's, element by element.

class DiffElement:
    """One element where the arrays differ: ``index`` (a tuple into the
    arrays' shape), ``gpu`` and ``emulated`` (the bits), ``gpu_value`` and
    ``emulated_value`` (exact, as floats) and ``distance`` (ulps: steps on
    the format's number line; ``math.inf`` for a NaN against a
    number)."""

    __slots__ = ("index", "gpu", "emulated", "gpu_value", "emulated_value",
                 "distance")

    def __init__(self, index, gpu, emulated, gpu_value, emulated_value,
                 distance):
        self.index, self.gpu, self.emulated = index, gpu, emulated
        self.gpu_value, self.emulated_value = gpu_value, emulated_value
        self.distance = distance

    def __repr__(self):
        return ("DiffElement(index=%r, gpu=%#x (%r), emulated=%#x (%r), "
                "distance=%r)" % (self.index, self.gpu, self.gpu_value,
                                  self.emulated, self.emulated_value,
                                  self.distance))


class Diff:
    """What ``diff`` returns, the counts of ``bf16emu diff --json``'s
    stages: ``fmt``, ``shape``, ``elements``, ``equal`` (identical bits),
    ``differ``, ``equal_fraction``, ``nan_vs_number``, ``max_ulps`` (the
    largest distance in ulps, ``math.inf`` when a NaN meets a number),
    ``tol`` and ``within_tolerance`` (distance at most tol), ``passed``
    (every element within tol), ``histogram`` (dicts: bucket, min, max,
    count, for the non-empty distance buckets 0, 1, 2-3, 4-7, ...,
    inf) and ``worst`` (``DiffElement``s, the largest distance first)."""

    def __init__(self, fmt, shape, tol, counts):
        (self.elements, self.equal, self.differ, self.nan_vs_number,
         self.within_tolerance, max_dist, hist, worst) = counts
        self.fmt, self.shape, self.tol = fmt, shape, tol
        self.max_ulps = _math.inf if max_dist is None else max_dist
        self.equal_fraction = (self.equal / self.elements
                               if self.elements else 1.0)
        self.passed = self.within_tolerance == self.elements
        self.histogram = [dict(zip(("bucket", "min", "max", "count"), h))
                          for h in hist]
        self.worst = []
        for flat, g, e, dist in worst:
            vals = to_float(_np.array([g, e], dtype=_BITS[fmt]), fmt)
            index = tuple(int(i) for i in _np.unravel_index(flat, shape))
            self.worst.append(DiffElement(
                index, g, e, float(vals[0]), float(vals[1]),
                _math.inf if dist is None else dist))

    def __repr__(self):
        return ("Diff(fmt=%r, elements=%d, equal=%d, differ=%d, "
                "max_ulps=%r)" % (self.fmt, self.elements, self.equal,
                                  self.differ, self.max_ulps))


def diff(gpu, emulated, fmt="bf16", *, worst=10, tol=0):
    """Compares GPU and EMULATED (bit patterns of FMT of one shape; an
    ml_dtypes or float16 array of FMT, or float32 for f32, is viewed as
    its bits) element by element as ``bf16emu diff`` compares a stage:
    returns a ``Diff`` with the counts, the histogram of distances in
    ulps and the WORST (at most 64) differing elements."""
    fmt = _canon(fmt)
    if fmt not in FORMATS:
        dtype_of(fmt)  # raises with the names taken
    arrays = []
    for a in (gpu, emulated):
        if (isinstance(a, _np.ndarray) and fmt == "f32"
                and a.dtype == _np.float32):
            a = a.view(_np.uint32)
        arrays.append(_bits(a, fmt))
    counts = _ext.diff(arrays[0], arrays[1], fmt, worst, tol)
    return Diff(fmt, tuple(arrays[0].shape), tol, counts)


# --------------------------------------------------------------------------
# trace: the rounding events of an accumulation, with exact values.

def _fraction(x):
    """A Python float as an exact Fraction; None for an infinity or NaN."""
    return _Fraction(x) if _math.isfinite(x) else None


def _dyadic(t):
    sign, tail, exp, sig = t
    v = _Fraction(-sig if sign else sig) * _Fraction(2) ** exp
    return v, bool(tail)


class Rounding:
    """One rounding of a traced accumulation, as the library's rounding
    event reports it, with exact values as fractions.Fraction.

    kind: "add" (acc + x, step 2 to n) or "final" (acc to the output
    format); step: the step number of ``bf16emu trace`` (None for the
    final rounding); format, mode: of this rounding; a, b: the operands'
    bits in the accumulator format (b None for the final rounding) and
    a_value, b_value their values (None for an infinity or NaN);
    result, value: the result's bits and value; exact: the exact result
    before rounding (None when an operand is an infinity or NaN); error:
    value - exact and error_ulps the same in ulps of the result (2 **
    ulp_exp), None when the result is not finite; lsb, guard, round,
    sticky, tie: the kept last bit and the discarded bits; direction:
    "up", "down" (in magnitude) or "exact"; flags: the Flags this
    rounding raised; tiny, subnormal, ftz, daz, overflow: what happened;
    sr_random: the 64-bit draw of stochastic rounding (None otherwise).
    """

    __slots__ = ("kind", "step", "format", "mode", "a", "a_value", "b",
                 "b_value", "result", "value", "exact", "error",
                 "error_ulps", "ulp_exp", "lsb", "guard", "round", "sticky",
                 "tie", "direction", "flags", "tiny", "subnormal", "ftz",
                 "daz", "overflow", "sr_random")

    def __repr__(self):
        return ("Rounding(%s%s %s %s: exact %s -> %s, error %s ulp, %s)"
                % (self.kind, "" if self.step is None else " %d" % self.step,
                   self.format, self.mode, self.exact, self.value,
                   self.error_ulps, self.direction))

    @property
    def inexact(self):
        """Whether this rounding changed the value."""
        return bool(self.flags & Flags.INEXACT)


class Trace:
    """What ``trace`` returns: the accumulation's result and its
    roundings.

    result, value: the output's bits and value (a Fraction; None for an
    infinity or NaN); operands: the values' bits as read into the
    accumulator format; roundings: a list of Rounding, one per addition
    then the final one; exact_sum: the exact sum of the operands as read
    (None when one is not finite); error, error_ulps: value - exact_sum,
    and in ulps of the result; flags: the Flags of the whole
    accumulation; sr_draws: the stochastic-rounding draws made.
    """

    __slots__ = ("result", "value", "operands", "roundings", "exact_sum",
                 "error", "error_ulps", "flags", "sr_draws")

    def __repr__(self):
        return ("Trace(%d roundings, result %s, exact sum %s, error %s ulp)"
                % (len(self.roundings), self.value, self.exact_sum,
                   self.error_ulps))


_DIRECTION = {1: "up", -1: "down", 0: "exact"}


def _rounding(kind, step, fmt, a, a_value, b, b_value, ev):
    r = Rounding()
    r.kind, r.step, r.format = kind, step, fmt
    r.a, r.a_value, r.b = a, _fraction(a_value), b
    r.b_value = None if b_value is None else _fraction(b_value)
    (_op, r.mode, r.result, value, exact, r.ulp_exp, r.lsb, r.guard,
     r.round, r.sticky, tie, direction, _error, error_infinite, flags,
     tiny, subnormal, ftz, daz, overflow, sr_random) = ev
    r.value = _fraction(value)
    r.tie, r.tiny, r.subnormal = bool(tie), bool(tiny), bool(subnormal)
    r.ftz, r.daz, r.overflow = bool(ftz), bool(daz), bool(overflow)
    r.direction = _DIRECTION[direction]
    r.flags = Flags(flags)
    r.sr_random = sr_random if r.mode == "sr" else None
    ops = [r.a_value] if b is None else [r.a_value, r.b_value]
    if any(o is None for o in ops):
        r.exact = None                 # an infinity or NaN operand
    else:
        r.exact, tail = _dyadic(exact)
        if tail:
            # wider than the event's 128-bit window: the operands' sum
            # (a subnormal operand read as zero under DAZ)
            if daz:
                ops = [o if o == 0 or abs(o) >= _min_normal(fmt) else 0
                       for o in ops]
            r.exact = sum(ops, _Fraction(0))
    if r.exact is None or r.value is None or error_infinite:
        r.error = r.error_ulps = None
    else:
        r.error = r.value - r.exact
        r.error_ulps = r.error / _Fraction(2) ** r.ulp_exp
    return r


def _min_normal(fmt):
    emin = {"bf16": -126, "f16": -14, "f32": -126, "tf32": -126,
            "e4m3": -6, "e5m2": -14, "f64": -1022}[fmt]
    return _Fraction(2) ** emin


def trace(values, acc="f32", out="bf16", *, acc_mode="rne", mode="rne",
          in_mode="rne", fmt=None, env="ieee", ftz=None, daz=None, seed=0):
    """The accumulation values[0] + values[1] + ... in format ACC, each
    addition rounded with ACC_MODE, then rounded to OUT (f64 allowed)
    with MODE: what ``bf16emu trace --json --acc ACC --out OUT`` reports,
    as Python objects with exact values (fractions.Fraction).

    VALUES are numbers (a list, or a float32 / float64 array), read into
    ACC with IN_MODE as ``round`` reads them, or with FMT bit patterns of
    that format (an array of its dtype), converted to ACC with IN_MODE
    (exactly when they are ACC values).  ENV, ftz, daz and SEED are those
    of the arithmetic (as ``bf16emu trace --env``).  Returns a Trace.
    """
    if fmt is None:
        x = values if isinstance(values, _np.ndarray) else \
            _np.asarray(values, dtype=_np.float64)
        if x.dtype != _np.float32:
            x = x.astype(_np.float64)
        bits = round(_np.ascontiguousarray(x).reshape(-1), acc, in_mode)
    else:
        b = _np.ascontiguousarray(_bits(values, fmt)).reshape(-1)
        bits = b if _canon(fmt) == _canon(acc) else \
            convert(b, acc, fmt, in_mode, seed=seed)
    result, value, flags, draws, steps = _ext.trace(
        bits, acc, acc_mode, out, mode, env, _tri(ftz), _tri(daz), seed)
    t = Trace()
    t.result, t.value = result, _fraction(value)
    t.operands = bits
    t.flags, t.sr_draws = Flags(flags), draws
    t.roundings = []
    step = 2
    for kind, f, a, a_value, b, b_value, evs in steps:
        if len(evs) != 1:
            raise RuntimeError("trace: the library reported %d rounding "
                               "events for one operation (expected 1)"
                               % len(evs))
        t.roundings.append(_rounding(kind, step if kind == "add" else None,
                                     f, a, a_value, b, b_value, evs[0]))
        step += 1
    read = [_fraction(v) for v in to_float(bits, acc).astype(_np.float64)] \
        if acc != "f64" else []
    if t.value is None or any(v is None for v in read):
        t.exact_sum = t.error = t.error_ulps = None
    else:
        t.exact_sum = sum(read, _Fraction(0))
        t.error = t.value - t.exact_sum
        t.error_ulps = t.error / _Fraction(2) ** t.roundings[-1].ulp_exp
    return t

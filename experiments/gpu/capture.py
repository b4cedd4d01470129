#!/usr/bin/env python3
"""capture.py -- record the attention calls of a running PyTorch model.

    from capture import Capture

    cap = Capture(model, layers=None, heads=None, rows=None, batch=[0],
                  backward=True, grads=False, budget_bytes=1 << 30)
    with cap.recording(step=0):
        loss = model(x, y)
        loss.backward()
    cap.save("out/capture")      # out/capture.safetensors (+ shards)

Inside `recording`, every call of torch.nn.functional.
scaled_dot_product_attention made by the model is passed to the original
function (the model's output is unchanged) and, when it is selected and
recordable, its inputs and output are kept: q, k, v, o (BF16 or FP16,
[B, H, N, d] as SDPA takes them; k and v with their own head count under
grouped-query attention), the log-sum-exp (F32 [B, H, Nq], natural log)
from the backend op that SDPA dispatches to (aten._scaled_dot_product_
flash_attention, _efficient_attention or _cudnn_attention, called on the
same inputs and mask; its O is compared bit for bit with SDPA's, and the
manifest says whether it was equal), and in the backward, through tensor
hooks, dO and, with grads=True, dq, dk, dv.  The CUDA kernels of the
backend op are read with torch.profiler and written to the manifest
("kernels"); the backend is torch._fused_sdp_choice's answer for the
call.  With profile_backward=True the backward's kernels are read too
("backward_kernels"): at record time, on the forward's thread, SDPA runs
once more on detached copies of the call's inputs and its backward runs
with a zero dO under a profiler (same shapes, dtypes, backend flags and
deterministic setting as the model's own backward, so the same kernels;
the model's gradients and outputs are not touched).  A profiler is never
started inside the backward itself: on PyTorch 2.11 one started in a
tensor hook on the autograd thread could not be stopped.

A call is recordable when q, k, v are 4-D CUDA tensors of one dtype,
BF16 or FP16 ("dtype": "bfloat16" or "float16"), with equal head
dimensions, dropout_p == 0 and no keyword argument other than SDPA's own
(attn_mask, dropout_p, is_causal, scale, enable_gqa); other calls are
counted in the manifest's "skipped" by reason and left alone.  What is
recorded is what the kernel got:
  autocast   under CUDA autocast SDPA's floating-point inputs are cast to
           the autocast dtype before the kernel (a Llama's rotary
           embedding hands it FP32 q and k); the recorder casts them the
           same way (.to(), round to nearest even), records the cast
           tensors and notes "autocast": "bfloat16"; their gradients,
           read on the model's own tensors, are the kernel's, converted
           exactly, and are stored in the call's dtype;
  scale    "scale" is the float given (null: 1/sqrt(d)); the kernels
           round it to FP32;
  grouped-query heads  with enable_gqa=True, K and V of Hkv heads, Hkv
           dividing Hq, are stored with their own head count: the entry
           says "enable_gqa": true, "kv_heads": Hkv (also in
           "launch_shape") and "kv_heads_from", the model's index of each
           KV head stored.  With `heads`, the KV heads kept are those the
           kept query heads read (query head h reads KV head
           h // (Hq / Hkv)); the kept query heads must take the same
           number of heads from each of them, in order (heads [0, 5] or
           [4, 5] of 8 over 2 KV heads, not [0, 1, 4] or [5, 4]), so that
           the file's own grouping is the model's; other selections are
           skipped.  dk and dv (sums over a whole group) are kept only
           when every query head of each kept KV head is kept;
  attn_mask  a boolean mask that hides nothing at the kept batch entries
           and heads is recorded as no mask ("mask_was": "none"; on the
           H100 the call's bits were those of the unmasked kernel).  One
           that is exactly a causal mask with no empty row is marked
           "mask_was": "causal" (with "causal_alignment" "top-left" or
           "bottom-right" when Nq != Nk) but still stored as a mask: the
           masked kernel is not the causal one (cuDNN adds the mask as a
           bias, and its LSE differed from is_causal's in a few rows).
           Any other mask is stored, at the kept batch entries, heads, rows
           and keys (dimensions of size 1 stay broadcast), as the tensor
           "attn_mask" (a boolean mask as U8 0/1, True: the key is seen;
           an additive one in its dtype, after autocast), and the entry's
           "attn_mask" is {"dtype", "shape", "kind": "bool" or
           "additive", "source_shape": the mask's shape as SDPA got it,
           4-D}; bf16emu refuses such calls until masks are modelled.
           "backend_op_mask" says in which form the LSE's backend op got
           the mask ("-inf": an additive mask with -inf where a key is
           hidden; cuDNN's op is also tried with -65504, the fill some
           PyTorch versions use), the first whose O equals SDPA's;
  backend  torch._fused_sdp_choice on the call's inputs, mask, is_causal
           and enable_gqa; where the backend op fails, "backend_op_error"
           says why and the call is kept without its LSE.
A model that imported scaled_dot_product_attention by name before the
recording began is not seen (it calls the original function).  `seen`
counts the calls seen while recording, recorded or not.

The layer of a call is the innermost module of MODEL running when SDPA is
called (forward pre-hooks keep the stack): its path is the call's "name",
and its layer index is the one integer component of the path
("transformer.h.3.attn" -> 3), else the order in which the paths were
first seen.

Selection (None: everything):
  layers   layer indices (a set, list or a function of (index, name));
  steps    step numbers that are recorded (recording(step) outside it
           records nothing);
  heads    head indices kept, or {layer: [heads]};
  batch    batch entries kept (default [0]);
  rows     query rows kept: ("first", R) keeps rows and keys 0..R-1 of a
           call with Nq == Nk (with a causal mask that is the same
           attention on R positions, so the GPU's bits stay valid when R
           is a multiple of the kernel's tiles), ("last", R) keeps the last
           R query rows and every key (with a causal mask the manifest
           says "causal_alignment": "bottom-right"), or a list of row
           indices (no causal mask only: "rows_kept");
  budget_bytes  calls that would take the recording past this size are
           dropped and counted in "dropped".
dk and dv are kept only when every row is kept.
  record_x  also keep X, the input of the call's query projection (a
           module of the attention module whose name ends in one of
           Q_PROJ_NAMES: nanoGPT's and GPT-2's fused c_attn, q_proj,
           query, Wqkv, qkv_proj, qkv; or a function of a module path),
           at the kept batch entries and query rows, as BF16 [B, N, C]
           (an FP32 input under autocast is rounded to BF16 as the
           projection's matrix product reads it), key x; the manifest
           entry's "x" says which module, C, the input's dtype, whether
           the projection is fused and whether the model rotates q by
           position after it ("rotary": RoPE, read from module names and
           the config; then X^T dQ is not dW_Q and scan leaves X unused).
           Where no projection ran in the attention module, or its input
           is not [B, Nq, C], "x_error" says why and x is left out.

save(PATH) writes PATH.safetensors, or PATH-00001-of-0000N.safetensors
...  when the tensors exceed shard_bytes (a call's tensors stay in one
shard), each with the manifest (doc/real-models.md, "The capture format")
in its metadata entry "manifest", and PATH.json with the same manifest
unless sidecar=False.  Keys are
L{layer}.s{step}.{q,k,v,o,lse,do,dq,dk,dv,x,attn_mask}; a layer recorded
twice at one step (a model that calls SDPA more than
once per module) gets "prefix" L{layer}.s{step}.c{n}.

The file runs as a script too: `capture.py --selftest OUT` trains nothing,
runs a nanoGPT-style block and a randomly initialised transformers GPT-2
(when transformers is installed) under the recorder and writes both;
`capture.py --selftest-x OUT` records X of a nanoGPT-style model, a
GPT-2 and a Llama (randomly initialised) and checks that sum_b X_b^T
dq_b is the weight gradient of each head's rows of W_Q, saves with
per_call=True and runs profile_backward=True twice, and prints a JSON
report; `capture.py --selftest-hf OUT` records five randomly initialised
transformers models (a Llama with grouped-query heads, the same padded,
a Mistral with a sliding window, a GPT-2 in FP16, a padded BERT; see
_selftest_hf) and writes OUT/summary.json.
"""
import contextlib
import datetime
import json
import math
import os
import re

import torch
import torch.nn.functional as F

try:
    from safetensors.torch import save_file
except ImportError:  # pragma: no cover
    save_file = None

_ORIG_SDPA = F.scaled_dot_product_attention

CHOICE_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn",
                4: "overrideable"}


# the last component of the path of a query projection (or of a fused
# query-key-value projection): nanoGPT and GPT-2's c_attn, Llama-style
# q_proj, BERT-style query, and fused Wqkv / qkv_proj / qkv
Q_PROJ_NAMES = ("c_attn", "q_proj", "query", "Wqkv", "qkv_proj", "qkv")


def _uses_rotary(model):
    """Whether MODEL rotates q by position (RoPE) after the projection:
    a module path naming rotary or rope, or a config with rope settings."""
    for name, _ in model.named_modules():
        low = name.lower()
        if "rotary" in low or "rope" in low:
            return True
    cfg = getattr(model, "config", None)
    for a in ("rope_theta", "rope_scaling", "rope_parameters",
              "rotary_dim", "rotary_pct"):
        if cfg is not None and getattr(cfg, a, None) is not None:
            return True
    return getattr(cfg, "position_embedding_type", None) == "rotary"


def softcap_score_mod(cap):
    """FlexAttention's tanh soft-capping score_mod, cap tanh(score /
    cap), marked so that Capture.flex_attention records it as "softcap".
    """
    def softcap(score, b, h, q_idx, kv_idx):
        return cap * torch.tanh(score / cap)
    softcap.bf16emu_softcap = float(cap)
    return softcap


def _kernel_names(prof):
    """The distinct CUDA kernel names of a finished profiler, in order."""
    seen = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and \
                e.name not in seen:
            seen.append(e.name)
    return seen


def _start_profiler(errors=None):
    """A running CUDA profiler, or None where one cannot be started (for
    example inside a profiler the user runs); the reason is appended to
    the list ERRORS."""
    try:
        from torch.profiler import ProfilerActivity, profile
        try:
            p = profile(activities=[ProfilerActivity.CUDA], acc_events=True)
        except TypeError:
            p = profile(activities=[ProfilerActivity.CUDA])
        p.__enter__()
        return p
    except Exception as e:  # noqa: BLE001 -- any failure: no kernel names
        if errors is not None:
            errors.append("profiler start: %s: %s" % (type(e).__name__, e))
        return None


def _stop_profiler(p, errors=None):
    if p is None:
        return None
    try:
        torch.cuda.synchronize()
        p.__exit__(None, None, None)
    except Exception as e:  # noqa: BLE001
        if errors is not None:
            errors.append("profiler stop: %s: %s" % (type(e).__name__, e))
        return None
    try:
        return _kernel_names(p)
    except Exception as e:  # noqa: BLE001
        if errors is not None:
            errors.append("profiler events: %s: %s" % (type(e).__name__, e))
        return None


def _backward_kernels(q, k, v, is_causal, scale, enable_gqa, errors,
                      attn_mask=None):
    """The attention kernels of SDPA's backward on inputs shaped as Q, K,
    V (and the call's ATTN_MASK): SDPA runs once more on detached copies,
    with the caller's backend flags and deterministic setting, and its
    backward (a zero dO) runs under a profiler started here, on the
    forward's thread; None, with the reason in ERRORS, where that
    fails."""
    names = None
    try:
        with torch.enable_grad():
            qq, kk, vv = (t.detach().requires_grad_(True) for t in (q, k, v))
            o = _ORIG_SDPA(qq, kk, vv, attn_mask=attn_mask,
                           is_causal=is_causal, scale=scale,
                           enable_gqa=enable_gqa)
            torch.cuda.synchronize()
            prof = _start_profiler(errors)
            try:
                torch.autograd.grad(o, (qq, kk, vv), torch.zeros_like(o))
            finally:
                names = _stop_profiler(prof, errors) if prof else None
    except Exception as e:  # noqa: BLE001 -- never break the model
        errors.append("backward: %s: %s"
                      % (type(e).__name__, str(e).split("\n")[0][:160]))
        return None
    if names is None:
        return None
    return [x for x in names
            if re.search(r"flash|fmha|attention|cudnn|sdpa", x)]


# the dtypes of the calls recorded, as the manifest names them
_DTYPE_NAMES = {torch.bfloat16: "bfloat16", torch.float16: "float16"}


def _dtype_name(dt):
    return _DTYPE_NAMES.get(dt) or str(dt).replace("torch.", "")


def _is_cuda(t):
    return t.is_cuda


def _autocast_dtype():
    """The dtype CUDA autocast casts SDPA's inputs to, or None when CUDA
    autocast is off."""
    try:
        on = torch.is_autocast_enabled("cuda")
    except TypeError:  # an older PyTorch: CUDA only, no argument
        on = torch.is_autocast_enabled()
    if not on:
        return None
    try:
        return torch.get_autocast_dtype("cuda")
    except (AttributeError, TypeError):
        return torch.get_autocast_gpu_dtype()


def _autocast_cast(t, dtype):
    """T as CUDA autocast hands it to SDPA's kernel (its policy for SDPA
    casts every floating-point CUDA tensor but FP64 to the autocast
    dtype, with .to(): round to nearest even), detached but requiring a
    gradient where T does (PyTorch's backend choice depends on it); and
    whether it was cast."""
    cast = t.is_floating_point() and t.dtype not in (dtype, torch.float64)
    c = t.detach().to(dtype) if cast else t.detach()
    if t.requires_grad:
        c.requires_grad_(True)
    return c, cast


def _mask4(m):
    """The mask M viewed with 4 dimensions (leading ones of size 1)."""
    while m.dim() < 4:
        m = m.unsqueeze(0)
    return m


def _mask_pattern(m, nq, nk):
    """What the boolean mask M ([b, h, 1 or Nq, 1 or Nk], True: the key is
    seen) is: ("none", None) when every query row sees every key,
    ("causal", ALIGNMENT) when each slice is exactly a causal mask with
    no empty row (ALIGNMENT None when Nq == Nk, else "top-left": key j
    seen by row i when j <= i, or "bottom-right": j <= i + Nk - Nq), else
    (None, None)."""
    e = m.expand(m.shape[0], m.shape[1], nq, nk)
    if bool(e.all()):
        return "none", None
    i = torch.arange(nq, device=m.device).view(nq, 1)
    j = torch.arange(nk, device=m.device).view(1, nk)
    if torch.equal(e, (j <= i).expand_as(e)):
        return "causal", (None if nq == nk else "top-left")
    if nk > nq and torch.equal(e, (j <= i + (nk - nq)).expand_as(e)):
        return "causal", "bottom-right"
    return None, None


def _pad_bias(b, q, k):
    """The additive bias B as SDPA hands it to the memory-efficient op:
    expanded to [B, H, Nq, Nk], its rows in a buffer whose length is a
    multiple of 16 (the values are B's)."""
    B, H, nq = q.shape[0], q.shape[1], q.shape[2]
    nk = k.shape[2]
    b = _mask4(b).expand(B, H, nq, nk)
    if nk % 16 == 0:
        return b
    p = torch.zeros(B, H, nq, (nk + 15) // 16 * 16, dtype=b.dtype,
                    device=b.device)
    p[..., :nk] = b
    return p[..., :nk]


def _mask_biases(backend, mask, q, k):
    """The forms in which the backend op may have got the call's MASK
    from SDPA, each as (label, tensor), to be tried in turn: a boolean
    mask becomes an additive one of Q's dtype, 0 where a key is seen and
    -inf elsewhere (for cuDNN also -65504, the finite fill some PyTorch
    versions use); an additive mask is passed as it is."""
    if mask.dtype == torch.bool:
        fills = [("-inf", -math.inf)]
        if backend == "cudnn":
            fills.append(("-65504", -65504.0))
        out = []
        for label, f in fills:
            b = torch.zeros(mask.shape, dtype=q.dtype, device=mask.device)
            out.append((label, b.masked_fill_(~mask, f)))
    else:
        out = [("additive", mask)]
    if backend == "efficient":
        out = [(label, _pad_bias(b, q, k)) for label, b in out]
    return out


def _backend_op(backend, q, k, v, bias, is_causal, scale, nq):
    """The backend op SDPA dispatched to, called on Q, K, V with the
    additive BIAS (or None): (O, LSE), or (None, None) for the math
    backend (no op of its own)."""
    if backend == "flash":
        res = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, 0.0, is_causal, False, scale=scale)
        return res[0], res[1]
    if backend == "efficient":
        res = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, bias, True, 0.0, is_causal, scale=scale)
        return res[0], res[1][:, :, :nq]
    if backend == "cudnn":
        res = torch.ops.aten._scaled_dot_product_cudnn_attention(
            q, k, v, bias, True, 0.0, is_causal, False, scale=scale)
        lse = res[1]
        return res[0], (lse[..., 0] if lse.dim() == 4 else lse)
    return None, None


def _layer_index(name):
    """The one integer component of a module path, or None."""
    ints = [int(t) for t in name.split(".") if t.isdigit()]
    return ints[0] if len(ints) == 1 else None


def _nbytes(t):
    return t.numel() * t.element_size()


class _Call:
    """One recorded SDPA call: its tensors (CPU) and manifest entry."""

    def __init__(self, entry):
        self.entry = entry
        self.tensors = {}
        self.pending = None  # hook state while the backward is to come

    def nbytes(self):
        return sum(_nbytes(t) for t in self.tensors.values())


class Capture:
    """Records the SDPA calls of MODEL (see the module docstring)."""

    def __init__(self, model, layers=None, steps=None, heads=None,
                 batch=(0,), rows=None, backward=True, grads=False,
                 budget_bytes=1 << 30, profile=True, verify=True,
                 profile_backward=False, record_x=False):
        self.model = model
        self.layers = layers
        self.steps = None if steps is None else set(int(s) for s in steps)
        self.heads = heads
        self.batch = None if batch is None else [int(b) for b in batch]
        self.rows = rows
        self.backward = backward
        self.grads = grads
        self.budget = int(budget_bytes)
        self.profile = profile
        self.verify = verify
        # the backward's kernels, from one extra SDPA forward and backward
        # per recorded call at record time: off by default (it costs)
        self.profile_backward = profile_backward
        # X, the input of the query projection: True (the modules named
        # in Q_PROJ_NAMES), a function of a module path, or False
        self.record_x = record_x
        self.rotary = _uses_rotary(model)
        self._x_last = {}
        self.calls = []
        self.skipped = {}
        self.dropped = 0
        self.step = None
        self._names = {}
        self._order = {}
        self._stack = []
        self._handles = []
        self._bytes = 0
        self._per_step = {}
        self.launches = []
        self._active = False
        self.seen = 0  # SDPA calls seen while recording, recorded or not
        if rows is not None and not isinstance(rows, (list, tuple)):
            raise ValueError("rows: expected None, ('first', R), "
                             "('last', R) or a list of row indices")
        if isinstance(rows, tuple) and len(rows) == 2 and \
                rows[0] in ("first", "last"):
            if int(rows[1]) <= 0:
                raise ValueError("rows: R must be positive")
        for name, mod in model.named_modules():
            self._names[id(mod)] = name

    # -- selection ---------------------------------------------------------
    def _skip(self, why):
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def _layer_selected(self, index, name):
        if self.layers is None:
            return True
        if callable(self.layers):
            return bool(self.layers(index, name))
        return index in set(self.layers)

    def _heads_for(self, index, n):
        h = self.heads
        if isinstance(h, dict):
            h = h.get(index, None) if index in h else h.get("default")
        if h is None:
            return list(range(n))
        h = [int(x) for x in h]
        for x in h:
            if not 0 <= x < n:
                raise ValueError("heads: %d is not a head of a call with "
                                 "%d heads" % (x, n))
        return h

    def _current_name(self):
        return self._stack[-1] if self._stack else ""

    def _index_of(self, name):
        i = _layer_index(name)
        if i is None:
            if name not in self._order:
                self._order[name] = len(self._order)
            i = self._order[name]
        return i

    def _is_q_proj(self, name):
        if not self.record_x or not name:
            return False
        if callable(self.record_x):
            return bool(self.record_x(name))
        return name.rsplit(".", 1)[-1] in Q_PROJ_NAMES

    def _x_for(self, name, B, Nq, H, d, bsel, kq, entry,
               dtype=torch.bfloat16):
        """The recorded X of the attention module NAME, selected like q's
        batch entries and rows, as DTYPE (the call's: BF16 or FP16)
        [B', N', C]; None (and the reason in ENTRY["x_error"]) where there
        is none or it does not fit."""
        got = self._x_last.pop(name, None)
        if got is None:
            entry["x_error"] = "no query projection ran in %r" % name
            return None
        mname, x, nout = got
        if x.dim() != 3 or x.shape[0] != B or x.shape[1] != Nq:
            entry["x_error"] = ("%s: input %s is not [B=%d, N=%d, C]"
                                % (mname, list(x.shape), B, Nq))
            return None
        bidx = torch.tensor(bsel, dtype=torch.long, device=x.device)
        t = x.detach().index_select(0, bidx)
        t = t[:, kq] if isinstance(kq, slice) else t.index_select(1, kq)
        entry["x"] = {"module": mname, "features": int(x.shape[2]),
                      "source_dtype": str(x.dtype).replace("torch.", ""),
                      "fused_qkv": bool(nout != H * d),
                      "rotary": bool(self.rotary)}
        # what the projection's matrix product reads: under autocast an
        # FP32 input is rounded to BF16 (to nearest even), as .to() does
        return t.to(dtype).contiguous().cpu()

    # -- recording ---------------------------------------------------------
    @contextlib.contextmanager
    def recording(self, step):
        """Records the SDPA calls made inside the block as step STEP."""
        if self.step is not None:
            raise RuntimeError("Capture.recording: already recording")
        self.step = int(step)
        active = self.steps is None or self.step in self.steps
        for mod in self.model.modules():
            name = self._names.get(id(mod), "")

            def pre(m, args, _n=name):
                self._stack.append(_n)

            def post(m, args, out):
                if self._stack:
                    self._stack.pop()
            self._handles.append(mod.register_forward_pre_hook(pre))
            self._handles.append(mod.register_forward_hook(post))
            if active and self._is_q_proj(name):
                def xhook(m, args, out, _n=name):
                    if args and torch.is_tensor(args[0]) and \
                            torch.is_tensor(out):
                        parent = _n.rsplit(".", 1)[0] if "." in _n else ""
                        self._x_last[parent] = (_n, args[0], out.shape[-1])
                self._handles.append(mod.register_forward_hook(xhook))
        if active:
            F.scaled_dot_product_attention = self._sdpa
            torch.nn.functional.scaled_dot_product_attention = self._sdpa
        self._active = active
        try:
            yield self
        finally:
            self._active = False
            F.scaled_dot_product_attention = _ORIG_SDPA
            torch.nn.functional.scaled_dot_product_attention = _ORIG_SDPA
            for h in self._handles:
                h.remove()
            self._handles = []
            self._stack = []
            self._x_last = {}
            self.step = None

    # -- FlexAttention -----------------------------------------------------
    def flex_attention(self, fn):
        """A stand-in for FN (flex_attention, usually torch.compile'd) that
        records each call made while recording, as SDPA's calls are: Q, K,
        V, O, the LSE, dO (and dq, dk, dv with grads), the block mask's
        mask_mod evaluated at every (query, key) as attn_mask (a causal
        one recorded as causal), the kernel options and the launches of
        the forward and the backward (kernels.forward: the grids and
        blocks of flex_decoding's merge kernels, which inductor picks by
        timing; the grid of the backward's delta kernel, which it
        autotunes too: "delta_xblock").  A score_mod is recorded only when it
        carries bf16emu_softcap (softcap_score_mod makes one); others are
        skipped with the reason.  The model calls the returned function
        in place of FN."""
        cap = self

        def flex(query, key, value, score_mod=None, block_mask=None,
                 scale=None, enable_gqa=False, return_lse=False,
                 kernel_options=None, **kw):
            if not cap._active:
                return fn(query, key, value, score_mod=score_mod,
                          block_mask=block_mask, scale=scale,
                          enable_gqa=enable_gqa, return_lse=return_lse,
                          kernel_options=kernel_options, **kw)
            out, lse = fn(query, key, value, score_mod=score_mod,
                          block_mask=block_mask, scale=scale,
                          enable_gqa=enable_gqa, return_lse=True,
                          kernel_options=kernel_options, **kw)
            cap.seen += 1
            try:
                cap._record_flex(fn, query, key, value, score_mod,
                                 block_mask, scale, enable_gqa,
                                 kernel_options, kw, out, lse)
            except Exception as e:  # noqa: BLE001 -- never break the model
                cap._skip("flex: error: %s" % str(e).split("\n")[0][:200])
            return (out, lse) if return_lse else out
        return flex

    def _record_flex(self, fn, q, k, v, score_mod, block_mask, scale,
                     enable_gqa, kernel_options, kw, out, lse):
        name = self._current_name()
        index = self._index_of(name)
        if not self._layer_selected(index, name):
            return None
        if kw:
            return self._skip("flex: keyword arguments %s" % sorted(kw))
        dt = q.dtype
        if dt not in _DTYPE_NAMES or k.dtype != dt or v.dtype != dt \
                or any(t.dim() != 4 for t in (q, k, v)) or not _is_cuda(q):
            return self._skip("flex: not 4-D BF16 or FP16 on a CUDA device")
        B, H, Nq, d = q.shape
        Hkv, Nk = k.shape[1], k.shape[2]
        if Hkv != H and (not enable_gqa or H % Hkv != 0):
            return self._skip("flex: grouped heads without enable_gqa")
        softcap = getattr(score_mod, "bf16emu_softcap", None) \
            if score_mod is not None else None
        if score_mod is not None and softcap is None:
            return self._skip("flex: a score_mod other than "
                              "softcap_score_mod's")
        if self.rows is not None:
            return self._skip("flex: rows selection")
        bs = getattr(block_mask, "BLOCK_SIZE", (128, 128)) \
            if block_mask is not None else (128, 128)
        if tuple(int(x) for x in bs) != (128, 128):
            return self._skip("flex: block mask blocks other than 128")
        heads = self._heads_for(index, H)
        bsel = [b for b in (range(B) if self.batch is None else self.batch)
                if 0 <= b < B]
        grp = H // Hkv
        kv_heads = sorted(set(h // grp for h in heads))
        if Hkv != H and [h for kv in kv_heads for h in
                         range(kv * grp, kv * grp + grp)] != heads:
            return self._skip("flex: heads: not whole groups in order")
        dev = q.device
        bidx = torch.tensor(bsel, dtype=torch.long, device=dev)
        hidx = torch.tensor(heads, dtype=torch.long, device=dev)
        kvidx = torch.tensor(kv_heads, dtype=torch.long, device=dev)

        def sel_q(t):
            return t.index_select(0, bidx).index_select(1, hidx)

        def sel_k(t):
            return t.index_select(0, bidx).index_select(1, kvidx)

        causal = False
        mask = None
        if block_mask is not None:
            from torch.nn.attention.flex_attention import create_mask
            with torch.no_grad():
                m = create_mask(block_mask.mask_mod, B, H, Nq, Nk,
                                device=dev)
                tri = torch.ones(Nq, Nk, dtype=torch.bool,
                                 device=dev).tril()
                if bool(torch.equal(m, tri.expand_as(m))):
                    causal = True
                elif not bool(m.all()):
                    mask = sel_q(m)
        fwd_launches, launches = self._flex_launches(
            fn, q, k, v, score_mod, block_mask, scale, enable_gqa,
            kernel_options)
        if fwd_launches and not any(
                "tem_fused_flex_attention" in (ln["name"] or "")
                for ln in fwd_launches):
            # torch.compile ran flex_attention's unfused implementation
            # (its fallback, e.g. past dynamo's recompile limit): not the
            # Triton kernel the flex descriptions model
            return self._skip("flex: unfused (no Triton flex kernel ran; "
                              "torch._dynamo.config.recompile_limit?)")
        xb = None
        for ln in launches or []:
            if "per_fused_flex_attention_backward" in (ln["name"] or "") \
                    and ln.get("grid"):
                xb = max(1, B * H * Nq // int(ln["grid"][0]))
        launch = {"batch": B, "heads": H, "nq": Nq, "nk": Nk, "d": d}
        if Hkv != H:
            launch["kv_heads"] = Hkv
        entry = {"layer": index, "step": self.step, "name": name,
                 "causal": causal, "scale": None if scale is None
                 else float(scale), "layout": "bhnd",
                 "dtype": _dtype_name(dt), "backend": "flex",
                 "heads_kept": heads, "rows_kept": None,
                 "launch_shape": launch, "batch_kept": bsel,
                 "softcap": softcap,
                 "kernel_options": dict(kernel_options or {}),
                 "kernels": {"forward": fwd_launches or [],
                             "backward": launches or []},
                 "delta_xblock": xb}
        if Hkv != H:
            entry["enable_gqa"] = True
            entry["kv_heads"] = Hkv
            entry["kv_heads_from"] = kv_heads
        call = _Call(entry)
        with torch.no_grad():
            for n, t in (("q", sel_q(q)), ("k", sel_k(k)), ("v", sel_k(v)),
                         ("o", sel_q(out.detach()))):
                call.tensors[n] = t.detach().contiguous().cpu()
            call.tensors["lse"] = sel_q(lse.detach()).float().contiguous() \
                .cpu()
            if mask is not None:
                mt = mask.to(torch.uint8).contiguous().cpu()
                call.tensors["attn_mask"] = mt
                entry["attn_mask"] = {"dtype": "uint8",
                                      "shape": list(mt.shape),
                                      "kind": "bool",
                                      "source_shape": [B, H, Nq, Nk]}
                entry["mask_mod"] = "attn_mask"
        self._keep(call, index, (q, k, v), out, sel_q, sel_k, True, dt)
        return None

    @staticmethod
    def _trace_kernels(prof):
        """The CUDA kernels (name, grid, block) of a profiler's trace."""
        import tempfile
        with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
            prof.export_chrome_trace(f.name)
            trace = json.load(open(f.name))
        out = []
        for ev in trace.get("traceEvents", []):
            if str(ev.get("cat", "")).lower() != "kernel":
                continue
            a = ev.get("args", {})
            out.append({"name": ev.get("name"), "grid": a.get("grid"),
                        "block": a.get("block")})
        return out

    def _flex_launches(self, fn, q, k, v, score_mod, block_mask, scale,
                       enable_gqa, kernel_options):
        """The kernels (name, grid, block) of one more forward and of its
        backward of FN on detached copies, from the profiler's traces (the
        forward's: flex_decoding's merge kernels, whose configuration
        inductor picks by timing); (None, None) where that fails.  The
        forward asks for the LSE, as the recorded call did: without it
        inductor compiles another graph, with other merge kernels."""
        try:
            from torch.profiler import ProfilerActivity, profile
            with torch.enable_grad():
                qq, kk, vv = (t.detach().requires_grad_(True)
                              for t in (q, k, v))
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as fprof:
                    o, _ = fn(qq, kk, vv, score_mod=score_mod,
                              block_mask=block_mask, scale=scale,
                              enable_gqa=enable_gqa, return_lse=True,
                              kernel_options=kernel_options)
                    torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    torch.autograd.grad(o, (qq, kk, vv), torch.ones_like(o))
                    torch.cuda.synchronize()
            return self._trace_kernels(fprof), self._trace_kernels(prof)
        except Exception as e:  # noqa: BLE001 -- never break the model
            self._skip("flex: kernels: %s" % str(e)[:120])
            return None, None

    def _sdpa(self, query, key, value, attn_mask=None, dropout_p=0.0,
              is_causal=False, scale=None, enable_gqa=False, **kw):
        out = _ORIG_SDPA(query, key, value, attn_mask=attn_mask,
                         dropout_p=dropout_p, is_causal=is_causal,
                         scale=scale, enable_gqa=enable_gqa, **kw)
        self.seen += 1
        try:
            self._record(query, key, value, attn_mask, dropout_p, is_causal,
                         scale, enable_gqa, kw, out)
        except Exception as e:  # noqa: BLE001 -- never break the model
            self._skip("error: %s" % str(e).split("\n")[0][:200])
        return out

    def _record(self, q, k, v, attn_mask, dropout_p, is_causal, scale,
                enable_gqa, kw, out):
        name = self._current_name()
        index = self._index_of(name)
        if not self._layer_selected(index, name):
            return
        if kw:
            return self._skip("keyword arguments %s" % sorted(kw))
        if dropout_p != 0.0:
            return self._skip("dropout")
        if any(t.dim() != 4 for t in (q, k, v)):
            return self._skip("not 4-D")
        if attn_mask is not None and (not torch.is_tensor(attn_mask) or
                                      not 1 <= attn_mask.dim() <= 4):
            return self._skip("attn_mask: not a tensor of 1 to 4 "
                              "dimensions")
        # what the kernel got: under CUDA autocast SDPA's floating-point
        # inputs are cast to the autocast dtype before the kernel runs;
        # the gradient hooks stay on the model's own tensors (the cast's
        # gradient is the kernel's, converted exactly)
        grad_src = (q, k, v)
        cast = None
        ac = _autocast_dtype() if _is_cuda(q) else None
        with torch.no_grad():
            if ac is not None:
                got = [_autocast_cast(t, ac) for t in (q, k, v)]
                (q, cq), (k, ck), (v, cv) = got
                cm = False
                if attn_mask is not None:
                    attn_mask, cm = _autocast_cast(attn_mask, ac)
                if cq or ck or cv or cm:
                    cast = ac
        dt = q.dtype
        if dt not in _DTYPE_NAMES or k.dtype != dt or v.dtype != dt:
            return self._skip("not BF16 or FP16")
        if not _is_cuda(q):
            return self._skip("not on a CUDA device")
        B, H, Nq, d = q.shape
        Hkv, Nk = k.shape[1], k.shape[2]
        if v.shape[1] != Hkv:
            return self._skip("K and V head counts differ")
        gqa = Hkv != H
        if gqa and not enable_gqa:
            return self._skip("grouped heads without enable_gqa")
        if gqa and H % Hkv != 0:
            return self._skip("grouped heads: Hkv does not divide Hq")
        if q.shape[3] != k.shape[3] or v.shape[3] != q.shape[3]:
            return self._skip("head dimensions differ")
        if out.dtype != dt:
            return self._skip("output dtype is not the inputs'")
        m4 = None
        mask_kind = None
        if attn_mask is not None:
            m4 = _mask4(attn_mask)
            if any(s not in (1, f) for s, f in zip(m4.shape,
                                                   (B, H, Nq, Nk))):
                return self._skip("attn_mask: not broadcastable to "
                                  "[B, H, Nq, Nk]")
            if attn_mask.dtype == torch.bool:
                mask_kind = "bool"
            elif attn_mask.is_floating_point():
                mask_kind = "additive"
            else:
                return self._skip("attn_mask: neither boolean nor "
                                  "floating-point")
            if not _is_cuda(attn_mask):
                return self._skip("attn_mask: not on a CUDA device")
        heads = self._heads_for(index, H)
        bsel = [b for b in (range(B) if self.batch is None else self.batch)
                if 0 <= b < B]
        if not bsel:
            return self._skip("no batch entry selected")
        bidx = torch.tensor(bsel, dtype=torch.long, device=q.device)
        hidx = torch.tensor(heads, dtype=torch.long, device=q.device)
        # the mask at the kept batch entries and heads: a boolean one that
        # is exactly a causal mask there (or lets every row see every key)
        # is recorded as that, not as bits
        msel = None
        mask_was = None
        mask_align = None
        if m4 is not None:
            msel = m4
            if m4.shape[0] != 1:
                msel = msel.index_select(0, bidx)
            if m4.shape[1] != 1:
                msel = msel.index_select(1, hidx)
            if mask_kind == "bool":
                mask_was, mask_align = _mask_pattern(msel, Nq, Nk)
        # a causal-shaped mask still runs the masked kernel (cuDNN adds it
        # as a bias: on the H100 its LSE differed from is_causal's in a
        # few rows), so it is recorded as a mask, with what it was
        causal = bool(is_causal)
        scale_v = None if scale is None else float(scale)
        # the rows
        rows_kept = None
        causal_alignment = None
        r = self.rows
        kq = slice(None)
        kk = slice(None)
        every_row = True
        if isinstance(r, tuple) and len(r) == 2 and r[0] == "first":
            R = min(int(r[1]), Nq)
            if R < Nq:
                if Nq != Nk:
                    return self._skip("rows ('first', R) with Nq != Nk")
                kq, kk = slice(0, R), slice(0, R)
                every_row = False
        elif isinstance(r, tuple) and len(r) == 2 and r[0] == "last":
            R = min(int(r[1]), Nq)
            if R < Nq:
                kq = slice(Nq - R, Nq)
                every_row = False
                if causal:
                    if Nq != Nk:
                        return self._skip("rows ('last', R) of a causal call "
                                          "with Nq != Nk")
                    causal_alignment = "bottom-right"
        elif r is not None:
            if causal:
                return self._skip("row indices with a causal mask")
            rows_kept = sorted(set(int(x) for x in r if 0 <= int(x) < Nq))
            kq = torch.tensor(rows_kept, dtype=torch.long, device=q.device)
            every_row = len(rows_kept) == Nq
        if causal_alignment is None and mask_align is not None:
            causal_alignment = mask_align
        # grouped-query heads: the KV heads the kept query heads read
        # (query head h reads KV head h // (H / Hkv)), in equal groups
        if gqa:
            grp = H // Hkv
            kv_of = [h // grp for h in heads]
            kv_heads = sorted(set(kv_of))
            per = len(heads) // len(kv_heads)
            if len(heads) % len(kv_heads) != 0 or \
                    kv_of != [kv_heads[i // per] for i in range(len(heads))]:
                return self._skip("heads: the kept query heads do not read "
                                  "their KV heads in equal groups, in order")
            kvidx = torch.tensor(kv_heads, dtype=torch.long, device=q.device)
            whole_groups = per == grp
        else:
            kv_heads = heads
            kvidx = hidx
            whole_groups = True

        def sel_q(t):
            t = t.index_select(0, bidx).index_select(1, hidx)
            if isinstance(kq, slice):
                t = t[:, :, kq]
            else:
                t = t.index_select(2, kq)
            return t

        def sel_k(t):
            return t.index_select(0, bidx).index_select(1, kvidx)[:, :, kk]

        def sel_lse(t):
            t = t.index_select(0, bidx).index_select(1, hidx)
            if isinstance(kq, slice):
                return t[:, :, kq]
            return t.index_select(2, kq)

        def sel_mask(t):
            if t.shape[2] == Nq:
                t = t[:, :, kq] if isinstance(kq, slice) else \
                    t.index_select(2, kq)
            if t.shape[3] == Nk:
                t = t[:, :, :, kk]
            return t

        # the backend op: its O against SDPA's, its LSE and kernels
        choice_kw = {"scale": scale}
        if enable_gqa:
            choice_kw["enable_gqa"] = True
        choice = int(torch._fused_sdp_choice(q, k, v, attn_mask, 0.0,
                                             is_causal, **choice_kw))
        backend = CHOICE_NAMES.get(choice, "unknown")
        lse = None
        o_equal = None
        kernels = None
        mask_form = None
        op_error = None
        with torch.no_grad():
            perr = []
            biases = [(None, None)] if attn_mask is None else \
                _mask_biases(backend, attn_mask, q, k)
            for bi, (label, bias) in enumerate(biases):
                # the kernels: of the first try alone, the op's own
                prof = _start_profiler(perr) if self.profile and bi == 0 \
                    else None
                o2 = None
                try:
                    o2, lse = _backend_op(backend, q, k, v, bias, is_causal,
                                          scale, Nq)
                except Exception as e:  # noqa: BLE001 -- keep the call
                    op_error = "%s: %s" % (type(e).__name__,
                                           str(e).split("\n")[0][:200])
                    lse = None
                finally:
                    if bi == 0:
                        kernels = _stop_profiler(prof, perr)
                if o2 is None:
                    break
                mask_form = label
                o_equal = bool(torch.equal(o2.view(torch.int16),
                                           out.detach().view(torch.int16)))
                del o2
                if o_equal:
                    break
                lse = None  # not the LSE of the O that SDPA gave
        bkernels = None
        berr = []
        if self.profile_backward and self.backward and out.requires_grad:
            bkernels = _backward_kernels(q, k, v, is_causal, scale,
                                         enable_gqa, berr, attn_mask)
        launch = {"batch": B, "heads": H, "nq": Nq, "nk": Nk, "d": d}
        if gqa:
            launch["kv_heads"] = Hkv
        entry = {"layer": index, "step": self.step, "name": name,
                 "causal": causal, "scale": scale_v,
                 "layout": "bhnd", "dtype": _dtype_name(dt),
                 "backend": backend,
                 "kernels": kernels, "heads_kept": heads,
                 "rows_kept": rows_kept,
                 "launch_shape": launch,
                 "batch_kept": bsel,
                 "o_equal_backend_op": o_equal}
        if perr:
            entry["kernels_error"] = "; ".join(perr)[:300]
        if self.profile_backward and self.backward and out.requires_grad:
            entry["backward_kernels"] = bkernels
            if berr:
                entry["backward_kernels_error"] = "; ".join(berr)[:300]
        if causal_alignment:
            entry["causal_alignment"] = causal_alignment
        if isinstance(r, tuple) and not every_row:
            entry["rows_selection"] = [r[0], int(r[1])]
        if enable_gqa:
            entry["enable_gqa"] = True
        if gqa:
            entry["kv_heads"] = Hkv
            entry["kv_heads_from"] = kv_heads
        if cast is not None:
            entry["autocast"] = _dtype_name(cast)
        if op_error is not None:
            entry["backend_op_error"] = op_error
        call = _Call(entry)
        with torch.no_grad():
            for n, t in (("q", sel_q(q)), ("k", sel_k(k)), ("v", sel_k(v)),
                         ("o", sel_q(out.detach()))):
                call.tensors[n] = t.detach().contiguous().cpu()
            if lse is not None:
                call.tensors["lse"] = sel_lse(lse).float().contiguous().cpu()
            if m4 is not None:
                if mask_was is not None:
                    entry["mask_was"] = mask_was
                if mask_was != "none":
                    mt = sel_mask(msel)
                    if mask_kind == "bool":
                        mt = mt.to(torch.uint8)
                    mt = mt.contiguous().cpu()
                    call.tensors["attn_mask"] = mt
                    entry["attn_mask"] = {
                        "dtype": _dtype_name(mt.dtype),
                        "shape": list(mt.shape), "kind": mask_kind,
                        "source_shape": list(m4.shape)}
                entry["backend_op_mask"] = mask_form
            if self.record_x:
                xt = self._x_for(name, B, Nq, H, d, bsel, kq, entry, dt)
                if xt is not None:
                    call.tensors["x"] = xt
        self._keep(call, index, grad_src, out, sel_q, sel_k,
                   every_row and whole_groups, dt)
        return None

    def _keep(self, call, index, src, out, sel_q, sel_k, keep_dkv, dt):
        """CALL kept within the budget (what its backward will add
        counted), named by its layer INDEX and step, with the backward's
        hooks on OUT and SRC; else counted as dropped."""
        est = call.nbytes()
        if self.backward and out.requires_grad:
            est += _nbytes(call.tensors["o"])
            if self.grads:
                est += _nbytes(call.tensors["q"])
                if keep_dkv:
                    est += 2 * _nbytes(call.tensors["k"])
        if self._bytes + est > self.budget:
            self.dropped += 1
            return
        self._bytes += est
        # the prefix: one call per (layer, step), else numbered
        key = (index, self.step)
        n = self._per_step.get(key, 0)
        self._per_step[key] = n + 1
        if n > 0:
            call.entry["prefix"] = "L%d.s%d.c%d." % (index, self.step, n)
        self.calls.append(call)
        if self.backward and out.requires_grad:
            self._hook_backward(call, src, out, sel_q, sel_k, keep_dkv, dt)

    def _hook_backward(self, call, src, out, sel_q, sel_k, keep_dkv, dt):
        """Hooks that keep dO and, with grads, dq (and dk, dv where
        KEEP_DKV) of the call, as DT: SRC are the tensors the model passed
        to SDPA."""
        q, k, v = src
        want = []
        if self.grads:
            want = [("dq", q, sel_q)]
            if keep_dkv:
                want += [("dk", k, sel_k), ("dv", v, sel_k)]
        want = [w for w in want if w[1].requires_grad]

        def on_do(g):
            call.tensors["do"] = sel_q(g.detach()).to(dt).contiguous().cpu()
            return None

        def make(name, sel):
            def on_grad(g):
                call.tensors[name] = sel(g.detach()).to(dt).contiguous().cpu()
                return None
            return on_grad

        out.register_hook(on_do)
        for name, t, sel in want:
            t.register_hook(make(name, sel))

    # -- a sub-recording ---------------------------------------------------
    def subset(self, calls=None, heads=None, first_rows=None):
        """A new Capture holding CALLS (a list of indices into self.calls;
        None: all) with HEADS ({layer: [model head indices]} or a list) and
        the first FIRST_ROWS rows and keys (Nq == Nk calls; causal or not),
        from the tensors already recorded."""
        sub = Capture.__new__(Capture)
        sub.__dict__.update({k: v for k, v in self.__dict__.items()})
        sub.calls = []
        sub._bytes = 0
        for ci in (range(len(self.calls)) if calls is None else calls):
            c = self.calls[ci]
            e = json.loads(json.dumps(c.entry))
            kept = e["heads_kept"]
            want = heads.get(e["layer"], kept) if isinstance(heads, dict) \
                else (kept if heads is None else heads)
            pos = [kept.index(h) for h in want]
            kpos, whole = self._subset_kv(e, want)
            n = _Call(e)
            e["heads_kept"] = list(want)
            am = e.get("attn_mask")
            for name, t in c.tensors.items():
                if name in ("dk", "dv") and not whole:
                    continue  # sums over query heads left out
                if name in ("k", "v", "dk", "dv"):
                    t = t[:, kpos]
                elif name == "attn_mask":
                    if am["source_shape"][1] != 1:
                        t = t[:, pos]
                elif name != "x":
                    t = t[:, pos]
                if first_rows is not None:
                    if e.get("rows_kept") is not None or \
                            e.get("causal_alignment") is not None:
                        raise ValueError("subset: first_rows of a call "
                                         "that keeps a subset of rows")
                    if name in ("dk", "dv"):
                        continue  # they depend on the rows dropped
                    if name == "attn_mask":
                        if am["source_shape"][2] != 1:
                            t = t[:, :, :first_rows]
                        if am["source_shape"][3] != 1:
                            t = t[:, :, :, :first_rows]
                    else:
                        t = t[:, :first_rows] if name == "x" else \
                            t[:, :, :first_rows]
                n.tensors[name] = t.contiguous()
                if name == "attn_mask":
                    am["shape"] = list(t.shape)
            if first_rows is not None:
                e["rows_selection"] = ["first", int(first_rows)]
            sub.calls.append(n)
            sub._bytes += n.nbytes()
        return sub

    @staticmethod
    def _subset_kv(e, want):
        """The positions, among the KV heads the call entry E keeps, of
        those the query heads WANT read, and whether every query head of
        each of them is in WANT (else dk and dv, sums over them all, are
        left out); E's kv_heads_from is updated.  Ungrouped calls: WANT's
        own positions."""
        kvf = e.get("kv_heads_from")
        if kvf is None:
            return [e["heads_kept"].index(h) for h in want], True
        grp = e["launch_shape"]["heads"] // e["kv_heads"]
        kv_of = [h // grp for h in want]
        kv = sorted(set(kv_of))
        per = len(want) // len(kv)
        if len(want) % len(kv) != 0 or \
                kv_of != [kv[i // per] for i in range(len(want))]:
            raise ValueError("subset: the heads %s do not read their KV "
                             "heads in equal groups, in order" % (want,))
        e["kv_heads_from"] = kv
        return [kvf.index(j) for j in kv], per == grp

    # -- writing -----------------------------------------------------------
    def manifest(self, extra=None):
        calls = [c.entry for c in self.calls]
        m = {"format": "bf16emu-capture", "version": 1,
             "producer": "experiments/gpu/capture.py",
             "date": datetime.datetime.now(datetime.timezone.utc)
             .strftime("%Y-%m-%dT%H:%M:%SZ"),
             "torch": torch.__version__, "cuda": torch.version.cuda}
        try:
            m["gpu"] = torch.cuda.get_device_name(0)
            m["cudnn"] = torch.backends.cudnn.version()
        except Exception:  # noqa: BLE001
            pass
        m["deterministic"] = torch.are_deterministic_algorithms_enabled()
        backends = sorted({c["backend"] for c in calls})
        if len(backends) == 1:
            m["backend"] = backends[0]
        # settings every call shares, at the top level too (for
        # `bf16emu diff --q FILE:KEY ...` on one call)
        for f in ("causal", "scale", "layout", "dtype"):
            vals = {json.dumps(c.get(f)) for c in calls}
            if len(vals) == 1 and calls:
                m[f] = calls[0].get(f)
        if m.get("scale", 0) is None:
            m["scale"] = "1/sqrt(d) (PyTorch default)"  # as diff reads it
        # grouped-query heads and autocast, where every call has them
        for f in ("enable_gqa", "autocast"):
            vals = {json.dumps(c.get(f)) for c in calls}
            if len(vals) == 1 and calls and calls[0].get(f) is not None:
                m[f] = calls[0].get(f)
        m["calls"] = calls
        m["skipped"] = self.skipped
        m["dropped"] = self.dropped
        if extra:
            m.update(extra)
        return m

    def save(self, path, shard_bytes=1 << 30, sidecar=True, extra=None,
             per_call=False):
        """Writes the recording (see the module docstring); returns the
        list of files written.  With PER_CALL, one file per call instead,
        PATH.L{layer}.s{step}.safetensors, with the plain keys q, k, v, o,
        lse, do, ... and a one-call manifest that also gives the call's
        settings and shape at the top level, as `bf16emu diff --dump FILE`
        reads them."""
        if save_file is None:
            raise RuntimeError("capture.save needs the safetensors package")
        if per_call:
            return self._save_per_call(path, sidecar, extra)
        groups, cur, size = [], [], 0
        for c in self.calls:
            n = c.nbytes()
            if cur and size + n > shard_bytes:
                groups.append(cur)
                cur, size = [], 0
            cur.append(c)
            size += n
        if cur or not groups:
            groups.append(cur)
        m = self.manifest(extra)
        text = json.dumps(m)
        files = []
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        for gi, g in enumerate(groups):
            if len(groups) == 1:
                fn = path + ".safetensors"
            else:
                fn = "%s-%05d-of-%05d.safetensors" % (path, gi + 1,
                                                       len(groups))
            tensors = {}
            for c in g:
                pre = c.entry.get("prefix") or "L%d.s%d." % (
                    c.entry["layer"], c.entry["step"])
                for name, t in c.tensors.items():
                    tensors[pre + name] = t
            save_file(tensors, fn, metadata={"manifest": text})
            files.append(fn)
        if sidecar:
            with open(path + ".json", "w") as f:
                json.dump(m, f, indent=1)
                f.write("\n")
            files.append(path + ".json")
        return files


    def _save_per_call(self, path, sidecar, extra):
        files = []
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        for c in self.calls:
            e = dict(c.entry)
            pre = e.get("prefix") or "L%d.s%d." % (e["layer"], e["step"])
            e["prefix"] = ""
            one = Capture.__new__(Capture)
            one.__dict__.update(self.__dict__)
            one.calls = [_Call(e)]
            m = one.manifest(extra)
            q = c.tensors["q"]
            m["shape"] = {"batch": int(q.shape[0]),
                          "heads": int(e["launch_shape"]["heads"]),
                          "nq": int(q.shape[2]),
                          "nk": int(c.tensors["k"].shape[2]),
                          "d": int(q.shape[3])}
            m["heads_kept"] = e["heads_kept"]
            if e.get("causal_alignment"):
                m["causal_alignment"] = e["causal_alignment"]
            for f in ("kv_heads_from", "mask_was", "attn_mask"):
                if e.get(f) is not None:
                    m[f] = e[f]
            fn = "%s.%ssafetensors" % (path, pre)
            save_file(dict(c.tensors), fn,
                      metadata={"manifest": json.dumps(m)})
            files.append(fn)
            if sidecar:
                side = fn[:-len(".safetensors")] + ".json"
                with open(side, "w") as f:
                    json.dump(m, f, indent=1)
                    f.write("\n")
                files.append(side)
        return files


# ---------------------------------------------------------------------------
# Exact repeated maxima (an independent count, for tests)
# ---------------------------------------------------------------------------
def _bf16_ints(t):
    """BF16 tensor T (CPU) as Python (mantissa, exponent) lists: each value
    is mantissa * 2**exponent exactly."""
    out = []
    for x in t.float().tolist():
        if x == 0.0:
            out.append((0, 0))
        else:
            m, e = math.frexp(x)
            out.append((int(m * (1 << 24)), e - 24))
    return out


def _exact_dot(a, b):
    """The exact dot product of two (mantissa, exponent) lists, as
    (integer, exponent)."""
    terms = [(ma * mb, ea + eb) for (ma, ea), (mb, eb) in zip(a, b)
             if ma != 0 and mb != 0]
    if not terms:
        return (0, 0)
    e0 = min(e for _, e in terms)
    return (sum(m << (e - e0) for m, e in terms), e0)


def _cmp_exact(x, y):
    (mx, ex), (my, ey) = x, y
    e = min(ex, ey)
    a, b = mx << (ex - e), my << (ey - e)
    return (a > b) - (a < b)


def repeated_max_rows(q, k, causal, bottom_right=True, deadline=None):
    """Per head, the number of query rows whose exact scores q_i . k_j
    (over the keys the causal mask leaves) have their maximum two or more
    times.  Q [H, Nq, d], K [H, Nk, d] BF16 (CPU).  Float64 sums find the
    candidates (each BF16 product is exact in binary64; a sum of d of them
    is within d * 2**-53 * sum|products| of the exact value), and exact
    integer sums decide among them.  Heads not finished by DEADLINE
    (time.time()) are None."""
    import time
    H, Nq, d = q.shape
    Nk = k.shape[1]
    qd, kd = q.double(), k.double()
    s = torch.einsum("hid,hjd->hij", qd, kd)
    bound = torch.einsum("hid,hjd->hij", qd.abs(), kd.abs()) * \
        (d * 2.0 ** -52)
    if causal:
        off = Nk - Nq if bottom_right else 0
        i = torch.arange(Nq).view(Nq, 1)
        j = torch.arange(Nk).view(1, Nk)
        masked = j > i + off
        s = s.masked_fill(masked, -math.inf)
        bound = bound.masked_fill(masked, 0.0)
    counts = []
    for h in range(H):
        if deadline is not None and time.time() > deadline:
            counts.append(None)
            continue
        n = 0
        sh, bh = s[h], bound[h]
        top = sh.max(dim=1).values
        lo = sh - bh
        hi = sh + bh
        # candidates: keys whose upper bound reaches the largest lower bound
        best_lo = torch.where(torch.isinf(sh), torch.full_like(sh, -math.inf),
                              lo).max(dim=1).values
        cand = hi >= best_lo.view(-1, 1)
        ncand = cand.sum(dim=1)
        for i in torch.nonzero(ncand >= 2).flatten().tolist():
            js = torch.nonzero(cand[i]).flatten().tolist()
            qi = _bf16_ints(q[h, i])
            vals = [_exact_dot(qi, _bf16_ints(k[h, j])) for j in js]
            best = vals[0]
            for x in vals[1:]:
                if _cmp_exact(x, best) > 0:
                    best = x
            if sum(1 for x in vals if _cmp_exact(x, best) == 0) >= 2:
                n += 1
        del top
        counts.append(n)
    return counts


# ---------------------------------------------------------------------------
# Self-test: a nanoGPT-style block and a transformers GPT-2
# ---------------------------------------------------------------------------
class _Attn(torch.nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.h = h
        self.c_attn = torch.nn.Linear(c, 3 * c)
        self.c_proj = torch.nn.Linear(c, c)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2)
                   for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


def _selftest(out_dir):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.manual_seed(0)
    report = {}
    dev = "cuda"
    # nanoGPT-style: two attention modules in a Sequential
    m = torch.nn.Sequential(_Attn(256, 4), _Attn(256, 4)).to(dev)
    x = torch.randn(4, 256, 256, device=dev)
    cap = Capture(m, heads={0: [0, 2], "default": None}, batch=[1],
                  backward=True, grads=True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
            torch.autocast("cuda", dtype=torch.bfloat16):
        ref = m(x).float().sum()
        with cap.recording(step=3):
            y = m(x).float().sum()
        y.backward()
    report["nanogpt_out_equal"] = bool(torch.equal(ref, y))
    report["nanogpt_files"] = cap.save(os.path.join(out_dir, "selftest_nano"),
                                       shard_bytes=600_000)
    report["nanogpt_manifest"] = cap.manifest()
    q = cap.calls[1].tensors["q"][0]
    kk = cap.calls[1].tensors["k"][0]
    report["nanogpt_repmax"] = repeated_max_rows(q, kk, True)
    # transformers GPT-2, randomly initialised, no downloads
    try:
        import transformers
        cfg = transformers.GPT2Config(n_layer=2, n_head=4, n_embd=256,
                                      n_positions=512, vocab_size=512,
                                      attn_pdrop=0.0, resid_pdrop=0.0,
                                      embd_pdrop=0.0)
        g = transformers.AutoModelForCausalLM.from_config(
            cfg, attn_implementation="sdpa")
        g = g.to(dev).to(torch.bfloat16)
        ids = torch.randint(0, 512, (2, 256), device=dev)
        cap2 = Capture(g, batch=None, rows=("last", 64), backward=True,
                       grads=True)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            with cap2.recording(step=0):
                loss = g(ids, labels=ids).loss
            loss.backward()
        report["hf_version"] = transformers.__version__
        report["hf_files"] = cap2.save(os.path.join(out_dir, "selftest_hf"))
        report["hf_manifest"] = cap2.manifest()
    except ImportError as e:
        report["hf_error"] = "transformers not importable: %s" % e
    return report


def _dw_check(cap, weight_grad_rows):
    """Per call of CAP (every batch entry and row kept, grads=True, X
    recorded): the largest |sum_b X_b^T dq_b,h - dW_h| / max |dW_h| over
    the heads h, with dW_h = WEIGHT_GRAD_ROWS(layer, h) ([d, C] fp32, the
    rows of dW_Q of head h) and the sum in float64 from the captured BF16
    tensors: a check that x and dq are the tensors dW_Q is made of."""
    out = {}
    for c in cap.calls:
        e = c.entry
        if "x" not in c.tensors or "dq" not in c.tensors:
            out[e["name"]] = "x or dq missing: %s" % e.get("x_error")
            continue
        x = c.tensors["x"].double()           # [B, N, C]
        dq = c.tensors["dq"].double()         # [B, H, N, d]
        worst = 0.0
        for hi, h in enumerate(e["heads_kept"]):
            mine = torch.einsum("bnd,bnc->dc", dq[:, hi], x)
            ref = weight_grad_rows(e["layer"], h).double().cpu()
            worst = max(worst, float((mine - ref).abs().max() /
                                     ref.abs().max()))
        out[e["name"]] = worst
    return out


def _selftest_x(out_dir):
    """X recording: a nanoGPT-style model (fused c_attn), a transformers
    GPT-2 (Conv1D c_attn) and a Llama (q_proj, rotary), each randomly
    initialised; per_call saving; a profiled backward.  Each part's
    failure is reported under its name and the others still run."""
    rep = {}
    for name, part in (("nano", _st_nano), ("profile", _st_profile),
                       ("hf", _st_hf)):
        try:
            part(out_dir, rep)
        except Exception as e:  # noqa: BLE001 -- report, go on
            import traceback
            rep[name + "_error"] = "%s: %s\n%s" % (
                type(e).__name__, e, traceback.format_exc()[-1500:])
    return rep


def _st_model():
    torch.manual_seed(1)
    m = torch.nn.Sequential(_Attn(256, 4), _Attn(256, 4)).to("cuda")
    x = torch.randn(3, 256, 256, device="cuda")
    return m, x


def _st_nano(out_dir, rep):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = "cuda"
    m, x = _st_model()
    cap = Capture(m, batch=None, backward=True, grads=True, record_x=True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
            torch.autocast("cuda", dtype=torch.bfloat16):
        with cap.recording(step=0):
            y = m(x).float().sum()
        y.backward()
    rep["nano_x_entries"] = [c.entry.get("x") or c.entry.get("x_error")
                             for c in cap.calls]
    rep["nano_x_shapes"] = [list(c.tensors["x"].shape) for c in cap.calls
                            if "x" in c.tensors]

    def nano_rows(layer, h):
        d = 256 // 4
        return m[layer].c_attn.weight.grad[h * d:(h + 1) * d]
    rep["nano_dw_rel_err"] = _dw_check(cap, nano_rows)
    # q from X through the projection, against the captured q
    c0 = cap.calls[0]
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        q2 = m[0].c_attn(c0.tensors["x"].to(dev))[..., :256]
    q2 = q2.reshape(3, 256, 4, 64).transpose(1, 2).float().cpu()
    rep["nano_q_from_x_max_abs"] = float((q2 - c0.tensors["q"].float())
                                         .abs().max())
    rep["nano_q_from_x_bit_equal"] = bool(torch.equal(
        q2.to(torch.bfloat16).view(torch.int16),
        c0.tensors["q"].view(torch.int16)))
    rep["nano_files"] = cap.save(os.path.join(out_dir, "x_nano"))
    rep["per_call_files"] = cap.save(os.path.join(out_dir, "x_pc"),
                                     per_call=True)
    from safetensors import safe_open
    with safe_open(rep["per_call_files"][0], "pt") as f:
        rep["per_call_keys"] = sorted(f.keys())
        rep["per_call_manifest"] = json.loads(f.metadata()["manifest"])


def _st_profile(out_dir, rep):
    """A profiled backward (profile_backward=True), twice: the second
    shows whether profilers still start after the first."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    m, x = _st_model()
    for i in range(2):
        c = Capture(m, batch=[0], backward=True, grads=True,
                    profile_backward=True)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), \
                torch.autocast("cuda", dtype=torch.bfloat16):
            with c.recording(step=10 + i):
                y = m(x).float().sum()
            y.backward()
        torch.cuda.synchronize()
        rep["profile_backward_%d" % i] = [
            {k: c2.entry.get(k) for k in ("kernels", "kernels_error",
                                          "backward_kernels",
                                          "backward_kernels_error")}
            for c2 in c.calls]
        if i == 0:
            rep["profile_backward_files"] = c.save(
                os.path.join(out_dir, "x_pb"))


def _st_hf(out_dir, rep):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = "cuda"
    import transformers
    torch.manual_seed(2)
    rep["hf_version"] = transformers.__version__
    cfg = transformers.GPT2Config(n_layer=2, n_head=4, n_embd=256,
                                  n_positions=512, vocab_size=512,
                                  attn_pdrop=0.0, resid_pdrop=0.0,
                                  embd_pdrop=0.0)
    g = transformers.AutoModelForCausalLM.from_config(
        cfg, attn_implementation="sdpa").to(dev).to(torch.bfloat16)
    ids = torch.randint(0, 512, (2, 256), device=dev)
    cg = Capture(g, batch=None, backward=True, grads=True, record_x=True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        with cg.recording(step=0):
            loss = g(ids, labels=ids).loss
        loss.backward()
    rep["gpt2_x_entries"] = [c.entry.get("x") or c.entry.get("x_error")
                             for c in cg.calls]
    rep["gpt2_skipped"] = cg.skipped

    def gpt2_rows(layer, h):
        w = g.transformer.h[layer].attn.c_attn.weight.grad  # [C, 3C]
        return w[:, h * 64:(h + 1) * 64].t()
    rep["gpt2_dw_rel_err"] = _dw_check(cg, gpt2_rows)
    rep["gpt2_files"] = cg.save(os.path.join(out_dir, "x_gpt2"))
    lc = transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                  num_hidden_layers=1,
                                  num_attention_heads=4,
                                  num_key_value_heads=4, vocab_size=512,
                                  max_position_embeddings=512)
    ll = transformers.AutoModelForCausalLM.from_config(
        lc, attn_implementation="sdpa").to(dev).to(torch.bfloat16)
    cl = Capture(ll, batch=None, backward=True, grads=True, record_x=True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        with cl.recording(step=0):
            loss = ll(ids, labels=ids).loss
        loss.backward()
    rep["llama_x_entries"] = [c.entry.get("x") or c.entry.get("x_error")
                              for c in cl.calls]
    rep["llama_skipped"] = cl.skipped

    def llama_rows(layer, h):
        return ll.model.layers[layer].self_attn.q_proj.weight.grad[
            h * 64:(h + 1) * 64]
    # with RoPE, q is rotated after q_proj: X^T dq is not dW_Q (expected
    # to differ; scan leaves such X unused)
    rep["llama_dw_rel_err_rotary"] = _dw_check(cl, llama_rows)
    rep["llama_files"] = cl.save(os.path.join(out_dir, "x_llama"))


# ---------------------------------------------------------------------------
# Self-test: modern transformers models (grouped-query heads, masks, FP16,
# autocast), randomly initialised
# ---------------------------------------------------------------------------
def _bits_equal(a, b):
    """Whether tensors A and B hold the same bits (same dtype and shape)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    iv = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    w = iv[a.element_size()]
    return bool(torch.equal(a.contiguous().view(w), b.contiguous().view(w)))


def _causal_bool(nq, nk, align, dev):
    i = torch.arange(nq, device=dev).view(nq, 1)
    j = torch.arange(nk, device=dev).view(1, nk)
    return j <= i + (nk - nq if align == "bottom-right" else 0)


def _replay(c, dev="cuda"):
    """SDPA run again on the recorded tensors of the call C: per way of
    running it, whether O and (from the recorded dO) dq, dk, dv are the
    recorded bits.  "as_run": the call as the model made it (its mask, a
    recognised one rebuilt from its pattern, expanded over the kept batch
    entries); "as_recorded": as the manifest describes it (is_causal for
    a mask recognised as causal, no mask for one that hid nothing).  The
    launch is the model's only where every batch entry, head and row was
    kept."""
    e, t = c.entry, c.tensors
    q, k, v = (t[n].to(dev) for n in ("q", "k", "v"))
    B, nq, nk = q.shape[0], q.shape[2], k.shape[2]
    kw = {"scale": e["scale"]}
    if e.get("enable_gqa"):
        kw["enable_gqa"] = True
    ways = []
    if "attn_mask" in t:
        m = t["attn_mask"].to(dev)
        if e["attn_mask"]["kind"] == "bool":
            m = m.bool()
        ways.append(("as_run", {"attn_mask": m}))
    elif e.get("mask_was") == "causal":
        m = _causal_bool(nq, nk, e.get("causal_alignment"), dev)
        ways.append(("as_run", {"attn_mask": m.expand(B, 1, nq, nk)}))
        ways.append(("as_recorded", {"is_causal": True}))
    elif e.get("mask_was") == "none":
        m = torch.ones(B, 1, nq, nk, dtype=torch.bool, device=dev)
        ways.append(("as_run", {"attn_mask": m}))
        ways.append(("as_recorded", {}))
    else:
        ways.append(("as_recorded", {"is_causal": e["causal"]}))
    out = {}
    for label, extra in ways:
        r = {}
        try:
            qq, kk, vv = (x.clone().requires_grad_(True) for x in (q, k, v))
            with torch.no_grad():
                a = dict(kw)
                a.update(extra)
                ch = torch._fused_sdp_choice(
                    qq, kk, vv, a.get("attn_mask"), 0.0,
                    a.get("is_causal", False), scale=a["scale"],
                    **({"enable_gqa": True} if a.get("enable_gqa") else {}))
                r["backend"] = CHOICE_NAMES.get(int(ch), "unknown")
            o = _ORIG_SDPA(qq, kk, vv, **a)
            r["o_equal"] = _bits_equal(o.detach().cpu(), t["o"])
            if "do" in t:
                g = torch.autograd.grad(o, (qq, kk, vv), t["do"].to(dev))
                for n, gi in zip(("dq", "dk", "dv"), g):
                    if n in t:
                        r[n + "_equal"] = _bits_equal(gi.cpu(), t[n])
        except Exception as ex:  # noqa: BLE001 -- report, go on
            r["error"] = "%s: %s" % (type(ex).__name__,
                                     str(ex).split("\n")[0][:200])
        out[label] = r
    return out


def _hf_models():
    """The models of --selftest-hf: (name, builder, under BF16 autocast);
    a builder returns (model, run), where run() gives the loss and the
    output of one forward."""
    import transformers as tf
    dev = "cuda"
    B, N, V = 2, 64, 512

    def ids_mask(pad):
        g = torch.Generator(device="cpu").manual_seed(5)
        ids = torch.randint(0, V, (B, N), generator=g).to(dev)
        am = None
        if pad:
            am = torch.ones(B, N, dtype=torch.long, device=dev)
            am[1, N - pad:] = 0
        return ids, am

    def causal_lm(cfg, pad=0, half=False):
        def build():
            torch.manual_seed(0)
            m = tf.AutoModelForCausalLM.from_config(
                cfg, attn_implementation="sdpa").to(dev)
            if half:
                m = m.half()
            m.train()
            ids, am = ids_mask(pad)
            labels = ids if am is None else ids.masked_fill(am == 0, -100)

            def run():
                r = m(input_ids=ids, attention_mask=am, labels=labels)
                return r.loss, r.logits
            return m, run
        return build

    def llama(**over):
        a = dict(hidden_size=256, intermediate_size=512,
                 num_hidden_layers=2, num_attention_heads=8,
                 num_key_value_heads=2, vocab_size=V,
                 max_position_embeddings=128, attention_dropout=0.0)
        a.update(over)
        return a

    def bert():
        cfg = tf.BertConfig(hidden_size=256, num_hidden_layers=2,
                            num_attention_heads=4, intermediate_size=512,
                            vocab_size=V, max_position_embeddings=128,
                            hidden_dropout_prob=0.0,
                            attention_probs_dropout_prob=0.0)
        torch.manual_seed(0)
        m = tf.AutoModel.from_config(cfg, attn_implementation="sdpa").to(dev)
        m.train()
        ids, am = ids_mask(16)

        def run():
            h = m(input_ids=ids, attention_mask=am).last_hidden_state
            return h.float().pow(2).mean(), h
        return m, run

    gpt2 = tf.GPT2Config(n_layer=2, n_head=4, n_embd=256, n_positions=128,
                         vocab_size=V, attn_pdrop=0.0, resid_pdrop=0.0,
                         embd_pdrop=0.0)
    return [
        ("llama_gqa", causal_lm(tf.LlamaConfig(**llama())), True),
        ("llama_gqa_padded", causal_lm(tf.LlamaConfig(**llama()), pad=16),
         True),
        ("mistral_window", causal_lm(tf.MistralConfig(
            **llama(sliding_window=32))), True),
        ("gpt2_fp16", causal_lm(gpt2, half=True), False),
        ("bert_padded", bert, True),
    ]


def _call_summary(c):
    e = c.entry
    keys = ("name", "backend", "kernels", "backward_kernels", "dtype",
            "autocast", "causal", "causal_alignment", "scale", "enable_gqa",
            "kv_heads", "kv_heads_from", "mask_was", "attn_mask",
            "backend_op_mask", "backend_op_error", "o_equal_backend_op",
            "batch_kept", "launch_shape")
    s = {"prefix": e.get("prefix") or "L%d.s%d" % (e["layer"], e["step"])}
    s.update({k: e[k] for k in keys if k in e})
    s["tensors"] = {n: [str(t.dtype).replace("torch.", ""), list(t.shape)]
                    for n, t in sorted(c.tensors.items())}
    return s


def _selftest_hf(out_dir):
    """Records five randomly initialised transformers models (no
    download; batch 2, 64 tokens, forward and backward): a Llama with
    grouped-query heads (8 query heads over 2 KV heads), the same with a
    padded batch, a Mistral with a 32-token sliding window, a GPT-2 in
    FP16 and a BERT with a padding mask; all but GPT-2 under BF16
    autocast.  Per model: the SDPA calls seen, recorded and skipped, the
    model's output with and without the recorder, each call's backend,
    kernels, mask and grouping, and SDPA run again on the recorded
    tensors (_replay).  Models with a padding mask are recorded a second
    time keeping batch entry 0 alone (no padding there).  Writes
    OUT_DIR/NAME.safetensors, .json and OUT_DIR/summary.json."""
    import transformers
    os.makedirs(out_dir, exist_ok=True)
    rep = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "transformers": transformers.__version__,
           "gpu": torch.cuda.get_device_name(0),
           "cudnn": torch.backends.cudnn.version(),
           "deterministic": torch.are_deterministic_algorithms_enabled(),
           "models": {}}
    for name, build, bf16 in _hf_models():
        batches = [("", None)]
        if name.endswith("_padded"):
            batches.append(("_b0", [0]))
        for suffix, batch in batches:
            key = name + suffix
            r = rep["models"][key] = {"autocast": "bfloat16" if bf16
                                      else None}
            try:
                m, run = build()
                ctx = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) \
                    if bf16 else contextlib.nullcontext
                with ctx():
                    _, ref = run()
                ref = ref.detach().clone()
                m.zero_grad(set_to_none=True)
                cap = Capture(m, batch=batch, backward=True, grads=True,
                              profile_backward=True)
                with ctx():
                    with cap.recording(step=0):
                        loss, outp = run()
                loss.backward()
                torch.cuda.synchronize()
                r["output_equal_without_recorder"] = _bits_equal(
                    outp.detach(), ref)
                r["seen"] = cap.seen
                r["recorded"] = len(cap.calls)
                r["skipped"] = cap.skipped
                r["dropped"] = cap.dropped
                r["calls"] = []
                for c in cap.calls:
                    s = _call_summary(c)
                    s["replay"] = _replay(c)
                    r["calls"].append(s)
                r["files"] = [os.path.basename(f) for f in
                              cap.save(os.path.join(out_dir, key))]
                r["bytes"] = sum(os.path.getsize(os.path.join(out_dir, f))
                                 for f in r["files"])
                del m, cap
                torch.cuda.empty_cache()
            except Exception as ex:  # noqa: BLE001 -- report, go on
                import traceback
                r["error"] = "%s: %s\n%s" % (type(ex).__name__, ex,
                                            traceback.format_exc()[-2000:])
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(rep, f, indent=1, default=str)
        f.write("\n")
    return rep


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--selftest":
        r = _selftest(sys.argv[2])
        print(json.dumps(r, indent=1, default=str))
    elif len(sys.argv) == 3 and sys.argv[1] == "--selftest-x":
        r = _selftest_x(sys.argv[2])
        print(json.dumps(r, indent=1, default=str))
    elif len(sys.argv) == 3 and sys.argv[1] == "--selftest-hf":
        r = _selftest_hf(sys.argv[2])
        print(json.dumps(r, indent=1, default=str))
    else:
        sys.exit("usage: capture.py --selftest OUT_DIR | --selftest-x "
                 "OUT_DIR | --selftest-hf OUT_DIR")

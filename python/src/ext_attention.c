/* ext_attention.c -- attention(...): the forward and backward of a kernel
   description over the heads of NumPy arrays, as bf16emu attn runs them
   (one head at a time, spread over OpenMP threads, the GIL released) */
#include "ext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/attn_mask.h"
#include "analysis/launch.h"
#include "analysis/sdpa_dispatch_pt211_h200.h"
#include "attention/attention.h"

/* One call: its arguments, what they resolve to and its results. */
typedef struct
{
    /* the arguments */
    PyObject *qo, *ko, *vo, *scale_o, *splits_o, *launch_o, *do_o, *align_o,
        *mask_o;
    const char *kname, *fmt, *align, *kjson, *mask_type;
    int causal, threads, backward, backends;
    double softcap;          /* FlexAttention's tanh soft-cap; 0 none */
    Py_ssize_t delta_xblock; /* flex backward's delta kernel XBLOCK */
    /* what they resolve to */
    PyArrayObject *q, *k, *v, *dout;
    size_t nb, nh, nhkv, nq, nk, d, g;
    bool f16, sdpa, top_left, splits_auto, launch_given, has_mask;
    unsigned lean; /* cuDNN's decode key splits under sdpa */
    const fa_kernel *kern;
    fa_kernel user_kernel; /* kernel given as a dict */
    ax_launch launch;
    sdpa_choice ch;
    fa_config cfg;
    am_mask amask;
    /* the results */
    PyObject *sdpa_info;
    PyArrayObject *o, *lse, *delta, *dq, *dk, *dv;
    uint32_t *dk_parts, *dv_parts; /* per query head, summed by group */
    uint32_t *lse2; /* the forward's base-2 LSE for the flex backward */
} attn_call;

static char *attn_kw[] = {"q",           "k",
                          "v",           "kernel",
                          "causal",      "causal_align",
                          "scale",       "splits",
                          "launch",      "threads",
                          "fmt",         "backward",
                          "do",          "sdpa_backends",
                          "kernel_json", "mask",
                          "mask_type",   "softcap",
                          "delta_xblock", NULL};

/* The arguments into X, the alignment and format checked. */
static bool
attn_parse(PyObject *args, PyObject *kw, attn_call *x)
{
    x->scale_o = x->splits_o = x->launch_o = x->do_o = x->align_o = x->mask_o =
        Py_None;
    x->kname = "fa2";
    x->fmt = "bf16";
    x->mask_type = "bool";
    x->backends = -1;
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "OOO|spOOOOispOizOsdn", attn_kw, &x->qo, &x->ko,
            &x->vo, &x->kname, &x->causal, &x->align_o, &x->scale_o,
            &x->splits_o, &x->launch_o, &x->threads, &x->fmt, &x->backward,
            &x->do_o, &x->backends, &x->kjson, &x->mask_o, &x->mask_type,
            &x->softcap, &x->delta_xblock))
        return false;
    if (!(x->softcap >= 0.0) || !isfinite(x->softcap)) {
        PyErr_SetString(PyExc_ValueError,
                        "softcap: expected None or a positive number");
        return false;
    }
    if (x->delta_xblock < 0 || x->delta_xblock > 1024
        || (x->delta_xblock & (x->delta_xblock - 1)) != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "delta_xblock: expected None or a power of two 1 to "
                        "1024 (the rows per program of FlexAttention's delta "
                        "kernel)");
        return false;
    }
    x->has_mask = x->mask_o != Py_None;
    if (x->align_o != Py_None) {
        if (!PyUnicode_Check(x->align_o)
            || (x->align = PyUnicode_AsUTF8(x->align_o)) == NULL
            || (strcmp(x->align, "bottom-right") != 0
                && strcmp(x->align, "top-left") != 0)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "causal_align: expected None, 'top-left' or "
                            "'bottom-right'");
            return false;
        }
    }
    if (strcmp(x->fmt, "bf16") != 0 && strcmp(x->fmt, "f16") != 0
        && strcmp(x->fmt, "fp16") != 0) {
        PyErr_Format(PyExc_ValueError,
                     "fmt='%s': attention inputs are bf16 or f16", x->fmt);
        return false;
    }
    x->f16 = x->fmt[0] == 'f';
    x->top_left = x->causal != 0 && x->align != NULL && x->align[0] == 't';
    return true;
}

/* The description: a dict's (kj_parse), a built-in one by name, or none
   yet for "sdpa"; a mask with causal refused as attn refuses it. */
static bool
attn_kernel(attn_call *x)
{
    x->sdpa = x->kjson == NULL && strcmp(x->kname, "sdpa") == 0;
    if (x->kjson != NULL) {
        if (!px_parse_kernel(x->kjson, &x->user_kernel))
            return false;
        x->kern = &x->user_kernel;
    } else if (!x->sdpa) {
        x->kern = fa_kernel_by_name(strcmp(x->kname, "flash") == 0 ? "fa2"
                                                                   : x->kname);
    }
    if (x->has_mask && x->causal) {
        PyErr_SetString(PyExc_ValueError,
                        "mask with causal=True: SDPA refuses an attn_mask "
                        "with is_causal; put the causal mask into the mask");
        return false;
    }
    if (!x->sdpa && x->kern == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "kernel='%s': unknown kernel (bf16emu.kernels() lists "
                     "them; flash is fa2; sdpa is PyTorch 2.11's choice)",
                     x->kname);
        return false;
    }
    return true;
}

/* A [B, H, N, d] array of 16-bit patterns (BF16 or FP16). */
static PyArrayObject *
take_bhnd(PyObject *obj, const char *arg)
{
    PyArrayObject *a = px_take_array(obj, NPY_UINT16, arg,
                                     "BF16 or FP16 bit patterns, "
                                     "[B, H, N, d]");

    if (a != NULL && PyArray_NDIM(a) != 4) {
        PyErr_Format(PyExc_ValueError,
                     "%s: expected 4 dimensions [B, H, N, d], got %d", arg,
                     PyArray_NDIM(a));
        return NULL;
    }
    return a;
}

/* Q, K, V (and dO) and their dimensions. */
static bool
attn_tensors(attn_call *x)
{
    if ((x->q = take_bhnd(x->qo, "q")) == NULL
        || (x->k = take_bhnd(x->ko, "k")) == NULL
        || (x->v = take_bhnd(x->vo, "v")) == NULL
        || !px_same_shape(x->k, x->v, "k", "v"))
        return false;
    if (x->backward) {
        if (x->do_o == Py_None) {
            PyErr_SetString(PyExc_ValueError,
                            "backward=True needs do, the gradient of O "
                            "([B, H, Nq, d], the inputs' format)");
            return false;
        }
        if ((x->dout = take_bhnd(x->do_o, "do")) == NULL
            || !px_same_shape(x->q, x->dout, "q", "do"))
            return false;
    } else if (x->do_o != Py_None) {
        PyErr_SetString(PyExc_ValueError, "do is taken with backward=True");
        return false;
    }
    x->nb = (size_t)PyArray_DIM(x->q, 0);
    x->nh = (size_t)PyArray_DIM(x->q, 1);
    x->nq = (size_t)PyArray_DIM(x->q, 2);
    x->d = (size_t)PyArray_DIM(x->q, 3);
    x->nhkv = (size_t)PyArray_DIM(x->k, 1);
    x->nk = (size_t)PyArray_DIM(x->k, 2);
    if ((size_t)PyArray_DIM(x->k, 0) != x->nb
        || (size_t)PyArray_DIM(x->k, 3) != x->d || x->nhkv == 0
        || x->nh % x->nhkv != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "q [B, H, Nq, d], k and v [B, Hkv, Nk, d]: expected "
                        "the same B and d, and H a multiple of Hkv");
        return false;
    }
    x->g = x->nh / x->nhkv;
    return true;
}

/* The launch: the tensors' shape, or launch=(B, H). */
static bool
attn_launch(attn_call *x)
{
    ax_launch *l = &x->launch;
    Py_ssize_t lb, lh;

    memset(l, 0, sizeof *l);
    l->batch = x->nb;
    l->heads = x->nh;
    l->kv_heads = x->nhkv;
    l->nq = x->nq;
    l->nk = x->nk;
    l->d = x->d;
    l->f16 = x->f16;
    l->from = "the tensors' shape";
    if (x->launch_o == Py_None)
        return true;
    if (!PyArg_ParseTuple(x->launch_o, "nn;launch: expected (B, H)", &lb, &lh))
        return false;
    if (lb <= 0 || lh <= 0 || (size_t)lh % x->g != 0) {
        PyErr_Format(PyExc_ValueError,
                     "launch: expected positive (B, H) with H a multiple of "
                     "the group size %zu",
                     x->g);
        return false;
    }
    l->batch = (size_t)lb;
    l->heads = (size_t)lh;
    l->kv_heads = (size_t)lh / x->g;
    l->from = "launch";
    x->launch_given = true;
    return true;
}

/* Where SDPA backend B aligns is_causal's mask when Nq != Nk: 1 top-left
   (memory-efficient, math; cuDNN for one query row), 0 bottom-right
   (flash), -1 not measured. */
static int
sdpa_causal_top_left(sdpa_backend b, size_t nq)
{
    return b == SDPA_BACKEND_FLASH              ? 0
           : b == SDPA_BACKEND_EFFICIENT        ? 1
           : b == SDPA_BACKEND_MATH             ? 1
           : b == SDPA_BACKEND_CUDNN && nq == 1 ? 1
                                                : -1;
}

/* PyTorch 2.11's backend for this call on an H200, as bf16emu attn
   --policy sdpa: its description, key splits and causal alignment. */
static bool
attn_sdpa(attn_call *x)
{
    sdpa_case sc = sdpa_case_default();
    sdpa_backend b;
    int tl;

    sc.batch = (int64_t)x->launch.batch;
    sc.heads = (int64_t)x->launch.heads;
    sc.kv_heads = (int64_t)x->launch.kv_heads;
    sc.enable_gqa = x->nhkv != x->nh;
    sc.nq = (int64_t)x->nq;
    sc.nk = (int64_t)x->nk;
    sc.d = (int64_t)x->d;
    sc.dtype = x->f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
    sc.causal = x->causal != 0;
    if (x->has_mask)
        sc.mask = strcmp(x->mask_type, "bool") == 0 ? SDPA_MASK_BOOL
                                                    : SDPA_MASK_FLOAT;
    sc.requires_grad = x->backward != 0;
    if (x->backends >= 0)
        sc.enabled = (unsigned)x->backends & SDPA_EN_ALL;
    b = sdpa_choose_pt211_h200(&sc, &x->ch);
    if (b == SDPA_BACKEND_ERROR) {
        PyErr_Format(PyExc_ValueError,
                     "kernel='sdpa': PyTorch 2.11 on sm90 (H100, H200: 132 "
                     "SMs) runs no backend for this call (%s)",
                     x->ch.reason);
        return false;
    }
    x->kern = fa_kernel_by_name(sdpa_backend_description(b));
    if (x->kern == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "kernel='sdpa': PyTorch 2.11 on sm90 runs the %s "
                     "backend here (%s; %s), and there is no description "
                     "of it",
                     sdpa_backend_name(b), x->ch.variant, x->ch.reason);
        return false;
    }
    if (b == SDPA_BACKEND_CUDNN && x->ch.splits > 1)
        x->lean = x->ch.splits; /* the decode engine's key splits */
    if (b == SDPA_BACKEND_FLASH && x->splits_o == Py_None)
        x->splits_auto = true;
    if (x->causal && x->nq != x->nk && x->align == NULL) {
        if ((tl = sdpa_causal_top_left(b, x->nq)) < 0) {
            PyErr_Format(PyExc_ValueError,
                         "kernel='sdpa': where %s aligns a causal mask with "
                         "Nq = %zu != Nk = %zu is not measured; give "
                         "causal_align='top-left' or 'bottom-right'",
                         sdpa_backend_name(b), x->nq, x->nk);
            return false;
        }
        x->top_left = tl == 1;
    }
    return true;
}

/* What the description must take: a mask (bias_add), grouped heads in
   the backward (gqa_dkv); refused as attn refuses them. */
static bool
attn_takes(const attn_call *x)
{
    const fa_kernel *k = x->kern;

    if (x->has_mask && k->bias_add == FA_BIAS_NONE) {
        PyErr_Format(PyExc_ValueError,
                     "mask: the description '%s' takes no attention mask "
                     "(bias_add \"none\"; PyTorch's flash backend refuses "
                     "masks): pass kernel='cudnn', 'efficient' or 'math'",
                     k->name);
        return false;
    }
    if (x->backward && x->nhkv != x->nh && k->gqa_dkv == FA_GQA_NONE) {
        PyErr_Format(PyExc_ValueError,
                     "backward: grouped-query heads (%zu query heads over "
                     "%zu key/value heads): the description '%s' has no "
                     "rule for the sum of dK and dV over a group (gqa_dkv "
                     "\"none\"); give K and V repeated to %zu heads for the "
                     "backward of PyTorch's expanded call",
                     x->nh, x->nhkv, k->name, x->nh);
        return false;
    }
    return true;
}

/* scale: None, or a finite positive number rounded to FP32. */
static bool
attn_scale(attn_call *x)
{
    double s;
    sf_env env = SF_ENV_IEEE;
    uint32_t bits;
    float sf;

    if (x->scale_o == Py_None)
        return true;
    s = PyFloat_AsDouble(x->scale_o);
    if (s == -1.0 && PyErr_Occurred())
        return false;
    bits = (uint32_t)sf_from_double(&sf_format_f32, s, SF_RNE, &env);
    if ((bits & 0x80000000u) != 0 || (bits & 0x7FFFFFFFu) == 0
        || (bits & 0x7F800000u) == 0x7F800000u) {
        PyErr_SetString(PyExc_ValueError,
                        "scale: expected a finite positive number (the "
                        "softmax scale)");
        return false;
    }
    memcpy(&sf, &bits, sizeof sf);
    x->cfg.scale = sf;
    return true;
}

/* splits: None (the description's, the launch's rule with launch=, or
   cuDNN's decode splits under sdpa), 1 to 128, or "auto". */
static bool
attn_splits(attn_call *x)
{
    bool given = x->splits_o != Py_None;

    if (given) {
        if (PyUnicode_Check(x->splits_o)
            && PyUnicode_CompareWithASCIIString(x->splits_o, "auto") == 0) {
            x->splits_auto = true;
        } else {
            long s = PyLong_AsLong(x->splits_o);
            if (s == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                PyErr_SetString(PyExc_TypeError,
                                "splits: expected None, 'auto' or 1 to 128");
                return false;
            }
            if (s < 1 || s > 128) {
                PyErr_SetString(PyExc_ValueError,
                                "splits: expected None, 'auto' or 1 to 128");
                return false;
            }
            x->cfg.splits = (size_t)s;
        }
    } else if (x->lean > 1 && !x->splits_auto) {
        x->cfg.splits = x->lean;
    }
    if (x->splits_auto || (x->launch_given && !given && x->lean <= 1)) {
        const char *rule;
        x->cfg.splits = ax_launch_splits(x->kern, &x->launch, &rule);
    }
    return true;
}

/* The configuration of the whole call, checked; the mask bound to the
   tensors' [B, H, Nq, Nk]; sdpa's report. */
static bool
attn_config(ext_state *st, attn_call *x)
{
    fa_config *c = &x->cfg;
    const char *why;

    *c = fa_config_kernel_default(x->kern);
    c->shape.batch = x->nb;
    c->shape.heads = x->nh;
    c->shape.nq = x->nq;
    c->shape.nk = x->nk;
    c->shape.d = x->d;
    c->causal = x->causal != 0;
    c->causal_top_left = x->causal != 0 && x->top_left;
    c->input = x->f16 ? &sf_format_f16 : NULL;
    c->softcap = x->softcap;
    c->delta_xblock = (size_t)x->delta_xblock;
    if (!attn_scale(x) || !attn_splits(x))
        return false;
    if ((c->exp = px_exp_model_for(st, x->kern)) == NULL
        || !px_log_models_for(st, x->kern, c))
        return false;
    if ((why = fa_config_check(c)) != NULL) {
        PyErr_Format(PyExc_ValueError, "the configuration is refused: %s",
                     why);
        return false;
    }
    if (x->backward && (why = fa_config_backward_refusal(c, 1)) != NULL) {
        PyErr_Format(PyExc_ValueError, "backward: %s; call with "
                                       "backward=False",
                     why);
        return false;
    }
    if (x->has_mask) {
        /* bound to the tensors' [B, H, Nq, Nk], as attn --mask */
        ax_launch ml = x->launch;
        ml.batch = x->nb;
        ml.heads = x->nh;
        if (!px_bind_mask(x->mask_o, x->mask_type, &ml, &x->amask))
            return false;
    }
    if (x->sdpa) {
        /* the split count the configuration resolves to */
        size_t splits_eff = 1;
        (void)fa_config_tiles(c, NULL, NULL, NULL, &splits_eff);
        x->sdpa_info = Py_BuildValue(
            "(ssssn)", sdpa_backend_name(x->ch.backend), x->ch.variant,
            x->ch.reason, x->kern->name, (Py_ssize_t)splits_eff);
        if (x->sdpa_info == NULL)
            return false;
    }
    return true;
}

/* A new uint32 array of N dimensions DIMS, or NULL with an exception. */
static PyArrayObject *
new_u32(int n, const npy_intp *dims)
{
    return (PyArrayObject *)PyArray_SimpleNew(n, (npy_intp *)dims, NPY_UINT32);
}

/* The result arrays, and each query head's dK and dV where grouped heads
   are summed after the backward. */
static bool
attn_alloc(attn_call *x)
{
    npy_intp od[4] = {(npy_intp)x->nb, (npy_intp)x->nh, (npy_intp)x->nq,
                      (npy_intp)x->d};
    npy_intp kd[4] = {(npy_intp)x->nb, (npy_intp)x->nhkv, (npy_intp)x->nk,
                      (npy_intp)x->d};

    if ((x->o = new_u32(4, od)) == NULL || (x->lse = new_u32(3, od)) == NULL)
        return false;
    if (!x->backward)
        return true;
    if ((x->delta = new_u32(3, od)) == NULL || (x->dq = new_u32(4, od)) == NULL
        || (x->dk = new_u32(4, kd)) == NULL
        || (x->dv = new_u32(4, kd)) == NULL)
        return false;
    if (x->kern->bwd == FA_BWD_FLEX) {
        /* the forward's base-2 LSE, which the flex backward reads */
        size_t n = x->nb * x->nh * x->nq;
        x->lse2 = PyMem_RawMalloc((n != 0 ? n : 1) * sizeof(uint32_t));
        if (x->lse2 == NULL) {
            PyErr_NoMemory();
            return false;
        }
    }
    if (x->g > 1) {
        size_t n = x->nb * x->nh * x->nk * x->d;
        x->dk_parts = PyMem_RawMalloc((n != 0 ? n : 1) * sizeof(uint32_t));
        x->dv_parts = PyMem_RawMalloc((n != 0 ? n : 1) * sizeof(uint32_t));
        if (x->dk_parts == NULL || x->dv_parts == NULL) {
            PyErr_NoMemory();
            return false;
        }
    }
    return true;
}

/* Head HH's forward and backward (query head HH reads its group's K and
   V; dK and dV per query head where grouped): 0, or -1 out of memory. */
static int
attn_head(const attn_call *x, const fa_config *hcfg, size_t hh)
{
    size_t nq = x->nq, nk = x->nk, d = x->d;
    size_t kh = hh / x->nh * x->nhkv + hh % x->nh / x->g;
    const uint16_t *q = (const uint16_t *)PyArray_DATA(x->q) + hh * nq * d,
                   *k = (const uint16_t *)PyArray_DATA(x->k) + kh * nk * d,
                   *v = (const uint16_t *)PyArray_DATA(x->v) + kh * nk * d;
    uint32_t *o = (uint32_t *)PyArray_DATA(x->o) + hh * nq * d,
             *lse = (uint32_t *)PyArray_DATA(x->lse) + hh * nq, *dk, *dv;
    sf_env env = SF_ENV_IEEE;
    fa_attn_mask hm;
    fa_config hc =
        am_head_config(hcfg, x->has_mask ? &x->amask : NULL, hh, &hm);

    fa_capture cap;

    memset(&cap, 0, sizeof cap);
    cap.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    if (fa_forward(&hc, q, k, v, o, lse, x->lse2 != NULL ? &cap : NULL,
                   &env)
        != 0)
        return -1;
    if (!x->backward || (x->g > 1 && x->kern->gqa_dkv == FA_GQA_CHAIN))
        return 0; /* the group's backward runs once (attn_group) */
    env = (sf_env)SF_ENV_IEEE;
    hc.lse_kernel = cap.lse_kernel;
    /* dK and dV per query head (the KV head's when no groups) */
    dk = x->dk_parts != NULL ? x->dk_parts : PyArray_DATA(x->dk);
    dv = x->dv_parts != NULL ? x->dv_parts : PyArray_DATA(x->dv);
    if (fa_backward(&hc, q, k, v, o, lse,
                    (const uint16_t *)PyArray_DATA(x->dout) + hh * nq * d,
                    (uint32_t *)PyArray_DATA(x->delta) + hh * nq,
                    (uint32_t *)PyArray_DATA(x->dq) + hh * nq * d,
                    dk + hh * nk * d, dv + hh * nk * d, NULL, &env)
        != 0)
        return -1;
    return 0;
}

/* The backward of group GI at once (gqa_dkv "chain": its G query heads
   against their KV head): 0, or -1 out of memory. */
static int
attn_group(const attn_call *x, const fa_config *hcfg, size_t gi)
{
    size_t nq = x->nq, nk = x->nk, d = x->d, g = x->g, hh = gi * g;
    sf_env env = SF_ENV_IEEE;
    fa_attn_mask hm;
    fa_config hc =
        am_head_config(hcfg, x->has_mask ? &x->amask : NULL, hh, &hm);

    hc.shape.heads = g;
    hc.gqa_group = g;
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    return fa_backward(
        &hc, (const uint16_t *)PyArray_DATA(x->q) + hh * nq * d,
        (const uint16_t *)PyArray_DATA(x->k) + gi * nk * d,
        (const uint16_t *)PyArray_DATA(x->v) + gi * nk * d,
        (uint32_t *)PyArray_DATA(x->o) + hh * nq * d,
        (uint32_t *)PyArray_DATA(x->lse) + hh * nq,
        (const uint16_t *)PyArray_DATA(x->dout) + hh * nq * d,
        (uint32_t *)PyArray_DATA(x->delta) + hh * nq,
        (uint32_t *)PyArray_DATA(x->dq) + hh * nq * d,
        x->dk_parts + hh * nk * d, x->dv_parts + hh * nk * d, NULL, &env);
}

/* The group's sum of dK and dV by the description's gqa_dkv rule, as
   bf16emu attn (fa_gqa_reduce): 0, or -1 refused. */
static int
attn_reduce(const attn_call *x)
{
    size_t n = x->nk * x->d, g = x->g;
    uint32_t *rk = PyArray_DATA(x->dk), *rv = PyArray_DATA(x->dv);

    for (size_t gi = 0; gi < x->nb * x->nhkv; gi++)
        if (fa_gqa_reduce(&x->cfg, g, n, x->dk_parts + gi * g * n, rk + gi * n)
                != 0
            || fa_gqa_reduce(&x->cfg, g, n, x->dv_parts + gi * g * n,
                             rv + gi * n)
                   != 0)
            return -1;
    return 0;
}

/* Every head, one at a time as bf16emu attn runs them, spread over the
   threads with the GIL released; false with an exception. */
static bool
attn_run(attn_call *x)
{
    size_t heads = x->nb * x->nh;
    int failed = 0, threads = x->threads;
    fa_config hcfg = x->cfg;

    hcfg.shape.batch = 1;
    hcfg.shape.heads = 1;
    hcfg.dq_splits = fa_config_dq_buffers(&x->cfg);
    /* the gemv kernels of a decode are the whole launch's, as attn's */
    hcfg.launch_bh = x->launch.batch * x->launch.heads;
    hcfg.launch_group = x->nhkv != 0 ? x->nh / x->nhkv : 1;
    /* grouped heads summed in FP32 before their rounding */
    hcfg.dkv_fp32 = x->nhkv != x->nh && x->kern->gqa_dkv == FA_GQA_FP32_SUM;
    {
        /* a refusal that depends on a head's mask, before computing */
        size_t bad = 0;
        const char *why = am_heads_check(
            &hcfg, x->has_mask ? &x->amask : NULL, heads, &bad);
        if (why != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "attention: the configuration of head %zu is "
                         "refused: %s",
                         bad, why);
            return false;
        }
    }
    /* clang-format off */
    Py_BEGIN_ALLOW_THREADS
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) \
    num_threads(threads > 0 ? threads : omp_get_max_threads()) \
    reduction(| : failed)
#endif
    for (size_t hh = 0; hh < heads; hh++)
        if (attn_head(x, &hcfg, hh) != 0)
            failed |= 1;
    if (!failed && x->backward && x->g > 1
        && x->kern->gqa_dkv == FA_GQA_CHAIN) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) \
    num_threads(threads > 0 ? threads : omp_get_max_threads()) \
    reduction(| : failed)
#endif
        for (size_t gi = 0; gi < x->nb * x->nhkv; gi++)
            if (attn_group(x, &hcfg, gi) != 0)
                failed |= 1;
    }
    if (!failed && x->dk_parts != NULL && attn_reduce(x) != 0)
        failed |= 2;
    Py_END_ALLOW_THREADS
    /* clang-format on */
        (void)
    threads;
    if (failed)
        PyErr_SetString(failed & 1 ? PyExc_MemoryError : PyExc_ValueError,
                        failed & 1 ? "attention: the forward or backward ran "
                                     "out of memory"
                                   : "attention: fa_gqa_reduce refused the "
                                     "sum over a group");
    return !failed;
}

/* Frees what X holds (the result arrays too, unless handed over). */
static void
attn_free(attn_call *x)
{
    PyMem_RawFree(x->dk_parts);
    PyMem_RawFree(x->lse2);
    PyMem_RawFree(x->dv_parts);
    am_free(&x->amask);
    Py_XDECREF(x->o);
    Py_XDECREF(x->lse);
    Py_XDECREF(x->delta);
    Py_XDECREF(x->dq);
    Py_XDECREF(x->dk);
    Py_XDECREF(x->dv);
    Py_XDECREF(x->sdpa_info);
}

/* attention(...) -> (O, LSE, delta, dQ, dK, dV, sdpa): the backward's
   arrays None without backward, sdpa None unless kernel is "sdpa" (then
   (backend, variant, reason, description, splits) of PyTorch 2.11's
   choice). */
PyObject *
ext_attention(PyObject *self, PyObject *args, PyObject *kw)
{
    attn_call *x = PyMem_RawCalloc(1, sizeof *x);
    PyObject *ret = NULL, *none = Py_None;

    if (x == NULL)
        return PyErr_NoMemory();
    if (attn_parse(args, kw, x) && attn_kernel(x) && attn_tensors(x)
        && attn_launch(x) && (!x->sdpa || attn_sdpa(x)) && attn_takes(x)
        && attn_config(px_state_of(self), x) && attn_alloc(x) && attn_run(x)) {
        PyObject *info = x->sdpa_info != NULL ? x->sdpa_info : none;
        if (!x->backward)
            ret = Py_BuildValue("(OOOOOOO)", (PyObject *)x->o,
                                (PyObject *)x->lse, none, none, none, none,
                                info);
        else
            ret = Py_BuildValue("(OOOOOOO)", (PyObject *)x->o,
                                (PyObject *)x->lse, (PyObject *)x->delta,
                                (PyObject *)x->dq, (PyObject *)x->dk,
                                (PyObject *)x->dv, info);
    }
    attn_free(x);
    PyMem_RawFree(x);
    return ret;
}

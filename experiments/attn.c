/* attn.c -- bf16emu attn: the reference flash attention on given or
   generated Q, K, V (and dO), its outputs and captures written to a
   tensor file, and its signed errors against the exact reference */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat, strdup, strndup, sysconf */
#endif

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <jansson.h>
#include <mpfr.h>

#include "analysis/attn_exact.h"
#include "experiments/attn_local.h"
#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/tensor.h"
#include "analysis/user_tensor.h"
#include "attention/attention.h"
#include "experiments/cli.h"
#include "experiments/fa_cli.h"
#include "experiments/fa_kernel_json.h"
#include "experiments/sdpa_policy.h"
#include "analysis/launch.h"
#include "analysis/gen.h"

/*
 * What is computed.  Q, K, V (and dO for the backward) are BF16 tensors
 * (or FP16 ones, all four alike) [B, H, N, d], [H, N, d] or [N, d], read
 * from files or generated.  FP16 inputs run only under a description
 * defined for them (fa_cli_inputs_defined: none of its formats fixed to
 * BF16), and the header says which format O is written in.  The
 * forward (and backward) of attention/attention.h runs with the chosen
 * policy, fix, ablations, tiles, KV order, mask, scale and exp model, one
 * (batch, head) pair at a time, so the pairs can run in parallel threads;
 * each pair is independent, so the bits do not depend on the thread
 * count.  O, LSE (and delta, dQ, dK, dV) and the captures are FP32 bit
 * patterns; fa_output_format says which format each output's values lie
 * on (a BF16 value is stored widened, exactly), and the output file names
 * that format in its metadata ("format.o": "bf16").
 *
 * The exact reference (analysis/attn_exact.h, MPFR at 256 bits, the
 * direct evaluation) gives O, LSE, delta, dQ, dK, dV from the same BF16
 * inputs.  For each output, every element whose exact value is finite
 * gives a signed error (computed - exact) in ulps of the output's format at
 * the exact value (ax_error_ulps); elements whose exact value is not
 * finite (the LSE of a row with every key masked, -Inf) are left out and
 * counted as skipped.  A head whose inputs hold NaN or Inf has no exact
 * reference (attn_exact.h refuses them): its elements are skipped too.
 * The statistics per output are those of analysis/bias.h: count, mean,
 * standard error, t, the 95% interval of the normal approximation, sign
 * counts, the largest |error| and the mean |error|.  O, dQ, dK and dV
 * have the same statistics of their errors relative to the row's scale
 * (stat_rows): in ulps of the output's format at the largest |exact| of
 * the element's row of d, which an element near 0 cannot blow up.
 *
 * The exact reference costs about B H Nq Nk d operations at 256 bits
 * (0.3 us each on one core; the backward about three times more).  It
 * runs only while the work B H Nq Nk d (times 4 with --backward) is at
 * most EXACT_WORK_LIMIT = 2^26, about 20 s on one core, unless --exact
 * forces it; --no-exact skips it always.
 *
 * Memory is estimated before anything large is allocated (inputs,
 * outputs, captures, the library's working memory per thread, the exact
 * reference's arrays and its MPFR numbers per thread, the kept trace
 * events); a run whose estimate exceeds --max-memory (default the smaller
 * of 8 GiB and the physical memory) is refused.  For file inputs the
 * sizes of the files are checked against the limit before they are read.
 *
 * The cost.  Before computing, one line on stderr states the work in
 * units of B H Nq Nk d (times 4 with --backward, the unit the exact
 * reference's limit counts), which parts run, and the exact reference's
 * time on one core at EXACT_S_PER_UNIT (the emulated passes have no such
 * figure: their speed depends on the policy and the instruction set).
 * While stderr is a terminal, a bar there shows the heads done of each
 * parallel loop (the forward, the exact reference); it only writes to
 * stderr, so the results stay the same for every thread count.
 * --dry-run resolves everything (files read, description, tiles,
 * splits, the memory estimate), prints the report's header and the cost,
 * and stops before computing or writing anything.
 */

/* Progress on a terminal is redrawn at most this often (seconds). */
#define PROGRESS_EVERY_S 0.25
#define MAX_MEMORY_DEFAULT ((uint64_t)8 << 30)
/* P~ is captured for the row statistics when it takes at most this. */
#define AUTO_P_BYTES ((uint64_t)64 << 20)
/* Trace events kept per pass (the last ones). */
#define TRACE_KEEP_DEFAULT 1000
/* Bytes per MPFR number of the exact reference (struct and limbs of a
   score at 546 + bitlen(d) bits, rounded up), for the estimate. */
#define MP_NUMBER_BYTES 128

/*----------------------------------------------------------------------------
 * Types (the shared ones in attn_local.h).
 *--------------------------------------------------------------------------*/
static const char *const sh_opts[N_SH] = {"--batch", "--heads", "--nq", "--nk",
                                          "--d"};

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool
bf16_nonfinite(uint16_t x)
{
    return (x & 0x7F80u) == 0x7F80u;
}

/*----------------------------------------------------------------------------
 * Operands.
 *--------------------------------------------------------------------------*/
/* The output: a .safetensors name, not an input, not an existing file
   unless --force. */
static bool
check_output(attn_ctx *x)
{
    operand *o = &x->out;

    if (o->key != NULL || !cli_has_suffix(o->path, ".safetensors")) {
        cli_error(CMD,
                  "--out '%s': expected a file name ending in .safetensors "
                  "(it holds several tensors; no :KEY)",
                  o->arg);
        return false;
    }
    return cli_check_output_file(CMD, o, x->in, N_IN, x->force);
}

/* Input O through the shared reader (analysis/user_tensor.h): BF16, or
   with --dtype bf16 F32 / F16 values that are BF16 values and U16 / I16
   bit patterns. */
static bool
read_operand(attn_ctx *x, int i)
{
    operand *o = &x->in[i];
    tensor_error err, err16;
    char spec[SPEC_MAX], sh[SHAPE_MAX];

    if (x->round_to != TENSOR_ANY) {
        /* --round-to: F32 or F64 values rounded to nearest even */
        char what[SPEC_MAX];
        cli_spec_str(what, sizeof what, o);
        if (ut_read(o->path, o->key, TENSOR_ANY, false, NULL, &o->t,
                    &x->info[i], &err)
                != TENSOR_OK
            || (o->t.dtype != x->round_to
                && ut_round_to(&o->t, what, x->round_to, &x->info[i], NULL,
                               &err)
                       != TENSOR_OK)) {
            cli_error(CMD, "%s: %s", o->opt, err.message);
            return false;
        }
    } else if (ut_read(o->path, o->key, TENSOR_BF16, x->dtype_given,
                       "--dtype", &o->t, &x->info[i], &err)
                   != TENSOR_OK
               && !(err.code == TENSOR_E_DTYPE
             && !x->dtype_given
             /* FP16 inputs: their dtype comes from the file */
             && ut_read(o->path, o->key, TENSOR_F16, false, "--dtype", &o->t,
                        &x->info[i], &err16)
                    == TENSOR_OK)) {
        cli_error(CMD, "%s: %s%s", o->opt, err.message,
                  strstr(err.message, ", not a BF16 value") != NULL
                      ? "; to round F32 values to BF16 (to nearest, ties "
                        "to even, as torch's .to(torch.bfloat16)), pass "
                        "--round-to bf16"
                      : "");
        return false;
    }
    cli_spec_str(spec, sizeof spec, o);
    cli_shape_str(sh, sizeof sh, o->t.ndim, o->t.shape);
    if (o->t.ndim < 2 || o->t.ndim > 4) {
        cli_error(CMD,
                  "%s %s: shape: %s has %u dimension%s; expected [B, H, N, "
                  "d], [H, N, d] or [N, d]",
                  o->opt, spec, sh, o->t.ndim, o->t.ndim == 1 ? "" : "s");
        return false;
    }
    if (o->t.n_elems == 0) {
        cli_error(CMD,
                  "%s %s: shape: %s has no elements; expected every "
                  "dimension at least 1",
                  o->opt, spec, sh);
        return false;
    }
    swap_elems(o->t.data, (size_t)o->t.n_elems, 2);
    return true;
}

/* The layout a dump's manifest M (JSON) gives for Q: its "layout", else
   what its launch shape ("shape": {"heads", "nq", ...} or [B, H, N, d])
   tells: Q's H dimension within the launch's heads and its N dimension
   nq, or the other way round (only one may fit); else UNSET. */
static ut_layout
manifest_layout(const char *m, const tensor *q)
{
    json_t *root = json_loads(m, 0, NULL), *sh;
    ut_layout r = UT_LAYOUT_UNSET;
    json_int_t heads = 0, nq = 0;

    if (root == NULL)
        return r;
    if (json_is_string(json_object_get(root, "layout"))
        && ut_layout_parse(json_string_value(json_object_get(root, "layout")),
                           &r)) {
        json_decref(root);
        return r;
    }
    sh = json_object_get(root, "shape");
    if (json_is_object(sh)) {
        heads = json_integer_value(json_object_get(sh, "heads"));
        nq = json_integer_value(json_object_get(sh, "nq"));
    } else if (json_is_array(sh) && json_array_size(sh) == 4) {
        heads = json_integer_value(json_array_get(sh, 1));
        nq = json_integer_value(json_array_get(sh, 2));
    }
    if (heads > 0 && nq > 0)
        r = ut_layout_launch(q, (uint64_t)heads, (uint64_t)nq, NULL);
    json_decref(root);
    return r;
}

/* The layout the metadata of Q's file gives: "layout" ("bhnd" or "bnhd",
   as bf16emu writes it), or a dump's manifest; UNSET when it says
   nothing. */
static ut_layout
file_layout(const operand *o, const tensor *q)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    ut_layout r = UT_LAYOUT_UNSET;

    if (tensor_file_list(o->path, &l, NULL) != TENSOR_OK)
        return r;
    for (size_t i = 0; i < l.n_meta && r == UT_LAYOUT_UNSET; i++)
        if (strcmp(l.meta[i].key, "layout") == 0) {
            if (!ut_layout_parse(l.meta[i].value, &r))
                r = UT_LAYOUT_UNSET;
        } else if (strcmp(l.meta[i].key, "manifest") == 0) {
            r = manifest_layout(l.meta[i].value, q);
        }
    tensor_listing_free(&l);
    return r;
}

/* [B, H, N, d] or [B, N, H, d]: --layout, the metadata of Q's file, the
   shapes of Q and K, or either when H or N is 1; else an error asking for
   --layout.  BNHD inputs are transposed to BHND. */
static bool
resolve_layout(attn_ctx *x)
{
    const tensor *q = &x->in[IN_Q].t, *k = &x->in[IN_K].t;
    ut_layout l;

    if (x->layout_opt != UT_LAYOUT_UNSET) {
        x->layout = x->layout_opt;
        x->layout_from = "--layout";
    } else if ((l = file_layout(&x->in[IN_Q], q)) != UT_LAYOUT_UNSET) {
        x->layout = l;
        x->layout_from = "the file's metadata";
    } else if ((l = ut_layout_tell(q, k)) != UT_LAYOUT_UNSET) {
        x->layout = l;
        x->layout_from = "the only reading under which K's heads divide Q's";
    } else if (!ut_layout_matters(q) || q->ndim != k->ndim) {
        x->layout = UT_LAYOUT_BHND;
        x->layout_from = NULL;
    } else {
        char spec[SPEC_MAX], sh[SHAPE_MAX], shk[SHAPE_MAX];
        unsigned r = q->ndim;
        cli_error(CMD,
                  "--q %s: shape %s with K %s reads as %s (%" PRIu64
                  " query heads over %" PRIu64 " key/value heads, Nq %" PRIu64
                  ", Nk %" PRIu64 ") or as %s (%" PRIu64 " query heads over %"
                  PRIu64 ", Nq %" PRIu64 ", Nk %" PRIu64 "), and neither the "
                  "file nor the shapes tell which; pass --layout bhnd or "
                  "--layout bnhd",
                  cli_spec_str(spec, sizeof spec, &x->in[IN_Q]),
                  cli_shape_str(sh, sizeof sh, q->ndim, q->shape),
                  cli_shape_str(shk, sizeof shk, k->ndim, k->shape),
                  r == 4 ? "[B, H, N, d]" : "[H, N, d]", q->shape[r - 3],
                  k->shape[r - 3], q->shape[r - 2], k->shape[r - 2],
                  r == 4 ? "[B, N, H, d]" : "[N, H, d]", q->shape[r - 2],
                  k->shape[r - 2], q->shape[r - 3], k->shape[r - 3]);
        return false;
    }
    for (int i = 0; i < N_IN; i++) {
        tensor_error err;
        if (x->in[i].arg == NULL || x->in[i].t.ndim != q->ndim)
            continue;
        if (ut_to_bhnd(&x->in[i].t, x->layout, &x->info[i], &err)
            != TENSOR_OK) {
            cli_error(CMD, "%s: %s", x->in[i].opt, err.message);
            return false;
        }
    }
    return true;
}

/* --o and --lse: the GPU's O (Q's shape; BF16, or F32 holding values of
   the policy's O format) and LSE (F32, Q's shape without d), the inputs
   of the backward in place of the emulator's own forward; FP32 patterns
   into x->bwd_o and x->bwd_lse.  False after an error message. */
static bool
read_fwd_outputs(attn_ctx *x)
{
    operand *ops[2] = {&x->gpu_o, &x->gpu_lse};
    const tensor *q = &x->in[IN_Q].t;
    const sf_format *ofmt = fa_output_format(&x->cfg, "o");

    for (int n = 0; n < 2; n++) {
        operand *o = ops[n];
        tensor_error err;
        char spec[SPEC_MAX], sh[SHAPE_MAX], want[SHAPE_MAX];
        unsigned nd = n == 0 ? q->ndim : q->ndim - 1;
        bool same;
        uint32_t *dst;

        cli_spec_str(spec, sizeof spec, o);
        if (ut_read(o->path, o->key, TENSOR_ANY, x->dtype_given, "--dtype",
                    &o->t, NULL, &err)
                != TENSOR_OK
            || (n == 0 && o->t.dtype != TENSOR_F32
                && !(x->f16 && o->t.dtype == TENSOR_F16)
                && ut_as_dtype(&o->t, spec, TENSOR_BF16, x->dtype_given,
                               "--dtype", NULL, &err)
                       != TENSOR_OK)) {
            cli_error(CMD, "%s: %s", o->opt, err.message);
            return false;
        }
        if (n == 0 && o->t.ndim == q->ndim
            && ut_to_bhnd(&o->t, x->layout, NULL, &err) != TENSOR_OK) {
            cli_error(CMD, "%s: %s", o->opt, err.message);
            return false;
        }
        same = o->t.ndim == nd;
        for (unsigned j = 0; same && j < nd; j++)
            same = o->t.shape[j] == q->shape[j];
        if (!same) {
            cli_error(CMD, "%s %s: shape %s (expected %s, %s)", o->opt, spec,
                      cli_shape_str(sh, sizeof sh, o->t.ndim, o->t.shape),
                      cli_shape_str(want, sizeof want, nd, q->shape),
                      n == 0 ? "the shape of Q" : "Q's without d");
            return false;
        }
        if (n == 0 && (o->t.dtype == TENSOR_F16) != x->f16
            && o->t.dtype != TENSOR_F32) {
            cli_error(CMD, "%s %s: dtype %s but Q is %s (expected %s or F32)",
                      o->opt, spec, tensor_dtype_name(o->t.dtype),
                      x->f16 ? "F16" : "BF16", x->f16 ? "F16" : "BF16");
            return false;
        }
        if (n == 1 && o->t.dtype != TENSOR_F32) {
            cli_error(CMD, "%s %s: dtype %s (expected F32)", o->opt, spec,
                      tensor_dtype_name(o->t.dtype));
            return false;
        }
        dst = malloc((size_t)o->t.n_elems * sizeof *dst);
        if (dst == NULL) {
            cli_error(CMD, "out of memory");
            return false;
        }
        if (n == 0)
            x->bwd_o = dst;
        else
            x->bwd_lse = dst;
        for (uint64_t j = 0; j < o->t.n_elems; j++) {
            uint64_t b = tensor_get_bits(&o->t, j);
            if (o->t.dtype == TENSOR_F16) {
                sf_env env = SF_ENV_IEEE;
                dst[j] = (uint32_t)sf_convert(&sf_format_f32, &sf_format_f16,
                                              b, SF_RNE, &env);
                continue;
            }
            if (o->t.dtype != TENSOR_F32) {
                dst[j] = (uint32_t)b << 16;
                continue;
            }
            dst[j] = (uint32_t)b;
            if (n == 0 && ofmt != NULL && ofmt != &sf_format_f32
                && !sf_is_nan(&sf_format_f32, b)) {
                sf_env env = SF_ENV_IEEE;
                uint64_t r = sf_convert(ofmt, &sf_format_f32, b, SF_RNE, &env);
                if (sf_convert(&sf_format_f32, ofmt, r, SF_RNE, &env) != b) {
                    cli_error(CMD,
                              "%s %s: element %" PRIu64 " is F32 0x%08" PRIX64
                              ", not a %s value (the policy's O format)",
                              o->opt, spec, j, b, ofmt->name);
                    return false;
                }
            }
        }
    }
    return true;
}

/* Q [.., Nq, d], K and V [.., Nk, d], dO Q's shape. */
static bool
check_shapes(attn_ctx *x)
{
    const tensor *q = &x->in[IN_Q].t;
    char sq[SPEC_MAX], so[SPEC_MAX], hq[SHAPE_MAX], ho[SHAPE_MAX],
        want[SHAPE_MAX];
    uint64_t w[4];
    unsigned r = q->ndim;

    cli_spec_str(sq, sizeof sq, &x->in[IN_Q]);
    cli_shape_str(hq, sizeof hq, q->ndim, q->shape);
    for (int i = IN_K; i < N_IN; i++) {
        const operand *o = &x->in[i];
        bool same;
        if (o->arg == NULL)
            continue;
        memcpy(w, q->shape, sizeof w);
        if (i != IN_DO)
            w[r - 2] = i == IN_V ? x->in[IN_K].t.shape[r - 2]
                                 : o->t.shape[o->t.ndim - 2];
        /* grouped-query heads: K's (and V's) H divides Q's */
        if (i != IN_DO && r >= 3 && o->t.ndim == r) {
            uint64_t hk = i == IN_V ? x->in[IN_K].t.shape[r - 3]
                                    : o->t.shape[r - 3];
            if (hk != 0 && q->shape[r - 3] % hk == 0)
                w[r - 3] = hk;
        }
        same = o->t.ndim == r;
        for (unsigned j = 0; same && j < r; j++)
            same = o->t.shape[j] == w[j];
        if (!same) {
            const char *rule =
                i == IN_DO  ? "dO has the shape of Q"
                : i == IN_K ? "K has Q's batch and d, its own Nk, and Q's "
                              "heads or a divisor of them (grouped-query)"
                            : "V has the shape of K";
            cli_spec_str(so, sizeof so, o);
            cli_shape_str(ho, sizeof ho, o->t.ndim, o->t.shape);
            if (o->t.ndim != r)
                cli_error(CMD,
                          "%s %s: shape: %s has %u dimensions but Q %s has "
                          "%s; expected %u (%s)",
                          o->opt, so, ho, o->t.ndim, sq, hq, r, rule);
            else
                cli_error(CMD,
                          "%s %s: shape: %s does not fit Q %s %s; expected "
                          "%s (%s)",
                          o->opt, so, ho, sq, hq,
                          cli_shape_str(want, sizeof want, r, w), rule);
            return false;
        }
    }
    for (int i = IN_K; i < N_IN; i++)
        if (x->in[i].arg != NULL
            && (x->in[i].t.dtype == TENSOR_F16) != (q->dtype == TENSOR_F16)) {
            cli_spec_str(so, sizeof so, &x->in[i]);
            cli_error(CMD,
                      "%s %s: dtype %s but Q %s is %s (expected one dtype for "
                      "Q, K, V and dO: BF16 or F16)",
                      x->in[i].opt, so, tensor_dtype_name(x->in[i].t.dtype),
                      sq, tensor_dtype_name(q->dtype));
            return false;
        }
    x->f16 = q->dtype == TENSOR_F16;
    x->rank = r;
    x->n_lead = r - 2;
    for (unsigned j = 0; j < x->n_lead; j++)
        x->lead[j] = q->shape[j];
    x->nb = r == 4 ? (size_t)q->shape[0] : 1;
    x->nh = r >= 3 ? (size_t)q->shape[r - 3] : 1;
    x->nq = (size_t)q->shape[r - 2];
    x->d = (size_t)q->shape[r - 1];
    x->nk = (size_t)x->in[IN_K].t.shape[r - 2];
    x->nhkv = r >= 3 ? (size_t)x->in[IN_K].t.shape[r - 3] : 1;
    for (int i = 0; i < N_IN; i++)
        if (x->in[i].arg != NULL)
            x->data[i] = (uint16_t *)(void *)x->in[i].t.data;
    return true;
}

/*----------------------------------------------------------------------------
 * The configuration.
 *--------------------------------------------------------------------------*/
/* The forward tiles, KV blocks and split count the configuration
   resolves to (TC: the second dimension of the m and l captures). */
static void
resolve_tiles(attn_ctx *x)
{
    (void)fa_config_tiles(&x->cfg, &x->br_eff, &x->bc_eff, &x->tc,
                          &x->splits_eff);
    x->dq_buffers_eff = fa_config_dq_buffers(&x->cfg);
}

/* The launch: --launch, else the tensors' own B and H; its KV heads in
   the tensors' proportion. */
static bool
fill_launch(attn_ctx *x)
{
    fa_cli_launch *l = &x->launch;

    if (!x->launch_given) {
        l->batch = x->nb;
        l->heads = x->nh;
        l->from = "the tensors";
    } else if (x->launch_lengths && (l->nq != x->nq || l->nk != x->nk)) {
        cli_error(CMD, "--launch: Nq %zu, Nk %zu but the inputs have Nq %zu, "
                       "Nk %zu (expected the same lengths)",
                  l->nq, l->nk, x->nq, x->nk);
        return false;
    }
    if (l->heads % (x->nh / x->nhkv) != 0) {
        cli_error(CMD, "--launch: %zu heads is not a multiple of the group "
                       "size %zu (%zu query heads over %zu KV heads)",
                  l->heads, x->nh / x->nhkv, x->nh, x->nhkv);
        return false;
    }
    l->kv_heads = l->heads / (x->nh / x->nhkv);
    l->nq = x->nq;
    l->nk = x->nk;
    l->d = x->d;
    l->f16 = x->f16;
    l->sms = (unsigned)x->sms;
    return true;
}

/* --policy sdpa: the backend PyTorch picks for this call, its
   description, causal alignment and splits into X.  False after an
   error message. */
static bool
pick_sdpa(attn_ctx *x)
{
    /* PyTorch 2.11's backend for this call on an H200 */
    sdpa_case sc = sdpa_case_default();
    const fa_kernel *k;
    bool split_auto;
    unsigned lean;
    sc.batch = (int64_t)x->launch.batch;
    sc.heads = (int64_t)x->launch.heads;
    sc.kv_heads = (int64_t)x->launch.kv_heads;
    sc.enable_gqa = x->nhkv != x->nh;
    sc.nq = (int64_t)x->nq;
    sc.nk = (int64_t)x->nk;
    sc.d = (int64_t)x->d;
    sc.dtype = x->f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
    sc.causal = x->causal;
    sc.requires_grad = x->backward;
    if (x->mask_opd.arg != NULL)
        /* backends that refuse a mask are left out, as PyTorch does
           (diff and the Python attention alike) */
        sc.mask = SDPA_MASK_BOOL;
    if (x->sdpa_backends_given)
        sc.enabled = x->sdpa_backends;
    if (!sdpa_policy_pick(CMD, &sc, &k, &x->sdpa_ch, &split_auto, &lean))
        return false;
    sdpa_policy_note(CMD, &x->sdpa_ch, k);
    if (x->causal && x->nq != x->nk && !x->top_left_given
        && !sdpa_policy_causal_align(CMD, &x->sdpa_ch, (int64_t)x->nq,
                                     (int64_t)x->nk, &x->top_left))
        return false;
    x->kernel = *k;
    x->kernel_named = true;
    if (split_auto && x->splits == 0)
        x->splits_auto = true;
    if (lean > 1 && x->splits == 0 && !x->splits_auto)
        x->splits = lean;
    return true;
}

/* The shape, mask, scale, tiles, order, fix, ablations, exp and log
   models into C from the options.  False after an error message. */
static bool
config_options(attn_ctx *x, fa_config *c)
{
    float sf;

    c->shape.batch = x->nb;
    c->shape.heads = x->nh;
    c->shape.nq = x->nq;
    c->shape.nk = x->nk;
    c->shape.d = x->d;
    c->causal = x->causal;
    c->causal_top_left = x->causal && x->top_left;
    if (x->scale_given) {
        memcpy(&sf, &x->scale_bits, sizeof sf);
        c->scale = sf;
    }
    c->softcap = x->softcap;
    c->delta_xblock = (size_t)x->delta_xblock;
    c->br = (size_t)x->br;
    c->bc = (size_t)x->bc;
    if (x->order_given)
        c->order = x->order;
    c->fix = fa_fix_default(x->fix_kind);
    if (x->beta_given)
        c->fix.beta = x->beta;
    if (x->tol_given)
        c->fix.tol = x->tol;
    if (x->eps_given)
        c->fix.eps = x->eps;
    if (x->zero_max_given)
        c->fix.zero_max = x->zero_max;
    if (x->eps_zero_given)
        c->fix.eps_zero = x->eps_zero;
    c->ablations = x->ablations;
    if (!x->exp_given && !fa_cli_exp_for(CMD, fa_config_kernel(c), &x->exp))
        return false;
    c->exp = x->exp.model;
    if (!fa_cli_log_for(CMD, x->kernel_path != NULL ? "--kernel" : "--policy", fa_config_kernel(c), &x->logm))
        return false;
    c->log = fa_cli_log_model(&x->logm);
    c->rcp = fa_cli_rcp_model(&x->logm);
    c->input = x->f16 ? &sf_format_f16 : NULL;
    return true;
}

/* The split count into C: --splits auto or a --launch without --splits
   take the kernel's own rule on the launch; X->splits_from says which. */
static void
config_splits(attn_ctx *x, fa_config *c)
{
    /* flex_decoding's program count is the kernel's own, from the launch
       (this run's shape without --launch) */
    bool own = x->splits == 0
               && fa_config_kernel(c)->combine == FA_COMBINE_FLEX_DECODE;

    if (x->splits_auto || (x->launch_given && x->splits == 0) || own) {
        /* the kernel's own rule on the launch */
        const char *rule;
        c->splits = fa_cli_launch_splits(fa_config_kernel(c), &x->launch,
                                         &rule);
        snprintf(x->splits_from_buf, sizeof x->splits_from_buf,
                 "%s: %s on the launch B %zu, H %zu (%s)",
                 x->splits_auto    ? "--splits auto"
                 : x->launch_given ? "the launch's rule"
                                   : "the kernel's rule",
                 rule,
                 x->launch.batch, x->launch.heads, x->launch.from);
        x->splits_from = x->splits_from_buf;
    } else {
        c->splits = (size_t)x->splits;
        x->splits_from = x->splits != 0 ? "--splits"
                                        : "default: not split (no --launch)";
    }
}

/* The configuration of one head, the head count, the scale and the
   tiles, from the checked configuration of the whole shape. */
static void
head_config(attn_ctx *x)
{
    const fa_config *c = &x->cfg;

    x->hcfg = *c;
    x->hcfg.shape.batch = 1;
    x->hcfg.shape.heads = 1;
    /* grouped heads summed in FP32 before their rounding */
    x->hcfg.dkv_fp32 = x->nhkv != x->nh
                       && fa_config_kernel(c)->gqa_dkv == FA_GQA_FP32_SUM;
    /* one head at a time: the dQ buffers and the gemv kernels of a
       decode are the whole launch's */
    x->hcfg.dq_splits = fa_config_dq_buffers(c);
    x->hcfg.launch_bh = x->launch.batch * x->launch.heads;
    x->hcfg.launch_group = x->nhkv != 0 ? x->nh / x->nhkv : 1;
    x->heads = x->nb * x->nh;
    x->scale_used = fa_scale_bits(c);
    x->order = c->order;
    resolve_tiles(x);
}

/* --trace b,h,row,col within the shape; false after an error
   message. */
static bool
check_trace_at(const attn_ctx *x)
{
    if (x->trace) {
        static const char *const what[4] = {"b", "h", "row", "col"};
        const uint64_t lim[4] = {x->nb, x->nh, x->nq, x->d};
        for (int i = 0; i < 4; i++)
            if (x->trace_at[i] >= lim[i]) {
                cli_error(CMD,
                          "--trace %" PRIu64 ",%" PRIu64 ",%" PRIu64
                          ",%" PRIu64 ": %s %" PRIu64
                          " is out of range (expected below %" PRIu64 ")",
                          x->trace_at[0], x->trace_at[1], x->trace_at[2],
                          x->trace_at[3], what[i], x->trace_at[i], lim[i]);
                return false;
            }
    }
    return true;
}

/* The configuration of the whole shape (X->cfg) and of one head
   (X->hcfg) from the options, the launch and the description; false
   after an error message. */
static bool
build_config(attn_ctx *x)
{
    fa_config *c = &x->cfg;
    const char *why;

    if (!fill_launch(x))
        return false;
    if (x->sdpa && !pick_sdpa(x))
        return false;
    if (x->kernel_path != NULL || x->kernel_named)
        *c = fa_config_kernel_default(&x->kernel);
    else
        *c = fa_config_default(x->policy);
    if (x->nhkv != x->nh && x->backward
        && fa_config_kernel(c)->gqa_dkv == FA_GQA_NONE) {
        cli_error(CMD, "--backward: grouped-query heads (%zu query heads over "
                       "%zu key/value heads): the description '%s' has no "
                       "rule for the sum of dK and dV over a group (gqa_dkv "
                       "\"none\"; the forward runs); give K and V repeated "
                       "to %zu heads for the backward of PyTorch's expanded "
                       "call",
                  x->nh, x->nhkv, fa_config_kernel(c)->name, x->nh);
        return false;
    }
    if (!config_options(x, c))
        return false;
    config_splits(x, c);
    c->dq_splits = (size_t)x->dq_buffers;
    c->sms = (size_t)x->sms;
    if (c->splits > 1
        && (x->captures
            & ((1u << CAP_M) | (1u << CAP_L) | (1u << CAP_OBAR)))) {
        cli_error(CMD, "--capture: m, l and obar are not defined with "
                       "--splits above 1 (expected s or p)");
        return false;
    }
    why = fa_config_check(c);
    if (why != NULL) {
        fa_cli_config_refused(
            CMD, c, x->splits_auto ? "--splits auto" : "--splits", why);
        return false;
    }
    if (x->backward && (why = fa_config_backward_refusal(c, 1)) != NULL) {
        cli_error(CMD, "--backward: %s (the forward runs without --backward)",
                  why);
        return false;
    }
    if (x->backward && fa_config_kernel(c)->bwd == FA_BWD_FLEX
        && (x->trace || (x->captures & ((1u << CAP_DP) | (1u << CAP_DS))))) {
        cli_error(CMD, "--backward: FlexAttention's backward (bwd \"flex\") "
                       "keeps no dP or dS captures and traces no dQ "
                       "element; drop --trace and --capture dp,ds");
        return false;
    }
    head_config(x);
    return check_trace_at(x);
}

/*----------------------------------------------------------------------------
 * Memory.
 *--------------------------------------------------------------------------*/
static uint64_t
physical_memory(void)
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0)
        return cli_sat_mul((uint64_t)pages, (uint64_t)size);
#endif
    return UINT64_MAX;
}

static uint64_t
default_max_memory(void)
{
    uint64_t p = physical_memory();
    return p < MAX_MEMORY_DEFAULT ? p : MAX_MEMORY_DEFAULT;
}

/* Threads that run at once: at most one per head. */
static uint64_t
concurrent(const attn_ctx *x)
{
    uint64_t t = x->threads == 0 ? 1 : x->threads;
    return t < x->heads ? t : (uint64_t)x->heads;
}

static void
estimate_memory(attn_ctx *x)
{
    mem_estimate *m = &x->mem;
    uint64_t bh = (uint64_t)x->heads, nq = x->nq, nk = x->nk, d = x->d;
    uint64_t qd = cli_sat_mul(bh, cli_sat_mul(nq, d)),
             kd = cli_sat_mul(bh, cli_sat_mul(nk, d));
    uint64_t rows = cli_sat_mul(bh, nq), sp = cli_sat_mul(rows, nk);
    uint64_t t = concurrent(x), e;

    memset(m, 0, sizeof *m);
    /* inputs: BF16 Q, K, V (dO) */
    e = sat_add(sat_add(qd, kd), kd);
    if (x->backward)
        e = sat_add(e, qd);
    m->inputs = cli_sat_mul(e, 2);
    /* outputs: FP32 O, LSE (delta, dQ, dK, dV) */
    e = sat_add(qd, rows);
    if (x->backward)
        e = sat_add(e, sat_add(sat_add(rows, qd), cli_sat_mul(kd, 2)));
    m->outputs = cli_sat_mul(e, 4);
    /* captures, FP32 */
    e = 0;
    for (int i = 0; i < N_CAP; i++) {
        uint64_t n;
        if (!(x->captures & (1u << i)) && !(i == CAP_P && x->p_internal))
            continue;
        n = i == CAP_M || i == CAP_L ? cli_sat_mul(rows, x->tc)
            : i == CAP_OBAR          ? qd
                                     : sp;
        e = sat_add(e, n);
    }
    m->captures = cli_sat_mul(e, 4);
    /* the library's working memory, per concurrent head */
    m->workspace = cli_sat_mul(fa_workspace_bytes(&x->hcfg), t);
    /* the exact reference: doubles of every compared output, and MPFR
       numbers per concurrent head */
    if (x->exact_run) {
        e = sat_add(qd, rows);
        if (x->backward)
            e = sat_add(e, sat_add(sat_add(rows, qd), cli_sat_mul(kd, 2)));
        m->exact = cli_sat_mul(e, 8);
        e = sat_add(cli_sat_mul(sat_add(nq, cli_sat_mul(3, nk)), d),
                    sat_add(cli_sat_mul(4, nk), 64));
        m->exact =
            sat_add(m->exact, cli_sat_mul(cli_sat_mul(e, MP_NUMBER_BYTES), t));
    }
    if (x->trace)
        m->trace =
            sat_add(cli_sat_mul(cli_sat_mul(x->trace_keep, sizeof(trace_ev)),
                                x->backward ? 2 : 1),
                    2 * sizeof(bias_acc));
    m->total = sat_add(sat_add(sat_add(m->inputs, m->outputs),
                               sat_add(m->captures, m->workspace)),
                       sat_add(m->exact, m->trace));
}

static bool
check_memory(attn_ctx *x)
{
    const mem_estimate *m = &x->mem;
    char a[6][40], tot[40], lim[40];

    if (m->total <= x->max_memory)
        return true;
    cli_error(CMD,
              "B %zu, H %zu, Nq %zu, Nk %zu, d %zu needs about %s (%" PRIu64
              " bytes: inputs %s, outputs %s, captures %s, working memory %s, "
              "exact reference %s, trace %s), more than the limit of %s%s",
              x->nb, x->nh, x->nq, x->nk, x->d,
              bytes_str(tot, sizeof tot, m->total), m->total,
              bytes_str(a[0], sizeof a[0], m->inputs),
              bytes_str(a[1], sizeof a[1], m->outputs),
              bytes_str(a[2], sizeof a[2], m->captures),
              bytes_str(a[3], sizeof a[3], m->workspace),
              bytes_str(a[4], sizeof a[4], m->exact),
              bytes_str(a[5], sizeof a[5], m->trace),
              bytes_str(lim, sizeof lim, x->max_memory),
              x->max_memory_given ? " (--max-memory)"
                                  : " (the default: the smaller of 8 GiB and "
                                    "the physical memory; see --max-memory)");
    return false;
}

/* Before reading files: their sizes against the limit. */
static bool
check_file_sizes(const attn_ctx *x)
{
    uint64_t total = 0;
    char a[40], b[40];

    for (int i = 0; i < N_IN; i++) {
        struct stat st;
        bool dup = false;
        if (x->in[i].arg == NULL || stat(x->in[i].path, &st) != 0)
            continue;
        for (int j = 0; j < i; j++)
            dup =
                dup
                || (x->in[j].arg != NULL && x->in[j].have_id
                    && x->in[j].dev == st.st_dev && x->in[j].ino == st.st_ino);
        if (!dup && st.st_size > 0)
            total = sat_add(total, (uint64_t)st.st_size);
    }
    if (total <= x->max_memory)
        return true;
    cli_error(CMD,
              "the input files hold %s (%" PRIu64
              " bytes), more than the memory limit of %s (--max-memory)",
              bytes_str(a, sizeof a, total), total,
              bytes_str(b, sizeof b, x->max_memory));
    return false;
}

/*----------------------------------------------------------------------------
 * The cost.
 *--------------------------------------------------------------------------*/
/* The cost line on stderr, before the computation. */
static void
cost_report(const attn_ctx *x)
{
    cli_buf b;

    cli_buf_init(&b);
    attn_cost_text(&b, x);
    if (!b.failed)
        fprintf(stderr, "bf16emu %s: %s\n", CMD, b.p);
    fflush(stderr);
    cli_buf_free(&b);
}

/*----------------------------------------------------------------------------
 * Allocation.
 *--------------------------------------------------------------------------*/
static void *
alloc_n(size_t n, size_t size)
{
    if (n == 0)
        n = 1;
    return calloc(n, size);
}

static bool
allocate(attn_ctx *x)
{
    size_t bh = x->heads, qd = bh * x->nq * x->d, kd = bh * x->nk * x->d;
    size_t rows = bh * x->nq, sp = rows * x->nk;
    const size_t out_n[N_OUT] = {qd, rows, rows, qd, kd, kd};
    bool ok = true;

    if (x->gen_on) {
        const size_t in_n[N_IN] = {qd, kd, kd, qd};
        for (int i = 0; i < N_IN; i++) {
            if (i == IN_DO && !x->backward)
                continue;
            x->gen_buf[i] = alloc_n(in_n[i], sizeof(uint16_t));
            x->data[i] = x->gen_buf[i];
            ok = ok && x->gen_buf[i] != NULL;
        }
    }
    if (x->backward && fa_config_kernel(&x->cfg)->bwd == FA_BWD_FLEX) {
        /* the forward's base-2 LSE, which the flex backward reads */
        x->lse2 = alloc_n(rows, sizeof(uint32_t));
        ok = ok && x->lse2 != NULL;
    }
    for (int i = 0; i < N_OUT; i++) {
        if (i > OUT_LSE && !x->backward)
            continue;
        x->res[i] = alloc_n(out_n[i], sizeof(uint32_t));
        ok = ok && x->res[i] != NULL;
        if (x->exact_run) {
            x->ex[i] = alloc_n(out_n[i], sizeof(double));
            ok = ok && x->ex[i] != NULL;
        }
    }
    for (int i = 0; i < N_CAP; i++) {
        size_t n;
        if (!(x->captures & (1u << i)) && !(i == CAP_P && x->p_internal))
            continue;
        n = i == CAP_M || i == CAP_L ? rows * x->tc : i == CAP_OBAR ? qd : sp;
        x->cap[i] = alloc_n(n, sizeof(uint32_t));
        ok = ok && x->cap[i] != NULL;
    }
    for (int i = 0; x->trace && i < (x->backward ? 2 : 1); i++) {
        trace_log *t = &x->tr[i];
        t->cap = (size_t)x->trace_keep;
        t->ring = alloc_n(t->cap, sizeof(trace_ev));
        t->acc = malloc(sizeof *t->acc);
        ok = ok && t->ring != NULL && t->acc != NULL;
        if (t->acc != NULL)
            bias_init(t->acc);
    }
    if (!ok)
        cli_error(CMD, "out of memory (the estimate was %" PRIu64 " bytes)",
                  x->mem.total);
    return ok;
}

/*----------------------------------------------------------------------------
 * The computation.
 *--------------------------------------------------------------------------*/
static void
trace_event(void *user, const sf_event *ev)
{
    trace_log *t = user;
    trace_ev *e;

    t->total++;
    bias_add_event(t->acc, ev);
    if (t->cap == 0)
        return;
    e = &t->ring[t->next];
    t->next = (t->next + 1) % t->cap;
    if (t->n < t->cap)
        t->n++;
    e->seq = t->total;
    e->op = ev->op;
    e->fmt = ev->fmt;
    e->n_in = ev->n_in > 3 ? 3 : ev->n_in;
    for (unsigned i = 0; i < 3; i++) {
        e->in_fmt[i] = ev->in_fmt[i];
        e->in[i] = ev->in[i];
    }
    e->result = ev->result;
    e->dir = ev->dir;
    e->guard = ev->guard;
    e->round = ev->round;
    e->sticky = ev->sticky;
    e->tie = ev->tie;
    e->err_ulps = sf_event_error_ulps(ev);
    e->flags = ev->flags;
}

/* The captures of head HH (offsets into the whole tensors). */
static void
head_capture(const attn_ctx *x, size_t hh, fa_capture *cap)
{
    size_t sp = x->nq * x->nk, ml = x->nq * x->tc, od = x->nq * x->d;

    memset(cap, 0, sizeof *cap);
    cap->s = x->cap[CAP_S] ? x->cap[CAP_S] + hh * sp : NULL;
    cap->p = x->cap[CAP_P] ? x->cap[CAP_P] + hh * sp : NULL;
    cap->m = x->cap[CAP_M] ? x->cap[CAP_M] + hh * ml : NULL;
    cap->l = x->cap[CAP_L] ? x->cap[CAP_L] + hh * ml : NULL;
    cap->obar = x->cap[CAP_OBAR] ? x->cap[CAP_OBAR] + hh * od : NULL;
    cap->dp = x->cap[CAP_DP] ? x->cap[CAP_DP] + hh * sp : NULL;
    cap->ds = x->cap[CAP_DS] ? x->cap[CAP_DS] + hh * sp : NULL;
}

static size_t
traced_head(const attn_ctx *x)
{
    return (size_t)(x->trace_at[0] * x->nh + x->trace_at[1]);
}

/* The K and V head that query head HH (of B H) reads: its group's
   (grouped-query heads: H / Hkv query heads per KV head, in order). */
static size_t
kv_head(const attn_ctx *x, size_t hh)
{
    size_t g = x->nhkv != 0 && x->nh % x->nhkv == 0 ? x->nh / x->nhkv : 1;

    return hh / x->nh * (x->nh / g) + hh % x->nh / g;
}

/* The query heads per KV head when the description's backward walks a
   group at once (gqa_dkv "chain"), else 1. */
static size_t
chained_groups(const attn_ctx *x)
{
    return fa_cli_chained_groups(&x->cfg, x->nh, x->nhkv);
}

/* The backward of group GI (gqa_dkv "chain": its G query heads against
   their KV head, at once); 0 or -1. */
static int
run_group(const attn_ctx *x, size_t gi, unsigned *bfl)
{
    size_t g = chained_groups(x), hh = gi * g;
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint32_t *o = x->bwd_o != NULL ? x->bwd_o : x->res[OUT_O];
    const uint32_t *lse = x->bwd_o != NULL ? x->bwd_lse : x->res[OUT_LSE];
    sf_env env = cli_env_ieee();
    fa_attn_mask hm;
    fa_config hc = am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL,
                                  hh, &hm);

    hc.shape.heads = g;
    hc.gqa_group = g;
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    if (fa_backward(&hc, x->data[IN_Q] + hh * nq * d,
                    x->data[IN_K] + kh * nk * d, x->data[IN_V] + kh * nk * d,
                    o + hh * nq * d, lse + hh * nq,
                    x->data[IN_DO] + hh * nq * d, x->res[OUT_DELTA] + hh * nq,
                    x->res[OUT_DQ] + hh * nq * d, x->res[OUT_DK] + hh * nk * d,
                    x->res[OUT_DV] + hh * nk * d, NULL, &env)
        != 0)
        return -1;
    *bfl |= env.flags;
    return 0;
}

/* The forward (and backward) of head HH; 0 or -1. */
static int
run_head(const attn_ctx *x, size_t hh, unsigned *ffl, unsigned *bfl)
{
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint16_t *q = x->data[IN_Q] + hh * nq * d;
    const uint16_t *k = x->data[IN_K] + kh * nk * d;
    const uint16_t *v = x->data[IN_V] + kh * nk * d;
    uint32_t *o = x->res[OUT_O] + hh * nq * d,
             *lse = x->res[OUT_LSE] + hh * nq;
    sf_event_sink sink[2];
    fa_capture cap;
    sf_env env = cli_env_ieee();
    bool traced = x->trace && hh == traced_head(x);

    head_capture(x, hh, &cap);
    if (x->lse2 != NULL)
        cap.lse_kernel = x->lse2 + hh * nq;
    if (traced) {
        sink[0].fn = trace_event;
        sink[0].user = (void *)&x->tr[0];
        cap.trace = true;
        cap.trace_row = (size_t)x->trace_at[2];
        cap.trace_col = (size_t)x->trace_at[3];
        cap.events = &sink[0];
    }
    fa_attn_mask hm;
    fa_config hc = am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL,
                                  hh, &hm);
    if (fa_forward(&hc, q, k, v, o, lse, &cap, &env) != 0)
        return -1;
    *ffl |= env.flags;
    if (!x->backward || chained_groups(x) > 1)
        return 0; /* the group's backward runs once (run_group) */
    if (traced) {
        sink[1].fn = trace_event;
        sink[1].user = (void *)&x->tr[1];
        cap.events = &sink[1];
    }
    env = cli_env_ieee();
    if (x->bwd_o != NULL) {
        /* the GPU's O and LSE (--o, --lse) in place of the forward's */
        o = x->bwd_o + hh * nq * d;
        lse = x->bwd_lse + hh * nq;
    }
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    if (fa_backward(&hc, q, k, v, o, lse, x->data[IN_DO] + hh * nq * d,
                    x->res[OUT_DELTA] + hh * nq, x->res[OUT_DQ] + hh * nq * d,
                    x->res[OUT_DK] + hh * nk * d, x->res[OUT_DV] + hh * nk * d,
                    &cap, &env)
        != 0)
        return -1;
    *bfl |= env.flags;
    return 0;
}

/* The exact reference of head HH: AX_OK, or an ax code. */
static int
exact_head(const attn_ctx *x, size_t hh)
{
    fa_attn_mask hm;
    fa_config hc = am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL,
                                  hh, &hm);
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint16_t *q = x->data[IN_Q] + hh * nq * d;
    const uint16_t *k = x->data[IN_K] + kh * nk * d;
    const uint16_t *v = x->data[IN_V] + kh * nk * d;
    ax_options opt = {0, AX_DIRECT};
    ax_outputs out;

    memset(&out, 0, sizeof out);
    out.o.d = x->ex[OUT_O] + hh * nq * d;
    out.lse.d = x->ex[OUT_LSE] + hh * nq;
    if (!x->backward)
        return ax_forward_ex(&hc, &opt, q, k, v, &out);
    out.delta.d = x->ex[OUT_DELTA] + hh * nq;
    out.dq.d = x->ex[OUT_DQ] + hh * nq * d;
    out.dk.d = x->ex[OUT_DK] + hh * nk * d;
    out.dv.d = x->ex[OUT_DV] + hh * nk * d;
    return ax_backward_ex(&hc, &opt, q, k, v,
                          x->data[IN_DO] + hh * nq * d, NULL, &out);
}

/* Marks every exact value of head HH as missing (NaN). */
static void
exact_head_missing(const attn_ctx *x, size_t hh)
{
    size_t nq = x->nq, nk = x->nk, d = x->d;
    const size_t per[N_OUT] = {nq * d, nq, nq, nq * d, nk * d, nk * d};

    for (int i = 0; i < N_OUT; i++)
        if (x->ex[i] != NULL)
            for (size_t j = 0; j < per[i]; j++)
                x->ex[i][hh * per[i] + j] = NAN;
}

/* The generated inputs of head HH. */
static void
gen_inputs(const attn_ctx *x, size_t hh)
{
    size_t nq = x->nq, nk = x->nk, d = x->d;
    float scale;

    memcpy(&scale, &x->scale_used, sizeof scale);
    gen_head(&x->gen, scale, nq, nk, d, hh, x->gen_buf[IN_Q] + hh * nq * d,
             x->gen_buf[IN_K] + hh * nk * d, x->gen_buf[IN_V] + hh * nk * d,
             x->gen_buf[IN_DO] != NULL ? x->gen_buf[IN_DO] + hh * nq * d
                                       : NULL);
}

/* Starts the progress of a loop over the heads (nothing unless stderr is
   a terminal). */
static void
progress_begin(head_progress *p, const attn_ctx *x, const char *unit)
{
    p->on = x->tty && !x->dry_run;
    p->unit = unit;
    p->done = 0;
    p->total = (uint64_t)x->heads;
    p->t0 = p->last = cli_now_s();
}

/* One head done (from any thread of the loop); redrawn at most every
   PROGRESS_EVERY_S seconds. */
static void
progress_step(head_progress *p)
{
    if (!p->on)
        return;
#ifdef _OPENMP
#pragma omp critical(attn_progress)
#endif
    {
        double now = cli_now_s();
        p->done++;
        if (now - p->last >= PROGRESS_EVERY_S) {
            p->last = now;
            cli_progress(CMD, p->unit, true, p->done, p->total, p->t0, false);
        }
    }
}

static void
progress_end(const head_progress *p)
{
    if (p->on)
        cli_progress(CMD, p->unit, true, p->done, p->total, p->t0, true);
}

int
attn_thread_count(const attn_ctx *x)
{
    uint64_t t = concurrent(x);
    return t > 1024 ? 1024 : (int)t;
}

static bool
compute(attn_ctx *x)
{
    long long nh = (long long)x->heads;
    unsigned ffl = 0, bfl = 0;
    int failed = 0, nt = attn_thread_count(x);
    head_progress pg;

#ifdef _OPENMP
    x->threads_used = nt;
#else
    x->threads_used = 1;
    (void)nt;
#endif
    if (x->gen_on) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
        for (long long hh = 0; hh < nh; hh++)
            gen_inputs(x, (size_t)hh);
    }
    for (int i = 0; i < N_IN; i++) {
        size_t n;
        if (x->data[i] == NULL)
            continue;
        n = i == IN_K || i == IN_V ? x->nb * x->nhkv * x->nk * x->d
                                   : x->heads * x->nq * x->d;
        for (size_t j = 0; j < n; j++)
            x->nonfinite_in[i] += x->f16 ? (x->data[i][j] & 0x7C00u) == 0x7C00u
                                         : bf16_nonfinite(x->data[i][j]);
    }

    progress_begin(&pg, x,
                   x->backward ? "heads (forward and backward)"
                               : "heads (forward)");
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(|                                                               \
              : ffl, bfl, failed)
#endif
    for (long long hh = 0; hh < nh; hh++) {
        if (run_head(x, (size_t)hh, &ffl, &bfl) != 0)
            failed |= 1;
        progress_step(&pg);
    }
    progress_end(&pg);
    if (x->backward && chained_groups(x) > 1) {
        long long ng = nh / (long long)chained_groups(x);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : bfl, failed)
#endif
        for (long long gi = 0; gi < ng; gi++)
            if (run_group(x, (size_t)gi, &bfl) != 0)
                failed |= 1;
    }
    if (failed) {
        cli_error(CMD, "the attention library failed (out of memory for its "
                       "working memory)");
        return false;
    }
    x->flags_fwd = ffl;
    x->flags_bwd = bfl;
    return true;
}

/* Grouped-query heads: dK and dV of each query head become the KV
   head's (fa_cli_gqa_reduce), with the exact values.  False after an
   error message. */
static bool
reduce_groups(attn_ctx *x)
{
    size_t g = x->nh / x->nhkv, n = x->nk * x->d;

    for (int i = OUT_DK; i <= OUT_DV; i++)
        if (!fa_cli_gqa_reduce(CMD, &x->cfg, x->nb * x->nhkv, g, n,
                               x->res[i], x->ex[i]))
            return false;
    return true;
}

/* Codes of the exact reference that stop the run. */
static bool
exact_all(attn_ctx *x)
{
    long long nh = (long long)x->heads;
    int nt = attn_thread_count(x), bad = AX_OK;
    uint64_t n_input = 0, n_range = 0;
    head_progress pg;

    if (!mpfr_buildopt_tls_p())
        nt = 1; /* MPFR's caches are shared: one thread */
    progress_begin(&pg, x, "heads (exact reference)");
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                \
    reduction(+ : n_input, n_range)
#else
    (void)nt;
#endif
    for (long long hh = 0; hh < nh; hh++) {
        int rc = exact_head(x, (size_t)hh);
        progress_step(&pg);
        if (rc == AX_OK)
            continue;
        exact_head_missing(x, (size_t)hh);
        if (rc == AX_EINPUT) {
            n_input++;
        } else if (rc == AX_ERANGE) {
            n_range++;
        } else {
#ifdef _OPENMP
#pragma omp critical(attn_exact_error)
#endif
            bad = rc;
        }
    }
    progress_end(&pg);
    mpfr_free_cache();
    if (bad != AX_OK) {
        cli_error(CMD, "the exact reference failed: %s", ax_strerror(bad));
        return false;
    }
    x->heads_nonfinite = n_input;
    x->heads_range = n_range;
    return true;
}

/* The errors of output I (O, dQ, dK, dV: rows of d elements, N in all)
   relative to the row's scale (ax_row_errors). */
static void
stat_rows(attn_ctx *x, int i, size_t n)
{
    err_stat *st = &x->st[i];

    st->rows = true;
    bias_cell_init(&st->rel);
    bias_cell_init(&st->rel_mag);
    ax_row_errors(st->fmt, x->res[i], x->ex[i], n, x->d, &st->rel,
                  &st->rel_mag);
}

/* The errors of output I against the exact values. */
static void
stat_output(attn_ctx *x, int i)
{
    err_stat *st = &x->st[i];
    size_t bh = x->heads;
    size_t n = i == OUT_O || i == OUT_DQ    ? bh * x->nq * x->d
               : i == OUT_DK || i == OUT_DV ? x->nb * x->nhkv * x->nk * x->d
                                            : bh * x->nq;
    const uint32_t *got = x->res[i];
    const double *ex = x->ex[i];

    st->have = true;
    st->fmt = fa_output_format(&x->cfg, out_names[i]);
    if (st->fmt == NULL)
        st->fmt = &sf_format_f32;
    bias_cell_init(&st->err);
    bias_cell_init(&st->mag);
    for (size_t j = 0; j < n; j++) {
        double e = ex[j], u;
        if (!isfinite(e)) {
            st->skipped++;
            continue;
        }
        /* the error in FP32 ulps, correctly rounded, then scaled exactly
           to the output format's ulp (same exponent range) */
        u = ax_error_ulps(&sf_format_f32, got[j], e);
        if (st->fmt != &sf_format_f32 && isfinite(u))
            u = ldexp(u,
                      ax_ulp_exp(&sf_format_f32, e) - ax_ulp_exp(st->fmt, e));
        bias_cell_add(&st->err, u);
        if (isfinite(u))
            bias_cell_add(&st->mag, fabs(u));
    }
    if (i == OUT_O || i == OUT_DQ || i == OUT_DK || i == OUT_DV)
        stat_rows(x, i, n);
}

/* Rows whose P~ has entries exactly 1 (from the p capture). */
static void
count_rows(attn_ctx *x)
{
    const uint32_t *p = x->cap[CAP_P];
    size_t rows = x->heads * x->nq;

    if (p == NULL)
        return;
    x->rows_have = true;
    x->rows = rows;
    for (size_t r = 0; r < rows; r++) {
        unsigned ones = 0;
        for (size_t j = 0; j < x->nk && ones < 2; j++)
            ones += p[r * x->nk + j] == 0x3F800000u;
        x->rows_p1 += ones >= 1;
        x->rows_p2 += ones >= 2;
    }
}

/*----------------------------------------------------------------------------
 * Options.
 *--------------------------------------------------------------------------*/
enum
{
    O_Q,
    O_K,
    O_V,
    O_DO,
    O_GEN,
    O_SEED,
    O_BATCH,
    O_HEADS,
    O_NQ,
    O_NK,
    O_D,
    O_QK_STD,
    O_V_MEAN,
    O_V_STD,
    O_DO_STD,
    O_SINK,
    O_REPEAT,
    O_MAX_VALUE,
    O_GAP_MIN,
    O_GAP_MAX,
    O_POLICY,
    O_KERNEL,
    O_DESCRIBE,
    O_SDPA_BACKENDS,
    O_SPLITS,
    O_DQ_BUFFERS,
    O_SMS,
    O_LAUNCH,
    O_MASK,
    O_ROUND_TO,
    O_FIX,
    O_BETA,
    O_TOL,
    O_EPS,
    O_ZERO_MAX,
    O_EPS_ZERO,
    O_ABLATE,
    O_BR,
    O_BC,
    O_ORDER,
    O_CAUSAL,
    O_CAUSAL_ALIGN,
    O_SCALE,
    O_SOFTCAP,
    O_DELTA_XBLOCK,
    O_EXP,
    O_BACKWARD,
    O_CAPTURE,
    O_TRACE,
    O_TRACE_MAX,
    O_OUT,
    O_FORCE,
    O_EXACT,
    O_NO_EXACT,
    O_MAX_MEMORY,
    O_THREADS,
    O_JSON,
    O_DRY_RUN,
    O_DTYPE,
    O_LAYOUT,
    O_GPU_O,
    O_GPU_LSE,
    O_HELP
};

static const cli_option options[] = {{"q", true, O_Q},
                                     {"k", true, O_K},
                                     {"v", true, O_V},
                                     {"do", true, O_DO},
                                     {"gen", true, O_GEN},
                                     {"seed", true, O_SEED},
                                     {"batch", true, O_BATCH},
                                     {"heads", true, O_HEADS},
                                     {"nq", true, O_NQ},
                                     {"nk", true, O_NK},
                                     {"d", true, O_D},
                                     {"qk-std", true, O_QK_STD},
                                     {"v-mean", true, O_V_MEAN},
                                     {"v-std", true, O_V_STD},
                                     {"do-std", true, O_DO_STD},
                                     {"sink", true, O_SINK},
                                     {"repeat", true, O_REPEAT},
                                     {"max-value", true, O_MAX_VALUE},
                                     {"gap-min", true, O_GAP_MIN},
                                     {"gap-max", true, O_GAP_MAX},
                                     {"policy", true, O_POLICY},
                                     {"kernel", true, O_KERNEL},
                                     {"describe", false, O_DESCRIBE},
                                     {"sdpa-backends", true, O_SDPA_BACKENDS},
                                     {"splits", true, O_SPLITS},
                                     {"dq-buffers", true, O_DQ_BUFFERS},
                                     {"sms", true, O_SMS},
                                     {"launch", true, O_LAUNCH},
                                     {"mask", true, O_MASK},
                                     {"round-to", true, O_ROUND_TO},
                                     {"fix", true, O_FIX},
                                     {"beta", true, O_BETA},
                                     {"tol", true, O_TOL},
                                     {"eps", true, O_EPS},
                                     {"zero-max", true, O_ZERO_MAX},
                                     {"eps-zero", true, O_EPS_ZERO},
                                     {"ablate", true, O_ABLATE},
                                     {"br", true, O_BR},
                                     {"bc", true, O_BC},
                                     {"order", true, O_ORDER},
                                     {"causal", false, O_CAUSAL},
                                     {"causal-align", true, O_CAUSAL_ALIGN},
                                     {"scale", true, O_SCALE},
                                     {"softcap", true, O_SOFTCAP},
                                     {"delta-xblock", true, O_DELTA_XBLOCK},
                                     {"exp", true, O_EXP},
                                     {"backward", false, O_BACKWARD},
                                     {"capture", true, O_CAPTURE},
                                     {"trace", true, O_TRACE},
                                     {"trace-max", true, O_TRACE_MAX},
                                     {"out", true, O_OUT},
                                     {"force", false, O_FORCE},
                                     {"exact", false, O_EXACT},
                                     {"no-exact", false, O_NO_EXACT},
                                     {"max-memory", true, O_MAX_MEMORY},
                                     {"threads", true, O_THREADS},
                                     {"json", false, O_JSON},
                                     {"dry-run", false, O_DRY_RUN},
                                     {"dtype", true, O_DTYPE},
                                     {"layout", true, O_LAYOUT},
                                     {"o", true, O_GPU_O},
                                     {"lse", true, O_GPU_LSE},
                                     {"help", false, O_HELP},
                                     {NULL, false, 0}};

/* Parses "b,h,row,col". */
static bool
parse_trace(attn_ctx *x, const char *v)
{
    const char *s = v;

    for (int i = 0; i < 4; i++) {
        char *end;
        unsigned long long n;
        if (*s < '0' || *s > '9')
            goto bad;
        n = strtoull(s, &end, 10);
        if (end == s || (i < 3 && *end != ',') || (i == 3 && *end != '\0'))
            goto bad;
        x->trace_at[i] = (uint64_t)n;
        s = end + 1;
    }
    x->trace = true;
    return true;
bad:
    cli_error(CMD,
              "--trace '%s': expected four indices B,H,ROW,COL (e.g. "
              "0,0,5,3)",
              v);
    return false;
}

static bool
parse_capture(attn_ctx *x, const char *v)
{
    const char *p = v;

    if (strcmp(v, "none") == 0) {
        x->captures = 0;
        return true;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        int i;
        for (i = 0; i < N_CAP; i++)
            if (strlen(cap_names[i]) == len
                && strncmp(cap_names[i], p, len) == 0)
                break;
        if (i == N_CAP) {
            cli_error(CMD,
                      "--capture '%s': unknown capture '%.*s' (expected a "
                      "comma-separated list of s, p, m, l, obar, dp, ds)",
                      v, (int)len, p);
            return false;
        }
        x->captures |= 1u << i;
        if (p[len] == '\0')
            return true;
        p += len + 1;
    }
}

static bool
parse_ablate(attn_ctx *x, const char *v)
{
    long bits = fa_ablations_parse(v);
    const char *p = v;

    if (bits >= 0) {
        x->ablations = (unsigned)bits;
        return true;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        char one[64];
        snprintf(one, sizeof one, "%.*s", (int)len, p);
        if (len == 0 || len >= sizeof one || fa_ablations_parse(one) < 0) {
            cli_error(CMD,
                      "--ablate '%s': unknown ablation '%.*s' (expected a "
                      "comma-separated list of fp32-pv, fp32-o, delta-dpp, "
                      "delta-fp32-o, untiled)",
                      v, (int)len, p);
            return false;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    cli_error(CMD, "--ablate '%s': not a list of ablations", v);
    return false;
}

/* A positive count (--batch, --nq, ...). */
static bool
parse_count(const char *opt, const char *v, uint64_t *n)
{
    if (!cli_parse_u64(CMD, opt, v, n))
        return false;
    if (*n == 0) {
        cli_error(CMD, "%s '%s': expected at least 1", opt, v);
        return false;
    }
    return true;
}

static bool
parse_nonneg(const char *opt, const char *v, double *d)
{
    if (!cli_parse_double(CMD, opt, v, true, d))
        return false;
    if (*d < 0) {
        cli_error(CMD, "%s '%s': expected a number at least 0", opt, v);
        return false;
    }
    return true;
}

static void
gen_only(attn_ctx *x, const char *opt)
{
    if (x->n_gen_only < sizeof x->gen_only / sizeof x->gen_only[0])
        x->gen_only[x->n_gen_only++] = opt;
}

static void
kind_only(attn_ctx *x, const char *opt, gen_kind k)
{
    gen_only(x, opt);
    if (x->n_kind_only < sizeof x->kind_only / sizeof x->kind_only[0]) {
        x->kind_only[x->n_kind_only] = opt;
        x->kind_of[x->n_kind_only++] = k;
    }
}

/* An option of the outputs and the run (captures, trace, --out, the
   exact reference, memory, threads, --json, --dry-run); any other
   option is accepted as it is. */
static bool
take_run_option(attn_ctx *x, int id, const char *v)
{

    switch (id) {
    case O_CAPTURE:
        return parse_capture(x, v);
    case O_TRACE:
        return parse_trace(x, v);
    case O_TRACE_MAX:
        x->trace_keep_given = true;
        return cli_parse_u64(CMD, "--trace-max", v, &x->trace_keep);
    case O_OUT:
        x->out.arg = v;
        return true;
    case O_FORCE:
        x->force = true;
        return true;
    case O_EXACT:
        x->exact_forced = true;
        return true;
    case O_NO_EXACT:
        x->no_exact = true;
        return true;
    case O_MAX_MEMORY:
        x->max_memory_given = true;
        return cli_parse_bytes(CMD, "--max-memory", v, &x->max_memory);
    case O_THREADS:
        if (!cli_parse_u64(CMD, "--threads", v, &x->threads))
            return false;
        if (x->threads == 0) {
            cli_error(CMD, "--threads '%s': expected at least 1", v);
            return false;
        }
        return true;
    case O_JSON:
        x->json = true;
        return true;
    case O_DRY_RUN:
        x->dry_run = true;
        return true;
    default:
        return true;
    }
}

/* An option of the arithmetic (fix, ablations, tiles, order, mask
   alignment, scale, exp, --backward), else take_run_option. */
static bool
take_numerics_option(attn_ctx *x, int id, const char *v)
{
    int n;

    switch (id) {
    case O_FIX:
        n = fa_fix_parse(v);
        if (n < 0) {
            cli_error(CMD,
                      "--fix '%s': unknown fix (expected none, beta, "
                      "beta-v2, eps or always)",
                      v);
            return false;
        }
        x->fix_kind = (fa_fix_kind)n;
        return true;
    case O_BETA:
        x->beta_given = true;
        return cli_parse_double(CMD, "--beta", v, true, &x->beta);
    case O_TOL:
        x->tol_given = true;
        return cli_parse_double(CMD, "--tol", v, true, &x->tol);
    case O_EPS:
        x->eps_given = true;
        return cli_parse_double(CMD, "--eps", v, true, &x->eps);
    case O_EPS_ZERO:
        x->eps_zero_given = true;
        return cli_parse_double(CMD, "--eps-zero", v, true, &x->eps_zero);
    case O_ZERO_MAX:
        x->zero_max_given = true;
        if (strcmp(v, "keep") == 0)
            x->zero_max = FA_ZERO_MAX_KEEP;
        else if (strcmp(v, "shift") == 0)
            x->zero_max = FA_ZERO_MAX_SHIFT;
        else {
            cli_error(CMD, "--zero-max '%s': expected keep or shift", v);
            return false;
        }
        return true;
    case O_ABLATE:
        return parse_ablate(x, v);
    case O_BR:
        return cli_parse_u64(CMD, "--br", v, &x->br);
    case O_BC:
        return cli_parse_u64(CMD, "--bc", v, &x->bc);
    case O_ORDER:
        n = fa_order_parse(v);
        if (n < 0) {
            cli_error(CMD, "--order '%s': expected forward or reverse", v);
            return false;
        }
        x->order = (fa_kv_order)n;
        x->order_given = true;
        return true;
    case O_CAUSAL:
        x->causal = true;
        return true;
    case O_CAUSAL_ALIGN:
        x->top_left_given = true;
        return fa_cli_parse_causal_align(CMD, v, &x->top_left);
    case O_SCALE:
        if (!fa_cli_parse_scale(CMD, v, &x->scale_bits))
            return false;
        x->scale_given = true;
        return true;
    case O_SOFTCAP:
        return fa_cli_parse_softcap(CMD, v, &x->softcap);
    case O_DELTA_XBLOCK:
        return fa_cli_parse_delta_xblock(CMD, v, &x->delta_xblock);
    case O_EXP:
        x->exp_given = true;
        return fa_cli_parse_exp(CMD, &x->exp, v);
    case O_BACKWARD:
        x->backward = true;
        return true;
    default:
        return take_run_option(x, id, v);
    }
}

/* An option of the description, the launch, the inputs' rounding and
   the mask, else take_numerics_option. */
static bool
take_kernel_option(attn_ctx *x, int id, const char *v)
{

    switch (id) {
    case O_POLICY: {
        const fa_kernel *named;
        x->policy_given = true;
        x->kernel_named = x->sdpa = false;
        if (sdpa_policy_named(v, &named, &x->sdpa)) {
            if (named != NULL) {
                x->kernel = *named;
                x->kernel_named = true;
            }
            return true;
        }
        return fa_cli_parse_policy(CMD, v, &x->policy);
    }
    case O_KERNEL:
        x->kernel_path = v;
        return true;
    case O_DESCRIBE:
        x->describe = true;
        return true;
    case O_SDPA_BACKENDS:
        x->sdpa_backends_given = true;
        return sdpa_policy_parse_backends(CMD, v, &x->sdpa_backends);
    case O_SPLITS:
        return fa_cli_parse_splits(CMD, v, &x->splits, &x->splits_auto);
    case O_DQ_BUFFERS:
        return fa_cli_parse_dq_buffers(CMD, v, &x->dq_buffers);
    case O_ROUND_TO:
        if (strcmp(v, "bf16") == 0 || strcmp(v, "bfloat16") == 0)
            x->round_to = TENSOR_BF16;
        else if (strcmp(v, "f16") == 0 || strcmp(v, "float16") == 0)
            x->round_to = TENSOR_F16;
        else {
            cli_error(CMD, "--round-to '%s': expected bf16 or f16", v);
            return false;
        }
        return true;
    case O_MASK:
        x->mask_opd.opt = "--mask";
        x->mask_opd.arg = v;
        return true;
    case O_LAUNCH:
        x->launch_given = true;
        return fa_cli_parse_launch(CMD, v, &x->launch, &x->launch_lengths);
    case O_SMS:
        return fa_cli_parse_sms(CMD, v, &x->sms);
    default:
        return take_numerics_option(x, id, v);
    }
}

/* A generator option (--gen, the shape, the distributions), else
   take_kernel_option. */
static bool
take_gen_option(attn_ctx *x, int id, const char *v)
{
    int n;

    switch (id) {
    case O_GEN:
        n = gen_kind_parse(v);
        if (n < 0) {
            cli_error(CMD,
                      "--gen '%s': unknown generator (expected normal, sink "
                      "or repeated-max)",
                      v);
            return false;
        }
        x->gen_on = true;
        x->gen.kind = (gen_kind)n;
        return true;
    case O_SEED:
        gen_only(x, "--seed");
        return cli_parse_u64(CMD, "--seed", v, &x->gen.seed);
    case O_BATCH:
    case O_HEADS:
    case O_NQ:
    case O_NK:
    case O_D:
        gen_only(x, sh_opts[id - O_BATCH]);
        x->sh_given[id - O_BATCH] = true;
        return parse_count(sh_opts[id - O_BATCH], v, &x->sh[id - O_BATCH]);
    case O_QK_STD:
        gen_only(x, "--qk-std");
        return parse_nonneg("--qk-std", v, &x->gen.qk_std);
    case O_V_MEAN:
        gen_only(x, "--v-mean");
        return cli_parse_double(CMD, "--v-mean", v, true, &x->gen.v_mean);
    case O_V_STD:
        gen_only(x, "--v-std");
        return parse_nonneg("--v-std", v, &x->gen.v_std);
    case O_DO_STD:
        gen_only(x, "--do-std");
        return parse_nonneg("--do-std", v, &x->gen.do_std);
    case O_SINK:
        kind_only(x, "--sink", GEN_SINK);
        return cli_parse_double(CMD, "--sink", v, true, &x->gen.sink);
    case O_REPEAT:
        kind_only(x, "--repeat", GEN_REPEATED);
        return parse_count("--repeat", v, &x->gen.repeat);
    case O_MAX_VALUE:
        kind_only(x, "--max-value", GEN_REPEATED);
        return cli_parse_double(CMD, "--max-value", v, true,
                                &x->gen.max_value);
    case O_GAP_MIN:
        kind_only(x, "--gap-min", GEN_REPEATED);
        return parse_nonneg("--gap-min", v, &x->gen.gap_min);
    case O_GAP_MAX:
        kind_only(x, "--gap-max", GEN_REPEATED);
        return parse_nonneg("--gap-max", v, &x->gen.gap_max);
    default:
        return take_kernel_option(x, id, v);
    }
}

/* One option; false after an error message.  The inputs here, the
   other groups through take_gen_option. */
static bool
take_option(void *ctx, int id, const char *v)
{
    attn_ctx *x = ctx;

    switch (id) {
    case O_Q:
    case O_K:
    case O_V:
    case O_DO:
        x->in[id - O_Q].arg = v;
        return true;
    case O_GPU_O:
        x->gpu_o.arg = v;
        return true;
    case O_GPU_LSE:
        x->gpu_lse.arg = v;
        return true;
    case O_DTYPE:
        if (!fa_cli_parse_dtype(CMD, v))
            return false;
        x->dtype_given = true;
        return true;
    case O_LAYOUT:
        return fa_cli_parse_layout(CMD, v, &x->layout_opt);
    default:
        return take_gen_option(x, id, v);
    }
}

/* The combinations of options; false after an error message. */
static bool
check_options(attn_ctx *x)
{
    bool files = false;
    const fa_fix_kind k = x->fix_kind;

    for (int i = 0; i < N_IN; i++)
        files = files || x->in[i].arg != NULL;
    if (x->gen_on && files) {
        for (int i = 0; i < N_IN; i++)
            if (x->in[i].arg != NULL)
                cli_error(CMD,
                          "%s: the inputs come from --gen or from files, not "
                          "both",
                          x->in[i].opt);
        return false;
    }
    if (!x->gen_on && !files) {
        cli_error(CMD, "no inputs: give --gen NAME, or --q, --k and --v (see "
                       "'bf16emu attn --help')");
        return false;
    }
    if (files) {
        for (int i = IN_Q; i <= IN_V; i++)
            if (x->in[i].arg == NULL) {
                cli_error(CMD,
                          "missing %s (inputs from files need --q, --k "
                          "and --v)",
                          x->in[i].opt);
                return false;
            }
        if (x->backward && x->in[IN_DO].arg == NULL) {
            cli_error(CMD, "--backward with inputs from files needs --do "
                           "FILE[:KEY] (dO, the shape of Q)");
            return false;
        }
        if (!x->backward && x->in[IN_DO].arg != NULL) {
            cli_error(CMD, "--do applies to --backward");
            return false;
        }
        if (x->n_gen_only > 0) {
            cli_error(CMD,
                      "%s applies to --gen (the inputs come from files; "
                      "their shapes give B, H, Nq, Nk and d)",
                      x->gen_only[0]);
            return false;
        }
    }
    for (size_t i = 0; x->gen_on && i < x->n_kind_only; i++)
        if (x->kind_of[i] != x->gen.kind) {
            cli_error(CMD, "%s applies to --gen %s, not to --gen %s",
                      x->kind_only[i], gen_kind_name(x->kind_of[i]),
                      gen_kind_name(x->gen.kind));
            return false;
        }
    if (x->gen_on && x->gen.gap_max < x->gen.gap_min) {
        cli_error(CMD,
                  "--gap-max %.17g is below --gap-min %.17g (expected "
                  "gap-min <= gap-max)",
                  x->gen.gap_max, x->gen.gap_min);
        return false;
    }
    if (x->beta_given && k != FA_FIX_BETA && k != FA_FIX_BETA_V2
        && k != FA_FIX_ALWAYS) {
        cli_error(CMD,
                  "--beta applies to --fix beta, beta-v2 or always "
                  "(the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->tol_given && k != FA_FIX_BETA && k != FA_FIX_EPS) {
        cli_error(CMD, "--tol applies to --fix beta or eps (the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->eps_given && k != FA_FIX_EPS) {
        cli_error(CMD, "--eps applies to --fix eps (the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->zero_max_given && k != FA_FIX_BETA && k != FA_FIX_BETA_V2
        && k != FA_FIX_ALWAYS) {
        cli_error(CMD,
                  "--zero-max applies to --fix beta, beta-v2 or always "
                  "(the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->eps_zero_given
        && !(x->zero_max_given && x->zero_max == FA_ZERO_MAX_SHIFT)) {
        cli_error(CMD, "--eps-zero applies to --zero-max shift");
        return false;
    }
    if (!x->backward && (x->captures & ((1u << CAP_DP) | (1u << CAP_DS)))) {
        cli_error(CMD, "--capture dp and ds need --backward (they are "
                       "captured by the backward)");
        return false;
    }
    if (x->captures != 0 && x->out.arg == NULL) {
        cli_error(CMD, "--capture needs --out FILE (captures are written "
                       "there)");
        return false;
    }
    if (x->trace_keep_given && !x->trace) {
        cli_error(CMD, "--trace-max applies to --trace");
        return false;
    }
    if (x->exact_forced && x->no_exact) {
        cli_error(CMD, "--exact and --no-exact contradict each other");
        return false;
    }
    return true;
}

static void
ctx_free(attn_ctx *x)
{
    for (int i = 0; i < N_IN; i++) {
        free(x->in[i].path);
        tensor_free(&x->in[i].t);
        free(x->gen_buf[i]);
    }
    free(x->out.path);
    free(x->gpu_o.path);
    free(x->gpu_lse.path);
    tensor_free(&x->gpu_o.t);
    tensor_free(&x->gpu_lse.t);
    free(x->mask_opd.path);
    tensor_free(&x->mask_opd.t);
    am_free(&x->mask);
    free(x->bwd_o);
    free(x->bwd_lse);
    for (int i = 0; i < N_OUT; i++) {
        free(x->res[i]);
        free(x->ex[i]);
    }
    free(x->lse2);
    for (int i = 0; i < N_CAP; i++)
        free(x->cap[i]);
    for (int i = 0; i < 2; i++) {
        free(x->tr[i].ring);
        free(x->tr[i].acc);
    }
    fa_cli_exp_free(&x->exp);
    fa_cli_log_free(&x->logm);
    free(x);
}

/* Everything up to the report; false after an error message. */
/* --mask FILE[:KEY]: read, bound to the tensors' [B, H, Nq, Nk] (the
   launch when --launch gives it: a mask that varies over batch or heads
   must then be the launch's whole mask, which a file of some heads cannot
   index), and refused when the description takes none. */
static bool
read_mask(attn_ctx *x)
{
    const fa_kernel *k = fa_config_kernel(&x->cfg);
    tensor_error err;
    char msg[512];
    int rc;

    if (!cli_split_spec(CMD, &x->mask_opd))
        return false;
    if (k->bias_add == FA_BIAS_NONE) {
        cli_error(CMD,
                  "--mask: the description '%s' takes no attention mask "
                  "(bias_add \"none\"; PyTorch's flash backend refuses "
                  "masks): pass --policy cudnn, efficient or math",
                  k->name);
        return false;
    }
    if (x->causal) {
        cli_error(CMD, "--mask with --causal: SDPA refuses an attn_mask "
                       "with is_causal; put the causal mask into the mask");
        return false;
    }
    if (tensor_file_read(x->mask_opd.path, x->mask_opd.key, TENSOR_ANY,
                         &x->mask_opd.t, &err)
        != TENSOR_OK) {
        cli_error(CMD, "--mask: %s", err.message);
        return false;
    }
    rc = am_bind_file(&x->mask_opd.t, x->nb, x->nh, x->nq, x->nk, x->nb,
                      x->nh, NULL, false, NULL, &x->mask, msg, sizeof msg);
    if (rc != 0) {
        cli_error(CMD, "--mask %s: %s", x->mask_opd.arg, msg);
        return false;
    }
    x->has_mask = true;
    return true;
}

static bool
run(attn_ctx *x)
{
    if (!check_options(x))
        return false;
    for (int i = 0; i < N_IN; i++)
        if (x->in[i].arg != NULL && !cli_split_spec(CMD, &x->in[i]))
            return false;
    if ((x->gpu_o.arg == NULL) != (x->gpu_lse.arg == NULL)) {
        cli_error(CMD, "%s needs %s too (the GPU's O and LSE go together)",
                  x->gpu_o.arg != NULL ? "--o" : "--lse",
                  x->gpu_o.arg != NULL ? "--lse" : "--o");
        return false;
    }
    if (x->gpu_o.arg != NULL && (!x->backward || x->gen_on)) {
        cli_error(CMD, "--o and --lse are inputs of --backward with inputs "
                       "from files (--q, --k, --v, --do)");
        return false;
    }
    if (x->gpu_o.arg != NULL
        && (!cli_split_spec(CMD, &x->gpu_o)
            || !cli_split_spec(CMD, &x->gpu_lse)))
        return false;
    if (x->out.arg != NULL
        && (!cli_split_spec(CMD, &x->out) || !check_output(x)))
        return false;
    if (!x->max_memory_given)
        x->max_memory = default_max_memory();

    if (x->gen_on) {
        x->rank = 4;
        x->n_lead = 2;
        x->nb = (size_t)x->sh[SH_BATCH];
        x->nh = (size_t)x->sh[SH_HEADS];
        x->nhkv = x->nh;
        x->nq = (size_t)x->sh[SH_NQ];
        x->nk = (size_t)(x->sh_given[SH_NK] ? x->sh[SH_NK] : x->sh[SH_NQ]);
        x->d = (size_t)x->sh[SH_D];
        x->lead[0] = x->nb;
        x->lead[1] = x->nh;
        if (x->gen.kind == GEN_REPEATED && x->gen.repeat > x->nk) {
            cli_error(CMD,
                      "--repeat %" PRIu64 ": more keys than Nk = %zu "
                      "(expected at most Nk)",
                      x->gen.repeat, x->nk);
            return false;
        }
    } else {
        if (!check_file_sizes(x))
            return false;
        for (int i = 0; i < N_IN; i++)
            if (x->in[i].arg != NULL && !read_operand(x, i))
                return false;
        if (!resolve_layout(x) || !check_shapes(x))
            return false;
    }
    if (!build_config(x))
        return false;
    if (!fa_cli_inputs_defined(
            CMD, x->kernel_path != NULL ? "--kernel" : "--policy",
            fa_config_kernel(&x->cfg), x->f16))
        return false;
    if (x->gpu_o.arg != NULL && !read_fwd_outputs(x))
        return false;
    if (x->mask_opd.arg != NULL && !read_mask(x))
        return false;

    /* The exact reference: run it? */
    x->exact_work =
        cli_sat_mul(cli_sat_mul(cli_sat_mul((uint64_t)x->heads, x->nq),
                                cli_sat_mul(x->nk, x->d)),
                    x->backward ? 4 : 1);
    if (x->no_exact)
        x->exact_note = "--no-exact";
    else if (x->softcap != 0.0)
        x->exact_note = "the exact reference has no soft-capping";
    else if (x->exact_work > EXACT_WORK_LIMIT && !x->exact_forced)
        x->exact_note = "B*H*Nq*Nk*d (x4 with --backward) is above 2^26; "
                        "give --exact to run it anyway";
    else
        x->exact_run = true;
    x->p_internal = !(x->captures & (1u << CAP_P))
                    && cli_sat_mul(cli_sat_mul((uint64_t)x->heads, x->nq),
                                   cli_sat_mul(x->nk, 4))
                           <= AUTO_P_BYTES;
    estimate_memory(x);
    if (x->dry_run)
        return true;
    if (!check_memory(x))
        return false;
    cost_report(x);
    if (!fa_cli_heads_usable(CMD, &x->hcfg, x->has_mask ? &x->mask : NULL,
                             x->heads)
        || !allocate(x) || !compute(x))
        return false;
    if (x->exact_run && !exact_all(x))
        return false;
    if (x->backward && x->nhkv != x->nh && !reduce_groups(x))
        return false;
    if (x->exact_run)
        for (int i = 0; i < N_OUT; i++)
            if (x->ex[i] != NULL)
                stat_output(x, i);
    count_rows(x);
    return x->out.arg == NULL || attn_write_output(x);
}

int
attn_main(int argc, char **argv)
{
    attn_ctx *x = calloc(1, sizeof *x);
    cli_buf out;
    cli_json js;
    int id, rc = CLI_EXIT_OK;
    long ncpu;

    if (x == NULL)
        return cli_error(CMD, "out of memory");
    for (int i = 0; i < N_IN; i++)
        x->in[i].opt = i == IN_Q   ? "--q"
                       : i == IN_K ? "--k"
                       : i == IN_V ? "--v"
                                   : "--do";
    x->out.opt = "--out";
    x->gpu_o.opt = "--o";
    x->gpu_lse.opt = "--lse";
    x->gen = gen_params_default();
    x->sh[SH_BATCH] = 1;
    x->sh[SH_HEADS] = 1;
    x->sh[SH_NQ] = 128;
    x->sh[SH_NK] = 128;
    x->sh[SH_D] = 64;
    x->policy = FA_POLICY_PAPER_EQ4;
    x->round_to = TENSOR_ANY;
    x->sms = 132;
    x->fix_kind = FA_FIX_NONE;
    fa_cli_exp_default(&x->exp);
    x->trace_keep = TRACE_KEEP_DEFAULT;
#ifdef _SC_NPROCESSORS_ONLN
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#else
    ncpu = 1;
#endif
    x->threads = ncpu > 0 ? (uint64_t)ncpu : 1;

    id = cli_take_options(CMD, argc, argv, options, O_HELP, attn_help,
                          "the inputs are options: --gen, or --q, --k, "
                          "--v; see 'bf16emu attn --help'",
                          take_option, x);
    if (id >= 0) {
        ctx_free(x);
        return id;
    }

    if (!fa_cli_load_kernel(CMD, x->kernel_path, x->policy_given,
                            &x->kernel)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    if (x->sdpa_backends_given && !x->sdpa) {
        ctx_free(x);
        return cli_error(CMD, "--sdpa-backends applies to --policy sdpa");
    }
    if (x->describe && x->sdpa) {
        ctx_free(x);
        return cli_error(CMD, "--describe: --policy sdpa picks a description "
                              "per call (name one: cudnn, fa2)");
    }
    if (x->describe) {
        const fa_kernel *k =
            x->kernel_path != NULL || x->kernel_named
                ? &x->kernel
                : fa_kernel_by_name(fa_policy_name(x->policy));
        char *text = fa_kernel_json(k);
        ctx_free(x);
        if (text == NULL)
            return cli_error(CMD, "out of memory");
        fputs(text, stdout);
        free(text);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    x->tty = isatty(2) != 0;
    if (!run(x)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    cli_buf_init(&out);
    if (x->json) {
        cli_json_init(&js, &out);
        attn_json_report(x, &js);
    } else if (x->dry_run) {
        attn_text_dry_run(&out, x);
    } else {
        attn_text_report(x, &out);
    }
    cli_report_emit(CMD, &out, &rc);
    ctx_free(x);
    return rc;
}

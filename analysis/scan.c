/* scan.c -- one head of a captured attention call measured (scan.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bits_internal.h"
#include "analysis/gradient.h"
#include "analysis/point.h"
#include "analysis/scan.h"

void
scan_stats_init(scan_stats *s)
{
    memset(s, 0, sizeof *s);
    bias_cell_init(&s->o_cap);
    bias_cell_init(&s->o_emu);
    bias_cell_init(&s->o_fix);
    bias_cell_init(&s->d_cap);
    bias_cell_init(&s->d_emu);
    bias_cell_init(&s->d_fix);
}

void
scan_stats_merge(scan_stats *into, const scan_stats *from)
{
    into->heads += from->heads;
    into->bad_heads += from->bad_heads;
    into->bad_elems += from->bad_elems;
    into->rows += from->rows;
    into->rep_exact += from->rep_exact;
    into->near_tol += from->near_tol;
    into->rep_kernel += from->rep_kernel;
    into->p1_ge2 += from->p1_ge2;
    into->p1_ge2_fix += from->p1_ge2_fix;
    into->p1_entries += from->p1_entries;
    into->sink_rows += from->sink_rows;
    into->sum_p_max += from->sum_p_max;
    into->features += from->features;
    into->one_sign += from->one_sign;
    bias_cell_merge(&into->o_cap, &from->o_cap);
    bias_cell_merge(&into->o_emu, &from->o_emu);
    bias_cell_merge(&into->o_fix, &from->o_fix);
    bias_cell_merge(&into->d_cap, &from->d_cap);
    bias_cell_merge(&into->d_emu, &from->d_emu);
    bias_cell_merge(&into->d_fix, &from->d_fix);
    into->o_match += from->o_match;
    into->o_elems += from->o_elems;
    into->lse_match += from->lse_match;
    into->lse_elems += from->lse_elems;
    into->has_do = into->has_do || from->has_do;
    scan_eq23_merge(&into->eq, &from->eq);
}

void
scan_eq23_merge(scan_eq23 *into, const scan_eq23 *from)
{
    if (from->d == 0)
        return;
    if (into->d == 0)
        into->d = from->d;
    if (into->d != from->d)
        return;
    into->rows += from->rows;
    into->err_sum += from->err_sum;
    for (size_t c = 0; c < from->d; c++)
        into->u_sum[c] += from->u_sum[c];
    into->u_norm_sum += from->u_norm_sum;
    into->u_norm2_sum += from->u_norm2_sum;
    into->sigma1_2 += from->sigma1_2;
}

static double
eq_norm(const scan_eq23 *e)
{
    double n = 0;

    for (size_t c = 0; c < e->d; c++)
        n += e->u_sum[c] * e->u_sum[c];
    return sqrt(n);
}

double
scan_eq23_coherence(const scan_eq23 *e)
{
    if (e->d == 0 || !(e->u_norm_sum > 0))
        return NAN;
    return eq_norm(e) / e->u_norm_sum;
}

double
scan_eq23_rank1(const scan_eq23 *e)
{
    if (e->d == 0 || !(e->u_norm2_sum > 0))
        return NAN;
    return e->sigma1_2 / e->u_norm2_sum;
}

double
scan_eq23_cosine(const scan_eq23 *a, const scan_eq23 *b)
{
    double na = eq_norm(a), nb = eq_norm(b), dot = 0;

    if (a->d == 0 || a->d != b->d || !(na > 0) || !(nb > 0))
        return NAN;
    for (size_t c = 0; c < a->d; c++)
        dot += a->u_sum[c] * b->u_sum[c];
    return dot / (na * nb);
}

/* The largest eigenvalue of the symmetric positive semidefinite G [D, D]
   (power iteration from the all-ones vector, WORK of 2 D). */
static double
top_eigenvalue(const double *g, size_t d, double *work)
{
    double *x = work, *y = work + d, lam = 0;

    for (size_t c = 0; c < d; c++)
        x[c] = 1.0 / sqrt((double)d);
    for (int it = 0; it < 200; it++) {
        double n = 0, prev = lam;
        for (size_t r = 0; r < d; r++) {
            double acc = 0;
            for (size_t c = 0; c < d; c++)
                acc += g[r * d + c] * x[c];
            y[r] = acc;
            n += acc * acc;
        }
        n = sqrt(n);
        if (!(n > 0))
            return 0;
        lam = n;
        for (size_t c = 0; c < d; c++)
            x[c] = y[c] / n;
        if (it > 10 && fabs(lam - prev) <= 1e-12 * lam)
            break;
    }
    return lam;
}

int
scan_dwq_spectrum(const double *m, size_t rows, size_t cols, double *sigma,
                  double *fro2, const char **why)
{
    size_t nw = grad_svd_work_size(rows, cols);
    double *work;
    grad_svd_info info;
    int rc;

    *why = NULL;
    if (nw == 0) {
        *why = "empty or too large a matrix";
        return -1;
    }
    work = malloc(nw * sizeof *work);
    if (work == NULL) {
        *why = "out of memory";
        return -1;
    }
    rc = grad_svd(rows, cols, m, 0, sigma, NULL, NULL, work, &info);
    free(work);
    if (rc != GRAD_OK) {
        *why = rc == GRAD_EINPUT    ? "a non-finite entry"
               : rc == GRAD_ENOCONV ? "the SVD did not converge"
                                    : "the SVD refused its input";
        return -1;
    }
    *fro2 = info.fro2;
    return 0;
}

int
scan_dwq_top(const double *m, size_t rows, size_t cols, double *sigma1,
             double *fro2, const char **why)
{
    double *v, *w, f = 0, lam = 0;

    *why = NULL;
    for (size_t i = 0; i < rows * cols; i++) {
        if (!isfinite(m[i])) {
            *why = "a non-finite entry";
            return -1;
        }
        f += m[i] * m[i];
    }
    *fro2 = f;
    *sigma1 = 0;
    if (rows == 0 || cols == 0 || !(f > 0))
        return 0;
    v = malloc(cols * sizeof *v);
    w = malloc(rows * sizeof *w);
    if (v == NULL || w == NULL) {
        free(v);
        free(w);
        *why = "out of memory";
        return -1;
    }
    for (size_t c = 0; c < cols; c++)
        v[c] = 1.0 / sqrt((double)cols);
    for (int it = 0; it < 5000; it++) {
        double n = 0, prev = lam;
        for (size_t r = 0; r < rows; r++) {
            double acc = 0;
            const double *mr = m + r * cols;
            for (size_t c = 0; c < cols; c++)
                acc += mr[c] * v[c];
            w[r] = acc;
        }
        for (size_t c = 0; c < cols; c++)
            v[c] = 0;
        for (size_t r = 0; r < rows; r++) {
            const double *mr = m + r * cols;
            for (size_t c = 0; c < cols; c++)
                v[c] += mr[c] * w[r];
        }
        for (size_t c = 0; c < cols; c++)
            n += v[c] * v[c];
        n = sqrt(n);
        if (!(n > 0))
            break;
        lam = n; /* |M^T M v| with |v| = 1: sigma1^2 in the limit */
        for (size_t c = 0; c < cols; c++)
            v[c] /= n;
        if (it > 10 && fabs(lam - prev) <= 1e-13 * lam)
            break;
    }
    *sigma1 = sqrt(lam);
    free(v);
    free(w);
    return 0;
}

double
scan_risk(const scan_stats *s)
{
    if (s->rows == 0 || s->features == 0)
        return 0.0;
    return ((double)s->p1_ge2 / (double)s->rows)
           * ((double)s->one_sign / (double)s->features);
}

const char *
scan_check(const fa_config *cfg, const fa_fix *fix)
{
    fa_config c;
    const char *why;

    if (cfg == NULL || fix == NULL)
        return "no configuration";
    if (cfg->shape.batch != 1 || cfg->shape.heads != 1)
        return "scan measures one head at a time (batch = heads = 1)";
    if (cfg->fix.kind != FA_FIX_NONE)
        return "the capture's configuration has no fix";
    if ((why = fa_config_check(cfg)) != NULL)
        return why;
    c = *cfg;
    c.fix = *fix;
    return fa_config_check(&c);
}

/* The inputs' format (cfg->input): BF16 or FP16. */
static const sf_format *
in_format(const fa_config *cfg)
{
    return cfg->input == &sf_format_f16 ? &sf_format_f16 : &sf_format_bf16;
}

/* An input's 16 bits widened to FP32 bits (exact). */
static uint32_t
in_wide(const sf_format *f, uint16_t b)
{
    sf_env env = SF_ENV_IEEE;

    if (f == &sf_format_bf16)
        return (uint32_t)b << 16;
    return (uint32_t)sf_convert(&sf_format_f32, f, b, SF_RNE, &env);
}

/* An input's value. */
static double
in_value(const sf_format *f, uint16_t b)
{
    return bits_f32_value(in_wide(f, b));
}

static uint64_t
count_nonfinite(const sf_format *f, const uint16_t *x, size_t n)
{
    uint64_t c = 0;

    if (x == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        c += isfinite(in_value(f, x[i])) ? 0u : 1u;
    return c;
}

/* (computed - exact) in units of the ulp of F (the inputs' format) at
   EXACT. */
static double
err_in_ulps(const sf_format *f, double computed, double exact)
{
    return ldexp(computed - exact, -ax_ulp_exp(f, exact));
}

/* The features of V [NK, D] whose values are all of one sign. */
/* Whether one KV block of BC keys of the row P [NK] (FP32 bits) holds
   two or more P~ == 1. */
static bool
block_has_two_ones(const uint32_t *p, size_t nk, size_t bc)
{
    for (size_t j0 = 0; j0 < nk; j0 += bc) {
        size_t ones = 0;
        for (size_t j = j0; j < nk && j < j0 + bc; j++)
            ones += p[j] == 0x3F800000u;
        if (ones >= 2)
            return true;
    }
    return false;
}

static uint64_t
one_sign_features(const uint16_t *v, size_t nk, size_t d)
{
    uint64_t n = 0;

    for (size_t c = 0; c < d; c++) {
        bool pos = false, neg = false;
        for (size_t j = 0; j < nk; j++) {
            uint16_t b = v[j * d + c];
            if ((b & 0x7FFFu) == 0)
                continue;
            if (b & 0x8000u)
                neg = true;
            else
                pos = true;
        }
        n += pos != neg;
    }
    return n;
}

/* Why CFG, FIX, REF and IN cannot be measured, or NULL. */
static const char *
head_refused(const fa_config *cfg, const fa_fix *fix, scan_reference ref,
             const scan_head_in *in)
{
    const char *w;

    if ((w = scan_check(cfg, fix)) != NULL)
        return w;
    if (in == NULL || in->q == NULL || in->k == NULL || in->v == NULL)
        return "Q, K and V are needed";
    if (cfg->softcap != 0.0)
        return "soft-capping: the exact reference has no tanh (bf16emu "
               "diff --call compares such a call with the GPU's bits)";
    if (ref == SCAN_REF_BINARY64 && cfg->mask != NULL)
        return "the binary64 reference takes no attention mask (the exact "
               "reference does)";
    if (ref == SCAN_REF_BINARY64 && in_format(cfg) != &sf_format_bf16)
        return "the binary64 reference reads BF16 inputs (FP16 ones take "
               "the exact reference)";
    return NULL;
}

/* The buffers of one head: the exact scores and O (s_ex, o_ex), the
   kernel's scores, P~ and O without the fix and P~ and O with it, the
   LSEs, and for Eq. 2-3 the Gram matrix of the u_i, one u_i (pk), the
   power iteration's work and a row of X. */
typedef struct
{
    double *s_ex, *o_ex, *work, *gram, *pk, *eqw, *xrow;
    uint32_t *s_k, *p_k, *p_f, *o_e, *o_f, *lse_e, *lse_f;
} head_work;

static void
work_free(head_work *w)
{
    free(w->s_ex);
    free(w->o_ex);
    free(w->work);
    free(w->s_k);
    free(w->p_k);
    free(w->p_f);
    free(w->o_e);
    free(w->o_f);
    free(w->lse_e);
    free(w->lse_f);
    free(w->gram);
    free(w->pk);
    free(w->eqw);
    free(w->xrow);
}

/* W's buffers for a head of NQ x NK and D features (EQ_ON: with Eq.
   2-3's; X's row when IN has X and a dW_Q sum).  False when out of
   memory (W then holds what was had, for work_free). */
static bool
work_alloc(head_work *w, size_t nq, size_t nk, size_t d, bool eq_on,
           const scan_head_in *in)
{
    memset(w, 0, sizeof *w);
    w->s_ex = malloc(nq * nk * sizeof *w->s_ex);
    w->o_ex = malloc(nq * d * sizeof *w->o_ex);
    w->work = malloc((nk > 0 ? nk : 1) * sizeof *w->work);
    w->s_k = malloc(nq * nk * sizeof *w->s_k);
    w->p_k = malloc(nq * nk * sizeof *w->p_k);
    w->p_f = malloc(nq * nk * sizeof *w->p_f);
    w->o_e = malloc(nq * d * sizeof *w->o_e);
    w->o_f = malloc(nq * d * sizeof *w->o_f);
    w->lse_e = malloc((nq > 0 ? nq : 1) * sizeof *w->lse_e);
    w->lse_f = malloc((nq > 0 ? nq : 1) * sizeof *w->lse_f);
    if (w->s_ex == NULL || w->o_ex == NULL || w->work == NULL
        || w->s_k == NULL || w->p_k == NULL || w->p_f == NULL
        || w->o_e == NULL || w->o_f == NULL || w->lse_e == NULL
        || w->lse_f == NULL)
        return false;
    if (!eq_on)
        return true;
    w->gram = calloc(d * d, sizeof *w->gram);
    w->pk = malloc(d * sizeof *w->pk);
    w->eqw = malloc((2 * d + nk) * sizeof *w->eqw);
    if (w->gram == NULL || w->pk == NULL || w->eqw == NULL)
        return false;
    if (in->x != NULL && in->dwq != NULL && in->x_cols > 0
        && (w->xrow = malloc(in->x_cols * sizeof *w->xrow)) == NULL)
        return false;
    return true;
}

/* The reference's scores and O into W->s_ex and W->o_ex (REF's way).
   NULL, or why not. */
static const char *
head_reference(const fa_config *cfg, scan_reference ref,
               const scan_head_in *in, head_work *w)
{
    size_t nq = cfg->shape.nq, nk = cfg->shape.nk, d = cfg->shape.d;
    const sf_format *inf = in_format(cfg);

    if (ref == SCAN_REF_BINARY64) {
        uint32_t sb = ax_scale_bits(cfg);
        double scale = bits_f32_value(sb);
        pt_reference(nq, nk, d, cfg->causal, scale, in->q, in->k, in->v,
                     w->work, w->o_ex);
        for (size_t i = 0; i < nq; i++)
            for (size_t j = 0; j < nk; j++) {
                double acc = 0;
                bool masked = cfg->causal && j + nq > i + nk;
                if (!masked)
                    for (size_t c = 0; c < d; c++)
                        acc += in_value(inf, in->q[i * d + c])
                               * in_value(inf, in->k[j * d + c]);
                w->s_ex[i * nk + j] = masked ? -INFINITY : scale * acc;
            }
    } else {
        ax_options ao = {0, AX_DIRECT};
        ax_outputs ax;
        int arc;
        memset(&ax, 0, sizeof ax);
        ax.s.d = w->s_ex;
        ax.o.d = w->o_ex;
        arc = ax_forward_ex(cfg, &ao, in->q, in->k, in->v, &ax);
        if (arc != AX_OK)
            return ax_strerror(arc);
    }
    return NULL;
}

/* The emulated kernel without the fix (scores, P~, O, LSE) and with FIX
   (P~, O, LSE) into W.  NULL, or why not. */
static const char *
head_kernels(const fa_config *cfg, const fa_fix *fix, const scan_head_in *in,
             head_work *w)
{
    fa_capture cap;
    fa_config cf;
    sf_env env = SF_ENV_IEEE, env2 = SF_ENV_IEEE;

    memset(&cap, 0, sizeof cap);
    cap.s = w->s_k;
    cap.p = w->p_k;
    if (fa_forward(cfg, in->q, in->k, in->v, w->o_e, w->lse_e, &cap, &env)
        != 0)
        return "the emulated forward failed";
    cf = *cfg;
    cf.fix = *fix;
    memset(&cap, 0, sizeof cap);
    cap.p = w->p_f;
    if (fa_forward(&cf, in->q, in->k, in->v, w->o_f, w->lse_f, &cap, &env2)
        != 0)
        return "the emulated forward with the fix failed";
    return NULL;
}

/* A row's delta = rowsum(dO o O) from the exact O, the captured, the
   emulated and the fixed one. */
typedef struct
{
    double dex, dcap, demu, dfix;
} row_delta;

/* Row I's O errors (captured, emulated, with the fix) into OUT and, with
   dO, its deltas (returned; zero without dO) and their errors. */

static row_delta
row_errors(const fa_config *cfg, const scan_head_in *in,
           const head_work *w, size_t i, scan_stats *out)
{
    const sf_format *inf = in_format(cfg);
    size_t d = cfg->shape.d;
    row_delta r = {0, 0, 0, 0};

    for (size_t c = 0; c < d; c++) {
        size_t at = i * d + c;
        double oe = bits_f32_value(w->o_e[at]);
        double of = bits_f32_value(w->o_f[at]);
        bias_cell_add(&out->o_emu, err_in_ulps(inf, oe, w->o_ex[at]));
        bias_cell_add(&out->o_fix, err_in_ulps(inf, of, w->o_ex[at]));
        if (in->o != NULL) {
            double oc = in_value(inf, in->o[at]);
            bias_cell_add(&out->o_cap, err_in_ulps(inf, oc, w->o_ex[at]));
            out->o_elems++;
            out->o_match += in_wide(inf, in->o[at]) == w->o_e[at];
        }
        if (in->dout != NULL) {
            double g = in_value(inf, in->dout[at]);
            r.dex += g * w->o_ex[at];
            r.demu += g * oe;
            r.dfix += g * of;
            if (in->o != NULL)
                r.dcap += g * in_value(inf, in->o[at]);
        }
    }
    if (in->dout != NULL) {
        bias_cell_add(&out->d_emu, r.demu - r.dex);
        bias_cell_add(&out->d_fix, r.dfix - r.dex);
        if (in->o != NULL)
            bias_cell_add(&out->d_cap, r.dcap - r.dex);
    }
    return r;
}

/* Eq. 2 for row I, whose delta has the error E: u_i = -scale e_i (P K)_i,
   P from the exact scores, added to OUT's sums, to the Gram matrix and,
   with X, u_i x_i^T to the dW_Q error. */
static void
row_eq23(const fa_config *cfg, const scan_head_in *in, head_work *w,
         size_t i, double e, scan_stats *out)
{
    const sf_format *inf = in_format(cfg);
    size_t nk = cfg->shape.nk, d = cfg->shape.d;
    double scale_v = bits_f32_value(ax_scale_bits(cfg));
    const double *srow = w->s_ex + i * nk;
    double *pk = w->pk;
    double m = -INFINITY, z = 0, n2 = 0;

    for (size_t j = 0; j < nk; j++)
        if (srow[j] > m)
            m = srow[j];
    for (size_t c = 0; c < d; c++)
        pk[c] = 0;
    for (size_t j = 0; j < nk; j++) {
        double wgt = isinf(srow[j]) ? 0.0 : exp(srow[j] - m);
        z += wgt;
        if (wgt != 0)
            for (size_t c = 0; c < d; c++)
                pk[c] += wgt * in_value(inf, in->k[j * d + c]);
    }
    for (size_t c = 0; c < d; c++) {
        pk[c] = -scale_v * e * pk[c] / z;
        out->eq.u_sum[c] += pk[c];
        n2 += pk[c] * pk[c];
    }
    if (w->xrow != NULL) {
        /* Eq. 2: dW_Q's error gains u_i x_i^T */
        const uint16_t *xr = in->x + i * in->x_cols;
        for (size_t a = 0; a < in->x_cols; a++)
            w->xrow[a] = bits_bf16_value(xr[a]);
        for (size_t c = 0; c < d; c++) {
            double *mr = in->dwq + c * in->x_cols;
            for (size_t a = 0; a < in->x_cols; a++)
                mr[a] += pk[c] * w->xrow[a];
        }
    }
    for (size_t r = 0; r < d; r++)
        for (size_t c = 0; c < d; c++)
            w->gram[r * d + c] += pk[r] * pk[c];
    out->eq.rows++;
    out->eq.err_sum += e;
    out->eq.u_norm_sum += sqrt(n2);
    out->eq.u_norm2_sum += n2;
}

/* Row I's counts: its classes in the exact scores and the kernel's
   without and with the fix, P~ == 1 per block of BC keys, the sink, the
   LSE match.  False when a classification failed. */
static bool
row_counts(const fa_config *cfg, const scan_head_in *in, const head_work *w,
           const rows_options *ro, size_t bc, size_t i, bool *masked,
           scan_stats *out)
{
    size_t nk = cfg->shape.nk;
    rows_info ex, ke, fx;

    if (rows_classify_d(nk, w->s_ex + i * nk, NULL, ro, NULL, &ex) != ROWS_OK
        || rows_classify(nk, w->s_k + i * nk, w->p_k + i * nk, ro, NULL, &ke)
               != ROWS_OK
        || rows_classify(nk, NULL, w->p_f + i * nk, ro, NULL, &fx)
               != ROWS_OK)
        return false;
    if (in->lse != NULL) {
        out->lse_elems++;
        out->lse_match += in->lse[i] == w->lse_e[i];
    }
    *masked = ex.cls == ROWS_MASKED;
    if (*masked)
        return true;
    out->rows++;
    out->rep_exact += ex.n_max >= 2;
    out->near_tol += ke.n_near >= 2;
    out->rep_kernel += ke.n_max >= 2;
    out->p1_ge2 += block_has_two_ones(w->p_k + i * nk, nk, bc);
    out->p1_entries += ke.n_one;
    out->p1_ge2_fix += block_has_two_ones(w->p_f + i * nk, nk, bc);
    if (!isnan(ex.p_max)) {
        out->sum_p_max += ex.p_max;
        out->sink_rows += ex.p_max >= 0.5;
    }
    return true;
}

int
scan_head(const fa_config *cfg, const fa_fix *fix, scan_reference ref,
          const scan_head_in *in, scan_stats *out, const char **why)
{
    const char *w;
    size_t nq, nk, d, bc;
    const sf_format *inf;
    bool eq_on;
    head_work hw;
    uint64_t bad;
    rows_options ro = rows_options_default();
    int rc = -1;

    *why = NULL;
    if ((w = head_refused(cfg, fix, ref, in)) != NULL) {
        *why = w;
        return -1;
    }
    inf = in_format(cfg);
    nq = cfg->shape.nq;
    nk = cfg->shape.nk;
    d = cfg->shape.d;

    bad = count_nonfinite(inf, in->q, nq * d)
          + count_nonfinite(inf, in->k, nk * d)
          + count_nonfinite(inf, in->v, nk * d)
          + count_nonfinite(inf, in->o, nq * d)
          + count_nonfinite(inf, in->dout, nq * d);
    if (in->x != NULL && in->dwq != NULL)
        bad += count_nonfinite(&sf_format_bf16, in->x, nq * in->x_cols);
    out->has_do = out->has_do || in->dout != NULL;
    if (bad > 0) {
        out->bad_heads++;
        out->bad_elems += bad;
        return 0;
    }

    eq_on = in->dout != NULL && d <= SCAN_EQ23_DMAX;
    if (!work_alloc(&hw, nq, nk, d, eq_on, in)) {
        *why = "out of memory";
        goto done;
    }
    if (eq_on)
        out->eq.d = d;
    if ((w = head_reference(cfg, ref, in, &hw)) != NULL
        || (w = head_kernels(cfg, fix, in, &hw)) != NULL) {
        *why = w;
        goto done;
    }

    bc = ax_block_cols(cfg);
    ro.tol = fix->tol >= 0 && !isnan(fix->tol) ? fix->tol : ro.tol;
    out->heads++;
    out->features += d;
    out->one_sign += one_sign_features(in->v, nk, d);
    for (size_t i = 0; i < nq; i++) {
        bool masked;
        row_delta r;
        if (!row_counts(cfg, in, &hw, &ro, bc, i, &masked, out)) {
            *why = "row classification failed";
            goto done;
        }
        if (masked)
            continue;
        r = row_errors(cfg, in, &hw, i, out);
        if (eq_on)
            row_eq23(cfg, in, &hw, i,
                     (in->o != NULL ? r.dcap : r.demu) - r.dex, out);
    }
    if (eq_on)
        out->eq.sigma1_2 += top_eigenvalue(hw.gram, d, hw.eqw);
    rc = 0;

done:
    work_free(&hw);
    return rc;
}

bool
scan_call_uses_x(bool has_x, bool has_do, bool x_rotary, size_t d)
{
    return has_x && has_do && !x_rotary && d <= SCAN_EQ23_DMAX;
}

int
scan_call_item(const fa_config *cfg, const fa_fix *fix, scan_reference ref,
               const scan_call_in *in, size_t bh, scan_stats *res,
               double *dwq, const char **why)
{
    size_t nq = in->nq, nk = in->nk, d = in->d, hh = in->h;
    /* grouped-query heads: query head h reads KV head h / (H / Hkv) of its
       batch entry */
    size_t g = hh / in->hkv;
    size_t kh = bh / hh * in->hkv + bh % hh / g;
    scan_head_in hi;
    fa_attn_mask hm;
    fa_config hc;

    hi.q = in->q + bh * nq * d;
    hi.k = in->k + kh * nk * d;
    hi.v = in->v + kh * nk * d;
    hi.o = in->o != NULL ? in->o + bh * nq * d : NULL;
    hi.dout = in->dout != NULL ? in->dout + bh * nq * d : NULL;
    hi.lse = in->lse != NULL ? in->lse + bh * nq : NULL;
    hi.x = in->x != NULL ? in->x + (bh / hh) * nq * in->xc : NULL;
    hi.x_cols = in->x != NULL ? in->xc : 0;
    hi.dwq = in->x != NULL ? dwq : NULL;
    scan_stats_init(res);
    *why = NULL;
    hc = am_head_config(cfg, in->mask, bh, &hm);
    if (scan_head(&hc, fix, ref, &hi, res, why) != 0) {
        if (*why == NULL)
            *why = "failed";
        return -1;
    }
    return 0;
}

/*----------------------------------------------------------------------------
 * scan_stats as hex words: one walk over the fields that writes (out
 * set) or reads (in set).
 *--------------------------------------------------------------------------*/
typedef struct
{
    char *out;       /* writing: the buffer (may be NULL with cap 0) */
    size_t cap, len; /* its size, the text's length so far */
    const char *in;  /* reading */
    bool bad;
} words_io;

static void
io_u64(words_io *s, uint64_t *v)
{
    char *end;

    if (s->in == NULL) {
        char w[24];
        int k = snprintf(w, sizeof w, "%s%" PRIx64, s->len ? " " : "", *v);
        for (int i = 0; i < k; i++, s->len++)
            if (s->len + 1 < s->cap)
                s->out[s->len] = w[i];
        if (s->cap > 0)
            s->out[s->len < s->cap ? s->len : s->cap - 1] = '\0';
        return;
    }
    if (s->bad)
        return;
    while (*s->in == ' ')
        s->in++;
    if (!isxdigit((unsigned char)*s->in)) {
        s->bad = true;
        return;
    }
    errno = 0;
    *v = (uint64_t)strtoull(s->in, &end, 16);
    if (errno != 0 || (*end != ' ' && *end != '\0'))
        s->bad = true;
    s->in = end;
}

static void
io_dbl(words_io *s, double *v)
{
    uint64_t u;

    memcpy(&u, v, sizeof u);
    io_u64(s, &u);
    memcpy(v, &u, sizeof u);
}

static void
io_cell(words_io *s, bias_cell *c)
{
    uint64_t *u[] = {&c->n,      &c->neg,   &c->zero,    &c->pos,
                     &c->nonfinite, &c->events, &c->exact, &c->away,
                     &c->toward, &c->up,    &c->down,    &c->ties,
                     &c->nonties, &c->ties_away};
    double *d[] = {&c->mean, &c->m2, &c->min, &c->max};

    for (size_t i = 0; i < sizeof u / sizeof *u; i++)
        io_u64(s, u[i]);
    for (size_t i = 0; i < sizeof d / sizeof *d; i++)
        io_dbl(s, d[i]);
}

/* Reading: only spaces may follow the last word. */
static void
io_end(words_io *s)
{
    if (s->in == NULL || s->bad)
        return;
    while (*s->in == ' ')
        s->in++;
    if (*s->in != '\0')
        s->bad = true;
}

/* Every field of scan_stats (keep in step with scan.h). */
static void
io_stats(words_io *s, scan_stats *t)
{
    uint64_t *u[] = {&t->heads,    &t->bad_heads, &t->bad_elems,
                     &t->rows,     &t->rep_exact, &t->near_tol,
                     &t->rep_kernel, &t->p1_ge2,  &t->p1_ge2_fix,
                     &t->p1_entries, &t->sink_rows, &t->features,
                     &t->one_sign, &t->o_match,   &t->o_elems,
                     &t->lse_match, &t->lse_elems};
    bias_cell *c[] = {&t->o_cap, &t->o_emu, &t->o_fix,
                      &t->d_cap, &t->d_emu, &t->d_fix};
    /* read from T only when writing: a record being parsed into T has
       no values there yet */
    uint64_t hd = s->in == NULL ? t->has_do : 0;
    uint64_t d = s->in == NULL ? t->eq.d : 0;

    for (size_t i = 0; i < sizeof u / sizeof *u; i++)
        io_u64(s, u[i]);
    io_dbl(s, &t->sum_p_max);
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        io_cell(s, c[i]);
    io_u64(s, &hd);
    t->has_do = hd != 0;
    io_u64(s, &d);
    if (d > SCAN_EQ23_DMAX) {
        s->bad = true;
        return;
    }
    t->eq.d = (size_t)d;
    io_u64(s, &t->eq.rows);
    io_dbl(s, &t->eq.err_sum);
    for (size_t i = 0; i < t->eq.d; i++)
        io_dbl(s, &t->eq.u_sum[i]);
    io_dbl(s, &t->eq.u_norm_sum);
    io_dbl(s, &t->eq.u_norm2_sum);
    io_dbl(s, &t->eq.sigma1_2);
    io_end(s);
}

size_t
scan_stats_format(const scan_stats *s, char *buf, size_t n)
{
    words_io w;
    scan_stats t = *s;

    memset(&w, 0, sizeof w);
    w.out = buf;
    w.cap = n;
    if (n > 0)
        buf[0] = '\0';
    io_stats(&w, &t);
    return w.len;
}

int
scan_stats_parse(const char *text, scan_stats *s)
{
    words_io r;

    memset(&r, 0, sizeof r);
    r.in = text;
    io_stats(&r, s);
    return r.bad ? -1 : 0;
}

size_t
scan_words_format(const double *v, size_t n, char *buf, size_t len)
{
    words_io w;

    memset(&w, 0, sizeof w);
    w.out = buf;
    w.cap = len;
    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        io_dbl(&w, &x);
    }
    return w.len;
}

int
scan_words_parse(const char *text, double *v, size_t n)
{
    words_io r;

    memset(&r, 0, sizeof r);
    r.in = text;
    for (size_t i = 0; i < n && !r.bad; i++)
        io_dbl(&r, &v[i]);
    io_end(&r);
    return r.bad ? -1 : 0;
}

/* point.c -- one point of a rounding-bias experiment (point.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attn_exact.h"
#include "analysis/bits_internal.h"
#include "analysis/point.h"
#include "softfloat/mma.h"

static const char *const stage_names[PT_N_STAGES] = {
    "base", "p-cast", "pv-acc", "pv-cast", "o-cast", "all"};

const char *
pt_stage_name(int stage)
{
    return stage >= 0 && stage < PT_N_STAGES ? stage_names[stage] : NULL;
}

void
pt_stats_init(pt_stats *st)
{
    memset(st, 0, sizeof *st);
    for (int s = 0; s < PT_N_STAGES; s++) {
        bias_cell_init(&st->o_ulp[s]);
        bias_cell_init(&st->o_abs[s]);
        bias_cell_init(&st->delta[s]);
    }
    bias_cell_init(&st->o_head);
    bias_cell_init(&st->delta_head);
}

void
pt_stats_merge(pt_stats *into, const pt_stats *from)
{
    for (int s = 0; s < PT_N_STAGES; s++) {
        bias_cell_merge(&into->o_ulp[s], &from->o_ulp[s]);
        bias_cell_merge(&into->o_abs[s], &from->o_abs[s]);
        bias_cell_merge(&into->delta[s], &from->delta[s]);
    }
    bias_cell_merge(&into->o_head, &from->o_head);
    bias_cell_merge(&into->delta_head, &from->delta_head);
    into->rows += from->rows;
    into->rows_p1 += from->rows_p1;
    into->rows_p2 += from->rows_p2;
}

fa_config
pt_config(const pt_spec *spec, int stage)
{
    fa_config c = spec->kernel != NULL
                      ? fa_config_kernel_default(spec->kernel)
                      : fa_config_default(spec->policy);
    unsigned abl = spec->ablations;

    c.shape = (fa_shape){1, 1, spec->nq, spec->nk, spec->d};
    c.causal = spec->causal;
    c.br = spec->br;
    c.bc = spec->bc;
    c.fix = spec->fix;
    c.exp = spec->exp;
    c.log = spec->log;
    if (spec->mma_pv != NULL)
        c.mma_pv = spec->mma_pv;
    if (stage == PT_P_CAST || stage == PT_ALL)
        abl |= FA_ABL_FP32_P;
    if (stage == PT_PV_CAST || stage == PT_ALL)
        abl |= FA_ABL_FP32_PV;
    if (stage == PT_O_CAST || stage == PT_ALL)
        abl |= FA_ABL_FP32_OCAST;
    if (stage == PT_PV_ACC || stage == PT_ALL)
        c.mma_pv = sf_mma_preset_by_name("exact");
    c.ablations = abl;
    return c;
}

const char *
pt_spec_check(const pt_spec *spec)
{
    const char *why;
    fa_config c;

    if (spec->heads < 1)
        return "heads must be at least 1";
    if (spec->nq < 1 || spec->nk < 1 || spec->d < 1)
        return "N and d must be at least 1";
    why = gen_params_check(&spec->gen, spec->nk);
    if (why != NULL)
        return why;
    for (int s = 0; s < (spec->stages ? PT_N_STAGES : 1); s++) {
        c = pt_config(spec, s);
        why = fa_config_check(&c);
        if (why != NULL)
            return why;
    }
    return NULL;
}

/*----------------------------------------------------------------------------
 * The binary64 reference.
 *--------------------------------------------------------------------------*/
void
pt_reference(size_t nq, size_t nk, size_t d, bool causal, double scale,
             const uint16_t *q, const uint16_t *k, const uint16_t *v,
             double *work, double *o_ref)
{
    for (size_t i = 0; i < nq; i++) {
        size_t vis = nk;
        double mx = -INFINITY, l = 0, lc = 0;
        double *orow = o_ref + i * d;

        if (causal)
            vis = i + nk < nq            ? 0
                  : i + nk - nq + 1 < nk ? i + nk - nq + 1
                                         : nk;
        if (vis == 0) {
            for (size_t c = 0; c < d; c++)
                orow[c] = NAN;
            continue;
        }
        for (size_t j = 0; j < vis; j++) {
            double s = 0;
            for (size_t c = 0; c < d; c++)
                s += bits_bf16_value(q[i * d + c])
                     * bits_bf16_value(k[j * d + c]);
            work[j] = scale * s;
            if (work[j] > mx)
                mx = work[j];
        }
        for (size_t j = 0; j < vis; j++) {
            /* Neumaier's sum of the weights */
            double w = exp(work[j] - mx), t = l + w;
            lc += fabs(l) >= w ? (l - t) + w : (w - t) + l;
            l = t;
            work[j] = w;
        }
        l += lc;
        for (size_t c = 0; c < d; c++) {
            double acc = 0, comp = 0;
            for (size_t j = 0; j < vis; j++) {
                double x = work[j] * bits_bf16_value(v[j * d + c]),
                       t = acc + x;
                comp += fabs(acc) >= fabs(x) ? (acc - t) + x : (x - t) + acc;
                acc = t;
            }
            orow[c] = (acc + comp) / l;
        }
    }
}

/*----------------------------------------------------------------------------
 * A trial.
 *--------------------------------------------------------------------------*/
uint64_t
pt_trial_seed(uint64_t seed, uint64_t trial)
{
    return gen_draw(seed, 8, trial, 0);
}

/* rowsum(dO o X) for one row, binary64 with Neumaier's compensation (the
   products of a BF16 dO and an FP32 or BF16 value are exact). */
static double
row_delta(size_t d, const uint16_t *dout, const double *x)
{
    double s = 0, comp = 0;

    for (size_t c = 0; c < d; c++) {
        double p = bits_bf16_value(dout[c]) * x[c], t = s + p;
        comp += fabs(s) >= fabs(p) ? (s - t) + p : (p - t) + s;
        s = t;
    }
    return s + comp;
}

typedef struct trial_buf
{
    uint16_t *q, *k, *v, *dout;
    uint32_t *o, *lse, *p;
    double *o_ref, *o_got, *work;
} trial_buf;

static void
buf_free(trial_buf *b)
{
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->dout);
    free(b->o);
    free(b->lse);
    free(b->p);
    free(b->o_ref);
    free(b->o_got);
    free(b->work);
}

size_t
pt_trial_bytes(const pt_spec *spec)
{
    size_t nq = spec->nq, nk = spec->nk, d = spec->d, ws = 0;

    for (int s = 0; s < (spec->stages ? PT_N_STAGES : 1); s++) {
        fa_config c = pt_config(spec, s);
        size_t w = fa_workspace_bytes(&c);
        if (w > ws)
            ws = w;
    }
    return ws + 2 * (2 * nq * d + 2 * nk * d) + 4 * (nq * d + nq + nq * nk)
           + 8 * (2 * nq * d + nk);
}

int
pt_trial(const pt_spec *spec, uint64_t trial, pt_stats *out, const char **why)
{
    size_t nq = spec->nq, nk = spec->nk, d = spec->d;
    gen_params g = spec->gen;
    trial_buf b;
    fa_config base = pt_config(spec, PT_BASE);
    const sf_format *ofmt;
    uint32_t scale_bits = fa_scale_bits(&base);
    float scale;
    int rc = 0;

    *why = NULL;
    memcpy(&scale, &scale_bits, sizeof scale);
    ofmt = fa_output_format(&base, "o");
    g.seed = pt_trial_seed(spec->gen.seed, trial);
    memset(&b, 0, sizeof b);
    b.q = malloc(nq * d * sizeof *b.q);
    b.k = malloc(nk * d * sizeof *b.k);
    b.v = malloc(nk * d * sizeof *b.v);
    b.dout = malloc(nq * d * sizeof *b.dout);
    b.o = malloc(nq * d * sizeof *b.o);
    b.lse = malloc(nq * sizeof *b.lse);
    b.p = malloc(nq * nk * sizeof *b.p);
    b.o_ref = malloc(nq * d * sizeof *b.o_ref);
    b.o_got = malloc(nq * d * sizeof *b.o_got);
    b.work = malloc(nk * sizeof *b.work);
    if (!b.q || !b.k || !b.v || !b.dout || !b.o || !b.lse || !b.p || !b.o_ref
        || !b.o_got || !b.work) {
        buf_free(&b);
        *why = "out of memory";
        return -1;
    }

    for (size_t h = 0; h < spec->heads && rc == 0; h++) {
        gen_head(&g, scale, nq, nk, d, h, b.q, b.k, b.v, b.dout);
        pt_reference(nq, nk, d, spec->causal, (double)scale, b.q, b.k, b.v,
                     b.work, b.o_ref);
        for (int s = 0; s < (spec->stages ? PT_N_STAGES : 1); s++) {
            fa_config c = pt_config(spec, s);
            fa_capture cap;
            sf_env env = SF_ENV_IEEE;
            bias_cell ho, hd;

            env.isa = spec->isa;

            bias_cell_init(&ho);
            bias_cell_init(&hd);

            memset(&cap, 0, sizeof cap);
            cap.p = s == PT_BASE ? b.p : NULL;
            if (fa_forward(&c, b.q, b.k, b.v, b.o, b.lse,
                           s == PT_BASE ? &cap : NULL, &env)
                != 0) {
                *why = "the attention library refused the configuration or "
                       "ran out of memory";
                rc = -1;
                break;
            }
            for (size_t i = 0; i < nq; i++) {
                const double *ref = b.o_ref + i * d;
                double *got = b.o_got + i * d;
                if (isnan(ref[0]))
                    continue; /* no visible key */
                for (size_t col = 0; col < d; col++) {
                    double e;
                    got[col] = bits_f32_value(b.o[i * d + col]);
                    e = got[col] - ref[col];
                    bias_cell_add(&out->o_abs[s], e);
                    e = ldexp(e, -ax_ulp_exp(ofmt, ref[col]));
                    bias_cell_add(&out->o_ulp[s], e);
                    bias_cell_add(&ho, e);
                }
                {
                    double de = row_delta(d, b.dout + i * d, got)
                                - row_delta(d, b.dout + i * d, ref);
                    bias_cell_add(&out->delta[s], de);
                    bias_cell_add(&hd, de);
                }
                if (s == PT_BASE) {
                    unsigned ones = 0;
                    for (size_t j = 0; j < nk && ones < 2; j++)
                        ones += b.p[i * nk + j] == 0x3F800000u;
                    out->rows++;
                    out->rows_p1 += ones >= 1;
                    out->rows_p2 += ones >= 2;
                }
            }
            if (s == PT_BASE && ho.n > 0) {
                bias_cell_add(&out->o_head, ho.mean);
                bias_cell_add(&out->delta_head, hd.mean);
            }
        }
    }
    buf_free(&b);
    return rc;
}

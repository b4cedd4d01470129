/* gen.c -- generated attention inputs (gen.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <string.h>

#include "attention/attention.h"
#include "analysis/gen.h"

static const char *const kind_names[N_GENS] = {"normal", "sink",
                                               "repeated-max"};
static const char *const vdist_names[N_GEN_VDISTS] = {"normal", "uniform",
                                                      "laplace", "student-t"};

const char *
gen_kind_name(gen_kind k)
{
    return (unsigned)k < N_GENS ? kind_names[k] : NULL;
}

const char *
gen_vdist_name(gen_vdist v)
{
    return (unsigned)v < N_GEN_VDISTS ? vdist_names[v] : NULL;
}

/* The index of NAME among the N NAMES, or -1. */
static int
name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

int
gen_kind_parse(const char *name)
{
    return name_index(kind_names, N_GENS, name);
}

int
gen_vdist_parse(const char *name)
{
    return name_index(vdist_names, N_GEN_VDISTS, name);
}

gen_params
gen_params_default(void)
{
    gen_params g;

    memset(&g, 0, sizeof g);
    g.kind = GEN_NORMAL;
    g.vdist = GEN_V_NORMAL;
    g.seed = 1;
    g.qk_std = 1.0;
    g.v_mean = 0.0;
    g.v_std = 1.0;
    g.v_shift = 0.0;
    g.v_nu = 5;
    g.do_std = 1.0;
    g.sink = 4.0;
    g.repeat = 2;
    g.max_value = 3.0;
    g.gap_min = 12.0;
    g.gap_max = 30.0;
    return g;
}

const char *
gen_params_check(const gen_params *g, size_t nk)
{
    if ((unsigned)g->kind >= N_GENS)
        return "the score structure is unknown";
    if ((unsigned)g->vdist >= N_GEN_VDISTS)
        return "the V distribution is unknown";
    if (!(g->qk_std >= 0) || !isfinite(g->qk_std))
        return "qk_std must be finite and >= 0";
    if (!isfinite(g->v_mean) || !(g->v_std >= 0) || !isfinite(g->v_std))
        return "v_mean must be finite and v_std finite and >= 0";
    if (!isfinite(g->v_shift))
        return "v_shift must be finite";
    if (g->vdist == GEN_V_STUDENT && (g->v_nu < 3 || g->v_nu > 64))
        return "the degrees of freedom of student-t must be 3 .. 64";
    if (!(g->do_std >= 0) || !isfinite(g->do_std) || !isfinite(g->do_mean))
        return "do_mean must be finite and do_std finite and >= 0";
    if (!isfinite(g->sink))
        return "sink must be finite";
    if (g->kind == GEN_REPEATED) {
        if (g->repeat < 1 || g->repeat > nk)
            return "repeat must be 1 .. the number of keys";
        if (!isfinite(g->max_value))
            return "max_value must be finite";
        if (!(g->gap_min >= 0) || !(g->gap_max >= g->gap_min)
            || !isfinite(g->gap_max))
            return "the gaps must satisfy 0 <= gap_min <= gap_max, finite";
    }
    return NULL;
}

/*----------------------------------------------------------------------------
 * Random numbers: a counter-based generator (splitmix64's finaliser over
 * (seed, stream, index, k)), so that any element can be drawn on its own.
 *
 * Streams: Q 1, K 2, V 3, dO 4, the repeated-max gaps 5 and positions 6,
 * the chi-square normals of student-t 7.
 *--------------------------------------------------------------------------*/
static uint64_t
mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

uint64_t
gen_draw(uint64_t seed, unsigned stream, uint64_t index, uint64_t k)
{
    uint64_t h = mix64(seed ^ ((uint64_t)stream * 0xD1B54A32D192ED03u));

    h = mix64(h + index);
    return mix64(h + k);
}

/* A uniform double in [0, 1) with 53 random bits. */
static double
uniform01(uint64_t r)
{
    return (double)(r >> 11) * 0x1p-53;
}

/* An odd multiple of 2^-24 in (-1, 1), from the top 24 bits of R. */
static double
unit_odd(uint64_t r)
{
    int64_t m = (int64_t)(2 * (r >> 40) + 1) - ((int64_t)1 << 24);
    return (double)m * 0x1p-24;
}

/* The correctly rounded FP32 log of the FP32 value nearest X > 0 (libm's
   log is not correctly rounded everywhere, and the inputs must not
   depend on the machine). */
static double
log_f32(double x)
{
    sf_env env = SF_ENV_IEEE;
    uint32_t xb = (uint32_t)sf_from_double(&sf_format_f32, x, SF_RNE, &env);
    uint32_t lb = fa_logf_cr(xb);
    float lf;

    memcpy(&lf, &lb, sizeof lf);
    return (double)lf;
}

/* A standard normal (Marsaglia's polar method on 24-bit uniforms; the
   sum of squares is exact, the log correctly rounded in FP32 and sqrt
   correctly rounded in binary64, so the value is the same everywhere). */
static double
std_normal(uint64_t seed, unsigned stream, uint64_t index)
{
    for (uint64_t k = 0;; k += 2) {
        double v1 = unit_odd(gen_draw(seed, stream, index, k));
        double v2 = unit_odd(gen_draw(seed, stream, index, k + 1));
        double s = v1 * v1 + v2 * v2; /* exact: at most 49 bits */

        if (s >= 1.0)
            continue;
        return v1 * sqrt(-2.0 * log_f32(s) / s);
    }
}

static uint16_t
to_bf16(double x)
{
    sf_env env = SF_ENV_IEEE;
    return (uint16_t)sf_from_double(&sf_format_bf16, x, SF_RNE, &env);
}

/* A draw of unit variance and zero mean from V's distribution. */
static double
v_unit(const gen_params *g, uint64_t index)
{
    switch (g->vdist) {
    case GEN_V_UNIFORM:
        return sqrt(3.0) * unit_odd(gen_draw(g->seed, 3, index, 0));
    case GEN_V_LAPLACE: {
        /* u uniform in (-1/2, 1/2); 1 - 2|u| is a multiple of 2^-24 in
           (0, 1], exact in FP32; scale b = 1/sqrt(2) */
        double u = 0.5 * unit_odd(gen_draw(g->seed, 3, index, 0));
        double x = -log_f32(1.0 - 2.0 * fabs(u)) / sqrt(2.0);
        return u < 0 ? -x : x;
    }
    case GEN_V_STUDENT: {
        double z = std_normal(g->seed, 3, index), chi2 = 0;
        for (unsigned j = 0; j < g->v_nu; j++) {
            double y = std_normal(g->seed, 7, index * 64 + j);
            chi2 += y * y;
        }
        /* t = z / sqrt(chi2 / nu) has variance nu / (nu - 2) */
        return z / sqrt(chi2 / g->v_nu)
               * sqrt((double)(g->v_nu - 2) / g->v_nu);
    }
    default:
        return std_normal(g->seed, 3, index);
    }
}

#define BF16_ONE 0x3F80u

void
gen_head(const gen_params *g, float scale, size_t nq, size_t nk, size_t d,
         size_t hh, uint16_t *q, uint16_t *k, uint16_t *v, uint16_t *dout)
{
    uint64_t q0 = (uint64_t)(hh * nq * d), k0 = (uint64_t)(hh * nk * d);
    double sc = (double)scale;
    uint64_t selected = 0;

    for (size_t i = 0; i < nq * d; i++)
        q[i] = to_bf16(0.0 + g->qk_std * std_normal(g->seed, 1, q0 + i));
    for (size_t i = 0; i < nk * d; i++) {
        size_t c = i % d;
        double mean = g->v_mean;
        if (g->v_shift != 0 && d > 1)
            mean += g->v_shift * (2.0 * (double)c / (double)(d - 1) - 1.0);
        k[i] = to_bf16(0.0 + g->qk_std * std_normal(g->seed, 2, k0 + i));
        v[i] = to_bf16(mean + g->v_std * v_unit(g, k0 + i));
    }
    if (dout != NULL)
        for (size_t i = 0; i < nq * d; i++)
            dout[i] = to_bf16(g->do_mean
                              + g->do_std * std_normal(g->seed, 4, q0 + i));
    if (g->kind == GEN_NORMAL)
        return;

    /* sink and repeated-max: feature 0 of every query is 1, so feature 0
       of key j adds scale K[j, 0] to every score of key j. */
    for (size_t i = 0; i < nq; i++)
        q[i * d] = BF16_ONE;
    if (g->kind == GEN_SINK) {
        k[0] = to_bf16(g->sink / sc);
        for (size_t j = 1; j < nk; j++)
            k[j * d] = 0;
        return;
    }
    /* repeated-max: REPEAT keys chosen by selection sampling (key j is
       taken with probability (still needed) / (keys left)) get K[j, 0] =
       RN16(max_value / scale) and zeros elsewhere, so their scores are
       equal in every row and every policy; the other keys get K[j, 0] =
       RN16((max_value - gap) / scale), gap uniform in [gap_min,
       gap_max]. */
    for (size_t j = 0; j < nk; j++) {
        uint64_t r = gen_draw(g->seed, 6, (uint64_t)hh, (uint64_t)j);
        uint64_t left = (uint64_t)(nk - j);
        uint64_t pick =
            (uint64_t)(((unsigned __int128)r * left) >> 64); /* [0, left) */
        if (pick < g->repeat - selected) {
            selected++;
            k[j * d] = to_bf16(g->max_value / sc);
            for (size_t c = 1; c < d; c++)
                k[j * d + c] = 0;
        } else {
            double u = uniform01(gen_draw(g->seed, 5, k0 / d + j, 0));
            double gap = g->gap_min + (g->gap_max - g->gap_min) * u;
            k[j * d] = to_bf16((g->max_value - gap) / sc);
        }
    }
}

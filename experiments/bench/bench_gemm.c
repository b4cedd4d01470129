/* bench_gemm -- the sm90 GEMM (BF16 in, FP32 out) against a native float
   GEMM, against the library's scalar path and on two threads; the fa2
   attention forward against a plain float attention */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "attention/attention.h"
#include "experiments/bench/bench.h"
#include "softfloat/mma.h"
#include "softfloat/softfloat.h"

static void *
xmalloc(size_t n)
{
    void *p = malloc(n);

    if (p == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

static float
bf16_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;

    memcpy(&f, &u, sizeof f);
    return f;
}

/* BF16 bits of a value uniform in (-R, R) with the top 8 bits of the
   significand kept (truncated; any BF16 will do). */
static uint16_t
rand_bf16(uint64_t *s, double r)
{
    double x = ((double)(bench_next(s) >> 11) * 0x1p-53 * 2 - 1) * r;
    float f = (float)x;
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

/*----------------------------------------------------------------------------
 * GEMM.
 *--------------------------------------------------------------------------*/
typedef struct
{
    size_t m, n, k;
    const uint16_t *a, *b; /* BF16 [m x k], [k x n] */
    const float *fa, *fb;  /* the same values as floats */
    uint32_t *d;
    float *fd;
    sf_mma_path path;
    int threads;
    const sf_mma_model *model;
} gemm_ctx;

/* The plain float GEMM, row-major, i-k-j order; the compiler's -O2 code
   (with -ffp-contract=off: separate multiply and add). */
__attribute__((noinline)) static void
native_gemm(size_t m, size_t n, size_t k, const float *restrict a,
            const float *restrict b, float *restrict d)
{
    for (size_t i = 0; i < m; i++) {
        float *row = d + i * n;
        for (size_t j = 0; j < n; j++)
            row[j] = 0;
        for (size_t p = 0; p < k; p++) {
            float x = a[i * k + p];
            const float *brow = b + p * n;
            for (size_t j = 0; j < n; j++)
                row[j] += x * brow[j];
        }
    }
}

static void
emu_gemm_rows(const gemm_ctx *c, size_t r0, size_t r1, sf_env *env)
{
    int used = sf_mma_gemm(c->model, r1 - r0, c->n, c->k, &sf_format_bf16,
                           c->a + r0 * c->k, &sf_format_bf16, c->b, NULL,
                           c->d + r0 * c->n, c->path, env);

    if (used < 0 || (c->path != SF_MMA_PATH_AUTO && used != (int)c->path)) {
        fprintf(stderr, "bench: the GEMM path %d is not available\n",
                (int)c->path);
        exit(1);
    }
}

static void
gemm_run(void *p, long reps)
{
    gemm_ctx *c = p;

    for (long r = 0; r < reps; r++) {
        if (c->fa != NULL) {
            native_gemm(c->m, c->n, c->k, c->fa, c->fb, c->fd);
        } else if (c->threads <= 1) {
            sf_env env = SF_ENV_IEEE;
            emu_gemm_rows(c, 0, c->m, &env);
        } else {
            /* rows split in contiguous halves, one environment each */
            int nt = c->threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
            for (int t = 0; t < nt; t++) {
                sf_env env = SF_ENV_IEEE;
                emu_gemm_rows(c, c->m * (size_t)t / (size_t)nt,
                              c->m * (size_t)(t + 1) / (size_t)nt, &env);
            }
        }
    }
}

void
bench_gemm(void)
{
    size_t dim = bench_cfg.quick ? 64 : 256, m = dim, n = dim, k = dim;
    uint16_t *a = xmalloc(m * k * 2), *b = xmalloc(k * n * 2);
    float *fa = xmalloc(m * k * 4), *fb = xmalloc(k * n * 4),
          *fd = xmalloc(m * n * 4);
    uint32_t *d = xmalloc(m * n * 4), *d2 = xmalloc(m * n * 4);
    const sf_mma_model *sm90 = sf_mma_preset_by_name("sm90");
    gemm_ctx vec, sca, nat, two;
    bench_side sv, ss, sn, s2, s1;
    double tv, ts, tn, t1, t2;
    double prods = (double)m * (double)n * (double)k;
    char label[80];
    uint64_t s = 11;
    bool have_vec;

    for (size_t i = 0; i < m * k; i++)
        fa[i] = bf16_float(a[i] = rand_bf16(&s, 2));
    for (size_t i = 0; i < k * n; i++)
        fb[i] = bf16_float(b[i] = rand_bf16(&s, 2));
    have_vec =
        sf_mma_gemm_avx512_available()
        && sf_mma_gemm_avx512_covers(sm90, &sf_format_bf16, &sf_format_bf16);

    vec = (gemm_ctx){m,    n,
                     k,    a,
                     b,    NULL,
                     NULL, d,
                     NULL, have_vec ? SF_MMA_PATH_AVX512 : SF_MMA_PATH_SCALAR,
                     1,    sm90};
    sca = vec;
    sca.path = SF_MMA_PATH_SCALAR;
    sca.d = d2;
    nat = vec;
    nat.fa = fa;
    nat.fb = fb;
    nat.fd = fd;
    two = vec;
    two.threads = 2;
    sv = (bench_side){gemm_run, &vec, prods, false};
    ss = (bench_side){gemm_run, &sca, prods, false};
    sn = (bench_side){gemm_run, &nat, prods, false};
    /* the thread row: wall clock on both sides */
    s2 = (bench_side){gemm_run, &two, prods, true};
    s1 = (bench_side){gemm_run, &vec, prods, true};

    bench_pair(&sv, &sn, &tv, &tn);
    snprintf(label, sizeof label, "sm90 gemm %zu^3 %s vs native float", dim,
             have_vec ? "avx512" : "scalar");
    bench_row(label, 1e-6 / tv, 1e-6 / tn, "Mprod/s", tv / tn, BENCH_NONE, 0);
    /* the target: >= 200 M products per second on one core */
    snprintf(label, sizeof label, "sm90 gemm %zu^3 %s (target 200 Mprod/s)",
             dim, have_vec ? "avx512" : "scalar");
    bench_row_alone(label, 1e-6 / tv, "Mprod/s", 1e-6 / tv / 200,
                    BENCH_AT_LEAST, 1);
    bench_pair(&sv, &ss, &tv, &ts);
    snprintf(label, sizeof label, "sm90 gemm %zu^3 %s vs scalar path", dim,
             have_vec ? "avx512" : "scalar");
    bench_row(label, 1e-6 / tv, 1e-6 / ts, "Mprod/s", tv / ts, BENCH_NONE, 0);
    if (memcmp(d, d2, m * n * 4) != 0) {
        fprintf(stderr, "bench: the GEMM paths disagree\n");
        exit(1);
    }
#ifdef _OPENMP
    /* speed-up of two threads over one: baseline time / emulated time */
    bench_pair(&s2, &s1, &t2, &t1);
    snprintf(label, sizeof label, "sm90 gemm %zu^3 2 threads vs 1 (speed-up)",
             dim);
    bench_row(label, 1e-6 / t2, 1e-6 / t1, "Mprod/s", t1 / t2, BENCH_AT_LEAST,
              1.8);
#else
    (void)s2;
    (void)s1;
    (void)t1;
    (void)t2;
    fprintf(stderr, "bench: built without OpenMP; no thread scaling row\n");
#endif
    free(a);
    free(b);
    free(fa);
    free(fb);
    free(fd);
    free(d);
    free(d2);
}

/*----------------------------------------------------------------------------
 * Attention forward.
 *--------------------------------------------------------------------------*/
typedef struct
{
    size_t n, d;
    const uint16_t *q, *k, *v;
    const float *fq, *fk, *fv;
    uint32_t *o, *lse;
    float *fo, *srow;
    const fa_config *cfg;
} attn_ctx;

/* softmax(Q K^T / sqrt(d)) V for one head, row by row, in float: scores,
   row max, expf, row sum, weighted sum of V, division by the sum. */
__attribute__((noinline)) static void
native_attn(size_t n, size_t d, const float *q, const float *k, const float *v,
            float *o, float *srow)
{
    float scale = 1.0f / sqrtf((float)d);

    for (size_t i = 0; i < n; i++) {
        const float *qi = q + i * d;
        float mx = -INFINITY, l = 0;
        float *oi = o + i * d;
        for (size_t j = 0; j < n; j++) {
            const float *kj = k + j * d;
            float acc = 0;
            for (size_t t = 0; t < d; t++)
                acc += qi[t] * kj[t];
            srow[j] = acc * scale;
            mx = srow[j] > mx ? srow[j] : mx;
        }
        for (size_t t = 0; t < d; t++)
            oi[t] = 0;
        for (size_t j = 0; j < n; j++) {
            float p = expf(srow[j] - mx);
            const float *vj = v + j * d;
            l += p;
            for (size_t t = 0; t < d; t++)
                oi[t] += p * vj[t];
        }
        for (size_t t = 0; t < d; t++)
            oi[t] /= l;
    }
}

static void
attn_run(void *p, long reps)
{
    attn_ctx *c = p;

    for (long r = 0; r < reps; r++) {
        if (c->fq != NULL) {
            native_attn(c->n, c->d, c->fq, c->fk, c->fv, c->fo, c->srow);
        } else {
            sf_env env = SF_ENV_IEEE;
            if (fa_forward(c->cfg, c->q, c->k, c->v, c->o, c->lse, NULL, &env)
                != 0) {
                fprintf(stderr, "bench: fa_forward failed\n");
                exit(1);
            }
        }
    }
}

void
bench_attn(void)
{
    size_t n = bench_cfg.quick ? 256 : 1024, d = 64, nd = n * d;
    uint16_t *q = xmalloc(nd * 2), *k = xmalloc(nd * 2), *v = xmalloc(nd * 2);
    float *fq = xmalloc(nd * 4), *fk = xmalloc(nd * 4), *fv = xmalloc(nd * 4),
          *fo = xmalloc(nd * 4), *srow = xmalloc(n * 4);
    uint32_t *o = xmalloc(nd * 4), *lse = xmalloc(n * 4);
    fa_config cfg = fa_config_default(FA_POLICY_FA2);
    attn_ctx emu, nat;
    bench_side se, sn;
    double te, tn;
    char label[80];
    uint64_t s = 13;
    const char *why;

    cfg.shape = (fa_shape){1, 1, n, n, d};
    why = fa_config_check(&cfg);
    if (why != NULL) {
        fprintf(stderr, "bench: attention config: %s\n", why);
        exit(1);
    }
    for (size_t i = 0; i < nd; i++) {
        fq[i] = bf16_float(q[i] = rand_bf16(&s, 2));
        fk[i] = bf16_float(k[i] = rand_bf16(&s, 2));
        fv[i] = bf16_float(v[i] = rand_bf16(&s, 2));
    }
    emu =
        (attn_ctx){n, d, q, k, v, NULL, NULL, NULL, o, lse, NULL, NULL, &cfg};
    nat = (attn_ctx){n, d, q, k, v, fq, fk, fv, NULL, NULL, fo, srow, &cfg};
    se = (bench_side){attn_run, &emu, 1, false};
    sn = (bench_side){attn_run, &nat, 1, false};
    bench_pair(&se, &sn, &te, &tn);
    snprintf(label, sizeof label, "attn fa2 forward N=%zu d=%zu vs float", n,
             d);
    bench_row(label, 1 / te, 1 / tn, "fwd/s", te / tn, BENCH_AT_MOST, 40);
    free(q);
    free(k);
    free(v);
    free(fq);
    free(fk);
    free(fv);
    free(fo);
    free(srow);
    free(o);
    free(lse);
}

/* bench_gemm -- the sm90 GEMM (BF16 in, FP32 out): each path (portable,
   AVX2, AVX-512, forced through env.isa) against a native float GEMM (a
   plain loop), the best path against OpenBLAS's sgemm on one thread (when
   configure found OpenBLAS), the portable path against one dot product
   per element, and two threads; the fa2 attention forward (env.isa from
   BF16EMU_ISA) against a plain float attention, and per (query, key)
   pair: the plain forward at d = 64 and 128, a decode step and a split-KV
   forward */
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
#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "analysis/ex2_table.h"
#include "analysis/lg2_table.h"
#include "attention/attention.h"
#include "experiments/bench/bench.h"
#include "softfloat/mma.h"
#include "softfloat/softfloat.h"

static float
bf16_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;

    memcpy(&f, &u, sizeof f);
    return f;
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
    bool blas;  /* the float GEMM by OpenBLAS's cblas_sgemm */
    int isa;    /* env.isa of the emulated GEMM */
    int expect; /* the path sf_mma_gemm must report */
    bool dots;  /* one sf_mma_dot per element instead of sf_mma_gemm */
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
    int used;

    env->isa = c->isa;
    if (c->dots) {
        for (size_t i = r0; i < r1; i++)
            for (size_t j = 0; j < c->n; j++)
                c->d[i * c->n + j] = (uint32_t)sf_mma_dot(
                    c->model, &sf_format_bf16, c->a + i * c->k, 1,
                    &sf_format_bf16, c->b + j, (ptrdiff_t)c->n, c->k, 0, env);
        return;
    }
    used = sf_mma_gemm(c->model, r1 - r0, c->n, c->k, &sf_format_bf16,
                       c->a + r0 * c->k, &sf_format_bf16, c->b, NULL,
                       c->d + r0 * c->n, SF_MMA_PATH_AUTO, env);
    if (used != c->expect) {
        fprintf(stderr, "bench: the GEMM took path %d, not %d\n", used,
                c->expect);
        exit(1);
    }
}

#ifdef HAVE_OPENBLAS
/* The host's best FP32 GEMM: OpenBLAS's sgemm, row-major D = A B (one
   thread: openblas_set_num_threads(1) in bench_gemm). */
static void
blas_gemm(size_t m, size_t n, size_t k, const float *a, const float *b,
          float *d)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                (int)k, 1.0f, a, (int)k, b, (int)n, 0.0f, d, (int)n);
}
#endif

static void
gemm_run(void *p, long reps)
{
    gemm_ctx *c = p;

    for (long r = 0; r < reps; r++) {
        if (c->blas) {
#ifdef HAVE_OPENBLAS
            blas_gemm(c->m, c->n, c->k, c->fa, c->fb, c->fd);
#endif
        } else if (c->fa != NULL) {
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

/* The emulated GEMM BEST (env.isa automatic) against OpenBLAS's sgemm on
   one thread over the same values NAT->fa, NAT->fb, timed alternately.
   The sgemm's result is first checked against the plain loop's: the two
   sum the same products in other orders, so each element agrees within
   k 2^-23 of the sum of its products' magnitudes. */
static void
gemm_vs_blas(const gemm_ctx *best, const gemm_ctx *nat, size_t dim,
             double prods)
{
#ifdef HAVE_OPENBLAS
    size_t m = nat->m, n = nat->n, k = nat->k;
    gemm_ctx x = *best, bl = *nat;
    bench_side sx = {gemm_run, &x, prods, false},
               sb = {gemm_run, &bl, prods, false};
    float *loop = bench_xmalloc(m * n * 4);
    double tx, tb;
    char label[80];

    openblas_set_num_threads(1);
    bl.blas = true;
    native_gemm(m, n, k, nat->fa, nat->fb, loop);
    gemm_run(&bl, 1);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double mag = 0;
            for (size_t p = 0; p < k; p++)
                mag += fabs((double)nat->fa[i * k + p])
                       * fabs((double)nat->fb[p * n + j]);
            if (fabs((double)bl.fd[i * n + j] - (double)loop[i * n + j])
                > (double)k * 0x1p-23 * mag) {
                fprintf(stderr,
                        "bench: OpenBLAS's sgemm disagrees with the "
                        "plain loop at (%zu, %zu)\n",
                        i, j);
                exit(1);
            }
        }
    free(loop);
    bench_pair(&sx, &sb, &tx, &tb);
    snprintf(label, sizeof label, "sm90 gemm %zu^3 %s vs OpenBLAS 1 thread",
             dim, sf_isa_name(sf_isa_resolve(SF_ISA_AUTO)));
    bench_row(label, 1e-6 / tx, 1e-6 / tb, "Mprod/s", tx / tb, BENCH_NONE, 0);
#else
    (void)best;
    (void)nat;
    (void)dim;
    (void)prods;
    fprintf(stderr, "bench: built without OpenBLAS; no OpenBLAS GEMM row\n");
#endif
}

/* The GEMM path sf_mma_gemm reports for env.isa == ISA. */
static int
path_of(sf_isa isa)
{
    switch (sf_isa_resolve((int)isa)) {
    case SF_ISA_AVX512:
        return SF_MMA_PATH_AVX512;
    case SF_ISA_AVX2:
        return SF_MMA_PATH_AVX2;
    default:
        return SF_MMA_PATH_SCALAR;
    }
}

/* The paths forced through env.isa, with their targets (M products per
   second on one core; 0: none). */
static const struct
{
    sf_isa isa;
    double target;
} gemm_paths[] = {
    {SF_ISA_SCALAR, 0}, {SF_ISA_AVX2, 300}, {SF_ISA_AVX512, 1500}};

#define GEMM_NPATHS (sizeof gemm_paths / sizeof gemm_paths[0])

/* Each path the CPU has, forced through env.isa, checked against the dot
   products' result D2, then timed against the native float GEMM NAT
   (alternately, so both see the same machine); a row per path, and one
   against its target. */
static void
gemm_paths_vs_native(const gemm_ctx *best, gemm_ctx *nat, uint32_t *d,
                     const uint32_t *d2, size_t dim, double prods)
{
    bench_side sn = {gemm_run, nat, prods, false};
    double tn;
    char label[80];

    for (size_t p = 0; p < GEMM_NPATHS; p++) {
        gemm_ctx x = *best;
        bench_side sx = {gemm_run, &x, prods, false};
        double tx;
        const char *name = sf_isa_name(gemm_paths[p].isa);
        if (!sf_isa_supported(gemm_paths[p].isa)) {
            fprintf(stderr, "bench: this CPU lacks %s; no %s GEMM row\n", name,
                    name);
            continue;
        }
        x.isa = (int)gemm_paths[p].isa;
        x.expect = path_of(gemm_paths[p].isa);
        x.d = d;
        gemm_run(&x, 1);
        if (memcmp(d, d2, best->m * best->n * 4) != 0) {
            fprintf(stderr,
                    "bench: the %s GEMM disagrees with the dot "
                    "products\n",
                    name);
            exit(1);
        }
        bench_pair(&sx, &sn, &tx, &tn);
        snprintf(label, sizeof label, "sm90 gemm %zu^3 %s vs native float",
                 dim, name);
        bench_row(label, 1e-6 / tx, 1e-6 / tn, "Mprod/s", tx / tn, BENCH_NONE,
                  0);
        if (gemm_paths[p].target > 0) {
            snprintf(label, sizeof label,
                     "sm90 gemm %zu^3 %s (target %g Mprod/s)", dim, name,
                     gemm_paths[p].target);
            bench_row_alone(label, 1e-6 / tx, "Mprod/s",
                            1e-6 / tx / gemm_paths[p].target, BENCH_AT_LEAST,
                            1);
        }
    }
}

/* Data with one +-0, or one subnormal, in each 64 elements of A and of B
   (drawn from the generator S), against the clean data of BEST in the
   same round, per path; the special data's result goes to D2. */
static void
gemm_special_data(const gemm_ctx *best, uint32_t *d2, uint64_t *s,
                  size_t dim, double prods)
{
    static const char *const what[2] = {"zero 1/64", "subn 1/64"};
    size_t m = best->m, n = best->n, k = best->k;
    uint16_t *da = bench_xmalloc(m * k * 2), *db = bench_xmalloc(k * n * 2);
    char label[80];

    for (int w = 0; w < 2; w++) {
        memcpy(da, best->a, m * k * 2);
        memcpy(db, best->b, k * n * 2);
        for (size_t i = 0; i + 64 <= m * k; i += 64) {
            uint64_t r = bench_next(s);
            uint16_t v = (uint16_t)(((r >> 8) & 1) << 15
                                    | (w == 0 ? 0 : 1 + (r >> 16) % 0x7F));
            da[i + r % 64] = v;
            db[i + (r >> 32) % 64] = v;
        }
        for (size_t p = 0; p < GEMM_NPATHS; p++) {
            gemm_ctx x = *best, y;
            bench_side sx = {gemm_run, &x, prods, false},
                       sy = {gemm_run, &y, prods, false};
            double tx, ty;
            if (!sf_isa_supported(gemm_paths[p].isa))
                continue;
            x.isa = (int)gemm_paths[p].isa;
            x.expect = path_of(gemm_paths[p].isa);
            y = x;
            y.a = da;
            y.b = db;
            y.d = d2;
            bench_pair(&sy, &sx, &ty, &tx);
            snprintf(label, sizeof label, "sm90 gemm %zu^3 %s %s vs clean",
                     dim, sf_isa_name(gemm_paths[p].isa), what[w]);
            bench_row(label, 1e-6 / ty, 1e-6 / tx, "Mprod/s", ty / tx,
                      BENCH_NONE, 0);
        }
    }
    free(da);
    free(db);
}

/* The portable path against one dot product per element DOTS (the former
   scalar path): speed-up = dots time / scalar time. */
static void
gemm_scalar_vs_dots(const gemm_ctx *best, gemm_ctx *dots, size_t dim,
                    double prods)
{
    gemm_ctx x = *best;
    bench_side sx = {gemm_run, &x, prods, false},
               sd = {gemm_run, dots, prods, false};
    double t_scalar = 0, t_dots = 0;
    char label[80];

    x.isa = SF_ISA_SCALAR;
    x.expect = SF_MMA_PATH_SCALAR;
    bench_pair(&sx, &sd, &t_scalar, &t_dots);
    snprintf(label, sizeof label, "sm90 gemm %zu^3 scalar vs dots (speed-up)",
             dim);
    bench_row(label, 1e-6 / t_scalar, 1e-6 / t_dots, "Mprod/s",
              t_dots / t_scalar, BENCH_AT_LEAST, 3);
}

/* Speed-up of two threads TWO over one BEST: baseline time / emulated
   time (with OpenMP only). */
static void
gemm_threads(gemm_ctx *best, gemm_ctx *two, size_t dim, double prods)
{
#ifdef _OPENMP
    bench_side s2 = {gemm_run, two, prods, true},
               s1 = {gemm_run, best, prods, true};
    double t1, t2;
    char label[80];

    bench_pair(&s2, &s1, &t2, &t1);
    snprintf(label, sizeof label,
             "sm90 gemm %zu^3 %s 2 threads vs 1 (speed-up)", dim,
             sf_isa_name(sf_isa_resolve(SF_ISA_AUTO)));
    bench_row(label, 1e-6 / t2, 1e-6 / t1, "Mprod/s", t1 / t2, BENCH_AT_LEAST,
              1.8);
#else
    (void)best;
    (void)two;
    (void)dim;
    (void)prods;
    fprintf(stderr, "bench: built without OpenMP; no thread scaling row\n");
#endif
}

void
bench_gemm(void)
{
    size_t dim = bench_cfg.quick ? 64 : 256, m = dim, n = dim, k = dim;
    uint16_t *a = bench_xmalloc(m * k * 2), *b = bench_xmalloc(k * n * 2);
    float *fa = bench_xmalloc(m * k * 4), *fb = bench_xmalloc(k * n * 4),
          *fd = bench_xmalloc(m * n * 4);
    uint32_t *d = bench_xmalloc(m * n * 4), *d2 = bench_xmalloc(m * n * 4);
    gemm_ctx best, nat, dots, two;
    double prods = (double)m * (double)n * (double)k;
    uint64_t s = 11;

    for (size_t i = 0; i < m * k; i++)
        fa[i] = bf16_float(a[i] = bench_rand_bf16(&s, 2));
    for (size_t i = 0; i < k * n; i++)
        fb[i] = bf16_float(b[i] = bench_rand_bf16(&s, 2));

    /* the emulated GEMM (env.isa automatic), the same values as floats,
       one dot product per element, and two threads */
    memset(&best, 0, sizeof best);
    best.m = m;
    best.n = n;
    best.k = k;
    best.a = a;
    best.b = b;
    best.d = d;
    best.isa = SF_ISA_AUTO;
    best.expect = path_of(SF_ISA_AUTO);
    best.threads = 1;
    best.model = sf_mma_preset_by_name("sm90");
    nat = best;
    nat.fa = fa;
    nat.fb = fb;
    nat.fd = fd;
    dots = best;
    dots.dots = true;
    dots.d = d2;
    two = best;
    two.threads = 2;

    /* the reference: one sf_mma_dot per element */
    gemm_run(&dots, 1);
    gemm_paths_vs_native(&best, &nat, d, d2, dim, prods);
    /* the best path against the host's best FP32 GEMM */
    gemm_vs_blas(&best, &nat, dim, prods);
    gemm_special_data(&best, d2, &s, dim, prods);
    gemm_scalar_vs_dots(&best, &dots, dim, prods);
    gemm_threads(&best, &two, dim, prods);
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
            env.isa = bench_cfg.isa;
            if (fa_forward(c->cfg, c->q, c->k, c->v, c->o, c->lse, NULL, &env)
                != 0) {
                fprintf(stderr, "bench: fa_forward failed\n");
                exit(1);
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * Decode and split-KV: the emulated forward alone, per (query, key) pair
 * of a head, against the plain forward's time per pair, the two measured
 * side by side (bench_pair_ratio: their rounds alternate, so a change in
 * the machine's load falls on both).
 *--------------------------------------------------------------------------*/
typedef struct
{
    fa_config cfg;
    uint16_t *q, *k, *v;
    uint32_t *o, *lse;
} keys_ctx;

static void
keys_run(void *p, long reps)
{
    keys_ctx *c = p;

    for (long r = 0; r < reps; r++) {
        sf_env env = SF_ENV_IEEE;
        env.isa = bench_cfg.isa;
        if (fa_forward(&c->cfg, c->q, c->k, c->v, c->o, c->lse, NULL, &env)
            != 0) {
            fprintf(stderr, "bench: fa_forward failed\n");
            exit(1);
        }
    }
}

/* The fa2 forward of shape SH with SPLITS splits (0: none) and log model
   LOG (the lg2 table, as the command line runs fa2) on BF16 inputs
   uniform in (-2, 2), ready to run. */
static void
keys_open(keys_ctx *c, fa_shape sh, size_t splits, const fa_log_model *log)
{
    size_t nq = sh.batch * sh.heads * sh.nq * sh.d,
           nk = sh.batch * sh.heads * sh.nk * sh.d;
    uint64_t s = 17;
    const char *why;

    c->cfg = fa_config_default(FA_POLICY_FA2);
    c->cfg.shape = sh;
    c->cfg.splits = splits;
    c->cfg.log = log;
    why = fa_config_check(&c->cfg);
    if (why != NULL) {
        fprintf(stderr, "bench: attention config: %s\n", why);
        exit(1);
    }
    c->q = bench_xmalloc(nq * 2);
    c->k = bench_xmalloc(nk * 2);
    c->v = bench_xmalloc(nk * 2);
    c->o = bench_xmalloc(nq * 4);
    c->lse = bench_xmalloc(sh.batch * sh.heads * sh.nq * 4);
    for (size_t i = 0; i < nq; i++)
        c->q[i] = bench_rand_bf16(&s, 2);
    for (size_t i = 0; i < nk; i++) {
        c->k[i] = bench_rand_bf16(&s, 2);
        c->v[i] = bench_rand_bf16(&s, 2);
    }
}

static void
keys_close(keys_ctx *c)
{
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->o);
    free(c->lse);
}

/* Rounds of the per-key pairs: their forwards differ little in cost,
   so the ratio needs more rounds than the others to settle. */
#define KEYS_ROUNDS 15

/* Seconds per (query, key) pair of a head of the forward of shape A
   (splits SA) and of shape B (splits SB), log model LOG, measured side
   by side, and the median of the rounds' ratios A / B. */
static void
keys_pair(fa_shape a, size_t sa, fa_shape b, size_t sb,
          const fa_log_model *log, double *ta, double *tb, double *ratio)
{
    keys_ctx ca, cb;
    bench_side xa, xb;

    keys_open(&ca, a, sa, log);
    keys_open(&cb, b, sb, log);
    xa = (bench_side){keys_run, &ca,
                      (double)(a.batch * a.heads * a.nq * a.nk), false};
    xb = (bench_side){keys_run, &cb,
                      (double)(b.batch * b.heads * b.nq * b.nk), false};
    bench_pair_ratio(&xa, &xb,
                     bench_cfg.rounds > KEYS_ROUNDS ? bench_cfg.rounds
                                                    : KEYS_ROUNDS,
                     ta, tb, ratio);
    keys_close(&ca);
    keys_close(&cb);
}

/* Rows "NAME <path> vs fa2" (T seconds per pair against the plain
   forward's PLAIN, RATIO the median of the rounds' ratios; target: as
   fast per key) and "PLAIN_NAME <path> ns/key" (the plain forward it
   was measured beside). */
static void
keys_rows(const char *name, double t, const char *plain_name, double plain,
          double ratio)
{
    const char *isa = sf_isa_name(sf_isa_resolve(bench_cfg.isa));
    char label[96];

    snprintf(label, sizeof label, "%s %s ns/key", plain_name, isa);
    bench_row_alone(label, 1e-6 / plain, "Mkey/s", 1e9 * plain, BENCH_NONE,
                    0);
    snprintf(label, sizeof label, "%s %s vs fa2", name, isa);
    bench_row(label, 1e-6 / t, 1e-6 / plain, "Mkey/s", ratio, BENCH_AT_MOST,
              1);
}

/* The decode step and the split case of the GPU's split-KV kernel, each
   against the plain forward (one head, N x N, no split) of its head
   dimension; fa2's log from LOG. */
static void
bench_attn_keys(const fa_log_model *log)
{
    size_t n = bench_cfg.quick ? 256 : 1024;
    fa_shape dec = {1, 32, 1, 16384, 128}, spl = {1, 1, 64, 1024, 64};
    char plain[64];
    double t, tp, ratio;

    if (bench_cfg.quick)
        dec = (fa_shape){1, 2, 1, 4096, 128};
    keys_pair(dec, 0, (fa_shape){1, 1, n, n, 128}, 0, log, &t, &tp, &ratio);
    snprintf(plain, sizeof plain, "attn fa2 forward N=%zu d=128", n);
    keys_rows(bench_cfg.quick ? "attn decode Nq=1 Nk=4096 d=128 H=2"
                              : "attn decode Nq=1 Nk=16384 d=128 H=32",
              t, plain, tp, ratio);
    keys_pair(spl, 4, (fa_shape){1, 1, n, n, 64}, 0, log, &t, &tp, &ratio);
    snprintf(plain, sizeof plain, "attn fa2 forward N=%zu d=64", n);
    keys_rows("attn split 4 Nq=64 Nk=1024 d=64", t, plain, tp, ratio);
}

/* The command line's exp for fa2, the H200's ex2.approx as a table
   (2 x 2^23 entries, 64 MB, one look-up per score at a random place),
   against the correctly rounded exp of the other rows (CFG, EMU and SE:
   fa2's plain forward, ready to run). */
static void
bench_attn_ex2(const fa_config *cfg, const attn_ctx *emu,
               const bench_side *se)
{
    ax_ex2_table ex2;
    fa_exp2_table rule;
    fa_exp_model model;
    fa_config c = *cfg;
    attn_ctx e = *emu;
    bench_side s;
    double t, tc;
    char err[1024], label[96];
    const char *path = ax_ex2_table_default_path(getenv("BF16EMU_EX2_TABLE"));

    if (ax_ex2_table_load(path, &ex2, err, sizeof err) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        exit(2);
    }
    ax_ex2_model(&ex2, false, &rule, &model);
    c.exp = &model;
    e.cfg = &c;
    s = (bench_side){attn_run, &e, 1, false};
    bench_pair(&s, se, &t, &tc);
    snprintf(label, sizeof label, "attn fa2 forward N=%zu d=%zu %s ex2 vs cr",
             cfg->shape.nq, cfg->shape.d,
             sf_isa_name(sf_isa_resolve(bench_cfg.isa)));
    bench_row(label, 1 / t, 1 / tc, "fwd/s", t / tc, BENCH_NONE, 0);
    ax_ex2_table_free(&ex2);
}

void
bench_attn(void)
{
    size_t n = bench_cfg.quick ? 256 : 1024, d = 64, nd = n * d;
    uint16_t *q = bench_xmalloc(nd * 2), *k = bench_xmalloc(nd * 2),
             *v = bench_xmalloc(nd * 2);
    float *fq = bench_xmalloc(nd * 4), *fk = bench_xmalloc(nd * 4),
          *fv = bench_xmalloc(nd * 4), *fo = bench_xmalloc(nd * 4),
          *srow = bench_xmalloc(n * 4);
    uint32_t *o = bench_xmalloc(nd * 4), *lse = bench_xmalloc(n * 4);
    fa_config cfg = fa_config_default(FA_POLICY_FA2);
    attn_ctx emu, nat;
    bench_side se, sn;
    double te, tn;
    char label[80];
    uint64_t s = 13;
    const char *why;
    ax_lg2_table lg2;
    fa_lg2_table lg2_rule;
    fa_log_model lg2_model;
    char err[1024];
    const char *path = ax_lg2_table_default_path(getenv("BF16EMU_LG2_TABLE"));

    cfg.shape = (fa_shape){1, 1, n, n, d};
    /* fa2's LSE: CUDA's __logf through the H200's lg2.approx table */
    if (ax_lg2_table_load(path, &lg2, err, sizeof err) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        exit(2);
    }
    ax_lg2_model(&lg2, false, &lg2_rule, &lg2_model);
    cfg.log = &lg2_model;
    why = fa_config_check(&cfg);
    if (why != NULL) {
        fprintf(stderr, "bench: attention config: %s\n", why);
        exit(1);
    }
    for (size_t i = 0; i < nd; i++) {
        fq[i] = bf16_float(q[i] = bench_rand_bf16(&s, 2));
        fk[i] = bf16_float(k[i] = bench_rand_bf16(&s, 2));
        fv[i] = bf16_float(v[i] = bench_rand_bf16(&s, 2));
    }
    emu =
        (attn_ctx){n, d, q, k, v, NULL, NULL, NULL, o, lse, NULL, NULL, &cfg};
    nat = (attn_ctx){n, d, q, k, v, fq, fk, fv, NULL, NULL, fo, srow, &cfg};
    se = (bench_side){attn_run, &emu, 1, false};
    sn = (bench_side){attn_run, &nat, 1, false};
    bench_pair(&se, &sn, &te, &tn);
    snprintf(label, sizeof label, "attn fa2 forward N=%zu d=%zu %s vs float",
             n, d, sf_isa_name(sf_isa_resolve(bench_cfg.isa)));
    /* the target: at most 5 times the float attention's time */
    bench_row(label, 1 / te, 1 / tn, "fwd/s", te / tn, BENCH_AT_MOST, 5);
    /* PyTorch's other SDPA backends' descriptions against fa2 on the same
       inputs (target: at most twice its time); an lg2 log taken as cr, as
       the bench's fa2 does (one per row) */
    for (int pi = 0; pi < 3; pi++) {
        static const char *const names[] = {"cudnn", "efficient", "math"};
        fa_kernel kb = *fa_kernel_by_name(names[pi]);
        fa_config c2;
        attn_ctx e2;
        bench_side s2;
        double t2, tf;
        if (kb.log == FA_KLOG_LG2)
            kb.log = FA_KLOG_CR;
        c2 = fa_config_kernel_default(&kb);
        c2.shape = cfg.shape;
        why = fa_config_check(&c2);
        if (why != NULL) {
            fprintf(stderr, "bench: attention config %s: %s\n", names[pi],
                    why);
            exit(1);
        }
        e2 = (attn_ctx){n,   d,    q,    k,   v,    NULL, NULL,
                        NULL, o,   lse, NULL, NULL, &c2};
        s2 = (bench_side){attn_run, &e2, 1, false};
        bench_pair(&s2, &se, &t2, &tf);
        snprintf(label, sizeof label, "attn %s forward N=%zu d=%zu vs fa2",
                 names[pi], n, d);
        bench_row(label, 1 / t2, 1 / tf, "fwd/s", t2 / tf, BENCH_AT_MOST, 2);
    }
    bench_attn_ex2(&cfg, &emu, &se);
    bench_attn_keys(&lg2_model);
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
    ax_lg2_table_free(&lg2);
}

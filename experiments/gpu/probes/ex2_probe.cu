/* ex2_probe.cu -- measure ex2.approx.f32 and lg2.approx.f32 on every FP32
 * input and score table models of them.
 *
 * Tables (one set per instruction variant, .f32 and .ftz.f32), read from
 * the hardware on a grid of 2^-23 (2^-24 below 1 for lg2):
 *   ex2: N[i] = ex2(-1 + i 2^-23) and P[i] = ex2(i 2^-23), 0 <= i < 2^23;
 *   lg2: L[i] = lg2(1 + i 2^-23), 0 <= i < 2^23, and
 *        L2[j] = lg2(0.75 + j 2^-24), 0 <= j < 2^22.
 *
 * ex2 model: q = x truncated toward zero to a multiple of 2^-23,
 * n = floor(q), f = q - n; for q <= 0 the result is N[f 2^23] 2^(n+1),
 * for q > 0 P[f 2^23] 2^n, the scaling exact while the result is normal.
 * Results below 2^-126 (non-ftz form) are scored under five rules:
 *   0 one rounding to nearest even of the exact scaled value,
 *   1 truncation, 2 flush to +0,
 *   3 the square of the model at x/2 (x < -126), rounded once,
 *   4 the model at x + 24 times 2^-24, rounded once (x < -126).
 * lg2 model: x = m 2^e (subnormal x normalised), m in [1, 2);
 *   rule 0: RN(e + L[(m - 1) 2^23]);
 *   rule 1: m >= 1.5 reduced to m/2 in [0.75, 1): RN(e + 1 + L2[...]);
 *   rules 2 and 3: as 0 and 1 with the addition rounded toward zero.
 *
 * Samples: 2^15 inputs for ex2 (three in four x <= 0, many in [-150,
 * -120]) and 2^15 for lg2 (x > 0, all binades), drawn by a SplitMix64
 * counter generator, with the outputs of both variants, for CPU-only
 * tests of a table model.
 *
 * Every FP32 bit pattern is evaluated; mismatches are counted per input
 * sign and exponent field (bin = top 9 bits) and the first few of each bin
 * are kept.  The distance of every result from the correctly rounded value
 * (computed in double on the GPU and rounded once: exact enough for a
 * histogram) is histogrammed over x in [-2, 0] and over all inputs.
 *
 * Usage: ex2_probe OUTDIR
 * Writes OUTDIR/ex2_summary.json (device facts, table hashes, per rule the
 * mismatches per bin and examples [x, hardware, model], histograms) and
 * OUTDIR/ex2_tables.bin: the eight tables in the order N, P, L, L2 for
 * .f32 then .ftz.f32 -- each 2^23 uint32 (L2: 2^22) stored as the
 * difference from the previous entry (the first from 0), little-endian, so
 * that the file compresses well; FNV-1a 64 hashes of the raw tables are in
 * the JSON.  OUTDIR/ex2_samples.bin: 2^15 records (x, ex2, ex2.ftz), then
 * 2^15 records (x, lg2, lg2.ftz), uint32 little-endian.
 *
 * Build: nvcc -O2 -std=c++17 -arch=sm_90 -o ex2_probe ex2_probe.cu */

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TBITS 23
#define TSIZE (1u << TBITS)
#define NEXAMPLE 8
#define NBIN 512
#define NRULE 5

#define PROBE_NAME "ex2_probe"
#include "probe_cuda.h"

enum
{
    V_EX2 = 0,
    V_EX2_FTZ = 1,
    V_LG2 = 2,
    V_LG2_FTZ = 3,
    V_N = 4
};
static const char *const vname[V_N] = {"ex2.approx.f32",
                                       "ex2.approx.ftz.f32",
                                       "lg2.approx.f32",
                                       "lg2.approx.ftz.f32"};
/* rules scored per variant */
static const int nrules[V_N] = {5, 1, 4, 4};

__device__ __forceinline__ float
hw(int v, float x)
{
    float y;
    switch (v) {
    case V_EX2:
        asm volatile("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
        break;
    case V_EX2_FTZ:
        asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
        break;
    case V_LG2:
        asm volatile("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
        break;
    default:
        asm volatile("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
        break;
    }
    return y;
}

/* Table t of variant v: ex2 t = 0 (N), 1 (P); lg2 t = 0 (L), 1 (L2). */
__global__ void
k_table(int v, int t, uint32_t *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= TSIZE)
        return;
    float x;
    if (v == V_EX2 || v == V_EX2_FTZ)
        x = t == 0 ? -1.0f + (float)i * 0x1p-23f : (float)i * 0x1p-23f;
    else
        x = t == 0 ? 1.0f + (float)i * 0x1p-23f
                   : (i < TSIZE / 2 ? 0.75f + (float)i * 0x1p-24f : 1.0f);
    out[i] = __float_as_uint(hw(v, x));
}

/* v * 2^k for table bits TB (a positive normal value), k integer; results
   below 2^-126: RNE (rule 0, 3, 4), truncation (1) or +0 (2). */
__device__ uint32_t
scale_pow2(uint32_t tb, int k, int rule)
{
    int e = (int)((tb >> 23) & 0xFF);
    uint32_t m = tb & 0x7FFFFF;
    if (e == 0 && m == 0)
        return tb;
    int ne = e + k;
    if (ne >= 255)
        return 0x7F800000u;
    if (ne >= 1)
        return ((uint32_t)ne << 23) | m;
    if (rule == 2)
        return 0;
    int sh = 1 - ne; /* shift of the 24-bit significand */
    uint64_t sig = (uint64_t)(0x800000u | m);
    if (sh > 25)
        return 0;
    uint64_t kept = sig >> sh;
    uint64_t rem = sig & ((1ull << sh) - 1);
    uint64_t half = 1ull << (sh - 1);
    if (rule != 1 && (rem > half || (rem == half && (kept & 1))))
        kept++;
    return (uint32_t)kept; /* a carry into bit 23 is the smallest normal */
}

/* The exact model of ex2(x) for finite x, scaled with RULE (0-2). */
__device__ uint32_t
model_ex2(const uint32_t *tn, const uint32_t *tp, uint32_t xb, int rule)
{
    uint32_t ex = (xb >> 23) & 0xFF;
    bool neg = xb >> 31;
    /* q 2^23 = trunc(x 2^23) as an integer, x = sig 2^(sh - 23) */
    int sh = (int)ex - 127;
    uint64_t sig = ex ? (0x800000u | (xb & 0x7FFFFF)) : (xb & 0x7FFFFF);
    if (ex == 0)
        sh = -126;
    int64_t qi;
    if (sh >= 0) {
        if (sh > 30)
            return neg ? 0 : 0x7F800000u;
        qi = (int64_t)(sig << sh);
    } else {
        qi = sh <= -40 ? 0 : (int64_t)(sig >> -sh);
    }
    if (neg)
        qi = -qi;
    int64_t n = qi >> TBITS; /* floor */
    uint32_t idx = (uint32_t)(qi - (n << TBITS));
    if (qi <= 0) {
        if (n + 1 < -300)
            return 0;
        return scale_pow2(tn[idx], (int)(n + 1), rule);
    }
    if (n > 300)
        return 0x7F800000u;
    return scale_pow2(tp[idx], (int)n, rule);
}

/* RN of a positive normal FP32 value squared (subnormal results rounded
   once to nearest even). */
__device__ uint32_t
square_rn(uint32_t yb)
{
    float y = __uint_as_float(yb);
    return __float_as_uint(__fmul_rn(y, y));
}

__device__ uint32_t
predict_ex2(int v, const uint32_t *tn, const uint32_t *tp, uint32_t xb,
            int rule)
{
    uint32_t ex = (xb >> 23) & 0xFF;
    if (ex == 0xFF)
        return (xb & 0x7FFFFF) ? 0x7FFFFFFFu
                               : ((xb >> 31) ? 0 : 0x7F800000u);
    if (v == V_EX2_FTZ) {
        if (ex == 0)
            return 0x3F800000u; /* a subnormal x reads as zero */
        return model_ex2(tn, tp, xb, 2);
    }
    float x = __uint_as_float(xb);
    if (rule == 3 && x < -126.0f) {
        uint32_t h = model_ex2(tn, tp, __float_as_uint(x * 0.5f), 0);
        return square_rn(h);
    }
    if (rule == 4 && x < -126.0f) {
        uint32_t h = model_ex2(tn, tp, __float_as_uint(x + 24.0f), 0);
        return scale_pow2(h, -24, 0);
    }
    return model_ex2(tn, tp, xb, rule > 2 ? 0 : rule);
}

__device__ uint32_t
predict_lg2(int v, const uint32_t *tl, const uint32_t *tl2, uint32_t xb,
            int rule)
{
    uint32_t ex = (xb >> 23) & 0xFF;
    uint32_t m = xb & 0x7FFFFF;
    bool ftz = v == V_LG2_FTZ;
    if ((xb & 0x7FFFFFFF) == 0 || (ex == 0 && ftz))
        return 0xFF800000u;
    if (xb >> 31)
        return 0x7FFFFFFFu;
    if (ex == 0xFF)
        return m ? 0x7FFFFFFFu : 0x7F800000u;
    int e;
    if (ex == 0) {
        int lz = __clz(m) - 8; /* leading zeros within the 23-bit field */
        m = (m << (lz + 1)) & 0x7FFFFF;
        e = -126 - (lz + 1);
    } else {
        e = (int)ex - 127;
    }
    float t;
    if ((rule == 1 || rule == 3) && m >= 0x400000u) {
        /* m/2 in [0.75, 1): index (m/2 - 0.75) 2^24 = m - 2^22 */
        t = __uint_as_float(tl2[m - 0x400000u]);
        e += 1;
    } else {
        t = __uint_as_float(tl[m]);
    }
    if (rule >= 2)
        return __float_as_uint(__fadd_rz((float)e, t));
    return __float_as_uint(__fadd_rn((float)e, t));
}

/* Distance in ulps on the monotone integer line (NaN: huge). */
__device__ int64_t
ulpdist(uint32_t a, uint32_t b)
{
    bool na = (a & 0x7FFFFFFF) > 0x7F800000;
    bool nb = (b & 0x7FFFFFFF) > 0x7F800000;
    if (na || nb)
        return na && nb ? 0 : (1ll << 40);
    int64_t ia = (a >> 31) ? -(int64_t)(a & 0x7FFFFFFF) : (int64_t)a;
    int64_t ib = (b >> 31) ? -(int64_t)(b & 0x7FFFFFFF) : (int64_t)b;
    return ia - ib;
}

#define NH 9 /* histogram: <=-4, -3, -2, -1, 0, 1, 2, 3, >=4 (+ NaN) */

struct stats
{
    unsigned long long mism[V_N][NRULE][NBIN];
    uint32_t ex_x[V_N][NRULE][NBIN][NEXAMPLE];
    uint32_t ex_hw[V_N][NRULE][NBIN][NEXAMPLE];
    uint32_t ex_pred[V_N][NRULE][NBIN][NEXAMPLE];
    unsigned long long hist_all[V_N][NH + 1];
    unsigned long long hist_m2[V_N][NH + 1];
    unsigned long long nonmono[V_N];
};

__device__ uint32_t
cr_ref(int v, uint32_t xb)
{
    double x = (double)__uint_as_float(xb);
    double y = (v == V_EX2 || v == V_EX2_FTZ) ? exp2(x) : log2(x);
    float f = __double2float_rn(y);
    if ((v == V_EX2_FTZ || v == V_LG2_FTZ) &&
        (__float_as_uint(f) & 0x7F800000) == 0)
        f = 0.0f * f;
    return __float_as_uint(f);
}

/* One thread per input; per-block counters in shared memory, added to the
   global ones once per block.  Example slots are claimed through a global
   counter so that only the first NEXAMPLE of each bin are kept. */
__global__ void
k_scan(int v, int nr, const uint32_t *t0, const uint32_t *t1, uint64_t base,
       uint32_t count, stats *st, unsigned long long *claims)
{
    __shared__ unsigned long long s_mism[NRULE][NBIN];
    __shared__ unsigned long long s_hall[NH + 1], s_hm2[NH + 1], s_nm;
    for (int j = threadIdx.x; j < NRULE * NBIN; j += blockDim.x)
        s_mism[j / NBIN][j % NBIN] = 0;
    if (threadIdx.x <= NH) {
        s_hall[threadIdx.x] = 0;
        s_hm2[threadIdx.x] = 0;
    }
    if (threadIdx.x == 0)
        s_nm = 0;
    __syncthreads();
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) {
        uint32_t xb = (uint32_t)(base + i);
        bool isex2 = v == V_EX2 || v == V_EX2_FTZ;
        float xin = __uint_as_float(xb);
        uint32_t y = __float_as_uint(hw(v, xin));
        uint32_t ex = (xb >> 23) & 0xFF;
        uint32_t bin = xb >> 23;
        bool xnan = ex == 0xFF && (xb & 0x7FFFFF);
        for (int r = 0; r < nr; r++) {
            uint32_t p = isex2 ? predict_ex2(v, t0, t1, xb, r)
                               : predict_lg2(v, t0, t1, xb, r);
            bool ok = xnan ? ((y & 0x7FFFFFFF) > 0x7F800000) : (p == y);
            if (!ok) {
                atomicAdd(&s_mism[r][bin], 1ull);
                unsigned long long *cl =
                    &claims[(v * NRULE + r) * NBIN + bin];
                if (*cl < NEXAMPLE) {
                    unsigned long long k = atomicAdd(cl, 1ull);
                    if (k < NEXAMPLE) {
                        st->ex_x[v][r][bin][k] = xb;
                        st->ex_hw[v][r][bin][k] = y;
                        st->ex_pred[v][r][bin][k] = p;
                    }
                }
            }
        }
        uint32_t c = cr_ref(v, xb);
        int64_t d = ulpdist(y, c);
        int h = d >= (1ll << 40) ? NH
                                 : (d <= -4 ? 0 : d >= 4 ? 8 : (int)d + 4);
        atomicAdd(&s_hall[h], 1ull);
        if (isex2 && (xb >> 31) && xin >= -2.0f)
            atomicAdd(&s_hm2[h], 1ull);
        if (isex2 && (xb >> 31) && ex != 0xFF && (xb & 0x7FFFFFFF) != 0) {
            /* monotone: the next input toward zero gives no less */
            uint32_t y2 = __float_as_uint(hw(v, __uint_as_float(xb - 1)));
            if (__uint_as_float(y2) < __uint_as_float(y))
                atomicAdd(&s_nm, 1ull);
        }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < NRULE * NBIN; j += blockDim.x)
        if (s_mism[j / NBIN][j % NBIN])
            atomicAdd(&st->mism[v][j / NBIN][j % NBIN],
                      s_mism[j / NBIN][j % NBIN]);
    if (threadIdx.x <= NH) {
        if (s_hall[threadIdx.x])
            atomicAdd(&st->hist_all[v][threadIdx.x], s_hall[threadIdx.x]);
        if (s_hm2[threadIdx.x])
            atomicAdd(&st->hist_m2[v][threadIdx.x], s_hm2[threadIdx.x]);
    }
    if (threadIdx.x == 0 && s_nm)
        atomicAdd(&st->nonmono[v], s_nm);
}

__device__ uint64_t
splitmix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define NSAMPLE (1u << 15)

/* Sample i of set SET (0: ex2, 1: lg2): input bits. */
__device__ uint32_t
sample_x(int set, uint32_t i)
{
    uint64_t r = splitmix(((uint64_t)set << 32) | i);
    uint32_t lo = (uint32_t)r, hi = (uint32_t)(r >> 32);
    if (set == 0) {
        switch (hi & 3) {
        case 0: /* any bits */
            return lo;
        case 1: /* [-150, -120]: subnormal and tiny results */
            return __float_as_uint(-120.0f -
                                   30.0f * (float)(lo >> 8) * 0x1p-24f);
        default: /* x <= 0, every binade */
            return lo | 0x80000000u;
        }
    }
    return lo & 0x7FFFFFFFu;
}

__global__ void
k_samples(uint32_t *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 2 * NSAMPLE)
        return;
    int set = i >= NSAMPLE;
    uint32_t x = sample_x(set, i % NSAMPLE);
    float xf = __uint_as_float(x);
    out[3 * i] = x;
    out[3 * i + 1] = __float_as_uint(hw(set ? V_LG2 : V_EX2, xf));
    out[3 * i + 2] = __float_as_uint(hw(set ? V_LG2_FTZ : V_EX2_FTZ, xf));
}

static uint64_t
fnv1a(const uint32_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n * 4; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static size_t
table_len(int v, int t)
{
    return (v >= V_LG2 && t == 1) ? TSIZE / 2 : TSIZE;
}

static const char *const tname[V_N][2] = {
    {"N", "P"}, {"N", "P"}, {"L", "L2"}, {"L", "L2"}};

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ex2_probe OUTDIR\n");
        return 2;
    }
    char path[4096];
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));

    uint32_t *dtab[V_N][2];
    uint32_t *htab[V_N][2];
    for (int v = 0; v < V_N; v++)
        for (int t = 0; t < 2; t++) {
            CK(cudaMalloc(&dtab[v][t], TSIZE * 4));
            k_table<<<TSIZE / 256, 256>>>(v, t, dtab[v][t]);
            CK(cudaGetLastError());
            htab[v][t] = (uint32_t *)malloc(TSIZE * 4);
            CK(cudaMemcpy(htab[v][t], dtab[v][t], TSIZE * 4,
                          cudaMemcpyDeviceToHost));
        }
    uint32_t *dsamp, *hsamp = (uint32_t *)malloc(6 * NSAMPLE * 4);
    CK(cudaMalloc(&dsamp, 6 * NSAMPLE * 4));
    k_samples<<<2 * NSAMPLE / 256, 256>>>(dsamp);
    CK(cudaGetLastError());
    CK(cudaMemcpy(hsamp, dsamp, 6 * NSAMPLE * 4, cudaMemcpyDeviceToHost));
    snprintf(path, sizeof path, "%s/ex2_samples.bin", argv[1]);
    FILE *fs = fopen(path, "wb");
    if (!fs || fwrite(hsamp, 4, 6 * NSAMPLE, fs) != 6 * NSAMPLE) {
        perror(path);
        return 1;
    }
    fclose(fs);
    stats *dst;
    CK(cudaMalloc(&dst, sizeof(stats)));
    CK(cudaMemset(dst, 0, sizeof(stats)));
    size_t nclaims = sizeof(unsigned long long) * V_N * NRULE * NBIN;
    unsigned long long *claims;
    CK(cudaMalloc(&claims, nclaims));
    CK(cudaMemset(claims, 0, nclaims));
    time_t t0 = time(NULL);
    const uint32_t chunk = 1u << 28;
    for (int v = 0; v < V_N; v++)
        for (uint64_t base = 0; base < (1ull << 32); base += chunk) {
            k_scan<<<chunk / 256, 256>>>(v, nrules[v], dtab[v][0],
                                         dtab[v][1], base, chunk, dst,
                                         claims);
            CK(cudaGetLastError());
        }
    CK(cudaDeviceSynchronize());
    time_t t1 = time(NULL);
    stats *st = (stats *)malloc(sizeof(stats));
    CK(cudaMemcpy(st, dst, sizeof(stats), cudaMemcpyDeviceToHost));

    snprintf(path, sizeof path, "%s/ex2_tables.bin", argv[1]);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    for (int v = 0; v < V_N; v++)
        for (int t = 0; t < 2; t++) {
            uint32_t prev = 0;
            for (size_t i = 0; i < table_len(v, t); i++) {
                uint32_t d = htab[v][t][i] - prev;
                prev = htab[v][t][i];
                fwrite(&d, 4, 1, f);
            }
        }
    fclose(f);

    snprintf(path, sizeof path, "%s/ex2_summary.json", argv[1]);
    f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t0));
    fprintf(f,
            "{\n  \"gpu\": \"%s\", \"cc\": \"%d.%d\", \"driver\": %d, "
            "\"runtime\": %d, \"date\": \"%s\", \"seconds\": %ld,\n"
            "  \"bins\": \"top 9 bits of x (sign and exponent field)\",\n"
            "  \"examples\": \"[x, hardware, model]\",\n"
            "  \"hist_labels\": [\"<=-4\",\"-3\",\"-2\",\"-1\",\"0\",\"1\","
            "\"2\",\"3\",\">=4\",\"nan\"],\n  \"variants\": [\n",
            prop.name, prop.major, prop.minor, drv, rt, date,
            (long)(t1 - t0));
    for (int v = 0; v < V_N; v++) {
        fprintf(f, "    {\"instr\": \"%s\", \"tables\": {", vname[v]);
        for (int t = 0; t < 2; t++)
            fprintf(f, "%s\"%s\": \"%016llx\"", t ? ", " : "", tname[v][t],
                    (unsigned long long)fnv1a(htab[v][t], table_len(v, t)));
        fprintf(f, "},\n     \"hist_vs_cr_all\": [");
        for (int h = 0; h <= NH; h++)
            fprintf(f, "%s%llu", h ? "," : "", st->hist_all[v][h]);
        fprintf(f, "],\n     \"hist_vs_cr_m2_0\": [");
        for (int h = 0; h <= NH; h++)
            fprintf(f, "%s%llu", h ? "," : "", st->hist_m2[v][h]);
        fprintf(f, "],\n     \"non_monotone\": %llu,\n     \"rules\": [\n",
                st->nonmono[v]);
        for (int r = 0; r < nrules[v]; r++) {
            unsigned long long tot = 0;
            for (int e = 0; e < NBIN; e++)
                tot += st->mism[v][r][e];
            fprintf(f,
                    "      {\"rule\": %d, \"mismatches\": %llu, "
                    "\"by_bin\": {",
                    r, tot);
            int first = 1;
            for (int e = 0; e < NBIN; e++)
                if (st->mism[v][r][e]) {
                    fprintf(f, "%s\"%d\": %llu", first ? "" : ", ", e,
                            st->mism[v][r][e]);
                    first = 0;
                }
            fprintf(f, "},\n       \"examples\": [");
            first = 1;
            for (int e = 0; e < NBIN; e++) {
                unsigned long long k = st->mism[v][r][e];
                for (unsigned j = 0; j < NEXAMPLE && j < k; j++) {
                    fprintf(f, "%s[\"%08x\",\"%08x\",\"%08x\"]",
                            first ? "" : ",", st->ex_x[v][r][e][j],
                            st->ex_hw[v][r][e][j], st->ex_pred[v][r][e][j]);
                    first = 0;
                }
            }
            fprintf(f, "]}%s\n", r + 1 < nrules[v] ? "," : "");
        }
        fprintf(f, "     ]}%s\n", v + 1 < V_N ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    printf("ex2_probe: %s, %ld s\n", prop.name, (long)(t1 - t0));
    for (int v = 0; v < V_N; v++) {
        printf("%-20s", vname[v]);
        for (int r = 0; r < nrules[v]; r++) {
            unsigned long long tot = 0, neg = 0;
            for (int e = 0; e < NBIN; e++) {
                tot += st->mism[v][r][e];
                if (e >= 256)
                    neg += st->mism[v][r][e];
            }
            printf(" rule%d %llu (x<0: %llu)", r, tot, neg);
        }
        printf("\n");
    }
    return 0;
}

/* fa_dump -- a FlashAttention-2 style forward kernel that dumps every stage
 *
 * The kernel computes the forward pass of attention with BF16 Q, K, V in
 * the order of operations of the `fa2` policy (doc/attention.md), which is
 * the order of FlashAttention-2's forward kernel as PyTorch builds it:
 *
 *   - one CTA per (head, block of 128 query rows), eight warps of 16 rows
 *     (FA2 runs four warps of two 16-row tiles each: the arithmetic of a
 *     row does not depend on which warp holds it);
 *     KV blocks of 128 keys (d = 64) or 64 keys (d = 128), visited from
 *     n_block_max - 1 down to 0 (causal: the kernel's n_block_max);
 *   - S = Q K^T unscaled, mma.sync.m16n8k16 (BF16 in, FP32 accumulator),
 *     head dimension in ascending 16-slices from C = 0; masked entries
 *     (causal, bottom-right aligned, and keys past Nk) set to -Inf;
 *   - block max over the quad (xor 2, then 1); the fix's shifted max m~
 *     when --fix beta; m_new = max(m_old, m~) after the first block;
 *   - rescale: c = ex2(RN(RN(m_old - m_cur) * sl2)), each thread's row-sum
 *     partial and every accumulator element times c;
 *   - p = ex2(RN(RN(s * sl2) - RN(m_new * sl2))) with ex2.approx.f32 and
 *     sl2 = float(scale * log2 e) computed in double;
 *   - per-thread row-sum partials over the thread's columns 8n + 2t,
 *     8n + 2t + 1 in ascending order, from the FP32 p;
 *   - P~ = cvt.rn.bf16x2.f32 of p, then O~ += P~ V through mma.sync, keys
 *     ascending in 16-slices, chained through the rescaled accumulator;
 *   - l = (s0 + s2) + (s1 + s3), inv = 1 / l (IEEE), O = RN16(O~ * inv);
 *   - LSE = fma(m, scale, log l), with log l the double log rounded to FP32
 *     (the policy's correctly rounded log, `lse`) and with __logf as the
 *     FA2 kernel has it (`lse_fast`).
 *
 * Every rounding is written with an explicit intrinsic (__fmul_rn, ...),
 * so nvcc contracts nothing.  Two variants test what FA2's own build may
 * do differently: --rowsum-ffma replaces the row-sum rescale and the
 * first addition of the next block by one FFMA (a contraction nvcc may
 * make), and --recip approx|full computes 1/l with rcp.approx.ftz.f32 or
 * div.full.f32 instead of the IEEE division (what fast-math builds do).
 *
 * Dumped (safetensors, FP32 tensors as F32 bits, BF16 as BF16):
 *   q, k, v   BF16 [B, H, N, d]      the inputs
 *   s         F32  [B, H, Nq, Nk]    raw scores as the kernel holds them
 *                                    (-Inf where masked or never computed)
 *   p         BF16 [B, H, Nq, Nk]    P~ fed to the P~V product (0 where
 *                                    masked or never computed)
 *   m, l      F32  [B, H, Nq, Tc]    running max and quad-reduced row sum
 *                                    after each KV block, in visiting order
 *                                    (the last values repeated after the
 *                                    last visited block)
 *   acc       F32  [B, H, Nq, Tc, d] the accumulator O~ after each KV
 *                                    block, in visiting order (likewise)
 *   o         BF16 [B, H, Nq, d]
 *   lse       F32  [B, H, Nq]        natural log, correctly rounded log
 *   lse_fast  F32  [B, H, Nq]        natural log, __logf
 * and a manifest (JSON, in the file's metadata and beside it as FILE.json):
 * GPU, driver, CUDA versions, kernel, shapes, tiles, seed, generator, mask,
 * fix, date, and a plausibility check of O against a double-precision
 * attention on the host.
 *
 * Build (sm_90a; mma.sync also runs on sm_80 and later):
 *   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
 *       -Xcompiler -ffp-contract=off -fmad=false -o fa_dump \
 *       experiments/gpu/fa_dump.cu experiments/gpu/st_io.c
 */
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "st_io.h"

#define BR 128   /* query rows per CTA (kBlockM) */
#define NWARPS 8 /* warps per CTA, 16 rows each */

static int
ck(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "fa_dump: %s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

/*----------------------------------------------------------------------------
 * Device side.
 *--------------------------------------------------------------------------*/
struct fa_params
{
    const uint16_t *q, *k, *v; /* [BH, N, d] BF16 bits */
    int nq, nk, tc;
    int causal;
    float scale, sl2;
    int fix;         /* 0 none, 1 beta */
    float beta, tol; /* tol in the units of the unscaled scores */
    int rowsum_ffma;
    int recip;  /* 0 IEEE 1/l, 1 rcp.approx.ftz.f32, 2 div.full.f32 */
    int stages; /* write s, p, m, l, acc */
    float *s;
    uint16_t *p;
    float *m, *l, *acc;
    uint16_t *o;
    float *lse, *lse_fast;
};

static __device__ __forceinline__ float
ex2_approx(float x)
{
    float y;
    asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* D += A B, m16n8k16, BF16 inputs, FP32 accumulator. */
static __device__ __forceinline__ void
mma_bf16(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
}

/* cvt.rn.bf16x2.f32: LO in the low half (the first source goes high). */
static __device__ __forceinline__ uint32_t
cvt_bf16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

static __device__ __forceinline__ float
recip(float x, int mode)
{
    float y;
    if (mode == 1) {
        asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
        return y;
    }
    if (mode == 2) {
        asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(1.f), "f"(x));
        return y;
    }
    return __fdiv_rn(1.f, x);
}

static __device__ __forceinline__ uint32_t
ld_pair(const uint16_t *base, size_t idx)
{
    return *reinterpret_cast<const uint32_t *>(base + idx);
}

static __device__ __forceinline__ float
quad_sum(float x)
{
    /* Allreduce<4>: xor 2 then xor 1, so every thread holds
       (s0 + s2) + (s1 + s3) */
    x = __fadd_rn(x, __shfl_xor_sync(0xffffffffu, x, 2));
    return __fadd_rn(x, __shfl_xor_sync(0xffffffffu, x, 1));
}

template <int D, int BC>
__global__ void
__launch_bounds__(NWARPS * 32) fa2_fwd_dump(fa_params P)
{
    constexpr int NT = BC / 8; /* 8-column tiles of S */
    constexpr int KD = D / 16; /* k-slices of Q K^T */
    constexpr int NO = D / 8;  /* 8-column tiles of O */
    const float NEG_INF = -INFINITY;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int mb = blockIdx.x, bh = blockIdx.y;
    const int nq = P.nq, nk = P.nk, tc = P.tc;
    const int row[2] = {mb * BR + warp * 16 + g, mb * BR + warp * 16 + g + 8};
    const uint16_t *Q = P.q + (size_t)bh * nq * D;
    const uint16_t *K = P.k + (size_t)bh * nk * D;
    const uint16_t *V = P.v + (size_t)bh * nk * D;
    int nvb = tc;

    if (P.causal) {
        /* n_block_max = ceil_div((m_block + 1) kBlockM + Nk - Nq, kBlockN),
           the kernel's truncating integer division */
        long long num = (long long)(mb + 1) * BR + nk - nq;
        long long n = (num + BC - 1) / BC;
        nvb = n <= 0 ? 0 : (n < tc ? (int)n : tc);
    }

    uint32_t qf[KD][4];
    for (int s = 0; s < KD; s++)
        for (int half = 0; half < 2; half++)
            for (int hh = 0; hh < 2; hh++) {
                int r = row[hh], col = 16 * s + 2 * t + 8 * half;
                qf[s][hh + 2 * half] =
                    r < nq ? ld_pair(Q, (size_t)r * D + col) : 0u;
            }

    float m_run[2] = {NEG_INF, NEG_INF}, part[2] = {0.f, 0.f};
    float acc[NO][4];
    for (int j = 0; j < NO; j++)
        for (int e = 0; e < 4; e++)
            acc[j][e] = 0.f;

    for (int vi = 0; vi < nvb; vi++) {
        const int nb = nvb - 1 - vi, c0 = nb * BC;
        const bool first = vi == 0;
        float sc[NT][4];
        uint32_t pb[NT][2];

        /* S = Q K^T, unscaled */
        for (int j = 0; j < NT; j++) {
            int key = c0 + 8 * j + g;
            for (int e = 0; e < 4; e++)
                sc[j][e] = 0.f;
            for (int s = 0; s < KD; s++) {
                uint32_t b[2];
                b[0] = key < nk ? ld_pair(K, (size_t)key * D + 16 * s + 2 * t)
                                : 0u;
                b[1] = key < nk
                           ? ld_pair(K, (size_t)key * D + 16 * s + 2 * t + 8)
                           : 0u;
                mma_bf16(sc[j], qf[s], b);
            }
        }
        /* the mask, on the raw scores */
        for (int j = 0; j < NT; j++)
            for (int e = 0; e < 4; e++) {
                int r = row[e >> 1], col = c0 + 8 * j + 2 * t + (e & 1);
                if (col >= nk || (P.causal && col > r + nk - nq))
                    sc[j][e] = NEG_INF;
                if (P.stages && r < nq && col < nk)
                    P.s[((size_t)bh * nq + r) * nk + col] = sc[j][e];
            }

        for (int hh = 0; hh < 2; hh++) {
            const int r = row[hh];
            float bmax = sc[0][2 * hh], mt, mnew, ms, scl = 1.f;
            bool fresh = first, fuse = false;

            for (int j = 0; j < NT; j++)
                for (int e = 2 * hh; e < 2 * hh + 2; e++)
                    bmax = fmaxf(bmax, sc[j][e]);
            bmax = fmaxf(bmax, __shfl_xor_sync(0xffffffffu, bmax, 2));
            bmax = fmaxf(bmax, __shfl_xor_sync(0xffffffffu, bmax, 1));
            mt = bmax;
            if (P.fix && bmax != NEG_INF && !isnan(bmax)) {
                /* beta: more than one score >= RN(r - tol) is a repeated
                   maximum; then m~ = RN(beta r) (r > 0), 0 (r < 0), r (0) */
                float thr = __fsub_rn(bmax, P.tol);
                int cnt = 0;
                for (int j = 0; j < NT; j++)
                    for (int e = 2 * hh; e < 2 * hh + 2; e++)
                        cnt += sc[j][e] >= thr;
                cnt += __shfl_xor_sync(0xffffffffu, cnt, 2);
                cnt += __shfl_xor_sync(0xffffffffu, cnt, 1);
                if (cnt > 1)
                    mt = bmax > 0.f   ? __fmul_rn(bmax, P.beta)
                         : bmax < 0.f ? 0.f
                                      : bmax;
            }
            mnew = first ? mt : fmaxf(m_run[hh], mt);
            if (!first) {
                /* Check_inf: a row still at -Inf rescales against 0 */
                float cur = mnew == NEG_INF ? 0.f : mnew;
                scl = ex2_approx(__fmul_rn(__fsub_rn(m_run[hh], cur), P.sl2));
                if (P.rowsum_ffma)
                    fuse = true;
                else
                    part[hh] = __fmul_rn(part[hh], scl);
                for (int j = 0; j < NO; j++)
                    for (int e = 2 * hh; e < 2 * hh + 2; e++)
                        acc[j][e] = __fmul_rn(acc[j][e], scl);
            }
            m_run[hh] = mnew;
            ms = mnew == NEG_INF ? 0.f : __fmul_rn(mnew, P.sl2);
            for (int j = 0; j < NT; j++) {
                float pv[2];
                for (int e2 = 0; e2 < 2; e2++) {
                    float x = sc[j][2 * hh + e2];
                    pv[e2] = ex2_approx(__fsub_rn(__fmul_rn(x, P.sl2), ms));
                    if (fresh) {
                        part[hh] = pv[e2];
                        fresh = false;
                    } else if (fuse) {
                        part[hh] = __fmaf_rn(part[hh], scl, pv[e2]);
                        fuse = false;
                    } else {
                        part[hh] = __fadd_rn(part[hh], pv[e2]);
                    }
                }
                pb[j][hh] = cvt_bf16x2(pv[0], pv[1]);
                if (P.stages && r < nq)
                    for (int e2 = 0; e2 < 2; e2++) {
                        int col = c0 + 8 * j + 2 * t + e2;
                        if (col < nk)
                            P.p[((size_t)bh * nq + r) * nk + col] =
                                (uint16_t)(pb[j][hh] >> (16 * e2));
                    }
            }
            {
                float lq = quad_sum(part[hh]);
                if (P.stages && r < nq && t == 0) {
                    size_t x = ((size_t)bh * nq + r) * tc + vi;
                    P.m[x] = mnew;
                    P.l[x] = lq;
                }
            }
        }

        /* O~ += P~ V: keys ascending in 16-slices */
        for (int s2 = 0; s2 < BC / 16; s2++) {
            uint32_t a[4] = {pb[2 * s2][0], pb[2 * s2][1], pb[2 * s2 + 1][0],
                             pb[2 * s2 + 1][1]};
            int k0 = c0 + 16 * s2 + 2 * t;
            for (int jd = 0; jd < NO; jd++) {
                int col = 8 * jd + g;
                uint32_t b[2], v4[4];
                for (int u = 0; u < 4; u++) {
                    int key = k0 + (u & 1) + 8 * (u >> 1);
                    v4[u] = key < nk ? V[(size_t)key * D + col] : 0u;
                }
                b[0] = v4[0] | (v4[1] << 16);
                b[1] = v4[2] | (v4[3] << 16);
                mma_bf16(acc[jd], a, b);
            }
        }
        if (P.stages)
            for (int jd = 0; jd < NO; jd++)
                for (int e = 0; e < 4; e++) {
                    int r = row[e >> 1], col = 8 * jd + 2 * t + (e & 1);
                    if (r < nq)
                        P.acc[(((size_t)bh * nq + r) * tc + vi) * D + col] =
                            acc[jd][e];
                }
    }

    /* the slots after the last visited block repeat the last values */
    for (int hh = 0; hh < 2; hh++) {
        const int r = row[hh];
        float lq = quad_sum(part[hh]);
        if (!P.stages || r >= nq)
            continue;
        for (int vi = nvb; vi < tc; vi++) {
            size_t x = ((size_t)bh * nq + r) * tc + vi;
            if (t == 0) {
                P.m[x] = m_run[hh];
                P.l[x] = lq;
            }
            for (int jd = 0; jd < NO; jd++)
                for (int e2 = 0; e2 < 2; e2++)
                    P.acc[x * D + 8 * jd + 2 * t + e2] = acc[jd][2 * hh + e2];
        }
    }

    /* epilogue: l, 1/l, O and LSE */
    for (int hh = 0; hh < 2; hh++) {
        const int r = row[hh];
        float lq = quad_sum(part[hh]);
        bool zn = lq == 0.f || isnan(lq);
        float inv = zn ? 1.f : recip(lq, P.recip);
        if (r >= nq)
            continue;
        for (int jd = 0; jd < NO; jd++) {
            uint32_t ob = 0;
            if (nvb > 0)
                ob = cvt_bf16x2(__fmul_rn(acc[jd][2 * hh], inv),
                                __fmul_rn(acc[jd][2 * hh + 1], inv));
            *reinterpret_cast<uint32_t *>(P.o + ((size_t)bh * nq + r) * D
                                          + 8 * jd + 2 * t) = ob;
        }
        if (t == 0) {
            size_t x = (size_t)bh * nq + r;
            if (nvb == 0 || zn) {
                P.lse[x] = INFINITY;
                P.lse_fast[x] = INFINITY;
            } else {
                float lg = (float)log((double)lq);
                P.lse[x] = __fmaf_rn(m_run[hh], P.scale, lg);
                P.lse_fast[x] = __fmaf_rn(m_run[hh], P.scale, __logf(lq));
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * Host side: inputs.
 *--------------------------------------------------------------------------*/
static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A standard normal draw (Box-Muller on two 53-bit uniforms). */
static double
normal(uint64_t *s)
{
    double u1 = ((double)(splitmix(s) >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)(splitmix(s) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static uint32_t
f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float
bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* FP32 (no NaN) to BF16, round to nearest even. */
static uint16_t
to_bf16(float f)
{
    uint32_t b = f32_bits(f);
    return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

static float
bf16_f(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

struct opts
{
    const char *out = NULL, *inputs = NULL, *compare = NULL;
    const char *driver = "unknown";
    int batch = 1, heads = 4, nq = 128, nk = -1, d = 64;
    unsigned long long seed = 1;
    const char *gen = "normal";
    int repeat = 4;
    double v_mean = 0.0, v_std = 1.0;
    int causal = 0, fix = 0, rowsum_ffma = 0, recip = 0, stages = 1;
    int check = 1;
};

/* Per head: Q [nq, d], K, V [nk, d] as in dump_sdpa.py's generators:
   normal N(0, 1); repeated-max and sink: a direction u of norm 4,
   queries 4u + N(0, 0.1^2), keys N(0, 1/16) except REPEAT keys (one for
   sink) equal to u, spread over the sequence; V ~ N(v_mean, v_std^2). */
static void
generate(const opts &o, std::vector<uint16_t> &q, std::vector<uint16_t> &k,
         std::vector<uint16_t> &v)
{
    size_t nh = (size_t)o.batch * o.heads, d = (size_t)o.d;
    bool special = strcmp(o.gen, "normal") != 0;
    int nrep = strcmp(o.gen, "sink") == 0 ? 1 : o.repeat;

    q.resize(nh * o.nq * d);
    k.resize(nh * o.nk * d);
    v.resize(nh * o.nk * d);
    for (size_t h = 0; h < nh; h++) {
        uint64_t st = o.seed * 0x100000001B3ull + h * 0x9E3779B97F4A7C15ull;
        uint16_t *qh = &q[h * o.nq * d], *kh = &k[h * o.nk * d];
        uint16_t *vh = &v[h * o.nk * d];
        std::vector<double> u(d);
        for (size_t i = 0; i < (size_t)o.nq * d; i++)
            qh[i] = to_bf16((float)normal(&st));
        for (size_t i = 0; i < (size_t)o.nk * d; i++)
            kh[i] = to_bf16((float)normal(&st));
        for (size_t i = 0; i < (size_t)o.nk * d; i++)
            vh[i] = to_bf16((float)(normal(&st) * o.v_std + o.v_mean));
        if (!special)
            continue;
        {
            double nrm = 0;
            for (size_t c = 0; c < d; c++) {
                u[c] = normal(&st);
                nrm += u[c] * u[c];
            }
            nrm = sqrt(nrm);
            for (size_t c = 0; c < d; c++)
                u[c] = bf16_f(to_bf16((float)(u[c] / nrm * 4.0)));
        }
        for (size_t i = 0; i < (size_t)o.nq; i++)
            for (size_t c = 0; c < d; c++)
                qh[i * d + c] =
                    to_bf16((float)(4.0 * u[c] + 0.1 * normal(&st)));
        for (size_t i = 0; i < (size_t)o.nk * d; i++)
            kh[i] = to_bf16(bf16_f(kh[i]) * 0.25f);
        {
            int step = o.nk / nrep > 1 ? o.nk / nrep : 1;
            for (int j = 0; j < nrep; j++) {
                size_t key = (size_t)(j * step + step / 2) % (size_t)o.nk;
                for (size_t c = 0; c < d; c++)
                    kh[key * d + c] = to_bf16((float)u[c]);
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * Host side: a small safetensors reader (q, k, v of another dump, and o for
 * --compare).
 *--------------------------------------------------------------------------*/
struct st_read
{
    std::vector<char> buf;
    std::string hdr;
};

static bool
st_load(const char *path, st_read &f)
{
    FILE *fp = fopen(path, "rb");
    uint64_t n = 0;
    unsigned char lb[8];
    long size;

    if (fp == NULL)
        return false;
    if (fread(lb, 1, 8, fp) != 8) {
        fclose(fp);
        return false;
    }
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | lb[i];
    fseek(fp, 0, SEEK_END);
    size = ftell(fp);
    if (size < 8 || n > (uint64_t)size - 8) {
        fclose(fp);
        return false;
    }
    f.buf.resize((size_t)size);
    fseek(fp, 0, SEEK_SET);
    if (fread(f.buf.data(), 1, (size_t)size, fp) != (size_t)size) {
        fclose(fp);
        return false;
    }
    fclose(fp);
    f.hdr.assign(f.buf.data() + 8, (size_t)n);
    return true;
}

/* Tensor NAME: dtype, shape, data pointer and byte count; false if absent
   or malformed.  Keys are matched unescaped, so a name quoted inside the
   metadata (escaped) is not taken for a tensor. */
static bool
st_find(const st_read &f, const char *name, std::string &dtype,
        std::vector<uint64_t> &shape, const char **data, size_t *bytes)
{
    std::string key = std::string("\"") + name + "\":";
    size_t pos = 0, p, e;
    unsigned long long b0, b1;

    for (;;) {
        pos = f.hdr.find(key, pos);
        if (pos == std::string::npos)
            return false;
        if (pos == 0 || f.hdr[pos - 1] != '\\') {
            size_t a = pos + key.size();
            while (a < f.hdr.size() && f.hdr[a] == ' ')
                a++;
            if (a < f.hdr.size() && f.hdr[a] == '{')
                break;
        }
        pos++;
    }
    e = f.hdr.find('}', pos);
    p = f.hdr.find("\"dtype\"", pos);
    if (e == std::string::npos || p == std::string::npos || p > e)
        return false;
    p = f.hdr.find('"', f.hdr.find(':', p) + 1);
    dtype = f.hdr.substr(p + 1, f.hdr.find('"', p + 1) - p - 1);
    p = f.hdr.find("\"shape\"", pos);
    if (p == std::string::npos || p > e)
        return false;
    p = f.hdr.find('[', p);
    shape.clear();
    for (p++; f.hdr[p] != ']';) {
        char *end;
        shape.push_back(strtoull(f.hdr.c_str() + p, &end, 10));
        p = (size_t)(end - f.hdr.c_str());
        while (f.hdr[p] == ',' || f.hdr[p] == ' ')
            p++;
    }
    p = f.hdr.find("\"data_offsets\"", pos);
    if (p == std::string::npos || p > e)
        return false;
    p = f.hdr.find('[', p);
    if (sscanf(f.hdr.c_str() + p, "[%llu , %llu]", &b0, &b1) != 2
        && sscanf(f.hdr.c_str() + p, "[%llu,%llu]", &b0, &b1) != 2)
        return false;
    if (b1 < b0 || 8 + f.hdr.size() + b1 > f.buf.size())
        return false;
    *data = f.buf.data() + 8 + f.hdr.size() + b0;
    *bytes = (size_t)(b1 - b0);
    return true;
}

static bool
read_inputs(opts &o, std::vector<uint16_t> &q, std::vector<uint16_t> &k,
            std::vector<uint16_t> &v)
{
    st_read f;
    const char *names[3] = {"q", "k", "v"};
    std::vector<uint16_t> *dst[3] = {&q, &k, &v};

    if (!st_load(o.inputs, f)) {
        fprintf(stderr, "fa_dump: %s: cannot read a safetensors file\n",
                o.inputs);
        return false;
    }
    for (int i = 0; i < 3; i++) {
        std::string dt;
        std::vector<uint64_t> sh;
        const char *data;
        size_t bytes;
        if (!st_find(f, names[i], dt, sh, &data, &bytes) || dt != "BF16"
            || sh.size() != 4) {
            fprintf(stderr,
                    "fa_dump: %s: %s: expected a BF16 tensor [B, H, N, d]\n",
                    o.inputs, names[i]);
            return false;
        }
        if (i == 0) {
            o.batch = (int)sh[0];
            o.heads = (int)sh[1];
            o.nq = (int)sh[2];
            o.d = (int)sh[3];
        } else if (i == 1) {
            o.nk = (int)sh[2];
        }
        dst[i]->resize(bytes / 2);
        memcpy(dst[i]->data(), data, bytes);
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Host side: checks, output.
 *--------------------------------------------------------------------------*/
/* ||O - O_ref|| / ||O_ref|| against a double-precision softmax attention. */
static double
reference_error(const opts &o, const std::vector<uint16_t> &q,
                const std::vector<uint16_t> &k, const std::vector<uint16_t> &v,
                const std::vector<uint16_t> &out, double scale)
{
    size_t nh = (size_t)o.batch * o.heads, d = (size_t)o.d;
    double num = 0, den = 0;
    std::vector<double> sc(o.nk), orow(d);

    for (size_t h = 0; h < nh; h++)
        for (int i = 0; i < o.nq; i++) {
            double mx = -INFINITY, sum = 0;
            int vis = o.causal ? i + o.nk - o.nq + 1 : o.nk;
            if (vis > o.nk)
                vis = o.nk;
            if (vis <= 0)
                continue;
            for (int j = 0; j < vis; j++) {
                double a = 0;
                for (size_t c = 0; c < d; c++)
                    a += (double)bf16_f(q[(h * o.nq + i) * d + c])
                         * bf16_f(k[(h * o.nk + j) * d + c]);
                sc[j] = a * scale;
                mx = sc[j] > mx ? sc[j] : mx;
            }
            for (size_t c = 0; c < d; c++)
                orow[c] = 0;
            for (int j = 0; j < vis; j++) {
                double w = exp(sc[j] - mx);
                sum += w;
                for (size_t c = 0; c < d; c++)
                    orow[c] += w * bf16_f(v[(h * o.nk + j) * d + c]);
            }
            for (size_t c = 0; c < d; c++) {
                double ref = orow[c] / sum;
                double x = bf16_f(out[(h * o.nq + i) * d + c]);
                num += (x - ref) * (x - ref);
                den += ref * ref;
            }
        }
    return den > 0 ? sqrt(num / den) : 0.0;
}

/* O against the tensor o of another dump: equal count, first differences;
   and, when that dump has an F32 lse, how many of its rows equal lse and
   lse_fast. */
static int
compare_o(const opts &o, const std::vector<uint16_t> &out,
          const std::vector<float> &lse, const std::vector<float> &lse_fast,
          char *js, size_t jn)
{
    st_read f;
    std::string dt;
    std::vector<uint64_t> sh;
    const char *data;
    size_t bytes, eq = 0, n = out.size(), shown = 0;
    const uint16_t *x;
    int len;

    if (!st_load(o.compare, f) || !st_find(f, "o", dt, sh, &data, &bytes)
        || dt != "BF16" || bytes != n * 2) {
        fprintf(stderr, "fa_dump: %s: no BF16 tensor o of this shape\n",
                o.compare);
        return -1;
    }
    x = reinterpret_cast<const uint16_t *>(data);
    len = snprintf(js, jn, "{\"file\": \"%s\", \"differ\": [", o.compare);
    for (size_t i = 0; i < n; i++) {
        if (x[i] == out[i]) {
            eq++;
            continue;
        }
        if (shown < 16 && len > 0 && (size_t)len < jn) {
            size_t c = i % o.d, r = i / o.d;
            printf("  o differs at [%zu, %zu, %zu]: this 0x%04X, other "
                   "0x%04X\n",
                   r / o.nq, r % o.nq, c, out[i], x[i]);
            len += snprintf(js + len, jn - (size_t)len,
                            "%s{\"row\": %zu, \"col\": %zu, \"this\": "
                            "\"0x%04X\", \"other\": \"0x%04X\"}",
                            shown ? ", " : "", r, c, out[i], x[i]);
            shown++;
        }
    }
    if (len > 0 && (size_t)len < jn)
        len += snprintf(js + len, jn - (size_t)len,
                        "], \"equal\": %zu, \"of\": %zu", eq, n);
    printf("compare o with %s: %zu of %zu bit-equal\n", o.compare, eq, n);
    if (st_find(f, "lse", dt, sh, &data, &bytes) && dt == "F32"
        && bytes == lse.size() * 4) {
        size_t e1 = 0, e2 = 0;
        for (size_t i = 0; i < lse.size(); i++) {
            uint32_t b;
            memcpy(&b, data + 4 * i, 4);
            e1 += b == f32_bits(lse[i]);
            e2 += b == f32_bits(lse_fast[i]);
        }
        printf("compare lse: %zu (lse), %zu (lse_fast) of %zu bit-equal\n", e1,
               e2, lse.size());
        if (len > 0 && (size_t)len < jn)
            len += snprintf(js + len, jn - (size_t)len,
                            ", \"lse_equal\": %zu, \"lse_fast_equal\": %zu, "
                            "\"lse_of\": %zu",
                            e1, e2, lse.size());
    }
    if (len > 0 && (size_t)len < jn)
        snprintf(js + len, jn - (size_t)len, "}");
    return 0;
}

static void
usage(void)
{
    fputs("usage: fa_dump --out FILE.safetensors [--batch B] [--heads H] "
          "[--nq N] [--nk N]\n"
          "               [--d 64|128] [--seed S] "
          "[--gen normal|repeated-max|sink] [--repeat K]\n"
          "               [--v-mean X] [--v-std X] [--causal] "
          "[--fix none|beta] [--rowsum-ffma]\n"
          "               [--recip rn|approx|full] [--no-check]\n"
          "               [--inputs DUMP.safetensors] [--compare "
          "DUMP.safetensors]\n"
          "               [--no-stages] [--driver TEXT]\n",
          stderr);
    exit(2);
}

int
main(int argc, char **argv)
{
    opts o;
    std::vector<uint16_t> q, k, v;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && val != NULL && ++i)
        if (ARG("--out"))
            o.out = val;
        else if (ARG("--batch"))
            o.batch = atoi(val);
        else if (ARG("--heads"))
            o.heads = atoi(val);
        else if (ARG("--nq"))
            o.nq = atoi(val);
        else if (ARG("--nk"))
            o.nk = atoi(val);
        else if (ARG("--d"))
            o.d = atoi(val);
        else if (ARG("--seed"))
            o.seed = strtoull(val, NULL, 10);
        else if (ARG("--gen"))
            o.gen = val;
        else if (ARG("--repeat"))
            o.repeat = atoi(val);
        else if (ARG("--v-mean"))
            o.v_mean = atof(val);
        else if (ARG("--v-std"))
            o.v_std = atof(val);
        else if (ARG("--fix")) {
            if (strcmp(val, "beta") == 0)
                o.fix = 1;
            else if (strcmp(val, "none") == 0)
                o.fix = 0;
            else
                usage();
        } else if (ARG("--recip")) {
            if (strcmp(val, "rn") == 0)
                o.recip = 0;
            else if (strcmp(val, "approx") == 0)
                o.recip = 1;
            else if (strcmp(val, "full") == 0)
                o.recip = 2;
            else
                usage();
        } else if (ARG("--inputs"))
            o.inputs = val;
        else if (ARG("--compare"))
            o.compare = val;
        else if (ARG("--driver"))
            o.driver = val;
        else if (strcmp(a, "--causal") == 0)
            o.causal = 1;
        else if (strcmp(a, "--rowsum-ffma") == 0)
            o.rowsum_ffma = 1;
        else if (strcmp(a, "--no-stages") == 0)
            o.stages = 0;
        else if (strcmp(a, "--no-check") == 0)
            o.check = 0;
        else
            usage();
#undef ARG
    }
    if (o.out == NULL || strlen(o.out) < 13
        || strcmp(o.out + strlen(o.out) - 12, ".safetensors") != 0)
        usage();
    if (o.inputs != NULL) {
        if (!read_inputs(o, q, k, v))
            return 1;
    } else {
        if (o.nk < 0)
            o.nk = o.nq;
        if (strcmp(o.gen, "normal") != 0 && strcmp(o.gen, "sink") != 0
            && strcmp(o.gen, "repeated-max") != 0)
            usage();
        if (o.batch < 1 || o.heads < 1 || o.nq < 1 || o.nk < 1 || o.repeat < 1)
            usage();
        generate(o, q, k, v);
    }
    if (o.d != 64 && o.d != 128) {
        fprintf(stderr, "fa_dump: d = %d (expected 64 or 128)\n", o.d);
        return 2;
    }

    const int bc = o.d <= 64 ? 128 : 64;
    const int tc = (o.nk + bc - 1) / bc;
    const size_t nh = (size_t)o.batch * o.heads, d = (size_t)o.d;
    const size_t n_s = nh * o.nq * o.nk, n_ml = nh * o.nq * tc;
    const size_t n_acc = n_ml * d, n_o = nh * o.nq * d, n_l = nh * o.nq;
    /* scale = 1/sqrt(d) in double rounded to FP32 (for d = 64 and 128 the
       correctly rounded value); sl2 = float(scale * log2 e) in double */
    const float scale = (float)(1.0 / sqrt((double)o.d));
    const float sl2 = (float)((double)scale * 1.4426950408889634);
    /* the fix's tolerance 1e-3 in units of the unscaled scores */
    const float tol = (float)1e-3 / scale;
    const float beta = 2.0f;

    std::vector<float> hs(o.stages ? n_s : 0), hm(o.stages ? n_ml : 0),
        hl(o.stages ? n_ml : 0), hacc(o.stages ? n_acc : 0), hlse(n_l),
        hlsef(n_l);
    std::vector<uint16_t> hp(o.stages ? n_s : 0), ho(n_o);
    uint16_t *dq, *dk, *dv, *dp = NULL, *dout;
    float *ds = NULL, *dm = NULL, *dl = NULL, *dacc = NULL, *dlse, *dlsef;
    cudaDeviceProp prop;
    int drv = 0, rtv = 0;
    char gpu[256], date[64], kname[64];
    fa_params P;

    if (ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
        return 1;
    snprintf(gpu, sizeof gpu, "%s", prop.name);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rtv);
    {
        time_t now = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    }
    snprintf(kname, sizeof kname, "fa2_fwd_dump<%d, %d>", o.d, bc);

    if (ck(cudaMalloc(&dq, q.size() * 2), "cudaMalloc")
        || ck(cudaMalloc(&dk, k.size() * 2), "cudaMalloc")
        || ck(cudaMalloc(&dv, v.size() * 2), "cudaMalloc")
        || ck(cudaMalloc(&dout, n_o * 2), "cudaMalloc")
        || ck(cudaMalloc(&dlse, n_l * 4), "cudaMalloc")
        || ck(cudaMalloc(&dlsef, n_l * 4), "cudaMalloc"))
        return 1;
    if (o.stages) {
        /* never-computed entries: s = -Inf, p = 0 */
        for (size_t i = 0; i < n_s; i++)
            hs[i] = -INFINITY;
        if (ck(cudaMalloc(&ds, n_s * 4), "cudaMalloc")
            || ck(cudaMalloc(&dp, n_s * 2), "cudaMalloc")
            || ck(cudaMalloc(&dm, n_ml * 4), "cudaMalloc")
            || ck(cudaMalloc(&dl, n_ml * 4), "cudaMalloc")
            || ck(cudaMalloc(&dacc, n_acc * 4), "cudaMalloc")
            || ck(cudaMemcpy(ds, hs.data(), n_s * 4, cudaMemcpyHostToDevice),
                  "cudaMemcpy")
            || ck(cudaMemset(dp, 0, n_s * 2), "cudaMemset")
            || ck(cudaMemset(dm, 0xFF, n_ml * 4), "cudaMemset")
            || ck(cudaMemset(dl, 0xFF, n_ml * 4), "cudaMemset")
            || ck(cudaMemset(dacc, 0xFF, n_acc * 4), "cudaMemset"))
            return 1;
    }
    /* poison: every output element must be written */
    if (ck(cudaMemset(dout, 0xFF, n_o * 2), "cudaMemset")
        || ck(cudaMemset(dlse, 0xFF, n_l * 4), "cudaMemset")
        || ck(cudaMemset(dlsef, 0xFF, n_l * 4), "cudaMemset")
        || ck(cudaMemcpy(dq, q.data(), q.size() * 2, cudaMemcpyHostToDevice),
              "cudaMemcpy")
        || ck(cudaMemcpy(dk, k.data(), k.size() * 2, cudaMemcpyHostToDevice),
              "cudaMemcpy")
        || ck(cudaMemcpy(dv, v.data(), v.size() * 2, cudaMemcpyHostToDevice),
              "cudaMemcpy"))
        return 1;

    P.q = dq;
    P.k = dk;
    P.v = dv;
    P.nq = o.nq;
    P.nk = o.nk;
    P.tc = tc;
    P.causal = o.causal;
    P.scale = scale;
    P.sl2 = sl2;
    P.fix = o.fix;
    P.beta = beta;
    P.tol = tol;
    P.rowsum_ffma = o.rowsum_ffma;
    P.recip = o.recip;
    P.stages = o.stages;
    P.s = ds;
    P.p = dp;
    P.m = dm;
    P.l = dl;
    P.acc = dacc;
    P.o = dout;
    P.lse = dlse;
    P.lse_fast = dlsef;
    {
        dim3 grid((unsigned)((o.nq + BR - 1) / BR), (unsigned)nh);
        if (o.d == 64)
            fa2_fwd_dump<64, 128><<<grid, NWARPS * 32>>>(P);
        else
            fa2_fwd_dump<128, 64><<<grid, NWARPS * 32>>>(P);
        if (ck(cudaGetLastError(), "launch")
            || ck(cudaDeviceSynchronize(), "kernel"))
            return 1;
    }
    if (ck(cudaMemcpy(ho.data(), dout, n_o * 2, cudaMemcpyDeviceToHost),
           "cudaMemcpy")
        || ck(cudaMemcpy(hlse.data(), dlse, n_l * 4, cudaMemcpyDeviceToHost),
              "cudaMemcpy")
        || ck(cudaMemcpy(hlsef.data(), dlsef, n_l * 4, cudaMemcpyDeviceToHost),
              "cudaMemcpy"))
        return 1;
    if (o.stages
        && (ck(cudaMemcpy(hs.data(), ds, n_s * 4, cudaMemcpyDeviceToHost),
               "cudaMemcpy")
            || ck(cudaMemcpy(hp.data(), dp, n_s * 2, cudaMemcpyDeviceToHost),
                  "cudaMemcpy")
            || ck(cudaMemcpy(hm.data(), dm, n_ml * 4, cudaMemcpyDeviceToHost),
                  "cudaMemcpy")
            || ck(cudaMemcpy(hl.data(), dl, n_ml * 4, cudaMemcpyDeviceToHost),
                  "cudaMemcpy")
            || ck(cudaMemcpy(hacc.data(), dacc, n_acc * 4,
                             cudaMemcpyDeviceToHost),
                  "cudaMemcpy")))
        return 1;

    /* every element written (the poison 0xFFFF... is a NaN the kernel never
       produces for finite inputs) */
    size_t unwritten = 0;
    for (size_t i = 0; i < n_o; i++)
        unwritten += ho[i] == 0xFFFFu;
    for (size_t i = 0; i < n_l; i++)
        unwritten += f32_bits(hlse[i]) == 0xFFFFFFFFu;
    for (size_t i = 0; o.stages && i < n_ml; i++)
        unwritten +=
            f32_bits(hm[i]) == 0xFFFFFFFFu || f32_bits(hl[i]) == 0xFFFFFFFFu;
    for (size_t i = 0; o.stages && i < n_acc; i++)
        unwritten += f32_bits(hacc[i]) == 0xFFFFFFFFu;
    double rel =
        o.check ? reference_error(o, q, k, v, ho, (double)scale) : 0.0;
    char relbuf[64] = "null";
    if (o.check && std::isfinite(rel))
        snprintf(relbuf, sizeof relbuf, "%.6g", rel);
    char cmp[4096] = "null";
    if (o.compare != NULL
        && compare_o(o, ho, hlse, hlsef, cmp, sizeof cmp) != 0)
        return 1;

    /* the manifest */
    char *js = NULL;
    size_t jl = 0, jc = 0;
    st_appendf(
        &js, &jl, &jc,
        "{\n \"producer\": \"experiments/gpu/fa_dump.cu\",\n \"gpu\": ");
    st_json_string(&js, &jl, &jc, gpu);
    st_appendf(&js, &jl, &jc,
               ",\n \"cc\": \"%d.%d\",\n \"sm_count\": %d,\n \"driver\": ",
               prop.major, prop.minor, prop.multiProcessorCount);
    st_json_string(&js, &jl, &jc, o.driver);
    st_appendf(&js, &jl, &jc,
               ",\n \"cuda_driver_api\": %d,\n \"cuda_runtime\": %d,\n"
               " \"nvcc\": \"%d.%d\",\n \"kernel\": \"%s\",\n"
               " \"instructions\": \"mma.sync.aligned.m16n8k16.row.col.f32."
               "bf16.bf16.f32, ex2.approx.f32, cvt.rn.bf16x2.f32\",\n"
               " \"tiles\": {\"br\": %d, \"bc\": %d, \"warps\": %d},\n"
               " \"tc\": %d,\n"
               " \"shape\": {\"batch\": %d, \"heads\": %d, \"nq\": %d, "
               "\"nk\": %d, \"d\": %d},\n"
               " \"causal\": %s,\n"
               " \"scale\": \"1/sqrt(d) (correctly rounded FP32)\",\n"
               " \"scale_bits\": \"0x%08X\",\n \"scale_log2_bits\": "
               "\"0x%08X\",\n"
               " \"fix\": \"%s\",\n \"fix_beta\": 2, \"fix_tol\": 0.001, "
               "\"fix_tol_unscaled_bits\": \"0x%08X\",\n"
               " \"rowsum\": \"%s\",\n"
               " \"recip\": \"%s\",\n"
               " \"lse\": \"fmaf(m, scale, (float)log((double)l))\",\n"
               " \"lse_fast\": \"fmaf(m, scale, __logf(l))\",\n",
               drv, rtv, __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, kname, BR,
               bc, NWARPS, tc, o.batch, o.heads, o.nq, o.nk, o.d,
               o.causal ? "true" : "false", f32_bits(scale), f32_bits(sl2),
               o.fix ? "beta" : "none", f32_bits(tol),
               o.rowsum_ffma ? "FFMA(l, c, p) for the rescale and the next "
                               "addition"
                             : "FMUL then FADD (the fa2 policy)",
               o.recip == 1   ? "rcp.approx.ftz.f32"
               : o.recip == 2 ? "div.full.f32"
                              : "IEEE division (the fa2 policy)");
    if (o.inputs != NULL) {
        st_appendf(&js, &jl, &jc, " \"inputs\": ");
        st_json_string(&js, &jl, &jc, o.inputs);
        st_appendf(&js, &jl, &jc, ",\n");
    } else {
        st_appendf(&js, &jl, &jc,
                   " \"inputs\": \"generated: SplitMix64, Box-Muller, RNE to "
                   "BF16\",\n \"seed\": %llu,\n \"gen\": \"%s\",\n"
                   " \"repeat\": %d,\n \"v_mean\": %.17g,\n \"v_std\": "
                   "%.17g,\n",
                   o.seed, o.gen,
                   strcmp(o.gen, "sink") == 0     ? 1
                   : strcmp(o.gen, "normal") == 0 ? 0
                                                  : o.repeat,
                   o.v_mean, o.v_std);
    }
    st_appendf(&js, &jl, &jc,
               " \"stages\": %s,\n \"unwritten\": %zu,\n"
               " \"check_rel_error_vs_double\": %s,\n \"compare_o\": %s,\n"
               " \"date\": \"%s\"\n}\n",
               o.stages ? "[\"s\", \"m\", \"l\", \"p\", \"acc\", \"o\", "
                          "\"lse\"]"
                        : "[\"o\", \"lse\"]",
               unwritten, relbuf, cmp, date);

    st_file sf;
    uint64_t shq[4] = {(uint64_t)o.batch, (uint64_t)o.heads, (uint64_t)o.nq,
                       d},
             shk[4] = {(uint64_t)o.batch, (uint64_t)o.heads, (uint64_t)o.nk,
                       d},
             shs[4] = {(uint64_t)o.batch, (uint64_t)o.heads, (uint64_t)o.nq,
                       (uint64_t)o.nk},
             shm[4] = {(uint64_t)o.batch, (uint64_t)o.heads, (uint64_t)o.nq,
                       (uint64_t)tc},
             sha[5] = {(uint64_t)o.batch, (uint64_t)o.heads, (uint64_t)o.nq,
                       (uint64_t)tc, d},
             shl[3] = {(uint64_t)o.batch, (uint64_t)o.heads, (uint64_t)o.nq};
    st_init(&sf);
    st_add(&sf, "q", "BF16", 4, shq, q.data());
    st_add(&sf, "k", "BF16", 4, shk, k.data());
    st_add(&sf, "v", "BF16", 4, shk, v.data());
    if (o.stages) {
        st_add(&sf, "s", "F32", 4, shs, hs.data());
        st_add(&sf, "p", "BF16", 4, shs, hp.data());
        st_add(&sf, "m", "F32", 4, shm, hm.data());
        st_add(&sf, "l", "F32", 4, shm, hl.data());
        st_add(&sf, "acc", "F32", 5, sha, hacc.data());
    }
    st_add(&sf, "o", "BF16", 4, shq, ho.data());
    st_add(&sf, "lse", "F32", 3, shl, hlse.data());
    st_add(&sf, "lse_fast", "F32", 3, shl, hlsef.data());
    st_meta(&sf, "manifest", js);
    if (st_write(&sf, o.out) != 0) {
        fprintf(stderr, "fa_dump: %s: cannot write\n", o.out);
        return 1;
    }
    {
        std::string jpath(o.out, strlen(o.out) - 12);
        FILE *fp;
        jpath += ".json";
        fp = fopen(jpath.c_str(), "w");
        if (fp == NULL || fputs(js, fp) < 0 || fclose(fp) != 0) {
            fprintf(stderr, "fa_dump: %s: cannot write\n", jpath.c_str());
            return 1;
        }
    }
    printf("%s: %s, B %d H %d Nq %d Nk %d d %d%s%s%s%s: rel. error %s, "
           "unwritten %zu\n",
           o.out, kname, o.batch, o.heads, o.nq, o.nk, o.d,
           o.causal ? " causal" : "", o.fix ? " fix beta" : "",
           o.rowsum_ffma ? " rowsum-ffma" : "",
           o.recip == 1   ? " recip approx"
           : o.recip == 2 ? " recip full"
                          : "",
           relbuf, unwritten);
    st_free(&sf);
    free(js);
    return unwritten != 0 || (o.check && !(rel < 2e-2));
}

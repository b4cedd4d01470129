/* gemm_row_c -- the one-row BF16 GEMMs of the truncating fused models in
   portable C on the host's binary32 unit: every product computed exactly
   as a float, no host flag read, the range of each operand checked in
   integers first (the argument: mma_local.h) */
#include <string.h>

#include "softfloat/mma/mma_local.h"

/* Columns of B as stored taken at once (the vectorised dimension). */
#define W 16

#if defined(__GNUC__)
#define ROW_INLINE __attribute__((always_inline)) static inline
#else
#define ROW_INLINE static inline
#endif

static inline float
f32_of(uint32_t u)
{
    float f;

    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t
bits_of(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return u;
}

/* Whether the BF16 value V is outside the path's range: not zero and not
   a normal number of exponent -63 .. 63 (subnormals, Inf and NaN
   included); 1 or 0, without a branch. */
static inline uint32_t
out_of_range(uint32_t v)
{
    uint32_t x = v & 0x7FFFu;

    return (uint32_t)(x - S_MMA_FP_ABS_MIN > S_MMA_FP_ABS_MAX - S_MMA_FP_ABS_MIN)
           & (uint32_t)(x != 0);
}

/* A block's grid 2^Q as the two powers the second pass multiplies by:
   *SCALE = 2^-q, *TWOQ = 2^q (q clamped into -126 .. 126 when the block
   has no product, whose terms are then all zero); false when a block
   with products has a q outside that range. */
static inline bool
grid_powers(int32_t q, bool has, float *scale, float *twoq)
{
    int32_t qc = q < -126 ? -126 : q > 126 ? 126 : q;

    if (has && qc != q)
        return false;
    *scale = f32_of((uint32_t)(127 - qc) << 23);
    *twoq = f32_of((uint32_t)(127 + qc) << 23);
    return true;
}

/* The largest exponent sum of a block's non-zero products, as
   s_mma_c_grid takes it, from the bits MX of the largest 2^E_a 2^E_b
   (0: none). */
static inline int32_t
block_ep(const s_mma_plan *pl, uint32_t mx)
{
    return mx != 0 ? (int32_t)(mx >> 23) - 127 : 2 * S_MMA_ZERO_E + pl->qadd;
}

/* One block of LEN products of one output element: A's part as binary32
   values AW and powers AP, B's LEN elements at X (consecutive), the
   accumulator *ACC (C, then each block's result) updated; false,
   changing nothing, when an element of X is out of range, *ACC is Inf or
   NaN or the grid leaves the scaling's range. */
ROW_INLINE bool
nt_block(const s_mma_plan *pl, const float *aw, const float *ap,
         const uint16_t *x, size_t len, uint32_t *acc, unsigned *fl,
         uint64_t *lost)
{
    uint32_t bad = 0, mx = 0, lb = 0;
    int32_t sum = 0, q;
    int64_t csum;
    float scale, twoq;

    /* pass 1: the range, and the largest 2^E_b 2^E_a */
    for (size_t t = 0; t < len; t++) {
        uint32_t v = x[t];
        uint32_t pe = bits_of(f32_of((v << 16) & 0x7F800000u) * ap[t]);
        bad |= out_of_range(v);
        mx = pe > mx ? pe : mx;
    }
    if (bad != 0 || (*acc & 0x7F800000u) == 0x7F800000u)
        return false;
    csum = s_mma_c_grid(pl, *acc, block_ep(pl, mx), &q, lost);
    if (!grid_powers(q, mx != 0, &scale, &twoq))
        return false;
    /* pass 2: each exact product on the grid, truncated; a kept part
       times 2^q differs from its product exactly when bits were lost */
    for (size_t t = 0; t < len; t++) {
        float p = f32_of((uint32_t)x[t] << 16) * aw[t];
        int32_t kept = (int32_t)(p * scale);
        sum += kept;
        lb |= (uint32_t)((float)kept * twoq != p);
    }
    *lost |= lb;
    *acc = s_mma_finish64(pl, csum + sum, q, fl);
    return true;
}

/* The same for W output elements side by side: B's LEN rows of W
   elements at B, LD apart; ACC: W accumulators. */
ROW_INLINE bool
row_block(const s_mma_plan *pl, const float *aw, const float *ap,
          const uint16_t *b, size_t ld, size_t len, uint32_t *acc,
          unsigned *fl, uint64_t *lost)
{
    uint32_t mx[W] = {0}, lb[W] = {0}, bad = 0, spec = 0;
    int32_t sum[W] = {0}, q[W];
    int64_t csum[W];
    float scale[W], twoq[W];

    for (size_t t = 0; t < len; t++)
        for (size_t l = 0; l < W; l++) {
            uint32_t v = b[t * ld + l];
            uint32_t pe = bits_of(f32_of((v << 16) & 0x7F800000u) * ap[t]);
            bad |= out_of_range(v);
            mx[l] = pe > mx[l] ? pe : mx[l];
        }
    for (size_t l = 0; l < W; l++)
        spec |= (uint32_t)((acc[l] & 0x7F800000u) == 0x7F800000u);
    if (bad != 0 || spec != 0)
        return false;
    for (size_t l = 0; l < W; l++) {
        csum[l] = s_mma_c_grid(pl, acc[l], block_ep(pl, mx[l]), &q[l], lost);
        if (!grid_powers(q[l], mx[l] != 0, &scale[l], &twoq[l]))
            return false;
    }
    for (size_t t = 0; t < len; t++)
        for (size_t l = 0; l < W; l++) {
            float p = f32_of((uint32_t)b[t * ld + l] << 16) * aw[t];
            int32_t kept = (int32_t)(p * scale[l]);
            sum[l] += kept;
            lb[l] |= (uint32_t)((float)kept * twoq[l] != p);
        }
    for (size_t l = 0; l < W; l++) {
        *lost |= lb[l];
        acc[l] = s_mma_finish64(pl, csum[l] + sum[l], q[l], fl);
    }
    return true;
}

/* A's side: binary32 values AW and powers 2^E_a AP (0 for a zero) of its
   K elements, zeros up to the next multiple of the block; false when an
   element is out of range or K is above S_MMA_FP_ROW_MAX. */
static bool
side_a(const uint16_t *a, size_t k, size_t n, float *aw, float *ap)
{
    uint32_t w[S_MMA_FP_ROW_MAX], p[S_MMA_FP_ROW_MAX];

    if (k > S_MMA_FP_ROW_MAX || !s_mma_fp_side_a(a, k, w, p))
        return false;
    for (size_t t = 0; t < k; t++) {
        aw[t] = f32_of(w[t]);
        ap[t] = f32_of(p[t]);
    }
    for (size_t t = k; t % n != 0; t++)
        aw[t] = ap[t] = 0;
    return true;
}

bool
s_mma_row_c_covers(const sf_mma_model *m, const sf_format *fa,
                   const sf_format *fb)
{
    s_mma_plan pl;

    if (fa != &sf_format_bf16 || fb != &sf_format_bf16 || m->n > 16)
        return false;
    s_mma_plan_init(&pl, m, fa, fb, 1, false);
    return pl.narrow;
}

bool
s_mma_gemm_nt_c(const sf_mma_model *m, size_t cols, size_t k,
                const uint16_t *a, const uint16_t *bt, const uint32_t *c,
                uint32_t *d, sf_env *env)
{
    float aw[S_MMA_FP_ROW_MAX + 16], ap[S_MMA_FP_ROW_MAX + 16];
    const size_t n = (size_t)m->n;
    s_mma_plan pl;
    unsigned flags = 0;
    uint64_t lost = 0;

    if (!side_a(a, k, n, aw, ap))
        return false;
    s_mma_plan_init(&pl, m, &sf_format_bf16, &sf_format_bf16, 1, false);
    for (size_t j = 0; j < cols; j++) {
        const uint16_t *x = bt + j * k;
        uint32_t acc = c != NULL ? c[j] : 0;
        unsigned f = 0;
        uint64_t lj = 0;
        bool ok = true;
        for (size_t k0 = 0; ok && k0 < k; k0 += n) {
            size_t len = k - k0 < n ? k - k0 : n;
            ok = len == 16 ? nt_block(&pl, aw + k0, ap + k0, x + k0, 16, &acc,
                                      &f, &lj)
                           : nt_block(&pl, aw + k0, ap + k0, x + k0, len,
                                      &acc, &f, &lj);
        }
        if (ok) {
            d[j] = acc;
            flags |= f;
            lost |= lj;
        } else {
            /* a special or out-of-range operand: the column's dot */
            s_mma_vec va = {a, 1, 2}, vb = {x, 1, 2};
            d[j] = (uint32_t)s_mma_dot(m, &sf_format_bf16, &va,
                                       &sf_format_bf16, &vb, k,
                                       c != NULL ? c[j] : 0, env);
        }
    }
    if (lost != 0)
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
    return true;
}

bool
s_mma_gemm_row_c(const sf_mma_model *m, size_t cols, size_t k,
                 const uint16_t *a, const uint16_t *b, const uint32_t *c,
                 uint32_t *d, sf_env *env)
{
    float aw[S_MMA_FP_ROW_MAX + 16], ap[S_MMA_FP_ROW_MAX + 16];
    const size_t n = (size_t)m->n;
    uint16_t pad[16 * W];
    s_mma_plan pl;
    unsigned flags = 0;
    uint64_t lost = 0;

    if (!side_a(a, k, n, aw, ap))
        return false;
    s_mma_plan_init(&pl, m, &sf_format_bf16, &sf_format_bf16, W, false);
    for (size_t j0 = 0; j0 < cols; j0 += W) {
        size_t nl = cols - j0 < W ? cols - j0 : W;
        uint32_t acc[W] = {0};
        unsigned f = 0;
        uint64_t lj = 0;
        bool ok = true;
        if (c != NULL)
            memcpy(acc, c + j0, nl * sizeof *acc);
        for (size_t k0 = 0; ok && k0 < k; k0 += n) {
            size_t len = k - k0 < n ? k - k0 : n;
            const uint16_t *src = b + k0 * cols + j0;
            size_t ld = cols;
            if (nl < W) {
                /* the last columns: zeros beside them */
                memset(pad, 0, sizeof pad);
                for (size_t t = 0; t < len; t++)
                    memcpy(pad + t * W, src + t * cols, nl * sizeof *pad);
                src = pad;
                ld = W;
            }
            ok = len == 16 ? row_block(&pl, aw + k0, ap + k0, src, ld, 16,
                                       acc, &f, &lj)
                           : row_block(&pl, aw + k0, ap + k0, src, ld, len,
                                       acc, &f, &lj);
        }
        if (ok) {
            memcpy(d + j0, acc, nl * sizeof *acc);
            flags |= f;
            lost |= lj;
            continue;
        }
        /* a special or out-of-range operand: each column's dot */
        for (size_t l = 0; l < nl; l++) {
            s_mma_vec va = {a, 1, 2}, vb = {b + j0 + l, (ptrdiff_t)cols, 2};
            d[j0 + l] = (uint32_t)s_mma_dot(m, &sf_format_bf16, &va,
                                            &sf_format_bf16, &vb, k,
                                            c != NULL ? c[j0 + l] : 0, env);
        }
    }
    if (lost != 0)
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
    return true;
}

/* gemm_fast -- the tiled GEMM of the truncating fused models: A and B
   decoded once per tile, one block of a kernel's width of output columns
   at a time handed to a kernel (the portable one is here), blocks with
   Inf or NaN operands handed to the scalar block */
#include <string.h>

#include "softfloat/mma/mma_local.h"

/* Rows of A decoded at once. */
#define TILE_ROWS 32

void
s_mma_plan_init(s_mma_plan *pl, const sf_mma_model *m, const sf_format *fa,
                const sf_format *fb, size_t lanes, bool lb)
{
    int32_t fab = (int32_t)(fa->frac_bits + fb->frac_bits);
    int32_t l = m->frac_bits > fab ? m->frac_bits - fab : 0;
    uint64_t pmax = (((uint64_t)2 << fa->frac_bits) - 1)
                    * (((uint64_t)2 << fb->frac_bits) - 1);

    pl->m = m;
    pl->fa = fa;
    pl->fb = fb;
    pl->f = m->frac_bits;
    pl->lanes = lanes;
    pl->decode = NULL;
    pl->row = NULL;
    /* every kept product is below pmax * 2^l, and a block has at most
       m->n of them */
    pl->narrow = l + fab + 2 <= 31
                 && (uint64_t)m->n * (pmax << l) <= (uint64_t)INT32_MAX;
    pl->lb = lb && pl->narrow ? l : 0;
    pl->lp = l - pl->lb;
    pl->qadd = pl->lb + fab;
    pl->ovf_bits = m->overflow == SF_MMA_OVF_INF ? 0x7F800000u : 0x7F7FFFFFu;
}

s_mma_dec
s_mma_dec_init(const sf_format *f, bool daz, int32_t shift)
{
    s_mma_dec d;

    d.fb = f->frac_bits;
    d.emask = (1u << f->exp_bits) - 1;
    d.fmask = (1u << f->frac_bits) - 1;
    d.hidden = 1u << f->frac_bits;
    d.smask = (uint32_t)f->sign_mask;
    d.ebias = f->bias + (int32_t)f->frac_bits + shift;
    d.shift = shift;
    d.daz = daz ? ~0u : 0;
    return d;
}

bool
s_mma_decode(const s_mma_dec *d, const uint16_t *x, size_t n, int32_t *sig,
             int32_t *e)
{
    uint32_t spec = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t v = x[i];
        uint32_t ef = (v >> d->fb) & d->emask, fr = v & d->fmask;
        uint32_t sub = ef == 0 ? ~0u : 0, sp = ef == d->emask ? ~0u : 0;
        uint32_t s = (fr | (d->hidden & ~sub)) & ~(sub & d->daz) & ~sp;
        uint32_t nz = s != 0 ? ~0u : 0, neg = v & d->smask ? ~0u : 0;
        uint32_t m = ((s << d->shift) ^ neg) - neg;
        int32_t el = (int32_t)(ef | (sub & 1u)) - d->ebias;
        sig[i] = (int32_t)m;
        e[i] = nz ? el : S_MMA_ZERO_E;
        spec |= sp;
    }
    return spec != 0;
}

bool
s_mma_fp_row_ok(const uint16_t *a, size_t n)
{
    uint32_t bad = 0;

    if (n > S_MMA_FP_ROW_MAX)
        return false;
    for (size_t t = 0; t < n; t++) {
        uint32_t x = a[t] & 0x7FFFu;
        bad |= x != 0 && (x < S_MMA_FP_ABS_MIN || x > S_MMA_FP_ABS_MAX);
    }
    return bad == 0;
}

bool
s_mma_fp_side_a(const uint16_t *a, size_t len, uint32_t *aw, uint32_t *ap)
{
    uint32_t bad = 0;

    for (size_t t = 0; t < len; t++) {
        uint32_t v = a[t], x = v & 0x7FFFu;
        bad |= x != 0 && (x < S_MMA_FP_ABS_MIN || x > S_MMA_FP_ABS_MAX);
        aw[t] = v << 16;
        ap[t] = (v & 0x7F80u) << 16;
    }
    return bad == 0;
}

/* A block with Inf or NaN operands: the scalar block for NL columns of
   one row (A: its LEN elements; B: LEN rows COLS apart). */
static void
block_scalar(const s_mma_plan *pl, const uint16_t *a, const uint16_t *b,
             size_t cols, size_t len, size_t k0, size_t nl, uint32_t *acc,
             sf_env *env)
{
    s_mma_vec va = {a, 1, 2};

    for (size_t l = 0; l < nl; l++) {
        s_mma_vec vb = {b + l, (ptrdiff_t)cols, 2};
        acc[l] = (uint32_t)s_mma_block(pl->m, pl->fa, &va, pl->fb, &vb, len,
                                       k0, acc[l], env);
    }
}

void
s_mma_gemm_tiled(const s_mma_plan *pl, s_mma_kernel *kernel, size_t rows,
                 size_t cols, size_t k, const void *a, const void *b,
                 const uint32_t *c, uint32_t *d, sf_env *env)
{
    const sf_mma_model *m = pl->m;
    const uint16_t *a16 = a, *b16 = b;
    const size_t step = m->n, w = pl->lanes;
    const s_mma_dec da = s_mma_dec_init(pl->fa, m->daz, 0),
                    db = s_mma_dec_init(pl->fb, m->daz, pl->lb);
    int32_t as[TILE_ROWS][S_MMA_TILE_N], ae[TILE_ROWS][S_MMA_TILE_N];
    int32_t bs[S_MMA_TILE_N * S_MMA_LANES], be[S_MMA_TILE_N * S_MMA_LANES];
    bool aspec[TILE_ROWS];
    unsigned flags = 0;

    for (size_t i0 = 0; i0 < rows; i0 += TILE_ROWS) {
        size_t nr = rows - i0 < TILE_ROWS ? rows - i0 : TILE_ROWS;
        for (size_t i = i0; i < i0 + nr; i++)
            for (size_t j = 0; j < cols; j++)
                d[i * cols + j] = c != NULL ? c[i * cols + j] : 0;
        for (size_t k0 = 0; k0 < k; k0 += step) {
            size_t len = k - k0 < step ? k - k0 : step;
            for (size_t i = 0; i < nr; i++)
                aspec[i] = s_mma_decode(&da, a16 + (i0 + i) * k + k0, len,
                                        as[i], ae[i]);
            for (size_t j0 = 0; j0 < cols; j0 += w) {
                size_t nl = cols - j0 < w ? cols - j0 : w;
                bool bspec = false;
                if (nr == 1 && nl == w && pl->row != NULL) {
                    /* one row: B decoded by the kernel, block by block */
                    uint32_t *acc = d + i0 * cols + j0;
                    if (aspec[0]
                        || !pl->row(pl, &db, a16 + i0 * k + k0, as[0], ae[0],
                                    b16 + k0 * cols + j0, cols, len, acc,
                                    &flags)) {
                        block_scalar(pl, a16 + i0 * k + k0,
                                     b16 + k0 * cols + j0, cols, len, k0, w,
                                     acc, env);
                    }
                    continue;
                }
                for (size_t t = 0; t < len; t++) {
                    const uint16_t *br = b16 + (k0 + t) * cols + j0;
                    bspec |= nl == w && pl->decode != NULL
                                 ? pl->decode(&db, br, bs + t * w, be + t * w)
                                 : s_mma_decode(&db, br, nl, bs + t * w,
                                                be + t * w);
                    for (size_t l = nl; l < w; l++) {
                        bs[t * w + l] = 0;
                        be[t * w + l] = S_MMA_ZERO_E;
                    }
                }
                for (size_t i = 0; i < nr; i++) {
                    uint32_t tmp[S_MMA_LANES] = {0};
                    uint32_t *dr = d + (i0 + i) * cols + j0;
                    uint32_t *acc = nl == w ? dr : tmp;
                    bool done = false;
                    if (nl < w)
                        memcpy(tmp, dr, nl * sizeof *dr);
                    if (!aspec[i] && !bspec)
                        done =
                            kernel(pl, as[i], ae[i], bs, be, len, acc, &flags);
                    if (!done)
                        block_scalar(pl, a16 + (i0 + i) * k + k0,
                                     b16 + k0 * cols + j0, cols, len, k0, nl,
                                     acc, env);
                    if (nl < w)
                        memcpy(dr, tmp, nl * sizeof *dr);
                }
            }
        }
    }
    env->flags |= flags;
}

/*----------------------------------------------------------------------------
 * The portable kernel, in 64-bit integers (F <= 40, n <= 64: every kept
 * term is below 2^42 and a block's sum below 2^49).
 *--------------------------------------------------------------------------*/
bool
s_mma_kernel_c(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
               const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
               unsigned *flags)
{
    enum
    {
        W = S_MMA_C_LANES
    };
    int32_t mx[W], q[W];
    int64_t sum[W];
    uint64_t lost = 0;
    unsigned fl = 0;

    for (size_t l = 0; l < W; l++)
        if ((acc[l] & 0x7F800000u) == 0x7F800000u)
            return false;
    for (size_t l = 0; l < W; l++)
        mx[l] = 2 * S_MMA_ZERO_E;
    /* pass 1: the largest exponent of a non-zero product */
    for (size_t t = 0; t < len; t++)
        for (size_t l = 0; l < W; l++) {
            int32_t e = ae[t] + be[t * W + l];
            mx[l] = e > mx[l] ? e : mx[l];
        }
    /* C: a term of the block, and part of emax */
    for (size_t l = 0; l < W; l++)
        sum[l] = s_mma_c_grid(pl, acc[l], mx[l] + pl->qadd, &q[l], &lost);
    /* pass 2: every product on the grid 2^q, truncated; the shift is
       never negative (lb + lp >= F - fab) */
    for (size_t t = 0; t < len; t++)
        for (size_t l = 0; l < W; l++) {
            int64_t p = (int64_t)as[t] * bs[t * W + l];
            uint64_t ap = (uint64_t)(p < 0 ? -p : p) << pl->lp, kept;
            int32_t sh = q[l] - (ae[t] + be[t * W + l]) + pl->lp;
            sh = sh > 63 ? 63 : sh;
            kept = ap >> sh;
            lost |= ap ^ (kept << sh);
            sum[l] += p < 0 ? -(int64_t)kept : (int64_t)kept;
        }
    /* normalise once and truncate (RZ) to FP32 */
    for (size_t l = 0; l < W; l++)
        acc[l] = s_mma_finish64(pl, sum[l], q[l], &fl);
    if (lost != 0)
        fl |= SF_FLAG_INEXACT;
    *flags |= fl;
    return true;
}

/* gemm -- D = A * B + C through an accumulation model: the choice of
   path, and the path of one dot product per element */
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma/mma_local.h"

void
s_mma_gemm_dots(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                const sf_format *fa, const void *a, const sf_format *fb,
                const void *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
    unsigned sa = fa->storage_bits / 8, sb = fb->storage_bits / 8;

    for (size_t i = 0; i < rows; i++) {
        s_mma_vec va = {(const char *)a + i * k * sa, 1, sa};
        for (size_t j = 0; j < cols; j++) {
            s_mma_vec vb = {(const char *)b + j * sb, (ptrdiff_t)cols, sb};
            uint64_t acc = c != NULL ? c[i * cols + j] : 0;
            d[i * cols + j] =
                (uint32_t)s_mma_dot(m, fa, &va, fb, &vb, k, acc, env);
        }
    }
}

/* FP32 bits of element I of a row of format F (exact widening), and
   whether the value is finite. */
static uint32_t
wide_f32(const sf_format *f, const void *p, size_t i, bool *finite)
{
    uint32_t x;

    if (f == &sf_format_f32) {
        memcpy(&x, (const char *)p + 4 * i, 4);
    } else {
        uint16_t h;
        memcpy(&h, (const char *)p + 2 * i, 2);
        if (f == &sf_format_bf16) {
            x = (uint32_t)h << 16;
        } else {
            sf_env e = SF_ENV_IEEE;
            x = sf_f16_to_f32((sf_f16){h}, SF_RNE, &e).bits;
        }
    }
    if ((x & 0x7F800000u) == 0x7F800000u)
        *finite = false;
    return x;
}

/* Whether the N elements at P (format F: FP32, BF16 or FP16) are all
   finite. */
static bool
all_finite(const sf_format *f, const void *p, size_t n)
{
    unsigned bad = 0;

    if (f == &sf_format_f32) {
        const uint32_t *x = p;
        for (size_t i = 0; i < n; i++)
            bad |= (x[i] & 0x7F800000u) == 0x7F800000u;
    } else {
        const uint16_t *x = p;
        uint16_t e = f == &sf_format_bf16 ? 0x7F80u : 0x7C00u;
        for (size_t i = 0; i < n; i++)
            bad |= (x[i] & e) == e;
    }
    return bad == 0;
}

/* The FMA chain of gemm_fma_chain on the host's FMA unit: the vector
   kernels of gemm_chain.c when the ISA cap and the CPU allow (ISA
   nonzero), else binary64 arithmetic (gemm_chain_fmaf.c).  A and B
   widened to FP32 row-major (B not transposed), operands already known
   finite.  False (nothing written) when memory runs out or the binary64
   kernel fails its self-check. */
static bool
chain_host(int isa, size_t rows, size_t cols, size_t k, const sf_format *fa,
           const void *a, const sf_format *fb, const void *b,
           const uint32_t *c, uint32_t *d, sf_env *env)
{
    bool ok = true, done = true;
    uint32_t *aw = NULL, *bw = NULL, *tmp;
    const uint32_t *ap = a, *bp = b;

    tmp = malloc(4 * cols * 4);
    if (fa != &sf_format_f32)
        ap = aw = malloc(rows * k * 4);
    if (fb != &sf_format_f32)
        bp = bw = malloc(k * cols * 4);
    if (tmp == NULL || ap == NULL || bp == NULL) {
        free(tmp);
        free(aw);
        free(bw);
        return false;
    }
    for (size_t i = 0; aw != NULL && i < rows * k; i++)
        aw[i] = wide_f32(fa, a, i, &ok);
    for (size_t i = 0; bw != NULL && i < k * cols; i++)
        bw[i] = wide_f32(fb, b, i, &ok);
    if (isa != 0)
        s_mma_chain_native(isa, rows, cols, k, ap, bp, c, d, tmp, env);
    else
        done = s_mma_chain_fmaf(rows, cols, k, ap, bp, c, d, tmp, env);
    free(tmp);
    free(aw);
    free(bw);
    return done;
}

/* The sequential FP32 FMA chain ("fma-chain": IEEE FMAs, RNE, no
   storage rounding) with finite FP32, BF16 or FP16 inputs and C: each
   element one sf_f32_fma per product, inputs widened once; with HOST
   (any path but an explicit SF_MMA_PATH_SCALAR), on the host's FMA unit
   where gemm_chain.c or gemm_chain_fmaf.c can run it (same bits and
   flags).  Returns false
   (nothing written) when the model or the data is not of that kind: a
   non-finite input or C, whose NaN rules the generic path keeps. */
static bool
gemm_fma_chain(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
               const sf_format *fa, const void *a, const sf_format *fb,
               const void *b, const uint32_t *c, uint32_t *d, bool host,
               sf_env *env)
{
    bool ok = true;
    uint32_t *bt, *ar;

    if (m->kind != SF_MMA_FMA_CHAIN || m->acc != &sf_format_f32
        || m->rm != SF_RNE || m->store != NULL || m->descending || m->daz
        || m->ftz || m->lanes > 1 || k == 0 || rows == 0 || cols == 0)
        return false;
    if ((fa != &sf_format_f32 && fa != &sf_format_bf16
         && fa != &sf_format_f16)
        || (fb != &sf_format_f32 && fb != &sf_format_bf16
            && fb != &sf_format_f16))
        return false;
    if (cols > SIZE_MAX / 4 / k || rows > SIZE_MAX / 4 / k
        || rows > SIZE_MAX / 4 / cols)
        return false;
    if (!all_finite(fa, a, rows * k) || !all_finite(fb, b, k * cols)
        || (c != NULL && !all_finite(&sf_format_f32, c, rows * cols)))
        return false;
    if (host) {
        int isa = s_mma_chain_native_isa(m, env);
        if ((isa != 0
             || (rows * cols * k >= S_MMA_FMAF_MIN
                 && s_mma_chain_fmaf_ok(m, env)))
            && chain_host(isa, rows, cols, k, fa, a, fb, b, c, d, env))
            return true;
    }
    bt = malloc(cols * k * 4);
    ar = malloc(k * 4);
    if (bt == NULL || ar == NULL) {
        free(bt);
        free(ar);
        return false;
    }
    /* B transposed: column j contiguous */
    for (size_t t = 0; t < k && ok; t++)
        for (size_t j = 0; j < cols; j++)
            bt[j * k + t] = wide_f32(fb, b, t * cols + j, &ok);
    for (size_t i = 0; i < rows * cols && ok && c != NULL; i++)
        if ((c[i] & 0x7F800000u) == 0x7F800000u)
            ok = false;
    for (size_t i = 0; i < rows && ok; i++)
        for (size_t t = 0; t < k; t++)
            (void)wide_f32(fa, (const char *)a + i * k * (fa->storage_bits / 8),
                           t, &ok);
    if (!ok) {
        free(bt);
        free(ar);
        return false;
    }
    for (size_t i = 0; i < rows; i++) {
        const char *arow = (const char *)a + i * k * (fa->storage_bits / 8);
        for (size_t t = 0; t < k; t++)
            ar[t] = wide_f32(fa, arow, t, &ok);
        for (size_t j = 0; j < cols; j++) {
            const uint32_t *bc = bt + j * k;
            sf_f32 acc = {c != NULL ? c[i * cols + j] : 0};
            for (size_t t = 0; t < k; t++)
                acc = sf_f32_fma((sf_f32){ar[t]}, (sf_f32){bc[t]}, acc,
                                 SF_RNE, env);
            d[i * cols + j] = acc.bits;
        }
    }
    free(bt);
    free(ar);
    return true;
}

bool
sf_mma_gemm_avx512_covers(const sf_mma_model *m, const sf_format *fa,
                          const sf_format *fb)
{
    bool in_a = fa == &sf_format_bf16 || fa == &sf_format_f16;
    bool in_b = fb == &sf_format_bf16 || fb == &sf_format_f16;

    return sf_mma_model_check(m) == NULL && m->kind == SF_MMA_FUSED
           && m->align == SF_MMA_ALIGN_TRUNC && m->c_in_block
           && m->rm == SF_RTZ && m->acc == &sf_format_f32 && in_a && in_b
           && m->store == NULL && m->frac_bits != SF_MMA_F_EXACT
           && m->frac_bits <= 40 && m->n <= S_MMA_TILE_N && !m->ftz
           && m->nan == SF_MMA_NAN_DEFAULT && m->zero == SF_MMA_ZERO_POS;
}

bool
sf_mma_gemm_covers(const sf_mma_model *m, const sf_format *fa,
                   const sf_format *fb)
{
    return sf_mma_gemm_avx512_covers(m, fa, fb);
}

int
sf_mma_gemm_choose(const sf_mma_model *m, const sf_format *fa,
                   const sf_format *fb, sf_mma_path path, const sf_env *env)
{
    bool tiled = env->events == NULL && sf_mma_gemm_covers(m, fa, fb);
    sf_isa cap = sf_isa_resolve(env->isa);
    bool v512 =
        tiled && cap >= SF_ISA_AVX512 && sf_mma_gemm_avx512_available();
    bool v2 = tiled && cap >= SF_ISA_AVX2 && sf_mma_gemm_avx2_available();

    switch (path) {
    case SF_MMA_PATH_SCALAR:
        return SF_MMA_PATH_SCALAR;
    case SF_MMA_PATH_AVX512:
        return v512 ? SF_MMA_PATH_AVX512 : -1;
    case SF_MMA_PATH_AVX2:
        return v2 ? SF_MMA_PATH_AVX2 : -1;
    default:
        return v512 ? SF_MMA_PATH_AVX512
               : v2 ? SF_MMA_PATH_AVX2
                    : SF_MMA_PATH_SCALAR;
    }
}

/* Whether the portable path takes one row of model M with FA, FB: not
   for an explicit SF_MMA_PATH_SCALAR (the integer kernels), nor with an
   event sink. */
static bool
row_c(const sf_mma_model *m, const sf_format *fa, const sf_format *fb,
      sf_mma_path path, const sf_env *env)
{
    return path != SF_MMA_PATH_SCALAR && env->events == NULL
           && sf_mma_gemm_covers(m, fa, fb) && s_mma_row_c_covers(m, fa, fb);
}

int
sf_mma_gemm(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
            const sf_format *fa, const void *a, const sf_format *fb,
            const void *b, const uint32_t *c, uint32_t *d, sf_mma_path path,
            sf_env *env)
{
    int used = sf_mma_gemm_choose(m, fa, fb, path, env);
    s_mma_saved saved;

    if (used < 0)
        return -1;
    s_mma_enter(m, env, &saved);
    if (used == SF_MMA_PATH_AVX512
        && !s_mma_gemm_avx512(m, rows, cols, k, fa, a, fb, b, c, d, env))
        used = SF_MMA_PATH_SCALAR;
    if (used == SF_MMA_PATH_AVX2
        && !s_mma_gemm_avx2(m, rows, cols, k, fa, a, fb, b, c, d, env))
        used = SF_MMA_PATH_SCALAR;
    if (used == SF_MMA_PATH_SCALAR) {
        if (row_c(m, fa, fb, path, env)) {
            /* row by row on the host's binary32 unit (gemm_row_c.c) */
            s_mma_plan pl;
            s_mma_plan_init(&pl, m, fa, fb, S_MMA_C_LANES, false);
            for (size_t i = 0; i < rows; i++) {
                const uint16_t *ai = (const uint16_t *)a + i * k;
                const uint32_t *ci = c != NULL ? c + i * cols : NULL;
                if (!s_mma_gemm_row_c(m, cols, k, ai, b, ci, d + i * cols,
                                      env))
                    s_mma_gemm_tiled(&pl, s_mma_kernel_c, 1, cols, k, ai, b,
                                     ci, d + i * cols, env);
            }
        } else if (env->events == NULL && sf_mma_gemm_covers(m, fa, fb)) {
            s_mma_plan pl;
            s_mma_plan_init(&pl, m, fa, fb, S_MMA_C_LANES, false);
            s_mma_gemm_tiled(&pl, s_mma_kernel_c, rows, cols, k, a, b, c, d,
                             env);
        } else if (env->events != NULL
                   || !gemm_fma_chain(m, rows, cols, k, fa, a, fb, b, c, d,
                                      path != SF_MMA_PATH_SCALAR, env)) {
            s_mma_gemm_dots(m, rows, cols, k, fa, a, fb, b, c, d, env);
        }
    }
    s_mma_leave(env, &saved);
    return used;
}

bool
sf_mma_gemm_nt_direct(const sf_mma_model *m, size_t rows,
                      const sf_format *fa, const sf_format *fb,
                      sf_mma_path path, const sf_env *env)
{
    int used = sf_mma_gemm_choose(m, fa, fb, path, env);

    return (used == SF_MMA_PATH_AVX512
            && s_mma_gemm_nt_avx512_covers(m, rows, fa, fb))
           || (used == SF_MMA_PATH_AVX2
               && s_mma_gemm_nt_avx2_covers(m, rows, fa, fb))
           || (used == SF_MMA_PATH_SCALAR && rows == 1
               && row_c(m, fa, fb, path, env));
}

int
sf_mma_gemm_nt(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
               const sf_format *fa, const void *a, const sf_format *fb,
               const void *bt, const uint32_t *c, uint32_t *d,
               sf_mma_path path, sf_env *env)
{
    unsigned sb = fb->storage_bits / 8;
    int used = sf_mma_gemm_choose(m, fa, fb, path, env);
    void *b;

    if (used < 0)
        return -1;
    if (used == SF_MMA_PATH_AVX512
        && s_mma_gemm_nt_avx512_covers(m, rows, fa, fb)) {
        s_mma_saved saved;
        bool done;
        s_mma_enter(m, env, &saved);
        done = s_mma_gemm_nt_avx512(m, rows, cols, k, fa, a, fb, bt, c, d,
                                    env);
        s_mma_leave(env, &saved);
        if (done)
            return used;
    }
    if (used == SF_MMA_PATH_AVX2
        && s_mma_gemm_nt_avx2_covers(m, rows, fa, fb)) {
        s_mma_saved saved;
        bool done;
        s_mma_enter(m, env, &saved);
        done = s_mma_gemm_nt_avx2(m, rows, cols, k, fa, a, fb, bt, c, d, env);
        s_mma_leave(env, &saved);
        if (done)
            return used;
    }
    if (used == SF_MMA_PATH_SCALAR && rows == 1
        && row_c(m, fa, fb, path, env)) {
        s_mma_saved saved;
        bool done;
        s_mma_enter(m, env, &saved);
        done = s_mma_gemm_nt_c(m, cols, k, a, bt, c, d, env);
        s_mma_leave(env, &saved);
        if (done)
            return used;
    }
    b = cols != 0 && k > SIZE_MAX / cols / sb ? NULL : malloc(k * cols * sb);
    if (b == NULL && k != 0 && cols != 0) {
        /* one dot product per element, BT's rows as they are */
        unsigned sa = fa->storage_bits / 8;
        s_mma_saved saved;
        s_mma_enter(m, env, &saved);
        for (size_t i = 0; i < rows; i++) {
            s_mma_vec va = {(const char *)a + i * k * sa, 1, sa};
            for (size_t j = 0; j < cols; j++) {
                s_mma_vec vb = {(const char *)bt + j * k * sb, 1, sb};
                d[i * cols + j] = (uint32_t)s_mma_dot(
                    m, fa, &va, fb, &vb, k, c != NULL ? c[i * cols + j] : 0,
                    env);
            }
        }
        s_mma_leave(env, &saved);
        return SF_MMA_PATH_SCALAR;
    }
    for (size_t j = 0; j < cols; j++)
        for (size_t t = 0; t < k; t++)
            memcpy((char *)b + (t * cols + j) * sb,
                   (const char *)bt + (j * k + t) * sb, sb);
    used = sf_mma_gemm(m, rows, cols, k, fa, a, fb, b, c, d, path, env);
    free(b);
    return used;
}

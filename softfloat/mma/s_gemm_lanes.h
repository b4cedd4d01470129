/* s_gemm_lanes.h -- what the vector GEMM of one instruction set does
   around its kernels: the kernels by the plan's width, a row of B decoded
   as stored, the flag-checked binary32 path chunk by chunk, and the
   library's entry points (the three s_mma_gemm_* functions of the set);
   included once, at the end of gemm_avx2.c and of gemm_avx512.c.

   The includer defines HAVE_VEC (1 where the kernels are built: x86-64
   with GCC's extensions), GL_ISA (the set's suffix of the entry points:
   avx2 or avx512) and, when HAVE_VEC is 1:
   - GL_N: the lanes of one kernel call (8 or 16);
   - GL_TGT: the target attribute of the integer kernels, GL_TGT_FP that
     of the binary32 path;
   - GL_KERNEL(pl, as, ae, bs, be, len, acc, flags, narrow): the integer
     kernel for GL_N lanes (s_mma_kernel with the NARROW choice of the
     plan), GL_DECODE: GL_N elements of B decoded (an s_mma_decoder);
   and, before the include, the static functions
   - fp_available(void): whether the binary32 path runs on this CPU;
   - gemm_nt_fp, gemm_row_fp: one row of A on the binary32 path, block by
     block with a range check (the careful path);
   - fast_nt_chunk, fast_row_chunk: a chunk of up to S_MMA_FP_CHUNK
     columns on the binary32 path with no range check, false where an
     accumulator met Inf or NaN (or the set's scaling ran out of range);
   with the contracts their comments state.  Not guarded. */

#define GL_CAT_(a, b) a##b
#define GL_CAT(a, b) GL_CAT_(a, b)
/* The names PRE<set> and PRE<set>POST: s_mma_gemm_avx2,
   s_mma_gemm_nt_avx2, s_mma_gemm_nt_avx2_covers (or avx512). */
#define GL_NAME(pre) GL_CAT(pre, GL_ISA)
#define GL_NAME2(pre, post) GL_CAT(GL_NAME(pre), post)

#if HAVE_VEC

GL_TGT static bool
kernel_narrow(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
              const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
              unsigned *flags)
{
    return GL_KERNEL(pl, as, ae, bs, be, len, acc, flags, true);
}

GL_TGT static bool
kernel_wide(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
            const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
            unsigned *flags)
{
    return GL_KERNEL(pl, as, ae, bs, be, len, acc, flags, false);
}

/* One row against LEN rows of B as stored (s_mma_rowkernel): B decoded
   here, with the format's fields in registers for the whole block. */
GL_TGT __attribute__((always_inline)) static inline bool
row_lanes(const s_mma_plan *pl, const s_mma_dec *db, const int32_t *as,
          const int32_t *ae, const uint16_t *b, size_t ld, size_t len,
          uint32_t *acc, unsigned *flags, bool narrow)
{
    const s_mma_dec dl = *db;
    int32_t bs[S_MMA_TILE_N * GL_N], be[S_MMA_TILE_N * GL_N];
    bool spec = false;

    for (size_t t = 0; t < len; t++)
        spec |= GL_DECODE(&dl, b + t * ld, bs + t * GL_N, be + t * GL_N);
    if (spec)
        return false;
    return GL_KERNEL(pl, as, ae, bs, be, len, acc, flags, narrow);
}

GL_TGT static bool
row_narrow(const s_mma_plan *pl, const s_mma_dec *db, const uint16_t *a,
           const int32_t *as, const int32_t *ae, const uint16_t *b, size_t ld,
           size_t len, uint32_t *acc, unsigned *flags)
{
    (void)a;
    return row_lanes(pl, db, as, ae, b, ld, len, acc, flags, true);
}

GL_TGT static bool
row_wide(const s_mma_plan *pl, const s_mma_dec *db, const uint16_t *a,
         const int32_t *as, const int32_t *ae, const uint16_t *b, size_t ld,
         size_t len, uint32_t *acc, unsigned *flags)
{
    (void)a;
    return row_lanes(pl, db, as, ae, b, ld, len, acc, flags, false);
}

/* Whether plan PL with inputs FA, FB takes the binary32 path (for one
   row of A whose elements are in range: s_mma_fp_row_ok). */
static bool
fp_covers(const s_mma_plan *pl, const sf_format *fa, const sf_format *fb)
{
    return fa == &sf_format_bf16 && fb == &sf_format_bf16 && pl->narrow
           && pl->m->n <= 16 && fp_available();
}

/* A's side of the flag-checked path: AW, AP as s_mma_fp_side_a, zeros up
   to the next multiple of 16. */
static void
fast_side_a(const uint16_t *a, size_t k, uint32_t *aw, uint32_t *ap)
{
    (void)s_mma_fp_side_a(a, k, aw, ap);
    for (size_t t = k; t % 16 != 0; t++)
        aw[t] = ap[t] = 0;
}

/* After a chunk computed again: MXCSR without the flags other than
   inexact that the careful path may raise (a scaled product below
   2^-126 raises underflow), so that they do not fail the next chunk. */
static unsigned
fast_clean_csr(void)
{
    unsigned csr = _mm_getcsr();

    if (csr & S_MMA_MXCSR_BAD) {
        csr &= ~S_MMA_MXCSR_BAD;
        _mm_setcsr(csr);
    }
    return csr;
}

/* D = A B^T + C (NT: B is BT, the COLS x K matrix, row-major) or
   D = A B + C (B as stored, K x COLS) for one row of A (K elements, all
   in range), under an entered ENV and S_MMA_MXCSR_DEFAULT, chunk by
   chunk checked by the host's flags (a chunk that fails is computed by
   gemm_nt_fp or gemm_row_fp). */
GL_TGT_FP static void
fast_rows(const s_mma_plan *pl, bool nt, size_t cols, size_t k,
          const uint16_t *a, const uint16_t *b, const uint32_t *c, uint32_t *d,
          sf_env *env, unsigned *flags)
{
    uint32_t aw[S_MMA_FP_ROW_MAX + 16], ap[S_MMA_FP_ROW_MAX + 16];
    uint32_t out[S_MMA_FP_CHUNK];
    unsigned good = _mm_getcsr();

    fast_side_a(a, k, aw, ap);
    for (size_t j0 = 0; j0 < cols; j0 += S_MMA_FP_CHUNK) {
        size_t n = cols - j0 < S_MMA_FP_CHUNK ? cols - j0 : S_MMA_FP_CHUNK;
        const uint16_t *bj = nt ? b + j0 * k : b + j0;
        const uint32_t *cj = c != NULL ? c + j0 : NULL;
        unsigned f = 0, now;
        bool ok =
            nt ? fast_nt_chunk(pl, n, k, aw, ap, bj, cols - j0, cj, out, &f)
               : fast_row_chunk(pl, n, k, aw, ap, bj, cols, cj, out, &f);
        now = _mm_getcsr();
        if (ok && (now & S_MMA_MXCSR_BAD) == 0) {
            memcpy(d + j0, out, n * sizeof *out);
            *flags |= f;
            good = now;
        } else {
            _mm_setcsr(good);
            if (nt)
                gemm_nt_fp(pl, n, k, a, bj, cj, d + j0, env, flags);
            else
                gemm_row_fp(pl, n, k, a, bj, cols, cj, d + j0, env, flags);
            good = fast_clean_csr();
        }
    }
}

/* One row of BF16 on the binary32 path (fp_covers, s_mma_fp_row_ok):
   D = A B^T + C (NT) or A B + C as fast_rows, under the default MXCSR
   (the caller's restored); the inexact flag of the products is the
   host's. */
static void
fp_row(const s_mma_plan *pl, bool nt, size_t cols, size_t k, const uint16_t *a,
       const uint16_t *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
    unsigned saved = _mm_getcsr(), flags = 0;

    _mm_setcsr(S_MMA_MXCSR_DEFAULT);
    if (pl->m->n == 16)
        fast_rows(pl, nt, cols, k, a, b, c, d, env, &flags);
    else if (nt)
        gemm_nt_fp(pl, cols, k, a, b, c, d, env, &flags);
    else
        gemm_row_fp(pl, cols, k, a, b, cols, c, d, env, &flags);
    if (_mm_getcsr() & S_MMA_MXCSR_PE)
        flags |= SF_FLAG_INEXACT;
    _mm_setcsr(saved);
    env->flags |= flags;
}

#endif /* HAVE_VEC */

bool
GL_NAME2(s_mma_gemm_nt_, _covers)(const sf_mma_model *m, size_t rows,
                                  const sf_format *fa, const sf_format *fb)
{
#if HAVE_VEC
    s_mma_plan pl;

    if (rows != 1)
        return false;
    s_mma_plan_init(&pl, m, fa, fb, GL_N, true);
    return fp_covers(&pl, fa, fb);
#else
    (void)m;
    (void)rows;
    (void)fa;
    (void)fb;
    return false;
#endif
}

bool
GL_NAME(s_mma_gemm_nt_)(const sf_mma_model *m, size_t rows, size_t cols,
                        size_t k, const sf_format *fa, const void *a,
                        const sf_format *fb, const void *bt, const uint32_t *c,
                        uint32_t *d, sf_env *env)
{
#if HAVE_VEC
    s_mma_plan pl;

    if (!GL_NAME2(s_mma_gemm_nt_, _covers)(m, rows, fa, fb)
        || !s_mma_fp_row_ok(a, k))
        return false;
    s_mma_plan_init(&pl, m, fa, fb, GL_N, true);
    fp_row(&pl, true, cols, k, a, bt, c, d, env);
    return true;
#else
    (void)m;
    (void)rows;
    (void)cols;
    (void)k;
    (void)fa;
    (void)a;
    (void)fb;
    (void)bt;
    (void)c;
    (void)d;
    (void)env;
    return false;
#endif
}

bool
GL_NAME(s_mma_gemm_)(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                     const sf_format *fa, const void *a, const sf_format *fb,
                     const void *b, const uint32_t *c, uint32_t *d,
                     sf_env *env)
{
#if HAVE_VEC
    s_mma_plan pl;

    if (!GL_NAME2(sf_mma_gemm_, _available)())
        return false;
    s_mma_plan_init(&pl, m, fa, fb, GL_N, true);
    pl.decode = GL_DECODE;
    pl.row = pl.narrow ? row_narrow : row_wide;
    if (rows == 1 && fp_covers(&pl, fa, fb) && s_mma_fp_row_ok(a, k)) {
        /* one row of BF16: the binary32 path */
        fp_row(&pl, false, cols, k, a, b, c, d, env);
        return true;
    }
    s_mma_gemm_tiled(&pl, pl.narrow ? kernel_narrow : kernel_wide, rows, cols,
                     k, a, b, c, d, env);
    return true;
#else
    (void)m;
    (void)rows;
    (void)cols;
    (void)k;
    (void)fa;
    (void)a;
    (void)fb;
    (void)b;
    (void)c;
    (void)d;
    (void)env;
    return false;
#endif
}

#undef GL_NAME2
#undef GL_NAME
#undef GL_CAT
#undef GL_CAT_

/* s_gemm_block.h -- what the vector kernels of one instruction set share
   within a block, written once over GL_N 32-bit lanes: B's elements
   decoded, the accumulators C decoded and checked, the block's grid 2^q
   (q = emax - F), pass 1 of the integer kernel, and C's term and the
   rounding of a total in 32-bit lanes; included once, by gemm_avx2.c and
   gemm_avx512.c, before their kernels.

   The includer includes immintrin.h and defines GL_N (8 for AVX2, 16 for
   AVX-512) and GL_TGT (the target attribute of the integer kernels).
   Everything here is written with the few lane operations below, the one
   place where the two sets' intrinsics differ: gv_i holds GL_N int32_t
   lanes, gv_m a mask of them (all ones in a lane for AVX2, a bit a lane
   for AVX-512).  Not guarded. */

#if !defined(GL_N) || !defined(GL_TGT)
#error "s_gemm_block.h: define GL_N and GL_TGT first"
#endif

#define GV GL_TGT __attribute__((always_inline)) static inline

#if GL_N == 16
typedef __m512i gv_i;
typedef __mmask16 gv_m;
#else
typedef __m256i gv_i;
typedef __m256i gv_m;
#endif

/* X in every lane. */
GV gv_i
gv_k(int32_t x)
{
#if GL_N == 16
    return _mm512_set1_epi32(x);
#else
    return _mm256_set1_epi32(x);
#endif
}

/* GL_N lanes from P. */
GV gv_i
gv_load(const int32_t *p)
{
#if GL_N == 16
    return _mm512_loadu_si512((const void *)p);
#else
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
#endif
}

GV gv_i
gv_add(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_add_epi32(a, b);
#else
    return _mm256_add_epi32(a, b);
#endif
}

GV gv_i
gv_sub(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_sub_epi32(a, b);
#else
    return _mm256_sub_epi32(a, b);
#endif
}

/* GL_N elements at X, zero-extended. */
GV gv_i
gv_load16(const uint16_t *x)
{
#if GL_N == 16
    return _mm512_cvtepu16_epi32(
        _mm256_loadu_si256((const __m256i *)(const void *)x));
#else
    return _mm256_cvtepu16_epi32(
        _mm_loadu_si128((const __m128i *)(const void *)x));
#endif
}

GV void
gv_store(int32_t *p, gv_i a)
{
#if GL_N == 16
    _mm512_storeu_si512((void *)p, a);
#else
    _mm256_storeu_si256((__m256i *)(void *)p, a);
#endif
}

/* The larger of A and B (signed). */
GV gv_i
gv_max(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_max_epi32(a, b);
#else
    return _mm256_max_epi32(a, b);
#endif
}

GV gv_i
gv_and(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_and_si512(a, b);
#else
    return _mm256_and_si256(a, b);
#endif
}

GV gv_i
gv_or(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_or_si512(a, b);
#else
    return _mm256_or_si256(a, b);
#endif
}

/* A shifted right (logical) by N, a constant. */
GV gv_i
gv_srli(gv_i a, unsigned n)
{
#if GL_N == 16
    return _mm512_srli_epi32(a, n);
#else
    return _mm256_srli_epi32(a, (int)n);
#endif
}

/* A shifted right (logical) and left by the counts of N (a count above
   31: 0). */
GV gv_i
gv_srlv(gv_i a, gv_i n)
{
#if GL_N == 16
    return _mm512_srlv_epi32(a, n);
#else
    return _mm256_srlv_epi32(a, n);
#endif
}

GV gv_i
gv_sllv(gv_i a, gv_i n)
{
#if GL_N == 16
    return _mm512_sllv_epi32(a, n);
#else
    return _mm256_sllv_epi32(a, n);
#endif
}

/* The lanes where A = B. */
GV gv_m
gv_eq(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_cmpeq_epi32_mask(a, b);
#else
    return _mm256_cmpeq_epi32(a, b);
#endif
}

/* The lanes of A (not negative) that are not zero. */
GV gv_m
gv_has(gv_i a)
{
#if GL_N == 16
    return _mm512_test_epi32_mask(a, a);
#else
    return _mm256_cmpgt_epi32(a, _mm256_setzero_si256());
#endif
}

/* A where M is set, else B. */
GV gv_i
gv_sel(gv_m m, gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_mask_mov_epi32(b, m, a);
#else
    return _mm256_blendv_epi8(b, a, m);
#endif
}

/* 0 where M is set, else A. */
GV gv_i
gv_clear(gv_m m, gv_i a)
{
#if GL_N == 16
    return _mm512_maskz_mov_epi32((__mmask16)~m, a);
#else
    return _mm256_andnot_si256(m, a);
#endif
}

/* The lanes where A > B (signed), and where A < 0. */
GV gv_m
gv_gt(gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_cmpgt_epi32_mask(a, b);
#else
    return _mm256_cmpgt_epi32(a, b);
#endif
}

GV gv_m
gv_neg(gv_i a)
{
#if GL_N == 16
    return _mm512_cmplt_epi32_mask(a, _mm512_setzero_si512());
#else
    return _mm256_srai_epi32(a, 31);
#endif
}

/* The lanes of M where A != B, for a flag: on AVX2 a lane with any bit
   set (not all ones). */
GV gv_m
gv_differ(gv_m m, gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_mask_cmpneq_epi32_mask(m, a, b);
#else
    return _mm256_and_si256(m, _mm256_xor_si256(a, b));
#endif
}

/* The lanes set in A or B, in A and B, in B but not A. */
GV gv_m
gv_mor(gv_m a, gv_m b)
{
#if GL_N == 16
    return a | b;
#else
    return _mm256_or_si256(a, b);
#endif
}

GV gv_m
gv_mand(gv_m a, gv_m b)
{
#if GL_N == 16
    return a & b;
#else
    return _mm256_and_si256(a, b);
#endif
}

GV gv_m
gv_mandnot(gv_m a, gv_m b)
{
#if GL_N == 16
    return (gv_m)(b & ~a);
#else
    return _mm256_andnot_si256(a, b);
#endif
}

/* |A| (|INT32_MIN| reads as 2^31 unsigned). */
GV gv_i
gv_abs(gv_i a)
{
#if GL_N == 16
    return _mm512_abs_epi32(a);
#else
    return _mm256_abs_epi32(a);
#endif
}

/* A shifted left by N, a constant. */
GV gv_i
gv_slli(gv_i a, unsigned n)
{
#if GL_N == 16
    return _mm512_slli_epi32(a, n);
#else
    return _mm256_slli_epi32(a, (int)n);
#endif
}

/* A where M is set, else 0. */
GV gv_i
gv_keep(gv_m m, gv_i a)
{
#if GL_N == 16
    return _mm512_maskz_mov_epi32(m, a);
#else
    return _mm256_and_si256(m, a);
#endif
}

/* A | B where M is set, else A. */
GV gv_i
gv_or_where(gv_m m, gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_mask_or_epi32(a, m, a, b);
#else
    return _mm256_or_si256(a, _mm256_and_si256(m, b));
#endif
}

/* A | B where M is clear, else A. */
GV gv_i
gv_or_unless(gv_m m, gv_i a, gv_i b)
{
#if GL_N == 16
    return _mm512_mask_or_epi32(a, (__mmask16)~m, a, b);
#else
    return _mm256_or_si256(a, _mm256_andnot_si256(m, b));
#endif
}

/* The exponent of the top bit of MAG, 0 < MAG <= 2^31 (AVX2: from exact
   binary32 conversions of its bits 8..31 and 0..7; a rounded one would
   raise the host's inexact flag). */
GV gv_i
gv_top(gv_i mag)
{
#if GL_N == 16
    return _mm512_sub_epi32(_mm512_set1_epi32(31), _mm512_lzcnt_epi32(mag));
#else
    __m256i h = _mm256_srli_epi32(mag, 8);
    __m256i eh =
        _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(h)), 23);
    __m256i el =
        _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(
                              _mm256_and_si256(mag, _mm256_set1_epi32(0xFF)))),
                          23);

    return _mm256_sub_epi32(
        _mm256_blendv_epi8(el, _mm256_add_epi32(eh, _mm256_set1_epi32(8)),
                           _mm256_cmpgt_epi32(h, _mm256_setzero_si256())),
        _mm256_set1_epi32(127));
#endif
}

/* -A where M is set, else A. */
GV gv_i
gv_negate(gv_m m, gv_i a)
{
#if GL_N == 16
    return _mm512_mask_sub_epi32(a, m, _mm512_setzero_si512(), a);
#else
    return _mm256_sub_epi32(_mm256_xor_si256(a, m), m);
#endif
}

/* Whether a lane of M is set. */
GV bool
gv_any(gv_m m)
{
#if GL_N == 16
    return m != 0;
#else
    return !_mm256_testz_si256(m, m);
#endif
}

/* Flags of the lanes, as the scalar path raises them (any set bit). */
typedef struct
{
    gv_m inexact, underflow, overflow;
} s_vflags;

/* The accumulators' term on the grid 2^Q in 32-bit lanes (C decoded:
   CSIG, CELOW, CNEG its negative lanes), its lost bits into LOST: C's
   shift to the grid is at least 23 - F (C's exponent is part of emax) and
   F <= 29 (pl->narrow), so the term is below 2^30. */
GV gv_i
c_term32(gv_i csig, gv_i celow, gv_m cneg, gv_i q, gv_m *lost)
{
    gv_i shc = gv_sub(q, celow);
    /* a count outside 0..31 gives 0, so one of the two is 0 */
    gv_i r = gv_srlv(csig, shc);
    gv_i kc = gv_or(r, gv_sllv(csig, gv_sub(gv_k(0), shc)));

    *lost =
        gv_mor(*lost, gv_differ(gv_gt(shc, gv_k(0)), csig, gv_sllv(r, shc)));
    return gv_negate(cneg, kc);
}

/* The results of lanes whose total TOT (C and the block's terms on the
   grid 2^Q) fits in 32 bits: normalised once and truncated (RZ) to FP32,
   their flags into FL. */
GV gv_i
finish32(gv_i tot, gv_i q, uint32_t ovf_bits, s_vflags *fl)
{
    gv_m neg = gv_neg(tot);
    gv_i mag = gv_abs(tot);
    gv_m zs = gv_eq(mag, gv_k(0));
    gv_i t = gv_top(mag);
    gv_i ex = gv_add(q, t);
    gv_i sh = gv_max(gv_sub(t, gv_k(23)), gv_sub(gv_k(-149), q));
    /* a count outside 0..31 gives 0, so one of the two is 0; a left
       shift is at most 23 - t, so it keeps every bit */
    gv_i mm = gv_or(gv_srlv(mag, sh), gv_sllv(mag, gv_sub(gv_k(0), sh)));
    gv_m inexf = gv_differ(gv_gt(sh, gv_k(0)), mag, gv_sllv(mm, sh));
    gv_m normal = gv_gt(ex, gv_k(-127));
    gv_m ovf = gv_gt(ex, gv_k(127));
    gv_i bits =
        gv_add(gv_slli(gv_keep(normal, gv_add(ex, gv_k(126))), 23), mm);

    bits = gv_sel(ovf, gv_k((int32_t)ovf_bits), bits);
    /* a result that truncates to zero is +0 (SF_MMA_ZERO_POS) */
    bits = gv_or_where(gv_mand(neg, gv_mor(gv_has(mm), ovf)), bits,
                       gv_k(INT32_MIN));
    bits = gv_clear(zs, bits);
    inexf = gv_mandnot(zs, inexf);
    ovf = gv_mandnot(zs, ovf);
    fl->inexact = gv_mor(fl->inexact, gv_mor(inexf, ovf));
    fl->underflow = gv_mor(fl->underflow, gv_mandnot(normal, inexf));
    fl->overflow = gv_mor(fl->overflow, ovf);
    return bits;
}

/* GL_N elements of B at X decoded (s_mma_decode) into SIG and E;
   whether one is an Inf or NaN. */
GV bool
decode_lanes(const s_mma_dec *d, const uint16_t *x, int32_t *sig, int32_t *e)
{
    const gv_i emask = gv_k((int32_t)d->emask),
               smask = gv_k((int32_t)d->smask);
    gv_i v = gv_load16(x);
    gv_i ef = gv_and(gv_srlv(v, gv_k((int32_t)d->fb)), emask);
    gv_m sub = gv_eq(ef, gv_k(0)), sp = gv_eq(ef, emask);
    gv_i s = gv_or(gv_and(v, gv_k((int32_t)d->fmask)),
                   gv_clear(sub, gv_k((int32_t)d->hidden)));

    /* Inf and NaN, and a subnormal under DAZ: a zero significand */
    s = gv_clear(sp, s);
    if (d->daz)
        s = gv_clear(sub, s);
    gv_store(sig, gv_negate(gv_eq(gv_and(v, smask), smask),
                            gv_sllv(s, gv_k(d->shift))));
    gv_store(e, gv_sel(gv_eq(s, gv_k(0)), gv_k(S_MMA_ZERO_E),
                       gv_sub(gv_sel(sub, gv_k(1), ef), gv_k(d->ebias))));
    return gv_any(sp);
}

/* Whether one of the accumulators C is Inf or NaN. */
GV bool
c_special(gv_i c)
{
    gv_i e = gv_and(c, gv_k(0x7F800000));

    return gv_any(gv_eq(e, gv_k(0x7F800000)));
}

/* C of a block (CEF: its biased exponents): its significand CSIG (the
   hidden bit set where normal; 0 for a subnormal under DAZ), the exponent
   CELOW of its lowest bit, and, returned, its part of emax (the exponent
   of its top bit; the model's value for a zero C). */
GV gv_i
c_decode(const sf_mma_model *m, gv_i c, gv_i cef, gv_i *csig, gv_i *celow)
{
    gv_m csub = gv_eq(cef, gv_k(0));
    gv_i sig = gv_or_unless(csub, gv_and(c, gv_k(0x7FFFFF)), gv_k(0x800000));

    if (m->daz)
        sig = gv_clear(csub, sig);
    *csig = sig;
    *celow = gv_sub(gv_max(cef, gv_k(1)), gv_k(150));
    return gv_sel(gv_has(sig), gv_add(*celow, gv_k(23)),
                  gv_k(m->zero_c_in_max ? m->acc->emin : INT32_MIN));
}

/* The biased exponents of the accumulators C. */
GV gv_i
c_exp(gv_i c)
{
    return gv_and(gv_srli(c, 23), gv_k(0xFF));
}

/* The grid of a block: q = emax - F, emax the largest of EP (the
   products' part: the exponent of the largest product's top bit, or the
   kernel's value when there is none), C's part (C finite) and the model's
   floor; C decoded into CSIG and CELOW (c_decode). */
GV gv_i
block_grid(const s_mma_plan *pl, gv_i ep, gv_i c, gv_i *csig, gv_i *celow)
{
    const sf_mma_model *m = pl->m;
    gv_i emax = gv_max(ep, c_decode(m, c, c_exp(c), csig, celow));

    if (m->emax_floor != SF_MMA_NO_FLOOR)
        emax = gv_max(emax, gv_k(m->emax_floor));
    return gv_sub(emax, gv_k(pl->f));
}

/* The products' part of emax on the binary32 path, from MX (binary32
   bits, not negative: the largest 2^E_a 2^E_b of the block's products,
   0 where they are all zero), as the integer kernel has it. */
GV gv_i
fp_ep(const s_mma_plan *pl, gv_i mx)
{
    return gv_sel(gv_has(mx), gv_sub(gv_srli(mx, 23), gv_k(127)),
                  gv_k(2 * S_MMA_ZERO_E + pl->qadd));
}

/* Pass 1 of the integer kernel: the grid *Q of LEN products (A's
   exponents AE[t], B's BE[t GL_N ..]) and the accumulators C, C decoded
   (block_grid); false (nothing computed) where C holds an Inf or NaN. */
GV bool
kernel_grid(const s_mma_plan *pl, const int32_t *ae, const int32_t *be,
            size_t len, gv_i c, gv_i *q, gv_i *csig, gv_i *celow)
{
    gv_i mx = gv_k(2 * S_MMA_ZERO_E);

    if (c_special(c))
        return false;
    for (size_t t = 0; t < len; t++)
        mx = gv_max(mx, gv_add(gv_k(ae[t]), gv_load(be + t * GL_N)));
    *q = block_grid(pl, gv_add(mx, gv_k(pl->qadd)), c, csig, celow);
    return true;
}

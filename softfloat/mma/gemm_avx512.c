/* gemm_avx512 -- the AVX-512 GEMM path for truncating fused models
   (sm70..sm100 style), eight output columns per vector, bit-identical to
   the scalar path (flags included); blocks holding Inf or NaN operands
   are handed to the scalar block */
#include "softfloat/mma/mma_local.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_VEC 1
#include <immintrin.h>
#else
#define HAVE_VEC 0
#endif

/* Largest block the vector path keeps in registers and on the stack. */
#define VEC_MAX_N 64

bool
sf_mma_gemm_avx512_available(void)
{
#if HAVE_VEC
    /* The compiler's run-time library reads CPUID and XCR0 once (the
       AVX-512 features count only when the OS saves the zmm and opmask
       state); executing CPUID on every call costs a trap to the
       hypervisor in a virtual machine.  __builtin_cpu_init returns at
       once when that is done (it is, unless this runs from a
       constructor). */
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f")
           && __builtin_cpu_supports("avx512cd");
#else
    return false;
#endif
}

#if HAVE_VEC

#define TGT __attribute__((target("avx512f,avx512cd")))

/* A format's fields for decoding in 64-bit lanes. */
typedef struct
{
    int64_t fb;   /* fraction bits */
    int64_t bias; /* bias + fraction bits */
    uint64_t emask, fmask, smask, hidden;
} s_fdesc;

static s_fdesc
fdesc(const sf_format *f)
{
    s_fdesc d;

    d.fb = (int64_t)f->frac_bits;
    d.bias = (int64_t)f->bias + (int64_t)f->frac_bits;
    d.emask = ((uint64_t)1 << f->exp_bits) - 1;
    d.fmask = ((uint64_t)1 << f->frac_bits) - 1;
    d.smask = (uint64_t)1 << (f->exp_bits + f->frac_bits);
    d.hidden = (uint64_t)1 << f->frac_bits;
    return d;
}

/* Significand and exponent of bit 0 (value = sig * 2^elow) of each lane
   of X; a subnormal reads as zero under DAZ.  *SPECIAL gets the lanes
   whose exponent field is all ones. */
TGT static inline void
decode(__m512i x, const s_fdesc *d, bool daz, __m512i *sig, __m512i *elow,
       __mmask8 *special)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i ef =
        _mm512_and_si512(_mm512_srlv_epi64(x, _mm512_set1_epi64(d->fb)),
                         _mm512_set1_epi64((long long)d->emask));
    __m512i fr = _mm512_and_si512(x, _mm512_set1_epi64((long long)d->fmask));
    __mmask8 sub = _mm512_cmpeq_epi64_mask(ef, zero);
    __m512i s = _mm512_mask_or_epi64(fr, (__mmask8)~sub, fr,
                                     _mm512_set1_epi64((long long)d->hidden));

    if (daz)
        s = _mm512_mask_mov_epi64(s, sub, zero);
    *sig = s;
    *elow =
        _mm512_sub_epi64(_mm512_mask_mov_epi64(ef, sub, _mm512_set1_epi64(1)),
                         _mm512_set1_epi64(d->bias));
    *special =
        _mm512_cmpeq_epi64_mask(ef, _mm512_set1_epi64((long long)d->emask));
}

/* Flags of the lanes, as the scalar path raises them. */
typedef struct
{
    __mmask8 inexact, underflow, overflow;
} s_vflags;

/* One block of LEN products for eight columns: A (scalar per k, LEN
   elements) and B (row k at B + k * COLS) with the accumulators *ACC
   (FP32 bits in 64-bit lanes).  Returns false, computing nothing, when an
   operand is Inf or NaN. */
TGT static bool
block8(const sf_mma_model *m, const s_fdesc *da, const s_fdesc *db,
       const uint16_t *a, const uint16_t *b, size_t cols, size_t len,
       __m512i *acc, s_vflags *fl)
{
    static const s_fdesc dc = {23, 150, 0xFF, 0x7FFFFF, 0x80000000u, 0x800000};
    const __m512i zero = _mm512_setzero_si512();
    __m512i sig[VEC_MAX_N], elow[VEC_MAX_N];
    __mmask8 neg[VEC_MAX_N], special, lost = 0;
    __m512i csig, celow, emax, q, sum = zero;
    __mmask8 cneg, cnz;
    const int64_t fab = da->fb + db->fb;

    decode(*acc, &dc, m->daz, &csig, &celow, &special);
    if (special)
        return false;
    cneg = _mm512_test_epi64_mask(*acc, _mm512_set1_epi64(0x80000000));
    cnz = _mm512_cmpneq_epi64_mask(csig, zero);
    emax =
        _mm512_mask_mov_epi64(_mm512_set1_epi64(INT32_MIN), cnz,
                              _mm512_add_epi64(celow, _mm512_set1_epi64(23)));
    if (m->zero_c_in_max)
        emax = _mm512_mask_max_epi64(emax, (__mmask8)~cnz, emax,
                                     _mm512_set1_epi64(m->acc->emin));
    for (size_t k = 0; k < len; k++) {
        __m512i xa = _mm512_set1_epi64((long long)a[k]), sa, ea, sb, eb, p, e;
        __m512i xb = _mm512_cvtepu16_epi64(
            _mm_loadu_si128((const __m128i *)(const void *)(b + k * cols)));
        __mmask8 spa, spb, nz, nb;
        decode(xa, da, m->daz, &sa, &ea, &spa);
        decode(xb, db, m->daz, &sb, &eb, &spb);
        if (spa | spb)
            return false;
        p = _mm512_mul_epu32(sa, sb);
        e = _mm512_add_epi64(ea, eb);
        nz = _mm512_cmpneq_epi64_mask(p, zero);
        emax = _mm512_mask_max_epi64(
            emax, nz, emax, _mm512_add_epi64(e, _mm512_set1_epi64(fab)));
        nb = _mm512_test_epi64_mask(xb,
                                    _mm512_set1_epi64((long long)db->smask));
        sig[k] = p;
        elow[k] = e;
        neg[k] = (a[k] & da->smask) ? (__mmask8)~nb : nb;
    }
    if (m->emax_floor != SF_MMA_NO_FLOOR)
        emax = _mm512_max_epi64(emax, _mm512_set1_epi64(m->emax_floor));
    q = _mm512_sub_epi64(emax, _mm512_set1_epi64(m->frac_bits));

    /* every term on the grid 2^q, truncated; |kept| < 2^(F+2) */
    for (size_t k = 0; k <= len; k++) {
        __m512i s = k < len ? sig[k] : csig, el = k < len ? elow[k] : celow;
        __mmask8 ng = k < len ? neg[k] : cneg;
        __m512i sh = _mm512_sub_epi64(q, el);
        __mmask8 right = _mm512_cmpgt_epi64_mask(sh, zero);
        __m512i r = _mm512_srlv_epi64(s, sh);
        __m512i l = _mm512_sllv_epi64(s, _mm512_sub_epi64(zero, sh));
        __m512i kept = _mm512_mask_mov_epi64(l, right, r);
        lost |=
            _mm512_mask_cmpneq_epi64_mask(right, _mm512_sllv_epi64(r, sh), s);
        sum =
            _mm512_mask_sub_epi64(_mm512_add_epi64(sum, kept), ng, sum, kept);
    }

    {
        /* normalise once and truncate (RZ) to FP32 */
        __mmask8 negs = _mm512_cmplt_epi64_mask(sum, zero);
        __m512i mag = _mm512_abs_epi64(sum);
        __mmask8 zs = _mm512_cmpeq_epi64_mask(mag, zero);
        __m512i t =
            _mm512_sub_epi64(_mm512_set1_epi64(63), _mm512_lzcnt_epi64(mag));
        __m512i ex = _mm512_add_epi64(q, t);
        __m512i sh =
            _mm512_max_epi64(_mm512_sub_epi64(t, _mm512_set1_epi64(23)),
                             _mm512_sub_epi64(_mm512_set1_epi64(-149), q));
        __mmask8 rpos = _mm512_cmpgt_epi64_mask(sh, zero);
        __m512i mm = _mm512_mask_mov_epi64(
            _mm512_sllv_epi64(mag, _mm512_sub_epi64(zero, sh)), rpos,
            _mm512_srlv_epi64(mag, sh));
        __mmask8 inexf = _mm512_mask_cmpneq_epi64_mask(
            rpos, _mm512_sllv_epi64(mm, sh), mag);
        __mmask8 normal = _mm512_cmpge_epi64_mask(ex, _mm512_set1_epi64(-126));
        __mmask8 ovf = _mm512_cmpgt_epi64_mask(ex, _mm512_set1_epi64(127));
        __m512i field =
            _mm512_maskz_add_epi64(normal, ex, _mm512_set1_epi64(126));
        __m512i bits = _mm512_add_epi64(_mm512_slli_epi64(field, 23), mm);
        bits = _mm512_mask_mov_epi64(
            bits, ovf,
            _mm512_set1_epi64(m->overflow == SF_MMA_OVF_INF ? 0x7F800000
                                                            : 0x7F7FFFFF));
        /* a result that rounds to zero is +0 (SF_MMA_ZERO_POS) */
        bits = _mm512_mask_or_epi64(
            bits, negs & (_mm512_cmpneq_epi64_mask(mm, zero) | ovf), bits,
            _mm512_set1_epi64(0x80000000));
        *acc = _mm512_mask_mov_epi64(bits, zs, zero);
        inexf &= (__mmask8)~zs;
        ovf &= (__mmask8)~zs;
        fl->inexact |= lost | inexf | ovf;
        fl->underflow |= inexf & (__mmask8)~normal;
        fl->overflow |= ovf;
    }
    return true;
}

TGT static void
gemm8(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
      const sf_format *fa, const uint16_t *a, const sf_format *fb,
      const uint16_t *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
    const s_fdesc da = fdesc(fa), db = fdesc(fb);
    const size_t step = m->n, cols8 = cols - cols % 8;
    s_vflags fl = {0, 0, 0};

    for (size_t i = 0; i < rows; i++) {
        const uint16_t *arow = a + i * k;
        for (size_t j = 0; j < cols8; j += 8) {
            __m512i acc =
                c != NULL ? _mm512_cvtepu32_epi64(_mm256_loadu_si256(
                    (const __m256i *)(const void *)(c + i * cols + j)))
                          : _mm512_setzero_si512();
            for (size_t k0 = 0; k0 < k; k0 += step) {
                size_t len = k - k0 < step ? k - k0 : step;
                if (!block8(m, &da, &db, arow + k0, b + k0 * cols + j, cols,
                            len, &acc, &fl)) {
                    /* Inf or NaN in this block: the scalar block, lane by
                       lane */
                    uint64_t lane[8];
                    _mm512_storeu_si512((void *)lane, acc);
                    for (unsigned l = 0; l < 8; l++) {
                        s_mma_vec va = {arow + k0, 1, 2};
                        s_mma_vec vb = {b + k0 * cols + j + l, (ptrdiff_t)cols,
                                        2};
                        lane[l] = s_mma_block(m, fa, &va, fb, &vb, len, k0,
                                              lane[l], env);
                    }
                    acc = _mm512_loadu_si512((const void *)lane);
                }
            }
            _mm256_storeu_si256((__m256i *)(void *)(d + i * cols + j),
                                _mm512_cvtepi64_epi32(acc));
        }
        for (size_t j = cols8; j < cols; j++) {
            s_mma_vec va = {arow, 1, 2};
            s_mma_vec vb = {b + j, (ptrdiff_t)cols, 2};
            uint64_t acc = c != NULL ? c[i * cols + j] : 0;
            d[i * cols + j] =
                (uint32_t)s_mma_dot(m, fa, &va, fb, &vb, k, acc, env);
        }
    }
    if (fl.inexact)
        env->flags |= SF_FLAG_INEXACT;
    if (fl.underflow)
        env->flags |= SF_FLAG_UNDERFLOW;
    if (fl.overflow)
        env->flags |= SF_FLAG_OVERFLOW;
}

#endif /* HAVE_VEC */

bool
s_mma_gemm_avx512(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                  const sf_format *fa, const void *a, const sf_format *fb,
                  const void *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
#if HAVE_VEC
    if (m->n > VEC_MAX_N || !sf_mma_gemm_avx512_available())
        return false;
    gemm8(m, rows, cols, k, fa, a, fb, b, c, d, env);
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

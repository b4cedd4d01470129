/* s_lanes.h -- the fast subset of softfloat/s_fast.h in vector lanes, for
   the array calls; included once per instruction set.

   The includer defines S_LANES_512 (1 for AVX-512, 0 for AVX2) and
   S_LANES_Q (1 for the FP32 arithmetic copy, which has half the lanes),
   and includes immintrin.h; from them this file takes LN (lanes per
   step), L(name) (the name with the copy's suffix) and LT (the target
   attribute), and it undefines all five at its end.  Everything
   here is written with GCC's vector extensions on unsigned integer lanes
   and computes what s_fast.h computes, lane by lane: each kernel returns
   the result bits of LN elements, a mask of the lanes outside the fast
   subset ("bad": the caller then chooses those lanes' results by blends
   or runs them one by one through the scalar path) and a mask of the
   lanes that discarded bits (inexact).
   The one use of the floating-point unit is counting leading zeros on
   AVX2: a power of two or an integer below 2^24 converted to binary32 or
   binary64 is exact, so no rounding mode, flag or FTZ/DAZ setting of the
   host enters. */

#if S_LANES_512
#define LT                                                                    \
    __attribute__((target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512cd,"    \
                          "avx512vl,avx512dq")))
#if S_LANES_Q
#define LN 8
#define L(x) x##_avx512q
#else
#define LN 16
#define L(x) x##_avx512
#endif
#else
#define LT __attribute__((target("avx2,fma,f16c,bmi2")))
#if S_LANES_Q
#define LN 4
#define L(x) x##_avx2q
#else
#define LN 8
#define L(x) x##_avx2
#endif
#endif

typedef uint32_t L(vu) __attribute__((vector_size(4 * LN)));
typedef int32_t L(vi) __attribute__((vector_size(4 * LN)));
typedef uint64_t L(vq) __attribute__((vector_size(8 * LN)));
typedef int64_t L(vqi) __attribute__((vector_size(8 * LN)));
typedef uint16_t L(vh) __attribute__((vector_size(2 * LN)));
typedef uint8_t L(vb) __attribute__((vector_size(LN)));
typedef float L(vf) __attribute__((vector_size(4 * LN)));
typedef double L(vd) __attribute__((vector_size(8 * LN)));

#define LA LT static inline __attribute__((always_inline))

/* a where M is set, else b (M: all ones or zero in each lane) */
LA L(vu) L(sel)(L(vi) m, L(vu) a, L(vu) b)
{
#if LN == 8 && !S_LANES_512
    return (L(vu))_mm256_blendv_epi8((__m256i)b, (__m256i)a, (__m256i)m);
#else
    return ((L(vu))m & a) | (~(L(vu))m & b);
#endif
}

LA L(vq) L(selq)(L(vqi) m, L(vq) a, L(vq) b)
{
    return ((L(vq))m & a) | (~(L(vq))m & b);
}

/* C in every lane, as a value the compiler cannot see through: it is
   computed once outside the loop and kept (or spilled and reloaded)
   rather than rebuilt from an immediate at each use, which costs AVX2
   three instructions. */
LA L(vu) L(K)(uint32_t c)
{
    L(vu) v = (L(vu)){0} + c;

#if !S_LANES_512
    __asm__("" : "+x"(v));
#endif
    return v;
}

/* Whether any lane of M is set. */
LA bool L(any)(L(vi) m)
{
#if LN == 16
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0;
#elif LN == 8
    return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#else
    return !_mm_testz_si128((__m128i)m, (__m128i)m);
#endif
}

/* The lanes of M that are set, as bits (lane j: bit j). */
LA uint64_t L(bits)(L(vi) m)
{
#if LN == 16
    return _mm512_movepi32_mask((__m512i)m);
#elif LN == 8
    return (uint32_t)_mm256_movemask_ps((__m256)m);
#else
    return (uint32_t)_mm_movemask_ps((__m128)m);
#endif
}

LA L(vi) L(narrowmask)(L(vqi) m)
{
    return __builtin_convertvector(m, L(vi));
}

/* Leading zeros of Z, 0 < Z < 2^31 (other lanes: any value below 64). */
LA L(vu) L(clz32)(L(vu) z)
{
#if S_LANES_512 && LN == 16
    return (L(vu))_mm512_lzcnt_epi32((__m512i)z);
#else
    /* the exponents of z >> 8 and z & 0xFF as binary32 (both exact) */
    L(vf) fh = __builtin_convertvector((L(vi))(z >> 8), L(vf));
    L(vf) fl = __builtin_convertvector((L(vi))(z & 0xFF), L(vf));
    L(vu) eh = (L(vu))fh >> 23, el = (L(vu))fl >> 23;
    /* 31 - log2 z: 31 - (eh - 127 + 8) or 31 - (el - 127) */
    return (L(sel)((L(vi))(eh != 0), 150 - eh, 158 - el)) & 63;
#endif
}

/* Leading zeros of Z, 2^7 <= Z < 2^31 (other lanes: any value below
   64): the exponent of z >> 7 as binary32 (exact). */
LA L(vu) L(clz32_big)(L(vu) z)
{
#if S_LANES_512 && LN == 16
    return (L(vu))_mm512_lzcnt_epi32((__m512i)z);
#else
    L(vf) f = __builtin_convertvector((L(vi))(z >> 7), L(vf));
    /* 31 - (e - 127 + 7) */
    return (151 - ((L(vu))f >> 23)) & 63;
#endif
}

/* Leading zeros of Z, 0 < Z < 2^63 (other lanes: any value below 128). */
LA L(vq) L(clz64)(L(vq) z)
{
    /* the exponents of the high and low 32-bit halves as binary64: the
       high half (below 2^31) exactly; the low half as (lo - 2^31) + 2^31,
       both exact */
    L(vd) dh = __builtin_convertvector(
        __builtin_convertvector((L(vqi))(z >> 32), L(vi)), L(vd));
    L(vd) dl = __builtin_convertvector(
                   __builtin_convertvector((L(vqi))(z ^ 0x80000000u), L(vi)),
                   L(vd))
               + 2147483648.0;
    L(vq) eh = (L(vq))dh >> 52, el = (L(vq))dl >> 52;
    /* 63 - log2 z: 63 - (eh - 1023 + 32) or 63 - (el - 1023) */
    return L(selq)((L(vqi))(eh != 0), 1054 - eh, 1086 - el) & 127;
}

/*----------------------------------------------------------------------------
 * Rounding (s_fast_round): Z (0 < Z < 2^(W + 1)) shifted left by N to put
 * its top at bit W, E0 the biased exponent of 2^(W + k) (so the result's
 * exponent before rounding is E0 - N), SIGN the result's sign bit in
 * place.  Returns the bits; sets BAD for a result that is not a normal
 * finite value, INX where bits are discarded.
 *--------------------------------------------------------------------------*/
/* The increment mask (-1 where the kept magnitude goes up by one). */
/* (REM and HALF are below 2^31 or 2^63: signed comparisons, which AVX2
   has for both lane widths.) */
#define S_LANES_INC(T, TI, rm, kept, rem, half, neg)                          \
    ((rm) == SF_RNE   ? (TI)((TI)(rem) + (TI)((kept) & 1) > (half))           \
     : (rm) == SF_RNA ? (TI)((TI)(rem) >= (half))                             \
     : (rm) == SF_RUP ? (TI)((rem) != 0) & ~(neg)                             \
     : (rm) == SF_RDN ? (TI)((rem) != 0) & (neg)                              \
     : (rm) == SF_ROD ? (TI)((rem) != 0) & (TI)(((kept) & 1) == 0)            \
                      : (TI)((kept) != (kept)))

LA L(vu) L(round32)(unsigned fb, unsigned eb, unsigned w, L(vu) sign,
                    L(vu) z, L(vu) e0, L(vu) n, sf_round rm, L(vi) *bad,
                    L(vi) *inx)
{
    const unsigned sh = w - fb;
    const uint32_t emask = (1u << eb) - 1;
    const int32_t half = (int32_t)1 << (sh - 1);
    L(vu) er = e0 - n, rem, kept, bits;
    L(vi) inc;

    *bad |= (L(vi))(er - 1 >= L(K)(emask - 1));
    z <<= n & L(K)(31);
    rem = z & L(K)(((uint32_t)half << 1) - 1);
    kept = z >> sh;
    inc = S_LANES_INC(L(vu), L(vi), rm, kept, rem, (L(vi))L(K)((uint32_t)half),
                      (L(vi))(sign != 0));
    bits = ((er - 1) << fb) + kept - (L(vu))inc;
    /* signed: below 2^31 in every lane not already bad */
    *bad |= (L(vi))bits >= (L(vi))L(K)(emask << fb);
    *inx |= (L(vi))(rem != 0);
    return bits | sign;
}

LA L(vu) L(round64)(unsigned fb, unsigned eb, unsigned w, L(vq) sign,
                    L(vq) z, L(vq) e0, L(vq) n, sf_round rm, L(vi) *bad,
                    L(vi) *inx)
{
    const unsigned sh = w - fb;
    const uint64_t emask = (1u << eb) - 1;
    const int64_t half = (int64_t)1 << (sh - 1);
    L(vq) er = e0 - n, rem, kept, bits;
    L(vqi) inc, bq;

    bq = (L(vqi))(er - 1 >= emask - 1);
    z <<= n & 63;
    rem = z & (((uint64_t)half << 1) - 1);
    kept = z >> sh;
    inc = S_LANES_INC(L(vq), L(vqi), rm, kept, rem, half,
                      (L(vqi))(sign != 0));
    bits = ((er - 1) << fb) + kept - (L(vq))inc;
    bq |= (L(vqi))bits >= (int64_t)(emask << fb);
    *bad |= L(narrowmask)(bq);
    *inx |= L(narrowmask)((L(vqi))(rem != 0));
    return __builtin_convertvector(bits | sign, L(vu));
}

/*----------------------------------------------------------------------------
 * Arithmetic on BF16 and FP16 in 32-bit lanes (window W = 30) and FP32 in
 * 64-bit lanes (W = 62), as s_fast_add, s_fast_mul and s_fast_fma.
 *--------------------------------------------------------------------------*/
LA L(vi) L(notnormal32)(L(vu) e, unsigned eb)
{
    return (L(vi))(e - 1 >= L(K)((1u << eb) - 2));
}

LA L(vu) L(add32)(unsigned fb, unsigned eb, L(vu) a, L(vu) b, bool sub,
                  sf_round rm, L(vi) *bad, L(vi) *inx)
{
    const unsigned w = 30, s = w - 1 - fb;
    const uint32_t sbit = 1u << (fb + eb), fmask = (1u << fb) - 1;
    const L(vu) kmag = L(K)(sbit - 1), kfrac = L(K)(fmask);
    const L(vu) khid = L(K)(fmask + 1), k31 = L(K)(31);
    L(vu) ub = sub ? b ^ L(K)(sbit) : b;
    L(vu) ma = a & kmag, mb = ub & kmag;
    L(vi) sw = (L(vi))ma < (L(vi))mb; /* both below 2^15 */
    L(vu) x = L(sel)(sw, ub, a), y = L(sel)(sw, a, ub);
    L(vu) ex = (x & kmag) >> fb, ey = (y & kmag) >> fb;
    L(vu) d = ex - ey, sx, sy, flip, z; /* 0 <= d < 2^8 */

    *bad |= L(notnormal32)(ma >> fb, eb) | L(notnormal32)(mb >> fb, eb);
    sx = ((x & kfrac) | khid) << s;
    sy = ((((y & kfrac) | khid) << s) >> L(sel)((L(vi))d > (L(vi))k31, k31, d))
         | ((L(vu))((L(vi))d > (L(vi))L(K)(s)) & L(K)(1));
    flip = (L(vu))(((x ^ y) & L(K)(sbit)) != 0);
    z = sx + ((sy ^ flip) - flip);
    *bad |= (L(vi))(z == 0);
    /* a nonzero z is at least 2^(s - 1) >= 2^7: for d <= 1 both terms
       are multiples of 2^(s - 1), else z > 2^28 */
    return L(round32)(fb, eb, w, x & sbit, z, ex + 1,
                      L(clz32_big)(z) - (31 - w), rm, bad, inx);
}

LA L(vu) L(mul32)(unsigned fb, unsigned eb, L(vu) a, L(vu) b, sf_round rm,
                  L(vi) *bad, L(vi) *inx)
{
    const unsigned w = 30;
    const uint32_t sbit = 1u << (fb + eb), fmask = (1u << fb) - 1;
    const uint32_t bias = (1u << (eb - 1)) - 1;
    L(vu) ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;
    L(vu) p = ((a & fmask) | (fmask + 1)) * ((b & fmask) | (fmask + 1));

    *bad |= L(notnormal32)(ea, eb) | L(notnormal32)(eb_, eb);
    /* the product's top is bit 2 FB or 2 FB + 1 */
    return L(round32)(fb, eb, w, (a ^ b) & sbit, p,
                      ea + eb_ - bias + w - 2 * fb,
                      (w - 2 * fb) - (p >> (2 * fb + 1)), rm, bad, inx);
}

/* V shifted left by S (S >= 0) or right by -S with the lost bits jammed
   into bit 0. */
LA L(vu) L(shift_jam32)(L(vu) v, L(vi) s)
{
    L(vu) ls = (L(vu))(s & ~(s >> 31));
    L(vu) rs = (L(vu))(-s & (s >> 31));
    L(vu) lost;

    rs = L(sel)((L(vi))(rs > 31), rs - rs + 31, rs);
    lost = v & ((L(vu))((rs - rs + 1) << rs) - 1);
    return ((v << ls) >> rs) | ((L(vu))(lost != 0) & 1);
}

LA L(vq) L(shift_jam64)(L(vq) v, L(vqi) s)
{
    L(vq) ls = (L(vq))(s & ~(s >> 63));
    L(vq) rs = (L(vq))(-s & (s >> 63));
    L(vq) lost;

    rs = L(selq)((L(vqi))(rs > 63), rs - rs + 63, rs);
    lost = v & ((L(vq))((rs - rs + 1) << rs) - 1);
    return ((v << ls) >> rs) | ((L(vq))(lost != 0) & 1);
}

/* a * b + c: the larger of the product and c with its top at bit W - 1 =
   29, the smaller shifted with jamming (see s_fast_fma: the larger's
   bottom is at bit 8 or above, so the jammed bit never meets one of its
   bits, and the result's rounding quantum is 2^18 or coarser). */
LA L(vu) L(fma32)(unsigned fb, unsigned eb, L(vu) a, L(vu) b, L(vu) c,
                  sf_round rm, L(vi) *bad, L(vi) *inx)
{
    const unsigned w = 30;
    const uint32_t sbit = 1u << (fb + eb), fmask = (1u << fb) - 1;
    const int32_t bias = (1 << (eb - 1)) - 1;
    L(vu) ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;
    L(vu) ec = (c & (sbit - 1)) >> fb;
    L(vu) p = ((a & fmask) | (fmask + 1)) * ((b & fmask) | (fmask + 1));
    L(vu) q = (c & fmask) | (fmask + 1);
    L(vi) ptop = (L(vi))(2 * fb + (p >> (2 * fb + 1)));
    L(vi) tp = (L(vi))(ea + eb_) - bias + ptop - (int32_t)(2 * fb);
    L(vi) tq = (L(vi))ec, top, gt;
    L(vu) signp, signc, z, sign;
    L(vi) same;

    *bad |= L(notnormal32)(ea, eb) | L(notnormal32)(eb_, eb)
            | L(notnormal32)(ec, eb);
    top = (L(vi))L(sel)((L(vi))(tp > tq), (L(vu))tp, (L(vu))tq);
    p = L(shift_jam32)(p, (int32_t)(w - 1) - (top - tp) - ptop);
    q = L(shift_jam32)(q, (int32_t)(w - 1) - (top - tq) - (int32_t)fb);
    signp = (a ^ b) & sbit;
    signc = c & sbit;
    same = (L(vi))(signp == signc);
    gt = (L(vi))(p > q);
    z = L(sel)(same, p + q, L(sel)(gt, p - q, q - p));
    sign = L(sel)(same | gt, signp, signc);
    *bad |= (L(vi))(z == 0);
    return L(round32)(fb, eb, w, sign, z, (L(vu))top + 1,
                      L(clz32)(z) - (31 - w), rm, bad, inx);
}

/* FP32 in 64-bit lanes (W = 62), A, B and C the bits. */
LA L(vu) L(add64)(L(vq) a, L(vq) b, bool sub, sf_round rm, L(vi) *bad,
                  L(vi) *inx)
{
    const unsigned fb = 23, eb = 8, w = 62, s = w - 1 - fb;
    const uint64_t sbit = (uint64_t)1 << 31, fmask = ((uint64_t)1 << fb) - 1;
    L(vq) ub = sub ? b ^ sbit : b;
    L(vq) ma = a & (sbit - 1), mb = ub & (sbit - 1);
    L(vqi) sw = (L(vqi))(ma < mb);
    L(vq) x = L(selq)(sw, ub, a), y = L(selq)(sw, a, ub);
    L(vq) ex = (x & (sbit - 1)) >> fb, ey = (y & (sbit - 1)) >> fb;
    L(vq) d = ex - ey, sx, sy, flip, z;

    *bad |= L(narrowmask)((L(vqi))((ma >> fb) - 1 >= 254)
                          | (L(vqi))((mb >> fb) - 1 >= 254));
    sx = ((x & fmask) | (fmask + 1)) << s;
    sy = ((((y & fmask) | (fmask + 1)) << s)
          >> L(selq)((L(vqi))(d > 63), d - d + 63, d))
         | ((L(vq))(d > s) & 1);
    flip = (L(vq))(((x ^ y) & sbit) != 0);
    z = sx + ((sy ^ flip) - flip);
    *bad |= L(narrowmask)((L(vqi))(z == 0));
    return L(round64)(fb, eb, w, x & sbit, z, ex + 1, L(clz64)(z) - (63 - w),
                      rm, bad, inx);
}

LA L(vu) L(mul64)(L(vq) a, L(vq) b, sf_round rm, L(vi) *bad, L(vi) *inx)
{
    const unsigned fb = 23, eb = 8, w = 62;
    const uint64_t sbit = (uint64_t)1 << 31, fmask = ((uint64_t)1 << fb) - 1;
    L(vq) ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;
    L(vq) p = ((a & fmask) | (fmask + 1)) * ((b & fmask) | (fmask + 1));

    *bad |= L(narrowmask)((L(vqi))(ea - 1 >= 254) | (L(vqi))(eb_ - 1 >= 254));
    return L(round64)(fb, eb, w, (a ^ b) & sbit, p,
                      ea + eb_ - 127 + w - 2 * fb,
                      (w - 2 * fb) - (p >> (2 * fb + 1)), rm, bad, inx);
}

/* As fma32 with the larger top at bit 61 (s_fast_fma exactly). */
LA L(vu) L(fma64)(L(vq) a, L(vq) b, L(vq) c, sf_round rm, L(vi) *bad,
                  L(vi) *inx)
{
    const unsigned fb = 23, w = 62;
    const uint64_t sbit = (uint64_t)1 << 31, fmask = ((uint64_t)1 << fb) - 1;
    L(vq) ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;
    L(vq) ec = (c & (sbit - 1)) >> fb;
    L(vq) p = ((a & fmask) | (fmask + 1)) * ((b & fmask) | (fmask + 1));
    L(vq) q = (c & fmask) | (fmask + 1);
    L(vqi) ptop = (L(vqi))(2 * fb + (p >> (2 * fb + 1)));
    L(vqi) tp = (L(vqi))(ea + eb_) - 127 + ptop - (int64_t)(2 * fb);
    L(vqi) tq = (L(vqi))ec, top, gt, same;
    L(vq) signp, signc, z, sign;

    *bad |= L(narrowmask)((L(vqi))(ea - 1 >= 254) | (L(vqi))(eb_ - 1 >= 254)
                          | (L(vqi))(ec - 1 >= 254));
    top = (L(vqi))L(selq)((L(vqi))(tp > tq), (L(vq))tp, (L(vq))tq);
    p = L(shift_jam64)(p, (int64_t)(w - 1) - (top - tp) - ptop);
    q = L(shift_jam64)(q, (int64_t)(w - 1) - (top - tq) - (int64_t)fb);
    signp = (a ^ b) & sbit;
    signc = c & sbit;
    same = (L(vqi))(signp == signc);
    gt = (L(vqi))(p > q);
    z = L(selq)(same, p + q, L(selq)(gt, p - q, q - p));
    sign = L(selq)(same | gt, signp, signc);
    *bad |= L(narrowmask)((L(vqi))(z == 0));
    return L(round64)(fb, 8, w, sign, z, (L(vq))top + 1,
                      L(clz64)(z) - (63 - w), rm, bad, inx);
}

/*----------------------------------------------------------------------------
 * Conversions.
 *--------------------------------------------------------------------------*/
/* FP32 bits X to a format with FB fraction bits, EB exponent bits and the
   largest finite magnitude MAXB (bits), by the exponent and fraction
   fields alone: for a normal X whose rounded value is normal and finite
   in the target (s_fast_narrow with a change of bias). */
LA L(vu) L(narrow)(unsigned fb, unsigned eb, uint32_t maxb, L(vu) x,
                   sf_round rm, L(vi) *bad, L(vi) *inx)
{
    const unsigned sh = 23 - fb;
    const uint32_t rebias = 127 - ((1u << (eb - 1)) - 1);
    const int32_t half = (int32_t)1 << (sh - 1);
    L(vu) mag = x & L(K)(0x7FFFFFFF), sign = x >> 31;
    L(vu) er = (mag >> 23) - L(K)(rebias + 1);
    L(vu) kept = (mag >> sh) - L(K)(rebias << fb);
    L(vu) rem = mag & L(K)(((uint32_t)half << 1) - 1);
    L(vu) res;
    L(vi) inc;

    /* the exponent before rounding: a normal of the target (an E4M3 with
       the all-ones field is finite below MAXB); er is that exponent
       minus one */
    *bad |= (L(vi))(er >= L(K)(maxb >> fb));
    inc = S_LANES_INC(L(vu), L(vi), rm, kept, rem, (L(vi))L(K)((uint32_t)half),
                      (L(vi))(sign != 0));
    res = kept - (L(vu))inc;
    /* signed: both below 2^31 */
    *bad |= (L(vi))res > (L(vi))L(K)(maxb);
    *inx |= (L(vi))(rem != 0);
    return res | (sign << (fb + eb));
}

#ifdef S_LANES_CONVERT
/* For the lanes of X that L(narrow) set in *BAD: +-0 (+-0, no flag, in
   every mode and setting), +-Inf, NaN and values
   that overflow the target (its exponent past the largest binade, or
   rounded past MAXB) chosen lane by lane as s_convert and s_round_pack
   choose them (Inf, or the NaN of a format without Inf, or the largest
   finite value when saturating or rounding toward zero; NaN quieted with
   its payload truncated, the one NaN of a format without Inf, or the
   default NaN), and FP32's subnormals (far below half the target's
   smallest subnormal: +-0 under DAZ or FTZ, else +-0 or the smallest
   subnormal by the mode; tiny in either rule), their flags ORed into
   *FLAGS; R the bits of L(narrow) elsewhere.  *BAD keeps the lanes left:
   the normal values whose results are tiny. */
LA L(vu) L(narrow_special)(unsigned fb, unsigned eb, uint32_t maxb,
                           L(vu) x, L(vu) r, sf_round rm, const s_cv_env *ce,
                           L(vi) *bad, unsigned *flags)
{
    const uint32_t rebias = 127 - ((1u << (eb - 1)) - 1);
    const uint32_t sbit = 1u << (fb + eb);
    const L(vu) zero = {0};
    L(vu) mag = x & 0x7FFFFFFF, sgn = (x >> 31) << (fb + eb);
    L(vi) e = (L(vi))(mag >> 23) - (int32_t)(rebias + 1);
    L(vi) infnan = (L(vi))(mag >= 0x7F800000);
    L(vi) nan = (L(vi))(mag > 0x7F800000), inf = infnan & ~nan;
    L(vi) big = (L(vi))(e >= (int32_t)(maxb >> fb)) & ~infnan;
    L(vi) small = (L(vi))(e < 0);
    L(vi) ovf =
        big | (~small & ~big & ~infnan & (L(vi))((r & (sbit - 1)) > maxb));
    L(vi) to_inf, sub = (L(vi))(mag < 0x00800000) & (L(vi))(mag != zero);
    L(vi) zl = (L(vi))(mag == zero);
    L(vu) q;

    r = L(sel)(zl, sgn, r);
    *bad &= ~zl;
    if (L(any)(sub)) {
        L(vi) up;
        switch (rm) {
        case SF_RUP:
            up = (L(vi))(sgn == zero);
            break;
        case SF_RDN:
            up = (L(vi))(sgn != zero);
            break;
        case SF_ROD: /* an even 0 made odd */
            up = ~(L(vi))zero;
            break;
        default: /* SF_RNE, SF_RNA (below half), SF_RTZ */
            up = (L(vi))zero;
            break;
        }
        if (ce->daz || ce->ftz)
            up = (L(vi))zero;
        if (!ce->daz)
            *flags |= SF_FLAG_UNDERFLOW | SF_FLAG_INEXACT;
        r = L(sel)(sub, sgn | ((L(vu))up & 1), r);
        *bad &= ~sub;
    }
    ovf &= *bad;
    switch (rm) {
    case SF_RNE:
    case SF_RNA:
        to_inf = ovf;
        break;
    case SF_RUP:
        to_inf = ovf & (L(vi))(sgn == zero);
        break;
    case SF_RDN:
        to_inf = ovf & (L(vi))(sgn != zero);
        break;
    default: /* SF_RTZ, SF_ROD */
        to_inf = (L(vi))zero;
        break;
    }
    if (ce->saturate)
        to_inf = (L(vi))zero;
    else
        to_inf |= inf;
    r = L(sel)(ovf | inf, L(sel)(to_inf, zero + ce->inf_bits,
                                 zero + ce->max_bits) | sgn, r);
    if (L(any)(ovf))
        *flags |= SF_FLAG_OVERFLOW | SF_FLAG_INEXACT;
    if (L(any)(nan)) {
        q = ce->dnan ? zero + ce->dnan_bits
                     : sgn | ce->nan_bits
                           | ((mag & 0x7FFFFF) >> (23 - fb) & (sbit - 1));
        r = L(sel)(nan, q, r);
        if (L(any)(nan & (L(vi))((mag & 0x400000) == zero)))
            *flags |= SF_FLAG_INVALID;
    }
    *bad &= ~(ovf | infnan);
    return r;
}

/*----------------------------------------------------------------------------
 * FP32 to BF16 for every value, in 2 LN lanes of 16 bits: HI and LO the
 * top and bottom halves of the FP32 bits.  BF16 has FP32's exponent
 * range, so the result is HI rounded by LO for every finite value,
 * subnormal ones included (both formats' subnormals have the quantum of
 * the smallest normal's, 2^-133 and 2^-149, 16 bits apart); what is left
 * is chosen lane by lane as s_convert and s_round_pack choose it:
 *   +-0: HI (LO is 0), no flag;
 *   subnormal: +-0 without a flag under DAZ; else tiny (always, or after
 *     rounding unless it rounds to 2^-126 at BF16's precision with an
 *     unbounded exponent), +-0 with underflow and inexact under FTZ when
 *     tiny, else the rounded HI with inexact, and underflow when tiny;
 *   overflow (HI rounded up to the Inf pattern, which only a mode that
 *     rounds away from zero does): Inf, or the largest finite value when
 *     saturating, with overflow and inexact;
 *   Inf: HI, or the largest finite value when saturating;
 *   NaN: HI with the quiet bit set (payload truncated, sign kept), or the
 *     default NaN under SF_NAN_DEFAULT; invalid when signalling.
 * Returns the bits and ORs the flags into *FLAGS.
 *--------------------------------------------------------------------------*/
typedef uint16_t L(vw) __attribute__((vector_size(4 * LN)));
typedef int16_t L(vwi) __attribute__((vector_size(4 * LN)));

/* Whether any lane of M is set. */
LA bool L(anyw)(L(vwi) m)
{
    return L(any)((L(vi))m);
}

LA L(vw) L(narrow_bf16_all)(L(vw) hi, L(vw) lo, sf_round rm,
                            const s_cv_env *ce, unsigned *flags)
{
    const L(vw) zero = {0};
    L(vw) mag = hi & 0x7FFF, sign = hi & 0x8000, r, rem2;
    L(vwi) nz = (L(vwi))(lo != zero), neg = (L(vwi))(sign != zero);
    L(vwi) infnan = (L(vwi))(mag >= 0x7F80);
    L(vwi) nan = infnan & ((L(vwi))(mag != 0x7F80) | nz);
    L(vwi) subn = (L(vwi))(mag < 0x0080) & (L(vwi))((mag | lo) != zero);
    L(vwi) inc, inexact, ovf, zeroes = {0}, tiny, inc2;

    switch (rm) {
    case SF_RNE: /* lo > 0x8000 - (hi & 1) */
        inc = (L(vwi))(lo > (L(vw))(0x8000 - (hi & 1)));
        break;
    case SF_RNA:
        inc = (L(vwi))(lo >= 0x8000);
        break;
    case SF_RUP:
        inc = nz & ~neg;
        break;
    case SF_RDN:
        inc = nz & neg;
        break;
    case SF_ROD:
        inc = nz & (L(vwi))((hi & 1) == zero);
        break;
    default: /* SF_RTZ */
        inc = zeroes;
        break;
    }
    r = hi - (L(vw))(inc & ~infnan);
    inexact = nz & ~infnan;
    if (SF_UNLIKELY(L(anyw)(subn))) {
        if (ce->daz) {
            r = (r & ~(L(vw))subn) | (sign & (L(vw))subn);
            inexact &= ~subn;
        } else {
            tiny = subn;
            if (ce->after) {
                /* rounded at one more bit (the quantum 2^-134): up to
                   2^-126 from 0x7F.8000 or above (an odd last bit) */
                rem2 = lo & 0x7FFF;
                switch (rm) {
                case SF_RNE:
                case SF_RNA:
                    inc2 = (L(vwi))(rem2 >= 0x4000);
                    break;
                case SF_RUP:
                    inc2 = (L(vwi))(rem2 != zero) & ~neg;
                    break;
                case SF_RDN:
                    inc2 = (L(vwi))(rem2 != zero) & neg;
                    break;
                default: /* SF_RTZ; SF_ROD keeps the odd bit */
                    inc2 = zeroes;
                    break;
                }
                tiny &= ~((L(vwi))(mag == 0x7F) & (L(vwi))(lo >= 0x8000)
                          & inc2);
            }
            if (ce->ftz) {
                r = (r & ~(L(vw))tiny) | (sign & (L(vw))tiny);
                inexact |= tiny;
                if (L(anyw)(tiny))
                    *flags |= SF_FLAG_UNDERFLOW;
            } else if (L(anyw)(tiny & inexact)) {
                *flags |= SF_FLAG_UNDERFLOW;
            }
        }
    }
    ovf = (L(vwi))((r & 0x7FFF) == 0x7F80) & ~infnan;
    if (L(anyw)(ovf))
        *flags |= SF_FLAG_OVERFLOW;
    if (ce->saturate) /* 0x7F80 - 1: the largest finite magnitude */
        r += (L(vw))(ovf | (infnan & ~nan));
    if (L(anyw)(nan)) {
        L(vw) q = ce->dnan ? zero + (uint16_t)ce->dnan_bits : hi | 0x0040;
        r = (r & ~(L(vw))nan) | (q & (L(vw))nan);
        if (L(anyw)(nan & (L(vwi))((hi & 0x0040) == zero)))
            *flags |= SF_FLAG_INVALID;
    }
    if (L(anyw)(inexact))
        *flags |= SF_FLAG_INEXACT;
    return r;
}
#endif

/* BF16 bits to FP32 bits: exact for every value but NaN (quieted),
   subnormals (DAZ) and Inf (saturation): those lanes are bad. */
LA L(vu) L(widen_bf16)(L(vu) x, L(vi) *bad)
{
    L(vu) e = x & 0x7F80, f = x & 0x7F;

    *bad |= (L(vi))(e == 0x7F80) | ((L(vi))(f != 0) & (L(vi))(e == 0));
    return x << 16;
}

/* FP16 bits to FP32 bits (NaN, Inf and subnormals: bad). */
LA L(vu) L(widen_f16)(L(vu) x, L(vi) *bad)
{
    const L(vu) k31 = L(K)(31), zero = {0};
    L(vu) mag = x & L(K)(0x7FFF), e = mag >> 10, f = mag & L(K)(0x3FF);
    L(vu) r;
    L(vi) e0 = (L(vi))(e == zero), e31 = (L(vi))(e == k31);

    *bad |= e31 | ((L(vi))(f != zero) & e0);
    r = L(sel)(e0, mag << 13, (mag << 13) + L(K)(112u << 23));
    r = L(sel)(e31, L(K)(0x7F800000), r);
    return r | ((x & L(K)(0x8000)) << 16);
}

/*----------------------------------------------------------------------------
 * Loads and stores of LN elements at index I.
 *--------------------------------------------------------------------------*/
LA L(vu) L(ld16)(const void *p, size_t i)
{
#if LN == 8
    return (L(vu))_mm256_cvtepu16_epi32(
        _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)p + i)));
#elif LN == 16
    return (L(vu))_mm512_cvtepu16_epi32(_mm256_loadu_si256(
        (const __m256i *)(const void *)((const uint16_t *)p + i)));
#else
    L(vh) h;

    memcpy(&h, (const uint16_t *)p + i, sizeof h);
    return __builtin_convertvector(h, L(vu));
#endif
}

LA L(vu) L(ld32)(const void *p, size_t i)
{
    L(vu) v;

    memcpy(&v, (const uint32_t *)p + i, sizeof v);
    return v;
}

LA void L(st8)(void *p, size_t i, L(vu) v)
{
#if LN == 8 && !S_LANES_512
    /* lanes below 2^8: two unsigned saturating packs leave bytes 0-3 of
       each 128-bit half */
    __m256i b = _mm256_packus_epi32((__m256i)v, (__m256i)v);
    uint32_t lo, hi;

    b = _mm256_packus_epi16(b, b);
    lo = (uint32_t)_mm256_cvtsi256_si32(b);
    hi = (uint32_t)_mm256_extract_epi32(b, 4);
    memcpy((uint8_t *)p + i, &lo, 4);
    memcpy((uint8_t *)p + i + 4, &hi, 4);
#else
    L(vb) b = __builtin_convertvector(v, L(vb));

    memcpy((uint8_t *)p + i, &b, sizeof b);
#endif
}

LA void L(st16)(void *p, size_t i, L(vu) v)
{
    L(vh) h = __builtin_convertvector(v, L(vh));

    memcpy((uint16_t *)p + i, &h, sizeof h);
}

LA void L(st32)(void *p, size_t i, L(vu) v)
{
    memcpy((uint32_t *)p + i, &v, sizeof v);
}

/*----------------------------------------------------------------------------
 * Drivers: LN elements a step; the lanes of a step outside the fast
 * subset go one by one through the portable path (their results and
 * flags are the scalar operations'; the vector paths run without events
 * and SR draws, so the order of those calls against the vector lanes
 * shows nowhere): an arithmetic step blends their results into its
 * vector before the store (the output may be an input), a conversion
 * (whose arrays do not overlap) stores them over its vector's; the last
 * n mod LN elements go through the portable path.
 *--------------------------------------------------------------------------*/
#ifdef S_LANES_ARITH
LA void L(arith_drive)(int op, int fmt, const void *a, const void *b,
                       const void *c, void *out, size_t n, sf_round rm,
                       sf_env *env)
{
    L(vi) inx = {0};
    size_t i = 0;

    for (; n - i >= LN; i += LN) {
        L(vi) bad = {0}, bi = {0};
        L(vu) r;
        if (fmt == S_ARR_F32) {
            L(vq) qa = __builtin_convertvector(L(ld32)(a, i), L(vq));
            L(vq) qb = __builtin_convertvector(L(ld32)(b, i), L(vq));
            if (op == S_ARR_FMA) {
                L(vq) qc = __builtin_convertvector(L(ld32)(c, i), L(vq));
                r = L(fma64)(qa, qb, qc, rm, &bad, &bi);
            } else if (op == S_ARR_MUL) {
                r = L(mul64)(qa, qb, rm, &bad, &bi);
            } else {
                r = L(add64)(qa, qb, op == S_ARR_SUB, rm, &bad, &bi);
            }
        } else {
            const unsigned fb = fmt == S_ARR_BF16 ? 7 : 10;
            const unsigned eb = fmt == S_ARR_BF16 ? 8 : 5;
            L(vu) ua = L(ld16)(a, i), ub = L(ld16)(b, i);
            if (op == S_ARR_FMA)
                r = L(fma32)(fb, eb, ua, ub, L(ld16)(c, i), rm, &bad, &bi);
            else if (op == S_ARR_MUL)
                r = L(mul32)(fb, eb, ua, ub, rm, &bad, &bi);
            else
                r = L(add32)(fb, eb, ua, ub, op == S_ARR_SUB, rm, &bad, &bi);
        }
        inx |= bi & ~bad;
        if (SF_UNLIKELY(L(any)(bad))) {
            uint32_t z[LN] = {0};
            L(vu) zv;
            s_arr_lanes(op, fmt, a, b, c, i, L(bits)(bad), rm, env, z);
            memcpy(&zv, z, sizeof zv);
            r = L(sel)(bad, zv, r);
        }
        if (fmt == S_ARR_F32)
            L(st32)(out, i, r);
        else
            L(st16)(out, i, r);
    }
    if (i < n)
        s_arr_step(op, fmt, a, b, c, out, i, n, rm, env);
    if (L(any)(inx))
        env->flags |= SF_FLAG_INEXACT;
}

/* The entry for operation S_LANES_ARITH, the format and the mode made
   constants: BF16 and FP16 in 32-bit lanes, or (S_LANES_Q) FP32 in 64-bit
   lanes, half as many, so that a vector of them is one register (wider
   vectors of 64-bit lanes would have their comparisons done lane by
   lane). */
LT static void L(arith_entry)(int fmt, const void *a, const void *b,
                              const void *c, void *out, size_t n,
                              sf_round rm, sf_env *env)
{
#if S_LANES_Q
#define S_LANES_CALL(m)                                                       \
    L(arith_drive)(S_LANES_ARITH, S_ARR_F32, a, b, c, out, n, m, env)
    (void)fmt;
#else
#define S_LANES_CALL(m)                                                       \
    do {                                                                      \
        if (fmt == S_ARR_BF16)                                                \
            L(arith_drive)(S_LANES_ARITH, S_ARR_BF16, a, b, c, out, n, m,     \
                           env);                                              \
        else                                                                  \
            L(arith_drive)(S_LANES_ARITH, S_ARR_F16, a, b, c, out, n, m,      \
                           env);                                              \
    } while (0)
#endif
    S_ARR_BY_MODE(S_LANES_CALL, rm);
#undef S_LANES_CALL
}
#endif

#if defined(S_LANES_CONVERT) && !S_LANES_Q
/* A step of L(cv_drive) with lanes outside the fast subset (*BAD; *R the
   kernel's bits elsewhere): a narrowing's specials by L(narrow_special),
   the step stored, and the lanes left through sf_convert one by one.
   Out of line, so that the loop keeps its registers. */
LT __attribute__((noinline)) static void
L(cv_rare)(int kind, const void *in, void *out, size_t i, const L(vu) *rp,
           const L(vi) *badp, sf_round rm, const s_cv_env *ce,
           unsigned *flags, sf_env *env)
{
    L(vu) r = *rp;
    L(vi) bad = *badp;

    if (kind == S_CV_BF16_F32 || kind == S_CV_F16_F32) {
        L(st32)(out, i, r);
    } else {
        unsigned fb, eb;
        uint32_t maxb;
        s_cv_params(kind, &fb, &eb, &maxb);
        r = L(narrow_special)(fb, eb, maxb, L(ld32)(in, i), r, rm, ce, &bad,
                              flags);
        if (kind == S_CV_F32_BF16 || kind == S_CV_F32_F16)
            L(st16)(out, i, r);
        else
            L(st8)(out, i, r);
    }
    if (L(any)(bad))
        s_cv_lanes(kind, in, out, i, L(bits)(bad), rm, env);
}

LA void L(cv_drive)(int kind, const void *in, void *out, size_t n,
                    sf_round rm, sf_env *env)
{
    L(vi) inx = {0};
    size_t i = 0;
    unsigned flags = 0;
    s_cv_env ce;

    s_cv_env_of(s_cv_to(kind), env, &ce);
    for (; n - i >= LN; i += LN) {
        L(vi) bad = {0}, bi = {0};
        L(vu) r;
        if (kind == S_CV_BF16_F32) {
            r = L(widen_bf16)(L(ld16)(in, i), &bad);
        } else if (kind == S_CV_F16_F32) {
            r = L(widen_f16)(L(ld16)(in, i), &bad);
        } else {
            unsigned fb, eb;
            uint32_t maxb;
            s_cv_params(kind, &fb, &eb, &maxb);
            r = L(narrow)(fb, eb, maxb, L(ld32)(in, i), rm, &bad, &bi);
        }
        if (SF_UNLIKELY(L(any)(bad))) {
            /* a narrowing's +-0 lanes (+-0, no flag) here, the others out
               of line */
            bool rare = kind == S_CV_BF16_F32 || kind == S_CV_F16_F32;
            if (!rare) {
                unsigned fb, eb;
                uint32_t maxb;
                L(vu) x = L(ld32)(in, i);
                L(vi) z = (L(vi))((x & 0x7FFFFFFF) == 0);
                s_cv_params(kind, &fb, &eb, &maxb);
                rare = L(any)(bad & ~z);
                r = L(sel)(z, (x >> 31) << (fb + eb), r);
            }
            if (rare) {
                inx |= bi & ~bad;
                L(cv_rare)(kind, in, out, i, &r, &bad, rm, &ce, &flags, env);
                continue;
            }
        }
        inx |= bi; /* (a +-0 lane discards nothing) */
        if (kind == S_CV_BF16_F32 || kind == S_CV_F16_F32)
            L(st32)(out, i, r);
        else if (kind == S_CV_F32_BF16 || kind == S_CV_F32_F16)
            L(st16)(out, i, r);
        else
            L(st8)(out, i, r);
    }
    if (i < n)
        s_cv_step(kind, in, out, i, n, rm, env);
    if (L(any)(inx))
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
}

LT static void L(cv_entry)(int kind, const void *in, void *out, size_t n,
                           sf_round rm, sf_env *env)
{
#define S_LANES_CALL(m)                                                       \
    do {                                                                      \
        switch (kind) {                                                       \
        case S_CV_F32_BF16:                                                   \
            L(cv_drive)(S_CV_F32_BF16, in, out, n, m, env);                   \
            break;                                                            \
        case S_CV_F32_F16:                                                    \
            L(cv_drive)(S_CV_F32_F16, in, out, n, m, env);                    \
            break;                                                            \
        case S_CV_F32_E4M3:                                                   \
            L(cv_drive)(S_CV_F32_E4M3, in, out, n, m, env);                   \
            break;                                                            \
        default:                                                              \
            L(cv_drive)(S_CV_F32_E5M2, in, out, n, m, env);                   \
            break;                                                            \
        }                                                                     \
    } while (0)
    if (kind == S_CV_BF16_F32) /* exact: one loop for every mode */
        L(cv_drive)(S_CV_BF16_F32, in, out, n, rm, env);
    else if (kind == S_CV_F16_F32)
        L(cv_drive)(S_CV_F16_F32, in, out, n, rm, env);
    else
        S_ARR_BY_MODE(S_LANES_CALL, rm);
#undef S_LANES_CALL
}
#endif

#undef LA
#undef LN
#undef L
#undef LT
#undef S_LANES_Q
#undef S_LANES_512

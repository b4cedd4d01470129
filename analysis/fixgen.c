/* fixgen.c -- the fixture input generator splitmix64-ih12 (fixgen.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/fixgen.h"

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define IH_CENTRE 393210 /* 12 x 65535 / 2 */

uint64_t
fixgen_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

bool
fixgen_dyadic_from_f64_bits(uint64_t bits, fixgen_dyadic *out)
{
    uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
    int32_t biased = (int32_t)((bits >> 52) & 0x7ff);
    bool neg = (bits >> 63) != 0;
    int32_t e;

    if (biased == 0x7ff)
        return false;
    if (biased == 0 && frac == 0) {
        out->m = 0;
        out->e = 0;
        return true;
    }
    /* value = frac' 2^(e), frac' with the hidden bit for normals */
    if (biased != 0) {
        frac |= UINT64_C(1) << 52;
        e = biased - 1075;
    } else
        e = -1074;
    while ((frac & 1) == 0) {
        frac >>= 1;
        e++;
    }
    if (frac >= (UINT64_C(1) << 24))
        return false;
    out->m = neg ? -(int32_t)frac : (int32_t)frac;
    out->e = e;
    return true;
}

int32_t
fixgen_irwin_hall(uint64_t seed, uint32_t stream, uint64_t index)
{
    uint64_t key = fixgen_mix(seed + GOLDEN * ((uint64_t)stream + 1));
    int32_t s = 0;

    for (uint64_t j = 0; j < 3; j++) {
        uint64_t w = fixgen_mix(key + GOLDEN * (3 * index + j + 1));
        for (unsigned f = 0; f < 4; f++)
            s += (int32_t)((w >> (16 * f)) & 0xffff);
    }
    return s - IH_CENTRE;
}

/* The number of significant bits of X > 0. */
static int32_t
bit_length(uint64_t x)
{
    int32_t n = 0;

    while (x != 0) {
        x >>= 1;
        n++;
    }
    return n;
}

/* MAG 2^EXP (MAG < 2^63; a set bit 0 may stand for a nonzero tail below
   it, see add_dyadic) rounded to FMT to nearest, ties to even, with sign
   NEG; the bits. */
static uint16_t
round_pack(bool neg, uint64_t mag, int32_t exp, fixgen_format fmt)
{
    const int32_t f = fmt == FIXGEN_BF16 ? 7 : 10;
    const int32_t bias = fmt == FIXGEN_BF16 ? 127 : 15;
    const uint64_t max_field = fmt == FIXGEN_BF16 ? 255 : 31;
    const int32_t emin = 1 - bias;
    int32_t top, lsb, sh;
    uint64_t q, r;

    if (mag == 0)
        return 0;
    /* the leading bit is 2^top; the kept last bit 2^lsb (subnormals: the
       format's smallest) */
    top = exp + bit_length(mag) - 1;
    lsb = (top < emin ? emin : top) - f;
    sh = lsb - exp;
    if (sh <= 0) {
        q = mag << -sh; /* at most f + 1 bits */
    } else if (sh >= 63) {
        q = 0; /* below half of 2^lsb, since mag < 2^63 */
    } else {
        uint64_t rem = mag & ((UINT64_C(1) << sh) - 1);
        uint64_t half = UINT64_C(1) << (sh - 1);
        q = mag >> sh;
        if (rem > half || (rem == half && (q & 1) != 0))
            q++;
    }
    /* exponent field of 2^lsb's binade below q's leading bit: q = 2^f
       carries into the field, q = 2^(f + 1) into the next */
    if (lsb + f - emin >= (int32_t)max_field)
        r = max_field << f;
    else {
        r = ((uint64_t)(lsb + f - emin) << f) + q;
        if ((r >> f) >= max_field)
            r = max_field << f;
    }
    if (neg)
        r |= UINT64_C(1) << 15;
    return (uint16_t)r;
}

/* A * 2^EA + B * 2^EB as (sign, magnitude < 2^63, exponent).  Each
   operand has at most 44 significant bits; both are placed with their
   leading bit at 2^61, and the one of smaller weight is shifted right by
   the difference D with every lost bit jammed into bit 0.  Up to D = 18
   nothing is lost (the low 18 bits are zero); beyond it the result keeps
   its leading bit at 2^60 or above, at least 49 bits over the rounding
   position of an 11-bit format, and the jammed odd bit 0 puts the
   computed magnitude on the same side of every rounding boundary and
   tie as the exact one. */
static void
add_dyadic(int64_t a, int32_t ea, int64_t b, int32_t eb, bool *neg,
           uint64_t *mag, int32_t *e)
{
    bool na = a < 0, nb = b < 0;
    uint64_t ma = na ? (uint64_t)(-a) : (uint64_t)a;
    uint64_t mb = nb ? (uint64_t)(-b) : (uint64_t)b;
    int32_t d;

    if (mb == 0 || ma == 0) {
        *neg = ma != 0 ? na : nb;
        *mag = ma != 0 ? ma : mb;
        *e = ma != 0 ? ea : eb;
        return;
    }
    {
        int32_t la = 62 - bit_length(ma), lb = 62 - bit_length(mb);
        ma <<= la;
        ea -= la;
        mb <<= lb;
        eb -= lb;
    }
    if (ea < eb) {
        uint64_t tm = ma;
        int32_t te = ea;
        bool tn = na;
        ma = mb;
        ea = eb;
        na = nb;
        mb = tm;
        eb = te;
        nb = tn;
    }
    d = ea - eb;
    if (d >= 62)
        mb = 1;
    else if (d > 0) {
        bool lost = (mb & ((UINT64_C(1) << d) - 1)) != 0;
        mb >>= d;
        if (lost)
            mb |= 1;
    }
    *e = ea;
    if (na == nb) {
        *neg = na;
        *mag = ma + mb;
    } else if (ma >= mb) {
        *neg = na;
        *mag = ma - mb;
    } else {
        *neg = nb;
        *mag = mb - ma;
    }
}

uint16_t
fixgen_round(fixgen_dyadic mean, fixgen_dyadic std, int32_t t,
             fixgen_format fmt)
{
    bool neg;
    uint64_t mag;
    int32_t e;

    /* std T 2^-16: |std.m T| < 2^24 x 2^19 */
    add_dyadic((int64_t)std.m * t, std.e - 16, mean.m, mean.e, &neg, &mag, &e);
    return round_pack(neg, mag, e, fmt);
}

void
fixgen_fill(uint64_t seed, uint32_t stream, fixgen_dyadic mean,
            fixgen_dyadic std, fixgen_format fmt, uint64_t first, size_t n,
            uint16_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fixgen_round(mean, std,
                              fixgen_irwin_hall(seed, stream, first + i), fmt);
}

bool
fixgen_dyadic_from_bits(uint16_t b, fixgen_format fmt, fixgen_dyadic *out)
{
    const int32_t f = fmt == FIXGEN_BF16 ? 7 : 10;
    const int32_t bias = fmt == FIXGEN_BF16 ? 127 : 15;
    const uint32_t max_field = fmt == FIXGEN_BF16 ? 255 : 31;
    uint32_t field = ((uint32_t)b >> f) & max_field;
    int32_t m = (int32_t)(b & ((1u << f) - 1));
    int32_t e = (field == 0 ? 1 : (int32_t)field) - bias - f;

    if (field == max_field)
        return false;
    if (field != 0)
        m += (int32_t)1 << f;
    if (m == 0)
        e = 0;
    while (m != 0 && (m & 1) == 0) {
        m >>= 1;
        e++;
    }
    out->m = (b & 0x8000) != 0 ? -m : m;
    out->e = e;
    return true;
}

bool
fixgen_fill_u_scaled(uint64_t seed, uint32_t stream, fixgen_dyadic std,
                     fixgen_format fmt, const uint16_t *u, fixgen_dyadic scale,
                     uint64_t bh, uint64_t n, uint64_t d, uint16_t *out)
{
    uint64_t idx = 0;

    for (uint64_t p = 0; p < bh; p++)
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t c = 0; c < d; c++, idx++) {
                fixgen_dyadic x, mean;
                int64_t m;
                if (!fixgen_dyadic_from_bits(u[p * d + c], fmt, &x))
                    return false;
                m = (int64_t)x.m * scale.m;
                if (m >= ((int64_t)1 << 24) || m <= -((int64_t)1 << 24))
                    return false;
                mean.m = (int32_t)m;
                mean.e = m != 0 ? x.e + scale.e : 0;
                out[idx] = fixgen_round(
                    mean, std, fixgen_irwin_hall(seed, stream, idx), fmt);
            }
    return true;
}

int
fixgen_mirror_block_kind(uint64_t n, uint64_t block, uint64_t stride,
                         uint64_t nb)
{
    uint64_t nblk = n / block + (n % block != 0);

    /* the length of block j is block, the last one's n - j block */
#define LEN(j) ((j) + 1 < nblk ? block : n - (j)*block)
    if (nb % (2 * stride) < stride && nb + stride < nblk
        && LEN(nb) == LEN(nb + stride))
        return 1;
    if (nb >= stride && (nb - stride) % (2 * stride) < stride && nb < nblk
        && LEN(nb - stride) == LEN(nb))
        return 2;
    return 0;
#undef LEN
}

/* B (FMT bits) times X, rounded once; false when B is not finite. */
static bool
scale_bits(uint16_t b, fixgen_dyadic x, fixgen_format fmt, uint16_t *out)
{
    const fixgen_dyadic zero = {0, 0};
    fixgen_dyadic v, p;

    if (!fixgen_dyadic_from_bits(b, fmt, &v))
        return false;
    if (v.m == 0 || x.m == 0) {
        /* a zero product keeps the sign of the product */
        bool neg = ((b & 0x8000) != 0) != (x.m < 0);
        *out = neg ? 0x8000 : 0;
        return true;
    }
    /* |v.m| < 2^11 and |x.m| < 2^12: the product has at most 23 bits */
    p.m = v.m * x.m;
    p.e = v.e + x.e;
    *out = fixgen_round(p, zero, 0, fmt);
    return true;
}

bool
fixgen_mirror_apply(uint16_t *t, fixgen_format fmt, fixgen_mirror_role role,
                    const fixgen_mirror *m, uint64_t bh, uint64_t n,
                    uint64_t d)
{
    const int32_t lim = (int32_t)1 << 12;

    if (m->half > d)
        return false;
    if (role == FIXGEN_MIRROR_Q) {
        for (uint64_t r = 0; r < bh * n; r++)
            for (uint64_t c = m->half; c < d; c++)
                t[r * d + c] = 0;
        return true;
    }
    if (m->block == 0 || m->stride == 0)
        return false;
    if (role == FIXGEN_MIRROR_K
        && (m->big.m >= lim || m->big.m <= -lim || m->small.m >= lim
            || m->small.m <= -lim))
        return false;
    for (uint64_t p = 0; p < bh; p++) {
        uint16_t *h = t + p * n * d;
        /* every copy first, from the sources as they are, then the
           scaling */
        for (uint64_t i = 0; i < n; i++) {
            const uint16_t *src;
            if (fixgen_mirror_block_kind(n, m->block, m->stride, i / m->block)
                != 2)
                continue;
            src = h + (i - m->stride * m->block) * d;
            for (uint64_t c = 0; c < d; c++)
                h[i * d + c] =
                    (uint16_t)(role == FIXGEN_MIRROR_K && c >= m->half
                                   ? src[c] ^ 0x8000u
                                   : src[c]);
        }
        for (uint64_t i = 0; role == FIXGEN_MIRROR_K && i < n; i++) {
            bool paired =
                fixgen_mirror_block_kind(n, m->block, m->stride, i / m->block)
                != 0;
            for (uint64_t c = m->half; c < d; c++)
                if (!scale_bits(h[i * d + c], paired ? m->big : m->small, fmt,
                                &h[i * d + c]))
                    return false;
        }
    }
    return true;
}

uint64_t
fixgen_hash_add(uint64_t acc, uint64_t first, const uint16_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc += fixgen_mix(((first + i) << 16) + b[i] + GOLDEN);
    return acc;
}

uint64_t
fixgen_hash_final(uint64_t acc, uint64_t n)
{
    return fixgen_mix(n + acc);
}

bool
fixgen_hash_parse(const char *s, uint64_t *out)
{
    uint64_t h = 0;
    size_t n = 0;

    if (s == NULL || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return false;
    for (const char *p = s + 2; *p != '\0'; p++, n++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a') + 10;
        else if (*p >= 'A' && *p <= 'F')
            d = (unsigned)(*p - 'A') + 10;
        else
            return false;
        if (n == 16)
            return false;
        h = h << 4 | d;
    }
    if (n != 16)
        return false;
    *out = h;
    return true;
}

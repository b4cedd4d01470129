/* bfma_model.c -- the block-FMA model of bfma_model.h. */

#include "bfma_model.h"

#include <string.h>

#include "probe_vectors.h"

typedef struct
{
    int nan, inf, zero, sign;
    uint64_t m; /* integer significand */
    int e;      /* unnormalised exponent (of the 2^0 position of 1.f) */
    int lsb;    /* exponent of the significand's last bit */
} num;

static num
dec16(int fmt, uint16_t bits)
{
    int mb = fmt == PV_BF16 ? 7 : 10, eb = fmt == PV_BF16 ? 8 : 5;
    int bias = (1 << (eb - 1)) - 1, emask = (1 << eb) - 1;
    int ex = (bits >> mb) & emask;
    uint32_t fr = bits & ((1u << mb) - 1u);
    num x;
    memset(&x, 0, sizeof x);
    x.sign = bits >> 15;
    if (ex == emask) {
        x.nan = fr != 0;
        x.inf = fr == 0;
        return x;
    }
    if (ex == 0 && fr == 0) {
        x.zero = 1;
        return x;
    }
    x.m = ex ? (fr | (1u << mb)) : fr;
    x.e = ex ? ex - bias : 1 - bias;
    x.lsb = x.e - mb;
    return x;
}

static num
dec32(uint32_t bits)
{
    int ex = (int)((bits >> 23) & 0xFF);
    uint32_t fr = bits & 0x7FFFFFu;
    num x;
    memset(&x, 0, sizeof x);
    x.sign = (int)(bits >> 31);
    if (ex == 0xFF) {
        x.nan = fr != 0;
        x.inf = fr == 0;
        return x;
    }
    if (ex == 0 && fr == 0) {
        x.zero = 1;
        return x;
    }
    x.m = ex ? (fr | 0x800000u) : fr;
    x.e = ex ? ex - 127 : -126;
    x.lsb = x.e - 23;
    return x;
}

/* m * 2^sh truncated toward zero (sh may be negative). */
static uint64_t
shift(uint64_t m, int sh)
{
    if (sh >= 0)
        return m << sh;
    if (sh <= -64)
        return 0;
    return m >> -sh;
}

/* Round-toward-zero of sign * mag * 2^scale to FP32 bits. */
static uint32_t
pack_rz(int sign, uint64_t mag, int scale)
{
    int p = 63, lead, q;
    uint64_t sig, bits;
    uint32_t s = sign ? 0x80000000u : 0u;
    if (mag == 0)
        return 0;
    while (!(mag >> p))
        p--;
    lead = p + scale;
    if (lead > 127)
        return s | 0x7F800000u;
    q = (lead < -126 ? -126 : lead) - 23;
    sig = shift(mag, scale - q);
    if (sig == 0)
        return 0; /* truncated to nothing: +0, as the hardware gives */
    bits = ((uint64_t)(q + 23 + 127 - 1) << 23) + sig;
    return s | (uint32_t)bits;
}

#define F_BITS 25

/* One k16 block: 16 products and c. */
uint32_t
bfma_block(int fmt, const uint16_t *a, const uint16_t *b, uint32_t cbits,
           int zc)
{
    num pa[16], pb[16], c = dec32(cbits);
    int nan = c.nan, pinf = c.inf && !c.sign, ninf = c.inf && c.sign;
    int have = 0, emax = 0;
    int64_t s = 0;
    for (int i = 0; i < 16; i++) {
        pa[i] = dec16(fmt, a[i]);
        pb[i] = dec16(fmt, b[i]);
        if (pa[i].nan || pb[i].nan)
            nan = 1;
        if ((pa[i].inf && pb[i].zero) || (pa[i].zero && pb[i].inf))
            nan = 1;
        if (pa[i].inf || pb[i].inf) {
            if (pa[i].sign ^ pb[i].sign)
                ninf = 1;
            else
                pinf = 1;
        }
    }
    if (nan || (pinf && ninf))
        return 0x7FFFFFFFu;
    if (pinf)
        return 0x7F800000u;
    if (ninf)
        return 0xFF800000u;
    for (int i = 0; i < 16; i++) {
        if (pa[i].zero || pb[i].zero)
            continue;
        int e = pa[i].e + pb[i].e;
        if (!have || e > emax)
            emax = e;
        have = 1;
    }
    if (!c.zero) {
        if (!have || c.e > emax)
            emax = c.e;
        have = 1;
    } else if (zc == BFMA_ZC_MINUS126) {
        if (!have || -126 > emax)
            emax = -126;
        have = 1;
    }
    if (!have)
        return 0; /* all terms zero */
    if (zc == BFMA_FLOOR133 && emax < -133)
        emax = -133;
    for (int i = 0; i < 16; i++) {
        if (pa[i].zero || pb[i].zero)
            continue;
        uint64_t q =
            shift(pa[i].m * pb[i].m, pa[i].lsb + pb[i].lsb - (emax - F_BITS));
        s += (pa[i].sign ^ pb[i].sign) ? -(int64_t)q : (int64_t)q;
    }
    if (!c.zero) {
        uint64_t q = shift(c.m, c.lsb - (emax - F_BITS));
        s += c.sign ? -(int64_t)q : (int64_t)q;
    }
    if (s == 0)
        return 0;
    return pack_rz(s < 0, (uint64_t)(s < 0 ? -s : s), emax - F_BITS);
}

uint32_t
bfma_chain(int fmt, const uint16_t *a, const uint16_t *b, uint32_t c, int k,
           int reading)
{
    for (int s = 0; s < k; s += 16)
        c = bfma_block(fmt, a + s, b + s, c, reading);
    return c;
}

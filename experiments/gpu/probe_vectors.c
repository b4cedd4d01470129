/* probe_vectors.c -- the directed and random vectors of the tensor-core
 * probe.  See probe_vectors.h for the contract. */

#include "probe_vectors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*----------------------------------------------------------------------
 * Formats
 *----------------------------------------------------------------------*/

typedef struct
{
    int ebits, mbits;
    int emin; /* exponent of the smallest normal */
    int emax; /* exponent of the largest finite */
    int esub; /* exponent of the smallest subnormal */
    uint16_t inf, qnan, snan;
} pv_fmtinfo;

static const pv_fmtinfo fmts[PV_NFMT] = {
    {8, 7, -126, 127, -133, 0x7F80u, 0x7FC0u, 0x7F81u},
    {5, 10, -14, 15, -24, 0x7C00u, 0x7E00u, 0x7C01u},
};

static const char *const set_names[PV_NSET] = {
    "selfcheck16", "selfcheck32", "selfcheck64", "directed16", "directed32",
    "directed64",  "normal",      "wide",        "cancel",     "attn",
    "tiny",        "chain32",     "chain64",
};

static const int set_k[PV_NSET] = {16, 32, 64, 16, 32, 64, 16,
                                   16, 16, 16, 16, 32, 64};

const char *
pv_set_name(int set)
{
    return set >= 0 && set < PV_NSET ? set_names[set] : NULL;
}

int
pv_set_from_name(const char *name)
{
    for (int s = 0; s < PV_NSET; s++)
        if (strcmp(name, set_names[s]) == 0)
            return s;
    return -1;
}

int
pv_set_k(int set)
{
    return set >= 0 && set < PV_NSET ? set_k[set] : 0;
}

int
pv_set_random(int set)
{
    return set >= PV_NORMAL && set < PV_NSET;
}

const char *
pv_fmt_name(int fmt)
{
    return fmt == PV_BF16 ? "bf16" : fmt == PV_F16 ? "f16" : NULL;
}

int
pv_fmt_from_name(const char *name)
{
    if (strcmp(name, "bf16") == 0)
        return PV_BF16;
    if (strcmp(name, "f16") == 0)
        return PV_F16;
    return -1;
}

double
pv_pow2(int e)
{
    uint64_t u;
    double x;
    if (e >= -1022)
        u = (uint64_t)(e + 1023) << 52;
    else
        u = UINT64_C(1) << (e + 1074);
    memcpy(&x, &u, sizeof x);
    return x;
}

uint32_t
pv_round_bits(double x, int ebits, int mbits)
{
    uint64_t u, m, r;
    uint32_t sign;
    int ex, e, lead, big, q, bias = (1 << (ebits - 1)) - 1;
    int emin = 1 - bias;
    memcpy(&u, &x, sizeof u);
    sign = (uint32_t)(u >> 63) << (ebits + mbits);
    ex = (int)((u >> 52) & 0x7FF);
    m = u & ((UINT64_C(1) << 52) - 1);
    if (ex == 0x7FF)
        return sign | ((uint32_t)((1u << ebits) - 1) << mbits);
    if (ex == 0 && m == 0)
        return sign;
    if (ex == 0) {
        e = -1074;
    } else {
        m |= UINT64_C(1) << 52;
        e = ex - 1075;
    }
    /* x = m * 2^e; lead = position of the leading bit of m. */
    lead = 63;
    while (!(m >> lead))
        lead--;
    big = lead + e;                        /* exponent of x */
    q = (big < emin ? emin : big) - mbits; /* quantum of the result */
    if (e >= q) {
        r = m << (e - q);
    } else {
        int sh = q - e;
        if (sh > 63)
            return sign;
        r = m >> sh;
        uint64_t rem = m & ((UINT64_C(1) << sh) - 1);
        uint64_t half = UINT64_C(1) << (sh - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
    }
    /* r includes the hidden bit, so adding it to the exponent field of
     * the quantum (minus one) encodes normals, subnormals and the carry
     * into the next binade alike. */
    uint64_t bits = ((uint64_t)(q + mbits + bias - 1) << mbits) + r;
    if ((bits >> mbits) >= (uint64_t)((1 << ebits) - 1))
        return sign | ((uint32_t)((1u << ebits) - 1) << mbits);
    return sign | (uint32_t)bits;
}

static uint16_t
enc(int fmt, double x)
{
    return (uint16_t)pv_round_bits(x, fmts[fmt].ebits, fmts[fmt].mbits);
}

static uint32_t
f32(double x)
{
    return pv_round_bits(x, 8, 23);
}

#define P2(e) pv_pow2(e)
#define F32_NEG0 UINT32_C(0x80000000)
#define F32_INF UINT32_C(0x7F800000)
#define F32_MAX UINT32_C(0x7F7FFFFF)

uint64_t
pv_hash(uint64_t h, const pv_vec *v, int k)
{
    unsigned char buf[4 * PV_KMAX + 4];
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        buf[n++] = (unsigned char)(v->a[i] & 0xFF);
        buf[n++] = (unsigned char)(v->a[i] >> 8);
    }
    for (int i = 0; i < k; i++) {
        buf[n++] = (unsigned char)(v->b[i] & 0xFF);
        buf[n++] = (unsigned char)(v->b[i] >> 8);
    }
    for (int i = 0; i < 4; i++)
        buf[n++] = (unsigned char)(v->c >> (8 * i));
    for (size_t i = 0; i < n; i++) {
        h ^= buf[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/*----------------------------------------------------------------------
 * Directed sets
 *----------------------------------------------------------------------*/

typedef struct
{
    pv_vec *out;
    size_t cap, n;
    int fmt, k;
    pv_vec scratch;
} builder;

/* Starts a new all-zero vector with a printf-style tag. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static pv_vec *
add(builder *b, const char *fmt, ...);

static pv_vec *
add(builder *b, const char *fmt, ...)
{
    pv_vec *v = b->n < b->cap ? &b->out[b->n] : &b->scratch;
    va_list ap;
    memset(v, 0, sizeof *v);
    va_start(ap, fmt);
    vsnprintf(v->tag, sizeof v->tag, fmt, ap);
    va_end(ap);
    b->n++;
    return v;
}

/* Puts the product x * y at position k (x, y rounded into the format). */
static void
put(builder *b, pv_vec *v, int k, double x, double y)
{
    v->a[k] = enc(b->fmt, x);
    v->b[k] = enc(b->fmt, y);
}

/* Puts a product of value s * 2^e at position k with both factors in
 * range: the exponent is split between a and b. */
static void
put_p2(builder *b, pv_vec *v, int k, double s, int e)
{
    int ea = e / 2;
    put(b, v, k, s * P2(ea), P2(e - ea));
}

static void
selfcheck(builder *b)
{
    int k = b->k;
    pv_vec *v;
    for (int i = 0; i < k; i++) {
        v = add(b, "onehot a %d", i);
        v->a[i] = enc(b->fmt, 1.0);
        for (int j = 0; j < k; j++)
            v->b[j] = enc(b->fmt, (double)(j + 1));
        v->expect = f32((double)(i + 1));
    }
    for (int i = 0; i < k; i++) {
        v = add(b, "onehot b %d", i);
        v->b[i] = enc(b->fmt, 1.0);
        for (int j = 0; j < k; j++)
            v->a[j] = enc(b->fmt, (double)(j + 1));
        v->expect = f32((double)(i + 1));
    }
    v = add(b, "c only 3.5");
    v->c = f32(3.5);
    v->expect = v->c;
    v = add(b, "c 100 + onehot %d", k - 1);
    v->c = f32(100.0);
    v->a[k - 1] = enc(b->fmt, 1.0);
    v->b[k - 1] = enc(b->fmt, 7.0);
    v->expect = f32(107.0);
    v = add(b, "all ones");
    for (int j = 0; j < k; j++) {
        v->a[j] = enc(b->fmt, 1.0);
        v->b[j] = enc(b->fmt, (double)(j + 1));
    }
    v->expect = f32((double)(k * (k + 1) / 2));
    v = add(b, "all zero");
    v->expect = 0;
}

static void
paper_probes(builder *b)
{
    const pv_fmtinfo *fi = &fmts[b->fmt];
    double maxsig = 1.0 - P2(-(fi->mbits + 1));
    pv_vec *v;
    v = add(b, "P1 subnormal a * 2^7");
    put(b, v, 0, P2(fi->esub), 128.0);
    v = add(b, "P2 (1-2^-p)^2");
    put(b, v, 0, maxsig, maxsig);
    v = add(b, "P3 4x 0.5*2^-24, c=1");
    for (int j = 0; j < 4; j++)
        put(b, v, j, 0.5, P2(-24));
    v->c = f32(1.0);
    v = add(b, "P4 1*2 + 1*(2^-23+2^-24)");
    put(b, v, 0, 1.0, 2.0);
    put(b, v, 1, 1.0, P2(-23) + P2(-24));
    v = add(b, "P4 negated");
    put(b, v, 0, -1.0, 2.0);
    put(b, v, 1, -1.0, P2(-23) + P2(-24));
    v = add(b, "P5 1*1, c=-(1-2^-24)");
    put(b, v, 0, 1.0, 1.0);
    v->c = f32(-(1.0 - P2(-24)));
    v = add(b, "P6 2^-24*(1+.5+.5), c=1");
    put(b, v, 0, P2(-24), 1.0);
    put(b, v, 1, P2(-24), 0.5);
    put(b, v, 2, P2(-24), 0.5);
    v->c = f32(1.0);
    for (int k = 2; k <= b->k; k++) {
        v = add(b, "P7 k=%d", k);
        put(b, v, 0, 1.0, 1.0);
        put(b, v, k - 1, P2(-23), 1.0);
        v->c = f32(1.0 + P2(-23));
    }
}

static void
alignment(builder *b)
{
    const pv_fmtinfo *fi = &fmts[b->fmt];
    double rich = 2.0 - P2(-fi->mbits);
    pv_vec *v;
    for (int d = 0; d <= 40; d++) {
        for (int s = 0; s < 2; s++) {
            double sg = s ? -1.0 : 1.0;
            v = add(b, "align %c d=%d", s ? '-' : '+', d);
            put(b, v, 0, 1.0, 1.0);
            put_p2(b, v, 1, sg, -d);
            v = add(b, "align rich %c d=%d", s ? '-' : '+', d);
            put(b, v, 0, 1.0, 1.0);
            put(b, v, 1, sg * rich * P2(-(d / 2)), rich * P2(-(d - d / 2)));
            v = add(b, "align c %c d=%d", s ? '-' : '+', d);
            put(b, v, 0, 1.0, 1.0);
            v->c =
                ((uint32_t)s << 31) | ((uint32_t)(127 - d) << 23) | 0x555555u;
        }
    }
}

static void
carry(builder *b)
{
    const pv_fmtinfo *fi = &fmts[b->fmt];
    double m = 2.0 - P2(-fi->mbits);
    pv_vec *v;
    for (int n = 1; n <= 16; n++) {
        v = add(b, "carry n=%d", n);
        for (int j = 0; j < n; j++)
            put(b, v, j, m, m);
        v = add(b, "carry n=%d c=max@2", n);
        for (int j = 0; j < n; j++)
            put(b, v, j, m, m);
        v->c = (uint32_t)(128u << 23) | 0x7FFFFFu;
        v = add(b, "carry neg n=%d c=-max@2", n);
        for (int j = 0; j < n; j++)
            put(b, v, j, -m, m);
        v->c = 0x80000000u | (uint32_t)(128u << 23) | 0x7FFFFFu;
    }
}

static void
truncation(builder *b)
{
    pv_vec *v;
    for (int sc = 0; sc < 2; sc++)
        for (int sp = 0; sp < 2; sp++)
            for (int m = 1; m <= 7; m++) {
                double ps = sp ? -1.0 : 1.0;
                v = add(b, "trunc c=%c1 %c%d*2^-27", sc ? '-' : '+',
                        sp ? '-' : '+', m);
                put(b, v, 0, ps * m * P2(-13), P2(-14));
                v->c = f32(sc ? -1.0 : 1.0);
                v = add(b, "trunc8 c=%c1 8x %c%d*2^-27", sc ? '-' : '+',
                        sp ? '-' : '+', m);
                for (int j = 0; j < 8; j++)
                    put(b, v, j, ps * m * P2(-13), P2(-14));
                v->c = f32(sc ? -1.0 : 1.0);
            }
    /* Final rounding with bits below 2^-23 in the exact sum, no C. */
    for (int s = 0; s < 2; s++) {
        double sg = s ? -1.0 : 1.0;
        v = add(b, "final %c 1 + 2^-24", s ? '-' : '+');
        put(b, v, 0, sg, 1.0);
        put(b, v, 1, sg * P2(-12), P2(-12));
        v = add(b, "final %c 1 + 3*2^-25", s ? '-' : '+');
        put(b, v, 0, sg, 1.0);
        put(b, v, 1, sg * 3.0 * P2(-13), P2(-12));
        v = add(b, "final %c 1 - 2^-26", s ? '-' : '+');
        put(b, v, 0, sg, 1.0);
        put(b, v, 1, -sg * P2(-13), P2(-13));
    }
}

static void
c_dominance(builder *b)
{
    pv_vec *v;
    for (int s = 1; s <= 30; s++)
        for (int sg = 0; sg < 2; sg++) {
            v = add(b, "cdom c=%c1.5*2^%d", sg ? '-' : '+', s);
            for (int j = 0; j < 16; j++)
                put(b, v, j, 1.0 + j * P2(-4),
                    (j & 1 ? -1.0 : 1.0) * (1.0 - j * P2(-5)));
            v->c = f32((sg ? -1.5 : 1.5) * P2(s));
        }
}

static void
zeros(builder *b)
{
    pv_vec *v;
    v = add(b, "zero all +0, c=+0");
    v = add(b, "zero all +0, c=-0");
    v->c = F32_NEG0;
    v = add(b, "zero prods -0 (a=-0), c=-0");
    for (int j = 0; j < 16; j++)
        put(b, v, j, -0.0, 1.0);
    v->c = F32_NEG0;
    v = add(b, "zero prods -0 (a=-0), c=+0");
    for (int j = 0; j < 16; j++)
        put(b, v, j, -0.0, 1.0);
    v = add(b, "zero prods -0 (b=-0), c=-0");
    for (int j = 0; j < 16; j++)
        put(b, v, j, 1.0, -0.0);
    v->c = F32_NEG0;
    v = add(b, "zero prods +0 (-0*-0), c=-0");
    for (int j = 0; j < 16; j++)
        put(b, v, j, -0.0, -0.0);
    v->c = F32_NEG0;
    v = add(b, "zero prods +0 (1*+0), c=-0");
    for (int j = 0; j < 16; j++)
        put(b, v, j, 1.0, 0.0);
    v->c = F32_NEG0;
    v = add(b, "zero one prod -1*0, c=-0");
    put(b, v, 0, -1.0, 0.0);
    v->c = F32_NEG0;
    v = add(b, "zero 15 prods -0, one +0, c=-0");
    for (int j = 0; j < 15; j++)
        put(b, v, j, -0.0, 1.0);
    v->c = F32_NEG0;
    v = add(b, "cancel x-x, c=+0");
    put(b, v, 0, 1.5, 1.0);
    put(b, v, 1, -1.5, 1.0);
    v = add(b, "cancel x-x, c=-0");
    put(b, v, 0, 1.5, 1.0);
    put(b, v, 1, -1.5, 1.0);
    v->c = F32_NEG0;
    v = add(b, "cancel -x+x, c=-0");
    put(b, v, 0, -1.5, 1.0);
    put(b, v, 1, 1.5, 1.0);
    v->c = F32_NEG0;
    v = add(b, "cancel x, c=-x");
    put(b, v, 0, 1.5, 1.0);
    v->c = f32(-1.5);
    v = add(b, "cancel -x, c=x");
    put(b, v, 0, -1.5, 1.0);
    v->c = f32(1.5);
    v = add(b, "cancel 8 pairs, c=-0");
    for (int j = 0; j < 8; j++) {
        put(b, v, 2 * j, (1.0 + j * P2(-3)) * P2(j - 4), 1.0);
        put(b, v, 2 * j + 1, -(1.0 + j * P2(-3)) * P2(j - 4), 1.0);
    }
    v->c = F32_NEG0;
    for (int s = 0; s < 2; s++) {
        v = add(b, "cancel 1-1, c=%c2^-30 (truncated away)", s ? '-' : '+');
        put(b, v, 0, 1.0, 1.0);
        put(b, v, 1, -1.0, 1.0);
        v->c = f32((s ? -1.0 : 1.0) * P2(-30));
        v = add(b, "cancel 1-1, prod %c2^-30 (truncated away)", s ? '-' : '+');
        put(b, v, 0, 1.0, 1.0);
        put(b, v, 1, -1.0, 1.0);
        put_p2(b, v, 2, s ? -1.0 : 1.0, -30);
        v = add(b, "cancel 1, c=-1, prod %c2^-30", s ? '-' : '+');
        put(b, v, 0, 1.0, 1.0);
        put_p2(b, v, 1, s ? -1.0 : 1.0, -30);
        v->c = f32(-1.0);
        v = add(b, "cancel 2^10-2^10, c=%c0", s ? '-' : '+');
        put(b, v, 0, P2(10), 1.0);
        put(b, v, 1, -P2(10), 1.0);
        v->c = s ? F32_NEG0 : 0;
    }
}

static void
subnormals(builder *b)
{
    const pv_fmtinfo *fi = &fmts[b->fmt];
    uint16_t sub[4] = {0x0001u, (uint16_t)(1u << (fi->mbits - 1)),
                       (uint16_t)((1u << fi->mbits) - 1u), 0x0003u};
    pv_vec *v;
    for (int i = 0; i < 4; i++)
        for (int s = 0; s < 2; s++) {
            uint16_t sg = (uint16_t)(s ? 1u << 15 : 0u);
            v = add(b, "sub a=%04x * 1", (unsigned)(sub[i] | sg));
            v->a[0] = (uint16_t)(sub[i] | sg);
            v->b[0] = enc(b->fmt, 1.0);
            v = add(b, "sub b=%04x * 1.5", (unsigned)(sub[i] | sg));
            v->b[0] = (uint16_t)(sub[i] | sg);
            v->a[0] = enc(b->fmt, 1.5);
            v = add(b, "sub a=%04x * sub b=%04x", (unsigned)sub[i],
                    (unsigned)(sub[(i + 1) % 4] | sg));
            v->a[0] = sub[i];
            v->b[0] = (uint16_t)(sub[(i + 1) % 4] | sg);
            v = add(b, "sub a=%04x * 1, c=1", (unsigned)(sub[i] | sg));
            v->a[0] = (uint16_t)(sub[i] | sg);
            v->b[0] = enc(b->fmt, 1.0);
            v->c = f32(1.0);
        }
    for (int k = 1; k <= 10; k++) {
        v = add(b, "sub a=%04x * 2^%d", (unsigned)sub[2], k);
        v->a[0] = sub[2];
        v->b[0] = enc(b->fmt, P2(k));
    }
    /* Products into and below the FP32 subnormal range (BF16 only
     * reaches it; FP16 products stay above 2^-48). */
    for (int e = -120; e >= -156; e--) {
        v = add(b, "subout prod 1.xx*2^%d", e);
        put(b, v, 0, 1.6015625 * P2(e / 2), P2(e - e / 2));
        v = add(b, "subout prod -1.xx*2^%d + 2 terms", e);
        put(b, v, 0, -1.6015625 * P2(e / 2), P2(e - e / 2));
        put(b, v, 1, -1.25 * P2(e / 2), P2(e - e / 2));
    }
    {
        uint32_t cs[5] = {0x00000001u, 0x00000003u, 0x00400000u, 0x007FFFFFu,
                          0x00012345u};
        for (int i = 0; i < 5; i++)
            for (int s = 0; s < 2; s++) {
                uint32_t c = cs[i] | (s ? F32_NEG0 : 0u);
                v = add(b, "subc c=%08x alone", (unsigned)c);
                v->c = c;
                v = add(b, "subc c=%08x + 2^-130", (unsigned)c);
                put_p2(b, v, 0, 1.0, -130);
                v->c = c;
                v = add(b, "subc c=%08x + 1", (unsigned)c);
                put(b, v, 0, 1.0, 1.0);
                v->c = c;
                v = add(b, "subc c=%08x - 2^-149", (unsigned)c);
                put_p2(b, v, 0, -1.0, -149);
                v->c = c;
            }
    }
}

static void
tiny(builder *b)
{
    static const int es[] = {-127, -128, -129, -130, -131, -132, -133, -134,
                             -135, -136, -140, -145, -148, -149, -150, -151,
                             -152, -155, -160, -175, -200, -252};
    static const double sigs[3] = {1.0, 1.5, 1.9921875};
    static const int ns[3] = {1, 2, 16};
    uint32_t cs[5] = {0, F32_NEG0, 0x00000001u, 0x80000000u | (1u << 9),
                      0x00800000u};
    pv_vec *v;
    if (b->fmt != PV_BF16)
        return;
    for (size_t ie = 0; ie < sizeof es / sizeof es[0]; ie++)
        for (int in = 0; in < 3; in++)
            for (int is = 0; is < 3; is++)
                for (int ic = 0; ic < 5; ic++) {
                    int e = es[ie];
                    v = add(b, "tiny %dx %.4g*2^%d c=%08x", ns[in], sigs[is],
                            e, (unsigned)cs[ic]);
                    for (int j = 0; j < ns[in]; j++)
                        put(b, v, j, sigs[is] * P2(e + 126), P2(-126));
                    v->c = cs[ic];
                }
}

static void
specials(builder *b)
{
    const pv_fmtinfo *fi = &fmts[b->fmt];
    uint16_t one = enc(b->fmt, 1.0), inf = fi->inf;
    uint16_t nans[5] = {fi->qnan, (uint16_t)(fi->qnan | 1u), fi->snan,
                        (uint16_t)(fi->qnan | 0x8000u),
                        (uint16_t)(fi->inf | 0x8000u | 0x55u)};
    uint32_t cnans[5] = {0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x7F800001u,
                         0x7FFFFFFFu};
    pv_vec *v;
    for (int i = 0; i < 5; i++) {
        v = add(b, "nan a=%04x * 1", (unsigned)nans[i]);
        v->a[0] = nans[i];
        v->b[0] = one;
        v = add(b, "nan b=%04x, a=1 @15", (unsigned)nans[i]);
        v->a[15] = one;
        v->b[15] = nans[i];
        v = add(b, "nan a=%04x * 0", (unsigned)nans[i]);
        v->a[0] = nans[i];
        v = add(b, "nan a=%04x * 1, c=%08x", (unsigned)nans[i],
                (unsigned)cnans[(i + 1) % 5]);
        v->a[0] = nans[i];
        v->b[0] = one;
        v->c = cnans[(i + 1) % 5];
        v = add(b, "nan c=%08x, prod 1", (unsigned)cnans[i]);
        put(b, v, 0, 1.0, 1.0);
        v->c = cnans[i];
        v = add(b, "nan c=%08x alone", (unsigned)cnans[i]);
        v->c = cnans[i];
        v = add(b, "nan c=%08x, prod inf", (unsigned)cnans[i]);
        v->a[0] = inf;
        v->b[0] = one;
        v->c = cnans[i];
    }
    v = add(b, "nan a=%04x, b=%04x", (unsigned)nans[1], (unsigned)nans[3]);
    v->a[0] = nans[1];
    v->b[0] = nans[3];
    v = add(b, "nan a0=%04x a1=%04x", (unsigned)nans[3], (unsigned)nans[1]);
    v->a[0] = nans[3];
    v->b[0] = one;
    v->a[1] = nans[1];
    v->b[1] = one;
    v = add(b, "inf +inf*1");
    v->a[0] = inf;
    v->b[0] = one;
    v = add(b, "inf -inf*1");
    v->a[0] = (uint16_t)(inf | 0x8000u);
    v->b[0] = one;
    v = add(b, "inf inf*-1");
    v->a[0] = inf;
    v->b[0] = (uint16_t)(one | 0x8000u);
    v = add(b, "inf inf*0");
    v->a[0] = inf;
    v = add(b, "inf 0*inf");
    v->b[0] = inf;
    v = add(b, "inf -inf*-0");
    v->a[0] = (uint16_t)(inf | 0x8000u);
    v->b[0] = 0x8000u;
    v = add(b, "inf inf*sub");
    v->a[0] = inf;
    v->b[0] = 0x0001u;
    v = add(b, "inf inf - inf");
    v->a[0] = inf;
    v->b[0] = one;
    v->a[1] = (uint16_t)(inf | 0x8000u);
    v->b[1] = one;
    v = add(b, "inf inf + inf");
    v->a[0] = inf;
    v->b[0] = one;
    v->a[1] = inf;
    v->b[1] = one;
    v = add(b, "inf inf, c=-inf");
    v->a[0] = inf;
    v->b[0] = one;
    v->c = F32_INF | F32_NEG0;
    v = add(b, "inf inf, c=+inf");
    v->a[0] = inf;
    v->b[0] = one;
    v->c = F32_INF;
    v = add(b, "inf c=+inf, prod 1");
    put(b, v, 0, 1.0, 1.0);
    v->c = F32_INF;
    v = add(b, "inf c=-inf, prod 1");
    put(b, v, 0, 1.0, 1.0);
    v->c = F32_INF | F32_NEG0;
    v = add(b, "inf c=-inf alone");
    v->c = F32_INF | F32_NEG0;
    v = add(b, "inf c=+inf, prod -max");
    put(b, v, 0, -P2(fi->emax), 1.5);
    v->c = F32_INF;
    v = add(b, "inf +inf, huge finite products");
    v->a[0] = inf;
    v->b[0] = one;
    put(b, v, 1, -P2(fi->emax), P2(fi->emax));
    put(b, v, 2, -P2(fi->emax), P2(fi->emax));
    v = add(b, "inf -inf @15, c=max");
    v->a[15] = (uint16_t)(inf | 0x8000u);
    v->b[15] = one;
    v->c = F32_MAX;
}

static void
overflow(builder *b)
{
    const pv_fmtinfo *fi = &fmts[b->fmt];
    double big = P2(fi->emax), mx = (2.0 - P2(-fi->mbits)) * P2(fi->emax);
    pv_vec *v;
    for (int s = 0; s < 2; s++) {
        double sg = s ? -1.0 : 1.0;
        uint32_t cs = s ? F32_NEG0 : 0u;
        v = add(b, "ovf %cmax*max", s ? '-' : '+');
        put(b, v, 0, sg * mx, mx);
        v = add(b, "ovf %c2^64*2^64", s ? '-' : '+');
        put(b, v, 0, sg * P2(64), P2(64));
        v = add(b, "ovf 16x %c2^124", s ? '-' : '+');
        for (int j = 0; j < 16; j++)
            put_p2(b, v, j, sg, 124);
        v = add(b, "ovf 8x %c2^124", s ? '-' : '+');
        for (int j = 0; j < 8; j++)
            put_p2(b, v, j, sg, 124);
        v = add(b, "ovf c=%cFLT_MAX + %c2^103", s ? '-' : '+', s ? '-' : '+');
        put_p2(b, v, 0, sg, 103);
        v->c = F32_MAX | cs;
        v = add(b, "ovf c=%cFLT_MAX + %c2^104", s ? '-' : '+', s ? '-' : '+');
        put_p2(b, v, 0, sg, 104);
        v->c = F32_MAX | cs;
        v = add(b, "ovf c=%cFLT_MAX + %c2^105", s ? '-' : '+', s ? '-' : '+');
        put_p2(b, v, 0, sg, 105);
        v->c = F32_MAX | cs;
        v = add(b, "ovf c=%cFLT_MAX + %c1", s ? '-' : '+', s ? '-' : '+');
        put(b, v, 0, sg, 1.0);
        v->c = F32_MAX | cs;
        v = add(b, "ovf c=%cFLT_MAX + %cFLT_MAX-ish", s ? '-' : '+',
                s ? '-' : '+');
        put(b, v, 0, sg * mx, P2(127 - fi->emax));
        v->c = F32_MAX | cs;
        v = add(b, "ovf %c(3*2^127 - 2^128)", s ? '-' : '+');
        put_p2(b, v, 0, sg * 1.5, 128);
        put_p2(b, v, 1, -sg, 128);
        v = add(b, "ovf %c(2^100*1.5)^2 cancelled + 1", s ? '-' : '+');
        put(b, v, 0, sg * 1.5 * P2(100), P2(100));
        put(b, v, 1, -sg * 1.5 * P2(100), P2(100));
        put(b, v, 2, 1.0, 1.0);
        v = add(b, "ovf c=%c2^127 + %c2^127", s ? '-' : '+', s ? '-' : '+');
        put_p2(b, v, 0, sg, 127);
        v->c = f32(sg * P2(127));
        v = add(b, "ovf c=%cFLT_MAX, prod %cbig", s ? '-' : '+',
                s ? '+' : '-');
        put(b, v, 0, -sg * big, big);
        v->c = F32_MAX | cs;
    }
}

static void
order(builder *b)
{
    double vals[16];
    pv_vec *v;
    for (int j = 0; j < 16; j++)
        vals[j] = (j & 1 ? -1.0 : 1.0) * (1.0 + (j * 5 % 16) * P2(-4))
                  * P2((j * 7) % 29 - 20);
    for (int r = 0; r < 8; r++) {
        v = add(b, "order rot %d%s", r, r & 1 ? " rev" : "");
        for (int j = 0; j < 16; j++) {
            int p = (j + 2 * r) % 16;
            if (r & 1)
                p = 15 - p;
            put(b, v, p, vals[j], 1.0 + P2(-3));
        }
        v->c = f32(P2(-9) * 1.375);
    }
}

/* Chains (K = 32 or 64): what happens between the k16 slices. */
static void
chains(builder *b)
{
    int k = b->k, ns = k / 16;
    uint32_t pass[10] = {F32_NEG0,    0,           0x00000001u, 0x007FFFFFu,
                         0x7FC00001u, 0xFFC00000u, 0x7F800001u, F32_MAX,
                         0x3F800001u, 0xBF800003u};
    pv_vec *v;
    for (int i = 0; i < 10; i++) {
        v = add(b, "chain pass c=%08x", (unsigned)pass[i]);
        v->c = pass[i];
        v = add(b, "chain pass c=%08x, last slice +1-1", (unsigned)pass[i]);
        put(b, v, k - 2, 1.0, 1.0);
        put(b, v, k - 1, -1.0, 1.0);
        v->c = pass[i];
    }
    v = add(b, "chain prods -0, c=-0");
    for (int j = 0; j < k; j++)
        put(b, v, j, -0.0, 1.0);
    v->c = F32_NEG0;
    v = add(b, "chain slice0 x-x, later -0, c=-0");
    put(b, v, 0, 1.0, 1.0);
    put(b, v, 1, -1.0, 1.0);
    for (int j = 16; j < k; j++)
        put(b, v, j, -0.0, 1.0);
    v->c = F32_NEG0;
    v = add(b, "chain nan in last slice");
    put(b, v, 0, 1.0, 1.0);
    v->a[k - 1] = fmts[b->fmt].qnan;
    v->b[k - 1] = enc(b->fmt, 1.0);
    v = add(b, "chain +inf slice0, -inf last");
    v->a[0] = fmts[b->fmt].inf;
    v->b[0] = enc(b->fmt, 1.0);
    v->a[k - 1] = (uint16_t)(fmts[b->fmt].inf | 0x8000u);
    v->b[k - 1] = enc(b->fmt, 1.0);
    for (int s = 0; s < 2; s++) {
        double sg = s ? -1.0 : 1.0;
        v = add(b, "chain ovf %c16x2^124 then %c2^127", s ? '-' : '+',
                s ? '+' : '-');
        for (int j = 0; j < 16; j++)
            put_p2(b, v, j, sg, 124);
        put_p2(b, v, 16, -sg, 127);
        v = add(b, "chain ovf c=%cFLT_MAX+2^104 then -2^127", s ? '-' : '+');
        put_p2(b, v, 0, sg, 104);
        put_p2(b, v, 16, -sg, 127);
        v->c = F32_MAX | (s ? F32_NEG0 : 0u);
        v = add(b, "chain trunc c=%c1, 8x 3*2^-27 per slice", s ? '-' : '+');
        for (int j = 0; j < k; j++)
            if (j % 16 < 8)
                put(b, v, j, 3.0 * P2(-13), P2(-14));
        v->c = f32(sg);
        v = add(b, "chain c=%c1, 1.5*2^-24 per slice", s ? '-' : '+');
        for (int sl = 0; sl < ns; sl++)
            put(b, v, 16 * sl + 3, 1.5 * P2(-12), P2(-12));
        v->c = f32(sg);
        v = add(b, "chain c=%c1, -1.5*2^-24 per slice", s ? '-' : '+');
        for (int sl = 0; sl < ns; sl++)
            put(b, v, 16 * sl + 3, -1.5 * P2(-12), P2(-12));
        v->c = f32(sg);
    }
    if (b->fmt == PV_BF16) {
        for (int e = -140; e >= -160; e -= 4) {
            v = add(b, "chain tiny 1.5*2^%d in every slot", e);
            for (int j = 0; j < k; j++)
                put(b, v, j, 1.5 * P2(e + 126), P2(-126));
            v = add(b, "chain tiny 1.5*2^%d every slot c=2^-149", e);
            for (int j = 0; j < k; j++)
                put(b, v, j, 1.5 * P2(e + 126), P2(-126));
            v->c = 1;
        }
    }
    for (int d = 20; d <= 30; d++) {
        v = add(b, "chain 1 then 2^-%d in each later slice", d);
        put(b, v, 0, 1.0, 1.0);
        for (int sl = 1; sl < ns; sl++)
            put_p2(b, v, 16 * sl, 1.0, -d);
    }
}

size_t
pv_directed(int set, int fmt, pv_vec *out, size_t cap)
{
    builder b;
    if (fmt < 0 || fmt >= PV_NFMT || pv_set_random(set) || set < 0)
        return 0;
    memset(&b, 0, sizeof b);
    b.out = out;
    b.cap = out ? cap : 0;
    b.fmt = fmt;
    b.k = pv_set_k(set);
    switch (set) {
    case PV_SELFCHECK16:
    case PV_SELFCHECK32:
    case PV_SELFCHECK64:
        selfcheck(&b);
        break;
    case PV_DIRECTED16:
        paper_probes(&b);
        alignment(&b);
        carry(&b);
        truncation(&b);
        c_dominance(&b);
        zeros(&b);
        subnormals(&b);
        tiny(&b);
        specials(&b);
        overflow(&b);
        order(&b);
        break;
    default:
        paper_probes(&b);
        chains(&b);
        break;
    }
    return b.n;
}

/*----------------------------------------------------------------------
 * Random sets
 *----------------------------------------------------------------------*/

typedef struct
{
    uint64_t key, ctr;
} rng;

static uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t
next(rng *r)
{
    r->ctr++;
    return mix64(r->key + r->ctr * UINT64_C(0x9e3779b97f4a7c15));
}

/* Uniform integer in [lo, hi]. */
static int
uni(rng *r, int lo, int hi)
{
    uint64_t span = (uint64_t)((int64_t)hi - lo + 1);
    return lo + (int)(next(r) % span);
}

/* 1 with probability num/den. */
static int
chance(rng *r, unsigned num, unsigned den)
{
    return next(r) % den < num;
}

/* A random element of the format with exponent e (clamped to the finite
 * range; below the normal range it becomes a subnormal by truncating the
 * significand) and random fraction bits. */
static uint16_t
elem(rng *r, int fmt, int e, int neg)
{
    const pv_fmtinfo *fi = &fmts[fmt];
    uint32_t m = (uint32_t)next(r) & ((1u << fi->mbits) - 1u);
    uint32_t bits, bias = (1u << (fi->ebits - 1)) - 1u;
    if (e > fi->emax)
        e = fi->emax;
    if (e < fi->esub)
        e = fi->esub;
    if (e >= fi->emin) {
        bits = ((uint32_t)(e + (int)bias) << fi->mbits) | m;
    } else {
        bits = (m | (1u << fi->mbits)) >> (fi->emin - e);
        if (bits == 0)
            bits = 1;
    }
    return (uint16_t)(bits | (neg ? 0x8000u : 0u));
}

/* The same for FP32. */
static uint32_t
elem32(rng *r, int e, int neg)
{
    uint32_t m = (uint32_t)next(r) & 0x7FFFFFu, bits;
    if (e > 127)
        e = 127;
    if (e < -149)
        e = -149;
    if (e >= -126) {
        bits = ((uint32_t)(e + 127) << 23) | m;
    } else {
        bits = (m | 0x800000u) >> (-126 - e);
        if (bits == 0)
            bits = 1;
    }
    return bits | (neg ? 0x80000000u : 0u);
}

/* Random sign, then exponent in [lo, hi].  Every draw sits in its own
 * statement: the order of draws is part of the vector definition and
 * must not depend on the compiler's order of evaluating operands. */
static uint16_t
relem(rng *r, int fmt, int lo, int hi)
{
    int neg = chance(r, 1, 2);
    int e = uni(r, lo, hi);
    return elem(r, fmt, e, neg);
}

static uint32_t
relem32(rng *r, int lo, int hi)
{
    int neg = chance(r, 1, 2);
    int e = uni(r, lo, hi);
    return elem32(r, e, neg);
}

static uint16_t
special16(rng *r, int fmt)
{
    const pv_fmtinfo *fi = &fmts[fmt];
    uint16_t sg = (uint16_t)(chance(r, 1, 2) ? 0x8000u : 0u);
    switch (uni(r, 0, 2)) {
    case 0:
        return (uint16_t)(fi->inf | sg);
    case 1: {
        uint16_t pay = (uint16_t)(next(r) & ((1u << fi->mbits) - 1u));
        return (uint16_t)(fi->inf | sg | (pay ? pay : 1u));
    }
    default:
        return sg;
    }
}

static uint32_t
special32(rng *r)
{
    uint32_t sg = chance(r, 1, 2) ? 0x80000000u : 0u;
    switch (uni(r, 0, 2)) {
    case 0:
        return F32_INF | sg;
    case 1: {
        uint32_t pay = (uint32_t)next(r) & 0x7FFFFFu;
        return F32_INF | sg | (pay ? pay : 1u);
    }
    default:
        return sg;
    }
}

static void
gen_normal(rng *r, int fmt, int k, pv_vec *v, int cdom)
{
    for (int j = 0; j < k; j++) {
        if (chance(r, 3, 100)) {
            v->a[j] = (uint16_t)(chance(r, 1, 2) ? 0x8000u : 0u);
            v->b[j] = enc(fmt, 1.0);
            continue;
        }
        v->a[j] = relem(r, fmt, -10, 10);
        v->b[j] = relem(r, fmt, -10, 10);
    }
    if (chance(r, 1, 10))
        v->c = chance(r, 1, 2) ? F32_NEG0 : 0u;
    else if (cdom && chance(r, 1, 2))
        v->c = relem32(r, 10, 24);
    else
        v->c = relem32(r, -20, 24);
}

static void
gen_wide(rng *r, int fmt, pv_vec *v)
{
    const pv_fmtinfo *fi = &fmts[fmt];
    int mode = uni(r, 0, 3), center = uni(r, fi->esub, fi->emax);
    for (int j = 0; j < 16; j++) {
        switch (mode) {
        case 0:
            v->a[j] = relem(r, fmt, fi->esub, fi->emax);
            v->b[j] = relem(r, fmt, fi->esub, fi->emax);
            break;
        case 3:
            v->a[j] = relem(r, fmt, fi->emax / 2, fi->emax);
            v->b[j] = relem(r, fmt, fi->emax / 2, fi->emax);
            break;
        default:
            v->a[j] = relem(r, fmt, center - 6, center + 6);
            v->b[j] = relem(r, fmt, center - 6, center + 6);
            if (mode == 2 && chance(r, 1, 16))
                v->a[j] = special16(r, fmt);
            if (mode == 2 && chance(r, 1, 16))
                v->b[j] = special16(r, fmt);
            break;
        }
    }
    if (mode == 0)
        v->c = relem32(r, -149, 127);
    else if (mode == 3)
        v->c = relem32(r, 100, 127);
    else
        v->c = relem32(r, 2 * center - 20, 2 * center + 20);
    if (mode == 2 && chance(r, 1, 8))
        v->c = special32(r);
}

static void
gen_cancel(rng *r, int fmt, pv_vec *v)
{
    const pv_fmtinfo *fi = &fmts[fmt];
    for (int j = 0; j < 8; j++) {
        uint16_t a = relem(r, fmt, -8, 8), b = relem(r, fmt, -8, 8);
        uint16_t b2 = b;
        int how = uni(r, 0, 3);
        if (how == 1)
            b2 = (uint16_t)(b ^ 1u);
        else if (how == 2)
            b2 =
                (uint16_t)(b ^ (uint16_t)(next(r) & ((1u << fi->mbits) - 1u)));
        v->a[2 * j] = a;
        v->b[2 * j] = b;
        v->a[2 * j + 1] = (uint16_t)(a ^ 0x8000u);
        v->b[2 * j + 1] = b2;
    }
    switch (uni(r, 0, 2)) {
    case 0:
        v->c = chance(r, 1, 2) ? F32_NEG0 : 0u;
        break;
    case 1:
        v->c = relem32(r, -40, -10);
        break;
    default:
        v->c = relem32(r, -30, 5);
        break;
    }
}

static void
gen_attn(rng *r, int fmt, pv_vec *v)
{
    for (int j = 0; j < 16; j++) {
        int64_t u;
        if (chance(r, 1, 5))
            v->a[j] = enc(fmt, 1.0);
        else if (chance(r, 1, 10))
            v->a[j] = 0;
        else
            v->a[j] = elem(r, fmt, uni(r, -20, -1), 0);
        /* V = u1 + u2 + u3 - 2 with u uniform on [0,1) in 2^-24 steps:
         * mean -1/2, exact in double. */
        u = -(INT64_C(2) << 24);
        for (int t = 0; t < 3; t++)
            u += (int64_t)(next(r) & 0xFFFFFF);
        v->b[j] = enc(fmt, (double)u * P2(-24));
    }
    /* The running output accumulator: around -(0..8). */
    {
        int64_t c2 = (int64_t)(next(r) & 0xFFFFFF);
        int64_t c1 = (int64_t)(next(r) & 0x7FFFFFF); /* drawn second */
        int64_t cu = c2 - c1;
        v->c = chance(r, 1, 8) ? 0u : f32((double)cu * P2(-24));
    }
}

static void
gen_tiny(rng *r, int fmt, pv_vec *v)
{
    const pv_fmtinfo *fi = &fmts[fmt];
    int lo = fmt == PV_BF16 ? -90 : fi->esub,
        hi = fmt == PV_BF16 ? -60 : fi->emin;
    for (int j = 0; j < 16; j++) {
        if (chance(r, 1, 10))
            continue;
        v->a[j] = relem(r, fmt, lo, hi);
        v->b[j] = relem(r, fmt, lo, hi);
    }
    switch (uni(r, 0, 3)) {
    case 0:
        v->c = 0;
        break;
    case 1:
        v->c = F32_NEG0;
        break;
    case 2:
        v->c = relem32(r, -149, -127);
        break;
    default:
        v->c = relem32(r, -126, -110);
        break;
    }
}

int
pv_random(int set, int fmt, uint64_t seed, uint64_t index, pv_vec *out)
{
    rng r;
    if (!pv_set_random(set) || fmt < 0 || fmt >= PV_NFMT)
        return -1;
    memset(out, 0, sizeof *out);
    r.key = mix64(
        seed ^ mix64(((uint64_t)set << 8 | (uint64_t)fmt) + UINT64_C(0x51ab))
        ^ mix64(index + UINT64_C(0x7f4a7c15)));
    r.ctr = 0;
    switch (set) {
    case PV_NORMAL:
        gen_normal(&r, fmt, 16, out, 0);
        break;
    case PV_WIDE:
        gen_wide(&r, fmt, out);
        break;
    case PV_CANCEL:
        gen_cancel(&r, fmt, out);
        break;
    case PV_ATTN:
        gen_attn(&r, fmt, out);
        break;
    case PV_TINY:
        gen_tiny(&r, fmt, out);
        break;
    case PV_CHAIN32:
        gen_normal(&r, fmt, 32, out, 0);
        break;
    default:
        gen_normal(&r, fmt, 64, out, 1);
        break;
    }
    return 0;
}

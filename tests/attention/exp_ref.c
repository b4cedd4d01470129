/* exp_ref.c -- MPFR references for the tests of the exp models */
#include "exp_ref.h"

#define F32_MAG 0x7FFFFFFFu
#define F32_INF 0x7F800000u
#define F32_QUIET 0x00400000u

void
expref_init(expref *r)
{
    mpfr_init2(r->x, 24);
    mpfr_init2(r->y, 24);
    mpfr_init2(r->t, 256);
}

void
expref_clear(expref *r)
{
    mpfr_clear(r->x);
    mpfr_clear(r->y);
    mpfr_clear(r->t);
}

/* V = the binary32 X (finite), exactly. */
static void
set_f32(mpfr_t v, uint32_t x)
{
    uint32_t biased = (x >> 23) & 0xFF, frac = x & 0x7FFFFF;
    unsigned long sig = biased != 0 ? frac | 0x800000u : frac;
    long e = biased != 0 ? (long)biased - 150 : -149;

    mpfr_set_ui_2exp(v, sig, e, MPFR_RNDN);
    if (x >> 31)
        mpfr_neg(v, v, MPFR_RNDN);
}

/* The bits of Y, a binary32 value held at precision 24 (after
   mpfr_subnormalize under the binary32 range).  T is scratch. */
static uint32_t
encode(mpfr_t y, mpfr_t t)
{
    uint32_t sign = mpfr_signbit(y) ? 0x80000000u : 0;
    long e;

    if (mpfr_inf_p(y))
        return sign | F32_INF;
    if (mpfr_zero_p(y))
        return sign;
    e = mpfr_get_exp(y); /* |y| in [2^(e - 1), 2^e) */
    mpfr_abs(t, y, MPFR_RNDN);
    if (e - 1 >= -126) {
        unsigned long sig;
        mpfr_mul_2si(t, t, 24 - e, MPFR_RNDN); /* in [2^23, 2^24) */
        sig = mpfr_get_ui(t, MPFR_RNDN);
        return sign | ((uint32_t)(e - 1 + 127) << 23)
               | ((uint32_t)sig & 0x7FFFFFu);
    }
    mpfr_mul_2si(t, t, 149, MPFR_RNDN); /* an integer below 2^23 */
    return sign | (uint32_t)mpfr_get_ui(t, MPFR_RNDN);
}

typedef struct
{
    mpfr_exp_t emin, emax;
} range;

static range
narrow(void)
{
    range old = {mpfr_get_emin(), mpfr_get_emax()};

    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    return old;
}

static void
restore(range old)
{
    mpfr_set_emin(old.emin);
    mpfr_set_emax(old.emax);
}

uint32_t
expref_exp(expref *r, bool base2, uint32_t x)
{
    range old;
    int inex;
    uint32_t res;

    if ((x & F32_MAG) > F32_INF)
        return x | F32_QUIET;
    if ((x & F32_MAG) == F32_INF) /* MPFR's own rules agree; kept plain */
        return (x >> 31) ? 0 : F32_INF;
    set_f32(r->x, x);
    old = narrow();
    inex = base2 ? mpfr_exp2(r->y, r->x, MPFR_RNDN)
                 : mpfr_exp(r->y, r->x, MPFR_RNDN);
    inex = mpfr_subnormalize(r->y, inex, MPFR_RNDN);
    (void)inex;
    res = encode(r->y, r->t);
    restore(old);
    return res;
}

uint32_t
expref_mul_log2e(expref *r, uint32_t x)
{
    mpfr_t l;
    range old;
    int inex;
    uint32_t res;

    if ((x & F32_MAG) >= F32_INF || (x & F32_MAG) == 0)
        return x;
    mpfr_init2(l, 24);
    mpfr_const_log2(r->t, MPFR_RNDN);   /* ln 2 to 256 bits */
    mpfr_ui_div(l, 1, r->t, MPFR_RNDN); /* log2(e) to 24 bits */
    set_f32(r->x, x);
    old = narrow();
    inex = mpfr_mul(r->y, r->x, l, MPFR_RNDN);
    inex = mpfr_subnormalize(r->y, inex, MPFR_RNDN);
    (void)inex;
    res = encode(r->y, r->t);
    restore(old);
    mpfr_clear(l);
    return res;
}

uint32_t
expref_table_exp2(expref *r, unsigned frac_bits, bool ftz, uint32_t x)
{
    mpfr_t q, n, idx, entry;
    range old;
    uint32_t mag = x & F32_MAG, res;
    bool neg = (x >> 31) != 0;
    long nl;

    if (mag > F32_INF)
        return x | F32_QUIET;
    if (mag == F32_INF)
        return neg ? 0 : F32_INF;
    /* |x| >= 2^32: an integer; the entry of grid point -1 (in [1/2, 1))
       scaled by 2^(x + 1) is beyond the binary32 range */
    if (mag >= 0x4F800000u)
        return neg ? 0 : F32_INF;

    mpfr_inits2(128, q, n, idx, (mpfr_ptr)0);
    mpfr_init2(entry, 24);
    set_f32(r->x, x);
    /* q 2^fb = trunc(x 2^fb); n = floor(q); idx = (q - n) 2^fb */
    mpfr_mul_2ui(q, r->x, frac_bits, MPFR_RNDN);
    mpfr_trunc(q, q);
    mpfr_div_2ui(n, q, frac_bits, MPFR_RNDN);
    mpfr_floor(n, n);
    mpfr_mul_2ui(idx, n, frac_bits, MPFR_RNDN);
    mpfr_sub(idx, q, idx, MPFR_RNDN);
    nl = mpfr_get_si(n, MPFR_RNDN);
    /* the entry: 2^(-1 + idx 2^-fb) rounded to 24 bits (in [1/2, 1)) */
    mpfr_div_2ui(q, idx, frac_bits, MPFR_RNDN);
    mpfr_sub_ui(q, q, 1, MPFR_RNDN);
    mpfr_exp2(entry, q, MPFR_RNDN);
    /* times 2^(n + 1), exact at 24 bits, then into the binary32 range */
    mpfr_mul_2si(r->y, entry, nl + 1, MPFR_RNDN);
    if (ftz && mpfr_cmp_ui_2exp(r->y, 1, -126) < 0) {
        res = 0;
    } else {
        int inex;
        old = narrow();
        inex = mpfr_check_range(r->y, 0, MPFR_RNDN);
        inex = mpfr_subnormalize(r->y, inex, MPFR_RNDN);
        (void)inex;
        res = encode(r->y, r->t);
        restore(old);
    }
    mpfr_clears(q, n, idx, (mpfr_ptr)0);
    mpfr_clear(entry);
    return res;
}

double
expref_hardness(expref *r, bool base2, uint32_t x)
{
    mpfr_t v, a, ulp;
    long e, ue;
    double h;

    mpfr_inits2(200, v, a, ulp, (mpfr_ptr)0);
    set_f32(r->x, x);
    if (base2)
        mpfr_exp2(v, r->x, MPFR_RNDN);
    else
        mpfr_exp(v, r->x, MPFR_RNDN);
    e = mpfr_get_exp(v);                /* v in [2^(e - 1), 2^e) */
    ue = e - 24 > -149 ? e - 24 : -149; /* the binary32 ulp there */
    /* a = v truncated to the grid; the midpoint above it is
       a + ulp / 2 */
    mpfr_div_2si(a, v, ue, MPFR_RNDN);
    mpfr_floor(a, a);
    mpfr_mul_2si(a, a, ue, MPFR_RNDN);
    mpfr_set_ui_2exp(ulp, 1, ue - 1, MPFR_RNDN);
    mpfr_add(a, a, ulp, MPFR_RNDN);
    mpfr_sub(a, v, a, MPFR_RNDN);
    mpfr_abs(a, a, MPFR_RNDN);
    mpfr_div(a, a, v, MPFR_RNDN);
    h = mpfr_get_d(a, MPFR_RNDN);
    mpfr_clears(v, a, ulp, (mpfr_ptr)0);
    return h;
}

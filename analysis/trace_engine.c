/* trace_engine.c -- the arithmetic behind bf16emu trace: exact bit
   arrays, operand fields, alignment, products, the bits at the ulp and
   the checks against the rounding event (trace_engine.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/exact_decimal.h"
#include "analysis/trace_engine.h"

/*----------------------------------------------------------------------------
 * Exact binary numbers.
 *--------------------------------------------------------------------------*/

void
xn_zero(xnum *x)
{
    x->sign = false;
    x->lsb = 0;
    x->n = 0;
}

/* x = (-1)^sign * sig * 2^lsb */
void
xn_set(xnum *x, bool sign, uint64_t sig, int64_t lsb)
{
    x->sign = sign;
    x->lsb = lsb;
    x->n = 0;
    for (; sig != 0; sig >>= 1)
        x->bit[x->n++] = (unsigned char)(sig & 1u);
}

/* The bit of weight 2^w (0 outside the array). */
unsigned
xn_bit(const xnum *x, int64_t w)
{
    int64_t i;

    if (w == XN_NONE)
        return 0;
    i = w - x->lsb;
    return (i >= 0 && i < x->n) ? x->bit[i] : 0u;
}

/* Weight of the highest / lowest 1 bit; XN_NONE when x = 0. */
int64_t
xn_top(const xnum *x)
{
    for (int64_t i = x->n - 1; i >= 0; i--)
        if (x->bit[i])
            return x->lsb + i;
    return XN_NONE;
}

int64_t
xn_low(const xnum *x)
{
    for (int64_t i = 0; i < x->n; i++)
        if (x->bit[i])
            return x->lsb + i;
    return XN_NONE;
}

bool
xn_is_zero(const xnum *x)
{
    return xn_top(x) == XN_NONE;
}

/* Compare |a| and |b|: -1, 0, +1. */
int
xn_cmp_mag(const xnum *a, const xnum *b)
{
    int64_t ta = xn_top(a), tb = xn_top(b), la, lb, lo;

    if (ta == XN_NONE || tb == XN_NONE)
        return ta == tb ? 0 : (ta == XN_NONE ? -1 : 1);
    if (ta != tb)
        return ta > tb ? 1 : -1;
    la = xn_low(a);
    lb = xn_low(b);
    lo = la < lb ? la : lb;
    for (int64_t w = ta; w >= lo; w--) {
        unsigned x = xn_bit(a, w), y = xn_bit(b, w);
        if (x != y)
            return x > y ? 1 : -1;
    }
    return 0;
}

/* z = a + b exactly (z must not alias a or b); false if too wide. */
bool
xn_add(xnum *z, const xnum *a, const xnum *b)
{
    int64_t ta = xn_top(a), tb = xn_top(b), lo, hi;
    const xnum *big = a, *small = b;
    unsigned carry = 0;

    if (ta == XN_NONE) {
        *z = *b;
        return true;
    }
    if (tb == XN_NONE) {
        *z = *a;
        return true;
    }
    lo = xn_low(a) < xn_low(b) ? xn_low(a) : xn_low(b);
    hi = (ta > tb ? ta : tb) + 1;
    if (hi - lo + 1 > XN_BITS)
        return false;
    z->lsb = lo;
    z->n = hi - lo + 1;
    if (a->sign == b->sign) {
        z->sign = a->sign;
        for (int64_t i = 0; i < z->n; i++) {
            unsigned s = xn_bit(a, lo + i) + xn_bit(b, lo + i) + carry;
            z->bit[i] = (unsigned char)(s & 1u);
            carry = s >> 1;
        }
        return true;
    }
    if (xn_cmp_mag(a, b) < 0) {
        big = b;
        small = a;
    }
    z->sign = big->sign;
    for (int64_t i = 0; i < z->n; i++) {
        int s = (int)xn_bit(big, lo + i) - (int)xn_bit(small, lo + i)
                - (int)carry;
        carry = s < 0;
        z->bit[i] = (unsigned char)(s < 0 ? s + 2 : s);
    }
    if (xn_is_zero(z))
        z->sign = false;
    return true;
}

/* z = a * b exactly (no aliasing); false if too wide. */
bool
xn_mul(xnum *z, const xnum *a, const xnum *b)
{
    if (a->n + b->n + 1 > XN_BITS)
        return false;
    z->sign = a->sign != b->sign;
    z->lsb = a->lsb + b->lsb;
    z->n = a->n + b->n + 1;
    memset(z->bit, 0, (size_t)z->n);
    for (int64_t i = 0; i < a->n; i++) {
        unsigned carry = 0;
        if (!a->bit[i])
            continue;
        for (int64_t k = 0; k < b->n || carry; k++) {
            unsigned s = z->bit[i + k] + (k < b->n ? b->bit[k] : 0u) + carry;
            z->bit[i + k] = (unsigned char)(s & 1u);
            carry = s >> 1;
        }
    }
    return true;
}

void
xn_from_dyadic(xnum *x, const sf_dyadic *d)
{
    x->sign = d->sign;
    x->lsb = d->exp;
    x->n = 128;
    for (int i = 0; i < 64; i++) {
        x->bit[i] = (unsigned char)((d->lo >> i) & 1u);
        x->bit[64 + i] = (unsigned char)((d->hi >> i) & 1u);
    }
}

/* The top 128 bits of x as a dyadic; tail set when lower bits are
   non-zero (then |x| is slightly larger than the window). */
void
xn_to_dyadic(const xnum *x, sf_dyadic *d)
{
    int64_t top = xn_top(x), base;

    memset(d, 0, sizeof *d);
    if (top == XN_NONE)
        return;
    base = top - 127;
    if (base > xn_low(x))
        d->tail = true;
    if (base < xn_low(x))
        base = xn_low(x);
    d->sign = x->sign;
    d->exp = (int32_t)base;
    for (int i = 0; i < 128; i++) {
        uint64_t v = xn_bit(x, base + i);
        if (i < 64)
            d->lo |= v << i;
        else
            d->hi |= v << (i - 64);
    }
}

/* Q = x exactly. */
void
xn_to_mpq(const xnum *x, mpq_t q)
{
    mpz_t z;

    mpz_init(z);
    for (int64_t i = 0; i < x->n; i++)
        if (x->bit[i])
            mpz_setbit(z, (mp_bitcnt_t)i);
    xdec_set_dyadic(q, x->sign, z, x->lsb);
    mpz_clear(z);
}

/* Weight of the lowest 1 bit of a dyadic's window (XN_NONE if none).  The
   library normalises an event's window to 128 bits, so when its tail is
   set the zero bits below this one are padding, not known digits: the true
   value lies strictly between W 2^exp and W 2^exp + 2^low. */
int64_t
te_dyadic_low(const sf_dyadic *d)
{
    for (int i = 0; i < 128; i++)
        if (i < 64 ? (d->lo >> i) & 1u : (d->hi >> (i - 64)) & 1u)
            return (int64_t)d->exp + i;
    return XN_NONE;
}

/* Whether x is the exact value the event reports in D: x agrees with the
   window down to the window's lowest 1 bit, and has further bits below it
   exactly when D's tail is set. */
bool
xn_matches(const xnum *x, const sf_dyadic *d)
{
    bool zero = xn_is_zero(x);
    bool dzero = d->hi == 0 && d->lo == 0 && !d->tail;
    int64_t low = te_dyadic_low(d);

    if (zero || dzero)
        return zero && dzero;
    if (low == XN_NONE || x->sign != d->sign
        || xn_top(x) > (int64_t)d->exp + 127)
        return false;
    for (int64_t w = (int64_t)d->exp + 127; w >= low; w--) {
        int64_t i = w - d->exp;
        unsigned v = i < 64 ? (unsigned)(d->lo >> i) & 1u
                            : (unsigned)(d->hi >> (i - 64)) & 1u;
        if (xn_bit(x, w) != v)
            return false;
    }
    return (xn_low(x) < low) == d->tail;
}

/* Whether v lies where the dyadic D says: equal to it when its tail is
   clear, else of its sign and strictly between W 2^exp and (W + 1) 2^exp
   (the sf_dyadic contract).  Used for the event's error. */
bool
xn_within(const xnum *v, const sf_dyadic *d)
{
    xnum *w;
    bool ok;

    if (!d->tail)
        return xn_matches(v, d);
    if (xn_is_zero(v) || v->sign != d->sign)
        return false;
    w = malloc(3 * sizeof *w);
    if (w == NULL)
        return false;
    xn_from_dyadic(&w[0], d);
    w[0].sign = false;
    xn_set(&w[1], false, 1, d->exp);
    ok = xn_add(&w[2], &w[0], &w[1]);
    ok = ok && xn_cmp_mag(&w[0], v) < 0 && xn_cmp_mag(v, &w[2]) < 0;
    free(w);
    return ok;
}

/* Q = Q * 2^e. */
void
te_mpq_scale2(mpq_t q, int64_t e)
{
    if (e >= 0)
        mpq_mul_2exp(q, q, (mp_bitcnt_t)e);
    else
        mpq_div_2exp(q, q, (mp_bitcnt_t)-e);
}

/*----------------------------------------------------------------------------
 * Operands.
 *--------------------------------------------------------------------------*/
unsigned
te_exp_field(const sf_format *f, uint64_t bits)
{
    return (unsigned)((bits & f->exp_mask) >> (f->frac_bits + f->pad_bits));
}

uint64_t
te_frac_field(const sf_format *f, uint64_t bits)
{
    return (bits & f->frac_mask) >> f->pad_bits;
}

void
te_decode(const sf_format *f, uint64_t bits, bool daz, te_opnd *o)
{
    unsigned field = te_exp_field(f, bits);
    uint64_t frac = te_frac_field(f, bits);
    unsigned ones = (1u << f->exp_bits) - 1;

    memset(o, 0, sizeof *o);
    o->f = f;
    o->bits = bits;
    o->sign = (bits & f->sign_mask) != 0;
    if (sf_is_nan(f, bits)) {
        o->k = TE_NAN;
        return;
    }
    if (field == ones && f->specials == SF_SPECIALS_IEEE) {
        o->k = TE_INF;
        return;
    }
    if (field == 0) {
        if (frac == 0) {
            o->k = TE_ZERO;
            return;
        }
        o->subnormal = true;
        if (daz) {
            o->k = TE_ZERO;
            o->daz = true;
            return;
        }
        o->k = TE_FINITE;
        o->e = f->emin;
        o->sig = frac;
        return;
    }
    o->k = TE_FINITE;
    o->e = (int64_t)field - f->bias;
    o->sig = frac | ((uint64_t)1 << f->frac_bits);
}

/* The exact value of a finite operand. */
void
te_opnd_value(const te_opnd *o, xnum *x)
{
    if (o->k != TE_FINITE)
        xn_zero(x);
    else
        xn_set(x, o->sign, o->sig, o->e - (int64_t)o->f->frac_bits);
    if (o->k == TE_ZERO)
        x->sign = o->sign;
}

/* Q = the value of a finite or zero operand. */
void
te_opnd_to_mpq(const te_opnd *o, mpq_t q)
{
    mpz_t z;

    if (o->k != TE_FINITE) {
        mpq_set_ui(q, 0, 1);
        return;
    }
    mpz_init(z);
    mpz_import(z, 1, -1, sizeof o->sig, 0, 0, &o->sig);
    xdec_set_dyadic(q, o->sign, z, o->e - (int64_t)o->f->frac_bits);
    mpz_clear(z);
}

/* Text of (value of BITS in F) - X, exactly, from malloc (NULL when
   memory runs out). */
char *
te_error_str(const sf_format *f, uint64_t bits, const mpq_t x)
{
    mpq_t v;
    te_opnd o;
    char *str;

    mpq_init(v);
    te_decode(f, bits, false, &o);
    te_opnd_to_mpq(&o, v);
    mpq_sub(v, v, x);
    str = xdec_rational(v);
    mpq_clear(v);
    return str;
}

/*----------------------------------------------------------------------------
 * Rounding events.
 *--------------------------------------------------------------------------*/
void
te_capture_event(void *user, const sf_event *ev)
{
    te_capture *c = user;

    c->ev = *ev;
    c->count++;
}

/* The exact decimal of quantity K of rounding R, from malloc (NULL when
   memory runs out).  v = A + B sqrt(C), computed from the operand bits. */
char *
te_rounding_str(const te_rounding *r, te_quantity k)
{
    mpq_t a, b, c, x;
    mpz_t z;
    int64_t u = r->ev.ulp_exp;
    char *str;

    mpq_init(a);
    mpq_init(b);
    mpq_init(c);
    mpq_init(x);
    mpz_init(z);
    switch (r->ex_kind) {
    case TE_EX_DIV:
        te_opnd_to_mpq(&r->ex_a, a);
        te_opnd_to_mpq(&r->ex_b, x);
        mpq_div(a, a, x);
        break;
    case TE_EX_SQRT:
        te_opnd_to_mpq(&r->ex_a, c);
        mpq_set_ui(b, 1, 1);
        break;
    case TE_EX_BITS:
    default:
        xn_to_mpq(&r->exact, a);
        break;
    }
    if (k == TE_V_ERROR || k == TE_V_ERROR_ULP) {
        te_opnd o;
        te_decode(r->f, r->ev.result, false, &o);
        te_opnd_to_mpq(&o, x);
        mpq_sub(a, x, a);
        mpq_neg(b, b);
    } else if (k == TE_V_DISCARDED) {
        /* |v| / ulp minus the kept bits (those at and above the ulp; the
           window's when v does not end, which are v's) */
        if (r->exact.sign) {
            mpq_neg(a, a);
            mpq_neg(b, b);
        }
        for (int64_t i = 0; i < r->exact.n; i++)
            if (r->exact.bit[i] && r->exact.lsb + i >= u)
                mpz_setbit(z, (mp_bitcnt_t)(r->exact.lsb + i - u));
    }
    if (k == TE_V_ERROR_ULP || k == TE_V_DISCARDED) {
        te_mpq_scale2(a, -u);
        te_mpq_scale2(b, -u);
        mpq_set_z(x, z);
        mpq_sub(a, a, x);
    }
    str = xdec_sqrt_affine(a, b, c);
    mpq_clear(a);
    mpq_clear(b);
    mpq_clear(c);
    mpq_clear(x);
    mpz_clear(z);
    return str;
}

/* Decimal text of a dyadic for messages; BUF of N bytes, "..." when cut. */
static const char *
dyadic_text(char *buf, size_t n, const sf_dyadic *d)
{
    if (sf_dyadic_to_string(d, buf, n) >= n && n > 4)
        strcpy(buf + n - 4, "...");
    return buf;
}

#define TEXT_MAX 4096

/* The event's error against result - X (X finite, the event's error
   finite): true when it holds, else false with a message. */
static bool
check_error(const te_rounding *r, const xnum *x, char *why, size_t n)
{
    xnum *v = malloc(3 * sizeof *v);
    te_opnd o;
    bool ok = true;

    if (v == NULL) {
        snprintf(why, n, "out of memory");
        return false;
    }
    te_decode(r->f, r->ev.result, false, &o);
    te_opnd_value(&o, &v[0]);
    v[1] = *x;
    v[1].sign = !v[1].sign;
    if (xn_add(&v[2], &v[0], &v[1]) && !xn_within(&v[2], &r->ev.error)) {
        char mine[TEXT_MAX], lib[TEXT_MAX];
        sf_dyadic d;
        xn_to_dyadic(&v[2], &d);
        snprintf(why, n, "%s: the rounding event's error (%s) is not "
                 "result - exact (%s)", r->title,
                 dyadic_text(lib, sizeof lib, &r->ev.error),
                 dyadic_text(mine, sizeof mine, &d));
        ok = false;
    }
    free(v);
    return ok;
}

bool
te_rounding_setup(te_rounding *r, const char *title, const sf_format *f,
                  sf_round mode, const sf_event *ev, const xnum *x,
                  char *why, size_t n)
{
    memset(r, 0, sizeof *r);
    r->title = title;
    r->f = f;
    r->mode = mode;
    r->ev = *ev;
    r->ex_kind = TE_EX_BITS;
    if (x != NULL) {
        r->exact = *x;
        r->tail = false;
    } else {
        xn_from_dyadic(&r->exact, &ev->exact);
        r->tail = ev->exact.tail;
    }
    if (ev->exact.hi == 0 && ev->exact.lo == 0 && !ev->exact.tail) {
        r->special = true;
        if (sf_is_nan(f, ev->result))
            r->special_why = "the result is a NaN";
        else if (sf_is_inf(f, ev->result))
            r->special_why = "the result is an exact infinity";
        else
            r->special_why = "the result is an exact zero";
        if (x != NULL && !xn_is_zero(x) && !sf_is_nan(f, ev->result)
            && !sf_is_inf(f, ev->result)) {
            snprintf(why, n, "%s: the exact value computed here is not "
                     "zero but the rounding event reports zero", title);
            return false;
        }
        return true;
    }
    if (x != NULL && !xn_matches(x, &ev->exact)) {
        char mine[TEXT_MAX], lib[TEXT_MAX];
        sf_dyadic d;
        xn_to_dyadic(x, &d);
        snprintf(why, n, "%s: the exact value shown (%s) differs from the "
                 "rounding event's exact value (%s)", title,
                 dyadic_text(mine, sizeof mine, &d),
                 dyadic_text(lib, sizeof lib, &ev->exact));
        return false;
    }
    /* the error reported is the event's: check it against result - exact */
    if (x != NULL && !ev->error_infinite)
        return check_error(r, x, why, n);
    return true;
}

bool
te_ulp_bits_get(const te_rounding *r, te_ulp_bits *u, char *why, size_t n)
{
    const sf_event *ev = &r->ev;
    int64_t w = ev->ulp_exp, low = xn_low(&r->exact);

    u->lsb = xn_bit(&r->exact, w);
    u->g = xn_bit(&r->exact, w - 1);
    u->r = xn_bit(&r->exact, w - 2);
    u->s = (low != XN_NONE && low < w - 2) || r->tail;
    /* SR: F = top 64 discarded bits, lower ones jammed into its last bit */
    u->sr_f = 0;
    for (int i = 1; i <= 64; i++)
        u->sr_f = (u->sr_f << 1) | xn_bit(&r->exact, w - i);
    if ((low != XN_NONE && low < w - 64) || r->tail)
        u->sr_f |= 1u;
    if (!r->special && (u->g != ev->guard || u->r != ev->round
                        || u->s != ev->sticky || u->lsb != ev->lsb)) {
        snprintf(why, n, "%s: the bits at the ulp 2^%d (last %u, guard %u, "
                 "round %u, sticky %u) differ from the rounding event's "
                 "(last %u, guard %u, round %u, sticky %u)", r->title,
                 ev->ulp_exp, u->lsb, u->g, u->r, u->s, ev->lsb, ev->guard,
                 ev->round, ev->sticky);
        return false;
    }
    return true;
}

int
te_expected_dir(const te_rounding *r, const te_ulp_bits *u)
{
    const sf_event *ev = &r->ev;
    bool neg = ev->exact.sign, inexact = ev->guard || ev->round || ev->sticky;

    if (r->special || ev->ftz || !inexact)
        return 0;
    switch (r->mode) {
    case SF_RNE:
        if (ev->tie)
            return ev->lsb ? 1 : -1;
        return ev->guard ? 1 : -1;
    case SF_RNA:
        return ev->guard ? 1 : -1;
    case SF_RTZ:
        return -1;
    case SF_RDN:
        return neg ? 1 : -1;
    case SF_RUP:
        return neg ? -1 : 1;
    case SF_ROD:
        return ev->lsb ? -1 : 1;
    case SF_SR:
        return ev->sr_random < u->sr_f ? 1 : -1;
    default:
        return 0;
    }
}

/*----------------------------------------------------------------------------
 * Alignment and products.
 *--------------------------------------------------------------------------*/
void
te_addend_from_opnd(te_addend *a, const char *name, const te_opnd *o)
{
    a->name = name;
    te_opnd_value(o, &a->x);
    a->zero = o->k != TE_FINITE;
    a->lead = o->e;
    a->last = o->e - (int64_t)o->f->frac_bits;
}

/* The carry-out, normalisation and sign of the sum of AL (BIG the larger
   addend). */
static void
align_result(te_alignment *al, const te_addend *big)
{
    int64_t top = xn_top(&al->sum);

    al->carry = top == al->point + 1;
    al->norm = top == XN_NONE ? 0 : top - al->point;
    al->exp_result = top == XN_NONE ? al->point : top;
    al->sum.sign = al->sum.sign != big->x.sign;
    if (xn_is_zero(&al->sum))
        al->sum.sign = false;
}

bool
te_align(const te_addend *a, const te_addend *b, te_alignment *al,
         char *why, size_t n)
{
    const te_addend *big = a, *small = b;

    memset(al, 0, offsetof(te_alignment, mag_big));
    xn_zero(&al->sum);
    if (a->zero || b->zero) {
        al->any_zero = true;
        if (!xn_add(&al->sum, &a->x, &b->x)) {
            snprintf(why, n, "an exact sum is too wide to show");
            return false;
        }
        return true;
    }
    al->subtract = a->x.sign != b->x.sign;
    if (al->subtract ? xn_cmp_mag(&b->x, &a->x) > 0 : b->lead > a->lead) {
        big = b;
        small = a;
        al->swapped = true;
    }
    al->point = a->lead > b->lead ? a->lead : b->lead;
    al->hi = al->point + 1;
    al->lo = big->last < small->last ? big->last : small->last;
    al->big_last = big->last;
    al->small_last = small->last;
    al->exp_big = big->lead;
    al->exp_small = small->lead;
    al->diff = big->lead - small->lead;
    al->mag_big = big->x;
    al->mag_big.sign = false;
    al->mag_small = small->x;
    al->mag_small.sign = al->subtract;
    if (!xn_add(&al->sum, &al->mag_big, &al->mag_small)) {
        snprintf(why, n, "an exact sum is too wide to show");
        return false;
    }
    al->mag_small.sign = false;
    al->mag_sum = al->sum;
    al->mag_sum.sign = false;
    if (small->last < big->last) {
        int64_t low = xn_low(&small->x);
        al->n_shifted = big->last - small->last;
        al->shifted_nonzero = low != XN_NONE && low < big->last;
    }
    align_result(al, big);
    return true;
}

bool
te_product(const te_opnd *oa, const te_opnd *ob, te_addend *p, xnum *sa,
           xnum *sb, int64_t *top)
{
    int64_t fb = (int64_t)oa->f->frac_bits;

    p->name = "a*b";
    p->zero = oa->k != TE_FINITE || ob->k != TE_FINITE;
    p->lead = oa->e + ob->e;
    p->last = oa->e + ob->e - 2 * fb;
    xn_set(sa, false, oa->sig, 0);
    xn_set(sb, false, ob->sig, 0);
    if (p->zero) {
        xn_zero(&p->x);
        p->x.sign = oa->sign != ob->sign;
        *top = XN_NONE;
        return true;
    }
    if (!xn_mul(&p->x, sa, sb))
        return false;
    *top = xn_top(&p->x);
    /* the product's own leading bit sets its alignment */
    p->x.lsb = p->last;
    p->x.sign = oa->sign != ob->sign;
    p->lead = p->last + *top;
    return true;
}

int
te_check_quotient(const sf_event *ev, const te_opnd *oa, const te_opnd *ob,
                  bool is_sqrt)
{
    xnum *v = malloc(6 * sizeof *v);
    int lo_cmp, hi_cmp;

    if (v == NULL)
        return -1;
    /* v0 = W 2^e, v1 = W 2^e + 2^low (low: the window's lowest 1 bit), as
       magnitudes: a tail puts the true value strictly between them */
    xn_from_dyadic(&v[0], &ev->exact);
    v[0].sign = false;
    xn_set(&v[5], false, 1, te_dyadic_low(&ev->exact));
    xn_add(&v[1], &v[0], &v[5]);
    te_opnd_value(oa, &v[4]);
    v[4].sign = false;
    if (is_sqrt) {
        xn_mul(&v[2], &v[0], &v[0]);
        xn_mul(&v[3], &v[1], &v[1]);
    } else {
        xnum *bm = &v[5];
        te_opnd_value(ob, bm);
        bm->sign = false;
        xn_mul(&v[2], &v[0], bm);
        xn_mul(&v[3], &v[1], bm);
    }
    lo_cmp = xn_cmp_mag(&v[2], &v[4]);
    hi_cmp = xn_cmp_mag(&v[4], &v[3]);
    free(v);
    return (lo_cmp > 0 || hi_cmp >= 0 || (lo_cmp == 0) == ev->exact.tail)
               ? 1
               : 0;
}

/*----------------------------------------------------------------------------
 * Sums.
 *--------------------------------------------------------------------------*/
bool
te_typed_value(const te_typed *x, mpq_t q)
{
    te_opnd o;
    bool neg;

    if (!x->prefixed)
        return xdec_parse(q, &neg, x->text) == XDEC_OK;
    te_decode(x->fmt, x->bits, false, &o);
    if (o.k == TE_NAN || o.k == TE_INF)
        return false;
    te_opnd_to_mpq(&o, q);
    return true;
}

bool
te_operand_sums(const sf_format *acc, int n, const uint64_t *read_bits,
                const te_typed *typed, mpq_t read, mpq_t typed_sum,
                bool *all_exact)
{
    mpq_t r, v;
    bool ok = true;

    mpq_inits(r, v, NULL);
    mpq_set_ui(read, 0, 1);
    mpq_set_ui(typed_sum, 0, 1);
    *all_exact = true;
    for (int i = 0; i < n && ok; i++) {
        te_opnd o;
        te_decode(acc, read_bits[i], false, &o);
        ok = o.k != TE_NAN && o.k != TE_INF && te_typed_value(&typed[i], v);
        if (!ok)
            break;
        te_opnd_to_mpq(&o, r);
        *all_exact = *all_exact && mpq_equal(r, v);
        mpq_add(read, read, r);
        mpq_add(typed_sum, typed_sum, v);
    }
    mpq_clears(r, v, NULL);
    return ok;
}

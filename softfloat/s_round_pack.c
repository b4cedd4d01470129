/* s_round_pack -- the one rounding routine: modes, range, flags, events */
#include "internal.h"

/*----------------------------------------------------------------------------
 * Rounding an exact magnitude to a multiple of 2^q.
 *--------------------------------------------------------------------------*/
static inline s_u128
low_mask(int n) /* 0 <= n <= 128 */
{
    return n >= 128 ? ~(s_u128)0 : (((s_u128)1 << n) - 1);
}

static inline unsigned
bit_at(s_u128 a, int pos) /* 0 for pos outside [0, 127] */
{
    return (pos >= 0 && pos <= 127) ? (unsigned)(a >> pos) & 1u : 0u;
}

void
s_round_at(bool sign, int32_t e, s_u128 sig, bool tail, int32_t q,
           sf_round rm, uint64_t rnd, s_rounded *r)
{
    /* sh = number of discarded bit positions (>= 64) */
    int64_t sh64 = (int64_t)q - (int64_t)e + 127;
    int sh = sh64 > 200 ? 200 : (int)sh64;
    uint64_t kept;
    unsigned lsb, g, rb, st;
    bool inexact, inc;

    if (SF_LIKELY(sh >= 66 && sh <= 127)) {
        /* kept, guard and round all lie in the high word */
        uint64_t hi = (uint64_t)(sig >> 64), lo = (uint64_t)sig;
        int s = sh - 64; /* 2..63 */
        kept = hi >> s;
        g = (unsigned)(hi >> (s - 1)) & 1u;
        rb = (unsigned)(hi >> (s - 2)) & 1u;
        st = tail || lo != 0 || (hi & (((uint64_t)1 << (s - 2)) - 1)) != 0;
    } else {
        kept = sh >= 128 ? 0 : (uint64_t)(sig >> sh);
        g = bit_at(sig, sh - 1);
        rb = bit_at(sig, sh - 2);
        st = tail || (sh - 2 >= 128 ? sig != 0
                                    : (sig & low_mask(sh - 2)) != 0);
    }
    lsb = (unsigned)kept & 1u;
    inexact = (g | rb | st) != 0;

    SF_ASSERT_DEBUG(sh >= 64);
    switch (rm) {
    case SF_RNE:
        inc = g && (rb || st || lsb);
        break;
    case SF_RNA:
        inc = g;
        break;
    case SF_RUP:
        inc = !sign && inexact;
        break;
    case SF_RDN:
        inc = sign && inexact;
        break;
    case SF_ROD:
        /* odd last bit when inexact: kept | 1 */
        inc = inexact && !lsb;
        break;
    case SF_SR: {
        /* F = top 64 bits of the discarded fraction of an ulp, with every
           lower discarded bit jammed into its last bit; up iff rnd < F, so
           P(up) = F / 2^64. */
        uint64_t frac64 = (uint64_t)s_shift_right_jam128(
                              sig & low_mask(sh < 128 ? sh : 128), sh - 64)
                          | (uint64_t)tail;
        inc = rnd < frac64;
        break;
    }
    case SF_RTZ:
    default:
        inc = false;
        break;
    }
    r->kept = kept + inc;
    r->dir = inexact ? (inc ? 1 : -1) : 0;
    r->lsb = lsb;
    r->guard = g;
    r->round = rb;
    r->sticky = st;
    r->tie = g && !rb && !st;
}

/*----------------------------------------------------------------------------
 * Dyadic helpers for events.
 *--------------------------------------------------------------------------*/
void
s_dyadic_set(sf_dyadic *d, bool sign, int32_t exp, s_u128 sig, bool tail)
{
    d->sign = sign;
    d->tail = tail;
    d->exp = exp;
    d->hi = (uint64_t)(sig >> 64);
    d->lo = (uint64_t)sig;
}

static int
bit_len128(s_u128 a)
{
    return a == 0 ? 0 : 128 - s_clz128(a);
}

/* *OUT = (-1)^sign * (R * 2^rexp - x), R < 2^64, x = X * 2^xexp exactly,
   or with XTAIL somewhere in (X, X + 1) * 2^xexp.  Both are aligned to a
   window of at most 128 bits at the lowest exponent that holds the
   larger; what falls below it, and X's tail (which spans 2^(xexp - base)
   units when X is shifted up to the window), leave the difference known
   only within an open interval (LO, HI) of units.  The result is exact
   when nothing was lost; else the window is made coarser, bit by bit,
   until one unit (W, W + 1) holds the interval, and out->tail says the
   true magnitude lies strictly inside it. */
void
s_dyadic_error(bool sign, uint64_t rsig, int32_t rexp, s_u128 xsig,
               int32_t xexp, bool xtail, sf_dyadic *out)
{
    int64_t tr = rsig ? (int64_t)rexp + bit_len128(rsig) : INT32_MIN;
    int64_t tx = xsig ? (int64_t)xexp + bit_len128(xsig) : INT32_MIN;
    int64_t top = tr > tx ? tr : tx;
    int64_t base = rexp < xexp ? rexp : xexp;
    bool r_lost = false, x_lost = false, neg;
    s_u128 R = rsig, X = xsig, ux = 0, m, lo, hi;
    int k = 0;

    if (top - base > 127)
        base = top - 127;
    if (rexp >= base) {
        if (R != 0)
            R <<= (rexp - base);
    } else {
        int d = (int)(base - rexp > 200 ? 200 : base - rexp);
        r_lost = d >= 128 ? R != 0 : (R & low_mask(d)) != 0;
        R = d >= 128 ? 0 : R >> d;
    }
    if (xexp >= base) {
        if (X != 0)
            X <<= (xexp - base);
        if (xtail)
            ux = (s_u128)1 << (xexp - base);
    } else {
        int d = (int)(base - xexp > 200 ? 200 : base - xexp);
        x_lost = xtail || (d >= 128 ? X != 0 : (X & low_mask(d)) != 0);
        X = d >= 128 ? 0 : X >> d;
        if (x_lost)
            ux = 1;
    }
    /* r in [R, R + 1) (exactly R unless r_lost), x in [X, X + ux]: the
       difference r - x lies strictly between R - X - ux and R - X + 1
       (R - X itself when nothing was lost) */
    /* R == X with x above X (its tail): r - x is negative */
    neg = X > R || (X == R && !r_lost && ux != 0);
    m = neg ? X - R : R - X;
    if (!r_lost && ux == 0) {
        s_dyadic_set(out, neg ? !sign : sign, (int32_t)base, m, false);
        if (m == 0)
            out->sign = false;
        return;
    }
    /* the magnitude's open interval (LO, HI) on the side of m's sign (an
       interval across zero keeps that side: its other part is narrower
       than one unit) */
    if (neg) {
        lo = r_lost && m > 0 ? m - 1 : m;
        hi = m + ux;
    } else {
        lo = m > ux ? m - ux : 0;
        hi = m + (r_lost ? 1 : 0);
    }
    if (hi < m) {
        /* past 2^128: both bounds in units of two, HI rounded up */
        hi = (hi >> 1) + ((hi & 1) != 0) + ((s_u128)1 << 127);
        lo >>= 1;
        base++;
    }
    while (k < 127 && (hi - 1) >> k != lo >> k)
        k++;
    s_dyadic_set(out, neg ? !sign : sign, (int32_t)(base + k), lo >> k,
                 true);
}

void
s_event_begin(sf_event *ev, const sf_format *f, sf_round rm,
              const s_opctx *ctx)
{
    ev->op = ctx ? ctx->op : 0;
    ev->mode = rm;
    ev->fmt = f;
    ev->n_in = ctx ? ctx->n_in : 0;
    for (unsigned i = 0; i < 3; i++) {
        ev->in_fmt[i] = (ctx && i < ctx->n_in) ? ctx->in_fmt[i] : NULL;
        ev->in[i] = (ctx && i < ctx->n_in) ? ctx->in[i] : 0;
    }
    ev->daz = ctx ? ctx->daz : false;
    ev->lsb = ev->guard = ev->round = ev->sticky = 0;
    ev->tie = false;
    ev->dir = 0;
    ev->tiny = ev->subnormal = ev->ftz = ev->overflow = false;
    ev->error_infinite = false;
    ev->sr_random = 0;
    ev->ulp_exp = 0;
}

void
s_event_special(const sf_format *f, uint64_t result, unsigned flags,
                sf_round rm, sf_env *env, const s_opctx *ctx)
{
    sf_event ev;

    if (!S_EVENTS_ON(env))
        return;
    s_event_begin(&ev, f, rm, ctx);
    ev.result = result;
    ev.flags = flags;
    ev.error_infinite = f ? !sf_is_finite(f, result) : false;
    s_dyadic_set(&ev.exact, f ? sf_sign(f, result) : false, 0, 0, false);
    s_dyadic_set(&ev.error, false, 0, 0, false);
    if (f && f->specials == SF_SPECIALS_IEEE && sf_is_inf(f, result))
        ev.exact.sign = sf_sign(f, result);
    env->events->fn(env->events->user, &ev);
}

/* Everything s_round_pack knows about one rounding, for its event. */
typedef struct
{
    bool sign;
    int e;            /* |exact| in [2^e, 2^(e+1)) */
    s_u128 sig;       /* top bit at 127 */
    int n;            /* sig was shifted left by n to put its top at 127 */
    bool tail;
    int32_t q;        /* rounding quantum 2^q */
    const s_rounded *r;
    uint64_t bits;
    unsigned flags;
    bool tiny, flushed, ovf, inf;
    uint64_t rnd;
} s_round_info;

/* Out of line and cold, so that without a sink the rounding path pays one
   branch and no register pressure. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void
round_event(const sf_format *f, const s_round_info *x, sf_round rm,
            sf_env *env, const s_opctx *ctx)
{
    sf_event ev;
    /* With a tail, the bits below the operation's window are unknown, not
       zero: report the window as the operation computed it. */
    s_u128 xsig = x->tail ? x->sig >> x->n : x->sig;
    int32_t xexp = x->e - 127 + (x->tail ? x->n : 0);

    s_event_begin(&ev, f, rm, ctx);
    s_dyadic_set(&ev.exact, x->sign, xexp, xsig, x->tail);
    ev.ulp_exp = x->q;
    s_event_rounded(&ev, x->r);
    ev.result = x->bits;
    ev.flags = x->flags;
    ev.tiny = x->tiny;
    ev.ftz = x->flushed;
    ev.overflow = x->ovf;
    ev.sr_random = x->rnd;
    ev.subnormal = sf_is_subnormal(f, x->bits);
    if (x->inf) {
        ev.dir = 1;
        ev.error_infinite = true;
        s_dyadic_set(&ev.error, x->sign, 0, 0, false);
    } else {
        s_unpacked u;
        sf_env plain = SF_ENV_IEEE;
        s_unpack(f, x->bits, &plain, &u);
        s_dyadic_error(x->sign, u.cls == S_FINITE ? u.sig : 0,
                       u.cls == S_FINITE ? u.exp : x->q, xsig, xexp,
                       x->tail, &ev.error);
        ev.dir = (ev.error.hi | ev.error.lo) == 0 && !ev.error.tail
                     ? 0
                     : (ev.error.sign == x->sign ? 1 : -1);
    }
    env->events->fn(env->events->user, &ev);
}

/*----------------------------------------------------------------------------
 * Round and pack.
 *--------------------------------------------------------------------------*/
uint64_t
s_round_pack(const sf_format *f, bool sign, int32_t exp, s_u128 sig,
             bool tail, sf_round rm, sf_env *env, const s_opctx *ctx)
{
    const int32_t fb = (int32_t)f->frac_bits;
    const uint64_t hidden = (uint64_t)1 << fb;
    int n, e;
    int32_t q;
    uint64_t rnd = 0, bits, kept;
    s_rounded r;
    bool tiny = false, ovf = false, flushed = false, to_inf = false;
    unsigned flags = 0;

    SF_ASSERT_DEBUG(sig != 0);
    SF_ASSERT_DEBUG(!tail || sig >= ((s_u128)1 << (fb + 3)));
    n = s_clz128(sig);
    sig <<= n;
    e = exp - n + 127; /* |x| in [2^e, 2^(e+1)) */
    q = (e < f->emin ? f->emin : e) - fb;
    if (rm == SF_SR)
        rnd = s_sr_draw(env);
    s_round_at(sign, e, sig, tail, q, rm, rnd, &r);
    kept = r.kept;
    if (e < f->emin) {
        if (env->tininess_after) {
            s_rounded r2;
            s_round_at(sign, e, sig, tail, e - fb, rm, rnd, &r2);
            tiny = !(e == f->emin - 1 && r2.kept == (hidden << 1));
        } else {
            tiny = true;
        }
    }

    if (tiny && env->ftz) {
        flushed = true;
        bits = s_pack_zero(f, sign);
        flags = SF_FLAG_UNDERFLOW | SF_FLAG_INEXACT;
    } else {
        int32_t qq = q;
        if (kept == (hidden << 1)) { /* carry out: 2^(p) ulps */
            kept >>= 1;
            qq++;
        }
        if (kept >= hidden) {
            int32_t unb = qq + fb;
            uint64_t frac = kept - hidden;
            ovf = unb > f->emax
                  || (unb == f->emax && frac > f->max_frac);
            bits = ovf ? 0 : s_pack(f, sign, (uint64_t)(unb + f->bias), frac);
        } else {
            bits = s_pack(f, sign, 0, kept); /* subnormal or zero */
        }
        if (ovf) {
            switch (rm) {
            case SF_RNE: case SF_RNA: case SF_SR:
                to_inf = true;
                break;
            case SF_RUP:
                to_inf = !sign;
                break;
            case SF_RDN:
                to_inf = sign;
                break;
            default:
                to_inf = false;
                break;
            }
            if (env->saturate)
                to_inf = false;
            bits = to_inf ? s_pack_inf(f, sign) : s_pack_max(f, sign);
            flags = SF_FLAG_OVERFLOW | SF_FLAG_INEXACT;
        } else if (r.dir != 0) {
            flags = SF_FLAG_INEXACT | (tiny ? SF_FLAG_UNDERFLOW : 0u);
        }
    }
    env->flags |= flags;

    if (S_EVENTS_ON(env)) {
        s_round_info info = {sign, e, sig, n, tail, q, &r, bits, flags, tiny,
                             flushed, ovf, ovf && to_inf, rnd};
        round_event(f, &info, rm, env, ctx);
    }
    return bits;
}

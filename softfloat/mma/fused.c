/* fused -- the block FMA (fused dot-add) and the exact dot product,
   in exact integer arithmetic with one final rounding */
#include <string.h>

#include "softfloat/mma/mma_local.h"

/*----------------------------------------------------------------------------
 * A wide fixed-point accumulator for sums with nothing discarded.  Every
 * product of two values of formats of at most 32 bits is a multiple of
 * 2^-298 below 2^256, so 640 bits from 2^-320 hold any sum of fewer than
 * 2^63 of them in two's complement.
 *--------------------------------------------------------------------------*/
#define W_LIMBS 10
#define W_BASE 320 /* bit 0 of limb 0 weighs 2^-W_BASE */

typedef struct
{
    uint64_t w[W_LIMBS];
} s_wide;

/* x += (-1)^neg * sig * 2^exp, sig < 2^64. */
static void
wide_add(s_wide *x, bool neg, uint64_t sig, int32_t exp)
{
    int64_t pos = (int64_t)exp + W_BASE;
    uint64_t part[2];
    unsigned limb, off;

    if (pos < 0) {
        /* below the accumulator (not reachable for inputs of at most 32
           bits): keep a non-zero trace in the last bit */
        sig =
            pos <= -64 ? sig != 0 : (sig >> -pos) | ((sig << (64 + pos)) != 0);
        pos = 0;
    }
    if (pos >= 64 * (W_LIMBS - 1))
        return; /* beyond any reachable sum */
    limb = (unsigned)(pos / 64);
    off = (unsigned)(pos % 64);
    part[0] = sig << off;
    part[1] = off ? sig >> (64 - off) : 0;
    if (!neg) {
        unsigned carry = 0;
        for (unsigned i = limb; i < W_LIMBS; i++) {
            uint64_t add = i - limb < 2 ? part[i - limb] : 0;
            uint64_t s = x->w[i] + add;
            unsigned c1 = s < add;
            uint64_t t = s + carry;
            unsigned c2 = t < s;
            x->w[i] = t;
            carry = c1 | c2;
            if (i - limb >= 1 && !carry)
                break;
        }
    } else {
        unsigned borrow = 0;
        for (unsigned i = limb; i < W_LIMBS; i++) {
            uint64_t sub = i - limb < 2 ? part[i - limb] : 0;
            uint64_t s = x->w[i] - sub;
            unsigned b1 = x->w[i] < sub;
            uint64_t t = s - borrow;
            unsigned b2 = s < borrow;
            x->w[i] = t;
            borrow = b1 | b2;
            if (i - limb >= 1 && !borrow)
                break;
        }
    }
}

/* The value of X as (-1)^sign * (sig + tail) * 2^exp with sig's top bit at
   127 when |x| >= 2^(127 - W_BASE); false if x = 0. */
static bool
wide_get(const s_wide *x, bool *sign, int32_t *exp, s_u128 *sig, bool *tail)
{
    uint64_t w[W_LIMBS];
    int h = W_LIMBS - 1;
    int64_t top, lo;

    memcpy(w, x->w, sizeof w);
    *sign = (w[W_LIMBS - 1] >> 63) != 0;
    if (*sign) { /* negate: ~w + 1 */
        unsigned carry = 1;
        for (unsigned i = 0; i < W_LIMBS; i++) {
            w[i] = ~w[i] + carry;
            carry = carry && w[i] == 0;
        }
    }
    while (h >= 0 && w[h] == 0)
        h--;
    if (h < 0)
        return false;
    top = (int64_t)h * 64 + 63 - s_clz64(w[h]);
    lo = top - 127;
    if (lo <= 0) {
        *sig = (s_u128)w[1] << 64 | w[0];
        *exp = -W_BASE;
        *tail = false;
        return true;
    }
    {
        unsigned limb = (unsigned)(lo / 64), off = (unsigned)(lo % 64);
        uint64_t l0 = w[limb], l1 = limb + 1 < W_LIMBS ? w[limb + 1] : 0,
                 l2 = limb + 2 < W_LIMBS ? w[limb + 2] : 0;
        uint64_t r0 = off ? (l0 >> off) | (l1 << (64 - off)) : l0;
        uint64_t r1 = off ? (l1 >> off) | (l2 << (64 - off)) : l1;
        bool t = off ? (l0 & (((uint64_t)1 << off) - 1)) != 0 : false;
        for (unsigned i = 0; i < limb && !t; i++)
            t = w[i] != 0;
        *sig = (s_u128)r1 << 64 | r0;
        *exp = (int32_t)(lo - W_BASE);
        *tail = t;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Alignment events.
 *--------------------------------------------------------------------------*/
static void
align_event(sf_env *env, const s_opctx *ctx, sf_round mode, bool sign,
            uint64_t sig, int32_t e_low, int32_t q, const s_rounded *r)
{
    sf_event ev;

    memset(&ev, 0, sizeof ev);
    s_event_begin(&ev, NULL, mode, ctx);
    s_dyadic_set(&ev.exact, sign, e_low, sig, false);
    ev.ulp_exp = q;
    s_event_rounded(&ev, r);
    ev.dir = r->dir;
    ev.result = sign ? (uint64_t)0 - r->kept : r->kept;
    s_dyadic_error(sign, r->kept, q, sig, e_low, false, &ev.error);
    env->events->fn(env->events->user, &ev);
}

/* Magnitude SIG * 2^E_LOW on the grid 2^q, q > E_LOW, by M's align rule;
 *LOST gets whether it changed. */
static uint64_t
align_term(const sf_mma_model *m, bool sign, uint64_t sig, int32_t e_low,
           int32_t q, bool *lost, sf_env *env, const s_opctx *ctx)
{
    int32_t shift = q - e_low; /* > 0 */
    int nz;
    s_rounded r;
    sf_round mode;

    if (m->align == SF_MMA_ALIGN_TRUNC && !S_EVENTS_ON(env)) {
        uint64_t kept = shift >= 64 ? 0 : sig >> shift;
        *lost = shift >= 64 ? sig != 0 : (kept << shift) != sig;
        return kept;
    }
    mode = m->align == SF_MMA_ALIGN_RNE      ? SF_RNE
           : m->align == SF_MMA_ALIGN_STICKY ? SF_ROD
                                             : SF_RTZ;
    nz = s_clz64(sig);
    /* |term| in [2^e, 2^(e+1)), e = e_low + 63 - nz <= q + F + 1 */
    s_round_at(sign, e_low + 63 - nz, (s_u128)sig << (64 + nz), false, q, mode,
               0, &r);
    *lost = r.dir != 0;
    if (*lost && S_EVENTS_ON(env))
        align_event(env, ctx, mode, sign, sig, e_low, q, &r);
    return r.kept;
}

/*----------------------------------------------------------------------------
 * The block.
 *--------------------------------------------------------------------------*/

/* What pass 1 finds over the products and C: the first NaN, the
   specials, whether any finite term exists, the signs of the zero terms
   and the largest term's exponent. */
typedef struct
{
    const sf_format *nan_fmt;
    uint64_t nan_bits;
    bool any_snan, invalid, inf_pos, inf_neg;
    bool any_term, all_zero_neg, all_zero_pos, daz;
    int32_t emax;
    s_unpacked uc; /* C unpacked (with_c) */
} fused_scan;

static void
scan_terms(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
           const sf_format *fb, const s_mma_vec *b, size_t n, uint64_t c,
           bool with_c, sf_env *env, fused_scan *t)
{
    const sf_format *fc = m->acc;
    const int32_t fab = (int32_t)(fa->frac_bits + fb->frac_bits);
    s_unpacked ua, ub;

    memset(t, 0, sizeof *t);
    t->all_zero_neg = t->all_zero_pos = true;
    t->emax = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = s_mma_ld(a, i), y = s_mma_ld(b, i);
        bool sp;
        s_unpack(fa, x, env, &ua);
        s_unpack(fb, y, env, &ub);
        t->daz |= ua.daz | ub.daz;
        sp = ua.sign != ub.sign;
        if (ua.cls == S_NAN || ub.cls == S_NAN) {
            t->any_snan |= ua.snan | ub.snan;
            if (t->nan_fmt == NULL) {
                t->nan_fmt = ua.cls == S_NAN ? fa : fb;
                t->nan_bits = ua.cls == S_NAN ? x : y;
            }
        } else if (ua.cls == S_INF || ub.cls == S_INF) {
            if (ua.cls == S_ZERO || ub.cls == S_ZERO)
                t->invalid = true;
            else if (sp)
                t->inf_neg = true;
            else
                t->inf_pos = true;
        } else if (ua.cls == S_FINITE && ub.cls == S_FINITE) {
            int32_t e = ua.exp + ub.exp + fab;
            t->any_term = true;
            if (e > t->emax)
                t->emax = e;
        } else {
            t->all_zero_neg &= sp;
            t->all_zero_pos &= !sp;
        }
    }
    if (!with_c)
        return;
    s_unpack(fc, c, env, &t->uc);
    t->daz |= t->uc.daz;
    if (t->uc.cls == S_NAN) {
        t->any_snan |= t->uc.snan;
        if (t->nan_fmt == NULL) {
            t->nan_fmt = fc;
            t->nan_bits = c;
        }
    } else if (t->uc.cls == S_INF) {
        if (t->uc.sign)
            t->inf_neg = true;
        else
            t->inf_pos = true;
    } else if (t->uc.cls == S_FINITE) {
        int32_t e = t->uc.exp + (int32_t)fc->frac_bits;
        t->any_term = true;
        if (e > t->emax)
            t->emax = e;
    } else {
        t->all_zero_neg &= t->uc.sign;
        t->all_zero_pos &= !t->uc.sign;
        if (m->zero_c_in_max && fc->emin > t->emax)
            t->emax = fc->emin;
    }
}

/* The result when pass 1 found a NaN, an invalid product or infinities:
   its bits, with its flags and event. */
static uint64_t
special_result(const sf_mma_model *m, const fused_scan *t, unsigned before,
               sf_env *env, const s_opctx *ctx)
{
    const sf_format *fc = m->acc;
    uint64_t z;

    if (t->nan_fmt != NULL) {
        z = s_mma_nan_result(m, t->nan_fmt, t->nan_bits, t->any_snan, env);
        if (t->invalid || (t->inf_pos && t->inf_neg))
            env->flags |= SF_FLAG_INVALID;
    } else if (t->invalid || (t->inf_pos && t->inf_neg)) {
        z = s_invalid(fc, env);
    } else {
        z = s_pack_inf(fc, t->inf_neg);
    }
    s_event_special(fc, z, env->flags & ~before, m->rm, env, ctx);
    return z;
}

/* Pass 2, nothing discarded: the exact sum, rounded once. */
static uint64_t
sum_exact(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
          const sf_format *fb, const s_mma_vec *b, size_t n,
          const fused_scan *t, bool with_c, sf_env *env, const s_opctx *ctx)
{
    const sf_format *fc = m->acc;
    s_unpacked ua, ub;
    s_wide acc;
    bool sign, tail;
    int32_t exp;
    s_u128 sig;
    uint64_t z;

    memset(&acc, 0, sizeof acc);
    for (size_t i = 0; i < n; i++) {
        s_unpack(fa, s_mma_ld(a, i), env, &ua);
        s_unpack(fb, s_mma_ld(b, i), env, &ub);
        if (ua.cls == S_FINITE && ub.cls == S_FINITE)
            wide_add(&acc, ua.sign != ub.sign, ua.sig * ub.sig,
                     ua.exp + ub.exp);
    }
    if (with_c && t->uc.cls == S_FINITE)
        wide_add(&acc, t->uc.sign, t->uc.sig, t->uc.exp);
    if (!wide_get(&acc, &sign, &exp, &sig, &tail)) {
        z = s_pack_zero(fc, s_mma_zero_sign(m, m->rm, false, false));
        s_event_special(fc, z, 0, m->rm, env, ctx);
        return z;
    }
    return s_mma_round(m, fc, sign, exp, sig, tail, m->rm, env, ctx);
}

/* Pass 2: every term on the grid 2^q, q = max(emax, the model's floor)
   - F, aligned by the model's rule (|kept| < 2^(F+2) each), summed
   exactly, then rounded once. */
static uint64_t
sum_on_grid(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
            const sf_format *fb, const s_mma_vec *b, size_t n, size_t k0,
            uint64_t c, bool with_c, const fused_scan *t, unsigned before,
            sf_env *env, const s_opctx *ctx)
{
    const sf_format *fc = m->acc;
    int32_t emax = t->emax, q;
    s_u128 sum = 0, mag;
    bool lost_any = false, neg;
    s_unpacked ua, ub;
    uint64_t z;

    if (m->emax_floor != SF_MMA_NO_FLOOR && emax < m->emax_floor)
        emax = m->emax_floor;
    q = emax - m->frac_bits;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = s_mma_ld(a, i), y = s_mma_ld(b, i), sig, kept;
        int32_t e_low;
        bool sign, lost = false;
        s_unpack(fa, x, env, &ua);
        s_unpack(fb, y, env, &ub);
        if (ua.cls != S_FINITE || ub.cls != S_FINITE)
            continue;
        sig = ua.sig * ub.sig;
        e_low = ua.exp + ub.exp;
        sign = ua.sign != ub.sign;
        if (e_low >= q) {
            kept = sig << (e_low - q);
        } else {
            s_opctx actx = {SF_OP_MMA_ALIGN,
                            3,
                            {fa, fb, NULL},
                            {x, y, k0 + i},
                            ua.daz || ub.daz};
            kept = align_term(m, sign, sig, e_low, q, &lost, env, &actx);
        }
        lost_any |= lost;
        sum = sign ? sum - kept : sum + kept;
    }
    if (with_c && t->uc.cls == S_FINITE) {
        uint64_t kept;
        bool lost = false;
        if (t->uc.exp >= q) {
            kept = t->uc.sig << (t->uc.exp - q);
        } else {
            s_opctx actx = {
                SF_OP_MMA_ALIGN, 1, {fc, NULL, NULL}, {c, 0, 0}, false};
            kept = align_term(m, t->uc.sign, t->uc.sig, t->uc.exp, q, &lost,
                              env, &actx);
        }
        lost_any |= lost;
        sum = t->uc.sign ? sum - kept : sum + kept;
    }
    neg = (sum >> 127) != 0;
    mag = neg ? (s_u128)0 - sum : sum;
    if (mag == 0) {
        z = s_pack_zero(fc, s_mma_zero_sign(m, m->rm, false, false));
        if (lost_any)
            env->flags |= SF_FLAG_INEXACT;
        s_event_special(fc, z, env->flags & ~before, m->rm, env, ctx);
        return z;
    }
    z = s_mma_round(m, fc, neg, q, mag, false, m->rm, env, ctx);
    if (lost_any)
        env->flags |= SF_FLAG_INEXACT;
    return z;
}

uint64_t
s_mma_fused(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
            const sf_format *fb, const s_mma_vec *b, size_t n, size_t k0,
            uint64_t c, bool with_c, bool exact, sf_env *env)
{
    const sf_format *fc = m->acc;
    unsigned before = env->flags;
    fused_scan t;
    uint64_t z;
    s_opctx ctx = {m->kind == SF_MMA_EXACT ? SF_OP_MMA_EXACT : SF_OP_MMA_BLOCK,
                   3,
                   {fc, NULL, NULL},
                   {c, k0, n},
                   false};

    /* Pass 1: specials, the zero terms' signs and emax. */
    scan_terms(m, fa, a, fb, b, n, c, with_c, env, &t);
    ctx.daz = t.daz;
    if (t.nan_fmt != NULL || t.invalid || t.inf_pos || t.inf_neg)
        return special_result(m, &t, before, env, &ctx);
    if (!t.any_term) {
        bool neg_all = t.all_zero_neg && (n > 0 || with_c);
        z = s_pack_zero(
            fc, s_mma_zero_sign(m, m->rm, neg_all || t.all_zero_pos, neg_all));
        s_event_special(fc, z, 0, m->rm, env, &ctx);
        return z;
    }
    if (exact || m->frac_bits == SF_MMA_F_EXACT)
        return sum_exact(m, fa, a, fb, b, n, &t, with_c, env, &ctx);
    return sum_on_grid(m, fa, a, fb, b, n, k0, c, with_c, &t, before, env,
                       &ctx);
}

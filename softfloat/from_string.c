/* sf_from_string -- parse decimal or hex-float text, rounding it once */
#include "internal.h"
#include "s_bignum.h"

/*
 * Contract (see softfloat.h).  Grammar, case-insensitive, no leading
 * white space (a string starting with a space is a syntax error):
 *
 *   [+-] digits [. digits*] [e [+-] digits]
 *   [+-] . digits [e [+-] digits]
 *   [+-] 0x hexdigits [. hexdigits*] [p [+-] digits]
 *   [+-] 0x . hexdigits [p [+-] digits]
 *   [+-] inf | infinity
 *   [+-] nan | snan, optionally followed by (payload), payload a decimal
 *        integer, a 0x-prefixed hex integer, or empty
 *
 * As strtod, the longest prefix that forms a number is taken: "1e+" reads
 * "1" and stops at 'e', "0x" reads "0" and stops at 'x', "nan(" reads
 * "nan" and stops at '('.  Digits and exponents may be arbitrarily long.
 *
 * Finite values: the exact value is rounded once, in mode RM under ENV,
 * through s_round_pack (which raises inexact, underflow and overflow).  An
 * exact zero is a signed zero and raises nothing.
 *
 * Inf: +-Inf, no flags.  In a format without Inf (E4M3) it gives the
 * NaN of that sign, or +-the largest finite value when env->saturate; no
 * flags either way (as sf_convert treats an Inf operand).
 *
 * NaN: the payload is reduced to the fraction bits below the quiet bit;
 * "nan" sets the quiet bit, "snan" clears it and uses payload 1 when the
 * payload is zero.  The sign is kept.  No flags.  In E4M3 the result is
 * the one NaN pattern S.1111.111 of the given sign.
 *
 * ENV must not be NULL.  Events: one per call (the rounding, or a special
 * event for zero, Inf and NaN), op SF_OP_FROM_STRING with no operands.
 * For a value too large or too small to matter (|x| >= 2^(emax+2), or
 * |x| far below the smallest subnormal) the event's exact value is a
 * representative with the same rounding in every mode, not the text's
 * exact value.
 */

/*
 * Correctness of the decimal path.  Let V be the (positive) exact value
 * and write V = 0.d1 d2 d3 ... * 10^P with d1 != 0.  Only the first K
 * significant digits are kept: V' = d1..dK * 10^(P-K), and a flag records
 * whether any later digit is non-zero, in which case V' < V < V' + 10^(P-K).
 *
 * The rounding core is given a 128-bit window: sig in [2^127, 2^128) and
 * exp with V = (sig + tail) * 2^exp, 0 <= tail < 1.  Every multiple of
 * 2^exp is a multiple of 10^(P-K) as soon as K >= P - min(exp, 0), so no
 * multiple of 2^exp (and no power of 2 above 2^exp) lies strictly between
 * V' and V' + 10^(P-K): V and V' have the same window, and V's tail is
 * non-zero.  Since 10^(P-1) <= V, exp >= (P-1) log2(10) - 128, hence
 * P - exp <= 131.4 - 2.322 P; with P >= P_lo (values below are "tiny",
 * see below) K = 2.33 |P_lo| + 140 digits suffice, also for P > 0 if
 * K > P_hi.  For FP32, K = 359.
 *
 * Out-of-range values.  A value >= 2^(emax+2) rounds like 2^(emax+2)
 * with a non-zero tail in every mode (it is at least two binades above the
 * largest finite value).  Let q be the exponent of the smallest
 * subnormal's ulp.  A value below 2^(q-160) has every bit at least 160
 * positions below the ulp of any result, while the core looks at most 64
 * positions below the ulp (guard, round, and the 64-bit fraction of
 * SF_SR) and jams the rest into a sticky bit; so it sees only "non-zero,
 * below everything" and rounds the value like 2^(q-161) with a non-zero
 * tail, in every mode.  Both are detected from P alone:
 * 10^(P-1) >= 2^(emax+2) when (P-1) * 3.3219 >= emax+2, and
 * 10^P <= 2^(q-160) when P * 3.3219 <= q-160 (P <= 0).
 */

#define S_TINY_MARGIN 160
/* Most significant decimal digits ever kept (FP32 needs 359). */
#define S_KEEP_MAX 768
/* Exponents and digit counts saturate here (far beyond any range). */
#define S_EXP_SAT ((int64_t)1 << 40)

static int
s_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Whether P starts with WORD (lower case), ignoring case. */
static bool
s_match_ci(const char *p, const char *word)
{
    for (; *word != '\0'; p++, word++)
        if (s_lower(*p) != *word)
            return false;
    return true;
}

static int
s_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool
s_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses [+-]digits at P for an exponent; on success returns true, sets
 *VALUE (saturated to +-S_EXP_SAT) and *AFTER; else returns false. */
static bool
s_parse_exponent(const char *p, int64_t *value, const char **after)
{
    bool neg = false;
    int64_t v = 0;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!s_is_digit(*p))
        return false;
    for (; s_is_digit(*p); p++)
        if (v < S_EXP_SAT)
            v = v * 10 + (*p - '0');
    if (v > S_EXP_SAT)
        v = S_EXP_SAT;
    *value = neg ? -v : v;
    *after = p;
    return true;
}

static uint64_t
s_nan_bits(const sf_format *f, bool sign, bool snan, uint64_t payload)
{
    uint64_t quiet, frac;

    if (f->specials == SF_SPECIALS_FN)
        return (sign ? f->sign_mask : 0) | f->exp_mask | f->frac_mask;
    quiet = (uint64_t)1 << (f->frac_bits - 1);
    frac = payload & (quiet - 1);
    if (snan)
        frac = frac != 0 ? frac : 1;
    else
        frac |= quiet;
    return s_pack(f, sign, ((uint64_t)1 << f->exp_bits) - 1, frac);
}

/* Optional "(payload)" after "nan"/"snan" at P.  Returns the end of the
   accepted text (P itself when the parenthesis is not part of it). */
static const char *
s_parse_payload(const char *p, uint64_t *payload)
{
    const char *q = p + 1;
    uint64_t v = 0;

    *payload = 0;
    if (*p != '(')
        return p;
    /* Arithmetic mod 2^64 keeps the low bits exact, which are all a
       fraction can hold. */
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')
        && s_hex_value(q[2]) >= 0) {
        for (q += 2; s_hex_value(*q) >= 0; q++)
            v = (v << 4) | (uint64_t)s_hex_value(*q);
    } else {
        for (; s_is_digit(*q); q++)
            v = v * 10 + (uint64_t)(*q - '0');
    }
    if (*q != ')')
        return p;
    *payload = v;
    return q + 1;
}

/* Smallest exponent, as for the window top, that is not "tiny":
   t = q - S_TINY_MARGIN with q = emin - frac_bits. */
static int32_t
s_tiny_exp(const sf_format *f)
{
    return f->emin - (int32_t)f->frac_bits - S_TINY_MARGIN;
}

/* Number of significant decimal digits to keep for F (see above). */
static int64_t
s_keep_digits(const sf_format *f)
{
    int64_t p_lo = (int64_t)(-s_tiny_exp(f)) * 10000 / 33219 + 1;
    int64_t p_hi = (int64_t)(f->emax + 2) * 10000 / 33219 + 2;
    int64_t k = p_lo * 233 / 100 + 140;

    if (k <= p_hi)
        k = p_hi + 1;
    return k < S_KEEP_MAX ? k : S_KEEP_MAX;
}

/* Rounds (-1)^sign * (sig + tail) * 2^exp; sig in [2^127, 2^128). */
static uint64_t
s_finish(const sf_format *f, bool sign, int64_t exp, s_u128 sig, bool tail,
         sf_round rm, sf_env *env, const s_opctx *ctx)
{
    SF_ASSERT_DEBUG((sig >> 127) == 1);
    if (exp + 127 >= (int64_t)f->emax + 2) {
        /* >= 2^(emax+2): a fixed representative */
        sig = (s_u128)1 << 127;
        exp = f->emax + 2 - 127;
        tail = true;
    } else if (exp + 127 < s_tiny_exp(f)) {
        /* < 2^(q-160): a fixed tiny representative */
        sig = (s_u128)1 << 127;
        exp = s_tiny_exp(f) - 1 - 127;
        tail = true;
    }
    return s_round_pack(f, sign, (int32_t)exp, sig, tail, rm, env, ctx);
}

/* The decimal value 0.d[0] d[1] ... d[n-1] * 10^P (+ non-zero digits below
   when STICKY), d[0] != 0, 1 <= n <= S_KEEP_MAX. */
static uint64_t
s_round_decimal(const sf_format *f, bool sign, const unsigned char *d,
                int64_t n, int64_t p, bool sticky, sf_round rm, sf_env *env,
                const s_opctx *ctx)
{
    s_bn num, den, quo, rem;
    int32_t t = s_tiny_exp(f);
    int64_t x, i, exp;
    s_u128 sig;
    bool tail = sticky, ok = true;

    if (p - 1 >= 0 && (p - 1) * 33219 >= (int64_t)(f->emax + 2) * 10000)
        return s_finish(f, sign, f->emax + 2 - 127, (s_u128)1 << 127, true, rm,
                        env, ctx);
    if (p <= 0 && p * 33219 <= (int64_t)t * 10000)
        return s_finish(f, sign, t - 1 - 127, (s_u128)1 << 127, true, rm, env,
                        ctx);

    /* V' = D * 10^x, D = d[0..n) without trailing zeros */
    while (d[n - 1] == 0)
        n--;
    x = p - n;
    num.n = 0;
    for (i = 0; i < n;) {
        uint32_t group = 0, scale = 1;
        for (; i < n && scale < 1000000000u; i++, scale *= 10)
            group = group * 10 + d[i];
        ok &= s_bn_mul_add_small(&num, scale, group);
    }

    if (x >= 0) {
        /* V' = D * 5^x * 2^x */
        unsigned len;
        ok &= s_bn_mul_pow5(&num, (uint32_t)x);
        len = s_bn_bit_length(&num);
        if (len >= 128) {
            bool st;
            sig = s_bn_extract128(&num, len - 128, &st);
            tail |= st;
        } else {
            sig = s_bn_extract128(&num, 0, NULL) << (128 - len);
        }
        exp = x + (int64_t)len - 128;
    } else {
        /* V' = D * 2^x / 5^-x = Q * 2^(x-s), Q = D * 2^s / 5^-x in
           (2^127, 2^129) for s = 128 - (bits(D) - bits(5^-x)) */
        int64_t s;
        s_bn_set_u128(&den, 1);
        ok &= s_bn_mul_pow5(&den, (uint32_t)-x);
        s = 128
            - ((int64_t)s_bn_bit_length(&num)
               - (int64_t)s_bn_bit_length(&den));
        if (s >= 0)
            ok &= s_bn_shl(&num, (uint32_t)s);
        else
            ok &= s_bn_shl(&den, (uint32_t)-s);
        s_bn_divmod(&quo, &rem, &num, &den);
        if (s_bn_bit_length(&quo) > 128) {
            bool st;
            sig = s_bn_extract128(&quo, 1, &st);
            tail |= st;
            s--;
        } else {
            sig = s_bn_extract128(&quo, 0, NULL);
        }
        tail |= !s_bn_is_zero(&rem);
        exp = x - s;
    }
    /* The bounds on P and n keep every operand far below S_BN_LIMBS. */
    SF_ASSERT_DEBUG(ok);
    (void)ok;
    return s_finish(f, sign, exp, sig, tail, rm, env, ctx);
}

/* Hex-float body at P (just after "0x"); at least one hex digit is known
   to be there.  Sets *AFTER. */
static uint64_t
s_parse_hex(const sf_format *f, bool sign, const char *p, const char **after,
            sf_round rm, sf_env *env, const s_opctx *ctx)
{
    s_u128 h = 0;
    int64_t kept = 0, int_sig = 0, lead_frac = 0, eb = 0, exp;
    bool seen = false, in_frac = false, sticky = false;
    int lz;

    for (;; p++) {
        int v = s_hex_value(*p);
        if (v < 0) {
            if (*p == '.' && !in_frac) {
                in_frac = true;
                continue;
            }
            break;
        }
        if (!seen && v == 0) {
            lead_frac += in_frac;
            continue;
        }
        seen = true;
        int_sig += !in_frac && int_sig < S_EXP_SAT;
        if (kept < 32) {
            h = (h << 4) | (unsigned)v;
            kept++;
        } else {
            sticky |= v != 0;
        }
    }
    if ((*p == 'p' || *p == 'P') && s_parse_exponent(p + 1, &eb, after))
        p = *after;
    *after = p;
    if (!seen) {
        uint64_t z = s_pack_zero(f, sign);
        s_event_special(f, z, 0, rm, env, ctx);
        return z;
    }
    if (lead_frac > S_EXP_SAT)
        lead_frac = S_EXP_SAT;
    /* V = 0.h1 h2 ... (hex) * 16^P * 2^eb = h * 16^(P - kept) * 2^eb */
    exp = 4 * ((int_sig > 0 ? int_sig : -lead_frac) - kept) + eb;
    lz = s_clz128(h);
    h <<= lz;
    exp -= lz;
    return s_finish(f, sign, exp, h, sticky, rm, env, ctx);
}

uint64_t
sf_from_string(const sf_format *f, const char *s, const char **end,
               sf_round rm, sf_env *env)
{
    s_opctx ctx = {SF_OP_FROM_STRING, 0, {NULL, NULL, NULL}, {0, 0, 0}, false};
    unsigned char digits[S_KEEP_MAX];
    const char *p = s, *after;
    int64_t keep = s_keep_digits(f);
    int64_t kept = 0, int_sig = 0, lead_frac = 0, e10 = 0, pos;
    bool sign = false, seen_digit = false, seen_nonzero = false;
    bool in_frac = false, sticky = false;
    uint64_t z;

    if (*p == '+' || *p == '-')
        sign = *p++ == '-';

    if (s_match_ci(p, "inf")) {
        p += s_match_ci(p + 3, "inity") ? 8 : 3;
        /* no Inf (E4M3): the NaN, or the largest finite when saturating;
           as sf_convert does for an Inf operand */
        z = f->specials == SF_SPECIALS_FN && env->saturate
                ? s_pack_max(f, sign)
                : s_pack_inf(f, sign);
        s_event_special(f, z, 0, rm, env, &ctx);
        if (end != NULL)
            *end = p;
        return z;
    }
    if (s_match_ci(p, "nan") || s_match_ci(p, "snan")) {
        bool snan = s_lower(*p) == 's';
        uint64_t payload;
        p = s_parse_payload(p + (snan ? 4 : 3), &payload);
        z = s_nan_bits(f, sign, snan, payload);
        s_event_special(f, z, 0, rm, env, &ctx);
        if (end != NULL)
            *end = p;
        return z;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')
        && (s_hex_value(p[2]) >= 0
            || (p[2] == '.' && s_hex_value(p[3]) >= 0))) {
        z = s_parse_hex(f, sign, p + 2, &after, rm, env, &ctx);
        if (end != NULL)
            *end = after;
        return z;
    }

    /* Decimal: V = 0.d1 d2 ... * 10^pos, pos = int_sig + e10 when the
       integer part has significant digits, else e10 - lead_frac. */
    for (;; p++) {
        if (*p == '.' && !in_frac) {
            in_frac = true;
            continue;
        }
        if (!s_is_digit(*p))
            break;
        seen_digit = true;
        if (!seen_nonzero && *p == '0') {
            lead_frac += in_frac && lead_frac < S_EXP_SAT;
            continue;
        }
        seen_nonzero = true;
        int_sig += !in_frac && int_sig < S_EXP_SAT;
        if (kept < keep)
            digits[kept++] = (unsigned char)(*p - '0');
        else
            sticky |= *p != '0';
    }
    if (!seen_digit) {
        /* syntax error */
        if (end != NULL)
            *end = s;
        return 0;
    }
    if ((*p == 'e' || *p == 'E') && s_parse_exponent(p + 1, &e10, &after))
        p = after;
    if (end != NULL)
        *end = p;
    if (!seen_nonzero) {
        z = s_pack_zero(f, sign);
        s_event_special(f, z, 0, rm, env, &ctx);
        return z;
    }
    pos = (int_sig > 0 ? int_sig : -lead_frac) + e10;
    return s_round_decimal(f, sign, digits, kept, pos, sticky, rm, env, &ctx);
}

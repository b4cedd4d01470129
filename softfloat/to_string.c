/* sf_to_string -- exact, shortest or hex-float text of a value or dyadic */
#include "internal.h"
#include "s_bignum.h"

/*
 * Contract (see softfloat.h).  Output forms:
 *
 *   zero       "0", "-0" (SF_PRINT_HEX: "0x0p+0", "-0x0p+0")
 *   infinity   "inf", "-inf"
 *   NaN        "nan", "-nan" (quiet) or "snan", "-snan" (signalling),
 *              followed by "(0x<hex payload>)" when the fraction bits below
 *              the quiet bit are not all zero.  E4M3's NaN has no payload.
 *              sf_from_string reads all of these back to the same bits.
 *   decimal    (EXACT, SHORTEST, dyadics) the significant digits D and the
 *              decimal exponent E of the leading digit: plain positional
 *              notation ("-4.71875", "0.000123", "16777216") when
 *              -5 <= E <= 20, else scientific "d.ddde+XX" with at least two
 *              exponent digits ("1.401298464324817e-45", "1e+21").
 *   hex        (HEX) C99 normalised hex-float as printf's %a: "0x1.2ep+2",
 *              subnormals normalised too ("0x1p-149"), trailing zero hex
 *              digits dropped, no '.' when no hex digit follows it.
 *
 * EXACT prints every digit of the value (each binary value has a finite
 * decimal expansion).  SHORTEST prints the fewest significant digits that
 * sf_from_string reads back, in SF_RNE, to the same bits, and among those
 * the one nearest the value (ties: even last digit).
 *
 * Returns the length of the full text; BUF gets at most n - 1 characters
 * and a terminating NUL when n > 0 (BUF may be NULL when n == 0).
 */

/* Decimal digit buffer: the largest s_bn has at most 2775 digits. */
#define S_DEC_MAX (S_BN_LIMBS * 32 * 3 / 10 + 32)

typedef struct
{
    char *buf;
    size_t n;
    size_t len;
} s_out;

static void
s_put(s_out *o, char c)
{
    if (o->len + 1 < o->n)
        o->buf[o->len] = c;
    o->len++;
}

static void
s_puts(s_out *o, const char *str)
{
    for (; *str != '\0'; str++)
        s_put(o, *str);
}

static void
s_put_mem(s_out *o, const char *p, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++)
        s_put(o, p[i]);
}

static size_t
s_out_finish(s_out *o)
{
    if (o->n > 0)
        o->buf[o->len < o->n ? o->len : o->n - 1] = '\0';
    return o->len;
}

/* Decimal digits of |v|, at least MIN_DIGITS of them. */
static void
s_put_int(s_out *o, int64_t v, int min_digits)
{
    char tmp[24];
    int nd = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0 || nd < min_digits);
    while (nd > 0)
        s_put(o, tmp[--nd]);
}

/* The value D * 10^k, D the ND digits DIG ('0'-'9', leading digit
   non-zero), in the notation described above. */
static void
s_put_decimal(s_out *o, bool sign, const char *dig, size_t nd, int64_t k)
{
    int64_t e10 = (int64_t)nd - 1 + k, i;

    if (sign)
        s_put(o, '-');
    if (e10 >= -5 && e10 <= 20) {
        if (k >= 0) {
            /* integer: digits then k zeros */
            s_put_mem(o, dig, nd);
            for (i = 0; i < k; i++)
                s_put(o, '0');
        } else if (e10 >= 0) {
            s_put_mem(o, dig, (size_t)e10 + 1);
            s_put(o, '.');
            s_put_mem(o, dig + e10 + 1, nd - (size_t)e10 - 1);
        } else {
            s_puts(o, "0.");
            for (i = 0; i < -e10 - 1; i++)
                s_put(o, '0');
            s_put_mem(o, dig, nd);
        }
        return;
    }
    s_put(o, dig[0]);
    if (nd > 1) {
        s_put(o, '.');
        s_put_mem(o, dig + 1, nd - 1);
    }
    s_put(o, 'e');
    s_put(o, e10 < 0 ? '-' : '+');
    s_put_int(o, e10, 2);
}

/* Normalised hex-float of (-1)^sign * sig * 2^exp, sig != 0. */
static void
s_put_hex(s_out *o, bool sign, s_u128 sig, int64_t exp)
{
    int len = 128 - s_clz128(sig);
    int fb = len - 1, nd = (fb + 3) / 4;
    /* fraction bits after the leading 1, left-aligned on a nibble */
    s_u128 frac = (sig & ~((s_u128)1 << fb)) << (4 * nd - fb);

    if (sign)
        s_put(o, '-');
    s_puts(o, "0x1");
    while (nd > 0 && (frac & 0xF) == 0) {
        frac >>= 4;
        nd--;
    }
    if (nd > 0) {
        s_put(o, '.');
        while (nd-- > 0)
            s_put(o, "0123456789abcdef"[(unsigned)(frac >> (4 * nd)) & 0xF]);
    }
    s_put(o, 'p');
    exp += len - 1;
    s_put(o, exp < 0 ? '-' : '+');
    s_put_int(o, exp, 1);
}

/* Every significant decimal digit of sig * 2^exp, sig != 0: writes them
   to DIG (S_DEC_MAX bytes, no leading or trailing zero), sets *K so that
   the value is DIG * 10^k, returns the number of digits; 0 when the value
   needs more than S_BN_LIMBS limbs. */
static size_t
s_exact_digits(s_u128 sig, int64_t exp, char *dig, int64_t *k)
{
    s_bn bn;
    size_t nd;
    int tz = 0;

    while (((sig >> tz) & 1) == 0)
        tz++;
    if (exp < 0) {
        /* make exp >= 0 or sig odd: then sig * 5^-exp ends in 1..9 */
        int sh = -exp < tz ? (int)-exp : tz;
        sig >>= sh;
        exp += sh;
    }
    s_bn_set_u128(&bn, sig);
    if (exp >= 0) {
        if (exp > S_BN_LIMBS * 32 || !s_bn_shl(&bn, (uint32_t)exp))
            return 0;
        *k = 0;
    } else {
        if (-exp > S_BN_LIMBS * 32 || !s_bn_mul_pow5(&bn, (uint32_t)-exp))
            return 0;
        *k = exp;
    }
    nd = s_bn_to_decimal(&bn, dig, S_DEC_MAX);
    /* an integer can end in zeros (sig may have factors of 5) */
    while (nd > 1 && dig[nd - 1] == '0') {
        nd--;
        ++*k;
    }
    return nd;
}

/* Unpacked finite non-zero value: sig * 2^exp, and its format facts. */
typedef struct
{
    bool sign;
    uint64_t sig;
    int32_t exp;
    bool binade_low; /* sig is a power of 2 above the subnormal range:
                        the gap below is half the gap above */
} s_fin;

/* Whether the text TXT reads back as BITS in F (SF_RNE, IEEE env). */
static bool
s_reads_back(const sf_format *f, uint64_t bits, const char *txt)
{
    sf_env env = SF_ENV_IEEE;
    const char *end;
    uint64_t z = sf_from_string(f, txt, &end, SF_RNE, &env);

    return z == bits && *end == '\0';
}

/* Formats D (ND digits) * 10^k into TXT (cap bytes) as "De<k>". */
static void
s_plain_text(char *txt, size_t cap, const char *dig, size_t nd, int64_t k)
{
    s_out o = {txt, cap, 0};

    s_put_mem(&o, dig, nd);
    s_put(&o, 'e');
    if (k < 0)
        s_put(&o, '-');
    s_put_int(&o, k, 1);
    s_out_finish(&o);
}

/* Shortest digits by the rounding interval: writes them to DIG and *K;
   returns the count (0 if the interval arithmetic does not fit). */
static size_t
s_shortest_interval(const s_fin *v, char *dig, int64_t *k)
{
    /* In units of 2^(exp-2): the value X = 4 sig, the upper rounding
       boundary H = X + 2 and the lower one L = X - 2 (X - 1 below a power
       of two).  RNE keeps a boundary iff sig is even. */
    s_bn lq, hq, xq, cmin, cmax, t;
    int64_t b = (int64_t)v->exp - 2, unit = 0, kk = 0;
    bool incl = (v->sig & 1) == 0, lnz = false, hnz = false, xnz = false;
    uint32_t xdig = 0;
    size_t nd, i;
    bool ok = true;

    s_bn_set_u128(&xq, (s_u128)v->sig * 4);
    s_bn_set_u128(&hq, (s_u128)v->sig * 4 + 2);
    s_bn_set_u128(&lq, (s_u128)v->sig * 4 - (v->binade_low ? 1 : 2));
    if (b >= 0) {
        ok &= s_bn_shl(&xq, (uint32_t)b);
        ok &= s_bn_shl(&hq, (uint32_t)b);
        ok &= s_bn_shl(&lq, (uint32_t)b);
    } else {
        /* m 2^b = m 5^-b 10^b: integers in units of 10^b */
        ok &= s_bn_mul_pow5(&xq, (uint32_t)-b);
        ok &= s_bn_mul_pow5(&hq, (uint32_t)-b);
        ok &= s_bn_mul_pow5(&lq, (uint32_t)-b);
        unit = b;
    }
    if (!ok)
        return 0;
    /* At scale 10^kk the candidates are c * 10^kk, cmin <= c <= cmax,
       cmin = ceil(L / 10^kk) (+1 if that is L itself, excluded), cmax =
       floor(H / 10^kk) (-1 if that is H itself, excluded).  kk = 0 always
       has X.  Find the largest kk with cmin <= cmax. */
    s_bn_copy(&cmin, &lq);
    if (!incl)
        ok &= s_bn_add_small(&cmin, 1);
    s_bn_copy(&cmax, &hq);
    if (!incl)
        s_bn_sub_small(&cmax, 1);
    for (;;) {
        s_bn nl, nh, ncmin, ncmax;
        bool nlnz, nhnz;

        s_bn_copy(&nl, &lq);
        nlnz = lnz | (s_bn_div_small(&nl, 10) != 0);
        s_bn_copy(&nh, &hq);
        nhnz = hnz | (s_bn_div_small(&nh, 10) != 0);
        s_bn_copy(&ncmin, &nl);
        if (nlnz || !incl)
            ok &= s_bn_add_small(&ncmin, 1);
        s_bn_copy(&ncmax, &nh);
        if (!nhnz && !incl) {
            if (s_bn_is_zero(&ncmax))
                break;
            s_bn_sub_small(&ncmax, 1);
        }
        if (s_bn_cmp(&ncmin, &ncmax) > 0)
            break;
        kk++;
        s_bn_copy(&lq, &nl);
        lnz = nlnz;
        s_bn_copy(&hq, &nh);
        hnz = nhnz;
        s_bn_copy(&cmin, &ncmin);
        s_bn_copy(&cmax, &ncmax);
        xnz |= xdig != 0;
        xdig = s_bn_div_small(&xq, 10);
    }
    /* nearest candidate to X: round X / 10^kk, ties to even, then clamp */
    if (xdig > 5 || (xdig == 5 && (xnz || (xq.n > 0 && (xq.d[0] & 1)))))
        ok &= s_bn_add_small(&xq, 1);
    if (s_bn_cmp(&xq, &cmin) < 0)
        s_bn_copy(&xq, &cmin);
    if (s_bn_cmp(&xq, &cmax) > 0)
        s_bn_copy(&xq, &cmax);
    if (!ok)
        return 0;
    s_bn_copy(&t, &xq);
    nd = s_bn_to_decimal(&t, dig, S_DEC_MAX);
    /* (the maximal kk leaves no trailing zero, but be safe) */
    for (i = nd; i > 1 && dig[i - 1] == '0'; i--)
        kk++;
    *k = kk + unit;
    return i;
}

/* SF_PRINT_SHORTEST of a finite non-zero value. */
static void
s_put_shortest(s_out *o, const sf_format *f, uint64_t bits, const s_fin *v)
{
    char dig[S_DEC_MAX], ex[S_DEC_MAX], txt[S_DEC_MAX + 32];
    size_t nd, nx, n;
    int64_t k, kx;

    nd = s_shortest_interval(v, dig, &k);
    if (nd > 0) {
        s_plain_text(txt, sizeof txt, dig, nd, k);
        if (s_reads_back(f, bits & ~f->sign_mask, txt)) {
            s_put_decimal(o, v->sign, dig, nd, k);
            return;
        }
    }
    /* Not expected to be reached: try n-digit roundings of the exact
       value, nearest first, for n = 1, 2, ...; the exact value itself
       always reads back. */
    nx = s_exact_digits(v->sig, v->exp, ex, &kx);
    for (n = 1; n < nx; n++) {
        /* ex[0..n) truncated; 'up' is that plus one unit in digit n */
        bool up_first = ex[n] > '5';
        int pass;
        size_t i;

        for (i = n + 1; !up_first && ex[n] == '5' && i < nx; i++)
            up_first = ex[i] != '0';
        for (pass = 0; pass < 2; pass++) {
            bool up = (pass == 0) == up_first;
            int64_t kc = kx + (int64_t)(nx - n);
            size_t nc = n;

            for (i = 0; i < n; i++)
                dig[i] = ex[i];
            if (up) {
                for (i = n; i-- > 0 && dig[i] == '9';)
                    dig[i] = '0';
                if (i == (size_t)-1) {
                    /* 99..9 + 1 = 10..0 */
                    dig[0] = '1';
                    kc += (int64_t)n;
                    nc = 1;
                } else {
                    dig[i]++;
                }
            }
            while (nc > 1 && dig[nc - 1] == '0') {
                nc--;
                kc++;
            }
            s_plain_text(txt, sizeof txt, dig, nc, kc);
            if (s_reads_back(f, bits & ~f->sign_mask, txt)) {
                s_put_decimal(o, v->sign, dig, nc, kc);
                return;
            }
        }
    }
    s_put_decimal(o, v->sign, ex, nx, kx);
}

size_t
sf_to_string(const sf_format *f, uint64_t a, sf_print_style style, char *buf,
             size_t n)
{
    s_out o = {buf, n, 0};
    bool sign = s_sign(f, a);
    unsigned exp_field = s_exp_field(f, a);
    unsigned exp_top = (1u << f->exp_bits) - 1;
    uint64_t frac = s_frac(f, a);
    s_fin v;

    if ((f->specials == SF_SPECIALS_FN
         && (a & ~f->sign_mask) == (f->exp_mask | f->frac_mask))
        || (f->specials == SF_SPECIALS_IEEE && exp_field == exp_top
            && frac != 0)) {
        uint64_t quiet = (uint64_t)1 << (f->frac_bits - 1);
        uint64_t payload = frac & (quiet - 1);
        bool fn = f->specials == SF_SPECIALS_FN;

        if (sign)
            s_put(&o, '-');
        s_puts(&o, fn || (frac & quiet) != 0 ? "nan" : "snan");
        if (!fn && payload != 0) {
            char tmp[20];
            int nd = 0;
            s_puts(&o, "(0x");
            while (payload != 0) {
                tmp[nd++] = "0123456789abcdef"[payload & 0xF];
                payload >>= 4;
            }
            while (nd > 0)
                s_put(&o, tmp[--nd]);
            s_put(&o, ')');
        }
        return s_out_finish(&o);
    }
    if (f->specials == SF_SPECIALS_IEEE && exp_field == exp_top) {
        s_puts(&o, sign ? "-inf" : "inf");
        return s_out_finish(&o);
    }
    if (exp_field == 0 && frac == 0) {
        if (sign)
            s_put(&o, '-');
        s_puts(&o, style == SF_PRINT_HEX ? "0x0p+0" : "0");
        return s_out_finish(&o);
    }

    v.sign = sign;
    if (exp_field == 0) {
        v.sig = frac;
        v.exp = f->emin - (int32_t)f->frac_bits;
        v.binade_low = false;
    } else {
        v.sig = frac | (uint64_t)1 << f->frac_bits;
        v.exp = (int32_t)exp_field - f->bias - (int32_t)f->frac_bits;
        v.binade_low = frac == 0 && exp_field > 1;
    }

    if (style == SF_PRINT_HEX) {
        s_put_hex(&o, sign, v.sig, v.exp);
    } else if (style == SF_PRINT_SHORTEST) {
        s_put_shortest(&o, f, a, &v);
    } else {
        char dig[S_DEC_MAX];
        int64_t k = 0;
        size_t nd = s_exact_digits(v.sig, v.exp, dig, &k);
        s_put_decimal(&o, sign, dig, nd, k);
    }
    return s_out_finish(&o);
}

/* The digits every value strictly between L = w 2^exp and U = (w + 1)
   2^exp shares (0 <= w < 2^128): the truncation T_j(L) = floor(L / 10^j)
   for the smallest j at which it equals ceil(U / 10^j) - 1, the truncation
   of every value below U (monotone in j: agreeing at j, they agree above).
   The digits of those values just below U are U's, its last non-zero digit
   less one, then nines.  Writes T_j(L) to DIG (room for 2 S_DEC_MAX) and
   *K = j; returns the number of digits (0 when T_j(L) = 0), or (size_t)-1
   when L or U is beyond the digit capacity. */
static size_t
s_tail_digits(s_u128 w, int64_t exp, char *dig, int64_t *k)
{
    char dl[S_DEC_MAX], du[S_DEC_MAX];
    size_t ndl = 0, ndu, nd = 0;
    int64_t kl = 0, ku = 0, el = 0, eu, pos;

    if (w != 0 && (ndl = s_exact_digits(w, exp, dl, &kl)) == 0)
        return (size_t)-1;
    if (w == ~(s_u128)0)
        ndu = s_exact_digits(1, exp + 128, du, &ku);
    else
        ndu = s_exact_digits(w + 1, exp, du, &ku);
    if (ndu == 0)
        return (size_t)-1;
    el = (int64_t)ndl - 1 + kl;
    eu = (int64_t)ndu - 1 + ku;
    for (pos = eu;; pos--) {
        unsigned l = ndl > 0 && pos <= el && pos >= kl
                         ? (unsigned)(dl[el - pos] - '0')
                         : 0u;
        unsigned u = pos > ku    ? (unsigned)(du[eu - pos] - '0')
                     : pos == ku ? (unsigned)(du[eu - pos] - '0') - 1u
                                 : 9u;
        if (l != u)
            break;
    }
    /* positions above POS agree: T_(pos+1)(L) */
    *k = pos + 1;
    if (ndl == 0 || el < pos + 1)
        return 0;
    for (int64_t q = el; q >= pos + 1; q--)
        dig[nd++] = q >= kl ? dl[el - q] : '0';
    return nd;
}

/* sf_dyadic_to_string -- the exact decimal value of a dyadic number.
   Values whose exact decimal would exceed the internal capacity (|exp|
   beyond about 3000) are written exactly as a normalised hex-float
   instead.  With a tail, only the digits that every value of the window
   (W 2^exp, (W + 1) 2^exp) shares are written, then "..." (a hex-float
   window is a binary prefix of the value, so it is written whole). */
size_t
sf_dyadic_to_string(const sf_dyadic *d, char *buf, size_t n)
{
    s_out o = {buf, n, 0};
    s_u128 sig = ((s_u128)d->hi << 64) | d->lo;

    if (d->tail) {
        char dig[2 * S_DEC_MAX];
        int64_t k = 0;
        size_t nd = s_tail_digits(sig, d->exp, dig, &k);
        if (nd == (size_t)-1 && sig != 0)
            s_put_hex(&o, d->sign, sig, d->exp);
        else if (nd == 0 || nd == (size_t)-1)
            s_puts(&o, d->sign ? "-0" : "0");
        else
            s_put_decimal(&o, d->sign, dig, nd, k);
        s_puts(&o, "...");
    } else if (sig == 0) {
        s_puts(&o, d->sign ? "-0" : "0");
    } else {
        char dig[S_DEC_MAX];
        int64_t k = 0;
        size_t nd = s_exact_digits(sig, d->exp, dig, &k);
        if (nd > 0)
            s_put_decimal(&o, d->sign, dig, nd, k);
        else
            s_put_hex(&o, d->sign, sig, d->exp);
    }
    return s_out_finish(&o);
}

/* round.c -- integer reference rounding, independent of softfloat/ */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "ref/round.h"

const ref_fmt ref_bf16 = {"bf16", 8, -126, 127, 7, 16};
const ref_fmt ref_f16 = {"f16", 11, -14, 15, 10, 16};
const ref_fmt ref_f32 = {"f32", 24, -126, 127, 23, 32};

const sf_round ref_modes[6] = {SF_RNE, SF_RTZ, SF_RDN, SF_RUP, SF_RNA, SF_ROD};

/* Rounds the magnitude SIG * 2^EXP (+ sticky) to a multiple of 2^Q:
   returns the multiple count and sets *INEXACT. SIG < 2^62. */
static uint64_t
round_to_quantum(bool sign, uint64_t sig, int exp, bool sticky, int q,
                 sf_round rm, bool *inexact)
{
    int shift = q - exp; /* bits of SIG below the quantum */
    uint64_t kept, rem, half;
    bool above, tie, odd, inc;

    if (shift <= 0) {
        /* the quantum is at or below the last bit of SIG; then STICKY is
           never set by the callers (they give at least p + 2 bits) */
        *inexact = sticky;
        return sig << -shift;
    }
    if (shift >= 63) {
        kept = 0;
        rem = sig;
        half = 0; /* unused: rem < 2^62 <= half */
        above = false;
        tie = false;
    } else {
        kept = sig >> shift;
        rem = sig & (((uint64_t)1 << shift) - 1);
        half = (uint64_t)1 << (shift - 1);
        above = rem > half || (rem == half && sticky);
        tie = rem == half && !sticky;
    }
    *inexact = rem != 0 || sticky;
    odd = (kept & 1) != 0;
    switch (rm) {
    case SF_RNE:
        inc = above || (tie && odd);
        break;
    case SF_RNA:
        inc = above || tie;
        break;
    case SF_RUP:
        inc = *inexact && !sign;
        break;
    case SF_RDN:
        inc = *inexact && sign;
        break;
    case SF_ROD:
        inc = *inexact && !odd;
        break;
    default:
        inc = false;
        break;
    }
    return kept + (inc ? 1u : 0u);
}

uint64_t
ref_round(const ref_fmt *t, bool sign, uint64_t sig, int exp, bool sticky,
          sf_round rm, bool tininess_after, unsigned *flags)
{
    uint64_t sbit = sign ? (uint64_t)1 << (t->storage - 1) : 0;
    uint64_t hidden = (uint64_t)1 << (t->p - 1);
    uint64_t kept,
        inf = ((((uint64_t)1 << (t->storage - 1 - t->fbits)) - 1) << t->fbits);
    int e, q, e_after;
    bool inexact, tiny, to_inf;

    /* normalise: SIG in [2^61, 2^62), the value in [2^e, 2^(e+1)) */
    {
        int n = __builtin_clzll(sig) - 2;
        sig <<= n;
        exp -= n;
    }
    e = exp + 61;

    /* the exponent after rounding to p bits, range unbounded */
    kept =
        round_to_quantum(sign, sig, exp, sticky, e - (t->p - 1), rm, &inexact);
    e_after = kept == hidden << 1 ? e + 1 : e;

    if (e_after > t->emax) {
        /* Which modes overflow to Inf.  tests/support/oracle.c and the
           library state this IEEE 754 rule in nearly the same lines; it
           stays written out here on purpose: this reference is the
           independent check of both and shares no rounding code with
           either. */
        switch (rm) {
        case SF_RNE:
        case SF_RNA:
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
        *flags = SF_FLAG_OVERFLOW | SF_FLAG_INEXACT;
        /* the largest finite value is the one just below Inf */
        return sbit | (to_inf ? inf : inf - 1);
    }

    tiny = tininess_after ? e_after < t->emin : e < t->emin;
    q = (e < t->emin ? t->emin : e) - (t->p - 1);
    kept = round_to_quantum(sign, sig, exp, sticky, q, rm, &inexact);
    *flags = (inexact ? SF_FLAG_INEXACT : 0u)
             | (inexact && tiny ? SF_FLAG_UNDERFLOW : 0u);
    if (e < t->emin)
        return sbit | kept; /* subnormal; 2^(p-1) is the smallest normal */
    /* kept in [2^(p-1), 2^p]: the carry into the exponent field is the
       right encoding for kept == 2^p */
    return sbit
           | (((uint64_t)(e - t->emin + 1) << t->fbits) + (kept - hidden));
}

void
ref_split_double(double x, bool *sign, uint64_t *sig, int *exp)
{
    uint64_t u;
    int be;

    memcpy(&u, &x, sizeof u);
    *sign = (u >> 63) != 0;
    be = (int)((u >> 52) & 0x7ff);
    *sig = u & (((uint64_t)1 << 52) - 1);
    if (be == 0) {
        *exp = -1074;
    } else {
        *sig |= (uint64_t)1 << 52;
        *exp = be - 1075;
    }
}

double
ref_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

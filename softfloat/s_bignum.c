/* s_bignum -- fixed-capacity natural numbers for exact text conversion */
#include <string.h>

#include "s_bignum.h"

/* Drop high zero limbs so that d[n - 1] != 0 or n == 0. */
static void
s_bn_trim(s_bn *z)
{
    while (z->n > 0 && z->d[z->n - 1] == 0)
        z->n--;
}

void
s_bn_set_u128(s_bn *z, s_u128 v)
{
    unsigned i;

    for (i = 0; i < 4; i++)
        z->d[i] = (uint32_t)(v >> (32 * i));
    z->n = 4;
    s_bn_trim(z);
}

void
s_bn_copy(s_bn *z, const s_bn *a)
{
    if (z == a)
        return;
    z->n = a->n;
    memcpy(z->d, a->d, (size_t)a->n * sizeof a->d[0]);
}

unsigned
s_bn_bit_length(const s_bn *a)
{
    if (a->n == 0)
        return 0;
    return 32 * a->n - (unsigned)__builtin_clz(a->d[a->n - 1]);
}

int
s_bn_cmp(const s_bn *a, const s_bn *b)
{
    unsigned i;

    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (i = a->n; i-- > 0;)
        if (a->d[i] != b->d[i])
            return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

bool
s_bn_mul_add_small(s_bn *z, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    unsigned i;

    for (i = 0; i < z->n; i++) {
        /* t <= (2^32 - 1)^2 + 2^32 - 1 < 2^64 */
        uint64_t t = (uint64_t)z->d[i] * m + carry;
        z->d[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry != 0) {
        if (z->n == S_BN_LIMBS)
            return false;
        z->d[z->n++] = (uint32_t)carry;
    }
    s_bn_trim(z);
    return true;
}

bool
s_bn_mul_pow5(s_bn *z, uint32_t k)
{
    /* 5^13 = 1220703125 is the largest power of 5 below 2^32. */
    static const uint32_t pow5[14] = {
        1u,       5u,        25u,        125u,       625u,
        3125u,    15625u,    78125u,     390625u,    1953125u,
        9765625u, 48828125u, 244140625u, 1220703125u};

    while (k >= 13) {
        if (!s_bn_mul_add_small(z, pow5[13], 0))
            return false;
        k -= 13;
    }
    return k == 0 || s_bn_mul_add_small(z, pow5[k], 0);
}

bool
s_bn_shl(s_bn *z, uint32_t dist)
{
    uint32_t limbs = dist / 32, bits = dist % 32;
    unsigned i, n;

    if (z->n == 0 || dist == 0)
        return true;
    if (limbs >= S_BN_LIMBS || z->n + limbs > S_BN_LIMBS)
        return false;
    n = z->n + limbs;
    if (bits != 0) {
        uint32_t top = z->d[z->n - 1] >> (32 - bits);
        if (top != 0) {
            if (n == S_BN_LIMBS)
                return false;
            z->d[n] = top;
        }
        for (i = z->n - 1; i > 0; i--)
            z->d[i + limbs] = (z->d[i] << bits) | (z->d[i - 1] >> (32 - bits));
        z->d[limbs] = z->d[0] << bits;
        n += top != 0;
    } else {
        memmove(z->d + limbs, z->d, (size_t)z->n * sizeof z->d[0]);
    }
    memset(z->d, 0, (size_t)limbs * sizeof z->d[0]);
    z->n = n;
    return true;
}

bool
s_bn_add_small(s_bn *z, uint32_t add)
{
    unsigned i;
    uint64_t carry = add;

    for (i = 0; i < z->n && carry != 0; i++) {
        uint64_t t = (uint64_t)z->d[i] + carry;
        z->d[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry != 0) {
        if (z->n == S_BN_LIMBS)
            return false;
        z->d[z->n++] = (uint32_t)carry;
    }
    return true;
}

void
s_bn_sub_small(s_bn *z, uint32_t sub)
{
    unsigned i;
    uint32_t borrow = sub;

    for (i = 0; i < z->n && borrow != 0; i++) {
        uint32_t old = z->d[i];
        z->d[i] = old - borrow;
        borrow = old < borrow;
    }
    SF_ASSERT_DEBUG(borrow == 0);
    s_bn_trim(z);
}

uint32_t
s_bn_div_small(s_bn *z, uint32_t m)
{
    uint64_t rem = 0;
    unsigned i;

    SF_ASSERT_DEBUG(m != 0);
    for (i = z->n; i-- > 0;) {
        /* rem < m, so cur < m * 2^32 and cur / m < 2^32 */
        uint64_t cur = (rem << 32) | z->d[i];
        z->d[i] = (uint32_t)(cur / m);
        rem = cur % m;
    }
    s_bn_trim(z);
    return (uint32_t)rem;
}

s_u128
s_bn_extract128(const s_bn *a, uint32_t lo, bool *sticky)
{
    uint32_t limb = lo / 32, bits = lo % 32;
    s_u128 v = 0;
    unsigned i;

    if (sticky != NULL) {
        bool st = false;
        for (i = 0; i < limb && i < a->n; i++)
            st |= a->d[i] != 0;
        if (limb < a->n && bits != 0)
            st |= (a->d[limb] & (((uint32_t)1 << bits) - 1)) != 0;
        *sticky = st;
    }
    /* v = limbs [limb, limb + 4), then the sub-limb shift pulls in the low
       bits of limb + 4 */
    for (i = 4; i-- > 0;) {
        uint32_t w = limb + i < a->n ? a->d[limb + i] : 0;
        v = (v << 32) | w;
    }
    if (bits != 0) {
        uint32_t w5 = limb + 4 < a->n ? a->d[limb + 4] : 0;
        v = (v >> bits) | ((s_u128)w5 << (128 - bits));
    }
    return v;
}

void
s_bn_divmod(s_bn *q, s_bn *r, const s_bn *a, const s_bn *b)
{
    uint32_t un[S_BN_LIMBS + 1], vn[S_BN_LIMBS];
    unsigned n = b->n, m, i, j;
    int s;

    SF_ASSERT_DEBUG(n != 0);
    if (s_bn_cmp(a, b) < 0) {
        if (r != NULL)
            s_bn_copy(r, a);
        if (q != NULL)
            q->n = 0;
        return;
    }
    if (n == 1) {
        s_bn tmp;
        uint32_t rem;
        s_bn_copy(&tmp, a);
        rem = s_bn_div_small(&tmp, b->d[0]);
        if (q != NULL)
            s_bn_copy(q, &tmp);
        if (r != NULL)
            s_bn_set_u128(r, rem);
        return;
    }

    /* Knuth, TAOCP vol. 2, 4.3.1, algorithm D: normalise so the top limb
       of the divisor has its top bit set; each quotient limb estimate from
       the top two remainder limbs is then at most 2 too large. */
    s = __builtin_clz(b->d[n - 1]);
    for (i = n - 1; i > 0; i--)
        vn[i] = s != 0 ? (b->d[i] << s) | (b->d[i - 1] >> (32 - s)) : b->d[i];
    vn[0] = b->d[0] << s;
    un[a->n] = s != 0 ? a->d[a->n - 1] >> (32 - s) : 0;
    for (i = a->n - 1; i > 0; i--)
        un[i] = s != 0 ? (a->d[i] << s) | (a->d[i - 1] >> (32 - s)) : a->d[i];
    un[0] = a->d[0] << s;

    m = a->n - n;
    if (q != NULL)
        q->n = m + 1;
    for (j = m + 1; j-- > 0;) {
        uint64_t num = ((uint64_t)un[j + n] << 32) | un[j + n - 1];
        uint64_t qhat = num / vn[n - 1];
        uint64_t rhat = num % vn[n - 1];
        uint64_t carry = 0, borrow = 0, t;

        while ((qhat >> 32) != 0
               || qhat * vn[n - 2] > ((rhat << 32) | un[j + n - 2])) {
            qhat--;
            rhat += vn[n - 1];
            if ((rhat >> 32) != 0)
                break;
        }
        /* un[j .. j+n] -= qhat * vn */
        for (i = 0; i < n; i++) {
            uint64_t p = qhat * vn[i] + carry;
            carry = p >> 32;
            t = (uint64_t)un[i + j] - (uint32_t)p - borrow;
            un[i + j] = (uint32_t)t;
            borrow = (t >> 32) & 1;
        }
        t = (uint64_t)un[j + n] - carry - borrow;
        un[j + n] = (uint32_t)t;
        if ((t >> 63) != 0) {
            /* qhat was one too large: add the divisor back */
            uint64_t c = 0;
            qhat--;
            for (i = 0; i < n; i++) {
                uint64_t sum = (uint64_t)un[i + j] + vn[i] + c;
                un[i + j] = (uint32_t)sum;
                c = sum >> 32;
            }
            un[j + n] += (uint32_t)c;
        }
        if (q != NULL)
            q->d[j] = (uint32_t)qhat;
    }
    if (q != NULL)
        s_bn_trim(q);
    if (r != NULL) {
        for (i = 0; i < n; i++)
            r->d[i] = s != 0 ? (un[i] >> s) | (un[i + 1] << (32 - s)) : un[i];
        r->n = n;
        s_bn_trim(r);
    }
}

size_t
s_bn_to_decimal(s_bn *a, char *out, size_t cap)
{
    /* 10^9-digit chunks, least significant first; 9216 bits need at most
       308 chunks. */
    uint32_t chunk[S_BN_LIMBS * 32 / 29 + 2];
    size_t n_chunk = 0, len = 0, i;
    int k;
    char tmp[10];

    if (a->n == 0) {
        if (cap < 1)
            return 0;
        out[0] = '0';
        return 1;
    }
    while (a->n != 0)
        chunk[n_chunk++] = s_bn_div_small(a, 1000000000u);
    for (i = n_chunk; i-- > 0;) {
        uint32_t c = chunk[i];
        int nd = 0;
        do {
            tmp[nd++] = (char)('0' + c % 10);
            c /= 10;
        } while (c != 0);
        /* every chunk but the leading one is zero-padded to 9 digits */
        while (i != n_chunk - 1 && nd < 9)
            tmp[nd++] = '0';
        if (len + (size_t)nd > cap)
            return 0;
        for (k = nd; k-- > 0;)
            out[len++] = tmp[k];
    }
    return len;
}

/* s_bignum.h -- fixed-capacity natural numbers for exact text conversion */
#ifndef BF16EMU_SOFTFLOAT_S_BIGNUM_H
#define BF16EMU_SOFTFLOAT_S_BIGNUM_H

#include "internal.h"

/* Capacity in 32-bit limbs: 9216 bits.  The text conversions bound every
   operand they build (see from_string.c and to_string.c), so this is the
   only storage they use; nothing is allocated. */
#define S_BN_LIMBS 288

/* A natural number sum d[i] * 2^(32 i) for i < n; d[n - 1] != 0 unless
   n == 0 (zero).  Limbs at and above n are unspecified. */
typedef struct
{
    unsigned n;
    uint32_t d[S_BN_LIMBS];
} s_bn;

/* Z = V. */
void s_bn_set_u128(s_bn *z, s_u128 v);
/* Z = A (copies only the used limbs). */
void s_bn_copy(s_bn *z, const s_bn *a);

static inline bool
s_bn_is_zero(const s_bn *a)
{
    return a->n == 0;
}

/* Number of significant bits of A (0 for zero). */
unsigned s_bn_bit_length(const s_bn *a);
/* -1, 0, +1 as A <, =, > B. */
int s_bn_cmp(const s_bn *a, const s_bn *b);

/* In-place operations.  Those returning bool return false, leaving Z
   unspecified, when the result would exceed S_BN_LIMBS limbs. */
/* Z = Z * m + add. */
bool s_bn_mul_add_small(s_bn *z, uint32_t m, uint32_t add);
/* Z = Z * 5^k. */
bool s_bn_mul_pow5(s_bn *z, uint32_t k);
/* Z = Z * 2^dist. */
bool s_bn_shl(s_bn *z, uint32_t dist);
/* Z = Z + add. */
bool s_bn_add_small(s_bn *z, uint32_t add);
/* Z = Z - sub; requires Z >= sub. */
void s_bn_sub_small(s_bn *z, uint32_t sub);
/* Z = floor(Z / m), m != 0; returns Z mod m. */
uint32_t s_bn_div_small(s_bn *z, uint32_t m);

/* Bits [lo, lo + 128) of A, i.e. floor(A / 2^lo) mod 2^128; *STICKY gets
   whether any bit below lo is set (STICKY may be NULL). */
s_u128 s_bn_extract128(const s_bn *a, uint32_t lo, bool *sticky);

/* Q = floor(A / B), R = A mod B; B != 0.  Q and R must not alias A, B or
   each other.  Q or R may be NULL when not wanted. */
void s_bn_divmod(s_bn *q, s_bn *r, const s_bn *a, const s_bn *b);

/* Writes the decimal digits of A (most significant first, '0'-'9', no
   terminator, "0" for zero) into OUT, which has room for CAP bytes; returns
   the number of digits, or 0 if CAP is too small.  A is destroyed. */
size_t s_bn_to_decimal(s_bn *a, char *out, size_t cap);

#endif /* BF16EMU_SOFTFLOAT_S_BIGNUM_H */

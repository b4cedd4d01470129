/* valueset.h -- the formats and value sets of the all-pairs tests
   (comparisons, minimum and maximum): field widths written down from the
   standards, integer decoding of encodings, and the set builder */
#ifndef BF16EMU_TESTS_VALUESET_H
#define BF16EMU_TESTS_VALUESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "softfloat/softfloat.h"
#include "tests/support/support.h"

/* A format described here (widths from the standards, not read from the
   library's descriptors); F is only the handle passed to the library. */
typedef struct
{
    const sf_format *f;
    unsigned e_bits, m_bits, pad;
    bool fn; /* OCP E4M3: no Inf, only S.1111.111 is NaN */
} vs_fmt;

/* bf16, f16, f32, tf32, e4m3, e5m2, in that order. */
#define VS_N_FMTS 6
extern const vs_fmt vs_fmts[VS_N_FMTS];

/* The most values vs_build_set writes. */
#define VS_SET_MAX 512

/* 2^N - 1, for N < 64. */
uint64_t vs_field_mask(unsigned n);
/* The sign bit of an encoding of FI. */
uint64_t vs_sign_bit(const vs_fmt *fi);
/* The encoding with sign NEG, biased exponent field BEXP and fraction
   field FRAC (both already in range). */
uint64_t vs_make(const vs_fmt *fi, bool neg, uint64_t bexp, uint64_t frac);

typedef enum
{
    VS_ZERO,
    VS_SUB,
    VS_NORMAL,
    VS_INF,
    VS_QNAN,
    VS_SNAN
} vs_class;

/* The class of encoding A, from its fields alone. */
vs_class vs_classify(const vs_fmt *fi, uint64_t a);
bool vs_is_nan(vs_class c);

/* Writes the value set of FI into OUT (room for VS_SET_MAX) and returns
   its size: every encoding for the 8-bit formats; else the specials and
   edges of both signs (zeros, smallest and largest subnormals, smallest
   normal, 1 and its neighbours, 2, largest finite and its neighbour, Inf,
   quiet and signalling NaNs with several payloads) and random encodings
   drawn from R, up to VS_SET_MAX. */
size_t vs_build_set(const vs_fmt *fi, uint64_t *out, tst_rng *r);

/* The value of encoding A as a host double, decoded with ldexp: NaN for
   NaNs; with DAZ, subnormals read as zero of the same sign. */
double vs_host_value(const vs_fmt *fi, uint64_t a, bool daz);

#endif

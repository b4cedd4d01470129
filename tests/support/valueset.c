/* valueset.c -- formats, integer decoding and value sets of the all-pairs
   tests */
#include <math.h>

#include "valueset.h"

const vs_fmt vs_fmts[VS_N_FMTS] = {
    {&sf_format_bf16, 8, 7, 0, false}, {&sf_format_f16, 5, 10, 0, false},
    {&sf_format_f32, 8, 23, 0, false}, {&sf_format_tf32, 8, 10, 13, false},
    {&sf_format_e4m3, 4, 3, 0, true},  {&sf_format_e5m2, 5, 2, 0, false}};

uint64_t
vs_field_mask(unsigned n)
{
    return (UINT64_C(1) << n) - 1;
}

uint64_t
vs_sign_bit(const vs_fmt *fi)
{
    return UINT64_C(1) << (fi->e_bits + fi->m_bits + fi->pad);
}

uint64_t
vs_make(const vs_fmt *fi, bool neg, uint64_t bexp, uint64_t frac)
{
    return (neg ? vs_sign_bit(fi) : 0) | (bexp << (fi->m_bits + fi->pad))
           | (frac << fi->pad);
}

vs_class
vs_classify(const vs_fmt *fi, uint64_t a)
{
    uint64_t fr = (a >> fi->pad) & vs_field_mask(fi->m_bits);
    uint64_t ex = (a >> (fi->pad + fi->m_bits)) & vs_field_mask(fi->e_bits);
    uint64_t top = vs_field_mask(fi->e_bits);

    if (fi->fn) {
        if (ex == top && fr == vs_field_mask(fi->m_bits))
            return VS_QNAN;
    } else if (ex == top) {
        if (fr == 0)
            return VS_INF;
        return (fr >> (fi->m_bits - 1)) ? VS_QNAN : VS_SNAN;
    }
    if (ex == 0)
        return fr == 0 ? VS_ZERO : VS_SUB;
    return VS_NORMAL;
}

bool
vs_is_nan(vs_class c)
{
    return c == VS_QNAN || c == VS_SNAN;
}

size_t
vs_build_set(const vs_fmt *fi, uint64_t *out, tst_rng *r)
{
    unsigned w = 1 + fi->e_bits + fi->m_bits;
    uint64_t mf = vs_field_mask(fi->m_bits), top = vs_field_mask(fi->e_bits);
    uint64_t bias = vs_field_mask(fi->e_bits - 1), q = UINT64_C(1)
                                                       << (fi->m_bits - 1);
    size_t n = 0;

    if (w <= 8) {
        for (uint64_t a = 0; a < (UINT64_C(1) << w); a++)
            out[n++] = a << fi->pad;
        return n;
    }
    for (int s = 0; s < 2; s++) {
        bool neg = s != 0;
        const uint64_t edges[][2] = {
            {0, 0},         {0, 1},        {0, mf},       {0, mf >> 1},
            {1, 0},         {1, 1},        {bias, 0},     {bias, 1},
            {bias - 1, mf}, {bias + 1, 0}, {top - 1, mf}, {top - 1, mf - 1},
            {top, 0},       {top, q},      {top, q | 1},  {top, mf},
            {top, 1},       {top, q - 1},  {top, q >> 1}, {bias, mf >> 1}};
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            out[n++] = vs_make(fi, neg, edges[i][0], edges[i][1]);
    }
    while (n < VS_SET_MAX) {
        uint64_t x = tst_rand64(r) >> (64 - w);
        if (n % 4 == 0) /* a neighbour of an earlier value */
            x = (out[tst_rand_below(r, n)] >> fi->pad)
                + (uint64_t)tst_rand_below(r, 3) - 1;
        out[n++] = (x & vs_field_mask(w)) << fi->pad;
    }
    return n;
}

double
vs_host_value(const vs_fmt *fi, uint64_t a, bool daz)
{
    uint64_t fr = (a >> fi->pad) & vs_field_mask(fi->m_bits);
    uint64_t ex = (a >> (fi->pad + fi->m_bits)) & vs_field_mask(fi->e_bits);
    int bias = (int)vs_field_mask(fi->e_bits - 1);
    vs_class c = vs_classify(fi, a);
    double v;

    if (vs_is_nan(c))
        return NAN;
    if (c == VS_INF)
        v = INFINITY;
    else if (ex == 0)
        v = daz ? 0.0 : ldexp((double)fr, 1 - bias - (int)fi->m_bits);
    else
        v = ldexp((double)(fr | (UINT64_C(1) << fi->m_bits)),
                  (int)ex - bias - (int)fi->m_bits);
    return (a & vs_sign_bit(fi)) ? -v : v;
}

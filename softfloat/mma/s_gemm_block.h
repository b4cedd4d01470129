/* s_gemm_block.h -- what the vector kernels of one instruction set do
   with the accumulators C of a block, written once over GL_N 32-bit
   lanes: C decoded, the block's grid 2^q (q = emax - F), and pass 1 of
   the integer kernel; included once, by gemm_avx2.c and gemm_avx512.c,
   before their kernels.

   The includer includes immintrin.h and defines GL_N (8 or 16), GV (the
   attribute list of a function here: the integer kernels' target,
   always_inline, static inline), the types gv_i (GL_N int32_t lanes) and
   gv_m (a mask of the lanes: all ones in a lane for AVX2, a bit a lane
   for AVX-512), and these functions, each one instruction (or two) of
   the set:
   - gv_k(x): x in every lane; gv_load(p): GL_N lanes from P;
   - gv_add, gv_sub, gv_max (signed), gv_and, gv_or: lane by lane;
     gv_srli(a, n): logical shift right by a constant;
   - gv_eq(a, b): the lanes where a = b; gv_has(a): those of A (not
     negative) that are not zero;
   - gv_sel(m, a, b): a where M is set, else b;
     gv_clear(m, a): 0 where M is set, else a;
   - gv_any(m): whether a lane of M is set.
   Not guarded. */

/* C of a block (CEF: its biased exponents): its significand CSIG (the
   hidden bit set where normal; 0 for a subnormal under DAZ), the exponent
   CELOW of its lowest bit, and, returned, its part of emax (the exponent
   of its top bit; the model's value for a zero C). */
GV gv_i
c_decode(const sf_mma_model *m, gv_i c, gv_i cef, gv_i *csig, gv_i *celow)
{
    gv_m csub = gv_eq(cef, gv_k(0));
    gv_i sig =
        gv_or(gv_and(c, gv_k(0x7FFFFF)), gv_clear(csub, gv_k(0x800000)));

    if (m->daz)
        sig = gv_clear(csub, sig);
    *csig = sig;
    *celow = gv_sub(gv_max(cef, gv_k(1)), gv_k(150));
    return gv_sel(gv_eq(sig, gv_k(0)),
                  gv_k(m->zero_c_in_max ? m->acc->emin : INT32_MIN),
                  gv_add(*celow, gv_k(23)));
}

/* The biased exponents of the accumulators C. */
GV gv_i
c_exp(gv_i c)
{
    return gv_and(gv_srli(c, 23), gv_k(0xFF));
}

/* The grid of a block: q = emax - F, emax the largest of EP (the
   products' part: the exponent of the largest product's top bit, or the
   kernel's value when there is none), C's part (C finite) and the model's
   floor; C decoded into CSIG and CELOW (c_decode). */
GV gv_i
block_grid(const s_mma_plan *pl, gv_i ep, gv_i c, gv_i *csig, gv_i *celow)
{
    const sf_mma_model *m = pl->m;
    gv_i emax = gv_max(ep, c_decode(m, c, c_exp(c), csig, celow));

    if (m->emax_floor != SF_MMA_NO_FLOOR)
        emax = gv_max(emax, gv_k(m->emax_floor));
    return gv_sub(emax, gv_k(pl->f));
}

/* The products' part of emax on the binary32 path, from MX (binary32
   bits, not negative: the largest 2^E_a 2^E_b of the block's products,
   0 where they are all zero), as the integer kernel has it. */
GV gv_i
fp_ep(const s_mma_plan *pl, gv_i mx)
{
    return gv_sel(gv_has(mx), gv_sub(gv_srli(mx, 23), gv_k(127)),
                  gv_k(2 * S_MMA_ZERO_E + pl->qadd));
}

/* Pass 1 of the integer kernel: the grid *Q of LEN products (A's
   exponents AE[t], B's BE[t GL_N ..]) and the accumulators C, C decoded
   (block_grid); false (nothing computed) where C holds an Inf or NaN. */
GV bool
kernel_grid(const s_mma_plan *pl, const int32_t *ae, const int32_t *be,
            size_t len, gv_i c, gv_i *q, gv_i *csig, gv_i *celow)
{
    gv_i mx = gv_k(2 * S_MMA_ZERO_E);

    if (gv_any(gv_eq(c_exp(c), gv_k(0xFF))))
        return false;
    for (size_t t = 0; t < len; t++)
        mx = gv_max(mx, gv_add(gv_k(ae[t]), gv_load(be + t * GL_N)));
    *q = block_grid(pl, gv_add(mx, gv_k(pl->qadd)), c, csig, celow);
    return true;
}

/* attn_exact.h -- the exact attention forward and backward, evaluated with
   MPFR from the same BF16 inputs as the emulated one, and the signed error
   of a computed value in ulps */
#ifndef BF16EMU_ANALYSIS_ATTN_EXACT_H
#define BF16EMU_ANALYSIS_ATTN_EXACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>

#include "bias.h"
#include "attention.h"
#include "softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * What is computed (doc/exact.md has the definitions, the precision
 * argument and the error bounds).
 *
 * From the BF16 (or, with cfg->input &sf_format_f16, FP16) inputs Q, dO
 * [B,H,Nq,d] and K, V [B,H,Nk,d] (bit patterns,
 * the layouts of attention.h) and the configuration's shape, causal mask
 * (key j masked for query i when j > i + (Nk - Nq)) and scale (cfg->scale
 * as the exact FP32 number, or 1/sqrt(d) correctly rounded to FP32 when it
 * is 0), one row of scores is S = scale * q K^T, exact; masked keys are
 * left out of every sum.  The forward gives
 *
 *     P = softmax(S),  O = P V,  LSE = log(sum_j exp(S_j))   (natural log)
 *
 * and the backward, with delta = rowsum(dO o O) (or a caller's override),
 *
 *     dP = dO V^T,  dS = scale * P o (dP - delta),
 *     dQ = dS K,    dK = dS^T Q,  dV = P^T dO.
 *
 * (dS carries the scale, so dQ and dK are the gradients with respect to Q
 * and K themselves.)  An attention mask (cfg->mask) takes part as its
 * meaning, not as a kernel's arithmetic: its value is added to S exactly,
 * and a key it hides (a False boolean entry, or -Inf) is masked, whatever
 * finite fill a kernel puts there; with a mask the forward is evaluated
 * directly.  A row with every key masked has O = 0, LSE = -Inf, P = 0,
 * dS = 0 and contributes nothing to dQ, dK, dV.
 *
 * Two evaluations of the forward:
 *   AX_TILED   Algorithm 1 of the paper: the keys in KV blocks of the
 *              configuration's width Bc, visited in its order; per block
 *              the block max r, the fix's shift m~ (cfg->fix), m_new =
 *              max(m~, m_old), l and O~ rescaled by exp(m_old - m_new),
 *              then O = O~ / l and LSE = m + log l.
 *   AX_DIRECT  the definition: m = the row max, l = sum exp(S - m),
 *              O = sum exp(S - m) V / l, LSE = m + log l.
 * In exact arithmetic both give the same O and LSE for every fix variant
 * and every tiling; here both are evaluated at precision p and agree to
 * the bounds of doc/exact.md.  The backward does not depend on tiles or
 * fix: it always uses the direct evaluation.
 *
 * Every error the project reports is computed - exact (the paper's
 * lp - hp).
 *--------------------------------------------------------------------------*/

/* Return codes. */
enum
{
    AX_OK = 0,
    AX_ENOMEM = -1,   /* a work array could not be allocated */
    AX_ECONFIG = -2,  /* the configuration or options are unusable */
    AX_EINPUT = -3,   /* an input (Q, K, V, dO, delta) is NaN or Inf */
    AX_ERANGE = -4,   /* the values need more exponent range than MPFR's
                         current range allows (doc/exact.md) */
    AX_EINTERNAL = -5 /* a step that must be exact was not (a bug) */
};

/* A static string describing CODE. */
const char *ax_strerror(int code);

typedef enum
{
    AX_TILED = 0, /* Algorithm 1 with the configuration's tiles and fix */
    AX_DIRECT     /* the untiled definition, no fix */
} ax_method;

/* The working precision p (bits) of every rounded step. */
#define AX_PREC_DEFAULT 256
#define AX_PREC_MIN 64
#define AX_PREC_MAX 65536

typedef struct ax_options
{
    mpfr_prec_t prec; /* p; 0: AX_PREC_DEFAULT */
    ax_method method; /* forward only */
} ax_options;

/* One output array, as doubles (each the MPFR value rounded to nearest,
   ties to even, to a double) and/or as MPFR numbers (caller-initialised
   mpfr_t of any precision, set with MPFR_RNDN).  Either may be NULL. */
typedef struct ax_buf
{
    double *d;
    mpfr_t *mp;
} ax_buf;

/* One input array (the delta override): MP wins when both are set; MP is
   only read. */
typedef struct ax_in
{
    const double *d;
    mpfr_t *mp;
} ax_in;

/* Everything the exact evaluation can deliver; leave unwanted ones
   zeroed.  Sizes in elements. */
typedef struct ax_outputs
{
    /* forward */
    ax_buf o;    /* [B,H,Nq,d] */
    ax_buf lse;  /* [B,H,Nq]: -Inf for a fully masked row */
    ax_buf s;    /* [B,H,Nq,Nk] scores, exact (-Inf where masked) */
    ax_buf p;    /* [B,H,Nq,Nk] P = softmax(S) (0 where masked) */
    ax_buf m;    /* [B,H,Nq] the shift m after the last block (direct:
                    the row max); -Inf for a fully masked row */
    ax_buf l;    /* [B,H,Nq] l after the last block (sum exp(S - m)) */
    ax_buf pmax; /* [B,H,Nq] the largest P~ = exp(S - m_new) of any block
                    (1 without the fix; < 1 where the fix shifts) */
    /* backward (ax_backward_ex only) */
    ax_buf delta; /* [B,H,Nq] the delta used: computed or the override */
    ax_buf dp;    /* [B,H,Nq,Nk] dO V^T (also where masked) */
    ax_buf ds;    /* [B,H,Nq,Nk] (0 where masked) */
    ax_buf dq;    /* [B,H,Nq,d] */
    ax_buf dk;    /* [B,H,Nk,d] */
    ax_buf dv;    /* [B,H,Nk,d] */
} ax_outputs;

/* The forward.  Reads cfg->shape, causal, scale, br/bc, ablations
   (FA_ABL_UNTILED), order, policy (for the default Bc) and fix; ignores
   the exp and matrix-unit models.  OPT may be NULL (defaults).  Fills the
   forward fields of OUT that are set.  Returns AX_OK or a negative code
   (outputs then partly written).  No I/O; MPFR's exponent range and
   flags are left as they were. */
int ax_forward_ex(const fa_config *cfg, const ax_options *opt,
                  const uint16_t *q, const uint16_t *k, const uint16_t *v,
                  const ax_outputs *out);

/* The backward (and, in the forward fields of OUT, the direct forward it
   uses).  DELTA_IN NULL (or both its pointers NULL): delta = rowsum(dO o
   O) with the exact O; else delta[B,H,Nq] as given.  Same returns. */
int ax_backward_ex(const fa_config *cfg, const ax_options *opt,
                   const uint16_t *q, const uint16_t *k, const uint16_t *v,
                   const uint16_t *dout, const ax_in *delta_in,
                   const ax_outputs *out);

/* Shorthands with double outputs (any may be NULL). */
int ax_forward(const fa_config *cfg, const ax_options *opt, const uint16_t *q,
               const uint16_t *k, const uint16_t *v, double *o, double *lse);
int ax_backward(const fa_config *cfg, const ax_options *opt, const uint16_t *q,
                const uint16_t *k, const uint16_t *v, const uint16_t *dout,
                const double *delta_in, double *delta, double *dq, double *dk,
                double *dv);

/* The KV block width Bc the tiled evaluation uses for CFG: Nk with
   FA_ABL_UNTILED; else cfg->bc when non-zero; else the forward tile of
   the configuration's description for d (fa2: 128 for d <= 64, 64 above;
   cudnn: 128; an untiled description: Nk), never one re-derived from the
   policy.  At most Nk, at least 1. */
size_t ax_block_cols(const fa_config *cfg);

/* The softmax scale as used: cfg->scale, or RN_f32(1/sqrt(d)) when it is
   0, as FP32 bits. */
uint32_t ax_scale_bits(const fa_config *cfg);

/* Bits that hold every score (and every dP) exactly for head dimension D:
   546 + bitlen(D) (doc/exact.md). */
mpfr_prec_t ax_score_prec(size_t d);

/*----------------------------------------------------------------------------
 * Signed error in ulps.
 *
 * The ulp of format F at a real x is the spacing of F's numbers in the
 * binade of x: with e = floor(log2 |x|) clamped to [F->emin, F->emax],
 * ulp(x) = 2^(e - F->frac_bits).  So at a power of two the ulp is the
 * spacing above it (ulp(1) = 2^-23 in FP32, ulp of anything in [1/2, 1)
 * is 2^-24); below the smallest normal, and at x = 0, it is the subnormal
 * spacing 2^(emin - frac_bits) (2^-149 in FP32, 2^-133 in BF16); above
 * the largest finite binade it stays that binade's spacing.
 *--------------------------------------------------------------------------*/

/* e - F->frac_bits: the exponent of ulp(X) (X finite, or +-Inf which get
   the top binade's ulp; NaN gets the subnormal spacing). */
int ax_ulp_exp(const sf_format *f, double x);

/* (computed - exact) / ulp(exact) for COMPUTED = BITS of format F (FP32,
   BF16 or any format of softfloat.h) and EXACT a double: the double
   difference (correctly rounded) scaled exactly by the ulp, so the result
   is the correctly rounded error in ulps unless it underflows.  NaN if
   either is NaN; if EXACT is infinite: 0 when COMPUTED is the same
   infinity, else computed - exact as IEEE gives it (+-Inf); if only
   COMPUTED is infinite, +-Inf. */
double ax_error_ulps(const sf_format *f, uint64_t bits, double exact);

/* The same against an MPFR value: the ulp is taken at EXACT itself (not at
   its double rounding) and the result is (computed - exact) / ulp(exact)
   correctly rounded to a double. */
/* The errors relative to the row's scale of N computed values GOT (FP32
   bits of values of format F) against EXACT, in rows of D elements:
   (computed - exact) in ulps of F at the largest |exact| of the row's
   finite exact values (an element near 0, whose own ulp is tiny, weighs
   as much as its row's rounding does), each added to ERR and its
   magnitude to MAG (when finite); elements whose exact value is not
   finite are left out. */
void ax_row_errors(const sf_format *f, const uint32_t *got,
                   const double *exact, size_t n, size_t d,
                   bias_cell *err, bias_cell *mag);

double ax_error_ulps_mp(const sf_format *f, uint64_t bits, mpfr_srcptr exact);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_ATTN_EXACT_H */

/* fa_test.h -- shared helpers of the attention tests: inputs, a naive
   double-precision attention (softmax, then the matmul) forward and
   backward, and the error bounds of the fp32 policy */
#ifndef BF16EMU_TESTS_ATTENTION_FA_TEST_H
#define BF16EMU_TESTS_ATTENTION_FA_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention/attention.h"
#include "tests/support/support.h"

/* u = 2^-24, the unit roundoff of FP32 (RNE). */
#define FT_U 0x1p-24

/* BF16 <-> double, FP32 bits -> double. */
uint16_t ft_bf16(double x);
double ft_bf(uint16_t b);
double ft_f32(uint32_t b);
uint32_t ft_f32_bits(double x); /* RNE */

/* N BF16 values, uniform in [LO, HI) then rounded. */
void ft_fill_uniform(tst_rng *r, uint16_t *x, size_t n, double lo, double hi);
/* N BF16 values of N(MEAN, SD^2) then rounded. */
void ft_fill_normal(tst_rng *r, uint16_t *x, size_t n, double mean, double sd);
/* Uniform double in [0, 1). */
double ft_unit(tst_rng *r);

/* Element counts of a configuration's arrays. */
size_t ft_nq_d(const fa_config *c);  /* B H Nq d */
size_t ft_nk_d(const fa_config *c);  /* B H Nk d */
size_t ft_rows(const fa_config *c);  /* B H Nq */
size_t ft_nq_nk(const fa_config *c); /* B H Nq Nk */

/* The reference: S = scale q k^T (scale = fa_scale_bits), masked keys
   left out, P = softmax(S), O = P V, LSE = log sum exp S (a row with no
   visible key: O = 0, LSE = -Inf).  All in double from the BF16 inputs.
   Outputs may be NULL.  P and S are [B,H,Nq,Nk] (masked: 0 and -Inf). */
void ft_ref_forward(const fa_config *c, const uint16_t *q, const uint16_t *k,
                    const uint16_t *v, double *o, double *lse, double *s,
                    double *p);

/* The reference backward with delta = rowsum(dO o O_ref): delta, dQ, dK,
   dV, dP, dS (dS = scale P o (dP - delta)); outputs may be NULL. */
void ft_ref_backward(const fa_config *c, const uint16_t *q, const uint16_t *k,
                     const uint16_t *v, const uint16_t *dout, double *delta,
                     double *dq, double *dk, double *dv, double *dp,
                     double *ds);

/* Error bounds of the fp32 policy (fma-chain models, the "cr" exp with
   relative error at most u) against the reference, per element of O
   ([B,H,Nq,d]) and of LSE ([B,H,Nq]); the derivation is in fa_test.c.
   Valid for every tiling and KV order, and for the fix variants with the
   configuration's parameters. */
void ft_fp32_forward_bounds(const fa_config *c, const uint16_t *q,
                            const uint16_t *k, const uint16_t *v, double *bo,
                            double *blse);

/* The exact O and LSE rounded to FP32 (LSE -Inf for a row with no
   visible key), the inputs of the fp32 backward that
   ft_fp32_backward_bounds assumes. */
void ft_fp32_backward_inputs(const fa_config *c, const uint16_t *q,
                             const uint16_t *k, const uint16_t *v, uint32_t *o,
                             uint32_t *lse);

/* Bounds of the fp32 backward (from ft_fp32_backward_inputs' O and LSE)
   on delta, dQ, dK and dV. */
void ft_fp32_backward_bounds(const fa_config *c, const uint16_t *q,
                             const uint16_t *k, const uint16_t *v,
                             const uint16_t *dout, double *bdelta, double *bdq,
                             double *bdk, double *bdv);

/* Compares N computed FP32 values (bits) with references within bounds;
   prints the first few failures as "what[index] got hex (value) ref
   value bound b" and returns the number of failures.  A NaN reference
   must be matched by a NaN, an infinite one by the same infinity. */
size_t ft_check_close(const char *what, const uint32_t *got, const double *ref,
                      const double *bound, size_t n);

/* Counts elements of two FP32 arrays whose bits differ. */
size_t ft_count_diff(const uint32_t *a, const uint32_t *b, size_t n);

/* Runs fa_forward / fa_backward and asserts success. */
void ft_forward(const fa_config *c, const uint16_t *q, const uint16_t *k,
                const uint16_t *v, uint32_t *o, uint32_t *lse,
                fa_capture *cap);
void ft_backward(const fa_config *c, const uint16_t *q, const uint16_t *k,
                 const uint16_t *v, const uint32_t *o, const uint32_t *lse,
                 const uint16_t *dout, uint32_t *delta, uint32_t *dq,
                 uint32_t *dk, uint32_t *dv, fa_capture *cap);

/* The default configuration of policy P with shape B H NQ NK D. */
fa_config ft_cfg(fa_policy p, size_t b, size_t h, size_t nq, size_t nk,
                 size_t d);

/* A log of rounding events: the first CAP events go to EV, N counts all of
   them.  ft_log_event is its sf_event_sink callback (USER: the log). */
typedef struct
{
    size_t n, cap;
    sf_event *ev;
} ft_ev_log;

void ft_log_event(void *user, const sf_event *ev);

/* Frees the N pointers of P (NULL ones are skipped, as by free);
   FT_FREE(a, b, ...) frees its arguments. */
void ft_free_all(void *const *p, size_t n);
#define FT_FREE(...)                                                        \
    ft_free_all((void *const[]){__VA_ARGS__},                               \
                sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* calloc that asserts. */
void *ft_alloc(size_t n, size_t size);

#endif

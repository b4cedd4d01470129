/* gradient.h -- the gradient error of the paper's Eqs. 1-3: per-token
   delta errors, the dQ and dW^Q errors as sums of rank-1 terms, their SVD
   and cosine similarities, and the delta error summed over training
   steps */
#ifndef BF16EMU_ANALYSIS_GRADIENT_H
#define BF16EMU_ANALYSIS_GRADIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * Conventions (doc/analysis.md, "The gradient error").
 *
 * Every error is lp - hp: the low-precision (computed) value minus the
 * high-precision (reference) one, as everywhere in the project.  The
 * paper writes its Eqs. 1 and 2 the other way round (hp - lp); the
 * functions here return the negatives of those left-hand sides.
 *
 * One head, one sequence of N tokens; head dimension d, model dimension
 * D; alpha the softmax scale (1/sqrt(d)); every matrix row-major:
 *
 *   P   [N, N]  normalised probabilities, S = alpha Q K^T, P = softmax(S)
 *   K   [N, d]  keys
 *   X   [N, D]  the input of the query projection, Q = X W^Q^T, so
 *               W^Q is [d, D] (out x in) and dW^Q = dQ^T X
 *   dd  [N]     the delta error dd[T] = (delta_lp - delta_hp)[T]
 *
 * The backward gives dS = alpha P o (dP - delta) and dQ = dS K; with
 * everything equal but delta (the paper's premise),
 *
 *   dQ_lp - dQ_hp = -alpha diag(dd) (P K)                          (Eq. 1)
 *   dW^Q_lp - dW^Q_hp = (dQ_lp - dQ_hp)^T X
 *                     = sum_T c[T] (PK)[T]^T X[T],  c[T] = -alpha dd[T]
 *                                                                  (Eq. 2)
 *
 * where (PK)[T] (1 x d) and X[T] (1 x D) are rows, so each term
 * (PK)[T]^T X[T] is a d x D matrix of rank 1 (or 0).
 *
 * Arithmetic is in double, in the fixed orders stated per function, so
 * results do not depend on the build, the machine or the thread count.
 * Nothing here allocates: work arrays are the caller's.
 *--------------------------------------------------------------------------*/

/* Return codes. */
enum
{
    GRAD_OK = 0,
    GRAD_EINVAL = -1,  /* a size is 0 or overflows, a needed pointer is
                          NULL, or an argument is out of its range */
    GRAD_EINPUT = -2,  /* an input value is NaN or infinite */
    GRAD_ENOCONV = -3, /* the SVD did not converge in GRAD_SVD_MAX_SWEEPS */
    GRAD_EFULL = -4    /* the series has no room left */
};

/* A static string describing CODE. */
const char *grad_strerror(int code);

/*----------------------------------------------------------------------------
 * Inputs and the delta error.
 *--------------------------------------------------------------------------*/

/* OUT[i] = the FP32 value of BITS[i] (exact). */
void grad_from_f32(size_t n, const uint32_t *bits, double *out);
/* OUT[i] = the BF16 value of BITS[i] (exact). */
void grad_from_bf16(size_t n, const uint16_t *bits, double *out);

/* sum X[i], i = 0 .. N-1 in order, with Neumaier's compensation: the sum
   of the running total and its correction, rounded once at the end.  0
   for N = 0. */
double grad_sum(size_t n, const double *x);

/* ERR[T] = LP[T] - HP[T], T = 0 .. N-1, rounded to nearest as a double
   (exact for two FP32 values whose exponents differ by at most 28); *SUM
   = grad_sum of these rounded errors.  LP and HP are FP32 bit patterns;
   ERR or SUM may be NULL.  Every error is written (NaN or +-Inf as IEEE
   gives them where an input is NaN or infinite); returns GRAD_EINPUT then
   (and *SUM is NaN), GRAD_EINVAL for NULL LP or HP with N > 0, else
   GRAD_OK. */
int grad_delta_error_f32(size_t n, const uint32_t *lp, const uint32_t *hp,
                         double *err, double *sum);
/* The same for doubles. */
int grad_delta_error(size_t n, const double *lp, const double *hp, double *err,
                     double *sum);

/*----------------------------------------------------------------------------
 * Eqs. 1 and 2.
 *--------------------------------------------------------------------------*/

/* PK[T][i] = sum_t P[T][t] K[t][i] for T < NQ, i < D, summed over t = 0 ..
   NK-1 in order (P is [NQ, NK], K [NK, D]).  GRAD_EINPUT when P or K holds
   a NaN or infinity (PK untouched). */
int grad_pk(size_t nq, size_t nk, size_t d, const double *p, const double *k,
            double *pk);

/* Eq. 1 as lp - hp: DQ_ERR[T][i] = c[T] PK[T][i] with c[T] = -(ALPHA
   DD[T]), for T < N, i < D.  ALPHA finite; GRAD_EINPUT for a non-finite
   DD or PK (DQ_ERR untouched). */
int grad_dq_error(size_t n, size_t d, double alpha, const double *dd,
                  const double *pk, double *dq_err);

/* Eq. 2 as lp - hp: the d x D matrix
     DW_ERR = sum_T c[T] (PK)[T]^T X[T],  c[T] = -(ALPHA DD[T]),
   evaluated as DW_ERR = 0, then for T = 0 .. N-1 in order, for every i, j:
   DW_ERR[i][j] += (c[T] PK[T][i]) X[T][j].  PK is [N, d], X [N, D],
   DW_ERR [d, D].  GRAD_EINPUT for a non-finite input (DW_ERR untouched). */
int grad_dwq_error(size_t n, size_t d, size_t dm, double alpha,
                   const double *dd, const double *pk, const double *x,
                   double *dw_err);

/*----------------------------------------------------------------------------
 * The singular value decomposition A = U diag(sigma) V^T of an m x n
 * matrix, by one-sided Jacobi (Hestenes) rotations.
 *
 * The columns of the taller orientation (A itself when m >= n, else A^T)
 * are rotated in pairs, in the cyclic order (0,1), (0,2), ..., (0,c-1),
 * (1,2), ..., until a whole sweep finds every pair orthogonal to
 * |w_p . w_q| <= sqrt(r) eps ||w_p|| ||w_q|| (r rows, eps = 2^-52).  A is
 * first scaled by a power of two (exactly) so that its largest entry lies
 * in [1, 2).  The singular values come out sorted in decreasing order.
 * Each pair of singular vectors is normalised in sign: the entry of u of
 * largest magnitude (the first of equal ones) is positive; where sigma =
 * 0 the vector on the rotated side is the zero vector and the sign is
 * taken from the other one.  Relative accuracy: a few times sqrt(r) eps
 * in the singular values relative to sigma_1.
 *--------------------------------------------------------------------------*/
#define GRAD_SVD_MAX_SWEEPS 100

typedef struct grad_svd_info
{
    size_t k;       /* min(m, n): the number of singular values */
    double sigma1;  /* the largest singular value (the spectral norm) */
    double sigma2;  /* the second one (0 when k = 1) */
    double ratio;   /* sigma1 / sigma2: +Inf when only sigma2 = 0, NaN
                       when both are 0 */
    double energy1; /* sigma1^2 / sum sigma^2: the share of the squared
                       Frobenius norm in the top direction (NaN for A = 0) */
    double fro2;    /* sum sigma^2 = ||A||_F^2 */
    unsigned sweeps;
} grad_svd_info;

/* Doubles of work grad_svd needs for an M x N matrix: r c + c c + c, with
   r = max(M, N), c = min(M, N); 0 when a size is 0 or it overflows. */
size_t grad_svd_work_size(size_t m, size_t n);

/* The SVD of A (M x N, row-major).  SIGMA (NULL or k entries) receives the
   singular values in decreasing order; U (NVEC * M) and V (NVEC * N) the
   first NVEC <= k left and right singular vectors, vector i at U + i M and
   V + i N (both may be NULL when NVEC = 0).  WORK: grad_svd_work_size(M, N)
   doubles.  INFO may be NULL.  Returns GRAD_OK, GRAD_EINVAL, GRAD_EINPUT (a
   non-finite entry) or GRAD_ENOCONV (the outputs then hold the last sweep's
   values). */
int grad_svd(size_t m, size_t n, const double *a, size_t nvec, double *sigma,
             double *u, double *v, double *work, grad_svd_info *info);

/*----------------------------------------------------------------------------
 * Cosine similarity of the rank-1 terms across tokens.
 *
 * Flattened, the terms R_T = (PK)[T]^T X[T] have the cosine
 *   cos(R_a, R_b) = <R_a, R_b>_F / (||R_a||_F ||R_b||_F)
 *                 = (u_a . u_b)(x_a . x_b) / (|u_a| |u_b| |x_a| |x_b|)
 * with u = PK rows and x = X rows, so no d x D matrix is formed.  With
 * coefficients C (the c[T] of Eq. 2, or the dd[T]), the terms are c[T]
 * R_T and each cosine is multiplied by sign(c_a c_b).  A term that is
 * zero (u, x or c zero) has no direction and is left out.  Cosines are
 * clamped to [-1, 1].
 *--------------------------------------------------------------------------*/
typedef struct grad_cos_summary
{
    size_t terms;   /* tokens with a non-zero term */
    size_t skipped; /* tokens left out */
    uint64_t pairs; /* terms (terms - 1) / 2 */
    double mean;    /* mean cosine over the pairs (NaN with no pair) */
    double mean_abs;
    double min, max;
    double frac_above; /* the fraction of pairs with |cos| > threshold */
} grad_cos_summary;

/* Over all pairs a < b of the tokens 0 .. N-1 (in that order): PK [N, d],
   X [N, D], C NULL or [N], THRESHOLD in [0, 1] (0.9), WORK 2 N doubles.
   Returns GRAD_OK, GRAD_EINVAL or GRAD_EINPUT. */
int grad_rank1_cosine(size_t n, size_t d, size_t dm, const double *pk,
                      const double *x, const double *c, double threshold,
                      double *work, grad_cos_summary *out);

/* The cosine of each term R_T with the rank-1 matrix u1 v1^T (for instance
   the top singular pair of the dW^Q error, U1 of d entries and V1 of D):
   COS[T] = (PK[T] . u1)(X[T] . v1) / (|PK[T]| |X[T]| |u1| |v1|), NaN for a
   zero term, clamped to [-1, 1].  Returns GRAD_OK, GRAD_EINVAL (also for
   a zero U1 or V1) or GRAD_EINPUT. */
int grad_rank1_align(size_t n, size_t d, size_t dm, const double *pk,
                     const double *x, const double *u1, const double *v1,
                     double *cos);

/*----------------------------------------------------------------------------
 * The delta error over training steps (the paper's Fig. 5a): one
 * increment per step, incr[s] = sum_T dd[T] of step s, and the running
 * series cum[s] = incr[0] + ... + incr[s] (Neumaier-compensated, in step
 * order, each cum[s] the compensated total rounded once).  The arrays are
 * the caller's.
 *--------------------------------------------------------------------------*/
typedef struct grad_series
{
    double *incr, *cum;
    size_t cap, len;
    double total, comp; /* the running sum and its compensation */
} grad_series;

/* An empty series over INCR and CUM, CAP entries each. */
void grad_series_init(grad_series *s, double *incr, double *cum, size_t cap);
/* Appends one step's increment.  GRAD_EINPUT for NaN or +-Inf, GRAD_EFULL
   when LEN = CAP (nothing appended then). */
int grad_series_push(grad_series *s, double incr);
/* Appends grad_sum(N, DD) as one step (same returns). */
int grad_series_push_tokens(grad_series *s, size_t n, const double *dd);

/* Monotonicity of the steps FROM .. TO-1 (FROM < TO <= len).
   An increment is positive, negative or zero; sign changes count the
   adjacent pairs of non-zero increments (zeros skipped) whose signs
   differ.  The cumulative series is non-decreasing over the window when
   no increment in it is negative (cum[FROM-1] <= cum[FROM] <= ... <=
   cum[TO-1], with cum[-1] = 0), non-increasing when none is positive. */
typedef struct grad_monotone
{
    size_t n;                   /* TO - FROM */
    size_t pos, neg, zero;      /* increments by sign */
    double frac_pos;            /* pos / n */
    size_t sign_changes;        /* between consecutive non-zero increments */
    size_t run_pos, run_neg;    /* longest runs of positive (negative)
                                   increments, zeros ending a run */
    bool nondecreasing;         /* neg = 0 */
    bool nonincreasing;         /* pos = 0 */
    bool cum_positive;          /* cum[s] > 0 for every s in the window */
    bool cum_negative;          /* cum[s] < 0 for every s in the window */
    double sum;                 /* grad_sum of the window's increments */
    double cum_first, cum_last; /* cum[FROM], cum[TO-1] */
} grad_monotone;

/* Returns GRAD_OK or GRAD_EINVAL (an empty or out-of-range window). */
int grad_series_monotone(const grad_series *s, size_t from, size_t to,
                         grad_monotone *m);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_GRADIENT_H */

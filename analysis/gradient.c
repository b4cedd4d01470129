/* gradient -- delta errors, the Eq. 1 and Eq. 2 error matrices, their
   one-sided Jacobi SVD, cosines of the rank-1 terms and the series over
   training steps */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "analysis/gradient.h"

const char *
grad_strerror(int code)
{
    switch (code) {
    case GRAD_OK:
        return "success";
    case GRAD_EINVAL:
        return "invalid argument (size, NULL pointer or range)";
    case GRAD_EINPUT:
        return "an input value is NaN or infinite";
    case GRAD_ENOCONV:
        return "the SVD did not converge";
    case GRAD_EFULL:
        return "the series is full";
    default:
        return "unknown error code";
    }
}

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/

/* Neumaier's compensated sum: the value is s + c. */
typedef struct nsum
{
    double s, c, plain;
} nsum;

static void
nsum_add(nsum *a, double x)
{
    double t = a->s + x;

    if (fabs(a->s) >= fabs(x))
        a->c += (a->s - t) + x;
    else
        a->c += (x - t) + a->s;
    a->s = t;
    a->plain += x;
}

/* The compensated total, or the plain IEEE sum once that is not finite
   (an infinite or NaN term, or overflow). */
static double
nsum_value(const nsum *a)
{
    if (!isfinite(a->plain))
        return a->plain;
    return a->s + a->c;
}

static bool
all_finite(size_t n, const double *x)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* A * B without overflow of size_t, or 0. */
static size_t
mul_size(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    return a * b;
}

static double
dot(size_t n, const double *x, const double *y)
{
    double s = 0;

    for (size_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

static double
clamp1(double x)
{
    if (x > 1)
        return 1;
    if (x < -1)
        return -1;
    return x;
}

/*----------------------------------------------------------------------------
 * Inputs and the delta error.
 *--------------------------------------------------------------------------*/
void
grad_from_f32(size_t n, const uint32_t *bits, double *out)
{
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, &bits[i], sizeof f);
        out[i] = (double)f;
    }
}

void
grad_from_bf16(size_t n, const uint16_t *bits, double *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t w = (uint32_t)bits[i] << 16;
        float f;
        memcpy(&f, &w, sizeof f);
        out[i] = (double)f;
    }
}

double
grad_sum(size_t n, const double *x)
{
    nsum a = {0, 0, 0};

    for (size_t i = 0; i < n; i++)
        nsum_add(&a, x[i]);
    return nsum_value(&a);
}

/* One input array: FP32 bits or doubles. */
static double
value_at(const uint32_t *b, const double *d, size_t i)
{
    float f;

    if (d != NULL)
        return d[i];
    memcpy(&f, &b[i], sizeof f);
    return (double)f;
}

static int
delta_error(size_t n, const uint32_t *lpb, const uint32_t *hpb,
            const double *lpd, const double *hpd, double *err, double *sum)
{
    nsum a = {0, 0, 0};
    bool finite = true;

    for (size_t t = 0; t < n; t++) {
        double lp = value_at(lpb, lpd, t), hp = value_at(hpb, hpd, t);
        double e = lp - hp;

        if (!isfinite(lp) || !isfinite(hp))
            finite = false;
        if (err != NULL)
            err[t] = e;
        nsum_add(&a, e);
    }
    if (sum != NULL)
        *sum = finite ? nsum_value(&a) : NAN;
    return finite ? GRAD_OK : GRAD_EINPUT;
}

int
grad_delta_error_f32(size_t n, const uint32_t *lp, const uint32_t *hp,
                     double *err, double *sum)
{
    if (n > 0 && (lp == NULL || hp == NULL))
        return GRAD_EINVAL;
    return delta_error(n, lp, hp, NULL, NULL, err, sum);
}

int
grad_delta_error(size_t n, const double *lp, const double *hp, double *err,
                 double *sum)
{
    if (n > 0 && (lp == NULL || hp == NULL))
        return GRAD_EINVAL;
    return delta_error(n, NULL, NULL, lp, hp, err, sum);
}

/*----------------------------------------------------------------------------
 * Eqs. 1 and 2.
 *--------------------------------------------------------------------------*/
int
grad_pk(size_t nq, size_t nk, size_t d, const double *p, const double *k,
        double *pk)
{
    size_t np = mul_size(nq, nk), nkd = mul_size(nk, d);

    if (nq == 0 || nk == 0 || d == 0 || np == 0 || nkd == 0
        || mul_size(nq, d) == 0 || p == NULL || k == NULL || pk == NULL)
        return GRAD_EINVAL;
    if (!all_finite(np, p) || !all_finite(nkd, k))
        return GRAD_EINPUT;
    for (size_t t = 0; t < nq; t++) {
        const double *prow = p + t * nk;
        double *out = pk + t * d;

        for (size_t i = 0; i < d; i++) {
            double s = 0;
            for (size_t j = 0; j < nk; j++)
                s += prow[j] * k[j * d + i];
            out[i] = s;
        }
    }
    return GRAD_OK;
}

int
grad_dq_error(size_t n, size_t d, double alpha, const double *dd,
              const double *pk, double *dq_err)
{
    size_t nd = mul_size(n, d);

    if (n == 0 || d == 0 || nd == 0 || dd == NULL || pk == NULL
        || dq_err == NULL || !isfinite(alpha))
        return GRAD_EINVAL;
    if (!all_finite(n, dd) || !all_finite(nd, pk))
        return GRAD_EINPUT;
    for (size_t t = 0; t < n; t++) {
        double c = -(alpha * dd[t]);
        for (size_t i = 0; i < d; i++)
            dq_err[t * d + i] = c * pk[t * d + i];
    }
    return GRAD_OK;
}

int
grad_dwq_error(size_t n, size_t d, size_t dm, double alpha, const double *dd,
               const double *pk, const double *x, double *dw_err)
{
    size_t nd = mul_size(n, d), nx = mul_size(n, dm), nw = mul_size(d, dm);

    if (n == 0 || d == 0 || dm == 0 || nd == 0 || nx == 0 || nw == 0
        || dd == NULL || pk == NULL || x == NULL || dw_err == NULL
        || !isfinite(alpha))
        return GRAD_EINVAL;
    if (!all_finite(n, dd) || !all_finite(nd, pk) || !all_finite(nx, x))
        return GRAD_EINPUT;
    for (size_t i = 0; i < nw; i++)
        dw_err[i] = 0;
    /* DW_ERR += (c[T] PK[T]^T) X[T], one rank-1 term per token, in order */
    for (size_t t = 0; t < n; t++) {
        double c = -(alpha * dd[t]);
        const double *xrow = x + t * dm;

        for (size_t i = 0; i < d; i++) {
            double a = c * pk[t * d + i];
            double *row = dw_err + i * dm;
            for (size_t j = 0; j < dm; j++)
                row[j] += a * xrow[j];
        }
    }
    return GRAD_OK;
}

/*----------------------------------------------------------------------------
 * One-sided Jacobi SVD.
 *
 * W (r x c, stored by columns: column j at W + j r) starts as the scaled
 * matrix in its tall orientation, V (c x c, by columns) as the identity;
 * every rotation J of columns p, q is applied to both, so W = A' V holds
 * throughout (A' = A or A^T, scaled).  At convergence the columns of W
 * are orthogonal: W = U' diag(sigma), A' = U' diag(sigma) V^T.
 *--------------------------------------------------------------------------*/
size_t
grad_svd_work_size(size_t m, size_t n)
{
    size_t r = m > n ? m : n, c = m > n ? n : m;
    size_t rc = mul_size(r, c), cc = mul_size(c, c);

    if (m == 0 || n == 0 || rc == 0 || cc == 0)
        return 0;
    if (rc > SIZE_MAX - cc || rc + cc > SIZE_MAX - c
        || rc + cc + c > SIZE_MAX / sizeof(double))
        return 0;
    return rc + cc + c;
}

/* sqrt(1 + z^2) without overflow (for |z| >= 2^500 it is |z| to double
   precision). */
static double
sqrt1p_sq(double z)
{
    double a = fabs(z);

    if (a >= 0x1p500)
        return a;
    return sqrt(1 + a * a);
}

/* Rotates columns P and Q of W (R rows) and of V (C rows) so that they
   become orthogonal; returns false when they already are (to the
   tolerance TOL) or one of them is zero. */
static bool
rotate_pair(double *w, double *v, size_t r, size_t c, size_t p, size_t q,
            double tol)
{
    double *wp = w + p * r, *wq = w + q * r;
    double *vp = v + p * c, *vq = v + q * c;
    double alpha = dot(r, wp, wp), beta = dot(r, wq, wq);
    double gamma = dot(r, wp, wq);
    double zeta, t, cs, sn;

    if (alpha == 0 || beta == 0)
        return false;
    if (fabs(gamma) <= tol * sqrt(alpha) * sqrt(beta))
        return false;
    /* t = tan(theta), the smaller root of t^2 + 2 zeta t - 1 = 0, makes
       (c wp - s wq) . (s wp + c wq) = 0 */
    zeta = (beta - alpha) / (2 * gamma);
    t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt1p_sq(zeta));
    cs = 1 / sqrt(1 + t * t);
    sn = cs * t;
    for (size_t i = 0; i < r; i++) {
        double x = wp[i], y = wq[i];
        wp[i] = cs * x - sn * y;
        wq[i] = sn * x + cs * y;
    }
    for (size_t i = 0; i < c; i++) {
        double x = vp[i], y = vq[i];
        vp[i] = cs * x - sn * y;
        vq[i] = sn * x + cs * y;
    }
    return true;
}

static void
swap_cols(double *a, size_t len, size_t i, size_t j)
{
    for (size_t k = 0; k < len; k++) {
        double t = a[i * len + k];
        a[i * len + k] = a[j * len + k];
        a[j * len + k] = t;
    }
}

/* The index of the entry of largest magnitude (the first of equal ones),
   or LEN when every entry is 0. */
static size_t
argmax_abs(size_t len, const double *x)
{
    size_t best = len;
    double b = 0;

    for (size_t i = 0; i < len; i++)
        if (fabs(x[i]) > b) {
            b = fabs(x[i]);
            best = i;
        }
    return best;
}

int
grad_svd(size_t m, size_t n, const double *a, size_t nvec, double *sigma,
         double *u, double *v, double *work, grad_svd_info *info)
{
    size_t r = m > n ? m : n, c = m > n ? n : m;
    bool tall = m >= n; /* W holds A itself (else A^T) */
    size_t ws = grad_svd_work_size(m, n);
    double *w, *vv, *sg;
    double maxabs = 0, tol;
    int e = 0, rc = GRAD_ENOCONV;
    unsigned sweep;
    nsum fro = {0, 0, 0};

    if (ws == 0 || a == NULL || work == NULL || nvec > c
        || (nvec > 0 && (u == NULL || v == NULL)))
        return GRAD_EINVAL;
    if (!all_finite(m * n, a))
        return GRAD_EINPUT;
    w = work;
    vv = work + r * c;
    sg = vv + c * c;

    for (size_t i = 0; i < m * n; i++)
        if (fabs(a[i]) > maxabs)
            maxabs = fabs(a[i]);
    if (maxabs > 0)
        e = ilogb(maxabs); /* maxabs 2^-e in [1, 2) */
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double x = ldexp(a[i * n + j], -e);
            if (tall)
                w[j * r + i] = x; /* column j of A */
            else
                w[i * r + j] = x; /* column i of A^T: row i of A */
        }
    for (size_t i = 0; i < c * c; i++)
        vv[i] = 0;
    for (size_t i = 0; i < c; i++)
        vv[i * c + i] = 1;

    tol = sqrt((double)r) * DBL_EPSILON;
    for (sweep = 1; sweep <= GRAD_SVD_MAX_SWEEPS; sweep++) {
        bool rotated = false;
        for (size_t p = 0; p + 1 < c; p++)
            for (size_t q = p + 1; q < c; q++)
                if (rotate_pair(w, vv, r, c, p, q, tol))
                    rotated = true;
        if (!rotated) {
            rc = GRAD_OK;
            break;
        }
    }
    if (sweep > GRAD_SVD_MAX_SWEEPS)
        sweep = GRAD_SVD_MAX_SWEEPS;

    for (size_t j = 0; j < c; j++)
        sg[j] = sqrt(dot(r, w + j * r, w + j * r));
    /* selection sort, decreasing; columns of W and V move along */
    for (size_t i = 0; i + 1 < c; i++) {
        size_t best = i;
        for (size_t j = i + 1; j < c; j++)
            if (sg[j] > sg[best])
                best = j;
        if (best != i) {
            double t = sg[i];
            sg[i] = sg[best];
            sg[best] = t;
            swap_cols(w, r, i, best);
            swap_cols(vv, c, i, best);
        }
    }

    for (size_t i = 0; i < nvec; i++) {
        /* the rotated side is w_i / sigma_i, the other side V's column */
        double *side_w = tall ? u + i * m : v + i * n;
        double *side_v = tall ? v + i * n : u + i * m;
        double *ui = u + i * m, *vi = v + i * n;
        size_t k;

        for (size_t j = 0; j < r; j++)
            side_w[j] = sg[i] > 0 ? w[i * r + j] / sg[i] : 0.0;
        for (size_t j = 0; j < c; j++)
            side_v[j] = vv[i * c + j];
        k = argmax_abs(m, ui);
        if (k < m ? ui[k] < 0 : vi[argmax_abs(n, vi)] < 0) {
            for (size_t j = 0; j < m; j++)
                ui[j] = -ui[j];
            for (size_t j = 0; j < n; j++)
                vi[j] = -vi[j];
        }
    }

    for (size_t j = 0; j < c; j++)
        nsum_add(&fro, sg[j] * sg[j]);
    if (info != NULL) {
        double f2 = nsum_value(&fro);

        info->k = c;
        info->sigma1 = ldexp(sg[0], e);
        info->sigma2 = c > 1 ? ldexp(sg[1], e) : 0.0;
        if (info->sigma2 > 0)
            info->ratio = info->sigma1 / info->sigma2;
        else
            info->ratio = info->sigma1 > 0 ? INFINITY : NAN;
        info->energy1 = f2 > 0 ? sg[0] * sg[0] / f2 : NAN;
        info->fro2 = ldexp(f2, 2 * e);
        info->sweeps = sweep;
    }
    if (sigma != NULL)
        for (size_t j = 0; j < c; j++)
            sigma[j] = ldexp(sg[j], e);
    return rc;
}

/*----------------------------------------------------------------------------
 * Cosines of the rank-1 terms.
 *--------------------------------------------------------------------------*/
int
grad_rank1_cosine(size_t n, size_t d, size_t dm, const double *pk,
                  const double *x, const double *c, double threshold,
                  double *work, grad_cos_summary *out)
{
    size_t nd = mul_size(n, d), nx = mul_size(n, dm);
    double *nu, *nxs;
    nsum sum = {0, 0, 0}, sum_abs = {0, 0, 0};
    uint64_t above = 0;

    if (n == 0 || d == 0 || dm == 0 || nd == 0 || nx == 0 || pk == NULL
        || x == NULL || work == NULL || out == NULL
        || !(threshold >= 0 && threshold <= 1))
        return GRAD_EINVAL;
    if (!all_finite(nd, pk) || !all_finite(nx, x)
        || (c != NULL && !all_finite(n, c)))
        return GRAD_EINPUT;
    nu = work;
    nxs = work + n;
    out->terms = 0;
    out->skipped = 0;
    for (size_t t = 0; t < n; t++) {
        nu[t] = sqrt(dot(d, pk + t * d, pk + t * d));
        nxs[t] = sqrt(dot(dm, x + t * dm, x + t * dm));
        if (nu[t] == 0 || nxs[t] == 0 || (c != NULL && c[t] == 0)) {
            nu[t] = 0; /* marks the term as left out */
            out->skipped++;
        } else {
            out->terms++;
        }
    }
    out->pairs = 0;
    out->min = INFINITY;
    out->max = -INFINITY;
    for (size_t a = 0; a < n; a++) {
        if (nu[a] == 0)
            continue;
        for (size_t b = a + 1; b < n; b++) {
            double cu, cx, cs;

            if (nu[b] == 0)
                continue;
            /* each factor is a cosine of two vectors, in [-1, 1] up to
               rounding, so the product cannot overflow */
            cu = dot(d, pk + a * d, pk + b * d) / (nu[a] * nu[b]);
            cx = dot(dm, x + a * dm, x + b * dm) / (nxs[a] * nxs[b]);
            cs = clamp1(cu * cx);
            if (c != NULL && (c[a] < 0) != (c[b] < 0))
                cs = -cs;
            out->pairs++;
            nsum_add(&sum, cs);
            nsum_add(&sum_abs, fabs(cs));
            if (cs < out->min)
                out->min = cs;
            if (cs > out->max)
                out->max = cs;
            if (fabs(cs) > threshold)
                above++;
        }
    }
    if (out->pairs == 0) {
        out->mean = out->mean_abs = out->min = out->max = NAN;
        out->frac_above = NAN;
    } else {
        double np = (double)out->pairs;
        out->mean = nsum_value(&sum) / np;
        out->mean_abs = nsum_value(&sum_abs) / np;
        out->frac_above = (double)above / np;
    }
    return GRAD_OK;
}

int
grad_rank1_align(size_t n, size_t d, size_t dm, const double *pk,
                 const double *x, const double *u1, const double *v1,
                 double *cos)
{
    size_t nd = mul_size(n, d), nx = mul_size(n, dm);
    double nu1, nv1;

    if (n == 0 || d == 0 || dm == 0 || nd == 0 || nx == 0 || pk == NULL
        || x == NULL || u1 == NULL || v1 == NULL || cos == NULL)
        return GRAD_EINVAL;
    if (!all_finite(nd, pk) || !all_finite(nx, x) || !all_finite(d, u1)
        || !all_finite(dm, v1))
        return GRAD_EINPUT;
    nu1 = sqrt(dot(d, u1, u1));
    nv1 = sqrt(dot(dm, v1, v1));
    if (nu1 == 0 || nv1 == 0)
        return GRAD_EINVAL;
    for (size_t t = 0; t < n; t++) {
        const double *ut = pk + t * d, *xt = x + t * dm;
        double nu = sqrt(dot(d, ut, ut)), nxt = sqrt(dot(dm, xt, xt));

        if (nu == 0 || nxt == 0) {
            cos[t] = NAN;
            continue;
        }
        cos[t] = clamp1((dot(d, ut, u1) / (nu * nu1))
                        * (dot(dm, xt, v1) / (nxt * nv1)));
    }
    return GRAD_OK;
}

/*----------------------------------------------------------------------------
 * The series over steps.
 *--------------------------------------------------------------------------*/
void
grad_series_init(grad_series *s, double *incr, double *cum, size_t cap)
{
    s->incr = incr;
    s->cum = cum;
    s->cap = cap;
    s->len = 0;
    s->total = 0;
    s->comp = 0;
}

int
grad_series_push(grad_series *s, double incr)
{
    nsum a;

    if (!isfinite(incr))
        return GRAD_EINPUT;
    if (s->len >= s->cap)
        return GRAD_EFULL;
    a.s = s->total;
    a.c = s->comp;
    a.plain = 0;
    nsum_add(&a, incr);
    s->total = a.s;
    s->comp = a.c;
    s->incr[s->len] = incr;
    s->cum[s->len] = a.s + a.c;
    s->len++;
    return GRAD_OK;
}

int
grad_series_push_tokens(grad_series *s, size_t n, const double *dd)
{
    if (n > 0 && dd == NULL)
        return GRAD_EINVAL;
    return grad_series_push(s, grad_sum(n, dd));
}

int
grad_series_monotone(const grad_series *s, size_t from, size_t to,
                     grad_monotone *m)
{
    int last_sign = 0;
    size_t run = 0;

    if (s == NULL || m == NULL || from >= to || to > s->len)
        return GRAD_EINVAL;
    memset(m, 0, sizeof *m);
    m->n = to - from;
    m->cum_positive = true;
    m->cum_negative = true;
    for (size_t i = from; i < to; i++) {
        double x = s->incr[i];
        int sign = (x > 0) - (x < 0);

        if (sign > 0)
            m->pos++;
        else if (sign < 0)
            m->neg++;
        else
            m->zero++;
        if (sign != 0 && last_sign != 0 && sign != last_sign)
            m->sign_changes++;
        if (sign != 0)
            last_sign = sign;
        /* runs: consecutive increments of one sign; a zero ends a run */
        if (i > from && sign != 0
            && sign == ((s->incr[i - 1] > 0) - (s->incr[i - 1] < 0)))
            run++;
        else
            run = sign != 0 ? 1 : 0;
        if (sign > 0 && run > m->run_pos)
            m->run_pos = run;
        if (sign < 0 && run > m->run_neg)
            m->run_neg = run;
        if (!(s->cum[i] > 0))
            m->cum_positive = false;
        if (!(s->cum[i] < 0))
            m->cum_negative = false;
    }
    m->frac_pos = (double)m->pos / (double)m->n;
    m->nondecreasing = m->neg == 0;
    m->nonincreasing = m->pos == 0;
    m->sum = grad_sum(m->n, s->incr + from);
    m->cum_first = s->cum[from];
    m->cum_last = s->cum[to - 1];
    return GRAD_OK;
}

/* rows -- classification of attention rows (repeated maxima, P~ == 1,
   sink strength, top-k mass) and summaries over many rows */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rows.h"

static const char *const class_names[ROWS_N_CLASSES] = {
    "invalid", "masked", "repeated", "near", "sink", "single"};

const char *
rows_class_name(rows_class c)
{
    if ((unsigned)c >= ROWS_N_CLASSES)
        return NULL;
    return class_names[c];
}

rows_options
rows_options_default(void)
{
    rows_options o;

    o.tol = 1e-3;
    o.sink = 0.5;
    o.mass = 0.9;
    o.mask_below = -INFINITY;
    return o;
}

const char *
rows_options_check(const rows_options *opt)
{
    if (opt == NULL)
        return "options: NULL";
    if (!(opt->tol >= 0) || isinf(opt->tol))
        return "tol: must be finite and >= 0";
    if (!(opt->sink > 0 && opt->sink <= 1))
        return "sink: must be in (0, 1]";
    if (!(opt->mass > 0 && opt->mass <= 1))
        return "mass: must be in (0, 1]";
    if (isnan(opt->mask_below))
        return "mask_below: must not be NaN";
    return NULL;
}

/* One input array: FP32 bit patterns or doubles (at most one set). */
typedef struct vec
{
    const uint32_t *b;
    const double *d;
} vec;

static bool
vec_given(vec v)
{
    return v.b != NULL || v.d != NULL;
}

/* Element J as a double (an FP32 value is widened exactly). */
static double
vec_at(vec v, size_t j)
{
    float f;

    if (v.d != NULL)
        return v.d[j];
    memcpy(&f, &v.b[j], sizeof f);
    return (double)f;
}

/* qsort order: decreasing (the values are never NaN). */
static int
cmp_decreasing(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x < y) - (x > y);
}

static void
info_blank(rows_info *r, size_t n)
{
    r->n = n;
    r->n_invalid = 0;
    r->n_masked = 0;
    r->max = NAN;
    r->n_max = 0;
    r->n_near = 0;
    r->gap = NAN;
    r->n_one = 0;
    r->l = NAN;
    r->p_max = NAN;
    r->sink_index = 0;
    r->k_mass = 0;
    r->k_frac = NAN;
    r->cls = ROWS_INVALID;
}

/* The probability of visible entry J: P~ as given, else 1 at the maximum
   and exp(S_j - max) elsewhere. */
static double
prob_at(vec s, vec p, size_t j, double max)
{
    double x;

    if (vec_given(p))
        return vec_at(p, j);
    x = vec_at(s, j);
    return x == max ? 1.0 : exp(x - max);
}

static void
classify(size_t n, vec s, vec p, const rows_options *o, double *work,
         rows_info *r)
{
    bool has_s = vec_given(s), has_p = vec_given(p);
    vec key = has_s ? s : p;
    size_t n_vis, n_sorted = 0;
    double max = -INFINITY, second = -INFINITY, thr, best = -INFINITY;
    double l = 0;

    info_blank(r, n);

    /* Pass 1: invalid and masked entries, the max. */
    for (size_t j = 0; j < n; j++) {
        bool bad = false, masked = false;

        if (has_s) {
            double x = vec_at(s, j);
            if (isnan(x) || x == INFINITY)
                bad = true;
            else if (x <= o->mask_below)
                masked = true;
        }
        if (has_p) {
            double x = vec_at(p, j);
            if (isnan(x) || isinf(x) || x < 0)
                bad = true;
        }
        if (bad) {
            r->n_invalid++;
        } else if (masked) {
            r->n_masked++;
        } else {
            double x = vec_at(key, j);
            if (x > max)
                max = x;
        }
    }
    if (r->n_invalid > 0)
        return; /* ROWS_INVALID, as blanked */
    n_vis = n - r->n_masked;
    if (n_vis == 0) {
        r->cls = ROWS_MASKED;
        r->max = -INFINITY;
        r->l = 0;
        return;
    }

    /* Pass 2: counts at and near the max, the next value, the sums. */
    thr = max - o->tol;
    for (size_t j = 0; j < n; j++) {
        double x, pj;

        if (has_s && vec_at(s, j) <= o->mask_below)
            continue;
        x = vec_at(key, j);
        if (x == max)
            r->n_max++;
        else if (x > second)
            second = x;
        if (x >= thr)
            r->n_near++;
        pj = prob_at(s, p, j, max);
        if (pj == 1.0)
            r->n_one++;
        if (pj > best) {
            best = pj;
            r->sink_index = j;
        }
        l += pj;
        if (work != NULL)
            work[n_sorted++] = pj;
    }
    if (!has_p)
        r->n_one = r->n_max; /* exact exp(S - max) is 1 only at the max */
    r->max = max;
    r->gap = r->n_max == n_vis ? INFINITY : max - second;
    r->l = l;

    if (l > 0) {
        r->p_max = best / l;
        if (work != NULL) {
            double total = 0, part = 0, target;
            size_t k = 0;

            qsort(work, n_sorted, sizeof *work, cmp_decreasing);
            for (size_t i = 0; i < n_sorted; i++)
                total += work[i];
            target = o->mass * total;
            /* partial sums increase to TOTAL >= TARGET, so k <= n_sorted */
            while (k < n_sorted) {
                part += work[k++];
                if (part >= target)
                    break;
            }
            r->k_mass = k;
            r->k_frac = (double)k / (double)n_vis;
        }
    }

    if (r->n_max >= 2)
        r->cls = ROWS_REPEATED;
    else if (r->n_near >= 2)
        r->cls = ROWS_NEAR;
    else if (r->p_max >= o->sink)
        r->cls = ROWS_SINK;
    else
        r->cls = ROWS_SINGLE;
}

static int
classify_checked(size_t n, vec s, vec p, const rows_options *opt, double *work,
                 rows_info *info)
{
    rows_options dflt = rows_options_default();

    if (opt == NULL)
        opt = &dflt;
    if (info == NULL || rows_options_check(opt) != NULL)
        return ROWS_EINVAL;
    if (n > 0 && !vec_given(s) && !vec_given(p))
        return ROWS_EINVAL;
    classify(n, s, p, opt, work, info);
    return ROWS_OK;
}

int
rows_classify(size_t n, const uint32_t *s, const uint32_t *p,
              const rows_options *opt, double *work, rows_info *info)
{
    vec vs = {s, NULL}, vp = {p, NULL};

    return classify_checked(n, vs, vp, opt, work, info);
}

int
rows_classify_d(size_t n, const double *s, const double *p,
                const rows_options *opt, double *work, rows_info *info)
{
    vec vs = {NULL, s}, vp = {NULL, p};

    return classify_checked(n, vs, vp, opt, work, info);
}

/*----------------------------------------------------------------------------
 * Summaries.
 *--------------------------------------------------------------------------*/
void
rows_summary_init(rows_summary *s)
{
    memset(s, 0, sizeof *s);
    s->sum_p_max = 0;
    s->max_p_max = 0;
    s->sum_k_mass = 0;
    s->sum_k_frac = 0;
}

void
rows_summary_add(rows_summary *s, const rows_info *r, double sink_threshold)
{
    size_t h = r->n_max < ROWS_HIST - 1 ? r->n_max : ROWS_HIST - 1;

    s->rows++;
    if ((unsigned)r->cls < ROWS_N_CLASSES)
        s->by_class[r->cls]++;
    s->hist_n_max[h]++;
    if (r->n_max > s->max_n_max)
        s->max_n_max = r->n_max;
    if (r->n_one >= 2)
        s->one_ge2++;
    if (r->n_near >= 2)
        s->near_ge2++;
    if (!isnan(r->p_max)) {
        s->n_prob++;
        s->sum_p_max += r->p_max;
        if (r->p_max > s->max_p_max)
            s->max_p_max = r->p_max;
        if (r->p_max >= sink_threshold)
            s->sink++;
    }
    if (r->k_mass > 0) {
        s->n_k++;
        s->sum_k_mass += (double)r->k_mass;
        s->sum_k_frac += r->k_frac;
    }
}

void
rows_summary_merge(rows_summary *into, const rows_summary *from)
{
    into->rows += from->rows;
    for (int c = 0; c < ROWS_N_CLASSES; c++)
        into->by_class[c] += from->by_class[c];
    for (int h = 0; h < ROWS_HIST; h++)
        into->hist_n_max[h] += from->hist_n_max[h];
    if (from->max_n_max > into->max_n_max)
        into->max_n_max = from->max_n_max;
    into->one_ge2 += from->one_ge2;
    into->near_ge2 += from->near_ge2;
    into->sink += from->sink;
    into->n_prob += from->n_prob;
    into->sum_p_max += from->sum_p_max;
    if (from->max_p_max > into->max_p_max)
        into->max_p_max = from->max_p_max;
    into->n_k += from->n_k;
    into->sum_k_mass += from->sum_k_mass;
    into->sum_k_frac += from->sum_k_frac;
}

static double
ratio(double num, uint64_t den)
{
    return den == 0 ? NAN : num / (double)den;
}

void
rows_summary_fractions(const rows_summary *s, rows_fractions *f)
{
    for (int c = 0; c < ROWS_N_CLASSES; c++)
        f->by_class[c] = ratio((double)s->by_class[c], s->rows);
    f->one_ge2 = ratio((double)s->one_ge2, s->rows);
    f->near_ge2 = ratio((double)s->near_ge2, s->rows);
    f->sink = ratio((double)s->sink, s->rows);
    f->mean_p_max = ratio(s->sum_p_max, s->n_prob);
    f->mean_k_mass = ratio(s->sum_k_mass, s->n_k);
    f->mean_k_frac = ratio(s->sum_k_frac, s->n_k);
}

static int
classify_tensor(size_t rows, size_t cols, const uint32_t *sb,
                const uint32_t *pb, const double *sd, const double *pd,
                const rows_options *opt, double *work, rows_info *info,
                rows_summary *sum)
{
    rows_options dflt = rows_options_default();

    if (opt == NULL)
        opt = &dflt;
    if (rows_options_check(opt) != NULL)
        return ROWS_EINVAL;
    if (rows > 0 && cols > 0 && sb == NULL && pb == NULL && sd == NULL
        && pd == NULL)
        return ROWS_EINVAL;
    for (size_t i = 0; i < rows; i++) {
        size_t off = i * cols;
        vec s = {sb ? sb + off : NULL, sd ? sd + off : NULL};
        vec p = {pb ? pb + off : NULL, pd ? pd + off : NULL};
        rows_info r;

        classify(cols, s, p, opt, work, &r);
        if (info != NULL)
            info[i] = r;
        if (sum != NULL)
            rows_summary_add(sum, &r, opt->sink);
    }
    return ROWS_OK;
}

int
rows_classify_tensor(size_t rows, size_t cols, const uint32_t *s,
                     const uint32_t *p, const rows_options *opt, double *work,
                     rows_info *info, rows_summary *sum)
{
    return classify_tensor(rows, cols, s, p, NULL, NULL, opt, work, info, sum);
}

int
rows_classify_tensor_d(size_t rows, size_t cols, const double *s,
                       const double *p, const rows_options *opt, double *work,
                       rows_info *info, rows_summary *sum)
{
    return classify_tensor(rows, cols, NULL, NULL, s, p, opt, work, info, sum);
}

/* compare -- two arrays of one format compared element by element
   (compare.h) */
#include <config.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/compare.h"

uint64_t
cmp_ulp_distance(const sf_format *f, uint64_t x, uint64_t y)
{
    bool nx = sf_is_nan(f, x), ny = sf_is_nan(f, y);
    uint64_t mag = (f->sign_mask << 1) - 1 - f->sign_mask;
    uint64_t mx = x & mag, my = y & mag;

    if (nx || ny)
        return nx && ny ? 0 : CMP_DIST_INF;
    /* places on the integer line: the magnitude bits, negated for a
       negative sign (-0 and +0 share 0); in unsigned arithmetic, as the
       distance between -Inf and +Inf of f64 does not fit int64_t (it is
       below CMP_DIST_INF) */
    if (((x ^ y) & f->sign_mask) != 0)
        return mx + my;
    return mx > my ? mx - my : my - mx;
}

unsigned
cmp_dist_bucket(uint64_t d)
{
    unsigned i = 0;

    if (d == CMP_DIST_INF)
        return CMP_DIST_BUCKET_INF;
    while (d != 0) {
        i++;
        d >>= 1;
    }
    return i;
}

void
cmp_dist_bucket_bounds(unsigned i, uint64_t *lo, uint64_t *hi)
{
    if (i == 0 || i >= CMP_DIST_FINITE_BUCKETS) {
        *lo = *hi = 0;
        return;
    }
    *lo = (uint64_t)1 << (i - 1);
    *hi = i == 64 ? UINT64_MAX - 1 : ((uint64_t)1 << i) - 1;
}

const char *
cmp_dist_bucket_label(char *buf, size_t n, unsigned i)
{
    uint64_t lo, hi;

    if (i >= CMP_DIST_BUCKET_INF) {
        snprintf(buf, n, "inf");
        return buf;
    }
    cmp_dist_bucket_bounds(i, &lo, &hi);
    if (lo == hi)
        snprintf(buf, n, "%" PRIu64, lo);
    else
        snprintf(buf, n, "%" PRIu64 "-%" PRIu64, lo, hi);
    return buf;
}

void
cmp_worst_add(cmp_elem *worst, size_t *n, size_t cap, const cmp_elem *e)
{
    size_t i;

    if (cap == 0)
        return;
    if (*n == cap) {
        if (e->dist <= worst[cap - 1].dist)
            return;
        i = cap - 1;
    } else {
        i = (*n)++;
    }
    while (i > 0 && worst[i - 1].dist < e->dist) {
        worst[i] = worst[i - 1];
        i--;
    }
    worst[i] = *e;
}

void
cmp_init(cmp_stats *s, size_t cap)
{
    memset(s, 0, sizeof *s);
    s->cap = cap < CMP_WORST_MAX ? cap : CMP_WORST_MAX;
}

void
cmp_add(cmp_stats *s, const sf_format *f, uint64_t a, uint64_t b, uint64_t tol,
        cmp_elem e)
{
    e.dist = cmp_ulp_distance(f, a, b);
    s->elements++;
    s->hist[cmp_dist_bucket(e.dist)]++;
    if (e.dist != CMP_DIST_INF && e.dist <= tol)
        s->within++;
    if (a == b) {
        s->equal++;
        return;
    }
    s->differ++;
    if (e.dist == CMP_DIST_INF)
        s->nan_vs_number++;
    else if (e.dist > s->max_dist)
        s->max_dist = e.dist;
    cmp_worst_add(s->worst, &s->n_worst, s->cap, &e);
}

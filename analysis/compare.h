/* compare.h -- two arrays of one format compared element by element:
   distances in steps of the format's number line, their histogram, the
   equal and differing counts and the worst elements (diff's and the
   Python package's comparison) */
#ifndef BF16EMU_ANALYSIS_COMPARE_H
#define BF16EMU_ANALYSIS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * Distances between two values of one format.  The distance of X and Y
 * (bit patterns of F) is the number of steps between them on F's monotone
 * integer line (sign and magnitude folded so that -0 and +0 are one
 * point): 0 for equal values, 1 for neighbours, so it is the difference
 * in ulps where both lie in one binade.  Two NaNs are 0 apart; a NaN and
 * a number CMP_DIST_INF.  Histogram buckets: 0, 1, 2-3, 4-7, ..., 2^63
 * and above, then "inf".
 *--------------------------------------------------------------------------*/
#define CMP_DIST_INF UINT64_MAX
#define CMP_DIST_FINITE_BUCKETS 65
#define CMP_DIST_BUCKET_INF CMP_DIST_FINITE_BUCKETS
#define CMP_DIST_BUCKETS (CMP_DIST_FINITE_BUCKETS + 1)

uint64_t cmp_ulp_distance(const sf_format *f, uint64_t x, uint64_t y);
unsigned cmp_dist_bucket(uint64_t d);
/* The smallest and largest distance of finite bucket I. */
void cmp_dist_bucket_bounds(unsigned i, uint64_t *lo, uint64_t *hi);
/* "0", "1", "2-3", ..., "inf" into BUF (N bytes); returns BUF. */
const char *cmp_dist_bucket_label(char *buf, size_t n, unsigned i);

/* One element of a comparison: its flat index, the distance and the two
   values compared (bit patterns as the caller keeps them: FP32 patterns
   in diff, the format's own in the Python package). */
typedef struct cmp_elem
{
    uint64_t flat;
    uint64_t dist; /* CMP_DIST_INF: NaN against a number */
    uint32_t x, y;
} cmp_elem;

/* Puts E into the list WORST of *N (at most CAP) elements, largest
   distance first, where it belongs; the first of equal distances stays
   ahead. */
void cmp_worst_add(cmp_elem *worst, size_t *n, size_t cap, const cmp_elem *e);

/* The comparison of two arrays, element by element. */
#define CMP_WORST_MAX 64
typedef struct cmp_stats
{
    uint64_t elements, equal, differ;
    uint64_t nan_vs_number; /* a NaN against a number */
    uint64_t within;        /* distance at most the tolerance */
    uint64_t max_dist;      /* the largest finite distance */
    uint64_t hist[CMP_DIST_BUCKETS];
    size_t n_worst, cap; /* cap: the worst kept, at most CMP_WORST_MAX */
    cmp_elem worst[CMP_WORST_MAX];
} cmp_stats;

/* Empty statistics that keep the CAP worst elements (at most
   CMP_WORST_MAX). */
void cmp_init(cmp_stats *s, size_t cap);

/* Adds the pair A, B (bit patterns of F): counted, its distance in the
   histogram, within TOL or not, and, where A and B differ, E (its flat
   and x, y as the caller fills them; dist set here) among the worst. */
void cmp_add(cmp_stats *s, const sf_format *f, uint64_t a, uint64_t b,
             uint64_t tol, cmp_elem e);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_COMPARE_H */

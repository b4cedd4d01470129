/* scan_groups.c -- the (layer, head) rows of the scan and their dW_Q
   error's spectra (scan_groups.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scan_groups.h"

void
scan_groups_init(scan_groups *t)
{
    memset(t, 0, sizeof *t);
}

void
scan_groups_free(scan_groups *t)
{
    for (size_t i = 0; i < t->n; i++) {
        for (size_t s = 0; s < t->g[i].n_by_step; s++)
            free(t->g[i].by_step[s].dwq);
        free(t->g[i].by_step);
    }
    free(t->g);
    free(t->layers);
    free(t->first);
    scan_groups_init(t);
}

scan_group *
scan_groups_get(scan_groups *t, long long layer, size_t head,
                const char *name)
{
    scan_group *g;

    for (size_t i = 0; i < t->n; i++)
        if (t->g[i].layer == layer && t->g[i].head == head)
            return &t->g[i];
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 64;
        g = realloc(t->g, nc * sizeof *g);
        if (g == NULL)
            return NULL;
        t->g = g;
        t->cap = nc;
    }
    g = &t->g[t->n++];
    memset(g, 0, sizeof *g);
    g->layer = layer;
    g->head = head;
    snprintf(g->name, sizeof g->name, "%s", name);
    scan_stats_init(&g->st);
    return g;
}

/* Adds DWQ [D, XC] (NULL: none) to R's sum; false when out of memory or
   when it has other columns than the step's earlier ones. */
static bool
step_add_dwq(scan_step *r, size_t d, const double *dwq, size_t xc)
{
    if (dwq == NULL)
        return true;
    if (r->dwq == NULL) {
        r->dwq = calloc(d * xc, sizeof *r->dwq);
        if (r->dwq == NULL)
            return false;
        r->dwq_c = xc;
    }
    if (r->dwq_c != xc)
        return false;
    for (size_t i = 0; i < d * xc; i++)
        r->dwq[i] += dwq[i];
    return true;
}

/* Adds E (and DWQ [E->d, XC], NULL: none) to G's record of STEP; false
   when out of memory or X's columns change within a step. */
static bool
group_add_step(scan_group *g, long long step, const scan_eq23 *e,
               const double *dwq, size_t xc)
{
    scan_step *r;

    if (e->d == 0)
        return true;
    for (size_t i = 0; i < g->n_by_step; i++)
        if (g->by_step[i].step == step) {
            scan_eq23_merge(&g->by_step[i].eq, e);
            return step_add_dwq(&g->by_step[i], e->d, dwq, xc);
        }
    r = realloc(g->by_step, (g->n_by_step + 1) * sizeof *r);
    if (r == NULL)
        return false;
    g->by_step = r;
    memset(&r[g->n_by_step], 0, sizeof *r);
    r[g->n_by_step].step = step;
    scan_eq23_merge(&r[g->n_by_step].eq, e);
    g->n_by_step++;
    return step_add_dwq(&r[g->n_by_step - 1], e->d, dwq, xc);
}

int
scan_groups_add(scan_groups *t, long long layer, long long step,
                const char *name, size_t head, bool first,
                const scan_stats *r, const double *dwq, size_t xc)
{
    scan_group *g = scan_groups_get(t, layer, head, name);

    if (g == NULL)
        return -1;
    if (first)
        g->steps++;
    scan_stats_merge(&g->st, r);
    return group_add_step(g, step, &r->eq, dwq, xc) ? 0 : -2;
}

static int
cmp_step(const void *a, const void *b)
{
    const scan_step *x = a, *y = b;

    return x->step < y->step ? -1 : x->step > y->step;
}

static int
cmp_layer_head(long long la, size_t ha, long long lb, size_t hb)
{
    if (la != lb)
        return la < lb ? -1 : 1;
    return ha < hb ? -1 : ha > hb;
}

static int
cmp_group(const void *a, const void *b)
{
    const scan_group *x = a, *y = b;

    return cmp_layer_head(x->layer, x->head, y->layer, y->head);
}

/* A group's sort key for the ranking (no pointer to the table needed). */
typedef struct
{
    double risk;
    long long layer;
    size_t head, index;
} rank_key;

/* Decreasing risk, ties by (layer, head): a total order, as (layer,
   head) is unique, so the result does not depend on qsort's method. */
static int
cmp_rank(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;

    if (x->risk != y->risk)
        return x->risk > y->risk ? -1 : 1;
    return cmp_layer_head(x->layer, x->head, y->layer, y->head);
}

void
scan_groups_rank(scan_groups *t, size_t *order)
{
    rank_key *k;

    qsort(t->g, t->n, sizeof *t->g, cmp_group);
    for (size_t i = 0; i < t->n; i++) {
        if (t->g[i].n_by_step > 1)
            qsort(t->g[i].by_step, t->g[i].n_by_step, sizeof *t->g[i].by_step,
                  cmp_step);
        t->g[i].risk = scan_risk(&t->g[i].st);
        order[i] = i;
    }
    k = malloc((t->n ? t->n : 1) * sizeof *k);
    if (k != NULL) {
        for (size_t i = 0; i < t->n; i++) {
            k[i].risk = t->g[i].risk;
            k[i].layer = t->g[i].layer;
            k[i].head = t->g[i].head;
            k[i].index = i;
        }
        qsort(k, t->n, sizeof *k, cmp_rank);
        for (size_t r = 0; r < t->n; r++)
            order[r] = k[r].index;
    } else {
        /* no memory for keys: an insertion sort of the indices in place */
        for (size_t a = 1; a < t->n; a++)
            for (size_t b = a; b > 0; b--) {
                const scan_group *p = &t->g[order[b - 1]],
                                 *q = &t->g[order[b]];
                rank_key kp = {p->risk, p->layer, p->head, 0};
                rank_key kq = {q->risk, q->layer, q->head, 0};
                size_t s;
                if (cmp_rank(&kp, &kq) <= 0)
                    break;
                s = order[b];
                order[b] = order[b - 1];
                order[b - 1] = s;
            }
    }
    free(k);
    for (size_t r = 0; r < t->n; r++)
        t->g[order[r]].rank = r + 1;
}

double
scan_group_cos_adjacent(const scan_group *g)
{
    double s = 0;
    size_t n = 0;

    for (size_t i = 1; i < g->n_by_step; i++) {
        double c = scan_eq23_cosine(&g->by_step[i - 1].eq, &g->by_step[i].eq);
        if (!isnan(c)) {
            s += c;
            n++;
        }
    }
    return n > 0 ? s / (double)n : NAN;
}

/*----------------------------------------------------------------------------
 * The dW_Q error X^T u (Eq. 2) of each (layer, head, step), its spectrum
 * and how its direction holds across steps.
 *--------------------------------------------------------------------------*/
scan_dwq_spec
scan_dwq_spec_of(const double *m, size_t rows, size_t cols)
{
    scan_dwq_spec r;
    size_t k = rows < cols ? rows : cols;
    double *sg = malloc((k ? k : 1) * sizeof *sg);
    const char *why;

    memset(&r, 0, sizeof r);
    if (sg != NULL && k > 0
        && scan_dwq_spectrum(m, rows, cols, sg, &r.fro2, &why) == 0) {
        r.ok = true;
        r.k = k;
        for (size_t i = 0; i < k && i < SCAN_DWQ_SIGMAS; i++)
            r.sigma[i] = sg[i];
        r.energy1 = r.fro2 > 0 ? sg[0] * sg[0] / r.fro2 : NAN;
        r.stable_rank = sg[0] > 0 ? r.fro2 / (sg[0] * sg[0]) : NAN;
    }
    free(sg);
    return r;
}

double
scan_dwq_cosine(const double *a, const double *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;

    if (a == NULL || b == NULL)
        return NAN;
    for (size_t i = 0; i < n; i++) {
        ab += a[i] * b[i];
        aa += a[i] * a[i];
        bb += b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / (sqrt(aa) * sqrt(bb)) : NAN;
}

long
scan_group_dwq_prev(const scan_group *g, size_t t)
{
    for (size_t u = t; u-- > 0;)
        if (g->by_step[u].dwq != NULL
            && g->by_step[u].dwq_c == g->by_step[t].dwq_c
            && g->by_step[u].eq.d == g->by_step[t].eq.d)
            return (long)u;
    return -1;
}

/* G's dwq_sum (its steps' spectra already in place); false when G has no
   dW_Q error.  Steps of another shape than the first are left out. */
static bool
dwq_summary(const scan_group *g, scan_dwq_sum *out)
{
    double *acc = NULL, norms = 0, cs = 0;
    size_t ncos = 0, d = 0, cols = 0, only = 0;

    memset(out, 0, sizeof *out);
    out->cos_mean = out->growth = NAN;
    for (size_t t = 0; t < g->n_by_step; t++) {
        const scan_step *r = &g->by_step[t];
        long p;
        if (r->dwq == NULL)
            continue;
        if (acc == NULL) {
            d = r->eq.d;
            cols = r->dwq_c;
            acc = calloc(d * cols, sizeof *acc);
            if (acc == NULL)
                return false;
        }
        if (r->eq.d != d || r->dwq_c != cols)
            continue;
        out->steps++;
        only = t;
        for (size_t i = 0; i < d * cols; i++) {
            acc[i] += r->dwq[i];
            norms += r->dwq[i] * r->dwq[i];
        }
        if ((p = scan_group_dwq_prev(g, t)) >= 0) {
            double c = scan_dwq_cosine(g->by_step[p].dwq, r->dwq, d * cols);
            if (!isnan(c)) {
                cs += c;
                ncos++;
            }
        }
    }
    if (acc == NULL)
        return false;
    out->cos_mean = ncos ? cs / (double)ncos : NAN;
    out->cum = out->steps == 1 ? g->by_step[only].sp
                               : scan_dwq_spec_of(acc, d, cols);
    out->growth = norms > 0 && out->cum.ok ? sqrt(out->cum.fro2 / norms)
                                           : NAN;
    free(acc);
    return true;
}

void
scan_group_spectra(scan_group *g)
{
    for (size_t t = 0; t < g->n_by_step; t++)
        if (g->by_step[t].dwq != NULL)
            g->by_step[t].sp = scan_dwq_spec_of(
                g->by_step[t].dwq, g->by_step[t].eq.d, g->by_step[t].dwq_c);
    g->has_dwq = dwq_summary(g, &g->dsum);
}

/* Appends (LAYER, STEP) with first group I0 to T->layers; false when out
   of memory. */
static bool
layers_push(scan_groups *t, size_t *cap, long long layer, long long step,
            size_t i0)
{
    if (t->n_layers == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        scan_layer *r = realloc(t->layers, nc * sizeof *r);
        size_t *f;
        if (r != NULL)
            t->layers = r;
        f = realloc(t->first, nc * sizeof *f);
        if (f != NULL)
            t->first = f;
        if (r == NULL || f == NULL)
            return false;
        *cap = nc;
    }
    memset(&t->layers[t->n_layers], 0, sizeof *t->layers);
    t->layers[t->n_layers].layer = layer;
    t->layers[t->n_layers].step = step;
    t->first[t->n_layers++] = i0;
    return true;
}

int
scan_groups_layers(scan_groups *t)
{
    size_t cap = t->n_layers;

    for (size_t i0 = 0; i0 < t->n;) {
        size_t i1 = i0, k0 = t->n_layers;
        while (i1 < t->n && t->g[i1].layer == t->g[i0].layer)
            i1++;
        for (size_t i = i0; i < i1; i++)
            for (size_t s = 0; s < t->g[i].n_by_step; s++) {
                long long st = t->g[i].by_step[s].step;
                bool seen = false;
                if (t->g[i].by_step[s].dwq == NULL)
                    continue;
                for (size_t k = k0; k < t->n_layers && !seen; k++)
                    seen = t->layers[k].step == st;
                if (!seen && !layers_push(t, &cap, t->g[i0].layer, st, i0))
                    return -1;
            }
        /* by step within the layer (first[] is i0 for all of them) */
        for (size_t a = k0 + 1; a < t->n_layers; a++)
            for (size_t b = a;
                 b > k0 && t->layers[b - 1].step > t->layers[b].step; b--) {
                scan_layer l = t->layers[b];
                t->layers[b] = t->layers[b - 1];
                t->layers[b - 1] = l;
            }
        i0 = i1;
    }
    return 0;
}

/* The heads of groups I0..I1 (one layer, by head) stacked at STEP: [sum of
   their d, cols], malloc'd; NULL when none has X at STEP, the widths
   differ or memory is short.  *ROWS, *COLS, *HEADS. */
static double *
dwq_stack(const scan_groups *t, size_t i0, size_t i1, long long step,
          size_t *rows, size_t *cols, size_t *heads)
{
    double *m = NULL;
    size_t r = 0, c = 0, h = 0;

    for (size_t i = i0; i < i1; i++)
        for (size_t s = 0; s < t->g[i].n_by_step; s++) {
            const scan_step *e = &t->g[i].by_step[s];
            if (e->step != step || e->dwq == NULL)
                continue;
            if (c != 0 && e->dwq_c != c)
                return NULL;
            c = e->dwq_c;
            r += e->eq.d;
            h++;
        }
    if (h == 0 || (m = malloc(r * c * sizeof *m)) == NULL)
        return NULL;
    r = 0;
    for (size_t i = i0; i < i1; i++)
        for (size_t s = 0; s < t->g[i].n_by_step; s++) {
            const scan_step *e = &t->g[i].by_step[s];
            if (e->step != step || e->dwq == NULL)
                continue;
            memcpy(m + r * c, e->dwq, e->eq.d * c * sizeof *m);
            r += e->eq.d;
        }
    *rows = r;
    *cols = c;
    *heads = h;
    return m;
}

void
scan_groups_layer_top(scan_groups *t, size_t k)
{
    scan_layer *L = &t->layers[k];
    size_t i1 = t->first[k], r, c;
    double *m;
    const char *why;

    while (i1 < t->n && t->g[i1].layer == L->layer)
        i1++;
    m = dwq_stack(t, t->first[k], i1, L->step, &r, &c, &L->heads);
    L->ok = m != NULL
            && scan_dwq_top(m, r, c, &L->sigma1, &L->fro2, &why) == 0;
    free(m);
}

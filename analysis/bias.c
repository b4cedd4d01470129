/* bias -- mergeable signed-error statistics (Welford moments with the
   pairwise merge, sign, direction and tie counts, by binade and by
   operation) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <string.h>

#include "analysis/bias.h"

void
bias_cell_init(bias_cell *c)
{
    memset(c, 0, sizeof *c);
    c->min = INFINITY;
    c->max = -INFINITY;
}

void
bias_cell_add(bias_cell *c, double x)
{
    double delta;

    if (!isfinite(x)) {
        c->nonfinite++;
        return;
    }
    /* Welford: mean_n = mean_{n-1} + (x - mean_{n-1}) / n,
       m2_n = m2_{n-1} + (x - mean_{n-1}) (x - mean_n) */
    c->n++;
    delta = x - c->mean;
    c->mean += delta / (double)c->n;
    c->m2 += delta * (x - c->mean);
    if (x < c->min)
        c->min = x;
    if (x > c->max)
        c->max = x;
    if (x < 0)
        c->neg++;
    else if (x > 0)
        c->pos++;
    else
        c->zero++;
}

void
bias_cell_add_event(bias_cell *c, const sf_event *ev)
{
    c->events++;
    if (ev->dir == 0) {
        c->exact++;
    } else {
        bool away = ev->dir > 0;
        /* result - exact > 0: away from zero for a positive exact value,
           toward zero for a negative one */
        bool up = away != ev->exact.sign;

        if (away)
            c->away++;
        else
            c->toward++;
        if (up)
            c->up++;
        else
            c->down++;
        if (ev->tie) {
            c->ties++;
            if (away)
                c->ties_away++;
        } else {
            c->nonties++;
        }
    }
    bias_cell_add(c, sf_event_error_ulps(ev));
}

void
bias_cell_merge(bias_cell *into, const bias_cell *from)
{
    bias_cell f = *from; /* FROM may alias INTO */

    if (f.n != 0 && into->n == 0) {
        into->mean = f.mean;
        into->m2 = f.m2;
    } else if (f.n != 0) {
        /* Chan, Golub and LeVeque: with d = mean_b - mean_a and n = na +
           nb, mean = mean_a + d nb / n, m2 = m2_a + m2_b + d^2 na nb / n */
        double na = (double)into->n, nb = (double)f.n, n = na + nb;
        double d = f.mean - into->mean;

        into->mean += d * (nb / n);
        into->m2 += f.m2 + d * d * (na / n) * nb;
    }
    into->n += f.n;
    if (f.min < into->min)
        into->min = f.min;
    if (f.max > into->max)
        into->max = f.max;
    into->neg += f.neg;
    into->zero += f.zero;
    into->pos += f.pos;
    into->nonfinite += f.nonfinite;
    into->events += f.events;
    into->exact += f.exact;
    into->away += f.away;
    into->toward += f.toward;
    into->up += f.up;
    into->down += f.down;
    into->ties += f.ties;
    into->nonties += f.nonties;
    into->ties_away += f.ties_away;
}

void
bias_summarize(const bias_cell *c, bias_summary *s)
{
    s->n = c->n;
    s->valid = c->n >= 2;
    s->mean = c->n != 0 ? c->mean : NAN;
    s->min = c->n != 0 ? c->min : NAN;
    s->max = c->n != 0 ? c->max : NAN;
    if (!s->valid) {
        s->var = s->sd = s->se = s->t = s->ci_lo = s->ci_hi = NAN;
        return;
    }
    s->var = c->m2 / (double)(c->n - 1);
    s->sd = sqrt(s->var);
    s->se = sqrt(s->var / (double)c->n);
    if (s->se > 0)
        s->t = s->mean / s->se;
    else if (s->mean == 0)
        s->t = 0.0;
    else
        s->t = s->mean > 0 ? INFINITY : -INFINITY;
    s->ci_lo = s->mean - BIAS_Z95 * s->se;
    s->ci_hi = s->mean + BIAS_Z95 * s->se;
}

/*----------------------------------------------------------------------------
 * The keyed accumulator.
 *--------------------------------------------------------------------------*/
void
bias_init(bias_acc *a)
{
    bias_cell_init(&a->all);
    for (int i = 0; i < BIAS_N_BINS; i++)
        bias_cell_init(&a->by_binade[i]);
    for (int i = 0; i < BIAS_N_OPS; i++)
        bias_cell_init(&a->by_op[i]);
}

/* The key of binade E = floor(log2 |ref|). */
static int
binade_index(long e)
{
    if (e < BIAS_BINADE_MIN)
        return BIAS_BIN_BELOW;
    if (e > BIAS_BINADE_MAX)
        return BIAS_BIN_ABOVE;
    return (int)(e - BIAS_BINADE_MIN);
}

int
bias_binade_key(double ref)
{
    int e;

    if (!isfinite(ref))
        return BIAS_BIN_NONE;
    if (ref == 0)
        return BIAS_BIN_ZERO;
    (void)frexp(ref, &e); /* ref = m 2^e, 1/2 <= |m| < 1 */
    return binade_index((long)e - 1);
}

int
bias_op_key(unsigned op)
{
    return op < BIAS_OP_OTHER ? (int)op : BIAS_OP_OTHER;
}

void
bias_add(bias_acc *a, double x, double ref, unsigned op)
{
    bias_cell_add(&a->all, x);
    bias_cell_add(&a->by_binade[bias_binade_key(ref)], x);
    bias_cell_add(&a->by_op[bias_op_key(op)], x);
}

/* The binade key of an event's exact value (sig * 2^exp, sig = hi 2^64 +
   lo; a tail does not change floor(log2)). */
static int
event_binade_key(const sf_event *ev)
{
    const sf_dyadic *x = &ev->exact;
    long bits = 0;

    if (x->hi != 0) {
        for (uint64_t h = x->hi; h != 0; h >>= 1)
            bits++;
        bits += 64;
    } else {
        for (uint64_t l = x->lo; l != 0; l >>= 1)
            bits++;
    }
    if (bits == 0)
        return x->tail ? BIAS_BIN_NONE : BIAS_BIN_ZERO;
    return binade_index((long)x->exp + bits - 1);
}

void
bias_add_event(bias_acc *a, const sf_event *ev)
{
    int op = ev->op;

    bias_cell_add_event(&a->all, ev);
    bias_cell_add_event(&a->by_binade[event_binade_key(ev)], ev);
    bias_cell_add_event(
        &a->by_op[op >= 0 ? bias_op_key((unsigned)op) : BIAS_OP_OTHER], ev);
}

void
bias_merge(bias_acc *into, const bias_acc *from)
{
    bias_cell_merge(&into->all, &from->all);
    for (int i = 0; i < BIAS_N_BINS; i++)
        bias_cell_merge(&into->by_binade[i], &from->by_binade[i]);
    for (int i = 0; i < BIAS_N_OPS; i++)
        bias_cell_merge(&into->by_op[i], &from->by_op[i]);
}

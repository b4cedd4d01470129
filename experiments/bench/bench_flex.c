/* bench_flex -- FlexAttention's description "flex" against fa2 on the
   same BF16 inputs, per (query, key) pair of a head: the forward with no
   mask, causal, and a sliding window of 256 keys given as a boolean
   mask; the backward with no mask and causal.  Both sides take the
   correctly rounded exp and reciprocal, and fa2 the correctly rounded
   log (no GPU tables), so the pairs compare the descriptions' loops,
   not the tables' look-ups.  One head (B = H = 1), N = 1024 (256 with
   --quick), d = 64, inputs uniform in (-2, 2) from a fixed seed; the
   sides of a group run alternately, and each ratio is the median of the
   rounds' own ratios. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "attention/kernel.h"
#include "experiments/bench/bench.h"
#include "softfloat/softfloat.h"

/* The sliding window: query i sees keys i - WINDOW + 1 .. i. */
#define WINDOW 256

typedef enum
{
    MASK_NONE,
    MASK_CAUSAL,
    MASK_WINDOW
} mask_kind;

/* The shared inputs: Q, K, V and dO of shape SH, and the window's mask
   (Nq x Nk, broadcast over the heads). */
typedef struct
{
    fa_shape sh;
    uint16_t *q, *k, *v, *dout;
    uint8_t *window;
} flex_inputs;

/* One side: a configuration (its description a copy, an lg2 log taken
   as "cr"), its forward's O and LSE, and the backward's outputs. */
typedef struct
{
    fa_kernel kern;
    fa_attn_mask mask;
    fa_config cfg;
    bool backward;
    const flex_inputs *in;
    uint32_t *o, *lse, *lse2, *delta, *dq, *dk, *dv;
} flex_side;

/* One forward of side C into its O and LSE (exit 1 when it fails). */
static void
side_forward(flex_side *c)
{
    const flex_inputs *in = c->in;
    sf_env env = SF_ENV_IEEE;
    fa_capture cap;

    memset(&cap, 0, sizeof cap);
    cap.lse_kernel = c->lse2;
    env.isa = bench_cfg.isa;
    if (fa_forward(&c->cfg, in->q, in->k, in->v, c->o, c->lse,
                   c->lse2 != NULL ? &cap : NULL, &env)
        != 0) {
        fprintf(stderr, "bench: fa_forward (%s) failed\n", c->kern.name);
        exit(1);
    }
}

/* bench_side's run: REPS forwards of side P, or REPS backwards. */
static void
side_run(void *p, long reps)
{
    flex_side *c = p;
    const flex_inputs *in = c->in;

    for (long r = 0; r < reps; r++) {
        sf_env env = SF_ENV_IEEE;
        env.isa = bench_cfg.isa;
        if (!c->backward) {
            side_forward(c);
            continue;
        }
        if (fa_backward(&c->cfg, in->q, in->k, in->v, c->o, c->lse, in->dout,
                        c->delta, c->dq, c->dk, c->dv, NULL, &env)
            != 0) {
            fprintf(stderr, "bench: fa_backward (%s) failed\n", c->kern.name);
            exit(1);
        }
    }
}

/* Description NAME on IN with mask MK, the forward (or, when BACKWARD,
   the backward from its forward's O and LSE, computed here once). */
static void
side_open(flex_side *c, const char *name, mask_kind mk, bool backward,
          const flex_inputs *in)
{
    const fa_kernel *k = fa_kernel_by_name(name);
    size_t bh = in->sh.batch * in->sh.heads, nd = in->sh.nq * in->sh.d,
           kd = in->sh.nk * in->sh.d;
    const char *why;

    if (k == NULL) {
        fprintf(stderr, "bench: no kernel description '%s'\n", name);
        exit(1);
    }
    memset(c, 0, sizeof *c);
    c->kern = *k;
    if (c->kern.log == FA_KLOG_LG2)
        c->kern.log = FA_KLOG_CR; /* fa2's LSE without the 64 MB table */
    c->cfg = fa_config_kernel_default(&c->kern);
    c->cfg.shape = in->sh;
    c->cfg.causal = mk == MASK_CAUSAL;
    if (mk == MASK_WINDOW) {
        c->mask =
            (fa_attn_mask){FA_AMASK_BOOL, in->window, NULL, in->sh.nk, 1};
        c->cfg.mask = &c->mask;
    }
    why = fa_config_check(&c->cfg);
    if (why != NULL) {
        fprintf(stderr, "bench: attention config %s: %s\n", name, why);
        exit(1);
    }
    c->backward = backward;
    c->in = in;
    c->o = bench_xmalloc(bh * nd * 4);
    c->lse = bench_xmalloc(bh * in->sh.nq * 4);
    if (backward) {
        c->delta = bench_xmalloc(bh * in->sh.nq * 4);
        c->dq = bench_xmalloc(bh * nd * 4);
        c->dk = bench_xmalloc(bh * kd * 4);
        c->dv = bench_xmalloc(bh * kd * 4);
        /* the forward's base-2 LSE kept for the flex backward, as attn,
           diff and Python keep it */
        if (c->kern.bwd == FA_BWD_FLEX) {
            c->lse2 = bench_xmalloc(bh * in->sh.nq * 4);
            c->cfg.lse_kernel = c->lse2;
        }
        side_forward(c);
    }
}

static void
side_close(flex_side *c)
{
    free(c->o);
    free(c->lse);
    free(c->lse2);
    free(c->delta);
    free(c->dq);
    free(c->dk);
    free(c->dv);
}

/* A row of a group: side SIDE against side BASE (SIDE itself: its time
   per pair alone, in ns in the ratio column), target TARGET. */
typedef struct
{
    int side, base;
    const char *label;
    double target;
} flex_row;

/* The sides of one group, description NAMES[k] with mask MASKS[k],
   forward (or backward when BACKWARD), timed alternately; then the
   NROWS rows ROWS in Mkey/s, each ratio the median of the rounds' own
   ratios. */
static void
flex_group(const flex_inputs *in, int n, const char *const *names,
           const mask_kind *masks, bool backward, const flex_row *rows,
           int nrows)
{
    enum { MAXR = 64 };
    flex_side c[BENCH_GROUP_MAX];
    bench_side sides[BENCH_GROUP_MAX];
    double items =
               (double)(in->sh.batch * in->sh.heads * in->sh.nq * in->sh.nk),
           t[BENCH_GROUP_MAX * MAXR], med[BENCH_GROUP_MAX], v[MAXR];
    int nr = bench_cfg.rounds < MAXR ? bench_cfg.rounds : MAXR;

    for (int k = 0; k < n; k++) {
        side_open(&c[k], names[k], masks[k], backward, in);
        sides[k] = (bench_side){side_run, &c[k], items, false};
    }
    bench_group(sides, n, nr, t);
    for (int k = 0; k < n; k++) {
        memcpy(v, t + k * nr, (size_t)nr * sizeof *v);
        med[k] = bench_median(v, nr);
    }
    for (int x = 0; x < nrows; x++) {
        const flex_row *r = &rows[x];
        if (r->side == r->base)
            bench_row_alone(r->label, 1e-6 / med[r->side], "Mkey/s",
                            1e9 * med[r->side], BENCH_NONE, 0);
        else
            bench_row(
                r->label, 1e-6 / med[r->side], 1e-6 / med[r->base], "Mkey/s",
                bench_round_ratio(t + r->side * nr, t + r->base * nr, nr),
                BENCH_AT_MOST, r->target);
    }
    for (int k = 0; k < n; k++)
        side_close(&c[k]);
}

void
bench_attn_flex(void)
{
    size_t n = bench_cfg.quick ? 256 : 1024, d = 64;
    flex_inputs in = {{1, 1, n, n, d}, NULL, NULL, NULL, NULL, NULL};
    size_t nx = in.sh.batch * in.sh.heads * n * d;
    const char *isa = sf_isa_name(sf_isa_resolve(bench_cfg.isa));
    char lb[5][96], shape[48];
    uint64_t s = 19;

    in.q = bench_xmalloc(nx * 2);
    in.k = bench_xmalloc(nx * 2);
    in.v = bench_xmalloc(nx * 2);
    in.dout = bench_xmalloc(nx * 2);
    in.window = bench_xmalloc(n * n);
    for (size_t i = 0; i < nx; i++) {
        in.q[i] = bench_rand_bf16(&s, 2);
        in.k[i] = bench_rand_bf16(&s, 2);
        in.v[i] = bench_rand_bf16(&s, 2);
        in.dout[i] = bench_rand_bf16(&s, 2);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            in.window[i * n + j] = j <= i && i - j < WINDOW;
    snprintf(shape, sizeof shape, "N=%zu d=%zu %s", n, d, isa);

    /* the forward: flex as fast per key as fa2, with no mask and causal;
       its block-sparse masks faster than fa2's unmasked forward */
    {
        static const char *const names[] = {"fa2", "flex", "fa2", "flex",
                                            "flex"};
        static const mask_kind masks[] = {MASK_NONE, MASK_NONE, MASK_CAUSAL,
                                          MASK_CAUSAL, MASK_WINDOW};
        flex_row rows[] = {{0, 0, lb[0], 0},
                           {1, 0, lb[1], 1},
                           {3, 2, lb[2], 1},
                           {3, 0, lb[3], 1},
                           {4, 0, lb[4], 1}};
        snprintf(lb[0], sizeof lb[0], "attn fa2 fwd %s ns/key", shape);
        snprintf(lb[1], sizeof lb[1], "attn flex fwd %s vs fa2", shape);
        snprintf(lb[2], sizeof lb[2], "attn flex fwd causal %s vs fa2 causal",
                 shape);
        snprintf(lb[3], sizeof lb[3], "attn flex fwd causal %s vs fa2", shape);
        snprintf(lb[4], sizeof lb[4], "attn flex fwd window %d %s vs fa2",
                 WINDOW, shape);
        flex_group(&in, 5, names, masks, false, rows, 5);
    }
    /* the backward (fa_backward), each side from its own forward's O and
       LSE */
    {
        static const char *const names[] = {"fa2", "flex", "fa2", "flex"};
        static const mask_kind masks[] = {MASK_NONE, MASK_NONE, MASK_CAUSAL,
                                          MASK_CAUSAL};
        flex_row rows[] = {
            {0, 0, lb[0], 0}, {1, 0, lb[1], 1}, {3, 2, lb[2], 1}};
        snprintf(lb[0], sizeof lb[0], "attn fa2 bwd %s ns/key", shape);
        snprintf(lb[1], sizeof lb[1], "attn flex bwd %s vs fa2", shape);
        snprintf(lb[2], sizeof lb[2], "attn flex bwd causal %s vs fa2 causal",
                 shape);
        flex_group(&in, 4, names, masks, true, rows, 3);
    }

    free(in.q);
    free(in.k);
    free(in.v);
    free(in.dout);
    free(in.window);
}

/* invariance -- the launches of one attention call resolved to what
   decides their bits, computed once per distinct resolution, and grouped
   into classes of identical outputs (invariance.h) */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariance.h"

#if defined(__GNUC__)
static void say(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif

/* The reason of a refusal into WHY (N bytes; may be NULL). */
static void
say(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || n == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

/* The configuration of the backend sdpa picks for a step (AL: the
   step's launch), its backend's name into *NAME, and the kernel variant
   into K on the first step.  NULL after a reason in WHY. */
static const fa_config *
sdpa_pick(const iv_problem *p, const ax_launch *al, bool causal, iv_key *k,
          const char **name, char *why, size_t n)
{
    sdpa_case sc = sdpa_case_default();
    sdpa_choice ch;
    sdpa_backend b;
    const fa_config *cfg;

    sc.batch = (int64_t)al->batch;
    sc.heads = (int64_t)al->heads;
    sc.kv_heads = (int64_t)al->kv_heads;
    sc.enable_gqa = al->kv_heads != al->heads;
    sc.nq = (int64_t)al->nq;
    sc.nk = (int64_t)al->nk;
    sc.d = (int64_t)al->d;
    sc.dtype = p->f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
    sc.causal = causal;
    sc.mask = p->mask != NULL ? p->mask_kind : SDPA_MASK_NONE;
    sc.requires_grad = p->backward;
    b = sdpa_choose_pt211_h200(&sc, &ch);
    if (b == SDPA_BACKEND_ERROR) {
        say(why, n, "PyTorch 2.11 runs no backend for this launch (%s)",
            ch.reason);
        return NULL;
    }
    cfg = p->sdpa_cfg[b];
    if (cfg == NULL) {
        say(why, n, "PyTorch 2.11 picks %s (%s) here, a backend not loaded "
                    "for this comparison",
            sdpa_backend_name(b), ch.variant);
        return NULL;
    }
    if (k->cfg == NULL) {
        snprintf(k->variant_buf, sizeof k->variant_buf, "%s", ch.variant);
        k->variant = k->variant_buf;
    }
    *name = sdpa_backend_name(b);
    return cfg;
}

/* The configuration of one head of NQ rows over NK keys under K. */
static fa_config
head_config(const fa_config *base, const iv_key *k, size_t nq, size_t nk,
            bool causal, size_t splits)
{
    fa_config c = *base;

    c.shape.batch = 1;
    c.shape.heads = 1;
    c.shape.nq = nq;
    c.shape.nk = nk;
    c.causal = causal;
    c.splits = splits;
    c.launch_bh = k->launch_bh;
    c.dq_splits = k->dq_buffers;
    return c;
}

/* Zero when launch L of P can be compared; else -1 after a reason in
   WHY. */
static int
launch_refused(const iv_problem *p, const iv_launch *l, char *why, size_t n)
{
    if (l->backend >= p->nbackends) {
        say(why, n, "no backend %zu", l->backend);
        return -1;
    }
    if (l->decode && (!p->causal || p->nq > p->nk)) {
        say(why, n, "decode steps need a causal call (each row's cache ends "
                    "at its causal bound)");
        return -1;
    }
    if (p->mask != NULL && l->decode) {
        say(why, n, "decode steps of a masked call (each step's row of the "
                    "mask) are not taken");
        return -1;
    }
    if (p->backward && (l->decode || p->kv_heads != p->heads)) {
        say(why, n, "the backward is compared for one call of ungrouped "
                    "heads only (not decode steps, not grouped heads)");
        return -1;
    }
    return 0;
}

/* The launch grid of L (batch, heads, kv heads, d, format, SMs; not yet
   the rows) into AL; -1 after a reason in WHY when L's heads cannot hold
   the call's. */
static int
launch_grid(const iv_problem *p, const iv_launch *l, ax_launch *al, char *why,
            size_t n)
{
    memset(al, 0, sizeof *al);
    al->batch = l->batch;
    al->heads = p->launch_heads != 0 ? p->launch_heads : p->heads;
    al->kv_heads = p->launch_kv_heads != 0 ? p->launch_kv_heads
                                           : p->kv_heads;
    if (l->heads != 0) {
        if (l->heads < p->heads || l->heads % (p->heads / p->kv_heads) != 0) {
            say(why, n, "a launch of %zu heads cannot hold the call's %zu "
                        "heads in groups of %zu",
                l->heads, p->heads, p->heads / p->kv_heads);
            return -1;
        }
        al->heads = l->heads;
        al->kv_heads = l->heads / (p->heads / p->kv_heads);
    }
    al->d = p->d;
    al->f16 = p->f16;
    al->sms = l->sms;
    return 0;
}

/* Step S of launch L on backend BE into K->steps[S]: its configuration,
   splits and gemv kernel (AL's rows set here); -1 after a reason in
   WHY. */
static int
resolve_step(const iv_problem *p, const iv_launch *l, const iv_backend *be,
             ax_launch *al, size_t s, iv_key *k, char *why, size_t n)
{
    const fa_config *cfg = be->cfg;
    const char *name = be->name;
    const fa_kernel *kern;
    const char *rule;

    al->nq = l->decode ? 1 : p->nq;
    al->nk = l->decode ? p->nk - p->nq + s + 1 : p->nk;
    if (be->sdpa) {
        cfg = sdpa_pick(p, al, p->causal && !l->decode, k, &name, why, n);
        if (cfg == NULL)
            return -1;
    }
    if (k->cfg == NULL) {
        k->cfg = cfg;
        k->backend = name;
    } else if (k->backend != name) {
        k->backend = "mixed";
    }
    k->steps[s].cfg = cfg;
    k->steps[s].backend = name;
    kern = fa_config_kernel(cfg);
    if (!ax_launch_sms_modelled(kern, al)) {
        say(why, n, "%s's decode grid is measured on 132 multiprocessors "
                    "only, not predicted for %u",
            name, l->sms);
        return -1;
    }
    k->steps[s].splits = ax_launch_splits(kern, al, &rule);
    if (s == 0)
        k->split_rule = rule;
    if (al->nq == 1 && kern->n_gemv > 0) {
        k->steps[s].gemv = fa_kernel_gemv_for(kern, p->d, al->nk,
                                              k->launch_bh);
        if (k->steps[s].gemv == NULL) {
            say(why, n, "%s's decode runs cuBLAS gemv kernels, measured "
                        "for some launches only; none for d %zu, Nk %zu, "
                        "B*H %zu (not predicted)",
                name, p->d, al->nk, k->launch_bh);
            return -1;
        }
    }
    return 0;
}

/* The library's refusal of P's mask (a description without bias_add),
   head by head, before anything is computed: -1 after a reason in WHY. */
static int
mask_refused(const iv_problem *p, const iv_key *k, char *why, size_t n)
{
    fa_config c = head_config(k->cfg, k, p->nq, p->nk, p->causal,
                              k->steps[0].splits);
    size_t hh;
    const char *r = am_heads_check(&c, p->mask, p->heads, &hh);

    if (r == NULL)
        return 0;
    say(why, n, "%s, head %zu: %s", k->backend, hh, r);
    return -1;
}

int
iv_resolve(const iv_problem *p, const iv_launch *l, iv_key *k, char *why,
           size_t n)
{
    ax_launch al;

    memset(k, 0, sizeof *k);
    k->variant = "";
    if (launch_refused(p, l, why, n) != 0
        || launch_grid(p, l, &al, why, n) != 0)
        return -1;
    k->launch_bh = l->batch * al.heads;
    k->decode = l->decode;
    k->nsteps = l->decode ? p->nq : 1;
    k->steps = calloc(k->nsteps, sizeof *k->steps);
    if (k->steps == NULL) {
        say(why, n, "out of memory");
        return -1;
    }
    for (size_t s = 0; s < k->nsteps; s++)
        if (resolve_step(p, l, &p->backends[l->backend], &al, s, k, why, n)
            != 0)
            goto fail;
    if (p->mask != NULL && mask_refused(p, k, why, n) != 0)
        goto fail;
    if (p->backward) {
        fa_config c = *k->cfg;
        c.launch_bh = k->launch_bh;
        c.sms = l->sms;
        k->dq_buffers = fa_config_dq_buffers(&c);
    }
    return 0;
fail:
    iv_key_free(k);
    return -1;
}

void
iv_key_free(iv_key *k)
{
    free(k->steps);
    k->steps = NULL;
    k->nsteps = 0;
}

bool
iv_key_equal(const iv_key *a, const iv_key *b)
{
    if (a->cfg != b->cfg || a->decode != b->decode || a->nsteps != b->nsteps
        || a->dq_buffers != b->dq_buffers)
        return false;
    for (size_t s = 0; s < a->nsteps; s++)
        if (a->steps[s].cfg != b->steps[s].cfg
            || a->steps[s].splits != b->steps[s].splits
            || a->steps[s].gemv != b->steps[s].gemv)
            return false;
    return true;
}

const sf_format *
iv_output_format(const iv_key *k)
{
    return fa_output_format(k->cfg, "o");
}

iv_layout
iv_output_layout(const iv_problem *p)
{
    iv_layout y;

    y.o = 0;
    y.lse = p->nq * p->d;
    y.dq = y.lse + p->nq;
    y.dk = y.dq + (p->backward ? p->nq * p->d : 0);
    y.dv = y.dk + (p->backward ? p->nk * p->d : 0);
    y.head = y.dv + (p->backward ? p->nk * p->d : 0);
    return y;
}


/* One forward of C's head; 0 or -1. */
static int
forward(const fa_config *c, const iv_key *k, const uint16_t *q,
        const uint16_t *kk, const uint16_t *v, uint32_t *o, uint32_t *lse,
        char *why, size_t n)
{
    sf_env env = SF_ENV_IEEE;
    size_t tc;

    if (fa_config_tiles(c, NULL, NULL, &tc, NULL) != 0) {
        say(why, n, "the attention library refuses %zu splits of %zu keys "
                    "(%s)",
            c->splits, c->shape.nk, k->backend);
        return -1;
    }
    if (fa_forward(c, q, kk, v, o, lse, NULL, &env) != 0) {
        say(why, n, "the attention library failed (out of memory)");
        return -1;
    }
    return 0;
}

int
iv_compute(const iv_problem *p, const iv_key *k, size_t h, uint32_t *out,
           char *why, size_t n)
{
    size_t g = p->kv_heads != 0 ? p->heads / p->kv_heads : 1;
    size_t nq = p->nq, nk = p->nk, d = p->d;
    const uint16_t *q = p->q + h * nq * d;
    const uint16_t *kk = p->k + h / g * nk * d, *v = p->v + h / g * nk * d;
    iv_layout y = iv_output_layout(p);
    uint32_t *o = out + y.o, *lse = out + y.lse;

    if (!k->decode) {
        fa_config c0 = head_config(k->cfg, k, nq, nk, p->causal,
                                   k->steps[0].splits);
        fa_attn_mask hm;
        fa_config c = am_head_config(&c0, p->mask, h, &hm);
        uint32_t *delta;
        sf_env env = SF_ENV_IEEE;
        int rc;
        if (forward(&c, k, q, kk, v, o, lse, why, n) != 0)
            return -1;
        if (!p->backward)
            return 0;
        if ((delta = malloc((nq != 0 ? nq : 1) * sizeof *delta)) == NULL) {
            say(why, n, "out of memory");
            return -1;
        }
        rc = fa_backward(&c, q, kk, v, o, lse, p->dout + h * nq * d, delta,
                         out + y.dq, out + y.dk, out + y.dv, NULL, &env);
        free(delta);
        if (rc != 0)
            say(why, n, "the attention library's backward failed (%s)",
                k->backend);
        return rc != 0 ? -1 : 0;
    }
    for (size_t s = 0; s < nq; s++) {
        fa_config c = head_config(k->steps[s].cfg, k, 1, nk - nq + s + 1,
                                  false, k->steps[s].splits);
        if (forward(&c, k, q + s * d, kk, v, o + s * d, lse + s, why, n) != 0)
            return -1;
    }
    return 0;
}

size_t
iv_classes(size_t n, const uint32_t *const *outs, size_t len,
           size_t *class_of)
{
    size_t classes = 0;

    for (size_t i = 0; i < n; i++) {
        class_of[i] = classes;
        for (size_t j = 0; j < i; j++)
            if (memcmp(outs[i], outs[j], len * sizeof outs[i][0]) == 0) {
                class_of[i] = class_of[j];
                break;
            }
        if (class_of[i] == classes)
            classes++;
    }
    return classes;
}

/* X (FP32 bits of a value on FMT's grid) as FMT's bits: exact. */
static uint32_t
in_format(const sf_format *fmt, uint32_t x)
{
    sf_env env = SF_ENV_IEEE;

    if (fmt == &sf_format_f32)
        return x;
    return (uint32_t)sf_convert(fmt, &sf_format_f32, x, SF_RNE, &env);
}

uint32_t
iv_format_bits(const sf_format *fmt, uint32_t x)
{
    return in_format(fmt, x);
}

/* X's position among the values of FMT in ascending order, -0 and +0
   one point. */
static int64_t
ordinal(const sf_format *fmt, uint32_t x)
{
    int64_t mag = (int64_t)(x & ~(uint32_t)fmt->sign_mask);

    return (x & fmt->sign_mask) != 0 ? -mag : mag;
}

static bool
is_nan(const sf_format *fmt, uint32_t x)
{
    return (x & fmt->exp_mask) == fmt->exp_mask && (x & fmt->frac_mask) != 0;
}

iv_delta
iv_compare(const sf_format *fmt, const uint32_t *a, const uint32_t *b,
           size_t n)
{
    iv_delta dl = {0, 0};

    for (size_t i = 0; i < n; i++) {
        uint32_t x, y;
        uint64_t u;
        if (a[i] == b[i])
            continue;
        dl.differ++;
        x = in_format(fmt, a[i]);
        y = in_format(fmt, b[i]);
        if (is_nan(fmt, x) || is_nan(fmt, y)) {
            if (!(is_nan(fmt, x) && is_nan(fmt, y)))
                dl.max_ulps = UINT64_MAX;
            continue;
        }
        {
            int64_t ox = ordinal(fmt, x), oy = ordinal(fmt, y);
            u = (uint64_t)(ox > oy ? ox - oy : oy - ox);
        }
        if (u > dl.max_ulps)
            dl.max_ulps = u;
    }
    return dl;
}

/* "B·H lo-hi" of a gemv row, or "the MMA chain" for none. */
static void
gemv_str(char *buf, size_t n, const fa_gemv_row *g)
{
    if (g == NULL)
        snprintf(buf, n, "no gemv row");
    else
        snprintf(buf, n, "the gemv row of B*H %u-%u", g->bh_min, g->bh_max);
}

void
iv_rule(const iv_key *a, const iv_key *b, char *buf, size_t n)
{
    size_t diff = 0, first = 0;

    if (a->cfg != b->cfg) {
        snprintf(buf, n, "backend %s%s%s%s -> %s%s%s%s", a->backend,
                 *a->variant ? " (" : "", a->variant, *a->variant ? ")" : "",
                 b->backend, *b->variant ? " (" : "", b->variant,
                 *b->variant ? ")" : "");
        return;
    }
    if (a->dq_buffers != b->dq_buffers
        && (a->nsteps == 1 && a->steps[0].splits == b->steps[0].splits)) {
        snprintf(buf, n, "dQ buffers %zu -> %zu (the deterministic FA2 "
                         "backward: ceil(SMs / (B H)))",
                 a->dq_buffers, b->dq_buffers);
        return;
    }
    if (a->decode != b->decode) {
        snprintf(buf, n, "%s -> %s", a->decode ? "decode steps" : "one prefill",
                 b->decode ? "decode steps" : "one prefill");
        return;
    }
    for (size_t s = 0; s < a->nsteps && s < b->nsteps; s++)
        if (a->steps[s].cfg != b->steps[s].cfg) {
            snprintf(buf, n, "backend of decode step %zu: %s -> %s", s,
                     a->steps[s].backend, b->steps[s].backend);
            return;
        }
    for (size_t s = 0; s < a->nsteps && s < b->nsteps; s++)
        if (a->steps[s].splits != b->steps[s].splits
            || a->steps[s].gemv != b->steps[s].gemv) {
            if (diff++ == 0)
                first = s;
        }
    if (diff == 0) {
        snprintf(buf, n, "nothing in the launch rules");
        return;
    }
    {
        const iv_step *x = &a->steps[first], *y = &b->steps[first];
        char where[96] = "";
        if (a->decode)
            snprintf(where, sizeof where, " in %zu decode steps (first: row %zu)",
                     diff, first);
        if (x->splits != y->splits)
            snprintf(buf, n, "split count %zu -> %zu (%s)%s", x->splits,
                     y->splits, a->split_rule != NULL ? a->split_rule : "",
                     where);
        else {
            char g1[64], g2[64];
            gemv_str(g1, sizeof g1, x->gemv);
            gemv_str(g2, sizeof g2, y->gemv);
            snprintf(buf, n, "cuBLAS gemv kernel: %s -> %s%s", g1, g2, where);
        }
    }
}

size_t
iv_batch_bound(size_t n, const size_t *batch, const size_t *class_of)
{
    size_t j;

    if (n == 0)
        return 0;
    j = n - 1;
    while (j > 0 && class_of[j - 1] == class_of[n - 1])
        j--;
    if (j == n - 1 && n > 1)
        return 0;
    return batch[j];
}

size_t
iv_space_settings(const iv_space *sp)
{
    return sp->nsms * (sp->nheads != 0 ? sp->nheads : 1);
}

void
iv_space_setting(const iv_space *sp, size_t s, unsigned *sms, size_t *heads)
{
    size_t nh = sp->nheads != 0 ? sp->nheads : 1;

    *sms = sp->sms[s / nh];
    *heads = sp->nheads != 0 ? sp->heads[s % nh] : 0;
}

/* Launch J of setting S of backend B, mode M (1: decode steps). */
static iv_launch
space_launch(const iv_space *sp, int m, size_t b, size_t s, size_t j)
{
    iv_launch l;

    memset(&l, 0, sizeof l);
    l.batch = sp->batch[j];
    iv_space_setting(sp, s, &l.sms, &l.heads);
    l.backend = b;
    l.decode = m == 1;
    return l;
}

bool
iv_backend_predicted(const iv_problem *p, const iv_space *sp, size_t b,
                     char *why, size_t n)
{
    for (int m = 0; m < 2; m++) {
        if (m == 0 ? !sp->prefill : !sp->decode)
            continue;
        for (size_t s = 0; s < iv_space_settings(sp); s++)
            for (size_t j = 0; j < sp->nbatch; j++) {
                iv_launch l = space_launch(sp, m, b, s, j);
                iv_key k;
                if (iv_resolve(p, &l, &k, why, n) != 0)
                    return false;
                iv_key_free(&k);
            }
    }
    return true;
}

size_t
iv_prune_backends(iv_problem *p, iv_backend *be, const iv_space *sp,
                  iv_skip *skip, size_t *nskip)
{
    size_t keep = 0;

    /* BE[keep] is written only after BE[b] (b >= keep) was resolved */
    for (size_t b = 0; b < p->nbackends; b++) {
        char why[512];
        if (!iv_backend_predicted(p, sp, b, why, sizeof why)) {
            skip[*nskip].name = be[b].name;
            snprintf(skip[*nskip].why, sizeof skip[0].why, "%s", why);
            (*nskip)++;
            continue;
        }
        be[keep++] = be[b];
    }
    p->nbackends = keep;
    return keep;
}

/* The launches of SP into G->l, in iv_grid_at's order. */
static void
grid_launches(iv_grid *g)
{
    const iv_space *sp = &g->sp;
    size_t i = 0;

    for (int m = 0; m < 2; m++) {
        if (m == 0 ? !sp->prefill : !sp->decode)
            continue;
        for (size_t b = 0; b < g->p->nbackends; b++)
            for (size_t s = 0; s < iv_space_settings(sp); s++)
                for (size_t j = 0; j < sp->nbatch; j++)
                    g->l[i++] = space_launch(sp, m, b, s, j);
    }
}

/* Each launch resolved, and the runs: a launch joins the first run of
   an equal key, else starts one. */
static int
grid_resolve(iv_grid *g, char *why, size_t n)
{
    char w[512];

    for (size_t i = 0; i < g->nl; i++) {
        const iv_launch *l = &g->l[i];
        if (iv_resolve(g->p, l, &g->key[i], w, sizeof w) != 0) {
            char hs[32] = "";
            if (l->heads != 0)
                snprintf(hs, sizeof hs, ", H %zu", l->heads);
            say(why, n, "%s at batch %zu, %u SMs%s%s: %s",
                g->p->backends[l->backend].name, l->batch,
                l->sms != 0 ? l->sms : 132, hs, l->decode ? " (decode)" : "",
                w);
            return -1;
        }
        g->run_of[i] = g->nruns;
        for (size_t r = 0; r < g->nruns; r++)
            if (iv_key_equal(&g->key[g->runs[r]], &g->key[i])) {
                g->run_of[i] = r;
                break;
            }
        if (g->run_of[i] == g->nruns)
            g->runs[g->nruns++] = i;
    }
    return 0;
}

int
iv_grid_init(iv_grid *g, const iv_problem *p, const iv_space *sp, char *why,
             size_t n)
{
    size_t modes = (size_t)sp->prefill + (size_t)sp->decode;

    memset(g, 0, sizeof *g);
    g->p = p;
    g->sp = *sp;
    g->nl = p->nbackends * iv_space_settings(sp) * sp->nbatch * modes;
    g->l = calloc(g->nl, sizeof *g->l);
    g->key = calloc(g->nl, sizeof *g->key);
    g->run_of = calloc(g->nl, sizeof *g->run_of);
    g->runs = calloc(g->nl, sizeof *g->runs);
    if (g->l == NULL || g->key == NULL || g->run_of == NULL
        || g->runs == NULL) {
        say(why, n, "out of memory");
        return -1;
    }
    grid_launches(g);
    if (grid_resolve(g, why, n) != 0)
        return -1;
    g->y = iv_output_layout(p);
    g->out_len = p->heads * g->y.head;
    g->out = calloc(g->nruns, sizeof *g->out);
    g->cls_run = calloc(g->nruns, sizeof *g->cls_run);
    if (g->out == NULL || g->cls_run == NULL) {
        say(why, n, "out of memory");
        return -1;
    }
    for (size_t r = 0; r < g->nruns; r++)
        if ((g->out[r] = malloc(g->out_len * sizeof(uint32_t))) == NULL) {
            say(why, n, "out of memory");
            return -1;
        }
    return 0;
}

void
iv_grid_free(iv_grid *g)
{
    for (size_t i = 0; i < g->nl && g->key != NULL; i++)
        iv_key_free(&g->key[i]);
    for (size_t r = 0; r < g->nruns && g->out != NULL; r++)
        free(g->out[r]);
    free(g->out);
    free(g->l);
    free(g->key);
    free(g->run_of);
    free(g->runs);
    free(g->cls_run);
    memset(g, 0, sizeof *g);
}

void
iv_grid_classify(iv_grid *g)
{
    g->ncls = iv_classes(g->nruns, (const uint32_t *const *)g->out,
                         g->out_len, g->cls_run);
}

size_t
iv_grid_at(const iv_grid *g, int decode, size_t b, size_t s, size_t j)
{
    size_t ns = iv_space_settings(&g->sp);
    size_t per_mode = g->p->nbackends * ns * g->sp.nbatch;
    size_t base = decode == 1 && g->sp.prefill ? per_mode : 0;

    return base + (b * ns + s) * g->sp.nbatch + j;
}

size_t
iv_grid_class(const iv_grid *g, size_t i)
{
    return g->cls_run[g->run_of[i]];
}

/* The delta of one output (at OFF, LEN words a head, on FMT's grid)
   between the runs of launches I and J, over every head. */
static iv_delta
part_delta(const iv_grid *g, size_t i, size_t j, size_t off, size_t len,
           const sf_format *fmt)
{
    const uint32_t *a = g->out[g->run_of[i]], *b = g->out[g->run_of[j]];
    iv_delta t = {0, 0};

    for (size_t h = 0; h < g->p->heads; h++) {
        iv_delta d = iv_compare(fmt, a + h * g->y.head + off,
                                b + h * g->y.head + off, len);
        t.differ += d.differ;
        if (d.max_ulps > t.max_ulps)
            t.max_ulps = d.max_ulps;
    }
    return t;
}

void
iv_grid_delta(const iv_grid *g, size_t i, size_t j, iv_delta *o,
              iv_delta *lse)
{
    *o = part_delta(g, i, j, g->y.o, g->y.lse - g->y.o,
                    iv_output_format(&g->key[i]));
    *lse = part_delta(g, i, j, g->y.lse, g->y.dq - g->y.lse, &sf_format_f32);
}

iv_delta
iv_grid_delta_bwd(const iv_grid *g, size_t i, size_t j)
{
    return part_delta(g, i, j, g->y.dq, g->y.head - g->y.dq,
                      fa_output_format(g->key[i].cfg, "dq"));
}

void
iv_canonical(const size_t *in, size_t n, size_t *out)
{
    size_t map_from[IV_OBS_MAX], map_to[IV_OBS_MAX], nm = 0;

    for (size_t i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < nm && map_from[k] != in[i]; k++)
            ;
        if (k == nm) {
            map_from[nm] = in[i];
            map_to[nm] = nm;
            nm++;
        }
        out[i] = map_to[k];
    }
}

long
iv_grid_backend(const iv_grid *g, const char *name)
{
    for (size_t b = 0; b < g->p->nbackends; b++) {
        const char *n = g->p->backends[b].name;
        if (strcmp(n, name) == 0
            || (strcmp(name, "default") == 0 && strcmp(n, "sdpa") == 0)
            || (strcmp(name, "flash") == 0 && strcmp(n, "fa2") == 0))
            return (long)b;
    }
    return -1;
}

/* Whether launches I and J gave dQ, dK and dV the same bits. */
static bool
bwd_equal(const iv_grid *g, size_t i, size_t j)
{
    const uint32_t *a = g->out[g->run_of[i]], *b = g->out[g->run_of[j]];
    size_t len = g->y.head - g->y.dq;

    for (size_t h = 0; h < g->p->heads; h++)
        if (memcmp(a + h * g->y.head + g->y.dq, b + h * g->y.head + g->y.dq,
                   len * sizeof *a)
            != 0)
            return false;
    return true;
}

/* Whether launches I and J gave O and LSE the same bits (the forward
   alone, whether or not the backward was computed). */
static bool
fwd_equal(const iv_grid *g, size_t i, size_t j)
{
    const uint32_t *a = g->out[g->run_of[i]], *b = g->out[g->run_of[j]];

    for (size_t h = 0; h < g->p->heads; h++)
        if (memcmp(a + h * g->y.head, b + h * g->y.head,
                   g->y.dq * sizeof *a)
            != 0)
            return false;
    return true;
}

/* Whether position J of CLASSES (J of them before) is its class's
   first. */
static bool
first_of_class(const size_t *classes, size_t j)
{
    for (size_t k = 0; k < j; k++)
        if (classes[k] == classes[j])
            return false;
    return true;
}

/* The GPU's backward classes of backend B against the prefill
   launches'. */
static void
observed_bwd(const iv_grid *g, const iv_observed *ob, size_t b,
             iv_obs_result *r)
{
    size_t raw[IV_OBS_MAX / 2] = {0}, pred[IV_OBS_MAX / 2];
    size_t obs[IV_OBS_MAX / 2];
    size_t nb = g->sp.nbatch;

    if (!ob->bwd || !g->p->backward)
        return;
    if (!ob->bwd_repeat) {
        r->bwd_note = "the GPU's backward did not repeat itself";
        return;
    }
    for (size_t j = 0; j < nb; j++) {
        raw[j] = j;
        for (size_t k = 0; k < j; k++)
            if (bwd_equal(g, iv_grid_at(g, 0, b, 0, j),
                          iv_grid_at(g, 0, b, 0, k))) {
                raw[j] = raw[k];
                break;
            }
    }
    iv_canonical(raw, nb, pred);
    iv_canonical(ob->bwd_classes, nb, obs);
    r->bwd_checked = true;
    r->bwd_partition_equal = memcmp(pred, obs, nb * sizeof pred[0]) == 0;
    for (size_t j = 0; j < nb; j++)
        if (first_of_class(ob->bwd_classes, j)) {
            r->bwd_cls[r->nbwd] = ob->bwd_classes[j];
            r->bwd_launch[r->nbwd++] = iv_grid_at(g, 0, b, 0, j);
        }
}

/* The launch of backend B that position J of a dump's classes stands
   for: batch size J, or with J past them decode steps at J - nbatch. */
static size_t
observed_launch(const iv_grid *g, size_t b, size_t j)
{
    size_t nb = g->sp.nbatch;

    return iv_grid_at(g, j < nb ? 0 : 1, b, 0, j % nb);
}

void
iv_observed_check(const iv_grid *g, const iv_observed *ob,
                  const iv_skip *skip, size_t nskip, iv_obs_result *r)
{
    long b = iv_grid_backend(g, ob->name);
    size_t pred[IV_OBS_MAX], obs[IV_OBS_MAX], raw[IV_OBS_MAX] = {0};
    const char *as = strcmp(ob->name, "default") == 0 ? "sdpa" : ob->name;

    memset(r, 0, sizeof *r);
    if (ob->refused) {
        snprintf(r->note, sizeof r->note, "refused on the GPU");
        return;
    }
    for (size_t k = 0; k < nskip; k++)
        if (strcmp(skip[k].name, as) == 0)
            snprintf(r->note, sizeof r->note, "not predicted: %.140s",
                     skip[k].why);
    if (r->note[0] != '\0')
        return;
    if (b < 0 || iv_space_settings(&g->sp) != 1 || !g->sp.prefill
        || (ob->decode && !g->sp.decode)) {
        snprintf(r->note, sizeof r->note, "not among the launches asked");
        return;
    }
    /* The GPU's classes are of O alone: with the backward computed, a
       launch's class also holds dQ, dK, dV, so the forward's partition
       is found from O and LSE. */
    for (size_t j = 0; j < ob->n; j++) {
        size_t lj = observed_launch(g, (size_t)b, j);

        raw[j] = iv_grid_class(g, lj);
        if (!g->p->backward)
            continue;
        raw[j] = j;
        for (size_t k = 0; k < j; k++)
            if (fwd_equal(g, lj, observed_launch(g, (size_t)b, k))) {
                raw[j] = raw[k];
                break;
            }
    }
    iv_canonical(raw, ob->n, pred);
    iv_canonical(ob->classes, ob->n, obs);
    r->checked = true;
    r->partition_equal = memcmp(pred, obs, ob->n * sizeof pred[0]) == 0;
    for (size_t j = 0; j < ob->n; j++)
        if (first_of_class(ob->classes, j)) {
            r->cls[r->nclasses] = ob->classes[j];
            r->launch[r->nclasses++] = observed_launch(g, (size_t)b, j);
        }
    observed_bwd(g, ob, (size_t)b, r);
}

void
iv_observed_output(const iv_grid *g, size_t k, const uint16_t *stored,
                   size_t rows, iv_obs_result *r)
{
    size_t c = r->cls[k], len = rows * g->p->d;
    const uint32_t *o = g->out[g->run_of[r->launch[k]]];
    const sf_format *fmt = iv_output_format(&g->key[r->launch[k]]);

    for (size_t h = 0; h < g->p->heads; h++)
        for (size_t i = 0; i < len; i++) {
            bool ne = stored[h * len + i]
                      != iv_format_bits(fmt, o[h * g->y.head + g->y.o + i]);
            r->compared++;
            r->differ += ne;
            if (c < IV_OBS_MAX)
                r->class_differ[c] += ne;
        }
}

void
iv_observed_bwd_output(const iv_grid *g, size_t k, const char *which,
                       const uint16_t *stored, iv_obs_result *r)
{
    size_t l = r->bwd_launch[k];
    const uint32_t *o = g->out[g->run_of[l]];
    const sf_format *fmt = fa_output_format(g->key[l].cfg, which);
    size_t off = strcmp(which, "dq") == 0   ? g->y.dq
                 : strcmp(which, "dk") == 0 ? g->y.dk
                                            : g->y.dv;
    size_t len = (strcmp(which, "dq") == 0 ? g->p->nq : g->p->nk) * g->p->d;

    for (size_t h = 0; h < g->p->heads; h++)
        for (size_t i = 0; i < len; i++) {
            r->bwd_compared++;
            r->bwd_differ += stored[h * len + i]
                             != iv_format_bits(fmt, o[h * g->y.head + off + i]);
        }
}

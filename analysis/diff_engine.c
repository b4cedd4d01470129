/* diff_engine.c -- the computation of bf16emu diff (diff_engine.h): the
   emulator and the exact reference head by head, the comparison of each
   stage and the trace of the worst O elements */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attn_exact.h"
#include "analysis/diff_engine.h"
#include "analysis/dump_outputs.h"

/* The heads of stage S as the dump holds it: the KV heads for dK and dV
   (grouped-query heads), else the query heads. */
size_t
de_stage_heads(const de_problem *p, int s)
{
    return s == DE_DK || s == DE_DV ? p->nb * p->nhkv : p->heads;
}

size_t
de_stage_per_head(const de_problem *p, int s)
{
    switch (s) {
    case DE_LSE:
        return p->nq;
    case DE_DK:
    case DE_DV:
        return p->nk * p->d;
    case DE_S:
    case DE_P:
        return p->nq * p->nk;
    case DE_M:
    case DE_L:
        return p->nq * p->tc;
    case DE_ACC:
        return p->nq * p->tc * p->d;
    default:
        return p->nq * p->d;
    }
}

/* KV blocks the fa2 kernel visits for query block MB (its n_block_max;
   the library's rule, with C's truncating division). */
static size_t
fa2_blocks(const de_problem *p, size_t mb)
{
    long long num, n;

    if (!p->causal)
        return p->tc;
    num = (long long)((mb + 1) * p->br)
          + (p->top_left ? 0 : (long long)p->nk - (long long)p->nq);
    n = (num + (long long)p->bc - 1) / (long long)p->bc;
    if (n <= 0)
        return 0;
    return (size_t)n < p->tc ? (size_t)n : p->tc;
}

/* The accumulator after each visited KV block of head HH into
   p->emu[DE_ACC]: OBAR holds Tc slots of [Nq, d]; slot 0 is the whole
   problem's O~ on entry.  Slot j (j >= 1) gets the O~ of the problem
   restricted to the keys from block j on: the kernel visits blocks in
   reverse, so after it has visited block j a row has seen exactly that
   suffix, in the same order, with the same tiles and mask (the causal
   offset Nk - Nq and n_block_max both shift by whole blocks).  0 or -1. */
static int
acc_head(const de_problem *p, size_t hh, const uint16_t *q, const uint16_t *k,
         const uint16_t *v, uint32_t *obar)
{
    size_t nq = p->nq, d = p->d, tc = p->tc;
    uint32_t *o = malloc(nq * d * sizeof *o), *lse = malloc(nq * sizeof *lse);
    uint32_t *dst = p->emu[DE_ACC] + hh * nq * tc * d;
    int rc = 0;

    if (o == NULL || lse == NULL)
        rc = -1;
    for (size_t j = 1; j < tc && rc == 0; j++) {
        fa_config c = *p->hcfg;
        fa_capture cap;
        sf_env env = p->env;
        size_t off = j * p->bc * d;
        memset(&cap, 0, sizeof cap);
        cap.obar = obar + j * nq * d;
        c.shape.nk = p->nk - j * p->bc;
        if (fa_forward(&c, q, k + off, v + off, o, lse, &cap, &env) != 0)
            rc = -1;
    }
    for (size_t i = 0; i < nq && rc == 0; i++) {
        size_t nvb = fa2_blocks(p, i / p->br);
        for (size_t vi = 0; vi < tc; vi++) {
            size_t slot = vi < nvb ? nvb - 1 - vi : 0;
            memcpy(dst + (i * tc + vi) * d, obar + (slot * nq + i) * d,
                   d * sizeof *dst);
        }
    }
    free(o);
    free(lse);
    return rc;
}

/* The K and V head that query head HH (of B H) reads (grouped-query
   heads: H / Hkv query heads per KV head, in order). */
static size_t
kv_head(const de_problem *p, size_t hh)
{
    size_t g = p->nhkv != 0 && p->nh % p->nhkv == 0 ? p->nh / p->nhkv : 1;

    return hh / p->nh * (p->nh / g) + hh % p->nh / g;
}

/* The backward of group GI (gqa_dkv "chain": its G query heads against
   their KV head, at once); 0 or -1. */
int
de_emu_group(const de_problem *p, size_t gi)
{
    size_t g = p->chain, hh = gi * g;
    size_t nq = p->nq, nk = p->nk, d = p->d, kh = kv_head(p, hh);
    sf_env env = p->env;
    fa_attn_mask hm;
    fa_config hc = am_head_config(p->hcfg, p->mask, hh, &hm);

    hc.shape.heads = g;
    hc.gqa_group = g;
    hc.lse_kernel = p->lse2 != NULL ? p->lse2 + hh * nq : NULL;
    return fa_backward(
        &hc, p->in[DE_IN_Q] + hh * nq * d, p->in[DE_IN_K] + kh * nk * d,
        p->in[DE_IN_V] + kh * nk * d,
        p->gpu[DE_O] != NULL ? p->gpu[DE_O] + hh * nq * d : NULL,
        p->gpu[DE_LSE] != NULL ? p->gpu[DE_LSE] + hh * nq : NULL,
        p->in[DE_IN_DO] + hh * nq * d, p->delta + hh * nq,
        p->emu[DE_DQ] + hh * nq * d, p->emu[DE_DK] + hh * nk * d,
        p->emu[DE_DV] + hh * nk * d, NULL, &env);
}

/* The emulator on head HH; 0 or -1. */
int
de_emu_head(const de_problem *p, size_t hh)
{
    size_t nq = p->nq, nk = p->nk, d = p->d, kh = kv_head(p, hh);
    const uint16_t *q = p->in[DE_IN_Q] + hh * nq * d;
    const uint16_t *k = p->in[DE_IN_K] + kh * nk * d;
    const uint16_t *v = p->in[DE_IN_V] + kh * nk * d;
    sf_env env = p->env;
    fa_capture cap;
    uint32_t *obar = NULL;
    int rc = 0;

    memset(&cap, 0, sizeof cap);
    if (p->want[DE_S])
        cap.s = p->emu[DE_S] + hh * nq * nk;
    if (p->want[DE_P])
        cap.p = p->emu[DE_P] + hh * nq * nk;
    if (p->want[DE_M])
        cap.m = p->emu[DE_M] + hh * nq * p->tc;
    if (p->want[DE_L])
        cap.l = p->emu[DE_L] + hh * nq * p->tc;
    if (p->want[DE_ACC]) {
        /* O~ of the whole problem and of each suffix of KV blocks */
        obar = malloc(p->tc * nq * d * sizeof *obar);
        if (obar == NULL)
            return -1;
        cap.obar = obar;
    }
    if (p->lse2 != NULL)
        cap.lse_kernel = p->lse2 + hh * nq;
    fa_attn_mask hm;
    fa_config hc = am_head_config(p->hcfg, p->mask, hh, &hm);
    if (fa_forward(&hc, q, k, v, p->emu[DE_O] + hh * nq * d,
                   p->emu[DE_LSE] + hh * nq,
                   p->want_cap || p->lse2 != NULL ? &cap : NULL, &env)
        != 0) {
        free(obar);
        return -1;
    }
    if (obar != NULL) {
        rc = acc_head(p, hh, q, k, v, obar);
        free(obar);
        if (rc != 0)
            return rc;
    }
    if (!p->need_bwd || p->chain > 1)
        return 0; /* the group's backward runs once (emu_group) */
    env = p->env;
    hc.lse_kernel = p->lse2 != NULL ? p->lse2 + hh * nq : NULL;
    return fa_backward(
        &hc, q, k, v, p->gpu[DE_O] != NULL ? p->gpu[DE_O] + hh * nq * d : NULL,
        p->gpu[DE_LSE] != NULL ? p->gpu[DE_LSE] + hh * nq : NULL,
        p->in[DE_IN_DO] + hh * nq * d, p->delta + hh * nq,
        p->emu[DE_DQ] + hh * nq * d, p->emu[DE_DK] + hh * nk * d,
        p->emu[DE_DV] + hh * nk * d, NULL, &env);
}

/* The exact reference of head HH: AX_OK or an ax code. */
static int
exact_run(const de_problem *p, size_t hh)
{
    fa_attn_mask hm;
    fa_config hc = am_head_config(p->hcfg, p->mask, hh, &hm);
    size_t nq = p->nq, nk = p->nk, d = p->d, kh = kv_head(p, hh);
    const uint16_t *q = p->in[DE_IN_Q] + hh * nq * d;
    const uint16_t *k = p->in[DE_IN_K] + kh * nk * d;
    const uint16_t *v = p->in[DE_IN_V] + kh * nk * d;
    ax_options opt = {0, AX_DIRECT};
    ax_outputs out;

    memset(&out, 0, sizeof out);
    if (p->ex[DE_O] != NULL)
        out.o.d = p->ex[DE_O] + hh * nq * d;
    if (p->ex[DE_LSE] != NULL)
        out.lse.d = p->ex[DE_LSE] + hh * nq;
    if (!p->need_bwd)
        return ax_forward_ex(&hc, &opt, q, k, v, &out);
    if (p->ex[DE_DQ] != NULL)
        out.dq.d = p->ex[DE_DQ] + hh * nq * d;
    if (p->ex[DE_DK] != NULL)
        out.dk.d = p->ex[DE_DK] + hh * nk * d;
    if (p->ex[DE_DV] != NULL)
        out.dv.d = p->ex[DE_DV] + hh * nk * d;
    return ax_backward_ex(&hc, &opt, q, k, v, p->in[DE_IN_DO] + hh * nq * d,
                          NULL, &out);
}

int
de_exact_head(const de_problem *p, size_t hh)
{
    int rc = exact_run(p, hh);

    if (rc == AX_EINPUT || rc == AX_ERANGE) {
        /* no exact values for this head */
        for (int s = 0; s < DE_N_STAGES; s++)
            if (p->ex[s] != NULL) {
                size_t per = de_stage_per_head(p, s);
                for (size_t j = 0; j < per; j++)
                    p->ex[s][hh * per + j] = NAN;
            }
    }
    return rc;
}

/*----------------------------------------------------------------------------
 * The comparison.
 *--------------------------------------------------------------------------*/
/* BITS32 (an FP32 pattern whose value lies on FMT) as FMT's pattern. */
static uint64_t
to_fmt(const de_problem *p, const sf_format *fmt, uint32_t bits32)
{
    sf_env env = p->env;

    if (fmt == &sf_format_f32)
        return bits32;
    return sf_convert(fmt, &sf_format_f32, bits32, SF_RNE, &env);
}

/* (computed - exact) in ulps of FMT at the exact value E. */
static double
err_ulps(const sf_format *fmt, uint32_t bits32, double e)
{
    double u = ax_error_ulps(&sf_format_f32, bits32, e);

    if (fmt != &sf_format_f32 && isfinite(u))
        u = ldexp(u, ax_ulp_exp(&sf_format_f32, e) - ax_ulp_exp(fmt, e));
    return u;
}

/* The hash (analysis/dump_outputs.h) of the emulator's whole stage S in
   format F as the dump stores it: BF16 / F16 patterns, or FP32 ones
   (F32_FILE); 0 when out of memory. */
static uint64_t
emu_hash(const de_problem *p, int s, const sf_format *f, bool f32_file)
{
    size_t n = de_stage_heads(p, s) * de_stage_per_head(p, s);
    uint64_t h = 0;

    if (f32_file) {
        uint32_t *b = malloc(n * sizeof *b);
        if (b == NULL)
            return 0;
        for (size_t j = 0; j < n; j++) {
            sf_env env = p->env;
            b[j] = f == &sf_format_f32
                       ? p->emu[s][j]
                       : (uint32_t)sf_convert(&sf_format_f32, f,
                                              to_fmt(p, f, p->emu[s][j]),
                                              SF_RNE, &env);
        }
        h = dump_hash32(b, n);
        free(b);
    } else {
        uint16_t *b = malloc(n * sizeof *b);
        if (b == NULL)
            return 0;
        for (size_t j = 0; j < n; j++)
            b[j] = (uint16_t)to_fmt(p, f, p->emu[s][j]);
        h = dump_hash16(b, n);
        free(b);
    }
    return h;
}

void
de_compare_stage(const de_problem *p, int s, uint64_t tol, bool f32_file,
                 uint64_t kept_hash, de_stage *r)
{
    size_t n = de_stage_heads(p, s) * de_stage_per_head(p, s);
    const uint32_t *g = p->gpu[s], *m = p->emu[s];

    r->on = true;
    cmp_init(&r->c, DE_N_WORST);
    r->whole = n;
    bias_cell_init(&r->err_gpu);
    bias_cell_init(&r->err_emu);
    if (p->kmask[s] != NULL) {
        r->kept = true;
        r->emu_hash = emu_hash(p, s, r->fmt, f32_file);
        r->hash_equal = r->emu_hash == kept_hash;
    }
    for (size_t j = 0; j < n; j++) {
        cmp_elem e;
        if (p->kmask[s] != NULL && !p->kmask[s][j])
            continue; /* a row the dump does not keep */
        e.flat = j;
        e.dist = 0;
        e.x = g[j];
        e.y = m[j];
        cmp_add(&r->c, r->fmt, to_fmt(p, r->fmt, g[j]),
                to_fmt(p, r->fmt, m[j]), tol, e);
        if (p->ex[s] != NULL) {
            double ex = p->ex[s][j];
            if (!isfinite(ex)) {
                r->skipped++;
                continue;
            }
            bias_cell_add(&r->err_gpu, err_ulps(r->fmt, g[j], ex));
            bias_cell_add(&r->err_emu, err_ulps(r->fmt, m[j], ex));
        }
    }
    r->have_exact = p->ex[s] != NULL;
    /* a cut output: the hash tells bit-equality of the whole tensor only,
       so it decides with --tol 0 */
    r->pass =
        r->c.within == r->c.elements && (!r->kept || r->hash_equal || tol > 0);
}

/* Whether the GPU's and the emulator's values of stage S differ at flat
   index J (in the stage's format F). */
static bool
differs(const de_problem *p, int s, const sf_format *f, size_t j)
{
    if (p->kmask[s] != NULL && !p->kmask[s][j])
        return false; /* not kept: unknown */
    return to_fmt(p, f, p->gpu[s][j]) != to_fmt(p, f, p->emu[s][j]);
}

/* Where the row of O element FLAT first diverges: KV blocks in visiting
   order, in each the stages s, m, p (the row's keys of the block), l and
   acc (the element's column). */
static void
trace_o(const de_problem *p, const de_stage r[DE_N_STAGES], de_trace *tr)
{
    size_t d = p->d, nq = p->nq, nk = p->nk, tc = p->tc;
    size_t col = (size_t)(tr->flat % d), row = (size_t)(tr->flat / d);
    size_t i = row % nq, nvb = fa2_blocks(p, i / p->br);

    tr->found = false;
    for (size_t vi = 0; vi < nvb; vi++) {
        size_t jb = nvb - 1 - vi, k0 = jb * p->bc;
        size_t k1 = k0 + p->bc < nk ? k0 + p->bc : nk;
        size_t xm = row * tc + vi;
        int st = -1;
        for (size_t key = k0; key < k1 && st < 0; key++)
            if (differs(p, DE_S, r[DE_S].fmt, row * nk + key))
                st = DE_S;
        if (st < 0 && differs(p, DE_M, r[DE_M].fmt, xm))
            st = DE_M;
        for (size_t key = k0; key < k1 && st < 0; key++)
            if (differs(p, DE_P, r[DE_P].fmt, row * nk + key))
                st = DE_P;
        if (st < 0 && differs(p, DE_L, r[DE_L].fmt, xm))
            st = DE_L;
        if (st < 0 && differs(p, DE_ACC, r[DE_ACC].fmt, xm * d + col))
            st = DE_ACC;
        if (st >= 0) {
            tr->found = true;
            tr->visit = vi;
            tr->block = jb;
            tr->stage = st;
            return;
        }
    }
    tr->stage = DE_O;
}

int
de_first_divergent(const de_stage r[DE_N_STAGES])
{
    for (int s = 0; s < DE_DQ; s++)
        if (r[s].on && r[s].c.differ > 0)
            return s;
    return -1;
}

size_t
de_trace_worst(const de_problem *p, const de_stage r[DE_N_STAGES],
               de_trace tr[DE_N_WORST])
{
    bool all = true;

    for (int s = DE_S; s <= DE_O; s++)
        all = all && p->want[s];
    if (!all)
        return 0;
    for (size_t n = 0; n < r[DE_O].c.n_worst; n++) {
        tr[n].flat = r[DE_O].c.worst[n].flat;
        trace_o(p, r, &tr[n]);
    }
    return r[DE_O].c.n_worst;
}

/* attn_run.c -- bf16emu attn's computation: the memory estimate, the
   cost, the allocation, the heads through the library and the exact
   reference, and the statistics of the errors */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat, strdup, strndup, sysconf */
#endif

#include "experiments/attn_local.h"

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool
bf16_nonfinite(uint16_t x)
{
    return (x & 0x7F80u) == 0x7F80u;
}

/*----------------------------------------------------------------------------
 * Memory.
 *--------------------------------------------------------------------------*/
static uint64_t
physical_memory(void)
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0)
        return cli_sat_mul((uint64_t)pages, (uint64_t)size);
#endif
    return UINT64_MAX;
}

uint64_t
attn_default_max_memory(void)
{
    uint64_t p = physical_memory();
    return p < MAX_MEMORY_DEFAULT ? p : MAX_MEMORY_DEFAULT;
}

/* Threads that run at once: at most one per head. */
static uint64_t
concurrent(const attn_ctx *x)
{
    uint64_t t = x->threads == 0 ? 1 : x->threads;
    return t < x->heads ? t : (uint64_t)x->heads;
}

void
attn_estimate_memory(attn_ctx *x)
{
    mem_estimate *m = &x->mem;
    uint64_t bh = (uint64_t)x->heads, nq = x->nq, nk = x->nk, d = x->d;
    uint64_t qd = cli_sat_mul(bh, cli_sat_mul(nq, d)),
             kd = cli_sat_mul(bh, cli_sat_mul(nk, d));
    uint64_t rows = cli_sat_mul(bh, nq), sp = cli_sat_mul(rows, nk);
    uint64_t t = concurrent(x), e;

    memset(m, 0, sizeof *m);
    /* inputs: BF16 Q, K, V (dO) */
    e = sat_add(sat_add(qd, kd), kd);
    if (x->backward)
        e = sat_add(e, qd);
    m->inputs = cli_sat_mul(e, 2);
    /* outputs: FP32 O, LSE (delta, dQ, dK, dV) */
    e = sat_add(qd, rows);
    if (x->backward)
        e = sat_add(e, sat_add(sat_add(rows, qd), cli_sat_mul(kd, 2)));
    m->outputs = cli_sat_mul(e, 4);
    /* captures, FP32 */
    e = 0;
    for (int i = 0; i < N_CAP; i++) {
        uint64_t n;
        if (!(x->captures & (1u << i)) && !(i == CAP_P && x->p_internal))
            continue;
        n = i == CAP_M || i == CAP_L ? cli_sat_mul(rows, x->tc)
            : i == CAP_OBAR          ? qd
                                     : sp;
        e = sat_add(e, n);
    }
    m->captures = cli_sat_mul(e, 4);
    /* the library's working memory, per concurrent head */
    m->workspace = cli_sat_mul(fa_workspace_bytes(&x->hcfg), t);
    /* the exact reference: doubles of every compared output, and MPFR
       numbers per concurrent head */
    if (x->exact_run) {
        e = sat_add(qd, rows);
        if (x->backward)
            e = sat_add(e, sat_add(sat_add(rows, qd), cli_sat_mul(kd, 2)));
        m->exact = cli_sat_mul(e, 8);
        e = sat_add(cli_sat_mul(sat_add(nq, cli_sat_mul(3, nk)), d),
                    sat_add(cli_sat_mul(4, nk), 64));
        m->exact =
            sat_add(m->exact, cli_sat_mul(cli_sat_mul(e, MP_NUMBER_BYTES), t));
    }
    if (x->trace)
        m->trace =
            sat_add(cli_sat_mul(cli_sat_mul(x->trace_keep, sizeof(trace_ev)),
                                x->backward ? 2 : 1),
                    2 * sizeof(bias_acc));
    m->total = sat_add(sat_add(sat_add(m->inputs, m->outputs),
                               sat_add(m->captures, m->workspace)),
                       sat_add(m->exact, m->trace));
}

bool
attn_check_memory(attn_ctx *x)
{
    const mem_estimate *m = &x->mem;
    char a[6][40], tot[40], lim[40];

    if (m->total <= x->max_memory)
        return true;
    cli_error(CMD,
              "B %zu, H %zu, Nq %zu, Nk %zu, d %zu needs about %s (%" PRIu64
              " bytes: inputs %s, outputs %s, captures %s, working memory %s, "
              "exact reference %s, trace %s), more than the limit of %s%s",
              x->nb, x->nh, x->nq, x->nk, x->d,
              bytes_str(tot, sizeof tot, m->total), m->total,
              bytes_str(a[0], sizeof a[0], m->inputs),
              bytes_str(a[1], sizeof a[1], m->outputs),
              bytes_str(a[2], sizeof a[2], m->captures),
              bytes_str(a[3], sizeof a[3], m->workspace),
              bytes_str(a[4], sizeof a[4], m->exact),
              bytes_str(a[5], sizeof a[5], m->trace),
              bytes_str(lim, sizeof lim, x->max_memory),
              x->max_memory_given ? " (--max-memory)"
                                  : " (the default: the smaller of 8 GiB and "
                                    "the physical memory; see --max-memory)");
    return false;
}

/* Before reading files: their sizes against the limit. */
bool
attn_check_file_sizes(const attn_ctx *x)
{
    uint64_t total = 0;
    char a[40], b[40];

    for (int i = 0; i < N_IN; i++) {
        struct stat st;
        bool dup = false;
        if (x->in[i].arg == NULL || stat(x->in[i].path, &st) != 0)
            continue;
        for (int j = 0; j < i; j++)
            dup =
                dup
                || (x->in[j].arg != NULL && x->in[j].have_id
                    && x->in[j].dev == st.st_dev && x->in[j].ino == st.st_ino);
        if (!dup && st.st_size > 0)
            total = sat_add(total, (uint64_t)st.st_size);
    }
    if (total <= x->max_memory)
        return true;
    cli_error(CMD,
              "the input files hold %s (%" PRIu64
              " bytes), more than the memory limit of %s (--max-memory)",
              bytes_str(a, sizeof a, total), total,
              bytes_str(b, sizeof b, x->max_memory));
    return false;
}

/*----------------------------------------------------------------------------
 * The cost.
 *--------------------------------------------------------------------------*/
/* The cost line on stderr, before the computation. */
void
attn_cost_report(const attn_ctx *x)
{
    cli_buf b;

    cli_buf_init(&b);
    attn_cost_text(&b, x);
    if (!b.failed)
        fprintf(stderr, "bf16emu %s: %s\n", CMD, b.p);
    fflush(stderr);
    cli_buf_free(&b);
}

/*----------------------------------------------------------------------------
 * Allocation.
 *--------------------------------------------------------------------------*/
static void *
alloc_n(size_t n, size_t size)
{
    if (n == 0)
        n = 1;
    return calloc(n, size);
}

bool
attn_allocate(attn_ctx *x)
{
    size_t bh = x->heads, qd = bh * x->nq * x->d, kd = bh * x->nk * x->d;
    size_t rows = bh * x->nq, sp = rows * x->nk;
    const size_t out_n[N_OUT] = {qd, rows, rows, qd, kd, kd};
    bool ok = true;

    if (x->gen_on) {
        const size_t in_n[N_IN] = {qd, kd, kd, qd};
        for (int i = 0; i < N_IN; i++) {
            if (i == IN_DO && !x->backward)
                continue;
            x->gen_buf[i] = alloc_n(in_n[i], sizeof(uint16_t));
            x->data[i] = x->gen_buf[i];
            ok = ok && x->gen_buf[i] != NULL;
        }
    }
    if (x->backward && fa_config_kernel(&x->cfg)->bwd == FA_BWD_FLEX) {
        /* the forward's base-2 LSE, which the flex backward reads */
        x->lse2 = alloc_n(rows, sizeof(uint32_t));
        ok = ok && x->lse2 != NULL;
    }
    for (int i = 0; i < N_OUT; i++) {
        if (i > OUT_LSE && !x->backward)
            continue;
        x->res[i] = alloc_n(out_n[i], sizeof(uint32_t));
        ok = ok && x->res[i] != NULL;
        if (x->exact_run) {
            x->ex[i] = alloc_n(out_n[i], sizeof(double));
            ok = ok && x->ex[i] != NULL;
        }
    }
    for (int i = 0; i < N_CAP; i++) {
        size_t n;
        if (!(x->captures & (1u << i)) && !(i == CAP_P && x->p_internal))
            continue;
        n = i == CAP_M || i == CAP_L ? rows * x->tc : i == CAP_OBAR ? qd : sp;
        x->cap[i] = alloc_n(n, sizeof(uint32_t));
        ok = ok && x->cap[i] != NULL;
    }
    for (int i = 0; x->trace && i < (x->backward ? 2 : 1); i++) {
        trace_log *t = &x->tr[i];
        t->cap = (size_t)x->trace_keep;
        t->ring = alloc_n(t->cap, sizeof(trace_ev));
        t->acc = malloc(sizeof *t->acc);
        ok = ok && t->ring != NULL && t->acc != NULL;
        if (t->acc != NULL)
            bias_init(t->acc);
    }
    if (!ok)
        cli_error(CMD, "out of memory (the estimate was %" PRIu64 " bytes)",
                  x->mem.total);
    return ok;
}

/*----------------------------------------------------------------------------
 * The computation.
 *--------------------------------------------------------------------------*/
static void
trace_event(void *user, const sf_event *ev)
{
    trace_log *t = user;
    trace_ev *e;

    t->total++;
    bias_add_event(t->acc, ev);
    if (t->cap == 0)
        return;
    e = &t->ring[t->next];
    t->next = (t->next + 1) % t->cap;
    if (t->n < t->cap)
        t->n++;
    e->seq = t->total;
    e->op = ev->op;
    e->fmt = ev->fmt;
    e->n_in = ev->n_in > 3 ? 3 : ev->n_in;
    for (unsigned i = 0; i < 3; i++) {
        e->in_fmt[i] = ev->in_fmt[i];
        e->in[i] = ev->in[i];
    }
    e->result = ev->result;
    e->dir = ev->dir;
    e->guard = ev->guard;
    e->round = ev->round;
    e->sticky = ev->sticky;
    e->tie = ev->tie;
    e->err_ulps = sf_event_error_ulps(ev);
    e->flags = ev->flags;
}

/* The captures of head HH (offsets into the whole tensors). */
static void
head_capture(const attn_ctx *x, size_t hh, fa_capture *cap)
{
    size_t sp = x->nq * x->nk, ml = x->nq * x->tc, od = x->nq * x->d;

    memset(cap, 0, sizeof *cap);
    cap->s = x->cap[CAP_S] ? x->cap[CAP_S] + hh * sp : NULL;
    cap->p = x->cap[CAP_P] ? x->cap[CAP_P] + hh * sp : NULL;
    cap->m = x->cap[CAP_M] ? x->cap[CAP_M] + hh * ml : NULL;
    cap->l = x->cap[CAP_L] ? x->cap[CAP_L] + hh * ml : NULL;
    cap->obar = x->cap[CAP_OBAR] ? x->cap[CAP_OBAR] + hh * od : NULL;
    cap->dp = x->cap[CAP_DP] ? x->cap[CAP_DP] + hh * sp : NULL;
    cap->ds = x->cap[CAP_DS] ? x->cap[CAP_DS] + hh * sp : NULL;
}

static size_t
traced_head(const attn_ctx *x)
{
    return (size_t)(x->trace_at[0] * x->nh + x->trace_at[1]);
}

/* The K and V head that query head HH (of B H) reads: its group's
   (grouped-query heads: H / Hkv query heads per KV head, in order). */
static size_t
kv_head(const attn_ctx *x, size_t hh)
{
    size_t g = x->nhkv != 0 && x->nh % x->nhkv == 0 ? x->nh / x->nhkv : 1;

    return hh / x->nh * (x->nh / g) + hh % x->nh / g;
}

/* The query heads per KV head when the description's backward walks a
   group at once (gqa_dkv "chain"), else 1. */
static size_t
chained_groups(const attn_ctx *x)
{
    return fa_cli_chained_groups(&x->cfg, x->nh, x->nhkv);
}

/* The backward of group GI (gqa_dkv "chain": its G query heads against
   their KV head, at once); 0 or -1. */
static int
run_group(const attn_ctx *x, size_t gi, unsigned *bfl)
{
    size_t g = chained_groups(x), hh = gi * g;
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint32_t *o = x->bwd_o != NULL ? x->bwd_o : x->res[OUT_O];
    const uint32_t *lse = x->bwd_o != NULL ? x->bwd_lse : x->res[OUT_LSE];
    sf_env env = cli_env_ieee();
    fa_attn_mask hm;
    fa_config hc =
        am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL, hh, &hm);

    hc.shape.heads = g;
    hc.gqa_group = g;
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    if (fa_backward(&hc, x->data[IN_Q] + hh * nq * d,
                    x->data[IN_K] + kh * nk * d, x->data[IN_V] + kh * nk * d,
                    o + hh * nq * d, lse + hh * nq,
                    x->data[IN_DO] + hh * nq * d, x->res[OUT_DELTA] + hh * nq,
                    x->res[OUT_DQ] + hh * nq * d, x->res[OUT_DK] + hh * nk * d,
                    x->res[OUT_DV] + hh * nk * d, NULL, &env)
        != 0)
        return -1;
    *bfl |= env.flags;
    return 0;
}

/* The forward (and backward) of head HH; 0 or -1. */
static int
run_head(const attn_ctx *x, size_t hh, unsigned *ffl, unsigned *bfl)
{
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint16_t *q = x->data[IN_Q] + hh * nq * d;
    const uint16_t *k = x->data[IN_K] + kh * nk * d;
    const uint16_t *v = x->data[IN_V] + kh * nk * d;
    uint32_t *o = x->res[OUT_O] + hh * nq * d,
             *lse = x->res[OUT_LSE] + hh * nq;
    sf_event_sink sink[2];
    fa_capture cap;
    sf_env env = cli_env_ieee();
    bool traced = x->trace && hh == traced_head(x);

    head_capture(x, hh, &cap);
    if (x->lse2 != NULL)
        cap.lse_kernel = x->lse2 + hh * nq;
    if (traced) {
        sink[0].fn = trace_event;
        sink[0].user = (void *)&x->tr[0];
        cap.trace = true;
        cap.trace_row = (size_t)x->trace_at[2];
        cap.trace_col = (size_t)x->trace_at[3];
        cap.events = &sink[0];
    }
    fa_attn_mask hm;
    fa_config hc =
        am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL, hh, &hm);
    if (fa_forward(&hc, q, k, v, o, lse, &cap, &env) != 0)
        return -1;
    *ffl |= env.flags;
    if (!x->backward || chained_groups(x) > 1)
        return 0; /* the group's backward runs once (run_group) */
    if (traced) {
        sink[1].fn = trace_event;
        sink[1].user = (void *)&x->tr[1];
        cap.events = &sink[1];
    }
    env = cli_env_ieee();
    if (x->bwd_o != NULL) {
        /* the GPU's O and LSE (--o, --lse) in place of the forward's */
        o = x->bwd_o + hh * nq * d;
        lse = x->bwd_lse + hh * nq;
    }
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    if (fa_backward(&hc, q, k, v, o, lse, x->data[IN_DO] + hh * nq * d,
                    x->res[OUT_DELTA] + hh * nq, x->res[OUT_DQ] + hh * nq * d,
                    x->res[OUT_DK] + hh * nk * d, x->res[OUT_DV] + hh * nk * d,
                    &cap, &env)
        != 0)
        return -1;
    *bfl |= env.flags;
    return 0;
}

/* The exact reference of head HH: AX_OK, or an ax code. */
static int
exact_head(const attn_ctx *x, size_t hh)
{
    fa_attn_mask hm;
    fa_config hc =
        am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL, hh, &hm);
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint16_t *q = x->data[IN_Q] + hh * nq * d;
    const uint16_t *k = x->data[IN_K] + kh * nk * d;
    const uint16_t *v = x->data[IN_V] + kh * nk * d;
    ax_options opt = {0, AX_DIRECT};
    ax_outputs out;

    memset(&out, 0, sizeof out);
    out.o.d = x->ex[OUT_O] + hh * nq * d;
    out.lse.d = x->ex[OUT_LSE] + hh * nq;
    if (!x->backward)
        return ax_forward_ex(&hc, &opt, q, k, v, &out);
    out.delta.d = x->ex[OUT_DELTA] + hh * nq;
    out.dq.d = x->ex[OUT_DQ] + hh * nq * d;
    out.dk.d = x->ex[OUT_DK] + hh * nk * d;
    out.dv.d = x->ex[OUT_DV] + hh * nk * d;
    return ax_backward_ex(&hc, &opt, q, k, v,
                          x->data[IN_DO] + hh * nq * d, NULL, &out);
}

/* Marks every exact value of head HH as missing (NaN). */
static void
exact_head_missing(const attn_ctx *x, size_t hh)
{
    size_t nq = x->nq, nk = x->nk, d = x->d;
    const size_t per[N_OUT] = {nq * d, nq, nq, nq * d, nk * d, nk * d};

    for (int i = 0; i < N_OUT; i++)
        if (x->ex[i] != NULL)
            for (size_t j = 0; j < per[i]; j++)
                x->ex[i][hh * per[i] + j] = NAN;
}

/* The generated inputs of head HH. */
static void
gen_inputs(const attn_ctx *x, size_t hh)
{
    size_t nq = x->nq, nk = x->nk, d = x->d;
    float scale;

    memcpy(&scale, &x->scale_used, sizeof scale);
    gen_head(&x->gen, scale, nq, nk, d, hh, x->gen_buf[IN_Q] + hh * nq * d,
             x->gen_buf[IN_K] + hh * nk * d, x->gen_buf[IN_V] + hh * nk * d,
             x->gen_buf[IN_DO] != NULL ? x->gen_buf[IN_DO] + hh * nq * d
                                       : NULL);
}

/* Starts the progress of a loop over the heads (nothing unless stderr is
   a terminal). */
static void
progress_begin(head_progress *p, const attn_ctx *x, const char *unit)
{
    p->on = x->tty && !x->dry_run;
    p->unit = unit;
    p->done = 0;
    p->total = (uint64_t)x->heads;
    p->t0 = p->last = cli_now_s();
}

/* One head done (from any thread of the loop); redrawn at most every
   PROGRESS_EVERY_S seconds. */
static void
progress_step(head_progress *p)
{
    if (!p->on)
        return;
#ifdef _OPENMP
#pragma omp critical(attn_progress)
#endif
    {
        double now = cli_now_s();
        p->done++;
        if (now - p->last >= PROGRESS_EVERY_S) {
            p->last = now;
            cli_progress(CMD, p->unit, true, p->done, p->total, p->t0, false);
        }
    }
}

static void
progress_end(const head_progress *p)
{
    if (p->on)
        cli_progress(CMD, p->unit, true, p->done, p->total, p->t0, true);
}

int
attn_thread_count(const attn_ctx *x)
{
    uint64_t t = concurrent(x);
    return t > 1024 ? 1024 : (int)t;
}

bool
attn_compute(attn_ctx *x)
{
    long long nh = (long long)x->heads;
    unsigned ffl = 0, bfl = 0;
    int failed = 0, nt = attn_thread_count(x);
    head_progress pg;

#ifdef _OPENMP
    x->threads_used = nt;
#else
    x->threads_used = 1;
    (void)nt;
#endif
    if (x->gen_on) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
        for (long long hh = 0; hh < nh; hh++)
            gen_inputs(x, (size_t)hh);
    }
    for (int i = 0; i < N_IN; i++) {
        size_t n;
        if (x->data[i] == NULL)
            continue;
        n = i == IN_K || i == IN_V ? x->nb * x->nhkv * x->nk * x->d
                                   : x->heads * x->nq * x->d;
        for (size_t j = 0; j < n; j++)
            x->nonfinite_in[i] += x->f16 ? (x->data[i][j] & 0x7C00u) == 0x7C00u
                                         : bf16_nonfinite(x->data[i][j]);
    }

    progress_begin(&pg, x,
                   x->backward ? "heads (forward and backward)"
                               : "heads (forward)");
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(|                                                               \
              : ffl, bfl, failed)
#endif
    for (long long hh = 0; hh < nh; hh++) {
        if (run_head(x, (size_t)hh, &ffl, &bfl) != 0)
            failed |= 1;
        progress_step(&pg);
    }
    progress_end(&pg);
    if (x->backward && chained_groups(x) > 1) {
        long long ng = nh / (long long)chained_groups(x);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : bfl, failed)
#endif
        for (long long gi = 0; gi < ng; gi++)
            if (run_group(x, (size_t)gi, &bfl) != 0)
                failed |= 1;
    }
    if (failed) {
        cli_error(CMD, "the attention library failed (out of memory for its "
                       "working memory)");
        return false;
    }
    x->flags_fwd = ffl;
    x->flags_bwd = bfl;
    return true;
}

/* Grouped-query heads: dK and dV of each query head become the KV
   head's (fa_cli_gqa_reduce), with the exact values.  False after an
   error message. */
bool
attn_reduce_groups(attn_ctx *x)
{
    size_t g = x->nh / x->nhkv, n = x->nk * x->d;

    for (int i = OUT_DK; i <= OUT_DV; i++)
        if (!fa_cli_gqa_reduce(CMD, &x->cfg, x->nb * x->nhkv, g, n,
                               x->res[i], x->ex[i]))
            return false;
    return true;
}

/* Codes of the exact reference that stop the run. */
bool
attn_exact_all(attn_ctx *x)
{
    long long nh = (long long)x->heads;
    int nt = attn_thread_count(x), bad = AX_OK;
    uint64_t n_input = 0, n_range = 0;
    head_progress pg;

    if (!mpfr_buildopt_tls_p())
        nt = 1; /* MPFR's caches are shared: one thread */
    progress_begin(&pg, x, "heads (exact reference)");
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                \
    reduction(+ : n_input, n_range)
#else
    (void)nt;
#endif
    for (long long hh = 0; hh < nh; hh++) {
        int rc = exact_head(x, (size_t)hh);
        progress_step(&pg);
        if (rc == AX_OK)
            continue;
        exact_head_missing(x, (size_t)hh);
        if (rc == AX_EINPUT) {
            n_input++;
        } else if (rc == AX_ERANGE) {
            n_range++;
        } else {
#ifdef _OPENMP
#pragma omp critical(attn_exact_error)
#endif
            bad = rc;
        }
    }
    progress_end(&pg);
    mpfr_free_cache();
    if (bad != AX_OK) {
        cli_error(CMD, "the exact reference failed: %s", ax_strerror(bad));
        return false;
    }
    x->heads_nonfinite = n_input;
    x->heads_range = n_range;
    return true;
}

/* The errors of output I (O, dQ, dK, dV: rows of d elements, N in all)
   relative to the row's scale (ax_row_errors). */
static void
stat_rows(attn_ctx *x, int i, size_t n)
{
    err_stat *st = &x->st[i];

    st->rows = true;
    bias_cell_init(&st->rel);
    bias_cell_init(&st->rel_mag);
    ax_row_errors(st->fmt, x->res[i], x->ex[i], n, x->d, &st->rel,
                  &st->rel_mag);
}

/* The errors of output I against the exact values. */
void
attn_stat_output(attn_ctx *x, int i)
{
    err_stat *st = &x->st[i];
    size_t bh = x->heads;
    size_t n = i == OUT_O || i == OUT_DQ    ? bh * x->nq * x->d
               : i == OUT_DK || i == OUT_DV ? x->nb * x->nhkv * x->nk * x->d
                                            : bh * x->nq;
    const uint32_t *got = x->res[i];
    const double *ex = x->ex[i];

    st->have = true;
    st->fmt = fa_output_format(&x->cfg, out_names[i]);
    if (st->fmt == NULL)
        st->fmt = &sf_format_f32;
    bias_cell_init(&st->err);
    bias_cell_init(&st->mag);
    for (size_t j = 0; j < n; j++) {
        double e = ex[j], u;
        if (!isfinite(e)) {
            st->skipped++;
            continue;
        }
        /* the error in FP32 ulps, correctly rounded, then scaled exactly
           to the output format's ulp (same exponent range) */
        u = ax_error_ulps(&sf_format_f32, got[j], e);
        if (st->fmt != &sf_format_f32 && isfinite(u))
            u = ldexp(u,
                      ax_ulp_exp(&sf_format_f32, e) - ax_ulp_exp(st->fmt, e));
        bias_cell_add(&st->err, u);
        if (isfinite(u))
            bias_cell_add(&st->mag, fabs(u));
    }
    if (i == OUT_O || i == OUT_DQ || i == OUT_DK || i == OUT_DV)
        stat_rows(x, i, n);
}

/* Rows whose P~ has entries exactly 1 (from the p capture). */
void
attn_count_rows(attn_ctx *x)
{
    const uint32_t *p = x->cap[CAP_P];
    size_t rows = x->heads * x->nq;

    if (p == NULL)
        return;
    x->rows_have = true;
    x->rows = rows;
    for (size_t r = 0; r < rows; r++) {
        unsigned ones = 0;
        for (size_t j = 0; j < x->nk && ones < 2; j++)
            ones += p[r * x->nk + j] == 0x3F800000u;
        x->rows_p1 += ones >= 1;
        x->rows_p2 += ones >= 2;
    }
}

/* diff.c -- bf16emu diff: the reference flash attention against a GPU
   dump, stage by stage: bit-equal counts, distances, worst elements, the
   first divergent stage and the signed errors of both against the exact
   reference.  This file: the options, the run and the computation; the
   dump and the configuration are diff_dump.c's, the reports
   diff_report.c's, the help diff_help.c's (diff_local.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <mpfr.h>

#include "experiments/diff_local.h"


/*----------------------------------------------------------------------------
 * Computation (analysis/diff_engine.h).
 *--------------------------------------------------------------------------*/
/* The engine's view of X: its dimensions, configuration and buffers. */
static void
problem(const diff_ctx *x, de_problem *p)
{
    memset(p, 0, sizeof *p);
    p->nb = x->nb;
    p->nh = x->nh;
    p->nhkv = x->nhkv;
    p->nq = x->nq;
    p->nk = x->nk;
    p->d = x->d;
    p->heads = x->heads;
    p->br = x->br;
    p->bc = x->bc;
    p->tc = x->tc;
    p->causal = x->causal;
    p->top_left = x->top_left;
    p->hcfg = &x->hcfg;
    p->mask = x->has_mask ? &x->mask : NULL;
    p->chain = fa_cli_chained_groups(&x->cfg, x->nh, x->nhkv);
    p->env = cli_env_ieee();
    memcpy(p->want, x->want, sizeof p->want);
    p->want_cap = x->want_cap;
    p->need_bwd = x->need_bwd;
    for (int i = 0; i < DE_N_IN; i++)
        p->in[i] = x->in[i];
    for (int s = 0; s < N_ST; s++) {
        p->gpu[s] = x->gpu[s];
        p->kmask[s] = x->kmask[s];
        p->emu[s] = x->emu[s];
        p->ex[s] = x->ex[s];
    }
    p->delta = x->delta;
    p->lse2 = x->lse2;
}

static bool
allocate(diff_ctx *x)
{
    de_problem p;

    problem(x, &p);
    for (int i = 0; i < 4; i++) {
        const tensor *t = x->t[i];
        if (t == NULL)
            continue;
        x->in[i] = malloc((size_t)t->n_elems * sizeof(uint16_t));
        if (x->in[i] == NULL)
            goto nomem;
        for (uint64_t j = 0; j < t->n_elems; j++)
            x->in[i][j] = (uint16_t)tensor_get_bits(t, j);
    }
    for (int s = 0; s < N_ST; s++) {
        /* the emulator's per query head (dK, dV of grouped heads summed
           later), the GPU's as the dump holds them */
        size_t n = x->heads * de_stage_per_head(&p, s);
        size_t n_gpu = de_stage_heads(&p, s) * de_stage_per_head(&p, s);
        bool gpu = x->want[s] || (x->need_bwd && !bwd_math(x)
                                  && (s == ST_O || s == ST_LSE));
        if (gpu) {
            const dump_kept *kp = &x->kept[st_tensor[s]];
            if (kp->kept && !x->want[s]) {
                cli_error(CMD,
                          "%s: kept in part (manifest: outputs_kept), but "
                          "the backward reads the GPU's whole %s",
                          x->src[st_tensor[s]], st_names[s]);
                return false;
            }
            x->gpu[s] = calloc(n_gpu, sizeof(uint32_t));
            if (x->gpu[s] == NULL)
                goto nomem;
            if (kp->kept) {
                x->kmask[s] = calloc(n_gpu, 1);
                if (x->kmask[s] == NULL)
                    goto nomem;
            }
            if (!diff_load_output(x, st_tensor[s], x->r[s].fmt,
                                  x->gpu[s], x->kmask[s]))
                return false;
        }
        if (is_capture(s) && !x->want[s])
            continue;
        x->emu[s] = calloc(n, sizeof(uint32_t));
        if (x->emu[s] == NULL)
            goto nomem;
        if (x->exact_run && x->want[s] && !is_capture(s)) {
            x->ex[s] = calloc(n, sizeof(double));
            if (x->ex[s] == NULL)
                goto nomem;
        }
    }
    x->delta = calloc(x->heads * x->nq, sizeof(uint32_t));
    if (x->delta == NULL)
        goto nomem;
    if (x->need_bwd && fa_config_kernel(&x->cfg)->bwd == FA_BWD_FLEX) {
        /* the forward's base-2 LSE, which the flex backward reads */
        x->lse2 = calloc(x->heads * x->nq, sizeof(uint32_t));
        if (x->lse2 == NULL)
            goto nomem;
    }
    return true;
nomem:
    cli_error(CMD, "out of memory");
    return false;
}

static int
thread_count(const diff_ctx *x)
{
#ifdef _OPENMP
    int n = omp_get_max_threads();
    if ((size_t)n > x->heads)
        n = (int)x->heads;
    return n < 1 ? 1 : n;
#else
    (void)x;
    return 1;
#endif
}

/* Grouped-query heads: the emulator's dK and dV of each query head
   become the KV head's by the description's rule (fa_cli_gqa_reduce),
   with the exact values.  False after an error message. */
static bool
reduce_groups(diff_ctx *x)
{
    size_t g = x->nhkv != 0 ? x->nh / x->nhkv : 1;

    if (!x->need_bwd || g <= 1)
        return true;
    for (int s = ST_DK; s <= ST_DV; s++)
        if (x->emu[s] != NULL
            && !fa_cli_gqa_reduce(CMD, &x->cfg, x->nb * x->nhkv, g,
                                  x->nk * x->d, x->emu[s], x->ex[s]))
            return false;
    return true;
}

/* The emulator on every head (and group), then the exact reference;
   false after an error message. */
static bool
compute(diff_ctx *x)
{
    long long nh = (long long)x->heads;
    int failed = 0, nt = thread_count(x);
    uint64_t skipped = 0;
    de_problem p;

    problem(x, &p);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(|                                                               \
              : failed)
#else
    (void)nt;
#endif
    for (long long hh = 0; hh < nh; hh++)
        if (de_emu_head(&p, (size_t)hh) != 0)
            failed |= 1;
    if (x->need_bwd && p.chain > 1) {
        long long ng = nh / (long long)p.chain;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : failed)
#endif
        for (long long gi = 0; gi < ng; gi++)
            if (de_emu_group(&p, (size_t)gi) != 0)
                failed |= 1;
    }
    if (failed) {
        cli_error(CMD, "the attention library failed (out of memory for its "
                       "working memory)");
        return false;
    }
    if (!x->exact_run)
        return reduce_groups(x);
    if (!mpfr_buildopt_tls_p())
        nt = 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : failed) reduction(+ : skipped)
#endif
    for (long long hh = 0; hh < nh; hh++) {
        int rc = de_exact_head(&p, (size_t)hh);
        if (rc == AX_EINPUT || rc == AX_ERANGE)
            skipped++; /* no exact values for this head */
        else if (rc != AX_OK)
            failed |= 1;
    }
    mpfr_free_cache();
    if (failed) {
        cli_error(CMD, "the exact reference failed (out of memory)");
        return false;
    }
    x->heads_skipped = skipped;
    return reduce_groups(x);
}

/* Each wanted stage compared, the first divergent stage and the traces
   of the worst O elements; X->pass. */
static void
compare(diff_ctx *x)
{
    de_problem p;

    problem(x, &p);
    x->pass = true;
    for (int s = 0; s < N_ST; s++)
        if (x->want[s]) {
            const tensor *t = x->t[st_tensor[s]];
            de_compare_stage(&p, s, x->tol,
                             t != NULL && t->dtype == TENSOR_F32,
                             x->kept[st_tensor[s]].hash, &x->r[s]);
            x->pass = x->pass && x->r[s].pass;
        }
    x->first_div = de_first_divergent(x->r);
    x->n_trace = de_trace_worst(&p, x->r, x->trace);
}

/* The index of flat element I of stage S: [b, h, row, col] ([b, h, row]
   for lse, [b, h, row, key] for s and p, [b, h, row, block] for m and l,
   [b, h, row, block, col] for acc). */
unsigned
diff_split_index(const diff_ctx *x, int s, uint64_t i, uint64_t idx[5])
{
    uint64_t rows = s == ST_DK || s == ST_DV ? x->nk : x->nq;
    uint64_t inner[2];
    unsigned ni = 0, nd;

    switch (s) {
    case ST_LSE:
        break;
    case ST_S:
    case ST_P:
        inner[ni++] = x->nk;
        break;
    case ST_M:
    case ST_L:
        inner[ni++] = x->tc;
        break;
    case ST_ACC:
        inner[ni++] = x->tc;
        inner[ni++] = x->d;
        break;
    default:
        inner[ni++] = x->d;
        break;
    }
    nd = 3 + ni;
    for (unsigned j = ni; j-- > 0;) {
        idx[3 + j] = i % inner[j];
        i /= inner[j];
    }
    idx[2] = i % rows;
    i /= rows;
    if (s == ST_DK || s == ST_DV) {
        /* K's heads: the file's KV head index */
        idx[1] = i % x->nhkv;
        idx[0] = i / x->nhkv;
        return nd;
    }
    idx[1] = i % x->nh;
    idx[0] = i / x->nh;
    /* a file that keeps some heads: the launch's indices */
    if (x->man_batch_from_given)
        idx[0] = x->man_batch_from[x->n_batch_from == 0 ? 0 : idx[1]];
    if (x->man_heads_kept_given)
        idx[1] = x->man_heads_kept[idx[1]];
    return nd;
}

/*----------------------------------------------------------------------------
 * Options.
 *--------------------------------------------------------------------------*/
enum
{
    O_HELP,
    O_DUMP,
    O_STAGE,
    O_TOLERANCE,
    O_ROWSUM,
    O_CALL,
    O_MASK,
    O_TENSOR /* O_TENSOR + T_Q .. T_DV: --q, --k, ... FILE[:KEY] */
};

static const cli_option options[] = {{"help", false, O_HELP},
                                     {"dump", true, O_DUMP},
                                     {"stage", true, O_STAGE},
                                     {"tolerance", true, O_TOLERANCE},
                                     {"fa2-rowsum", true, O_ROWSUM},
                                     {"call", true, O_CALL},
                                     {"mask", true, O_MASK},
                                     {"q", true, O_TENSOR + T_Q},
                                     {"k", true, O_TENSOR + T_K},
                                     {"v", true, O_TENSOR + T_V},
                                     {"do", true, O_TENSOR + T_DO},
                                     {"o", true, O_TENSOR + T_O},
                                     {"lse", true, O_TENSOR + T_LSE},
                                     {"dq", true, O_TENSOR + T_DQ},
                                     {"dk", true, O_TENSOR + T_DK},
                                     {"dv", true, O_TENSOR + T_DV},
                                     FA_CLI_KERNEL_OPTIONS,
                                     {"no-causal", false, FA_CLI_O_NO_CAUSAL},
                                     {NULL, false, 0}};

static bool
parse_stages(diff_ctx *x, const char *v)
{
    const char *p = v;

    memset(x->want, 0, sizeof x->want);
    x->stage_given = true;
    for (;;) {
        size_t n = strcspn(p, ",");
        int s;
        for (s = 0; s < N_ST; s++)
            if (strlen(st_names[s]) == n && strncmp(p, st_names[s], n) == 0)
                break;
        if (s == N_ST) {
            cli_error(CMD,
                      "--stage '%s': unknown stage '%.*s' (expected a "
                      "comma-separated list of s, m, p, l, acc, o, lse, dq, "
                      "dk, dv)",
                      v, (int)n, p);
            return false;
        }
        x->want[s] = true;
        if (p[n] == '\0')
            return true;
        p += n + 1;
    }
}

/* --fa2-rowsum fma|separate. */
static bool
take_rowsum(diff_ctx *x, const char *v)
{
    if (strcmp(v, "fma") != 0 && strcmp(v, "separate") != 0) {
        cli_error(CMD, "--fa2-rowsum '%s': expected fma or separate", v);
        return false;
    }
    x->rowsum_opt = v[0] == 'f' ? 1 : 0;
    return true;
}

static bool
take_option(void *ctx, int id, const char *v)
{
    diff_ctx *x = ctx;
    switch (id) {
    case O_DUMP:
        x->dump = v;
        return true;
    case FA_CLI_O_POLICY:
        if (!fa_cli_kernel_option(CMD, id, v, &x->kopt))
            return false;
        if (x->kopt.kernel_named || x->kopt.sdpa)
            x->sdpa_from = "--policy sdpa";
        return true;
    case O_MASK:
        x->mask_opd.opt = "--mask";
        x->mask_opd.arg = v;
        return cli_split_spec(CMD, &x->mask_opd);
    case O_STAGE:
        return parse_stages(x, v);
    case O_ROWSUM:
        return take_rowsum(x, v);
    case O_TOLERANCE:
        return cli_parse_u64(CMD, "--tolerance", v, &x->tol);
    case O_CALL:
        x->call = v;
        return true;
    default:
        if (id >= O_TENSOR && id <= O_TENSOR + T_DV) {
            x->opd[id - O_TENSOR].arg = v;
            return true;
        }
        return fa_cli_kernel_option(CMD, id, v, &x->kopt);
    }
}

static void
ctx_free(diff_ctx *x)
{
    for (int i = 0; i < 4; i++)
        free(x->in[i]);
    for (int s = 0; s < N_ST; s++) {
        free(x->gpu[s]);
        free(x->kmask[s]);
        free(x->emu[s]);
        free(x->ex[s]);
    }
    free(x->delta);
    free(x->lse2);
    for (int i = 0; i < N_T; i++) {
        tensor_free(&x->own[i]);
        dump_kept_free(&x->kept[i]);
        free(x->opd[i].path);
        free(x->call_arg[i]);
    }
    free(x->call_man);
    am_free(&x->mask);
    tensor_free(&x->mask_t);
    free(x->mask_opd.path);
    tensor_listing_free(&x->list);
    fa_cli_exp_free(&x->kopt.exp);
    fa_cli_log_free(&x->logm);
    free(x);
}

static bool
run(diff_ctx *x)
{
    if (x->call != NULL && !diff_call_operands(x))
        return false;
    if (x->dump == NULL && x->opd[T_Q].arg == NULL) {
        cli_error(CMD, "missing --dump FILE, or --q, --k, --v FILE[:KEY] "
                       "(see 'bf16emu diff --help')");
        return false;
    }
    for (int i = 0; i < N_T; i++)
        if (x->opd[i].arg != NULL && !cli_split_spec(CMD, &x->opd[i]))
            return false;
    if (!fa_cli_exact_options(CMD, &x->kopt))
        return false;
    if (!x->kopt.exp_given)
        fa_cli_exp_default(&x->kopt.exp); /* the description's, once known */
    if (!diff_read_dump(x) || !diff_build_config(x) || !diff_load_mask(x))
        return false;
    if (x->has_mask
        && fa_config_kernel(&x->cfg)->bias_add == FA_BIAS_NONE) {
        cli_error(CMD,
                  "%s: an attention mask, and the description '%s' takes "
                  "none (bias_add \"none\"; PyTorch's flash backend refuses "
                  "masks): pass --policy cudnn, efficient or math, the "
                  "backend that ran the call",
                  x->mask_src, fa_config_kernel(&x->cfg)->name);
        return false;
    }
    x->need_bwd = x->want[ST_DQ] || x->want[ST_DK] || x->want[ST_DV];
    if (x->need_bwd && x->nhkv != x->nh
        && fa_config_kernel(&x->cfg)->gqa_dkv == FA_GQA_NONE) {
        cli_error(CMD,
                  "--stage dq, dk, dv: grouped-query heads (%zu query heads "
                  "over %zu key/value heads): the description '%s' has no "
                  "rule for the sum of dK and dV over a group (gqa_dkv "
                  "\"none\"); pass --stage o,lse",
                  x->nh, x->nhkv, fa_config_kernel(&x->cfg)->name);
        return false;
    }
    if (x->need_bwd) {
        const char *why = fa_config_backward_refusal(&x->cfg, 1);
        if (why != NULL) {
            cli_error(CMD, "--stage dq, dk, dv: %s; pass --stage o,lse", why);
            return false;
        }
    }
    for (int s = ST_S; s <= ST_ACC; s++)
        x->want_cap = x->want_cap || x->want[s];
    if (x->splits > 1 && (x->want[ST_M] || x->want[ST_L] || x->want[ST_ACC])) {
        cli_error(CMD, "--stage: m, l and acc are not defined with --splits "
                       "above 1 (expected s, p, o, lse, dq, dk or dv)");
        return false;
    }
    if (x->want_cap && !fa2_like(x)) {
        cli_error(CMD,
                  "the stages s, m, p, l and acc are compared under --policy "
                  "fa2 only (the kernel dumps of experiments/gpu/fa_dump.cu)");
        return false;
    }
    x->exact_work = fa_cli_exact_work((uint64_t)x->heads, x->nq, x->nk, x->d,
                                      x->need_bwd);
    x->exact_note = fa_cli_exact_off(x->kopt.no_exact, x->kopt.softcap);
    if (x->exact_note == NULL) {
        if (!x->want[ST_O] && !x->want[ST_LSE] && !x->need_bwd)
            x->exact_note = "no stage with an exact value compared";
        else if (x->exact_work > EXACT_WORK_LIMIT && !x->kopt.exact_forced)
            x->exact_note = "B*H*Nq*Nk*d (x4 with a backward stage) is "
                            "above 2^26; give --exact to run it anyway";
        else
            x->exact_run = true;
    }
    if (!fa_cli_heads_usable(CMD, &x->hcfg, x->has_mask ? &x->mask : NULL,
                             x->heads)
        || !allocate(x) || !compute(x))
        return false;
    compare(x);
    return true;
}

int
diff_main(int argc, char **argv)
{
    diff_ctx *x = calloc(1, sizeof *x);
    cli_buf out;
    cli_json js;
    int id, rc;

    if (x == NULL)
        return cli_error(CMD, "out of memory");
    fa_cli_kernel_opts_init(&x->kopt, FA_POLICY_FA2);
    x->man_gqa = -1;
    x->rowsum_opt = -1;
    for (int i = 0; i < N_T; i++) {
        static const char *const opts[N_T] = {"--q",  "--k",  "--v",
                                              "--do", "--o",  "--lse",
                                              "--dq", "--dk", "--dv"};
        x->opd[i].opt = opts[i] != NULL ? opts[i] : t_names[i];
    }
    id = cli_take_options(CMD, argc, argv, options, O_HELP, diff_help,
                          "the dump is --dump FILE; see 'bf16emu diff "
                          "--help'",
                          take_option, x);
    if (id < 0)
        id = fa_cli_kernel_options(CMD, &x->kopt);
    if (id >= 0) {
        ctx_free(x);
        return id;
    }
    if (!run(x)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    rc = x->pass ? CLI_EXIT_OK : CLI_EXIT_CHECK;
    cli_buf_init(&out);
    if (x->kopt.json) {
        cli_json_init(&js, &out);
        diff_json_report(x, &js);
    } else {
        diff_text_report(x, &out);
    }
    cli_report_emit(CMD, &out, &rc);
    ctx_free(x);
    return rc;
}

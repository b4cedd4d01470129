/* attn.c -- bf16emu attn: the reference flash attention on given or
   generated Q, K, V (and dO), its outputs and captures written to a
   tensor file, and its signed errors against the exact reference.  This
   file: the run's steps and main. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat, strdup, strndup, sysconf */
#endif

#include "experiments/attn_local.h"

/*
 * What is computed.  Q, K, V (and dO for the backward) are BF16 tensors
 * (or FP16 ones, all four alike) [B, H, N, d], [H, N, d] or [N, d], read
 * from files or generated.  FP16 inputs run only under a description
 * defined for them (fa_cli_inputs_defined: none of its formats fixed to
 * BF16), and the header says which format O is written in.  The
 * forward (and backward) of attention/attention.h runs with the chosen
 * policy, fix, ablations, tiles, KV order, mask, scale and exp model, one
 * (batch, head) pair at a time, so the pairs can run in parallel threads;
 * each pair is independent, so the bits do not depend on the thread
 * count.  O, LSE (and delta, dQ, dK, dV) and the captures are FP32 bit
 * patterns; fa_output_format says which format each output's values lie
 * on (a BF16 value is stored widened, exactly), and the output file names
 * that format in its metadata ("format.o": "bf16").
 *
 * The exact reference (analysis/attn_exact.h, MPFR at 256 bits, the
 * direct evaluation) gives O, LSE, delta, dQ, dK, dV from the same BF16
 * inputs.  For each output, every element whose exact value is finite
 * gives a signed error (computed - exact) in ulps of the output's format at
 * the exact value (ax_error_ulps); elements whose exact value is not
 * finite (the LSE of a row with every key masked, -Inf) are left out and
 * counted as skipped.  A head whose inputs hold NaN or Inf has no exact
 * reference (attn_exact.h refuses them): its elements are skipped too.
 * The statistics per output are those of analysis/bias.h: count, mean,
 * standard error, t, the 95% interval of the normal approximation, sign
 * counts, the largest |error| and the mean |error|.  O, dQ, dK and dV
 * have the same statistics of their errors relative to the row's scale
 * (stat_rows): in ulps of the output's format at the largest |exact| of
 * the element's row of d, which an element near 0 cannot blow up.
 *
 * The exact reference costs about B H Nq Nk d operations at 256 bits
 * (0.3 us each on one core; the backward about three times more).  It
 * runs only while the work B H Nq Nk d (times 4 with --backward) is at
 * most EXACT_WORK_LIMIT = 2^26, about 20 s on one core, unless --exact
 * forces it; --no-exact skips it always.
 *
 * Memory is estimated before anything large is allocated (inputs,
 * outputs, captures, the library's working memory per thread, the exact
 * reference's arrays and its MPFR numbers per thread, the kept trace
 * events); a run whose estimate exceeds --max-memory (default the smaller
 * of 8 GiB and the physical memory) is refused.  For file inputs the
 * sizes of the files are checked against the limit before they are read.
 *
 * The cost.  Before computing, one line on stderr states the work in
 * units of B H Nq Nk d (times 4 with --backward, the unit the exact
 * reference's limit counts), which parts run, and the exact reference's
 * time on one core at EXACT_S_PER_UNIT (the emulated passes have no such
 * figure: their speed depends on the policy and the instruction set).
 * While stderr is a terminal, a bar there shows the heads done of each
 * parallel loop (the forward, the exact reference); it only writes to
 * stderr, so the results stay the same for every thread count.
 * --dry-run resolves everything (files read, description, tiles,
 * splits, the memory estimate), prints the report's header and the cost,
 * and stops before computing or writing anything.
 */
static void
ctx_free(attn_ctx *x)
{
    for (int i = 0; i < N_IN; i++) {
        free(x->in[i].path);
        tensor_free(&x->in[i].t);
        free(x->gen_buf[i]);
    }
    free(x->out.path);
    free(x->gpu_o.path);
    free(x->gpu_lse.path);
    tensor_free(&x->gpu_o.t);
    tensor_free(&x->gpu_lse.t);
    free(x->mask_opd.path);
    tensor_free(&x->mask_opd.t);
    am_free(&x->mask);
    free(x->bwd_o);
    free(x->bwd_lse);
    for (int i = 0; i < N_OUT; i++) {
        free(x->res[i]);
        free(x->ex[i]);
    }
    free(x->lse2);
    for (int i = 0; i < N_CAP; i++)
        free(x->cap[i]);
    for (int i = 0; i < 2; i++) {
        free(x->tr[i].ring);
        free(x->tr[i].acc);
    }
    fa_cli_exp_free(&x->kopt.exp);
    fa_cli_log_free(&x->logm);
    free(x);
}

/* Everything up to the report; false after an error message. */
/* --mask FILE[:KEY]: read, bound to the tensors' [B, H, Nq, Nk] (the
   launch when --launch gives it: a mask that varies over batch or heads
   must then be the launch's whole mask, which a file of some heads cannot
   index), and refused when the description takes none. */
static bool
read_mask(attn_ctx *x)
{
    const fa_kernel *k = fa_config_kernel(&x->cfg);
    tensor_error err;
    char msg[512];
    int rc;

    if (!cli_split_spec(CMD, &x->mask_opd))
        return false;
    if (k->bias_add == FA_BIAS_NONE) {
        cli_error(CMD,
                  "--mask: the description '%s' takes no attention mask "
                  "(bias_add \"none\"; PyTorch's flash backend refuses "
                  "masks): pass --policy cudnn, efficient or math",
                  k->name);
        return false;
    }
    if (x->kopt.causal) {
        cli_error(CMD, "--mask with --causal: SDPA refuses an attn_mask "
                       "with is_causal; put the causal mask into the mask");
        return false;
    }
    if (tensor_file_read(x->mask_opd.path, x->mask_opd.key, TENSOR_ANY,
                         &x->mask_opd.t, &err)
        != TENSOR_OK) {
        cli_error(CMD, "--mask: %s", err.message);
        return false;
    }
    rc = am_bind_file(&x->mask_opd.t, x->nb, x->nh, x->nq, x->nk, x->nb,
                      x->nh, NULL, false, NULL, &x->mask, msg, sizeof msg);
    if (rc != 0) {
        cli_error(CMD, "--mask %s: %s", x->mask_opd.arg, msg);
        return false;
    }
    x->has_mask = true;
    return true;
}

/* The file names of the inputs, the GPU's O and LSE and --out split
   from their keys, and the combinations of --o and --lse checked. */
static bool
split_specs(attn_ctx *x)
{
    for (int i = 0; i < N_IN; i++)
        if (x->in[i].arg != NULL && !cli_split_spec(CMD, &x->in[i]))
            return false;
    if ((x->gpu_o.arg == NULL) != (x->gpu_lse.arg == NULL)) {
        cli_error(CMD, "%s needs %s too (the GPU's O and LSE go together)",
                  x->gpu_o.arg != NULL ? "--o" : "--lse",
                  x->gpu_o.arg != NULL ? "--lse" : "--o");
        return false;
    }
    if (x->gpu_o.arg != NULL && (!x->backward || x->gen_on)) {
        cli_error(CMD, "--o and --lse are inputs of --backward with inputs "
                       "from files (--q, --k, --v, --do)");
        return false;
    }
    if (x->gpu_o.arg != NULL
        && (!cli_split_spec(CMD, &x->gpu_o)
            || !cli_split_spec(CMD, &x->gpu_lse)))
        return false;
    if (x->out.arg != NULL
        && (!cli_split_spec(CMD, &x->out) || !attn_check_output(x)))
        return false;
    return true;
}

/* The shape [B, H, N, d] of the generated inputs. */
static bool
gen_shape(attn_ctx *x)
{
    x->rank = 4;
    x->n_lead = 2;
    x->nb = (size_t)x->sh[SH_BATCH];
    x->nh = (size_t)x->sh[SH_HEADS];
    x->nhkv = x->nh;
    x->nq = (size_t)x->sh[SH_NQ];
    x->nk = (size_t)(x->sh_given[SH_NK] ? x->sh[SH_NK] : x->sh[SH_NQ]);
    x->d = (size_t)x->sh[SH_D];
    x->lead[0] = x->nb;
    x->lead[1] = x->nh;
    if (x->gen.kind == GEN_REPEATED && x->gen.repeat > x->nk) {
        cli_error(CMD,
                  "--repeat %" PRIu64 ": more keys than Nk = %zu "
                  "(expected at most Nk)",
                  x->gen.repeat, x->nk);
        return false;
    }
    return true;
}

/* The inputs read from their files, their layout and shapes checked. */
static bool
read_inputs(attn_ctx *x)
{
    if (!attn_check_file_sizes(x))
        return false;
    for (int i = 0; i < N_IN; i++)
        if (x->in[i].arg != NULL && !attn_read_operand(x, i))
            return false;
    if (!attn_resolve_layout(x) || !attn_check_shapes(x))
        return false;
    return true;
}

/* Whether the exact reference runs (else why not, in x->exact_note) and
   whether P~ is captured for the row statistics. */
static void
plan_exact(attn_ctx *x)
{
    /* The exact reference: run it? */
    x->exact_work = fa_cli_exact_work((uint64_t)x->heads, x->nq, x->nk, x->d,
                                      x->backward);
    x->exact_note = fa_cli_exact_off(x->kopt.no_exact, x->kopt.softcap);
    if (x->exact_note == NULL) {
        if (x->exact_work > EXACT_WORK_LIMIT && !x->kopt.exact_forced)
            x->exact_note = "B*H*Nq*Nk*d (x4 with --backward) is above "
                            "2^26; give --exact to run it anyway";
        else
            x->exact_run = true;
    }
    x->p_internal = !(x->captures & (1u << CAP_P))
                    && cli_sat_mul(cli_sat_mul((uint64_t)x->heads, x->nq),
                                   cli_sat_mul(x->nk, 4))
                           <= AUTO_P_BYTES;
}

/* The computation, the exact reference, the statistics and --out. */
static bool
compute_all(attn_ctx *x)
{
    if (!fa_cli_heads_usable(CMD, &x->hcfg, x->has_mask ? &x->mask : NULL,
                             x->heads)
        || !attn_allocate(x) || !attn_compute(x))
        return false;
    if (x->exact_run && !attn_exact_all(x))
        return false;
    if (x->backward && x->nhkv != x->nh && !attn_reduce_groups(x))
        return false;
    if (x->exact_run)
        for (int i = 0; i < N_OUT; i++)
            if (x->ex[i] != NULL)
                attn_stat_output(x, i);
    attn_count_rows(x);
    return x->out.arg == NULL || attn_write_output(x);
}

static bool
run(attn_ctx *x)
{
    if (!attn_check_options(x) || !split_specs(x))
        return false;
    if (!x->max_memory_given)
        x->max_memory = attn_default_max_memory();
    if (x->gen_on ? !gen_shape(x) : !read_inputs(x))
        return false;
    if (!attn_build_config(x))
        return false;
    if (!fa_cli_inputs_defined(
            CMD, x->kopt.kernel_path != NULL ? "--kernel" : "--policy",
            fa_config_kernel(&x->cfg), x->f16))
        return false;
    if (x->gpu_o.arg != NULL && !attn_read_fwd_outputs(x))
        return false;
    if (x->mask_opd.arg != NULL && !read_mask(x))
        return false;
    plan_exact(x);
    attn_estimate_memory(x);
    if (x->dry_run)
        return true;
    if (!attn_check_memory(x))
        return false;
    attn_cost_report(x);
    return compute_all(x);
}

int
attn_main(int argc, char **argv)
{
    attn_ctx *x = calloc(1, sizeof *x);
    cli_buf out;
    cli_json js;
    int id, rc = CLI_EXIT_OK;
    long ncpu;

    if (x == NULL)
        return cli_error(CMD, "out of memory");
    for (int i = 0; i < N_IN; i++)
        x->in[i].opt = i == IN_Q   ? "--q"
                       : i == IN_K ? "--k"
                       : i == IN_V ? "--v"
                                   : "--do";
    x->out.opt = "--out";
    x->gpu_o.opt = "--o";
    x->gpu_lse.opt = "--lse";
    x->gen = gen_params_default();
    x->sh[SH_BATCH] = 1;
    x->sh[SH_HEADS] = 1;
    x->sh[SH_NQ] = 128;
    x->sh[SH_NK] = 128;
    x->sh[SH_D] = 64;
    fa_cli_kernel_opts_init(&x->kopt, FA_POLICY_PAPER_EQ4);
    x->round_to = TENSOR_ANY;
    fa_cli_exp_default(&x->kopt.exp);
    x->trace_keep = TRACE_KEEP_DEFAULT;
#ifdef _SC_NPROCESSORS_ONLN
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#else
    ncpu = 1;
#endif
    x->threads = ncpu > 0 ? (uint64_t)ncpu : 1;

    id = attn_take_options(x, argc, argv);
    if (id < 0)
        id = fa_cli_kernel_options(CMD, &x->kopt);
    if (id >= 0) {
        ctx_free(x);
        return id;
    }
    if (x->describe && x->kopt.sdpa) {
        ctx_free(x);
        return cli_error(CMD, "--describe: --policy sdpa picks a description "
                              "per call (name one: cudnn, fa2)");
    }
    if (x->describe) {
        const fa_kernel *k =
            x->kopt.kernel_path != NULL || x->kopt.kernel_named
                ? &x->kopt.kernel
                : fa_kernel_of_policy(x->kopt.policy);
        char *text = fa_kernel_json(k);
        ctx_free(x);
        if (text == NULL)
            return cli_error(CMD, "out of memory");
        fputs(text, stdout);
        free(text);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    x->tty = isatty(2) != 0;
    if (!run(x)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    cli_buf_init(&out);
    if (x->kopt.json) {
        cli_json_init(&js, &out);
        attn_json_report(x, &js);
    } else if (x->dry_run) {
        attn_text_dry_run(&out, x);
    } else {
        attn_text_report(x, &out);
    }
    cli_report_emit(CMD, &out, &rc);
    ctx_free(x);
    return rc;
}

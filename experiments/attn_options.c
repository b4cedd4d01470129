/* attn_options.c -- bf16emu attn's options: the table, the parsers of
   the values and the checks of the combinations */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat, strdup, strndup, sysconf */
#endif

#include "experiments/attn_local.h"

/*----------------------------------------------------------------------------
 * Options.
 *--------------------------------------------------------------------------*/
static const char *const sh_opts[N_SH] = {"--batch", "--heads", "--nq", "--nk",
                                          "--d"};

enum
{
    O_Q,
    O_K,
    O_V,
    O_DO,
    O_GEN,
    O_SEED,
    O_BATCH,
    O_HEADS,
    O_NQ,
    O_NK,
    O_D,
    O_QK_STD,
    O_V_MEAN,
    O_V_STD,
    O_DO_STD,
    O_SINK,
    O_REPEAT,
    O_MAX_VALUE,
    O_GAP_MIN,
    O_GAP_MAX,
    O_DESCRIBE,
    O_MASK,
    O_ROUND_TO,
    O_BETA,
    O_TOL,
    O_EPS,
    O_ZERO_MAX,
    O_EPS_ZERO,
    O_ABLATE,
    O_BR,
    O_BC,
    O_ORDER,
    O_BACKWARD,
    O_CAPTURE,
    O_TRACE,
    O_TRACE_MAX,
    O_OUT,
    O_FORCE,
    O_MAX_MEMORY,
    O_THREADS,
    O_DRY_RUN,
    O_GPU_O,
    O_GPU_LSE,
    O_HELP
};

static const cli_option options[] = {{"q", true, O_Q},
                                     {"k", true, O_K},
                                     {"v", true, O_V},
                                     {"do", true, O_DO},
                                     {"gen", true, O_GEN},
                                     {"seed", true, O_SEED},
                                     {"batch", true, O_BATCH},
                                     {"heads", true, O_HEADS},
                                     {"nq", true, O_NQ},
                                     {"nk", true, O_NK},
                                     {"d", true, O_D},
                                     {"qk-std", true, O_QK_STD},
                                     {"v-mean", true, O_V_MEAN},
                                     {"v-std", true, O_V_STD},
                                     {"do-std", true, O_DO_STD},
                                     {"sink", true, O_SINK},
                                     {"repeat", true, O_REPEAT},
                                     {"max-value", true, O_MAX_VALUE},
                                     {"gap-min", true, O_GAP_MIN},
                                     {"gap-max", true, O_GAP_MAX},
                                     {"describe", false, O_DESCRIBE},
                                     {"mask", true, O_MASK},
                                     {"round-to", true, O_ROUND_TO},
                                     {"beta", true, O_BETA},
                                     {"tol", true, O_TOL},
                                     {"eps", true, O_EPS},
                                     {"zero-max", true, O_ZERO_MAX},
                                     {"eps-zero", true, O_EPS_ZERO},
                                     {"ablate", true, O_ABLATE},
                                     {"br", true, O_BR},
                                     {"bc", true, O_BC},
                                     {"order", true, O_ORDER},
                                     {"backward", false, O_BACKWARD},
                                     {"capture", true, O_CAPTURE},
                                     {"trace", true, O_TRACE},
                                     {"trace-max", true, O_TRACE_MAX},
                                     {"out", true, O_OUT},
                                     {"force", false, O_FORCE},
                                     {"max-memory", true, O_MAX_MEMORY},
                                     {"threads", true, O_THREADS},
                                     {"dry-run", false, O_DRY_RUN},
                                     {"o", true, O_GPU_O},
                                     {"lse", true, O_GPU_LSE},
                                     {"help", false, O_HELP},
                                     FA_CLI_KERNEL_OPTIONS,
                                     {NULL, false, 0}};

/* Parses "b,h,row,col". */
static bool
parse_trace(attn_ctx *x, const char *v)
{
    const char *s = v;

    for (int i = 0; i < 4; i++) {
        char *end;
        unsigned long long n;
        if (*s < '0' || *s > '9')
            goto bad;
        n = strtoull(s, &end, 10);
        if (end == s || (i < 3 && *end != ',') || (i == 3 && *end != '\0'))
            goto bad;
        x->trace_at[i] = (uint64_t)n;
        s = end + 1;
    }
    x->trace = true;
    return true;
bad:
    cli_error(CMD,
              "--trace '%s': expected four indices B,H,ROW,COL (e.g. "
              "0,0,5,3)",
              v);
    return false;
}

static bool
parse_capture(attn_ctx *x, const char *v)
{
    const char *p = v;

    if (strcmp(v, "none") == 0) {
        x->captures = 0;
        return true;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        int i;
        for (i = 0; i < N_CAP; i++)
            if (strlen(cap_names[i]) == len
                && strncmp(cap_names[i], p, len) == 0)
                break;
        if (i == N_CAP) {
            cli_error(CMD,
                      "--capture '%s': unknown capture '%.*s' (expected a "
                      "comma-separated list of s, p, m, l, obar, dp, ds)",
                      v, (int)len, p);
            return false;
        }
        x->captures |= 1u << i;
        if (p[len] == '\0')
            return true;
        p += len + 1;
    }
}

static bool
parse_ablate(attn_ctx *x, const char *v)
{
    long bits = fa_ablations_parse(v);
    const char *p = v;

    if (bits >= 0) {
        x->ablations = (unsigned)bits;
        return true;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        char one[64];
        snprintf(one, sizeof one, "%.*s", (int)len, p);
        if (len == 0 || len >= sizeof one || fa_ablations_parse(one) < 0) {
            cli_error(CMD,
                      "--ablate '%s': unknown ablation '%.*s' (expected a "
                      "comma-separated list of fp32-pv, fp32-o, delta-dpp, "
                      "delta-fp32-o, untiled)",
                      v, (int)len, p);
            return false;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    cli_error(CMD, "--ablate '%s': not a list of ablations", v);
    return false;
}

/* A positive count (--batch, --nq, ...). */
static bool
parse_count(const char *opt, const char *v, uint64_t *n)
{
    if (!cli_parse_u64(CMD, opt, v, n))
        return false;
    if (*n == 0) {
        cli_error(CMD, "%s '%s': expected at least 1", opt, v);
        return false;
    }
    return true;
}

static bool
parse_nonneg(const char *opt, const char *v, double *d)
{
    if (!cli_parse_double(CMD, opt, v, true, d))
        return false;
    if (*d < 0) {
        cli_error(CMD, "%s '%s': expected a number at least 0", opt, v);
        return false;
    }
    return true;
}

static void
gen_only(attn_ctx *x, const char *opt)
{
    if (x->n_gen_only < sizeof x->gen_only / sizeof x->gen_only[0])
        x->gen_only[x->n_gen_only++] = opt;
}

static void
kind_only(attn_ctx *x, const char *opt, gen_kind k)
{
    gen_only(x, opt);
    if (x->n_kind_only < sizeof x->kind_only / sizeof x->kind_only[0]) {
        x->kind_only[x->n_kind_only] = opt;
        x->kind_of[x->n_kind_only++] = k;
    }
}

/* An option of the outputs and the run (captures, trace, --out, memory,
   threads, --dry-run), else one that diff shares (fa_cli_kernel_option:
   the description, the launch, the fix, the mask alignment, scale, exp,
   the exact reference, --json, --dtype, --layout). */
static bool
take_run_option(attn_ctx *x, int id, const char *v)
{
    switch (id) {
    case O_CAPTURE:
        return parse_capture(x, v);
    case O_TRACE:
        return parse_trace(x, v);
    case O_TRACE_MAX:
        x->trace_keep_given = true;
        return cli_parse_u64(CMD, "--trace-max", v, &x->trace_keep);
    case O_OUT:
        x->out.arg = v;
        return true;
    case O_FORCE:
        x->force = true;
        return true;
    case O_MAX_MEMORY:
        x->max_memory_given = true;
        return cli_parse_bytes(CMD, "--max-memory", v, &x->max_memory);
    case O_THREADS:
        if (!cli_parse_u64(CMD, "--threads", v, &x->threads))
            return false;
        if (x->threads == 0) {
            cli_error(CMD, "--threads '%s': expected at least 1", v);
            return false;
        }
        return true;
    case O_DRY_RUN:
        x->dry_run = true;
        return true;
    default:
        return fa_cli_kernel_option(CMD, id, v, &x->kopt);
    }
}

/* An option of the arithmetic (the fix's parameters, ablations, tiles,
   order, --backward), else take_run_option. */
static bool
take_numerics_option(attn_ctx *x, int id, const char *v)
{
    int n;

    switch (id) {
    case O_BETA:
        x->beta_given = true;
        return cli_parse_double(CMD, "--beta", v, true, &x->beta);
    case O_TOL:
        x->tol_given = true;
        return cli_parse_double(CMD, "--tol", v, true, &x->tol);
    case O_EPS:
        x->eps_given = true;
        return cli_parse_double(CMD, "--eps", v, true, &x->eps);
    case O_EPS_ZERO:
        x->eps_zero_given = true;
        return cli_parse_double(CMD, "--eps-zero", v, true, &x->eps_zero);
    case O_ZERO_MAX:
        x->zero_max_given = true;
        if (strcmp(v, "keep") == 0)
            x->zero_max = FA_ZERO_MAX_KEEP;
        else if (strcmp(v, "shift") == 0)
            x->zero_max = FA_ZERO_MAX_SHIFT;
        else {
            cli_error(CMD, "--zero-max '%s': expected keep or shift", v);
            return false;
        }
        return true;
    case O_ABLATE:
        return parse_ablate(x, v);
    case O_BR:
        return cli_parse_u64(CMD, "--br", v, &x->br);
    case O_BC:
        return cli_parse_u64(CMD, "--bc", v, &x->bc);
    case O_ORDER:
        n = fa_order_parse(v);
        if (n < 0) {
            cli_error(CMD, "--order '%s': expected forward or reverse", v);
            return false;
        }
        x->order = (fa_kv_order)n;
        x->order_given = true;
        return true;
    case O_BACKWARD:
        x->backward = true;
        return true;
    default:
        return take_run_option(x, id, v);
    }
}

/* --describe, the inputs' rounding or the mask, else
   take_numerics_option. */
static bool
take_kernel_option(attn_ctx *x, int id, const char *v)
{
    switch (id) {
    case O_DESCRIBE:
        x->describe = true;
        return true;
    case O_ROUND_TO:
        if (strcmp(v, "bf16") == 0 || strcmp(v, "bfloat16") == 0)
            x->round_to = TENSOR_BF16;
        else if (strcmp(v, "f16") == 0 || strcmp(v, "float16") == 0)
            x->round_to = TENSOR_F16;
        else {
            cli_error(CMD, "--round-to '%s': expected bf16 or f16", v);
            return false;
        }
        return true;
    case O_MASK:
        x->mask_opd.opt = "--mask";
        x->mask_opd.arg = v;
        return true;
    default:
        return take_numerics_option(x, id, v);
    }
}

/* A generator option (--gen, the shape, the distributions), else
   take_kernel_option. */
static bool
take_gen_option(attn_ctx *x, int id, const char *v)
{
    int n;

    switch (id) {
    case O_GEN:
        n = gen_kind_parse(v);
        if (n < 0) {
            cli_error(CMD,
                      "--gen '%s': unknown generator (expected normal, sink "
                      "or repeated-max)",
                      v);
            return false;
        }
        x->gen_on = true;
        x->gen.kind = (gen_kind)n;
        return true;
    case O_SEED:
        gen_only(x, "--seed");
        return cli_parse_u64(CMD, "--seed", v, &x->gen.seed);
    case O_BATCH:
    case O_HEADS:
    case O_NQ:
    case O_NK:
    case O_D:
        gen_only(x, sh_opts[id - O_BATCH]);
        x->sh_given[id - O_BATCH] = true;
        return parse_count(sh_opts[id - O_BATCH], v, &x->sh[id - O_BATCH]);
    case O_QK_STD:
        gen_only(x, "--qk-std");
        return parse_nonneg("--qk-std", v, &x->gen.qk_std);
    case O_V_MEAN:
        gen_only(x, "--v-mean");
        return cli_parse_double(CMD, "--v-mean", v, true, &x->gen.v_mean);
    case O_V_STD:
        gen_only(x, "--v-std");
        return parse_nonneg("--v-std", v, &x->gen.v_std);
    case O_DO_STD:
        gen_only(x, "--do-std");
        return parse_nonneg("--do-std", v, &x->gen.do_std);
    case O_SINK:
        kind_only(x, "--sink", GEN_SINK);
        return cli_parse_double(CMD, "--sink", v, true, &x->gen.sink);
    case O_REPEAT:
        kind_only(x, "--repeat", GEN_REPEATED);
        return parse_count("--repeat", v, &x->gen.repeat);
    case O_MAX_VALUE:
        kind_only(x, "--max-value", GEN_REPEATED);
        return cli_parse_double(CMD, "--max-value", v, true,
                                &x->gen.max_value);
    case O_GAP_MIN:
        kind_only(x, "--gap-min", GEN_REPEATED);
        return parse_nonneg("--gap-min", v, &x->gen.gap_min);
    case O_GAP_MAX:
        kind_only(x, "--gap-max", GEN_REPEATED);
        return parse_nonneg("--gap-max", v, &x->gen.gap_max);
    default:
        return take_kernel_option(x, id, v);
    }
}

/* One option; false after an error message.  The inputs here, the
   other groups through take_gen_option. */
static bool
take_option(void *ctx, int id, const char *v)
{
    attn_ctx *x = ctx;

    switch (id) {
    case O_Q:
    case O_K:
    case O_V:
    case O_DO:
        x->in[id - O_Q].arg = v;
        return true;
    case O_GPU_O:
        x->gpu_o.arg = v;
        return true;
    case O_GPU_LSE:
        x->gpu_lse.arg = v;
        return true;
    default:
        return take_gen_option(x, id, v);
    }
}

int
attn_take_options(attn_ctx *x, int argc, char **argv)
{
    return cli_take_options(CMD, argc, argv, options, O_HELP, attn_help,
                            "the inputs are options: --gen, or --q, --k, "
                            "--v; see 'bf16emu attn --help'",
                            take_option, x);
}

/* Where the inputs come from: --gen or --q, --k, --v (and --do with
   --backward), not both; false after an error message. */
static bool
check_inputs(const attn_ctx *x)
{
    bool files = false;

    for (int i = 0; i < N_IN; i++)
        files = files || x->in[i].arg != NULL;
    if (x->gen_on && files) {
        for (int i = 0; i < N_IN; i++)
            if (x->in[i].arg != NULL)
                cli_error(CMD,
                          "%s: the inputs come from --gen or from files, not "
                          "both",
                          x->in[i].opt);
        return false;
    }
    if (!x->gen_on && !files) {
        cli_error(CMD, "no inputs: give --gen NAME, or --q, --k and --v (see "
                       "'bf16emu attn --help')");
        return false;
    }
    if (files) {
        for (int i = IN_Q; i <= IN_V; i++)
            if (x->in[i].arg == NULL) {
                cli_error(CMD,
                          "missing %s (inputs from files need --q, --k "
                          "and --v)",
                          x->in[i].opt);
                return false;
            }
        if (x->backward && x->in[IN_DO].arg == NULL) {
            cli_error(CMD, "--backward with inputs from files needs --do "
                           "FILE[:KEY] (dO, the shape of Q)");
            return false;
        }
        if (!x->backward && x->in[IN_DO].arg != NULL) {
            cli_error(CMD, "--do applies to --backward");
            return false;
        }
        if (x->n_gen_only > 0) {
            cli_error(CMD,
                      "%s applies to --gen (the inputs come from files; "
                      "their shapes give B, H, Nq, Nk and d)",
                      x->gen_only[0]);
            return false;
        }
    }
    return true;
}

/* The generator's options against --gen's kind and each other. */
static bool
check_gen(const attn_ctx *x)
{
    for (size_t i = 0; x->gen_on && i < x->n_kind_only; i++)
        if (x->kind_of[i] != x->gen.kind) {
            cli_error(CMD, "%s applies to --gen %s, not to --gen %s",
                      x->kind_only[i], gen_kind_name(x->kind_of[i]),
                      gen_kind_name(x->gen.kind));
            return false;
        }
    if (x->gen_on && x->gen.gap_max < x->gen.gap_min) {
        cli_error(CMD,
                  "--gap-max %.17g is below --gap-min %.17g (expected "
                  "gap-min <= gap-max)",
                  x->gen.gap_max, x->gen.gap_min);
        return false;
    }
    return true;
}

/* The fix's parameters against --fix. */
static bool
check_fix(const attn_ctx *x)
{
    const fa_fix_kind k = x->kopt.fix;

    if (x->beta_given && k != FA_FIX_BETA && k != FA_FIX_BETA_V2
        && k != FA_FIX_ALWAYS) {
        cli_error(CMD,
                  "--beta applies to --fix beta, beta-v2 or always "
                  "(the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->tol_given && k != FA_FIX_BETA && k != FA_FIX_EPS) {
        cli_error(CMD, "--tol applies to --fix beta or eps (the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->eps_given && k != FA_FIX_EPS) {
        cli_error(CMD, "--eps applies to --fix eps (the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->zero_max_given && k != FA_FIX_BETA && k != FA_FIX_BETA_V2
        && k != FA_FIX_ALWAYS) {
        cli_error(CMD,
                  "--zero-max applies to --fix beta, beta-v2 or always "
                  "(the fix is %s)",
                  fa_fix_name(k));
        return false;
    }
    if (x->eps_zero_given
        && !(x->zero_max_given && x->zero_max == FA_ZERO_MAX_SHIFT)) {
        cli_error(CMD, "--eps-zero applies to --zero-max shift");
        return false;
    }
    return true;
}

/* The combinations of options; false after an error message. */
bool
attn_check_options(attn_ctx *x)
{
    if (!check_inputs(x) || !check_gen(x) || !check_fix(x))
        return false;
    if (!x->backward && (x->captures & ((1u << CAP_DP) | (1u << CAP_DS)))) {
        cli_error(CMD, "--capture dp and ds need --backward (they are "
                       "captured by the backward)");
        return false;
    }
    if (x->captures != 0 && x->out.arg == NULL) {
        cli_error(CMD, "--capture needs --out FILE (captures are written "
                       "there)");
        return false;
    }
    if (x->trace_keep_given && !x->trace) {
        cli_error(CMD, "--trace-max applies to --trace");
        return false;
    }
    return fa_cli_exact_options(CMD, &x->kopt);
}

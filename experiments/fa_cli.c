/* fa_cli.c -- helpers shared by the attention subcommands of bf16emu */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/cli.h"
#include "experiments/fa_cli.h"
#include "experiments/fa_kernel_json.h"
#include "experiments/sdpa_policy.h"
#include "analysis/launch.h"
#include "analysis/sdpa_dispatch_pt211_h200.h"

/* The measured tables: the path in $BF16EMU_EX2_TABLE (..._LG2_...,
   ..._RCP_...) when set, else the library's default place. */
static const char *
ex2_table_path(void)
{
    return ax_ex2_table_default_path(getenv("BF16EMU_EX2_TABLE"));
}

static const char *
lg2_table_path(void)
{
    return ax_lg2_table_default_path(getenv("BF16EMU_LG2_TABLE"));
}

static const char *
rcp_table_path(void)
{
    return ax_rcp_table_default_path(getenv("BF16EMU_RCP_TABLE"));
}

void
fa_cli_exp_default(fa_cli_exp *e)
{
    e->name = "cr";
    e->from = "the description's default";
    e->model = fa_exp_model_by_name("cr");
}

bool
fa_cli_parse_exp(const char *cmd, fa_cli_exp *e, const char *v)
{
    const fa_exp_model *m = NULL;

    if (strcmp(v, "ex2-sm90") == 0 || strcmp(v, "ex2-sm90-ftz") == 0) {
        char err[1024];
        ax_ex2_table_free(&e->tab);
        if (ax_ex2_table_load(ex2_table_path(), &e->tab, err, sizeof err)
            != 0) {
            cli_error(cmd, "--exp %s: %s", v, err);
            return false;
        }
        ax_ex2_model(&e->tab, strcmp(v, "ex2-sm90-ftz") == 0, &e->rule,
                     &e->ex2);
        m = &e->ex2;
    } else if (strcmp(v, "cr") == 0 || strcmp(v, "libm") == 0) {
        m = fa_exp_model_by_name(v);
    }
    if (m == NULL) {
        cli_error(cmd,
                  "--exp '%s': unknown exp model (expected cr, libm, "
                  "ex2-sm90 or ex2-sm90-ftz)",
                  v);
        return false;
    }
    e->model = m;
    e->name = v;
    e->from = "--exp";
    return true;
}

bool
fa_cli_exp_for(const char *cmd, const fa_kernel *k, fa_cli_exp *e)
{
    const char *want =
        fa_kernel_enum_names("exp_model")[k != NULL ? k->exp_model : 0];

    if ((e->model == NULL || e->name == NULL || strcmp(e->name, want) != 0)
        && !fa_cli_parse_exp(cmd, e, want))
        return false;
    e->from = "the description's default";
    return true;
}

bool
fa_cli_fa2_like(const fa_kernel *k)
{
    return k != NULL
           && (k->rowsum == FA_ROWSUM_QUAD
               || k->rowsum == FA_ROWSUM_QUAD_BLOCK);
}

void
fa_cli_exp_free(fa_cli_exp *e)
{
    ax_ex2_table_free(&e->tab);
}

bool
fa_cli_parse_scale(const char *cmd, const char *v, uint32_t *bits)
{
    cli_number num;
    char why[256];
    sf_env env = cli_env_ieee();
    uint32_t b;

    if (!cli_parse_number(v, &sf_format_f32, SF_RNE, &num, why, sizeof why)) {
        cli_error(cmd, "--scale '%s': %s", v, why);
        return false;
    }
    b = (uint32_t)sf_convert(&sf_format_f32, num.fmt, num.bits, SF_RNE, &env);
    if ((b & 0x80000000u) != 0 || (b & 0x7FFFFFFFu) == 0
        || (b & 0x7F800000u) == 0x7F800000u) {
        cli_error(cmd,
                  "--scale '%s': expected a finite positive number (the "
                  "softmax scale)",
                  v);
        return false;
    }
    *bits = b;
    return true;
}

bool
fa_cli_parse_causal_align(const char *cmd, const char *v, bool *top_left)
{
    if (strcmp(v, "top-left") != 0 && strcmp(v, "bottom-right") != 0) {
        cli_error(cmd,
                  "--causal-align: \"%s\" (expected top-left or "
                  "bottom-right)",
                  v);
        return false;
    }
    *top_left = v[0] == 't';
    return true;
}

bool
fa_cli_parse_policy(const char *cmd, const char *v, fa_policy *p)
{
    int n = fa_policy_parse(v);

    if (n < 0) {
        cli_error(cmd,
                  "--policy '%s': unknown policy (expected paper-eq4, "
                  "repo, fa2 or flash, fp32, cudnn, efficient, math or "
                  "sdpa)",
                  v);
        return false;
    }
    *p = (fa_policy)n;
    return true;
}

/* The names fa_cli_parse_kernel_name takes, for its message: "a, b (or
   flash), ... or z" into BUF. */
static void
kernel_names(char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; fa_kernel_at(i) != NULL && len < n; i++) {
        const char *name = fa_kernel_at(i)->name;
        const char *sep = i == 0                        ? ""
                          : fa_kernel_at(i + 1) == NULL ? " or "
                                                        : ", ";
        int w = snprintf(buf + len, n - len, "%s%s%s", sep, name,
                         strcmp(name, "fa2") == 0 ? " (or flash)" : "");
        len += w > 0 ? (size_t)w : 0;
    }
}

bool
fa_cli_parse_kernel_name(const char *cmd, const char *v, const fa_kernel **k)
{
    char names[512];

    /* PyTorch's name of the backend (SDPBackend.FLASH_ATTENTION) */
    *k = fa_kernel_by_name(strcmp(v, "flash") == 0 ? "fa2" : v);
    if (*k != NULL)
        return true;
    kernel_names(names, sizeof names);
    if (strcmp(v, "sdpa") == 0)
        cli_error(cmd,
                  "--policy sdpa: PyTorch's choice per call is not "
                  "available here; name the kernel (expected %s)",
                  names);
    else
        cli_error(cmd, "--policy '%s': unknown kernel (expected %s)", v,
                  names);
    return false;
}

bool
fa_cli_parse_launch(const char *cmd, const char *v, fa_cli_launch *l,
                    bool *lengths_given)
{
    uint64_t n[4] = {0, 0, 0, 0};
    size_t k = 0;
    const char *p = v;

    while (k < 4) {
        char *end;
        if (*p < '0' || *p > '9')
            break;
        errno = 0;
        n[k] = strtoull(p, &end, 10);
        if (errno != 0 || n[k] == 0 || n[k] > (1u << 24))
            break;
        k++;
        p = end;
        if (*p != ',')
            break;
        p++;
    }
    if (*p != '\0' || (k != 2 && k != 4)) {
        cli_error(cmd,
                  "--launch '%s': expected B,H or B,H,Nq,Nk (positive "
                  "integers: the batch and heads of the GPU's launch)",
                  v);
        return false;
    }
    l->batch = (size_t)n[0];
    l->heads = (size_t)n[1];
    if (k == 4) {
        l->nq = (size_t)n[2];
        l->nk = (size_t)n[3];
    }
    *lengths_given = k == 4;
    l->from = "--launch";
    return true;
}

unsigned
fa_cli_launch_splits(const fa_kernel *k, const fa_cli_launch *l,
                     const char **rule)
{
    return ax_launch_splits(k, l, rule);
}

bool
fa_cli_gqa_reduce(const char *cmd, const fa_config *cfg, size_t groups,
                  size_t g, size_t n, uint32_t *res, double *ex)
{
    uint32_t *tmp = malloc((n != 0 ? n : 1) * sizeof *tmp);

    if (tmp == NULL) {
        cli_error(cmd, "out of memory");
        return false;
    }
    for (size_t gi = 0; gi < groups; gi++) {
        /* the group's parts start at gi g n >= gi n: the KV heads before
           it never overwrite them */
        if (fa_gqa_reduce(cfg, g, n, res + gi * g * n, tmp) != 0) {
            const fa_kernel *k = fa_config_kernel(cfg);
            free(tmp);
            if (k->gqa_dkv == FA_GQA_CHAIN)
                cli_error(cmd, "grouped-query heads: the description '%s' "
                               "walks a group's heads in one backward "
                               "(gqa_dkv \"chain\"), and this run computed "
                               "them one by one",
                          k->name);
            else
                cli_error(cmd, "grouped-query heads: the description '%s' "
                               "has no rule for the sum of dK and dV over a "
                               "group (gqa_dkv \"none\")",
                          k->name);
            return false;
            return false;
        }
        memcpy(res + gi * n, tmp, n * sizeof *tmp);
        for (size_t j = 0; ex != NULL && j < n; j++) {
            double sum = 0.0;
            for (size_t h = 0; h < g; h++)
                sum += ex[(gi * g + h) * n + j];
            ex[gi * n + j] = sum;
        }
    }
    free(tmp);
    return true;
}

bool
fa_cli_parse_splits(const char *cmd, const char *v, uint64_t *n, bool *autosel)
{
    uint64_t x;

    if (strcmp(v, "auto") == 0) {
        *autosel = true;
        *n = 0;
        return true;
    }
    if (!cli_parse_u64(cmd, "--splits", v, &x))
        return false;
    if (x == 0 || x > 128) {
        cli_error(cmd,
                  "--splits %s: expected 1 to 128 (the FA2 combine kernel's "
                  "limit) or auto",
                  v);
        return false;
    }
    *autosel = false;
    *n = x;
    return true;
}

bool
fa_cli_parse_dq_buffers(const char *cmd, const char *v, uint64_t *n)
{
    uint64_t x;

    if (strcmp(v, "auto") == 0) {
        *n = 0;
        return true;
    }
    if (!cli_parse_u64(cmd, "--dq-buffers", v, &x))
        return false;
    if (x == 0 || x > 65536) {
        cli_error(cmd, "--dq-buffers %s: expected 1 to 65536 or auto", v);
        return false;
    }
    *n = x;
    return true;
}

void
fa_cli_config_refused(const char *cmd, const fa_config *c,
                      const char *splits_from, const char *why)
{
    const fa_kernel *k = fa_config_kernel(c);
    const fa_kernel_tiles *kt =
        k != NULL ? fa_kernel_tiles_for(k, c->shape.d) : NULL;

    if (kt != NULL && c->splits > 1 && c->shape.nk > 0
        && strcmp(why, "splits: more splits than KV blocks") == 0) {
        /* the split kernel's key blocks, as fa_plan_init chooses them */
        size_t bc = c->bc != 0          ? c->bc
                    : kt->bc_split != 0 ? kt->bc_split
                    : kt->bc != 0       ? kt->bc
                                        : c->shape.nk;
        size_t tc;
        if (bc > c->shape.nk)
            bc = c->shape.nk;
        tc = (c->shape.nk + bc - 1) / bc;
        cli_error(cmd,
                  "%s %zu: more splits than KV blocks (Nk = %zu in blocks "
                  "of %zu keys: %zu; expected 1 to %zu)",
                  splits_from != NULL ? splits_from : "--splits", c->splits,
                  c->shape.nk, bc, tc, tc);
        return;
    }
    cli_error(cmd, "the configuration is refused: %s", why);
}

bool
fa_cli_log_for(const char *cmd, const char *opt, const fa_kernel *k,
               fa_cli_log *l)
{
    char err[1024];

    if (k != NULL && k->normalize == FA_NORM_RCP_APPROX && !l->rcp_loaded) {
        if (ax_rcp_table_load(rcp_table_path(), &l->rcp_tab, err, sizeof err)
            != 0) {
            cli_error(cmd,
                      "%s: the description's reciprocal-approx needs the "
                      "rcp-sm90 table ($BF16EMU_RCP_TABLE): %s",
                      opt, err);
            return false;
        }
        ax_rcp_model(&l->rcp_tab, &l->rcp_model);
        l->rcp_loaded = true;
    }
    if (k == NULL || (k->log != FA_KLOG_LG2 && k->combine_log != FA_KLOG_LG2))
        return true;
    if (l->loaded)
        return true;
    if (ax_lg2_table_load(lg2_table_path(), &l->tab, err, sizeof err) != 0) {
        cli_error(cmd,
                  "%s: the description's lg2 log needs the lg2-sm90 table "
                  "($BF16EMU_LG2_TABLE): %s",
                  opt, err);
        return false;
    }
    ax_lg2_model(&l->tab, false, &l->rule, &l->model);
    l->loaded = true;
    return true;
}

const fa_log_model *
fa_cli_log_model(const fa_cli_log *l)
{
    return l->loaded ? &l->model : NULL;
}

const fa_rcp_model *
fa_cli_rcp_model(const fa_cli_log *l)
{
    return l->rcp_loaded ? &l->rcp_model : NULL;
}

void
fa_cli_log_free(fa_cli_log *l)
{
    if (l->loaded)
        ax_lg2_table_free(&l->tab);
    l->loaded = false;
    if (l->rcp_loaded)
        ax_rcp_table_free(&l->rcp_tab);
    l->rcp_loaded = false;
}

bool
fa_cli_parse_sms(const char *cmd, const char *v, uint64_t *sms)
{
    if (!cli_parse_u64(cmd, "--sms", v, sms))
        return false;
    if (*sms == 0 || *sms > 100000) {
        cli_error(cmd, "--sms %s: expected 1 to 100000 multiprocessors", v);
        return false;
    }
    return true;
}

bool
fa_cli_parse_dtype(const char *cmd, const char *v)
{
    static const char *const bf16[] = {"bf16", "BF16", "bfloat16",
                                       "torch.bfloat16"};
    static const char *const f16[] = {"f16", "F16", "fp16", "float16",
                                      "half", "torch.float16"};

    for (size_t i = 0; i < sizeof bf16 / sizeof bf16[0]; i++)
        if (strcmp(v, bf16[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++)
        if (strcmp(v, f16[i]) == 0) {
            cli_error(cmd,
                      "--dtype '%s': FP16 inputs are read from F16 tensors "
                      "(.npy '<f2', safetensors F16) without --dtype; "
                      "--dtype names the format of 16-bit patterns and F32 "
                      "values, which is bf16 (or bfloat16)",
                      v);
            return false;
        }
    cli_error(cmd,
              "--dtype '%s': expected bf16 or bfloat16 (the format of "
              "16-bit patterns and of F32 values holding BF16 ones)",
              v);
    return false;
}

bool
fa_cli_parse_layout(const char *cmd, const char *v, ut_layout *l)
{
    if (!ut_layout_parse(v, l)) {
        cli_error(cmd,
                  "--layout '%s': expected bhnd ([B, H, N, d]) or bnhd "
                  "([B, N, H, d])",
                  v);
        return false;
    }
    return true;
}

bool
fa_cli_load_kernel(const char *cmd, const char *path, bool policy_given,
                   fa_kernel *k)
{
    if (path != NULL && policy_given) {
        cli_error(cmd, "--kernel '%s' and --policy: expected one of them",
                  path);
        return false;
    }
    return path == NULL || fa_kernel_load(cmd, "--kernel", path, k);
}

/* Whether K's tiled backward has BF16 operations or formats (bwd_*). */
static bool
bwd_bf16(const fa_kernel *k)
{
    return fa_kernel_bwd_tiled(k)
           && (k->bwd_dp == FA_FMT_BF16 || k->bwd_operand == FA_FMT_BF16
               || k->bwd_out == FA_FMT_BF16
               || k->bwd_delta == FA_BDELTA_BF16_SUM
               || k->bwd_p == FA_BP_BF16_OPS || k->bwd_ds == FA_BDS_BF16_OPS);
}

/* What of K fixes BF16: its format fields that name it ("score", "p",
   ...) and a backward of BF16 operations or formats (the "repo"
   preset's), as text into BUF of N bytes ('"p", "o": "bf16"; "bwd":
   "repo"'); how many. */
static size_t
bf16_fields(const fa_kernel *k, char *buf, size_t n)
{
    const char *const names[] = {"score_dot", "score", "alpha", "p",
                                 "l",         "acc",   "o",     "lse_format"};
    const fa_fmt f[] = {k->score_dot, k->score, k->alpha, k->p,
                        k->l,         k->acc,   k->o,     k->lse_fmt};
    size_t count = 0, len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (f[i] == FA_FMT_BF16 && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s\"%s\"",
                                    count++ ? ", " : "", names[i]);
    if (count > 0 && len < n)
        len += (size_t)snprintf(buf + len, n - len, ": \"bf16\"");
    if (bwd_bf16(k) && len < n)
        snprintf(buf + len, n - len, "%s%s", count++ ? "; " : "",
                 k->bwd == FA_BWD_REPO
                     ? "\"bwd\": \"repo\""
                     : "\"bwd_*\": BF16 operations or formats");
    return count;
}

bool
fa_cli_inputs_defined(const char *cmd, const char *opt, const fa_kernel *k,
                      bool f16)
{
    char fields[200], ok[200], none[200];
    const char *names[16];
    size_t n = 0, len = 0;

    if (!f16 || k == NULL || bf16_fields(k, fields, sizeof fields) == 0)
        return true;
    /* the built-in descriptions defined for F16 inputs */
    for (size_t i = 0; fa_kernel_at(i) != NULL && n < 16; i++)
        if (bf16_fields(fa_kernel_at(i), none, sizeof none) == 0)
            names[n++] = fa_kernel_at(i)->name;
    ok[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof ok; i++)
        len += (size_t)snprintf(ok + len, sizeof ok - len, "%s%s",
                                i == 0       ? ""
                                : i + 1 == n ? " or "
                                             : ", ",
                                names[i]);
    cli_error(cmd,
              "%s %s%s%s: the inputs are F16, but the description fixes BF16 "
              "intermediates or outputs (%s), so it is defined for BF16 "
              "inputs only; pass BF16 inputs, or a description whose formats "
              "are the inputs' (\"in\") or FP32: --policy %s",
              opt, strcmp(opt, "--policy") == 0 ? "" : "(description ",
              k->name, strcmp(opt, "--policy") == 0 ? "" : ")", fields, ok);
    return false;
}

bool
fa_cli_parse_delta_xblock(const char *cmd, const char *v, uint64_t *n)
{
    if (!cli_parse_u64(cmd, "--delta-xblock", v, n))
        return false;
    if (*n == 0 || *n > 1024 || (*n & (*n - 1)) != 0) {
        cli_error(cmd,
                  "--delta-xblock %s: expected a power of two 1 to 1024 "
                  "(the rows per program of FlexAttention's delta kernel)",
                  v);
        return false;
    }
    return true;
}

bool
fa_cli_parse_softcap(const char *cmd, const char *v, double *cap)
{
    if (!cli_parse_double(cmd, "--softcap", v, true, cap))
        return false;
    if (!(*cap > 0.0)) {
        cli_error(cmd, "--softcap %s: expected a positive number", v);
        return false;
    }
    return true;
}

void
fa_cli_flex_header(cli_buf *b, const fa_config *c, bool backward,
                   const char *xblock_from)
{
    const fa_kernel *k = fa_config_kernel(c);

    if (k != NULL && k->combine == FA_COMBINE_FLEX_DECODE)
        cli_buf_printf(b,
                       "  flex_decoding: fewer than 128 query rows run the "
                       "description %s (split-KV programs merged by "
                       "inductor's reductions)\n",
                       k->name);
    if (c->softcap != 0.0)
        cli_buf_printf(b,
                       "  soft-cap %.17g: cap tanh(score / cap), "
                       "FlexAttention's score_mod\n",
                       c->softcap);
    if (backward && k != NULL && k->bwd == FA_BWD_FLEX)
        cli_buf_printf(b,
                       "  delta kernel: %zu row%s a program (XBLOCK, "
                       "autotuned on the GPU; %s)\n",
                       c->delta_xblock != 0 ? c->delta_xblock : 8,
                       c->delta_xblock == 1 ? "" : "s", xblock_from);
}

size_t
fa_cli_chained_groups(const fa_config *cfg, size_t nh, size_t nhkv)
{
    size_t g = nhkv != 0 && nh % nhkv == 0 ? nh / nhkv : 1;

    return fa_config_kernel(cfg)->gqa_dkv == FA_GQA_CHAIN ? g : 1;
}

bool
fa_cli_heads_usable(const char *cmd, const fa_config *hcfg, const am_mask *m,
                    size_t heads)
{
    size_t bad = 0;
    const char *why = am_heads_check(hcfg, m, heads, &bad);

    if (why != NULL)
        cli_error(cmd, "the configuration of head %zu is refused: %s", bad,
                  why);
    return why == NULL;
}

void
fa_cli_help_launch(FILE *out)
{
    fputs(
        "  --sms N              multiprocessors for --splits auto and "
        "--dq-buffers auto\n"
        "                       (default 132, H200)\n"
        "  --launch B,H[,Nq,Nk] the GPU launch the tensors came from "
        "(a file may keep\n"
        "                       one batch entry and a few heads): the "
        "launch-dependent\n"
        "                       rules (split count, cuDNN's decode grid, "
        "PyTorch's\n"
        "                       dispatch) use it; with it, --splits "
        "defaults to the\n"
        "                       kernel's own rule",
        out);
}

/* PREFIX NAME into KEY of N bytes; returns KEY. */
static const char *
prefixed(char *key, size_t n, const char *prefix, const char *name)
{
    snprintf(key, n, "%s%s", prefix, name);
    return key;
}

void
fa_cli_json_interval(cli_json *j, const char *prefix, const bias_summary *s,
                     bool sd)
{
    char key[64];

    cli_json_double(j, prefixed(key, sizeof key, prefix, "mean"), s->mean);
    if (sd)
        cli_json_double(j, prefixed(key, sizeof key, prefix, "sd"), s->sd);
    cli_json_double(j, prefixed(key, sizeof key, prefix, "se"), s->se);
    cli_json_double(j, prefixed(key, sizeof key, prefix, "t"), s->t);
    cli_json_double(j, prefixed(key, sizeof key, prefix, "ci_lo"), s->ci_lo);
    cli_json_double(j, prefixed(key, sizeof key, prefix, "ci_hi"), s->ci_hi);
}

void
fa_cli_json_extremes(cli_json *j, const char *prefix, const bias_summary *s)
{
    char key[64];

    cli_json_double(j, prefixed(key, sizeof key, prefix, "min"), s->min);
    cli_json_double(j, prefixed(key, sizeof key, prefix, "max"), s->max);
    cli_json_double(j, prefixed(key, sizeof key, prefix, "max_abs"),
                    s->n > 0 ? fmax(fabs(s->min), fabs(s->max)) : NAN);
}

const char *
fa_cli_g4(char *buf, size_t n, double x)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.4g", x);
    return buf;
}

void
fa_cli_kernel_opts_init(fa_cli_kernel_opts *o, fa_policy policy)
{
    memset(o, 0, sizeof *o);
    o->policy = policy;
    o->sms = 132;
    o->fix = FA_FIX_NONE;
}

/* --policy NAME: a named description, sdpa, or a precision policy. */
static bool
take_policy(const char *cmd, const char *v, fa_cli_kernel_opts *o)
{
    const fa_kernel *named;

    o->policy_given = true;
    o->kernel_named = o->sdpa = false;
    if (sdpa_policy_named(v, &named, &o->sdpa)) {
        if (named != NULL) {
            o->kernel = *named;
            o->kernel_named = true;
        }
        return true;
    }
    return fa_cli_parse_policy(cmd, v, &o->policy);
}

/* --fix NAME. */
static bool
take_fix(const char *cmd, const char *v, fa_cli_kernel_opts *o)
{
    int f = fa_fix_parse(v);

    if (f < 0) {
        cli_error(cmd,
                  "--fix '%s': unknown fix (expected none, beta, beta-v2, "
                  "eps or always)",
                  v);
        return false;
    }
    o->fix = (fa_fix_kind)f;
    o->fix_given = true;
    return true;
}

/* --causal (CAUSAL true) or --no-causal. */
static bool
take_causal(const char *cmd, bool causal, fa_cli_kernel_opts *o)
{
    if (causal ? o->no_causal : o->causal) {
        cli_error(cmd, "--causal and --no-causal contradict each other");
        return false;
    }
    if (causal)
        o->causal = true;
    else
        o->no_causal = true;
    return true;
}

bool
fa_cli_kernel_option(const char *cmd, int id, const char *v,
                     fa_cli_kernel_opts *o)
{
    switch (id) {
    case FA_CLI_O_POLICY:
        return take_policy(cmd, v, o);
    case FA_CLI_O_KERNEL:
        o->kernel_path = v;
        return true;
    case FA_CLI_O_SDPA_BACKENDS:
        o->sdpa_backends_given = true;
        return sdpa_policy_parse_backends(cmd, v, &o->sdpa_backends);
    case FA_CLI_O_SPLITS:
        return fa_cli_parse_splits(cmd, v, &o->splits, &o->splits_auto);
    case FA_CLI_O_DQ_BUFFERS:
        o->dq_given = true;
        return fa_cli_parse_dq_buffers(cmd, v, &o->dq_buffers);
    case FA_CLI_O_SMS:
        return fa_cli_parse_sms(cmd, v, &o->sms);
    case FA_CLI_O_LAUNCH:
        o->launch_given = true;
        return fa_cli_parse_launch(cmd, v, &o->launch, &o->launch_lengths);
    case FA_CLI_O_FIX:
        return take_fix(cmd, v, o);
    case FA_CLI_O_EXP:
        o->exp_given = true;
        return fa_cli_parse_exp(cmd, &o->exp, v);
    case FA_CLI_O_CAUSAL:
    case FA_CLI_O_NO_CAUSAL:
        return take_causal(cmd, id == FA_CLI_O_CAUSAL, o);
    case FA_CLI_O_CAUSAL_ALIGN:
        o->align_given = true;
        return fa_cli_parse_causal_align(cmd, v, &o->top_left);
    case FA_CLI_O_SCALE:
        if (!fa_cli_parse_scale(cmd, v, &o->scale_bits))
            return false;
        o->scale_given = true;
        return true;
    case FA_CLI_O_SOFTCAP:
        return fa_cli_parse_softcap(cmd, v, &o->softcap);
    case FA_CLI_O_DELTA_XBLOCK:
        return fa_cli_parse_delta_xblock(cmd, v, &o->delta_xblock);
    case FA_CLI_O_EXACT:
        o->exact_forced = true;
        return true;
    case FA_CLI_O_NO_EXACT:
        o->no_exact = true;
        return true;
    case FA_CLI_O_JSON:
        o->json = true;
        return true;
    case FA_CLI_O_DTYPE:
        if (!fa_cli_parse_dtype(cmd, v))
            return false;
        o->dtype_given = true;
        return true;
    case FA_CLI_O_LAYOUT:
        return fa_cli_parse_layout(cmd, v, &o->layout);
    default:
        return true;
    }
}

int
fa_cli_kernel_options(const char *cmd, fa_cli_kernel_opts *o)
{
    if (!fa_cli_load_kernel(cmd, o->kernel_path, o->policy_given, &o->kernel))
        return CLI_EXIT_USAGE;
    if (o->sdpa_backends_given && !o->sdpa)
        return cli_error(cmd, "--sdpa-backends applies to --policy sdpa");
    return -1;
}

bool
fa_cli_exact_options(const char *cmd, const fa_cli_kernel_opts *o)
{
    if (o->exact_forced && o->no_exact) {
        cli_error(cmd, "--exact and --no-exact contradict each other");
        return false;
    }
    return true;
}

bool
fa_cli_config_models(const char *cmd, fa_config *c, bool kernel_given,
                     bool exp_given, fa_cli_exp *exp, fa_cli_log *logm,
                     bool f16)
{
    if (!exp_given && !fa_cli_exp_for(cmd, fa_config_kernel(c), exp))
        return false;
    c->exp = exp->model;
    if (!fa_cli_log_for(cmd, kernel_given ? "--kernel" : "--policy",
                        fa_config_kernel(c), logm))
        return false;
    c->log = fa_cli_log_model(logm);
    c->rcp = fa_cli_rcp_model(logm);
    c->input = f16 ? &sf_format_f16 : NULL;
    return true;
}

void
fa_cli_json_shape(cli_json *j, size_t nb, size_t nh, size_t nq, size_t nk,
                  size_t d)
{
    cli_json_int(j, "batch", (long long)nb);
    cli_json_int(j, "heads", (long long)nh);
    cli_json_int(j, "nq", (long long)nq);
    cli_json_int(j, "nk", (long long)nk);
    cli_json_int(j, "d", (long long)d);
}

void
fa_cli_launch_fill(fa_cli_launch *l, size_t group, size_t nq, size_t nk,
                   size_t d, bool f16, uint64_t sms)
{
    l->kv_heads = l->heads / group;
    l->nq = nq;
    l->nk = nk;
    l->d = d;
    l->f16 = f16;
    l->sms = (unsigned)sms;
}

uint64_t
fa_cli_exact_work(uint64_t heads, size_t nq, size_t nk, size_t d,
                  bool backward)
{
    return cli_sat_mul(cli_sat_mul(cli_sat_mul(heads, nq), cli_sat_mul(nk, d)),
                       backward ? 4 : 1);
}

const char *
fa_cli_exact_off(bool no_exact, double softcap)
{
    if (no_exact)
        return "--no-exact";
    if (softcap != 0.0)
        return "the exact reference has no soft-capping";
    return NULL;
}

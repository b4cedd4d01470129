/* invariance -- bf16emu invariance: will one attention call's output
   change with the launch around it?  The engine is analysis/invariance.h;
   this file reads the call (a GPU dump or generated inputs), loads the
   descriptions, runs the distinct computations on threads, and prints
   the classes, the rules between them, a recommendation and, for a dump
   that recorded the GPU's own classes, whether they agree. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include "analysis/dump_inputs.h"
#include "analysis/dump_manifest.h"
#include "experiments/invariance_local.h"

enum
{
    OPT_HELP,
    OPT_BATCH,
    OPT_POLICY,
    OPT_SMS,
    OPT_MODE,
    OPT_LAUNCH_HEADS,
    OPT_HEAD_COUNTS,
    OPT_MASK,
    OPT_JSON,
    OPT_PLOT,
    OPT_THREADS,
    OPT_GEN,
    OPT_HEADS,
    OPT_KV_HEADS,
    OPT_NQ,
    OPT_NK,
    OPT_D,
    OPT_SEED,
    OPT_CAUSAL,
    OPT_DTYPE,
    OPT_BACKWARD
};

static const cli_option options[] = {
    {"help", false, OPT_HELP},
    {"batch", true, OPT_BATCH},
    {"policy", true, OPT_POLICY},
    {"sms", true, OPT_SMS},
    {"mode", true, OPT_MODE},
    {"launch-heads", true, OPT_LAUNCH_HEADS},
    {"head-counts", true, OPT_HEAD_COUNTS},
    {"mask", true, OPT_MASK},
    {"json", false, OPT_JSON},
    {"plot", true, OPT_PLOT},
    {"threads", true, OPT_THREADS},
    {"gen", true, OPT_GEN},
    {"heads", true, OPT_HEADS},
    {"kv-heads", true, OPT_KV_HEADS},
    {"nq", true, OPT_NQ},
    {"nk", true, OPT_NK},
    {"d", true, OPT_D},
    {"seed", true, OPT_SEED},
    {"causal", false, OPT_CAUSAL},
    {"dtype", true, OPT_DTYPE},
    {"backward", false, OPT_BACKWARD},
    {NULL, false, 0},
};


void
invariance_help(FILE *out)
{
    fputs(
        "usage: bf16emu invariance DUMP.safetensors [options]\n"
        "       bf16emu invariance --gen normal --heads H --nq N --nk N --d D "
        "[options]\n"
        "\n"
        "Will this call's attention output change with the launch around "
        "it?  The call\n"
        "(one batch entry: its heads, rows and keys) runs under every "
        "launch asked\n"
        "for: batch sizes, multiprocessor counts, backends, one prefill or "
        "decode\n"
        "steps.  Each launch is resolved to what decides its bits (the "
        "description\n"
        "run, the split count and its rule, the gemv kernel of a decode); "
        "launches\n"
        "that resolve alike are computed once.  The report gives the "
        "classes of\n"
        "launches with identical O and LSE, what separates them (elements, "
        "ulps,\n"
        "the rule), and the settings under which the call is invariant, "
        "where the\n"
        "emulation shows one.  A dump that recorded the GPU's classes "
        "(experiments/gpu/\n"
        "invariance_batch.py) is checked: exit 1 when they differ.\n"
        "\n"
        "options:\n"
        "  --batch LIST         launch batch sizes (default: the dump's, "
        "else\n"
        "                       1,2,3,4,8,16,32,64); the call is entry 0\n"
        "  --policy LIST        backends: flash (fa2), cudnn, efficient, "
        "math, sdpa\n"
        "                       (PyTorch 2.11's choice per launch; also "
        "'default'),\n"
        "                       or any built-in description (default: the "
        "dump's,\n"
        "                       else flash,cudnn,sdpa; with a mask "
        "cudnn,efficient,sdpa)\n"
        "  --sms LIST           multiprocessor counts (default 132: H100 "
        "SXM, H200)\n"
        "  --mode LIST          prefill, decode (each row one step over its "
        "cache;\n"
        "                       causal calls only); default prefill\n"
        "  --launch-heads H[,HKV]  heads of the launch (default: the "
        "dump's launch,\n"
        "                       else the call's)\n"
        "  --head-counts LIST   launches of these query heads each (KV "
        "heads by the\n"
        "                       call's group size), compared as batch "
        "sizes are\n"
        "  --mask FILE[:KEY]    SDPA's attn_mask of the call (default: the "
        "dump's);\n"
        "                       bool or additive, one batch entry's heads\n"
        "  --backward           also dQ, dK, dV (the deterministic kernels: "
        "FA2's dQ\n"
        "                       buffers by the launch); dO from the dump or "
        "generated\n"
        "  --threads N          threads (default: all processors)\n"
        "  --json               the report as JSON\n"
        "  --plot FILE          differing elements and ulps against the "
        "first batch\n"
        "                       size, per backend: FILE.png, FILE.svg, "
        "FILE.dat\n"
        "generated inputs:\n"
        "  --gen normal --heads H [--kv-heads H] --nq N --nk N --d D "
        "[--seed S]\n"
        "  [--causal] [--dtype bf16|fp16]\n"
        "\n"
        "Each description runs with its own exp and log models (fa2 and "
        "cudnn: the\n"
        "H200's ex2.approx and lg2.approx), as attn and diff run it.\n",
        out);
}

/* "1,2,4" into V (at most MAX_LIST positive integers up to MAX). */
static bool
parse_list(const char *opt, const char *s, uint64_t max, uint64_t *v,
           size_t *n)
{
    const char *p = s;

    *n = 0;
    while (*p != '\0') {
        char *end;
        unsigned long long x;
        if (*p < '0' || *p > '9' || *n == MAX_LIST)
            goto bad;
        errno = 0;
        x = strtoull(p, &end, 10);
        if (errno != 0 || x == 0 || x > max)
            goto bad;
        v[(*n)++] = x;
        p = end;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            goto bad;
    }
    if (*n != 0)
        return true;
bad:
    cli_error(CMD, "%s '%s': expected a comma list of at most %d integers "
                   "from 1 to %llu",
              opt, s, MAX_LIST, (unsigned long long)max);
    return false;
}

static bool
parse_names(inv_ctx *x, const char *s)
{
    char *buf = x->pol_buf, *p, *save = NULL;

    if (strlen(s) >= sizeof x->pol_buf)
        return cli_error(CMD, "--policy: too long"), false;
    memcpy(buf, s, strlen(s) + 1);
    x->npol = 0;
    for (p = strtok_r(buf, ",", &save); p != NULL;
         p = strtok_r(NULL, ",", &save)) {
        if (x->npol == MAX_BACKENDS - 4)
            return cli_error(CMD, "--policy: at most %d backends",
                             MAX_BACKENDS - 4),
                   false;
        x->pol[x->npol++] = p;
    }
    if (x->npol == 0)
        return cli_error(CMD, "--policy '%s': no backend named", s), false;
    return true;
}

static bool
take(void *ctx, int id, const char *v)
{
    inv_ctx *x = ctx;
    uint64_t l[MAX_LIST];
    size_t n;

    switch (id) {
    case OPT_BATCH:
        if (!parse_list("--batch", v, 1u << 20, l, &n))
            return false;
        for (size_t i = 0; i < n; i++)
            x->batch[i] = (size_t)l[i];
        x->nbatch = n;
        return true;
    case OPT_SMS:
        if (!parse_list("--sms", v, 100000, l, &n))
            return false;
        for (size_t i = 0; i < n; i++)
            x->sms[i] = (unsigned)l[i];
        x->nsms = n;
        return true;
    case OPT_HEAD_COUNTS:
        if (!parse_list("--head-counts", v, 1u << 20, l, &n))
            return false;
        for (size_t i = 0; i < n; i++)
            x->hc[i] = (size_t)l[i];
        x->nhc = n;
        return true;
    case OPT_MASK:
        x->mask_opd.arg = v;
        return true;
    case OPT_POLICY:
        return parse_names(x, v);
    case OPT_MODE:
        x->mode_given = true;
        x->mode_prefill = strstr(v, "prefill") != NULL;
        x->mode_decode = strstr(v, "decode") != NULL;
        if (strcmp(v, "prefill") != 0 && strcmp(v, "decode") != 0
            && strcmp(v, "prefill,decode") != 0
            && strcmp(v, "decode,prefill") != 0)
            return cli_error(CMD, "--mode '%s': expected prefill, decode or "
                                  "prefill,decode",
                             v),
                   false;
        return true;
    case OPT_LAUNCH_HEADS:
        if (!parse_list("--launch-heads", v, 1u << 20, l, &n) || n > 2)
            return n > 2 ? (cli_error(CMD, "--launch-heads: H or H,HKV"),
                            false)
                         : false;
        x->launch_heads = l[0];
        x->launch_kv_heads = n == 2 ? l[1] : 0;
        return true;
    case OPT_JSON:
        x->json = true;
        return true;
    case OPT_BACKWARD:
        x->backward = true;
        return true;
    case OPT_PLOT:
        x->plot = v;
        return true;
    case OPT_THREADS:
        return cli_parse_u64(CMD, "--threads", v, &x->threads);
    case OPT_GEN:
        if (strcmp(v, "normal") != 0)
            return cli_error(CMD, "--gen '%s': only normal is taken here", v),
                   false;
        x->gen = true;
        return true;
    case OPT_HEADS:
        return cli_parse_u64(CMD, "--heads", v, &x->heads);
    case OPT_KV_HEADS:
        return cli_parse_u64(CMD, "--kv-heads", v, &x->kv_heads);
    case OPT_NQ:
        return cli_parse_u64(CMD, "--nq", v, &x->nq);
    case OPT_NK:
        return cli_parse_u64(CMD, "--nk", v, &x->nk);
    case OPT_D:
        return cli_parse_u64(CMD, "--d", v, &x->d);
    case OPT_SEED:
        return cli_parse_u64(CMD, "--seed", v, &x->gp.seed);
    case OPT_CAUSAL:
        x->causal = true;
        return true;
    case OPT_DTYPE:
        x->f16_given = true;
        if (strcasecmp(v, "bf16") == 0 || strcasecmp(v, "bfloat16") == 0)
            x->f16 = false;
        else if (strcasecmp(v, "fp16") == 0 || strcasecmp(v, "f16") == 0
                 || strcasecmp(v, "float16") == 0)
            x->f16 = true;
        else
            return cli_error(CMD, "--dtype '%s': expected bf16 or fp16", v),
                   false;
        return true;
    default:
        return false;
    }
}

/*----------------------------------------------------------------------------
 * The call.
 *--------------------------------------------------------------------------*/

int64_t
inv_jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* The dump's manifest (safetensors metadata "manifest"). */
static bool
read_manifest(inv_ctx *x)
{
    tensor_listing ls = TENSOR_LISTING_INIT;
    tensor_error err;
    json_error_t je;

    if (tensor_file_list(x->path, &ls, &err) != 0)
        return cli_error(CMD, "%s", err.message), false;
    for (size_t i = 0; i < ls.n_meta && x->man == NULL; i++)
        if (strcmp(ls.meta[i].key, "manifest") == 0)
            x->man = json_loads(ls.meta[i].value, 0, &je);
    tensor_listing_free(&ls);
    if (x->man == NULL || !json_is_object(x->man))
        return cli_error(CMD, "%s: no manifest (metadata \"manifest\", a "
                              "JSON object) in the file",
                         x->path),
               false;
    return true;
}

/* The GPU's classes per backend (the manifest's "invariance"). */
static bool
read_observed(inv_ctx *x)
{
    const json_t *bs, *bes, *v;
    const char *name;
    size_t i;

    x->inv = json_object_get(x->man, "invariance");
    if (x->inv == NULL)
        return true;
    bs = json_object_get(x->inv, "batches");
    bes = json_object_get(x->inv, "backends");
    if (!json_is_array(bs) || json_array_size(bs) == 0
        || json_array_size(bs) > MAX_LIST || !json_is_object(bes))
        return cli_error(CMD, "%s: manifest: invariance: expected "
                              "\"batches\" (1 to %d integers) and "
                              "\"backends\" (an object)",
                         x->path, MAX_LIST),
               false;
    if (x->nbatch == 0) {
        for (i = 0; i < json_array_size(bs); i++)
            x->batch[i] = (size_t)json_integer_value(json_array_get(bs, i));
        x->nbatch = json_array_size(bs);
    }
    json_object_foreach((json_t *)bes, name, v)
    {
        iv_observed *o = &x->obs[x->nobs];
        const json_t *c = json_object_get(v, "classes");
        if (x->nobs == MAX_BACKENDS - 4)
            break;
        o->name = name;
        o->refused = json_object_get(v, "refused") != NULL;
        if (!o->refused) {
            const json_t *dc = json_object_get(v, "decode_classes");
            size_t nb = json_array_size(bs);
            if (!json_is_array(c) || json_array_size(c) != nb
                || (dc != NULL
                    && (!json_is_array(dc) || json_array_size(dc) != nb)))
                return cli_error(CMD, "%s: manifest: invariance.backends.%s."
                                      "classes (and decode_classes): "
                                      "expected one class per batch size",
                                 x->path, name),
                       false;
            for (size_t j = 0; j < nb; j++) {
                o->classes[j] = (size_t)json_integer_value(
                    json_array_get(c, j));
                if (dc != NULL)
                    o->classes[nb + j] = (size_t)json_integer_value(
                        json_array_get(dc, j));
            }
            o->decode = dc != NULL;
            {
                const json_t *bc = json_object_get(v, "bwd_classes");
                const json_t *br = json_object_get(v, "bwd_repeat");
                if (bc != NULL) {
                    if (!json_is_array(bc) || json_array_size(bc) != nb)
                        return cli_error(CMD, "%s: manifest: invariance."
                                              "backends.%s.bwd_classes: "
                                              "expected one class per batch "
                                              "size",
                                         x->path, name),
                               false;
                    o->bwd = true;
                    o->bwd_repeat = true;
                    for (size_t j = 0; j < nb; j++) {
                        o->bwd_classes[j] = (size_t)json_integer_value(
                            json_array_get(bc, j));
                        o->bwd_repeat = o->bwd_repeat
                                        && json_is_true(json_array_get(br, j));
                    }
                    x->obs_bwd = true;
                }
            }
            o->n = dc != NULL ? 2 * nb : nb;
            x->obs_decode = x->obs_decode || o->decode;
        }
        x->nobs++;
    }
    return true;
}

static bool
read_input(inv_ctx *x, const char *key, tensor *t, size_t heads, size_t n)
{
    tensor_error err;

    if (dump_input_read(x->path, key, x->f16 ? TENSOR_F16 : TENSOR_BF16, t,
                        &err)
        != 0)
        return cli_error(CMD, "%s", err.message), false;
    if (t->ndim != 4 || t->shape[0] != 1 || t->shape[1] != heads
        || t->shape[2] != n || t->shape[3] != x->d)
        return cli_error(CMD, "%s: %s: expected [1, %zu, %zu, %llu] (one "
                              "batch entry, as the manifest's shape)",
                         x->path, key, heads, n, (unsigned long long)x->d),
               false;
    return true;
}

static bool
read_dump(inv_ctx *x)
{
    const json_t *sh, *ls;
    const char *dt;

    if (!read_manifest(x))
        return false;
    sh = json_object_get(x->man, "shape");
    if (inv_jint(sh, "batch") != 1 || inv_jint(sh, "heads") <= 0 || inv_jint(sh, "nq") <= 0
        || inv_jint(sh, "nk") <= 0 || inv_jint(sh, "d") <= 0)
        return cli_error(CMD, "%s: manifest: shape: expected batch 1 (the "
                              "call is one batch entry) and positive heads, "
                              "nq, nk, d",
                         x->path),
               false;
    if (json_object_get(x->man, "attn_mask") != NULL
        && !json_is_null(json_object_get(x->man, "attn_mask"))
        && x->mask_opd.arg == NULL) {
        /* the call's mask, as the dump keeps it */
        x->mask_opd.path = strdup(x->path);
        x->mask_opd.key = "attn_mask";
        x->mask_opd.arg = "the dump's attn_mask";
        if (x->mask_opd.path == NULL)
            return cli_error(CMD, "out of memory"), false;
    }
    x->heads = (uint64_t)inv_jint(sh, "heads");
    x->kv_heads = inv_jint(sh, "kv_heads") > 0 ? (uint64_t)inv_jint(sh, "kv_heads")
                                            : x->heads;
    x->nq = (uint64_t)inv_jint(sh, "nq");
    x->nk = (uint64_t)inv_jint(sh, "nk");
    x->d = (uint64_t)inv_jint(sh, "d");
    x->causal = json_is_true(json_object_get(x->man, "causal"));
    dt = json_string_value(json_object_get(x->man, "dtype"));
    x->f16 = dt != NULL && strcmp(dt, "float16") == 0;
    ls = json_object_get(x->man, "launch_shape");
    x->mask_batch = inv_jint(ls, "batch") > 0 ? (uint64_t)inv_jint(ls, "batch") : 1;
    if (x->launch_heads == 0 && inv_jint(ls, "heads") > 0) {
        x->launch_heads = (uint64_t)inv_jint(ls, "heads");
        x->launch_kv_heads = inv_jint(ls, "kv_heads") > 0
                                 ? (uint64_t)inv_jint(ls, "kv_heads")
                                 : x->launch_heads;
    }
    if (inv_jint(x->man, "sms") > 0 && x->nsms == 0) {
        x->sms[0] = (unsigned)inv_jint(x->man, "sms");
        x->nsms = 1;
    }
    if (!read_observed(x))
        return false;
    if (x->obs_bwd)
        x->backward = true;
    if (x->backward && !read_input(x, "do", &x->tdo, x->heads, x->nq))
        return false;
    return read_input(x, "q", &x->tq, x->heads, x->nq)
           && read_input(x, "k", &x->tk, x->kv_heads, x->nk)
           && read_input(x, "v", &x->tv, x->kv_heads, x->nk);
}

static bool
make_inputs(inv_ctx *x)
{
    uint64_t sq[4], sk[4];
    float scale;

    if (x->heads == 0 || x->nq == 0 || x->nk == 0 || x->d == 0)
        return cli_error(CMD, "--gen: give --heads, --nq, --nk and --d"),
               false;
    if (x->kv_heads == 0)
        x->kv_heads = x->heads;
    if (x->f16)
        return cli_error(CMD, "--gen: generated inputs are BF16; give a dump "
                              "for FP16"),
               false;
    sq[0] = sk[0] = 1;
    sq[1] = x->heads;
    sk[1] = x->kv_heads;
    sq[2] = x->nq;
    sk[2] = x->nk;
    sq[3] = sk[3] = x->d;
    if ((x->backward && tensor_alloc(&x->tdo, TENSOR_BF16, 4, sq, NULL) != 0)
        || tensor_alloc(&x->tq, TENSOR_BF16, 4, sq, NULL) != 0
        || tensor_alloc(&x->tk, TENSOR_BF16, 4, sk, NULL) != 0
        || tensor_alloc(&x->tv, TENSOR_BF16, 4, sk, NULL) != 0)
        return cli_error(CMD, "out of memory"), false;
    {
        uint32_t b = fa_scale_bits(&(fa_config){
            .shape = {1, 1, (size_t)x->nq, (size_t)x->nk, (size_t)x->d}});
        memcpy(&scale, &b, sizeof scale);
    }
    /* head h's Q, and K and V of its key/value head: gen_head of that
       head index, as attn --gen makes them */
    for (size_t h = 0; h < x->heads; h++) {
        uint16_t *kb = malloc(x->nk * x->d * 2), *vb = malloc(x->nk * x->d * 2);
        if (kb == NULL || vb == NULL) {
            free(kb);
            free(vb);
            return cli_error(CMD, "out of memory"), false;
        }
        gen_head(&x->gp, scale, x->nq, x->nk, x->d, h,
                 (uint16_t *)x->tq.data + h * x->nq * x->d, kb, vb,
                 x->backward ? (uint16_t *)x->tdo.data + h * x->nq * x->d
                             : NULL);
        if (h < x->kv_heads) {
            memcpy((uint16_t *)x->tk.data + h * x->nk * x->d, kb,
                   x->nk * x->d * 2);
            memcpy((uint16_t *)x->tv.data + h * x->nk * x->d, vb,
                   x->nk * x->d * 2);
        }
        free(kb);
        free(vb);
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Descriptions.
 *--------------------------------------------------------------------------*/

/* The slot of description K, loaded on first use; NULL after an error. */
static slot *
slot_for(inv_ctx *x, const fa_kernel *k)
{
    slot *s;
    const char *why;
    const fa_exp_model *model = NULL;

    for (size_t i = 0; i < x->nslots; i++)
        if (x->slots[i].k == k)
            return &x->slots[i];
    if (x->nslots == MAX_BACKENDS)
        return cli_error(CMD, "too many descriptions"), NULL;
    s = &x->slots[x->nslots++];
    memset(s, 0, sizeof *s);
    s->k = k;
    s->exp_name = fa_kernel_enum_names("exp_model")[k->exp_model];
    if (!fa_cli_inputs_defined(CMD, "--policy", k, x->f16)
        || !fa_cli_log_for(CMD, "--policy", k, &x->log))
        return NULL;
    /* the tables of an exp model are read once for every description
       that uses it */
    for (size_t i = 0; i + 1 < x->nslots && model == NULL; i++)
        if (strcmp(x->slots[i].exp_name, s->exp_name) == 0)
            model = x->slots[i].cfg.exp;
    if (model == NULL) {
        if (!fa_cli_exp_for(CMD, k, &s->exp))
            return NULL;
        model = s->exp.model;
    }
    s->cfg = fa_config_kernel_default(k);
    s->cfg.shape = (fa_shape){1, 1, (size_t)x->nq, (size_t)x->nk,
                              (size_t)x->d};
    s->cfg.causal = x->causal;
    s->cfg.exp = model;
    s->cfg.log = fa_cli_log_model(&x->log);
    s->cfg.rcp = fa_cli_rcp_model(&x->log);
    s->cfg.input = x->f16 ? &sf_format_f16 : NULL;
    if ((why = fa_config_check(&s->cfg)) != NULL)
        return cli_error(CMD, "%s: %s", k->name, why), NULL;
    return s;
}

static bool
setup_backends(inv_ctx *x)
{
    for (size_t i = 0; i < x->npol; i++) {
        const char *n = x->pol[i];
        iv_backend *b = &x->be[i];
        b->name = n;
        if (strcmp(n, "sdpa") == 0 || strcmp(n, "default") == 0) {
            b->sdpa = true;
            for (int j = SDPA_BACKEND_MATH; j <= SDPA_BACKEND_CUDNN; j++) {
                slot *s = slot_for(x, fa_kernel_by_name(
                                          sdpa_backend_description(
                                              (sdpa_backend)j)));
                if (s == NULL)
                    return false;
                x->p.sdpa_cfg[j] = &s->cfg;
            }
        } else {
            const fa_kernel *k = fa_kernel_by_name(
                strcmp(n, "flash") == 0 ? "fa2" : n);
            slot *s;
            if (k == NULL)
                return cli_error(CMD, "--policy: '%s' names no backend or "
                                      "description (flash, cudnn, efficient, "
                                      "math, sdpa, or a built-in description "
                                      "such as fa2, paper-eq4, repo, fp32)",
                                 n),
                       false;
            if ((s = slot_for(x, k)) == NULL)
                return false;
            b->cfg = &s->cfg;
        }
    }
    x->p.nbackends = x->npol;
    x->p.backends = x->be;
    return true;
}

/*----------------------------------------------------------------------------
 * The launches and the computations.
 *--------------------------------------------------------------------------*/

/* The backends taken from a dump that the emulation cannot predict are
   left out, each with its reason (reported); backends the user named
   are never left out: make_launches refuses them. */
static void
prune_backends(inv_ctx *x)
{
    if (!x->pol_default)
        return;
    x->npol = iv_prune_backends(&x->p, x->be, &x->sp, x->skip, &x->nskip);
    for (size_t b = 0; b < x->npol; b++)
        x->pol[b] = x->be[b].name;
}

static bool
make_launches(inv_ctx *x)
{
    char why[1024];

    if (iv_grid_init(&x->g, &x->p, &x->sp, why, sizeof why) != 0)
        return cli_error(CMD, "%s", why), false;
    return true;
}

/* The runs of this rank (all of them in one process; under mpirun run R
   is rank R mod size's), each head on the threads. */
static bool
compute_mine(inv_ctx *x)
{
    iv_grid *g = &x->g;
    size_t size = (size_t)x->mpi.size, rank = (size_t)x->mpi.rank;
    size_t mine = g->nruns / size + (rank < g->nruns % size);
    long long units = (long long)(mine * x->heads);
    int failed = 0;

#ifdef _OPENMP
    int nt = x->threads != 0 ? (int)(x->threads > 1024 ? 1024 : x->threads)
                             : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : failed)
#endif
    for (long long u = 0; u < units; u++) {
        size_t r = ((size_t)u / x->heads) * size + rank,
               h = (size_t)u % x->heads;
        char w[512];
        if (iv_compute(&x->p, &g->key[g->runs[r]], h,
                       g->out[r] + h * g->y.head, w, sizeof w)
            != 0) {
#ifdef _OPENMP
#pragma omp critical
#endif
            memcpy(x->why, w, sizeof w);
            failed |= 1;
        }
    }
    return failed == 0;
}

#ifdef HAVE_MPI
/* Under mpirun: every rank gets every run's output from the rank that
   computed it; a refusal on any rank is every rank's (the lowest failing
   rank's reason). */
static bool
mpi_share(inv_ctx *x, bool ok)
{
    iv_grid *g = &x->g;
    int first = ok ? x->mpi.size : x->mpi.rank, lowest;

    MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (lowest < x->mpi.size) {
        MPI_Bcast(x->why, (int)sizeof x->why, MPI_CHAR, lowest,
                  MPI_COMM_WORLD);
        return false;
    }
    for (size_t r = 0; r < g->nruns; r++)
        for (size_t off = 0; off < g->out_len; off += 1u << 28) {
            size_t n = g->out_len - off < (1u << 28) ? g->out_len - off
                                                     : 1u << 28;
            MPI_Bcast(g->out[r] + off, (int)n, MPI_UINT32_T,
                      (int)(r % (size_t)x->mpi.size), MPI_COMM_WORLD);
        }
    return true;
}
#endif

static bool
compute(inv_ctx *x)
{
    bool ok;

    x->o_len = (size_t)(x->heads * x->nq * x->d);
    ok = compute_mine(x);
#ifdef HAVE_MPI
    if (x->mpi.on)
        ok = mpi_share(x, ok);
#endif
    if (!ok)
        return cli_error(CMD, "%s", x->why), false;
    iv_grid_classify(&x->g);
    return true;
}

/*----------------------------------------------------------------------------
 * The GPU's classes.
 *--------------------------------------------------------------------------*/

/* Compares the stored output of the GPU's K-th class of OB (tensor
   NAME.cC.o, [1, H, R, d] with R <= Nq rows) with the launch of R's. */
static bool
check_class_output(inv_ctx *x, const iv_observed *ob, size_t k,
                   iv_obs_result *res)
{
    char key[64];
    tensor t = TENSOR_INIT;
    tensor_error err;

    snprintf(key, sizeof key, "%s.c%zu.o", ob->name, res->cls[k]);
    if (safetensors_read(x->path, key, x->f16 ? TENSOR_F16 : TENSOR_BF16, &t,
                         &err)
        != 0) {
        cli_error(CMD, "%s", err.message);
        return false;
    }
    if (t.ndim != 4 || t.shape[0] != 1 || t.shape[1] != x->heads
        || t.shape[2] > x->nq || t.shape[3] != x->d) {
        tensor_free(&t);
        cli_error(CMD, "%s: %s: expected [1, %llu, R <= %llu, %llu]", x->path,
                  key, (unsigned long long)x->heads,
                  (unsigned long long)x->nq, (unsigned long long)x->d);
        return false;
    }
    iv_observed_output(&x->g, k, (const uint16_t *)t.data, t.shape[2], res);
    tensor_free(&t);
    return true;
}

/* Compares the stored gradients of the GPU's K-th backward class of OB
   (NAME.bC.dq, dk, dv) with the launch of R's. */
static bool
check_bwd_output(inv_ctx *x, const iv_observed *ob, size_t k,
                 iv_obs_result *res)
{
    static const char *const names[3] = {"dq", "dk", "dv"};
    const size_t rows[3] = {(size_t)x->nq, (size_t)x->nk, (size_t)x->nk};

    for (int t = 0; t < 3; t++) {
        char key[64];
        tensor g = TENSOR_INIT;
        tensor_error err;
        snprintf(key, sizeof key, "%s.b%zu.%s", ob->name, res->bwd_cls[k],
                 names[t]);
        if (safetensors_read(x->path, key, x->f16 ? TENSOR_F16 : TENSOR_BF16,
                             &g, &err)
            != 0)
            return cli_error(CMD, "%s", err.message), false;
        if (g.n_elems != x->heads * rows[t] * x->d) {
            tensor_free(&g);
            return cli_error(CMD, "%s: %s: expected [1, %llu, %zu, %llu]",
                             x->path, key, (unsigned long long)x->heads,
                             rows[t], (unsigned long long)x->d),
                   false;
        }
        iv_observed_bwd_output(&x->g, k, names[t], (const uint16_t *)g.data,
                               res);
        tensor_free(&g);
    }
    return true;
}

/* Whether the dump keeps the backward's class outputs of backend NAME:
   a trimmed fixture may keep them for the backends its manifest lists
   in "bwd_kept" only (all of them when it has no such list). */
bool
inv_bwd_kept(const inv_ctx *x, const char *name)
{
    const json_t *kept = json_object_get(x->man, "bwd_kept");
    size_t i;
    const json_t *v;

    if (!json_is_array(kept))
        return true;
    json_array_foreach(kept, i, v)
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
            return true;
    return false;
}

/* The GPU's classes of each backend of the dump against the grid's,
   with the stored outputs of each class. */
static bool
check_observed(inv_ctx *x, iv_obs_result *res)
{
    for (size_t i = 0; i < x->nobs; i++) {
        iv_obs_result *r = &res[i];
        iv_observed_check(&x->g, &x->obs[i], x->skip, x->nskip, r);
        for (size_t k = 0; r->checked && k < r->nclasses; k++)
            if (!check_class_output(x, &x->obs[i], k, r))
                return false;
        for (size_t k = 0;
             r->bwd_checked && inv_bwd_kept(x, x->obs[i].name) && k < r->nbwd;
             k++)
            if (!check_bwd_output(x, &x->obs[i], k, r))
                return false;
    }
    return true;
}

/* --head-counts: each a launch that holds the call's heads in its groups
   (KV heads H / group), ascending (they take the place of the launch heads). */
static bool
check_head_counts(const inv_ctx *x)
{
    uint64_t group = x->heads / x->kv_heads;

    for (size_t i = 0; i < x->nhc; i++) {
        if (x->hc[i] < x->heads || x->hc[i] % group != 0)
            return cli_error(CMD, "--head-counts: %zu heads cannot hold the "
                                  "call's %llu heads in groups of %llu",
                             x->hc[i], (unsigned long long)x->heads,
                             (unsigned long long)group),
                   false;
        if (i > 0 && x->hc[i] <= x->hc[i - 1])
            return cli_error(CMD, "--head-counts: give the head counts in "
                                  "ascending order"),
                   false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * main.
 *--------------------------------------------------------------------------*/

static bool
check_call(inv_ctx *x)
{
    if (x->kv_heads == 0 || x->heads % x->kv_heads != 0)
        return cli_error(CMD, "%llu query heads over %llu key/value heads: "
                              "the key/value heads must divide the query "
                              "heads",
                         (unsigned long long)x->heads,
                         (unsigned long long)x->kv_heads),
               false;
    if (x->causal && x->nq != x->nk)
        return cli_error(CMD, "a causal call with Nq %llu != Nk %llu: the "
                              "backends align is_causal differently; not "
                              "taken",
                         (unsigned long long)x->nq, (unsigned long long)x->nk),
               false;
    if (x->launch_heads == 0) {
        x->launch_heads = x->heads;
        x->launch_kv_heads = x->kv_heads;
    }
    if (x->launch_kv_heads == 0)
        x->launch_kv_heads = x->launch_heads;
    if (x->launch_heads < x->heads || x->launch_heads % x->launch_kv_heads != 0
        || x->launch_heads / x->launch_kv_heads != x->heads / x->kv_heads)
        return cli_error(CMD, "--launch-heads %llu,%llu: the launch must hold "
                              "the call's heads, with the same group size",
                         (unsigned long long)x->launch_heads,
                         (unsigned long long)x->launch_kv_heads),
               false;
    if (x->nhc != 0 && !check_head_counts(x))
        return false;
    if (!x->mode_given) {
        x->mode_prefill = true;
        x->mode_decode = x->obs_decode;
    }
    if (x->nbatch == 0) {
        static const size_t def[] = {1, 2, 3, 4, 8, 16, 32, 64};
        memcpy(x->batch, def, sizeof def);
        x->nbatch = 8;
    }
    if (x->nsms == 0) {
        x->sms[0] = 132;
        x->nsms = 1;
    }
    for (size_t j = 1; j < x->nbatch; j++)
        if (x->batch[j] <= x->batch[j - 1])
            return cli_error(CMD, "--batch: give the batch sizes in ascending "
                                  "order"),
                   false;
    if (x->npol == 0) {
        if (x->nobs != 0) {
            x->pol_default = true;
            for (size_t i = 0; i < x->nobs && x->npol < MAX_BACKENDS - 4; i++)
                x->pol[x->npol++] = strcmp(x->obs[i].name, "default") == 0
                                        ? "sdpa"
                                        : x->obs[i].name;
        } else if (x->mask_opd.arg != NULL) {
            /* PyTorch's flash backend takes no mask */
            x->pol[0] = "cudnn";
            x->pol[1] = "efficient";
            x->pol[2] = "sdpa";
            x->npol = 3;
        } else {
            x->pol[0] = "flash";
            x->pol[1] = "cudnn";
            x->pol[2] = "sdpa";
            x->npol = 3;
        }
    }
    x->p.heads = (size_t)x->heads;
    x->p.kv_heads = (size_t)x->kv_heads;
    x->p.launch_heads = (size_t)x->launch_heads;
    x->p.launch_kv_heads = (size_t)x->launch_kv_heads;
    x->p.nq = (size_t)x->nq;
    x->p.nk = (size_t)x->nk;
    x->p.d = (size_t)x->d;
    x->p.f16 = x->f16;
    x->p.causal = x->causal;
    x->p.q = (const uint16_t *)x->tq.data;
    x->p.k = (const uint16_t *)x->tk.data;
    x->p.v = (const uint16_t *)x->tv.data;
    x->p.backward = x->backward;
    x->p.dout = (const uint16_t *)x->tdo.data;
    x->sp.prefill = x->mode_prefill;
    x->sp.decode = x->mode_decode;
    x->sp.nbatch = x->nbatch;
    x->sp.batch = x->batch;
    x->sp.nsms = x->nsms;
    x->sp.sms = x->sms;
    x->sp.nheads = x->nhc;
    x->sp.heads = x->hc;
    return true;
}

/* The mask (--mask FILE[:KEY], or the dump's attn_mask) bound to the
   kept heads of one batch entry, and handed to the problem. */
static bool
bind_mask(inv_ctx *x)
{
    tensor_error err;
    char msg[512];
    dump_manifest dm;
    bool kept = false, from = false;

    if (x->mask_opd.arg == NULL)
        return true;
    x->mask_opd.opt = "--mask";
    if (x->mask_opd.path == NULL && !cli_split_spec(CMD, &x->mask_opd))
        return false;
    if (x->causal)
        return cli_error(CMD, "%s with a causal call: SDPA refuses an "
                              "attn_mask with is_causal; put the causal "
                              "mask into the mask",
                         x->mask_opd.arg),
               false;
    if (tensor_file_read(x->mask_opd.path, x->mask_opd.key, TENSOR_ANY,
                         &x->mask_opd.t, &err)
        != TENSOR_OK)
        return cli_error(CMD, "--mask: %s", err.message), false;
    /* the kept heads are the launch's heads_from of its entry batch_from
       (a dump's, read as diff reads them), else its first heads of
       entry 0 */
    if (x->man != NULL) {
        char *text = json_dumps(x->man, JSON_COMPACT);
        int prc = text != NULL ? dump_manifest_parse(x->path, text, &dm, &err)
                               : TENSOR_E_NOMEM;
        free(text);
        if (prc != TENSOR_OK)
            return cli_error(CMD, "%s", text != NULL ? err.message
                                                     : "out of memory"),
                   false;
        kept = dm.heads_key != NULL;
        from = dm.batch_from_given;
    }
    if (am_bind_file(&x->mask_opd.t, x->mask_batch != 0 ? x->mask_batch : 1,
                     (size_t)x->launch_heads, (size_t)x->nq, (size_t)x->nk,
                     1, (size_t)x->heads, from ? dm.batch_from : NULL,
                     from && dm.n_batch_from != 0, kept ? dm.heads : NULL,
                     &x->mask, msg, sizeof msg)
        != 0)
        return cli_error(CMD, "--mask %s: %s", x->mask_opd.arg, msg), false;
    x->has_mask = true;
    x->p.mask = &x->mask;
    x->p.mask_kind = x->mask_opd.t.dtype == TENSOR_BOOL
                             || x->mask_opd.t.dtype == TENSOR_U8
                         ? SDPA_MASK_BOOL
                         : SDPA_MASK_FLOAT;
    return true;
}

static void
ctx_free(inv_ctx *x)
{
    iv_grid_free(&x->g);
    if (x->has_mask)
        am_free(&x->mask);
    tensor_free(&x->mask_opd.t);
    free(x->mask_opd.path);
    for (size_t i = 0; i < x->nslots; i++)
        fa_cli_exp_free(&x->slots[i].exp);
    fa_cli_log_free(&x->log);
    tensor_free(&x->tq);
    tensor_free(&x->tk);
    tensor_free(&x->tv);
    tensor_free(&x->tdo);
    json_decref(x->man);
}

static int
run(inv_ctx *x)
{
    iv_obs_result res[MAX_BACKENDS];
    cli_buf out;
    int rc = CLI_EXIT_OK;

    if (x->path != NULL ? !read_dump(x) : !make_inputs(x))
        return CLI_EXIT_USAGE;
    if (!check_call(x) || !bind_mask(x) || !setup_backends(x))
        return CLI_EXIT_USAGE;
    prune_backends(x);
    if (x->npol == 0)
        return cli_error(CMD, "no backend of the dump can be predicted (%s: "
                              "%s)",
                         x->skip[0].name, x->skip[0].why);
    if (!make_launches(x)
        || !compute(x) || !check_observed(x, res))
        return CLI_EXIT_USAGE;
    for (size_t i = 0; i < x->nobs; i++)
        if (res[i].checked
            && (!res[i].partition_equal || res[i].differ != 0
                || (res[i].bwd_checked
                    && (!res[i].bwd_partition_equal
                        || res[i].bwd_differ != 0))))
            rc = CLI_EXIT_CHECK;
    cli_buf_init(&out);
    if (x->json)
        inv_json_report(&out, x, res);
    else
        inv_text_report(&out, x, res);
    if (x->mpi.rank != 0) {
        cli_buf_free(&out);
        return rc;
    }
    if (!cli_report_emit(CMD, &out, &rc))
        return rc;
    if (x->plot != NULL) {
        int prc = inv_write_plot(x);
        if (prc != CLI_EXIT_OK)
            return prc;
    }
    return rc;
}

static int
invariance_run(int argc, char **argv, const cli_mpi *mpi)
{
    inv_ctx x;
    cli_parser p;
    const char *v;
    int id, rc;

    memset(&x, 0, sizeof x);
    x.mpi = *mpi;
    x.gp = gen_params_default();
    x.tq = (tensor)TENSOR_INIT;
    x.tk = (tensor)TENSOR_INIT;
    x.tv = (tensor)TENSOR_INIT;
    x.tdo = (tensor)TENSOR_INIT;
    x.mask_opd.t = (tensor)TENSOR_INIT;
    cli_parser_init(&p, CMD, argc, argv);
    while ((id = cli_parser_next(&p, options, &v)) != CLI_ARG_END) {
        if (id == CLI_ARG_ERROR)
            return CLI_EXIT_USAGE;
        if (id == OPT_HELP) {
            if (mpi->rank == 0)
                invariance_help(stdout);
            return CLI_EXIT_OK;
        }
        if (id == CLI_ARG_OPERAND) {
            if (x.path != NULL)
                return cli_error(CMD, "one dump at a time ('%s' and '%s')",
                                 x.path, v);
            x.path = v;
            continue;
        }
        if (!take(&x, id, v))
            return CLI_EXIT_USAGE;
    }
    if ((x.path == NULL) == !x.gen)
        return cli_error(CMD, x.gen ? "give a dump or --gen, not both"
                                    : "give a dump, or --gen normal with "
                                      "its shape (bf16emu help invariance)");
    if (x.path != NULL
        && (x.heads || x.nq || x.nk || x.d || x.kv_heads || x.f16_given))
        return cli_error(CMD, "--heads, --kv-heads, --nq, --nk, --d and "
                              "--dtype go with --gen; a dump gives its own");
    rc = run(&x);
    ctx_free(&x);
    return rc;
}

/* Under mpirun every rank runs the same options; the distinct
   computations are shared among the ranks (compute) and rank 0 alone
   prints, so the report is that of one process. */
int
invariance_main(int argc, char **argv)
{
    cli_mpi mpi;
    int rc;

    cli_mpi_begin(&mpi);
    rc = invariance_run(argc, argv, &mpi);
    cli_mpi_end(&mpi);
    return rc;
}

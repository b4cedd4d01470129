/* dump_manifest.c -- the settings of one attention call that a GPU dump's
   manifest gives */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "analysis/dump_inputs.h"
#include "analysis/dump_manifest.h"
#include "analysis/tensor_internal.h"

/* Fails with "PATH: manifest: " and the rest. */
#define FAIL(...) tio_fail(err, TENSOR_E_FORMAT, path, "manifest", __VA_ARGS__)

/* Each field's reader: value V of key KEY into *M; TENSOR_OK or E_FORMAT
   "PATH: manifest: KEY...: ...". */
#define FIELD_ARGS                                                            \
    const char *path, const char *key, const json_t *v, dump_manifest *m,     \
        tensor_error *err

/* V a number of integral value in [LO, HI] (*OUT); false for anything
   else. */
static bool
whole(const json_t *v, double lo, double hi, double *out)
{
    double d;

    if (!json_is_number(v))
        return false;
    d = json_number_value(v);
    if (!(d >= lo && d <= hi) || d != floor(d))
        return false;
    *out = d;
    return true;
}

/* The first N - 1 bytes of S into BUF (N bytes), terminated. */
static void
copy_cut(char *buf, size_t n, const char *s)
{
    size_t len = strlen(s);

    if (len >= n)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
}

/* The list V (field NAME) of at most MAX non-negative integers into
   OUT[0 .. *N). */
static int
uint_list(const char *path, const char *name, const json_t *v, uint64_t *out,
          size_t max, size_t *n, tensor_error *err)
{
    *n = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        double d;
        if (i >= max || !whole(json_array_get(v, i), 0, 0x1p53, &d))
            return FAIL("%s: expected a list of at most %zu non-negative "
                        "integers",
                        name, max);
        out[(*n)++] = (uint64_t)d;
    }
    return TENSOR_OK;
}

/* The boolean V (field NAME) into *OUT. */
static int
get_bool(const char *path, const char *name, const json_t *v, bool *out,
         tensor_error *err)
{
    if (!json_is_boolean(v))
        return FAIL("%s: expected true or false", name);
    *out = json_is_true(v);
    return TENSOR_OK;
}

static int
f_causal(FIELD_ARGS)
{
    int rc = get_bool(path, "causal", v, &m->causal, err);

    (void)key;
    if (rc == TENSOR_OK)
        m->causal_given = true;
    return rc;
}

/* dump_sdpa.py: "bottom-right (...)" (the flash kernel's) or "top-left
   (...)" (SDPA's is_causal); null when not causal */
static int
f_alignment(FIELD_ARGS)
{
    const char *s = json_string_value(v);

    (void)key;
    if (json_is_null(v))
        return TENSOR_OK;
    if (s == NULL
        || (strncmp(s, "top-left", 8) != 0
            && strncmp(s, "bottom-right", 12) != 0))
        return FAIL("causal_alignment: expected a string starting "
                    "\"top-left\" or \"bottom-right\", or null");
    m->top_left = s[0] == 't';
    m->align_given = true;
    return TENSOR_OK;
}

/* The positive integers (at most HI) under the keys K[0] and K[1] of the
   object V (field NAME) into X[0] and X[1], each left as it is when its
   key is absent; other keys, and V not an object, are passed over. */
static int
int_pair(const char *path, const char *name, const json_t *v,
         const char *const k[2], double hi, double x[2], tensor_error *err)
{
    const char *key;
    json_t *e;

    if (!json_is_object(v))
        return TENSOR_OK;
    json_object_foreach((json_t *)v, key, e)
    {
        bool first = strcmp(key, k[0]) == 0;
        if (!first && strcmp(key, k[1]) != 0)
            continue;
        if (!whole(e, 1, hi, &x[first ? 0 : 1]))
            return FAIL("%s.%s: expected a positive integer", name, key);
    }
    return TENSOR_OK;
}

/* The launch of a dump that keeps some of its heads: its batch x heads
   selects the math backend's gemv kernels. */
static int
f_launch_shape(FIELD_ARGS)
{
    static const char *const keys[2] = {"batch", "heads"};
    double l[2] = {0, 0};
    int rc = int_pair(path, "launch_shape", v, keys, 0x1p31, l, err);

    (void)key;
    if (rc == TENSOR_OK && l[0] > 0 && l[1] > 0) {
        m->launch_batch = (uint64_t)l[0];
        m->launch_heads = (uint64_t)l[1];
    }
    return rc;
}

static int
f_fix(FIELD_ARGS)
{
    const char *s = json_string_value(v);
    int f;

    (void)key;
    if (s == NULL)
        return FAIL("fix: expected a string (none, beta, beta-v2, eps or "
                    "always)");
    f = fa_fix_parse(s);
    if (f < 0)
        return FAIL("fix: \"%.31s\" (expected none, beta, beta-v2, eps or "
                    "always)",
                    s);
    m->fix = (fa_fix_kind)f;
    m->fix_given = true;
    return TENSOR_OK;
}

/* dump_sdpa.py: the backend pinned, or "default" (PyTorch's own choice) */
static int
f_backend(FIELD_ARGS)
{
    (void)path, (void)key, (void)err;
    if (json_is_string(v))
        copy_cut(m->backend, sizeof m->backend, json_string_value(v));
    return TENSOR_OK;
}

/* fa_dump's row-sum rescale: "FMUL then FADD ..." (no contraction) or
   "FFMA ..." (PyTorch's build) */
static int
f_rowsum(FIELD_ARGS)
{
    (void)path, (void)key, (void)err;
    if (json_is_string(v))
        m->rowsum_separate = strncmp(json_string_value(v), "FMUL", 4) == 0;
    return TENSOR_OK;
}

static int
f_scale(FIELD_ARGS)
{
    (void)key;
    if (json_is_string(v)) {
        copy_cut(m->scale_text, sizeof m->scale_text, json_string_value(v));
        m->scale_text_given = true;
    } else if (json_is_number(v)) {
        m->scale_number = json_number_value(v);
        m->scale_number_given = true;
    } else {
        return FAIL("scale: expected a number or a string such as "
                    "\"1/sqrt(d) (PyTorch default)\"");
    }
    return TENSOR_OK;
}

/* "splits": the KV split count of the launch (dump_sdpa.py reads it from
   the split kernel's grid; null for a backend without the flash kernel);
   "dq_buffers": the flash backward's dQ accumulation buffers (from the
   dq_dk_dv kernel's grid; null without a flash backward). */
static int
f_count(FIELD_ARGS)
{
    bool splits = strcmp(key, "splits") == 0;
    double d;

    if (json_is_null(v))
        return TENSOR_OK;
    if (splits && !whole(v, 1, 128, &d))
        return FAIL("splits: expected an integer from 1 to 128");
    if (!splits && !whole(v, 1, 65536, &d))
        return FAIL("dq_buffers: expected an integer from 1 to 65536 or "
                    "null");
    *(splits ? &m->splits : &m->dq_buffers) = (size_t)d;
    return TENSOR_OK;
}

/* PyTorch's t.shape: [B, H, N, d] (or [B, N, H, d] under "layout":
   "bnhd"), or the launch's sizes by name. */
static int
f_shape(FIELD_ARGS)
{
    static const char *const names[5] = {"batch", "heads", "nq", "nk", "d"};
    int rc;

    (void)key;
    if (json_is_array(v)) {
        rc = uint_list(path, "shape", v, m->shape_list, 4, &m->n_shape_list,
                       err);
        if (rc != TENSOR_OK)
            return rc;
        if (m->n_shape_list != 4)
            return FAIL("shape: a list of %zu numbers (expected [B, H, N, "
                        "d], or an object {\"batch\", \"heads\", \"nq\", "
                        "\"nk\", \"d\"})",
                        m->n_shape_list);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
            int i = 0;
            double d;
            while (i < 5 && strcmp(k, names[i]) != 0)
                i++;
            if (i == 5)
                continue;
            if (!whole(e, 1, 0x1p53, &d))
                return FAIL("shape.%s: expected a positive integer", k);
            m->shape[i] = (uint64_t)d;
        }
        for (int i = 0; i < 5; i++)
            if (json_object_get(v, names[i]) == NULL)
                return FAIL("shape.%s: missing (expected batch, heads, nq, "
                            "nk and d)",
                            names[i]);
    } else {
        return FAIL("shape: expected a list [B, H, N, d] or an object "
                    "{\"batch\", \"heads\", \"nq\", \"nk\", \"d\"}");
    }
    m->shape_given = true;
    return TENSOR_OK;
}

/* The launch's index of each head the tensors hold: "heads_kept"
   (capture.py, where shape is the launch's) or "heads_from"
   (trim_dump.py, slice_heads.py, where shape is the file's and
   launch_shape the launch's). */
static int
f_heads(FIELD_ARGS)
{
    if (m->heads_key != NULL)
        return FAIL("%s: expected one of heads_kept and heads_from, not both",
                    key);
    m->heads_key = key[6] == 'k' ? "heads_kept" : "heads_from";
    if (!json_is_array(v))
        return FAIL("%s: expected a list of head indices", m->heads_key);
    return uint_list(path, m->heads_key, v, m->heads, DUMP_MANIFEST_MAX_HEADS,
                     &m->n_heads, err);
}

/* trim_dump.py: the launch's batch of the heads kept, one number for all
   of them or one per head */
static int
f_batch_from(FIELD_ARGS)
{
    double d;
    int rc;

    (void)key;
    if (json_is_array(v)) {
        rc = uint_list(path, "batch_from", v, m->batch_from,
                       DUMP_MANIFEST_MAX_HEADS, &m->n_batch_from, err);
        if (rc != TENSOR_OK)
            return rc;
    } else if (whole(v, 0, 0x1p31, &d)) {
        m->batch_from[0] = (uint64_t)d;
        m->n_batch_from = 0;
    } else {
        return FAIL("batch_from: expected a non-negative integer or a list "
                    "of them");
    }
    m->batch_from_given = true;
    return TENSOR_OK;
}

static int
f_layout(FIELD_ARGS)
{
    const char *s = json_string_value(v);

    (void)key;
    if (s == NULL || !ut_layout_parse(s, &m->layout))
        return FAIL("layout: expected \"bhnd\" or \"bnhd\"");
    m->layout_given = true;
    return TENSOR_OK;
}

static int
f_enable_gqa(FIELD_ARGS)
{
    bool b = false;
    int rc = get_bool(path, "enable_gqa", v, &b, err);

    (void)key;
    if (rc == TENSOR_OK)
        m->enable_gqa = b ? 1 : 0;
    return rc;
}

/* described here, held as the tensor attn_mask */
static int
f_attn_mask(FIELD_ARGS)
{
    (void)path, (void)key, (void)err;
    m->mask_given = !json_is_null(v) && !json_is_false(v);
    return TENSOR_OK;
}

/* A setting that changes the result and that the emulator does not
   apply: refused by name unless it is off. */
static int
f_unmodelled(FIELD_ARGS)
{
    bool off = json_is_null(v) || json_is_false(v)
               || (strcmp(key, "dropout_p") == 0 && json_is_number(v)
                   && json_number_value(v) == 0.0);

    (void)m;
    if (off)
        return TENSOR_OK;
    return FAIL("\"%s\": %s changes the result and is not modelled yet; "
                "bf16emu will not compare without it (expected it absent, "
                "null, false or 0)",
                key, dump_unmodelled_what(key));
}

/* The levels of V: 1 for a number, string, true, false or null, one
   more than its deepest element for a list or an object. */
static int
levels(const json_t *v)
{
    int n = 0;

    if (json_is_array(v))
        for (size_t i = 0; i < json_array_size(v); i++) {
            int e = levels(json_array_get(v, i));
            n = e > n ? e : n;
        }
    else if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
            int l = levels(e);
            n = l > n ? l : n;
        }
    }
    return n + 1;
}

/* Whether field KEY's value V nests within DUMP_MANIFEST_MAX_LEVELS
   levels (those of an object "shape" or "launch_shape" counted from its
   members). */
static bool
shallow(const char *key, const json_t *v)
{
    bool sized =
        json_is_object(v)
        && (strcmp(key, "shape") == 0 || strcmp(key, "launch_shape") == 0);

    return levels(v) <= DUMP_MANIFEST_MAX_LEVELS + (sized ? 1 : 0);
}

/* FlexAttention's mask_mod by name: "causal" is the causal mask, any
   other needs its values (the caller checks: attn_mask or --mask) */
static int
f_mask_mod(FIELD_ARGS)
{
    const char *s = json_string_value(v);

    if (json_is_null(v))
        return TENSOR_OK;
    if (s == NULL || s[0] == '\0' || strlen(s) >= sizeof m->mask_mod)
        return FAIL("%s: expected null or a short string (the mask_mod's "
                    "name)",
                    key);
    if (strcmp(s, "causal") != 0)
        snprintf(m->mask_mod, sizeof m->mask_mod, "%s", s);
    return TENSOR_OK;
}

/* FlexAttention's tanh soft-cap: none, or a positive number */
static int
f_softcap(FIELD_ARGS)
{
    if (json_is_null(v) || json_is_false(v))
        return TENSOR_OK;
    if (!json_is_number(v) || !(json_number_value(v) >= 0.0)
        || !isfinite(json_number_value(v)))
        return FAIL("%s: expected null, 0 or a positive number (the "
                    "soft-cap)",
                    key);
    m->softcap = json_number_value(v);
    return TENSOR_OK;
}

/* The kernels a capture saw: the grid of FlexAttention's delta kernel
   (its programs decide its reduction order, autotuned on the GPU) */
/* The product of the three integers of A (a grid or block), or 0. */
static uint64_t
dims_product(const json_t *a)
{
    uint64_t p = 1;
    double x;

    if (!json_is_array(a) || json_array_size(a) == 0
        || json_array_size(a) > 3)
        return 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        if (!whole(json_array_get(a, i), 1, 0x1p31, &x))
            return 0;
        p *= (uint64_t)x;
    }
    return p;
}

/* flex_decoding's persistent merge kernels among the forward's: M and
   L's (a name holding "per_fused_flex_attention_mul") and O's (the last
   other); where no name says which (a graph that returns no LSE) and
   there are two, the first launched is M and L's (more: not recorded);
   and whether the forward ran FlexAttention's Triton template at all */
static int
f_kernels_forward(const char *path, const json_t *fwd, dump_manifest *m,
                  tensor_error *err)
{
    size_t i, merges = 0;
    bool named = false, template = false;
    json_t *e;

    json_array_foreach(fwd, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (name != NULL && strstr(name, "tem_fused_flex_attention") != NULL)
            template = true;
        if (name != NULL
            && strstr(name, "per_fused_flex_attention_mul") != NULL)
            named = true;
        if (name != NULL && strstr(name, "per_fused_flex_attention") != NULL
            && strstr(name, "backward") == NULL)
            merges++;
    }
    m->flex.forward_unfused = json_array_size(fwd) > 0 && !template;
    if (!named && merges > 2)
        return TENSOR_OK; /* which is which is not known: not recorded */
    merges = 0;
    json_array_foreach(fwd, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        uint64_t g, t;
        int which;
        if (name == NULL || strstr(name, "per_fused_flex_attention") == NULL
            || strstr(name, "backward") != NULL)
            continue;
        if (named)
            which = strstr(name, "per_fused_flex_attention_mul") != NULL ? 0
                                                                         : 1;
        else
            which = merges == 0 ? 0 : 1; /* the first launched */
        merges++;
        g = dims_product(json_object_get(e, "grid"));
        t = dims_product(json_object_get(e, "block"));
        if (g == 0 || t == 0)
            return FAIL("kernels.forward[%zu]: expected grid and block of "
                        "positive integers",
                        i);
        m->flex.merge_programs[which] = g;
        m->flex.merge_threads[which] = t;
    }
    return TENSOR_OK;
}

static int
f_kernels(FIELD_ARGS)
{
    json_t *bwd = json_is_object(v) ? json_object_get(v, "backward") : NULL;
    json_t *fwd = json_is_object(v) ? json_object_get(v, "forward") : NULL;
    size_t i;
    json_t *e;

    (void)key;
    if (json_is_array(fwd)) {
        int rc = f_kernels_forward(path, fwd, m, err);
        if (rc != TENSOR_OK)
            return rc;
    }
    if (!json_is_array(bwd))
        return TENSOR_OK;
    json_array_foreach(bwd, i, e)
    {
        json_t *name = json_object_get(e, "name");
        json_t *grid = json_object_get(e, "grid");
        double x;
        if (!json_is_string(name)
            || strstr(json_string_value(name),
                      "per_fused_flex_attention_backward")
                   == NULL)
            continue;
        if (!json_is_array(grid) || !whole(json_array_get(grid, 0), 1, 0x1p31, &x))
            return FAIL("kernels.backward[%zu].grid: expected [x, y, z] of "
                        "positive integers",
                        i);
        m->flex.delta_programs = (uint64_t)x;
    }
    return TENSOR_OK;
}

/* FlexAttention's delta kernel rows per program (null: not known) */
static int
f_delta_xblock(FIELD_ARGS)
{
    double x;

    if (json_is_null(v))
        return TENSOR_OK;
    if (!whole(v, 1, 1024, &x) || ((uint64_t)x & ((uint64_t)x - 1)) != 0)
        return FAIL("%s: expected null or a power of two 1 to 1024", key);
    m->flex.delta_xblock = (uint64_t)x;
    return TENSOR_OK;
}

/* flex_attention's kernel_options: the forward's pinned tiles */
static int
f_kernel_options(FIELD_ARGS)
{
    static const char *const keys[2] = {"BLOCK_M", "BLOCK_N"};
    double b[2] = {0, 0};
    int rc = int_pair(path, "kernel_options", v, keys, 4096, b, err);

    (void)key;
    if (b[0] > 0)
        m->flex.block_m = (uint64_t)b[0];
    if (b[1] > 0)
        m->flex.block_n = (uint64_t)b[1];
    return rc;
}

static const struct
{
    const char *key;
    int (*read)(FIELD_ARGS);
} fields[] = {
    {"kernels", f_kernels},
    {"kernel_options", f_kernel_options},
    {"delta_xblock", f_delta_xblock},
    {"causal", f_causal},
    {"causal_alignment", f_alignment},
    {"launch_shape", f_launch_shape},
    {"fix", f_fix},
    {"backend", f_backend},
    {"rowsum", f_rowsum},
    {"scale", f_scale},
    {"splits", f_count},
    {"dq_buffers", f_count},
    {"shape", f_shape},
    {"heads_kept", f_heads},
    {"heads_from", f_heads},
    {"batch_from", f_batch_from},
    {"layout", f_layout},
    {"enable_gqa", f_enable_gqa},
    {"attn_mask", f_attn_mask},
    {"mask_mod", f_mask_mod},
    {"softcap", f_softcap},
};

int
dump_manifest_parse(const char *path, const char *text, dump_manifest *m,
                    tensor_error *err)
{
    /* numbers as doubles, each as strtod reads its text */
    const size_t flags = JSON_DECODE_INT_AS_REAL;
    json_error_t je;
    json_t *root, *v;
    const char *key;
    int rc = TENSOR_OK;

    memset(m, 0, sizeof *m);
    m->layout = UT_LAYOUT_UNSET;
    m->enable_gqa = -1;
    if (text[strspn(text, " \t\n\r")] != '{')
        return FAIL("not a JSON object (expected {...})");
    root = json_loads(text, flags, &je);
    if (root == NULL && json_error_code(&je) == json_error_out_of_memory)
        return tio_fail(err, TENSOR_E_NOMEM, path, "manifest",
                        "out of memory");
    if (root == NULL)
        return FAIL("malformed JSON at byte %d: %s", je.position, je.text);
    json_object_foreach(root, key, v)
    {
        size_t i = 0;
        while (i < sizeof fields / sizeof fields[0]
               && strcmp(key, fields[i].key) != 0)
            i++;
        if (i < sizeof fields / sizeof fields[0])
            rc = fields[i].read(path, key, v, m, err);
        else if (dump_unmodelled_what(key) != NULL)
            rc = f_unmodelled(path, key, v, m, err);
        if (rc == TENSOR_OK && !shallow(key, v))
            rc = FAIL("%s: nested too deeply (expected at most %d levels)",
                      key, DUMP_MANIFEST_MAX_LEVELS);
        if (rc != TENSOR_OK)
            break;
    }
    json_decref(root);
    return rc;
}

int
dump_flex_parse(const char *path, const char *text, dump_flex *f,
                tensor_error *err)
{
    static const char *const keys[] = {"kernels", "kernel_options",
                                       "delta_xblock"};
    const size_t flags = JSON_DECODE_INT_AS_REAL;
    json_error_t je;
    json_t *root;
    dump_manifest m;
    int rc = TENSOR_OK;

    memset(&m, 0, sizeof m);
    memset(f, 0, sizeof *f);
    root = json_loads(text, flags, &je);
    if (root == NULL)
        return FAIL("malformed JSON at byte %d: %s", je.position, je.text);
    for (size_t i = 0; i < sizeof keys / sizeof *keys && rc == TENSOR_OK;
         i++) {
        const json_t *v = json_object_get(root, keys[i]);
        if (v == NULL)
            continue;
        rc = i == 0   ? f_kernels(path, keys[i], v, &m, err)
             : i == 1 ? f_kernel_options(path, keys[i], v, &m, err)
                      : f_delta_xblock(path, keys[i], v, &m, err);
    }
    json_decref(root);
    *f = m.flex;
    return rc;
}

const char *
dump_flex_apply(const dump_flex *f, uint64_t launch_rows, fa_config *c)
{
    if (fa_config_kernel(c)->block_sparse) {
        c->br = (size_t)f->block_m;
        c->bc = (size_t)f->block_n;
    }
    if (c->flex_merge_programs[0] == 0 && c->flex_merge_programs[1] == 0)
        for (int i = 0; i < 2; i++) {
            c->flex_merge_programs[i] = (size_t)f->merge_programs[i];
            c->flex_merge_threads[i] = (size_t)f->merge_threads[i];
        }
    if (c->delta_xblock != 0)
        return NULL;
    if (f->delta_xblock != 0) {
        c->delta_xblock = (size_t)f->delta_xblock;
        return "the manifest's";
    }
    if (f->delta_programs == 0)
        return NULL;
    c->delta_xblock = launch_rows / f->delta_programs > 0
                          ? (size_t)(launch_rows / f->delta_programs)
                          : 1;
    return "the manifest's kernels";
}

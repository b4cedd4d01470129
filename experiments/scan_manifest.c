/* scan_manifest.c -- bf16emu scan's manifest: the capture's "calls"
   (--manifest FILE, the shards' metadata or their sidecars), each call's
   entry checked (scan_local.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "analysis/dump_inputs.h"
#include "experiments/scan_local.h"

/*----------------------------------------------------------------------------
 * The manifest.
 *--------------------------------------------------------------------------*/
static json_t *
parse_json_text(const char *text, size_t len, const char *what)
{
    json_error_t je;
    json_t *v = json_loadb(text, len, 0, &je);

    if (v == NULL) {
        cli_error(CMD, "%s: the manifest is not JSON (line %d: %s)", what,
                  je.line, je.text);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        cli_error(CMD, "%s: the manifest is not a JSON object", what);
        return NULL;
    }
    return v;
}

static json_t *
read_json_file(const char *path)
{
    size_t len;
    char *text = cli_read_all(path, &len);
    json_t *v;

    if (text == NULL) {
        cli_error(CMD, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    v = parse_json_text(text, len, path);
    free(text);
    return v;
}

/* The manifest a shard carries, or NULL (none); *BAD after an error. */
static json_t *
shard_manifest(const shard *s, bool *bad)
{
    struct stat st;
    char *side;
    size_t n;
    json_t *v;
    const char *dot;

    *bad = false;
    for (size_t i = 0; i < s->l.n_meta; i++)
        if (strcmp(s->l.meta[i].key, "manifest") == 0) {
            v = parse_json_text(s->l.meta[i].value,
                                strlen(s->l.meta[i].value), s->path);
            *bad = v == NULL;
            return v;
        }
    n = strlen(s->path);
    dot = strrchr(s->path, '.');
    if (dot == NULL || strchr(dot, '/') != NULL)
        dot = s->path + n;
    side = malloc((size_t)(dot - s->path) + 6);
    if (side == NULL) {
        *bad = true;
        cli_error(CMD, "out of memory");
        return NULL;
    }
    memcpy(side, s->path, (size_t)(dot - s->path));
    strcpy(side + (dot - s->path), ".json");
    if (stat(side, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(side);
        return NULL;
    }
    v = read_json_file(side);
    *bad = v == NULL;
    free(side);
    return v;
}

static bool
get_string(const json_t *o, const char *key, char *buf, size_t n,
           const char *what)
{
    const json_t *v = json_object_get(o, key);

    buf[0] = '\0';
    if (v == NULL || json_is_null(v))
        return true;
    if (!json_is_string(v) || strlen(json_string_value(v)) >= n) {
        cli_error(CMD, "%s: field '%s' must be a string (under %zu bytes)",
                  what, key, n);
        return false;
    }
    strcpy(buf, json_string_value(v));
    return true;
}

/* An optional integer > 0 of OBJ (0 when absent). */
static bool
opt_count(const json_t *obj, const char *key, const char *what,
          uint64_t *out)
{
    const json_t *v = json_object_get(obj, key);

    *out = 0;
    if (v == NULL || json_is_null(v))
        return true;
    if (!json_is_integer(v) || json_integer_value(v) <= 0) {
        cli_error(CMD, "%s.%s: expected an integer > 0", what, key);
        return false;
    }
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* The manifest's "model" (M, may be NULL) and the call's layer and kept
   heads against it. */
static bool
model_fields(const json_t *m, call_spec *c)
{
    if (m != NULL && json_is_object(m)
        && (!opt_count(m, "layers", "manifest model", &c->model_layers)
            || !opt_count(m, "heads", "manifest model", &c->model_heads)
            || !opt_count(m, "head_dim", "manifest model", &c->model_d)))
        return false;
    if (c->model_layers != 0 && (uint64_t)c->layer >= c->model_layers)
        return cli_error(CMD,
                         "manifest calls[%zu]: layer %lld, but model.layers "
                         "is %" PRIu64 " (a manifest of another model?)",
                         c->idx, c->layer, c->model_layers),
               false;
    if (c->launch_heads != 0 && c->model_heads != 0
        && c->launch_heads != c->model_heads)
        return cli_error(CMD,
                         "manifest calls[%zu]: launch_shape.heads %" PRIu64
                         ", but model.heads is %" PRIu64
                         " (a manifest of another model?)",
                         c->idx, c->launch_heads, c->model_heads),
               false;
    for (size_t i = 0; i < c->n_heads_kept; i++) {
        uint64_t h = c->launch_heads ? c->launch_heads : c->model_heads;
        if (h != 0 && c->heads_kept[i] >= h)
            return cli_error(CMD,
                             "manifest calls[%zu]: heads_kept[%zu] = %zu, "
                             "but the model has %" PRIu64 " heads",
                             c->idx, i, c->heads_kept[i], h),
                   false;
    }
    return true;
}

/* The settings that change the result and that scan does not apply
   yet, refused by name (never measured without); attn_mask noted. */
static bool
call_unmodelled(const json_t *c, const char *what, call_spec *out)
{
    const json_t *v;

    /* settings that change the result and that scan does not apply
       yet: refused by name, never measured without */
    for (size_t i = 0; dump_unmodelled_key(i) != NULL; i++) {
        const char *key = dump_unmodelled_key(i);
        v = json_object_get(c, key);
        if (strcmp(key, "attn_mask") == 0) {
            out->has_mask = v != NULL && !json_is_null(v)
                            && !json_is_false(v);
            continue;
        }
        if (strcmp(key, "softcap") == 0)
            continue; /* applied (parse_call) */
        if (strcmp(key, "dropout_p") != 0 && v != NULL
            && !json_is_null(v) && !json_is_false(v))
            return cli_error(CMD,
                             "%s: '%s': the call has a mask or bias, "
                             "which changes the result and which scan "
                             "does not apply yet (bf16emu diff --call "
                             "refuses it too)",
                             what, key),
                   false;
    }
    v = json_object_get(c, "dropout_p");
    if (json_is_number(v) && json_number_value(v) != 0.0)
        return cli_error(CMD, "%s: 'dropout_p': dropout is not modelled",
                         what),
               false;
    return true;
}

/* "scale": a positive number, or null for 1/sqrt(d). */
static bool
call_scale(const json_t *c, const char *what, call_spec *out)
{
    const json_t *v;

    v = json_object_get(c, "scale");
    if (v == NULL)
        return cli_error(CMD,
                         "%s: 'scale' is missing (a number, or null for "
                         "1/sqrt(d))",
                         what),
               false;
    if (json_is_number(v)) {
        out->has_scale = true;
        out->scale = json_number_value(v);
        if (!(out->scale > 0) || !isfinite(out->scale))
            return cli_error(CMD, "%s: 'scale' must be positive", what),
                   false;
    } else if (!json_is_null(v)) {
        return cli_error(CMD,
                         "%s: 'scale' must be a number, or null for "
                         "1/sqrt(d)",
                         what),
               false;
    }
    return true;
}

/* "heads_kept": null, or the model's distinct index of each stored
   head. */
static bool
call_heads_kept(const json_t *c, const char *what, call_spec *out)
{
    const json_t *v;

    v = json_object_get(c, "heads_kept");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_array(v) || json_array_size(v) == 0)
            return cli_error(CMD,
                             "%s: 'heads_kept' must be null or a non-empty "
                             "array of head indices",
                             what),
                   false;
        out->n_heads_kept = json_array_size(v);
        out->heads_kept = calloc(out->n_heads_kept, sizeof *out->heads_kept);
        if (out->heads_kept == NULL)
            return cli_error(CMD, "out of memory"), false;
        for (size_t i = 0; i < out->n_heads_kept; i++) {
            const json_t *e = json_array_get(v, i);
            if (!json_is_integer(e) || json_integer_value(e) < 0)
                return cli_error(CMD,
                                 "%s: heads_kept[%zu] must be an integer "
                                 ">= 0",
                                 what, i),
                       false;
            out->heads_kept[i] = (size_t)json_integer_value(e);
            for (size_t j = 0; j < i; j++)
                if (out->heads_kept[j] == out->heads_kept[i])
                    return cli_error(CMD,
                                     "%s: heads_kept lists head %zu twice",
                                     what, out->heads_kept[i]),
                           false;
        }
    }
    return true;
}

/* "x": null, or {"rotary": BOOL, "features": C}. */
static bool
call_x(const json_t *c, const char *what, call_spec *out)
{
    const json_t *v;

    v = json_object_get(c, "x");
    if (v != NULL && !json_is_null(v)) {
        const json_t *r;
        if (!json_is_object(v))
            return cli_error(CMD, "%s: 'x' must be an object or null", what),
                   false;
        char w2[80];
        r = json_object_get(v, "rotary");
        if (r != NULL && !json_is_boolean(r))
            return cli_error(CMD, "%s: x.rotary must be true or false",
                             what),
                   false;
        out->x_rotary = json_is_true(r);
        snprintf(w2, sizeof w2, "%s.x", what);
        if (!opt_count(v, "features", w2, &out->x_features))
            return false;
    }
    return true;
}

/* A FlexAttention call's kernels (the merge and delta kernels' launches,
   the pinned tiles); refused when the GPU ran flex_attention's unfused
   fallback, which no description models. */
static bool
call_flex(const json_t *c, const char *what, call_spec *out)
{
    char *text = json_dumps(c, JSON_COMPACT);
    tensor_error err;
    int rc;

    if (text == NULL)
        return cli_error(CMD, "out of memory"), false;
    rc = dump_flex_parse(what, text, &out->flex, &err);
    free(text);
    if (rc != TENSOR_OK)
        return cli_error(CMD, "%s", err.message), false;
    if (strcasecmp(out->backend, "flex") == 0 && out->flex.forward_unfused)
        return cli_error(CMD,
                         "%s (layer %lld step %lld): the GPU did not run "
                         "FlexAttention's Triton kernel for this call (its "
                         "kernels.forward holds no "
                         "triton_tem_fused_flex_attention: torch.compile fell "
                         "back to PyTorch's unfused implementation, e.g. past "
                         "dynamo's recompile limit); record it again with "
                         "the limit raised",
                         what, out->layer, out->step),
               false;
    return true;
}

static bool
parse_call(const json_t *c, size_t idx, const char *top_backend,
           call_spec *out)
{
    char what[64], buf[64];
    const json_t *v;

    snprintf(what, sizeof what, "manifest calls[%zu]", idx);
    memset(out, 0, sizeof *out);
    out->idx = idx;
    if (!json_is_object(c))
        return cli_error(CMD, "%s: expected an object", what), false;
    v = json_object_get(c, "launch_shape");
    if (v != NULL && !json_is_null(v)) {
        char w2[80];
        snprintf(w2, sizeof w2, "%s.launch_shape", what);
        if (!json_is_object(v))
            return cli_error(CMD, "%s: expected an object", w2), false;
        if (!opt_count(v, "heads", w2, &out->launch_heads)
            || !opt_count(v, "d", w2, &out->launch_d)
            || !opt_count(v, "batch", w2, &out->launch_batch)
            || !opt_count(v, "kv_heads", w2, &out->launch_kv_heads))
            return false;
    }
    v = json_object_get(c, "layer");
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return cli_error(CMD, "%s: 'layer' must be an integer >= 0", what),
               false;
    out->layer = (long long)json_integer_value(v);
    v = json_object_get(c, "step");
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return cli_error(CMD, "%s: 'step' must be an integer >= 0", what),
               false;
    out->step = (long long)json_integer_value(v);
    v = json_object_get(c, "causal");
    if (!json_is_boolean(v))
        return cli_error(CMD, "%s: 'causal' must be true or false", what),
               false;
    out->causal = json_is_true(v);
    if (!call_unmodelled(c, what, out) || !call_scale(c, what, out))
        return false;
    if (!get_string(c, "layout", buf, sizeof buf, what))
        return false;
    if (!ut_layout_parse(buf, &out->layout))
        return cli_error(CMD, "%s: 'layout' must be \"bhnd\" or \"bnhd\"",
                         what),
               false;
    if (!get_string(c, "dtype", buf, sizeof buf, what))
        return false;
    out->f16 = strcasecmp(buf, "float16") == 0 || strcasecmp(buf, "f16") == 0
               || strcasecmp(buf, "half") == 0;
    if (strcasecmp(buf, "bfloat16") != 0 && strcasecmp(buf, "bf16") != 0
        && !out->f16)
        return cli_error(CMD,
                         "%s: 'dtype' must be \"bfloat16\" or \"float16\"",
                         what),
               false;
    if (!get_string(c, "backend", out->backend, sizeof out->backend, what)
        || !get_string(c, "name", out->name, sizeof out->name, what)
        || !get_string(c, "prefix", out->prefix, sizeof out->prefix, what))
        return false;
    if (!call_heads_kept(c, what, out))
        return false;
    if (!get_string(c, "causal_alignment", buf, sizeof buf, what))
        return false;
    if (buf[0] != '\0' && strcmp(buf, "bottom-right") != 0)
        return cli_error(CMD,
                         "%s: 'causal_alignment' \"%s\": only "
                         "\"bottom-right\" (the flash kernel's) is modelled",
                         what, buf),
               false;
    out->bottom_right = buf[0] != '\0';
    v = json_object_get(c, "rows_kept");
    if (v != NULL && !json_is_null(v) && out->causal)
        return cli_error(CMD,
                         "%s: 'rows_kept' with a causal mask: the mask "
                         "needs every query row's position (record every "
                         "row, or the last Nq rows with rows_kept null)",
                         what),
               false;
    if (!call_x(c, what, out))
        return false;
    v = json_object_get(c, "softcap");
    if (json_is_number(v) && json_number_value(v) != 0.0) {
        if (!(json_number_value(v) > 0.0) || !isfinite(json_number_value(v)))
            return cli_error(CMD, "%s: 'softcap': expected null or a "
                                  "positive number",
                             what),
                   false;
        out->softcap = json_number_value(v);
    }
    if (out->backend[0] == '\0' && top_backend != NULL)
        snprintf(out->backend, sizeof out->backend, "%s", top_backend);
    if (!call_flex(c, what, out))
        return false;
    if (json_object_get(c, "prefix") == NULL)
        snprintf(out->prefix, sizeof out->prefix, "L%lld.s%lld.", out->layer,
                 out->step);
    return true;
}

bool
scan_load_manifest(scan_ctx *x)
{
    json_t *man = NULL, *calls;
    const char *from = NULL;
    const char *top_backend = NULL;

    if (x->manifest_path != NULL) {
        man = read_json_file(x->manifest_path);
        if (man == NULL)
            return false;
        from = x->manifest_path;
    } else {
        for (size_t i = 0; i < x->n_shards; i++) {
            bool bad;
            json_t *m = shard_manifest(&x->shards[i], &bad);
            if (bad) {
                json_decref(man);
                return false;
            }
            if (m == NULL || json_object_get(m, "calls") == NULL) {
                json_decref(m);
                continue;
            }
            if (man == NULL) {
                man = m;
                from = x->shards[i].path;
            } else {
                bool same = json_equal(man, m);
                json_decref(m);
                if (!same) {
                    cli_error(CMD,
                              "%s: its manifest differs from that of %s "
                              "(give one with --manifest)",
                              x->shards[i].path, from);
                    json_decref(man);
                    return false;
                }
            }
        }
        if (man == NULL)
            return cli_error(CMD,
                             "no capture manifest with a \"calls\" list in "
                             "the files or their .json sidecars (give one "
                             "with --manifest)"),
                   false;
    }
    calls = json_object_get(man, "calls");
    if (!json_is_array(calls) || json_array_size(calls) == 0) {
        cli_error(CMD, "%s: the manifest's 'calls' must be a non-empty array",
                  from);
        json_decref(man);
        return false;
    }
    if (json_is_string(json_object_get(man, "backend")))
        top_backend = json_string_value(json_object_get(man, "backend"));
    x->n_calls = json_array_size(calls);
    x->calls = calloc(x->n_calls, sizeof *x->calls);
    if (x->calls == NULL) {
        json_decref(man);
        return cli_error(CMD, "out of memory"), false;
    }
    for (size_t i = 0; i < x->n_calls; i++)
        if (!parse_call(json_array_get(calls, i), i, top_backend,
                        &x->calls[i])
            || !model_fields(json_object_get(man, "model"), &x->calls[i])) {
            json_decref(man);
            return false;
        }
    for (size_t i = 0; i < x->n_calls; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(x->calls[i].prefix, x->calls[j].prefix) == 0) {
                json_decref(man);
                return cli_error(CMD,
                                 "manifest calls[%zu] and calls[%zu]: the "
                                 "same tensors ('%s')",
                                 j, i, x->calls[i].prefix),
                       false;
            }
    json_decref(man);
    return true;
}


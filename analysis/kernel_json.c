/* kernel_json -- attention kernel descriptions to and from JSON text
   (jansson), validated field by field (kernel_json.h) */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/kernel_json.h"

/*----------------------------------------------------------------------------
 * The fields, in their documented order.
 *--------------------------------------------------------------------------*/
typedef enum
{
    F_STRING, /* a name: char[] */
    F_ENUM,   /* an enumerated value: int-sized enum */
    F_BOOL,
    F_UINT, /* unsigned */
    F_TILES,
    F_MMA, /* the object of MMA preset names */
    F_GEMV /* the array of decode gemv rows */
} ftype;

typedef struct
{
    const char *name;
    ftype type;
    size_t off;
    const char *enum_field; /* F_ENUM: the name in fa_kernel_enum_names;
                               F_BOOL with names: "false" "true" as these;
                               F_STRING: the name an empty value is
                               written as ("none": read back as empty) */
} field;

#define OFF(m) offsetof(fa_kernel, m)

static const char *const order_names[] = {"forward", "reverse", NULL};
static const char *const empty_names[] = {"-inf", "+inf", NULL};

static const field fields[] = {
    {"name", F_STRING, OFF(name), NULL},
    {"d_round", F_UINT, OFF(d_round), NULL},
    {"tiles", F_TILES, OFF(tiles), NULL},
    {"kv_order", F_BOOL, OFF(kv_reverse), "kv_order"},
    {"causal_skip", F_BOOL, OFF(causal_skip), NULL},
    {"mma", F_MMA, 0, NULL},
    {"score_dot", F_ENUM, OFF(score_dot), "score_dot"},
    {"score_scaled", F_BOOL, OFF(score_scaled), NULL},
    {"score", F_ENUM, OFF(score), "score"},
    {"mask", F_ENUM, OFF(mask), "mask"},
    {"m_init", F_ENUM, OFF(m_init), "m_init"},
    {"visit", F_ENUM, OFF(visit), "visit"},
    {"fix_all_keys", F_BOOL, OFF(fix_all_keys), NULL},
    {"first_block", F_ENUM, OFF(first), "first_block"},
    {"exp_base2", F_BOOL, OFF(exp_base2), NULL},
    {"exp_arg", F_ENUM, OFF(exp_arg), "exp_arg"},
    {"alpha_arg", F_ENUM, OFF(alpha_arg), "alpha_arg"},
    {"alpha", F_ENUM, OFF(alpha), "alpha"},
    {"p", F_ENUM, OFF(p), "p"},
    {"rowsum_fp32_p", F_BOOL, OFF(rowsum_fp32_p), NULL},
    {"rowsum", F_ENUM, OFF(rowsum), "rowsum"},
    {"rowsum_fma", F_BOOL, OFF(rowsum_fma), NULL},
    {"rowsum_clamp", F_BOOL, OFF(rowsum_clamp), NULL},
    {"l", F_ENUM, OFF(l), "l"},
    {"acc_update", F_ENUM, OFF(acc_update), "acc_update"},
    {"acc", F_ENUM, OFF(acc), "acc"},
    {"normalize", F_ENUM, OFF(normalize), "normalize"},
    {"o", F_ENUM, OFF(o), "o"},
    {"lse", F_ENUM, OFF(lse), "lse"},
    {"lse_format", F_ENUM, OFF(lse_fmt), "lse_format"},
    {"log", F_ENUM, OFF(log), "log"},
    {"empty_lse", F_BOOL, OFF(empty_lse_pos), "empty_lse"},
    {"splits", F_UINT, OFF(splits), NULL},
    {"combine", F_ENUM, OFF(combine), "combine"},
    {"combine_exp", F_ENUM, OFF(combine_exp), "combine_exp"},
    {"combine_log", F_ENUM, OFF(combine_log), "combine_log"},
    {"bwd", F_ENUM, OFF(bwd), "bwd"},
    {"bwd_query_order", F_BOOL, OFF(bwd_reverse_q), "kv_order"},
    /* optional (absent: 0, the behaviour before them) */
    {"exp_fn", F_ENUM, OFF(exp_fn), "exp_fn"},
    {"score_prescale", F_BOOL, OFF(score_prescale), NULL},
    {"gemv", F_GEMV, OFF(gemv), NULL},
    {"dq_buffers", F_ENUM, OFF(dq_buffers), "dq_buffers"},
    {"decode_rowsum_span", F_UINT, OFF(decode_rowsum_span), NULL},
    {"decode_rowsum_span_wide", F_UINT, OFF(decode_rowsum_span_wide), NULL},
    {"decode_wide_min_nk", F_UINT, OFF(decode_wide_min_nk), NULL},
    {"decode_span_order", F_STRING, OFF(decode_span_order), "tree"},
    {"decode_lse", F_ENUM, OFF(decode_lse), "decode_lse"},
    {"decode_acc_update", F_ENUM, OFF(decode_acc_update), "acc_update"},
    {"decode_log2_scores", F_BOOL, OFF(decode_log2_scores), NULL},
    {"exp_model", F_ENUM, OFF(exp_model), "exp_model"},
    {"gqa_dkv", F_ENUM, OFF(gqa_dkv), "gqa_dkv"},
    {"bias_add", F_ENUM, OFF(bias_add), "bias_add"},
    {"bool_fill", F_ENUM, OFF(bool_fill), "bool_fill"},
    {"masked_lse", F_ENUM, OFF(masked_lse), "masked_lse"},
    {"score_log2", F_BOOL, OFF(score_log2), NULL},
    {"block_sparse", F_BOOL, OFF(block_sparse), NULL},
    {"exp_arg_partial", F_ENUM, OFF(exp_arg_partial), "exp_arg"},
    {"min_nq", F_UINT, OFF(min_nq), NULL},
    {"softcap_tanhf", F_BOOL, OFF(softcap_tanhf), NULL},
    {"below_min_nq", F_STRING, OFF(below_min_nq), "none"},
    {"rowsum_col_warps", F_UINT, OFF(rowsum_col_warps), NULL},
    /* absent: the preset of "bwd" (fa_kernel_bwd_preset) */
    {"bwd_keys", F_ENUM, OFF(bwd_keys), "bwd_keys"},
    {"bwd_delta", F_ENUM, OFF(bwd_delta), "bwd_delta"},
    {"bwd_p", F_ENUM, OFF(bwd_p), "bwd_p"},
    {"bwd_dp", F_ENUM, OFF(bwd_dp), "bwd_dp"},
    {"bwd_ds", F_ENUM, OFF(bwd_ds), "bwd_ds"},
    {"bwd_operand", F_ENUM, OFF(bwd_operand), "bwd_operand"},
    {"bwd_dq", F_ENUM, OFF(bwd_dq), "bwd_dq"},
    {"bwd_dkv", F_ENUM, OFF(bwd_dkv), "bwd_dkv"},
    {"bwd_out", F_ENUM, OFF(bwd_out), "bwd_out"},
};
#define N_FIELDS (sizeof fields / sizeof fields[0])
/* the optional fields come last */
#define N_REQUIRED (N_FIELDS - 26)
/* the bwd_* fields, whose absence means the preset of "bwd" */
#define N_BWD_FIELDS 9

static const char *const gemv_names[] = {"d", "nk", "bh", "s", "pv"};
static const char *const order_keys[] = {"lanes", "chunk", "combine"};
static const char *const combine_names[] = {"butterfly", "sequential", NULL};

static unsigned *
gemv_bound(fa_gemv_row *r, size_t i)
{
    unsigned *m[] = {&r->d_min, &r->d_max, &r->nk_min,
                     &r->nk_max, &r->bh_min, &r->bh_max};
    return m[i];
}

static const char *const tile_names[] = {
    "d_max", "br", "bc", "br_bwd", "bc_bwd", "br_split", "bc_split"};
static const char *const mma_names[] = {"s",  "pv", "dp",   "dq",
                                        "dk", "dv", "delta"};

static const char *const *
bool_names(const field *f)
{
    if (f->enum_field == NULL)
        return NULL;
    return strcmp(f->enum_field, "kv_order") == 0 ? order_names : empty_names;
}

static unsigned *
tile_member(fa_kernel_tiles *t, size_t i)
{
    unsigned *m[] = {&t->d_max,  &t->br,       &t->bc,      &t->br_bwd,
                     &t->bc_bwd, &t->br_split, &t->bc_split};
    return m[i];
}

static char *
mma_member(fa_kernel *k, size_t i)
{
    char *m[] = {k->mma_s,  k->mma_pv, k->mma_dp,   k->mma_dq,
                 k->mma_dk, k->mma_dv, k->mma_delta};
    return m[i];
}

/*----------------------------------------------------------------------------
 * Out.
 *--------------------------------------------------------------------------*/
char *
kj_to_json(const fa_kernel *kin)
{
    fa_kernel k = *kin;
    json_t *o = json_object(), *v;
    char *s, *r;

    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *f = &fields[i];
        char *base = (char *)&k + f->off;
        switch (f->type) {
        case F_STRING:
            /* an empty optional string is its default (enum_field holds
               it) */
            v = json_string(base[0] != '\0' || f->enum_field == NULL
                                ? base
                                : f->enum_field);
            break;
        case F_ENUM:
            v = json_string(
                fa_kernel_enum_names(f->enum_field)[*(int *)(void *)base]);
            break;
        case F_BOOL:
            v = bool_names(f) != NULL
                    ? json_string(bool_names(f)[*(bool *)base ? 1 : 0])
                    : json_boolean(*(bool *)base);
            break;
        case F_UINT:
            v = json_integer((json_int_t) * (unsigned *)(void *)base);
            break;
        case F_TILES:
            v = json_array();
            for (size_t t = 0; t < k.n_tiles; t++) {
                json_t *row = json_object();
                for (size_t m = 0; m < 7; m++)
                    json_object_set_new(row, tile_names[m],
                                        json_integer((json_int_t)*tile_member(
                                            &k.tiles[t], m)));
                json_array_append_new(v, row);
            }
            break;
        case F_GEMV:
            v = json_array();
            for (size_t g = 0; g < k.n_gemv && g < FA_KERNEL_MAX_GEMV; g++) {
                json_t *row = json_object();
                fa_gemv_row *gr = &k.gemv[g];
                fa_gemv_order *ord[2] = {&gr->s, &gr->pv};
                for (size_t m = 0; m < 3; m++)
                    json_object_set_new(
                        row, gemv_names[m],
                        json_pack("[II]", (json_int_t)*gemv_bound(gr, 2 * m),
                                  (json_int_t)*gemv_bound(gr, 2 * m + 1)));
                for (size_t m = 0; m < 2; m++)
                    json_object_set_new(
                        row, gemv_names[3 + m],
                        json_pack("{sIsIss}", "lanes",
                                  (json_int_t)ord[m]->lanes, "chunk",
                                  (json_int_t)ord[m]->chunk, "combine",
                                  combine_names[ord[m]->combine == 1]));
                json_array_append_new(v, row);
            }
            break;
        default:
            v = json_object();
            for (size_t m = 0; m < 7; m++)
                json_object_set_new(v, mma_names[m],
                                    json_string(mma_member(&k, m)));
            break;
        }
        json_object_set_new(o, f->name, v);
    }
    s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (s == NULL)
        return NULL;
    r = malloc(strlen(s) + 2);
    if (r != NULL) {
        strcpy(r, s);
        strcat(r, "\n");
    }
    free(s);
    return r;
}

/*----------------------------------------------------------------------------
 * In.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *opt, *path;
    char *msg;
    size_t msg_len;
} where;

static bool
fail(const where *w, const char *fmt, ...)
{
    va_list ap;

    if (w->msg != NULL && w->msg_len > 0) {
        va_start(ap, fmt);
        vsnprintf(w->msg, w->msg_len, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool
bad(const where *w, const char *fieldname, const char *what)
{
    return fail(w, "%s '%s': field '%s': %s", w->opt, w->path, fieldname,
                what);
}

/* An unsigned from V (a JSON integer in [0, MAX]). */
static bool
get_uint(const where *w, const char *name, json_t *v, unsigned max,
         unsigned *out)
{
    char msg[80];

    if (!json_is_integer(v) || json_integer_value(v) < 0
        || json_integer_value(v) > (json_int_t)max) {
        snprintf(msg, sizeof msg, "expected an integer from 0 to %u", max);
        return bad(w, name, msg);
    }
    *out = (unsigned)json_integer_value(v);
    return true;
}

/* One of NAMES (NULL-terminated) from V, as its index. */
static bool
get_name(const where *w, const char *name, json_t *v, const char *const *names,
         int *out)
{
    char msg[256];
    size_t len = 0;

    if (json_is_string(v))
        for (int i = 0; names[i] != NULL; i++)
            if (strcmp(names[i], json_string_value(v)) == 0) {
                *out = i;
                return true;
            }
    len += (size_t)snprintf(msg, sizeof msg, "expected one of");
    for (int i = 0; names[i] != NULL && len < sizeof msg; i++)
        len += (size_t)snprintf(msg + len, sizeof msg - len, "%s %s",
                                i == 0 ? "" : ",", names[i]);
    return bad(w, name, msg);
}

/* Every key of OBJ is one of NAMES[0..N), and each of NAMES[0..NREQ) is
   there. */
static bool
check_keys(const where *w, const char *prefix, json_t *obj,
           const char *const *names, size_t n, size_t nreq)
{
    const char *key;
    json_t *val;
    char full[128];

    json_object_foreach(obj, key, val)
    {
        size_t i;
        for (i = 0; i < n; i++)
            if (strcmp(names[i], key) == 0)
                break;
        if (i == n) {
            snprintf(full, sizeof full, "%s%s", prefix, key);
            return bad(w, full, "unknown field");
        }
    }
    for (size_t i = 0; i < nreq; i++)
        if (json_object_get(obj, names[i]) == NULL) {
            snprintf(full, sizeof full, "%s%s", prefix, names[i]);
            return bad(w, full, "missing");
        }
    return true;
}

static bool
load_tiles(const where *w, json_t *v, fa_kernel *k)
{
    char prefix[48];

    if (!json_is_array(v) || json_array_size(v) == 0
        || json_array_size(v) > FA_KERNEL_MAX_TILES)
        return bad(w, "tiles", "expected an array of 1 to 8 objects");
    k->n_tiles = json_array_size(v);
    for (size_t t = 0; t < k->n_tiles; t++) {
        json_t *row = json_array_get(v, t);
        snprintf(prefix, sizeof prefix, "tiles[%zu].", t);
        if (!json_is_object(row))
            return bad(w, "tiles", "expected objects in the array");
        if (!check_keys(w, prefix, row, tile_names, 7, 7))
            return false;
        for (size_t m = 0; m < 7; m++) {
            char full[64];
            snprintf(full, sizeof full, "%s%s", prefix, tile_names[m]);
            if (!get_uint(w, full, json_object_get(row, tile_names[m]), 65536,
                          tile_member(&k->tiles[t], m)))
                return false;
        }
    }
    return true;
}

static bool
load_gemv(const where *w, json_t *v, fa_kernel *k)
{
    char prefix[48], full[80];

    if (!json_is_array(v) || json_array_size(v) > FA_KERNEL_MAX_GEMV)
        return bad(w, "gemv", "expected an array of at most 16 objects");
    k->n_gemv = json_array_size(v);
    for (size_t g = 0; g < k->n_gemv; g++) {
        json_t *row = json_array_get(v, g);
        fa_gemv_row *gr = &k->gemv[g];
        fa_gemv_order *ord[2] = {&gr->s, &gr->pv};
        snprintf(prefix, sizeof prefix, "gemv[%zu].", g);
        if (!json_is_object(row))
            return bad(w, "gemv", "expected objects in the array");
        if (!check_keys(w, prefix, row, gemv_names, 5, 5))
            return false;
        for (size_t m = 0; m < 3; m++) {
            json_t *pair = json_object_get(row, gemv_names[m]);
            snprintf(full, sizeof full, "%s%s", prefix, gemv_names[m]);
            if (!json_is_array(pair) || json_array_size(pair) != 2)
                return bad(w, full, "expected [min, max]");
            for (size_t e = 0; e < 2; e++)
                if (!get_uint(w, full, json_array_get(pair, e), 1u << 30,
                              gemv_bound(gr, 2 * m + e)))
                    return false;
        }
        for (size_t m = 0; m < 2; m++) {
            json_t *ob = json_object_get(row, gemv_names[3 + m]);
            int c;
            snprintf(full, sizeof full, "%s%s.", prefix, gemv_names[3 + m]);
            if (!json_is_object(ob))
                return bad(w, full, "expected {lanes, chunk, combine}");
            if (!check_keys(w, full, ob, order_keys, 3, 3))
                return false;
            snprintf(full, sizeof full, "%s%s.lanes", prefix,
                     gemv_names[3 + m]);
            if (!get_uint(w, full, json_object_get(ob, "lanes"), 128,
                          &ord[m]->lanes))
                return false;
            snprintf(full, sizeof full, "%s%s.chunk", prefix,
                     gemv_names[3 + m]);
            if (!get_uint(w, full, json_object_get(ob, "chunk"), 1u << 20,
                          &ord[m]->chunk))
                return false;
            snprintf(full, sizeof full, "%s%s.combine", prefix,
                     gemv_names[3 + m]);
            if (!get_name(w, full, json_object_get(ob, "combine"),
                          combine_names, &c))
                return false;
            ord[m]->combine = c == 1 ? FA_GEMV_SEQUENTIAL : FA_GEMV_BUTTERFLY;
        }
    }
    return true;
}

static bool
load_mma(const where *w, json_t *v, fa_kernel *k)
{
    if (!json_is_object(v))
        return bad(w, "mma", "expected an object of preset names");
    if (!check_keys(w, "mma.", v, mma_names, 7, 7))
        return false;
    for (size_t m = 0; m < 7; m++) {
        json_t *s = json_object_get(v, mma_names[m]);
        char full[32];
        snprintf(full, sizeof full, "mma.%s", mma_names[m]);
        if (!json_is_string(s) || strlen(json_string_value(s)) == 0
            || strlen(json_string_value(s)) >= FA_KERNEL_MMA_MAX)
            return bad(w, full, "expected an MMA preset name");
        strcpy(mma_member(k, m), json_string_value(s));
    }
    return true;
}

/* The bwd_* fields that ROOT leaves out take the preset of K's bwd;
   those it names stay. */
static void
bwd_fill(json_t *root, fa_kernel *k)
{
    fa_kernel preset = *k;

    fa_kernel_bwd_preset(&preset);
    for (size_t i = N_FIELDS - N_BWD_FIELDS; i < N_FIELDS; i++)
        if (json_object_get(root, fields[i].name) == NULL)
            memcpy((char *)k + fields[i].off, (char *)&preset + fields[i].off,
                   sizeof(int));
}

static bool load_root(const where *w, json_t *root, const json_error_t *jerr,
                      fa_kernel *k);

int
kj_parse(const char *text, const char *opt, const char *label, fa_kernel *k,
         char *msg, size_t msg_len)
{
    where w = {opt, label, msg, msg_len};
    json_error_t jerr;

    if (msg != NULL && msg_len > 0)
        msg[0] = '\0';
    return load_root(&w, json_loads(text, JSON_REJECT_DUPLICATES, &jerr),
                     &jerr, k)
               ? 0
               : -1;
}

/* Reads ROOT (released here; NULL after the reader's error JERR) into
   K. */
static bool
load_root(const where *w0, json_t *root, const json_error_t *jerr,
          fa_kernel *k)
{
    where w = *w0;
    const char *names[N_FIELDS], *why;
    bool ok = false;

    if (root == NULL) {
        return fail(&w,
                    "%s '%s': line %d: %s (expected a kernel description "
                    "as written by --describe)",
                    w.opt, w.path, jerr->line, jerr->text);
    }
    memset(k, 0, sizeof *k);
    if (!json_is_object(root)) {
        fail(&w, "%s '%s': expected a JSON object", w.opt, w.path);
        goto done;
    }
    for (size_t i = 0; i < N_FIELDS; i++)
        names[i] = fields[i].name;
    if (!check_keys(&w, "", root, names, N_FIELDS, N_REQUIRED))
        goto done;
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *f = &fields[i];
        json_t *v = json_object_get(root, f->name);
        char *base = (char *)k + f->off;
        int n;
        if (v == NULL && i >= N_REQUIRED)
            continue;
        switch (f->type) {
        case F_STRING:
            if (!json_is_string(v) || strlen(json_string_value(v)) == 0
                || strlen(json_string_value(v)) >= FA_KERNEL_NAME_MAX) {
                bad(&w, f->name, "expected a name of 1 to 31 characters");
                goto done;
            }
            /* "none" stands for an empty name */
            if (f->enum_field != NULL && strcmp(f->enum_field, "none") == 0
                && strcmp(json_string_value(v), "none") == 0)
                base[0] = '\0';
            else
                strcpy(base, json_string_value(v));
            break;
        case F_ENUM:
            if (!get_name(&w, f->name, v, fa_kernel_enum_names(f->enum_field),
                          &n))
                goto done;
            *(int *)(void *)base = n;
            break;
        case F_BOOL:
            if (bool_names(f) != NULL) {
                if (!get_name(&w, f->name, v, bool_names(f), &n))
                    goto done;
                *(bool *)base = n == 1;
            } else {
                if (!json_is_boolean(v)) {
                    bad(&w, f->name, "expected true or false");
                    goto done;
                }
                *(bool *)base = json_is_true(v);
            }
            break;
        case F_UINT:
            if (!get_uint(&w, f->name, v, 4096, (unsigned *)(void *)base))
                goto done;
            break;
        case F_TILES:
            if (!load_tiles(&w, v, k))
                goto done;
            break;
        case F_GEMV:
            if (!load_gemv(&w, v, k))
                goto done;
            break;
        default:
            if (!load_mma(&w, v, k))
                goto done;
            break;
        }
    }
    if (json_object_get(root, "exp_model") == NULL)
        /* a description written before the field: the default then */
        k->exp_model = fa_kernel_exp_legacy(k);
    bwd_fill(root, k);
    why = fa_kernel_check(k);
    if (why != NULL) {
        /* the check names the field first: "field: what" */
        const char *colon = strchr(why, ':');
        char fname[48];
        size_t len = colon != NULL ? (size_t)(colon - why) : 0;
        if (len >= sizeof fname)
            len = sizeof fname - 1;
        memcpy(fname, why, len);
        fname[len] = '\0';
        bad(&w, fname, colon != NULL ? colon + 2 : why);
        goto done;
    }
    ok = true;
done:
    json_decref(root);
    return ok;
}

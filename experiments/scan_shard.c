/* scan_shard.c -- bf16emu scan --shard's output and --merge: the items
   of a shard written unmerged, read back and merged in the order of an
   unsharded run (scan_local.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/fa_kernel_json.h"
#include "experiments/scan_local.h"

/*----------------------------------------------------------------------------
 * --shard output and --merge.
 *--------------------------------------------------------------------------*/
#define SHARD_FORMAT "bf16emu scan shard 3"

static char *
hex_bits(char *buf, size_t n, double v)
{
    uint64_t u;

    memcpy(&u, &v, sizeof u);
    snprintf(buf, n, "%016" PRIx64, u);
    return buf;
}

/* What every shard of one scan shares: settings (the description run
   whole, so that --merge needs no file of it), files and calls. */
static json_t *
shard_header(const scan_ctx *x)
{
    char tol[32], *kt = fa_kernel_json(&x->kernel);
    json_t *h, *files = json_array(),
               *kj = kt != NULL ? json_loads(kt, 0, NULL) : NULL;

    free(kt);
    for (size_t i = 0; files != NULL && i < x->n_shards; i++)
        json_array_append_new(files, json_string(x->shards[i].path));
    h = json_pack("{s:s, s:s, s:b, s:o, s:s, s:s, s:s, s:s, s:o, s:I, s:O, "
                  "s:[I, I, I]}",
                  "format", SHARD_FORMAT, "policy", x->kernel.name,
                  "policy_given", (int)x->policy_given, "kernel", kj, "fix",
                  fa_fix_name(x->fix.kind), "tol",
                  hex_bits(tol, sizeof tol, x->fix.tol), "exp", x->exp.name,
                  "reference",
                  x->ref == SCAN_REF_EXACT ? "exact" : "binary64", "files",
                  files, "calls", (json_int_t)x->n_calls, "call_items",
                  x->call_items, "x_calls", (json_int_t)x->x_used,
                  (json_int_t)x->x_rotary, (json_int_t)x->x_no_do);
    return h;
}

/* The --shard output of X's items as text (malloc'd), NULL when out of
   memory. */
char *
scan_shard_text(const scan_ctx *x)
{
    json_t *o = shard_header(x);
    char text[48], *s = NULL;

    snprintf(text, sizeof text, "%" PRIu64 "/%" PRIu64, x->shard_i,
             x->shard_n);
    if (o == NULL || json_object_set_new(o, "shard", json_string(text)) != 0
        || json_object_set(o, "items", x->items) != 0)
        s = NULL;
    else
        s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

int
scan_write_shard(scan_ctx *x)
{
    char *s = scan_shard_text(x);
    cli_buf b;
    int rc = CLI_EXIT_OK;

    if (s == NULL)
        return cli_error(CMD, "out of memory");
    cli_buf_init(&b);
    cli_buf_puts(&b, s);
    cli_buf_putc(&b, '\n');
    free(s);
    cli_report_emit(CMD, &b, &rc);
    return rc;
}

typedef struct
{
    size_t call, item, head;
    long long layer, step;
    const char *name;
    bool first;
    scan_stats st;
    double *dwq; /* [st.eq.d, xc] or NULL */
    size_t xc;
} merge_item;

static int
cmp_merge_item(const void *a, const void *b)
{
    const merge_item *x = a, *y = b;

    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

/* --merge: X's settings and files from FIRST, the header of the first
   shard (PATH), which they point into. */
static int
merge_settings(scan_ctx *x, const json_t *first, const char *path)
{
    const json_t *files = json_object_get(first, "files");
    const json_t *xcalls = json_object_get(first, "x_calls");
    const char *fix = json_string_value(json_object_get(first, "fix"));
    const char *tol = json_string_value(json_object_get(first, "tol"));
    const char *ref = json_string_value(json_object_get(first, "reference"));
    const char *pol = json_string_value(json_object_get(first, "policy"));
    const json_t *kj = json_object_get(first, "kernel");
    char *kt = json_is_object(kj) ? json_dumps(kj, JSON_PRESERVE_ORDER) : NULL;
    int k = 0;
    char buf[32];
    bool ok;

    x->n_calls = (size_t)json_integer_value(json_object_get(first, "calls"));
    x->policy_given = json_is_true(json_object_get(first, "policy_given"));
    /* the description the shards ran, and its name */
    if (kt == NULL)
        return cli_error(CMD, "%s: kernel: missing", path);
    ok = fa_kernel_parse(CMD, "the kernel of", path, kt, &x->kernel);
    free(kt);
    if (!ok)
        return CLI_EXIT_USAGE;
    if (pol == NULL || strcmp(pol, x->kernel.name) != 0)
        return cli_error(CMD, "%s: policy: '%s', not its kernel's name '%s'",
                         path, pol != NULL ? pol : "(none)", x->kernel.name);
    if (fix == NULL || (k = fa_fix_parse(fix)) < 0 || tol == NULL)
        return cli_error(CMD, "%s: fix: unknown", path);
    x->fix = fa_fix_default((fa_fix_kind)k);
    if (strcmp(hex_bits(buf, sizeof buf, x->fix.tol), tol) != 0)
        return cli_error(CMD, "%s: tol: not the tolerance of fix %s", path,
                         fix);
    if (ref != NULL && strcmp(ref, "binary64") == 0)
        x->ref = SCAN_REF_BINARY64;
    else if (ref == NULL || strcmp(ref, "exact") != 0)
        return cli_error(CMD, "%s: reference: unknown", path);
    x->n_shards = json_array_size(files);
    x->shards = calloc(x->n_shards ? x->n_shards : 1, sizeof *x->shards);
    if (x->shards == NULL)
        return cli_error(CMD, "out of memory");
    for (size_t i = 0; i < x->n_shards; i++)
        x->shards[i].path = json_string_value(json_array_get(files, i));
    x->x_used = (uint64_t)json_integer_value(json_array_get(xcalls, 0));
    x->x_rotary = (uint64_t)json_integer_value(json_array_get(xcalls, 1));
    x->x_no_do = (uint64_t)json_integer_value(json_array_get(xcalls, 2));
    return CLI_EXIT_OK;
}

/* The shard outputs DOCS (a JSON array of N, named PATHS[0..N) in
   messages) into X's groups; with SETTINGS, X's settings and files come
   from the first (--merge), and DOCS holds the JSON they point into
   (freed by the caller); without, X keeps its own (under mpirun). */
/* Item O of a shard SI of SN (CI: the scan's call_items) into *M
   (fields only; STATS: its hex words); false when it is not one. */
static bool
item_unpack(json_t *o, const json_t *ci, uint64_t sn, uint64_t si,
            merge_item *m, const char **stats)
{
    json_int_t call, item, layer, step, head;
    int fi;
    const char *name;

    if (json_unpack(o, "{s:I, s:I, s:I, s:I, s:s, s:I, s:b, s:s}", "call",
                    &call, "item", &item, "layer", &layer, "step", &step,
                    "name", &name, "head", &head, "first", &fi, "stats",
                    stats)
            != 0
        || call < 0 || (size_t)call >= json_array_size(ci) || item < 0
        || item >= json_integer_value(json_array_get(ci, (size_t)call))
        || head < 0 || ((uint64_t)call + (uint64_t)item) % sn != si)
        return false;
    memset(m, 0, sizeof *m);
    m->call = (size_t)call;
    m->item = (size_t)item;
    m->layer = layer;
    m->step = step;
    m->name = name;
    m->head = (size_t)head;
    m->first = fi != 0;
    return true;
}

/* M's stats from their hex words ST, and its dW_Q error from O's "dwq"
   (item K of PATH).  0 or an exit status. */
static int
item_payload(merge_item *m, const json_t *o, const char *st,
             const char *path, size_t k)
{
    const char *hx;
    json_int_t xc;
    size_t nd;

    scan_stats_init(&m->st);
    if (scan_stats_parse(st, &m->st) != 0)
        return cli_error(CMD, "%s: items[%zu].stats: malformed", path, k);
    if (json_object_get(o, "dwq") == NULL)
        return CLI_EXIT_OK;
    hx = json_string_value(json_object_get(o, "dwq"));
    xc = json_integer_value(json_object_get(o, "dwq_cols"));
    nd = m->st.eq.d * (size_t)(xc > 0 ? xc : 0);
    if (hx == NULL || xc <= 0 || xc > (1 << 20) || nd == 0)
        return cli_error(CMD, "%s: items[%zu].dwq: malformed", path, k);
    m->xc = (size_t)xc;
    m->dwq = malloc(nd * sizeof *m->dwq);
    if (m->dwq == NULL)
        return cli_error(CMD, "out of memory");
    if (scan_words_parse(hx, m->dwq, nd) != 0)
        return cli_error(CMD, "%s: items[%zu].dwq: malformed", path, k);
    return CLI_EXIT_OK;
}

/* The items read back from the shards, and what they must cover. */
typedef struct
{
    merge_item *it;
    size_t n, cap, total; /* total: the scan's items (call_items) */
    json_t *first;        /* the first shard's header */
    unsigned char *seen;  /* per shard index */
    uint64_t sn;
} merge_set;

/* The items of shard SI of SN2 (ITEMS, file PATH) into M.  0 or an exit
   status. */
static int
merge_items(merge_set *m, const json_t *items, uint64_t si,
            unsigned long long sn2, const char *path)
{
    const json_t *ci = json_object_get(m->first, "call_items");
    int rc = CLI_EXIT_OK;

    for (size_t k = 0; k < json_array_size(items) && rc == CLI_EXIT_OK;
         k++) {
        json_t *o = json_array_get(items, k);
        merge_item t;
        const char *st;
        if (!item_unpack(o, ci, m->sn, si, &t, &st))
            return cli_error(CMD, "%s: items[%zu]: not an item of shard "
                                  "%llu/%llu",
                             path, k, (unsigned long long)si, sn2);
        if (m->n == m->cap) {
            size_t nc = m->cap ? 2 * m->cap : 256;
            merge_item *r = realloc(m->it, nc * sizeof *r);
            if (r == NULL)
                return cli_error(CMD, "out of memory");
            m->it = r;
            m->cap = nc;
        }
        m->it[m->n++] = t;
        rc = item_payload(&m->it[m->n - 1], o, st, path, k);
    }
    return rc;
}

/* Shard document D (file PATH, the first of PATH0) checked against the
   first one and its items added to M.  0 or an exit status. */
static int
merge_doc(merge_set *m, const json_t *d, const char *path, const char *path0)
{
    const char *fmt = json_string_value(json_object_get(d, "format"));
    const char *sh = json_string_value(json_object_get(d, "shard"));
    const json_t *items = json_object_get(d, "items");
    unsigned long long si, sn2;
    int used = 0;
    json_t *h;

    if (fmt == NULL || strcmp(fmt, SHARD_FORMAT) != 0 || sh == NULL
        || !json_is_array(items))
        return cli_error(CMD,
                         "%s: not a 'scan --shard' output (format, shard "
                         "or items missing)",
                         path);
    if (sscanf(sh, "%llu/%llu%n", &si, &sn2, &used) != 2 || sh[used] != '\0'
        || sn2 == 0 || si >= sn2)
        return cli_error(CMD, "%s: shard: '%s', expected I/N", path, sh);
    if ((h = json_deep_copy(d)) == NULL)
        return cli_error(CMD, "out of memory");
    json_object_del(h, "shard");
    json_object_del(h, "items");
    if (m->first == NULL) {
        const json_t *ci = json_object_get(h, "call_items");
        m->first = h;
        m->sn = sn2;
        m->seen = calloc(m->sn, 1);
        if (m->seen == NULL)
            return cli_error(CMD, "out of memory");
        if (!json_is_array(ci))
            return cli_error(CMD, "%s: call_items: missing", path);
        for (size_t c = 0; c < json_array_size(ci); c++)
            m->total += (size_t)json_integer_value(json_array_get(ci, c));
    } else {
        bool same = json_equal(h, m->first) != 0;
        json_decref(h);
        if (!same || sn2 != m->sn)
            return cli_error(CMD,
                             "%s: a shard of another scan (capture, "
                             "settings or N differ from %s)",
                             path, path0);
    }
    if (m->seen[si])
        return cli_error(CMD, "%s: shard %llu/%llu given twice", path, si,
                         sn2);
    m->seen[si] = 1;
    return merge_items(m, items, (uint64_t)si, sn2, path);
}

/* Every shard present, every item once, all of the scan's items. */
static int
merge_complete(merge_set *m)
{
    for (uint64_t i = 0; i < m->sn; i++)
        if (!m->seen[i])
            return cli_error(CMD, "shard %" PRIu64 "/%" PRIu64 " is missing",
                             i, m->sn);
    qsort(m->it, m->n, sizeof *m->it, cmp_merge_item);
    for (size_t i = 1; i < m->n; i++)
        if (m->it[i].call == m->it[i - 1].call
            && m->it[i].item == m->it[i - 1].item)
            return cli_error(CMD, "call %zu item %zu: in two shards",
                             m->it[i].call, m->it[i].item);
    if (m->n != m->total)
        return cli_error(CMD,
                         "the shards hold %zu of the %zu items of the scan",
                         m->n, m->total);
    return CLI_EXIT_OK;
}

int
scan_merge_docs(scan_ctx *x, const char *const *paths, size_t n,
                json_t *docs, bool settings)
{
    merge_set m;
    int rc = CLI_EXIT_OK;

    memset(&m, 0, sizeof m);
    for (size_t f = 0; f < n && rc == CLI_EXIT_OK; f++)
        rc = merge_doc(&m, json_array_get(docs, f), paths[f], paths[0]);
    if (rc == CLI_EXIT_OK)
        rc = merge_complete(&m);
    for (size_t i = 0; i < m.n && rc == CLI_EXIT_OK; i++)
        rc = scan_add_item(x, m.it[i].layer, m.it[i].step, m.it[i].name,
                      m.it[i].head, m.it[i].first, &m.it[i].st, m.it[i].dwq,
                      m.it[i].xc);
    if (rc == CLI_EXIT_OK && settings)
        rc = merge_settings(x, m.first, paths[0]);
    if (m.first != NULL)
        json_array_append_new(docs, m.first);
    free(m.seen);
    for (size_t i = 0; i < m.n; i++)
        free(m.it[i].dwq);
    free(m.it);
    return rc;
}

/* --merge: the shard outputs PATHS[0..N) into X's groups and settings.
   *KEEP holds the JSON the settings point into (freed by the caller). */
int
scan_merge_shards(scan_ctx *x, const char *const *paths, size_t n,
                  json_t **keep)
{
    json_t *docs = json_array();

    if (docs == NULL)
        return cli_error(CMD, "out of memory");
    *keep = docs;
    for (size_t f = 0; f < n; f++) {
        json_error_t je;
        json_t *d = json_load_file(paths[f], 0, &je);
        if (d == NULL)
            return cli_error(CMD, "%s: not a 'scan --shard' output: %s",
                             paths[f], je.text);
        json_array_append_new(docs, d);
    }
    return scan_merge_docs(x, paths, n, docs, true);
}

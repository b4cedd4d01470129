/* sweep.c -- bf16emu sweep: the rounding bias of O and delta over a grid
   of value distributions, score structures, shapes, policies, fixes,
   ablations, exp and accumulation models, with stage attribution; CSV and
   JSON per point, resumable, sharded, plotted with gnuplot; and bf16emu
   merge, which joins the outputs of shards */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "experiments/cli.h"
#include "experiments/cli_mpi.h"
#include "experiments/fa_cli.h"
#include "experiments/grid.h"
#include "experiments/plot.h"
#include "analysis/point.h"
#ifdef HAVE_MPI
#include <mpi.h>
#endif

#define CMD "sweep"

/*
 * Output directory (--out, default ./sweep-out):
 *   sweep.csv        plain CSV: the column names, then one row per point
 *                    in index order, appended and flushed to disk after
 *                    each batch of points;
 *   sweep-meta.txt   the provenance of sweep.csv, "key = value" lines:
 *                    tool, version, the grid's hash, the number of points
 *                    of the grid, the shard (resume and merge check it);
 *   grid.txt         the canonical grid;
 *   sweep.json       the provenance and the same rows as JSON, written
 *                    (atomically) at the end;
 *   bias-KEY.dat, .png, .svg    for each axis KEY with two or more values
 *                    (key without '-': bias-vmean, bias-n, bias-policy):
 *                    the bias of O against it, one line per combination
 *                    of the other axes that vary; delta-KEY.* the same
 *                    for delta.
 * A point's numbers depend on the grid, the seed and the point only, not
 * on the thread count or the shard: every trial is computed on its own
 * (pt_trial) and a point's trials are merged in trial order.
 */

/*----------------------------------------------------------------------------
 * Columns.
 *--------------------------------------------------------------------------*/
static const int stat_stages[] = {PT_P_CAST, PT_PV_ACC, PT_PV_CAST, PT_O_CAST,
                                  PT_ALL};
#define N_STAT_STAGES (sizeof stat_stages / sizeof stat_stages[0])

static void
put_num(cli_buf *b, double x)
{
    if (isnan(x))
        cli_buf_puts(b, ",nan");
    else if (isinf(x))
        cli_buf_puts(b, x > 0 ? ",inf" : ",-inf");
    else
        cli_buf_printf(b, ",%.17g", x);
}

static void
csv_header(cli_buf *b, bool stages)
{
    cli_buf_puts(b, "index");
    for (int a = 0; a < N_GX; a++) {
        const char *k = grid_axis_key((grid_axis)a);
        cli_buf_putc(b, ',');
        for (; *k; k++)
            cli_buf_putc(b, *k == '-' ? '_' : *k);
    }
    cli_buf_puts(b, ",trials,heads,rows,frac_p1,frac_p2,"
                    "o_n,o_mean_ulp,o_se_ulp,o_t,o_ci_lo_ulp,o_ci_hi_ulp,"
                    "o_mean_abs,o_neg_frac,o_se_heads,o_t_heads,"
                    "delta_n,delta_mean,delta_se,delta_t,delta_ci_lo,"
                    "delta_ci_hi,delta_se_heads,delta_t_heads");
    if (stages)
        for (size_t i = 0; i < N_STAT_STAGES; i++) {
            char name[32];
            const char *s = pt_stage_name(stat_stages[i]);
            size_t j = 0;
            for (; s[j] && j < sizeof name - 1; j++)
                name[j] = s[j] == '-' ? '_' : s[j];
            name[j] = '\0';
            cli_buf_printf(b,
                           ",o_mean_ulp_%s,delta_mean_%s,share_o_%s,"
                           "share_delta_%s",
                           name, name, name, name);
        }
    cli_buf_putc(b, '\n');
}

static void
csv_row(cli_buf *b, const sweep_grid *g, uint64_t index, const pt_stats *st,
        bool stages)
{
    size_t idx[N_GX];
    bias_summary so, sd;
    double rows = (double)st->rows;

    grid_point(g, index, idx);
    cli_buf_printf(b, "%" PRIu64, index);
    for (int a = 0; a < N_GX; a++)
        cli_buf_printf(b, ",%s", g->ax[a].text[idx[a]]);
    cli_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, g->set[GS_TRIALS],
                   g->set[GS_HEADS], st->rows);
    put_num(b, rows > 0 ? (double)st->rows_p1 / rows : NAN);
    put_num(b, rows > 0 ? (double)st->rows_p2 / rows : NAN);
    bias_summarize(&st->o_ulp[PT_BASE], &so);
    bias_summarize(&st->delta[PT_BASE], &sd);
    cli_buf_printf(b, ",%" PRIu64, so.n);
    put_num(b, so.mean);
    put_num(b, so.se);
    put_num(b, so.t);
    put_num(b, so.ci_lo);
    put_num(b, so.ci_hi);
    {
        bias_summary sa;
        const bias_cell *c = &st->o_abs[PT_BASE];
        bias_summarize(c, &sa);
        put_num(b, sa.mean);
        put_num(b, c->n > 0 ? (double)c->neg / (double)c->n : NAN);
        bias_summarize(&st->o_head, &sa);
        put_num(b, sa.se);
        put_num(b, sa.t);
    }
    cli_buf_printf(b, ",%" PRIu64, sd.n);
    put_num(b, sd.mean);
    put_num(b, sd.se);
    put_num(b, sd.t);
    put_num(b, sd.ci_lo);
    put_num(b, sd.ci_hi);
    {
        bias_summary sh;
        bias_summarize(&st->delta_head, &sh);
        put_num(b, sh.se);
        put_num(b, sh.t);
    }
    if (stages)
        for (size_t i = 0; i < N_STAT_STAGES; i++) {
            bias_summary xo, xd;
            bias_summarize(&st->o_ulp[stat_stages[i]], &xo);
            bias_summarize(&st->delta[stat_stages[i]], &xd);
            put_num(b, xo.mean);
            put_num(b, xd.mean);
            /* the share of the bias that goes away with the stage */
            put_num(b, so.mean != 0 ? (so.mean - xo.mean) / so.mean : NAN);
            put_num(b, sd.mean != 0 ? (sd.mean - xd.mean) / sd.mean : NAN);
        }
    cli_buf_putc(b, '\n');
}

/*----------------------------------------------------------------------------
 * The context.
 *--------------------------------------------------------------------------*/
typedef struct
{
    sweep_grid grid;
    bool grid_ok;
    const char *out_dir;
    long threads;
    bool resume, force, quiet, dry_run, print_grid, json;
    int plot;     /* -1 auto, 0 no, 1 yes */
    int progress; /* -1 auto (unless --quiet), 0 no, 1 yes */
    uint64_t shard_i, shard_n;
    /* exp models, one per value of the exp axis */
    fa_cli_exp *exps;
    fa_cli_exp *policy_exps; /* exp "default": per policy of the axis */
    fa_cli_log logm; /* lg2-sm90, when the policy axis has fa2 */
    char *text;      /* grid_text */
    uint64_t hash;
} sweep_ctx;

static uint64_t
fnv1a(const char *s)
{
    uint64_t h = 0xCBF29CE484222325u;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001B3u;
    }
    return h;
}

/* The pt_spec of point INDEX. */
/* The description a policy-axis value names (flash is fa2). */
static const fa_kernel *
sweep_kernel(const char *name)
{
    return fa_kernel_by_name(strcmp(name, "flash") == 0 ? "fa2" : name);
}

static void
point_spec(const sweep_ctx *x, uint64_t index, pt_spec *s)
{
    const sweep_grid *g = &x->grid;
    size_t idx[N_GX];
    char abl[GRID_MAX_TEXT];

#define TXT(a) (g->ax[a].text[idx[a]])
#define NUM(a) (g->ax[a].num[idx[a]])
    grid_point(g, index, idx);
    memset(s, 0, sizeof *s);
    s->gen = gen_params_default();
    s->isa = cli_isa();
    s->gen.seed = g->set[GS_SEED];
    s->gen.kind = (gen_kind)gen_kind_parse(TXT(GX_QK));
    s->gen.vdist = (gen_vdist)gen_vdist_parse(TXT(GX_V_DIST));
    s->gen.sink = NUM(GX_SINK);
    s->gen.repeat = (uint64_t)NUM(GX_REPEAT);
    s->gen.max_value = NUM(GX_MAX_VALUE);
    s->gen.gap_min = NUM(GX_GAP_MIN);
    s->gen.gap_max = NUM(GX_GAP_MAX);
    s->gen.qk_std = NUM(GX_QK_STD);
    s->gen.do_mean = NUM(GX_DO_MEAN);
    s->gen.v_nu = (unsigned)NUM(GX_V_NU);
    s->gen.v_std = NUM(GX_V_STD);
    s->gen.v_shift = NUM(GX_V_SHIFT);
    s->gen.v_mean = NUM(GX_V_MEAN);
    s->nq = s->nk = (size_t)NUM(GX_N);
    s->d = (size_t)NUM(GX_D);
    s->heads = (size_t)g->set[GS_HEADS];
    s->causal = NUM(GX_CAUSAL) != 0;
    /* any built-in description (flash: PyTorch's name of fa2) */
    s->kernel = sweep_kernel(TXT(GX_POLICY));
    s->policy = fa_policy_parse(TXT(GX_POLICY)) >= 0
                    ? (fa_policy)fa_policy_parse(TXT(GX_POLICY))
                    : FA_POLICY_FA2;
    s->fix = fa_fix_default((fa_fix_kind)fa_fix_parse(TXT(GX_FIX)));
    snprintf(abl, sizeof abl, "%s", TXT(GX_ABLATE));
    for (char *p = abl; *p; p++)
        if (*p == '+')
            *p = ',';
    s->ablations =
        strcmp(abl, "none") == 0 ? 0 : (unsigned)fa_ablations_parse(abl);
    s->br = (size_t)NUM(GX_BR);
    s->bc = (size_t)NUM(GX_BC);
    s->exp = strcmp(TXT(GX_EXP), "default") == 0
                 ? x->policy_exps[idx[GX_POLICY]].model
                 : x->exps[idx[GX_EXP]].model;
    s->log = fa_cli_log_model(&x->logm);
    s->mma_pv = strcmp(TXT(GX_MMA), "default") == 0
                    ? NULL
                    : sf_mma_preset_by_name(TXT(GX_MMA));
    s->stages = g->set[GS_STAGES] != 0;
#undef TXT
#undef NUM
}

/*----------------------------------------------------------------------------
 * Files.
 *--------------------------------------------------------------------------*/

static bool
append_sync(int fd, const char *buf, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, buf + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        off += (size_t)w;
    }
    return fsync(fd) == 0;
}

/* Whether DIR (the value of --out) can hold the output: an existing
   directory, or a new one that CREATE makes; false after a message. */
static bool
out_dir_ok(const char *cmd, const char *dir, bool create)
{
    struct stat st;

    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return true;
        cli_error(cmd,
                  "--out %s: exists and is not a directory (expected "
                  "a directory for sweep.csv and the other outputs)",
                  dir);
        return false;
    }
    if (errno != ENOENT) {
        cli_error(cmd, "--out %s: %s", dir, strerror(errno));
        return false;
    }
    if (create && mkdir(dir, 0755) != 0) {
        cli_error(cmd, "--out %s: cannot create the directory: %s", dir,
                  strerror(errno));
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * The provenance of sweep.csv: sweep-meta.txt.
 *--------------------------------------------------------------------------*/
#define META_FILE "sweep-meta.txt"

typedef struct
{
    uint64_t hash;    /* FNV-1a of the canonical grid text */
    uint64_t npoints; /* of the whole grid */
    uint64_t shard_i, shard_n;
} sweep_meta;

static void
meta_text(cli_buf *b, const sweep_meta *m)
{
    cli_buf_printf(b,
                   "tool = bf16emu sweep\nversion = %s\ngrid = %016" PRIx64
                   "\npoints = %" PRIu64 "\nshard = %" PRIu64 "/%" PRIu64 "\n",
                   PACKAGE_VERSION, m->hash, m->npoints, m->shard_i,
                   m->shard_n);
}

/* Parses TEXT, a sweep-meta.txt, into M.  Returns NULL, or what is
   wrong. */
static const char *
meta_parse(const char *text, sweep_meta *m)
{
    char version[64];
    unsigned long long h, np, si, sn;
    int end = -1;

    if (sscanf(text,
               "tool = bf16emu sweep version = %63s grid = %llx points = "
               "%llu shard = %llu/%llu %n",
               version, &h, &np, &si, &sn, &end)
            != 5
        || end < 0 || text[end] != '\0' || sn < 1 || si >= sn || np < 1)
        return "not a bf16emu sweep provenance file (tool, version, grid, "
               "points, shard)";
    if (strcmp(version, PACKAGE_VERSION) != 0)
        return "written by another version of bf16emu";
    m->hash = h;
    m->npoints = np;
    m->shard_i = si;
    m->shard_n = sn;
    return NULL;
}

/*----------------------------------------------------------------------------
 * CSV to JSON and the plot data: both read the finished sweep.csv (the
 * column names on its first line).
 *--------------------------------------------------------------------------*/
#define MAX_COLS 128

/* Splits LINE (modified) at commas into at most MAX_COLS fields. */
static size_t
split_csv(char *line, char **f)
{
    size_t n = 0;

    f[n++] = line;
    for (char *p = line; *p; p++)
        if (*p == ',' && n < MAX_COLS) {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

static bool
is_name_column(size_t col)
{
    /* index, then the axes: names for non-numeric axes */
    return col >= 1 && col <= N_GX && !grid_axis_numeric((grid_axis)(col - 1));
}

/* The JSON of a finished CSV. */
static bool
csv_to_json(const char *csv, const char *grid, const sweep_meta *m,
            cli_buf *out)
{
    char *copy = strdup(csv), *save = NULL, *line;
    char *names[MAX_COLS], *f[MAX_COLS];
    char text[64];
    size_t nn = 0;
    cli_json j;

    if (copy == NULL)
        return false;
    cli_json_init(&j, out);
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "tool", "bf16emu sweep");
    cli_json_string(&j, "version", PACKAGE_VERSION);
    cli_json_string(&j, "grid", grid);
    snprintf(text, sizeof text, "%016" PRIx64, m->hash);
    cli_json_string(&j, "grid_hash", text);
    cli_json_int(&j, "grid_points", (long long)m->npoints);
    snprintf(text, sizeof text, "%" PRIu64 "/%" PRIu64, m->shard_i,
             m->shard_n);
    cli_json_string(&j, "shard", text);
    cli_json_array_begin(&j, "points");
    for (line = strtok_r(copy, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (nn == 0) {
            nn = split_csv(line, names);
            continue;
        }
        {
            size_t n = split_csv(line, f);
            cli_json_object_begin(&j, NULL);
            for (size_t c = 0; c < n && c < nn; c++) {
                if (is_name_column(c))
                    cli_json_string(&j, names[c], f[c]);
                else if (strcmp(f[c], "nan") == 0 || strcmp(f[c], "inf") == 0
                         || strcmp(f[c], "-inf") == 0)
                    cli_json_null(&j, names[c]);
                else
                    cli_json_double(&j, names[c], strtod(f[c], NULL));
            }
            cli_json_object_end(&j);
        }
    }
    cli_json_array_end(&j);
    cli_json_object_end(&j);
    cli_json_finish(&j);
    free(copy);
    return true;
}

/*----------------------------------------------------------------------------
 * Plots: for each axis with two or more values, the bias of O (and of
 * delta) against it, one series per combination of the other axes that
 * vary, error bars from the spread of the heads' means where that is
 * defined.  The fixed settings go into the title.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *column, *se_column; /* the CSV columns */
    const char *file;               /* "bias" or "delta" */
    const char *what, *ylabel;
} plot_kind;

static const plot_kind plot_kinds[] = {
    {"o_mean_ulp", "o_se_heads", "bias", "O",
     "mean signed error of O (ulps of O's format)"},
    {"delta_mean", "delta_se_heads", "delta", "delta = rowsum(dO o O)",
     "mean signed error of delta (absolute)"},
};

/* How an axis is named on a plot. */
static const char *
axis_label(grid_axis a)
{
    switch (a) {
    case GX_POLICY:
        return "precision policy";
    case GX_FIX:
        return "fix of the repeated maximum";
    case GX_ABLATE:
        return "ablations";
    case GX_EXP:
        return "exp model";
    case GX_MMA:
        return "accumulation model of P~V";
    case GX_QK:
        return "score structure (qk)";
    case GX_SINK:
        return "sink strength (score added to key 0)";
    case GX_REPEAT:
        return "keys at the row maximum (repeat)";
    case GX_MAX_VALUE:
        return "score at the maximum (max-value)";
    case GX_GAP_MIN:
        return "smallest gap below the maximum (gap-min)";
    case GX_GAP_MAX:
        return "largest gap below the maximum (gap-max)";
    case GX_QK_STD:
        return "standard deviation of Q and K";
    case GX_DO_MEAN:
        return "mean of dO";
    case GX_CAUSAL:
        return "causal mask (0 or 1)";
    case GX_N:
        return "sequence length N (= Nq = Nk)";
    case GX_D:
        return "head dimension d";
    case GX_BR:
        return "query tile Br (0: the policy's)";
    case GX_BC:
        return "key tile Bc (0: the policy's)";
    case GX_V_DIST:
        return "distribution of V";
    case GX_V_NU:
        return "degrees of freedom of V (student-t)";
    case GX_V_STD:
        return "standard deviation of V";
    case GX_V_SHIFT:
        return "per-column mean shift of V";
    case GX_V_MEAN:
        return "mean of V";
    default:
        return grid_axis_key(a);
    }
}

/* Whether a one-valued axis A is worth naming in the title: the main
   ones always, the others when they matter for the grid's score
   structure or differ from the default. */
static bool
axis_in_title(const sweep_grid *g, const sweep_grid *def, grid_axis a)
{
    const char *qk = g->ax[GX_QK].n == 1 ? g->ax[GX_QK].text[0] : "";

    switch (a) {
    case GX_POLICY:
    case GX_FIX:
    case GX_QK:
    case GX_N:
    case GX_D:
    case GX_V_DIST:
    case GX_V_MEAN:
    case GX_V_STD:
        return true;
    case GX_SINK:
        return strcmp(qk, "sink") == 0;
    case GX_REPEAT:
        return strcmp(qk, "repeated-max") == 0;
    case GX_MAX_VALUE:
    case GX_GAP_MIN:
    case GX_GAP_MAX:
        if (strcmp(qk, "repeated-max") != 0)
            return false;
        break;
    case GX_V_NU:
        if (g->ax[GX_V_DIST].n != 1
            || strcmp(g->ax[GX_V_DIST].text[0], "student-t") != 0)
            return false;
        return true;
    default:
        break;
    }
    return def == NULL || def->ax[a].n != 1
           || strcmp(def->ax[a].text[0], g->ax[a].text[0]) != 0;
}

/* The fixed settings of grid G, for a title: "key value, ..." broken into
   lines of at most about 110 characters. */
static void
fixed_settings(const sweep_grid *g, cli_buf *out)
{
    sweep_grid def;
    bool def_ok = grid_init_default(&def) == 0;
    size_t line0 = out->len;
    bool first = true;
    char item[GRID_MAX_TEXT + 64];

    for (int a = 0; a <= N_GX; a++) {
        if (a < N_GX) {
            if (g->ax[a].n != 1
                || !axis_in_title(g, def_ok ? &def : NULL, (grid_axis)a))
                continue;
            snprintf(item, sizeof item, "%s %s", grid_axis_key((grid_axis)a),
                     g->ax[a].text[0]);
        } else {
            snprintf(item, sizeof item,
                     "trials x heads %" PRIu64 " x %" PRIu64 ", seed %" PRIu64,
                     g->set[GS_TRIALS], g->set[GS_HEADS], g->set[GS_SEED]);
        }
        if (!first && out->len - line0 + strlen(item) + 2 > 110) {
            cli_buf_puts(out, ",\n");
            line0 = out->len;
        } else if (!first) {
            cli_buf_puts(out, ", ");
        }
        cli_buf_puts(out, item);
        first = false;
    }
    if (def_ok)
        grid_free(&def);
}

/* S as a gnuplot double-quoted string ('\n' for a newline). */
static void
gp_string(cli_buf *out, const char *s)
{
    cli_buf_putc(out, '"');
    for (; *s; s++) {
        if (*s == '\n')
            cli_buf_puts(out, "\\n");
        else if (*s == '"' || *s == '\\') {
            cli_buf_putc(out, '\\');
            cli_buf_putc(out, *s);
        } else
            cli_buf_putc(out, *s);
    }
    cli_buf_putc(out, '"');
}

/* What plot_data saw. */
typedef struct
{
    size_t nseries;
    size_t nrows;  /* rows with a finite mean */
    size_t nno_ci; /* ... of them without an interval */
} plot_info;

/* The plot data of axis XA and kind K: one block per combination of the
   other axes that vary, in order of first appearance; each block starts
   with its title and holds "x mean lo hi" rows (x: the value, or for a
   named axis its position in the axis; lo and hi NaN where the
   standard error of the heads' means is undefined).  False when memory
   runs out or a column is missing. */
static bool
plot_data(const char *csv, const sweep_grid *g, grid_axis xa,
          const plot_kind *k, cli_buf *out, plot_info *pi)
{
    char *copy = strdup(csv), *save = NULL, *line;
    char *f[MAX_COLS], *names[MAX_COLS];
    size_t nn = 0, c_mean = 0, c_se = 0, nb = 0;
    char **keys = NULL;
    cli_buf *blocks = NULL;
    bool ok = copy != NULL;

    memset(pi, 0, sizeof *pi);
    for (line = ok ? strtok_r(copy, "\n", &save) : NULL; line != NULL && ok;
         line = strtok_r(NULL, "\n", &save)) {
        char key[2048];
        size_t n, o = 0, bi;
        double m, se;
        if (nn == 0) {
            nn = split_csv(line, names);
            for (size_t c = 0; c < nn; c++) {
                if (strcmp(names[c], k->column) == 0)
                    c_mean = c;
                if (strcmp(names[c], k->se_column) == 0)
                    c_se = c;
            }
            ok = c_mean != 0 && c_se != 0 && nn > N_GX;
            continue;
        }
        n = split_csv(line, f);
        if (n < nn)
            continue;
        key[0] = '\0';
        for (int a = 0; a < N_GX; a++)
            if (a != (int)xa && g->ax[a].n > 1 && o < sizeof key)
                o += (size_t)snprintf(key + o, sizeof key - o, "%s%s=%s",
                                      o ? " " : "",
                                      grid_axis_key((grid_axis)a), f[1 + a]);
        if (o == 0)
            snprintf(key, sizeof key, "%s", k->file);
        for (bi = 0; bi < nb; bi++)
            if (strcmp(keys[bi], key) == 0)
                break;
        if (bi == nb) {
            char **k2 = realloc(keys, (nb + 1) * sizeof *keys);
            cli_buf *b2;
            if (k2 != NULL)
                keys = k2;
            b2 = realloc(blocks, (nb + 1) * sizeof *blocks);
            if (b2 != NULL)
                blocks = b2;
            if (k2 == NULL || b2 == NULL || (keys[nb] = strdup(key)) == NULL) {
                ok = false;
                break;
            }
            cli_buf_init(&blocks[nb]);
            cli_buf_printf(&blocks[nb], "\"%s\"\n", key);
            nb++;
        }
        if (grid_axis_numeric(xa)) {
            cli_buf_puts(&blocks[bi], f[1 + xa]);
        } else {
            size_t v = 0;
            while (v < g->ax[xa].n && strcmp(g->ax[xa].text[v], f[1 + xa]))
                v++;
            cli_buf_printf(&blocks[bi], "%zu", v);
        }
        m = strtod(f[c_mean], NULL);
        se = strtod(f[c_se], NULL);
        if (isfinite(m)) {
            pi->nrows++;
            cli_buf_printf(&blocks[bi], " %.9g", m);
        } else {
            cli_buf_puts(&blocks[bi], " NaN");
        }
        if (isfinite(m) && isfinite(se))
            cli_buf_printf(&blocks[bi], " %.9g %.9g\n", m - BIAS_Z95 * se,
                           m + BIAS_Z95 * se);
        else {
            pi->nno_ci += isfinite(m);
            cli_buf_puts(&blocks[bi], " NaN NaN\n");
        }
    }
    for (size_t bi = 0; bi < nb; bi++) {
        if (ok) {
            cli_buf_put_mem(out, blocks[bi].p, blocks[bi].len);
            cli_buf_puts(out, bi + 1 < nb ? "\n\n" : "");
        }
        cli_buf_free(&blocks[bi]);
        free(keys[bi]);
    }
    free(blocks);
    free(keys);
    free(copy);
    pi->nseries = nb;
    return ok && nb > 0;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The gnuplot variables of the plot of axis XA, kind K: the x range
   padded by 5% on each side (a log scale for n, d, repeat, br and bc
   spread over a factor of 4 or more), tics at the values when there are at
   most 10, series moved apart by a little so that their error bars do not hide
   each other, the title with the fixed settings and what the error bars mean.
   HEAD (unless NULL) receives a comment line for the data file that says what
   its columns and x range are. */
static void
plot_vars(const sweep_grid *g, grid_axis xa, const plot_kind *k,
          const plot_info *pi, cli_buf *v, cli_buf *head)
{
    const grid_values *ax = &g->ax[xa];
    bool named = !grid_axis_numeric(xa);
    double *x = malloc(ax->n * sizeof *x);
    double lo = 0, hi = (double)ax->n - 1, gap = 1, lo_r, hi_r, spread;
    size_t labels = 0;
    bool logx = false;
    uint64_t heads = g->set[GS_TRIALS] * g->set[GS_HEADS];
    cli_buf t;
    size_t nx = 0;

    if (x != NULL && !named) {
        for (size_t i = 0; i < ax->n; i++)
            x[nx++] = ax->num[i];
        qsort(x, nx, sizeof *x, cmp_double);
        lo = x[0];
        hi = x[nx - 1];
        logx = (xa == GX_N || xa == GX_D || xa == GX_REPEAT || xa == GX_BR
                || xa == GX_BC)
               && lo > 0 && hi >= 4 * lo;
        gap = 0;
        for (size_t i = 1; i < nx; i++) {
            double d = logx ? log10(x[i]) - log10(x[i - 1]) : x[i] - x[i - 1];
            if (d > 0 && (gap == 0 || d < gap))
                gap = d;
        }
    }
    if (gap == 0)
        gap = logx ? 0.3 : hi > lo ? hi - lo : fabs(lo) > 5 ? fabs(lo) : 1;
    /* the series side by side over 15% of the smallest step (40% when
       the axis holds names and no line joins the points), when there
       are error bars */
    spread = pi->nseries > 1 && pi->nno_ci < pi->nrows
                 ? (named ? 0.4 : 0.15) * gap / (double)(pi->nseries - 1)
                 : 0;
    /* 5% of the range on each side, beyond the outermost series */
    if (named) {
        lo_r = -0.5;
        hi_r = hi + 0.5;
    } else if (logx) {
        double pad = 0.05 * (log10(hi) - log10(lo))
                     + spread * (double)(pi->nseries - 1) / 2;
        lo_r = lo / pow(10, pad);
        hi_r = hi * pow(10, pad);
    } else {
        double pad = 0.05 * (hi > lo ? hi - lo : gap)
                     + spread * (double)(pi->nseries - 1) / 2;
        lo_r = lo - pad;
        hi_r = hi + pad;
    }
    for (size_t i = 0; named && i < ax->n; i++)
        labels += strlen(ax->text[i]) + 2;
    if (head != NULL)
        cli_buf_printf(head,
                       "# %s: x (%s), mean, 95%% interval lo, hi (NaN: "
                       "none); x range %.9g .. %.9g%s\n",
                       k->column,
                       named ? "the position of the name" : grid_axis_key(xa),
                       lo_r, hi_r, logx ? " (log scale)" : "");
    cli_buf_printf(v,
                   "; nseries=%zu; xmin=%.17g; xmax=%.17g; logx=%d; "
                   "named=%d; rotate=%d; dodge=%.17g; xlabel=",
                   pi->nseries, lo_r, hi_r, logx, named, labels > 80, spread);
    gp_string(v, axis_label(xa));
    cli_buf_puts(v, "; ylabel=");
    gp_string(v, k->ylabel);
    cli_buf_puts(v, "; xtics=");
    cli_buf_init(&t);
    if (named || ax->n <= 10) {
        cli_buf_putc(&t, '(');
        for (size_t i = 0; i < ax->n; i++) {
            if (i)
                cli_buf_puts(&t, ", ");
            if (named) {
                gp_string(&t, ax->text[i]);
                cli_buf_printf(&t, " %zu", i);
            } else {
                gp_string(&t, ax->text[i]);
                cli_buf_printf(&t, " %.17g", ax->num[i]);
            }
        }
        cli_buf_putc(&t, ')');
    }
    gp_string(v, t.failed ? "" : (t.p != NULL ? t.p : ""));
    cli_buf_free(&t);
    cli_buf_init(&t);
    cli_buf_printf(&t, "Rounding bias of %s (computed - exact)\n", k->what);
    fixed_settings(g, &t);
    cli_buf_putc(&t, '\n');
    if (pi->nno_ci == 0)
        cli_buf_printf(&t,
                       "error bars: 95%% intervals from the spread of the "
                       "%" PRIu64 " heads' means of each point",
                       heads);
    else if (heads < 2)
        cli_buf_puts(&t, "no error bars: an interval needs two or more "
                         "heads per point (trials x heads is 1)");
    else if (pi->nno_ci == pi->nrows)
        cli_buf_puts(&t, "no error bars: the heads' means give no standard "
                         "error");
    else
        cli_buf_printf(&t,
                       "error bars: 95%% intervals from the spread of the "
                       "heads' means; %zu of %zu points have none (no "
                       "standard error)",
                       pi->nno_ci, pi->nrows);
    cli_buf_puts(v, "; title=");
    gp_string(v, t.failed ? "" : t.p);
    cli_buf_free(&t);
    free(x);
}

/* The plots of the finished CSV into DIR; PLOT -1 (auto: no gnuplot, no
   plot), 1 (gnuplot required). */
static int
write_plots(const char *cmd, const char *dir, const sweep_grid *g,
            const char *csv, int plot, bool quiet)
{
    char *log = cli_path_join(dir, "gnuplot.log");
    int rc = CLI_EXIT_OK;
    bool told = false;

    if (log == NULL)
        return cli_error(cmd, "out of memory");
    for (int a = 0; a < N_GX && rc == CLI_EXIT_OK; a++) {
        char name[64], q[4200], why[512];
        const char *key = grid_axis_key((grid_axis)a);
        size_t o = 0;
        for (size_t i = 0; key[i] && o < 40; i++)
            if (key[i] != '-')
                name[o++] = key[i];
        name[o] = '\0';
        if (g->ax[a].n < 2) {
            /* the plots of an earlier grid in DIR would mislead */
            static const char *const ext[] = {"dat", "png", "svg"};
            for (size_t kk = 0; kk < 2 * 3; kk++) {
                char file[128], *path;
                snprintf(file, sizeof file, "%s-%s.%s",
                         plot_kinds[kk / 3].file, name, ext[kk % 3]);
                if ((path = cli_path_join(dir, file)) != NULL)
                    unlink(path);
                free(path);
            }
            continue;
        }
        for (size_t kk = 0;
             kk < sizeof plot_kinds / sizeof plot_kinds[0] && rc == 0; kk++) {
            const plot_kind *k = &plot_kinds[kk];
            char file[128];
            char *base, *dat;
            cli_buf db, vars, dh;
            plot_info pi;
            int pr;
            snprintf(file, sizeof file, "%s-%s", k->file, name);
            base = cli_path_join(dir, file);
            snprintf(file, sizeof file, "%s-%s.dat", k->file, name);
            dat = cli_path_join(dir, file);
            cli_buf_init(&db);
            cli_buf_init(&vars);
            cli_buf_init(&dh);
            if (base == NULL || dat == NULL
                || !plot_data(csv, g, (grid_axis)a, k, &db, &pi)
                || db.failed) {
                rc = cli_error(cmd, "%s: cannot make the plot data",
                               dat ? dat : dir);
            } else if (!plot_quote(q, sizeof q, dat)) {
                rc = cli_error(cmd,
                               "%s: a quote or newline in the path; no "
                               "plot",
                               dir);
            } else {
                cli_buf_printf(&vars, "datafile=%s", q);
                plot_quote(q, sizeof q, base);
                cli_buf_printf(&vars, "; out=%s", q);
                plot_vars(g, (grid_axis)a, k, &pi, &vars, &dh);
                cli_buf_put_mem(&dh, db.p, db.len);
                if (vars.failed || dh.failed) {
                    rc = cli_error(cmd, "out of memory");
                } else if (!cli_write_atomic(dat, dh.p, dh.len)) {
                    rc = cli_error(cmd, "%s: cannot write: %s", dat,
                                   strerror(errno));
                } else if (!told) {
                    unlink(log);
                    pr = plot_run("sweep-bias.gp", vars.p, log, why,
                                  sizeof why);
                    if (pr == 1) {
                        told = true; /* no gnuplot: the data only */
                        if (plot == 1)
                            rc = cli_error(cmd, "gnuplot is not installed "
                                                "(--plot)");
                        else if (!quiet)
                            fprintf(stderr,
                                    "bf16emu %s: gnuplot not found; no "
                                    "plot\n",
                                    cmd);
                    } else if (pr != 0) {
                        rc = cli_error(cmd, "%s", why);
                    } else {
                        unlink(log);
                    }
                }
            }
            cli_buf_free(&db);
            cli_buf_free(&vars);
            cli_buf_free(&dh);
            free(base);
            free(dat);
        }
    }
    free(log);
    return rc;
}

/* sweep.json and the plots, from the finished CSV in DIR. */
static int
finish_outputs(const char *cmd, const char *dir, const sweep_grid *g,
               const char *grid_txt, const sweep_meta *m, int plot, bool quiet)
{
    char *csv_path = cli_path_join(dir, "sweep.csv");
    char *json_path = cli_path_join(dir, "sweep.json");
    size_t len;
    char *csv = NULL;
    cli_buf jb;
    int rc = CLI_EXIT_OK;

    cli_buf_init(&jb);
    if (!csv_path || !json_path) {
        rc = cli_error(cmd, "out of memory");
        goto done;
    }
    csv = cli_read_all(csv_path, &len);
    if (csv == NULL) {
        rc = cli_error(cmd, "%s: cannot read: %s", csv_path, strerror(errno));
        goto done;
    }
    if (!csv_to_json(csv, grid_txt, m, &jb) || jb.failed
        || !cli_write_atomic(json_path, jb.p, jb.len)) {
        rc =
            cli_error(cmd, "%s: cannot write: %s", json_path, strerror(errno));
        goto done;
    }
    if (plot != 0)
        rc = write_plots(cmd, dir, g, csv, plot, quiet);
done:
    free(csv);
    cli_buf_free(&jb);
    free(csv_path);
    free(json_path);
    return rc;
}

/* Copies DIR/sweep.json to stdout. */
static int
print_json(const char *cmd, const char *dir)
{
    char *p = cli_path_join(dir, "sweep.json");
    size_t len;
    char *text = p != NULL ? cli_read_all(p, &len) : NULL;
    int rc = CLI_EXIT_OK;

    if (text == NULL)
        rc = cli_error(cmd, "%s: cannot read: %s", p ? p : dir,
                       strerror(errno));
    else if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
        rc = cli_error(cmd, "cannot write to stdout");
    free(text);
    free(p);
    return rc;
}

/* The cost of the points of this shard: the sum of trials x heads x N^2 x
   d over them, times the number of stage variants.  *BASE: the sum
   without the stage factor. */
static double
sweep_cost(const sweep_ctx *x, uint64_t npoints, double *base)
{
    const sweep_grid *g = &x->grid;
    double sum = 0;

    for (uint64_t p = x->shard_i; p < npoints; p += x->shard_n) {
        size_t idx[N_GX];
        double n, d;
        grid_point(g, p, idx);
        n = g->ax[GX_N].num[idx[GX_N]];
        d = g->ax[GX_D].num[idx[GX_D]];
        sum +=
            (double)g->set[GS_TRIALS] * (double)g->set[GS_HEADS] * n * n * d;
    }
    *base = sum;
    return g->set[GS_STAGES] ? sum * PT_N_STAGES : sum;
}

/* "cost C: ..." for the points of this shard, without a newline. */
static void
cost_text(cli_buf *b, const sweep_ctx *x, uint64_t npoints)
{
    double base, cost = sweep_cost(x, npoints, &base);

    cli_buf_printf(b,
                   "cost %.3g: trials x heads x N^2 x d summed over the "
                   "points",
                   cost);
    if (x->grid.set[GS_STAGES])
        cli_buf_printf(b, " (%.3g), x %d stage variants (--stages on)", base,
                       (int)PT_N_STAGES);
}

/*----------------------------------------------------------------------------
 * Interruption: the first SIGINT or SIGTERM finishes the batch in hand
 * and stops (what is done stays on disk; --resume continues); a second
 * one stops at once.
 *--------------------------------------------------------------------------*/
static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
    interrupted = sig;
}

/* Catches SIGINT and SIGTERM (not one that was ignored when the program
   started) until catch_restore; the handler is reset by the first one,
   so that a second one stops the program at once. */
static void
catch_stop(struct sigaction old[2])
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = (int)(SA_RESTART | SA_RESETHAND);
    interrupted = 0;
    for (int i = 0; i < 2; i++)
        if (sigaction(sigs[i], NULL, &old[i]) == 0
            && old[i].sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
}

static void
catch_restore(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

/*----------------------------------------------------------------------------
 * Resume: the rows already in sweep.csv.
 *--------------------------------------------------------------------------*/
/* Checks DIR's sweep-meta.txt against META and the first line of the CSV
   at PATH against HEAD (the column names); marks the points found in DONE;
   truncates a last incomplete line.  Returns -1, or an exit code after a
   message. */
static int
resume_scan(const char *dir, const char *path, const char *meta,
            const char *head, unsigned char *done, uint64_t npoints,
            uint64_t *ndone)
{
    size_t len, hl = strlen(head), keep, ml;
    char *mp = cli_path_join(dir, META_FILE);
    char *mt = mp != NULL ? cli_read_all(mp, &ml) : NULL;
    char *buf = cli_read_all(path, &len);
    char *p, *end;
    bool same = mt != NULL && strcmp(mt, meta) == 0;

    free(mp);
    free(mt);
    *ndone = 0;
    if (buf == NULL)
        return cli_error(CMD, "%s: cannot read: %s", path, strerror(errno));
    if (!same || len < hl || memcmp(buf, head, hl) != 0) {
        free(buf);
        return cli_error(CMD,
                         "%s: written by another grid, seed, shard or "
                         "version (see %s); cannot resume it (use --force "
                         "to start again)",
                         path, META_FILE);
    }
    keep = hl;
    p = buf + hl;
    end = buf + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop;
        unsigned long long idx;
        if (nl == NULL)
            break; /* an incomplete last row: dropped */
        errno = 0;
        idx = strtoull(p, &stop, 10);
        if (stop == p || *stop != ',' || errno != 0 || idx >= npoints
            || done[idx]) {
            size_t off = (size_t)(p - buf);
            free(buf);
            return cli_error(CMD,
                             "%s: the row at byte %zu is damaged; cannot "
                             "resume",
                             path, off);
        }
        done[idx] = 1;
        (*ndone)++;
        p = nl + 1;
        keep = (size_t)(p - buf);
    }
    free(buf);
    if (keep < len && truncate(path, (off_t)keep) != 0)
        return cli_error(CMD, "%s: cannot drop the incomplete last row: %s",
                         path, strerror(errno));
    return -1;
}

/*----------------------------------------------------------------------------
 * The run.
 *--------------------------------------------------------------------------*/
static int
thread_count(const sweep_ctx *x)
{
#ifdef _OPENMP
    return x->threads > 0 ? (int)x->threads : omp_get_max_threads();
#else
    (void)x;
    return 1;
#endif
}

static sweep_meta
ctx_meta(const sweep_ctx *x, uint64_t npoints)
{
    sweep_meta m;

    m.hash = x->hash;
    m.npoints = npoints;
    m.shard_i = x->shard_i;
    m.shard_n = x->shard_n;
    return m;
}

/*----------------------------------------------------------------------------
 * A batch of points: inside a batch, (point, trial) tasks run in
 * parallel; then each point's trials are merged in trial order and its
 * row written, in the order of the points.
 *--------------------------------------------------------------------------*/
typedef struct
{
    pt_stats *res;
    const char **why;
    pt_spec *specs;
    uint64_t trials;
} batch_work;

static size_t
batch_size(int nt)
{
    return (size_t)(nt > 1 ? 4 * nt : 1);
}

static bool
batch_init(batch_work *w, size_t batch, uint64_t trials)
{
    w->trials = trials;
    w->res = malloc(batch * trials * sizeof *w->res);
    w->why = malloc(batch * trials * sizeof *w->why);
    w->specs = malloc(batch * sizeof *w->specs);
    return w->res != NULL && w->why != NULL && w->specs != NULL;
}

static void
batch_free(batch_work *w)
{
    free(w->res);
    free(w->why);
    free(w->specs);
}

/* The rows of the NB points POINTS (at most the batch size) into ROWS. */
static int
compute_batch(const sweep_ctx *x, batch_work *w, const uint64_t *points,
              size_t nb, int nt, cli_buf *rows)
{
    uint64_t trials = w->trials;
    long long ntask = (long long)(nb * trials);
    int failed = 0;

    for (size_t i = 0; i < nb; i++)
        point_spec(x, points[i], &w->specs[i]);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
    for (long long t = 0; t < ntask; t++) {
        size_t pi = (size_t)t / trials;
        uint64_t tr = (uint64_t)t % trials;
        pt_stats_init(&w->res[t]);
        w->why[t] = NULL;
        if (pt_trial(&w->specs[pi], tr, &w->res[t], &w->why[t]) != 0) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
    }
    if (failed) {
        for (long long t = 0; t < ntask; t++)
            if (w->why[t] != NULL)
                return cli_error(CMD, "point %" PRIu64 ": %s",
                                 points[(size_t)t / trials], w->why[t]);
        return cli_error(CMD, "a point failed");
    }
    for (size_t i = 0; i < nb; i++) {
        pt_stats acc;
        pt_stats_init(&acc);
        for (uint64_t t = 0; t < trials; t++)
            pt_stats_merge(&acc, &w->res[i * trials + t]);
        csv_row(rows, &x->grid, points[i], &acc, x->grid.set[GS_STAGES] != 0);
    }
    return CLI_EXIT_OK;
}

static int
run_sweep(sweep_ctx *x)
{
    const sweep_grid *g = &x->grid;
    uint64_t npoints = grid_points(g), mine = 0, ndone = 0, total;
    uint64_t trials = g->set[GS_TRIALS];
    char *csv_path = NULL, *grid_path = NULL, *meta_path = NULL;
    unsigned char *done = NULL;
    cli_buf head, meta;
    sweep_meta mt = ctx_meta(x, npoints);
    int fd = -1, rc = CLI_EXIT_OK, nt = thread_count(x);
    bool show = x->progress == 1 || (x->progress < 0 && !x->quiet);
    bool tty = isatty(2);
    double t0 = cli_now_s();
    struct stat st;
    uint64_t *todo = NULL;
    size_t ntodo = 0;
    struct sigaction old_sig[2];
    bool caught = false;

    cli_buf_init(&head);
    cli_buf_init(&meta);
    csv_header(&head, g->set[GS_STAGES] != 0);
    meta_text(&meta, &mt);
    csv_path = cli_path_join(x->out_dir, "sweep.csv");
    grid_path = cli_path_join(x->out_dir, "grid.txt");
    meta_path = cli_path_join(x->out_dir, META_FILE);
    done = calloc(npoints, 1);
    todo = malloc(npoints * sizeof *todo);
    if (!csv_path || !grid_path || !meta_path || !done || !todo || head.failed
        || meta.failed) {
        rc = cli_error(CMD, "out of memory");
        goto out;
    }
    if (!out_dir_ok(CMD, x->out_dir, false)) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    if (stat(csv_path, &st) == 0) {
        if (x->resume) {
            rc = resume_scan(x->out_dir, csv_path, meta.p, head.p, done,
                             npoints, &ndone);
            if (rc >= 0)
                goto out;
            rc = CLI_EXIT_OK;
        } else if (!x->force) {
            rc = cli_error(CMD,
                           "%s exists (--resume continues it, --force "
                           "starts again)",
                           csv_path);
            goto out;
        }
    } else {
        x->resume = false;
    }
    if (!out_dir_ok(CMD, x->out_dir, true)) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    if (!cli_write_atomic(grid_path, x->text, strlen(x->text))
        || !cli_write_atomic(meta_path, meta.p, meta.len)) {
        rc = cli_error(CMD, "%s: cannot write: %s", x->out_dir,
                       strerror(errno));
        goto out;
    }
    fd = open(csv_path,
              x->resume ? O_WRONLY | O_APPEND : O_WRONLY | O_CREAT | O_TRUNC,
              0644);
    if (fd < 0) {
        rc = cli_error(CMD, "%s: cannot open: %s", csv_path, strerror(errno));
        goto out;
    }
    if (!x->resume && !append_sync(fd, head.p, head.len)) {
        rc = cli_error(CMD, "%s: cannot write: %s", csv_path, strerror(errno));
        goto out;
    }
    for (uint64_t p = x->shard_i; p < npoints; p += x->shard_n) {
        mine++;
        if (!done[p])
            todo[ntodo++] = p;
    }
    total = mine;
    ndone = mine - ntodo;
    catch_stop(old_sig);
    caught = true;
    if (show) {
        cli_buf c;
        cli_buf_init(&c);
        cost_text(&c, x, npoints);
        fprintf(stderr,
                "bf16emu sweep: %" PRIu64 " points (shard %" PRIu64 "/%" PRIu64
                "), trials x heads %" PRIu64 " x %" PRIu64
                " per point, threads %d; %s\n",
                total, x->shard_i, x->shard_n, trials, g->set[GS_HEADS], nt,
                c.failed ? "" : c.p);
        cli_buf_free(&c);
    }
    if (!x->quiet && x->resume)
        fprintf(stderr,
                "bf16emu sweep: resuming, %" PRIu64 " of %" PRIu64
                " points already done\n",
                ndone, total);
    if (show && tty)
        cli_progress(CMD, "points", tty, ndone, total, t0, false);

    {
        batch_work bw;
        size_t batch = batch_size(nt);
        if (!batch_init(&bw, batch, trials)) {
            rc = cli_error(CMD, "out of memory");
            goto out;
        }
        for (size_t b0 = 0; b0 < ntodo && rc == CLI_EXIT_OK && !interrupted;
             b0 += batch) {
            size_t nb = ntodo - b0 < batch ? ntodo - b0 : batch;
            cli_buf rows;
            cli_buf_init(&rows);
            rc = compute_batch(x, &bw, todo + b0, nb, nt, &rows);
            if (rc == CLI_EXIT_OK
                && (rows.failed || !append_sync(fd, rows.p, rows.len)))
                rc = cli_error(CMD, "%s: cannot write: %s", csv_path,
                               strerror(errno));
            cli_buf_free(&rows);
            if (rc != CLI_EXIT_OK)
                break;
            ndone += nb;
            if (show)
                cli_progress(CMD, "points", tty, ndone, total, t0, false);
        }
        batch_free(&bw);
    }
    catch_restore(old_sig);
    caught = false;
    if (show && tty)
        cli_progress(CMD, "points", tty, ndone, total, t0, true);
    if (close(fd) != 0 && rc == CLI_EXIT_OK)
        rc = cli_error(CMD, "%s: cannot write: %s", csv_path, strerror(errno));
    fd = -1;
    if (rc != CLI_EXIT_OK)
        goto out;
    if (interrupted) {
        int sig = (int)interrupted;
        fprintf(stderr,
                "bf16emu sweep: %s: stopped after the batch in hand, %" PRIu64
                " of %" PRIu64
                " points done; the rows are kept in %s; the same command "
                "with --resume (instead of --force) continues\n",
                sig == SIGTERM ? "SIGTERM" : "SIGINT (Ctrl-C)", ndone, total,
                csv_path);
        rc = 128 + sig;
        goto out;
    }
    rc = finish_outputs(CMD, x->out_dir, g, x->text, &mt, x->plot, x->quiet);
    if (rc == CLI_EXIT_OK && x->json)
        rc = print_json(CMD, x->out_dir);
    if (rc == CLI_EXIT_OK && !x->quiet)
        fprintf(stderr, "bf16emu sweep: %" PRIu64 " points in %.1f s -> %s\n",
                total, cli_now_s() - t0, x->out_dir);
out:
    if (caught)
        catch_restore(old_sig);
    if (fd >= 0)
        close(fd);
    cli_buf_free(&head);
    cli_buf_free(&meta);
    free(csv_path);
    free(grid_path);
    free(meta_path);
    free(done);
    free(todo);
    return rc;
}

#ifdef HAVE_MPI
/*----------------------------------------------------------------------------
 * Under mpirun: rank r of n computes the points with index mod n == r
 * (each with its threads); rank 0 gathers the rows and writes the output
 * of a single-process run, byte for byte.  No resume (the rows are
 * written at the end) and no --shard (the ranks are the shards).
 *--------------------------------------------------------------------------*/
static int
run_sweep_mpi(sweep_ctx *x)
{
    const sweep_grid *g = &x->grid;
    uint64_t npoints = grid_points(g), mine = 0;
    int rank, size, rc = CLI_EXIT_OK, nt = thread_count(x), all_rc;
    uint64_t *todo = NULL;
    cli_buf rows, head;
    long long len, *lens = NULL;
    int *counts = NULL, *displs = NULL;
    char *all = NULL;

    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cli_buf_init(&rows);
    cli_buf_init(&head);
    if (rank == 0) {
        char *csv_path = cli_path_join(x->out_dir, "sweep.csv");
        struct stat st;
        if (x->resume || x->shard_n != 1)
            rc = cli_error(CMD, "under mpirun the ranks share the points: "
                                "--resume and --shard are not available");
        else if (csv_path == NULL)
            rc = cli_error(CMD, "out of memory");
        else if (!out_dir_ok(CMD, x->out_dir, true))
            rc = CLI_EXIT_USAGE;
        else if (stat(csv_path, &st) == 0 && !x->force)
            rc = cli_error(CMD, "%s exists (--force replaces it)", csv_path);
        free(csv_path);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != CLI_EXIT_OK)
        goto out;
    if (rank == 0 && (x->progress == 1 || (x->progress < 0 && !x->quiet))) {
        cli_buf c;
        cli_buf_init(&c);
        cost_text(&c, x, npoints);
        fprintf(stderr,
                "bf16emu sweep: %" PRIu64 " points on %d ranks, trials x "
                "heads %" PRIu64 " x %" PRIu64 " per point; %s\n",
                npoints, size, g->set[GS_TRIALS], g->set[GS_HEADS],
                c.failed ? "" : c.p);
        cli_buf_free(&c);
    }

    todo = malloc((npoints / (uint64_t)size + 1) * sizeof *todo);
    if (todo == NULL) {
        rc = cli_error(CMD, "out of memory");
    } else {
        batch_work bw;
        size_t batch = batch_size(nt);
        for (uint64_t p = (uint64_t)rank; p < npoints; p += (uint64_t)size)
            todo[mine++] = p;
        if (!batch_init(&bw, batch, g->set[GS_TRIALS]))
            rc = cli_error(CMD, "out of memory");
        for (size_t b0 = 0; b0 < mine && rc == CLI_EXIT_OK; b0 += batch) {
            size_t nb = mine - b0 < batch ? mine - b0 : batch;
            rc = compute_batch(x, &bw, todo + b0, nb, nt, &rows);
        }
        batch_free(&bw);
        if (rc == CLI_EXIT_OK && (rows.failed || rows.len > INT32_MAX))
            rc = cli_error(CMD, "rank %d: out of memory", rank);
    }
    MPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all_rc != CLI_EXIT_OK) {
        rc = all_rc;
        goto out;
    }

    /* rank 0 gathers every rank's rows */
    len = (long long)rows.len;
    if (rank == 0) {
        lens = malloc((size_t)size * sizeof *lens);
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
    }
    MPI_Gather(&len, 1, MPI_LONG_LONG, lens, 1, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        long long total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = (int)lens[i];
            displs[i] = (int)total;
            total += lens[i];
        }
        all = total < INT32_MAX ? malloc((size_t)total + 1) : NULL;
        if (all == NULL)
            rc = cli_error(CMD, "the rows do not fit in memory on rank 0");
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != CLI_EXIT_OK)
        goto out;
    MPI_Gatherv(rows.p != NULL ? rows.p : "", (int)rows.len, MPI_CHAR, all,
                counts, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        /* point p is line p / size of rank p mod size's rows */
        char **cur = malloc((size_t)size * sizeof *cur);
        char *csv_path = cli_path_join(x->out_dir, "sweep.csv");
        char *grid_path = cli_path_join(x->out_dir, "grid.txt");
        char *meta_path = cli_path_join(x->out_dir, META_FILE);
        sweep_meta mt = ctx_meta(x, npoints);
        cli_buf out, meta;
        cli_buf_init(&out);
        cli_buf_init(&meta);
        csv_header(&out, g->set[GS_STAGES] != 0);
        meta_text(&meta, &mt);
        if (cur == NULL || csv_path == NULL || grid_path == NULL
            || meta_path == NULL || meta.failed) {
            rc = cli_error(CMD, "out of memory");
        } else {
            for (int i = 0; i < size; i++)
                cur[i] = all + displs[i];
            for (uint64_t p = 0; p < npoints; p++) {
                char *line = cur[p % (uint64_t)size];
                char *nl =
                    memchr(line, '\n',
                           (size_t)(all + displs[p % (uint64_t)size]
                                    + counts[p % (uint64_t)size] - line));
                if (nl == NULL) {
                    rc = cli_error(CMD, "rank %d sent too few rows",
                                   (int)(p % (uint64_t)size));
                    break;
                }
                cli_buf_put_mem(&out, line, (size_t)(nl - line + 1));
                cur[p % (uint64_t)size] = nl + 1;
            }
            if (rc == CLI_EXIT_OK
                && (out.failed
                    || !cli_write_atomic(grid_path, x->text, strlen(x->text))
                    || !cli_write_atomic(meta_path, meta.p, meta.len)
                    || !cli_write_atomic(csv_path, out.p, out.len)))
                rc = cli_error(CMD, "%s: cannot write: %s", csv_path,
                               strerror(errno));
            if (rc == CLI_EXIT_OK)
                rc = finish_outputs(CMD, x->out_dir, g, x->text, &mt, x->plot,
                                    x->quiet);
            if (rc == CLI_EXIT_OK && x->json)
                rc = print_json(CMD, x->out_dir);
            if (rc == CLI_EXIT_OK && !x->quiet)
                fprintf(stderr,
                        "bf16emu sweep: %" PRIu64
                        " points on %d ranks -> %s\n",
                        npoints, size, x->out_dir);
        }
        free(cur);
        free(csv_path);
        free(grid_path);
        free(meta_path);
        cli_buf_free(&out);
        cli_buf_free(&meta);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
out:
    free(todo);
    free(lens);
    free(counts);
    free(displs);
    free(all);
    cli_buf_free(&rows);
    cli_buf_free(&head);
    MPI_Finalize();
    return rc;
}
#endif

/*----------------------------------------------------------------------------
 * Options.
 *--------------------------------------------------------------------------*/
enum
{
    O_HELP,
    O_GRID,
    O_OUT,
    O_THREADS,
    O_RESUME,
    O_FORCE,
    O_SHARD,
    O_PLOT,
    O_NO_PLOT,
    O_QUIET,
    O_DRY_RUN,
    O_PRINT_GRID,
    O_JSON,
    O_PROGRESS,
    O_NO_PROGRESS,
    O_KEY0 /* the grid keys follow */
};

static cli_option options[O_KEY0 + N_GX + N_GS + 1];

static void
init_options(void)
{
    static const cli_option fixed[O_KEY0] = {
        {"help", false, O_HELP},
        {"grid", true, O_GRID},
        {"out", true, O_OUT},
        {"threads", true, O_THREADS},
        {"resume", false, O_RESUME},
        {"force", false, O_FORCE},
        {"shard", true, O_SHARD},
        {"plot", false, O_PLOT},
        {"no-plot", false, O_NO_PLOT},
        {"quiet", false, O_QUIET},
        {"dry-run", false, O_DRY_RUN},
        {"print-grid", false, O_PRINT_GRID},
        {"json", false, O_JSON},
        {"progress", false, O_PROGRESS},
        {"no-progress", false, O_NO_PROGRESS},
    };
    int n = 0;

    for (int i = 0; i < O_KEY0; i++)
        options[n++] = fixed[i];
    for (int a = 0; a < N_GX; a++)
        options[n++] =
            (cli_option){grid_axis_key((grid_axis)a), true, O_KEY0 + a};
    for (int s = 0; s < N_GS; s++)
        options[n++] = (cli_option){grid_setting_key((grid_setting)s), true,
                                    O_KEY0 + N_GX + s};
    options[n] = (cli_option){NULL, false, 0};
}

void
sweep_help(FILE *out)
{
    fputs(
        "usage: bf16emu sweep [--grid FILE] [--KEY VALUES ...] [--out DIR]\n"
        "                     [--threads N] [--resume | --force] [--shard "
        "I/N]\n"
        "                     [--plot | --no-plot] [--progress | "
        "--no-progress] [--quiet]\n"
        "                     [--dry-run] [--print-grid] [--json]\n"
        "\n"
        "The rounding bias of O and of delta = rowsum(dO o O) over a grid "
        "of\n"
        "parameters.  Every point runs TRIALS trials of HEADS generated "
        "heads\n"
        "(N x d, Q and K with the score structure, V from the "
        "distribution)\n"
        "through the reference flash attention and compares each O element "
        "and\n"
        "each row's delta with a binary64 evaluation of the exact formula.\n"
        "Without options it runs the embedded default grid (54 points:\n"
        "paper-eq4, fix none and beta, 1, 2 and 4 repeated maxima, 9 means "
        "of V).\n"
        "\n"
        "Axes (each takes a comma-separated list; numbers also LO:HI:STEP):\n"
        "  --policy      paper-eq4, repo, fa2 (or flash), fp32, cudnn, "
        "efficient, math\n"
        "  --fix         none, beta, beta-v2, eps, always\n"
        "  --ablate      none, or ablations joined with '+' "
        "(fp32-pv+untiled)\n"
        "  --exp         default (each policy's description's exp_model), cr,\n"
        "                libm, ex2-sm90, ex2-sm90-ftz\n"
        "  --mma         default, or the P~V accumulation preset (sm90, "
        "exact, ...)\n"
        "  --qk          normal, sink, repeated-max\n"
        "  --sink S      sink strength (scaled score added to key 0)\n"
        "  --repeat K    keys at the maximum (repeated-max)\n"
        "  --max-value --gap-min --gap-max   repeated-max scores\n"
        "  --qk-std      standard deviation of Q and K\n"
        "  --do-mean     mean of dO (standard deviation 1)\n"
        "  --causal      0 or 1\n"
        "  --n --d       sequence length (Nq = Nk) and head dimension\n"
        "  --br --bc     tiles (0: the policy's)\n"
        "  --v-dist      normal, uniform, laplace, student-t\n"
        "  --v-nu        degrees of freedom of student-t\n"
        "  --v-mean --v-std   V's mean and standard deviation\n"
        "  --v-shift     per-column mean shift: column c gets v-mean + "
        "v-shift (2c/(d-1) - 1)\n"
        "Settings:\n"
        "  --trials T --heads H --seed S   (defaults 8, 1, 1; the intervals\n"
        "                    of *_heads columns come from the spread of the\n"
        "                    heads' means, TRIALS x HEADS of them)\n"
        "  --stages on|off   stage attribution: each rounding stage left out "
        "in turn\n"
        "                    (p-cast, pv-acc, pv-cast, o-cast, all)\n"
        "\n"
        "  --grid FILE   'key = values' lines ('#' comments); options after "
        "it override\n"
        "  --out DIR     output directory (default sweep-out): sweep.csv "
        "(plain CSV,\n"
        "                the column names first), sweep-meta.txt (its "
        "provenance),\n"
        "                sweep.json, grid.txt, and for each axis KEY with "
        "two or more\n"
        "                values bias-KEY.{dat,png,svg} (O) and "
        "delta-KEY.{dat,png,svg}\n"
        "                (KEY without '-': bias-vmean, bias-n, "
        "bias-policy)\n"
        "  --threads N   OpenMP threads (results do not depend on N)\n"
        "  --resume      continue an interrupted sweep in DIR\n"
        "  --force       replace an existing sweep in DIR\n"
        "  --shard I/N   only the points with index mod N == I (bf16emu "
        "merge joins them)\n"
        "  --plot        fail when gnuplot is missing; --no-plot: no plot\n"
        "  --progress    progress on stderr: a bar on a terminal, else one "
        "line per batch\n"
        "                (the default unless --quiet); --no-progress: "
        "none\n"
        "  --quiet       no messages but errors\n"
        "  --dry-run     print the points and the cost (trials x heads x N^2 "
        "x d summed\n"
        "                over the points) and exit, writing nothing; "
        "--print-grid: the grid\n"
        "  --json        also print sweep.json on stdout at the end\n"
        "\n"
        "Before the run the cost is printed with the progress.  Ctrl-C or "
        "SIGTERM\n"
        "stops after the batch in hand (a second one at once); the rows "
        "written\n"
        "stay and the same command with --resume continues.\n",
        out);
}

static bool
take_option(void *ctx, int id, const char *v)
{
    sweep_ctx *x = ctx;
    char err[1024];

    switch (id) {
    case O_GRID: {
        size_t len;
        struct stat st;
        char *text;
        if (stat(v, &st) == 0 && S_ISDIR(st.st_mode)) {
            cli_error(CMD,
                      "--grid %s: a directory (expected a grid file of "
                      "'key = values' lines)",
                      v);
            return false;
        }
        text = cli_read_all(v, &len);
        if (text == NULL) {
            cli_error(CMD, "--grid %s: cannot read: %s", v, strerror(errno));
            return false;
        }
        if (grid_parse_text(&x->grid, text, len, err, sizeof err) != 0) {
            cli_error(CMD, "--grid %s: %s", v, err);
            free(text);
            return false;
        }
        free(text);
        return true;
    }
    case O_OUT:
        if (*v == '\0') {
            cli_error(CMD, "--out: an empty directory name");
            return false;
        }
        x->out_dir = v;
        return true;
    case O_THREADS: {
        uint64_t n;
        if (!cli_parse_u64(CMD, "--threads", v, &n))
            return false;
        if (n < 1 || n > 1024) {
            cli_error(CMD, "--threads %s: expected 1 .. 1024", v);
            return false;
        }
        x->threads = (long)n;
        return true;
    }
    case O_RESUME:
        x->resume = true;
        return true;
    case O_FORCE:
        x->force = true;
        return true;
    case O_SHARD: {
        unsigned long long i, n;
        char c;
        if (sscanf(v, "%llu/%llu%c", &i, &n, &c) != 2 || n < 1 || i >= n
            || v[0] < '0' || v[0] > '9') {
            cli_error(CMD, "--shard %s: expected I/N with 0 <= I < N", v);
            return false;
        }
        x->shard_i = i;
        x->shard_n = n;
        return true;
    }
    case O_PLOT:
        x->plot = 1;
        return true;
    case O_NO_PLOT:
        x->plot = 0;
        return true;
    case O_QUIET:
        x->quiet = true;
        return true;
    case O_DRY_RUN:
        x->dry_run = true;
        return true;
    case O_PRINT_GRID:
        x->print_grid = true;
        return true;
    case O_JSON:
        x->json = true;
        return true;
    case O_PROGRESS:
        x->progress = 1;
        return true;
    case O_NO_PROGRESS:
        x->progress = 0;
        return true;
    default:
        if (id >= O_KEY0 && id < O_KEY0 + N_GX + N_GS) {
            const char *key =
                id < O_KEY0 + N_GX
                    ? grid_axis_key((grid_axis)(id - O_KEY0))
                    : grid_setting_key((grid_setting)(id - O_KEY0 - N_GX));
            if (grid_set(&x->grid, key, v, err, sizeof err) != 0) {
                cli_error(CMD, "--%s", err);
                return false;
            }
            return true;
        }
        return false;
    }
}

/* Loads the exp models of the exp axis. */
static bool
load_exps(sweep_ctx *x)
{
    const grid_values *e = &x->grid.ax[GX_EXP];

    x->exps = calloc(e->n, sizeof *x->exps);
    if (x->exps == NULL) {
        cli_error(CMD, "out of memory");
        return false;
    }
    for (size_t i = 0; i < e->n; i++) {
        fa_cli_exp_default(&x->exps[i]);
        if (strcmp(e->text[i], "default") != 0
            && !fa_cli_parse_exp(CMD, &x->exps[i], e->text[i]))
            return false;
    }
    /* "default": each policy's description's exp model */
    x->policy_exps = calloc(x->grid.ax[GX_POLICY].n, sizeof *x->policy_exps);
    if (x->policy_exps == NULL) {
        cli_error(CMD, "out of memory");
        return false;
    }
    for (size_t i = 0; i < x->grid.ax[GX_POLICY].n; i++) {
        fa_cli_exp_default(&x->policy_exps[i]);
        if (!fa_cli_exp_for(CMD, sweep_kernel(x->grid.ax[GX_POLICY].text[i]),
                            &x->policy_exps[i]))
            return false;
    }
    /* the lg2 log of a description on the policy axis (fa2) */
    for (size_t i = 0; i < x->grid.ax[GX_POLICY].n; i++)
        if (!fa_cli_log_for(CMD, "--policy",
                            sweep_kernel(x->grid.ax[GX_POLICY].text[i]),
                            &x->logm))
            return false;
    return true;
}

/* Every point's configuration must be usable: checked before anything
   runs. */
static bool
check_points(sweep_ctx *x, uint64_t npoints)
{
    for (uint64_t p = 0; p < npoints; p++) {
        pt_spec s;
        const char *why;
        point_spec(x, p, &s);
        why = pt_spec_check(&s);
        if (why != NULL) {
            size_t idx[N_GX];
            grid_point(&x->grid, p, idx);
            cli_error(CMD,
                      "point %" PRIu64
                      " (policy %s, n %s, d %s, bc %s, br %s, repeat %s): %s",
                      p, x->grid.ax[GX_POLICY].text[idx[GX_POLICY]],
                      x->grid.ax[GX_N].text[idx[GX_N]],
                      x->grid.ax[GX_D].text[idx[GX_D]],
                      x->grid.ax[GX_BC].text[idx[GX_BC]],
                      x->grid.ax[GX_BR].text[idx[GX_BR]],
                      x->grid.ax[GX_REPEAT].text[idx[GX_REPEAT]], why);
            return false;
        }
    }
    return true;
}

static void
ctx_free(sweep_ctx *x)
{
    if (x->exps != NULL)
        for (size_t i = 0; i < x->grid.ax[GX_EXP].n; i++)
            fa_cli_exp_free(&x->exps[i]);
    free(x->exps);
    if (x->policy_exps != NULL)
        for (size_t i = 0; i < x->grid.ax[GX_POLICY].n; i++)
            fa_cli_exp_free(&x->policy_exps[i]);
    free(x->policy_exps);
    fa_cli_log_free(&x->logm);
    free(x->text);
    if (x->grid_ok)
        grid_free(&x->grid);
}

int
sweep_main(int argc, char **argv)
{
    sweep_ctx x;
    int rc;
    uint64_t npoints;

    memset(&x, 0, sizeof x);
    x.out_dir = "sweep-out";
    x.plot = -1;
    x.progress = -1;
    x.shard_n = 1;
    if (grid_init_default(&x.grid) != 0)
        return cli_error(CMD, "out of memory");
    x.grid_ok = true;
    init_options();
    rc = cli_take_options(CMD, argc, argv, options, O_HELP, sweep_help,
                          "sweep takes options only", take_option, &x);
    if (rc >= 0) {
        ctx_free(&x);
        return rc;
    }
    if (x.resume && x.force) {
        ctx_free(&x);
        return cli_error(CMD, "--resume and --force exclude each other");
    }
    npoints = grid_points(&x.grid);
    if (npoints == 0 || npoints > GRID_MAX_POINTS) {
        ctx_free(&x);
        return cli_error(CMD, "the grid has too many points (at most %u)",
                         GRID_MAX_POINTS);
    }
    x.text = grid_text(&x.grid);
    if (x.text == NULL) {
        ctx_free(&x);
        return cli_error(CMD, "out of memory");
    }
    x.hash = fnv1a(x.text);
    if (x.print_grid) {
        fputs(x.text, stdout);
        ctx_free(&x);
        return CLI_EXIT_OK;
    }
    if (!load_exps(&x) || !check_points(&x, npoints)) {
        ctx_free(&x);
        return CLI_EXIT_USAGE;
    }
    if (!out_dir_ok(CMD, x.out_dir, false)) {
        ctx_free(&x);
        return CLI_EXIT_USAGE;
    }
    if (x.dry_run) {
        cli_buf b;
        cli_buf_init(&b);
        printf("%" PRIu64 " points (shard %" PRIu64 "/%" PRIu64 ")\n", npoints,
               x.shard_i, x.shard_n);
        cost_text(&b, &x, npoints);
        cli_buf_putc(&b, '\n');
        for (uint64_t p = x.shard_i; p < npoints; p += x.shard_n) {
            size_t idx[N_GX];
            grid_point(&x.grid, p, idx);
            cli_buf_printf(&b, "%" PRIu64, p);
            for (int a = 0; a < N_GX; a++)
                if (x.grid.ax[a].n > 1)
                    cli_buf_printf(&b, " %s=%s", grid_axis_key((grid_axis)a),
                                   x.grid.ax[a].text[idx[a]]);
            cli_buf_putc(&b, '\n');
        }
        rc = CLI_EXIT_OK;
        cli_report_emit(CMD, &b, &rc);
        ctx_free(&x);
        return rc;
    }
#ifdef HAVE_MPI
    if (cli_under_mpirun())
        rc = run_sweep_mpi(&x);
    else
#endif
        rc = run_sweep(&x);
    ctx_free(&x);
    return rc;
}

/*----------------------------------------------------------------------------
 * bf16emu merge --out DIR SHARD_DIR...: the rows of every shard of one
 * sweep, in index order, with sweep.json and the plots.  The shards must
 * come from one grid (grid.txt equal), cover each point once and be
 * complete; the order of the arguments does not matter.
 *--------------------------------------------------------------------------*/
#define MCMD "merge"

void
merge_help(FILE *out)
{
    fputs("usage: bf16emu merge [--force] [--no-plot] [--json] --out DIR "
          "SHARD_DIR...\n"
          "\n"
          "Joins the outputs of 'bf16emu sweep --shard I/N' runs of one "
          "grid into\n"
          "DIR: sweep.csv (rows in point order), sweep-meta.txt (shard "
          "0/1),\n"
          "sweep.json, grid.txt and the plots; the result is byte for byte "
          "the\n"
          "output of the unsharded sweep.  Every point must be present "
          "exactly once.\n"
          "DIR is never one of the shard directories, also not with "
          "--force.\n",
          out);
}

typedef struct
{
    const char *out;
    bool force, json;
    int plot;
    const char *dirs[1024];
    size_t nd;
    /* what the shards read so far hold */
    char *grid_txt, *colhead;
    char **rows;         /* per point, its CSV row */
    unsigned char *seen; /* per shard, whether it was read */
    sweep_meta meta;     /* of the first shard */
} merge_ctx;

/* DIR/NAME read whole into *TEXT; false after a message. */
static bool
merge_read(const char *dir, const char *name, char **text)
{
    char *p = cli_path_join(dir, name);
    size_t len;

    *text = p != NULL ? cli_read_all(p, &len) : NULL;
    if (*text == NULL)
        cli_error(MCMD, "%s: cannot read: %s", p != NULL ? p : dir,
                  strerror(errno));
    free(p);
    return *text != NULL;
}

/* The rows of the CSV text CT (the shard SH of DIR) into M->rows. */
static int
merge_rows(merge_ctx *m, const char *dir, char *ct, const sweep_meta *sh)
{
    char *line, *save = NULL;
    int lineno = 0, rc = CLI_EXIT_OK;

    for (line = strtok_r(ct, "\n", &save); line != NULL && rc == CLI_EXIT_OK;
         line = strtok_r(NULL, "\n", &save)) {
        char *stop;
        unsigned long long idx;
        lineno++;
        if (lineno == 1) {
            if (m->colhead == NULL && (m->colhead = strdup(line)) == NULL)
                rc = cli_error(MCMD, "out of memory");
            else if (strcmp(m->colhead, line) != 0)
                rc = cli_error(MCMD,
                               "%s/sweep.csv: line 1: other columns "
                               "than %s/sweep.csv",
                               dir, m->dirs[0]);
            continue;
        }
        idx = strtoull(line, &stop, 10);
        if (stop == line || *stop != ',' || idx >= sh->npoints
            || idx % sh->shard_n != sh->shard_i)
            rc = cli_error(MCMD,
                           "%s/sweep.csv: line %d: not a row of shard "
                           "%" PRIu64 "/%" PRIu64,
                           dir, lineno, sh->shard_i, sh->shard_n);
        else if (m->rows[idx] != NULL)
            rc = cli_error(MCMD, "%s/sweep.csv: point %llu twice", dir, idx);
        else if ((m->rows[idx] = strdup(line)) == NULL)
            rc = cli_error(MCMD, "out of memory");
    }
    if (rc == CLI_EXIT_OK && lineno == 0)
        rc = cli_error(MCMD,
                       "%s/sweep.csv: empty (expected the column "
                       "names on line 1)",
                       dir);
    return rc;
}

/* Reads the shard directory DIR into M. */
static int
merge_shard(merge_ctx *m, const char *dir)
{
    char *gt = NULL, *mt = NULL, *ct = NULL;
    const char *why;
    sweep_meta sh;
    int rc = CLI_EXIT_OK;

    if (!merge_read(dir, "grid.txt", &gt) || !merge_read(dir, META_FILE, &mt)
        || !merge_read(dir, "sweep.csv", &ct)) {
        rc = CLI_EXIT_USAGE;
    } else if ((why = meta_parse(mt, &sh)) != NULL) {
        rc = cli_error(MCMD, "%s/%s: %s", dir, META_FILE, why);
    } else if (sh.hash != fnv1a(gt)) {
        rc = cli_error(MCMD,
                       "%s/%s: the grid's hash is not that of %s/grid.txt",
                       dir, META_FILE, dir);
    } else if (m->grid_txt != NULL && strcmp(m->grid_txt, gt) != 0) {
        rc = cli_error(MCMD, "%s/grid.txt: another grid than %s", dir,
                       m->dirs[0]);
    } else if (m->grid_txt != NULL
               && (sh.shard_n != m->meta.shard_n
                   || sh.npoints != m->meta.npoints)) {
        rc = cli_error(MCMD,
                       "%s: shard %" PRIu64 "/%" PRIu64 " of another split",
                       dir, sh.shard_i, sh.shard_n);
    } else {
        if (m->grid_txt == NULL) {
            m->grid_txt = gt;
            gt = NULL;
            m->meta = sh;
            m->rows = calloc(sh.npoints, sizeof *m->rows);
            m->seen = calloc(sh.shard_n, 1);
            if (m->rows == NULL || m->seen == NULL)
                rc = cli_error(MCMD, "out of memory");
        }
        if (rc == CLI_EXIT_OK && m->seen[sh.shard_i])
            rc = cli_error(MCMD,
                           "%s: shard %" PRIu64 "/%" PRIu64 " given twice",
                           dir, sh.shard_i, sh.shard_n);
        if (rc == CLI_EXIT_OK) {
            m->seen[sh.shard_i] = 1;
            rc = merge_rows(m, dir, ct, &sh);
        }
    }
    free(gt);
    free(mt);
    free(ct);
    return rc;
}

/* --out: a directory or nothing yet, and none of the shard directories. */
static int
merge_check_out(const merge_ctx *m)
{
    struct stat so;

    if (!out_dir_ok(MCMD, m->out, false))
        return CLI_EXIT_USAGE;
    if (stat(m->out, &so) != 0)
        return CLI_EXIT_OK; /* made later */
    for (size_t i = 0; i < m->nd; i++) {
        struct stat si;
        if (strcmp(m->dirs[i], m->out) == 0
            || (stat(m->dirs[i], &si) == 0 && si.st_dev == so.st_dev
                && si.st_ino == so.st_ino))
            return cli_error(MCMD,
                             "--out %s is the shard directory %s; an input "
                             "is never overwritten, also not with --force",
                             m->out, m->dirs[i]);
    }
    return CLI_EXIT_OK;
}

/* The merged output into M->out. */
static int
merge_write(merge_ctx *m, const sweep_grid *g)
{
    char *csv_path = cli_path_join(m->out, "sweep.csv");
    char *grid_path = cli_path_join(m->out, "grid.txt");
    char *meta_path = cli_path_join(m->out, META_FILE);
    sweep_meta mt = m->meta;
    cli_buf out, meta;
    struct stat st;
    int rc = CLI_EXIT_OK;

    cli_buf_init(&out);
    cli_buf_init(&meta);
    mt.shard_i = 0;
    mt.shard_n = 1;
    meta_text(&meta, &mt);
    if (csv_path == NULL || grid_path == NULL || meta_path == NULL) {
        rc = cli_error(MCMD, "out of memory");
    } else if (stat(csv_path, &st) == 0 && !m->force) {
        rc = cli_error(MCMD, "%s exists (--force replaces it)", csv_path);
    } else if (!out_dir_ok(MCMD, m->out, true)) {
        rc = CLI_EXIT_USAGE;
    } else {
        cli_buf_printf(&out, "%s\n", m->colhead);
        for (uint64_t i = 0; i < mt.npoints; i++)
            cli_buf_printf(&out, "%s\n", m->rows[i]);
        if (out.failed || meta.failed
            || !cli_write_atomic(grid_path, m->grid_txt, strlen(m->grid_txt))
            || !cli_write_atomic(meta_path, meta.p, meta.len)
            || !cli_write_atomic(csv_path, out.p, out.len))
            rc = cli_error(MCMD, "%s: cannot write: %s", csv_path,
                           strerror(errno));
        else
            rc = finish_outputs(MCMD, m->out, g, m->grid_txt, &mt, m->plot,
                                false);
        if (rc == CLI_EXIT_OK && m->json)
            rc = print_json(MCMD, m->out);
    }
    free(csv_path);
    free(grid_path);
    free(meta_path);
    cli_buf_free(&out);
    cli_buf_free(&meta);
    return rc;
}

static void
merge_free(merge_ctx *m)
{
    if (m->rows != NULL)
        for (uint64_t i = 0; i < m->meta.npoints; i++)
            free(m->rows[i]);
    free(m->rows);
    free(m->seen);
    free(m->grid_txt);
    free(m->colhead);
}

int
merge_main(int argc, char **argv)
{
    static const cli_option opts[] = {
        {"help", false, 0},    {"out", true, 1},   {"force", false, 2},
        {"no-plot", false, 3}, {"plot", false, 4}, {"json", false, 5},
        {NULL, false, 0}};
    merge_ctx m;
    cli_parser p;
    const char *v;
    int id, rc = CLI_EXIT_OK;
    sweep_grid g;

    memset(&m, 0, sizeof m);
    m.plot = -1;
    cli_parser_init(&p, MCMD, argc, argv);
    while ((id = cli_parser_next(&p, opts, &v)) != CLI_ARG_END) {
        switch (id) {
        case CLI_ARG_ERROR:
            return CLI_EXIT_USAGE;
        case CLI_ARG_OPERAND:
            if (m.nd == sizeof m.dirs / sizeof m.dirs[0])
                return cli_error(MCMD, "too many shard directories");
            m.dirs[m.nd++] = v;
            break;
        case 0:
            merge_help(stdout);
            return CLI_EXIT_OK;
        case 1:
            if (*v == '\0')
                return cli_error(MCMD, "--out: an empty directory name");
            m.out = v;
            break;
        case 2:
            m.force = true;
            break;
        case 3:
            m.plot = 0;
            break;
        case 5:
            m.json = true;
            break;
        default:
            m.plot = 1;
            break;
        }
    }
    if (m.out == NULL || m.nd == 0)
        return cli_error(MCMD, "expected --out DIR and one or more shard "
                               "directories");
    rc = merge_check_out(&m);
    for (size_t i = 0; i < m.nd && rc == CLI_EXIT_OK; i++)
        rc = merge_shard(&m, m.dirs[i]);
    if (rc == CLI_EXIT_OK)
        for (uint64_t i = 0; i < m.meta.npoints; i++)
            if (m.rows[i] == NULL) {
                rc = cli_error(MCMD,
                               "point %" PRIu64 " is missing (shard %" PRIu64
                               "/%" PRIu64 " not given or not finished)",
                               i, i % m.meta.shard_n, m.meta.shard_n);
                break;
            }
    if (rc == CLI_EXIT_OK) {
        memset(&g, 0, sizeof g);
        if (grid_parse_text(&g, m.grid_txt, strlen(m.grid_txt), NULL, 0) != 0
            || grid_points(&g) != m.meta.npoints)
            rc = cli_error(MCMD, "%s/grid.txt: not a usable grid", m.dirs[0]);
        else
            rc = merge_write(&m, &g);
        grid_free(&g);
    }
    merge_free(&m);
    return rc;
}

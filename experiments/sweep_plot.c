/* sweep_plot.c -- bf16emu sweep's plots: the data files and gnuplot
   scripts of the bias against each axis with two or more values */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/sweep_local.h"

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
            nn = sweep_split_csv(line, names);
            for (size_t c = 0; c < nn; c++) {
                if (strcmp(names[c], k->column) == 0)
                    c_mean = c;
                if (strcmp(names[c], k->se_column) == 0)
                    c_se = c;
            }
            ok = c_mean != 0 && c_se != 0 && nn > N_GX;
            continue;
        }
        n = sweep_split_csv(line, f);
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

/* The x range of a plot: from LO to HI, on a log scale or not, the series
   DODGE apart. */
typedef struct
{
    double lo, hi, dodge;
    bool logx;
} x_range;

/* The x range of the plot of axis XA: padded by 5% on each side (a log
   scale for n, d, repeat, br and bc spread over a factor of 4 or more),
   series moved apart by a little so that their error bars do not hide
   each other. */
static x_range
plot_range(const sweep_grid *g, grid_axis xa, const plot_info *pi)
{
    const grid_values *ax = &g->ax[xa];
    bool named = !grid_axis_numeric(xa);
    double *x = malloc(ax->n * sizeof *x);
    double lo = 0, hi = (double)ax->n - 1, gap = 1;
    size_t nx = 0;
    x_range r = {0, 0, 0, false};

    if (x != NULL && !named) {
        for (size_t i = 0; i < ax->n; i++)
            x[nx++] = ax->num[i];
        qsort(x, nx, sizeof *x, cmp_double);
        lo = x[0];
        hi = x[nx - 1];
        r.logx = (xa == GX_N || xa == GX_D || xa == GX_REPEAT || xa == GX_BR
                  || xa == GX_BC)
                 && lo > 0 && hi >= 4 * lo;
        gap = 0;
        for (size_t i = 1; i < nx; i++) {
            double d =
                r.logx ? log10(x[i]) - log10(x[i - 1]) : x[i] - x[i - 1];
            if (d > 0 && (gap == 0 || d < gap))
                gap = d;
        }
    }
    free(x);
    if (gap == 0)
        gap = r.logx ? 0.3 : hi > lo ? hi - lo : fabs(lo) > 5 ? fabs(lo) : 1;
    /* the series side by side over 15% of the smallest step (40% when
       the axis holds names and no line joins the points), when there
       are error bars */
    r.dodge = pi->nseries > 1 && pi->nno_ci < pi->nrows
                  ? (named ? 0.4 : 0.15) * gap / (double)(pi->nseries - 1)
                  : 0;
    /* 5% of the range on each side, beyond the outermost series */
    if (named) {
        r.lo = -0.5;
        r.hi = hi + 0.5;
    } else if (r.logx) {
        double pad = 0.05 * (log10(hi) - log10(lo))
                     + r.dodge * (double)(pi->nseries - 1) / 2;
        r.lo = lo / pow(10, pad);
        r.hi = hi * pow(10, pad);
    } else {
        double pad = 0.05 * (hi > lo ? hi - lo : gap)
                     + r.dodge * (double)(pi->nseries - 1) / 2;
        r.lo = lo - pad;
        r.hi = hi + pad;
    }
    return r;
}

/* The xtics variable of axis AX: a tic at each value when there are at
   most 10 (or the values are names), else empty. */
static void
xtics_var(cli_buf *v, const grid_values *ax, bool named)
{
    cli_buf t;

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
}

/* The title variable of kind K: the fixed settings and what the error
   bars mean. */
static void
title_var(cli_buf *v, const sweep_grid *g, const plot_kind *k,
          const plot_info *pi)
{
    uint64_t heads = g->set[GS_TRIALS] * g->set[GS_HEADS];
    cli_buf t;

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
    gp_string(v, t.failed ? "" : t.p);
    cli_buf_free(&t);
}

/* The gnuplot variables of the plot of axis XA, kind K: the x range
   (plot_range), tics at the values when there are at most 10, the title
   with the fixed settings and what the error bars mean.  HEAD (unless
   NULL) receives a comment line for the data file that says what its
   columns and x range are. */
static void
plot_vars(const sweep_grid *g, grid_axis xa, const plot_kind *k,
          const plot_info *pi, cli_buf *v, cli_buf *head)
{
    const grid_values *ax = &g->ax[xa];
    bool named = !grid_axis_numeric(xa);
    x_range r = plot_range(g, xa, pi);
    size_t labels = 0;

    for (size_t i = 0; named && i < ax->n; i++)
        labels += strlen(ax->text[i]) + 2;
    if (head != NULL)
        cli_buf_printf(head,
                       "# %s: x (%s), mean, 95%% interval lo, hi (NaN: "
                       "none); x range %.9g .. %.9g%s\n",
                       k->column,
                       named ? "the position of the name" : grid_axis_key(xa),
                       r.lo, r.hi, r.logx ? " (log scale)" : "");
    cli_buf_printf(v,
                   "; nseries=%zu; xmin=%.17g; xmax=%.17g; logx=%d; "
                   "named=%d; rotate=%d; dodge=%.17g; xlabel=",
                   pi->nseries, r.lo, r.hi, r.logx, named, labels > 80,
                   r.dodge);
    gp_string(v, axis_label(xa));
    cli_buf_puts(v, "; ylabel=");
    gp_string(v, k->ylabel);
    cli_buf_puts(v, "; xtics=");
    xtics_var(v, ax, named);
    cli_buf_puts(v, "; title=");
    title_var(v, g, k, pi);
}

/* The plots of the finished CSV into DIR; PLOT -1 (auto: no gnuplot, no
   plot), 1 (gnuplot required). */
int
sweep_write_plots(const char *cmd, const char *dir, const sweep_grid *g,
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

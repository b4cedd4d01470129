/* sweep.c -- bf16emu sweep: the rounding bias of O and delta over a grid
   of value distributions, score structures, shapes, policies, fixes,
   ablations, exp and accumulation models, with stage attribution; CSV and
   JSON per point, resumable, sharded, plotted with gnuplot.  This file:
   the options and main. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/sweep_local.h"

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

/* --grid FILE: its lines into the grid. */
static bool
take_grid(sweep_ctx *x, const char *v)
{
    char err[1024];
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

/* --shard I/N. */
static bool
take_shard(sweep_ctx *x, const char *v)
{
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

/* --KEY VALUES: an axis or a setting of the grid. */
static bool
take_key(sweep_ctx *x, int id, const char *v)
{
    char err[1024];
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

static bool
take_option(void *ctx, int id, const char *v)
{
    sweep_ctx *x = ctx;

    switch (id) {
    case O_GRID:
        return take_grid(x, v);
    case O_OUT:
        if (*v == '\0') {
            cli_error(CMD, "--out: an empty directory name");
            return false;
        }
        x->out_dir = v;
        return true;
    case O_THREADS:
        return cli_parse_threads(CMD, v, &x->threads);
    case O_RESUME:
        x->resume = true;
        return true;
    case O_FORCE:
        x->force = true;
        return true;
    case O_SHARD:
        return take_shard(x, v);
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
        if (id >= O_KEY0 && id < O_KEY0 + N_GX + N_GS)
            return take_key(x, id, v);
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
        sweep_point_spec(x, p, &s);
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
    x.hash = sweep_fnv1a(x.text);
    if (x.print_grid) {
        fputs(x.text, stdout);
        ctx_free(&x);
        return CLI_EXIT_OK;
    }
    if (!load_exps(&x) || !check_points(&x, npoints)) {
        ctx_free(&x);
        return CLI_EXIT_USAGE;
    }
    if (!sweep_out_dir_ok(CMD, x.out_dir, false)) {
        ctx_free(&x);
        return CLI_EXIT_USAGE;
    }
    if (x.dry_run) {
        cli_buf b;
        cli_buf_init(&b);
        printf("%" PRIu64 " points (shard %" PRIu64 "/%" PRIu64 ")\n", npoints,
               x.shard_i, x.shard_n);
        sweep_cost_text(&b, &x, npoints);
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
        rc = sweep_run_mpi(&x);
    else
#endif
        rc = sweep_run(&x);
    ctx_free(&x);
    return rc;
}

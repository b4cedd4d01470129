/* sweep_run.c -- bf16emu sweep's run: the point specifications, the
   cost, interruption, resume and the batches of points */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/sweep_local.h"

uint64_t
sweep_fnv1a(const char *s)
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
const fa_kernel *
sweep_kernel(const char *name)
{
    return fa_kernel_by_name(strcmp(name, "flash") == 0 ? "fa2" : name);
}

void
sweep_point_spec(const sweep_ctx *x, uint64_t index, pt_spec *s)
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
void
sweep_cost_text(cli_buf *b, const sweep_ctx *x, uint64_t npoints)
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
int
sweep_thread_count(const sweep_ctx *x)
{
#ifdef _OPENMP
    return x->threads > 0 ? (int)x->threads : omp_get_max_threads();
#else
    (void)x;
    return 1;
#endif
}

sweep_meta
sweep_ctx_meta(const sweep_ctx *x, uint64_t npoints)
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
size_t
sweep_batch_size(int nt)
{
    return (size_t)(nt > 1 ? 4 * nt : 1);
}

bool
sweep_batch_init(batch_work *w, size_t batch, uint64_t trials)
{
    w->trials = trials;
    w->res = malloc(batch * trials * sizeof *w->res);
    w->why = malloc(batch * trials * sizeof *w->why);
    w->specs = malloc(batch * sizeof *w->specs);
    return w->res != NULL && w->why != NULL && w->specs != NULL;
}

void
sweep_batch_free(batch_work *w)
{
    free(w->res);
    free(w->why);
    free(w->specs);
}

/* The rows of the NB points POINTS (at most the batch size) into ROWS. */
int
sweep_compute_batch(const sweep_ctx *x, batch_work *w, const uint64_t *points,
                    size_t nb, int nt, cli_buf *rows)
{
    uint64_t trials = w->trials;
    long long ntask = (long long)(nb * trials);
    int failed = 0;

    for (size_t i = 0; i < nb; i++)
        sweep_point_spec(x, points[i], &w->specs[i]);
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
        sweep_csv_row(rows, &x->grid, points[i], &acc,
                      x->grid.set[GS_STAGES] != 0);
    }
    return CLI_EXIT_OK;
}

/* The state of a run: the output files, the points of this shard still
   to compute and the progress. */
typedef struct
{
    char *csv_path, *grid_path, *meta_path;
    cli_buf head, meta; /* the CSV's header, sweep-meta.txt */
    sweep_meta mt;
    uint64_t npoints;    /* of the grid */
    unsigned char *done; /* per point, whether sweep.csv has its row */
    uint64_t *todo;      /* the points to compute, NTODO of them */
    size_t ntodo;
    uint64_t ndone, total; /* of this shard's points */
    int fd, nt;
    bool show, tty; /* progress on stderr; stderr a terminal */
    double t0;
} run_state;

/* R for X: the texts, the paths and the arrays; CLI_EXIT_OK, or the exit
   code after a message. */
static int
run_init(const sweep_ctx *x, run_state *r)
{
    const sweep_grid *g = &x->grid;

    r->npoints = grid_points(g);
    r->mt = sweep_ctx_meta(x, r->npoints);
    r->fd = -1;
    r->nt = sweep_thread_count(x);
    r->show = x->progress == 1 || (x->progress < 0 && !x->quiet);
    r->tty = isatty(2);
    r->t0 = cli_now_s();
    r->ntodo = 0;
    r->ndone = 0;
    cli_buf_init(&r->head);
    cli_buf_init(&r->meta);
    sweep_csv_header(&r->head, g->set[GS_STAGES] != 0);
    sweep_meta_text(&r->meta, &r->mt);
    r->csv_path = cli_path_join(x->out_dir, "sweep.csv");
    r->grid_path = cli_path_join(x->out_dir, "grid.txt");
    r->meta_path = cli_path_join(x->out_dir, META_FILE);
    r->done = calloc(r->npoints, 1);
    r->todo = malloc(r->npoints * sizeof *r->todo);
    if (!r->csv_path || !r->grid_path || !r->meta_path || !r->done || !r->todo
        || r->head.failed || r->meta.failed)
        return cli_error(CMD, "out of memory");
    return CLI_EXIT_OK;
}

static void
run_free(run_state *r)
{
    if (r->fd >= 0)
        close(r->fd);
    cli_buf_free(&r->head);
    cli_buf_free(&r->meta);
    free(r->csv_path);
    free(r->grid_path);
    free(r->meta_path);
    free(r->done);
    free(r->todo);
}

/* The output directory made ready: an existing sweep.csv resumed (its
   points marked done) or replaced, grid.txt and sweep-meta.txt written,
   sweep.csv opened (its header written unless resumed).  -1 when the run
   goes on, else the exit code. */
static int
open_output(sweep_ctx *x, run_state *r)
{
    struct stat st;

    if (!sweep_out_dir_ok(CMD, x->out_dir, false))
        return CLI_EXIT_USAGE;
    if (stat(r->csv_path, &st) == 0) {
        if (x->resume) {
            int rc = resume_scan(x->out_dir, r->csv_path, r->meta.p, r->head.p,
                                 r->done, r->npoints, &r->ndone);
            if (rc >= 0)
                return rc;
        } else if (!x->force) {
            return cli_error(CMD,
                             "%s exists (--resume continues it, --force "
                             "starts again)",
                             r->csv_path);
        }
    } else {
        x->resume = false;
    }
    if (!sweep_out_dir_ok(CMD, x->out_dir, true))
        return CLI_EXIT_USAGE;
    if (!cli_write_atomic(r->grid_path, x->text, strlen(x->text))
        || !cli_write_atomic(r->meta_path, r->meta.p, r->meta.len))
        return cli_error(CMD, "%s: cannot write: %s", x->out_dir,
                         strerror(errno));
    r->fd = open(
        r->csv_path,
        x->resume ? O_WRONLY | O_APPEND : O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (r->fd < 0)
        return cli_error(CMD, "%s: cannot open: %s", r->csv_path,
                         strerror(errno));
    if (!x->resume && !sweep_append_sync(r->fd, r->head.p, r->head.len))
        return cli_error(CMD, "%s: cannot write: %s", r->csv_path,
                         strerror(errno));
    return -1;
}

/* This shard's points not yet done into r->todo, and the counts. */
static void
pick_points(const sweep_ctx *x, run_state *r)
{
    uint64_t mine = 0;

    for (uint64_t p = x->shard_i; p < r->npoints; p += x->shard_n) {
        mine++;
        if (!r->done[p])
            r->todo[r->ntodo++] = p;
    }
    r->total = mine;
    r->ndone = mine - r->ntodo;
}

/* The lines before the run: the points and the cost, a resume, the
   progress bar. */
static void
announce(const sweep_ctx *x, const run_state *r)
{
    const sweep_grid *g = &x->grid;

    if (r->show) {
        cli_buf c;
        cli_buf_init(&c);
        sweep_cost_text(&c, x, r->npoints);
        fprintf(stderr,
                "bf16emu sweep: %" PRIu64 " points (shard %" PRIu64 "/%" PRIu64
                "), trials x heads %" PRIu64 " x %" PRIu64
                " per point, threads %d; %s\n",
                r->total, x->shard_i, x->shard_n, g->set[GS_TRIALS],
                g->set[GS_HEADS], r->nt, c.failed ? "" : c.p);
        cli_buf_free(&c);
    }
    if (!x->quiet && x->resume)
        fprintf(stderr,
                "bf16emu sweep: resuming, %" PRIu64 " of %" PRIu64
                " points already done\n",
                r->ndone, r->total);
    if (r->show && r->tty)
        cli_progress(CMD, "points", r->tty, r->ndone, r->total, r->t0, false);
}

/* The points to do, batch by batch, their rows appended to sweep.csv,
   until done, an error or an interruption. */
static int
run_batches(const sweep_ctx *x, run_state *r, batch_work *bw)
{
    size_t batch = sweep_batch_size(r->nt);
    int rc = CLI_EXIT_OK;

    for (size_t b0 = 0; b0 < r->ntodo && rc == CLI_EXIT_OK && !interrupted;
         b0 += batch) {
        size_t nb = r->ntodo - b0 < batch ? r->ntodo - b0 : batch;
        cli_buf rows;
        cli_buf_init(&rows);
        rc = sweep_compute_batch(x, bw, r->todo + b0, nb, r->nt, &rows);
        if (rc == CLI_EXIT_OK
            && (rows.failed || !sweep_append_sync(r->fd, rows.p, rows.len)))
            rc = cli_error(CMD, "%s: cannot write: %s", r->csv_path,
                           strerror(errno));
        cli_buf_free(&rows);
        if (rc != CLI_EXIT_OK)
            break;
        r->ndone += nb;
        if (r->show)
            cli_progress(CMD, "points", r->tty, r->ndone, r->total, r->t0,
                         false);
    }
    return rc;
}

/* After the batches (RC their outcome): sweep.csv closed, then the
   message of an interruption, or sweep.json, the plots and the last
   line. */
static int
finish(const sweep_ctx *x, run_state *r, int rc)
{
    if (r->show && r->tty)
        cli_progress(CMD, "points", r->tty, r->ndone, r->total, r->t0, true);
    if (close(r->fd) != 0 && rc == CLI_EXIT_OK)
        rc = cli_error(CMD, "%s: cannot write: %s", r->csv_path,
                       strerror(errno));
    r->fd = -1;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (interrupted) {
        int sig = (int)interrupted;
        fprintf(stderr,
                "bf16emu sweep: %s: stopped after the batch in hand, %" PRIu64
                " of %" PRIu64
                " points done; the rows are kept in %s; the same command "
                "with --resume (instead of --force) continues\n",
                sig == SIGTERM ? "SIGTERM" : "SIGINT (Ctrl-C)", r->ndone,
                r->total, r->csv_path);
        return 128 + sig;
    }
    rc = sweep_finish_outputs(CMD, x->out_dir, &x->grid, x->text, &r->mt,
                              x->plot, x->quiet);
    if (rc == CLI_EXIT_OK && x->json)
        rc = sweep_print_json(CMD, x->out_dir);
    if (rc == CLI_EXIT_OK && !x->quiet)
        fprintf(stderr, "bf16emu sweep: %" PRIu64 " points in %.1f s -> %s\n",
                r->total, cli_now_s() - r->t0, x->out_dir);
    return rc;
}

int
sweep_run(sweep_ctx *x)
{
    run_state r;
    struct sigaction old_sig[2];
    batch_work bw;
    int rc = run_init(x, &r);

    if (rc == CLI_EXIT_OK)
        rc = open_output(x, &r);
    if (rc >= 0) {
        run_free(&r);
        return rc;
    }
    pick_points(x, &r);
    catch_stop(old_sig);
    announce(x, &r);
    if (!sweep_batch_init(&bw, sweep_batch_size(r.nt),
                          x->grid.set[GS_TRIALS])) {
        rc = cli_error(CMD, "out of memory");
        catch_restore(old_sig);
        run_free(&r);
        return rc;
    }
    rc = run_batches(x, &r, &bw);
    sweep_batch_free(&bw);
    catch_restore(old_sig);
    rc = finish(x, &r, rc);
    run_free(&r);
    return rc;
}

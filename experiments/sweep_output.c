/* sweep_output.c -- bf16emu sweep's files: the CSV columns and rows,
   sweep-meta.txt, sweep.json (from the finished CSV) and the outputs
   written at the end */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/sweep_local.h"

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

void
sweep_csv_header(cli_buf *b, bool stages)
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

/* The columns n, mean, se, t, ci_lo and ci_hi of S. */
static void
put_summary(cli_buf *b, const bias_summary *s)
{
    cli_buf_printf(b, ",%" PRIu64, s->n);
    put_num(b, s->mean);
    put_num(b, s->se);
    put_num(b, s->t);
    put_num(b, s->ci_lo);
    put_num(b, s->ci_hi);
}

void
sweep_csv_row(cli_buf *b, const sweep_grid *g, uint64_t index,
              const pt_stats *st, bool stages)
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
    put_summary(b, &so);
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
    put_summary(b, &sd);
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
 * Files.
 *--------------------------------------------------------------------------*/

bool
sweep_append_sync(int fd, const char *buf, size_t n)
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
bool
sweep_out_dir_ok(const char *cmd, const char *dir, bool create)
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

void
sweep_meta_text(cli_buf *b, const sweep_meta *m)
{
    cli_buf_printf(b,
                   "tool = bf16emu sweep\nversion = %s\ngrid = %016" PRIx64
                   "\npoints = %" PRIu64 "\nshard = %" PRIu64 "/%" PRIu64 "\n",
                   PACKAGE_VERSION, m->hash, m->npoints, m->shard_i,
                   m->shard_n);
}

/* Parses TEXT, a sweep-meta.txt, into M.  Returns NULL, or what is
   wrong. */
const char *
sweep_meta_parse(const char *text, sweep_meta *m)
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

/* Splits LINE (modified) at commas into at most MAX_COLS fields. */
size_t
sweep_split_csv(char *line, char **f)
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
            nn = sweep_split_csv(line, names);
            continue;
        }
        {
            size_t n = sweep_split_csv(line, f);
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

/* sweep.json and the plots, from the finished CSV in DIR. */
int
sweep_finish_outputs(const char *cmd, const char *dir, const sweep_grid *g,
                     const char *grid_txt, const sweep_meta *m, int plot,
                     bool quiet)
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
        rc = sweep_write_plots(cmd, dir, g, csv, plot, quiet);
done:
    free(csv);
    cli_buf_free(&jb);
    free(csv_path);
    free(json_path);
    return rc;
}

/* Copies DIR/sweep.json to stdout. */
int
sweep_print_json(const char *cmd, const char *dir)
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

int
sweep_write_outputs(const char *cmd, const char *dir, const sweep_grid *g,
                    const char *grid_txt, const sweep_meta *m,
                    const cli_buf *csv, int plot, bool quiet, bool json)
{
    char *csv_path = cli_path_join(dir, "sweep.csv");
    char *grid_path = cli_path_join(dir, "grid.txt");
    char *meta_path = cli_path_join(dir, META_FILE);
    cli_buf meta;
    int rc = CLI_EXIT_OK;

    cli_buf_init(&meta);
    sweep_meta_text(&meta, m);
    if (csv_path == NULL || grid_path == NULL || meta_path == NULL
        || meta.failed)
        rc = cli_error(cmd, "out of memory");
    else if (csv->failed
             || !cli_write_atomic(grid_path, grid_txt, strlen(grid_txt))
             || !cli_write_atomic(meta_path, meta.p, meta.len)
             || !cli_write_atomic(csv_path, csv->p, csv->len))
        rc = cli_error(cmd, "%s: cannot write: %s", csv_path,
                       strerror(errno));
    if (rc == CLI_EXIT_OK)
        rc = sweep_finish_outputs(cmd, dir, g, grid_txt, m, plot, quiet);
    if (rc == CLI_EXIT_OK && json)
        rc = sweep_print_json(cmd, dir);
    free(csv_path);
    free(grid_path);
    free(meta_path);
    cli_buf_free(&meta);
    return rc;
}

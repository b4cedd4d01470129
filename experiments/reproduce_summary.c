/* reproduce_summary.c -- bf16emu reproduce's results directory: the data
   files and plots, summary.md, and an earlier summary.md read back */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/reproduce_local.h"

/* Writes TEXT to OUT/NAME; false on failure (message printed). */
bool
repro_write_file(const repro *r, const char *name, const char *text,
                 size_t len)
{
    char *p = cli_path_join(r->out, name);
    bool ok = p != NULL && cli_write_atomic(p, text != NULL ? text : "", len);

    if (!ok)
        cli_error(CMD, "%s: cannot write: %s", p ? p : name, strerror(errno));
    free(p);
    return ok;
}

/* Runs the gnuplot script SCRIPT on OUT/DATA into OUT/BASE.{png,svg}. */
void
repro_plot(repro *r, const char *script, const char *data, const char *base,
           const char *extra)
{
    char *dp = cli_path_join(r->out, data), *bp = cli_path_join(r->out, base);
    char *log = cli_path_join(r->out, "gnuplot.log");
    char q1[4200], q2[4200], vars[9000], why[512];
    int rc;

    if (r->no_plot || dp == NULL || bp == NULL || log == NULL
        || !plot_quote(q1, sizeof q1, dp) || !plot_quote(q2, sizeof q2, bp)) {
        free(dp);
        free(bp);
        free(log);
        return;
    }
    snprintf(vars, sizeof vars, "datafile=%s; out=%s%s%s", q1, q2,
             extra ? "; " : "", extra ? extra : "");
    rc = plot_run(script, vars, log, why, sizeof why);
    if (rc == 1)
        r->plot_missing = 1;
    else if (rc != 0 && r->plot_error[0] == '\0')
        snprintf(r->plot_error, sizeof r->plot_error, "%s", why);
    else if (rc == 0)
        unlink(log);
    free(dp);
    free(bp);
    free(log);
}

/*----------------------------------------------------------------------------
 * An earlier summary.md, read back to merge a run with --only into it.
 *--------------------------------------------------------------------------*/

/* Splits the table row LINE ("| a | b \| c |", no newline) in place into
   its cells, trimmed, "\|" read as '|'; the number of cells (the first
   MAX in CELL), or -1 when LINE is not a table row. */
static int
split_row(char *line, char **cell, int max)
{
    size_t len = strlen(line);
    char *rd, *wr;
    int n = 0;

    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
        line[--len] = '\0';
    if (len < 2 || line[0] != '|' || line[len - 1] != '|'
        || line[len - 2] == '\\')
        return -1;
    rd = line + 1;
    while (*rd != '\0') {
        char *start, *end;
        while (*rd == ' ')
            rd++;
        start = wr = rd;
        while (*rd != '\0' && *rd != '|') {
            if (rd[0] == '\\' && rd[1] == '|')
                rd++;
            *wr++ = *rd++;
        }
        if (*rd == '|')
            rd++;
        for (end = wr; end > start && end[-1] == ' '; end--)
            ;
        *end = '\0';
        if (n < max)
            cell[n] = start;
        n++;
    }
    return n;
}

/* A run number (1 .. 10^6) in TEXT, else 0. */
static int
run_number(const char *text)
{
    char *end;
    long v;

    if (*text < '0' || *text > '9')
        return 0;
    v = strtol(text, &end, 10);
    return *end == '\0' && v >= 1 && v <= 1000000 ? (int)v : 0;
}

static run_rec *
prior_run(prior *pv, int id)
{
    for (int i = 0; i < pv->nruns; i++)
        if (pv->runs[i].id == id)
            return &pv->runs[i];
    return NULL;
}

void
repro_prior_free(prior *pv)
{
    for (int s = 0; s < N_STEP; s++)
        free(pv->section[s]);
}

/* The section heading at LINE ("## ..."): its step, or -1. */
static int
section_step(const char *line)
{
    int cur = -1;

    for (int s = 0; s < N_STEP; s++)
        if (step_defs[s].heading != NULL
            && strncmp(line, step_defs[s].heading,
                       strlen(step_defs[s].heading))
                   == 0)
            cur = s;
    return cur;
}

/* A line outside the sections, ROW (no newline): a target's row or a
   run's into PV, or the earlier format's line under the title into
   LEGACY (*HAVE_LEGACY then true). */
static void
take_row(prior *pv, char *row, run_rec *legacy, bool *have_legacy)
{
    char *cell[8];
    int n = split_row(row, cell, 8);

    if (n >= 5) {
        int i, id = 1;
        for (i = 0; i < N_T; i++)
            if (strcmp(cell[0], repro_target_ids[i]) == 0)
                break;
        if (n >= 6)
            id = run_number(cell[5]);
        if (i < N_T && id > 0) {
            pv->row_run[i] = id;
            pv->pass[i] = strcmp(cell[4], "PASS") == 0;
            snprintf(pv->obtained[i], sizeof pv->obtained[i], "%s", cell[3]);
        } else if (n == 6 && run_number(cell[0]) > 0 && pv->nruns < MAX_RUNS) {
            run_rec *x = &pv->runs[pv->nruns++];
            x->id = run_number(cell[0]);
            snprintf(x->date, sizeof x->date, "%s", cell[1]);
            snprintf(x->version, sizeof x->version, "%s", cell[2]);
            snprintf(x->samples, sizeof x->samples, "%s", cell[3]);
            snprintf(x->computed, sizeof x->computed, "%s", cell[4]);
            x->seconds = strtod(cell[5], NULL);
            x->sweep = strstr(x->computed, "sweep") != NULL;
        }
    } else if (n < 0 && strncmp(row, "bf16emu ", 8) == 0
               && sscanf(row, "bf16emu %31[^,], %31[^,], %15s run, %lf s",
                         legacy->version, legacy->date, legacy->samples,
                         &legacy->seconds)
                      == 4) {
        *have_legacy = true;
    }
}

/* The sections read (SEC) into PV, each with one blank line after it;
   SEC freed.  False when out of memory. */
static bool
keep_sections(prior *pv, cli_buf sec[N_STEP])
{
    bool ok = true;

    for (int s = 0; s < N_STEP; s++) {
        /* one blank line after each section */
        while (sec[s].len > 0 && sec[s].p[sec[s].len - 1] == '\n')
            sec[s].len--;
        if (sec[s].len > 0 && !sec[s].failed) {
            cli_buf_puts(&sec[s], "\n\n");
            pv->section[s] = sec[s].failed ? NULL : strdup(sec[s].p);
            ok = ok && pv->section[s] != NULL;
        }
        cli_buf_free(&sec[s]);
    }
    return ok;
}

/* The earlier format: one run, described by the line under the title
   (LEGACY, when HAVE_LEGACY), computing the targets with rows. */
static void
legacy_run(prior *pv, run_rec *legacy, bool have_legacy)
{
    unsigned m = 0;
    char ids[96];

    if (!have_legacy) {
        snprintf(legacy->date, sizeof legacy->date, "?");
        snprintf(legacy->version, sizeof legacy->version, "?");
        snprintf(legacy->samples, sizeof legacy->samples, "?");
    }
    legacy->id = 1;
    for (int i = 0; i < N_T; i++)
        if (pv->row_run[i])
            m |= TBIT(i);
    legacy->sweep = pv->section[S_SWEEP] != NULL;
    snprintf(legacy->computed, sizeof legacy->computed, "%s%s",
             repro_ids_str(m, ids, sizeof ids),
             legacy->sweep ? ", sweep" : "");
    pv->runs[pv->nruns++] = *legacy;
}

/* After the lines: the run of the sweep section, a run of unknown date
   for each row whose run is not in the table, the largest run number. */
static void
complete_runs(prior *pv)
{
    if (pv->section[S_SWEEP] != NULL) {
        for (int i = pv->nruns - 1; i >= 0; i--)
            if (pv->runs[i].sweep)
                pv->sweep_run = pv->runs[i].id;
        if (pv->sweep_run == 0)
            pv->sweep_run = pv->runs[0].id;
    }
    /* rows whose run is not in the table: a run of unknown date */
    for (int i = 0; i < N_T; i++)
        if (pv->row_run[i] && prior_run(pv, pv->row_run[i]) == NULL
            && pv->nruns < MAX_RUNS) {
            run_rec *x = &pv->runs[pv->nruns++];
            memset(x, 0, sizeof *x);
            x->id = pv->row_run[i];
            snprintf(x->date, sizeof x->date, "?");
            snprintf(x->version, sizeof x->version, "?");
            snprintf(x->samples, sizeof x->samples, "?");
            snprintf(x->computed, sizeof x->computed, "?");
        }
    for (int i = 0; i < pv->nruns; i++)
        if (pv->runs[i].id > pv->max_id)
            pv->max_id = pv->runs[i].id;
    for (int i = 0; i < N_T; i++)
        if (pv->row_run[i] > pv->max_id)
            pv->max_id = pv->row_run[i];
}

/* Reads TEXT, a summary.md written by reproduce (this version's or the
   earlier one without the run column), into PV: the target rows, the
   runs, the sections.  Lines it does not know are left out; the
   gnuplot notes belong to the run that wrote them and are dropped.
   False when out of memory. */
bool
repro_prior_parse(prior *pv, const char *text)
{
    cli_buf sec[N_STEP];
    run_rec legacy;
    bool have_legacy = false, ok = true;
    int cur = -1;

    memset(pv, 0, sizeof *pv);
    memset(&legacy, 0, sizeof legacy);
    for (int s = 0; s < N_STEP; s++)
        cli_buf_init(&sec[s]);
    for (const char *line = text, *next; *line != '\0'; line = next) {
        const char *nl = strchr(line, '\n');
        size_t len;
        char *row;

        next = nl != NULL ? nl + 1 : line + strlen(line);
        len = (size_t)(next - line);
        if (strncmp(line, "## ", 3) == 0) {
            cur = section_step(line);
            if (cur >= 0)
                sec[cur].len = 0;
        }
        if (cur >= 0) {
            if (strncmp(line, "gnuplot is not installed", 24) != 0
                && strncmp(line, "A plot failed:", 14) != 0)
                cli_buf_put_mem(&sec[cur], line, len);
            continue;
        }
        row = malloc(len + 1);
        if (row == NULL) {
            ok = false;
            break;
        }
        memcpy(row, line, len);
        row[len - (nl != NULL)] = '\0';
        take_row(pv, row, &legacy, &have_legacy);
        free(row);
    }
    ok = keep_sections(pv, sec) && ok;
    if (pv->nruns == 0)
        legacy_run(pv, &legacy, have_legacy);
    complete_runs(pv);
    return ok;
}

/*----------------------------------------------------------------------------
 * summary.md
 *--------------------------------------------------------------------------*/

/* S into B with '|' written as "\|", so that it stays one table cell. */
static void
put_cell(cli_buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|')
            cli_buf_putc(b, '\\');
        cli_buf_putc(b, *s);
    }
}

/* The rows of the summary: this run's targets, and from the earlier
   summary (when merging) the others; *KEPT the targets kept. */
void
repro_summary_rows(const repro *r, int *row_run, bool *pass,
                   const char **obtained, unsigned *kept)
{
    *kept = 0;
    for (int i = 0; i < N_T; i++) {
        row_run[i] = 0;
        if (r->t[i].run) {
            row_run[i] = r->run_id;
            pass[i] = r->t[i].pass;
            obtained[i] = r->t[i].obtained;
        } else if (r->prev != NULL && r->prev->row_run[i] != 0) {
            row_run[i] = r->prev->row_run[i];
            pass[i] = r->prev->pass[i];
            obtained[i] = r->prev->obtained[i];
            *kept |= TBIT(i);
        }
    }
}

/* The run of the sweep section: this run's, the earlier one's, or 0. */
int
repro_sweep_run(const repro *r)
{
    if (!r->only_set)
        return r->run_id;
    return r->prev != NULL ? r->prev->sweep_run : 0;
}

void
repro_summary(const repro *r, cli_buf *b, double total_s)
{
    int npass = 0, nrow = 0, row_run[N_T], ids[N_T + 2], nids = 0;
    bool pass[N_T], merged;
    const char *obtained[N_T];
    unsigned kept;
    time_t now = time(NULL);
    struct tm tmv;
    char date[32], mine[96];

    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tmv);
    repro_summary_rows(r, row_run, pass, obtained, &kept);
    merged = kept != 0 || (r->only_set && repro_sweep_run(r) != 0);
    for (int i = 0; i < N_T; i++)
        if (row_run[i]) {
            nrow++;
            npass += pass[i];
        }
    repro_ids_str(repro_run_mask(r), mine, sizeof mine);
    cli_buf_printf(b,
                   "# bf16emu reproduce: Qiu & Yao, arXiv:2510.04212\n\n"
                   "bf16emu %s, %s, %s run%s%s, %.0f s%s.  **%d of %d "
                   "targets PASS.**\n\n",
                   PACKAGE_VERSION, date, r->quick ? "quick" : "full",
                   merged ? " of " : "", merged ? mine : "", total_s,
                   merged ? ", merged into the earlier summary (the run "
                            "column says which run each row comes from)"
                          : "",
                   npass, nrow);
    cli_buf_puts(b, "Every number below was computed by bf16emu reproduce, "
                    "from generated inputs with fixed seeds; the expected "
                    "values are the paper's (or, where marked in "
                    "doc/reproduce.md, what its analysis implies).  Rerun "
                    "some targets with `bf16emu reproduce --only ID,...`: "
                    "their rows, files and sections are replaced and the "
                    "others kept.\n\n");
    cli_buf_puts(b, "| target | what | expected | obtained | result | run |\n"
                    "|---|---|---|---|---|---|\n");
    for (int i = 0; i < N_T; i++) {
        if (!row_run[i])
            continue;
        cli_buf_printf(b, "| %s | %s | %s | ", repro_target_ids[i],
                       repro_specs[i].what, repro_specs[i].expected);
        put_cell(b, obtained[i]);
        cli_buf_printf(b, " | %s | %d |\n", pass[i] ? "PASS" : "**FAIL**",
                       row_run[i]);
    }
    /* the runs still present, in order */
    for (int i = 0; i < N_T; i++)
        if (row_run[i])
            ids[nids++] = row_run[i];
    if (repro_sweep_run(r) != 0)
        ids[nids++] = repro_sweep_run(r);
    cli_buf_puts(b, "\n| run | date | bf16emu | samples | computed | time |\n"
                    "|---|---|---|---|---|---|\n");
    for (int id = 1, last = 0; nids > 0; id = last + 1) {
        int next = 0;
        const run_rec *x;
        for (int k = 0; k < nids; k++)
            if (ids[k] >= id && (next == 0 || ids[k] < next))
                next = ids[k];
        if (next == 0)
            break;
        last = next;
        if (next == r->run_id)
            cli_buf_printf(b, "| %d | %s | %s | %s | %s%s | %.0f s |\n", next,
                           date, PACKAGE_VERSION, r->quick ? "quick" : "full",
                           mine, r->only_set ? "" : ", sweep", total_s);
        else if (r->prev != NULL && (x = prior_run(r->prev, next)) != NULL) {
            cli_buf_printf(b, "| %d | ", next);
            put_cell(b, x->date);
            cli_buf_puts(b, " | ");
            put_cell(b, x->version);
            cli_buf_puts(b, " | ");
            put_cell(b, x->samples);
            cli_buf_puts(b, " | ");
            put_cell(b, x->computed);
            cli_buf_printf(b, " | %.0f s |\n", x->seconds);
        }
    }
    cli_buf_puts(b, "\n");
    for (int s = 0; s < N_STEP; s++) {
        if (r->section[s].len > 0)
            cli_buf_put_mem(b, r->section[s].p, r->section[s].len);
        else if (r->prev != NULL && r->prev->section[s] != NULL)
            cli_buf_puts(b, r->prev->section[s]);
    }
    if (r->plot_missing || r->plot_error[0])
        cli_buf_printf(b, "## Notes\n\n");
    if (r->plot_missing)
        cli_buf_printf(b,
                       "gnuplot is not installed: run %d drew no plots "
                       "(the .dat files are there).\n",
                       r->run_id);
    if (r->plot_error[0])
        cli_buf_printf(b, "A plot of run %d failed: %s\n", r->run_id,
                       r->plot_error);
}

/* reproduce.c -- bf16emu reproduce: the reproduction targets T1-T13 of
   Qiu and Yao (arXiv:2510.04212), each computed from scratch and checked
   against what the paper (or its analysis) states, into a results
   directory: summary.md, CSVs, data files and plots.  This file: the
   targets, the steps, the options and main. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/reproduce_local.h"

const repro_spec repro_specs[N_T] = {
    {"Eq. 4 trace: FP32 accumulator 0xC01A0E2E + BF16 0xC013, then RN to "
     "BF16",
     "exact sum 0xC0968717 (-4.703990459442139), guard 1, sticky 1, BF16 "
     "0xC097 (-4.71875), error -0.014759540557861328"},
    {"tie counterfactual: -2.40625 + -2.296875",
     "exact tie 0xC0968000; RNE gives 0xC096 (-4.6875), error +0.015625"},
    {"round-toward-zero case: -0.85546875 + -0.0859375 + -2^-11",
     "-0.94189453125 rounds to 0xBF71 (-0.94140625), guard 0, error "
     "+0.00048828125"},
    {"BF16 x BF16 products are exact in FP32",
     "every product exact; P~ = 1 gives low 16 bits 0; P~ < 1 usually not "
     "(97% in the paper's random test)"},
    {"Eq. 1: dQ(delta1) - dQ(delta2) = alpha diag(delta2 - delta1) PK",
     "equal in exact arithmetic"},
    {"the fix (beta = 2) leaves O and LSE unchanged in exact arithmetic",
     "O, LSE equal to the unfixed ones; max P~ < 1"},
    {"the fix applied to a single large maximum ('always')",
     "l underflows, O = NaN; exp(-x) subnormal from x ~ 87.3, zero from "
     "92.9 (BF16) / 103.97 (FP32)"},
    {"the repo's detector: count(S >= bf16(max - 1e-3)) > 1 per 512-key "
     "block",
     "max > 0: m = 2 max; max < 0: m = 0; single max or maxima in different "
     "blocks: m = max"},
    {"ablations (paper 3.2) and the bias of delta",
     "fp32-pv, fp32-o, delta-dpp, delta-fp32-o remove the delta bias (here: "
     "at least 4x smaller); untiled does not"},
    {"Fig. 5(a) analogue: cumulative sum over steps of sum_T (delta_lp - "
     "delta_hp)",
     "monotonically positive without the fix; no consistent sign with it"},
    {"Fig. 6 analogue: Eq. 5 prefix error along the keys",
     "negative jumps exactly where P~ = 1"},
    {"Monte-Carlo bias of O with k repeated maxima (N = 512, V ~ N(-1.5, "
     "0.4))",
     "k = 2, 3, 4: -1.7e-3, -1.1e-3, -7.7e-4 (within 2x); k = 1: ~0; about "
     "10x smaller with the fix (here: at least 5x)"},
    {"precondition: P~ = 1 twice, same-sign V, tiny residuals",
     "removing any one of the three removes the bias (here: at least 5x "
     "smaller)"},
};

const char *const repro_target_ids[N_T] = {"T1",  "T2",  "T3", "T4", "T5",
                                           "T6",  "T7",  "T8", "T9", "T10",
                                           "T11", "T12", "T13"};

void
repro_result(target *t, bool pass, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->obtained, sizeof t->obtained, fmt, ap);
    va_end(ap);
    t->pass = pass;
}

int
repro_nthreads(const repro *r)
{
#ifdef _OPENMP
    return r->threads > 0 ? (int)r->threads : omp_get_max_threads();
#else
    (void)r;
    return 1;
#endif
}
/*----------------------------------------------------------------------------
 * Target lists: "T1-T3, T8, T12".
 *--------------------------------------------------------------------------*/
static const char target_list[] =
    "T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13";

/* The targets of MASK (TBIT bits), consecutive ones as a range, into BUF
   of N bytes; returns BUF. */
const char *
repro_ids_str(unsigned mask, char *buf, size_t n)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < N_T && o < n; i++) {
        int j = i;
        if (!(mask & TBIT(i)))
            continue;
        while (j + 1 < N_T && (mask & TBIT(j + 1)))
            j++;
        if (j == i)
            o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? ", " : "",
                                  repro_target_ids[i]);
        else
            o += (size_t)snprintf(buf + o, n - o, "%s%s%s%s", o ? ", " : "",
                                  repro_target_ids[i], j == i + 1 ? ", " : "-",
                                  repro_target_ids[j]);
        i = j;
    }
    return buf;
}

unsigned
repro_run_mask(const repro *r)
{
    unsigned m = 0;

    for (int i = 0; i < N_T; i++)
        if (r->t[i].run)
            m |= TBIT(i);
    return m;
}

bool
repro_step_runs(const repro *r, int s)
{
    return s == S_SWEEP ? !r->only_set
                        : (repro_run_mask(r) & step_defs[s].targets) != 0;
}

double
repro_step_weight(const repro *r, int s)
{
    return r->quick ? step_defs[s].w_quick : step_defs[s].w_full;
}

/*----------------------------------------------------------------------------
 * The steps.
 *--------------------------------------------------------------------------*/

/* The T9 section: the table of t9-ablations.csv. */
static void
t9_section(cli_buf *sec, const cli_buf *csv)
{
    char *save = NULL, *copy = strdup(csv->p ? csv->p : "");
    int line = 0;

    cli_buf_puts(sec, "## T9: ablations\n\n");
    cli_buf_puts(sec, "| ablation | n | mean delta_lp - delta_hp "
                      "| se | t | 95% CI | / none |\n"
                      "|---|---|---|---|---|---|---|\n");
    for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save)) {
        char *f[8], *s2 = NULL;
        int n = 0;
        if (line++ == 0)
            continue;
        for (char *x = strtok_r(l, ",", &s2); x && n < 8;
             x = strtok_r(NULL, ",", &s2))
            f[n++] = x;
        if (n == 8)
            cli_buf_printf(sec,
                           "| %s | %s | %s | %s | %s | [%s, %s] | "
                           "%s |\n",
                           f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
    }
    free(copy);
    cli_buf_puts(sec, "\nThe ablations that keep O (or delta) out of BF16 "
                      "remove the bias of delta; computing without tiles "
                      "does not (t9-ablations.csv).\n\n");
}

/* Runs step S: its targets, files, plots and section.  False when a file
   could not be written (message printed). */
static bool
run_step(repro *r, int s)
{
    cli_buf a, b, *sec = &r->section[s];
    bool ok = true;

    cli_buf_init(&a);
    cli_buf_init(&b);
    switch (s) {
    case S_TRACE:
        repro_trace_targets(r, &a);
        ok = repro_write_file(r, "eq4-trace.dat", a.p, a.len);
        repro_plot(r, "eq4-trace.gp", "eq4-trace.dat", "eq4-trace", NULL);
        cli_buf_puts(sec,
                     "## T1-T3: the Eq. 4 trace\n\n"
                     "![signed errors](eq4-trace.png)\n\n"
                     "The same two BF16 operands, with and without the FP32 "
                     "residual: the residual sets the sticky bit, so the "
                     "exact tie (T2, rounded to even, +1/2 ulp) becomes a "
                     "round away from zero (T1, about -1/2 ulp).  T3 is the "
                     "opposite case, guard bit 0: a small positive error.  "
                     "Command: `bf16emu trace --acc f32 --out bf16 "
                     "f32:0xC01A0E2E bf16:0xC013`.\n\n");
        break;
    case S_T4:
        repro_t4_products(r);
        break;
    case S_T5T6:
        repro_t5_t6(r);
        break;
    case S_T7T8:
        repro_t7_t8(r);
        break;
    case S_T9:
        repro_t9_ablations(r, &a);
        ok = repro_write_file(r, "t9-ablations.csv", a.p, a.len);
        t9_section(sec, &a);
        break;
    case S_T10:
        repro_t10_steps(r, &a);
        ok = repro_write_file(r, "fig5a-cumulative.dat", a.p, a.len);
        repro_plot(r, "fig5a.gp", "fig5a-cumulative.dat", "fig5a-cumulative",
                   NULL);
        cli_buf_puts(sec, "## T10: the Fig. 5(a) analogue\n\n"
                          "![cumulative delta error](fig5a-cumulative.png)"
                          "\n\n");
        break;
    case S_T11:
        repro_t11_prefix(r, &a);
        ok = repro_write_file(r, "fig6-prefix.dat", a.p, a.len);
        repro_plot(r, "fig6.gp", "fig6-prefix.dat", "fig6-prefix", NULL);
        cli_buf_puts(sec, "## T11: the Fig. 6 analogue\n\n"
                          "![prefix error](fig6-prefix.png)\n\n");
        break;
    case S_T12T13:
        repro_t12_t13(r, &a, &b);
        if (!r->t[T12].run) /* T13 alone: T12's files stay */
            break;
        ok = repro_write_file(r, "t12-bias.csv", a.p, a.len)
             && repro_write_file(r, "t12-bias.dat", b.p, b.len);
        repro_plot(r, "t12.gp", "t12-bias.dat", "t12-bias", NULL);
        cli_buf_puts(sec,
                     "## T12, T13: Monte-Carlo bias of O\n\n"
                     "![bias against k](t12-bias.png)\n\n"
                     "Mean O_lp - O_exact (absolute) over every element, "
                     "policy paper-eq4 (the paper's Eq. 4 abstraction), "
                     "N = 512 keys, k at the maximum 3, the others 12 to 30 "
                     "below; t12-bias.csv has the intervals.\n\n");
        break;
    default:
        ok = repro_run_sweep_part(r) == 0;
        cli_buf_puts(sec,
                     "## The bias against the mean of V\n\n"
                     "![bias against the mean of V](sweep/bias-vmean.png)\n\n"
                     "`bf16emu sweep` with 2 repeated maxima, paper-eq4, "
                     "without and with the fix (sweep/sweep.csv also holds "
                     "the stage attribution: the share of the bias that "
                     "goes when each rounding is left out).\n\n");
        break;
    }
    ok = ok && !a.failed && !b.failed && !sec->failed;
    cli_buf_free(&a);
    cli_buf_free(&b);
    return ok;
}

/*----------------------------------------------------------------------------
 * Options and the run.
 *--------------------------------------------------------------------------*/

/* The --only list V into R->only; false after an error message. */
static bool
take_only(repro *r, const char *v)
{
    const char *p = v;

    if (*v == '\0') {
        cli_error(CMD,
                  "--only: an empty list (expected target names "
                  "separated by commas, from %s)",
                  target_list);
        return false;
    }
    r->only_set = true;
    for (;;) {
        size_t len = strcspn(p, ","), k;
        const char *e = p + len;
        int i;
        while (p < e && *p == ' ')
            p++;
        while (e > p && e[-1] == ' ')
            e--;
        k = (size_t)(e - p);
        if (k == 0) {
            cli_error(CMD,
                      "--only '%s': an empty target name (expected target "
                      "names separated by commas, from %s)",
                      v, target_list);
            return false;
        }
        for (i = 0; i < N_T; i++)
            if (strlen(repro_target_ids[i]) == k
                && strncasecmp(p, repro_target_ids[i], k) == 0)
                break;
        if (i == N_T) {
            cli_error(CMD,
                      "--only: unknown target '%.*s' (expected one of %s)",
                      (int)k, p, target_list);
            return false;
        }
        r->only[i] = true;
        p += strcspn(p, ",");
        if (*p == '\0')
            return true;
        p++;
    }
}

static bool
take(void *ctx, int id, const char *v)
{
    repro *r = ctx;

    switch (id) {
    case 1:
        if (*v == '\0') {
            cli_error(CMD, "--out: an empty directory name");
            return false;
        }
        r->out = v;
        return true;
    case 2:
        r->quick = true;
        return true;
    case 3:
        return take_only(r, v);
    case 4:
        return cli_parse_threads(CMD, v, &r->threads);
    case 5:
        r->no_plot = true;
        return true;
    case 7:
        r->json = true;
        return true;
    case 8:
        r->prog_want = PROG_AUTO;
        return true;
    case 9:
        r->prog_want = PROG_OFF;
        return true;
    default:
        r->force = true;
        return true;
    }
}

/* DIR may be written: it does not exist, is empty, or holds a
   summary.md written by reproduce (then *OLD is its text, malloc'd); or
   --force. */
static bool
check_out(const repro *r, char **old)
{
    struct stat st;
    char *sp, *text;
    size_t len;
    bool ours;

    *old = NULL;
    if (stat(r->out, &st) != 0) {
        if (mkdir(r->out, 0755) != 0) {
            cli_error(CMD, "--out %s: cannot create: %s", r->out,
                      strerror(errno));
            return false;
        }
        return true;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error(CMD, "--out %s: not a directory", r->out);
        return false;
    }
    sp = cli_path_join(r->out, "summary.md");
    if (sp == NULL) {
        cli_error(CMD, "out of memory");
        return false;
    }
    text = cli_read_all(sp, &len);
    if (text == NULL && errno != ENOENT && !r->force) {
        cli_error(CMD, "%s: cannot read: %s", sp, strerror(errno));
        free(sp);
        return false;
    }
    free(sp);
    if (text == NULL)
        return true;
    ours =
        strncmp(text, "# bf16emu reproduce", 19) == 0 && strlen(text) == len;
    if (ours) {
        *old = text;
        return true;
    }
    free(text);
    if (r->force)
        return true;
    cli_error(CMD,
              "--out %s: holds a summary.md not written by bf16emu "
              "reproduce (--force writes there anyway)",
              r->out);
    return false;
}

/* The JSON report of this run. */
static bool
report_json(const repro *r, double seconds, int *rc)
{
    cli_buf jb;
    cli_json j;
    int np = 0, nr = 0, row_run[N_T];
    bool pass[N_T];
    const char *obtained[N_T];
    unsigned kept;

    repro_summary_rows(r, row_run, pass, obtained, &kept);
    cli_buf_init(&jb);
    cli_json_init(&j, &jb);
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "tool", "bf16emu reproduce");
    cli_json_string(&j, "version", PACKAGE_VERSION);
    cli_json_string(&j, "out", r->out);
    cli_json_bool(&j, "quick", r->quick);
    cli_json_array_begin(&j, "targets");
    for (int i = 0; i < N_T; i++) {
        if (!r->t[i].run)
            continue;
        nr++;
        np += r->t[i].pass;
        cli_json_object_begin(&j, NULL);
        cli_json_string(&j, "id", r->t[i].id);
        cli_json_string(&j, "what", r->t[i].what);
        cli_json_string(&j, "expected", r->t[i].expected);
        cli_json_string(&j, "obtained", r->t[i].obtained);
        cli_json_bool(&j, "pass", r->t[i].pass);
        cli_json_double(&j, "seconds", r->t[i].seconds);
        cli_json_object_end(&j);
    }
    cli_json_array_end(&j);
    cli_json_int(&j, "passed", np);
    cli_json_int(&j, "run", nr);
    cli_json_int(&j, "run_id", r->run_id);
    cli_json_array_begin(&j, "kept");
    for (int i = 0; i < N_T; i++)
        if (kept & TBIT(i)) {
            cli_json_object_begin(&j, NULL);
            cli_json_string(&j, "id", repro_target_ids[i]);
            cli_json_int(&j, "run_id", row_run[i]);
            cli_json_bool(&j, "pass", pass[i]);
            cli_json_object_end(&j);
        }
    cli_json_array_end(&j);
    cli_json_double(&j, "seconds", seconds);
    cli_json_object_end(&j);
    cli_json_finish(&j);
    *rc = CLI_EXIT_OK;
    return cli_report_emit(CMD, &jb, rc);
}

/* The report of this run on stdout: the targets, where the summary is,
   and what it kept from earlier runs. */
static void
report_text(const repro *r, double seconds)
{
    const char *sep = "";
    int row_run[N_T], from[N_T + 1], nfrom = 0;
    bool pass[N_T];
    const char *obtained[N_T];
    unsigned kept;
    char ids[96];

    repro_summary_rows(r, row_run, pass, obtained, &kept);
    printf("bf16emu reproduce: ");
    for (int i = 0; i < N_T; i++)
        if (r->t[i].run) {
            printf("%s%s %s", sep, r->t[i].id, r->t[i].pass ? "PASS" : "FAIL");
            sep = ", ";
        }
    printf("\n-> %s/summary.md (%.0f s)", r->out, seconds);
    if (kept == 0 && !(r->only_set && repro_sweep_run(r) != 0)) {
        printf("\n");
        return;
    }
    for (int i = 0; i <= N_T; i++) {
        int id =
            i < N_T ? ((kept & TBIT(i)) ? row_run[i] : 0) : repro_sweep_run(r);
        bool seen = false;
        for (int k = 0; k < nfrom; k++)
            seen = seen || from[k] == id;
        if (id != 0 && !seen)
            from[nfrom++] = id;
    }
    printf(", run %d merged into the earlier summary: kept %s%s%s from run%s",
           r->run_id, repro_ids_str(kept, ids, sizeof ids),
           kept != 0 && repro_sweep_run(r) != 0 ? " and " : "",
           repro_sweep_run(r) != 0 ? "the sweep" : "", nfrom > 1 ? "s" : "");
    for (int k = 0; k < nfrom; k++)
        printf("%s%d", k == 0 ? " " : ", ", from[k]);
    printf("\n");
}

int
reproduce_main(int argc, char **argv)
{
    static const cli_option opts[] = {
        {"help", false, 0},     {"out", true, 1},
        {"quick", false, 2},    {"only", true, 3},
        {"threads", true, 4},   {"no-plot", false, 5},
        {"force", false, 6},    {"json", false, 7},
        {"progress", false, 8}, {"no-progress", false, 9},
        {NULL, false, 0}};
    repro r;
    progress prog;
    prior prev;
    int rc;
    double t0 = cli_now_s();
    cli_buf sum;
    char *old = NULL;
    bool all_pass = true, ok = true;

    memset(&r, 0, sizeof r);
    r.out = "results";
    r.prog_want = PROG_AUTO;
    rc = cli_take_options(CMD, argc, argv, opts, 0, reproduce_help,
                          "reproduce takes options only", take, &r);
    if (rc >= 0)
        return rc;
    for (int i = 0; i < N_T; i++) {
        r.t[i].id = repro_target_ids[i];
        r.t[i].what = repro_specs[i].what;
        r.t[i].expected = repro_specs[i].expected;
        r.t[i].run = !r.only_set || r.only[i];
        snprintf(r.t[i].obtained, sizeof r.t[i].obtained, "not computed");
    }
    if (!check_out(&r, &old))
        return CLI_EXIT_USAGE;
    /* a run of some targets merges into the summary already there */
    if (old != NULL && r.only_set) {
        if (!repro_prior_parse(&prev, old)) {
            repro_prior_free(&prev);
            free(old);
            return cli_error(CMD, "out of memory");
        }
        r.prev = &prev;
    }
    free(old);
    r.run_id = r.prev != NULL ? r.prev->max_id + 1 : 1;
    for (int s = 0; s < N_STEP; s++)
        cli_buf_init(&r.section[s]);
    cli_buf_init(&sum);

    repro_prog_begin(&r, &prog);
    for (int s = 0; s < N_STEP; s++) {
        double ts;
        bool step_ok;
        if (!repro_step_runs(&r, s))
            continue;
        repro_prog_step_begin(&r, s);
        ts = cli_now_s();
        step_ok = run_step(&r, s);
        ts = cli_now_s() - ts;
        for (int i = 0; i < N_T; i++)
            if (step_defs[s].targets & TBIT(i))
                r.t[i].seconds = ts;
        repro_prog_step_end(&r, s, ts, step_ok);
        ok = ok && step_ok;
    }
    repro_prog_end(&r);
    repro_summary(&r, &sum, cli_now_s() - t0);
    ok = ok && !sum.failed
         && repro_write_file(&r, "summary.md", sum.p, sum.len);
    for (int i = 0; i < N_T; i++)
        if (r.t[i].run && !r.t[i].pass)
            all_pass = false;
    if (ok && r.json) {
        if (!report_json(&r, cli_now_s() - t0, &rc))
            ok = false;
    } else if (ok) {
        report_text(&r, cli_now_s() - t0);
    }
    for (int s = 0; s < N_STEP; s++)
        cli_buf_free(&r.section[s]);
    cli_buf_free(&sum);
    if (r.prev != NULL)
        repro_prior_free(r.prev);
    if (!ok)
        return CLI_EXIT_USAGE;
    return all_pass ? CLI_EXIT_OK : 1;
}

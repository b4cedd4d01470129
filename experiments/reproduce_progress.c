/* reproduce_progress.c -- bf16emu reproduce's progress on stderr: a bar
   on a terminal, else one line per step */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/reproduce_local.h"

/*----------------------------------------------------------------------------
 * Progress.
 *--------------------------------------------------------------------------*/
static const char *
duration(char *buf, size_t n, double s)
{
    long v = s > 0 ? lround(s) : 0;

    if (v < 60)
        snprintf(buf, n, "%ld s", v);
    else if (v < 3600)
        snprintf(buf, n, "%ld min %02ld s", v / 60, v % 60);
    else
        snprintf(buf, n, "%ld h %02ld min", v / 3600, v / 60 % 60);
    return buf;
}

/* The seconds left: the weights left, at the rate seen so far once there
   is one, else at the prior's (2 threads on an idle machine). */
static double
prog_eta(const progress *p, double now)
{
    double el = now - p->t0, done = p->w_done + p->frac * p->w_step;
    double left = p->w_total - done;

    if (left < 0)
        left = 0;
    if (el > 1.0 && done > 0.02 * p->w_total)
        return left * el / done;
    return left * 2.0 / p->nthreads;
}

static void
prog_draw(progress *p, bool final)
{
    double now = cli_now_s(), done = p->w_done + p->frac * p->w_step;
    double f = p->w_total > 0 ? done / p->w_total : 1;
    char bar[32], line[200], e1[32], e2[32];
    int w = 24, fill = final ? w : (int)(f * w);
    size_t len;

    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[w] = '\0';
    if (final)
        snprintf(line, sizeof line, "[%s] %d/%d targets, done in %s", bar,
                 p->n_done, p->n_targets,
                 duration(e1, sizeof e1, now - p->t0));
    else
        snprintf(line, sizeof line,
                 "[%s] %d/%d targets  %s  elapsed %s  ETA %s", bar, p->n_done,
                 p->n_targets, p->label, duration(e1, sizeof e1, now - p->t0),
                 duration(e2, sizeof e2, prog_eta(p, now)));
    len = strlen(line);
    fprintf(stderr, "\r%s%*s", line,
            p->drawn > len ? (int)(p->drawn - len) : 0, "");
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
    p->drawn = len;
    p->last_draw = now;
}

/* Called by the thread that runs the step (thread 0 of a parallel loop):
   FRAC of the step is done.  Redraws the bar at most 5 times a second;
   without the bar, a line when nothing was printed for 30 s. */
void
repro_prog_tick(progress *p, double frac)
{
    double now;
    char el[32], eta[32];

    if (p == NULL)
        return;
    p->frac = frac;
    now = cli_now_s();
    if (p->mode == PROG_BAR && now - p->last_draw >= 0.2)
        prog_draw(p, false);
    else if (p->mode == PROG_LINES && now - p->last_draw >= 30) {
        fprintf(stderr,
                "bf16emu reproduce: %s running, %.0f%% done; elapsed %s, "
                "ETA %s\n",
                p->label, 100 * frac, duration(el, sizeof el, now - p->t0),
                duration(eta, sizeof eta, prog_eta(p, now)));
        fflush(stderr);
        p->last_draw = now;
    }
}

bool
repro_master_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num() == 0;
#else
    return true;
#endif
}

/*----------------------------------------------------------------------------
 * Progress of the steps.
 *--------------------------------------------------------------------------*/
void
repro_prog_begin(repro *r, progress *p)
{
    char ids[128], eta[32];

    memset(p, 0, sizeof *p);
    p->mode = r->prog_want;
    if (p->mode == PROG_AUTO)
        p->mode = isatty(2) ? PROG_BAR : PROG_LINES;
    r->prog = p->mode == PROG_OFF ? NULL : p;
    if (r->prog == NULL)
        return;
    p->t0 = p->last_draw = cli_now_s();
    p->nthreads = repro_nthreads(r);
    p->label = "starting";
    for (int s = 0; s < N_STEP; s++)
        if (repro_step_runs(r, s))
            p->w_total += repro_step_weight(r, s);
    for (int i = 0; i < N_T; i++)
        p->n_targets += r->t[i].run;
    if (p->mode == PROG_LINES)
        fprintf(stderr,
                "bf16emu reproduce: %s%s (%s samples, %d thread%s) into %s; "
                "ETA %s\n",
                repro_ids_str(repro_run_mask(r), ids, sizeof ids),
                r->only_set ? "" : " and the sweep",
                r->quick ? "quick" : "full", p->nthreads,
                p->nthreads == 1 ? "" : "s", r->out,
                duration(eta, sizeof eta, prog_eta(p, p->t0)));
    else
        prog_draw(p, false);
}

void
repro_prog_step_begin(repro *r, int s)
{
    progress *p = r->prog;

    if (p == NULL)
        return;
    p->label = step_defs[s].label;
    p->w_step = repro_step_weight(r, s);
    p->frac = 0;
    if (p->mode == PROG_BAR)
        prog_draw(p, false);
}

void
repro_prog_step_end(repro *r, int s, double seconds, bool ok)
{
    progress *p = r->prog;
    char what[160], el[32], eta[32];
    size_t o = 0;
    double now = cli_now_s();

    if (p == NULL)
        return;
    p->w_done += p->w_step;
    p->w_step = 0;
    p->frac = 0;
    what[0] = '\0';
    for (int i = 0; i < N_T; i++)
        if ((step_defs[s].targets & TBIT(i)) && r->t[i].run) {
            p->n_done++;
            if (o < sizeof what)
                o += (size_t)snprintf(what + o, sizeof what - o, "%s%s %s",
                                      o ? ", " : "", r->t[i].id,
                                      r->t[i].pass ? "PASS" : "FAIL");
        }
    if (s == S_SWEEP)
        snprintf(what, sizeof what, "sweep %s", ok ? "done" : "failed");
    if (p->mode == PROG_LINES)
        fprintf(stderr,
                "bf16emu reproduce: [%2d/%d] %s (%.1f s); elapsed %s, ETA "
                "%s\n",
                p->n_done, p->n_targets, what, seconds,
                duration(el, sizeof el, now - p->t0),
                duration(eta, sizeof eta, prog_eta(p, now)));
    else
        prog_draw(p, false);
    p->last_draw = now;
}

void
repro_prog_end(repro *r)
{
    if (r->prog != NULL && r->prog->mode == PROG_BAR)
        prog_draw(r->prog, true);
}

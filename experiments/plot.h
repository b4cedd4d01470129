/* plot.h -- rendering the plots of sweep and reproduce: the gnuplot
   scripts of experiments/plots/ run on data files the program wrote */
#ifndef BF16EMU_EXPERIMENTS_PLOT_H
#define BF16EMU_EXPERIMENTS_PLOT_H

#include <stdbool.h>
#include <stddef.h>

/* The directory of the gnuplot scripts: $BF16EMU_PLOTS, else the source
   tree's experiments/plots when it exists, else the installed copy. */
const char *plot_script_dir(void);

/* Runs "gnuplot -e VARS DIR/SCRIPT" (VARS: gnuplot assignments such as
   "datafile='x.dat'; out='x'"), with stdout and stderr going to LOG
   (a file path; NULL: /dev/null).  Returns 0 on success, 1 when gnuplot
   is not installed, -1 when it failed (WHY, WHYLEN: the reason). */
int plot_run(const char *script, const char *vars, const char *log, char *why,
             size_t whylen);

/* Quotes S for a gnuplot single-quoted string into BUF (N bytes); false
   when S holds a quote or a newline, or BUF is too small. */
bool plot_quote(char *buf, size_t n, const char *s);

#endif

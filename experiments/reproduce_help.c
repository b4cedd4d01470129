/* reproduce_help.c -- the help of bf16emu reproduce */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>

#include "experiments/cli.h"

void
reproduce_help(FILE *out)
{
    fputs(
        "usage: bf16emu reproduce [--out DIR] [--quick] [--only T1,T12,...]\n"
        "                         [--threads N] [--no-plot] [--force] "
        "[--json]\n"
        "                         [--progress | --no-progress]\n"
        "\n"
        "Computes the paper's reproduction targets T1-T13 (see "
        "doc/reproduce.md)\n"
        "and writes DIR (default results): summary.md (expected, obtained, "
        "PASS or\n"
        "FAIL per target), t9-ablations.csv, t12-bias.csv, the data files "
        "of the\n"
        "plots and the plots (PNG and SVG, with gnuplot): eq4-trace, "
        "fig6-prefix,\n"
        "t12-bias, fig5a-cumulative, sweep/bias-vmean.  Exit 1 when a "
        "target fails.\n"
        "\n"
        "  --quick        smaller samples (for tests; about 4x faster)\n"
        "  --only LIST    only these targets (T1 .. T13, separated by "
        "commas); a\n"
        "                 summary.md already in DIR keeps the other "
        "targets' rows,\n"
        "                 files and sections, and its run column says "
        "which run\n"
        "                 each row comes from\n"
        "  --threads N    OpenMP threads (results do not depend on N)\n"
        "  --no-plot      no gnuplot\n"
        "  --json         the targets as one JSON object on stdout\n"
        "  --progress     progress on stderr (the default): a bar on a "
        "terminal,\n"
        "                 else one line per target or group of targets\n"
        "  --no-progress  no progress\n"
        "  --force        write into DIR even if it holds files not written "
        "by\n"
        "                 reproduce\n",
        out);
}

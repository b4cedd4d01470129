/* trace_help.c -- bf16emu trace --help */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>

#include "experiments/cli.h"

void
trace_help(FILE *out)
{
    fputs(
        "usage: bf16emu trace [options] X1 [X2 ...]\n"
        "       bf16emu trace [options] @FILE | -\n"
        "       bf16emu trace --op OP [options] A [B [C]]\n"
        "\n"
        "Traces the accumulation X1 + X2 + ... + Xn in the accumulator "
        "format, each\naddition rounded with --acc-mode, then the final "
        "rounding to --out with\n--mode; or, with --op, one operation.  For "
        "each rounding it prints the\noperands' bits, the alignment, the "
        "exact result, the kept bits, guard,\nround and sticky, the "
        "decision and why, the result and the signed error\n(result - "
        "exact) exactly and in ulps.\n"
        "\n"
        "Operands: a decimal (-2.40625), a C99 hex-float (-0x1.c5cp-11), "
        "inf, nan,\nor FORMAT:0xBITS (bf16:0xC013, f32:0xC01A0E2E, f16:, "
        "tf32:, e4m3:, e5m2:,\nf64:).  Numbers are read into the working "
        "format with --in-mode; bit\npatterns keep their format and are "
        "converted (a note says when inexactly).\n"
        "@FILE reads operands from FILE, - from standard input: numbers "
        "separated by\nblanks or newlines, '#' to the end of the line a "
        "comment; they take the\nplace of the argument, and may be mixed "
        "with operands on the command line.\n"
        "\n"
        "Every decimal printed is exact: values, sums, errors and the "
        "error of reading\na decimal or hex-float operand (result - the "
        "text's value) are written to\ntheir last digit; a quotient or "
        "square root that does not end is written to\n40 significant "
        "digits, each a true digit, then '...'.\n"
        "\n"
        "options:\n"
        "  --acc FMT         accumulator format (default f32)\n"
        "  --acc-mode MODE   rounding of each addition (default rne)\n"
        "  --out FMT         final format (default bf16; f64 allowed)\n"
        "  --mode MODE       final rounding, or the rounding of --op "
        "(default rne)\n"
        "  --in-mode MODE    reading numbers and converting operands "
        "(default rne)\n"
        "  --op OP           one operation: add, sub, mul, fma (a*b + c), "
        "div, sqrt,\n"
        "                    convert (A to --out)\n"
        "  --fmt FMT         format of --op (default: the first prefixed "
        "operand's\n"
        "                    format, else f32)\n"
        "  --seed N          stochastic-rounding seed (default 0)\n"
        "  --ftz, --daz      flush tiny results / read subnormal operands "
        "as zero\n"
        "  --env PRESET      ieee (default), x86, avx512bf16, nvidia, "
        "arm-bfdot\n"
        "  --explain         add a plain-language reading of each rounding\n"
        "  --json            print one JSON object instead of text\n"
        "  --color WHEN      auto (default: on a terminal unless NO_COLOR), "
        "always,\n"
        "                    never\n"
        "  -h, --help        this help\n"
        "\n"
        "Formats: bf16 f16 f32 tf32 e4m3 e5m2.  Modes: rne rtz rdn rup rna "
        "rod sr.\nIn bit strings, b{n} stands for n copies of bit b.\n"
        "\n"
        "example (the paper's addition):\n"
        "  bf16emu trace f32:0xC01A0E2E bf16:0xC013\n"
        "  bf16emu trace -2.40625 -0x1.c5cp-11 -2.296875\n"
        "  seq 1 1000 | sed 's/$/e-3/' | bf16emu trace --acc bf16 -\n"
        "\n"
        "Exit status: 0 ok, 1 an internal check failed, 2 bad usage or "
        "input.\n",
        out);
}

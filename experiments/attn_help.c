/* attn_help.c -- the help of bf16emu attn */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>

#include "experiments/cli.h"
#include "experiments/fa_cli.h"

/* The help's inputs and shape options. */
static void
help_inputs(FILE *out)
{
    fputs(
        "inputs (files: BF16, or U16 / '<u2' bit patterns; [B, H, N, d], "
        "[H, N, d]\nor [N, d]; K and V [.., Nk, d] with Q's leading "
        "dimensions and d; or F16, all\nfour, under a description whose "
        "formats are the inputs' or FP32: fa2, fp32,\ncudnn, efficient, "
        "math; O is then written in F16 unless FP32):\n"
        "  --q, --k, --v FILE[:KEY]  Q, K, V\n"
        "  --do FILE[:KEY]      dO (needed with --backward)\n"
        "  --layout bhnd|bnhd   Q, K, V (and dO) as [B, H, N, d] or "
        "[B, N, H, d]\n"
        "                       (default: the file's metadata, else the "
        "one reading\n"
        "                       under which Q's and K's shapes agree; "
        "asked for when\n"
        "                       both do)\n"
        "  --round-to bf16|f16  round F32 or F64 inputs to BF16 or FP16 "
        "(to nearest,\n"
        "                       ties to even; the report counts the values "
        "changed)\n"
        "  --dtype bf16         16-bit patterns (U16, I16) and F32 values "
        "are BF16\n"
        "                       (bfloat16 too; F16 tensors need no "
        "--dtype)\n"
        "  --o FILE[:KEY], --lse FILE[:KEY]\n"
        "                       with --backward: the GPU's O and LSE as "
        "the backward's\n"
        "                       inputs in place of the emulator's "
        "forward\n"
        "  --gen NAME           generate Q, K, V (and dO): normal, sink, "
        "repeated-max\n"
        "  --seed N             the generator's seed (default 1)\n"
        "  --batch B, --heads H, --nq NQ, --nk NK, --d D\n"
        "                       the generated shape [B, H, N, d] (default "
        "1, 1, 128,\n"
        "                       NQ, 64)\n"
        "  --qk-std X           Q and K ~ N(0, X) (default 1)\n"
        "  --v-mean X, --v-std X  V ~ N(mean, std) (default 0, 1)\n"
        "  --do-std X           dO ~ N(0, X) (default 1)\n"
        "  --sink X             sink: key 0's scores raised by X (default "
        "4)\n"
        "  --repeat K           repeated-max: K keys share the row maximum "
        "(default 2)\n"
        "  --max-value R        repeated-max: their score (default 3)\n"
        "  --gap-min A, --gap-max B\n"
        "                       repeated-max: the other scores are R - "
        "U(A, B)\n"
        "                       (default 12, 30)\n"
        "\n",
        out);
}

/* The help's options of the computation: policy, fix, tiles, mask, exp. */
static void
help_computation(FILE *out)
{
    fputs(
        "computation:\n"
        "  --policy NAME        paper-eq4 (default), repo, fa2 (flash: "
        "PyTorch's name), fp32,\n"
        "                       a backend's description (cudnn,\n"
        "                       efficient, math), flex (FlexAttention's "
        "Triton\n"
        "                       forward), or sdpa: the backend "
        "PyTorch 2.11\n"
        "                       runs on an H200 for the call (the choice "
        "and why on\n"
        "                       stderr)\n"
        "  --sdpa-backends LIST with --policy sdpa: the backends enabled "
        "(cudnn, flash,\n"
        "                       efficient, math; default all)\n"
        "  --kernel FILE        a kernel description (JSON, as --describe "
        "writes it)\n"
        "                       instead of --policy\n"
        "  --describe           print the description of --policy (or "
        "--kernel) as\n"
        "                       JSON and stop\n"
        "  --splits N|auto      split-KV: N splits of the KV blocks (1: not "
        "split, the\n"
        "                       default); auto: PyTorch 2.11's rule for the "
        "shape\n"
        "  --dq-buffers N|auto  the fa2 backward's dQ accumulation buffers "
        "(KV block n\n"
        "                       into buffer n mod N); auto (default): the "
        "description's\n"
        "                       rule (fa2: ceil(SMs / (B H)), the "
        "deterministic launch)\n",
        out);
    fa_cli_help_launch(out);
    fputs(
        "\n"
        "  --mask FILE[:KEY]    SDPA's attn_mask (BOOL or U8 0/1: True "
        "takes part;\n"
        "                       F32, BF16, F16: added), broadcasting to [B, "
        "H, Nq, Nk];\n"
        "                       the description says how it enters "
        "(bias_add,\n"
        "                       bool_fill; fa2 takes none); written to "
        "--out as\n"
        "                       attn_mask, so that diff of the file applies "
        "it\n"
        "  --fix NAME           none (default), beta, beta-v2, eps, always\n"
        "  --beta X, --tol X, --eps X\n"
        "                       the fix's parameters (defaults 2 or 7 for "
        "beta-v2,\n"
        "                       1e-3, 2^-5)\n"
        "  --zero-max keep|shift, --eps-zero X\n"
        "                       a repeated maximum of exactly 0: keep m = 0 "
        "(default)\n"
        "                       or shift by X (default 2^-5)\n"
        "  --ablate LIST        fp32-pv, fp32-o, delta-dpp, delta-fp32-o, "
        "untiled\n"
        "                       (comma-separated)\n"
        "  --br N, --bc N       forward tiles (0: the policy's default)\n"
        "  --order forward|reverse  KV block order (default: the policy's)\n"
        "  --causal             bottom-right causal mask\n"
        "  --causal-align top-left|bottom-right  with --causal: key j "
        "masked for\n"
        "                       query i when j > i (SDPA's is_causal) or "
        "j > i + Nk - Nq\n"
        "                       (default)\n"
        "  --scale X            softmax scale, rounded to FP32 (default "
        "1/sqrt(d))\n"
        "  --softcap C          FlexAttention's soft-capping score_mod, C "
        "tanh(score / C)\n"
        "                       (descriptions with softcap_tanhf: flex)\n"
        "  --delta-xblock N     FlexAttention's backward: the rows per "
        "program of its\n"
        "                       delta kernel, which inductor autotunes "
        "(default 8)\n"
        "  --exp NAME           cr, libm, ex2-sm90 or ex2-sm90-ftz (the "
        "H200's\n"
        "                       ex2.approx, measured); default: the "
        "description's\n"
        "                       exp_model (see --describe), the same in "
        "every subcommand\n"
        "  --backward           also the backward (delta, dQ, dK, dV)\n"
        "  --threads N          heads computed in parallel (default: the "
        "online CPUs);\n"
        "                       results do not depend on it\n"
        "\n",
        out);
}

/* The help's output options: the file, captures, trace, report. */
static void
help_output(FILE *out)
{
    fputs(
        "output:\n"
        "  --out FILE           write the outputs, captures and inputs to "
        "FILE\n"
        "                       (.safetensors, atomically; never over an "
        "input)\n"
        "  --force              replace an existing --out file\n"
        "  --capture LIST       also write s, p, m, l, obar (forward), dp, "
        "ds (backward)\n"
        "  --trace B,H,ROW,COL  list the rounding events of O[B,H,ROW,COL] "
        "(and of\n"
        "                       dQ[B,H,ROW,COL] with --backward)\n"
        "  --trace-max N        events listed per pass, the last ones "
        "(default 1000)\n"
        "  --no-exact           skip the exact reference\n"
        "  --exact              run it even above the size limit\n"
        "  --max-memory BYTES   refuse runs estimated above BYTES (K, M, G, "
        "T suffixes;\n"
        "                       default the smaller of 8G and the physical "
        "memory)\n"
        "  --json               print one JSON object instead of text\n"
        "  --dry-run            print the header (description, shapes, "
        "tiles, splits),\n"
        "                       the memory estimate and the cost, and stop "
        "before\n"
        "                       computing or writing --out\n"
        "  -h, --help           this help\n"
        "\n",
        out);
}

/* The help's notes: the cost, the exact reference's limit, the errors
   relative to the row's scale, an example, the exit status. */
static void
help_notes(FILE *out)
{
    fputs(
        "Before computing, a line on stderr gives the cost: the work "
        "B*H*Nq*Nk*d (times\n"
        "4 with --backward), the parts that run and the exact reference's "
        "time on one\n"
        "core; while stderr is a terminal, a bar there shows the heads "
        "done.\n"
        "\n"
        "The exact reference runs when B*H*Nq*Nk*d (times 4 with --backward) "
        "is at most\n"
        "2^26 (67108864, about 20 s on one core); larger runs skip it with a "
        "note unless\n"
        "--exact.  Errors are in ulps of each output's format at the exact "
        "value;\n"
        "elements whose exact value is not finite are left out and counted.  "
        "Inputs may\n"
        "hold NaN or Inf: they are counted, and their heads have no exact "
        "reference.\n"
        "\n"
        "Near 0 the ulp of the exact value is tiny, so O, dQ, dK and dV also "
        "get their\n"
        "errors relative to the row's scale: in ulps of the format at\n"
        "max_j |exact[row, j]|, the largest magnitude of the row's d exact "
        "values (a\n"
        "row: one query's d outputs, or one key's for dK and dV); the same "
        "mean, se, t,\n"
        "95% CI, max|err| and mean|err| (JSON: row_mean, row_t, ..., "
        "row_max_abs).\n"
        "\n"
        "example (the paper's repeated maxima with a negative V, in 128 "
        "independent\nheads):\n"
        "  bf16emu attn --gen repeated-max --heads 128 --nq 4 --nk 256 "
        "--d 16 \\\n"
        "      --v-mean -1.5 --v-std 0.4 --out t12.safetensors\n"
        "\n"
        "Exit status: 0 ok, 2 bad usage or input.\n",
        out);
}

void
attn_help(FILE *out)
{
    fputs(
        "usage: bf16emu attn --gen NAME [--seed N] [shape] [options]\n"
        "       bf16emu attn --q FILE[:KEY] --k FILE[:KEY] --v FILE[:KEY]\n"
        "                    [--do FILE[:KEY]] [options]\n"
        "\n"
        "Runs the reference flash attention (forward, and with --backward "
        "the\nbackward) on BF16 Q, K, V (and dO) with a precision policy, a "
        "fix, ablations,\ntiles and an exp model, every rounding emulated; "
        "writes O, LSE (delta, dQ,\ndK, dV) and captures to a .safetensors "
        "file, and measures the signed error\n(computed - exact) of each "
        "output against the exact reference (MPFR), in\nulps of the "
        "output's format.\n"
        "\n",
        out);
    help_inputs(out);
    help_computation(out);
    help_output(out);
    help_notes(out);
}

/* diff_help.c -- the help of bf16emu diff */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>

#include "experiments/cli.h"
#include "experiments/fa_cli.h"

/* The help's inputs: the dump, the tensors, the call, layout and dtype. */
static void
help_inputs(FILE *out)
{
    fputs(
        "  --dump FILE          a .safetensors dump: q, k, v [B, H, N, d] "
        "BF16, do (for\n"
        "                       the backward), o BF16, lse F32 [B, H, Nq], "
        "dq, dk, dv\n"
        "                       BF16; a kernel's stages: s, p [B, H, Nq, "
        "Nk] (F32, BF16),\n"
        "                       m, l [B, H, Nq, Tc] and acc [B, H, Nq, Tc, "
        "d] (F32);\n"
        "                       its metadata \"manifest\" (JSON) may give "
        "causal, fix,\n"
        "                       shape and scale\n"
        "  --q, --k, --v, --do, --o, --lse, --dq, --dk, --dv FILE[:KEY]\n"
        "                       a tensor from another file or key "
        "(.safetensors or\n"
        "                       .npy; over the dump's); [B, H, N, d], "
        "[H, N, d] or\n"
        "                       [N, d] (lse one dimension fewer)\n"
        "  --call L3.s10945     one call of a capture (its keys "
        "L3.s10945.q, .k, ...;\n"
        "                       causal, scale, layout from its manifest "
        "entry in calls)\n"
        "  --layout bhnd|bnhd   [B, H, N, d] or PyTorch's [B, N, H, d] "
        "(needed when\n"
        "                       H and N both exceed 1 and neither the "
        "manifest's\n"
        "                       \"layout\" or \"shape\" nor the shapes of q "
        "and k tell)\n"
        "  --dtype bf16         read F32 or F16 tensors whose values are "
        "BF16 values,\n"
        "                       and U16 / I16 bit patterns, as BF16 (every "
        "value checked)\n",
        out);
}

/* The help's kernel options: policy, backends, description, splits, launch. */
static void
help_kernel(FILE *out)
{
    fputs(
        "  --policy NAME        paper-eq4, repo, fa2 (default), fp32, a "
        "backend's\n"
        "                       description (cudnn,\n"
        "                       efficient, math), flex (FlexAttention's "
        "Triton\n"
        "                       forward), or sdpa: the backend "
        "PyTorch 2.11\n"
        "                       runs on an H200 for the dump's shape (the "
        "choice and\n"
        "                       why on stderr); a manifest's \"backend\": "
        "\"default\" means\n"
        "                       sdpa, \"cudnn\" the cudnn description\n"
        "  --sdpa-backends LIST with sdpa: the backends enabled (cudnn, "
        "flash, efficient,\n"
        "                       math; default all)\n"
        "  --kernel FILE        a kernel description (JSON, as 'bf16emu "
        "attn --describe'\n"
        "                       writes it) instead of --policy\n"
        "  --splits N|auto      split-KV: N splits (1: not split, the "
        "default); auto:\n"
        "                       PyTorch 2.11's rule for the dump's shape "
        "(o and lse\n"
        "                       stages only)\n"
        "  --dq-buffers N|auto  the fa2 backward's dQ accumulation buffers "
        "(default: the\n"
        "                       manifest's dq_buffers, else auto: the "
        "description's\n"
        "                       rule, fa2: ceil(SMs / (B H)) on the dump's "
        "shape)\n",
        out);
    fa_cli_help_launch(out);
    fputs(" (a manifest's launch_shape\n"
          "                       gives it too)\n",
          out);
}

/* The help's mask, stages, exp model, fix, causal mask, scale, flex. */
static void
help_computation(FILE *out)
{
    fputs(
        "  --mask FILE[:KEY]    SDPA's attn_mask (BOOL or U8 0/1: True "
        "takes part;\n"
        "                       F32, BF16, F16: added), broadcasting to the "
        "launch's\n"
        "                       [B, H, Nq, Nk]; a dump's tensor attn_mask is "
        "used\n"
        "                       without it.  The description says how it "
        "enters\n"
        "                       (bias_add, bool_fill); fa2 takes none\n"
        "  --stage LIST         comma-separated: s, m, p, l, acc (fa2 only), "
        "o, lse, dq,\n"
        "                       dk, dv (default: every stage the dump "
        "holds); s, m, p,\n"
        "                       l, acc, o and lse from q, k, v; dq, dk, dv "
        "from q, k, v,\n"
        "                       do and the dump's o and lse\n"
        "  --exp MODEL          cr, libm, ex2-sm90 or ex2-sm90-ftz "
        "(default: the\n"
        "                       description's exp_model, as in every "
        "subcommand)\n"
        "  --fa2-rowsum fma|separate  the row-sum partials' rescale and "
        "first\n"
        "                       addition: one FFMA (PyTorch's build, the "
        "default)\n"
        "                       or a product and an addition (the "
        "manifest's\n"
        "                       \"rowsum\": \"FMUL ...\")\n"
        "  --fix NAME           none, beta, beta-v2, eps or always "
        "(default: the\n"
        "                       manifest's \"fix\", else none)\n"
        "  --causal, --no-causal  the mask (default: the manifest's "
        "\"causal\"; needed\n"
        "                       when the file does not say; over the "
        "manifest, noted)\n"
        "  --causal-align top-left|bottom-right  key j masked for query i "
        "when j > i\n"
        "                       (SDPA's is_causal) or j > i + Nk - Nq (the "
        "flash\n"
        "                       kernel's; default: the manifest's "
        "\"causal_alignment\",\n"
        "                       else bottom-right)\n"
        "  --scale X            softmax scale (default: the manifest's "
        "number, or\n"
        "                       1/sqrt(d) correctly rounded to FP32 when it "
        "says\n"
        "                       \"1/sqrt(d)\"; needed when the file does "
        "not say)\n"
        "  --softcap C          FlexAttention's soft-capping score_mod, C "
        "tanh(score / C)\n"
        "                       (default: the manifest's \"softcap\"; "
        "flex only)\n"
        "  --delta-xblock N     FlexAttention's backward: the rows per "
        "program of its\n"
        "                       delta kernel, which inductor autotunes "
        "(default: from the\n"
        "                       manifest's kernels and launch, else 8)\n",
        out);
}

/* The help's output options, notes, example and exit status. */
static void
help_output(FILE *out)
{
    fputs(
        "  --tolerance ULPS     a stage passes when every element is at most "
        "ULPS apart\n"
        "                       (default 0: bit-equal)\n"
        "  --exact              run the exact reference on any size\n"
        "  --no-exact           skip the exact reference (it runs while B H "
        "Nq Nk d,\n"
        "                       x4 with a backward stage, is at most "
        "2^26)\n"
        "  --json               one JSON object on stdout\n"
        "  -h, --help           this text\n"
        "\n"
        "Distances are counted in the stage's format (BF16 for o, dq, dk, "
        "dv; FP32 for\n"
        "lse): the number of representable values between the GPU's and "
        "the emulator's.\n"
        "With the exact reference, GPU - exact and emulator - exact are "
        "reported side by\n"
        "side in ulps of that format.\n"
        "The stages s, m, p, l, acc: the report names the first stage "
        "that differs and,\n"
        "for the worst O elements, the first KV block and stage where "
        "their row diverges.\n"
        "\n"
        "Example:\n"
        "  bf16emu diff --policy fa2 --dump sdpa_h200_d64.safetensors "
        "--stage o\n"
        "\n"
        "Exit status: 0 every compared stage bit-equal (or within "
        "--tolerance), 1 a\n"
        "stage differs, 2 bad usage or input.\n",
        out);
}

void
diff_help(FILE *out)
{
    fputs(
        "usage: bf16emu diff --dump FILE [--policy fa2] [--stage LIST] "
        "[--exp MODEL]\n"
        "       bf16emu diff --q FILE[:KEY] --k .. --v .. --o .. [--lse ..] "
        "[--do ..]\n"
        "                    [--dq ..] [--dk ..] [--dv ..] [--dump FILE] "
        "[--layout L]\n"
        "                    [--dtype bf16] [options]\n"
        "                    [--fix NAME] [--causal | --no-causal] "
        "[--scale X]\n"
        "                    [--tolerance ULPS] [--exact | --no-exact] "
        "[--json]\n"
        "\n"
        "Recomputes each stage of a GPU flash-attention dump on the "
        "emulator, from the\n"
        "dump's own inputs to that stage, and compares bit by bit.\n"
        "\n",
        out);
    help_inputs(out);
    help_kernel(out);
    help_computation(out);
    help_output(out);
}

/* bf16emu -- the command-line tool: dispatch to one subcommand */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "attention/attention.h"
#include "experiments/cli.h"
#include "softfloat/mma.h"

typedef struct
{
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* NULL: planned, not yet there */
    void (*help)(FILE *out);
} command;

static const command commands[] = {
    {"trace", "an accumulation or one operation, bit by bit", trace_main,
     trace_help},
    {"mma", "a matrix-unit model on A, B, C from files", mma_main, mma_help},
    {"attn", "reference flash attention with a precision policy and fix",
     attn_main, attn_help},
    {"sweep", "rounding-bias sweeps over value distributions", sweep_main,
     sweep_help},
    {"merge", "joins the outputs of sharded sweeps", merge_main, merge_help},
    {"diff", "emulator against GPU dumps, stage by stage", diff_main,
     diff_help},
    {"reproduce", "the paper's reproduction targets into results/",
     reproduce_main, reproduce_help},
    {"ls", "keys, dtypes, shapes and sizes of tensor files", ls_main,
     ls_help},
    {"scan", "repeated maxima and bias per layer and head of a capture",
     scan_main, scan_help},
    {"invariance", "will the output change with batch, GPU, backend?",
     invariance_main, invariance_help},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void
usage(FILE *out)
{
    size_t planned = 0;

    for (size_t i = 0; i < N_COMMANDS; i++)
        planned += commands[i].run == NULL;
    fputs("usage: bf16emu SUBCOMMAND [options] [operands]\n"
          "       bf16emu help SUBCOMMAND\n"
          "       bf16emu --help | --version [--json]\n"
          "\n"
          "Bit-exact emulation of BF16, FP16, FP32, TF32 and FP8 "
          "arithmetic: where\nlow-precision arithmetic loses accuracy, in "
          "which direction, and why.\n"
          "\n"
          "subcommands:\n",
          out);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (commands[i].run != NULL)
            fprintf(out, "  %-10s %s\n", commands[i].name,
                    commands[i].summary);
    if (planned > 0) {
        fputs("\nplanned, not yet available:\n", out);
        for (size_t i = 0; i < N_COMMANDS; i++)
            if (commands[i].run == NULL)
                fprintf(out, "  %-10s %s\n", commands[i].name,
                        commands[i].summary);
    }
    fputs("\nNumbers: decimal (-2.40625), C99 hex-float (-0x1.34p+1), or a "
          "bit pattern\nwith a format prefix (bf16:0xC013, f32:0xC01A0E2E, "
          "f16:, tf32:, e4m3:, e5m2:).\n"
          "Every subcommand takes --help and --json.  Exit status: 0 ok, 1 "
          "a check\nfailed, 2 bad usage or input.  See bf16emu(1).\n",
          out);
}

static const command *
find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* The command NAME, or NULL after an error message. */
static const command *
lookup(const char *name)
{
    const command *c = find_command(name);

    if (c == NULL) {
        cli_error(NULL, "unknown subcommand '%s' (see 'bf16emu --help')",
                  name);
        return NULL;
    }
    if (c->run == NULL) {
        char avail[128] = "";
        size_t o = 0;
        for (size_t i = 0; i < N_COMMANDS && o < sizeof avail; i++)
            if (commands[i].run != NULL)
                o += (size_t)snprintf(avail + o, sizeof avail - o, "%s%s",
                                      o > 0 ? ", " : "", commands[i].name);
        cli_error(NULL,
                  "'%s' is planned but not yet available (available: "
                  "%s)",
                  name, avail);
        return NULL;
    }
    return c;
}

/*----------------------------------------------------------------------------
 * --version --json: the CPU features found and the path of each kernel.
 *--------------------------------------------------------------------------*/
typedef struct
{
    bool avx2, fma, f16c, bmi2, avx512f, avx512bw, avx512bf16, amx_bf16;
} cpu_features;

/* What CPUID and XCR0 say; a feature counts only when the operating
   system saves its register state. */
static cpu_features
cpu_find(void)
{
    cpu_features f;

    memset(&f, 0, sizeof f);
#if defined(__x86_64__) && defined(__GNUC__)
    {
        unsigned a, b, c, d;
        __builtin_cpu_init();
        f.avx2 = __builtin_cpu_supports("avx2");
        f.fma = __builtin_cpu_supports("fma");
        f.f16c = __builtin_cpu_supports("f16c");
        f.bmi2 = __builtin_cpu_supports("bmi2");
        f.avx512f = __builtin_cpu_supports("avx512f");
        f.avx512bw = __builtin_cpu_supports("avx512bw");
        /* CPUID.(7,1):EAX[5] AVX512_BF16; CPUID.(7,0):EDX[22] AMX-BF16
           with the tile state (XCR0 bits 17, 18) enabled */
        if (__get_cpuid_count(7, 1, &a, &b, &c, &d))
            f.avx512bf16 = f.avx512f && (a >> 5 & 1u);
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 22 & 1u)
            && __get_cpuid(1, &a, &b, &c, &d) && (c >> 27 & 1u)) {
            unsigned lo, hi;
            __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u));
            (void)hi;
            f.amx_bf16 = (lo & 0x60000u) == 0x60000u;
        }
    }
#endif
    return f;
}

static const char *
gemm_path_name(int path)
{
    switch (path) {
    case SF_MMA_PATH_AVX512:
        return "avx512";
    case SF_MMA_PATH_AVX2:
        return "avx2";
    default:
        return "scalar";
    }
}

static int
version_json(void)
{
    cpu_features f = cpu_find();
    sf_env env = cli_env_ieee();
    fa_config fa2 = fa_config_default(FA_POLICY_FA2);
    const sf_mma_model *sm90 = sf_mma_preset_by_name("sm90");
    cli_buf out;
    cli_json j;
    bool ok;

    cli_buf_init(&out);
    cli_json_init(&j, &out);
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "version", cli_version());
    cli_json_object_begin(&j, "cpu");
    cli_json_bool(&j, "avx2", f.avx2);
    cli_json_bool(&j, "fma", f.fma);
    cli_json_bool(&j, "f16c", f.f16c);
    cli_json_bool(&j, "bmi2", f.bmi2);
    cli_json_bool(&j, "avx512f", f.avx512f);
    cli_json_bool(&j, "avx512bw", f.avx512bw);
    cli_json_bool(&j, "avx512bf16", f.avx512bf16);
    cli_json_bool(&j, "amx-bf16", f.amx_bf16);
    cli_json_object_end(&j);
    cli_json_object_begin(&j, "isa");
    cli_json_string(&j, "requested", sf_isa_name((sf_isa)cli_isa()));
    cli_json_string(&j, "cpu", sf_isa_name(sf_isa_cpu()));
    cli_json_string(&j, "cap", sf_isa_name(sf_isa_resolve(cli_isa())));
    cli_json_object_end(&j);
    /* the path each kernel takes under the cap: the GEMM for the sm90
       model with BF16 inputs, the array conversions (which follow
       env.isa the same way), and the fa2 attention's products */
    cli_json_object_begin(&j, "paths");
    cli_json_string(
        &j, "gemm",
        gemm_path_name(sf_mma_gemm_choose(
            sm90, &sf_format_bf16, &sf_format_bf16, SF_MMA_PATH_AUTO, &env)));
    cli_json_string(&j, "convert", sf_isa_name(sf_isa_resolve(cli_isa())));
    cli_json_string(
        &j, "attention",
        gemm_path_name(sf_mma_gemm_choose(
            fa2.mma_qk != NULL ? fa2.mma_qk : sm90, &sf_format_bf16,
            &sf_format_bf16, SF_MMA_PATH_AUTO, &env)));
    cli_json_object_end(&j);
    cli_json_object_end(&j);
    cli_json_finish(&j);
    ok = !out.failed && cli_buf_write(&out, stdout);
    cli_buf_free(&out);
    if (!ok)
        return cli_error(NULL, "--version --json: cannot write the report");
    return CLI_EXIT_OK;
}

int
main(int argc, char **argv)
{
    const command *c;

    cli_note_args(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    /* the instruction-set cap, once for the whole run */
    if (!cli_isa_init())
        return CLI_EXIT_USAGE;
    if (strcmp(argv[1], "--version") == 0) {
        if (argc == 3 && strcmp(argv[2], "--json") == 0)
            return version_json();
        if (argc > 2)
            return cli_error(NULL, "--version takes only --json (got '%s')",
                             argv[2]);
        printf("bf16emu %s\n", cli_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc == 2) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (argc > 3)
            return cli_error(NULL,
                             "help takes one subcommand name (got %d "
                             "arguments)",
                             argc - 2);
        c = lookup(argv[2]);
        if (c == NULL)
            return CLI_EXIT_USAGE;
        c->help(stdout);
        return CLI_EXIT_OK;
    }
    if (argv[1][0] == '-')
        return cli_error(NULL, "unknown option '%s' (see 'bf16emu --help')",
                         argv[1]);
    c = lookup(argv[1]);
    if (c == NULL)
        return CLI_EXIT_USAGE;
    return c->run(argc - 1, argv + 1);
}

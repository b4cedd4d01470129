/* bf16emu -- the command-line tool: dispatch to one subcommand */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <string.h>

#include "experiments/cli.h"

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
          "       bf16emu --help | --version\n"
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
    if (strcmp(argv[1], "--version") == 0) {
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

/* use_bf16emu.c -- a program as a user of the installed library writes
   it: built by make installcheck (make distcheck) with nothing but
   pkg-config --cflags --libs bf16emu, it calls one function of each layer
   and checks the answers.  The rule also compiles a file that includes
   every installed header, so a header that names a file not installed
   beside it fails here. */
#include <stdio.h>

#include <attention.h>
#include <bias.h>
#include <softfloat.h>

int
main(void)
{
    sf_env env = SF_ENV_IEEE;
    const fa_kernel *k;
    bias_cell cell;
    bias_summary s;
    int bad = 0;

    /* softfloat/: 1 + 2^-8 is a tie in BF16, rounded to even (1). */
    sf_f32 x = {0x3F808000u};
    sf_bf16 r = sf_f32_to_bf16(x, SF_RNE, &env);
    if (r.bits != 0x3F80u || !(env.flags & SF_FLAG_INEXACT)) {
        fprintf(stderr, "use_bf16emu: sf_f32_to_bf16 gave 0x%04X\n",
                (unsigned)r.bits);
        bad = 1;
    }

    /* attention/: the built-in description of FlashAttention-2. */
    k = fa_kernel_by_name("fa2");
    if (k == NULL || fa_kernel_check(k) != NULL) {
        fprintf(stderr, "use_bf16emu: no valid fa2 description\n");
        bad = 1;
    }

    /* analysis/: the mean of -1, 1 and 3 is 1. */
    bias_cell_init(&cell);
    bias_cell_add(&cell, -1.0);
    bias_cell_add(&cell, 1.0);
    bias_cell_add(&cell, 3.0);
    bias_summarize(&cell, &s);
    if (s.n != 3 || s.mean != 1.0) {
        fprintf(stderr, "use_bf16emu: bias_summarize gave n=%llu mean=%g\n",
                (unsigned long long)s.n, s.mean);
        bad = 1;
    }

    if (!bad)
        printf("use_bf16emu: softfloat, attention and analysis answer\n");
    return bad;
}

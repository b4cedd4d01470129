/* exh_logf.c -- fa_logf_cr against MPFR on every positive finite binary32
   (2^31 - 2^23 inputs), and the number of inputs each evaluation level
   decides; exits 1 on any mismatch or on an input decided by neither the
   double nor the long double log.  Two optional arguments (hex bit
   patterns) restrict it to the inputs LO .. HI-1. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "attention/attention.h"

int
main(int argc, char **argv)
{
    unsigned long long bad = 0, lv[4] = {0, 0, 0, 0};
    long long lo = 1, hi = 0x7F800000LL;

    if (argc == 3) {
        lo = strtoll(argv[1], NULL, 16);
        hi = strtoll(argv[2], NULL, 16);
        if (lo < 1)
            lo = 1;
        if (hi > 0x7F800000LL)
            hi = 0x7F800000LL;
    }

#pragma omp parallel reduction(+ : bad)
    {
        mpfr_t a;
        unsigned long long my[4] = {0, 0, 0, 0};

        mpfr_init2(a, 24);
#pragma omp for schedule(dynamic, 65536)
        for (long long i = lo; i < hi; i++) {
            uint32_t x = (uint32_t)i, want, got;
            float f;
            int l = fa_logf_cr_level(x);

            my[l]++;
            memcpy(&f, &x, sizeof f);
            mpfr_set_flt(a, f, MPFR_RNDN);
            mpfr_log(a, a, MPFR_RNDN);
            f = mpfr_get_flt(a, MPFR_RNDN);
            memcpy(&want, &f, sizeof want);
            got = fa_logf_cr(x);
            if (got != want || l == 3) {
#pragma omp critical
                printf("f32_log rne %08x %08x ..... got %08x ..... level %d\n",
                       (unsigned)x, (unsigned)want, (unsigned)got, l);
                bad++;
            }
        }
#pragma omp critical
        for (int k = 0; k < 4; k++)
            lv[k] += my[k];
        mpfr_clear(a);
        mpfr_free_cache();
    }
    printf("exh_logf: %llu inputs: %llu special, %llu by double, %llu by "
           "long double, %llu by neither; %llu mismatches\n",
           lv[0] + lv[1] + lv[2] + lv[3], lv[0], lv[1], lv[2], lv[3], bad);
    return bad == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

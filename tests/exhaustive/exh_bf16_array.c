/* exh_bf16_array -- every pair of BF16 operands through sf_bf16_add_array,
   sf_bf16_sub_array and sf_bf16_mul_array in RNE, and through the add
   and sub arrays in RTZ, RDN, RUP, RNA and ROD (SF_ENV_IEEE), on every
   path the CPU has (env.isa), against the scalar operations element by
   element: the bits of every result, and the flags of every run of 64
   results (make
   check-exhaustive; the scalar operations themselves are checked against
   an independent reference by exh_bf16_binary).  Arguments [stride
   [offset]]: only the leading operands offset, offset + stride, ... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softfloat/softfloat.h"
#include "tests/exhaustive/exh_paths.h"

#define CHUNK 64

int
main(int argc, char **argv)
{
    static const char *const names[3] = {"bf16_add", "bf16_sub", "bf16_mul"};
    /* the jobs: (operation, mode) */
    static const int job_op[13] = {0, 1, 2, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    static const sf_round job_rm[13] = {SF_RNE, SF_RNE, SF_RNE, SF_RTZ, SF_RDN,
                                        SF_RUP, SF_RNA, SF_ROD, SF_RTZ, SF_RDN,
                                        SF_RUP, SF_RNA, SF_ROD};
    long stride = argc > 1 ? atol(argv[1]) : 1;
    long offset = argc > 2 ? atol(argv[2]) : 0;
    long rows;
    sf_isa paths[SF_N_ISA];
    int n_paths;
    unsigned long long bad = 0, checked = 0;

    if (argc > 3 || stride < 1 || stride > 65536 || offset < 0
        || offset >= stride) {
        fprintf(stderr, "exh_bf16_array: usage: exh_bf16_array [stride "
                        "[offset]], 1 <= stride <= 65536, 0 <= offset < "
                        "stride\n");
        return 2;
    }
    rows = (65536 - offset + stride - 1) / stride;
    n_paths = exh_paths("exh_bf16_array", paths);
    printf(", %ld leading operands (stride %ld, offset %ld)\n", rows, stride,
           offset);
    fflush(stdout);

#pragma omp parallel for schedule(dynamic, 16) reduction(+ : bad, checked)
    for (long r = 0; r < rows; r++) {
        long ai = offset + r * stride;
        sf_bf16 a[CHUNK], b[CHUNK], want[CHUNK], got[CHUNK];
        for (int i = 0; i < CHUNK; i++)
            a[i].bits = (uint16_t)ai;
        for (int job = 0; job < 13; job++) {
            int op = job_op[job];
            sf_round rm = job_rm[job];
            for (uint32_t b0 = 0; b0 < 65536; b0 += CHUNK) {
                sf_env ref = SF_ENV_IEEE;
                for (int i = 0; i < CHUNK; i++) {
                    b[i].bits = (uint16_t)(b0 + (uint32_t)i);
                    want[i] = op == 0   ? (sf_bf16_add)(a[i], b[i], rm, &ref)
                              : op == 1 ? (sf_bf16_sub)(a[i], b[i], rm, &ref)
                                        : (sf_bf16_mul)(a[i], b[i], rm, &ref);
                }
                for (int p = 0; p < n_paths; p++) {
                    sf_env env = SF_ENV_IEEE;
                    env.isa = (int)paths[p];
                    if (op == 0)
                        sf_bf16_add_array(a, b, got, CHUNK, rm, &env);
                    else if (op == 1)
                        sf_bf16_sub_array(a, b, got, CHUNK, rm, &env);
                    else
                        sf_bf16_mul_array(a, b, got, CHUNK, rm, &env);
                    checked += CHUNK;
                    for (int i = 0; i < CHUNK; i++) {
                        if (got[i].bits == want[i].bits)
                            continue;
                        if (bad++ < 10) {
#pragma omp critical
                            printf("%s_array %s %s: %04x %04x gives %04x, "
                                   "want %04x\n",
                                   names[op], sf_isa_name(paths[p]),
                                   sf_round_name(rm), (unsigned)a[i].bits,
                                   (unsigned)b[i].bits, (unsigned)got[i].bits,
                                   (unsigned)want[i].bits);
                        }
                    }
                    if (env.flags != ref.flags && bad++ < 10) {
#pragma omp critical
                        printf("%s_array %s %s: a %04x, b %04x..%04x: flags "
                               "%02x, want %02x\n",
                               names[op], sf_isa_name(paths[p]),
                               sf_round_name(rm), (unsigned)ai, (unsigned)b0,
                               (unsigned)(b0 + CHUNK - 1), env.flags,
                               ref.flags);
                    }
                }
            }
        }
    }
    printf("exh_bf16_array: %llu results compared, %llu differ\n", checked,
           bad);
    return bad != 0;
}

/* exh_convert_array -- every binary32 input through sf_convert_array to
   BF16 (six modes under SF_ENV_IEEE; RNE under SF_ENV_AVX512BF16; RUP
   with FTZ alone; RDN with tininess before rounding; RNA saturating with
   the default NaN) and to FP16 (RNE and RUP under SF_ENV_IEEE, RDN with
   FTZ alone), on every path the CPU has (env.isa), against sf_convert
   element by element: the bits of every result and the flags of every
   run of 64 consecutive inputs (make check-exhaustive; sf_convert itself
   is checked against an integer reference and MPFR by exh_convert).
   Arguments [stride [offset]]: only the runs offset, offset + stride,
   ... of the 2^26 runs of 64. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softfloat/softfloat.h"
#include "tests/exhaustive/exh_paths.h"

#define CHUNK 64
#define N_RUNS ((long)1 << 26)
#define N_JOBS 13

/* Job J's environment. */
static sf_env
job_env(int j)
{
    sf_env e = SF_ENV_IEEE;

    switch (j) {
    case 6:
        return (sf_env)SF_ENV_AVX512BF16;
    case 7:
    case 12:
        e.ftz = true;
        break;
    case 8:
        e.tininess_after = false;
        break;
    case 9:
        e.saturate = true;
        e.nan_rule = SF_NAN_DEFAULT;
        break;
    default:
        break;
    }
    return e;
}

int
main(int argc, char **argv)
{
    static const sf_round job_rm[N_JOBS] = {
        SF_RNE, SF_RTZ, SF_RDN, SF_RUP, SF_RNA, SF_ROD, SF_RNE,
        SF_RUP, SF_RDN, SF_RNA, SF_RNE, SF_RUP, SF_RDN};
    long stride = argc > 1 ? atol(argv[1]) : 1;
    long offset = argc > 2 ? atol(argv[2]) : 0;
    long rows;
    sf_isa paths[SF_N_ISA];
    int n_paths;
    unsigned long long bad = 0, checked = 0;

    if (argc > 3 || stride < 1 || stride > N_RUNS || offset < 0
        || offset >= stride) {
        fprintf(stderr, "exh_convert_array: usage: exh_convert_array "
                        "[stride [offset]], 1 <= stride <= 2^26, 0 <= "
                        "offset < stride\n");
        return 2;
    }
    rows = (N_RUNS - offset + stride - 1) / stride;
    n_paths = exh_paths("exh_convert_array", paths);
    printf(", %ld runs of %d inputs (stride %ld, offset %ld)\n", rows, CHUNK,
           stride, offset);
    fflush(stdout);

#pragma omp parallel for schedule(dynamic, 256) reduction(+ : bad, checked)
    for (long r = 0; r < rows; r++) {
        uint32_t x0 = (uint32_t)(offset + r * stride) * CHUNK;
        uint32_t in[CHUNK];
        uint16_t want[CHUNK], got[CHUNK];
        for (int i = 0; i < CHUNK; i++)
            in[i] = x0 + (uint32_t)i;
        for (int job = 0; job < N_JOBS; job++) {
            const sf_format *to = job < 10 ? &sf_format_bf16 : &sf_format_f16;
            sf_round rm = job_rm[job];
            sf_env ref = job_env(job);
            for (int i = 0; i < CHUNK; i++)
                want[i] =
                    (uint16_t)sf_convert(to, &sf_format_f32, in[i], rm, &ref);
            for (int p = 0; p < n_paths; p++) {
                sf_env env = job_env(job);
                env.isa = (int)paths[p];
                sf_convert_array(to, &sf_format_f32, in, got, CHUNK, rm, &env);
                checked += CHUNK;
                for (int i = 0; i < CHUNK; i++) {
                    if (got[i] == want[i])
                        continue;
                    if (bad++ < 10) {
#pragma omp critical
                        printf("f32 -> %s array %s %s, job %d: %08lx gives "
                               "%04x, want %04x\n",
                               to->name, sf_isa_name(paths[p]),
                               sf_round_name(rm), job, (unsigned long)in[i],
                               (unsigned)got[i], (unsigned)want[i]);
                    }
                }
                if (env.flags != ref.flags && bad++ < 10) {
#pragma omp critical
                    printf("f32 -> %s array %s %s, job %d: %08lx..%08lx: "
                           "flags %02x, want %02x\n",
                           to->name, sf_isa_name(paths[p]), sf_round_name(rm),
                           job, (unsigned long)x0,
                           (unsigned long)(x0 + CHUNK - 1), env.flags,
                           ref.flags);
                }
            }
        }
    }
    printf("exh_convert_array: %llu results compared, %llu differ\n", checked,
           bad);
    return bad != 0;
}

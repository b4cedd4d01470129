/* bench_convert -- sf_convert_array FP32 -> BF16 (RNE) against the CPU's
   VCVTNEPS2BF16 (or memcpy of the same bytes where the CPU lacks it) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench/bench.h"
#include "softfloat/softfloat.h"
#include "tests/support/avx512bf16.h"

#if defined(HAVE_AVX512BF16_COMPILER) && defined(__x86_64__)                  \
    && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CVT 1

/* The hardware loop: sixteen conversions per instruction (RNE, DAZ, FTZ,
   no flags); N a multiple of 16. */
__attribute__((noinline, target("avx512bf16,avx512vl,avx512f"))) static void
cvt_hw(const uint32_t *in, uint16_t *out, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        __m512 v =
            _mm512_castsi512_ps(_mm512_loadu_si512((const void *)(in + i)));
        __m256bh r = _mm512_cvtneps_pbh(v);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), (__m256i)r);
    }
}
#else
#define HAVE_CVT 0
#endif

typedef struct
{
    const uint32_t *in;
    uint16_t *out;
    size_t n;
    int kind; /* 0 emulated, 1 VCVTNEPS2BF16, 2 memcpy */
    sf_env env;
} cvt_ctx;

static void
cvt_run(void *p, long reps)
{
    cvt_ctx *c = p;

    for (long r = 0; r < reps; r++) {
        switch (c->kind) {
        case 0:
            sf_convert_array(&sf_format_bf16, &sf_format_f32, c->in, c->out,
                             c->n, SF_RNE, &c->env);
            break;
        case 1:
#if HAVE_CVT
            cvt_hw(c->in, c->out, c->n);
#endif
            break;
        default:
            /* the output's bytes: half the input */
            memcpy(c->out, c->in, c->n * sizeof *c->out);
            break;
        }
    }
}

void
bench_convert(void)
{
    const char *missing = tst_avx512bf16_missing();
    size_t sizes[2] = {4096, (size_t)4 << 20};
    uint64_t s = 7;

    if (bench_cfg.quick)
        sizes[1] = (size_t)1 << 18;
    if (missing != NULL || !HAVE_CVT)
        fprintf(stderr, "bench: no VCVTNEPS2BF16 (%s); baseline memcpy\n",
                missing != NULL ? missing : "not built");
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        uint32_t *in = malloc(n * sizeof *in);
        uint16_t *out = malloc(n * sizeof *out);
        cvt_ctx emu, base;
        bench_side se, sb;
        double te, tb;
        char label[64];
        bool hw = missing == NULL && HAVE_CVT;

        if (in == NULL || out == NULL) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        /* normal values of every binade with random signs and fractions */
        for (size_t i = 0; i < n; i++) {
            uint64_t r = bench_next(&s);
            in[i] =
                (uint32_t)(((r >> 32) & 0x80000000u)
                           | ((1 + (r >> 24) % 253) << 23) | (r & 0x7FFFFF));
        }
        emu = (cvt_ctx){in, out, n, 0, SF_ENV_IEEE};
        base = (cvt_ctx){in, out, n, hw ? 1 : 2, SF_ENV_IEEE};
        se = (bench_side){cvt_run, &emu, (double)n, false};
        sb = (bench_side){cvt_run, &base, (double)n, false};
        bench_pair(&se, &sb, &te, &tb);
        snprintf(label, sizeof label, "f32->bf16 array n=%zu vs %s", n,
                 hw ? "VCVTNEPS2BF16" : "memcpy");
        /* the target is on speed: baseline time / emulated time >= 0.8,
           i.e. emulated time / baseline time <= 1.25 */
        bench_row(label, 1e-6 / te, 1e-6 / tb, "Melem/s", te / tb,
                  BENCH_AT_MOST, 1.25);
        free(in);
        free(out);
    }
}

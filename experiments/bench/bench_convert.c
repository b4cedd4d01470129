/* bench_convert -- sf_convert_array (RNE) on each path the CPU has
   (forced through env.isa) against memcpy of the output's bytes, the
   portable path against an element loop of sf_convert, and FP32 -> BF16
   against the CPU's VCVTNEPS2BF16 where it has one */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench/bench.h"
#include "softfloat/softfloat.h"
#include "ref/avx512bf16.h"

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

/* The paths this CPU runs, slowest first. */
static int
cpu_paths(sf_isa *paths)
{
    int n = 0;

    for (int p = SF_ISA_SCALAR; p < SF_N_ISA; p++)
        if (sf_isa_supported((sf_isa)p))
            paths[n++] = (sf_isa)p;
    return n;
}

typedef struct
{
    const sf_format *to, *from;
    const void *in;
    void *out;
    size_t n;
    int kind; /* 0 sf_convert_array, 1 VCVTNEPS2BF16, 2 memcpy of the
                 output's bytes, 3 an element loop of sf_convert, 4 memcpy
                 of the input's bytes */
    sf_env env;
} cvt_ctx;

static void
cvt_run(void *p, long reps)
{
    cvt_ctx *c = p;
    unsigned bi = c->from->storage_bits / 8, bo = c->to->storage_bits / 8;

    for (long r = 0; r < reps; r++) {
        switch (c->kind) {
        case 0:
            sf_convert_array(c->to, c->from, c->in, c->out, c->n, SF_RNE,
                             &c->env);
            break;
        case 1:
#if HAVE_CVT
            cvt_hw(c->in, c->out, c->n);
#endif
            break;
        case 2:
            memcpy(c->out, c->in, c->n * bo);
            break;
        case 4: /* the input's bytes (OUT has room: see bench_convert) */
            memcpy(c->out, c->in, c->n * bi);
            break;
        default:
            /* what sf_convert_array did before it had paths: one
               sf_convert per element */
            for (size_t i = 0; i < c->n; i++) {
                uint64_t x = 0, z;
                memcpy(&x, (const char *)c->in + i * bi, bi);
                z = sf_convert(c->to, c->from, x, SF_RNE, &c->env);
                memcpy((char *)c->out + i * bo, &z, bo);
            }
            break;
        }
    }
}

/* N inputs of format FROM: normal values whose conversion is normal (for
   a narrowing, FP32 values in the target's exponent range), random signs
   and fractions. */
static void *
make_inputs(const sf_format *to, const sf_format *from, size_t n, uint64_t *s)
{
    void *in = bench_xmalloc(n * (from->storage_bits / 8));
    int lo = 1, span = (1 << from->exp_bits) - 3;

    if (from == &sf_format_f32 && to != &sf_format_f32) {
        lo = 127 - to->bias + 1;
        span = (1 << to->exp_bits) - 4;
        if (lo + span > 253)
            span = 253 - lo;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t r = bench_next(s);
        uint64_t sign = (r >> 63) & 1;
        uint64_t e = (uint64_t)lo + (r >> 32) % (uint64_t)span;
        uint64_t v = (sign << (from->storage_bits - 1))
                     | (e << from->frac_bits)
                     | (r & (((uint64_t)1 << from->frac_bits) - 1));
        memcpy((char *)in + i * (from->storage_bits / 8), &v,
               from->storage_bits / 8);
    }
    return in;
}

/* Data as real tensors hold it, from the clean inputs IN (N elements of
   FP32, target TO): KIND 1 sets one element in each 64 to +-0, KIND 2 one
   in each 64 to a subnormal, KIND 3 mixes in, element by element, 30%
   zeros, 5% subnormals, 1% each of Inf, NaN (quiet and signalling, with
   payloads) and values that overflow TO. */
static void
dirty_inputs(const sf_format *to, uint32_t *in, size_t n, int kind,
             uint64_t *s)
{
    /* the largest FP32 below TO's overflow threshold's neighbourhood: a
       value of TO's largest binade with every fraction bit set, which
       rounds past the largest finite value in RNE */
    uint32_t ovf = to == &sf_format_bf16 ? 0x7F7FFFFFu : 0x477FF000u;

    for (size_t i = 0; i < n; i++) {
        uint64_t r = bench_next(s);
        uint32_t sign = (uint32_t)(r >> 63) << 31;
        uint32_t frac = (uint32_t)r & 0x7FFFFF;
        unsigned pick = (unsigned)((r >> 32) % 1000);
        if (kind == 1 || kind == 2) {
            if (i % 64 != (size_t)((r >> 40) % 64) && i % 64 != 63)
                continue;
            /* one per block of 64: at the drawn place or, failing that,
               the last */
            in[i] = kind == 1 ? sign : sign | (frac | 1);
            i += 63 - i % 64;
            continue;
        }
        if (pick < 300)
            in[i] = sign;
        else if (pick < 350)
            in[i] = sign | (frac | 1);
        else if (pick < 360)
            in[i] = sign | 0x7F800000u;
        else if (pick < 370)
            in[i] = sign | 0x7F800000u | (frac | 1);
        else if (pick < 380)
            in[i] = sign | ovf;
    }
}

static double
time_side(cvt_ctx *c, const cvt_ctx *base, double *tb)
{
    bench_side se = {cvt_run, c, (double)c->n, false};
    cvt_ctx b = *base;
    bench_side sb = {cvt_run, &b, (double)b.n, false};
    double te;

    bench_pair(&se, &sb, &te, tb);
    return te;
}

/* FP32 to BF16 and FP16 on clean data and on data with zeros,
   subnormals, Inf, NaN and overflow (dirty_inputs), each path the CPU
   has; each dirty row's ratio is its time over the clean data's in the
   same round. */
static void
bench_convert_data(void)
{
    static const char *const what[4] = {"clean", "zero 1/64", "subn 1/64",
                                        "mixed"};
    static const sf_format *const targets[2] = {&sf_format_bf16,
                                                &sf_format_f16};
    size_t n = bench_cfg.quick ? (size_t)1 << 18 : (size_t)4 << 20;
    sf_isa paths[SF_N_ISA];
    int n_paths = cpu_paths(paths);

    for (int t = 0; t < 2; t++) {
        const sf_format *to = targets[t];
        uint64_t s = 11;
        void *in[4], *out = bench_xmalloc(n * 2);
        in[0] = make_inputs(to, &sf_format_f32, n, &s);
        for (int k = 1; k < 4; k++) {
            in[k] = make_inputs(to, &sf_format_f32, n, &s);
            dirty_inputs(to, in[k], n, k, &s);
        }
        for (int p = 0; p < n_paths; p++) {
            cvt_ctx clean = {to, &sf_format_f32, in[0], out, n, 0,
                             SF_ENV_IEEE};
            char label[80];
            clean.env.isa = (int)paths[p];
            for (int k = 1; k < 4; k++) {
                cvt_ctx dirty = clean;
                double te, tb;
                dirty.in = in[k];
                te = time_side(&dirty, &clean, &tb);
                if (k == 1) {
                    snprintf(label, sizeof label,
                             "f32->%s n=%zu %s %s ns/elem", to->name, n,
                             sf_isa_name(paths[p]), what[0]);
                    bench_row_alone(label, 1e-6 / tb, "Melem/s", tb * 1e9,
                                    BENCH_NONE, 0);
                }
                snprintf(label, sizeof label, "f32->%s n=%zu %s %s vs clean",
                         to->name, n, sf_isa_name(paths[p]), what[k]);
                bench_row(label, 1e-6 / te, 1e-6 / tb, "Melem/s", te / tb,
                          BENCH_NONE, 0);
            }
        }
        for (int k = 0; k < 4; k++)
            free(in[k]);
        free(out);
    }
}

void
bench_convert(void)
{
    static const sf_format *const pairs[6][2] = {
        {&sf_format_bf16, &sf_format_f32}, {&sf_format_f16, &sf_format_f32},
        {&sf_format_e4m3, &sf_format_f32}, {&sf_format_e5m2, &sf_format_f32},
        {&sf_format_f32, &sf_format_bf16}, {&sf_format_f32, &sf_format_f16}};
    const char *missing = ref_avx512bf16_missing();
    bool hw = missing == NULL && HAVE_CVT;
    size_t sizes[2] = {4096, (size_t)4 << 20};
    sf_isa paths[SF_N_ISA];
    int n_paths = cpu_paths(paths);
    uint64_t s = 7;

    if (bench_cfg.quick)
        sizes[1] = (size_t)1 << 18;
    if (!hw)
        fprintf(stderr, "bench: no VCVTNEPS2BF16 (%s)\n",
                missing != NULL ? missing : "not built");
    for (int pr = 0; pr < 6; pr++) {
        const sf_format *to = pairs[pr][0], *from = pairs[pr][1];
        for (int k = 0; k < 2; k++) {
            size_t n = sizes[k];
            void *in, *out;
            cvt_ctx emu, base;
            char label[64];
            double te, tb;
            if (k == 1 && pr != 0) /* memory-bound row: FP32 -> BF16 */
                continue;
            in = make_inputs(to, from, n, &s);
            /* room for a copy of the input too (the memcpy baselines) */
            out = bench_xmalloc(n * 4);
            emu = (cvt_ctx){to, from, in, out, n, 0, SF_ENV_IEEE};
            base = (cvt_ctx){to, from, in, out, n, 2, SF_ENV_IEEE};
            for (int p = 0; p < n_paths; p++) {
                emu.env.isa = (int)paths[p];
                te = time_side(&emu, &base, &tb);
                snprintf(label, sizeof label, "%s->%s n=%zu %s vs memcpy",
                         from->name, to->name, n, sf_isa_name(paths[p]));
                /* no target: the memory-bound target is against a copy
                   of the input (below) */
                bench_row(label, 1e-6 / te, 1e-6 / tb, "Melem/s", te / tb,
                          BENCH_NONE, 0);
                if (k == 0) {
                    snprintf(label, sizeof label, "%s->%s n=%zu %s ns/elem",
                             from->name, to->name, n, sf_isa_name(paths[p]));
                    bench_row_alone(label, 1e-6 / te, "Melem/s", te * 1e9,
                                    paths[p] == SF_ISA_AVX2 ? BENCH_AT_MOST
                                                            : BENCH_NONE,
                                    0.5);
                }
            }
            if (k == 1) {
                /* the memory-bound target: at least 0.8 of the element
                   rate of memcpy of the input array (4 bytes read and 4
                   written per element, where the conversion reads 4 and
                   writes 2), i.e. at most 1.25 times its time */
                cvt_ctx cin = base;
                cin.kind = 4;
                for (int p = 0; p < n_paths; p++) {
                    emu.env.isa = (int)paths[p];
                    te = time_side(&emu, &cin, &tb);
                    snprintf(label, sizeof label,
                             "%s->%s n=%zu %s vs memcpy in", from->name,
                             to->name, n, sf_isa_name(paths[p]));
                    bench_row(label, 1e-6 / te, 1e-6 / tb, "Melem/s", te / tb,
                              paths[p] == SF_ISA_AVX2 ? BENCH_AT_MOST
                                                      : BENCH_NONE,
                              1.25);
                }
            }
            if (k == 0) {
                /* the portable path against the element loop */
                cvt_ctx loop = emu;
                loop.kind = 3;
                emu.env.isa = SF_ISA_SCALAR;
                te = time_side(&emu, &loop, &tb);
                snprintf(label, sizeof label,
                         "%s->%s n=%zu scalar vs sf_convert loop", from->name,
                         to->name, n);
                bench_row(label, 1e-6 / te, 1e-6 / tb, "Melem/s", te / tb,
                          BENCH_AT_MOST, 1.0 / 3);
            }
            if (pr == 0 && hw) {
                cvt_ctx cv = emu;
                cv.kind = 1;
                emu.env.isa = SF_ISA_AUTO;
                te = time_side(&emu, &cv, &tb);
                snprintf(label, sizeof label,
                         "f32->bf16 n=%zu %s vs VCVTNEPS2BF16", n,
                         sf_isa_name(sf_isa_cpu()));
                bench_row(label, 1e-6 / te, 1e-6 / tb, "Melem/s", te / tb,
                          BENCH_NONE, 0);
            }
            free(in);
            free(out);
        }
    }
    bench_convert_data();
}

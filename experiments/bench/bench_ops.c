/* bench_ops -- scalar operations against native float arithmetic and
   MPFR, and the cost of rounding events */
#define _POSIX_C_SOURCE 200809L
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench/bench.h"
#include "softfloat/softfloat.h"

#define N_OPS 4096
#define MAX_EVENT_RUNS 16

/*----------------------------------------------------------------------------
 * Operands: finite normal values in a few binades around 1 (as in
 * bench_events.c, with a random sign on every operand), as BF16 and FP32
 * bits, and the same values as host floats for the native loops and as
 * MPFR numbers.
 *--------------------------------------------------------------------------*/
static uint16_t a16[N_OPS], b16[N_OPS], c16[N_OPS], r16[N_OPS];
static uint16_t ah[N_OPS], bh[N_OPS], ch[N_OPS];
static uint32_t a32[N_OPS], b32[N_OPS], c32[N_OPS], r32[N_OPS];
static float fa16[N_OPS], fb16[N_OPS], fa32[N_OPS], fb32[N_OPS], fc32[N_OPS],
    fr[N_OPS];

static void
make_operands(void)
{
    uint64_t s = 1;

    for (int i = 0; i < N_OPS; i++) {
        a16[i] = (uint16_t)(0x3C00 + (bench_next(&s) & 0x07FF)
                            + ((bench_next(&s) & 1) << 15));
        b16[i] = (uint16_t)(0x3C00 + (bench_next(&s) & 0x07FF)
                            + ((bench_next(&s) & 1) << 15));
        a32[i] = (uint32_t)(0x3C000000 + (bench_next(&s) & 0x07FFFFFF)
                            + ((bench_next(&s) & 1) << 31));
        b32[i] = (uint32_t)(0x3C000000 + (bench_next(&s) & 0x07FFFFFF)
                            + ((bench_next(&s) & 1) << 31));
        c32[i] = (uint32_t)(0x3C000000 + (bench_next(&s) & 0x07FFFFFF)
                            + ((bench_next(&s) & 1) << 31));
        c16[i] = (uint16_t)(0x3C00 + (bench_next(&s) & 0x07FF)
                            + ((bench_next(&s) & 1) << 15));
        ah[i] = (uint16_t)(0x3000 + (bench_next(&s) & 0x1FFF)
                           + ((bench_next(&s) & 1) << 15));
        bh[i] = (uint16_t)(0x3000 + (bench_next(&s) & 0x1FFF)
                           + ((bench_next(&s) & 1) << 15));
        ch[i] = (uint16_t)(0x3000 + (bench_next(&s) & 0x1FFF)
                           + ((bench_next(&s) & 1) << 15));
        fa16[i] = sf_host_float((uint32_t)a16[i] << 16);
        fb16[i] = sf_host_float((uint32_t)b16[i] << 16);
        fa32[i] = sf_host_float(a32[i]);
        fb32[i] = sf_host_float(b32[i]);
        fc32[i] = sf_host_float(c32[i]);
    }
}

/*----------------------------------------------------------------------------
 * Emulated loops: one library call per element, result stored, RNE,
 * flags on, no event sink (unless the context has one).
 *--------------------------------------------------------------------------*/
typedef struct
{
    int op; /* 0 bf16_add, 1 bf16_mul, 2 f32_add, 3 f32_fma, 4 bf16_add
               called out of line */
    sf_env env;
} emu_ctx;

static void
emu_run(void *p, long reps)
{
    emu_ctx *c = p;
    sf_env *env = &c->env;

    for (long r = 0; r < reps; r++) {
        switch (c->op) {
        case 0:
            for (int i = 0; i < N_OPS; i++)
                r16[i] = sf_bf16_add((sf_bf16){a16[i]}, (sf_bf16){b16[i]},
                                     SF_RNE, env)
                             .bits;
            break;
        case 1:
            for (int i = 0; i < N_OPS; i++)
                r16[i] = sf_bf16_mul((sf_bf16){a16[i]}, (sf_bf16){b16[i]},
                                     SF_RNE, env)
                             .bits;
            break;
        case 4: /* the library's function, not the inline fast path */
            for (int i = 0; i < N_OPS; i++)
                r16[i] = (sf_bf16_add)((sf_bf16){a16[i]}, (sf_bf16){b16[i]},
                                       SF_RNE, env)
                             .bits;
            break;
        case 2:
            for (int i = 0; i < N_OPS; i++)
                r32[i] =
                    sf_f32_add((sf_f32){a32[i]}, (sf_f32){b32[i]}, SF_RNE, env)
                        .bits;
            break;
        case 3:
            for (int i = 0; i < N_OPS; i++)
                r32[i] = sf_f32_fma((sf_f32){a32[i]}, (sf_f32){b32[i]},
                                    (sf_f32){c32[i]}, SF_RNE, env)
                             .bits;
            break;
        }
    }
}

/*----------------------------------------------------------------------------
 * Native loops.  The optimize attribute turns the vectoriser off for
 * these functions only, so each element costs one scalar instruction
 * (addss, mulss, vfmadd...ss) plus its loads and store, as the emulated
 * loop does one call per element; noinline keeps the loop a loop.
 *--------------------------------------------------------------------------*/
#define SCALAR_LOOP                                                           \
    __attribute__((noinline,                                                  \
                   optimize("no-tree-vectorize", "no-tree-slp-vectorize")))

SCALAR_LOOP static void
native_add(const float *a, const float *b, float *z, int n)
{
    for (int i = 0; i < n; i++)
        z[i] = a[i] + b[i];
}

SCALAR_LOOP static void
native_mul(const float *a, const float *b, float *z, int n)
{
    for (int i = 0; i < n; i++)
        z[i] = a[i] * b[i];
}

#if defined(__x86_64__) && defined(__GNUC__)
/* the hardware FMA instruction (the CPU is checked before use) */
SCALAR_LOOP __attribute__((target("fma"))) static void
native_fma(const float *a, const float *b, const float *c, float *z, int n)
{
    for (int i = 0; i < n; i++)
        z[i] = __builtin_fmaf(a[i], b[i], c[i]);
}
#define HAVE_NATIVE_FMA 1
#else
#define HAVE_NATIVE_FMA 0
#endif

typedef struct
{
    int op;
} native_ctx;

static void
native_run(void *p, long reps)
{
    native_ctx *c = p;

    for (long r = 0; r < reps; r++) {
        switch (c->op) {
        case 0:
            native_add(fa16, fb16, fr, N_OPS);
            break;
        case 1:
            native_mul(fa16, fb16, fr, N_OPS);
            break;
        case 2:
            native_add(fa32, fb32, fr, N_OPS);
            break;
        default:
#if HAVE_NATIVE_FMA
            native_fma(fa32, fb32, fc32, fr, N_OPS);
#endif
            break;
        }
    }
}

/* The names of native_run's operations. */
static const char *const native_names[4] = {"float add", "float mul",
                                            "float add", "fmaf"};

/* Whether native_run's fmaf (op 3) can run on this CPU. */
static bool
have_native_fma(void)
{
#if HAVE_NATIVE_FMA
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") != 0;
#else
    return false;
#endif
}

/*----------------------------------------------------------------------------
 * MPFR: the same correctly rounded operation at the format's precision
 * and exponent range, with mpfr_subnormalize.  Two ways: "bits", the
 * whole operation from operand bits to result bits (operands set from
 * the floats they widen to, the result read back as a float, exactly;
 * flags are MPFR's own sticky flags), and "core", the operation alone on
 * operands converted beforehand, the result left in an MPFR number
 * (MPFR's best case).
 *--------------------------------------------------------------------------*/
typedef struct
{
    int op;
    bool full;
    const float *fa, *fb, *fc; /* the operands as floats */
    mpfr_t *a, *b, *c, *z;     /* core: N_OPS numbers each */
    mpfr_t x, y, w, r;         /* bits: one of each */
} mp_ctx;

static int
mp_op(int op, mpfr_t z, mpfr_t a, mpfr_t b, mpfr_t c)
{
    switch (op) {
    case 0:
    case 2:
        return mpfr_add(z, a, b, MPFR_RNDN);
    case 1:
        return mpfr_mul(z, a, b, MPFR_RNDN);
    default:
        return mpfr_fma(z, a, b, c, MPFR_RNDN);
    }
}

static void
mp_run(void *p, long reps)
{
    mp_ctx *c = p;
    bool bf = c->op < 2;

    /* bf16 and f32 share the exponent range: emin -132 / -148 for the
       smallest subnormal 2^-133 / 2^-149 (MPFR's x = m 2^e, m in [1/2,
       1)), emax 128 */
    mpfr_set_emin(bf ? -132 : -148);
    mpfr_set_emax(128);
    for (long r = 0; r < reps; r++) {
        if (!c->full) {
            for (int i = 0; i < N_OPS; i++)
                mpfr_subnormalize(
                    c->z[i], mp_op(c->op, c->z[i], c->a[i], c->b[i], c->c[i]),
                    MPFR_RNDN);
            continue;
        }
        for (int i = 0; i < N_OPS; i++) {
            float f;
            uint32_t u;
            mpfr_set_flt(c->x, c->fa[i], MPFR_RNDN);
            mpfr_set_flt(c->y, c->fb[i], MPFR_RNDN);
            if (c->op == 3)
                mpfr_set_flt(c->w, c->fc[i], MPFR_RNDN);
            mpfr_subnormalize(c->r, mp_op(c->op, c->r, c->x, c->y, c->w),
                              MPFR_RNDN);
            f = mpfr_get_flt(c->r, MPFR_RNDN);
            memcpy(&u, &f, sizeof u);
            if (bf)
                r16[i] = (uint16_t)(u >> 16);
            else
                r32[i] = u;
        }
    }
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
}

static mpfr_t *
mp_array(const float *v, mpfr_prec_t prec)
{
    mpfr_t *x = bench_xmalloc(N_OPS * sizeof *x);

    for (int i = 0; i < N_OPS; i++) {
        mpfr_init2(x[i], prec);
        if (v != NULL)
            mpfr_set_flt(x[i], v[i], MPFR_RNDN);
        else
            mpfr_set_zero(x[i], 1);
    }
    return x;
}

static void
mp_free(mpfr_t *x)
{
    for (int i = 0; i < N_OPS; i++)
        mpfr_clear(x[i]);
    free(x);
}

void
bench_scalar(void)
{
    static const char *const names[4] = {"bf16_add", "bf16_mul", "f32_add",
                                         "f32_fma"};
    bool have_fma = have_native_fma();

    make_operands();
    for (int op = 0; op < 4; op++) {
        emu_ctx ec = {op, SF_ENV_IEEE};
        native_ctx nc = {op};
        bench_side emu = {emu_run, &ec, N_OPS, false},
                   nat = {native_run, &nc, N_OPS, false};
        double te, tn, tm;
        char label[64];
        bool bf = op < 2;
        mpfr_prec_t prec = bf ? 8 : 24;
        mp_ctx mc;
        bench_side mp = {mp_run, &mc, N_OPS, false};

        memset(&mc, 0, sizeof mc);
        mc.op = op;
        mc.fa = bf ? fa16 : fa32;
        mc.fb = bf ? fb16 : fb32;
        mc.fc = fc32;
        mc.a = mp_array(mc.fa, prec);
        mc.b = mp_array(mc.fb, prec);
        mc.c = mp_array(mc.fc, prec);
        mc.z = mp_array(NULL, prec);
        mpfr_inits2(prec, mc.x, mc.y, mc.w, mc.r, (mpfr_ptr)0);
        if (op < 3 || have_fma) {
            bench_pair(&emu, &nat, &te, &tn);
            snprintf(label, sizeof label, "%s vs native %s", names[op],
                     native_names[op]);
            /* the target covers the BF16 operations only */
            bench_row(label, 1e-6 / te, 1e-6 / tn, "Mop/s", te / tn,
                      bf ? BENCH_AT_MOST : BENCH_NONE, 8);
        }
        for (int full = 1; full >= 0; full--) {
            mc.full = full;
            bench_pair(&emu, &mp, &te, &tm);
            snprintf(label, sizeof label, "%s vs MPFR (%s)", names[op],
                     full ? "bits in/out" : "core");
            /* the target: at least 40 times faster than MPFR */
            bench_row(label, 1e-6 / te, 1e-6 / tm, "Mop/s", te / tm,
                      bf && full ? BENCH_AT_MOST : BENCH_NONE, 1.0 / 40);
        }
        if (op == 0) {
            /* the inline fast path of softfloat_inline.h against a call
               of the library's function */
            emu_ctx oc = {4, SF_ENV_IEEE};
            bench_side call = {emu_run, &oc, N_OPS, false};
            double tc;
            bench_pair(&emu, &call, &te, &tc);
            bench_row("bf16_add inline vs library call", 1e-6 / te, 1e-6 / tc,
                      "Mop/s", te / tc, BENCH_NONE, 0);
        }
        mpfr_clears(mc.x, mc.y, mc.w, mc.r, (mpfr_ptr)0);
        mp_free(mc.a);
        mp_free(mc.b);
        mp_free(mc.c);
        mp_free(mc.z);
    }
}

/*----------------------------------------------------------------------------
 * Events: a sink that only counts, against no sink; and the hook with no
 * sink against a build without the hook (two programs, run alternately).
 *--------------------------------------------------------------------------*/
static void
count_event(void *user, const sf_event *ev)
{
    (void)ev;
    ++*(unsigned long *)user;
}

/* Runs PROG with LABEL and collects "label op ns" lines into NS[op]. */
static int
run_events_prog(const char *prog, const char *label, double ns[4])
{
    static const char *const names[4] = {"bf16_add", "bf16_mul", "f32_add",
                                         "f32_fma"};
    char cmd[4096], line[256];
    FILE *p;
    int got = 0;

    snprintf(cmd, sizeof cmd, "'%s' %s", prog, label);
    p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    while (fgets(line, sizeof line, p) != NULL) {
        char lab[64], op[64];
        double v;
        if (sscanf(line, "%63s %63s %lf", lab, op, &v) != 3)
            continue;
        for (int i = 0; i < 4; i++)
            if (strcmp(op, names[i]) == 0) {
                ns[i] = v;
                got |= 1 << i;
            }
    }
    if (pclose(p) != 0 || got != 15)
        return -1;
    return 0;
}

void
bench_events(const char *hook_prog, const char *nohook_prog)
{
    static const char *const names[4] = {"bf16_add", "bf16_mul", "f32_add",
                                         "f32_fma"};
    unsigned long count = 0;
    sf_event_sink sink = {count_event, &count};

    make_operands();
    for (int op = 0; op < 4; op += 3) {
        emu_ctx on = {op, SF_ENV_IEEE}, off = {op, SF_ENV_IEEE};
        bench_side son = {emu_run, &on, N_OPS, false},
                   soff = {emu_run, &off, N_OPS, false};
        double ton, toff;
        char label[64];
        on.env.events = &sink;
        bench_pair(&son, &soff, &ton, &toff);
        snprintf(label, sizeof label, "%s events on vs off", names[op]);
        bench_row(label, 1e-6 / ton, 1e-6 / toff, "Mop/s", ton / toff,
                  BENCH_NONE, 0);
    }
    if (hook_prog != NULL && nohook_prog != NULL) {
        double h[MAX_EVENT_RUNS][4], x[MAX_EVENT_RUNS][4];
        int n = bench_cfg.rounds;
        if (n > MAX_EVENT_RUNS)
            n = MAX_EVENT_RUNS;
        for (int i = 0; i < n; i++) {
            if (run_events_prog(hook_prog, "hook", h[i]) != 0
                || run_events_prog(nohook_prog, "nohook", x[i]) != 0) {
                fprintf(stderr, "bench: cannot run %s or %s\n", hook_prog,
                        nohook_prog);
                return;
            }
        }
        for (int op = 0; op < 4; op++) {
            double vh[MAX_EVENT_RUNS], vx[MAX_EVENT_RUNS], mh, mx;
            char label[64];
            for (int i = 0; i < n; i++) {
                vh[i] = h[i][op];
                vx[i] = x[i][op];
            }
            mh = bench_median(vh, n);
            mx = bench_median(vx, n);
            snprintf(label, sizeof label, "%s events off vs no hook",
                     names[op]);
            bench_row(label, 1e3 / mh, 1e3 / mx, "Mop/s", mh / mx,
                      BENCH_AT_MOST, 1.03);
        }
    }
}

/*----------------------------------------------------------------------------
 * Array arithmetic: sf_<fmt>_<op>_array over the same 4096 operands on
 * each path the CPU has (forced through env.isa), against the native
 * scalar loop of the operation (one instruction per element).
 *--------------------------------------------------------------------------*/
typedef struct
{
    int op; /* 0 bf16 add, 1 bf16 mul, 2 bf16 fma, 3 f16 add, 4 f32 add,
               5 f32 mul, 6 f32 fma */
    sf_env env;
    const uint16_t *x16; /* the first operand of the BF16 ops (a16 unless
                            set) */
    const uint32_t *x32; /* of the FP32 ops (a32 unless set) */
} arr_ctx;

static void
arr_run(void *p, long reps)
{
    arr_ctx *c = p;
    sf_env *env = &c->env;
    const uint16_t *x16 = c->x16 != NULL ? c->x16 : a16;
    const uint32_t *x32 = c->x32 != NULL ? c->x32 : a32;

    for (long r = 0; r < reps; r++) {
        switch (c->op) {
        case 0:
            sf_bf16_add_array((const sf_bf16 *)x16, (const sf_bf16 *)b16,
                              (sf_bf16 *)r16, N_OPS, SF_RNE, env);
            break;
        case 1:
            sf_bf16_mul_array((const sf_bf16 *)x16, (const sf_bf16 *)b16,
                              (sf_bf16 *)r16, N_OPS, SF_RNE, env);
            break;
        case 2:
            sf_bf16_fma_array((const sf_bf16 *)x16, (const sf_bf16 *)b16,
                              (const sf_bf16 *)c16, (sf_bf16 *)r16, N_OPS,
                              SF_RNE, env);
            break;
        case 3:
            sf_f16_add_array((const sf_f16 *)ah, (const sf_f16 *)bh,
                             (sf_f16 *)r16, N_OPS, SF_RNE, env);
            break;
        case 4:
            sf_f32_add_array((const sf_f32 *)x32, (const sf_f32 *)b32,
                             (sf_f32 *)r32, N_OPS, SF_RNE, env);
            break;
        case 5:
            sf_f32_mul_array((const sf_f32 *)x32, (const sf_f32 *)b32,
                             (sf_f32 *)r32, N_OPS, SF_RNE, env);
            break;
        default:
            sf_f32_fma_array((const sf_f32 *)x32, (const sf_f32 *)b32,
                             (const sf_f32 *)c32, (sf_f32 *)r32, N_OPS, SF_RNE,
                             env);
            break;
        }
    }
}

/* The BF16 and FP32 array calls with one zero, or one subnormal, in each
   64 elements of the first operand, against the same call on the clean
   operands in the same round (their ratio: the cost of such data). */
static void
bench_arrays_data(void)
{
    static const int ops[6] = {0, 1, 2, 4, 5, 6};
    static const char *const names[7] = {
        "bf16_add_array", "bf16_mul_array", "bf16_fma_array", "f16_add_array",
        "f32_add_array",  "f32_mul_array",  "f32_fma_array"};
    static const char *const what[2] = {"zero 1/64", "subn 1/64"};
    static uint16_t d16[2][N_OPS];
    static uint32_t d32[2][N_OPS];
    uint64_t s = 5;

    for (int k = 0; k < 2; k++) {
        memcpy(d16[k], a16, sizeof a16);
        memcpy(d32[k], a32, sizeof a32);
        for (int i = 0; i < N_OPS; i += 64) {
            uint64_t r = bench_next(&s);
            int at = i + (int)(r % 64);
            uint16_t sign16 = (uint16_t)((r >> 8) & 1) << 15;
            uint32_t sign32 = (uint32_t)sign16 << 16;
            /* +-0, or a subnormal: a fraction that is not zero */
            d16[k][at] =
                (uint16_t)(sign16 | (k == 0 ? 0 : 1 + (r >> 16) % 0x7F));
            d32[k][at] =
                sign32 | (k == 0 ? 0 : 1 + (uint32_t)(r >> 16) % 0x7FFFFF);
        }
    }
    for (int o = 0; o < 6; o++) {
        for (int p = SF_ISA_SCALAR; p < SF_N_ISA; p++) {
            if (!sf_isa_supported((sf_isa)p))
                continue;
            for (int k = 0; k < 2; k++) {
                arr_ctx clean = {ops[o], SF_ENV_IEEE, NULL, NULL}, dirty;
                bench_side se, sb = {arr_run, &clean, N_OPS, false};
                double te, tb;
                char label[64];
                clean.env.isa = p;
                dirty = clean;
                dirty.x16 = d16[k];
                dirty.x32 = d32[k];
                se = (bench_side){arr_run, &dirty, N_OPS, false};
                bench_pair(&se, &sb, &te, &tb);
                snprintf(label, sizeof label, "%s %s %s vs clean",
                         names[ops[o]], sf_isa_name((sf_isa)p), what[k]);
                bench_row(label, 1e-6 / te, 1e-6 / tb, "Mop/s", te / tb,
                          BENCH_NONE, 0);
            }
        }
    }
}

void
bench_arrays(void)
{
    static const char *const names[7] = {
        "bf16_add_array", "bf16_mul_array", "bf16_fma_array", "f16_add_array",
        "f32_add_array",  "f32_mul_array",  "f32_fma_array"};
    /* the native loop of the same operation (bench_scalar's ops) */
    static const int native_op[7] = {0, 1, 3, 0, 2, 1, 3};
    bool have_fma = have_native_fma();

    make_operands();
    for (int op = 0; op < 7; op++) {
        for (int p = SF_ISA_SCALAR; p < SF_N_ISA; p++) {
            arr_ctx ac = {op, SF_ENV_IEEE, NULL, NULL};
            native_ctx nc = {native_op[op]};
            bench_side emu = {arr_run, &ac, N_OPS, false},
                       nat = {native_run, &nc, N_OPS, false};
            double te, tn;
            char label[64];
            if (!sf_isa_supported((sf_isa)p)
                || (native_op[op] == 3 && !have_fma))
                continue;
            ac.env.isa = p;
            bench_pair(&emu, &nat, &te, &tn);
            snprintf(label, sizeof label, "%s %s vs native %s", names[op],
                     sf_isa_name((sf_isa)p), native_names[native_op[op]]);
            bench_row(label, 1e-6 / te, 1e-6 / tn, "Mop/s", te / tn,
                      BENCH_NONE, 0);
            if (op == 0) {
                /* the AVX2 target: at most 1 ns per element */
                snprintf(label, sizeof label, "%s %s ns/elem", names[op],
                         sf_isa_name((sf_isa)p));
                bench_row_alone(label, 1e-6 / te, "Mop/s", te * 1e9,
                                p == SF_ISA_AVX2 ? BENCH_AT_MOST : BENCH_NONE,
                                1);
            }
        }
    }
    bench_arrays_data();
}

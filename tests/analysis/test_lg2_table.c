/* test_lg2_table.c -- the lg2-sm90 log model (analysis/data/lg2-sm90.bin.gz
   through ax_lg2_model and the attention layer's table rule) against outputs
   of the H200's lg2.approx.f32 and lg2.approx.ftz.f32
   (tests/data/gpu/lg2_h200.safetensors: special inputs, inputs on every
   corrected mantissa, subnormals, all exponents; and the 2^15 lg2
   samples of tests/data/gpu/ex2_h200.safetensors, measured on another
   day), the loader against damaged files, and the LSE of PyTorch's flash
   kernel, fma(m, scale, __logf(l)), recomputed from the fa2 forward's
   final m and l against the LSE of the SDPA dumps (the six of
   tests/data/gpu and the nine one-split BF16 ones of its sdpa_ext). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ex2_table.h"
#include "analysis/dump_inputs.h"
#include "analysis/lg2_table.h"
#include "analysis/tensor.h"
#include "attention/attention.h"
#include "softfloat/softfloat.h"
#include "tests/support/gzfile.h"
#include "tests/support/suite.h"
#include "tests/support/tables.h"

#define G SRCDIR "/tests/data/gpu/"

static const tensor *
find(const tensor_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i].tensor;
    ck_abort_msg("no tensor %s", name);
    return NULL;
}

/* Every sample of one variant; returns the number of mismatches, and in
   *NCORR how many samples the corrections decide (the model without
   them differs). */
static unsigned
check_variant(const ax_lg2_table *tab, bool ftz, const tensor *xs,
              const tensor *ys, unsigned *ncorr, unsigned *nsub)
{
    fa_lg2_table t, plain;
    fa_log_model m;
    unsigned bad = 0;

    ax_lg2_model(tab, ftz, &t, &m);
    ck_assert_ptr_null(fa_lg2_table_check(&t));
    ck_assert_str_eq(m.name, ftz ? "lg2-sm90-ftz" : "lg2-sm90");
    plain = t;
    plain.ncorr = 0;
    for (uint64_t i = 0; i < xs->n_elems; i++) {
        uint32_t x = (uint32_t)tensor_get_bits(xs, i);
        uint32_t hw = (uint32_t)tensor_get_bits(ys, i);
        uint32_t got = fa_lg2_table_eval(&t, x);
        if (fa_lg2_table_eval(&plain, x) != hw)
            (*ncorr)++;
        if ((x & 0x7F800000u) == 0 && (x & 0x7FFFFFu) != 0 && !(x >> 31))
            (*nsub)++;
        if (got != hw && bad++ < 10)
            printf("%s: x %08x: H200 %08x, model %08x\n",
                   ftz ? "lg2.approx.ftz.f32" : "lg2.approx.f32", x, hw, got);
    }
    return bad;
}

START_TEST(test_against_h200)
{
    static const struct
    {
        const char *file, *x, *y, *yf;
        uint64_t n;
    } sets[] = {
        {G "lg2_h200.safetensors", "lg2.x", "lg2.approx", "lg2.approx_ftz",
         29720},
        {G "ex2_h200.safetensors", "lg2.x", "lg2.approx", "lg2.approx_ftz",
         32768},
    };
    ax_lg2_table tab;
    char err[512];

    ck_assert_msg(
        ax_lg2_table_load(tst_lg2_table_path(), &tab, err, sizeof err) == 0,
        "%s", err);
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        tensor_file f;
        tensor_error terr;
        unsigned bad, nc = 0, ncf = 0, sub = 0, subf = 0;

        ck_assert_msg(safetensors_read_all(sets[s].file, TENSOR_U32, &f, &terr)
                          == 0,
                      "%s", terr.message);
        const tensor *xs = find(&f, sets[s].x);
        ck_assert_uint_eq(xs->n_elems, sets[s].n);
        bad = check_variant(&tab, false, xs, find(&f, sets[s].y), &nc, &sub);
        bad +=
            check_variant(&tab, true, xs, find(&f, sets[s].yf), &ncf, &subf);
        printf("lg2-sm90: %s: %llu samples x 2 variants, %u mismatches; "
               "the corrections decide %u and %u of them, %u subnormal "
               "inputs\n",
               sets[s].file, (unsigned long long)xs->n_elems, bad, nc, ncf,
               sub);
        ck_assert_uint_eq(bad, 0);
        /* the samples reach the corrections and the pre-scaling */
        unsigned want = s == 0 ? 1000 : 10;
        ck_assert_uint_gt(nc, want);
        if (s == 0)
            ck_assert_uint_gt(sub, 4000);
        tensor_file_free(&f);
    }
    ax_lg2_table_free(&tab);
}
END_TEST

/* The unit's rules on hand-made tables: RZ of e + G with G from the base
   entry or a correction, the e = 0 entry returned as it is, the
   pre-scaling of subnormals, the special inputs. */
START_TEST(test_rules)
{
    static uint32_t base[1u << FA_LG2_MBITS];
    uint32_t ci[1] = {1};
    /* G(1) = 2^-24 + 2^-30: above the base entry 2^-24 */
    int64_t cg[1] = {((int64_t)1 << 30) + ((int64_t)1 << 24)};
    fa_lg2_table t = {base, 1, ci, cg, false, NULL};
    fa_log_model m = {"t", FA_LOG_LG2, &t};

    memset(base, 0, sizeof base);
    base[1] = 0x33800000u;        /* 2^-24 */
    base[0x400000] = 0xBF000000u; /* -0.5 at m = 1.5 (reduced to 0.75) */
    ck_assert_ptr_null(fa_lg2_table_check(&t));
    /* x = 1 + 2^-23: e = 0, the base entry */
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x3F800001u), 0x33800000u);
    /* x = 2 (1 + 2^-23): 1 + G rounds toward zero to 1 */
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x40000001u), 0x3F800000u);
    /* x = 2^-1 (1 + 2^-23): -1 + G = -(1 - 2^-24 - 2^-30) -> toward zero
       -(1 - 2^-23), 0xBF7FFFFE */
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x3F000001u), 0xBF7FFFFEu);
    /* without the correction: -1 + 2^-24 = 0xBF7FFFFF exactly */
    t.ncorr = 0;
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x3F000001u), 0xBF7FFFFFu);
    t.ncorr = 1;
    /* x = 3 = 2 x 1.5: e = 2, G = -0.5: 1.5 */
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x40400000u), 0x3FC00000u);
    /* x = 0.75: e = 0, the entry */
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x3F400000u), 0xBF000000u);
    /* subnormal 2^-149 = 2^-125 2^-24: -125 + 0, then -24: -149 */
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x00000001u), 0xC3150000u);
    t.ftz = true;
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x00000001u), 0xFF800000u);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x80000001u), 0xFF800000u);
    t.ftz = false;
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x80000001u), 0x7FFFFFFFu);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x80000000u), 0xFF800000u);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x00000000u), 0xFF800000u);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x7F800000u), 0x7F800000u);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0xFF800000u), 0x7FFFFFFFu);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x7F800001u), 0x7FFFFFFFu);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0xBF800000u), 0x7FFFFFFFu);
    /* natural log: RN(lg2 x RN(ln 2)); lg2(3) = 1.5 -> 1.5 x 0x3F317218 */
    ck_assert_uint_eq(fa_log_eval(&m, 0x40400000u), 0x3F851592u);
    ck_assert_uint_eq(fa_log_eval(&m, 0x00000000u), 0xFF800000u);
    ck_assert_uint_eq(fa_log_eval(&m, 0xBF800000u), 0x7FFFFFFFu);
    /* a NULL model is cr */
    ck_assert_uint_eq(fa_log_eval(NULL, 0x40400000u), fa_logf_cr(0x40400000u));
    ck_assert_uint_eq(fa_lg2_table_eval(NULL, 0x40400000u), 0x7FC00000u);
    ci[0] = 1u << FA_LG2_MBITS;
    ck_assert_ptr_nonnull(fa_lg2_table_check(&t));
}
END_TEST

/* Where a table is checked: fa_config_check reads every correction and
   refuses a malformed one; fa_forward looks only at the arrays (it runs
   once per head), refuses a table without them, and on a malformed
   table it was given unchecked stays defined: a correction outside
   (-1, 1) is held just inside it. */
START_TEST(test_checked_where)
{
    static uint32_t base[1u << FA_LG2_MBITS];
    uint32_t ci[1] = {1};
    int64_t cg[1] = {INT64_MAX};
    fa_lg2_table t = {base, 1, ci, cg, false, NULL};
    fa_log_model m = {"t", FA_LOG_LG2, &t};
    fa_config cfg = fa_config_default(FA_POLICY_FA2);
    uint16_t q[4 * 8], k[4 * 8], v[4 * 8];
    uint32_t o[4 * 8], lse[4];
    sf_env env = SF_ENV_NVIDIA;

    memset(base, 0, sizeof base);
    for (size_t i = 0; i < 4 * 8; i++) {
        q[i] = (uint16_t)(0x3F80u + i);
        k[i] = (uint16_t)(0x3F00u + 3 * i);
        v[i] = (uint16_t)(0xBF80u + 5 * i);
    }
    cfg.shape = (fa_shape){1, 1, 4, 4, 8};
    cfg.log = &m;
    /* 2 (1 + 2^-23): 1 + G with G held at 1 - 2^-54, toward zero; at
       2^-1 (1 + 2^-23), -1 + G = -2^-54 (too small: -0) */
    ck_assert_ptr_nonnull(fa_lg2_table_check(&t));
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x40000001u), 0x3FFFFFFFu);
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x3F000001u), 0x80000000u);
    cg[0] = INT64_MIN;
    ck_assert_uint_eq(fa_lg2_table_eval(&t, 0x40000001u), 0x00000000u);
    ck_assert_str_eq(fa_config_check(&cfg),
                     "log: the lg2 model in cfg->log is not a usable lg2 "
                     "table model");
    ck_assert_int_eq(fa_forward(&cfg, q, k, v, o, lse, NULL, &env), 0);
    /* a correction index out of order: the same refusal */
    cg[0] = 0;
    ci[0] = 1u << FA_LG2_MBITS;
    ck_assert_ptr_nonnull(fa_config_check(&cfg));
    ci[0] = 1;
    ck_assert_ptr_null(fa_config_check(&cfg));
    ck_assert_int_eq(fa_forward(&cfg, q, k, v, o, lse, NULL, &env), 0);
    /* no arrays: refused by both */
    t.corr_g = NULL;
    ck_assert_ptr_nonnull(fa_config_check(&cfg));
    ck_assert_int_eq(fa_forward(&cfg, q, k, v, o, lse, NULL, &env), -1);
    t.corr_g = cg;
    t.base = NULL;
    ck_assert_int_eq(fa_forward(&cfg, q, k, v, o, lse, NULL, &env), -1);
}
END_TEST

/* The corrections' index: look-ups through it give what the search of
   the ascending indices gives, on every corrected mantissa, its two
   neighbours and every 7th mantissa, at three exponents; a damaged index
   is refused by fa_lg2_table_check and, unchecked, reads nothing outside
   the tables (the sanitizer build's test); prefetching changes nothing. */
START_TEST(test_index)
{
    ax_lg2_table tab;
    fa_lg2_table t, s;
    fa_log_model m;
    char err[512];
    const int es[3] = {-7, 1, 4};
    unsigned long long n = 0, bad = 0;

    ck_assert_msg(
        ax_lg2_table_load(tst_lg2_table_path(), &tab, err, sizeof err) == 0,
        "%s", err);
    ax_lg2_model(&tab, false, &t, &m);
    ck_assert_ptr_nonnull(t.index);
    ck_assert_ptr_null(fa_lg2_table_check(&t));
    s = t;
    s.index = NULL;
    for (uint32_t i = 0; i < (1u << FA_LG2_MBITS); i++) {
        bool near = i % 7 == 0;
        for (size_t k = 0; !near && k < 3; k++) {
            uint32_t j = i + (uint32_t)k - 1;
            uint64_t w = tab.index[(j >> 6) & (FA_LG2_INDEX_WORDS - 1)].bits;
            near = j < (1u << FA_LG2_MBITS) && ((w >> (j & 63u)) & 1u);
        }
        for (size_t e = 0; near && e < 3; e++) {
            uint32_t a = fa_lg2_table_core(&t, es[e], i),
                     b = fa_lg2_table_core(&s, es[e], i);
            n++;
            if (a != b && bad++ < 8)
                fprintf(stderr, "index: e %d i 0x%06x: 0x%08x, search 0x%08x\n",
                        es[e], i, a, b);
        }
    }
    printf("lg2 index: %llu look-ups, %llu differ from the search\n", n, bad);
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_gt(n, 3 * (unsigned long long)tab.ncorr);

    /* damaged: a bit moved, a count changed */
    tab.index[1000].bits ^= 1u;
    ck_assert_str_eq(fa_lg2_table_check(&t),
                     "lg2 table: the corrections' index does not match the "
                     "corrections");
    tab.index[1000].bits ^= 1u;
    tab.index[77].below++;
    ck_assert_ptr_nonnull(fa_lg2_table_check(&t));
    /* unchecked, every correction counted past the end: the base rule,
       as for an uncorrected mantissa, and prefetching reads nothing */
    for (size_t w = 0; w < FA_LG2_INDEX_WORDS; w++)
        tab.index[w].below += tab.ncorr;
    s.ncorr = 0;
    for (uint32_t i = 0; i < (1u << FA_LG2_MBITS); i += 4099) {
        uint32_t x = 0x40000000u | i;
        fa_lg2_table_prefetch(&t, x, 0);
        fa_lg2_table_prefetch(&t, x, 1);
        ck_assert_uint_eq(fa_lg2_table_core(&t, 1, i),
                          fa_lg2_table_core(&s, 1, i));
    }
    for (size_t k = 0; k < 6; k++) {
        const uint32_t sp[6] = {0, 0x80000000u, 0x7F800000u, 0x7FC00000u,
                                0x00000001u, 0xBF800000u};
        fa_lg2_table_prefetch(&t, sp[k], 0);
        fa_lg2_table_prefetch(&t, sp[k], 1);
    }
    ax_lg2_table_free(&tab);
}
END_TEST

/* LSE of the flash kernel: fa2's forward (ex2-sm90) gives the final m and
   l of each row; FFMA(m, scale, FMUL(lg2(l), RN(ln 2))) with the lg2
   model must give the dump's LSE on every row. */
static void
lse_case(const char *name, bool causal, const fa_log_model *lg2,
         const fa_exp_model *ex2, unsigned long long *tot,
         unsigned long long *eq_cr, unsigned long long *eq_lg2)
{
    char path[512];
    tensor tq = TENSOR_INIT, tk = TENSOR_INIT, tv = TENSOR_INIT,
           tl = TENSOR_INIT;
    tensor_error terr;
    snprintf(path, sizeof path, G "%s.safetensors", name);
    ck_assert_msg(dump_input_read(path, "q", TENSOR_BF16, &tq, &terr) == 0,
                  "%s", terr.message);
    ck_assert_msg(dump_input_read(path, "k", TENSOR_BF16, &tk, &terr) == 0,
                  "%s", terr.message);
    ck_assert_msg(dump_input_read(path, "v", TENSOR_BF16, &tv, &terr) == 0,
                  "%s", terr.message);
    ck_assert(safetensors_read(path, "lse", TENSOR_F32, &tl, &terr) == 0);
    ck_assert_uint_eq(tq.ndim, 4);
    fa_config cfg = fa_config_default(FA_POLICY_FA2);
    cfg.shape.batch = tq.shape[0];
    cfg.shape.heads = tq.shape[1];
    cfg.shape.nq = tq.shape[2];
    cfg.shape.nk = tk.shape[2];
    cfg.shape.d = tq.shape[3];
    cfg.causal = causal;
    cfg.exp = ex2;
    cfg.bc = cfg.shape.d <= 64 ? 128 : 64;
    size_t rows = tq.shape[0] * tq.shape[1] * tq.shape[2];
    size_t tc = (cfg.shape.nk + cfg.bc - 1) / cfg.bc;
    size_t ne = tq.n_elems, nk = tk.n_elems;
    uint16_t *q = malloc(ne * 2), *k = malloc(nk * 2), *v = malloc(nk * 2);
    uint32_t *o = malloc(ne * 4), *lse = malloc(rows * 4);
    uint32_t *m = malloc(rows * tc * 4), *l = malloc(rows * tc * 4);
    ck_assert(q && k && v && o && lse && m && l);
    for (size_t i = 0; i < ne; i++)
        q[i] = (uint16_t)tensor_get_bits(&tq, i);
    for (size_t i = 0; i < nk; i++) {
        k[i] = (uint16_t)tensor_get_bits(&tk, i);
        v[i] = (uint16_t)tensor_get_bits(&tv, i);
    }
    fa_capture cap;
    memset(&cap, 0, sizeof cap);
    cap.m = m;
    cap.l = l;
    sf_env env = SF_ENV_NVIDIA;
    ck_assert_int_eq(fa_forward(&cfg, q, k, v, o, lse, &cap, &env), 0);
    uint32_t scale = fa_scale_bits(&cfg);
    unsigned long long n = 0, c = 0, g = 0, self = 0;
    for (size_t r = 0; r < rows; r++) {
        uint32_t mr = m[r * tc + tc - 1], lr = l[r * tc + tc - 1];
        uint32_t hw = (uint32_t)tensor_get_bits(&tl, r), a, b;
        bool zn = (lr & 0x7FFFFFFFu) == 0 || (lr & 0x7FFFFFFFu) > 0x7F800000u;
        sf_env e1 = SF_ENV_NVIDIA, e2 = SF_ENV_NVIDIA;
        a = zn ? 0x7F800000u
               : (uint32_t)sf_fma(&sf_format_f32, mr, scale,
                                  fa_log_eval(NULL, lr), SF_RNE, &e1);
        b = zn ? 0x7F800000u
               : (uint32_t)sf_fma(&sf_format_f32, mr, scale,
                                  fa_log_eval(lg2, lr), SF_RNE, &e2);
        self += a == lse[r];
        c += a == hw;
        g += b == hw;
        if (b != hw && n - g < 5)
            printf("  %s row %zu: m %08x l %08x: H200 %08x, lg2-sm90 %08x\n",
                   name, r, mr, lr, hw, b);
        n++;
    }
    printf("LSE %s: %llu rows: correctly rounded log %llu bit-equal, "
           "lg2-sm90 %llu\n",
           name, n, c, g);
    /* the recomputation reproduces fa2's own LSE (which uses cr) */
    ck_assert_uint_eq(self, n);
    *tot += n;
    *eq_cr += c;
    *eq_lg2 += g;
    free(q);
    free(k);
    free(v);
    free(o);
    free(lse);
    free(m);
    free(l);
    tensor_free(&tq);
    tensor_free(&tk);
    tensor_free(&tv);
    tensor_free(&tl);
}

START_TEST(test_lse_sdpa)
{
    static const struct
    {
        const char *name;
        bool causal;
    } dumps[] = {
        {"sdpa_h200_d64", false},
        {"sdpa_h200_d64_causal", true},
        {"sdpa_h200_d64_repmax", false},
        {"sdpa_h200_d64_sink_causal", true},
        {"sdpa_h200_d128", false},
        {"sdpa_h200_d64_n1024_h7_rows", false},
        /* the one-split BF16 dumps of sdpa_ext (O bit-equal with fa2) */
        {"sdpa_ext/causal_d256_nq128_nk64", true},
        {"sdpa_ext/causal_d32_nq64_nk256", true},
        {"sdpa_ext/causal_d64_nq128_nk256", true},
        {"sdpa_ext/causal_d64_nq256_nk128", true},
        {"sdpa_ext/d32_normal", false},
        {"sdpa_ext/d32_repmax8", false},
        {"sdpa_ext/d32_sink_causal", true},
        {"sdpa_ext/d96_normal", false},
        {"sdpa_ext/d96_repmax4", false},
    };
    ax_lg2_table tab;
    ax_ex2_table etab;
    fa_lg2_table t;
    fa_log_model lm;
    fa_exp2_table et;
    fa_exp_model em;
    char err[512];
    unsigned long long n = 0, c = 0, g = 0;

    ck_assert_msg(
        ax_lg2_table_load(tst_lg2_table_path(), &tab, err, sizeof err) == 0,
        "%s", err);
    ck_assert_msg(
        ax_ex2_table_load(tst_ex2_table_path(), &etab, err, sizeof err) == 0,
        "%s", err);
    ax_lg2_model(&tab, false, &t, &lm);
    ax_ex2_model(&etab, false, &et, &em);
    for (size_t i = 0; i < sizeof dumps / sizeof dumps[0]; i++)
        lse_case(dumps[i].name, dumps[i].causal, &lm, &em, &n, &c, &g);
    printf("LSE, all dumps: %llu rows; correctly rounded log %llu "
           "bit-equal (%.1f%%), lg2-sm90 %llu (%.1f%%)\n",
           n, c, 100.0 * (double)c / (double)n, g,
           100.0 * (double)g / (double)n);
    ck_assert_uint_eq(g, n);
    ax_lg2_table_free(&tab);
    ax_ex2_table_free(&etab);
}
END_TEST

static void
expect_error(const unsigned char *bytes, size_t n, const char *what)
{
    char name[64], err[512];
    ax_lg2_table t;

    ck_assert(tst_write_gz(name, sizeof name, "lg2_bad", bytes, n));
    ck_assert_int_eq(ax_lg2_table_load(name, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, what) != NULL && strstr(err, name) == err,
                  "for %s: got \"%s\"", what, err);
    ck_assert_ptr_null(t.base);
    unlink(name);
}

static void
put(unsigned char *p, uint64_t v, int n)
{
    for (int k = 0; k < n; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

START_TEST(test_damaged)
{
    /* a valid file: base all 0x3F800000 (steps 0), no corrections */
    size_t n = 44 + ((size_t)1 << FA_LG2_MBITS) - 1;
    unsigned char *ok = calloc(n + 1, 1), *bad = calloc(n + 8, 1);
    uint64_t hb = 1469598103934665603ull, hc = hb;
    char name[64], err[512];
    ax_lg2_table t;

    ck_assert(ok && bad);
    for (size_t i = 0; i < ((size_t)1 << FA_LG2_MBITS); i++)
        for (int b = 0; b < 4; b++) {
            hb ^= (0x3F800000u >> (8 * b)) & 0xFF;
            hb *= 1099511628211ull;
        }
    memcpy(ok, "BF16LG2", 8);
    put(ok + 8, 1, 4);
    put(ok + 12, 23, 4);
    put(ok + 16, 54, 4);
    put(ok + 20, 0, 4);
    put(ok + 24, hb, 8);
    put(ok + 32, hc, 8);
    put(ok + 40, 0x3F800000u, 4);
    ck_assert(tst_write_gz(name, sizeof name, "lg2_bad", ok, n));
    ck_assert_msg(ax_lg2_table_load(name, &t, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_uint_eq(t.base[12345], 0x3F800000u);
    ck_assert_uint_eq(t.ncorr, 0);
    ax_lg2_table_free(&t);
    unlink(name);

    memcpy(bad, ok, n);
    expect_error(bad, 20, "header: the file ends before 44 bytes");
    bad[0] = 'X';
    expect_error(bad, n, "magic");
    memcpy(bad, ok, n);
    put(bad + 8, 2, 4);
    expect_error(bad, n, "version: expected 1, found 2");
    memcpy(bad, ok, n);
    put(bad + 16, 50, 4);
    expect_error(bad, n, "bits: expected 23 mantissa and 54");
    memcpy(bad, ok, n);
    expect_error(bad, n - 1, "base: the file ends");
    expect_error(bad, n + 1, "corrections: data after the last entry");
    put(bad + 20, 1, 4);
    expect_error(bad, n, "corrections: the file ends before 1 entries");
    memcpy(bad, ok, n);
    bad[n - 1] = 2; /* one step of +1 at the end */
    expect_error(bad, n, "hash: the base table does not match");
    memcpy(bad, ok, n);
    put(bad + 32, 7, 8);
    expect_error(bad, n, "hash: the corrections do not match");
    ck_assert_int_eq(ax_lg2_table_load("no/such/file.gz", &t, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "no/such/file.gz: cannot open") == err, "%s",
                  err);
    free(ok);
    free(bad);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("lg2_table");
    TCase *tc = tst_add_tcase(s, "lg2_table", 300);

    tcase_add_test(tc, test_against_h200);
    tcase_add_test(tc, test_rules);
    tcase_add_test(tc, test_checked_where);
    tcase_add_test(tc, test_index);
    tcase_add_test(tc, test_lse_sdpa);
    tcase_add_test(tc, test_damaged);
    return tst_run_suite(s);
}

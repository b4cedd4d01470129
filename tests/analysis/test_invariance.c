/* test_invariance.c -- the invariance engine (analysis/invariance.h):
   classes of hand-made outputs, distances on the BF16 and FP16 grids
   counted by hand, the batch bound, and the resolution of launches
   against the split counts an H100 launched (the grids recorded in
   tests/data/gpu/invariance/dec_d64_nk4096_h16.json: FA2's
   flash_fwd_splitkv_kernel grid.y 16, 8, 16, 4, 2 at batch 1, 2, 3, 4, 8
   of 16 heads, flash_fwd_kernel from batch 16 on; cuDNN's decode grid.x
   16, 8, 4, 4, then 1), and the launch grid built on them: its order,
   runs, classes, deltas and pruning */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/invariance.h"

START_TEST(test_classes)
{
    static const uint32_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4}, c[3] = {0, 2, 3};
    const uint32_t *outs[6] = {a, b, a, c, b, a};
    size_t cls[6];
    static const size_t want[6] = {0, 1, 0, 2, 1, 0};

    ck_assert_uint_eq(iv_classes(6, outs, 3, cls), 3);
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(cls[i], want[i]);
    ck_assert_uint_eq(iv_classes(0, outs, 3, cls), 0);
}
END_TEST

/* One pair of FP32 patterns on FMT's grid: DIFFER and ULPS expected. */
static void
check_pair(const sf_format *fmt, uint32_t x, uint32_t y, size_t differ,
           uint64_t ulps)
{
    iv_delta d = iv_compare(fmt, &x, &y, 1);

    if (d.differ != differ || d.max_ulps != ulps)
        printf("iv_compare %s 0x%08x 0x%08x: %zu %llu expected, got %zu "
               "%llu\n",
               fmt->name, (unsigned)x, (unsigned)y, differ,
               (unsigned long long)ulps, d.differ,
               (unsigned long long)d.max_ulps);
    ck_assert_uint_eq(d.differ, differ);
    ck_assert(d.max_ulps == ulps);
}

START_TEST(test_compare)
{
    const sf_format *bf = &sf_format_bf16, *h = &sf_format_f16;

    check_pair(bf, 0x3F800000u, 0x3F800000u, 0, 0);
    check_pair(bf, 0x3F800000u, 0x3F810000u, 1, 1); /* 1, 1 + 2^-7 */
    check_pair(bf, 0x3F800000u, 0xBF800000u, 1, 2 * 0x3F80u);
    check_pair(bf, 0x00000000u, 0x80000000u, 1, 0); /* +0, -0 */
    check_pair(bf, 0x80000000u, 0x00010000u, 1, 1); /* -0, min subnormal */
    check_pair(bf, 0x7FC00000u, 0x3F800000u, 1, UINT64_MAX);
    check_pair(bf, 0x7FC00000u, 0xFFC10000u, 1, 0); /* two NaNs */
    check_pair(bf, 0x7F800000u, 0x7F7F0000u, 1, 1); /* inf, max finite */
    check_pair(h, 0x3F800000u, 0x3F802000u, 1, 1);  /* 1, 1 + 2^-10 */
    check_pair(h, 0x33800000u, 0x00000000u, 1, 1);  /* 2^-24, +0 */
    check_pair(&sf_format_f32, 0x3F800000u, 0x3F800002u, 1, 2);
    {
        uint32_t a[4] = {0x3F800000u, 0x40000000u, 0x3F800000u, 0},
                 b[4] = {0x3F800000u, 0x40010000u, 0x3F830000u, 0};
        iv_delta d = iv_compare(bf, a, b, 4);
        ck_assert_uint_eq(d.differ, 2);
        ck_assert(d.max_ulps == 3);
    }
    ck_assert_uint_eq(iv_format_bits(bf, 0xBF810000u), 0xBF81u);
    ck_assert_uint_eq(iv_format_bits(h, 0x3F802000u), 0x3C01u);
}
END_TEST

START_TEST(test_batch_bound)
{
    static const size_t b4[4] = {1, 2, 4, 8};
    static const size_t c1[4] = {0, 1, 2, 2}, c2[4] = {0, 0, 0, 0},
                        c3[4] = {0, 1, 2, 3}, c4[4] = {0, 1, 0, 0};

    ck_assert_uint_eq(iv_batch_bound(4, b4, c1), 4);
    ck_assert_uint_eq(iv_batch_bound(4, b4, c2), 1);
    ck_assert_uint_eq(iv_batch_bound(4, b4, c3), 0);
    ck_assert_uint_eq(iv_batch_bound(4, b4, c4), 4);
    ck_assert_uint_eq(iv_batch_bound(1, b4, c3), 1);
    ck_assert_uint_eq(iv_batch_bound(0, b4, c3), 0);
}
END_TEST

/* A decode call of the GPU case: 16 heads, one row over 4,096 keys, d
   64, BF16, with the fa2 and cudnn descriptions. */
static void
decode_problem(iv_problem *p, iv_backend be[2], fa_config cfg[2])
{
    static const char *const names[2] = {"fa2", "cudnn"};

    memset(p, 0, sizeof *p);
    for (int i = 0; i < 2; i++) {
        cfg[i] = fa_config_kernel_default(fa_kernel_by_name(names[i]));
        cfg[i].shape = (fa_shape){1, 1, 1, 4096, 64};
        be[i].name = i == 0 ? "flash" : "cudnn";
        be[i].sdpa = false;
        be[i].cfg = &cfg[i];
    }
    p->heads = p->kv_heads = 16;
    p->nq = 1;
    p->nk = 4096;
    p->d = 64;
    p->nbackends = 2;
    p->backends = be;
}

/* The decode grid: the batch sizes 1 to 64 on the GPU's SMs. */
static const size_t grid_batch[8] = {1, 2, 3, 4, 8, 16, 32, 64};
static const unsigned grid_sms[1] = {0};
static const iv_space grid_space = {true, false, 8, grid_batch, 1, grid_sms,
                                    0, NULL};

/* Every output of every run of G zero. */
static void
zero_outputs(iv_grid *g)
{
    for (size_t r = 0; r < g->nruns; r++)
        memset(g->out[r], 0, g->out_len * sizeof(uint32_t));
}

START_TEST(test_resolve)
{
    static const size_t fa2[8] = {16, 8, 16, 4, 2, 1, 1, 1};
    static const size_t cudnn[8] = {16, 8, 4, 4, 1, 1, 1, 1};
    iv_problem p;
    iv_backend be[2];
    fa_config cfg[2];
    iv_key k[2][8];
    char why[256], rule[256];

    decode_problem(&p, be, cfg);
    for (size_t b = 0; b < 2; b++)
        for (size_t j = 0; j < 8; j++) {
            iv_launch l = {grid_batch[j], 0, b, false, 0};
            ck_assert_int_eq(iv_resolve(&p, &l, &k[b][j], why, sizeof why),
                             0);
            ck_assert_uint_eq(k[b][j].nsteps, 1);
            ck_assert_uint_eq(k[b][j].steps[0].splits,
                              b == 0 ? fa2[j] : cudnn[j]);
            ck_assert_uint_eq(k[b][j].launch_bh, 16 * grid_batch[j]);
        }
    ck_assert(iv_key_equal(&k[0][0], &k[0][2]));
    ck_assert(!iv_key_equal(&k[0][0], &k[0][1]));
    ck_assert(iv_key_equal(&k[1][2], &k[1][3]));
    ck_assert(!iv_key_equal(&k[0][7], &k[1][7]));
    iv_rule(&k[0][0], &k[0][1], rule, sizeof rule);
    ck_assert_str_eq(rule,
                     "split count 16 -> 8 (PyTorch 2.11's flash heuristic)");
    iv_rule(&k[0][7], &k[1][7], rule, sizeof rule);
    ck_assert_str_eq(rule, "backend flash -> cudnn");
    iv_rule(&k[0][5], &k[0][6], rule, sizeof rule);
    ck_assert_str_eq(rule, "nothing in the launch rules");
    for (size_t b = 0; b < 2; b++)
        for (size_t j = 0; j < 8; j++)
            iv_key_free(&k[b][j]);
}
END_TEST

/* The grid of the decode case over the eight batch sizes, prefill only:
   launch i is backend i / 8 at batch size i % 8; the runs follow the
   split counts of the GPU grids (fa2: 16, 8, 16, 4, 2, 1, 1, 1; cuDNN:
   16, 8, 4, 4, 1, 1, 1, 1), first appearance first, fa2's before
   cuDNN's. */
START_TEST(test_grid)
{
    static const size_t run_of[16] = {0, 1, 0, 2, 3, 4, 4, 4,
                                      5, 6, 7, 7, 8, 8, 8, 8};
    iv_problem p;
    iv_backend be[2];
    fa_config cfg[2];
    iv_space sp = grid_space;
    iv_grid g;
    char why[256];

    decode_problem(&p, be, cfg);
    ck_assert_int_eq(iv_grid_init(&g, &p, &sp, why, sizeof why), 0);
    ck_assert_uint_eq(g.nl, 16);
    ck_assert_uint_eq(g.nruns, 9);
    for (size_t i = 0; i < 16; i++) {
        ck_assert_uint_eq(iv_grid_at(&g, 0, i / 8, 0, i % 8), i);
        ck_assert_uint_eq(g.l[i].backend, i / 8);
        ck_assert_uint_eq(g.l[i].batch, grid_batch[i % 8]);
        ck_assert_uint_eq(g.run_of[i], run_of[i]);
    }
    /* 16 heads of O [1, 64] and LSE [1]: every run zero but run 1, whose
       head 3 has O[5] one BF16 ulp up and head 7 an LSE two FP32 ulps
       up; fa2's batch 2 (run 1) is then a class of its own */
    ck_assert_uint_eq(g.y.head, 65);
    ck_assert_uint_eq(g.out_len, 16 * 65);
    zero_outputs(&g);
    g.out[1][3 * 65 + 5] = 0x00010000u;
    g.out[1][7 * 65 + 64] = 0x00000002u;
    iv_grid_classify(&g);
    ck_assert_uint_eq(g.ncls, 2);
    for (size_t i = 0; i < 16; i++)
        ck_assert_uint_eq(iv_grid_class(&g, i), i == 1 ? 1 : 0);
    {
        iv_delta o, lse;
        iv_grid_delta(&g, 0, 1, &o, &lse);
        ck_assert_uint_eq(o.differ, 1);
        ck_assert(o.max_ulps == 1);
        ck_assert_uint_eq(lse.differ, 1);
        ck_assert(lse.max_ulps == 2);
        iv_grid_delta(&g, 0, 9, &o, &lse);
        ck_assert_uint_eq(o.differ + lse.differ, 0);
    }
    iv_grid_free(&g);
    /* the order by hand: 2 backends x 3 SM counts x 4 batch sizes a
       mode, prefill's 24 launches before decode's */
    {
        iv_grid h;
        memset(&h, 0, sizeof h);
        h.p = &p;
        h.sp = (iv_space){true, true, 4, grid_batch, 3, grid_sms, 0, NULL};
        ck_assert_uint_eq(iv_grid_at(&h, 0, 1, 0, 0), 12);
        ck_assert_uint_eq(iv_grid_at(&h, 0, 0, 2, 1), 9);
        ck_assert_uint_eq(iv_grid_at(&h, 1, 1, 2, 3), 47);
        h.sp.prefill = false;
        ck_assert_uint_eq(iv_grid_at(&h, 1, 1, 2, 3), 23);
    }
    /* cuDNN's decode grid on 114 multiprocessors: the grid is refused
       with the launch named; pruning keeps flash alone */
    {
        static const unsigned sms114[1] = {114};
        iv_skip skip[2];
        size_t nskip = 0;
        sp.sms = sms114;
        ck_assert_int_eq(iv_grid_init(&g, &p, &sp, why, sizeof why), -1);
        iv_grid_free(&g);
        ck_assert_msg(strncmp(why, "cudnn at batch 1, 114 SMs: ", 27) == 0,
                      "%s", why);
        ck_assert_uint_eq(iv_prune_backends(&p, be, &sp, skip, &nskip), 1);
        ck_assert_uint_eq(p.nbackends, 1);
        ck_assert_str_eq(be[0].name, "flash");
        ck_assert_uint_eq(nskip, 1);
        ck_assert_str_eq(skip[0].name, "cudnn");
        ck_assert(strstr(skip[0].why, "measured on 132") != NULL);
    }
}
END_TEST

START_TEST(test_refusals)
{
    iv_problem p;
    iv_backend be[3];
    fa_config cfg[2];
    iv_key k;
    char why[256];

    decode_problem(&p, be, cfg);
    {
        /* cuDNN's decode grid: measured on 132 multiprocessors only */
        iv_launch l = {1, 114, 1, false, 0};
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), -1);
        ck_assert(strstr(why, "measured on 132 multiprocessors") != NULL);
        l.backend = 0; /* FA2's heuristic reads the count */
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), 0);
        iv_key_free(&k);
    }
    {
        /* decode steps of a call that is not causal */
        iv_launch l = {1, 0, 0, true, 0};
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), -1);
        ck_assert(strstr(why, "causal") != NULL);
    }
    {
        /* sdpa picking a backend with no configuration here */
        iv_launch l = {1, 0, 2, false, 0};
        be[2].name = "sdpa";
        be[2].sdpa = true;
        be[2].cfg = NULL;
        p.nbackends = 3;
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), -1);
        ck_assert(strstr(why, "not loaded") != NULL);
        p.sdpa_cfg[SDPA_BACKEND_CUDNN] = &cfg[1];
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), 0);
        ck_assert_str_eq(k.backend, "cudnn");
        ck_assert_uint_eq(k.steps[0].splits, 16);
        iv_key_free(&k);
    }
}
END_TEST

/* Head counts of the launch: 32 heads at batch 1 are the launch of 16
   heads at batch 2 (B x H 32: FA2 splits 8 ways), a launch must hold
   the call's 16 heads, and the settings run heads fastest. */
START_TEST(test_head_counts)
{
    static const unsigned sms[2] = {132, 114};
    static const size_t heads[3] = {16, 32, 64};
    iv_space sp = {true, false, 0, NULL, 2, sms, 3, heads};
    iv_problem p;
    iv_backend be[2];
    fa_config cfg[2];
    iv_key k;
    char why[256];
    unsigned s_sms;
    size_t s_heads;

    decode_problem(&p, be, cfg);
    {
        iv_launch l = {1, 0, 0, false, 32};
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), 0);
        ck_assert_uint_eq(k.launch_bh, 32);
        ck_assert_uint_eq(k.steps[0].splits, 8);
        iv_key_free(&k);
        l.heads = 8;
        ck_assert_int_eq(iv_resolve(&p, &l, &k, why, sizeof why), -1);
        ck_assert(strstr(why, "cannot hold the call's 16 heads") != NULL);
    }
    ck_assert_uint_eq(iv_space_settings(&sp), 6);
    iv_space_setting(&sp, 4, &s_sms, &s_heads);
    ck_assert_uint_eq(s_sms, 114);
    ck_assert_uint_eq(s_heads, 32);
    sp.nheads = 0;
    ck_assert_uint_eq(iv_space_settings(&sp), 2);
    iv_space_setting(&sp, 1, &s_sms, &s_heads);
    ck_assert_uint_eq(s_sms, 114);
    ck_assert_uint_eq(s_heads, 0);
}
END_TEST

START_TEST(test_canonical)
{
    static const size_t in[6] = {7, 3, 7, 9, 3, 0};
    static const size_t want[6] = {0, 1, 0, 2, 1, 3};
    size_t out[6];

    iv_canonical(in, 6, out);
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(out[i], want[i]);
    iv_canonical(want, 6, out);
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(out[i], want[i]);
}
END_TEST

/* The GPU's classes against the decode grid of test_grid, whose fa2
   batch 2 alone differs (head 3, O[5] one ulp up): flash recorded with
   other class numbers is the same partition; cudnn split at batch 3 is
   not; the stored O of a class counted element by element. */
START_TEST(test_observed)
{
    iv_problem p;
    iv_backend be[2];
    fa_config cfg[2];
    iv_space sp = grid_space;
    iv_grid g;
    iv_observed ob;
    iv_obs_result r;
    iv_skip skip = {"cudnn", "its grid is not measured here"};
    uint16_t stored[16 * 64];
    char why[256];

    decode_problem(&p, be, cfg);
    ck_assert_int_eq(iv_grid_init(&g, &p, &sp, why, sizeof why), 0);
    zero_outputs(&g);
    g.out[1][3 * 65 + 5] = 0x00010000u;
    iv_grid_classify(&g);

    memset(&ob, 0, sizeof ob);
    ob.name = "flash";
    ob.n = 8;
    for (size_t j = 0; j < 8; j++)
        ob.classes[j] = j == 1 ? 9 : 5;
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert(r.checked && r.partition_equal);
    ck_assert_uint_eq(r.nclasses, 2);
    ck_assert_uint_eq(r.cls[0], 5);
    ck_assert_uint_eq(r.launch[0], 0);
    ck_assert_uint_eq(r.cls[1], 9);
    ck_assert_uint_eq(r.launch[1], 1);
    ck_assert(!r.bwd_checked && r.bwd_note == NULL);
    memset(stored, 0, sizeof stored);
    iv_observed_output(&g, 0, stored, 1, &r);
    iv_observed_output(&g, 1, stored, 1, &r);
    ck_assert_uint_eq(r.compared, 2 * 16 * 64);
    ck_assert_uint_eq(r.differ, 1);
    ck_assert_uint_eq(r.class_differ[9], 1);
    ck_assert_uint_eq(r.class_differ[5], 0);

    ob.name = "cudnn";
    for (size_t j = 0; j < 8; j++)
        ob.classes[j] = j < 2 ? 0 : 1;
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert(r.checked && !r.partition_equal);
    ck_assert_uint_eq(r.nclasses, 2);
    ck_assert_uint_eq(r.launch[1], 10); /* cudnn at batch 3 */
    iv_observed_check(&g, &ob, &skip, 1, &r);
    ck_assert(!r.checked);
    ck_assert_str_eq(r.note, "not predicted: its grid is not measured here");

    ob.name = "default"; /* sdpa: not among the grid's backends */
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert(!r.checked);
    ck_assert_str_eq(r.note, "not among the launches asked");
    ob.refused = true;
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert_str_eq(r.note, "refused on the GPU");
    iv_grid_free(&g);
}
END_TEST

/* The backward's classes: one head of one row over 128 keys under fa2
   with the backward, every output zero but dQ[7] and dK[100] of batch
   4's run; the GPU's classes of O are one (the forward's partition is
   by O and LSE alone), its backward classes with other numbers are the
   same partition, and a stored dK counted element by element. */
START_TEST(test_observed_bwd)
{
    iv_problem p;
    iv_backend be[2];
    fa_config cfg[2];
    iv_space sp = grid_space;
    iv_grid g;
    iv_observed ob;
    iv_obs_result r;
    uint16_t stored[128 * 64];
    char why[256];

    decode_problem(&p, be, cfg);
    p.heads = p.kv_heads = 1;
    p.nk = 128;
    cfg[0].shape.nk = 128;
    p.nbackends = 1;
    p.backward = true;
    ck_assert_msg(iv_grid_init(&g, &p, &sp, why, sizeof why) == 0, "%s",
                  why);
    ck_assert_uint_eq(g.y.dq, 65);
    ck_assert_uint_eq(g.y.dk, 65 + 64);
    zero_outputs(&g);
    g.out[g.run_of[3]][g.y.dq + 7] = 0x3F800000u;
    g.out[g.run_of[3]][g.y.dk + 100] = 0x3F800000u;
    iv_grid_classify(&g);

    memset(&ob, 0, sizeof ob);
    ob.name = "flash";
    ob.n = 8;
    /* the GPU's classes of O: one (batch 4's O is everyone's), though
       batch 4's launch is a class of its own through its gradients */
    for (size_t j = 0; j < 8; j++)
        ob.classes[j] = 0;
    ck_assert_uint_ne(iv_grid_class(&g, 3), iv_grid_class(&g, 0));
    ob.bwd = true;
    for (size_t j = 0; j < 8; j++)
        ob.bwd_classes[j] = j == 3 ? 4 : 2;
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert(r.checked && r.partition_equal);
    ck_assert(!r.bwd_checked);
    ck_assert_str_eq(r.bwd_note, "the GPU's backward did not repeat itself");
    ob.bwd_repeat = true;
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert(r.bwd_checked && r.bwd_partition_equal);
    ck_assert_uint_eq(r.nbwd, 2);
    ck_assert_uint_eq(r.bwd_cls[0], 2);
    ck_assert_uint_eq(r.bwd_launch[0], 0);
    ck_assert_uint_eq(r.bwd_cls[1], 4);
    ck_assert_uint_eq(r.bwd_launch[1], 3);
    memset(stored, 0, sizeof stored);
    iv_observed_bwd_output(&g, 0, "dk", stored, &r);
    ck_assert_uint_eq(r.bwd_differ, 0);
    iv_observed_bwd_output(&g, 1, "dk", stored, &r);
    ck_assert_uint_eq(r.bwd_compared, 2 * 128 * 64);
    ck_assert_uint_eq(r.bwd_differ, 1);
    ob.bwd_classes[5] = 4; /* batch 16 apart from batch 1 on the GPU */
    iv_observed_check(&g, &ob, NULL, 0, &r);
    ck_assert(r.bwd_checked && !r.bwd_partition_equal);
    iv_grid_free(&g);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("invariance");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int nf;

    tcase_add_test(tc, test_classes);
    tcase_add_test(tc, test_compare);
    tcase_add_test(tc, test_batch_bound);
    tcase_add_test(tc, test_resolve);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_grid);
    tcase_add_test(tc, test_head_counts);
    tcase_add_test(tc, test_canonical);
    tcase_add_test(tc, test_observed);
    tcase_add_test(tc, test_observed_bwd);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? 0 : 1;
}

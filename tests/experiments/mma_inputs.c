/* mma_inputs -- input files for the bf16emu mma tests: the H200 fixture
   cut into batched A, B, C, D tensors, and integer-valued problems whose
   exact result is known by construction */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdir */
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/tensor.h"

/*
 * usage: mma_inputs fixture FIXTURE OUTDIR
 *        mma_inputs exact OUTDIR
 *
 * OUTDIR is created when it does not exist; files in it are replaced.
 *
 * fixture: the vector sets <fmt>.<set> of the H200 fixture (rows of a
 * [n, K] and b [n, K] U16 patterns, c and the device results d_mma,
 * d_wgmma_ss, d_wgmma_rs [n] U32 patterns: D[v] = sum_k a[v,k] b[v,k] +
 * c[v]) are concatenated by input format and K into
 * OUTDIR/<fmt>_k<K>.safetensors: A [n, 1, K] and B [n, K, 1] (BF16 or
 * F16), C and d_mma [n, 1, 1] (F32) over every set, and Aw, Bw, Cw,
 * d_wgmma_ss, d_wgmma_rs likewise over the sets that have wgmma results.
 * The bytes are the fixture's, regrouped so that every vector is one
 * batch of a 1 x K by K x 1 product.  Prints one line per file: FILE, the
 * number of vectors, the number of wgmma vectors.
 *
 * exact: A [2, 3, 4, 40] and B [2, 3, 40, 5] with integer entries in
 * [-7, 7] (every format holds them exactly: bf16, f16, e4m3, e5m2, f32),
 * C [2, 3, 4, 5] with integer entries, and D = A B + C computed here in
 * integers.  Every product and partial sum is an integer below 2^13 in
 * magnitude (|A B| <= 40 * 49, |C| <= 3000), so every model computes it
 * exactly (the narrowest, sm90-fp8, keeps 13 bits below the block's
 * largest exponent; no rounding happens anywhere), and D is the same for
 * every preset except fma-chain-bf16acc, and for every input format.  See
 * write_exact for the keys.
 *
 * Random entries come from splitmix64 seeded with BF16EMU_TEST_SEED
 * (default 1); nothing here depends on the values drawn.
 */

#define NB0 2
#define NB1 3
#define M 4
#define K 40
#define N 5
#define NB (NB0 * NB1)

static int
fail(const char *what, const tensor_error *err)
{
    fprintf(stderr, "mma_inputs: %s: %s\n", what,
            err != NULL ? err->message : "");
    return 1;
}

/*----------------------------------------------------------------------------
 * The fixture, regrouped.
 *--------------------------------------------------------------------------*/
static const tensor *
find(const tensor_file *f, const char *prefix, const char *suffix)
{
    char name[320];

    snprintf(name, sizeof name, "%s.%s", prefix, suffix);
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i].tensor;
    return NULL;
}

/* One vector set of the fixture. */
typedef struct
{
    char prefix[256];
    tensor_dtype in; /* BF16 or F16 */
    const tensor *a, *b, *c, *d[3];
} fixture_set;

static const char *const dnames[3] = {"d_mma", "d_wgmma_ss", "d_wgmma_rs"};

/* Appends the bytes of SRC at *AT in DST. */
static void
append(tensor *dst, size_t *at, const tensor *src)
{
    if (src->n_bytes > 0)
        memcpy(dst->data + *at, src->data, src->n_bytes);
    *at += src->n_bytes;
}

/* The tensors of one group (one input format, one K) written as
   OUTDIR/<fmt>_k<K>.safetensors: A [n, 1, K], B [n, K, 1], C and d_mma
   [n, 1, 1] over every set, and Aw, Bw, Cw, d_wgmma_ss, d_wgmma_rs over
   the sets that have the wgmma results. */
static int
write_group(const fixture_set *sets, size_t n_sets, tensor_dtype in,
            uint64_t k, const char *outdir)
{
    tensor t[9];
    tensor_named list[9];
    size_t at[9] = {0}, nt;
    uint64_t n = 0, nw = 0;
    char path[4400];
    tensor_error err;
    int rc = 0;

    for (size_t i = 0; i < n_sets; i++)
        if (sets[i].in == in && sets[i].a->shape[1] == k) {
            n += sets[i].a->shape[0];
            if (sets[i].d[1] != NULL && sets[i].d[2] != NULL)
                nw += sets[i].a->shape[0];
        }
    if (n == 0)
        return 0;
    memset(t, 0, sizeof t);
    for (int w = 0; w < 2; w++) {
        uint64_t c = w ? nw : n;
        uint64_t sa[3] = {c, 1, k}, sb[3] = {c, k, 1}, sc[3] = {c, 1, 1};
        int o = w * 4;
        rc |= tensor_alloc(&t[o + 0], in, 3, sa, &err);
        rc |= tensor_alloc(&t[o + 1], in, 3, sb, &err);
        rc |= tensor_alloc(&t[o + 2], TENSOR_F32, 3, sc, &err);
        rc |= tensor_alloc(&t[o + 3], TENSOR_F32, 3, sc, &err);
    }
    {
        uint64_t sc[3] = {nw, 1, 1};
        rc |= tensor_alloc(&t[8], TENSOR_F32, 3, sc, &err);
    }
    if (rc != 0) {
        rc = fail("alloc", &err);
        goto done;
    }
    for (size_t i = 0; i < n_sets; i++) {
        const fixture_set *s = &sets[i];
        if (s->in != in || s->a->shape[1] != k)
            continue;
        append(&t[0], &at[0], s->a);
        append(&t[1], &at[1], s->b);
        append(&t[2], &at[2], s->c);
        append(&t[3], &at[3], s->d[0]);
        if (s->d[1] == NULL || s->d[2] == NULL)
            continue;
        append(&t[4], &at[4], s->a);
        append(&t[5], &at[5], s->b);
        append(&t[6], &at[6], s->c);
        append(&t[7], &at[7], s->d[1]);
        append(&t[8], &at[8], s->d[2]);
    }
    /* A B C d_mma Aw Bw Cw d_wgmma_ss d_wgmma_rs */
    list[0] = (tensor_named){"A", t[0]};
    list[1] = (tensor_named){"B", t[1]};
    list[2] = (tensor_named){"C", t[2]};
    list[3] = (tensor_named){"d_mma", t[3]};
    nt = 4;
    if (nw > 0) {
        list[4] = (tensor_named){"Aw", t[4]};
        list[5] = (tensor_named){"Bw", t[5]};
        list[6] = (tensor_named){"Cw", t[6]};
        list[7] = (tensor_named){"d_wgmma_ss", t[7]};
        list[8] = (tensor_named){"d_wgmma_rs", t[8]};
        nt = 9;
    }
    snprintf(path, sizeof path, "%s/%s_k%" PRIu64 ".safetensors", outdir,
             in == TENSOR_F16 ? "f16" : "bf16", k);
    if (safetensors_write(path, list, nt, NULL, 0, true, &err) != TENSOR_OK)
        rc = fail(path, &err);
    else
        printf("%s %" PRIu64 " %" PRIu64 "\n", path, n, nw);
done:
    for (size_t i = 0; i < 9; i++)
        tensor_free(&t[i]);
    return rc;
}

/* Every set of FIXTURE (tensors <fmt>.<set>.a, .b, .c, .d_mma and
   possibly .d_wgmma_ss, .d_wgmma_rs), grouped by format and K. */
static int
do_fixture(const char *fixture, const char *outdir)
{
    static const uint64_t ks[] = {16, 32, 64};
    tensor_file f = TENSOR_FILE_INIT;
    fixture_set *sets;
    size_t n_sets = 0;
    tensor_error err;
    int rc = 0;

    if (safetensors_read_all(fixture, TENSOR_ANY, &f, &err) != TENSOR_OK)
        return fail(fixture, &err);
    sets = calloc(f.n_tensors + 1, sizeof *sets);
    if (sets == NULL) {
        tensor_file_free(&f);
        return fail("out of memory", NULL);
    }
    for (size_t i = 0; i < f.n_tensors && rc == 0; i++) {
        const char *name = f.tensors[i].name;
        size_t len = strlen(name);
        fixture_set *s = &sets[n_sets];
        if (len < 3 || len >= sizeof s->prefix
            || strcmp(name + len - 2, ".a") != 0)
            continue;
        memcpy(s->prefix, name, len - 2);
        s->prefix[len - 2] = '\0';
        s->in = strncmp(s->prefix, "f16.", 4) == 0 ? TENSOR_F16 : TENSOR_BF16;
        s->a = find(&f, s->prefix, "a");
        s->b = find(&f, s->prefix, "b");
        s->c = find(&f, s->prefix, "c");
        for (int d = 0; d < 3; d++)
            s->d[d] = find(&f, s->prefix, dnames[d]);
        if (s->b == NULL || s->c == NULL || s->d[0] == NULL || s->a->ndim != 2
            || s->a->dtype != TENSOR_U16 || s->b->ndim != 2
            || s->b->dtype != TENSOR_U16 || s->b->shape[0] != s->a->shape[0]
            || s->b->shape[1] != s->a->shape[1] || s->c->ndim != 1
            || s->c->dtype != TENSOR_U32 || s->c->shape[0] != s->a->shape[0]
            || s->d[0]->n_bytes != s->c->n_bytes) {
            fprintf(stderr, "mma_inputs: set %s: unexpected layout\n",
                    s->prefix);
            rc = 1;
        }
        for (int d = 1; d < 3; d++)
            if (s->d[d] != NULL && s->d[d]->n_bytes != s->c->n_bytes)
                rc = 1;
        if (rc == 0 && s->a->shape[1] != 16 && s->a->shape[1] != 32
            && s->a->shape[1] != 64) {
            fprintf(stderr, "mma_inputs: set %s: K is not 16, 32 or 64\n",
                    s->prefix);
            rc = 1;
        }
        n_sets++;
    }
    for (int in = 0; in < 2 && rc == 0; in++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == 0; i++)
            rc = write_group(sets, n_sets, in ? TENSOR_F16 : TENSOR_BF16,
                             ks[i], outdir);
    free(sets);
    tensor_file_free(&f);
    return rc;
}

/*----------------------------------------------------------------------------
 * Integer problems.
 *--------------------------------------------------------------------------*/
static uint64_t rng_state;

static uint64_t
splitmix64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* A uniform integer in [lo, hi]. */
static int32_t
draw(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(splitmix64() % (uint64_t)(hi - lo + 1));
}

/* The bits of the integer V in a binary format with FRAC fraction bits and
   exponent bias BIAS (sign bit at FRAC + EXP_BITS); V must fit exactly. */
static uint32_t
encode(int32_t v, unsigned frac, unsigned exp_bits, int bias)
{
    uint32_t u = (uint32_t)(v < 0 ? -v : v), sign, field;
    int e = -1;

    if (u == 0)
        return 0;
    for (uint32_t t = u; t != 0; t >>= 1)
        e++;
    if (e > (int)frac && (u & ((1u << (e - (int)frac)) - 1)) != 0) {
        fprintf(stderr, "mma_inputs: %" PRId32 " is not exact\n", v);
        exit(1);
    }
    field =
        e <= (int)frac ? u << (frac - (unsigned)e) : u >> ((unsigned)e - frac);
    field &= (1u << frac) - 1;
    sign = v < 0 ? 1u << (frac + exp_bits) : 0;
    return sign | (uint32_t)(e + bias) << frac | field;
}

static uint32_t
enc_f32(int32_t v)
{
    return encode(v, 23, 8, 127);
}

/* Input formats of the integer problem. */
typedef struct
{
    const char *suffix;
    tensor_dtype dt;
    uint32_t (*enc)(int32_t v);
} in_fmt;

static uint32_t
enc_bf16(int32_t v)
{
    return enc_f32(v) >> 16; /* |v| <= 7: the low 16 bits are zero */
}

static uint32_t
enc_f16(int32_t v)
{
    return encode(v, 10, 5, 15);
}

static uint32_t
enc_e4m3(int32_t v)
{
    return encode(v, 3, 4, 7);
}

static uint32_t
enc_e5m2(int32_t v)
{
    return encode(v, 2, 5, 15);
}

static uint32_t
enc_raw(int32_t v)
{
    return (uint32_t)v;
}

static const in_fmt in_fmts[] = {
    {"bf16", TENSOR_BF16, enc_bf16},    {"f16", TENSOR_F16, enc_f16},
    {"e4m3", TENSOR_F8_E4M3, enc_e4m3}, {"e5m2", TENSOR_F8_E5M2, enc_e5m2},
    {"f32", TENSOR_F32, enc_f32},
};
#define N_IN_FMTS (sizeof in_fmts / sizeof in_fmts[0])

/* Flat positions of the perturbed reference (batch [b0, b1], row, col):
   the zero result, +1 ulp, +3 ulps, -700 ulps, NaN. */
#define POS(b0, b1, r, c) ((((b0)*NB1 + (b1)) * M + (r)) * N + (c))
#define P_ZERO POS(0, 0, 0, 0)
#define P_ONE POS(0, 1, 2, 3)
#define P_THREE POS(1, 0, 1, 4)
#define P_700 POS(1, 2, 3, 0)
#define P_NAN POS(0, 2, 0, 1)

static int32_t ia[NB][M][K], ib[NB][K][N], ibs[K][N], ic[NB][M][N];
static int64_t dc[NB][M][N], d0[NB][M][N], ds[NB][M][N];

static void
make_integers(void)
{
    for (int b = 0; b < NB; b++) {
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++)
                ia[b][i][k] = draw(-7, 7);
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                ib[b][k][j] = draw(-7, 7);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                ic[b][i][j] = draw(-1000, 1000);
    }
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            ibs[k][j] = draw(-7, 7);
    /* row 0 of batch [0, 0] is zero and C there 0: D = +0 at P_ZERO */
    for (int k = 0; k < K; k++)
        ia[0][0][k] = 0;
    ic[0][0][0] = 0;
    /* large C where the reference is perturbed: D >= 3000 - 40*49 > 0 */
    {
        const int pos[] = {P_ONE, P_THREE, P_700, P_NAN};
        for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
            int p = pos[i];
            ic[p / (M * N)][(p / N) % M][p % N] = 3000;
        }
    }
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int64_t s = 0, sh = 0;
                for (int k = 0; k < K; k++) {
                    s += (int64_t)ia[b][i][k] * ib[b][k][j];
                    sh += (int64_t)ia[b][i][k] * ibs[k][j];
                }
                d0[b][i][j] = s;
                dc[b][i][j] = s + ic[b][i][j];
                ds[b][i][j] = sh + ic[b][i][j];
            }
}

/* A tensor of DT and shape SHAPE from the int32 values V[0..count) through
   ENC (NULL: F32 from the int64 values W). */
static int
fill(tensor *t, tensor_dtype dt, unsigned ndim, const uint64_t *shape,
     const int32_t *v, uint32_t (*enc)(int32_t), const int64_t *w)
{
    tensor_error err;

    if (tensor_alloc(t, dt, ndim, shape, &err) != TENSOR_OK)
        return fail("alloc", &err);
    for (uint64_t i = 0; i < t->n_elems; i++)
        tensor_set_bits(t, i,
                        enc != NULL ? enc(v[i]) : enc_f32((int32_t)w[i]));
    return 0;
}

static int
write_npy(const char *outdir, const char *name, const tensor *t)
{
    char path[4096];
    tensor_error err;

    snprintf(path, sizeof path, "%s/%s", outdir, name);
    if (npy_write(path, t, true, &err) != TENSOR_OK)
        return fail(path, &err);
    return 0;
}

/*
 * OUTDIR/exact.safetensors holds
 *   A_<fmt>, B_<fmt>   A [2, 3, 4, 40], B [2, 3, 40, 5] for fmt = bf16,
 *                      f16, e4m3, e5m2, f32 (the same integers)
 *   Bs_bf16            B [40, 5] (shared by every batch)
 *   C                  F32 [2, 3, 4, 5]
 *   D                  A B + C;  D0: A B (no C);  Ds: A Bs + C
 *   Dbad               D with five elements changed: -0 for the +0 at
 *                      [0,0,0,0], +1 ulp at [0,1,2,3], +3 ulps at
 *                      [1,0,1,4], -700 ulps at [1,2,3,0], the NaN
 *                      0x7FC00000 at [0,2,0,1]
 *   A2, B2, C2, D2     batch [0, 0] alone: [4, 40], [40, 5], [4, 5]
 *   Bk32               BF16 [2, 3, 32, 5] (K differs)
 *   Bbatch             BF16 [3, 2, 40, 5] (batch differs)
 *   Cm3, Cn6           F32 [2, 3, 3, 5] and [2, 3, 4, 6] (M, N differ)
 *   A_i32              I32 [2, 3, 4, 40]
 *   A_u16              U16 [2, 3, 4, 40] (the BF16 patterns)
 * and OUTDIR/a_bf16.npy, b_bf16.npy ('<u2'), c.npy, d.npy ('<f4'), and
 * one.safetensors with the single tensor A_bf16.
 */
static int
write_exact(const char *outdir)
{
    enum
    {
        MAX_T = 32
    };
    tensor t[MAX_T];
    tensor_named list[MAX_T];
    const char *names[MAX_T];
    size_t nt = 0;
    static const uint64_t sa[] = {NB0, NB1, M, K}, sb[] = {NB0, NB1, K, N},
                          sbs[] = {K, N}, sc[] = {NB0, NB1, M, N},
                          sa2[] = {M, K}, sc2[] = {M, N},
                          sk[] = {NB0, NB1, 32, N}, sbb[] = {NB1, NB0, K, N},
                          scm[] = {NB0, NB1, 3, N}, scn[] = {NB0, NB1, M, 6};
    static int32_t zeros[NB * M * K];
    static int64_t wzero[NB * M * K];
    int64_t bad[NB * M * N];
    char path[4096];
    tensor_error err;
    int rc = 0;

    memset(t, 0, sizeof t);
#define ADD(name, expr)                                                       \
    do {                                                                      \
        names[nt] = (name);                                                   \
        rc |= (expr);                                                         \
        nt++;                                                                 \
    } while (0)
    for (size_t f = 0; f < N_IN_FMTS; f++) {
        static char an[N_IN_FMTS][16], bn[N_IN_FMTS][16];
        snprintf(an[f], sizeof an[f], "A_%s", in_fmts[f].suffix);
        snprintf(bn[f], sizeof bn[f], "B_%s", in_fmts[f].suffix);
        ADD(an[f], fill(&t[nt], in_fmts[f].dt, 4, sa, &ia[0][0][0],
                        in_fmts[f].enc, NULL));
        ADD(bn[f], fill(&t[nt], in_fmts[f].dt, 4, sb, &ib[0][0][0],
                        in_fmts[f].enc, NULL));
    }
    ADD("Bs_bf16",
        fill(&t[nt], TENSOR_BF16, 2, sbs, &ibs[0][0], enc_bf16, NULL));
    ADD("C", fill(&t[nt], TENSOR_F32, 4, sc, &ic[0][0][0], enc_f32, NULL));
    ADD("D", fill(&t[nt], TENSOR_F32, 4, sc, NULL, NULL, &dc[0][0][0]));
    ADD("D0", fill(&t[nt], TENSOR_F32, 4, sc, NULL, NULL, &d0[0][0][0]));
    ADD("Ds", fill(&t[nt], TENSOR_F32, 4, sc, NULL, NULL, &ds[0][0][0]));
    memcpy(bad, &dc[0][0][0], sizeof bad);
    ADD("Dbad", fill(&t[nt], TENSOR_F32, 4, sc, NULL, NULL, bad));
    {
        tensor *d = &t[nt - 1];
        tensor_set_bits(d, P_ZERO, 0x80000000u);
        tensor_set_bits(d, P_ONE, tensor_get_bits(d, P_ONE) + 1);
        tensor_set_bits(d, P_THREE, tensor_get_bits(d, P_THREE) + 3);
        tensor_set_bits(d, P_700, tensor_get_bits(d, P_700) - 700);
        tensor_set_bits(d, P_NAN, 0x7FC00000u);
    }
    ADD("A2", fill(&t[nt], TENSOR_BF16, 2, sa2, &ia[0][0][0], enc_bf16, NULL));
    ADD("B2", fill(&t[nt], TENSOR_BF16, 2, sbs, &ib[0][0][0], enc_bf16, NULL));
    ADD("C2", fill(&t[nt], TENSOR_F32, 2, sc2, &ic[0][0][0], enc_f32, NULL));
    ADD("D2", fill(&t[nt], TENSOR_F32, 2, sc2, NULL, NULL, &dc[0][0][0]));
    ADD("Bk32", fill(&t[nt], TENSOR_BF16, 4, sk, zeros, enc_bf16, NULL));
    ADD("Bbatch",
        fill(&t[nt], TENSOR_BF16, 4, sbb, &ib[0][0][0], enc_bf16, NULL));
    ADD("Cm3", fill(&t[nt], TENSOR_F32, 4, scm, NULL, NULL, wzero));
    ADD("Cn6", fill(&t[nt], TENSOR_F32, 4, scn, NULL, NULL, wzero));
    ADD("A_i32", fill(&t[nt], TENSOR_I32, 4, sa, &ia[0][0][0], enc_raw, NULL));
    ADD("A_u16",
        fill(&t[nt], TENSOR_U16, 4, sa, &ia[0][0][0], enc_bf16, NULL));
#undef ADD
    if (rc != 0)
        goto done;
    for (size_t i = 0; i < nt; i++) {
        list[i].name = names[i];
        list[i].tensor = t[i];
    }
    snprintf(path, sizeof path, "%s/exact.safetensors", outdir);
    if (safetensors_write(path, list, nt, NULL, 0, true, &err) != TENSOR_OK) {
        rc = fail(path, &err);
        goto done;
    }
    snprintf(path, sizeof path, "%s/one.safetensors", outdir);
    list[0].name = "A_bf16";
    list[0].tensor = t[0];
    if (safetensors_write(path, list, 1, NULL, 0, true, &err) != TENSOR_OK) {
        rc = fail(path, &err);
        goto done;
    }
    /* t[0], t[1]: A_bf16, B_bf16; the C and D tensors follow the inputs */
    rc = write_npy(outdir, "a_bf16.npy", &t[0]);
    rc |= write_npy(outdir, "b_bf16.npy", &t[1]);
    for (size_t i = 0; i < nt; i++) {
        if (strcmp(names[i], "C") == 0)
            rc |= write_npy(outdir, "c.npy", &t[i]);
        if (strcmp(names[i], "D") == 0)
            rc |= write_npy(outdir, "d.npy", &t[i]);
    }
done:
    for (size_t i = 0; i < nt; i++)
        tensor_free(&t[i]);
    return rc;
}

int
main(int argc, char **argv)
{
    const char *seed = getenv("BF16EMU_TEST_SEED");

    rng_state = seed != NULL && *seed != '\0' ? strtoull(seed, NULL, 0) : 1;
    if (argc >= 3 && mkdir(argv[argc - 1], 0777) != 0 && errno != EEXIST) {
        perror(argv[argc - 1]);
        return 1;
    }
    if (argc == 4 && strcmp(argv[1], "fixture") == 0)
        return do_fixture(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "exact") == 0) {
        make_integers();
        return write_exact(argv[2]);
    }
    fputs("usage: mma_inputs fixture FIXTURE OUTDIR\n"
          "       mma_inputs exact OUTDIR\n",
          stderr);
    return 2;
}

/* attn_inputs -- input files for the bf16emu attn tests: generated inputs
   rewritten in other layouts and file types, malformed inputs, and a
   reader of safetensors headers and tensors for the checks */
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

#include "analysis/dump_inputs.h"
#include "analysis/dump_outputs.h"
#include "analysis/tensor.h"
#include "softfloat/softfloat.h"

/*
 * usage: attn_inputs split FILE OUTDIR
 *        attn_inputs bad OUTDIR
 *        attn_inputs header FILE
 *        attn_inputs same FILE1 FILE2 NAME...
 *        attn_inputs get FILE NAME INDEX
 *        attn_inputs equal FILE1 FILE2 NAME...
 *        attn_inputs heads FILE H OUT
 *
 * heads: OUT holds FILE's tensors of shape [1, 1, ...] repeated H times
 * along the heads ([1, H, ...]), the others as they are, without FILE's
 * metadata: one head of a dump as a launch of H equal heads; inputs the
 * manifest describes (inputs_gen) are regenerated and written too.
 *
 * split: FILE is a bf16emu attn output holding the inputs q, k, v (and
 * do), [B, H, N, d] BF16.  Writes into OUTDIR (created when missing; files
 * replaced):
 *   q.npy, k.npy, v.npy, do.npy   one array each ('<u2': NumPy has no BF16)
 *   all.safetensors               Q, K, V, dO as BF16 [B, H, N, d], and
 *                                 Qu, the bits of Q with dtype U16
 *   h.safetensors                 Q, K, V, dO as [B*H, N, d]
 *   n.safetensors                 Q, K, V, dO as [N, d] (only when B = H =
 *                                 1)
 * The bytes are those of FILE, only the shapes and containers change.
 *
 * bad: OUTDIR/bad.safetensors with tensors that bf16emu attn must refuse
 * or handle, all BF16 unless said: Q [1, 2, 4, 8], K and V [1, 2, 6, 8], dO
 * [1, 2, 4, 8] (a valid problem: small multiples of 1/8); Qf F32 [1, 2,
 * 4, 8]; Kd [1, 2, 6, 7] (another d); Vn [1, 2, 5, 8] (another Nk); Kb
 * [2, 2, 6, 8] (another batch); K3 [2, 6, 8] (another rank); Qe [1, 2, 0,
 * 8] (empty); R1 [8] (one dimension); Qnan, Q with element 3 a NaN
 * (0x7FC1) and element 10 +Inf (0x7F80).
 *
 * header: prints "meta KEY VALUE" for each metadata entry in header order,
 * then "tensor NAME DTYPE [d0, d1, ...]" for each tensor in data order.
 *
 * same: for each NAME, "NAME same" when both files hold a tensor NAME of
 * the same dtype, element count and bytes (shapes may differ in leading
 * 1s: [1, 1, N, d] and [N, d] hold the same data), else "NAME differs"
 * with the reason; exit status 1 when any differs.
 *
 * get: element INDEX (in C order) of tensor NAME as hex bits ("0x3F800000";
 * the digits of its dtype's size).
 *
 * equal: for each NAME, the elements of the two tensors compared as FP32
 * bit patterns (BF16 and F16 widened exactly; F32 as stored): "NAME N of M
 * bit-equal", and the first differing element "NAME [I] 0x... 0x...";
 * exit status 1 when any element or element count differs.  When FILE2 is a
 * dump that keeps NAME in part (manifest: outputs_kept), FILE1's whole
 * tensor is compared on the kept rows ("NAME N of M kept bit-equal") and
 * by the hash of the whole in FILE2's dtype ("NAME whole tensor (W): hash
 * equal" or "differs"; a differing hash is exit status 1).
 */

static int
fail(const char *what, const tensor_error *err)
{
    fprintf(stderr, "attn_inputs: %s: %s\n", what,
            err != NULL ? err->message : "");
    return 1;
}

static const tensor *
find(const tensor_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i].tensor;
    return NULL;
}

/* A view of SRC's data with another shape (the element count must be the
   same). */
static tensor
reshaped(const tensor *src, unsigned ndim, const uint64_t *shape)
{
    tensor t = *src;

    t.ndim = ndim;
    memset(t.shape, 0, sizeof t.shape);
    memcpy(t.shape, shape, ndim * sizeof *shape);
    return t;
}

/*----------------------------------------------------------------------------
 * split
 *--------------------------------------------------------------------------*/
static int
do_split(const char *file, const char *outdir)
{
    static const char *const in[4] = {"q", "k", "v", "do"};
    static const char *const up[4] = {"Q", "K", "V", "dO"};
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;
    tensor_named all[5], h[4], n[4];
    tensor u16;
    const tensor *t[4];
    size_t nt = 0;
    char path[4200];
    int rc = 0;

    if (safetensors_read_all(file, TENSOR_ANY, &f, &err) != TENSOR_OK)
        return fail(file, &err);
    for (size_t i = 0; i < 4; i++) {
        t[i] = find(&f, in[i]);
        if (t[i] == NULL && i < 3) {
            fprintf(stderr, "attn_inputs: %s: no tensor %s\n", file, in[i]);
            tensor_file_free(&f);
            return 1;
        }
        if (t[i] != NULL) {
            if (t[i]->ndim != 4 || t[i]->dtype != TENSOR_BF16) {
                fprintf(stderr, "attn_inputs: %s: %s is not BF16 [B,H,N,d]\n",
                        file, in[i]);
                tensor_file_free(&f);
                return 1;
            }
            nt = i + 1;
        }
    }
    for (size_t i = 0; i < nt && rc == 0; i++) {
        const uint64_t *s = t[i]->shape;
        uint64_t s3[3] = {s[0] * s[1], s[2], s[3]}, s2[2] = {s[2], s[3]};
        snprintf(path, sizeof path, "%s/%s.npy", outdir, in[i]);
        if (npy_write(path, t[i], true, &err) != TENSOR_OK)
            rc = fail(path, &err);
        all[i] = (tensor_named){up[i], *t[i]};
        h[i] = (tensor_named){up[i], reshaped(t[i], 3, s3)};
        n[i] = (tensor_named){up[i], reshaped(t[i], 2, s2)};
    }
    if (rc != 0) {
        tensor_file_free(&f);
        return rc;
    }
    u16 = *t[0];
    u16.dtype = TENSOR_U16;
    all[nt] = (tensor_named){"Qu", u16};
    snprintf(path, sizeof path, "%s/all.safetensors", outdir);
    if (safetensors_write(path, all, nt + 1, NULL, 0, true, &err) != 0)
        rc = fail(path, &err);
    snprintf(path, sizeof path, "%s/h.safetensors", outdir);
    if (rc == 0 && safetensors_write(path, h, nt, NULL, 0, true, &err) != 0)
        rc = fail(path, &err);
    snprintf(path, sizeof path, "%s/n.safetensors", outdir);
    if (rc == 0 && t[0]->shape[0] == 1 && t[0]->shape[1] == 1
        && safetensors_write(path, n, nt, NULL, 0, true, &err) != 0)
        rc = fail(path, &err);
    tensor_file_free(&f);
    return rc;
}

/*----------------------------------------------------------------------------
 * bad
 *--------------------------------------------------------------------------*/
/* BF16 of (i mod 17 - 8) / 8: small values, exact in BF16. */
static uint16_t
small_bf16(uint64_t i)
{
    static const uint16_t v[17] = {
        0xBF80, 0xBF60, 0xBF40, 0xBF20, 0xBF00, 0xBEC0, 0xBE80, 0xBE00, 0x0000,
        0x3E00, 0x3E80, 0x3EC0, 0x3F00, 0x3F20, 0x3F40, 0x3F60, 0x3F80};
    return v[i % 17];
}

static int
fill(tensor *t, tensor_dtype dt, unsigned ndim, const uint64_t *shape,
     uint64_t offset, tensor_error *err)
{
    if (tensor_alloc(t, dt, ndim, shape, err) != TENSOR_OK)
        return 1;
    for (uint64_t i = 0; i < t->n_elems; i++) {
        uint16_t b = small_bf16(i + offset);
        if (dt == TENSOR_F32)
            tensor_set_bits(t, i, (uint64_t)b << 16);
        else
            tensor_set_bits(t, i, b);
    }
    return 0;
}

static int
do_bad(const char *outdir)
{
    enum
    {
        N = 11
    };
    static const char *const names[N] = {"Q",  "K",  "V",  "dO", "Qf", "Kd",
                                         "Vn", "Kb", "K3", "Qe", "R1"};
    static const uint64_t shapes[N][4] = {
        {1, 2, 4, 8}, {1, 2, 6, 8}, {1, 2, 6, 8}, {1, 2, 4, 8},
        {1, 2, 4, 8}, {1, 2, 6, 7}, {1, 2, 5, 8}, {2, 2, 6, 8},
        {2, 6, 8, 0}, {1, 2, 0, 8}, {8, 0, 0, 0}};
    static const unsigned ndims[N] = {4, 4, 4, 4, 4, 4, 4, 4, 3, 4, 1};
    tensor t[N + 1];
    tensor_named list[N + 1];
    tensor_error err;
    char path[4200];
    int rc = 0;

    memset(t, 0, sizeof t);
    for (int i = 0; i < N && rc == 0; i++) {
        rc = fill(&t[i], i == 4 ? TENSOR_F32 : TENSOR_BF16, ndims[i],
                  shapes[i], (uint64_t)i * 5, &err);
        list[i] = (tensor_named){names[i], t[i]};
    }
    if (rc == 0)
        rc = fill(&t[N], TENSOR_BF16, 4, shapes[0], 0, &err);
    if (rc != 0) {
        fail("alloc", &err);
    } else {
        tensor_set_bits(&t[N], 3, 0x7FC1);
        tensor_set_bits(&t[N], 10, 0x7F80);
        list[N] = (tensor_named){"Qnan", t[N]};
        snprintf(path, sizeof path, "%s/bad.safetensors", outdir);
        if (safetensors_write(path, list, N + 1, NULL, 0, true, &err) != 0)
            rc = fail(path, &err);
    }
    for (int i = 0; i <= N; i++)
        tensor_free(&t[i]);
    return rc;
}

/*----------------------------------------------------------------------------
 * header, same
 *--------------------------------------------------------------------------*/
static void
print_shape(const tensor *t)
{
    printf("[");
    for (unsigned i = 0; i < t->ndim; i++)
        printf("%s%" PRIu64, i ? ", " : "", t->shape[i]);
    printf("]");
}

static int
do_header(const char *file)
{
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;

    if (safetensors_read_all(file, TENSOR_ANY, &f, &err) != TENSOR_OK)
        return fail(file, &err);
    for (size_t i = 0; i < f.n_meta; i++)
        printf("meta %s %s\n", f.meta[i].key, f.meta[i].value);
    for (size_t i = 0; i < f.n_tensors; i++) {
        const tensor *t = &f.tensors[i].tensor;
        printf("tensor %s %s ", f.tensors[i].name,
               tensor_dtype_name(t->dtype));
        print_shape(t);
        printf("\n");
    }
    tensor_file_free(&f);
    return 0;
}

/* Reads the files A and B into FA and FB; on failure, the message of the
   first that failed, nothing to free and 1. */
static int
read_two(const char *a, const char *b, tensor_file *fa, tensor_file *fb)
{
    tensor_error err;

    if (safetensors_read_all(a, TENSOR_ANY, fa, &err) != TENSOR_OK)
        return fail(a, &err);
    if (safetensors_read_all(b, TENSOR_ANY, fb, &err) != TENSOR_OK) {
        tensor_file_free(fa);
        return fail(b, &err);
    }
    return 0;
}

static int
do_same(const char *a, const char *b, int n, char **names)
{
    tensor_file fa = TENSOR_FILE_INIT, fb = TENSOR_FILE_INIT;
    int rc = 0;

    if (read_two(a, b, &fa, &fb) != 0)
        return 1;
    for (int i = 0; i < n; i++) {
        const tensor *ta = find(&fa, names[i]), *tb = find(&fb, names[i]);
        const char *why = NULL;
        if (ta == NULL || tb == NULL)
            why = "missing";
        else if (ta->dtype != tb->dtype)
            why = "dtypes differ";
        else if (ta->n_elems != tb->n_elems)
            why = "element counts differ";
        else if (ta->n_bytes > 0
                 && memcmp(ta->data, tb->data, ta->n_bytes) != 0)
            why = "bytes differ";
        if (why == NULL) {
            printf("%s same\n", names[i]);
        } else {
            printf("%s differs (%s)\n", names[i], why);
            rc = 1;
        }
    }
    tensor_file_free(&fa);
    tensor_file_free(&fb);
    return rc;
}

/* The FP32 bits of the FP16 value H (exact: FP32 holds every FP16
   value; subnormals normalised, NaN payloads kept in the top bits). */
static uint32_t
f16_widen(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu,
             m = h & 0x3FFu, shifts = 0;

    if (e == 0x1F)
        return sign | 0x7F800000u | (m << 13);
    if (e == 0) {
        if (m == 0)
            return sign;
        while ((m & 0x400u) == 0) {
            m <<= 1;
            shifts++;
        }
        /* 2^-14 x 0.m = 2^(-14 - shifts) x 1.m': FP32 exponent 113 - shifts */
        return sign | ((113u - shifts) << 23) | ((m & 0x3FFu) << 13);
    }
    return sign | ((e + 112u) << 23) | (m << 13);
}

/* Element I of T as FP32 bits: BF16 and F16 widened, F32 as stored; false
   for another dtype. */
static bool
f32_bits(const tensor *t, uint64_t i, uint32_t *out)
{
    uint64_t b = tensor_get_bits(t, i);

    if (t->dtype == TENSOR_BF16)
        *out = (uint32_t)b << 16;
    else if (t->dtype == TENSOR_F16)
        *out = f16_widen((uint32_t)b);
    else if (t->dtype == TENSOR_F32)
        *out = (uint32_t)b;
    else
        return false;
    return true;
}

/* do_equal for a tensor TB that keeps the rows KP of the whole TA. */
static int
equal_kept(const char *name, const tensor *ta, const tensor *tb,
           const dump_kept *kp)
{
    uint64_t whole = 1, eq = 0, h;
    uint32_t xa = 0, xb = 0;
    tensor c = TENSOR_INIT;
    bool same = true, exact = true;

    for (unsigned d = 0; d < kp->ndim; d++)
        whole *= kp->shape[d];
    if (ta->n_elems != whole) {
        printf("%s differs (%" PRIu64 " elements, the dump's whole tensor "
               "%" PRIu64 ")\n",
               name, ta->n_elems, whole);
        return 1;
    }
    for (uint64_t i = 0; i < tb->n_elems; i++) {
        uint64_t j = dump_kept_index(kp, tb, i);
        if (!f32_bits(ta, j, &xa) || !f32_bits(tb, i, &xb)) {
            printf("%s differs (not BF16, F16 or F32)\n", name);
            return 1;
        }
        if (xa == xb)
            eq++;
        else if (same) {
            printf("%s [%" PRIu64 "] 0x%08" PRIX32 " 0x%08" PRIX32 "\n", name,
                   j, xa, xb);
            same = false;
        }
    }
    /* TA in TB's dtype for the hash; a value TB's dtype cannot hold makes
       it differ */
    if (tensor_alloc(&c, tb->dtype, ta->ndim, ta->shape, NULL) != TENSOR_OK)
        return 1;
    for (uint64_t j = 0; j < ta->n_elems; j++) {
        uint64_t bits = tensor_get_bits(ta, j);
        uint32_t back = 0;
        if (ta->dtype != tb->dtype && ta->dtype == TENSOR_F32
            && tb->dtype != TENSOR_F32) {
            const sf_format *f = tb->dtype == TENSOR_F16 ? &sf_format_f16
                                                         : &sf_format_bf16;
            sf_env env = SF_ENV_IEEE;
            uint64_t r = sf_convert(f, &sf_format_f32, bits, SF_RNE, &env);
            tensor_set_bits(&c, j, r);
            if (!f32_bits(&c, j, &back) || back != (uint32_t)bits)
                exact = false;
        } else if (ta->dtype == tb->dtype) {
            tensor_set_bits(&c, j, bits);
        } else {
            exact = false;
        }
    }
    h = exact ? dump_hash_tensor(&c) : ~kp->hash;
    tensor_free(&c);
    printf("%s %" PRIu64 " of %" PRIu64 " kept bit-equal\n", name, eq,
           tb->n_elems);
    printf("%s whole tensor (%" PRIu64 "): hash %s\n", name, whole,
           h == kp->hash ? "equal" : "differs");
    return eq == tb->n_elems && h == kp->hash ? 0 : 1;
}

static int
do_equal(const char *a, const char *b, int n, char **names)
{
    tensor_file fa = TENSOR_FILE_INIT, fb = TENSOR_FILE_INIT;
    tensor_error err;
    int rc = 0;

    if (read_two(a, b, &fa, &fb) != 0)
        return 1;
    for (int k = 0; k < n; k++) {
        const tensor *ta = find(&fa, names[k]), *tb = find(&fb, names[k]);
        uint64_t eq = 0, first = UINT64_MAX;
        uint32_t xa = 0, xb = 0, fa32 = 0, fb32 = 0;
        dump_kept kp = DUMP_KEPT_INIT;
        if (dump_output_kept(b, names[k], &kp, &err) != TENSOR_OK) {
            rc = fail(b, &err);
            continue;
        }
        if (kp.kept && ta != NULL && tb != NULL) {
            rc |= equal_kept(names[k], ta, tb, &kp);
            dump_kept_free(&kp);
            continue;
        }
        if (ta == NULL || tb == NULL || ta->n_elems != tb->n_elems) {
            printf("%s differs (missing, or element counts differ)\n",
                   names[k]);
            rc = 1;
            continue;
        }
        for (uint64_t i = 0; i < ta->n_elems; i++) {
            if (!f32_bits(ta, i, &xa) || !f32_bits(tb, i, &xb)) {
                printf("%s differs (not BF16, F16 or F32)\n", names[k]);
                rc = 1;
                first = 0;
                break;
            }
            if (xa == xb) {
                eq++;
            } else if (first == UINT64_MAX) {
                first = i;
                fa32 = xa;
                fb32 = xb;
            }
        }
        printf("%s %" PRIu64 " of %" PRIu64 " bit-equal\n", names[k], eq,
               ta->n_elems);
        if (eq != ta->n_elems) {
            if (first != UINT64_MAX)
                printf("%s [%" PRIu64 "] 0x%08" PRIX32 " 0x%08" PRIX32 "\n",
                       names[k], first, fa32, fb32);
            rc = 1;
        }
    }
    tensor_file_free(&fa);
    tensor_file_free(&fb);
    return rc;
}

static int
do_get(const char *file, const char *name, const char *index)
{
    tensor t = TENSOR_INIT;
    tensor_error err;
    char *end;
    unsigned long long i = strtoull(index, &end, 10);

    if (safetensors_read(file, name, TENSOR_ANY, &t, &err) != TENSOR_OK)
        return fail(file, &err);
    if (*end != '\0' || end == index || i >= t.n_elems) {
        fprintf(stderr, "attn_inputs: %s: %s: no element %s\n", file, name,
                index);
        tensor_free(&t);
        return 1;
    }
    printf("0x%0*" PRIX64 "\n", (int)(2 * tensor_dtype_size(t.dtype)),
           tensor_get_bits(&t, (uint64_t)i));
    tensor_free(&t);
    return 0;
}

static int
do_heads(const char *file, const char *hs, const char *out)
{
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;
    char *end;
    unsigned long h = strtoul(hs, &end, 10);
    int rc = 0;

    if (*end != '\0' || h == 0 || h > 4096) {
        fprintf(stderr, "attn_inputs: heads %s: expected 1 to 4096\n", hs);
        return 1;
    }
    /* inputs the manifest describes (inputs_gen) are written out too */
    if (dump_read_all(file, TENSOR_ANY, &f, &err) != TENSOR_OK)
        return fail(file, &err);
    for (size_t i = 0; i < f.n_tensors && rc == 0; i++) {
        tensor *t = &f.tensors[i].tensor, r = TENSOR_INIT;
        uint64_t shape[TENSOR_MAX_DIMS];
        if (t->ndim < 2 || t->shape[0] != 1 || t->shape[1] != 1)
            continue;
        memcpy(shape, t->shape, sizeof shape);
        shape[1] = h;
        if (tensor_alloc(&r, t->dtype, t->ndim, shape, &err) != TENSOR_OK) {
            rc = fail(out, &err);
            break;
        }
        for (unsigned long k = 0; k < h; k++)
            memcpy(r.data + k * t->n_bytes, t->data, t->n_bytes);
        tensor_free(t);
        *t = r;
    }
    if (rc == 0
        && safetensors_write(out, f.tensors, f.n_tensors, NULL, 0, true, &err)
               != TENSOR_OK)
        rc = fail(out, &err);
    tensor_file_free(&f);
    return rc;
}

static int
make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        perror(dir);
        return 1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "split") == 0)
        return make_dir(argv[3]) != 0 ? 1 : do_split(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "bad") == 0)
        return make_dir(argv[2]) != 0 ? 1 : do_bad(argv[2]);
    if (argc == 3 && strcmp(argv[1], "header") == 0)
        return do_header(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "same") == 0)
        return do_same(argv[2], argv[3], argc - 4, argv + 4);
    if (argc >= 5 && strcmp(argv[1], "equal") == 0)
        return do_equal(argv[2], argv[3], argc - 4, argv + 4);
    if (argc == 5 && strcmp(argv[1], "get") == 0)
        return do_get(argv[2], argv[3], argv[4]);
    if (argc == 5 && strcmp(argv[1], "heads") == 0)
        return do_heads(argv[2], argv[3], argv[4]);
    fputs("usage: attn_inputs split FILE OUTDIR\n"
          "       attn_inputs bad OUTDIR\n"
          "       attn_inputs header FILE\n"
          "       attn_inputs same FILE1 FILE2 NAME...\n"
          "       attn_inputs get FILE NAME INDEX\n"
          "       attn_inputs equal FILE1 FILE2 NAME...\n"
          "       attn_inputs heads FILE H OUT\n",
          stderr);
    return 2;
}

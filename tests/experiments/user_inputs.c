/* user_inputs -- tensors as users save them (PyTorch, NumPy) for the
   shared-reader tests of bf16emu attn, diff and mma */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dump_inputs.h"
#include "analysis/tensor.h"

/*
 * usage: user_inputs npy SRC KEY AS FORM OUT
 *        user_inputs st OUT MANIFEST NAME=SRC:KEY:AS:FORM ...
 *
 * Reads tensor KEY of the .safetensors file SRC (BF16 or F32) and writes
 * it as a .npy file OUT, or (st) writes several such tensors under the
 * names NAME to the .safetensors file OUT with the metadata "manifest"
 * set to MANIFEST ("-": no metadata).
 *
 * AS: keep (the source's type), f32 (BF16 widened exactly, what PyTorch's
 * t.float() gives), f32bad (f32 with the lowest bit of element 5 set, so
 * it is no BF16 value), i16 (the BF16 bits as int16, t.view(torch.int16);
 * '<i2' in .npy), u16 (the bits as U16, '<u2').
 * FORM: bhnd (as stored), bnhd ([B, H, N, d] -> [B, N, H, d]; [B, H, N]
 * unchanged), hnd (drop a batch dimension of 1), nd (batch 0, head 0:
 * [N, d], or [N] for a 3-D source), hK-L (keep heads K..L-1 of
 * dimension 1).
 * Exit status 0, or 1 with a message on stderr.
 */

static int
fail(const char *what, const char *why)
{
    fprintf(stderr, "user_inputs: %s: %s\n", what, why);
    return 1;
}

/* Element I of T widened to its FP32 bits. */
static uint32_t
f32_bits(const tensor *t, uint64_t i)
{
    uint64_t b = tensor_get_bits(t, i);
    return t->dtype == TENSOR_BF16 ? (uint32_t)b << 16 : (uint32_t)b;
}

static int
convert(const tensor *src, const char *as, tensor *out)
{
    tensor_dtype dt;

    if (strcmp(as, "keep") == 0)
        dt = src->dtype;
    else if (strcmp(as, "f32") == 0 || strcmp(as, "f32bad") == 0)
        dt = TENSOR_F32;
    else if (strcmp(as, "i16") == 0)
        dt = TENSOR_I16;
    else if (strcmp(as, "u16") == 0)
        dt = TENSOR_U16;
    else
        return fail(as, "unknown AS (expected keep, f32, f32bad, i16, u16)");
    if ((dt == TENSOR_I16 || dt == TENSOR_U16) && src->dtype != TENSOR_BF16)
        return fail(as, "the source is not BF16");
    if (tensor_alloc(out, dt, src->ndim, src->shape, NULL) != TENSOR_OK)
        return fail(as, "out of memory");
    for (uint64_t i = 0; i < src->n_elems; i++) {
        if (dt == TENSOR_F32) {
            uint32_t b = f32_bits(src, i);
            if (i == 5 && strcmp(as, "f32bad") == 0)
                b |= 1;
            tensor_set_bits(out, i, b);
        } else {
            tensor_set_bits(out, i, tensor_get_bits(src, i));
        }
    }
    return 0;
}

static int
reform(tensor *t, const char *form)
{
    tensor out = TENSOR_INIT;
    uint64_t shape[TENSOR_MAX_DIMS] = {0};
    uint64_t b, h, n, d, h0 = 0, h1 = 0;
    unsigned long k0, k1;
    unsigned r = t->ndim;
    size_t es = tensor_dtype_size(t->dtype);
    unsigned nd = r;

    if (strcmp(form, "bhnd") == 0)
        return 0;
    if (r < 3 || t->shape[0] != 1)
        return fail(form, "expected a source [1, H, N, d] or [1, H, N]");
    b = t->shape[0];
    h = t->shape[1];
    n = t->shape[2];
    d = r == 4 ? t->shape[3] : 1;
    memcpy(shape, t->shape, sizeof shape);
    if (strcmp(form, "bnhd") == 0) {
        if (r == 3)
            return 0;
        shape[1] = n;
        shape[2] = h;
    } else if (strcmp(form, "hnd") == 0) {
        nd = r - 1;
        memmove(shape, shape + 1, nd * sizeof shape[0]);
        shape[nd] = 0;
    } else if (strcmp(form, "nd") == 0) {
        nd = r - 2;
        memmove(shape, shape + 2, nd * sizeof shape[0]);
        shape[nd] = shape[nd + 1] = 0;
        h = 1;
    } else if (sscanf(form, "h%lu-%lu", &k0, &k1) == 2 && k0 < k1 && k1 <= h) {
        h0 = k0;
        h1 = k1;
        shape[1] = h1 - h0;
    } else {
        return fail(form, "unknown FORM (expected bhnd, bnhd, hnd, nd or "
                          "hK-L)");
    }
    if (tensor_alloc(&out, t->dtype, nd, shape, NULL) != TENSOR_OK)
        return fail(form, "out of memory");
    for (uint64_t ib = 0; ib < b; ib++)
        for (uint64_t ih = 0; ih < h; ih++)
            for (uint64_t in = 0; in < n; in++) {
                uint64_t from = ((ib * t->shape[1] + ih) * n + in) * d, to;
                if (form[0] == 'b')
                    to = ((ib * n + in) * h + ih) * d;
                else if (form[0] == 'h' && form[1] != 'n') {
                    if (ih < h0 || ih >= h1)
                        continue;
                    to = ((ib * (h1 - h0) + ih - h0) * n + in) * d;
                } else
                    to = from;
                memcpy(out.data + to * es, t->data + from * es, d * es);
            }
    tensor_free(t);
    *t = out;
    return 0;
}

/* Reads SRC:KEY, converts it AS and reshapes it to FORM into *OUT. */
static int
make(const char *src, const char *key, const char *as, const char *form,
     tensor *out)
{
    tensor t = TENSOR_INIT;
    tensor_error err;
    int rc;

    size_t n = strlen(src);

    /* a dump's inputs may be described by its manifest (inputs_gen) */
    if (n > 12 && strcmp(src + n - 12, ".safetensors") == 0)
        rc = dump_input_read(src, key, TENSOR_ANY, &t, &err);
    else
        rc = tensor_file_read(src, key, TENSOR_ANY, &t, &err);
    if (rc != TENSOR_OK)
        return fail(src, err.message);
    rc = convert(&t, as, out);
    tensor_free(&t);
    if (rc == 0)
        rc = reform(out, form);
    return rc;
}

int
main(int argc, char **argv)
{
    tensor_error err;

    if (argc == 7 && strcmp(argv[1], "npy") == 0) {
        tensor t = TENSOR_INIT;
        int rc = make(argv[2], argv[3], argv[4], argv[5], &t);
        if (rc == 0 && npy_write(argv[6], &t, true, &err) != TENSOR_OK)
            rc = fail(argv[6], err.message);
        tensor_free(&t);
        return rc;
    }
    if (argc >= 5 && strcmp(argv[1], "st") == 0) {
        size_t n = (size_t)argc - 4;
        tensor_named *list = calloc(n, sizeof *list);
        tensor_meta meta = {"manifest", argv[3]};
        int rc = 0;
        if (list == NULL)
            return fail("st", "out of memory");
        for (size_t i = 0; i < n && rc == 0; i++) {
            char *spec = argv[4 + i], *f[5] = {NULL};
            char *eq = strchr(spec, '=');
            if (eq == NULL)
                return fail(spec, "expected NAME=SRC:KEY:AS:FORM");
            *eq = '\0';
            list[i].name = spec;
            f[4] = eq + 1;
            /* SRC may hold ':' only before the last four fields */
            for (int j = 3; j >= 1; j--) {
                char *c = strrchr(f[4], ':');
                if (c == NULL)
                    return fail(spec, "expected NAME=SRC:KEY:AS:FORM");
                *c = '\0';
                f[j] = c + 1;
            }
            rc = make(f[4], f[1], f[2], f[3], &list[i].tensor);
        }
        if (rc == 0
            && safetensors_write(argv[2], list, n, &meta,
                                 strcmp(argv[3], "-") == 0 ? 0 : 1, true, &err)
                   != TENSOR_OK)
            rc = fail(argv[2], err.message);
        for (size_t i = 0; i < n; i++)
            tensor_free(&list[i].tensor);
        free(list);
        return rc;
    }
    fputs("usage: user_inputs npy SRC KEY AS FORM OUT\n"
          "       user_inputs st OUT MANIFEST NAME=SRC:KEY:AS:FORM ...\n",
          stderr);
    return 2;
}

/* mma.c -- bf16emu mma: D = A B + C through a matrix-unit model, on
   tensors read from files, with an optional bitwise comparison */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat, strdup, strndup */
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tensor.h"
#include "analysis/user_tensor.h"
#include "experiments/cli.h"
#include "softfloat/mma.h"

#define CMD "mma"

/*
 * What is computed.  A is [..., M, K], B is [..., K, N] or [K, N], C and D
 * are FP32 [..., M, N]; the leading dimensions ("batch") of A, B and C are
 * equal, or B has none and is shared.  Each batch is one sf_mma_gemm call:
 * every D element is the dot product of a row of A and a column of B,
 * chained through C in ascending blocks of the model's block size.
 *
 * The comparison puts each FP32 pattern on the monotone integer line
 * (-|x| for a negative x, the pattern itself for a positive one, so that
 * +0 and -0 are both 0 and adjacent floats are adjacent integers); the
 * distance of two patterns is the difference of their places.  A NaN
 * against a non-NaN has an infinite distance, two NaNs distance 0.  Equal
 * means identical bits: -0 against +0, or two NaNs with other payloads,
 * differ at distance 0.
 */

#define N_WORST 10
/* Distance buckets: 0, 1, [2^(i-1), 2^i - 1] for i = 2..32, and inf. */
#define N_FINITE_BUCKETS 33
#define BUCKET_INF N_FINITE_BUCKETS
#define N_BUCKETS (N_FINITE_BUCKETS + 1)
#define DIST_INF CMP_DIST_INF

/* One operand given as FILE[:KEY]. */
typedef cli_operand operand;

enum
{
    IN_A,
    IN_B,
    IN_C,
    IN_REF,
    N_IN
};

/* One element that differs from the reference (x: got, y: expected). */
typedef cmp_elem diff_elem;

typedef struct
{
    uint64_t elements, equal, differ, nan_vs_number;
    uint64_t max_dist; /* largest finite distance */
    uint64_t hist[N_BUCKETS];
    size_t n_worst;
    diff_elem worst[N_WORST];
} cmp_result;

typedef struct
{
    operand in[N_IN];
    operand out;
    const char *preset; /* --model as typed */
    const sf_mma_model *model;
    bool dtype_given, as_tf32;
    tensor_dtype want; /* A and B */
    ut_info info[2];   /* what the reader did to A and B */
    sf_mma_path path;
    bool json, force;

    unsigned n_batch_dims;
    uint64_t batch[TENSOR_MAX_DIMS];
    uint64_t n_batches, m, k, n;
    bool b_shared;

    tensor d;
    unsigned flags;
    bool used_avx512, used_avx2, used_scalar;
    cmp_result cmp;
} mma_ctx;

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
#define SHAPE_MAX (TENSOR_MAX_DIMS * 24 + 4)

#define SPEC_MAX 4200

/* Tensor data is little-endian; the engine reads native integers. */
static void
swap_to_host(tensor *t)
{
    size_t es = tensor_dtype_size(t->dtype);

    if (cli_host_little_endian() || es < 2)
        return;
    for (size_t i = 0; i + es <= t->n_bytes; i += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            unsigned char c = t->data[i + a];
            t->data[i + a] = t->data[i + b];
            t->data[i + b] = c;
        }
}

/* The histogram index of distance D: the shared buckets (experiments/
   cli.h), of which an FP32 distance uses the first 34, then "inf". */
static unsigned
bucket_of(uint64_t d)
{
    return d == CMP_DIST_INF ? BUCKET_INF : cmp_dist_bucket(d);
}

static const char *
bucket_label(char *buf, size_t n, unsigned i)
{
    return cmp_dist_bucket_label(buf, n,
                                 i == BUCKET_INF ? CMP_DIST_BUCKET_INF : i);
}

static const char *
kind_name(sf_mma_kind k)
{
    switch (k) {
    case SF_MMA_FUSED:
        return "fused";
    case SF_MMA_FMA_CHAIN:
        return "fma-chain";
    case SF_MMA_FMA_LANES:
        return "fma-lanes";
    case SF_MMA_MUL_ADD:
        return "mul-add";
    case SF_MMA_PAIRWISE:
        return "pairwise";
    case SF_MMA_KAHAN:
        return "kahan";
    default:
        return "exact";
    }
}

static const char *
path_name(const mma_ctx *x)
{
    static const char *const names[8] = {"none",
                                         "scalar",
                                         "avx2",
                                         "avx2 and scalar",
                                         "avx512",
                                         "avx512 and scalar",
                                         "avx512 and avx2",
                                         "avx512, avx2 and scalar"};

    return names[(x->used_avx512 ? 4 : 0) | (x->used_avx2 ? 2 : 0)
                 | (x->used_scalar ? 1 : 0)];
}

/*----------------------------------------------------------------------------
 * Presets and input formats.
 *--------------------------------------------------------------------------*/
static const sf_format *const in_formats[] = {&sf_format_bf16, &sf_format_f16,
                                              &sf_format_tf32, &sf_format_e4m3,
                                              &sf_format_e5m2, &sf_format_f32};
#define N_IN_FORMATS (sizeof in_formats / sizeof in_formats[0])

/* The names of every preset, comma-separated, into B. */
static void
preset_list(cli_buf *b)
{
    for (size_t i = 0; i < sf_mma_preset_count(); i++)
        cli_buf_printf(b, "%s%s", i ? ", " : "", sf_mma_preset(i)->name);
}

/* The input formats preset NAME takes (itself or a variant), into B. */
static void
preset_inputs(cli_buf *b, const char *name)
{
    bool first = true;

    for (size_t i = 0; i < N_IN_FORMATS; i++)
        if (sf_mma_preset_for(name, in_formats[i]) != NULL) {
            cli_buf_printf(b, "%s%s", first ? "" : ", ", in_formats[i]->name);
            first = false;
        }
    if (first)
        cli_buf_puts(b, "none");
}

static bool
is_fp8(const sf_format *f)
{
    return f == &sf_format_e4m3 || f == &sf_format_e5m2;
}

/*----------------------------------------------------------------------------
 * Operands.
 *--------------------------------------------------------------------------*/
static bool
read_operand(operand *o, tensor_dtype want)
{
    tensor_error err;

    if (tensor_file_read(o->path, o->key, want, &o->t, &err) != TENSOR_OK) {
        cli_error(CMD, "%s: %s", o->opt, err.message);
        return false;
    }
    swap_to_host(&o->t);
    return true;
}

/* Input I (A or B) through the shared reader: the --dtype type when
   given (F32 or F16 values that are values of it converted exactly; U16,
   I16, U8, I8 bit patterns kept), else the file's type as stored. */
static bool
read_input(mma_ctx *x, int i)
{
    operand *o = &x->in[i];
    tensor_error err;

    if (ut_read(o->path, o->key, x->dtype_given ? x->want : TENSOR_ANY,
                x->dtype_given, "--dtype", &o->t, &x->info[i], &err)
        != TENSOR_OK) {
        cli_error(CMD, "%s: %s", o->opt, err.message);
        return false;
    }
    swap_to_host(&o->t);
    return true;
}

/* The format of the elements of input O (A or B) before the model is
   known: F32 stands for FP32 or TF32. */
static bool
input_format(mma_ctx *x, operand *o)
{
    char spec[SPEC_MAX];

    cli_spec_str(spec, sizeof spec, o);
    switch (o->t.dtype) {
    case TENSOR_BF16:
    case TENSOR_F16:
    case TENSOR_F8_E4M3:
    case TENSOR_F8_E5M2:
        o->fmt = tensor_dtype_format(o->t.dtype);
        return true;
    case TENSOR_F32:
        o->fmt = x->as_tf32 ? &sf_format_tf32 : &sf_format_f32;
        return true;
    case TENSOR_U16:
    case TENSOR_I16:
        cli_error(CMD,
                  "%s %s: dtype %s (raw 16-bit patterns); expected "
                  "BF16 or F16 (give --dtype bf16 or --dtype f16 to read "
                  "them as such)",
                  o->opt, spec, tensor_dtype_name(o->t.dtype));
        return false;
    case TENSOR_U8:
        cli_error(CMD,
                  "%s %s: dtype U8 (raw 8-bit patterns); expected "
                  "F8_E4M3 or F8_E5M2 (give --dtype e4m3 or --dtype e5m2 to "
                  "read them as such)",
                  o->opt, spec);
        return false;
    default:
        cli_error(CMD,
                  "%s %s: dtype %s; expected BF16, F16, F8_E4M3, "
                  "F8_E5M2 or F32 (FP32 or TF32 inputs)",
                  o->opt, spec, tensor_dtype_name(o->t.dtype));
        return false;
    }
}

/* The model variant of the preset for the formats of A and B.  An F32
   input is FP32, or TF32 with --dtype tf32: a preset with a TF32 variant
   but no FP32 one (sm90) is refused without --dtype, since F32 files
   also hold BF16 or F16 values (PyTorch's t.float()); the input type
   never changes the model silently. */
static bool
resolve_model(mma_ctx *x)
{
    operand *a = &x->in[IN_A], *b = &x->in[IN_B];
    const sf_mma_model *ma, *mb;
    char sa[SPEC_MAX], sb[SPEC_MAX];
    cli_buf list;

    cli_spec_str(sa, sizeof sa, a);
    cli_spec_str(sb, sizeof sb, b);
    for (int i = IN_A; i <= IN_B; i++) {
        operand *o = &x->in[i];
        if (o->fmt == &sf_format_f32 && !x->dtype_given
            && sf_mma_preset_for(x->preset, &sf_format_f32) == NULL
            && sf_mma_preset_for(x->preset, &sf_format_tf32) != NULL) {
            cli_error(CMD,
                      "%s %s is F32 and --model %s has no f32 variant: pass "
                      "--dtype tf32 for its tf32 variant, or --dtype bf16 "
                      "or --dtype f16 if the values are BF16 or F16 values",
                      i == IN_A ? "A" : "B", i == IN_A ? sa : sb, x->preset);
            return false;
        }
    }
    if (a->fmt != b->fmt && !(is_fp8(a->fmt) && is_fp8(b->fmt))) {
        cli_error(CMD,
                  "A %s is %s and B %s is %s: A and B must have one "
                  "format (only e4m3 and e5m2 may be mixed)",
                  sa, a->fmt->name, sb, b->fmt->name);
        return false;
    }
    ma = sf_mma_preset_for(x->preset, a->fmt);
    mb = sf_mma_preset_for(x->preset, b->fmt);
    if (ma == NULL || mb == NULL) {
        const operand *o = ma == NULL ? a : b;
        cli_buf_init(&list);
        preset_inputs(&list, x->preset);
        cli_error(CMD,
                  "--model %s does not take %s inputs (%s %s is %s%s); "
                  "%s takes %s",
                  x->preset, o->fmt->name, o == a ? "A" : "B",
                  o == a ? sa : sb, tensor_dtype_name(o->t.dtype),
                  o->t.dtype == TENSOR_F32 ? ", read as f32 or tf32" : "",
                  x->preset, list.failed ? "?" : list.p);
        cli_buf_free(&list);
        return false;
    }
    if (ma != mb) {
        cli_error(CMD, "--model %s has no single variant for %s A and %s B",
                  x->preset, a->fmt->name, b->fmt->name);
        return false;
    }
    if (sf_mma_model_check(ma) != NULL || ma->acc != &sf_format_f32) {
        cli_error(CMD, "--model %s: the model %s is not usable here (%s)",
                  x->preset, ma->name,
                  sf_mma_model_check(ma) != NULL ? sf_mma_model_check(ma)
                                                 : "its accumulator is not "
                                                   "f32");
        return false;
    }
    x->model = ma;
    return true;
}

/* TF32 inputs arrive as F32 patterns whose 13 low bits must be zero. */
static bool
check_tf32(const operand *o)
{
    char spec[SPEC_MAX];
    uint64_t mask = ((uint64_t)1 << sf_format_tf32.pad_bits) - 1;

    if (o->fmt != &sf_format_tf32)
        return true;
    for (uint64_t i = 0; i < o->t.n_elems; i++) {
        uint32_t v;
        memcpy(&v, o->t.data + i * 4, 4);
        if ((v & mask) != 0) {
            cli_error(CMD,
                      "%s %s: element %" PRIu64 " (in C order) is "
                      "f32:0x%08" PRIX32 ", not a tf32 value (its %u low "
                      "bits must be zero; round the input to tf32 first)",
                      o->opt, cli_spec_str(spec, sizeof spec, o), i, v,
                      sf_format_tf32.pad_bits);
            return false;
        }
    }
    return true;
}

/* The shapes: batch dims, M, K, N; C and the reference must be D's. */
static bool
check_shapes(mma_ctx *x)
{
    const tensor *a = &x->in[IN_A].t, *b = &x->in[IN_B].t;
    char sa[SPEC_MAX], sb[SPEC_MAX], so[SPEC_MAX];
    char ha[SHAPE_MAX], hb[SHAPE_MAX], ho[SHAPE_MAX], hd[SHAPE_MAX];
    uint64_t dshape[TENSOR_MAX_DIMS];
    unsigned nd;

    cli_spec_str(sa, sizeof sa, &x->in[IN_A]);
    cli_spec_str(sb, sizeof sb, &x->in[IN_B]);
    cli_shape_str(ha, sizeof ha, a->ndim, a->shape);
    cli_shape_str(hb, sizeof hb, b->ndim, b->shape);
    for (int i = IN_A; i <= IN_B; i++) {
        const tensor *t = &x->in[i].t;
        if (t->ndim < 2) {
            cli_error(CMD,
                      "%s %s: shape %s has %u dimension%s; expected "
                      "[..., %s] (at least 2)",
                      x->in[i].opt, i == IN_A ? sa : sb, i == IN_A ? ha : hb,
                      t->ndim, t->ndim == 1 ? "" : "s",
                      i == IN_A ? "M, K" : "K, N");
            return false;
        }
    }
    x->n_batch_dims = a->ndim - 2;
    x->m = a->shape[a->ndim - 2];
    x->k = a->shape[a->ndim - 1];
    x->n = b->shape[b->ndim - 1];
    x->b_shared = b->ndim == 2 && a->ndim > 2;
    if (b->ndim != 2 || a->ndim == 2) {
        bool same = b->ndim == a->ndim;
        for (unsigned i = 0; same && i < x->n_batch_dims; i++)
            same = a->shape[i] == b->shape[i];
        if (!same) {
            char ba[SHAPE_MAX], bb[SHAPE_MAX];
            cli_shape_str(ba, sizeof ba, x->n_batch_dims, a->shape);
            cli_shape_str(bb, sizeof bb, b->ndim - 2, b->shape);
            if (x->n_batch_dims == 0)
                cli_error(CMD,
                          "the batch dimensions differ: A %s has shape "
                          "%s (no batch), B %s has shape %s (batch %s); "
                          "expected B [K, N] without batch dimensions",
                          sa, ha, sb, hb, bb);
            else
                cli_error(CMD,
                          "the batch dimensions differ: A %s has shape "
                          "%s (batch %s), B %s has shape %s (batch %s); "
                          "expected B with batch %s, or B with 2 dimensions "
                          "(shared)",
                          sa, ha, ba, sb, hb, bb, ba);
            return false;
        }
    }
    if (b->shape[b->ndim - 2] != x->k) {
        cli_error(CMD,
                  "the inner dimensions differ: A %s has shape %s (K = "
                  "%" PRIu64 ", its last dimension), B %s has shape %s (K = "
                  "%" PRIu64 ", its second to last); expected equal",
                  sa, ha, x->k, sb, hb, b->shape[b->ndim - 2]);
        return false;
    }
    x->n_batches = 1;
    for (unsigned i = 0; i < x->n_batch_dims; i++) {
        x->batch[i] = a->shape[i];
        dshape[i] = a->shape[i];
        x->n_batches *= a->shape[i];
    }
    nd = x->n_batch_dims;
    dshape[nd] = x->m;
    dshape[nd + 1] = x->n;
    cli_shape_str(hd, sizeof hd, nd + 2, dshape);
    for (int i = IN_C; i <= IN_REF; i++) {
        const operand *o = &x->in[i];
        bool same = o->t.ndim == nd + 2;
        if (o->arg == NULL)
            continue;
        for (unsigned j = 0; same && j < nd + 2; j++)
            same = o->t.shape[j] == dshape[j];
        if (!same) {
            cli_spec_str(so, sizeof so, o);
            cli_shape_str(ho, sizeof ho, o->t.ndim, o->t.shape);
            cli_error(CMD,
                      "%s %s has shape %s; expected %s, the shape of D "
                      "= A B + C for A %s and B %s",
                      o->opt, so, ho, hd, ha, hb);
            return false;
        }
    }
    if (tensor_alloc(&x->d, TENSOR_F32, nd + 2, dshape, NULL) != TENSOR_OK) {
        cli_error(CMD, "cannot allocate D %s (out of memory)", hd);
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * The output file: checked before anything is read or computed.
 *--------------------------------------------------------------------------*/
static bool
check_output(mma_ctx *x)
{
    operand *o = &x->out;

    if (!cli_has_suffix(o->path, ".safetensors")
        && !cli_has_suffix(o->path, ".npy")) {
        cli_error(CMD,
                  "--out '%s': unknown file type (expected a name "
                  "ending in .safetensors or .npy)",
                  o->arg);
        return false;
    }
    if (cli_has_suffix(o->path, ".npy") && o->key != NULL) {
        cli_error(CMD,
                  "--out '%s': a .npy file holds one unnamed array "
                  "(expected no :KEY)",
                  o->arg);
        return false;
    }
    if (o->key == NULL && cli_has_suffix(o->path, ".safetensors"))
        o->key = "D";
    return cli_check_output_file(CMD, o, x->in, N_IN, x->force);
}

static bool
write_output(mma_ctx *x)
{
    operand *o = &x->out;
    tensor_error err;
    int rc;

    swap_to_host(&x->d); /* back to little-endian */
    if (cli_has_suffix(o->path, ".npy")) {
        rc = npy_write(o->path, &x->d, x->force, &err);
    } else {
        char producer[64];
        tensor_named tn = {o->key, x->d};
        tensor_meta meta[2] = {{"model", x->model->name},
                               {"producer", producer}};
        snprintf(producer, sizeof producer, "bf16emu %s mma", cli_version());
        rc = safetensors_write(o->path, &tn, 1, meta, 2, x->force, &err);
    }
    swap_to_host(&x->d);
    if (rc != TENSOR_OK) {
        cli_error(CMD, "--out: %s", err.message);
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * The computation.
 *--------------------------------------------------------------------------*/
static bool
run_gemm(mma_ctx *x)
{
    const operand *a = &x->in[IN_A], *b = &x->in[IN_B], *c = &x->in[IN_C];
    size_t sa = a->fmt->storage_bits / 8, sb = b->fmt->storage_bits / 8;
    size_t mn = (size_t)(x->m * x->n);
    sf_env env = cli_env_ieee();
    uint32_t *d = (uint32_t *)(void *)x->d.data;
    const uint32_t *cd =
        c->arg != NULL ? (const uint32_t *)(const void *)c->t.data : NULL;

    env.flags = 0;
    if (mn == 0)
        return true;
    for (uint64_t i = 0; i < x->n_batches; i++) {
        size_t bi = (size_t)i;
        uint32_t *di = d + bi * mn;
        const uint32_t *ci = cd != NULL ? cd + bi * mn : NULL;
        int used;

        if (x->k == 0) {
            /* the empty sum: D = C */
            if (ci != NULL)
                memcpy(di, ci, mn * 4);
            else
                memset(di, 0, mn * 4);
            continue;
        }
        used = sf_mma_gemm(
            x->model, (size_t)x->m, (size_t)x->n, (size_t)x->k, a->fmt,
            a->t.data + bi * (size_t)(x->m * x->k) * sa, b->fmt,
            b->t.data + (x->b_shared ? 0 : bi * (size_t)(x->k * x->n) * sb),
            ci, di, x->path, &env);
        if (used < 0) {
            cli_error(CMD, "--path %s: that path cannot run",
                      x->path == SF_MMA_PATH_AVX2 ? "avx2" : "avx512");
            return false;
        }
        if (used == SF_MMA_PATH_AVX512)
            x->used_avx512 = true;
        else if (used == SF_MMA_PATH_AVX2)
            x->used_avx2 = true;
        else
            x->used_scalar = true;
    }
    x->flags = env.flags;
    return true;
}

/* What the request asks is checked before what this CPU has, so that the
   same command gives the same message on every machine. */
static bool
check_path(const mma_ctx *x)
{
    bool v512 = x->path == SF_MMA_PATH_AVX512;
    const char *name = v512 ? "avx512" : "avx2";

    if (x->path != SF_MMA_PATH_AVX512 && x->path != SF_MMA_PATH_AVX2)
        return true;
    if (!sf_mma_gemm_covers(x->model, x->in[IN_A].fmt, x->in[IN_B].fmt)) {
        cli_error(CMD,
                  "--path %s: the %s path does not cover %s with %s "
                  "inputs (it covers the fused NVIDIA models with bf16 or "
                  "f16 inputs; use --path scalar or auto)",
                  name, v512 ? "AVX-512" : "AVX2", x->model->name,
                  x->in[IN_A].fmt->name);
        return false;
    }
    if (v512 ? !sf_mma_gemm_avx512_available()
             : !sf_mma_gemm_avx2_available()) {
        cli_error(CMD,
                  "--path %s: this CPU (or its operating system) lacks %s "
                  "(use --path scalar or auto)",
                  name,
                  v512 ? "AVX-512F and AVX-512CD" : "AVX2, FMA, F16C or BMI2");
        return false;
    }
    if (sf_isa_resolve(cli_isa()) < (v512 ? SF_ISA_AVX512 : SF_ISA_AVX2)) {
        cli_error(CMD, "--path %s: BF16EMU_ISA=%s caps the run below it", name,
                  sf_isa_name((sf_isa)cli_isa()));
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * The comparison.
 *--------------------------------------------------------------------------*/
static void
compare(mma_ctx *x)
{
    cmp_result *r = &x->cmp;
    const tensor *ref = &x->in[IN_REF].t;

    memset(r, 0, sizeof *r);
    r->elements = x->d.n_elems;
    for (uint64_t i = 0; i < x->d.n_elems; i++) {
        uint32_t got, want;
        diff_elem e;
        memcpy(&got, x->d.data + i * 4, 4);
        memcpy(&want, ref->data + i * 4, 4);
        e.dist = cmp_ulp_distance(&sf_format_f32, got, want);
        r->hist[bucket_of(e.dist)]++;
        if (got == want) {
            r->equal++;
            continue;
        }
        r->differ++;
        if (e.dist == DIST_INF)
            r->nan_vs_number++;
        else if (e.dist > r->max_dist)
            r->max_dist = e.dist;
        e.flat = i;
        e.x = got;
        e.y = want;
        cmp_worst_add(r->worst, &r->n_worst, N_WORST, &e);
    }
}

/* Batch index, row and column of the flat index I of D. */
static void
split_index(const mma_ctx *x, uint64_t i, uint64_t *batch, uint64_t *row,
            uint64_t *col)
{
    uint64_t rest = i / x->n;

    *col = i % x->n;
    *row = rest % x->m;
    rest /= x->m;
    for (unsigned j = x->n_batch_dims; j-- > 0;) {
        batch[j] = rest % x->batch[j];
        rest /= x->batch[j];
    }
}

static const char *
f32_ref(char *buf, size_t n, uint32_t v)
{
    snprintf(buf, n, "f32:0x%08" PRIX32, v);
    return buf;
}

/*----------------------------------------------------------------------------
 * Reports.
 *--------------------------------------------------------------------------*/
static void
text_operand(cli_buf *b, const char *label, const operand *o, const char *note)
{
    char spec[SPEC_MAX], sh[SHAPE_MAX];

    cli_buf_printf(b, "  %-2s %s  %s %s%s\n", label,
                   cli_spec_str(spec, sizeof spec, o),
                   tensor_dtype_name(o->t.dtype),
                   cli_shape_str(sh, sizeof sh, o->t.ndim, o->t.shape), note);
}

static void
text_report(mma_ctx *x, cli_buf *b)
{
    const sf_mma_model *m = x->model;
    char sh[SHAPE_MAX], fl[6], spec[SPEC_MAX], buf[64], g[64], w[64];
    const cmp_result *r = &x->cmp;

    cli_buf_printf(b, "mma: D = A B + C with %s (%s inputs, %s", m->name,
                   x->in[IN_A].fmt == x->in[IN_B].fmt ? x->in[IN_A].fmt->name
                                                      : "e4m3/e5m2",
                   kind_name(m->kind));
    if (m->n > 0)
        cli_buf_printf(b, ", k in ascending blocks of %u)\n", m->n);
    else
        cli_buf_puts(b, ", k in one block)\n");
    text_operand(b, "A", &x->in[IN_A], "");
    text_operand(b, "B", &x->in[IN_B],
                 x->b_shared ? ", shared by every batch" : "");
    for (int i = IN_A; i <= IN_B; i++)
        if (x->info[i].how[0] != '\0')
            cli_buf_printf(b, "     %s: %s\n", i == IN_A ? "A" : "B",
                           x->info[i].how);
    if (x->in[IN_C].arg != NULL)
        text_operand(b, "C", &x->in[IN_C], "");
    else
        cli_buf_puts(b, "  C  zeros\n");
    cli_shape_str(sh, sizeof sh, x->d.ndim, x->d.shape);
    if (x->out.arg != NULL)
        cli_buf_printf(b, "  D  %s  F32 %s, written\n",
                       cli_spec_str(spec, sizeof spec, &x->out), sh);
    else
        cli_buf_printf(b, "  D  F32 %s, not written\n", sh);
    cli_shape_str(sh, sizeof sh, x->n_batch_dims, x->batch);
    cli_buf_printf(b,
                   "  batch %s: %" PRIu64 " product%s of [%" PRIu64
                   " x %" PRIu64 "] by [%" PRIu64 " x %" PRIu64 "]\n",
                   sh, x->n_batches, x->n_batches == 1 ? "" : "s", x->m, x->k,
                   x->k, x->n);
    cli_buf_printf(b, "  path %s, flags %s\n", path_name(x),
                   sf_flags_str(x->flags, fl));
    if (x->in[IN_REF].arg == NULL)
        return;

    cli_shape_str(sh, sizeof sh, x->in[IN_REF].t.ndim, x->in[IN_REF].t.shape);
    cli_buf_printf(b, "\ncompare: D against %s (F32 %s)\n",
                   cli_spec_str(spec, sizeof spec, &x->in[IN_REF]), sh);
    cli_buf_printf(
        b, "  %" PRIu64 " elements, %" PRIu64 " bit-equal, %" PRIu64 " differ",
        r->elements, r->equal, r->differ);
    if (r->nan_vs_number > 0)
        cli_buf_printf(b, " (%" PRIu64 " NaN against a number)",
                       r->nan_vs_number);
    cli_buf_putc(b, '\n');
    cli_buf_puts(b, "  ulp distance           elements\n");
    for (unsigned i = 0; i < N_BUCKETS; i++)
        if (r->hist[i] > 0)
            cli_buf_printf(b, "  %-22s %" PRIu64 "\n",
                           bucket_label(buf, sizeof buf, i), r->hist[i]);
    if (r->n_worst > 0) {
        cli_buf_puts(b, "  worst elements (largest distance first):\n");
        for (size_t i = 0; i < r->n_worst; i++) {
            const diff_elem *e = &r->worst[i];
            uint64_t bi[TENSOR_MAX_DIMS], row, col;
            char ref1[24], ref2[24];
            split_index(x, e->flat, bi, &row, &col);
            cli_buf_printf(b,
                           "    batch %s row %" PRIu64 " col %" PRIu64
                           ": got %s %s, expected %s %s, distance ",
                           cli_shape_str(sh, sizeof sh, x->n_batch_dims, bi),
                           row, col, f32_ref(ref1, sizeof ref1, e->x),
                           cli_f32_dec(g, sizeof g, e->x),
                           f32_ref(ref2, sizeof ref2, e->y),
                           cli_f32_dec(w, sizeof w, e->y));
            if (e->dist == DIST_INF)
                cli_buf_puts(b, "inf\n");
            else
                cli_buf_printf(b, "%" PRIu64 "\n", e->dist);
        }
    }
    if (r->differ == 0)
        cli_buf_printf(b, "result: all %" PRIu64 " elements bit-equal\n",
                       r->elements);
    else
        cli_buf_printf(b,
                       "result: %" PRIu64 " of %" PRIu64 " elements differ\n",
                       r->differ, r->elements);
}

static void
json_operand(cli_json *j, const char *key, const operand *o)
{
    if (o->arg == NULL) {
        cli_json_null(j, key);
        return;
    }
    cli_json_object_begin(j, key);
    cli_json_string(j, "file", o->path);
    cli_json_string(j, "key", o->key);
    cli_json_string(j, "dtype", tensor_dtype_name(o->t.dtype));
    if (o->fmt != NULL)
        cli_json_string(j, "format", o->fmt->name);
    cli_json_shape(j, "shape", o->t.ndim, o->t.shape);
    cli_json_object_end(j);
}

static void
json_f32(cli_json *j, const char *key, uint32_t v)
{
    char buf[64];

    cli_json_object_begin(j, key);
    snprintf(buf, sizeof buf, "0x%08" PRIX32, v);
    cli_json_string(j, "bits", buf);
    cli_json_string(j, "value", cli_f32_dec(buf, sizeof buf, v));
    cli_json_object_end(j);
}

static void
json_compare(mma_ctx *x, cli_json *j)
{
    const cmp_result *r = &x->cmp;

    if (x->in[IN_REF].arg == NULL) {
        cli_json_null(j, "compare");
        return;
    }
    cli_json_object_begin(j, "compare");
    cli_json_string(j, "file", x->in[IN_REF].path);
    cli_json_string(j, "key", x->in[IN_REF].key);
    cli_json_int(j, "elements", (long long)r->elements);
    cli_json_int(j, "equal", (long long)r->equal);
    cli_json_int(j, "differ", (long long)r->differ);
    cli_json_int(j, "nan_vs_number", (long long)r->nan_vs_number);
    cli_json_dist(j, "max_distance",
                  r->nan_vs_number > 0 ? DIST_INF : r->max_dist);
    cli_json_array_begin(j, "histogram");
    for (unsigned i = 0; i < N_BUCKETS; i++)
        cli_json_dist_bucket(j, i, i == BUCKET_INF, r->hist[i]);
    cli_json_array_end(j);
    cli_json_array_begin(j, "worst");
    for (size_t i = 0; i < r->n_worst; i++) {
        const diff_elem *e = &r->worst[i];
        uint64_t bi[TENSOR_MAX_DIMS], row, col;
        split_index(x, e->flat, bi, &row, &col);
        cli_json_object_begin(j, NULL);
        cli_json_int(j, "index", (long long)e->flat);
        cli_json_shape(j, "batch", x->n_batch_dims, bi);
        cli_json_int(j, "row", (long long)row);
        cli_json_int(j, "col", (long long)col);
        json_f32(j, "got", e->x);
        json_f32(j, "expected", e->y);
        cli_json_dist(j, "distance", e->dist);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_object_end(j);
}

static void
json_report(mma_ctx *x, cli_json *j)
{
    char fl[6];

    cli_json_object_begin(j, NULL);
    cli_json_string(j, "command", "mma");
    cli_json_string(j, "version", cli_version());
    cli_json_string(j, "preset", x->preset);
    cli_json_string(j, "model", x->model->name);
    cli_json_string(j, "kind", kind_name(x->model->kind));
    cli_json_int(j, "block", x->model->n);
    json_operand(j, "a", &x->in[IN_A]);
    json_operand(j, "b", &x->in[IN_B]);
    cli_json_string(j, "a_read",
                    x->info[IN_A].how[0] != '\0' ? x->info[IN_A].how : NULL);
    cli_json_string(j, "b_read",
                    x->info[IN_B].how[0] != '\0' ? x->info[IN_B].how : NULL);
    json_operand(j, "c", &x->in[IN_C]);
    cli_json_bool(j, "b_shared", x->b_shared);
    cli_json_shape(j, "batch", x->n_batch_dims, x->batch);
    cli_json_int(j, "m", (long long)x->m);
    cli_json_int(j, "k", (long long)x->k);
    cli_json_int(j, "n", (long long)x->n);
    cli_json_string(j, "path", path_name(x));
    cli_json_string(j, "flags", sf_flags_str(x->flags, fl));
    if (x->out.arg != NULL) {
        cli_json_object_begin(j, "out");
        cli_json_string(j, "file", x->out.path);
        cli_json_string(j, "key", x->out.key);
        cli_json_string(j, "dtype", "F32");
        cli_json_shape(j, "shape", x->d.ndim, x->d.shape);
        cli_json_object_end(j);
    } else {
        cli_json_null(j, "out");
    }
    json_compare(x, j);
    cli_json_object_end(j);
    cli_json_finish(j);
}

/*----------------------------------------------------------------------------
 * Options and main.
 *--------------------------------------------------------------------------*/
enum
{
    O_MODEL,
    O_A,
    O_B,
    O_C,
    O_OUT,
    O_COMPARE,
    O_DTYPE,
    O_PATH,
    O_FORCE,
    O_JSON,
    O_HELP
};

static const cli_option options[] = {
    {"model", true, O_MODEL},  {"a", true, O_A},
    {"b", true, O_B},          {"c", true, O_C},
    {"out", true, O_OUT},      {"compare", true, O_COMPARE},
    {"dtype", true, O_DTYPE},  {"path", true, O_PATH},
    {"force", false, O_FORCE}, {"json", false, O_JSON},
    {"help", false, O_HELP},   {NULL, false, 0}};

void
mma_help(FILE *out)
{
    cli_buf list;

    fputs("usage: bf16emu mma --model PRESET --a FILE[:KEY] --b FILE[:KEY]\n"
          "                   [--c FILE[:KEY]] --out FILE[:KEY] [options]\n"
          "       bf16emu mma --model PRESET --a ... --b ... --compare "
          "FILE[:KEY]\n"
          "\n"
          "Computes D = A B + C with a matrix-unit model, bit for bit: each "
          "element of\nD is the dot product of a row of A and a column of B, "
          "chained through the\nFP32 accumulator (C) in ascending blocks of "
          "the model's block size (16\nproducts for sm90).  A is [..., M, K], "
          "B is [..., K, N], C and D are FP32\n[..., M, N]; the leading "
          "(batch) dimensions must be equal, except that a\nB of two "
          "dimensions is shared by every batch.  Without --c, C is zero;\n"
          "with K = 0, D = C.\n"
          "\n"
          "Files are .safetensors or .npy (by the name's extension, else by "
          "the\ncontent).  FILE:KEY names a tensor of a safetensors file; "
          "without :KEY the\nfile must hold exactly one tensor.  The last ':' "
          "separates the key, unless\nthe text after it holds a '/' or the "
          "whole argument names an existing file.\nA and B are BF16, F16, "
          "F8_E4M3, F8_E5M2 or F32 (FP32, or TF32 where the\nmodel has a TF32 "
          "variant: then the 13 low bits must be zero), of one\nformat (E4M3 "
          "and E5M2 may mix); the preset's variant for that format is\nused "
          "(sm90 with E4M3 inputs runs sm90-fp8).\n"
          "\n"
          "options:\n"
          "  --model PRESET       the model (see the list below)\n"
          "  --a FILE[:KEY]       A, [..., M, K]\n"
          "  --b FILE[:KEY]       B, [..., K, N] or [K, N]\n"
          "  --c FILE[:KEY]       C, F32 [..., M, N] (default: zeros)\n"
          "  --dtype FMT          read A and B as FMT: bf16 or f16 (also raw "
          "U16 and\n"
          "                       <u2 .npy), e4m3 or e5m2 (also raw U8), f32, "
          "tf32\n"
          "  --out FILE[:KEY]     write D (F32) atomically: .safetensors (key "
          "default\n"
          "                       D) or .npy; never over an input\n"
          "  --force              replace an existing --out file\n"
          "  --compare FILE[:KEY] compare D with a reference (F32 [..., M, "
          "N]) bit for\n"
          "                       bit: equal count, ulp-distance histogram, "
          "worst\n"
          "                       elements; exit 1 if any element differs\n"
          "  --path PATH          auto (default), scalar, avx2 or avx512: the "
          "same bits\n"
          "  --json               print one JSON object instead of text\n"
          "  -h, --help           this help\n"
          "\n"
          "At least one of --out and --compare is needed.  Ulp distance: the "
          "distance\nof the two FP32 patterns on the monotone integer line "
          "(+0 and -0 are both\n0); a NaN against a number is at distance "
          "inf, two NaNs at 0.  Buckets:\n0, 1, 2-3, 4-7, ..., inf.\n"
          "\n",
          out);
    cli_buf_init(&list);
    preset_list(&list);
    if (list.failed) {
        fputs("presets: see bf16emu(1)\n", out);
    } else {
        /* "presets: a, b, ..." wrapped before column 77 */
        size_t col = 0;
        const char *w = list.p;
        fputs("presets:", out);
        col = 8;
        while (*w != '\0') {
            size_t len = strcspn(w, " ");
            if (col + 1 + len > 76) {
                fputs("\n ", out);
                col = 1;
            }
            fprintf(out, " %.*s", (int)len, w);
            col += 1 + len;
            w += len;
            while (*w == ' ')
                w++;
        }
        fputc('\n', out);
    }
    cli_buf_free(&list);
    fputs("\n"
          "example (three tensors of one file, D written and checked "
          "against a\nreference):\n"
          "  bf16emu mma --model sm90 --a x.safetensors:A --b "
          "x.safetensors:B \\\n"
          "      --c x.safetensors:C --out d.safetensors --compare "
          "ref.safetensors:D\n"
          "\n"
          "Exit status: 0 ok, 1 D differs from --compare, 2 bad usage or "
          "input.\n",
          out);
}

static bool
parse_dtype(mma_ctx *x, const char *v)
{
    const sf_format *f = cli_format_by_name(v);

    if (f != NULL && f != &sf_format_f64) {
        x->dtype_given = true;
        x->want = tensor_dtype_from_format(f);
        x->as_tf32 = f == &sf_format_tf32;
        return true;
    }
    cli_error(CMD,
              "--dtype '%s': unknown input format (expected bf16, f16, "
              "e4m3, e5m2, f32 or tf32, or a PyTorch name such as "
              "bfloat16)",
              v);
    return false;
}

static bool
parse_path(mma_ctx *x, const char *v)
{
    if (strcmp(v, "auto") == 0)
        x->path = SF_MMA_PATH_AUTO;
    else if (strcmp(v, "scalar") == 0)
        x->path = SF_MMA_PATH_SCALAR;
    else if (strcmp(v, "avx2") == 0)
        x->path = SF_MMA_PATH_AVX2;
    else if (strcmp(v, "avx512") == 0)
        x->path = SF_MMA_PATH_AVX512;
    else {
        cli_error(CMD, "--path '%s': expected auto, scalar, avx2 or avx512",
                  v);
        return false;
    }
    return true;
}

static bool
parse_model(mma_ctx *x, const char *v)
{
    cli_buf list;

    if (sf_mma_preset_by_name(v) != NULL) {
        x->preset = v;
        return true;
    }
    cli_buf_init(&list);
    preset_list(&list);
    cli_error(CMD, "--model '%s': unknown preset (expected one of %s)", v,
              list.failed ? "?" : list.p);
    cli_buf_free(&list);
    return false;
}

/* One option; false after an error message. */
static bool
take_option(void *ctx, int id, const char *v)
{
    mma_ctx *x = ctx;

    switch (id) {
    case O_MODEL:
        return parse_model(x, v);
    case O_A:
        x->in[IN_A].arg = v;
        return true;
    case O_B:
        x->in[IN_B].arg = v;
        return true;
    case O_C:
        x->in[IN_C].arg = v;
        return true;
    case O_COMPARE:
        x->in[IN_REF].arg = v;
        return true;
    case O_OUT:
        x->out.arg = v;
        return true;
    case O_DTYPE:
        return parse_dtype(x, v);
    case O_PATH:
        return parse_path(x, v);
    case O_FORCE:
        x->force = true;
        return true;
    case O_JSON:
        x->json = true;
        return true;
    default:
        return true;
    }
}

static void
ctx_free(mma_ctx *x)
{
    for (int i = 0; i < N_IN; i++) {
        free(x->in[i].path);
        tensor_free(&x->in[i].t);
    }
    free(x->out.path);
    tensor_free(&x->d);
    free(x);
}

/* Everything up to the report; false after an error message. */
static bool
run(mma_ctx *x)
{
    static const char *const need[] = {"--model", "--a", "--b"};
    const char *given[] = {x->preset, x->in[IN_A].arg, x->in[IN_B].arg};

    for (size_t i = 0; i < 3; i++)
        if (given[i] == NULL) {
            cli_error(CMD, "missing %s (see 'bf16emu mma --help')", need[i]);
            return false;
        }
    if (x->out.arg == NULL && x->in[IN_REF].arg == NULL) {
        cli_error(CMD, "missing --out or --compare (nothing to do; see "
                       "'bf16emu mma --help')");
        return false;
    }
    for (int i = 0; i < N_IN; i++)
        if (x->in[i].arg != NULL && !cli_split_spec(CMD, &x->in[i]))
            return false;
    if (x->out.arg != NULL
        && (!cli_split_spec(CMD, &x->out) || !check_output(x)))
        return false;

    if (!read_input(x, IN_A) || !read_input(x, IN_B)
        || !input_format(x, &x->in[IN_A]) || !input_format(x, &x->in[IN_B])
        || !resolve_model(x) || !check_tf32(&x->in[IN_A])
        || !check_tf32(&x->in[IN_B]))
        return false;
    for (int i = IN_C; i <= IN_REF; i++)
        if (x->in[i].arg != NULL && !read_operand(&x->in[i], TENSOR_F32))
            return false;
    if (!check_shapes(x) || !check_path(x) || !run_gemm(x))
        return false;
    if (x->in[IN_REF].arg != NULL)
        compare(x);
    return x->out.arg == NULL || write_output(x);
}

int
mma_main(int argc, char **argv)
{
    mma_ctx *x = calloc(1, sizeof *x);
    cli_buf out;
    cli_json js;
    int id, rc = CLI_EXIT_OK;
    static const char *const opt_names[N_IN] = {"--a", "--b", "--c",
                                                "--compare"};

    if (x == NULL)
        return cli_error(CMD, "out of memory");
    for (int i = 0; i < N_IN; i++)
        x->in[i].opt = opt_names[i];
    x->out.opt = "--out";
    x->path = SF_MMA_PATH_AUTO;

    id = cli_take_options(CMD, argc, argv, options, O_HELP, mma_help,
                          "the operands are options: --a, --b, --c; see "
                          "'bf16emu mma --help'",
                          take_option, x);
    if (id >= 0) {
        ctx_free(x);
        return id;
    }
    if (!run(x)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    cli_buf_init(&out);
    if (x->json) {
        cli_json_init(&js, &out);
        json_report(x, &js);
    } else {
        text_report(x, &out);
    }
    if (cli_report_emit(CMD, &out, &rc) && x->in[IN_REF].arg != NULL
        && x->cmp.differ > 0)
        rc = CLI_EXIT_CHECK;
    ctx_free(x);
    return rc;
}

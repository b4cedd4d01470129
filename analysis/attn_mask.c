/* attn_mask -- an attention mask tensor bound to a launch (attn_mask.h) */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attn_mask.h"

static int
fail(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;

    if (msg == NULL || n == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return -1;
}

static bool
amask_type(tensor_dtype dt, fa_amask_type *out)
{
    switch (dt) {
    case TENSOR_BOOL:
    case TENSOR_U8:
        *out = FA_AMASK_BOOL;
        return true;
    case TENSOR_F32:
        *out = FA_AMASK_F32;
        return true;
    case TENSOR_BF16:
        *out = FA_AMASK_BF16;
        return true;
    case TENSOR_F16:
        *out = FA_AMASK_F16;
        return true;
    default:
        return false;
    }
}

/* Whether entry X of the mask hides its key. */
static bool
hides(const fa_attn_mask *m, size_t x)
{
    switch (m->type) {
    case FA_AMASK_BOOL:
        return ((const uint8_t *)m->data)[x] == 0;
    case FA_AMASK_F32:
        return ((const uint32_t *)m->data)[x] == 0xFF800000u;
    case FA_AMASK_BF16:
        return ((const uint16_t *)m->data)[x] == 0xFF80u;
    default:
        return ((const uint16_t *)m->data)[x] == 0xFC00u;
    }
}

int
am_bind(const tensor *t, const am_launch *l, am_mask *out, char *msg,
        size_t msg_len)
{
    uint64_t want[4], dim[4] = {1, 1, 1, 1}, stride[4];
    fa_amask_type type;
    size_t *off;
    char got[128], exp[128];

    memset(out, 0, sizeof *out);
    want[0] = l->batch;
    want[1] = l->heads;
    want[2] = l->nq;
    want[3] = l->nk;
    if (t == NULL || t->ndim < 2 || t->ndim > 4)
        return fail(msg, msg_len,
                    "attn_mask: %u dimensions (expected 2 to 4, "
                    "broadcasting to [B, H, Nq, Nk])",
                    t != NULL ? t->ndim : 0);
    if (!amask_type(t->dtype, &type))
        return fail(msg, msg_len,
                    "attn_mask: dtype %s (expected BOOL, U8 0/1, F32, BF16 "
                    "or F16)",
                    tensor_dtype_name(t->dtype));
    for (unsigned i = 0; i < t->ndim; i++)
        dim[4 - t->ndim + i] = t->shape[i];
    got[0] = exp[0] = '\0';
    for (unsigned i = 0; i < t->ndim; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got),
                 "%s%" PRIu64, i ? ", " : "", t->shape[i]);
    snprintf(exp, sizeof exp, "%zu, %zu, %zu, %zu", l->batch, l->heads,
             l->nq, l->nk);
    for (int i = 0; i < 4; i++)
        if (dim[i] != 1 && dim[i] != want[i])
            return fail(msg, msg_len,
                        "attn_mask: shape [%s] does not broadcast to the "
                        "launch's [B, H, Nq, Nk] = [%s] (each dimension 1 "
                        "or the launch's)",
                        got, exp);
    if (type == FA_AMASK_BOOL)
        for (uint64_t x = 0; x < t->n_elems; x++)
            if (t->data[x] > 1)
                return fail(msg, msg_len,
                            "attn_mask: element %" PRIu64
                            " is %u (a boolean mask holds 0 or 1)",
                            x, (unsigned)t->data[x]);
    stride[3] = 1;
    for (int i = 2; i >= 0; i--)
        stride[i] = stride[i + 1] * dim[i + 1];
    for (int i = 0; i < 4; i++)
        if (dim[i] == 1)
            stride[i] = 0;
    off = malloc((l->n_heads ? l->n_heads : 1) * sizeof *off);
    if (off == NULL)
        return fail(msg, msg_len, "attn_mask: out of memory");
    for (size_t x = 0; x < l->n_heads; x++) {
        size_t b = l->batch_of[x], h = l->head_of[x];
        if (b >= l->batch || h >= l->heads) {
            free(off);
            return fail(msg, msg_len,
                        "attn_mask: head %zu is the launch's (%zu, %zu), "
                        "outside its [B, H] = [%zu, %zu]",
                        x, b, h, l->batch, l->heads);
        }
        off[x] = (size_t)(b * stride[0] + h * stride[1]);
    }
    out->mask.type = type;
    out->mask.data = t->data;
    out->mask.head_offset = off;
    out->mask.row_stride = (size_t)stride[2];
    out->mask.key_stride = (size_t)stride[3];
    out->head_offset = off;
    out->n_heads = l->n_heads;
    for (size_t x = 0; x < l->n_heads; x++)
        for (size_t i = 0; i < l->nq; i++) {
            uint64_t n = 0;
            for (size_t j = 0; j < l->nk; j++)
                n += hides(&out->mask, off[x] + i * out->mask.row_stride
                                           + j * out->mask.key_stride);
            out->hidden += n;
            out->rows_empty += n == l->nk;
        }
    return 0;
}

int
am_bind_file(const tensor *t, size_t l_batch, size_t l_heads, size_t nq,
             size_t nk, size_t file_b, size_t file_h,
             const uint64_t *batch_from, bool batch_each,
             const uint64_t *heads_from, am_mask *out, char *msg,
             size_t msg_len)
{
    size_t n = file_b * file_h;
    size_t *bo = malloc((n ? n : 1) * sizeof *bo);
    size_t *ho = malloc((n ? n : 1) * sizeof *ho);
    am_launch l;
    int rc;

    memset(out, 0, sizeof *out);
    if (bo == NULL || ho == NULL) {
        free(bo);
        free(ho);
        return fail(msg, msg_len, "attn_mask: out of memory");
    }
    for (size_t hh = 0; hh < n; hh++) {
        size_t b = hh / file_h, h = hh % file_h;
        bo[hh] = batch_from != NULL ? (size_t)batch_from[batch_each ? h : 0]
                                    : b;
        ho[hh] = heads_from != NULL ? (size_t)heads_from[h] : h;
    }
    l.batch = l_batch;
    l.heads = l_heads;
    l.nq = nq;
    l.nk = nk;
    l.n_heads = n;
    l.batch_of = bo;
    l.head_of = ho;
    rc = am_bind(t, &l, out, msg, msg_len);
    free(bo);
    free(ho);
    return rc;
}

fa_config
am_head_config(const fa_config *cfg, const am_mask *m, size_t hh,
               fa_attn_mask *hm)
{
    fa_config c = *cfg;

    if (m != NULL && m->head_offset != NULL && hh < m->n_heads) {
        *hm = m->mask;
        hm->head_offset = m->head_offset + hh;
        c.mask = hm;
    }
    return c;
}

const char *
am_heads_check(const fa_config *cfg, const am_mask *m, size_t heads,
               size_t *head)
{
    for (size_t hh = 0; hh < heads; hh++) {
        fa_attn_mask hm;
        fa_config c = am_head_config(cfg, m, hh, &hm);
        const char *why = fa_config_check(&c);
        if (why != NULL) {
            *head = hh;
            return why;
        }
        if (m == NULL || m->head_offset == NULL)
            break; /* every head's configuration is the same */
    }
    return NULL;
}

char *
am_summary(char *buf, size_t n, const char *src, const am_mask *m,
           const fa_kernel *k)
{
    snprintf(buf, n,
             "attn_mask: %s, %s, applied as the description's bias_add "
             "\"%s\" (a False entry: %s); %" PRIu64
             " entries hide a key, %" PRIu64 " rows see none",
             src, am_type_name(m->mask.type),
             fa_kernel_enum_names("bias_add")[k->bias_add],
             fa_kernel_enum_names("bool_fill")[k->bool_fill], m->hidden,
             m->rows_empty);
    return buf;
}

void
am_free(am_mask *m)
{
    if (m == NULL)
        return;
    free(m->head_offset);
    memset(m, 0, sizeof *m);
}

const char *
am_type_name(fa_amask_type t)
{
    static const char *const names[] = {"bool", "F32", "BF16", "F16"};
    return (unsigned)t <= FA_AMASK_F16 ? names[t] : "?";
}

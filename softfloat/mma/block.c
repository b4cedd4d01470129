/* block -- sf_mma_block and sf_mma_dot: one block of each model kind, and
   blocks chained through the accumulator in ascending order */
#include "softfloat/mma/mma_local.h"

#define MAX_LANES 64

const char *
sf_mma_model_check(const sf_mma_model *m)
{
    if (m == NULL)
        return "no model";
    if (m->acc == NULL)
        return "no accumulator format";
    if (m->acc->storage_bits > 32)
        return "the accumulator format is wider than 32 bits";
    if ((unsigned)m->kind > (unsigned)SF_MMA_EXACT)
        return "unknown kind";
    if (m->n > SF_MMA_MAX_N)
        return "block size above SF_MMA_MAX_N";
    if (m->kind == SF_MMA_FUSED && m->n == 0)
        return "a fused model needs a block size";
    if (m->frac_bits != SF_MMA_F_EXACT
        && (m->frac_bits < 0 || m->frac_bits > SF_MMA_MAX_F))
        return "frac_bits outside 0..SF_MMA_MAX_F";
    if ((unsigned)m->align > (unsigned)SF_MMA_ALIGN_STICKY)
        return "unknown alignment rule";
    if ((unsigned)m->rm >= SF_N_ROUND)
        return "unknown rounding mode";
    if (m->kind == SF_MMA_FMA_LANES && (m->lanes < 1 || m->lanes > MAX_LANES))
        return "lanes outside 1..64";
    if (m->store != NULL
        && ((unsigned)m->store_rm >= SF_N_ROUND
            || m->store->storage_bits > 32))
        return "bad storage format or rounding";
    return NULL;
}

/* The pairwise tree over products [lo, lo + len), len >= 1: split at the
   largest power of two below len, which is the level-by-level pairing. */
static uint64_t
tree(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
     const sf_format *fb, const s_mma_vec *b, size_t lo, size_t len,
     sf_env *env)
{
    size_t left = 1;
    uint64_t x, y;

    if (len == 1)
        return s_mma_mul(m, fa, s_mma_ld(a, lo), fb, s_mma_ld(b, lo), env);
    while (left * 2 < len)
        left *= 2;
    x = tree(m, fa, a, fb, b, lo, left, env);
    y = tree(m, fa, a, fb, b, lo + left, len - left, env);
    return s_mma_add(m, x, y, env);
}

static uint64_t
neg_acc(const sf_mma_model *m, uint64_t x)
{
    return x ^ m->acc->sign_mask;
}

uint64_t
s_mma_block(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
            const sf_format *fb, const s_mma_vec *b, size_t n, size_t k0,
            uint64_t c, sf_env *env)
{
    switch (m->kind) {
    case SF_MMA_FUSED:
        if (m->c_in_block) {
            c = s_mma_fused(m, fa, a, fb, b, n, k0, c, true, false, env);
        } else {
            uint64_t t =
                s_mma_fused(m, fa, a, fb, b, n, k0, c, false, false, env);
            c = s_mma_add(m, c, t, env);
        }
        return s_mma_store(m, c, env);
    case SF_MMA_EXACT:
        c = s_mma_fused(m, fa, a, fb, b, n, k0, c, true, true, env);
        return s_mma_store(m, c, env);
    case SF_MMA_FMA_CHAIN:
        for (size_t j = 0; j < n; j++) {
            size_t i = m->descending ? n - 1 - j : j;
            c = s_mma_fma(m, fa, s_mma_ld(a, i), fb, s_mma_ld(b, i), c, env);
            c = s_mma_store(m, c, env);
        }
        return c;
    case SF_MMA_FMA_LANES: {
        uint64_t t[MAX_LANES] = {0}, s; /* +0 */
        for (size_t i = 0; i < n; i++) {
            unsigned l = (unsigned)(i % m->lanes);
            t[l] = s_mma_fma(m, fa, s_mma_ld(a, i), fb, s_mma_ld(b, i), t[l],
                             env);
        }
        s = t[0];
        for (unsigned l = 1; l < m->lanes; l++)
            s = s_mma_add(m, s, t[l], env);
        c = s_mma_add(m, c, s, env);
        return s_mma_store(m, c, env);
    }
    case SF_MMA_MUL_ADD:
        for (size_t i = 0; i < n; i++) {
            uint64_t p =
                s_mma_mul(m, fa, s_mma_ld(a, i), fb, s_mma_ld(b, i), env);
            c = s_mma_add(m, c, p, env);
            c = s_mma_store(m, c, env);
        }
        return c;
    case SF_MMA_PAIRWISE:
        if (n == 0)
            return c;
        c = s_mma_add(m, c, tree(m, fa, a, fb, b, 0, n, env), env);
        return s_mma_store(m, c, env);
    case SF_MMA_KAHAN:
    default: {
        uint64_t comp = 0; /* +0 */
        for (size_t i = 0; i < n; i++) {
            uint64_t p =
                s_mma_mul(m, fa, s_mma_ld(a, i), fb, s_mma_ld(b, i), env);
            uint64_t y = s_mma_add(m, p, neg_acc(m, comp), env);
            uint64_t t = s_mma_add(m, c, y, env);
            comp = s_mma_add(m, s_mma_add(m, t, neg_acc(m, c), env),
                             neg_acc(m, y), env);
            c = s_mma_store(m, t, env);
        }
        return c;
    }
    }
}

uint64_t
s_mma_dot(const sf_mma_model *m, const sf_format *fa, const s_mma_vec *a,
          const sf_format *fb, const s_mma_vec *b, size_t k, uint64_t c,
          sf_env *env)
{
    size_t step = m->n == 0 ? k : m->n;

    for (size_t k0 = 0; k0 < k; k0 += step) {
        size_t len = k - k0 < step ? k - k0 : step;
        s_mma_vec sa = *a, sb = *b;
        sa.p = (const char *)a->p
               + (ptrdiff_t)k0 * a->stride * (ptrdiff_t)a->size;
        sb.p = (const char *)b->p
               + (ptrdiff_t)k0 * b->stride * (ptrdiff_t)b->size;
        c = s_mma_block(m, fa, &sa, fb, &sb, len, k0, c, env);
    }
    return c;
}

uint64_t
sf_mma_block(const sf_mma_model *m, const sf_format *fa, const uint64_t *a,
             const sf_format *fb, const uint64_t *b, size_t n, uint64_t c,
             sf_env *env)
{
    s_mma_vec va = {a, 1, 8}, vb = {b, 1, 8};
    s_mma_saved saved;
    uint64_t z;

    s_mma_enter(m, env, &saved);
    z = s_mma_block(m, fa, &va, fb, &vb, n, 0, c, env);
    s_mma_leave(env, &saved);
    return z;
}

uint64_t
sf_mma_dot(const sf_mma_model *m, const sf_format *fa, const void *a,
           ptrdiff_t a_stride, const sf_format *fb, const void *b,
           ptrdiff_t b_stride, size_t k, uint64_t c, sf_env *env)
{
    s_mma_vec va = {a, a_stride, fa->storage_bits / 8},
              vb = {b, b_stride, fb->storage_bits / 8};
    s_mma_saved saved;
    uint64_t z;

    s_mma_enter(m, env, &saved);
    z = s_mma_dot(m, fa, &va, fb, &vb, k, c, env);
    s_mma_leave(env, &saved);
    return z;
}

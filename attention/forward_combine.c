/* forward_combine -- the forward's split-KV combines: the partial
   results of a row's splits merged into O and LSE (flash_fwd_splitkv_
   combine_kernel, cuDNN's lean reduction, flex_decoding's reductions) */
#include <config.h>

#include <string.h>

#include "attention/fwd_local.h"

/* The combine's natural exp. */
static uint32_t
combine_exp(const fa_plan *pl, uint32_t x)
{
    switch (pl->k.combine_exp) {
    case FA_CEXP_LIBM:
        return fa_exp_eval(fa_exp_model_by_name("libm"), false, x);
    case FA_CEXP_MODEL:
        return fa_exp_eval(pl->exp, false, x);
    case FA_CEXP_EXPF:
        return fa_cuda_expf(pl->exp, x);
    default:
        return fa_expf_cr(x);
    }
}

/* Whether the split combine's FMA chains of row RI (weights W, NS
   splits) may run as one sf_mma_gemm of the "fma-chain" model: the same
   sf_f32_fma calls in the same order from +0, bits and flags, when
   nothing is traced and the environment's FTZ, DAZ, tininess and
   saturation are the model's (its call enters them for its duration).
   The operands must be finite: then no NaN arises, and the NaN rules
   of the model and of the environment cannot differ in a result. */
static bool
combine_as_product(const fwd_run *r, size_t ri, const uint32_t *w, size_t ns)
{
    const sf_mma_model *m = r->pl->mchain;
    const sf_env *e = r->env;
    const uint32_t *o = fwd_osplit_row(r, ri, 0);
    uint32_t special = 0; /* an Inf or a NaN among the operands */

    if (m == NULL || r->tcol >= 0 || e->events != NULL || e->ftz != m->ftz
        || e->daz != m->daz || e->tininess_after != m->tininess_after
        || e->saturate != (m->overflow == SF_MMA_OVF_SAT))
        return false;
    for (size_t s = 0; s < ns; s++)
        special |= (uint32_t)((w[s] & FA_F32_INF) == FA_F32_INF);
    for (size_t x = 0; x < ns * r->pl->d; x++)
        special |= (uint32_t)((o[x] & FA_F32_INF) == FA_F32_INF);
    return special == 0;
}

/* A split's max M as the decode engine stores it for the lean
   reduction: RN32(a RN32(ln 2)), a = RN32(M sl2) its log2-domain max. */
static uint32_t
lean_nat_max(const fa_plan *pl, uint32_t m, sf_env *e)
{
    return m == FA_F32_NEG_INF
               ? m
               : fa_mul(fa_mul(m, pl->scale_log2, e), F32_LN2, e);
}

/* The reduction's weight of a max X against the running max N:
   EX2(RN32(RN32(X - N) RN32(log2 e))), 0 for X = -inf. */
static uint32_t
lean_weight(const fa_plan *pl, uint32_t x, uint32_t n, sf_env *e)
{
    if (x == FA_F32_NEG_INF)
        return FA_F32_ZERO;
    return fa_exp_eval(pl->exp, true,
                       fa_mul(fa_sub(x, n, e), FA_F32_LOG2E, e));
}

/* The "lean" reduction of rows I0 .. I0+NR-1 (cuDNN's lean_reduction_
   kernel; attention/kernel.h, FA_COMBINE_LEAN): one pass over the splits
   in order from split 0 on the stored maxima, the running max N, l and
   O~ rescaled online. */
void
fa_fwd_combine_lean(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t ns = pl->splits;
    sf_env *e = r->env;
    uint32_t *acc = w->orow; /* d */

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        uint32_t mx = FA_F32_NEG_INF, n, l, inv, lse;
        uint32_t *out =
            fwd_writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;

        for (size_t s = 0; s < ns; s++) {
            uint32_t m = w->msplit[s * nr + ri];
            mx = fa_max(mx, m == FA_F32_NEG_INF
                                ? m
                                : fa_mul(m, pl->scale_log2, e));
        }
        /* split 0 as it is; then, for split s, N' = max(N, n_s),
           alpha = w(n_s, N'), beta = w(N, N') (both 0 while N' is -inf),
           l = fma(l, beta, RN32(l_s alpha)), O~ = fma(O~, beta,
           RN32(O~_s alpha)) */
        n = lean_nat_max(pl, w->msplit[ri], e);
        l = w->lpart[ri];
        memcpy(acc, fwd_osplit_row(r, ri, 0), pl->d * sizeof *acc);
        for (size_t s = 1; s < ns; s++) {
            uint32_t ns_ = lean_nat_max(pl, w->msplit[s * nr + ri], e);
            uint32_t nn = fa_max(n, ns_), al = FA_F32_ZERO,
                     be = FA_F32_ZERO;
            const uint32_t *os = fwd_osplit_row(r, ri, s);

            if (nn != FA_F32_NEG_INF) {
                al = lean_weight(pl, ns_, nn, e);
                be = lean_weight(pl, n, nn, e);
            }
            l = fa_fma(l, be, fa_mul(w->lpart[s * nr + ri], al, e), e);
            for (size_t col = 0; col < pl->d; col++) {
                sf_env *ce = fwd_col_env(r, col);
                acc[col] = fa_fma(acc[col], be, fa_mul(os[col], al, ce), ce);
            }
            n = nn;
        }
        if (mx == FA_F32_NEG_INF || fa_is_zero(l) || fa_is_nan(l)) {
            for (size_t col = 0; col < pl->d && out; col++)
                out[col] = FA_F32_ZERO;
            if (fwd_writing(r))
                r->lse[r->head * pl->nq + i] =
                    pl->k.empty_lse_pos ? FA_F32_INF : FA_F32_NEG_INF;
            continue;
        }
        inv = fa_fwd_inv(pl, l, e);
        lse = fwd_lse_is_decode(pl)
                  ? fa_fwd_lse_lg2_fma(pl, mx, l, fwd_lse_env(r))
                  : fa_fma(mx, F32_LN2, fa_fwd_log(pl, pl->k.combine_log, l),
                           fwd_lse_env(r));
        for (size_t col = 0; col < pl->d; col++) {
            sf_env *ce = fwd_col_env(r, col);
            uint32_t o = fwd_round(pl->k.o, fa_mul(acc[col], inv, ce), ce);
            if (out)
                out[col] = o;
        }
        if (fwd_writing(r))
            r->lse[r->head * pl->nq + i] = lse;
    }
}

/* The split-KV combine of rows I0 .. I0+NR-1 (flash_fwd_splitkv_combine_
   kernel): the max of the partial LSEs, their exp sum as the combine's
   threads hold it, LSE = log(sum) + max, the weights exp(LSE_s - LSE) and
   O = RN_o(FMA chain over the splits in order from 0). */
void
fa_fwd_combine(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t ns = pl->splits;
    size_t dpad = (pl->d + 31) / 32 * 32;
    size_t bm = dpad % 128 == 0 ? 4 : dpad % 64 == 0 ? 8 : 16;
    size_t maxs = 2, lanes, per;
    uint32_t x[32], y[32], wgt[128], *orow = w->orow;

    while (maxs < ns)
        maxs *= 2;
    /* the combine kernel's kRowsPerLoadTranspose threads per row, each
       holding kNLsePerThread splits: lane t has splits l lanes + t */
    lanes = 128 / bm < maxs ? 128 / bm : maxs;
    per = (maxs * bm + 127) / 128;
    for (size_t ri = 0; ri < nr; ri++) {
        const uint32_t *ls = w->lsplit;
        size_t i = i0 + ri;
        uint32_t mx = FA_F32_NEG_INF, lse;
        sf_env *e = r->env;
        uint32_t *out =
            fwd_writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;

        for (size_t s = 0; s < ns; s++)
            mx = fa_max(mx, ls[s * nr + ri]);
        if (mx == FA_F32_NEG_INF)
            mx = FA_F32_ZERO;
        for (size_t t = 0; t < lanes; t++)
            for (size_t l = 0; l < per; l++) {
                size_t s = l * lanes + t;
                uint32_t v = s < ns ? ls[s * nr + ri] : FA_F32_NEG_INF;
                uint32_t ex = combine_exp(pl, fa_sub(v, mx, e));
                x[t] = l == 0 ? ex : fa_add(x[t], ex, e);
            }
        /* Allreduce over the lanes: xor lanes/2, ..., 1 */
        for (size_t off = lanes / 2; off >= 1; off /= 2) {
            for (size_t t = 0; t < lanes; t++)
                y[t] = fa_add(x[t], x[t ^ off], e);
            memcpy(x, y, lanes * sizeof *x);
        }
        lse = fa_is_zero(x[0]) || fa_is_nan(x[0])
                  ? FA_F32_INF
                  : fa_add(fa_fwd_log(pl, pl->k.combine_log, x[0]), mx, e);
        for (size_t s = 0; s < ns; s++)
            wgt[s] = combine_exp(pl, fa_sub(ls[s * nr + ri], lse, e));
        if (combine_as_product(r, ri, wgt, ns)) {
            /* the same FMA chains, as one 1 x ns by ns x d product */
            sf_mma_gemm(pl->mchain, 1, pl->d, ns, &sf_format_f32, wgt,
                        &sf_format_f32, fwd_osplit_row(r, ri, 0), NULL, orow,
                        SF_MMA_PATH_AUTO, e);
            for (size_t col = 0; col < pl->d; col++) {
                uint32_t o = fwd_round(pl->k.o, orow[col], e);
                if (out)
                    out[col] = o;
            }
        } else {
            for (size_t col = 0; col < pl->d; col++) {
                sf_env *ce = fwd_col_env(r, col);
                uint32_t acc = FA_F32_ZERO;
                for (size_t s = 0; s < ns; s++)
                    acc =
                        fa_fma(wgt[s], fwd_osplit_row(r, ri, s)[col], acc, ce);
                acc = fwd_round(pl->k.o, acc, ce);
                if (out)
                    out[col] = acc;
            }
        }
        if (fwd_writing(r))
            r->lse[r->head * pl->nq + i] = lse;
    }
}

/* The butterfly HT of V[0 .. K-1] (K a power of two) from half width
   H0: v_j = v_j + v_{j+h} for h = H0, H0 / 2, ..., 1; the result is v_0
   (every lane's, the addition being commutative). */
static uint32_t
butterfly(uint32_t *v, size_t h0, sf_env *e)
{
    for (size_t h = h0; h >= 1; h /= 2)
        for (size_t j = 0; j < h; j++)
            v[j] = fa_add(v[j], v[j + h], e);
    return v[0];
}

/* The sum of NS values X[s xs] weighted W[s] as one of inductor's
   reductions over flex_decoding's programs forms it (attention.h,
   fa_flex_merge): the programs cut into CHUNKS contiguous chunks of
   ceil(NS / chunks); in a chunk, lane r of R0 takes its indices r, r +
   R0, ...: a looped reduction chains fma(w, x, .) from +0 over them, a
   persistent one holds the one product RN(w x); an inner one (SPT)
   takes SPT contiguous indices, the second's product rounded and the
   others' fused in order; the lanes of a warp (r = jw w + j) are added
   by the butterfly over j, then the warps' sums by the butterfly over
   w; the chunks' sums, padded with +0 to a power of two, by the second
   stage's lanes and warps. */
static uint32_t
merge_sum(const uint32_t *x, size_t xs, const uint32_t *wt, size_t ns,
          const fa_flex_merge *m, sf_env *e)
{
    uint32_t v[FA_MERGE_LANES_MAX], wv[FA_MERGE_LANES_MAX];
    uint32_t part[FA_MERGE_CHUNKS_MAX];
    size_t cs = (ns + m->chunks - 1) / m->chunks;

    for (size_t c = 0; c < m->chunks; c++) {
        size_t lo = c * cs, n = lo >= ns ? 0 : ns - lo < cs ? ns - lo : cs;
        for (size_t r = 0; r < m->r0; r++) {
            uint32_t a = FA_F32_ZERO;
            if (m->spt > 0) {
                /* programs spt r ..: ((v0 + v1) + v2) + ..., the first
                   addition fused with v0's product (spt divides n: a
                   lane's programs are all in or all out) */
                size_t u0 = r * m->spt;
                if (u0 < n) {
                    const uint32_t *xu = x + (lo + u0) * xs;
                    const uint32_t *wu = wt + lo + u0;
                    a = m->spt > 1 ? fa_mul(wu[1], xu[xs], e)
                                   : fa_mul(wu[0], xu[0], e);
                    if (m->spt > 1)
                        a = fa_fma(wu[0], xu[0], a, e);
                    for (size_t k = 2; k < m->spt; k++)
                        a = fa_fma(wu[k], xu[k * xs], a, e);
                }
                v[r] = a;
                continue;
            }
            for (size_t u = r; u < n; u += m->r0)
                a = m->persistent ? fa_mul(wt[lo + u], x[(lo + u) * xs], e)
                                  : fa_fma(wt[lo + u], x[(lo + u) * xs], a, e);
            v[r] = a;
        }
        for (size_t w = 0; w < m->warps; w++) {
            uint32_t *vw = v + w * m->jw;
            size_t h0 = m->jw / 2;
            if (m->fused && m->spt == 0 && h0 >= 1) {
                /* no mask between the product and the first addition:
                   the lane's own product fused with the other's rounded
                   one */
                for (size_t j = 0; j < h0; j++) {
                    size_t t = w * m->jw + j;
                    vw[j] = t < n ? fa_fma(wt[lo + t], x[(lo + t) * xs],
                                           vw[j + h0], e)
                                  : vw[j + h0];
                }
                h0 /= 2;
            }
            wv[w] = h0 >= 1 ? butterfly(vw, h0, e) : vw[0];
        }
        part[c] = m->warps > 1 ? butterfly(wv, m->warps / 2, e) : wv[0];
    }
    /* the second stage: the chunks padded with +0 to a power of two, k;
       lane u of cu adds its chunks u, u + cu, ... in order, then the
       butterflies over its lanes and warps */
    {
        size_t k = 1, cu = (size_t)m->c_jw * m->c_warps;
        if (m->chunks == 1)
            return part[0];
        while (k < m->chunks)
            k *= 2;
        for (size_t c = m->chunks; c < k; c++)
            part[c] = FA_F32_ZERO;
        for (size_t u = 0; u < cu; u++) {
            v[u] = part[u];
            for (size_t c = u + cu; c < k; c += cu)
                v[u] = fa_add(v[u], part[c], e);
        }
        for (size_t w = 0; w < m->c_warps; w++)
            wv[w] = m->c_jw > 1 ? butterfly(v + w * m->c_jw, m->c_jw / 2, e)
                                : v[w * m->c_jw];
        return m->c_warps > 1 ? butterfly(wv, m->c_warps / 2, e) : wv[0];
    }
}

/* flex_decoding's two reductions for rows I0 .. I0+NR-1 (kernel.h,
   FA_COMBINE_FLEX_DECODE): M = max m_s (base 2), w_s = exp2(m_s - M)
   (0 when M is -inf), L and the columns of O by merge_sum, L' = 1 when M
   is -inf, O = RN_o(sum RCP(L')), LSE2 = RN(log2f(L') + M) and LSE =
   RN(LSE2 RN32(ln 2)). */
void
fa_fwd_combine_flex(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    fa_capture *cap = fwd_writing(r) ? r->cap : NULL;
    size_t ns = pl->splits;
    sf_env *e = r->env;
    uint32_t *wt = w->orow + pl->d, *col = wt + ns;

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        uint32_t mx = FA_F32_NEG_INF, l, inv, lse2, lse;
        uint32_t *out =
            fwd_writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;
        sf_env *le = fwd_lse_env(r);

        for (size_t s = 0; s < ns; s++) {
            uint32_t m = w->msplit[s * nr + ri];
            wt[s] = m == FA_F32_NEG_INF ? m : fa_mul(m, pl->scale_log2, e);
            mx = fa_max(mx, wt[s]);
        }
        for (size_t s = 0; s < ns; s++)
            wt[s] = fa_exp_eval(pl->exp, true,
                                mx == FA_F32_NEG_INF ? FA_F32_ZERO
                                                     : fa_sub(wt[s], mx, e));
        l = merge_sum(w->lpart + ri, nr, wt, ns, &pl->merge_l, e);
        if (mx == FA_F32_NEG_INF)
            l = FA_F32_ONE;
        inv = fa_fwd_inv(pl, l, e);
        for (size_t c = 0; c < pl->d; c++) {
            sf_env *ce = fwd_col_env(r, c);
            for (size_t s = 0; s < ns; s++)
                col[s] = fwd_osplit_row(r, ri, s)[c];
            uint32_t o = fwd_round(pl->k.o,
                                   fa_mul(merge_sum(col, 1, wt, ns,
                                                    &pl->merge_o, ce),
                                          inv,
                                          ce),
                                   ce);
            if (out)
                out[c] = o;
        }
        lse2 = fa_add(fa_cuda_log2f_ftz(l), mx, le);
        lse = fa_mul(lse2, F32_LN2, le);
        if (fwd_writing(r))
            r->lse[r->head * pl->nq + i] = lse;
        if (cap != NULL && cap->lse_kernel != NULL)
            cap->lse_kernel[r->head * pl->nq + i] = lse2;
    }
}

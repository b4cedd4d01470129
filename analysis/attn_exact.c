/* attn_exact -- the exact attention forward and backward with MPFR, and
   signed errors in ulps */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attn_exact.h"

const char *
ax_strerror(int code)
{
    switch (code) {
    case AX_OK:
        return "success";
    case AX_ENOMEM:
        return "out of memory";
    case AX_ECONFIG:
        return "unusable configuration or options";
    case AX_EINPUT:
        return "an input is NaN or infinite";
    case AX_ERANGE:
        return "the values exceed MPFR's exponent range";
    case AX_EINTERNAL:
        return "internal error: an exact step was inexact";
    default:
        return "unknown error";
    }
}

/*----------------------------------------------------------------------------
 * Arrays of MPFR numbers of one precision whose limbs live in one block
 * allocated here, so that every allocation failure is reported (GMP's own
 * allocator aborts).  Never mpfr_clear or mpfr_set_prec them.
 *--------------------------------------------------------------------------*/
typedef struct
{
    mpfr_t *v;
    void *limbs;
} mparr;

static void
mparr_free(mparr *a)
{
    free(a->v);
    free(a->limbs);
    a->v = NULL;
    a->limbs = NULL;
}

/* N numbers (at least one is made) of precision PREC, all +0. */
static int
mparr_init(mparr *a, size_t n, mpfr_prec_t prec)
{
    size_t sz = mpfr_custom_get_size(prec);

    a->v = NULL;
    a->limbs = NULL;
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / sz || n > SIZE_MAX / sizeof(mpfr_t))
        return AX_ENOMEM;
    a->v = malloc(n * sizeof(mpfr_t));
    a->limbs = malloc(n * sz);
    if (a->v == NULL || a->limbs == NULL) {
        mparr_free(a);
        return AX_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        void *limbs = (char *)a->limbs + i * sz;
        mpfr_custom_init(limbs, prec);
        mpfr_custom_init_set(a->v[i], MPFR_ZERO_KIND, 0, prec, limbs);
    }
    return AX_OK;
}

/*----------------------------------------------------------------------------
 * Exact decoding of the inputs (integer code only).
 *--------------------------------------------------------------------------*/

/* X = the BF16 value B (X has at least 8 bits); false for NaN and Inf. */
static bool
set_bf16(mpfr_ptr x, uint16_t b)
{
    long exp_field = (long)((b >> 7) & 0xFFu);
    long sig = (long)(b & 0x7Fu);

    if (exp_field == 0xFF)
        return false;
    if (exp_field != 0)
        sig |= 0x80;
    else
        exp_field = 1;
    if (b & 0x8000u)
        sig = -sig;
    /* value = sig * 2^(exp_field - 127 - 7) */
    mpfr_set_si_2exp(x, sig, (mpfr_exp_t)(exp_field - 134), MPFR_RNDN);
    return true;
}

/* X = the FP16 value B (X has at least 11 bits); false for NaN and Inf. */
static bool
set_f16(mpfr_ptr x, uint16_t b)
{
    long exp_field = (long)((b >> 10) & 0x1Fu);
    long sig = (long)(b & 0x3FFu);

    if (exp_field == 0x1F)
        return false;
    if (exp_field != 0)
        sig |= 0x400;
    else
        exp_field = 1;
    if (b & 0x8000u)
        sig = -sig;
    /* value = sig * 2^(exp_field - 15 - 10) */
    mpfr_set_si_2exp(x, sig, (mpfr_exp_t)(exp_field - 25), MPFR_RNDN);
    return true;
}

/* X = the FP32 value of BITS (X has at least 24 bits); false for NaN and
   Inf. */
static bool
set_f32_bits(mpfr_ptr x, uint32_t bits)
{
    long exp_field = (long)((bits >> 23) & 0xFFu);
    long sig = (long)(bits & 0x7FFFFFu);

    if (exp_field == 0xFF)
        return false;
    if (exp_field != 0)
        sig |= 0x800000L;
    else
        exp_field = 1;
    if (bits & 0x80000000u)
        sig = -sig;
    /* value = sig * 2^(exp_field - 127 - 23) */
    mpfr_set_si_2exp(x, sig, (mpfr_exp_t)(exp_field - 150), MPFR_RNDN);
    return true;
}

static unsigned
bitlen(size_t x)
{
    unsigned n = 0;
    while (x != 0) {
        n++;
        x >>= 1;
    }
    return n;
}

mpfr_prec_t
ax_score_prec(size_t d)
{
    /* A BF16 number is an integer multiple of 2^-133 below 2^128, so a
       product of two is a multiple of 2^-266 below 2^256, and a sum of d
       of them is K * 2^-266 with |K| < d * 2^522: 522 + bitlen(d) bits.
       The FP32 scale has 24 significant bits. */
    return (mpfr_prec_t)(546 + bitlen(d));
}

uint32_t
ax_scale_bits(const fa_config *cfg)
{
    uint32_t bits;
    float f;

    if (cfg->scale != 0.0f) {
        memcpy(&bits, &cfg->scale, sizeof bits);
        return bits;
    }
    if (cfg->shape.d == 0)
        return 0x7FC00000u;
    {
        /* 1/sqrt(d) rounded once to 24 bits: a normal FP32 number in
           (0, 1] since d >= 1. */
        mp_limb_t la[4], lb[4];
        mpfr_t a, r;
        mpfr_flags_t saved = mpfr_flags_save();

        mpfr_custom_init(la, 64);
        mpfr_custom_init_set(a, MPFR_ZERO_KIND, 0, 64, la);
        mpfr_custom_init(lb, 24);
        mpfr_custom_init_set(r, MPFR_ZERO_KIND, 0, 24, lb);
        mpfr_set_uj(a, (uintmax_t)cfg->shape.d, MPFR_RNDN); /* exact */
        mpfr_rec_sqrt(r, a, MPFR_RNDN);
        f = mpfr_get_flt(r, MPFR_RNDN);
        mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
    }
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

size_t
ax_block_cols(const fa_config *cfg)
{
    size_t nk = cfg->shape.nk, bc;

    if (cfg->ablations & FA_ABL_UNTILED)
        bc = nk;
    else if (cfg->bc != 0)
        bc = cfg->bc;
    else {
        /* the description's forward tile (0: untiled) */
        const fa_kernel_tiles *t =
            fa_kernel_tiles_for(fa_config_kernel(cfg), cfg->shape.d);
        bc = t != NULL && t->bc != 0 ? t->bc : nk;
    }
    if (bc > nk)
        bc = nk;
    return bc == 0 ? 1 : bc;
}

/*----------------------------------------------------------------------------
 * The work space of one call.
 *--------------------------------------------------------------------------*/
typedef struct
{
    /* configuration */
    fa_shape sh;
    bool causal, reverse;
    bool top_left; /* causal mask aligned top-left (j > i masked) */
    const fa_attn_mask *mask; /* an attention mask (NULL: none) */
    size_t head;              /* the head of the rows being computed */
    size_t bc;
    fa_fix fix;
    mpfr_prec_t p;  /* working precision */
    mpfr_prec_t ps; /* exact scores and dP */
    mpfr_prec_t pm; /* shifts m */
    mpfr_prec_t pt; /* arguments s - m of exp */
    mpfr_prec_t pd; /* delta */
    mpfr_exp_t emin;
    /* one head's inputs, exact */
    mparr qh, kh, vh, doh;
    /* one row */
    mparr s;    /* [nk] scores, ps */
    mparr dpr;  /* [nk] dP, ps */
    mparr e;    /* [nk] exp(s - m), p */
    mparr pr;   /* [nk] P, p */
    mparr dsr;  /* [nk] dS, p */
    mparr prod; /* [max(nk, d) + 1] exact products, 2p */
    mparr p16;  /* [d] products of two inputs, 22 bits, exact (BF16: 16
                   bits, FP16: 22) */
    mparr orow; /* [d] O~, then O, p */
    mparr acc;  /* backward: [2 nk d] dK then dV, p + 64 */
    mpfr_ptr *ptr;
    /* scalars */
    mparr s_ps, s_pm, s_pt, s_p, s_2p, s_pd, s_24;
    mpfr_ptr scale, r;                  /* 24 bits; ps */
    mpfr_ptr m_run, m_adj, m_new;       /* pm */
    mpfr_ptr t, t2;                     /* pt */
    mpfr_ptr l, alpha, lse, pmax, x, y; /* p */
    mpfr_ptr x2;                        /* 2p */
    mpfr_ptr delta;                     /* pd */
} ax_work;

static void
work_free(ax_work *w)
{
    mparr *all[] = {&w->qh,   &w->kh,   &w->vh,   &w->doh,  &w->s,
                    &w->dpr,  &w->e,    &w->pr,   &w->dsr,  &w->prod,
                    &w->p16,  &w->orow, &w->acc,  &w->s_ps, &w->s_pm,
                    &w->s_pt, &w->s_p,  &w->s_2p, &w->s_pd, &w->s_24};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mparr_free(all[i]);
    free(w->ptr);
    w->ptr = NULL;
}

static bool
finite_in(double x, double lo, double hi)
{
    return isfinite(x) && x >= lo && x <= hi;
}

/* Checks CFG and OPT and fills the configuration part of W. */
static int
work_config(ax_work *w, const fa_config *cfg, const ax_options *opt)
{
    const fa_shape *sh;
    const double big = 18446744073709551616.0; /* 2^64 */
    size_t rows;

    memset(w, 0, sizeof *w);
    if (cfg == NULL)
        return AX_ECONFIG;
    sh = &cfg->shape;
    w->sh = *sh;
    if (sh->d == 0)
        return AX_ECONFIG;
    /* every element count must fit, with room for nq + nk */
    if (sh->nq > SIZE_MAX / 4 || sh->nk > SIZE_MAX / 4)
        return AX_ECONFIG;
    if (sh->heads != 0 && sh->batch > SIZE_MAX / sh->heads)
        return AX_ECONFIG;
    rows = sh->batch * sh->heads;
    if (sh->nq != 0 && rows > SIZE_MAX / sh->nq)
        return AX_ECONFIG;
    if (sh->nk != 0 && rows > SIZE_MAX / sh->nk)
        return AX_ECONFIG;
    if (sh->nq != 0 && sh->nk != 0 && rows * sh->nq > SIZE_MAX / sh->nk)
        return AX_ECONFIG;
    if (rows * sh->nq > SIZE_MAX / sh->d || rows * sh->nk > SIZE_MAX / sh->d
        || sh->nk > SIZE_MAX / 2 / sh->d)
        return AX_ECONFIG;
    if (!isfinite(cfg->scale))
        return AX_ECONFIG;
    if ((int)cfg->order != FA_ORDER_FORWARD
        && (int)cfg->order != FA_ORDER_REVERSE)
        return AX_ECONFIG;
    if (fa_config_kernel(cfg) == NULL)
        return AX_ECONFIG;
    w->fix = cfg->fix;
    switch (cfg->fix.kind) {
    case FA_FIX_NONE:
        break;
    case FA_FIX_BETA:
    case FA_FIX_BETA_V2:
    case FA_FIX_ALWAYS:
        if (!(isfinite(cfg->fix.beta) && cfg->fix.beta > 1.0
              && cfg->fix.beta <= big))
            return AX_ECONFIG;
        if (cfg->fix.kind == FA_FIX_BETA && !finite_in(cfg->fix.tol, 0.0, big))
            return AX_ECONFIG;
        if ((int)cfg->fix.zero_max != FA_ZERO_MAX_KEEP
            && (int)cfg->fix.zero_max != FA_ZERO_MAX_SHIFT)
            return AX_ECONFIG;
        if (cfg->fix.zero_max == FA_ZERO_MAX_SHIFT
            && !(finite_in(cfg->fix.eps_zero, 0.0, big)
                 && cfg->fix.eps_zero > 0.0))
            return AX_ECONFIG;
        break;
    case FA_FIX_EPS:
        if (!finite_in(cfg->fix.tol, 0.0, big)
            || !(finite_in(cfg->fix.eps, 0.0, big) && cfg->fix.eps > 0.0))
            return AX_ECONFIG;
        break;
    default:
        return AX_ECONFIG;
    }
    w->p = AX_PREC_DEFAULT;
    if (opt != NULL) {
        if (opt->prec != 0)
            w->p = opt->prec;
        if ((int)opt->method != AX_TILED && (int)opt->method != AX_DIRECT)
            return AX_ECONFIG;
    }
    if (w->p < AX_PREC_MIN || w->p > AX_PREC_MAX)
        return AX_ECONFIG;
    w->causal = cfg->causal;
    w->top_left = cfg->causal_top_left;
    w->mask = cfg->mask;
    if (w->mask != NULL && (w->mask->data == NULL
                            || (unsigned)w->mask->type > FA_AMASK_F16))
        return AX_ECONFIG;
    w->reverse = cfg->order == FA_ORDER_REVERSE;
    w->bc = ax_block_cols(cfg);
    w->ps = ax_score_prec(sh->d);
    w->pm = w->ps + 64;
    /* ps + 256 bits make every difference of two scores exact (both are
       multiples of 2^-415 below 2^(385 + bitlen(d))); the extra p bits
       keep the argument error of exp below 2^-(p+300) (doc/exact.md). */
    w->pt = w->ps + 256 + w->p;
    w->pd = w->p + 64;
    /* The flush argument of doc/exact.md needs emin <= -2^20; no value
       here exceeds 2^1024. */
    w->emin = mpfr_get_emin();
    if (w->emin > -((mpfr_exp_t)1 << 20) || mpfr_get_emax() < 4096)
        return AX_ERANGE;
    return AX_OK;
}

static int
work_alloc(ax_work *w, bool backward)
{
    size_t nq = w->sh.nq, nk = w->sh.nk, d = w->sh.d;
    size_t wide = (nk > d ? nk : d) + 1;
    mpfr_prec_t p = w->p;
    int rc = 0;

    /* 11 bits hold a BF16 (8) or an FP16 (11) input exactly */
    rc |= mparr_init(&w->qh, nq * d, 11);
    rc |= mparr_init(&w->kh, nk * d, 11);
    rc |= mparr_init(&w->vh, nk * d, 11);
    rc |= mparr_init(&w->s, nk, w->ps);
    rc |= mparr_init(&w->e, nk, p);
    rc |= mparr_init(&w->prod, wide, 2 * p);
    rc |= mparr_init(&w->p16, d, 22);
    rc |= mparr_init(&w->orow, d, p);
    rc |= mparr_init(&w->s_ps, 1, w->ps);
    rc |= mparr_init(&w->s_pm, 3, w->pm);
    rc |= mparr_init(&w->s_pt, 2, w->pt);
    rc |= mparr_init(&w->s_p, 6, p);
    rc |= mparr_init(&w->s_2p, 1, 2 * p);
    rc |= mparr_init(&w->s_pd, 1, w->pd);
    rc |= mparr_init(&w->s_24, 1, 24);
    if (backward) {
        rc |= mparr_init(&w->doh, nq * d, 11);
        rc |= mparr_init(&w->dpr, nk, w->ps);
        rc |= mparr_init(&w->pr, nk, p);
        rc |= mparr_init(&w->dsr, nk, p);
        rc |= mparr_init(&w->acc, 2 * nk * d, p + 64);
    }
    if (wide <= SIZE_MAX / sizeof(mpfr_ptr))
        w->ptr = malloc(wide * sizeof(mpfr_ptr));
    if (rc != 0 || w->ptr == NULL) {
        work_free(w);
        return AX_ENOMEM;
    }
    w->scale = w->s_24.v[0];
    w->r = w->s_ps.v[0];
    w->m_run = w->s_pm.v[0];
    w->m_adj = w->s_pm.v[1];
    w->m_new = w->s_pm.v[2];
    w->t = w->s_pt.v[0];
    w->t2 = w->s_pt.v[1];
    w->l = w->s_p.v[0];
    w->alpha = w->s_p.v[1];
    w->lse = w->s_p.v[2];
    w->pmax = w->s_p.v[3];
    w->x = w->s_p.v[4];
    w->y = w->s_p.v[5];
    w->x2 = w->s_2p.v[0];
    w->delta = w->s_pd.v[0];
    return AX_OK;
}

/* Loads N inputs into A: FP16 numbers when F16, else BF16. */
static int
load_in(mparr *a, const uint16_t *src, size_t n, bool f16)
{
    for (size_t i = 0; i < n; i++)
        if (!(f16 ? set_f16(a->v[i], src[i]) : set_bf16(a->v[i], src[i])))
            return AX_EINPUT;
    return AX_OK;
}

static void
put(const ax_buf *b, size_t idx, mpfr_srcptr x)
{
    if (b->d != NULL)
        b->d[idx] = mpfr_get_d(x, MPFR_RNDN);
    if (b->mp != NULL)
        mpfr_set(b->mp[idx], x, MPFR_RNDN);
}

static bool
wanted(const ax_buf *b)
{
    return b->d != NULL || b->mp != NULL;
}

/* Number of keys query I sees: they are 0 .. vis-1 (the causal mask
   removes a suffix). */
static size_t
row_visible(const ax_work *w, size_t i)
{
    size_t nq = w->sh.nq, nk = w->sh.nk, lim;

    if (!w->causal)
        return nk;
    if (w->top_left)
        /* key j visible iff j <= i */
        return i + 1 < nk ? i + 1 : nk;
    /* key j visible iff j <= i + nk - nq, i.e. j + nq <= i + nk */
    if (i + nk < nq)
        return 0;
    lim = i + nk - nq + 1;
    return lim < nk ? lim : nk;
}

/* The attention mask's entry for key J of row I: false when it hides
   the key (a False boolean entry, or -Inf), else true with its value in X
   (0 for a True boolean entry).  A NaN or +Inf entry: AX_EINPUT. */
static int
mask_entry(const ax_work *w, size_t i, size_t j, mpfr_ptr x, bool *keep)
{
    const fa_attn_mask *m = w->mask;
    size_t at = (m->head_offset != NULL ? m->head_offset[w->head] : 0)
                + i * m->row_stride + j * m->key_stride;
    uint32_t bits;

    switch (m->type) {
    case FA_AMASK_BOOL:
        *keep = ((const uint8_t *)m->data)[at] != 0;
        mpfr_set_zero(x, 1);
        return AX_OK;
    case FA_AMASK_F32:
        bits = ((const uint32_t *)m->data)[at];
        break;
    case FA_AMASK_BF16:
        bits = (uint32_t)((const uint16_t *)m->data)[at] << 16;
        break;
    default: {
        sf_env env = SF_ENV_IEEE;
        bits = sf_f16_to_f32((sf_f16){((const uint16_t *)m->data)[at]},
                             SF_RNE, &env)
                   .bits;
    }
    }
    *keep = bits != 0xFF800000u;
    if (!*keep) {
        mpfr_set_zero(x, 1);
        return AX_OK;
    }
    return set_f32_bits(x, bits) ? AX_OK : AX_EINPUT;
}

/* S[j] = scale * sum_c q[i,c] k[j,c] exactly, for j < vis; with a mask,
   plus its value (exact: the scores' precision spans the FP32 range), or
   -Inf where it hides the key. */
static int
row_scores(ax_work *w, size_t i, size_t vis)
{
    size_t d = w->sh.d;
    int inex = 0;

    for (size_t j = 0; j < vis; j++) {
        for (size_t c = 0; c < d; c++) {
            inex |= mpfr_mul(w->p16.v[c], w->qh.v[i * d + c],
                             w->kh.v[j * d + c], MPFR_RNDN);
            w->ptr[c] = w->p16.v[c];
        }
        inex |= mpfr_sum(w->s.v[j], w->ptr, (unsigned long)d, MPFR_RNDN);
        inex |= mpfr_mul(w->s.v[j], w->s.v[j], w->scale, MPFR_RNDN);
        if (w->mask != NULL) {
            bool keep;
            int rc = mask_entry(w, i, j, w->x2, &keep);
            if (rc != AX_OK)
                return rc;
            if (!keep)
                mpfr_set_inf(w->s.v[j], -1);
            else
                inex |= mpfr_add(w->s.v[j], w->s.v[j], w->x2, MPFR_RNDN);
        }
    }
    return inex != 0 ? AX_EINTERNAL : AX_OK;
}

/* VIS, or 0 when a mask hides every one of the row's VIS keys (their
   scores -Inf). */
static size_t
row_kept(const ax_work *w, size_t vis)
{
    if (w->mask == NULL)
        return vis;
    for (size_t j = 0; j < vis; j++)
        if (!mpfr_inf_p(w->s.v[j]))
            return vis;
    return 0;
}

/* E[j] = exp(S[j] - M) for j0 <= j < j1, each rounded once (the argument
   S[j] - M is rounded to pt bits first; doc/exact.md bounds the effect). */
static void
row_exp(ax_work *w, mpfr_srcptr m, size_t j0, size_t j1)
{
    for (size_t j = j0; j < j1; j++) {
        mpfr_sub(w->t, w->s.v[j], m, MPFR_RNDN);
        mpfr_exp(w->e.v[j], w->t, MPFR_RNDN);
    }
}

/* TARGET = sum of the terms PTR[0..n-1], rounded once. */
static void
sum_terms(mpfr_ptr target, mpfr_ptr *ptr, size_t n)
{
    mpfr_sum(target, ptr, (unsigned long)n, MPFR_RNDN);
}

/* The fix's shift for a block j0..j1-1 of visible scores whose max is
   w->r: into w->m_adj. */
static void
block_shift(ax_work *w, size_t j0, size_t j1)
{
    const fa_fix *fx = &w->fix;
    bool repeated = false;
    size_t count = 0;

    switch (fx->kind) {
    case FA_FIX_NONE:
        mpfr_set(w->m_adj, w->r, MPFR_RNDN);
        return;
    case FA_FIX_BETA_V2:
        for (size_t j = j0; j < j1; j++)
            count += mpfr_equal_p(w->s.v[j], w->r) ? 1 : 0;
        repeated = count > 1;
        break;
    case FA_FIX_BETA:
    case FA_FIX_EPS:
        /* S >= r - tol, decided on S - r (exact) */
        for (size_t j = j0; j < j1; j++) {
            mpfr_sub(w->t2, w->s.v[j], w->r, MPFR_RNDN);
            count += mpfr_cmp_d(w->t2, -fx->tol) >= 0 ? 1 : 0;
        }
        repeated = count > 1;
        break;
    case FA_FIX_ALWAYS:
        repeated = true;
        break;
    }
    if (!repeated) {
        mpfr_set(w->m_adj, w->r, MPFR_RNDN);
        return;
    }
    if (fx->kind == FA_FIX_EPS) {
        mpfr_add_d(w->m_adj, w->r, fx->eps, MPFR_RNDN);
        return;
    }
    if (mpfr_sgn(w->r) > 0)
        mpfr_mul_d(w->m_adj, w->r, fx->beta, MPFR_RNDN);
    else if (mpfr_sgn(w->r) < 0 || fx->zero_max == FA_ZERO_MAX_KEEP)
        mpfr_set_zero(w->m_adj, 1);
    else
        mpfr_set_d(w->m_adj, fx->eps_zero, MPFR_RNDN);
}

/* The empty row: every key masked. */
static void
row_empty(ax_work *w)
{
    for (size_t c = 0; c < w->sh.d; c++)
        mpfr_set_zero(w->orow.v[c], 1);
    mpfr_set_zero(w->l, 1);
    mpfr_set_inf(w->m_run, -1);
    mpfr_set_inf(w->lse, -1);
    mpfr_set_zero(w->pmax, 1);
}

/* O = O~ / l and LSE = m + log l from w->orow, w->l, w->m_run. */
static void
row_finish(ax_work *w)
{
    for (size_t c = 0; c < w->sh.d; c++)
        mpfr_div(w->orow.v[c], w->orow.v[c], w->l, MPFR_RNDN);
    mpfr_log(w->x, w->l, MPFR_RNDN);
    mpfr_add(w->lse, w->m_run, w->x, MPFR_RNDN);
}

/* The direct forward of one row with VIS visible keys whose scores are
   in w->s: leaves exp(S - m) in w->e, l, m, O and LSE. */
static void
row_direct(ax_work *w, size_t vis)
{
    size_t d = w->sh.d;

    if (vis == 0) {
        row_empty(w);
        return;
    }
    mpfr_set(w->r, w->s.v[0], MPFR_RNDN);
    for (size_t j = 1; j < vis; j++)
        mpfr_max(w->r, w->r, w->s.v[j], MPFR_RNDN);
    mpfr_set(w->m_run, w->r, MPFR_RNDN);
    row_exp(w, w->m_run, 0, vis);
    for (size_t j = 0; j < vis; j++)
        w->ptr[j] = w->e.v[j];
    sum_terms(w->l, w->ptr, vis);
    for (size_t c = 0; c < d; c++) {
        for (size_t j = 0; j < vis; j++) {
            mpfr_mul(w->prod.v[j], w->e.v[j], w->vh.v[j * d + c], MPFR_RNDN);
            w->ptr[j] = w->prod.v[j];
        }
        sum_terms(w->orow.v[c], w->ptr, vis);
    }
    mpfr_set_ui(w->pmax, 1, MPFR_RNDN);
    row_finish(w);
}

/* Algorithm 1 for one row: the same results as row_direct (w->e is then
   scratch).  AX_ERANGE when l is too small for the flush bound. */
static int
row_tiled(ax_work *w, size_t vis)
{
    size_t d = w->sh.d, nk = w->sh.nk, bc = w->bc;
    size_t nblk = (nk + bc - 1) / bc;

    if (vis == 0) {
        row_empty(w);
        return AX_OK;
    }
    mpfr_set_inf(w->m_run, -1);
    mpfr_set_zero(w->l, 1);
    mpfr_set_zero(w->pmax, 1);
    for (size_t bi = 0; bi < nblk; bi++) {
        size_t b = w->reverse ? nblk - 1 - bi : bi;
        size_t j0 = b * bc, j1 = j0 + bc < nk ? j0 + bc : nk;
        bool first = mpfr_inf_p(w->m_run) != 0;
        size_t n;

        if (j1 > vis)
            j1 = vis;
        if (j0 >= j1)
            continue; /* every key of the block is masked for this row */
        mpfr_set(w->r, w->s.v[j0], MPFR_RNDN);
        for (size_t j = j0 + 1; j < j1; j++)
            mpfr_max(w->r, w->r, w->s.v[j], MPFR_RNDN);
        block_shift(w, j0, j1);
        mpfr_max(w->m_new, w->m_adj, w->m_run, MPFR_RNDN);
        row_exp(w, w->m_new, j0, j1);
        for (size_t j = j0; j < j1; j++)
            mpfr_max(w->pmax, w->pmax, w->e.v[j], MPFR_RNDN);
        if (!first) {
            mpfr_sub(w->t, w->m_run, w->m_new, MPFR_RNDN);
            mpfr_exp(w->alpha, w->t, MPFR_RNDN);
        }
        /* l = alpha * l + sum P~ */
        n = 0;
        if (!first) {
            mpfr_mul(w->prod.v[n], w->alpha, w->l, MPFR_RNDN); /* exact */
            w->ptr[n] = w->prod.v[n];
            n++;
        }
        for (size_t j = j0; j < j1; j++)
            w->ptr[n++] = w->e.v[j];
        sum_terms(w->l, w->ptr, n);
        /* O~ = alpha * O~ + P~ V */
        for (size_t c = 0; c < d; c++) {
            n = 0;
            if (!first) {
                mpfr_mul(w->prod.v[n], w->alpha, w->orow.v[c], MPFR_RNDN);
                w->ptr[n] = w->prod.v[n];
                n++;
            }
            for (size_t j = j0; j < j1; j++) {
                mpfr_mul(w->prod.v[n], w->e.v[j], w->vh.v[j * d + c],
                         MPFR_RNDN);
                w->ptr[n] = w->prod.v[n];
                n++;
            }
            sum_terms(w->orow.v[c], w->ptr, n);
        }
        mpfr_set(w->m_run, w->m_new, MPFR_RNDN);
    }
    if (mpfr_zero_p(w->l) || mpfr_get_exp(w->l) < w->emin / 2)
        return AX_ERANGE;
    row_finish(w);
    return AX_OK;
}

/* P[j] = exp(S[j] - m) / l for the visible keys into w->e (RECOMPUTE: the
   exponentials are not in w->e yet). */
static void
row_probs(ax_work *w, size_t vis, bool recompute)
{
    if (recompute)
        row_exp(w, w->m_run, 0, vis);
    for (size_t j = 0; j < vis; j++)
        mpfr_div(w->e.v[j], w->e.v[j], w->l, MPFR_RNDN);
}

/* Writes the forward outputs of row ROW (global index) with VIS visible
   keys; w->e holds P. */
static void
row_store(ax_work *w, const ax_outputs *out, size_t row, size_t vis)
{
    size_t d = w->sh.d, nk = w->sh.nk;

    for (size_t c = 0; c < d; c++)
        put(&out->o, row * d + c, w->orow.v[c]);
    put(&out->lse, row, w->lse);
    put(&out->m, row, w->m_run);
    put(&out->l, row, w->l);
    put(&out->pmax, row, w->pmax);
    if (wanted(&out->s)) {
        for (size_t j = 0; j < nk; j++) {
            if (j >= vis)
                mpfr_set_inf(w->x, -1);
            put(&out->s, row * nk + j, j < vis ? w->s.v[j] : w->x);
        }
    }
    if (wanted(&out->p)) {
        mpfr_set_zero(w->x, 1);
        for (size_t j = 0; j < nk; j++)
            put(&out->p, row * nk + j, j < vis ? w->e.v[j] : w->x);
    }
}

/* Common entry: configuration, range, flags. */
static int
run_forward(ax_work *w, const fa_config *cfg, const ax_options *opt,
            const uint16_t *q, const uint16_t *k, const uint16_t *v,
            const ax_outputs *out)
{
    size_t nq = w->sh.nq, nk = w->sh.nk, d = w->sh.d;
    size_t heads = w->sh.batch * w->sh.heads;
    /* with a mask, the direct evaluation (the same exact values; the
       tiled one's blocks would hold keys that are -Inf) */
    bool tiled = (opt == NULL || opt->method == AX_TILED) && cfg->mask == NULL;
    bool f16 = cfg->input == &sf_format_f16;
    int rc;

    if (heads != 0
        && ((nq != 0 && q == NULL) || (nk != 0 && k == NULL)
            || (nk != 0 && v == NULL)))
        return AX_ECONFIG;
    rc = work_alloc(w, false);
    if (rc != AX_OK)
        return rc;
    if (!set_f32_bits(w->scale, ax_scale_bits(cfg))) {
        rc = AX_ECONFIG;
        goto done;
    }
    for (size_t h = 0; h < heads; h++) {
        if ((rc = load_in(&w->qh, q + h * nq * d, nq * d, f16)) != AX_OK
            || (rc = load_in(&w->kh, k + h * nk * d, nk * d, f16)) != AX_OK
            || (rc = load_in(&w->vh, v + h * nk * d, nk * d, f16)) != AX_OK)
            goto done;
        w->head = h;
        for (size_t i = 0; i < nq; i++) {
            size_t vis = row_visible(w, i);

            if ((rc = row_scores(w, i, vis)) != AX_OK)
                goto done;
            vis = row_kept(w, vis);
            if (tiled) {
                if ((rc = row_tiled(w, vis)) != AX_OK)
                    goto done;
            } else {
                row_direct(w, vis);
            }
            if (wanted(&out->p))
                row_probs(w, vis, tiled);
            row_store(w, out, h * nq + i, vis);
        }
    }
    rc = AX_OK;
done:
    work_free(w);
    return rc;
}

int
ax_forward_ex(const fa_config *cfg, const ax_options *opt, const uint16_t *q,
              const uint16_t *k, const uint16_t *v, const ax_outputs *out)
{
    mpfr_flags_t saved = mpfr_flags_save();
    ax_work w;
    int rc = work_config(&w, cfg, opt);

    if (rc == AX_OK && out == NULL)
        rc = AX_ECONFIG;
    if (rc == AX_OK)
        rc = run_forward(&w, cfg, opt, q, k, v, out);
    mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
    return rc;
}

int
ax_forward(const fa_config *cfg, const ax_options *opt, const uint16_t *q,
           const uint16_t *k, const uint16_t *v, double *o, double *lse)
{
    ax_outputs out;

    memset(&out, 0, sizeof out);
    out.o.d = o;
    out.lse.d = lse;
    return ax_forward_ex(cfg, opt, q, k, v, &out);
}

/*----------------------------------------------------------------------------
 * The backward.
 *--------------------------------------------------------------------------*/

/* dP[j] = sum_c dO[i,c] V[j,c] exactly, for j < n. */
static int
row_dp(ax_work *w, size_t i, size_t n)
{
    size_t d = w->sh.d;
    int inex = 0;

    for (size_t j = 0; j < n; j++) {
        for (size_t c = 0; c < d; c++) {
            inex |= mpfr_mul(w->p16.v[c], w->doh.v[i * d + c],
                             w->vh.v[j * d + c], MPFR_RNDN);
            w->ptr[c] = w->p16.v[c];
        }
        inex |= mpfr_sum(w->dpr.v[j], w->ptr, (unsigned long)d, MPFR_RNDN);
    }
    return inex != 0 ? AX_EINTERNAL : AX_OK;
}

/* One row of the backward, after row_direct and row_probs (P in w->e). */
static int
row_backward(ax_work *w, const ax_outputs *out, const ax_in *din, size_t h,
             size_t i, size_t vis)
{
    size_t nq = w->sh.nq, nk = w->sh.nk, d = w->sh.d;
    size_t row = h * nq + i;
    mpfr_t *dk = w->acc.v, *dv = w->acc.v + nk * d;
    int rc;

    /* delta */
    if (din != NULL && din->mp != NULL) {
        if (!mpfr_number_p(din->mp[row]))
            return AX_EINPUT;
        mpfr_set(w->delta, din->mp[row], MPFR_RNDN);
    } else if (din != NULL && din->d != NULL) {
        if (!isfinite(din->d[row]))
            return AX_EINPUT;
        mpfr_set_d(w->delta, din->d[row], MPFR_RNDN); /* exact: pd > 53 */
    } else {
        for (size_t c = 0; c < d; c++) {
            mpfr_mul(w->prod.v[c], w->doh.v[i * d + c], w->orow.v[c],
                     MPFR_RNDN); /* exact */
            w->ptr[c] = w->prod.v[c];
        }
        sum_terms(w->delta, w->ptr, d);
    }
    put(&out->delta, row, w->delta);

    /* dP (everywhere when it is wanted), dS */
    if ((rc = row_dp(w, i, wanted(&out->dp) ? nk : vis)) != AX_OK)
        return rc;
    for (size_t j = 0; j < vis; j++) {
        mpfr_sub(w->x, w->dpr.v[j], w->delta, MPFR_RNDN);
        mpfr_mul(w->x2, w->e.v[j], w->x, MPFR_RNDN); /* exact */
        mpfr_mul(w->dsr.v[j], w->x2, w->scale, MPFR_RNDN);
    }
    if (wanted(&out->dp))
        for (size_t j = 0; j < nk; j++)
            put(&out->dp, row * nk + j, w->dpr.v[j]);
    if (wanted(&out->ds)) {
        mpfr_set_zero(w->y, 1);
        for (size_t j = 0; j < nk; j++)
            put(&out->ds, row * nk + j, j < vis ? w->dsr.v[j] : w->y);
    }

    /* dQ = dS K, one rounding per element */
    for (size_t c = 0; c < d; c++) {
        for (size_t j = 0; j < vis; j++) {
            mpfr_mul(w->prod.v[j], w->dsr.v[j], w->kh.v[j * d + c],
                     MPFR_RNDN); /* exact */
            w->ptr[j] = w->prod.v[j];
        }
        sum_terms(w->y, w->ptr, vis);
        put(&out->dq, row * d + c, w->y);
    }

    /* dK += dS^T q, dV += P^T dO */
    for (size_t j = 0; j < vis; j++) {
        for (size_t c = 0; c < d; c++) {
            mpfr_fma(dk[j * d + c], w->dsr.v[j], w->qh.v[i * d + c],
                     dk[j * d + c], MPFR_RNDN);
            mpfr_fma(dv[j * d + c], w->e.v[j], w->doh.v[i * d + c],
                     dv[j * d + c], MPFR_RNDN);
        }
    }
    return AX_OK;
}

int
ax_backward_ex(const fa_config *cfg, const ax_options *opt, const uint16_t *q,
               const uint16_t *k, const uint16_t *v, const uint16_t *dout,
               const ax_in *delta_in, const ax_outputs *out)
{
    mpfr_flags_t saved = mpfr_flags_save();
    ax_work w;
    size_t nq, nk, d, heads;
    bool f16;
    int rc = work_config(&w, cfg, opt);

    if (rc != AX_OK || out == NULL) {
        mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
        return rc != AX_OK ? rc : AX_ECONFIG;
    }
    nq = w.sh.nq;
    nk = w.sh.nk;
    d = w.sh.d;
    heads = w.sh.batch * w.sh.heads;
    if (heads != 0
        && ((nq != 0 && (q == NULL || dout == NULL))
            || (nk != 0 && (k == NULL || v == NULL))))
        rc = AX_ECONFIG;
    if (delta_in != NULL && delta_in->d == NULL && delta_in->mp == NULL)
        delta_in = NULL;
    if (rc == AX_OK)
        rc = work_alloc(&w, true);
    if (rc != AX_OK) {
        mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
        return rc;
    }
    f16 = cfg->input == &sf_format_f16;
    if (!set_f32_bits(w.scale, ax_scale_bits(cfg))) {
        rc = AX_ECONFIG;
        goto done;
    }
    for (size_t h = 0; h < heads; h++) {
        if ((rc = load_in(&w.qh, q + h * nq * d, nq * d, f16)) != AX_OK
            || (rc = load_in(&w.kh, k + h * nk * d, nk * d, f16)) != AX_OK
            || (rc = load_in(&w.vh, v + h * nk * d, nk * d, f16)) != AX_OK
            || (rc = load_in(&w.doh, dout + h * nq * d, nq * d, f16))
                   != AX_OK)
            goto done;
        for (size_t x = 0; x < 2 * nk * d; x++)
            mpfr_set_zero(w.acc.v[x], 1);
        w.head = h;
        for (size_t i = 0; i < nq; i++) {
            size_t vis = row_visible(&w, i);

            if ((rc = row_scores(&w, i, vis)) != AX_OK)
                goto done;
            vis = row_kept(&w, vis);
            row_direct(&w, vis);
            row_probs(&w, vis, false);
            row_store(&w, out, h * nq + i, vis);
            if ((rc = row_backward(&w, out, delta_in, h, i, vis)) != AX_OK)
                goto done;
        }
        for (size_t x = 0; x < nk * d; x++) {
            put(&out->dk, h * nk * d + x, w.acc.v[x]);
            put(&out->dv, h * nk * d + x, w.acc.v[nk * d + x]);
        }
    }
    rc = AX_OK;
done:
    work_free(&w);
    mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
    return rc;
}

int
ax_backward(const fa_config *cfg, const ax_options *opt, const uint16_t *q,
            const uint16_t *k, const uint16_t *v, const uint16_t *dout,
            const double *delta_in, double *delta, double *dq, double *dk,
            double *dv)
{
    ax_outputs out;
    ax_in din = {delta_in, NULL};

    memset(&out, 0, sizeof out);
    out.delta.d = delta;
    out.dq.d = dq;
    out.dk.d = dk;
    out.dv.d = dv;
    return ax_backward_ex(cfg, opt, q, k, v, dout,
                          delta_in != NULL ? &din : NULL, &out);
}

/*----------------------------------------------------------------------------
 * Signed error in ulps.
 *--------------------------------------------------------------------------*/
static int
clamp_binade(const sf_format *f, long e)
{
    if (e < f->emin)
        e = f->emin;
    if (e > f->emax)
        e = f->emax;
    return (int)e;
}

int
ax_ulp_exp(const sf_format *f, double x)
{
    int e = f->emin;

    if (isinf(x))
        e = f->emax;
    else if (isfinite(x) && x != 0.0) {
        (void)frexp(x, &e); /* x = m 2^e, 1/2 <= |m| < 1 */
        e = clamp_binade(f, (long)e - 1);
    }
    return e - (int)f->frac_bits;
}

double
ax_error_ulps(const sf_format *f, uint64_t bits, double exact)
{
    double c = sf_to_double(f, bits);

    if (isnan(c) || isnan(exact))
        return NAN;
    if (isinf(exact))
        return c == exact ? 0.0 : c - exact;
    if (isinf(c))
        return c;
    /* c - exact is one correctly rounded double operation; the scaling by
       a power of two is exact unless it underflows */
    return ldexp(c - exact, -ax_ulp_exp(f, exact));
}

double
ax_error_ulps_mp(const sf_format *f, uint64_t bits, mpfr_srcptr exact)
{
    double c = sf_to_double(f, bits), r;
    mp_limb_t limbs[4];
    mpfr_t diff;
    mpfr_flags_t saved;
    int e = f->emin;

    if (isnan(c) || mpfr_nan_p(exact))
        return NAN;
    if (mpfr_inf_p(exact)) {
        double x = mpfr_sgn(exact) > 0 ? INFINITY : -INFINITY;
        return c == x ? 0.0 : c - x;
    }
    if (isinf(c))
        return c;
    if (!mpfr_zero_p(exact))
        e = clamp_binade(f, (long)mpfr_get_exp(exact) - 1);
    saved = mpfr_flags_save();
    mpfr_custom_init(limbs, 53);
    mpfr_custom_init_set(diff, MPFR_ZERO_KIND, 0, 53, limbs);
    mpfr_d_sub(diff, c, exact, MPFR_RNDN); /* c - exact, rounded once */
    mpfr_mul_2si(diff, diff, -(long)(e - (int)f->frac_bits), MPFR_RNDN);
    r = mpfr_get_d(diff, MPFR_RNDN);
    mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
    return r;
}

void
ax_row_errors(const sf_format *f, const uint32_t *got, const double *exact,
              size_t n, size_t d, bias_cell *err, bias_cell *mag)
{
    for (size_t r = 0; d > 0 && r + d <= n; r += d) {
        double scale = 0;
        int ue;
        for (size_t j = r; j < r + d; j++)
            if (isfinite(exact[j]))
                scale = fmax(scale, fabs(exact[j]));
        ue = ax_ulp_exp(f, scale);
        for (size_t j = r; j < r + d; j++) {
            double c = sf_to_double(&sf_format_f32, got[j]), u;
            if (!isfinite(exact[j]))
                continue;
            /* c - exact rounded once, scaled exactly (as ax_error_ulps) */
            u = isfinite(c) ? ldexp(c - exact[j], -ue) : c;
            bias_cell_add(err, u);
            if (isfinite(u))
                bias_cell_add(mag, fabs(u));
        }
    }
}

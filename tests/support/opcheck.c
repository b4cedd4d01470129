/* opcheck.c -- library-versus-oracle loops and operand generators */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opcheck.h"

#ifdef _OPENMP
#define OPC_PRAGMA(x) _Pragma(#x)
#else
#define OPC_PRAGMA(x)
#endif

/* Cases per block of opc_run_cases; each block has its own PRNG stream. */
#define OPC_BLOCK 1024

/*----------------------------------------------------------------------------
 * Reports.
 *--------------------------------------------------------------------------*/
void
opc_report_init(opc_report *r)
{
    memset(r, 0, sizeof *r);
}

static void
report_add_fail(opc_report *r, const opc_fail *f)
{
    unsigned i, pos;

    if (r->n_fails == TST_MAX_PRINT && f->key >= r->fails[r->n_fails - 1].key)
        return;
    pos = 0;
    while (pos < r->n_fails && r->fails[pos].key < f->key)
        pos++;
    if (r->n_fails < TST_MAX_PRINT)
        r->n_fails++;
    for (i = r->n_fails - 1; i > pos; i--)
        r->fails[i] = r->fails[i - 1];
    r->fails[pos] = *f;
}

static void
report_merge(opc_report *into, const opc_report *from)
{
    unsigned i;

    into->n_checked += from->n_checked;
    into->n_bad += from->n_bad;
    for (i = 0; i < from->n_fails; i++)
        report_add_fail(into, &from->fails[i]);
}

unsigned
opc_arity(int op)
{
    return op == SF_OP_SQRT ? 1u : op == SF_OP_FMA ? 3u : 2u;
}

const char *
opc_op_name(int op)
{
    switch (op) {
    case SF_OP_ADD:
        return "add";
    case SF_OP_SUB:
        return "sub";
    case SF_OP_MUL:
        return "mul";
    case SF_OP_DIV:
        return "div";
    case SF_OP_SQRT:
        return "sqrt";
    case SF_OP_FMA:
        return "fma";
    default:
        return "?";
    }
}

static void
print_fail(const opc_fail *x)
{
    const opc_case *c = &x->c;
    char fe[6], fg[6];
    int w = (int)(c->f->storage_bits + 3) / 4;

    switch (c->kind) {
    case OPC_ARITH:
        tst_print_case(opc_op_name(c->op), c->f, x->rm, c->in,
                       opc_arity(c->op), x->expected, x->exp_flags, x->got,
                       x->got_flags);
        return;
    case OPC_ROUND_INT:
        tst_print_case(c->exact ? "round_to_int_exact" : "round_to_int", c->f,
                       x->rm, c->in, 1, x->expected, x->exp_flags, x->got,
                       x->got_flags);
        return;
    case OPC_CONVERT: {
        int wf = (int)(c->from->storage_bits + 3) / 4;
        printf("%s_to_%s %s %0*llx %0*llx %s got %0*llx %s\n", c->from->name,
               c->f->name, sf_round_name(x->rm), wf,
               (unsigned long long)c->in[0], w,
               (unsigned long long)x->expected, sf_flags_str(x->exp_flags, fe),
               w, (unsigned long long)x->got, sf_flags_str(x->got_flags, fg));
        printf("    %a  seed %llu\n", sf_to_double(c->from, c->in[0]),
               (unsigned long long)tst_seed());
        return;
    }
    case OPC_FROM_INT:
        printf("i%u_to_%s %s %lld %0*llx %s got %0*llx %s\n", c->width,
               c->f->name, sf_round_name(x->rm), (long long)c->iv, w,
               (unsigned long long)x->expected, sf_flags_str(x->exp_flags, fe),
               w, (unsigned long long)x->got, sf_flags_str(x->got_flags, fg));
        return;
    case OPC_TO_INT:
    default:
        printf("%s_to_i%u %s %0*llx %lld %s got %lld %s\n", c->f->name,
               c->width, sf_round_name(x->rm), w, (unsigned long long)c->in[0],
               (long long)x->expected, sf_flags_str(x->exp_flags, fe),
               (long long)x->got, sf_flags_str(x->got_flags, fg));
        printf("    %a  seed %llu\n", sf_to_double(c->f, c->in[0]),
               (unsigned long long)tst_seed());
        return;
    }
}

void
opc_report_print(const opc_report *r, const char *label)
{
    unsigned i;

    for (i = 0; i < r->n_fails; i++)
        print_fail(&r->fails[i]);
    printf("%s: %lu checked, %lu mismatches\n", label, r->n_checked, r->n_bad);
    fflush(stdout);
}

/*----------------------------------------------------------------------------
 * Running one case.
 *--------------------------------------------------------------------------*/
static uint64_t
call_library(const opc_case *c, sf_round rm, sf_env *env)
{
    switch (c->kind) {
    case OPC_ARITH:
        switch (c->op) {
        case SF_OP_ADD:
            return sf_add(c->f, c->in[0], c->in[1], rm, env);
        case SF_OP_SUB:
            return sf_sub(c->f, c->in[0], c->in[1], rm, env);
        case SF_OP_MUL:
            return sf_mul(c->f, c->in[0], c->in[1], rm, env);
        case SF_OP_DIV:
            return sf_div(c->f, c->in[0], c->in[1], rm, env);
        case SF_OP_SQRT:
            return sf_sqrt(c->f, c->in[0], rm, env);
        case SF_OP_FMA:
        default:
            return sf_fma(c->f, c->in[0], c->in[1], c->in[2], rm, env);
        }
    case OPC_CONVERT:
        return sf_convert(c->f, c->from, c->in[0], rm, env);
    case OPC_FROM_INT:
        if (c->width == 32)
            return sf_from_i32(c->f, (int32_t)c->iv, rm, env);
        return sf_from_i64(c->f, c->iv, rm, env);
    case OPC_TO_INT:
        if (c->width == 32)
            return (uint64_t)(int64_t)sf_to_i32(c->f, c->in[0], rm, env);
        return (uint64_t)sf_to_i64(c->f, c->in[0], rm, env);
    case OPC_ROUND_INT:
    default:
        return sf_round_to_int(c->f, c->in[0], rm, c->exact, env);
    }
}

/* Prepares the oracle for the cases whose exact result does not depend
   on the mode; returns false for the others. */
static bool
oracle_prepare_case(oracle *o, const opc_case *c)
{
    switch (c->kind) {
    case OPC_ARITH:
        oracle_prepare(o, c->f, c->op, c->in);
        return true;
    case OPC_CONVERT:
        oracle_prepare_convert(o, c->f, c->from, c->in[0]);
        return true;
    case OPC_FROM_INT:
        oracle_prepare_from_int(o, c->f, c->iv);
        return true;
    default:
        return false;
    }
}

static unsigned
oracle_case(oracle *o, const opc_case *c, bool prepared, sf_round rm,
            const sf_env *env, uint64_t *out)
{
    int64_t v;
    unsigned fl;

    if (prepared)
        return oracle_result(o, rm, env, out);
    if (c->kind == OPC_TO_INT) {
        fl = oracle_to_int(o, c->f, c->in[0], rm, c->width, &v);
        *out = (uint64_t)v;
        return fl;
    }
    return oracle_round_to_int(o, c->f, c->in[0], rm, c->exact, out);
}

unsigned
opc_check_case(oracle *o, const opc_case *c, const sf_env *env, opc_report *r,
               uint64_t key)
{
    bool prepared = oracle_prepare_case(o, c);
    unsigned m, bad = 0;

    for (m = 0; m < ORACLE_N_MODES; m++) {
        sf_round rm = oracle_modes[m];
        sf_env e = *env;
        uint64_t want, got;
        unsigned want_fl, got_fl;

        e.flags = 0;
        want_fl = oracle_case(o, c, prepared, rm, env, &want);
        got = call_library(c, rm, &e);
        got_fl = e.flags;
        r->n_checked++;
        if (got != want || got_fl != want_fl) {
            opc_fail x;
            x.key = key * 8 + m;
            x.c = *c;
            x.rm = rm;
            x.expected = want;
            x.got = got;
            x.exp_flags = want_fl;
            x.got_flags = got_fl;
            r->n_bad++;
            report_add_fail(r, &x);
            bad++;
        }
    }
    return bad;
}

void
opc_run_cases(opc_gen_fn gen, const void *ctx, uint64_t n, uint64_t stream,
              const sf_env *env, bool self_check, opc_report *r)
{
    long long n_blocks = (long long)((n + OPC_BLOCK - 1) / OPC_BLOCK);

    bool threads = oracle_thread_safe();

    (void)tst_seed(); /* read the environment before threads start */
    (void)threads;
    OPC_PRAGMA(omp parallel if (threads))
    {
        oracle *o = oracle_new();
        opc_report local;
        long long blk;

        oracle_set_self_check(o, self_check);
        opc_report_init(&local);
        OPC_PRAGMA(omp for schedule(dynamic, 1))
        for (blk = 0; blk < n_blocks; blk++) {
            uint64_t i0 = (uint64_t)blk * OPC_BLOCK;
            uint64_t i1 = i0 + OPC_BLOCK < n ? i0 + OPC_BLOCK : n;
            uint64_t i;
            tst_rng rng;

            tst_rng_init(&rng, (stream << 32) ^ (uint64_t)blk);
            for (i = i0; i < i1; i++) {
                opc_case c;
                memset(&c, 0, sizeof c);
                gen(i, &rng, ctx, &c);
                opc_check_case(o, &c, env, &local, i);
            }
        }
        OPC_PRAGMA(omp critical)
        report_merge(r, &local);
        oracle_free(o);
    }
}

/*----------------------------------------------------------------------------
 * Table rows.
 *--------------------------------------------------------------------------*/
bool
opc_check_row(const opc_row *row, char *msg, size_t n)
{
    sf_env env = SF_ENV_IEEE;
    opc_case c;
    oracle *o = oracle_new();
    uint64_t got, want;
    unsigned got_fl, want_fl;
    char f1[6], f2[6], f3[6];
    bool ok;

    memset(&c, 0, sizeof c);
    c.kind = row->kind;
    c.op = row->op;
    c.f = sf_format_by_name(row->fmt);
    c.from = row->from ? sf_format_by_name(row->from) : NULL;
    memcpy(c.in, row->in, sizeof c.in);
    c.iv = (int64_t)row->in[0];
    c.width = row->kind == OPC_FROM_INT || row->kind == OPC_TO_INT
                  ? (unsigned)row->in[1]
                  : 0;
    c.exact = row->kind == OPC_ROUND_INT && row->in[1] != 0;
    env.tininess_after = !row->tininess_before;
    env.saturate = row->saturate;
    oracle_set_self_check(o, true);

    if (oracle_prepare_case(o, &c))
        want_fl = oracle_result(o, row->rm, &env, &want);
    else
        want_fl = oracle_case(o, &c, false, row->rm, &env, &want);
    env.flags = 0;
    got = call_library(&c, row->rm, &env);
    got_fl = env.flags;
    oracle_free(o);

    ok = got == row->expected && got_fl == row->flags && want == row->expected
         && want_fl == row->flags;
    if (!ok)
        snprintf(
            msg, n,
            "%s %s %s %llx %llx %llx: table %llx %s, library %llx %s, "
            "oracle %llx %s",
            row->fmt,
            row->kind == OPC_ARITH      ? opc_op_name(row->op)
            : row->kind == OPC_CONVERT  ? "convert"
            : row->kind == OPC_FROM_INT ? "from_int"
            : row->kind == OPC_TO_INT   ? "to_int"
                                        : "round_to_int",
            sf_round_name(row->rm), (unsigned long long)row->in[0],
            (unsigned long long)row->in[1], (unsigned long long)row->in[2],
            (unsigned long long)row->expected, sf_flags_str(row->flags, f1),
            (unsigned long long)got, sf_flags_str(got_fl, f2),
            (unsigned long long)want, sf_flags_str(want_fl, f3));
    return ok;
}

/*----------------------------------------------------------------------------
 * Generators.
 *--------------------------------------------------------------------------*/
uint64_t
opc_pack(const sf_format *f, bool sign, uint64_t exp_field, uint64_t frac)
{
    unsigned fb = f->frac_bits, pad = f->pad_bits;

    return (sign ? (uint64_t)1 << (f->storage_bits - 1) : 0)
           | ((exp_field & (((uint64_t)1 << f->exp_bits) - 1)) << (fb + pad))
           | ((frac & (((uint64_t)1 << fb) - 1)) << pad);
}

static uint64_t
bias_of(const sf_format *f)
{
    return ((uint64_t)1 << (f->exp_bits - 1)) - 1;
}

static uint64_t
exp_top(const sf_format *f)
{
    return ((uint64_t)1 << f->exp_bits) - 1;
}

static size_t
add_unique(uint64_t *out, size_t n, size_t max, uint64_t v)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (out[i] == v)
            return n;
    if (n < max)
        out[n++] = v;
    return n;
}

/* Significand patterns of W bits: index I in [0, 4W + 6). */
static uint64_t
sig_pattern(unsigned w, unsigned i)
{
    uint64_t all = ((uint64_t)1 << w) - 1;

    if (i < w)
        return (uint64_t)1 << i; /* walking one */
    i -= w;
    if (i < w)
        return all ^ ((uint64_t)1 << i); /* walking zero */
    i -= w;
    if (i < w)
        return all ^ (all >> (i + 1)); /* i+1 ones at the top */
    i -= w;
    if (i < w)
        return all >> (w - 1 - i); /* i+1 ones at the bottom */
    i -= w;
    switch (i) {
    case 0:
        return 0;
    case 1:
        return all;
    case 2:
        return all & 0x5555555555555555u;
    case 3:
        return all & 0xAAAAAAAAAAAAAAAAu;
    case 4:
        return ((uint64_t)1 << (w - 1)) | 1; /* top and bottom */
    default:
        return all & 0x3333333333333333u;
    }
}

size_t
opc_structured_values(const sf_format *f, uint64_t *out, size_t max)
{
    uint64_t top = exp_top(f), bias = bias_of(f);
    uint64_t exps[24];
    unsigned n_exp = 0, w = f->frac_bits, i, j, s;
    size_t n = 0;
    int k;

    exps[n_exp++] = 0;
    exps[n_exp++] = 1;
    exps[n_exp++] = 2;
    for (k = -2; k <= 2; k++)
        exps[n_exp++] = (uint64_t)((int64_t)bias + k);
    exps[n_exp++] = bias + w / 2 + 1;
    exps[n_exp++] = bias - w / 2 - 1;
    exps[n_exp++] = top - 3;
    exps[n_exp++] = top - 2;
    exps[n_exp++] = top - 1;
    exps[n_exp++] = top;
    for (s = 0; s < 2; s++)
        for (i = 0; i < n_exp; i++) {
            if (exps[i] > top)
                continue;
            for (j = 0; j < 4 * w + 6; j++)
                n = add_unique(
                    out, n, max,
                    opc_pack(f, s != 0, exps[i], sig_pattern(w, j)));
        }
    return n;
}

uint64_t
opc_random_sig(tst_rng *rng, unsigned w)
{
    uint64_t all = ((uint64_t)1 << w) - 1, v = 0;
    unsigned pos = 0;

    if (tst_rand_below(rng, 2) == 0)
        return tst_rand64(rng) & all;
    /* runs of ones and zeros of random lengths */
    while (pos < w) {
        unsigned len = 1 + (unsigned)tst_rand_below(rng, w);
        bool ones = tst_rand_below(rng, 2) != 0;
        if (len > w - pos)
            len = w - pos;
        if (ones)
            v |= (((uint64_t)1 << len) - 1) << pos;
        pos += len;
    }
    return v & all;
}

static uint64_t
clamp_exp(const sf_format *f, int64_t e)
{
    int64_t top = (int64_t)exp_top(f);

    if (e < 0)
        return 0;
    if (e > top - 1)
        return (uint64_t)(top - 1);
    return (uint64_t)e;
}

static uint64_t
random_special(const sf_format *f, tst_rng *rng)
{
    bool s = tst_rand_below(rng, 2) != 0;
    uint64_t top = exp_top(f), all = ((uint64_t)1 << f->frac_bits) - 1;
    uint64_t quiet = (uint64_t)1 << (f->frac_bits - 1);

    switch (tst_rand_below(rng, 8)) {
    case 0:
        return opc_pack(f, s, 0, 0); /* zero */
    case 1:
        return opc_pack(f, s, top, f->specials == SF_SPECIALS_FN ? all : 0);
    case 2: /* qNaN */
        return opc_pack(f, s, top, quiet | (tst_rand64(rng) & all));
    case 3: { /* sNaN */
        uint64_t fr = tst_rand64(rng) & (quiet - 1);
        if (f->specials == SF_SPECIALS_FN)
            return opc_pack(f, s, top, all);
        return opc_pack(f, s, top, fr ? fr : 1);
    }
    case 4: /* max */
        return f->specials == SF_SPECIALS_FN ? opc_pack(f, s, top, all - 1)
                                             : opc_pack(f, s, top - 1, all);
    case 5:
        return opc_pack(f, s, 1, 0); /* min normal */
    case 6:
        return opc_pack(f, s, 0, 1); /* min subnormal */
    default:
        return opc_pack(f, s, 0, all); /* max subnormal */
    }
}

uint64_t
opc_random_value(const sf_format *f, tst_rng *rng)
{
    uint64_t top = exp_top(f), bias = bias_of(f);
    unsigned w = f->frac_bits;
    bool s = tst_rand_below(rng, 2) != 0;

    switch (tst_rand_below(rng, 16)) {
    case 0:
    case 1:
    case 2:
    case 3:
        return opc_pack(f, s, tst_rand64(rng), tst_rand64(rng));
    case 4:
    case 5:
    case 6:
    case 7:
        return opc_pack(f, s, tst_rand_below(rng, top),
                        opc_random_sig(rng, w));
    case 8:
    case 9:
    case 10: {
        int64_t d = (int64_t)tst_rand_below(rng, 2 * w + 5) - (int64_t)w - 2;
        return opc_pack(f, s, clamp_exp(f, (int64_t)bias + d),
                        opc_random_sig(rng, w));
    }
    case 11:
    case 12:
        return opc_pack(
            f, s, tst_rand_below(rng, top + 1),
            sig_pattern(w, (unsigned)tst_rand_below(rng, 4 * w + 6)));
    case 13:
        return random_special(f, rng);
    default:
        return opc_pack(f, s, tst_rand_below(rng, 3), opc_random_sig(rng, w));
    }
}

static uint64_t
exp_field(const sf_format *f, uint64_t v)
{
    return (v >> (f->frac_bits + f->pad_bits)) & exp_top(f);
}

static uint64_t
with_exp(const sf_format *f, uint64_t v, int64_t e)
{
    uint64_t fr = (v >> f->pad_bits) & (((uint64_t)1 << f->frac_bits) - 1);
    bool s = (v >> (f->storage_bits - 1)) & 1;

    return opc_pack(f, s, clamp_exp(f, e), fr);
}

void
opc_random_operands(const sf_format *f, int op, tst_rng *rng, uint64_t *in)
{
    unsigned w = f->frac_bits, n = opc_arity(op), i;
    int64_t bias = (int64_t)bias_of(f), top = (int64_t)exp_top(f);
    int64_t ea, d;
    uint64_t kind = tst_rand_below(rng, 8);

    for (i = 0; i < 3; i++)
        in[i] = i < n ? opc_random_value(f, rng) : 0;
    if (kind < 3 || n == 1) {
        if (n == 1 && kind >= 4) /* sqrt: mostly positive operands */
            in[0] &= ~((uint64_t)1 << (f->storage_bits - 1));
        return;
    }
    ea = (int64_t)exp_field(f, in[0]);
    if (ea == top)
        ea = top - 1 - (int64_t)tst_rand_below(rng, 4);
    in[0] = with_exp(f, in[0], ea);
    switch (op) {
    case SF_OP_ADD:
    case SF_OP_SUB:
        /* exponents within the significand width: carries, cancellation,
           guard/round/sticky positions, exact ties */
        d = (int64_t)tst_rand_below(rng, 2 * w + 9) - (int64_t)w - 4;
        in[1] = with_exp(f, in[1], ea + d);
        if (kind == 7) {
            /* b = half an ulp of a (a tie), or just above or below */
            uint64_t sig = tst_rand_below(rng, 3);
            in[1] = opc_pack(f, tst_rand_below(rng, 2) != 0,
                             clamp_exp(f, ea - (int64_t)w - 1),
                             sig == 0   ? 0
                             : sig == 1 ? 1
                                        : ((uint64_t)1 << w) - 1);
        }
        break;
    case SF_OP_MUL:
    case SF_OP_DIV: {
        /* results near overflow, near the subnormal range, or deep in it */
        int64_t target;
        switch (kind) {
        case 3:
            target = top - 1 - (int64_t)tst_rand_below(rng, 3);
            break;
        case 4:
            target = 1 - (int64_t)tst_rand_below(rng, 3);
            break;
        case 5:
            target = -(int64_t)tst_rand_below(rng, w + 3);
            break;
        default:
            target = bias + (int64_t)tst_rand_below(rng, 5) - 2;
            break;
        }
        /* product: ea + eb - bias = target; quotient: ea - eb + bias */
        if (op == SF_OP_MUL)
            in[1] = with_exp(f, in[1], target - ea + bias);
        else
            in[1] = with_exp(f, in[1], ea - target + bias);
        break;
    }
    case SF_OP_FMA:
    default: {
        /* addend close to the product: cancellation and ties */
        int64_t eb = (int64_t)exp_field(f, in[1]);
        int64_t ep;
        if (eb == top)
            eb = bias;
        if (kind == 3) {
            eb = bias + (int64_t)tst_rand_below(rng, 9) - 4;
            in[1] = with_exp(f, in[1], eb);
        }
        ep = ea + eb - bias;
        d = (int64_t)tst_rand_below(rng, 4 * w + 9) - 2 * (int64_t)w - 4;
        in[2] = with_exp(f, in[2], ep + d);
        break;
    }
    }
}

/*----------------------------------------------------------------------------
 * Ready-made loops for the arithmetic ops.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const sf_format *f;
    int op;
    const uint64_t *vals; /* structured values */
    uint64_t n_vals;
    const uint64_t *part; /* partners */
    uint64_t n_part;
} gen_ctx;

static void
set_arith(opc_case *c, const gen_ctx *g)
{
    c->kind = OPC_ARITH;
    c->op = g->op;
    c->f = g->f;
}

/* All tuples of the structured values (vals^arity). */
static void
gen_tuples(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;
    unsigned n = opc_arity(g->op), i;

    (void)rng;
    set_arith(c, g);
    for (i = n; i-- > 0;) {
        c->in[i] = g->vals[idx % g->n_vals];
        idx /= g->n_vals;
    }
}

/* Each structured value against each partner, in both orders; fma gets
   the partner as addend too. */
static void
gen_partners(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;
    uint64_t v = g->vals[idx / (g->n_part * 2)];
    uint64_t p = g->part[(idx / 2) % g->n_part];

    set_arith(c, g);
    if (opc_arity(g->op) == 1) {
        c->in[0] = v;
        return;
    }
    c->in[0] = idx % 2 ? p : v;
    c->in[1] = idx % 2 ? v : p;
    c->in[2] = opc_random_value(g->f, rng);
}

static void
gen_random(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;

    (void)idx;
    set_arith(c, g);
    opc_random_operands(g->f, g->op, rng, c->in);
}

/* Every operand (unary) or every pair (binary) of an 8-bit format; fma
   takes a random addend. */
static void
gen_all(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;
    unsigned bits = g->f->storage_bits;

    set_arith(c, g);
    if (opc_arity(g->op) == 1) {
        c->in[0] = idx;
        return;
    }
    c->in[0] = idx >> bits;
    c->in[1] = idx & (((uint64_t)1 << bits) - 1);
    if (g->op == SF_OP_FMA)
        c->in[2] = opc_random_value(g->f, rng);
}

/* Every K-th value of a list, at most MAX of them. */
static size_t
thin(const uint64_t *in, size_t n, uint64_t *out, size_t max)
{
    size_t k = (n + max - 1) / max, i, m = 0;

    for (i = 0; i < n && m < max; i += k)
        out[m++] = in[i];
    return m;
}

void
opc_test_structured(const sf_format *f, int op, const sf_env *env,
                    uint64_t stream, opc_report *r)
{
    enum
    {
        MAX_VALS = 4096
    };
    static const size_t tuple_max[4] = {0, 4096, 400, 48};
    uint64_t *vals = malloc(MAX_VALS * sizeof *vals);
    uint64_t *sub = malloc(MAX_VALS * sizeof *sub);
    uint64_t part[16];
    size_t n_vals, n_sub, n_part = 0;
    unsigned n = opc_arity(op);
    gen_ctx g;
    uint64_t count = 1;
    unsigned i;

    if (vals == NULL || sub == NULL)
        abort();
    n_vals = opc_structured_values(f, vals, MAX_VALS);
    n_sub = thin(vals, n_vals, sub, tuple_max[n]);
    for (i = 0; i < n; i++)
        count *= n_sub;
    g.f = f;
    g.op = op;
    g.vals = sub;
    g.n_vals = n_sub;
    g.part = NULL;
    g.n_part = 0;
    opc_run_cases(gen_tuples, &g, count, stream, env, true, r);

    /* partners: one, the smallest normal and subnormal, the largest
       value, and for each value itself and its neighbours are covered by
       the random mix; here the fixed ones */
    part[n_part++] = opc_pack(f, false, bias_of(f), 0);
    part[n_part++] = opc_pack(f, true, bias_of(f), 0);
    part[n_part++] = opc_pack(f, false, 1, 0);
    part[n_part++] = opc_pack(f, true, 0, 1);
    part[n_part++] = oracle_max_finite_bits(f);
    part[n_part++] =
        opc_pack(f, false, bias_of(f) - 1, ((uint64_t)1 << f->frac_bits) - 1);
    part[n_part++] = opc_pack(f, true, bias_of(f) + 1, 1);
    part[n_part++] = opc_pack(f, false, bias_of(f) - f->frac_bits - 1, 0);
    g.vals = vals;
    g.n_vals = n_vals;
    g.part = part;
    g.n_part = n_part;
    opc_run_cases(gen_partners, &g, n == 1 ? n_vals : n_vals * n_part * 2,
                  stream + 1, env, false, r);
    free(vals);
    free(sub);
}

void
opc_test_random(const sf_format *f, int op, uint64_t n, uint64_t stream,
                const sf_env *env, opc_report *r)
{
    gen_ctx g;

    memset(&g, 0, sizeof g);
    g.f = f;
    g.op = op;
    opc_run_cases(gen_random, &g, n, stream, env, false, r);
}

void
opc_test_all(const sf_format *f, int op, const sf_env *env, uint64_t stream,
             opc_report *r)
{
    gen_ctx g;
    unsigned bits = f->storage_bits * (opc_arity(op) == 1 ? 1u : 2u);

    memset(&g, 0, sizeof g);
    g.f = f;
    g.op = op;
    opc_run_cases(gen_all, &g, (uint64_t)1 << bits, stream, env, false, r);
}

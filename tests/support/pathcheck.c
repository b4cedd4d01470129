/* pathcheck.c -- what the tests of the fast and vector paths share */
#include "tests/support/pathcheck.h"

static void
ignore_event(void *user, const sf_event *ev)
{
    (void)user;
    (void)ev;
}

const sf_event_sink tst_quiet = {ignore_event, NULL};

sf_env
tst_env_at(int i)
{
    static const sf_env presets[5] = {SF_ENV_IEEE, SF_ENV_X86,
                                      SF_ENV_AVX512BF16, SF_ENV_NVIDIA,
                                      SF_ENV_ARM_BFDOT};
    sf_env e = SF_ENV_IEEE;

    if (i < 5)
        return presets[i];
    if (i == 5)
        e.saturate = true;
    else if (i == 6)
        e.ftz = e.daz = true;
    else
        e.tininess_after = false;
    return e;
}

const sf_round tst_modes[TST_N_MODES] = {SF_RNE, SF_RTZ, SF_RDN, SF_RUP,
                                         SF_RNA, SF_ROD, SF_SR};

const char *const tst_op_names[TST_N_OPS] = {"add", "sub", "mul", "fma"};

uint64_t
tst_generic_op(const sf_format *f, int op, uint64_t a, uint64_t b, uint64_t c,
               sf_round rm, sf_env *env)
{
    switch (op) {
    case TST_OP_ADD:
        return sf_add(f, a, b, rm, env);
    case TST_OP_SUB:
        return sf_sub(f, a, b, rm, env);
    case TST_OP_MUL:
        return sf_mul(f, a, b, rm, env);
    default:
        return sf_fma(f, a, b, c, rm, env);
    }
}

int
tst_find_paths(sf_isa paths[SF_N_ISA])
{
    int n = 0;

    for (int p = SF_ISA_SCALAR; p < SF_N_ISA; p++)
        if (sf_isa_supported((sf_isa)p))
            paths[n++] = (sf_isa)p;
    return n;
}

uint64_t
tst_rand_frac(const sf_format *f, tst_rng *rng)
{
    uint64_t ones = ((uint64_t)1 << f->frac_bits) - 1;

    switch (tst_rand_below(rng, 8)) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return ones;
    case 3:
        return (uint64_t)1 << (f->frac_bits - 1);
    case 4:
        return ((uint64_t)1 << (f->frac_bits - 1)) + 1;
    case 5:
        return ones - 1;
    default:
        return tst_rand64(rng) & ones;
    }
}

void
tst_put(void *p, const sf_format *f, size_t i, uint64_t v)
{
    if (f->storage_bits == 32)
        ((uint32_t *)p)[i] = (uint32_t)v;
    else if (f->storage_bits == 16)
        ((uint16_t *)p)[i] = (uint16_t)v;
    else
        ((uint8_t *)p)[i] = (uint8_t)v;
}

uint64_t
tst_get(const void *p, const sf_format *f, size_t i)
{
    if (f->storage_bits == 32)
        return ((const uint32_t *)p)[i];
    if (f->storage_bits == 16)
        return ((const uint16_t *)p)[i];
    return ((const uint8_t *)p)[i];
}

/* pathcheck.h -- what the tests of the fast and vector paths share: the
   reference environment (an event sink that ignores every event, so
   every fast path steps aside), the environments and modes they run
   under, the generic operations by number, the paths this CPU runs, and
   operands that reach ties and carries */
#ifndef BF16EMU_TESTS_PATHCHECK_H
#define BF16EMU_TESTS_PATHCHECK_H

#include <stdint.h>

#include "softfloat/softfloat.h"
#include "tests/support/support.h"

/* A sink that ignores every event.  A sink changes no result and no
   flag (events only report), and every fast path and vector path refuses
   to run while one is set, so an environment with it is the reference. */
extern const sf_event_sink tst_quiet;

/* The environments: the presets (IEEE, x86, AVX512-BF16, NVIDIA, Arm
   BFDOT), and IEEE with saturation, with FTZ and DAZ, and with tininess
   before rounding. */
#define TST_N_ENVS 8
sf_env tst_env_at(int i);

/* Every mode, SF_SR last. */
#define TST_N_MODES 7
extern const sf_round tst_modes[TST_N_MODES];

/* The arithmetic operations by number. */
enum
{
    TST_OP_ADD,
    TST_OP_SUB,
    TST_OP_MUL,
    TST_OP_FMA,
    TST_N_OPS
};
extern const char *const tst_op_names[TST_N_OPS];

/* sf_add, sf_sub, sf_mul or sf_fma (C only for TST_OP_FMA). */
uint64_t tst_generic_op(const sf_format *f, int op, uint64_t a, uint64_t b,
                        uint64_t c, sf_round rm, sf_env *env);

/* The paths this CPU runs, SF_ISA_SCALAR first, into PATHS; returns how
   many. */
int tst_find_paths(sf_isa paths[SF_N_ISA]);

/* A fraction of format F: random, or one of the patterns that reach ties
   and carries (0, 1, all ones, the top bit, the top bit plus one, all
   ones but the last). */
uint64_t tst_rand_frac(const sf_format *f, tst_rng *rng);

/* Element I of an array of F's storage width (1, 2 or 4 bytes). */
void tst_put(void *p, const sf_format *f, size_t i, uint64_t v);
uint64_t tst_get(const void *p, const sf_format *f, size_t i);

#endif

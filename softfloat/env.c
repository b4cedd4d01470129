/* env.c -- flags text, rounding-mode names, the SR counter-based generator */
#include <string.h>

#include "internal.h"

static const char *const round_names[SF_N_ROUND] = {
    "rne", "rtz", "rdn", "rup", "rna", "rod", "sr"};

const char *
sf_round_name(sf_round rm)
{
    return (unsigned)rm < SF_N_ROUND ? round_names[rm] : "?";
}

int
sf_round_by_name(const char *name)
{
    for (int i = 0; i < SF_N_ROUND; i++)
        if (name != NULL && strcmp(name, round_names[i]) == 0)
            return i;
    return -1;
}

char *
sf_flags_str(unsigned flags, char buf[6])
{
    buf[0] = (flags & SF_FLAG_INVALID) ? 'v' : '.';
    buf[1] = (flags & SF_FLAG_DIVZERO) ? 'i' : '.';
    buf[2] = (flags & SF_FLAG_OVERFLOW) ? 'o' : '.';
    buf[3] = (flags & SF_FLAG_UNDERFLOW) ? 'u' : '.';
    buf[4] = (flags & SF_FLAG_INEXACT) ? 'x' : '.';
    buf[5] = '\0';
    return buf;
}

uint64_t
sf_sr_random(uint64_t seed, uint64_t counter)
{
    /* z = seed + (counter + 1) * gamma, then the SplitMix64 finaliser: a
       bijection of z, so distinct counters give distinct draws. */
    uint64_t z = seed + (counter + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t
s_sr_draw(sf_env *env)
{
    return sf_sr_random(env->sr_seed, env->sr_counter++);
}

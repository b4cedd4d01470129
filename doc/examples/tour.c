/* tour -- a short tour of the softfloat API: one FP32 addition, one
   rounding to BF16, and what the rounding event says about it */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <softfloat.h>

static int n_bad;

static void
check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "tour: FAILED: %s\n", what);
        n_bad++;
    }
}

/* Prints BITS of format F as hex and as the shortest decimal that reads
   back to the same bits, and checks that it does. */
static void
show(const char *label, const sf_format *f, uint64_t bits)
{
    sf_env env = SF_ENV_IEEE;
    int digits = (int)(f->storage_bits / 4);
    char text[64];
    const char *end;

    sf_to_string(f, bits, SF_PRINT_SHORTEST, text, sizeof text);
    printf("%-10s %-4s 0x%0*" PRIX64 "%*s = %s\n", label, f->name, digits,
           bits, 8 - digits, "", text);
    check(sf_from_string(f, text, &end, SF_RNE, &env) == bits && *end == '\0',
          "the shortest decimal reads back");
}

/* The event sink: keeps a copy of the last rounding event. */
struct capture
{
    unsigned count;
    sf_event last;
};

static void
capture_event(void *user, const sf_event *ev)
{
    struct capture *c = user;
    c->count++;
    c->last = *ev;
}

int
main(void)
{
    sf_env env = SF_ENV_IEEE; /* flags clear, no FTZ/DAZ, no events */

    /* The paper's example: an FP32 accumulator plus a BF16 value, added
       in FP32 with round-to-nearest-even ... */
    sf_f32 acc = {0xC01A0E2E};
    sf_bf16 v = {0xC013};
    sf_f32 v32 = sf_bf16_to_f32(v, SF_RNE, &env); /* exact */
    sf_f32 sum = sf_f32_add(acc, v32, SF_RNE, &env);

    show("acc", &sf_format_f32, acc.bits);
    show("v", &sf_format_bf16, v.bits);
    show("acc + v", &sf_format_f32, sum.bits);
    check(v32.bits == 0xC0130000, "v converts exactly");
    check(sum.bits == 0xC0968717, "acc + v is 0xC0968717");
    check(env.flags == 0, "acc + v is exact");

    /* ... then rounded to BF16, with an event sink attached to watch that
       one rounding. */
    struct capture cap = {0};
    sf_event_sink sink = {capture_event, &cap};
    env.events = &sink;
    sf_bf16 out = sf_f32_to_bf16(sum, SF_RNE, &env);
    env.events = NULL;

    show("to bf16", &sf_format_bf16, out.bits);
    check(out.bits == 0xC097, "the BF16 result is 0xC097");

    /* What the rounding did: the last kept bit, the guard, round and
       sticky bits, the direction, and the signed error result - exact. */
    const sf_event *ev = &cap.last;
    char exact[64], flags[6];
    double ulps = sf_event_error_ulps(ev);

    sf_dyadic_to_string(&ev->error, exact, sizeof exact);
    printf("rounding   lsb %u guard %u round %u sticky %u tie %s dir %+d\n",
           ev->lsb, ev->guard, ev->round, ev->sticky, ev->tie ? "yes" : "no",
           ev->dir);
    printf("error      %.17g ulp (ulp = 2^%" PRId32 ") = %s\n", ulps,
           ev->ulp_exp, exact);
    printf("flags      %s\n", sf_flags_str(env.flags, flags));

    check(cap.count == 1, "one rounding event");
    check(ev->lsb == 0 && ev->guard == 1 && ev->round == 0 && ev->sticky == 1
              && !ev->tie,
          "lsb 0, guard 1, round 0, sticky 1, not a tie");
    check(ev->dir == 1, "rounded up in magnitude");
    /* result - exact = -30953 * 2^-21, and the ulp is 2^-5 */
    check(ev->ulp_exp == -5, "the ulp is 2^-5");
    check(ulps == -30953.0 / 65536.0, "the error is -30953/65536 ulp");
    check(strtod(exact, NULL) == -30953.0 / 2097152.0,
          "the exact error is -30953 * 2^-21");
    check(env.flags == SF_FLAG_INEXACT, "only inexact is raised");
    check(strcmp(flags, "....x") == 0, "the flags print as ....x");

    return n_bad == 0 ? 0 : 1;
}

/* gen.h -- generated attention inputs for attn, sweep and reproduce:
   Q and K with a chosen score structure (random, an attention sink, k
   repeated maxima) and V from a chosen value distribution, all BF16 and
   bitwise reproducible from a seed */
#ifndef BF16EMU_ANALYSIS_GEN_H
#define BF16EMU_ANALYSIS_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The score structure of Q and K. */
typedef enum
{
    GEN_NORMAL,   /* Q, K ~ N(0, qk_std) */
    GEN_SINK,     /* plus key 0 raised by `sink` in every row */
    GEN_REPEATED, /* `repeat` keys share the maximum score max_value, the
                     others lie gap_min .. gap_max below it */
    N_GENS
} gen_kind;

/* The distribution of V (each with the given mean and standard
   deviation). */
typedef enum
{
    GEN_V_NORMAL,
    GEN_V_UNIFORM,
    GEN_V_LAPLACE,
    GEN_V_STUDENT, /* Student's t with v_nu degrees of freedom, scaled */
    N_GEN_VDISTS
} gen_vdist;

typedef struct gen_params
{
    gen_kind kind;
    gen_vdist vdist;
    uint64_t seed;
    double qk_std;
    double v_mean, v_std;
    double v_shift; /* column c of V gets mean v_mean + v_shift (2c / (d -
                       1) - 1): a linear shift from -v_shift to +v_shift */
    unsigned v_nu;  /* Student's t: degrees of freedom, 3 .. 64 */
    double do_mean, do_std;
    double sink;
    uint64_t repeat;
    double max_value, gap_min, gap_max;
} gen_params;

/* "normal", "sink", "repeated-max"; NULL out of range. */
const char *gen_kind_name(gen_kind k);
/* "normal", "uniform", "laplace", "student-t"; NULL out of range. */
const char *gen_vdist_name(gen_vdist v);
/* The value of NAME, or -1. */
int gen_kind_parse(const char *name);
int gen_vdist_parse(const char *name);

/* The defaults: normal scores (qk_std 1), V ~ N(0, 1), dO ~ N(0, 1),
   sink 4, 2 repeated maxima at 3 with gaps 12 .. 30 (paper-notes T12),
   seed 1, nu 5. */
gen_params gen_params_default(void);

/* NULL when G is usable, else a static message naming the field. */
const char *gen_params_check(const gen_params *g, size_t nk);

/* Fills the inputs of head HH (the HH-th [N, d] slice of a [B H, N, d]
   tensor): Q [NQ, d], K and V [NK, d], DOUT [NQ, d] (may be NULL).  SCALE
   is the softmax scale the scores will be multiplied by (the sink and the
   repeated maxima are placed in scaled units).  Element i of Q, K, V and
   dO is a function of (seed, tensor, HH-th slice offset + i) only, so a
   head's inputs do not depend on how many heads are generated or in
   which order. */
void gen_head(const gen_params *g, float scale, size_t nq, size_t nk, size_t d,
              size_t hh, uint16_t *q, uint16_t *k, uint16_t *v,
              uint16_t *dout);

/* A well-mixed 64-bit value of (SEED, STREAM, INDEX, K): the generator's
   random source, also used to derive seeds. */
uint64_t gen_draw(uint64_t seed, unsigned stream, uint64_t index, uint64_t k);

#endif

/* point.h -- one point of a rounding-bias experiment: generated inputs,
   the reference flash attention with a policy, fix, ablations, exp model
   and accumulation model, and the signed errors of O and delta against a
   binary64 evaluation of the exact formula, optionally with each rounding
   stage left out in turn (stage attribution) */
#ifndef BF16EMU_ANALYSIS_POINT_H
#define BF16EMU_ANALYSIS_POINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bias.h"
#include "attention.h"
#include "gen.h"

/* Stages: the policy as configured (PT_BASE), then the same inputs with
   one rounding point left out (kept in FP32, or, for the accumulation,
   computed exactly and rounded once to FP32), then all of them left out
   together. */
enum
{
    PT_BASE,
    PT_P_CAST,  /* P~ kept FP32 (ablation fp32-p) */
    PT_PV_ACC,  /* P~V summed exactly (mma_pv = "exact") */
    PT_PV_CAST, /* O~ kept FP32 between blocks (fp32-pv) */
    PT_O_CAST,  /* O not rounded to BF16 at the end (fp32-ocast) */
    PT_ALL,     /* all four */
    PT_N_STAGES
};

/* "base", "p-cast", "pv-acc", "pv-cast", "o-cast", "all". */
const char *pt_stage_name(int stage);

typedef struct pt_spec
{
    gen_params gen;   /* gen.seed is the experiment's seed */
    size_t nq, nk, d; /* one head's shape */
    size_t heads;     /* heads per trial */
    bool causal;
    fa_policy policy;
    const fa_kernel *kernel; /* the description run (NULL: the policy's) */
    fa_fix fix;
    unsigned ablations;
    size_t br, bc;              /* 0: the policy's tiles */
    const fa_exp_model *exp;    /* NULL: cr */
    const fa_log_model *log;    /* the lg2 log model of a description
                                   that asks for one (fa2); NULL: cr */
    const sf_mma_model *mma_pv; /* NULL: the policy's */
    bool stages;                /* also run the stage variants */
    int isa;                    /* env.isa of the runs (sf_isa; speed
                                   only) */
} pt_spec;

typedef struct pt_stats
{
    /* per stage (only PT_BASE unless stages): the error of each O
       element in ulps of the base configuration's O format at the
       reference value, its absolute error, and the error of delta =
       rowsum(dO o O) of each row (absolute) */
    bias_cell o_ulp[PT_N_STAGES];
    bias_cell o_abs[PT_N_STAGES];
    bias_cell delta[PT_N_STAGES];
    /* the base stage's mean O error (ulps) and mean delta error of each
       head: the heads are independent, the rows of a head need not be
       (with repeated maxima they share the keys at the maximum), so the
       spread of these means gives an honest standard error */
    bias_cell o_head, delta_head;
    uint64_t rows;    /* rows with at least one visible key */
    uint64_t rows_p1; /* ... with an entry P~ == 1 (base) */
    uint64_t rows_p2; /* ... with two or more */
} pt_stats;

void pt_stats_init(pt_stats *st);
/* INTO += FROM (exact for the counts; the moments as bias_cell_merge). */
void pt_stats_merge(pt_stats *into, const pt_stats *from);

/* NULL when SPEC is usable, else a static message naming the field. */
const char *pt_spec_check(const pt_spec *spec);

/* The configuration of stage STAGE of SPEC (shape B = H = 1). */
fa_config pt_config(const pt_spec *spec, int stage);

/* Bytes pt_trial allocates at most. */
size_t pt_trial_bytes(const pt_spec *spec);

/* The seed of trial T: the inputs of a trial depend on (SPEC's seed, T)
   only, so points that differ in other parameters see the same random
   draws (common random numbers) and any trial can be run on its own. */
uint64_t pt_trial_seed(uint64_t seed, uint64_t trial);

/* Runs trial T of SPEC (all its heads, every stage asked for) and adds
   its errors to *OUT (which the caller initialised).  Returns 0, or -1
   with a static message in *WHY (configuration refused, out of
   memory). */
int pt_trial(const pt_spec *spec, uint64_t trial, pt_stats *out,
             const char **why);

/* The binary64 reference of one head: O_REF [NQ, d] = softmax(scale Q
   K^T) V with the causal mask of attention.h (rows without a visible key
   are NaN), everything in binary64 (the scores are exact unless their
   BF16 products span more than 53 bits).  Its relative error is a few
   hundred units of 2^-53 at most, far below the FP32 and BF16 roundings
   studied; WORK holds NK doubles. */
void pt_reference(size_t nq, size_t nk, size_t d, bool causal, double scale,
                  const uint16_t *q, const uint16_t *k, const uint16_t *v,
                  double *work, double *o_ref);

#endif

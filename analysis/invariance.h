/* invariance.h -- "will my output change?": one attention call under a
   set of GPU launches (batch sizes, multiprocessor counts, backends,
   prefill or decode), each resolved to what decides its bits (the
   description run, its split count, the gemv kernel of a decode), the
   launches that share all of those computed once, and the outputs
   grouped into classes of bit-identical results with the rule that
   separates each pair of classes.

   The steps, for a caller that owns the threads and the printing:
   iv_resolve each launch into a key; iv_key_equal finds the distinct
   keys; iv_compute each distinct key on each kept head (independent:
   any order, any threads); iv_classes groups the keys' outputs;
   iv_compare and iv_rule describe each pair of classes; iv_batch_bound
   states a batch size from which a backend's output no longer moves.
   iv_grid does the bookkeeping of those steps for a space of launches
   (iv_space): the launches in a fixed order, their keys and runs, room
   for the outputs, the classes and the deltas between launches. */
#ifndef BF16EMU_ANALYSIS_INVARIANCE_H
#define BF16EMU_ANALYSIS_INVARIANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "attn_mask.h"
#include "launch.h"
#include "sdpa_dispatch_pt211_h200.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A backend of the comparison: one description for every launch
   (FlashAttention-2 as PyTorch's flash backend, cuDNN, a user's file),
   or PyTorch 2.11's own choice per launch ("sdpa"). */
typedef struct iv_backend
{
    const char *name;     /* as the user named it */
    bool sdpa;            /* the choice of sdpa_choose_pt211_h200 */
    const fa_config *cfg; /* not sdpa: the configuration of one head */
} iv_backend;

/* The call: the kept heads of one batch entry, and the launch around it.
   Every configuration (the backends', and sdpa_cfg's) is of one head
   (batch 1, heads 1, NQ, NK, D), with its models, scale, causal mask and
   input format set as for a plain run; the launch fields (splits,
   launch_bh, sms) are set here. */
typedef struct iv_problem
{
    size_t heads, kv_heads;               /* kept heads: query, key/value */
    size_t launch_heads, launch_kv_heads; /* the launch's (0: the kept) */
    size_t nq, nk, d;
    bool f16;                    /* FP16 inputs (else BF16) */
    bool causal;                 /* is_causal (bottom-right where Nq < Nk) */
    const uint16_t *q, *k, *v;   /* [heads, nq, d], [kv_heads, nk, d] */
    /* With BACKWARD, dO [heads, nq, d]: each launch also runs the
       backward (the deterministic kernels: FA2's dQ buffers by the
       launch), and its dQ, dK, dV join O and LSE in the output. */
    bool backward;
    const uint16_t *dout;
    /* MASK: SDPA's attn_mask bound to the kept heads (am_bind; NULL: no
       mask) and MASK_KIND what PyTorch's dispatch is given (SDPA_MASK_BOOL
       or SDPA_MASK_FLOAT).  A masked call is predicted as one call (not
       as decode steps), with descriptions that take a mask (the
       library's check). */
    const am_mask *mask;
    sdpa_mask mask_kind;
    size_t nbackends;
    const iv_backend *backends;
    /* The configurations of the descriptions sdpa may pick, indexed by
       sdpa_backend (math, flash, efficient, cudnn); NULL where not
       loaded (a launch that picks it is refused). */
    const fa_config *sdpa_cfg[4];
} iv_problem;

/* One launch to compare. */
typedef struct iv_launch
{
    size_t batch;  /* B of the launch */
    unsigned sms;  /* multiprocessors; 0: 132 */
    size_t backend; /* index into the problem's backends */
    bool decode;   /* each row as a decode step: one query row over the
                      keys up to its causal bound */
    size_t heads;  /* the launch's query heads (its KV heads by the call's
                      group size); 0: the problem's launch heads */
} iv_launch;

/* What a row of a launch runs: its split count and, for one query row,
   the gemv row of a description that has them. */
typedef struct iv_step
{
    const fa_config *cfg; /* the description (sdpa may pick another per
                             decode step) */
    const char *backend;
    size_t splits;
    const fa_gemv_row *gemv;
} iv_step;

/* A launch resolved: everything that decides its bits.  Two launches
   with equal keys give the same bits by construction. */
typedef struct iv_key
{
    const fa_config *cfg; /* the description's configuration (of the
                             first step) */
    const char *backend;  /* the backend that runs: "flash", "cudnn",
                             "efficient", "math", or the backend's name;
                             "mixed" when decode steps differ */
    const char *variant;  /* sdpa: the kernel PyTorch picks; else "" */
    const char *split_rule; /* the rule of the (first) split count */
    bool decode;
    size_t nsteps;   /* 1 (prefill), or Nq (decode) */
    iv_step *steps;  /* owned */
    size_t launch_bh; /* B x H of the launch */
    size_t dq_buffers; /* the backward's dQ buffers (0: no backward) */
    char variant_buf[96];
} iv_key;

/* Resolves launch L of P into *K (zeroed first; iv_key_free frees it).
   Returns 0; or -1 with the reason in WHY (N bytes) when the launch
   cannot be predicted: sdpa runs no backend or one with no configuration
   here (sdpa may pick a different backend for each decode step), cuDNN's decode grid on other than 132 multiprocessors, a decode
   of a description with gemv rows (the math backend's cuBLAS kernels)
   outside its measured rows, decode steps of a call that is not causal,
   a backward of decode steps or of grouped heads, decode steps of a
   masked call, a mask on a description that takes none, out of
   memory. */
int iv_resolve(const iv_problem *p, const iv_launch *l, iv_key *k, char *why,
               size_t n);

void iv_key_free(iv_key *k);

/* Whether A and B decide the same bits (the same configuration, mode and
   steps). */
bool iv_key_equal(const iv_key *a, const iv_key *b);

/* The output format of O under K (BF16 or FP16). */
const sf_format *iv_output_format(const iv_key *k);

/* Where the outputs of one kept query head lie in a run's output (all
   in words; iv_layout): O [nq, d] at 0, LSE [nq], then with a backward
   dQ [nq, d], dK and dV [nk, d]; HEAD words per head. */
typedef struct iv_layout
{
    size_t o, lse, dq, dk, dv, head;
} iv_layout;

iv_layout iv_output_layout(const iv_problem *p);

/* The outputs of kept query head H under K into OUT (the head's HEAD
   words of iv_output_layout), as fa_forward and fa_backward write them
   (bits of each output's format, FP32 patterns).  Returns 0, or -1 when
   the library refuses the configuration (WHY, N bytes, says why) or runs
   out of memory. */
int iv_compute(const iv_problem *p, const iv_key *k, size_t h, uint32_t *out,
               char *why, size_t n);

/* Groups N outputs of LEN words each (OUTS[i]) into classes of
   bit-identical ones, numbered in order of first appearance, into
   CLASS_OF[i]; returns the number of classes. */
size_t iv_classes(size_t n, const uint32_t *const *outs, size_t len,
                  size_t *class_of);

/* How two outputs differ. */
typedef struct iv_delta
{
    size_t differ;   /* elements whose bits differ */
    uint64_t max_ulps; /* the largest distance in units in the last place
                          (steps on the format's grid); UINT64_MAX for
                          a NaN against a number */
} iv_delta;

/* Compares N elements of A and B: FP32 bit patterns of values on FMT's
   grid, as fa_forward writes them (FMT: the output format, or FP32 for
   the LSE); the distance is counted on FMT's grid, -0 and +0 one point,
   two NaNs 0 apart. */
iv_delta iv_compare(const sf_format *fmt, const uint32_t *a,
                    const uint32_t *b, size_t n);

/* X, FP32 bits of a value on FMT's grid, as FMT's bit pattern (exact):
   what a GPU dump stores of an output. */
uint32_t iv_format_bits(const sf_format *fmt, uint32_t x);

/* What separates keys A and B, as a phrase into BUF (N bytes): the
   backend, the decode mode, the split count with its rule, the gemv
   kernel; "nothing in the launch rules" when they are equal. */
void iv_rule(const iv_key *a, const iv_key *b, char *buf, size_t n);

/* For the launches of one backend at one multiprocessor count and mode
   (N of them, batch sizes BATCH[i] ascending, classes CLASS_OF[i]): the
   smallest batch size from which every later launch is in one class,
   or 0 when only the largest batch size is (no bound shown). */
size_t iv_batch_bound(size_t n, const size_t *batch, const size_t *class_of);

/* The launches to compare: every mode asked (prefill, then decode), and
   within it every backend, setting (a multiprocessor count with a head
   count of the launch, head counts varying fastest) and batch size, in
   that order.  The arrays are the caller's. */
typedef struct iv_space
{
    bool prefill, decode;
    size_t nbatch;
    const size_t *batch;  /* ascending */
    size_t nsms;
    const unsigned *sms;  /* 0: 132 */
    size_t nheads;        /* 0: the problem's launch heads alone */
    const size_t *heads;  /* the launch's query heads, each a multiple of
                             the call's group size, at least its heads */
} iv_space;

/* The settings of SP: nsms x nheads (nheads 0 counting as one). */
size_t iv_space_settings(const iv_space *sp);

/* Setting S of SP: its multiprocessor count (0: 132) into *SMS and its
   launch heads (0: the problem's) into *HEADS. */
void iv_space_setting(const iv_space *sp, size_t s, unsigned *sms,
                      size_t *heads);

/* Whether every launch of backend B of P in SP resolves (iv_resolve);
   else false with the first reason in WHY (N bytes). */
bool iv_backend_predicted(const iv_problem *p, const iv_space *sp, size_t b,
                          char *why, size_t n);

/* A backend left out by iv_prune_backends, and why. */
typedef struct iv_skip
{
    const char *name; /* the backend's name (BE[i].name) */
    char why[512];
} iv_skip;

/* Leaves out of BE (P's backends, P->nbackends of them, the array P
   points to) those with a launch of SP that does not resolve, keeping
   the others in order at the front of BE; each one left out goes to
   SKIP[*NSKIP] (room for P->nbackends), *NSKIP counted up.  Sets and
   returns P->nbackends, the number kept. */
size_t iv_prune_backends(iv_problem *p, iv_backend *be, const iv_space *sp,
                         iv_skip *skip, size_t *nskip);

/* The launch grid of one problem: the launches of a space (launch I of
   iv_grid_at's order), each resolved, the distinct keys ("runs", each
   computed once), the runs' outputs and their classes.  Everything here
   is owned by the grid (iv_grid_free) but P, and SP's arrays, which must
   outlive it. */
typedef struct iv_grid
{
    const iv_problem *p;
    iv_space sp;
    size_t nl;        /* launches */
    iv_launch *l;     /* [nl] */
    iv_key *key;      /* [nl], launch I's resolution */
    size_t *run_of;   /* [nl], launch -> run */
    size_t *runs;     /* [nruns], run -> its first launch */
    size_t nruns;
    iv_layout y;      /* one head's outputs within a run's */
    size_t out_len;   /* words of a run's output: heads x y.head */
    uint32_t **out;   /* [nruns][out_len], the caller's iv_compute fills */
    size_t *cls_run;  /* [nruns], run -> class (iv_grid_classify) */
    size_t ncls;
} iv_grid;

/* Builds G for P over SP: the launches, their keys, the runs, and room
   for the outputs (uninitialised; fill run R's head H at
   G->out[R] + H * G->y.head with iv_compute of G->key[G->runs[R]]).
   Returns 0; or -1 with the reason in WHY (N bytes): a launch that does
   not resolve ("NAME at batch B, S SMs (decode): the reason"), or out
   of memory.  G is to be freed with iv_grid_free either way. */
int iv_grid_init(iv_grid *g, const iv_problem *p, const iv_space *sp,
                 char *why, size_t n);

void iv_grid_free(iv_grid *g);

/* Groups the runs' outputs (filled) into classes: G->cls_run, G->ncls
   (iv_classes). */
void iv_grid_classify(iv_grid *g);

/* The index of the launch of mode DECODE (0 prefill, 1 decode steps),
   backend B, setting S (iv_space_setting) and batch size index J; the
   mode must be among SP's. */
size_t iv_grid_at(const iv_grid *g, int decode, size_t b, size_t s,
                  size_t j);

/* The class of launch I's output (after iv_grid_classify). */
size_t iv_grid_class(const iv_grid *g, size_t i);

/* The delta of O and of LSE between the outputs of launches I and J,
   over every head (O on launch I's output format, LSE on FP32's). */
void iv_grid_delta(const iv_grid *g, size_t i, size_t j, iv_delta *o,
                   iv_delta *lse);

/* The delta of dQ, dK and dV together between launches I and J (with a
   backward; on launch I's dQ format). */
iv_delta iv_grid_delta_bwd(const iv_grid *g, size_t i, size_t j);

/* Classes renumbered in order of first appearance: IN (N of them, any
   numbers) into OUT (N; 0, then each new class one more), so that two
   vectors partition their positions alike exactly when their canonical
   forms are equal.  N at most IV_OBS_MAX. */
void iv_canonical(const size_t *in, size_t n, size_t *out);

/* The most classes a dump records of one backend: one per batch size of
   the call (at most IV_OBS_MAX / 2 batch sizes), then one per batch
   size of its decode steps. */
#define IV_OBS_MAX 128

/* What a dump recorded of one backend on the GPU, read by the caller
   from the dump (any numbering of the classes). */
typedef struct iv_observed
{
    const char *name; /* the dump's name: flash, cudnn, default, ... (the
                         caller's) */
    bool refused;     /* the GPU refused the call */
    size_t n;         /* classes: one per batch size, then with DECODE one
                         per batch size of the decode steps */
    size_t classes[IV_OBS_MAX];
    bool decode;      /* the dump ran decode steps too */
    bool bwd;         /* the dump ran the backward: bwd_classes, one per
                         batch size */
    bool bwd_repeat;  /* ... and it repeated itself at every batch size */
    size_t bwd_classes[IV_OBS_MAX / 2];
} iv_observed;

/* One backend's recorded classes against the grid's, filled in steps:
   iv_observed_check, then iv_observed_output for each of the GPU's
   classes and iv_observed_bwd_output for each backward class. */
typedef struct iv_obs_result
{
    bool checked;         /* compared; else NOTE says why not */
    bool partition_equal; /* the same partition of the batch sizes */
    /* the GPU's classes in order of first appearance: the class number
       and a launch of the grid that the GPU ran in it */
    size_t nclasses;
    size_t cls[IV_OBS_MAX], launch[IV_OBS_MAX];
    size_t compared, differ; /* elements of the stored class outputs */
    size_t class_differ[IV_OBS_MAX]; /* per GPU class number */
    bool bwd_checked, bwd_partition_equal;
    size_t nbwd; /* the backward's classes, as the forward's */
    size_t bwd_cls[IV_OBS_MAX / 2], bwd_launch[IV_OBS_MAX / 2];
    size_t bwd_compared, bwd_differ;
    const char *bwd_note; /* why the backward is not compared, or NULL */
    char note[160];
} iv_obs_result;

/* The backend of G's problem that a dump's NAME stands for ("default"
   for sdpa, "flash" for fa2), or -1. */
long iv_grid_backend(const iv_grid *g, const char *name);

/* Compares the classes OB recorded with G's (classified), into *R
   (zeroed first): not checked, with the reason in R->note, when the GPU
   refused the call, when the backend is among SKIP (NSKIP backends left
   out by iv_prune_backends), or when G does not hold its launches (one
   multiprocessor count, prefill, decode where the dump has it);
   otherwise the partitions compared and the GPU's classes listed for
   iv_observed_output, and where both ran the backward (and the GPU's
   repeated itself, else R->bwd_note), its partition too (the prefill
   launches' dQ, dK and dV) and its classes for iv_observed_bwd_output. */
void iv_observed_check(const iv_grid *g, const iv_observed *ob,
                       const iv_skip *skip, size_t nskip, iv_obs_result *r);

/* Adds to R's counts the comparison of the stored O of the GPU's K-th
   class (R->cls[K]): STORED, the output format's bit patterns, [heads,
   ROWS, d] with ROWS <= nq the first rows of each head, against the O
   of launch R->launch[K] in G (outputs filled). */
void iv_observed_output(const iv_grid *g, size_t k, const uint16_t *stored,
                        size_t rows, iv_obs_result *r);

/* The same for the backward's K-th class: WHICH ("dq", "dk" or "dv"),
   STORED [heads, nq or nk, d] in its format, against launch
   R->bwd_launch[K]'s into R->bwd_compared and R->bwd_differ. */
void iv_observed_bwd_output(const iv_grid *g, size_t k, const char *which,
                            const uint16_t *stored, iv_obs_result *r);

#ifdef __cplusplus
}
#endif

#endif

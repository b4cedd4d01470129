/* dump_manifest.h -- the settings of one attention call that a GPU dump's
   manifest gives: mask, scale, shape, backend, split counts */
#ifndef BF16EMU_ANALYSIS_DUMP_MANIFEST_H
#define BF16EMU_ANALYSIS_DUMP_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "tensor.h"
#include "user_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A dump (a .safetensors file) carries its manifest as the JSON object of
 * its metadata entry "manifest" (experiments/gpu/dump_sdpa.py,
 * capture.py, trim_dump.py).  The fields read here, each optional:
 *
 *   "causal": true | false
 *   "causal_alignment": "top-left ..." | "bottom-right ..." | null
 *   "launch_shape": {"batch": B, "heads": H}    integers 1 .. 2^31; read
 *                                               when both are given
 *   "fix": "none" | "beta" | "beta-v2" | "eps" | "always"
 *   "backend": "flash" | "cudnn" | "efficient" | "math" | "default" | ...
 *   "rowsum": "FMUL then FADD ..." | "FFMA ..."
 *   "scale": a number, or a string such as "1/sqrt(d) (PyTorch default)"
 *   "splits": an integer 1 .. 128, or null
 *   "dq_buffers": an integer 1 .. 65536, or null
 *   "shape": [B, H, N, d] (or [B, N, H, d] under "layout": "bnhd"), or
 *            {"batch": B, "heads": H, "nq": Nq, "nk": Nk, "d": d}
 *   "heads_kept" | "heads_from": [h0, h1, ...]  (one of the two)
 *   "batch_from": b, or [b0, b1, ...]
 *   "layout": "bhnd" | "bnhd"
 *   "enable_gqa": true | false
 *   "attn_mask": anything; null or false when there is none
 *   "softcap": null, false, 0 or a positive number (FlexAttention's
 *              tanh soft-cap)
 *   "mask_mod": null, or a string naming FlexAttention's mask_mod
 *               ("causal", "window", "document", ...)
 *   "delta_xblock": null or a power of two (capture.py's flex calls)
 *   "kernel_options": {"BLOCK_M": m, "BLOCK_N": n} (flex_attention's;
 *              other keys ignored)
 *   "kernels": {"backward": [{"name": ..., "grid": [x, y, z]}, ...],
 *               "forward": [{"name", "grid", "block"}, ...]}
 *              the kernels a capture saw run (other entries ignored)
 *
 * Integers may be written as any JSON number of integral value ("64.0").
 * "launch_shape", "backend" and "rowsum" of another JSON type are
 * ignored.  Every other field is ignored, except the settings that change
 * the result and that the emulator does not model (dump_unmodelled_what,
 * analysis/dump_inputs.h): set, they are refused by name; absent, null,
 * false (and a dropout_p of 0) are accepted.  inputs_gen and outputs_kept
 * are read by analysis/dump_inputs.h and analysis/dump_outputs.h.  A
 * field's value nests at most DUMP_MANIFEST_MAX_LEVELS lists and objects
 * deep (a scalar is one level; the members of an object "shape" or
 * "launch_shape" are counted from 1).
 */

#define DUMP_MANIFEST_MAX_HEADS 64
#define DUMP_MANIFEST_MAX_LEVELS 64

/* What a FlexAttention manifest records of its launch (0: absent). */
typedef struct
{
    /* "kernels": {"backward": [{"name", "grid"}, ...]} (flex_dump.py,
       capture.py): the programs (grid x) of the delta kernel (a name
       holding "per_fused_flex_attention_backward") */
    uint64_t delta_programs;
    /* "kernel_options": BLOCK_M and BLOCK_N as the call pinned them (the
       forward's tiles) */
    uint64_t block_m, block_n;
    /* "delta_xblock": the delta kernel's rows per program as a capture
       worked it out */
    uint64_t delta_xblock;
    /* "kernels": {"forward": [{"name", "grid", "block"}, ...]}: the
       programs (the grid's product) and threads (the block's) of
       flex_decoding's persistent merge kernels, of M and L (a name
       holding "per_fused_flex_attention_mul") and of O (another
       "per_fused_flex_attention"); with no such name, two merge kernels
       are M and L's, then O's, in launch order; 0: not recorded */
    uint64_t merge_programs[2], merge_threads[2];
    /* "kernels": {"forward": [...]} lists kernels, none of them
       FlexAttention's Triton template (a name holding
       "tem_fused_flex_attention"): the call ran PyTorch's unfused
       implementation (torch.compile's fallback) */
    bool forward_unfused;
} dump_flex;

typedef struct
{
    bool causal_given, causal;           /* "causal" */
    bool align_given, top_left;          /* "causal_alignment", not null */
    uint64_t launch_batch, launch_heads; /* "launch_shape"; 0 0 unless
                                            both are given */
    bool fix_given;
    fa_fix_kind fix;         /* "fix" */
    char backend[16];        /* "backend" ("" when absent), cut
                                to 15 bytes */
    bool rowsum_separate;    /* "rowsum" starts "FMUL" */
    bool scale_text_given;   /* "scale" as a string: */
    char scale_text[256];    /* its text, cut to 255 bytes */
    bool scale_number_given; /* "scale" as a number: */
    double scale_number;     /* its value */
    size_t splits;           /* "splits" (0: absent or null) */
    size_t dq_buffers;       /* "dq_buffers" (0: absent or null) */
    bool shape_given;        /* "shape", as an object ... */
    uint64_t shape[5];       /* batch, heads, nq, nk, d */
    size_t n_shape_list;     /* ... or as a list: 4, and */
    uint64_t shape_list[4];  /* the list as written */
    const char *heads_key;   /* "heads_kept", "heads_from" or
                                NULL (absent) */
    size_t n_heads;
    uint64_t heads[DUMP_MANIFEST_MAX_HEADS]; /* the launch's index of each
                                                head the file holds */
    bool batch_from_given;
    size_t n_batch_from; /* 0: one number for every head */
    uint64_t batch_from[DUMP_MANIFEST_MAX_HEADS]; /* the launch's batch
                                                     of each head */
    bool layout_given;
    ut_layout layout; /* "layout" */
    int enable_gqa;   /* 1, 0, or -1 when absent */
    bool mask_given;  /* "attn_mask", not null or false */
    /* "mask_mod": FlexAttention's mask by name (flex_dump.py); "" when
       absent, null or "causal" (which "causal" states) */
    char mask_mod[32];
    double softcap; /* "softcap": FlexAttention's tanh soft-cap; 0 none */
    dump_flex flex; /* FlexAttention's launch settings */
} dump_manifest;

/* Reads the manifest TEXT (a JSON object) into *M, which it first sets
   to every field absent; PATH names the file in messages.  Errors, with
   *M then partly set: E_FORMAT "PATH: manifest: not a JSON object
   (expected {...})" when TEXT does not start with '{' (after blanks),
   "PATH: manifest: malformed JSON at byte N: ..." when it does not
   parse, and "PATH: manifest: FIELD: what was expected" for the first
   field (in the text's order) of the wrong type or range or nested too
   deeply; E_NOMEM. */
int dump_manifest_parse(const char *path, const char *text, dump_manifest *m,
                        tensor_error *err);

/* The FlexAttention launch (kernels, kernel_options, delta_xblock) of
   the JSON object TEXT (a capture's calls entry) into *F, the other
   fields ignored; errors as dump_manifest_parse's, under PATH. */
int dump_flex_parse(const char *path, const char *text, dump_flex *f,
                    tensor_error *err);

/* F applied to C: under a block-sparse description (flex) the pinned
   tiles; and where C has no delta_xblock, the manifest's, else the
   launch's LAUNCH_ROWS (B H Nq) over the delta kernel's recorded grid.
   Returns where delta_xblock came from ("the manifest's", "the
   manifest's kernels"), or NULL when F set none. */
const char *dump_flex_apply(const dump_flex *f, uint64_t launch_rows,
                            fa_config *c);

#ifdef __cplusplus
}
#endif

#endif

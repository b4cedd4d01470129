/* user_tensor.h -- a user's tensor file read as the engine takes it: the
   element type asked for, [B, H, N, d] order, and what was done */
#ifndef BF16EMU_ANALYSIS_USER_TENSOR_H
#define BF16EMU_ANALYSIS_USER_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One reader for the tensors users bring (PyTorch or NumPy dumps,
 * .safetensors or .npy), shared by the attn, diff and mma subcommands.
 * Nothing here guesses: a setting that changes bits is either in the file,
 * or the caller passes it (from an option), or the read fails with a
 * message that names the option to give.
 *
 * Element types.  The engine computes on BF16 or F16 (attention), or on
 * the formats of a matrix-unit model (mma).  A file may hold
 *   - the type asked for: read as stored;
 *   - another floating-point type (F32, F16, BF16, F64) whose every value
 *     is a value of the type asked for (what PyTorch's t.float().numpy()
 *     gives): converted exactly, only when the user asked for the type
 *     (ASKED); the first element that is not such a value is an error
 *     naming its index and bits;
 *   - bit patterns in integers of the same width (U16 or I16 for BF16 and
 *     F16, PyTorch's t.view(torch.int16); U8 or I8 for the FP8 types),
 *     or NumPy raw bytes ('V2'): the bits are kept, only when ASKED.
 * Anything else is an error (TENSOR_E_DTYPE) whose message says which
 * option would read the file (DTYPE_OPT, e.g. "--dtype", followed by the
 * type's name).
 *
 * Layouts.  Attention tensors are [B, H, N, d] (BHND, what the engine and
 * PyTorch's SDPA take) or [B, N, H, d] (BNHD, the layout before the
 * transpose in most models); without the batch dimension [H, N, d] or
 * [N, H, d]; [N, d] has no heads.  BNHD input is transposed to BHND.
 * The layout matters only when both the H and the N dimension exceed 1;
 * then it must be given or told from the shapes (ut_layout_tell).
 */

typedef enum
{
    UT_LAYOUT_UNSET = 0,
    UT_LAYOUT_BHND, /* [B, H, N, d], [H, N, d] */
    UT_LAYOUT_BNHD  /* [B, N, H, d], [N, H, d] */
} ut_layout;

/* "bhnd", "bnhd"; "unset" for UT_LAYOUT_UNSET. */
const char *ut_layout_name(ut_layout l);
/* Parses "bhnd" or "bnhd" (case-insensitive); false for anything else. */
bool ut_layout_parse(const char *s, ut_layout *out);

/* What the reader did, for reports. */
typedef struct
{
    tensor_dtype file_dtype; /* as stored; TENSOR_ANY for raw bytes */
    unsigned file_ndim;
    uint64_t file_shape[TENSOR_MAX_DIMS];
    bool converted;  /* values converted exactly to another type */
    bool relabelled; /* integer bit patterns read as a float type */
    bool transposed; /* BNHD read as BHND */
    bool rounded;    /* values rounded to another type (ut_round_to) */
    uint64_t changed; /* ut_round_to: the values the rounding changed */
    char how[160];   /* "F32 values read as BF16 (all exact)", "" when
                        nothing was done */
} ut_info;

/* Reads the tensor KEY (NULL: the only one) of PATH into *OUT (empty on
   entry; empty again on error) in the element type WANT, as described
   above.  WANT = TENSOR_ANY reads the file's type as stored (raw bytes are
   then an error).  ASKED: the user named WANT (conversions and bit
   patterns are allowed).  DTYPE_OPT: the option that names a type, for
   the messages (NULL: none is named).  INFO (may be NULL) is filled. */
int ut_read(const char *path, const char *key, tensor_dtype want, bool asked,
            const char *dtype_opt, tensor *out, ut_info *info,
            tensor_error *err);

/* Converts *T (read from WHAT, "FILE" or "FILE: KEY", for messages) to
   WANT as ut_read does; T is unchanged on error. */
int ut_as_dtype(tensor *t, const char *what, tensor_dtype want, bool asked,
                const char *dtype_opt, ut_info *info, tensor_error *err);

/* Rounds the values of *T (F32 or F64, read from WHAT) to WANT (BF16 or
   F16) to nearest, ties to even, as PyTorch's .to(torch.bfloat16) does:
   the way to give the engine inputs a user holds in wider floats (NumPy
   has no bfloat16).  *CHANGED (may be NULL) gets the number of values
   the rounding changed (a NaN counts when its bits change); INFO (may be
   NULL) says what was done.  Other dtypes: TENSOR_E_DTYPE, T unchanged;
   a tensor already of WANT is left as it is. */
int ut_round_to(tensor *t, const char *what, tensor_dtype want,
                ut_info *info, uint64_t *changed, tensor_error *err);

/* Whether the layout of T (2-, 3- or 4-D) matters: it has both an H and
   an N dimension above 1 (dimensions ndim-3 and ndim-2). */
bool ut_layout_matters(const tensor *t);

/* The layout that Q and K (same rank, 3 or 4) can only have, when their
   shapes tell it.  A reading is possible when K's heads divide Q's (Hkv =
   Hq, or grouped-query heads: Hq a multiple of Hkv); N is free.  When
   exactly one reading is possible, it is the layout.  UT_LAYOUT_UNSET when
   both are or neither: Q [1, 8, 64, d] with K [1, 2, 64, d] may be 8
   query heads over 2 KV heads or 64 heads of 8 queries over 2 keys, and
   no rule on shapes alone tells which (the caller asks for the layout,
   naming both readings). */
ut_layout ut_layout_tell(const tensor *q, const tensor *k);

/* The layout Q (3- or 4-D) can only have under a launch of HEADS query
   heads of NQ rows each (a dump's manifest): BHND when Q's dimension
   ndim-3 is at most HEADS and its dimension ndim-2 is NQ, BNHD the other
   way round.  UT_LAYOUT_UNSET when both readings fit or neither does,
   and for Q of fewer than 3 dimensions (then *NEITHER is left as it
   is); otherwise *NEITHER, unless NEITHER is NULL, says whether neither
   reading fits. */
ut_layout ut_layout_launch(const tensor *q, uint64_t heads, uint64_t nq,
                           bool *neither);

/* Rearranges T (2-, 3- or 4-D) from LAYOUT to BHND: a BNHD tensor is
   transposed; BHND and 2-D tensors are left as they are.  On error
   (out of memory) T is unchanged. */
int ut_to_bhnd(tensor *t, ut_layout layout, ut_info *info, tensor_error *err);

/* The index of element I (C order) of a tensor of shape SHAPE[0..NDIM)
   as "[i, j, k]" into BUF of N bytes; returns BUF. */
char *ut_index_str(char *buf, size_t n, unsigned ndim, const uint64_t *shape,
                   uint64_t i);

#ifdef __cplusplus
}
#endif

#endif

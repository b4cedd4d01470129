/* dump_inputs.h -- the attention inputs of a GPU dump: stored in the file,
   or regenerated from its manifest's "inputs_gen" (analysis/fixgen.h) */
#ifndef BF16EMU_ANALYSIS_DUMP_INPUTS_H
#define BF16EMU_ANALYSIS_DUMP_INPUTS_H

#include <stdbool.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A dump (a .safetensors file with a JSON "manifest" in its metadata) may
 * leave out its inputs q, k, v, do and describe them instead:
 *
 *   "inputs_gen": {
 *     "generator": "splitmix64-ih12",
 *     "seed": S,                        an integer, 0 .. 2^53
 *     "tensors": {
 *       "q": {"stream": 0, "dtype": "bfloat16" | "float16",
 *             "shape": [B, H, N, d], "mean": 0.0, "std": 1.0,
 *             "hash": "0x<16 hex digits>"},
 *       "k": ..., "v": ..., "do": ...
 *     }
 *   }
 *
 * shape is the whole tensor as the GPU saw it ([B, H, N, d], C order; the
 * element index of the generator is the position in it), mean and std
 * are numbers exactly representable with 24 significant bits, hash is the
 * fixgen hash of the whole tensor as the GPU computed on it.  When the
 * file holds fewer heads than the launch ("heads_from" or "heads_kept":
 * the launch's head of each head the file holds; "batch_from": the
 * launch's batch, one integer or one per head, else 0), the regenerated
 * tensor is cut the same way: [1, len(heads_from), N, d].
 *
 * A tensor entry may add the u transform of sink and repeated-maximum
 * inputs (analysis/fixgen.h):
 *
 *       "u": {"stream": 4, "std": 0.5, "scale": 4.0}     (mean must be 0)
 *       "u": {"stream": 4, "std": 0.5, "rows": [128]}
 *
 * u is [B, H, 1, d] of that stream (mean 0, that std, the tensor's
 * dtype); with scale each element's mean is scale u[b, h, c], with rows
 * those rows (each below N) of every (b, h) are u[b, h, :].  The hash is
 * that of the transformed tensor.
 *
 * q, k and v may instead add the mirror transform of mirrored KV blocks
 * (dump_sdpa.py --gen mirror; analysis/fixgen.h), applied to the tensor
 * as generated, each (b, h) on its own; its fields depend on the key:
 *
 *       q: "mirror": {"half": 32}
 *       k: "mirror": {"block": 128, "stride": 2, "half": 32,
 *                     "big": 256.0, "small": 0.000244140625}
 *       v: "mirror": {"block": 128, "stride": 2}
 *
 * block and stride are integers from 1 to N, half from 0 to d, big and
 * small numbers of at most 12 significant bits; a field another key
 * takes, or a missing one, is refused.  q's columns from half on become
 * +0; the target blocks of k and v (block n + stride of a source n:
 * n mod 2 stride < stride, both blocks of the same length) become copies
 * of their sources, k's columns from half on negated; then k's columns
 * from half on are multiplied by big in sources and targets, by small in
 * the other blocks, rounded once to the dtype.  u and mirror exclude
 * each other.
 */

/* Reads input KEY ("q", "k", "v" or "do") of the dump PATH into *OUT
   (empty, TENSOR_INIT; it stays empty on error): the tensor the file
   stores under KEY, else the one its manifest's inputs_gen describes,
   regenerated, checked against its hash and cut to the file's heads.
   WANT is checked as by safetensors_read (E_DTYPE).  Errors: E_KEY when
   the file neither stores nor describes KEY; E_FORMAT with "PATH:
   manifest: inputs_gen.FIELD: ..." when the description is malformed or
   the hash differs; the reader's errors otherwise.  Any other KEY is
   read as by safetensors_read. */
int dump_input_read(const char *path, const char *key, tensor_dtype want,
                    tensor *out, tensor_error *err);

/* Every tensor of the dump PATH into *F (empty, TENSOR_FILE_INIT), as
   safetensors_read_all with WANT reads them, followed by each of q, k, v,
   do that the manifest describes and the file does not store, as
   dump_input_read gives it (named by a static string).  On error *F is
   left empty; the errors are those of the two readers. */
int dump_read_all(const char *path, tensor_dtype want, tensor_file *f,
                  tensor_error *err);

/* Which of q, k, v, do (in that order) PATH's manifest describes in
   inputs_gen.tensors, into DESCRIBED[0 .. 4) (all false without
   inputs_gen).  Errors: the listing's; E_FORMAT when inputs_gen or its
   tensors is not an object.  Each description is checked only when it is
   read (dump_input_read). */
int dump_inputs_described(const char *path, bool described[4],
                          tensor_error *err);

/* Whether PATH's manifest describes any input (false also on an error). */
bool dump_inputs_generated(const char *path);

/* The manifest keys (and tensor names) of settings that change the
   result and that the emulator does not model yet: masks, biases,
   dropout, windows, score modifications.  dump_unmodelled_key gives the
   I-th key (NULL past the last); dump_unmodelled_what what KEY is ("an
   attention mask", ...), NULL when it is none of them.  A tool given one
   that is set refuses the call by name rather than compare without it. */
const char *dump_unmodelled_key(size_t i);
const char *dump_unmodelled_what(const char *key);

#ifdef __cplusplus
}
#endif

#endif

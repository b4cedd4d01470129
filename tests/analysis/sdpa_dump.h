/* sdpa_dump.h -- what the SDPA backend tests share: reading a dump's
   tensors and the ex2-sm90 exp model (the H200's ex2.approx.f32). */
#ifndef TESTS_ANALYSIS_SDPA_DUMP_H
#define TESTS_ANALYSIS_SDPA_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/ex2_table.h"
#include "analysis/tensor.h"
#include "attention/attention.h"

/* Tensor KEY of the safetensors file PATH as DT into T (an input the
   manifest's inputs_gen describes is regenerated: dump_input_read); a
   failed check (Check) naming the file, the key and why when it cannot
   be read. */
void read_t(const char *path, const char *key, tensor_dtype dt, tensor *t);

/* Tensors q, k and v of PATH as DT into Q, K and V, as read_t reads
   each; free_qkv frees the three. */
void read_qkv(const char *path, tensor_dtype dt, tensor *q, tensor *k,
              tensor *v);
void free_qkv(tensor *q, tensor *k, tensor *v);

/* Output KEY of the dump PATH (16-bit, DT) against the emulator's whole
   output EM (WHOLE patterns of DT): ->eq of the ->n elements the file
   stores are bit-equal (every element, or the rows its manifest's
   outputs_kept keeps), and ->hash_eq tells whether the hash of EM is the
   recorded hash of the GPU's whole tensor (for a tensor stored whole:
   whether every element is equal).  Prints the first differing element
   (row and column of COLS columns, hex) and, for a cut tensor, "NAME KEY:
   E/N of the kept elements equal; whole tensor (WHOLE): hash equal" (or
   "differs").  A failed check when the tensor cannot be read or does not
   fit WHOLE. */
typedef struct
{
    size_t eq, n;
    bool kept, hash_eq;
} out_cmp;
out_cmp cmp_out16(const char *name, const char *path, const char *key,
                  tensor_dtype dt, const uint16_t *em, size_t whole,
                  size_t cols);

/* The bits of element I of T. */
uint32_t u32_at(const tensor *t, size_t i);

typedef struct
{
    ax_ex2_table tab;
    fa_exp2_table rule;
    fa_exp_model model;
} ex2_model;

/* Loads the measured table (a failed check when it cannot); free with
   ax_ex2_table_free(&m->tab). */
void ex2_load(ex2_model *m);

#endif

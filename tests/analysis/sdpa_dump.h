/* sdpa_dump.h -- what the SDPA backend tests share: reading a dump's
   tensors and the ex2-sm90 exp model (the H200's ex2.approx.f32). */
#ifndef TESTS_ANALYSIS_SDPA_DUMP_H
#define TESTS_ANALYSIS_SDPA_DUMP_H

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

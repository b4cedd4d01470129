/* ex2_table.h -- the measured exp2 of the H200 (ex2.approx.f32) as tables */
#ifndef BF16EMU_ANALYSIS_EX2_TABLE_H
#define BF16EMU_ANALYSIS_EX2_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two tables read from the hardware on a grid of 2^-frac_bits
   (experiments/gpu/probes/ex2_probe.cu): neg[i] = ex2(-1 + i 2^-k) and
   pos[i] = ex2(i 2^-k), 0 <= i < 2^k, FP32 bit patterns. */
typedef struct ax_ex2_table
{
    unsigned frac_bits;
    size_t count; /* 2^frac_bits */
    uint32_t *neg;
    uint32_t *pos;
} ax_ex2_table;

/* The path of the model file ex2-sm90.bin.gz: GIVEN when not NULL and
   not empty (the caller's setting; the library reads no environment: the
   bf16emu tool, the tests and the benchmarks pass $BF16EMU_EX2_TABLE),
   else the source tree's analysis/data when it exists (running from a
   build tree), else the installation's data directory.  The result is
   GIVEN or a string constant. */
const char *ax_ex2_table_default_path(const char *given);

/* Reads and checks PATH (format in experiments/gpu/probes/pack_ex2_table.py:
   magic, version, grid bits, first entries, FNV-1a 64 hashes of both
   tables, then byte steps; gzip-compressed).  Returns 0, or -1 with a
   message "PATH: FIELD: what was expected" in ERR (ERRLEN bytes) and T
   left empty. */
int ax_ex2_table_load(const char *path, ax_ex2_table *t, char *err,
                      size_t errlen);

void ax_ex2_table_free(ax_ex2_table *t);

/* The H200's ex2.approx.f32 (FTZ false: "ex2-sm90") or ex2.approx.ftz.f32
   (FTZ true: "ex2-sm90-ftz") as an exp model over T's tables: TAB and
   MODEL are filled; T must outlive them.  Measured to agree on all 2^32
   inputs (doc/gpu-measurements.md); natural exp under the model is
   exp2(RN(x RN(log2 e))). */
void ax_ex2_model(const ax_ex2_table *t, bool ftz, fa_exp2_table *tab,
                  fa_exp_model *model);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_EX2_TABLE_H */

/* lg2_table.h -- the measured log2 of the H200 (lg2.approx.f32) as a table
   model */
#ifndef BF16EMU_ANALYSIS_LG2_TABLE_H
#define BF16EMU_ANALYSIS_LG2_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tables of experiments/gpu/probes/lg2_probe.cu (fa_lg2_table in
   attention.h says how the model uses them): base[i], the hardware's
   lg2 of 1 + i 2^-23 (i < 2^22) or of (1 + i 2^-23) / 2 (i >= 2^22), and
   the corrections: ncorr ascending indices with G in units of 2^-54, and
   their index (fa_lg2_table_index, built and checked on loading). */
typedef struct ax_lg2_table
{
    uint32_t *base; /* 2^23 entries */
    size_t ncorr;
    uint32_t *corr_i;
    int64_t *corr_g;
    fa_lg2_index *index; /* FA_LG2_INDEX_WORDS entries */
} ax_lg2_table;

/* The path of the model file lg2-sm90.bin.gz: GIVEN when not NULL and
   not empty (the caller's setting; the library reads no environment: the
   bf16emu tool, the tests and the benchmarks pass $BF16EMU_LG2_TABLE),
   else the source tree's analysis/data when it exists (running from a
   build tree), else the installation's data directory.  The result is
   GIVEN or a string constant. */
const char *ax_lg2_table_default_path(const char *given);

/* Reads and checks PATH, gzip-compressed:
     8 bytes  magic "BF16LG2\0"
     4 bytes  format version (1)
     4 bytes  mantissa bits (23)     4 bytes  correction scale bits (54)
     4 bytes  number of corrections N
     8 bytes  FNV-1a 64 of the base table (as uint32 LE bytes)
     8 bytes  FNV-1a 64 of the corrections (per entry: the index as 4,
              G as 8 LE bytes)
     4 bytes  base[0]
   then 2^23 - 1 varints (LEB128) of the zigzag-coded second differences
   of the base entries (as integers), then per correction a varint of the
   index step (the first from 0) and a zigzag varint of G minus the base
   entry in units of 2^-54 (truncated toward zero); all little-endian.
   Returns 0, or -1 with a message "PATH: FIELD: what was expected" in
   ERR (ERRLEN bytes) and T left empty. */
int ax_lg2_table_load(const char *path, ax_lg2_table *t, char *err,
                      size_t errlen);

void ax_lg2_table_free(ax_lg2_table *t);

/* The H200's lg2.approx.f32 (FTZ false: "lg2-sm90") or
   lg2.approx.ftz.f32 (FTZ true: "lg2-sm90-ftz") over T: TAB and MODEL
   are filled (MODEL's natural log is CUDA's __logf); T must outlive
   them.  Measured to agree on all 2^32 inputs of both instructions
   (doc/gpu-measurements.md). */
void ax_lg2_model(const ax_lg2_table *t, bool ftz, fa_lg2_table *tab,
                  fa_log_model *model);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_LG2_TABLE_H */

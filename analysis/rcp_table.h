/* rcp_table.h -- the measured reciprocal of the H200 (rcp.approx.f32) as
   a table */
#ifndef BF16EMU_ANALYSIS_RCP_TABLE_H
#define BF16EMU_ANALYSIS_RCP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The table read from the hardware (experiments/gpu/probes/rcp_probe.cu):
   delta[i] = rcp.approx.f32(x) - RN32(1 / x) in FP32 ulps, x = 1 +
   i 2^-23, 0 <= i < 2^23. */
typedef struct ax_rcp_table
{
    int8_t *delta;
} ax_rcp_table;

/* The path of the model file rcp-sm90.bin.gz: GIVEN when not NULL and
   not empty (the caller's setting; the library reads no environment: the
   bf16emu tool, the tests and the benchmarks pass $BF16EMU_RCP_TABLE),
   else the source tree's analysis/data when it exists (running from a
   build tree), else the installation's data directory.  The result is
   GIVEN or a string constant. */
const char *ax_rcp_table_default_path(const char *given);

/* Reads and checks PATH (gzip of the magic "BF16RCP1" and 2^23 bytes,
   each -1, 0 or 1; experiments/gpu/probes/pack_rcp_table.py).  Returns 0,
   or -1 with a message "PATH: what was expected" in ERR (ERRLEN bytes) and T
   left empty. */
int ax_rcp_table_load(const char *path, ax_rcp_table *t, char *err,
                      size_t errlen);

void ax_rcp_table_free(ax_rcp_table *t);

/* The H200's rcp.approx.f32 ("rcp-sm90") as a reciprocal model over T
   (T must outlive MODEL).  Measured on every significand (2^23 inputs in
   [1, 2)); other binades by the exponent's exact scaling, which the
   FP16 probe of doc/notes/gpu-crosscheck-log.md ("cuDNN model") confirms
   on 64 row sums in [16, 32). */
void ax_rcp_model(const ax_rcp_table *t, fa_rcp_model *model);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_RCP_TABLE_H */

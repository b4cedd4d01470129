/* opsuite.h -- the Check suite of a test of softfloat operations against
   the oracle: hand-written rows, then structured, random and exhaustive
   loops */
#ifndef BF16EMU_TESTS_OPSUITE_H
#define BF16EMU_TESTS_OPSUITE_H

#include <check.h>
#include <stddef.h>

#include "tests/support/opcheck.h"

/* One loop of the suite: RUN adds the cases of op OP to R; LABEL heads
   the summary line that opc_report_print writes afterwards. */
typedef struct
{
    const char *label;
    void (*run)(int op, opc_report *r);
} opc_part;

enum
{
    OPC_STRUCTURED,
    OPC_RANDOM,
    OPC_EXHAUSTIVE,
    OPC_N_PARTS
};

typedef struct
{
    const char *name; /* the suite's name */
    int op;           /* SF_OP_*, passed to every part */
    const opc_row *rows;
    size_t n_rows;
    /* indexed by OPC_STRUCTURED .. OPC_EXHAUSTIVE; a part whose run is
       NULL gets no tcase */
    opc_part parts[OPC_N_PARTS];
} opc_suite_def;

/* The suite of D, which must outlive the run: tcase "special" checks
   each row with opc_check_row (Check's default timeout), then tcases
   "structured", "random" and "exhaustive" (600 s each) run their part,
   print its report and assert that no case differs.  A program adds its
   own tcases after these.  One suite per program. */
Suite *opc_suite(const opc_suite_def *d);

/* The definition of the suite NAME of op OP with the rows of the array
   ROWS, the parts opc_std_structured and opc_std_random (labels "NAME
   structured", "NAME random") and LAST (label "NAME " LAST_LABEL) as the
   exhaustive part. */
#define OPC_STD_SUITE(nm, opcode, table, last_label, last)                  \
    {                                                                         \
        .name = nm, .op = opcode, .rows = table,                              \
        .n_rows = sizeof table / sizeof table[0],                             \
        .parts = {{nm " structured", opc_std_structured},                     \
                  {nm " random", opc_std_random},                             \
                  {nm " " last_label, last}}                                  \
    }

/* The formats every arithmetic op is tested in, structured and random:
   bf16, f16, f32, tf32. */
#define OPC_N_STD_FORMATS 4
extern const sf_format *const opc_std_formats[OPC_N_STD_FORMATS];
/* Random cases per op in F (before the multiplier): 10^6 in bf16 and
   f32, 2 * 10^5 in the others. */
uint64_t opc_std_random_count(const sf_format *f);

/* The usual parts.  Structured: opc_test_structured in each standard
   format (streams 100 + i), then with tininess before rounding in bf16
   and f32 (110, 111). */
void opc_std_structured(int op, opc_report *r);
/* Random: opc_std_random_count cases in each standard format (streams
   200 + i), then 2 * 10^5 with tininess before rounding in bf16 and f32
   (210, 211); all counts times tst_multiplier. */
void opc_std_random(int op, opc_report *r);
/* Every fp8 pair: e5m2 and e4m3 (streams 300, 301), saturating e4m3
   (302); the part fma runs, with random addends. */
void opc_fp8_pairs_core(int op, opc_report *r);
/* Every fp8 pair: opc_fp8_pairs_core, then saturating e5m2 (303) and
   tininess before rounding in e5m2 and e4m3 (304, 305). */
void opc_std_fp8_pairs(int op, opc_report *r);

#endif

/* exh_run.h -- the driver of the exhaustive programs: the reference is
   checked against MPFR on a sample, then the library against the
   reference on every input of every job in all six modes */
#ifndef BF16EMU_TESTS_EXH_RUN_H
#define BF16EMU_TESTS_EXH_RUN_H

#include <stdint.h>

#include "softfloat/softfloat.h"
#include "tests/support/oracle.h"

#ifdef _OPENMP
#define EXH_PRAGMA(x) _Pragma(#x)
#else
#define EXH_PRAGMA(x)
#endif

/* The most jobs (ops, or target formats) of one program. */
#define EXH_MAX_JOBS 8

/* One input in the six modes of ref_modes: the reference's bits and
   flags (want, fw) and the library's (got, fg). */
typedef struct
{
    uint64_t want[6], got[6];
    unsigned fw[6], fg[6];
} exh_results;

typedef struct
{
    const char *name;   /* the program's, heading its messages */
    const char *sample; /* what the cross-check covers, "2^20 <sample>" */
    const char *job_head, *input_head; /* heads of the table's columns */
    unsigned n_jobs;                   /* at most EXH_MAX_JOBS */
    const char *const *job_names;      /* in the table and progress lines */
    unsigned progress_every; /* leading operands between progress lines */
    /* The reference against MPFR on sample I (0 <= I < 2^20) with the
       calling thread's oracle O.  Prints each disagreement to stderr
       (under EXH_PRAGMA(omp critical)) and returns their number. */
    unsigned long (*cross_check)(oracle *o, uint64_t i);
    /* Fills *RES for input IN of job J: the leading operand (or the
       binary32 input's high half) is IN >> 16. */
    void (*run)(unsigned j, uint32_t in, exh_results *res);
    /* Prints one mismatch as a test vector on stdout. */
    void (*print)(unsigned j, uint32_t in, sf_round rm, uint64_t want,
                  unsigned fw, uint64_t got, unsigned fg);
} exh_program;

/* The whole program: ARGV[1] may give a STRIDE and ARGV[2] an OFFSET (for
   sampling and splitting a run across machines: only leading operands
   OFFSET, OFFSET + STRIDE, ... are checked).  Runs the cross-check on
   2^20 samples (stopping with status 2 if any disagrees), then every job
   on every input; prints the first mismatches of each job in input order,
   progress on stderr, and a table of inputs and mismatches per job and
   mode.  Returns 0 when everything matches, else 1. */
int exh_main(const exh_program *p, int argc, char **argv);

#endif

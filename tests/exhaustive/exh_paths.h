/* exh_paths.h -- the paths an exhaustive array program compares: every
   ISA the CPU runs */
#ifndef BF16EMU_TESTS_EXH_PATHS_H
#define BF16EMU_TESTS_EXH_PATHS_H

#include <stdio.h>

#include "softfloat/softfloat.h"

/* Fills PATHS (room for SF_N_ISA) with the ISAs this CPU supports, from
   SF_ISA_SCALAR up, prints "PROG: paths" and their names (no newline)
   and returns their number. */
static inline int
exh_paths(const char *prog, sf_isa *paths)
{
    int n = 0;

    for (int p = SF_ISA_SCALAR; p < SF_N_ISA; p++)
        if (sf_isa_supported((sf_isa)p))
            paths[n++] = (sf_isa)p;
    printf("%s: paths", prog);
    for (int p = 0; p < n; p++)
        printf(" %s", sf_isa_name(paths[p]));
    return n;
}

#endif

/* cli_mpi.h -- the subcommands under mpirun: whether the tool runs as
   one of several ranks, MPI started and finished, and rank 0 speaking
   for all (the other ranks' stderr kept in a temporary file). */
#ifndef BF16EMU_EXPERIMENTS_CLI_MPI_H
#define BF16EMU_EXPERIMENTS_CLI_MPI_H

#include <stdbool.h>
#include <stdio.h>

typedef struct cli_mpi
{
    bool on;       /* under mpirun, MPI started */
    int rank, size; /* 0 and 1 when not */
    FILE *errlog;  /* ranks other than 0: their stderr, or NULL */
} cli_mpi;

/* Whether the process was started by mpirun (Open MPI's, PMIx or PMI
   environment); always false without MPI. */
bool cli_under_mpirun(void);

/* Under mpirun: MPI_Init, the rank and size, and the stderr of ranks
   other than 0 sent to a temporary file.  Otherwise M is rank 0 of 1. */
void cli_mpi_begin(cli_mpi *m);

/* MPI_Finalize (when begun) and the temporary file closed. */
void cli_mpi_end(cli_mpi *m);

#endif

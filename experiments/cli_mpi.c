/* cli_mpi.c -- the subcommands under mpirun (cli_mpi.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include "experiments/cli_mpi.h"

bool
cli_under_mpirun(void)
{
#ifdef HAVE_MPI
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL
           || getenv("PMIX_RANK") != NULL || getenv("PMI_RANK") != NULL;
#else
    return false;
#endif
}

void
cli_mpi_begin(cli_mpi *m)
{
    memset(m, 0, sizeof *m);
    m->size = 1;
#ifdef HAVE_MPI
    if (!cli_under_mpirun())
        return;
    m->on = true;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    if (m->rank > 0) {
        fflush(stderr);
        m->errlog = tmpfile();
        if (m->errlog != NULL && dup2(fileno(m->errlog), 2) < 0) {
            fclose(m->errlog);
            m->errlog = NULL;
        }
    }
#endif
}

void
cli_mpi_end(cli_mpi *m)
{
#ifdef HAVE_MPI
    if (m->on)
        MPI_Finalize();
#endif
    if (m->errlog != NULL)
        fclose(m->errlog);
    m->errlog = NULL;
    m->on = false;
}

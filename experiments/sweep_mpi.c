/* sweep_mpi.c -- bf16emu sweep under mpirun: the ranks share the points,
   rank 0 writes the output of a single-process run */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/sweep_local.h"

#ifdef HAVE_MPI
/*----------------------------------------------------------------------------
 * Under mpirun: rank r of n computes the points with index mod n == r
 * (each with its threads); rank 0 gathers the rows and writes the output
 * of a single-process run, byte for byte.  No resume (the rows are
 * written at the end) and no --shard (the ranks are the shards).
 *--------------------------------------------------------------------------*/
/* Rank 0's checks of the options and of the output directory. */
static int
check_out(const sweep_ctx *x)
{
    char *csv_path = cli_path_join(x->out_dir, "sweep.csv");
    struct stat st;
    int rc = CLI_EXIT_OK;

    if (x->resume || x->shard_n != 1)
        rc = cli_error(CMD, "under mpirun the ranks share the points: "
                            "--resume and --shard are not available");
    else if (csv_path == NULL)
        rc = cli_error(CMD, "out of memory");
    else if (!sweep_out_dir_ok(CMD, x->out_dir, true))
        rc = CLI_EXIT_USAGE;
    else if (stat(csv_path, &st) == 0 && !x->force)
        rc = cli_error(CMD, "%s exists (--force replaces it)", csv_path);
    free(csv_path);
    return rc;
}

/* Rank 0's line before the run: the points, the ranks and the cost. */
static void
announce(const sweep_ctx *x, int size, uint64_t npoints)
{
    const sweep_grid *g = &x->grid;
    cli_buf c;

    cli_buf_init(&c);
    sweep_cost_text(&c, x, npoints);
    fprintf(stderr,
            "bf16emu sweep: %" PRIu64 " points on %d ranks, trials x "
            "heads %" PRIu64 " x %" PRIu64 " per point; %s\n",
            npoints, size, g->set[GS_TRIALS], g->set[GS_HEADS],
            c.failed ? "" : c.p);
    cli_buf_free(&c);
}

/* The rows of this rank's points (index mod SIZE == RANK) into ROWS. */
static int
compute_mine(const sweep_ctx *x, int rank, int size, uint64_t npoints,
             cli_buf *rows)
{
    uint64_t *todo = malloc((npoints / (uint64_t)size + 1) * sizeof *todo);
    uint64_t mine = 0;
    int rc = CLI_EXIT_OK, nt = sweep_thread_count(x);
    batch_work bw;
    size_t batch = sweep_batch_size(nt);

    if (todo == NULL)
        return cli_error(CMD, "out of memory");
    for (uint64_t p = (uint64_t)rank; p < npoints; p += (uint64_t)size)
        todo[mine++] = p;
    if (!sweep_batch_init(&bw, batch, x->grid.set[GS_TRIALS]))
        rc = cli_error(CMD, "out of memory");
    for (size_t b0 = 0; b0 < mine && rc == CLI_EXIT_OK; b0 += batch) {
        size_t nb = mine - b0 < batch ? mine - b0 : batch;
        rc = sweep_compute_batch(x, &bw, todo + b0, nb, nt, rows);
    }
    sweep_batch_free(&bw);
    if (rc == CLI_EXIT_OK && (rows->failed || rows->len > INT32_MAX))
        rc = cli_error(CMD, "rank %d: out of memory", rank);
    free(todo);
    return rc;
}

/* Every rank's rows on rank 0: ALL, rank i's COUNTS[i] bytes at
   DISPLS[i]. */
typedef struct
{
    long long *lens;
    int *counts, *displs;
    char *all;
} gathered;

/* Gathers the ROWS of every rank into GT on rank 0; the exit code, the
   same on every rank. */
static int
gather_rows(int rank, int size, const cli_buf *rows, gathered *gt)
{
    long long len = (long long)rows->len;
    int rc = CLI_EXIT_OK;

    if (rank == 0) {
        gt->lens = malloc((size_t)size * sizeof *gt->lens);
        gt->counts = malloc((size_t)size * sizeof *gt->counts);
        gt->displs = malloc((size_t)size * sizeof *gt->displs);
    }
    MPI_Gather(&len, 1, MPI_LONG_LONG, gt->lens, 1, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        long long total = 0;
        for (int i = 0; i < size; i++) {
            gt->counts[i] = (int)gt->lens[i];
            gt->displs[i] = (int)total;
            total += gt->lens[i];
        }
        gt->all = total < INT32_MAX ? malloc((size_t)total + 1) : NULL;
        if (gt->all == NULL)
            rc = cli_error(CMD, "the rows do not fit in memory on rank 0");
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != CLI_EXIT_OK)
        return rc;
    MPI_Gatherv(rows->p != NULL ? rows->p : "", (int)rows->len, MPI_CHAR,
                gt->all, gt->counts, gt->displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    return CLI_EXIT_OK;
}

/* The gathered rows in point order after OUT's header: point p is line
   p / SIZE of rank p mod SIZE's rows. */
static int
interleave(const gathered *gt, int size, uint64_t npoints, cli_buf *out)
{
    char **cur = malloc((size_t)size * sizeof *cur);
    int rc = CLI_EXIT_OK;

    if (cur == NULL)
        return cli_error(CMD, "out of memory");
    for (int i = 0; i < size; i++)
        cur[i] = gt->all + gt->displs[i];
    for (uint64_t p = 0; p < npoints; p++) {
        int r = (int)(p % (uint64_t)size);
        char *line = cur[r];
        char *nl =
            memchr(line, '\n',
                   (size_t)(gt->all + gt->displs[r] + gt->counts[r] - line));
        if (nl == NULL) {
            rc = cli_error(CMD, "rank %d sent too few rows", r);
            break;
        }
        cli_buf_put_mem(out, line, (size_t)(nl - line + 1));
        cur[r] = nl + 1;
    }
    free(cur);
    return rc;
}

/* Rank 0's output: sweep.csv, grid.txt, sweep-meta.txt, sweep.json and
   the plots, as a single-process run writes them. */
static int
write_out(const sweep_ctx *x, int size, uint64_t npoints, const gathered *gt)
{
    sweep_meta mt = sweep_ctx_meta(x, npoints);
    cli_buf out;
    int rc;

    cli_buf_init(&out);
    sweep_csv_header(&out, x->grid.set[GS_STAGES] != 0);
    rc = interleave(gt, size, npoints, &out);
    if (rc == CLI_EXIT_OK)
        rc = sweep_write_outputs(CMD, x->out_dir, &x->grid, x->text, &mt,
                                 &out, x->plot, x->quiet, x->json);
    if (rc == CLI_EXIT_OK && !x->quiet)
        fprintf(stderr,
                "bf16emu sweep: %" PRIu64 " points on %d ranks -> %s\n",
                npoints, size, x->out_dir);
    cli_buf_free(&out);
    return rc;
}

int
sweep_run_mpi(sweep_ctx *x)
{
    uint64_t npoints = grid_points(&x->grid);
    int rank, size, rc = CLI_EXIT_OK, all_rc;
    cli_buf rows;
    gathered gt = {NULL, NULL, NULL, NULL};

    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cli_buf_init(&rows);
    if (rank == 0)
        rc = check_out(x);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc == CLI_EXIT_OK) {
        if (rank == 0 && (x->progress == 1 || (x->progress < 0 && !x->quiet)))
            announce(x, size, npoints);
        rc = compute_mine(x, rank, size, npoints, &rows);
        /* the worst of the ranks' codes (CLI_EXIT_OK when all are) */
        MPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        rc = all_rc;
    }
    if (rc == CLI_EXIT_OK)
        rc = gather_rows(rank, size, &rows, &gt);
    if (rc == CLI_EXIT_OK) {
        if (rank == 0)
            rc = write_out(x, size, npoints, &gt);
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    free(gt.lens);
    free(gt.counts);
    free(gt.displs);
    free(gt.all);
    cli_buf_free(&rows);
    MPI_Finalize();
    return rc;
}
#endif

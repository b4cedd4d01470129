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
int
sweep_run_mpi(sweep_ctx *x)
{
    const sweep_grid *g = &x->grid;
    uint64_t npoints = grid_points(g), mine = 0;
    int rank, size, rc = CLI_EXIT_OK, nt = sweep_thread_count(x), all_rc;
    uint64_t *todo = NULL;
    cli_buf rows, head;
    long long len, *lens = NULL;
    int *counts = NULL, *displs = NULL;
    char *all = NULL;

    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cli_buf_init(&rows);
    cli_buf_init(&head);
    if (rank == 0) {
        char *csv_path = cli_path_join(x->out_dir, "sweep.csv");
        struct stat st;
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
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != CLI_EXIT_OK)
        goto out;
    if (rank == 0 && (x->progress == 1 || (x->progress < 0 && !x->quiet))) {
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

    todo = malloc((npoints / (uint64_t)size + 1) * sizeof *todo);
    if (todo == NULL) {
        rc = cli_error(CMD, "out of memory");
    } else {
        batch_work bw;
        size_t batch = sweep_batch_size(nt);
        for (uint64_t p = (uint64_t)rank; p < npoints; p += (uint64_t)size)
            todo[mine++] = p;
        if (!sweep_batch_init(&bw, batch, g->set[GS_TRIALS]))
            rc = cli_error(CMD, "out of memory");
        for (size_t b0 = 0; b0 < mine && rc == CLI_EXIT_OK; b0 += batch) {
            size_t nb = mine - b0 < batch ? mine - b0 : batch;
            rc = sweep_compute_batch(x, &bw, todo + b0, nb, nt, &rows);
        }
        sweep_batch_free(&bw);
        if (rc == CLI_EXIT_OK && (rows.failed || rows.len > INT32_MAX))
            rc = cli_error(CMD, "rank %d: out of memory", rank);
    }
    MPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all_rc != CLI_EXIT_OK) {
        rc = all_rc;
        goto out;
    }

    /* rank 0 gathers every rank's rows */
    len = (long long)rows.len;
    if (rank == 0) {
        lens = malloc((size_t)size * sizeof *lens);
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
    }
    MPI_Gather(&len, 1, MPI_LONG_LONG, lens, 1, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        long long total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = (int)lens[i];
            displs[i] = (int)total;
            total += lens[i];
        }
        all = total < INT32_MAX ? malloc((size_t)total + 1) : NULL;
        if (all == NULL)
            rc = cli_error(CMD, "the rows do not fit in memory on rank 0");
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != CLI_EXIT_OK)
        goto out;
    MPI_Gatherv(rows.p != NULL ? rows.p : "", (int)rows.len, MPI_CHAR, all,
                counts, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        /* point p is line p / size of rank p mod size's rows */
        char **cur = malloc((size_t)size * sizeof *cur);
        char *csv_path = cli_path_join(x->out_dir, "sweep.csv");
        char *grid_path = cli_path_join(x->out_dir, "grid.txt");
        char *meta_path = cli_path_join(x->out_dir, META_FILE);
        sweep_meta mt = sweep_ctx_meta(x, npoints);
        cli_buf out, meta;
        cli_buf_init(&out);
        cli_buf_init(&meta);
        sweep_csv_header(&out, g->set[GS_STAGES] != 0);
        sweep_meta_text(&meta, &mt);
        if (cur == NULL || csv_path == NULL || grid_path == NULL
            || meta_path == NULL || meta.failed) {
            rc = cli_error(CMD, "out of memory");
        } else {
            for (int i = 0; i < size; i++)
                cur[i] = all + displs[i];
            for (uint64_t p = 0; p < npoints; p++) {
                char *line = cur[p % (uint64_t)size];
                char *nl =
                    memchr(line, '\n',
                           (size_t)(all + displs[p % (uint64_t)size]
                                    + counts[p % (uint64_t)size] - line));
                if (nl == NULL) {
                    rc = cli_error(CMD, "rank %d sent too few rows",
                                   (int)(p % (uint64_t)size));
                    break;
                }
                cli_buf_put_mem(&out, line, (size_t)(nl - line + 1));
                cur[p % (uint64_t)size] = nl + 1;
            }
            if (rc == CLI_EXIT_OK
                && (out.failed
                    || !cli_write_atomic(grid_path, x->text, strlen(x->text))
                    || !cli_write_atomic(meta_path, meta.p, meta.len)
                    || !cli_write_atomic(csv_path, out.p, out.len)))
                rc = cli_error(CMD, "%s: cannot write: %s", csv_path,
                               strerror(errno));
            if (rc == CLI_EXIT_OK)
                rc = sweep_finish_outputs(CMD, x->out_dir, g, x->text, &mt,
                                          x->plot, x->quiet);
            if (rc == CLI_EXIT_OK && x->json)
                rc = sweep_print_json(CMD, x->out_dir);
            if (rc == CLI_EXIT_OK && !x->quiet)
                fprintf(stderr,
                        "bf16emu sweep: %" PRIu64
                        " points on %d ranks -> %s\n",
                        npoints, size, x->out_dir);
        }
        free(cur);
        free(csv_path);
        free(grid_path);
        free(meta_path);
        cli_buf_free(&out);
        cli_buf_free(&meta);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
out:
    free(todo);
    free(lens);
    free(counts);
    free(displs);
    free(all);
    cli_buf_free(&rows);
    cli_buf_free(&head);
    MPI_Finalize();
    return rc;
}
#endif

/* sweep_merge.c -- bf16emu merge: joins the outputs of the shards of one
   sweep */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/sweep_local.h"

/*----------------------------------------------------------------------------
 * bf16emu merge --out DIR SHARD_DIR...: the rows of every shard of one
 * sweep, in index order, with sweep.json and the plots.  The shards must
 * come from one grid (grid.txt equal), cover each point once and be
 * complete; the order of the arguments does not matter.
 *--------------------------------------------------------------------------*/
#define MCMD "merge"
typedef struct
{
    const char *out;
    bool force, json;
    int plot;
    const char *dirs[1024];
    size_t nd;
    /* what the shards read so far hold */
    char *grid_txt, *colhead;
    char **rows;         /* per point, its CSV row */
    unsigned char *seen; /* per shard, whether it was read */
    sweep_meta meta;     /* of the first shard */
} merge_ctx;

/* DIR/NAME read whole into *TEXT; false after a message. */
static bool
merge_read(const char *dir, const char *name, char **text)
{
    char *p = cli_path_join(dir, name);
    size_t len;

    *text = p != NULL ? cli_read_all(p, &len) : NULL;
    if (*text == NULL)
        cli_error(MCMD, "%s: cannot read: %s", p != NULL ? p : dir,
                  strerror(errno));
    free(p);
    return *text != NULL;
}

/* The rows of the CSV text CT (the shard SH of DIR) into M->rows. */
static int
merge_rows(merge_ctx *m, const char *dir, char *ct, const sweep_meta *sh)
{
    char *line, *save = NULL;
    int lineno = 0, rc = CLI_EXIT_OK;

    for (line = strtok_r(ct, "\n", &save); line != NULL && rc == CLI_EXIT_OK;
         line = strtok_r(NULL, "\n", &save)) {
        char *stop;
        unsigned long long idx;
        lineno++;
        if (lineno == 1) {
            if (m->colhead == NULL && (m->colhead = strdup(line)) == NULL)
                rc = cli_error(MCMD, "out of memory");
            else if (strcmp(m->colhead, line) != 0)
                rc = cli_error(MCMD,
                               "%s/sweep.csv: line 1: other columns "
                               "than %s/sweep.csv",
                               dir, m->dirs[0]);
            continue;
        }
        idx = strtoull(line, &stop, 10);
        if (stop == line || *stop != ',' || idx >= sh->npoints
            || idx % sh->shard_n != sh->shard_i)
            rc = cli_error(MCMD,
                           "%s/sweep.csv: line %d: not a row of shard "
                           "%" PRIu64 "/%" PRIu64,
                           dir, lineno, sh->shard_i, sh->shard_n);
        else if (m->rows[idx] != NULL)
            rc = cli_error(MCMD, "%s/sweep.csv: point %llu twice", dir, idx);
        else if ((m->rows[idx] = strdup(line)) == NULL)
            rc = cli_error(MCMD, "out of memory");
    }
    if (rc == CLI_EXIT_OK && lineno == 0)
        rc = cli_error(MCMD,
                       "%s/sweep.csv: empty (expected the column "
                       "names on line 1)",
                       dir);
    return rc;
}

/* Reads the shard directory DIR into M. */
static int
merge_shard(merge_ctx *m, const char *dir)
{
    char *gt = NULL, *mt = NULL, *ct = NULL;
    const char *why;
    sweep_meta sh;
    int rc = CLI_EXIT_OK;

    if (!merge_read(dir, "grid.txt", &gt) || !merge_read(dir, META_FILE, &mt)
        || !merge_read(dir, "sweep.csv", &ct)) {
        rc = CLI_EXIT_USAGE;
    } else if ((why = sweep_meta_parse(mt, &sh)) != NULL) {
        rc = cli_error(MCMD, "%s/%s: %s", dir, META_FILE, why);
    } else if (sh.hash != sweep_fnv1a(gt)) {
        rc = cli_error(MCMD,
                       "%s/%s: the grid's hash is not that of %s/grid.txt",
                       dir, META_FILE, dir);
    } else if (m->grid_txt != NULL && strcmp(m->grid_txt, gt) != 0) {
        rc = cli_error(MCMD, "%s/grid.txt: another grid than %s", dir,
                       m->dirs[0]);
    } else if (m->grid_txt != NULL
               && (sh.shard_n != m->meta.shard_n
                   || sh.npoints != m->meta.npoints)) {
        rc = cli_error(MCMD,
                       "%s: shard %" PRIu64 "/%" PRIu64 " of another split",
                       dir, sh.shard_i, sh.shard_n);
    } else {
        if (m->grid_txt == NULL) {
            m->grid_txt = gt;
            gt = NULL;
            m->meta = sh;
            m->rows = calloc(sh.npoints, sizeof *m->rows);
            m->seen = calloc(sh.shard_n, 1);
            if (m->rows == NULL || m->seen == NULL)
                rc = cli_error(MCMD, "out of memory");
        }
        if (rc == CLI_EXIT_OK && m->seen[sh.shard_i])
            rc = cli_error(MCMD,
                           "%s: shard %" PRIu64 "/%" PRIu64 " given twice",
                           dir, sh.shard_i, sh.shard_n);
        if (rc == CLI_EXIT_OK) {
            m->seen[sh.shard_i] = 1;
            rc = merge_rows(m, dir, ct, &sh);
        }
    }
    free(gt);
    free(mt);
    free(ct);
    return rc;
}

/* --out: a directory or nothing yet, and none of the shard directories. */
static int
merge_check_out(const merge_ctx *m)
{
    struct stat so;

    if (!sweep_out_dir_ok(MCMD, m->out, false))
        return CLI_EXIT_USAGE;
    if (stat(m->out, &so) != 0)
        return CLI_EXIT_OK; /* made later */
    for (size_t i = 0; i < m->nd; i++) {
        struct stat si;
        if (strcmp(m->dirs[i], m->out) == 0
            || (stat(m->dirs[i], &si) == 0 && si.st_dev == so.st_dev
                && si.st_ino == so.st_ino))
            return cli_error(MCMD,
                             "--out %s is the shard directory %s; an input "
                             "is never overwritten, also not with --force",
                             m->out, m->dirs[i]);
    }
    return CLI_EXIT_OK;
}

/* The merged output into M->out. */
static int
merge_write(merge_ctx *m, const sweep_grid *g)
{
    char *csv_path = cli_path_join(m->out, "sweep.csv");
    sweep_meta mt = m->meta;
    cli_buf out;
    struct stat st;
    int rc = CLI_EXIT_OK;

    cli_buf_init(&out);
    mt.shard_i = 0;
    mt.shard_n = 1;
    if (csv_path == NULL) {
        rc = cli_error(MCMD, "out of memory");
    } else if (stat(csv_path, &st) == 0 && !m->force) {
        rc = cli_error(MCMD, "%s exists (--force replaces it)", csv_path);
    } else if (!sweep_out_dir_ok(MCMD, m->out, true)) {
        rc = CLI_EXIT_USAGE;
    } else {
        cli_buf_printf(&out, "%s\n", m->colhead);
        for (uint64_t i = 0; i < mt.npoints; i++)
            cli_buf_printf(&out, "%s\n", m->rows[i]);
        rc = sweep_write_outputs(MCMD, m->out, g, m->grid_txt, &mt, &out,
                                 m->plot, false, m->json);
    }
    free(csv_path);
    cli_buf_free(&out);
    return rc;
}

static void
merge_free(merge_ctx *m)
{
    if (m->rows != NULL)
        for (uint64_t i = 0; i < m->meta.npoints; i++)
            free(m->rows[i]);
    free(m->rows);
    free(m->seen);
    free(m->grid_txt);
    free(m->colhead);
}

int
merge_main(int argc, char **argv)
{
    static const cli_option opts[] = {
        {"help", false, 0},    {"out", true, 1},   {"force", false, 2},
        {"no-plot", false, 3}, {"plot", false, 4}, {"json", false, 5},
        {NULL, false, 0}};
    merge_ctx m;
    cli_parser p;
    const char *v;
    int id, rc = CLI_EXIT_OK;
    sweep_grid g;

    memset(&m, 0, sizeof m);
    m.plot = -1;
    cli_parser_init(&p, MCMD, argc, argv);
    while ((id = cli_parser_next(&p, opts, &v)) != CLI_ARG_END) {
        switch (id) {
        case CLI_ARG_ERROR:
            return CLI_EXIT_USAGE;
        case CLI_ARG_OPERAND:
            if (m.nd == sizeof m.dirs / sizeof m.dirs[0])
                return cli_error(MCMD, "too many shard directories");
            m.dirs[m.nd++] = v;
            break;
        case 0:
            merge_help(stdout);
            return CLI_EXIT_OK;
        case 1:
            if (*v == '\0')
                return cli_error(MCMD, "--out: an empty directory name");
            m.out = v;
            break;
        case 2:
            m.force = true;
            break;
        case 3:
            m.plot = 0;
            break;
        case 5:
            m.json = true;
            break;
        default:
            m.plot = 1;
            break;
        }
    }
    if (m.out == NULL || m.nd == 0)
        return cli_error(MCMD, "expected --out DIR and one or more shard "
                               "directories");
    rc = merge_check_out(&m);
    for (size_t i = 0; i < m.nd && rc == CLI_EXIT_OK; i++)
        rc = merge_shard(&m, m.dirs[i]);
    if (rc == CLI_EXIT_OK)
        for (uint64_t i = 0; i < m.meta.npoints; i++)
            if (m.rows[i] == NULL) {
                rc = cli_error(MCMD,
                               "point %" PRIu64 " is missing (shard %" PRIu64
                               "/%" PRIu64 " not given or not finished)",
                               i, i % m.meta.shard_n, m.meta.shard_n);
                break;
            }
    if (rc == CLI_EXIT_OK) {
        memset(&g, 0, sizeof g);
        if (grid_parse_text(&g, m.grid_txt, strlen(m.grid_txt), NULL, 0) != 0
            || grid_points(&g) != m.meta.npoints)
            rc = cli_error(MCMD, "%s/grid.txt: not a usable grid", m.dirs[0]);
        else
            rc = merge_write(&m, &g);
        grid_free(&g);
    }
    merge_free(&m);
    return rc;
}

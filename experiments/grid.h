/* grid.h -- the parameter grid of bf16emu sweep: axes with lists of
   values, parsed from options or from a grid file of "key = values"
   lines; the points are the Cartesian product in a fixed axis order.
   No I/O: the caller reads files and prints the messages. */
#ifndef BF16EMU_EXPERIMENTS_GRID_H
#define BF16EMU_EXPERIMENTS_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The axes, in the order of the point index (the last varies fastest). */
typedef enum
{
    GX_POLICY,
    GX_FIX,
    GX_ABLATE,
    GX_EXP,
    GX_MMA,
    GX_QK,
    GX_SINK,
    GX_REPEAT,
    GX_MAX_VALUE,
    GX_GAP_MIN,
    GX_GAP_MAX,
    GX_QK_STD,
    GX_DO_MEAN,
    GX_CAUSAL,
    GX_N,
    GX_D,
    GX_BR,
    GX_BC,
    GX_V_DIST,
    GX_V_NU,
    GX_V_STD,
    GX_V_SHIFT,
    GX_V_MEAN,
    N_GX
} grid_axis;

/* Settings that are one value, not an axis. */
typedef enum
{
    GS_TRIALS,
    GS_HEADS,
    GS_SEED,
    GS_STAGES,
    N_GS
} grid_setting;

#define GRID_MAX_VALUES 4096
#define GRID_MAX_POINTS 1000000u
#define GRID_MAX_TEXT 256 /* the longest value text kept */

typedef struct grid_values
{
    size_t n;
    char (*text)[GRID_MAX_TEXT]; /* canonical text of each value */
    double *num;                 /* numeric axes: the value */
} grid_values;

typedef struct sweep_grid
{
    grid_values ax[N_GX];
    uint64_t set[N_GS]; /* trials, heads, seed, stages (0/1) */
} sweep_grid;

/* The key of an axis or setting ("policy", "v-mean", "trials"). */
const char *grid_axis_key(grid_axis a);
const char *grid_setting_key(grid_setting s);
/* Whether axis A holds numbers (else names). */
bool grid_axis_numeric(grid_axis a);

/* The embedded default grid: the rounding bias of O against the mean of
   V (-2 .. 2) with 1, 2 and 4 repeated maxima, policy paper-eq4, without
   and with the fix, stage attribution on.  Returns 0, or -1 when memory runs
   out. */
int grid_init_default(sweep_grid *g);
void grid_free(sweep_grid *g);

/* Sets KEY (an axis or a setting) from VALUE: a comma-separated list,
   numbers also as LO:HI:STEP (inclusive, LO + i STEP).  Names are
   checked against what the program knows (policies, fixes, ablation
   lists joined with '+', exp models, accumulation presets or "default",
   score structures, V distributions).  Returns 0, or -1 with a message
   in ERR (ERRLEN bytes) naming the key and what was expected; G is then
   unchanged. */
int grid_set(sweep_grid *g, const char *key, const char *value, char *err,
             size_t errlen);

/* Applies the text of a grid file: one "key = value" per line, '#'
   starts a comment, blank lines ignored.  Returns 0, or -1 with "line N:
   ..." in ERR (keys before the bad line are applied). */
int grid_parse_text(sweep_grid *g, const char *text, size_t len, char *err,
                    size_t errlen);

/* The number of points (the product of the axis lengths; the caller
   refuses more than GRID_MAX_POINTS; 0 only when that product
   overflows). */
uint64_t grid_points(const sweep_grid *g);

/* The value index of each axis at point INDEX. */
void grid_point(const sweep_grid *g, uint64_t index, size_t idx[N_GX]);

/* The canonical text of the grid, one "key = values" line per axis and
   setting, in a malloc'd string (NULL: out of memory). */
char *grid_text(const sweep_grid *g);

#endif

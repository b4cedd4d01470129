/* fuzz_grid -- fuzz target: the sweep grid parser (experiments/grid.c) on
   arbitrary grid-file text and option values */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/grid.h"
#include "tests/fuzz/fuzz_common.h"

/*
 * Each input is read three ways:
 *
 * 1. As a grid file, applied to the default grid with grid_parse_text.
 *    A failure gives a message "line N: ..." that fits the buffer (the
 *    bytes after it are never written) and is one line of printable ASCII
 *    (bf16emu prints it on the terminal).  A success gives a grid whose
 *    canonical text (grid_text) is a fixed point: read back as a grid file
 *    it succeeds and gives the same text.  Every numeric value's text reads
 *    back (strtod) to the value, and the point count and grid_point agree
 *    with the axis lengths.
 *
 * 2. The first byte picks an axis or setting and the rest is its value,
 *    given to grid_set as sweep --KEY VALUE does: a failure leaves the grid
 *    exactly as it was (grid.h's promise), with a message as above but
 *    without the line number.
 *
 * 3. The whole input is given as a key, with a valid value: only the known
 *    keys are accepted.
 */

#define ERRLEN 200
#define GUARD 64

static void
check_message(const char *buf, bool with_line)
{
    size_t n = strnlen(buf, ERRLEN);

    FUZZ_CHECK(n < ERRLEN);
    FUZZ_CHECK(n > 0);
    for (size_t i = n + 1; i < ERRLEN + GUARD; i++)
        FUZZ_CHECK((unsigned char)buf[i] == 0xA5);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(buf[i] >= 0x20 && buf[i] < 0x7f);
    if (with_line)
        FUZZ_CHECK(strncmp(buf, "line ", 5) == 0);
}

static void
check_grid(const sweep_grid *g)
{
    uint64_t points = 1;
    bool overflow = false;
    size_t idx[N_GX];

    for (int a = 0; a < N_GX; a++) {
        const grid_values *v = &g->ax[a];
        FUZZ_CHECK(v->n >= 1 && v->n <= GRID_MAX_VALUES);
        for (size_t i = 0; i < v->n; i++) {
            FUZZ_CHECK(strnlen(v->text[i], GRID_MAX_TEXT) < GRID_MAX_TEXT);
            FUZZ_CHECK(v->text[i][0] != '\0');
            FUZZ_CHECK(strpbrk(v->text[i], ", \t\n#=") == NULL);
            if (grid_axis_numeric((grid_axis)a)) {
                FUZZ_CHECK(isfinite(v->num[i]));
                FUZZ_CHECK(strtod(v->text[i], NULL) == v->num[i]);
            }
        }
        if (points > UINT64_MAX / v->n)
            overflow = true;
        else
            points *= v->n;
    }
    FUZZ_CHECK(grid_points(g) == (overflow ? 0 : points));
    if (overflow)
        return;
    grid_point(g, 0, idx);
    for (int a = 0; a < N_GX; a++)
        FUZZ_CHECK(idx[a] == 0);
    grid_point(g, points - 1, idx);
    for (int a = 0; a < N_GX; a++)
        FUZZ_CHECK(idx[a] == g->ax[a].n - 1);
}

/* The canonical text of G read back into a default grid gives itself. */
static void
check_fixed_point(const sweep_grid *g)
{
    sweep_grid h;
    char *t1 = grid_text(g), *t2;
    char err[ERRLEN];

    FUZZ_CHECK(t1 != NULL);
    FUZZ_CHECK(grid_init_default(&h) == 0);
    if (grid_parse_text(&h, t1, strlen(t1), err, sizeof err) != 0)
        fuzz_fail(__FILE__, __LINE__, err);
    t2 = grid_text(&h);
    FUZZ_CHECK(t2 != NULL);
    FUZZ_CHECK(strcmp(t1, t2) == 0);
    free(t1);
    free(t2);
    grid_free(&h);
}

static void
as_file(const uint8_t *data, size_t size)
{
    sweep_grid g;
    char err[ERRLEN + GUARD];

    FUZZ_CHECK(grid_init_default(&g) == 0);
    memset(err, 0xA5, sizeof err);
    if (grid_parse_text(&g, (const char *)data, size, err, ERRLEN) != 0) {
        check_message(err, true);
    } else {
        check_grid(&g);
        check_fixed_point(&g);
    }
    grid_free(&g);
}

static const char *
key_of(unsigned k)
{
    k %= N_GX + N_GS;
    return k < N_GX ? grid_axis_key((grid_axis)k)
                    : grid_setting_key((grid_setting)(k - N_GX));
}

static void
as_option(const uint8_t *data, size_t size)
{
    sweep_grid g;
    char err[ERRLEN + GUARD];
    char *value, *before, *after;

    if (size == 0)
        return;
    value = malloc(size);
    FUZZ_CHECK(value != NULL);
    memcpy(value, data + 1, size - 1);
    value[size - 1] = '\0';
    FUZZ_CHECK(grid_init_default(&g) == 0);
    before = grid_text(&g);
    FUZZ_CHECK(before != NULL);
    memset(err, 0xA5, sizeof err);
    if (grid_set(&g, key_of(data[0]), value, err, ERRLEN) != 0) {
        check_message(err, false);
        after = grid_text(&g);
        FUZZ_CHECK(after != NULL);
        FUZZ_CHECK(strcmp(before, after) == 0);
        free(after);
    } else {
        check_grid(&g);
        check_fixed_point(&g);
    }
    free(before);
    free(value);
    grid_free(&g);
}

static void
as_key(const uint8_t *data, size_t size)
{
    sweep_grid g;
    char err[ERRLEN + GUARD];
    char *key = malloc(size + 1);
    bool known = false;

    FUZZ_CHECK(key != NULL);
    memcpy(key, data, size);
    key[size] = '\0';
    for (unsigned k = 0; k < N_GX + N_GS; k++)
        if (strcmp(key, key_of(k)) == 0)
            known = true;
    FUZZ_CHECK(grid_init_default(&g) == 0);
    memset(err, 0xA5, sizeof err);
    /* "1" is valid for every axis and setting but policy-like names */
    if (grid_set(&g, key, "1", err, ERRLEN) != 0)
        check_message(err, false);
    else
        FUZZ_CHECK(known);
    free(key);
    grid_free(&g);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_file(data, size);
    as_option(data, size);
    as_key(data, size);
    return 0;
}

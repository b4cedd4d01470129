/* grid.c -- the parameter grid of bf16emu sweep (grid.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "analysis/gen.h"
#include "experiments/grid.h"
#include "softfloat/mma.h"

/*----------------------------------------------------------------------------
 * The axes: key, kind and allowed range.
 *--------------------------------------------------------------------------*/
typedef enum
{
    K_NAME, /* names, checked by name_ok */
    K_INT,  /* integers in [lo, hi] */
    K_REAL, /* finite reals in [lo, hi] */
    K_BOOL  /* 0 or 1 */
} axis_kind;

typedef struct
{
    const char *key;
    axis_kind kind;
    double lo, hi;
} axis_info;

static const axis_info axes[N_GX] = {
    [GX_POLICY] = {"policy", K_NAME, 0, 0},
    [GX_FIX] = {"fix", K_NAME, 0, 0},
    [GX_ABLATE] = {"ablate", K_NAME, 0, 0},
    [GX_EXP] = {"exp", K_NAME, 0, 0},
    [GX_MMA] = {"mma", K_NAME, 0, 0},
    [GX_QK] = {"qk", K_NAME, 0, 0},
    [GX_SINK] = {"sink", K_REAL, -1e4, 1e4},
    [GX_REPEAT] = {"repeat", K_INT, 1, 65536},
    [GX_MAX_VALUE] = {"max-value", K_REAL, -1e4, 1e4},
    [GX_GAP_MIN] = {"gap-min", K_REAL, 0, 1e4},
    [GX_GAP_MAX] = {"gap-max", K_REAL, 0, 1e4},
    [GX_QK_STD] = {"qk-std", K_REAL, 0, 1e4},
    [GX_DO_MEAN] = {"do-mean", K_REAL, -1e4, 1e4},
    [GX_CAUSAL] = {"causal", K_BOOL, 0, 1},
    [GX_N] = {"n", K_INT, 1, 65536},
    [GX_D] = {"d", K_INT, 1, 4096},
    [GX_BR] = {"br", K_INT, 0, 65536},
    [GX_BC] = {"bc", K_INT, 0, 65536},
    [GX_V_DIST] = {"v-dist", K_NAME, 0, 0},
    [GX_V_NU] = {"v-nu", K_INT, 3, 64},
    [GX_V_STD] = {"v-std", K_REAL, 0, 1e4},
    [GX_V_SHIFT] = {"v-shift", K_REAL, -1e4, 1e4},
    [GX_V_MEAN] = {"v-mean", K_REAL, -1e4, 1e4},
};

static const char *const setting_keys[N_GS] = {"trials", "heads", "seed",
                                               "stages"};
static const uint64_t setting_max[N_GS] = {1000000, 4096, UINT64_MAX, 1};
static const uint64_t setting_min[N_GS] = {1, 1, 0, 0};

const char *
grid_axis_key(grid_axis a)
{
    return (unsigned)a < N_GX ? axes[a].key : NULL;
}

const char *
grid_setting_key(grid_setting s)
{
    return (unsigned)s < N_GS ? setting_keys[s] : NULL;
}

bool
grid_axis_numeric(grid_axis a)
{
    return (unsigned)a < N_GX && axes[a].kind != K_NAME;
}

/* The message into ERR (N bytes), one line of printable ASCII: the bytes of
   the user's text that are not (a newline, an escape sequence) are written
   as \xNN, and the message is cut to fit. */
static void
msg(char *err, size_t n, const char *fmt, ...)
{
    static const char hex[] = "0123456789abcdef";
    char raw[1024];
    size_t o = 0;
    va_list ap;

    if (err == NULL || n == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    for (const char *s = raw; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = c >= 0x20 && c < 0x7f;
        if (o + (plain ? 1 : 4) >= n)
            break;
        if (plain) {
            err[o++] = (char)c;
        } else {
            err[o++] = '\\';
            err[o++] = 'x';
            err[o++] = hex[c >> 4];
            err[o++] = hex[c & 15];
        }
    }
    err[o] = '\0';
}

/*----------------------------------------------------------------------------
 * Names.
 *--------------------------------------------------------------------------*/
static bool
ablate_ok(const char *v)
{
    char buf[GRID_MAX_TEXT];
    size_t n = strlen(v);

    if (strcmp(v, "none") == 0)
        return true;
    if (n == 0 || n >= sizeof buf)
        return false;
    /* '+' joins ablations inside one value (',' separates values) */
    for (size_t i = 0; i <= n; i++)
        buf[i] = v[i] == '+' ? ',' : v[i];
    if (buf[0] == ',' || buf[n - 1] == ',' || strstr(buf, ",,") != NULL)
        return false;
    return fa_ablations_parse(buf) > 0;
}

static bool
name_ok(grid_axis a, const char *v)
{
    switch (a) {
    case GX_POLICY:
        return fa_kernel_by_name(strcmp(v, "flash") == 0 ? "fa2" : v) != NULL;
    case GX_FIX:
        return fa_fix_parse(v) >= 0;
    case GX_ABLATE:
        return ablate_ok(v);
    case GX_EXP:
        return strcmp(v, "default") == 0 || strcmp(v, "cr") == 0
               || strcmp(v, "libm") == 0
               || strcmp(v, "ex2-sm90") == 0 || strcmp(v, "ex2-sm90-ftz") == 0;
    case GX_MMA:
        return strcmp(v, "default") == 0 || sf_mma_preset_by_name(v) != NULL;
    case GX_QK:
        return gen_kind_parse(v) >= 0;
    case GX_V_DIST:
        return gen_vdist_parse(v) >= 0;
    default:
        return false;
    }
}

static const char *
name_expected(grid_axis a)
{
    switch (a) {
    case GX_POLICY:
        return "paper-eq4, repo, fa2 (or flash), fp32, cudnn, efficient or "
               "math";
    case GX_FIX:
        return "none, beta, beta-v2, eps or always";
    case GX_ABLATE:
        return "none, or ablations joined with '+' (fp32-pv, fp32-o, "
               "delta-dpp, delta-fp32-o, untiled, fp32-p, fp32-ocast)";
    case GX_EXP:
        return "default (the policy's description's exp_model), cr, libm, "
               "ex2-sm90 or ex2-sm90-ftz";
    case GX_MMA:
        return "default or an accumulation preset (sm90, exact, "
               "fma-chain, ...)";
    case GX_QK:
        return "normal, sink or repeated-max";
    default:
        return "normal, uniform, laplace or student-t";
    }
}

/*----------------------------------------------------------------------------
 * Values.
 *--------------------------------------------------------------------------*/
static void
values_free(grid_values *v)
{
    free(v->text);
    free(v->num);
    v->text = NULL;
    v->num = NULL;
    v->n = 0;
}

/* A number: the whole of S, finite. */
static bool
number(const char *s, double *x)
{
    char *end;

    if (*s == '\0' || strchr(s, ' ') != NULL)
        return false;
    errno = 0;
    *x = strtod(s, &end);
    return *end == '\0' && errno != ERANGE && isfinite(*x);
}

/* Appends a value to V (of axis KEY).  The arrays grow by doubling from
   8: their capacity is full exactly when N is 8 or a larger power of two.
   Returns 0, or -1 with a message. */
static int
push(grid_values *v, const char *key, const char *text, double x, char *err,
     size_t errlen)
{
    if (v->n >= GRID_MAX_VALUES) {
        msg(err, errlen, "%s: more than %d values", key, GRID_MAX_VALUES);
        return -1;
    }
    if (v->n == 0 || (v->n >= 8 && (v->n & (v->n - 1)) == 0)) {
        size_t cap = v->n == 0 ? 8 : 2 * v->n;
        char(*t)[GRID_MAX_TEXT] = realloc(v->text, cap * sizeof *v->text);
        double *y = t == NULL ? NULL : realloc(v->num, cap * sizeof *v->num);
        if (t != NULL)
            v->text = t;
        if (y == NULL) {
            msg(err, errlen, "%s: out of memory", key);
            return -1;
        }
        v->num = y;
    }
    snprintf(v->text[v->n], GRID_MAX_TEXT, "%s", text);
    v->num[v->n] = x;
    v->n++;
    return 0;
}

/* Checks X against axis A's range; writes its canonical text. */
static bool
numeric_ok(grid_axis a, double x, char *text, size_t n)
{
    const axis_info *ai = &axes[a];

    if (!(x >= ai->lo && x <= ai->hi))
        return false;
    if (ai->kind != K_REAL && x != floor(x))
        return false;
    if (ai->kind == K_REAL)
        snprintf(text, n, "%.17g", x);
    else
        snprintf(text, n, "%.0f", x);
    /* the shortest text that gives back X, without an exponent for
       magnitudes from 1e-4 to 1e15 (30, not 3e+01) */
    if (ai->kind == K_REAL)
        for (int prec = 1; prec <= 17; prec++) {
            char buf[64];
            bool exp_ok = x == 0 || fabs(x) < 1e-4 || fabs(x) >= 1e15;
            snprintf(buf, sizeof buf, "%.*g", prec, x);
            if (strtod(buf, NULL) == x
                && (exp_ok || strchr(buf, 'e') == NULL)) {
                snprintf(text, n, "%s", buf);
                break;
            }
        }
    if (strcmp(text, "-0") == 0)
        snprintf(text, n, "0");
    return true;
}

static int
parse_item(grid_axis a, const char *item, grid_values *v, char *err,
           size_t errlen)
{
    const char *key = axes[a].key;
    char text[GRID_MAX_TEXT];
    const char *c1;

    if (axes[a].kind == K_NAME) {
        if (strlen(item) >= GRID_MAX_TEXT || !name_ok(a, item)) {
            msg(err, errlen, "%s: '%.64s' is not known (expected %s)", key,
                item, name_expected(a));
            return -1;
        }
        return push(v, key, item, 0, err, errlen);
    }
    c1 = strchr(item, ':');
    if (c1 != NULL) {
        /* LO:HI:STEP */
        char buf[3][64];
        const char *p = item;
        double lo, hi, step;
        for (int i = 0; i < 3; i++) {
            const char *e = i < 2 ? strchr(p, ':') : p + strlen(p);
            size_t n = e == NULL ? 0 : (size_t)(e - p);
            if (e == NULL || n == 0 || n >= sizeof buf[i]) {
                msg(err, errlen,
                    "%s: '%.64s' is not a range (expected LO:HI:STEP)", key,
                    item);
                return -1;
            }
            memcpy(buf[i], p, n);
            buf[i][n] = '\0';
            p = e + (i < 2);
        }
        if (strchr(buf[2], ':') != NULL || !number(buf[0], &lo)
            || !number(buf[1], &hi) || !number(buf[2], &step) || step <= 0
            || hi < lo) {
            msg(err, errlen,
                "%s: '%.64s' is not a range (expected LO:HI:STEP with "
                "numbers, LO <= HI and STEP > 0)",
                key, item);
            return -1;
        }
        if ((hi - lo) / step > GRID_MAX_VALUES) {
            msg(err, errlen, "%s: '%.64s' gives more than %d values", key,
                item, GRID_MAX_VALUES);
            return -1;
        }
        for (uint64_t i = 0;; i++) {
            double x = lo + (double)i * step;
            if (x > hi + 1e-9 * step)
                break;
            if (x > hi)
                x = hi;
            if (!numeric_ok(a, x, text, sizeof text)) {
                msg(err, errlen, "%s: %g is out of range (%g .. %g%s)", key, x,
                    axes[a].lo, axes[a].hi,
                    axes[a].kind == K_REAL ? "" : ", an integer");
                return -1;
            }
            if (push(v, key, text, x, err, errlen) != 0)
                return -1;
        }
        return 0;
    }
    {
        double x;
        if (!number(item, &x)) {
            msg(err, errlen, "%s: '%.64s' is not a number", key, item);
            return -1;
        }
        if (!numeric_ok(a, x, text, sizeof text)) {
            msg(err, errlen, "%s: %.64s is out of range (%g .. %g%s)", key,
                item, axes[a].lo, axes[a].hi,
                axes[a].kind == K_REAL ? "" : ", an integer");
            return -1;
        }
        return push(v, key, text, x, err, errlen);
    }
}

static int
set_axis(sweep_grid *g, grid_axis a, const char *value, char *err,
         size_t errlen)
{
    grid_values v = {0, NULL, NULL};
    const char *p = value;

    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
        char item[GRID_MAX_TEXT];
        /* trim blanks */
        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == 0 || n >= sizeof item) {
            msg(err, errlen, "%s: %s value in '%.64s'", axes[a].key,
                n == 0 ? "an empty" : "a too long", value);
            values_free(&v);
            return -1;
        }
        memcpy(item, p, n);
        item[n] = '\0';
        if (parse_item(a, item, &v, err, errlen) != 0) {
            values_free(&v);
            return -1;
        }
        if (e == NULL)
            break;
        p = e + 1;
    }
    /* keep only what is used */
    {
        char(*t)[GRID_MAX_TEXT] = realloc(v.text, v.n * sizeof *v.text);
        double *x = realloc(v.num, v.n * sizeof *v.num);
        if (t != NULL)
            v.text = t;
        if (x != NULL)
            v.num = x;
    }
    values_free(&g->ax[a]);
    g->ax[a] = v;
    return 0;
}

int
grid_set(sweep_grid *g, const char *key, const char *value, char *err,
         size_t errlen)
{
    for (int a = 0; a < N_GX; a++)
        if (strcmp(key, axes[a].key) == 0)
            return set_axis(g, (grid_axis)a, value, err, errlen);
    for (int s = 0; s < N_GS; s++)
        if (strcmp(key, setting_keys[s]) == 0) {
            char *end;
            unsigned long long x;
            if (strcmp(setting_keys[s], "stages") == 0
                && (strcmp(value, "on") == 0 || strcmp(value, "off") == 0)) {
                g->set[s] = value[1] == 'n';
                return 0;
            }
            errno = 0;
            x = strtoull(value, &end, 10);
            if (value[0] < '0' || value[0] > '9' || *end != '\0'
                || errno == ERANGE || x < setting_min[s]
                || x > setting_max[s]) {
                msg(err, errlen,
                    "%s: '%.64s' is not an integer in %llu .. %llu%s", key,
                    value, (unsigned long long)setting_min[s],
                    (unsigned long long)setting_max[s],
                    s == GS_STAGES ? " (or on, off)" : "");
                return -1;
            }
            g->set[s] = x;
            return 0;
        }
    msg(err, errlen, "unknown key '%.64s'", key);
    return -1;
}

int
grid_parse_text(sweep_grid *g, const char *text, size_t len, char *err,
                size_t errlen)
{
    size_t pos = 0, line = 0;
    int rc = 0;
    /* every line fits: a grid file may hold what grid_text wrote, up to
       GRID_MAX_VALUES values per line */
    char *buf = malloc(len + 1);

    if (buf == NULL) {
        msg(err, errlen, "out of memory");
        return -1;
    }
    while (pos < len) {
        size_t e = pos, n;
        char *eq, *k, *v, *hash;
        while (e < len && text[e] != '\n')
            e++;
        line++;
        n = e - pos;
        memcpy(buf, text + pos, n);
        buf[n] = '\0';
        pos = e + 1;
        if (memchr(buf, '\0', n) != NULL) {
            msg(err, errlen, "line %zu: a NUL byte", line);
            rc = -1;
            break;
        }
        if (n > 0 && buf[n - 1] == '\r')
            buf[--n] = '\0';
        hash = strchr(buf, '#');
        if (hash != NULL)
            *hash = '\0';
        k = buf;
        while (*k == ' ' || *k == '\t')
            k++;
        if (*k == '\0')
            continue;
        eq = strchr(k, '=');
        if (eq == NULL) {
            msg(err, errlen, "line %zu: expected 'key = value'", line);
            rc = -1;
            break;
        }
        *eq = '\0';
        v = eq + 1;
        for (char *t = eq; t > k && (t[-1] == ' ' || t[-1] == '\t'); t--)
            t[-1] = '\0';
        while (*v == ' ' || *v == '\t')
            v++;
        for (size_t m = strlen(v);
             m > 0 && (v[m - 1] == ' ' || v[m - 1] == '\t'); m--)
            v[m - 1] = '\0';
        {
            char sub[1024];
            if (grid_set(g, k, v, sub, sizeof sub) != 0) {
                msg(err, errlen, "line %zu: %s", line, sub);
                rc = -1;
                break;
            }
        }
    }
    free(buf);
    return rc;
}

/*----------------------------------------------------------------------------
 * The default grid and the points.
 *--------------------------------------------------------------------------*/
static const char *const default_grid[][2] = {
    {"policy", "paper-eq4"},
    {"fix", "none,beta"},
    {"ablate", "none"},
    {"exp", "default"},
    {"mma", "default"},
    {"qk", "repeated-max"},
    {"sink", "4"},
    {"repeat", "1,2,4"},
    {"max-value", "3"},
    {"gap-min", "12"},
    {"gap-max", "30"},
    {"qk-std", "1"},
    {"do-mean", "0"},
    {"causal", "0"},
    {"n", "64"},
    {"d", "64"},
    {"br", "0"},
    {"bc", "0"},
    {"v-dist", "normal"},
    {"v-nu", "5"},
    {"v-std", "0.4"},
    {"v-shift", "0"},
    {"v-mean", "-2:2:0.5"},
};

int
grid_init_default(sweep_grid *g)
{
    char err[256];

    memset(g, 0, sizeof *g);
    for (size_t i = 0; i < sizeof default_grid / sizeof default_grid[0]; i++)
        if (grid_set(g, default_grid[i][0], default_grid[i][1], err,
                     sizeof err)
            != 0) {
            grid_free(g);
            return -1;
        }
    g->set[GS_TRIALS] = 8;
    g->set[GS_HEADS] = 1;
    g->set[GS_SEED] = 1;
    g->set[GS_STAGES] = 1;
    return 0;
}

void
grid_free(sweep_grid *g)
{
    for (int a = 0; a < N_GX; a++)
        values_free(&g->ax[a]);
}

uint64_t
grid_points(const sweep_grid *g)
{
    uint64_t n = 1;

    for (int a = 0; a < N_GX; a++) {
        if (g->ax[a].n == 0)
            return 0;
        if (n > UINT64_MAX / g->ax[a].n)
            return 0;
        n *= g->ax[a].n;
    }
    return n;
}

void
grid_point(const sweep_grid *g, uint64_t index, size_t idx[N_GX])
{
    for (int a = N_GX - 1; a >= 0; a--) {
        idx[a] = (size_t)(index % g->ax[a].n);
        index /= g->ax[a].n;
    }
}

char *
grid_text(const sweep_grid *g)
{
    size_t cap = 256, len = 0;
    char *s = malloc(cap);

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int a = 0; a < N_GX + N_GS; a++) {
        char head[64];
        size_t need = 0;
        int hl;
        if (a < N_GX) {
            hl = snprintf(head, sizeof head, "%s = ", axes[a].key);
            for (size_t i = 0; i < g->ax[a].n; i++)
                need += strlen(g->ax[a].text[i]) + 1;
        } else {
            hl = snprintf(head, sizeof head, "%s = %llu",
                          setting_keys[a - N_GX],
                          (unsigned long long)g->set[a - N_GX]);
        }
        need += (size_t)hl + 2;
        if (len + need + 1 > cap) {
            char *t;
            while (len + need + 1 > cap)
                cap *= 2;
            t = realloc(s, cap);
            if (t == NULL) {
                free(s);
                return NULL;
            }
            s = t;
        }
        memcpy(s + len, head, (size_t)hl);
        len += (size_t)hl;
        if (a < N_GX)
            for (size_t i = 0; i < g->ax[a].n; i++) {
                size_t tl = strlen(g->ax[a].text[i]);
                if (i > 0)
                    s[len++] = ',';
                memcpy(s + len, g->ax[a].text[i], tl);
                len += tl;
            }
        s[len++] = '\n';
        s[len] = '\0';
    }
    return s;
}

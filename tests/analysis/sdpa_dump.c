/* sdpa_dump.c -- what the SDPA backend tests share (sdpa_dump.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tests/analysis/sdpa_dump.h"
#include "analysis/dump_inputs.h"
#include "analysis/dump_outputs.h"
#include "tests/support/tables.h"

#include <stdio.h>

#include <check.h>

void
read_t(const char *path, const char *key, tensor_dtype dt, tensor *t)
{
    tensor_error err;
    *t = (tensor)TENSOR_INIT;
    ck_assert_msg(dump_input_read(path, key, dt, t, &err) == 0, "%s: %s: %s",
                  path, key, err.message);
}

out_cmp
cmp_out16(const char *name, const char *path, const char *key, tensor_dtype dt,
          const uint16_t *em, size_t whole, size_t cols)
{
    tensor g = TENSOR_INIT;
    dump_kept k = DUMP_KEPT_INIT;
    tensor_error err;
    out_cmp c = {0, 0, false, false};
    bool shown = false;

    ck_assert_msg(dump_output_read(path, key, dt, &g, &k, &err) == 0,
                  "%s: %s: %s", path, key, err.message);
    ck_assert_msg(k.kept || g.n_elems == whole,
                  "%s: %s: %llu elements, the emulator's %zu", path, key,
                  (unsigned long long)g.n_elems, whole);
    c.kept = k.kept;
    c.n = (size_t)g.n_elems;
    for (uint64_t i = 0; i < g.n_elems; i++) {
        uint64_t j = dump_kept_index(&k, &g, i);
        uint16_t gv = (uint16_t)tensor_get_bits(&g, i);
        ck_assert_msg(j < whole,
                      "%s: %s: kept element %llu is past the "
                      "emulator's %zu",
                      path, key, (unsigned long long)j, whole);
        if (gv == em[j])
            c.eq++;
        else if (!shown) {
            printf("%s: %s[%llu][%llu] gpu 0x%04X emulator 0x%04X\n", name,
                   key, (unsigned long long)(j / cols),
                   (unsigned long long)(j % cols), gv, em[j]);
            shown = true;
        }
    }
    if (k.kept) {
        c.hash_eq = dump_hash16(em, whole) == k.hash;
        printf("%s %s: %zu/%zu of the kept elements equal; whole tensor "
               "(%zu): hash %s\n",
               name, key, c.eq, c.n, whole, c.hash_eq ? "equal" : "differs");
    } else {
        c.hash_eq = c.eq == c.n;
    }
    tensor_free(&g);
    dump_kept_free(&k);
    return c;
}

uint32_t
u32_at(const tensor *t, size_t i)
{
    return (uint32_t)tensor_get_bits(t, i);
}

void
ex2_load(ex2_model *m)
{
    char err[1024];
    ck_assert_msg(
        ax_ex2_table_load(tst_ex2_table_path(), &m->tab, err, sizeof err) == 0,
        "%s", err);
    ax_ex2_model(&m->tab, false, &m->rule, &m->model);
}

void
read_qkv(const char *path, tensor_dtype dt, tensor *q, tensor *k, tensor *v)
{
    read_t(path, "q", dt, q);
    read_t(path, "k", dt, k);
    read_t(path, "v", dt, v);
}

void
free_qkv(tensor *q, tensor *k, tensor *v)
{
    tensor_free(q);
    tensor_free(k);
    tensor_free(v);
}

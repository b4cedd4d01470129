/* sdpa_dump.c -- what the SDPA backend tests share (sdpa_dump.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tests/analysis/sdpa_dump.h"
#include "analysis/dump_inputs.h"

#include <check.h>

void
read_t(const char *path, const char *key, tensor_dtype dt, tensor *t)
{
    tensor_error err;
    *t = (tensor)TENSOR_INIT;
    ck_assert_msg(dump_input_read(path, key, dt, t, &err) == 0, "%s: %s: %s",
                  path, key, err.message);
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
    ck_assert_msg(ax_ex2_table_load(ax_ex2_table_default_path(), &m->tab, err,
                                    sizeof err)
                      == 0,
                  "%s", err);
    ax_ex2_model(&m->tab, false, &m->rule, &m->model);
}

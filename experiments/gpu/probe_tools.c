/* probe_tools.c -- the readings and file lookups of probe_tools.h */
#include "probe_tools.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "probe_vectors.h"

bool
tc_readings_init(tc_readings *r)
{
    const sf_mma_model *sm90 = sf_mma_preset_by_name("sm90");

    if (sm90 == NULL)
        return false;
    for (int z = 0; z < TC_NREADING; z++)
        r->m[z] = *sm90;
    r->m[TC_ZC_MINUS126].zero_c_in_max = true;
    r->m[TC_ZC_MINUS126].emax_floor = SF_MMA_NO_FLOOR;
    r->m[TC_FLOOR133].zero_c_in_max = false;
    r->m[TC_FLOOR133].emax_floor = -133;
    r->m[TC_PLAIN].zero_c_in_max = false;
    r->m[TC_PLAIN].emax_floor = SF_MMA_NO_FLOOR;
    return true;
}

uint32_t
tc_chain(const tc_readings *r, int reading, int fmt, const uint16_t *a,
         const uint16_t *b, uint32_t c, int k)
{
    const sf_format *f = fmt == PV_BF16 ? &sf_format_bf16 : &sf_format_f16;
    sf_env env = SF_ENV_NVIDIA;

    return (uint32_t)sf_mma_dot(&r->m[reading], f, a, 1, f, b, 1, (size_t)k, c,
                                &env);
}

const tensor *
tc_find_tensor(const tensor_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i].tensor;
    return NULL;
}

const char *
tc_find_meta(const tensor_file *f, const char *key)
{
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0)
            return f->meta[i].value;
    return NULL;
}

unsigned long long
tc_manifest_hash(const char *manifest, const char *name)
{
    json_t *root = manifest ? json_loads(manifest, 0, NULL) : NULL;
    json_t *list = json_object_get(root, "tensors"), *e;
    unsigned long long h = 0;
    size_t i;

    json_array_foreach(list, i, e)
    {
        const char *nm = json_string_value(json_object_get(e, "name"));
        const char *hx = json_string_value(json_object_get(e, "input_fnv1a"));
        if (nm != NULL && hx != NULL && strcmp(nm, name) == 0) {
            h = strtoull(hx, NULL, 16);
            break;
        }
    }
    json_decref(root);
    return h;
}

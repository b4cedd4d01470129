/* dump_local.h -- what the readers of a GPU dump's manifest share
   (dump_inputs.c, dump_outputs.c); not installed */
#ifndef BF16EMU_ANALYSIS_DUMP_LOCAL_H
#define BF16EMU_ANALYSIS_DUMP_LOCAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/tensor.h"

/* The "manifest" entry of L's metadata (the listing of PATH) parsed into
   *MAN (NULL when there is none; the caller frees it with json_decref).
   E_FORMAT "PATH: manifest: not JSON (...)" when it does not parse. */
int dump_manifest_json(const char *path, const tensor_listing *l, json_t **man,
                       tensor_error *err);

/* An integer JSON value V in [LO, HI] into *OUT; false (and *OUT
   untouched) for anything else. */
bool dump_json_uint(const json_t *v, uint64_t lo, uint64_t hi, uint64_t *out);

#endif

/* fa_kernel_json.h -- attention kernel descriptions as JSON for the
   CLI: --describe writes one, --kernel FILE.json reads one (every field
   checked by analysis/kernel_json.h, the messages under the subcommand) */
#ifndef BF16EMU_EXPERIMENTS_FA_KERNEL_JSON_H
#define BF16EMU_EXPERIMENTS_FA_KERNEL_JSON_H

#include <stdbool.h>

#include "attention/kernel.h"

/* K as a JSON object (kj_to_json: indented, fields in the documented
   order, newline-terminated); malloc'd, NULL when out of memory. */
char *fa_kernel_json(const fa_kernel *k);

/* Reads the description in PATH into K.  An unreadable file, bad JSON, an
   unknown or missing field, a value of the wrong type or out of range, or
   a description fa_kernel_check refuses: a one-line message under CMD
   naming OPT, the file and the field, and false. */
bool fa_kernel_load(const char *cmd, const char *opt, const char *path,
                    fa_kernel *k);

/* The same from TEXT (a description as JSON), named LABEL in the
   messages (a file's metadata entry, say). */
bool fa_kernel_parse(const char *cmd, const char *opt, const char *label,
                     const char *text, fa_kernel *k);

#endif

/* kernel_json.h -- attention kernel descriptions as JSON text: the text
   attn --describe writes and --kernel FILE.json and the Python package
   read, every field checked */
#ifndef BF16EMU_ANALYSIS_KERNEL_JSON_H
#define BF16EMU_ANALYSIS_KERNEL_JSON_H

#include <stddef.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* K as a JSON object (indented, fields in the documented order,
   newline-terminated); malloc'd (the caller frees it), NULL when out of
   memory. */
char *kj_to_json(const fa_kernel *k);

/* Reads the description in TEXT into K: 0, or -1 with a one-line message
   in MSG (MSG_LEN bytes) for bad JSON, an unknown or missing field, a
   value of the wrong type or out of range, or a description
   fa_kernel_check refuses: "OPT 'LABEL': field 'NAME': what was
   expected" (OPT the option or argument, LABEL the file or source). */
int kj_parse(const char *text, const char *opt, const char *label,
             fa_kernel *k, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_KERNEL_JSON_H */

/* tables.h -- where the tests find the measured H200 tables */
#ifndef BF16EMU_TESTS_TABLES_H
#define BF16EMU_TESTS_TABLES_H

/* The path in $BF16EMU_EX2_TABLE ($BF16EMU_LG2_TABLE, $BF16EMU_RCP_TABLE)
   when set and not empty, else the library's default place
   (ax_ex2_table_default_path and its siblings: the source tree's
   analysis/data, else the installation's). */
const char *tst_ex2_table_path(void);
const char *tst_lg2_table_path(void);
const char *tst_rcp_table_path(void);

#endif

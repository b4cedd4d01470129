/* tables.c -- where the tests find the measured H200 tables */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tables.h"

#include <stdlib.h>

#include "analysis/ex2_table.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"

const char *
tst_ex2_table_path(void)
{
    return ax_ex2_table_default_path(getenv("BF16EMU_EX2_TABLE"));
}

const char *
tst_lg2_table_path(void)
{
    return ax_lg2_table_default_path(getenv("BF16EMU_LG2_TABLE"));
}

const char *
tst_rcp_table_path(void)
{
    return ax_rcp_table_default_path(getenv("BF16EMU_RCP_TABLE"));
}

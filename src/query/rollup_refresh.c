#include "query/rollup.h"

tl_status tl_rollups_refresh_of(tl_table *t, bool inline_mode, tl_maintain_report *r, tl_error *err)
{
    (void)t, (void)inline_mode, (void)r, (void)err;
    return TL_OK;
}

void tl_rollups_refresh_inline(tl_table *t, tl_append_result *out)
{
    (void)t, (void)out;
}

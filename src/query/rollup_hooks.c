/* The public calls that refresh rollups as part of their work: maintenance
 * (after compaction, before expiry) and inline maintenance after an append
 * (or after each commit of a group commit). They live here, above the table layer, because a
 * refresh runs queries. */
#include "query/rollup.h"
#include "table/append.h"
#include "table/maintain.h"

/* ctx: the options; inline, only the rollups whose refresh interval has passed. */
static tl_status refresh_step(tl_table *t, void *ctx, tl_maintain_report *r, tl_error *err)
{
    const tl_maintain_options *o = ctx;
    return tl_rollups_refresh_of(t, o->inline_mode != 0, r, err);
}

tl_status tl_table_maintain(tl_table *t, const tl_maintain_options *options,
                            tl_maintain_report *out, tl_error *err)
{
    tl_maintain_options all = {.compact = 1, .retention = 1, .expire = 1, .rollups = 1};
    const tl_maintain_options *o = options ? options : &all;
    tl_maintain_step step = {refresh_step, (void *)o};
    return tl_maintain_run(t, o, o->rollups ? &step : NULL, out, err);
}

tl_status tl_table_append(tl_table *t, struct ArrowArrayStream *stream,
                          const tl_append_options *options, tl_append_result *out, tl_error *err)
{
    TL_TRY(tl_table_append_rows(t, stream, options, out, err));
    int maintain = options ? options->maintain : -1;
    if (!out->duplicate && out->rows > 0 &&
        (maintain > 0 || (maintain < 0 && t->contract.auto_maintain)))
        tl_rollups_refresh_inline(t, out);
    return TL_OK;
}

tl_status tl_table_append_group(tl_table *t, tl_append_input *inputs, size_t n,
                                const tl_append_options *options, tl_error *err)
{
    return tl_append_group_run(t, inputs, n, options, tl_table_append, err);
}

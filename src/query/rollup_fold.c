#include "query/rollup_fold.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/preagg_scan.h"
#include "query/rows_function.h"

static const tl_ice_field *field(const tl_table *t, const char *name)
{
    return tl_ice_schema_find(tl_ice_metadata_current_schema(t->md), name);
}

static ssize_t index_of(const tl_strlist *l, const char *name)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcasecmp(l->items[i], name) == 0) return (ssize_t)i;
    return -1;
}

bool tl_rollup_fold_key(tl_rollup_fold *f, const tl_table *rollup, const char *name)
{
    const tl_ice_field *k = field(rollup, name);
    if (k == NULL || k->type.id != TL_ICE_STRING || f->keys.len >= TL_ROLLUP_FOLD_MAX) return false;
    return index_of(&f->keys, name) >= 0 || tl_strlist_push(&f->keys, name) == 0;
}

bool tl_rollup_fold_value(tl_rollup_fold *f, const tl_table *rollup, const char *column,
                          tl_run_op op)
{
    const tl_ice_field *v = field(rollup, column);
    tl_ice_type_id want = op == TL_RUN_SUM_INT ? TL_ICE_LONG : TL_ICE_DOUBLE;
    if (v == NULL || v->type.id != want ||
        (op != TL_RUN_SUM_INT && op != TL_RUN_SUM && op != TL_RUN_MIN && op != TL_RUN_MAX))
        return false;
    ssize_t at = index_of(&f->values, column);
    if (at >= 0) return f->ops[at] == op;
    if (f->values.len >= TL_ROLLUP_FOLD_MAX || tl_strlist_push(&f->values, column) != 0)
        return false;
    f->ops[f->values.len - 1] = op;
    return true;
}

void tl_rollup_fold_free(tl_rollup_fold *f)
{
    tl_strlist_free(&f->keys);
    tl_strlist_free(&f->values);
    memset(f, 0, sizeof *f);
}

bool tl_rollup_fold_copy(const tl_rollup_fold *f, tl_rollup_fold *out)
{
    *out = (tl_rollup_fold){.split = f->split};
    memcpy(out->ops, f->ops, sizeof out->ops);
    bool ok = true;
    for (size_t i = 0; ok && i < f->keys.len; i++)
        ok = tl_strlist_push(&out->keys, f->keys.items[i]) == 0;
    for (size_t i = 0; ok && i < f->values.len; i++)
        ok = tl_strlist_push(&out->values, f->values.items[i]) == 0;
    if (!ok) tl_rollup_fold_free(out);
    return ok;
}

/* The view's body: its alias names the columns and their ops, so that the
 * view (kept by name from one query to the next, and rowset ids restart at
 * each query) is replaced whenever they change. */
static int view_sql(tl_buf *sql, const tl_rollup_fold *f, int64_t id, const char *pending)
{
    tl_buf alias = {0};
    int rc = 0;
    for (size_t i = 0; i < f->keys.len; i++) rc |= tl_buf_printf(&alias, "%s,", f->keys.items[i]);
    for (size_t i = 0; i < f->values.len; i++)
        rc |= tl_buf_printf(&alias, ";%s:%d", f->values.items[i], (int)f->ops[i]);
    rc |= tl_buf_append_byte(&alias, 0);
    char *quoted = rc ? NULL : tl_sql_ident((const char *)alias.data);
    rc |= !quoted || tl_buf_printf(sql, "SELECT * FROM " TL_ROWS_FUNCTION "(%lld) AS %s",
                                   (long long)id, quoted);
    if (pending) rc |= tl_buf_printf(sql, " UNION ALL %s", pending); /* their rows as states */
    free(quoted);
    tl_buf_free(&alias);
    return rc;
}

tl_status tl_rollup_fold_sql(tl_query_engine *e, const tl_table *rollup, const tl_rollup_fold *f,
                             const tl_scan_filter *filters, size_t n_filters, tl_buf *sql,
                             tl_scan_stats *stats, bool *done, tl_error *err)
{
    *done = false;
    size_t n = f->values.len;
    tl_run_state states[TL_ROLLUP_FOLD_MAX];
    for (size_t i = 0; i < n; i++) states[i] = (tl_run_state){f->ops[i], i};
    tl_preagg_request r = {rollup,
                           filters,
                           n_filters,
                           f->split,
                           (const char *const *)f->keys.items,
                           f->keys.len,
                           (const char *const *)f->values.items,
                           n,
                           states,
                           (const char *const *)f->values.items,
                           n};
    int64_t id = 0;
    char *pending = NULL;
    TL_TRY(tl_preagg_scan(e, &r, &id, &pending, stats, err));
    if (id == 0) return TL_OK;
    tl_status st = view_sql(sql, f, id, pending) ? tl_error_nomem(err) : TL_OK;
    free(pending);
    *done = st == TL_OK;
    return st;
}

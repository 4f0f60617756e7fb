/* The batch ids of a commit (see batch_ids.h): reading them from snapshot
 * summaries, writing them, and the duplicate check. */
#include "table/batch_ids.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_text.h"
#include "table/batch_ledger.h"
#include "table/contract.h"

tl_status tl_snapshot_batch_ids(const tl_ice_snapshot *s, tl_strlist *out, tl_error *err)
{
    const char *one = tl_ice_snapshot_summary(s, TL_SUMMARY_BATCH_ID);
    if (one && tl_strlist_push(out, one) != 0) return tl_error_nomem(err);
    const char *many = tl_ice_snapshot_summary(s, TL_SUMMARY_BATCH_IDS);
    json_error_t je;
    bool nomem = false;
    json_t *a = many ? tl_json_loadb(many, strlen(many), 0, &je, &nomem) : NULL;
    if (nomem) return tl_error_nomem(err); /* never fewer ids: a redelivery would commit */
    size_t i;
    json_t *v;
    tl_status st = TL_OK;
    json_array_foreach(a, i, v)
    {
        if (st == TL_OK && json_is_string(v) && tl_strlist_push(out, json_string_value(v)) != 0)
            st = tl_error_nomem(err);
    }
    json_decref(a);
    return st;
}

tl_status tl_batch_ids_summary(const char *const *ids, size_t n, tl_strlist *kv, tl_error *err)
{
    if (n == 1)
        return tl_strlist_push(kv, TL_SUMMARY_BATCH_ID) == 0 && tl_strlist_push(kv, ids[0]) == 0
                   ? TL_OK
                   : tl_error_nomem(err);
    json_t *a = json_array();
    bool ok = a != NULL;
    /* ids are valid UTF-8 (checked by the append), so json_string fails only for memory */
    for (size_t i = 0; ok && i < n; i++) ok = json_array_append_new(a, json_string(ids[i])) == 0;
    char *text = ok ? tl_json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    if (text == NULL || tl_strlist_push(kv, TL_SUMMARY_BATCH_IDS) != 0 ||
        tl_strlist_push_owned(kv, text) != 0) {
        free(text);
        return tl_error_nomem(err);
    }
    return TL_OK;
}

tl_status tl_batch_duplicate(tl_table *t, const char *const *ids, size_t n, bool *duplicate,
                             tl_error *err)
{
    *duplicate = false;
    bool *seen = calloc(n, sizeof *seen);
    if (seen == NULL) return tl_error_nomem(err);
    tl_status st = tl_batches_seen(t, ids, n, seen, err);
    size_t yes = n, no = n; /* the first seen id, the first unseen one */
    for (size_t i = 0; i < n; i++) {
        if (seen[i] && yes == n) yes = i;
        if (!seen[i] && no == n) no = i;
    }
    free(seen);
    if (st != TL_OK) return st;
    if (yes < n && no < n)
        return tl_error_set(err, TL_ERR_CONFLICT,
                            "%s: batch id \"%s\" of this append is committed already but "
                            "\"%s\" is not (another writer committed part of it?): nothing was "
                            "written; append the rest on its own",
                            t->name.full, ids[yes], ids[no]);
    *duplicate = yes < n;
    return TL_OK;
}

tl_status tl_table_batches_committed(tl_table *t, const char *const *ids, size_t n, int *out,
                                     tl_error *err)
{
    bool *seen = calloc(n ? n : 1, sizeof *seen);
    if (seen == NULL) return tl_error_nomem(err);
    tl_status st = tl_batches_seen(t, ids, n, seen, err);
    for (size_t i = 0; i < n; i++) out[i] = st == TL_OK && seen[i];
    free(seen);
    return st;
}

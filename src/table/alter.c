/* Reading and changing a table's properties after creation (`timelake
 * alter`): one commit of new metadata that keeps the current snapshot. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/random.h"
#include "table/commit_point.h"
#include "table/head_write.h"
#include "table/settings.h"
#include "table/table_internal.h"

#define MAX_ATTEMPTS 40
#define BACKOFF_CAP_MS 200

tl_status tl_table_properties(const tl_table *t, char ***out, tl_error *err)
{
    const tl_ice_metadata *md = t->md;
    char **kv = calloc(2 * md->n_properties + 1, sizeof *kv);
    if (kv == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < md->n_properties; i++) {
        kv[2 * i] = strdup(md->properties[i].key);
        kv[2 * i + 1] = strdup(md->properties[i].value);
        if (kv[2 * i] == NULL || kv[2 * i + 1] == NULL) {
            tl_strings_free(kv);
            return tl_error_nomem(err);
        }
    }
    *out = kv;
    return TL_OK;
}

/* One change, checked, under the key it is stored by. */
typedef struct change {
    const char *key; /* canonical for a setting, else as given */
    const char *value;
} change;

static tl_status check_changes(const char *const *kv, change **out, size_t *n, tl_error *err)
{
    size_t len = 0;
    while (kv && kv[2 * len]) len++;
    change *c = calloc(len + 1, sizeof *c);
    if (c == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < len; i++) {
        c[i].value = kv[2 * i + 1];
        st = tl_contract_check_change(kv[2 * i], c[i].value, &c[i].key, err);
        for (size_t j = 0; st == TL_OK && j < i; j++)
            if (strcmp(c[j].key, c[i].key) == 0)
                st = tl_error_set(err, TL_ERR_INVALID, "property \"%s\" is given twice", c[i].key);
    }
    if (st != TL_OK) {
        free(c);
        return st;
    }
    *out = c;
    *n = len;
    return TL_OK;
}

/* One attempt: TL_OK (committed), TL_ERR_EXISTS (lost the race) or an error. */
static tl_status attempt(tl_table *t, const change *c, size_t n, tl_error *err)
{
    tl_ice_metadata *md = NULL;
    tl_buf json = {0}, list = {0};
    tl_status st = tl_ice_metadata_copy(t->md, &md, err);
    for (size_t i = 0; st == TL_OK && i < n; i++)
        st = tl_ice_metadata_set_property(md, c[i].key, c[i].value, err);
    if (st == TL_OK) {
        int64_t now = tl_now_millis();
        md->last_updated_ms = now > md->last_updated_ms ? now : md->last_updated_ms + 1;
        /* The new properties must make a table this library can load. */
        tl_contract contract;
        st = tl_contract_load(md, &contract, err);
        if (st == TL_OK) tl_contract_free(&contract);
    }
    if (st == TL_OK) st = tl_ice_metadata_serialize(md, &json, err);
    tl_head_job *head = st == TL_OK ? tl_head_job_start_same_snapshot(t, md, &json, &list) : NULL;
    bool dropped = false;
    if (st == TL_OK) {
        tl_head_job_send(head); /* in parallel with the conditional create */
        st = tl_table_create_next(t, json.data, json.len, err);
        dropped = st == TL_ERR_NOT_FOUND;
    }
    bool won = st == TL_OK;
    if (won) {
        st = tl_table_adopt(t, md, t->version + 1, err);
        md = NULL;
    }
    tl_head_job_finish(t, head, won && st == TL_OK);
    if (dropped && head) tl_table_remove_head(t);
    tl_ice_metadata_free(md);
    tl_buf_free(&json);
    tl_buf_free(&list);
    return st;
}

tl_status tl_table_set_properties(tl_table *t, const char *const *changes, tl_error *err)
{
    change *c = NULL;
    size_t n = 0;
    TL_TRY(check_changes(changes, &c, &n, err));
    tl_status st = n > 0 ? tl_table_check_not_dropped(t, err) : TL_OK;
    for (int i = 1; st == TL_OK && n > 0; i++) {
        st = attempt(t, c, n, err);
        if (st != TL_ERR_EXISTS) break;
        if (i == MAX_ATTEMPTS) {
            st = tl_error_set(err, TL_ERR_CONFLICT,
                              "%s: gave up after %d commit attempts lost to concurrent writers",
                              t->name.full, i);
            break;
        }
        int64_t cap = INT64_C(2) << (i < 7 ? i : 7);
        tl_sleep_ms((int64_t)(tl_random_u64() %
                              (uint64_t)((cap < BACKOFF_CAP_MS ? cap : BACKOFF_CAP_MS) + 1)));
        st = tl_table_reload_same(t, err);
        if (st != TL_OK) break;
    }
    free(c);
    return st;
}

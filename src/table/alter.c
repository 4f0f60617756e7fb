/* Reading and changing a table's properties after creation (`timelake
 * alter`): one commit of new metadata that keeps the current snapshot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/metadata_commit.h"
#include "table/settings.h"

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

static tl_status apply_changes(const tl_table *t, tl_ice_metadata *md, void *ctx, tl_error *err)
{
    (void)t;
    const change *c = ctx;
    for (size_t i = 0; c[i].key; i++)
        TL_TRY(tl_ice_metadata_set_property(md, c[i].key, c[i].value, err));
    return TL_OK;
}

tl_status tl_table_set_properties(tl_table *t, const char *const *changes, tl_error *err)
{
    change *c = NULL;
    size_t n = 0;
    char what[sizeof t->name.full + 16];
    snprintf(what, sizeof what, "alter %s", t->name.full);
    TL_TRY(tl_store_check_writable(t->lake->store, what, err));
    TL_TRY(check_changes(changes, &c, &n, err));
    tl_status st = n > 0 ? tl_table_commit_metadata(t, apply_changes, c, err) : TL_OK;
    free(c);
    return st;
}

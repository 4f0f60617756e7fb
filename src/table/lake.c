#include <stdlib.h>
#include <string.h>

#include "table/metadata_cache.h"
#include "table/table_internal.h"

tl_status tl_lake_open(const char *location, const char *const *options, tl_lake **out,
                       tl_error *err)
{
    tl_lake *lake = calloc(1, sizeof *lake);
    if (lake == NULL) return tl_error_nomem(err);
    tl_status st = tl_store_open(location, options, &lake->store, err);
    if (st != TL_OK) {
        free(lake);
        return st;
    }
    lake->md_cache = tl_md_cache_new(); /* NULL: no cache, every load parses */
    *out = lake;
    return TL_OK;
}

void tl_lake_close(tl_lake *lake)
{
    if (lake == NULL) return;
    if (lake->query_free) lake->query_free(lake->query);
    tl_store_free(lake->store);
    tl_md_cache_free(lake->md_cache);
    free(lake);
}

const char *tl_lake_location(const tl_lake *lake)
{
    return lake->store->url;
}

tl_status tl_lake_drop_table(tl_lake *lake, const char *name, tl_error *err)
{
    tl_qname tn;
    TL_TRY(tl_qname_parse(name, "default", &tn, err));
    char prefix[sizeof tn.key + 1];
    snprintf(prefix, sizeof prefix, "%s/", tn.key);
    /* Metadata last would leave a readable table with missing data files if we
     * crashed midway; so delete the metadata first: the table is gone at once. */
    char meta_prefix[sizeof prefix + 16];
    snprintf(meta_prefix, sizeof meta_prefix, "%smetadata/", prefix);
    TL_TRY(tl_store_remove_prefix(lake->store, meta_prefix, err));
    TL_TRY(tl_store_remove_prefix(lake->store, prefix, err));
    return tl_registry_remove(lake->store, tn.full, err);
}
